/* page_out.h — --html FILE for every command (SPEC.md §10): the run's data
 * as a JSON object, written with io's json_writer, wrapped by render's page
 * writer (page.h) into one HTML file, atomically; and what the commands'
 * data objects share (the colour map, token lists).
 *
 * A command's data is the object its --json writes (the same members) plus
 * "page": {"kind": "attention" | "posenc" | "complexity" | "train" |
 * "tour", "title", …, what the page's scripts need}. In the page, tensors
 * of PAGE_BASE64_FROM numbers or more are base64 float32 and those of more
 * than PAGE_OMIT_ABOVE numbers keep only their shape (json_writer.h), except
 * what the page draws, which the command writes with json_tensor_base64.
 */
#ifndef ATTN_PAGE_OUT_H
#define ATTN_PAGE_OUT_H

#include <stdio.h>

#include "json_writer.h"
#include "render.h"

#define PAGE_BASE64_FROM 64
#define PAGE_OMIT_ABOVE 4096
/* An attention page whose drawn weights hold more numbers than this (4 MiB
 * as float32, 5.6 MB of base64: BERT's 12 heads of 512 × 512 are 3 Mi)
 * gets a preview, and its data after its script (page.h): the one rule. */
#define PAGE_PREVIEW_ABOVE ((size_t)1 << 20)

/* Write the members of the data object (the object itself is opened and
 * closed by output_page); json_writer_finish is checked by the caller. */
typedef json_members_fn page_data_fn;

/* ATTN_PAGE_DATA=FD in the environment (FD from 3 to 255, open for
 * writing): --html writes the page's data, the JSON text of its
 * attn-data element, to descriptor FD instead of a page at PATH (which is
 * then neither checked nor created; "-" is fine), and reports nothing.
 * The pages' own attn (SPEC.md §14) recomputes a view this way: its data
 * is what the page's scripts draw.
 *
 * --html PATH can be created: checked before any work (nothing is left
 * behind). EXIT_OK, EXIT_RUNTIME after "attn CMD: --html PATH: cannot
 * create: REASON", or EXIT_USAGE for "-" (a page is not mixed into what
 * a command prints). NULL is fine. */
int output_page_check(const char *path);

/* ATTN_PAGE_STREAM=FD in the environment (FD from 3 to 255, open for
 * writing, another than ATTN_PAGE_DATA's, which is given too): a command
 * that runs for long (train) writes there, while it runs, one JSON object
 * per line for each step the page can show as it comes (train_page.h says
 * what); the pages' worker hands each line on at once. page_stream() is
 * that descriptor as a stream, opened on the first call, or NULL when it
 * is not asked for (the CLI's bytes never change). page_stream_line(jw)
 * ends a line written to it with json_writer jw and flushes it: 0, or -1
 * after "attn CMD: ATTN_PAGE_STREAM=FD: cannot write" (the stream is then
 * closed). page_stream_close() closes it, if open; no stream after that. */
FILE *page_stream(void);
int page_stream_line(const json_writer *jw);
void page_stream_close(void);

/* The page: data from fn(jw, ctx), title for the tab; then "wrote PATH:
 * what, N KB" on rep. EXIT_OK or EXIT_RUNTIME. While the tour keeps the
 * pages (output_page_keep), the data is kept instead and nothing is
 * written. */
int output_page(const char *path, const char *title, page_data_fn fn, const void *ctx,
                FILE *rep, const char *what);

/* The attention weights a page draws, for its preview: w of shape
 * (shape[0], …, shape[ndim-1]), ndim ≥ 2, row-major, the last two
 * dimensions a panel's queries and keys; page_fn(jw, ctx) writes the data's
 * "page" member alone (the preview carries it too). */
typedef struct page_weights {
    const float *w;
    size_t ndim;
    const size_t *shape;
    page_data_fn page_fn;
} page_weights;

/* output_page for a page of attention weights: when they hold more than
 * PAGE_PREVIEW_ABOVE numbers, the page has a preview of them (page.h),
 * else it is output_page's, byte for byte. */
int output_page_weights(const char *path, const char *title, page_data_fn fn, const void *ctx,
                        const page_weights *pw, FILE *rep, const char *what);

/* The same for data already written (len bytes of JSON text, one object;
 * data is malloc'd, and taken: freed or kept). */
int output_page_text(const char *path, const char *title, char *data, size_t len, FILE *rep,
                     const char *what);

/* A document written to f with a json_writer (e.g. a command's --json
 * writer): json_writer_finish's result. */
typedef int (*page_doc_fn)(FILE *f, const void *ctx);

/* A document in memory: write(f, ctx) into *text, malloc'd, *len bytes.
 * 0, or -1 (write failed, out of memory: *text is then NULL). */
int page_doc_text(page_doc_fn write, const void *ctx, char **text, size_t *len);

/* The data of a page: the --json document doc (dlen bytes, one object)
 * with "page": page (plen bytes, one value) as its last member, into
 * *out, malloc'd, *outlen bytes. 0, or -1 (doc is not an object, out of
 * memory). */
int page_data_join(const char *doc, size_t dlen, const char *page, size_t plen, char **out,
                   size_t *outlen);

/* The data of a page from two writers: doc(f, doc_ctx) the --json
 * document, page(f, page_ctx) the "page" object, joined as page_data_join
 * does, into *out (malloc'd, *outlen bytes; NULL on failure). 0 or -1. */
int page_data_write(page_doc_fn doc, const void *doc_ctx, page_doc_fn page, const void *page_ctx,
                    char **out, size_t *outlen);

/* output_page_text for the data of page_data_write(doc, doc_ctx, page,
 * page_ctx): EXIT_OK, or EXIT_RUNTIME after "attn CMD: --html PATH: out of
 * memory" when it fails, or output_page_text's failure. */
int output_page_docs(const char *path, const char *title, page_doc_fn doc, const void *doc_ctx,
                     page_doc_fn page, const void *page_ctx, FILE *rep, const char *what);

/* The tour: while on (keep != NULL), output_page hands each page's data
 * (JSON text, malloc'd, *keep_len bytes) to *keep, freeing what was there,
 * and writes no file; output_page_keep(NULL, NULL) turns it off. */
void output_page_keep(char **keep, size_t *keep_len);

/* For a fuzz harness (tokens in, bytes out): the whole page of a small
 * attention run whose query and key tokens are tokens[0 … n-1] (1 ≤ n ≤
 * 256, any bytes, NUL-terminated), uniform weights, title as given. *out
 * is malloc'd, *len bytes and a NUL. The data element holds the tokens in
 * page.rows[0].query_tokens and key_tokens. 0, or -1 (n out of range, out
 * of memory). */
int page_for_tokens(const char *title, const char *const *tokens, size_t n, char **out,
                    size_t *len);

/* Shared members of "page". */
/* The members every page opens with: "kind": kind, "title": title,
 * "command": "attn ARGV…" as typed (words with spaces quoted), then, when
 * cmap is not NULL, "cmap": {"name": "Reds", "lut": "rrggbb…" (256
 * entries, hex)}. */
void page_head(json_writer *jw, const char *kind, const char *title, int argc, char **argv,
               const attn_cmap *cmap);
/* key: [tokens[0], …, tokens[n-1]] as strings, or null when tokens is NULL */
void page_tokens(json_writer *jw, const char *key, const char *const *tokens, size_t n);

#endif
