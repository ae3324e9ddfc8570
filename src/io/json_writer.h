/* json_writer.h — JSON written straight to a stream by begin/append/end
 * calls over a small nesting stack, without building a tree in memory (a
 * 10000×512 matrix would need hundreds of MB as cJSON nodes). The writer
 * places every comma, newline and indent; no caller writes one by hand.
 * Input JSON is read with cJSON (json_in.h).
 *
 *     json_writer jw;
 *     json_writer_init(&jw, f);
 *     json_object_begin(&jw, NULL, JSON_BLOCK);        // the document
 *     json_string(&jw, "command", "posenc");
 *     json_uint(&jw, "dim", 4);
 *     json_array_begin(&jw, "shape", JSON_INLINE);
 *     json_uint(&jw, NULL, 3);
 *     json_uint(&jw, NULL, 4);
 *     json_end(&jw);                                    // ]
 *     json_tensor(&jw, "P", P, 2, (size_t[]){3, 4});
 *     json_end(&jw);                                    // }, then "\n"
 *     return json_writer_finish(&jw);
 *
 * writes
 *
 *     {
 *       "command": "posenc",
 *       "dim": 4,
 *       "shape": [3, 4],
 *       "P": [
 *         [0, 1, 0, 1],
 *         …
 *       ]
 *     }
 *
 * Every append takes a key: the member's name inside an object, NULL
 * inside an array and for the document itself. A call that breaks the
 * rules (no key inside an object, a key inside an array, an end with
 * nothing open, a second document, nesting deeper than JSON_MAX_DEPTH)
 * writes nothing, returns -1 and marks the writer failed: every later
 * call then writes nothing and json_writer_finish returns -1. Calls return
 * 0 otherwise. Write errors of the stream are not checked here: the caller
 * checks the stream (atomic_commit, or main for standard output).
 *
 * Numbers: json_number writes "%.9g", enough digits to round-trip a
 * float32 (SPEC.md §3); json_number_exact writes a double parameter with
 * the fewest digits that read back as the same double ("10000", "0.5").
 * JSON has no NaN or infinity: both write null for a non-finite value.
 */
#ifndef ATTN_JSON_WRITER_H
#define ATTN_JSON_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* How a container lays out its members.
 *   JSON_BLOCK    each member on its own line, indented two spaces more
 *                 than the line that opened the container; the closing
 *                 bracket on a line of its own ("[]" when empty)
 *   JSON_INLINE   on one line, separated by ", "
 *   JSON_ALIGNED  the first member right after the bracket, each next one
 *                 on its own line, indented one space more than the line
 *                 that opened the container (one column right of the
 *                 bracket when the bracket starts its line); the closing
 *                 bracket right after the last member */
typedef enum json_layout { JSON_BLOCK, JSON_INLINE, JSON_ALIGNED } json_layout;

#define JSON_MAX_DEPTH 16

/* One open container. */
struct json_level {
    unsigned char is_array, empty;
    json_layout layout;
    int indent; /* the indent of the line that opened the container */
};

typedef struct json_writer {
    FILE *f;
    int depth;  /* open containers */
    int done;   /* the document is complete */
    int failed; /* a call broke the rules */
    struct json_level level[JSON_MAX_DEPTH];
    /* How json_tensor writes large tensors (both 0, nested arrays always,
     * after json_writer_init; the page of --html sets them, SPEC §10):
     * base64_from  a tensor of at least this many numbers (when > 0) as
     *              {"dtype": "float32", "shape": [...], "base64": "..."},
     *              its float32 values little-endian;
     * omit_above   a tensor of more numbers (when > 0) as {"dtype":
     *              "float32", "shape": [...], "omitted": "..."}: its shape
     *              only, the numbers left to --json. */
    size_t base64_from, omit_above;
} json_writer;

/* A writer of one JSON document to f. */
void json_writer_init(json_writer *jw, FILE *f);
/* 0 when the document was written whole, -1 when a call broke the rules
 * or a container is still open. */
int json_writer_finish(const json_writer *jw);

/* Open an object or an array (key: as for every append); json_end closes
 * the innermost one, and after the document's last bracket writes "\n". */
int json_object_begin(json_writer *jw, const char *key, json_layout layout);
int json_array_begin(json_writer *jw, const char *key, json_layout layout);
int json_end(json_writer *jw);
/* The members that follow in the innermost container are laid out as
 * layout says (e.g. a few short numbers on one line after long arrays). */
int json_relayout(json_writer *jw, json_layout layout);

/* Values. */
int json_string(json_writer *jw, const char *key, const char *value); /* escaped;
                                                                      * NULL: null */
int json_number(json_writer *jw, const char *key, double value);      /* "%.9g" */
int json_number_exact(json_writer *jw, const char *key, double value); /* shortest exact;
                                                                        * NaN, ±inf: null */
int json_int(json_writer *jw, const char *key, intmax_t value);
int json_uint(json_writer *jw, const char *key, uintmax_t value);
int json_bool(json_writer *jw, const char *key, int value);
int json_null(json_writer *jw, const char *key);

/* A row-major float tensor of shape (shape[0], …, shape[ndim-1]) as nested
 * arrays: the innermost arrays on one line each, the outer levels as
 * JSON_BLOCK; a single number when ndim is 0. */
int json_tensor(json_writer *jw, const char *key, const float *data, size_t ndim,
                const size_t *shape);
/* The same always as the base64 object above, whatever base64_from and
 * omit_above say (what a page draws is never omitted). */
int json_tensor_base64(json_writer *jw, const char *key, const float *data, size_t ndim,
                       const size_t *shape);

/* len bytes as one string of base64 (RFC 4648, '=' padding), e.g. a PNG
 * file that a page shows as a data: URL. */
int json_base64(json_writer *jw, const char *key, const unsigned char *bytes, size_t len);

/* A value already written as JSON (len bytes of text, one whole value,
 * not checked), e.g. the data of a page kept for the tour's page. */
int json_raw(json_writer *jw, const char *key, const char *text, size_t len);

/* The members of an object, written by a callback (a command's --json and
 * its page's data share one). */
typedef void (*json_members_fn)(json_writer *jw, const void *ctx);

/* A whole document to f: one object whose members members(jw, ctx) writes,
 * tensors of base64_from numbers or more as base64 (0: never; a page's
 * data: PAGE_BASE64_FROM). json_writer_finish's result: 0, or -1. */
int json_document(FILE *f, size_t base64_from, json_members_fn members, const void *ctx);

#endif
