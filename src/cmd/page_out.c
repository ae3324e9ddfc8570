/* page_out.c — --html FILE for every command (see page_out.h). */
#include "page_out.h"

#include <errno.h>

#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "checked.h"
#include "cli.h"
#include "page.h"

/* "cmap": {"name": "Reds", "lut": "rrggbb…" (256 entries, hex)} */
static void page_cmap(json_writer *jw, const attn_cmap *cmap);

static char **kept;      /* the tour's: the last page's data */
static size_t *kept_len;

void output_page_keep(char **keep, size_t *keep_len)
{
    kept = keep;
    kept_len = keep_len;
}

/* ATTN_PAGE_DATA=FD: the descriptor a page's data goes to instead of the
 * page (page_out.h), or -1. */
static int page_data_fd(void)
{
    const char *s = getenv("ATTN_PAGE_DATA");
    char *end;
    long fd;
    if (!s || !*s)
        return -1;
    fd = strtol(s, &end, 10);
    return *end == '\0' && fd >= 3 && fd <= 255 ? (int)fd : -1;
}

static FILE *stream;       /* ATTN_PAGE_STREAM's, once opened */
static int stream_fd = -1;

FILE *page_stream(void)
{
    const char *s = getenv("ATTN_PAGE_STREAM");
    char *end;
    long fd;
    if (stream || stream_fd == -2)
        return stream;
    stream_fd = -2; /* asked once: not asked for, or failed */
    if (!s || !*s || page_data_fd() < 0)
        return NULL;
    fd = strtol(s, &end, 10);
    if (*end != '\0' || fd < 3 || fd > 255 || fd == page_data_fd())
        return NULL;
    if (!(stream = fdopen((int)fd, "w")))
        return NULL;
    stream_fd = (int)fd;
    return stream;
}

int page_stream_line(const json_writer *jw)
{
    if (!stream)
        return -1;
    if (json_writer_finish(jw) == 0 && fflush(stream) == 0 && !ferror(stream))
        return 0;
    cli_error("ATTN_PAGE_STREAM=%d: cannot write", stream_fd);
    page_stream_close();
    return -1;
}

void page_stream_close(void)
{
    if (stream)
        fclose(stream);
    stream = NULL;
    stream_fd = -2; /* its descriptor is closed with it */
}

int output_page_check(const char *path)
{
    atomic_file af;
    char err[512];
    if (!path || kept || page_data_fd() >= 0)
        return EXIT_OK;
    if (strcmp(path, "-") == 0) { /* it would mix with what the command prints */
        cli_error("--html: a page is written to a file, not to standard output (-)");
        return EXIT_USAGE;
    }
    if (atomic_open(&af, path, err, sizeof err)) {
        cli_error("--html %s", err);
        return EXIT_RUNTIME;
    }
    atomic_abort(&af);
    return EXIT_OK;
}

static int write_page_file(const char *path, const char *title, char *preview, size_t plen,
                           char *data, size_t len, FILE *rep, const char *what);

/* Whether the weights of pw hold more than PAGE_PREVIEW_ABOVE numbers. */
static int wants_preview(const page_weights *pw)
{
    size_t n = 1;
    for (size_t i = 0; i < pw->ndim; i++)
        if (size_mul(n, pw->shape[i], &n) != 0)
            return 1; /* more than any page: page_preview_make refuses it */
    return pw->ndim >= 2 && n > PAGE_PREVIEW_ABOVE;
}

/* The preview of pw (page.h) as JSON into *out, malloc'd, *len bytes:
 * {"page": page_fn's member, "preview": {"shape", "grid", "vmin", "vmax",
 * "index"}}. 0, or -1 (out of memory, a size that overflows). */
static int preview_text(const page_weights *pw, const void *ctx, char **out, size_t *len)
{
    const size_t Nq = pw->shape[pw->ndim - 2], Nk = pw->shape[pw->ndim - 1];
    size_t P = 1; /* panels: the leading dimensions */
    page_preview pv;
    json_writer jw;
    FILE *mem;
    int bad;
    *out = NULL;
    for (size_t i = 0; i + 2 < pw->ndim; i++)
        if (size_mul(P, pw->shape[i], &P) != 0)
            return -1;
    if (page_preview_make(&pv, pw->w, P, Nq, Nk) != 0)
        return -1;
    if (!(mem = open_memstream(out, len))) {
        page_preview_free(&pv);
        return -1;
    }
    json_writer_init(&jw, mem);
    json_object_begin(&jw, NULL, JSON_BLOCK);
    pw->page_fn(&jw, ctx);
    json_object_begin(&jw, "preview", JSON_BLOCK);
    json_array_begin(&jw, "shape", JSON_INLINE);
    for (size_t i = 0; i < pw->ndim; i++)
        json_uint(&jw, NULL, pw->shape[i]);
    json_end(&jw);
    json_array_begin(&jw, "grid", JSON_INLINE);
    json_uint(&jw, NULL, pv.gq);
    json_uint(&jw, NULL, pv.gk);
    json_end(&jw);
    json_number(&jw, "vmin", pv.vmin); /* "%.9g": the same float32 back */
    json_number(&jw, "vmax", pv.vmax);
    json_base64(&jw, "index", pv.index, P * pv.gq * pv.gk); /* (P, gq, gk) */
    json_end(&jw);
    json_end(&jw);
    page_preview_free(&pv);
    bad = ferror(mem) != 0;
    bad |= fclose(mem) != 0;
    if (bad || json_writer_finish(&jw) != 0) {
        free(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

int output_page(const char *path, const char *title, page_data_fn fn, const void *ctx,
                FILE *rep, const char *what)
{
    return output_page_weights(path, title, fn, ctx, NULL, rep, what);
}

int output_page_weights(const char *path, const char *title, page_data_fn fn, const void *ctx,
                        const page_weights *pw, FILE *rep, const char *what)
{
    char *data = NULL, *preview = NULL;
    size_t len = 0, plen = 0;
    FILE *mem = open_memstream(&data, &len);
    json_writer jw;

    if (!mem) {
        cli_error("--html %s: out of memory", path);
        return EXIT_RUNTIME;
    }
    /* the data object, in memory */
    json_writer_init(&jw, mem);
    jw.base64_from = PAGE_BASE64_FROM;
    jw.omit_above = PAGE_OMIT_ABOVE;
    json_object_begin(&jw, NULL, JSON_BLOCK);
    fn(&jw, ctx);
    json_end(&jw);
    if (ferror(mem) | fclose(mem)) {
        free(data);
        cli_error("--html %s: out of memory", path);
        return EXIT_RUNTIME;
    }
    if (json_writer_finish(&jw) != 0) {
        free(data);
        cli_error("--html %s: internal error: malformed JSON", path);
        return EXIT_RUNTIME;
    }
    /* a large page's preview (not the tour's: it keeps only the data) */
    if (pw && !kept && page_data_fd() < 0 && wants_preview(pw) && preview_text(pw, ctx, &preview, &plen) != 0) {
        free(data);
        cli_error("--html %s: out of memory", path);
        return EXIT_RUNTIME;
    }
    return write_page_file(path, title, preview, plen, data, len, rep, what);
}

int output_page_text(const char *path, const char *title, char *data, size_t len, FILE *rep,
                     const char *what)
{
    return write_page_file(path, title, NULL, 0, data, len, rep, what);
}

int output_page_docs(const char *path, const char *title, page_doc_fn doc, const void *doc_ctx,
                     page_doc_fn page, const void *page_ctx, FILE *rep, const char *what)
{
    char *data = NULL;
    size_t len = 0;
    if (page_data_write(doc, doc_ctx, page, page_ctx, &data, &len)) {
        cli_error("--html %s: out of memory", path);
        return EXIT_RUNTIME;
    }
    return output_page_text(path, title, data, len, rep, what);
}

/* output_page_text with a preview (NULL: none; malloc'd, taken as data is). */
static int write_page_file(const char *path, const char *title, char *preview, size_t plen,
                           char *data, size_t len, FILE *rep, const char *what)
{
    atomic_file af;
    char err[512];
    long size;
    int fd;
    FILE *f;
    if (kept) { /* the tour's page holds it */
        free(preview);
        free(*kept);
        *kept = data;
        *kept_len = len;
        return EXIT_OK;
    }
    if ((fd = page_data_fd()) >= 0) { /* the data alone, for a page that recomputes */
        free(preview);
        f = fdopen(fd, "w");
        if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
            free(data);
            cli_error("--html: ATTN_PAGE_DATA=%d: cannot write: %s", fd, strerror(errno));
            return EXIT_RUNTIME;
        }
        free(data);
        return EXIT_OK;
    }
    /* the page around it, atomically */
    if (atomic_open(&af, path, err, sizeof err) != 0) {
        free(preview);
        free(data);
        cli_error("--html %s", err);
        return EXIT_RUNTIME;
    }
    page_write_previewed(af.f, title, preview, plen, data, len);
    free(preview);
    free(data);
    size = af.f == stdout ? -1 : ftell(af.f);
    if (atomic_commit(&af, err, sizeof err) != 0) {
        cli_error("--html %s", err);
        return EXIT_RUNTIME;
    }
    if (size >= 0)
        fprintf(rep, _("wrote %s: %s, %.0f KB\n"), path, _(what), (double)size / 1024.0);
    return EXIT_OK;
}

int page_for_tokens(const char *title, const char *const *tokens, size_t n, char **out,
                    size_t *len)
{
    char *data = NULL;
    size_t dlen = 0;
    float *w;
    FILE *mem;
    json_writer jw;
    int rc;
    if (n == 0 || n > 256 || !(w = malloc(n * n * sizeof *w)))
        return -1;
    for (size_t i = 0; i < n * n; i++)
        w[i] = 1.0f / (float)n; /* (1, 1, n, n): every key alike */
    if (!(mem = open_memstream(&data, &dlen))) {
        free(w);
        return -1;
    }
    json_writer_init(&jw, mem);
    json_object_begin(&jw, NULL, JSON_BLOCK);
    json_string(&jw, "command", "multihead");
    json_tensor_base64(&jw, "attention_weights", w, 4, (size_t[]){1, 1, n, n});
    json_null(&jw, "valid_lens");
    json_object_begin(&jw, "page", JSON_BLOCK);
    json_string(&jw, "kind", "attention");
    json_string(&jw, "title", title);
    json_null(&jw, "command");
    page_cmap(&jw, cmap_find("Reds"));
    json_string(&jw, "weights", "attention_weights");
    json_bool(&jw, "causal", 0);
    json_string(&jw, "xlabel", "Key positions");
    json_string(&jw, "ylabel", "Query positions");
    json_array_begin(&jw, "rows", JSON_BLOCK);
    json_object_begin(&jw, NULL, JSON_INLINE);
    json_string(&jw, "name", "example 0");
    page_tokens(&jw, "query_tokens", tokens, n);
    page_tokens(&jw, "key_tokens", tokens, n);
    json_null(&jw, "valid_lens");
    json_end(&jw);
    json_end(&jw);
    json_end(&jw);
    json_end(&jw);
    free(w);
    rc = ferror(mem) | fclose(mem);
    if (rc || json_writer_finish(&jw)) {
        free(data);
        return -1;
    }
    rc = page_build(title, data, dlen, out, len);
    free(data);
    return rc;
}

static void page_cmap(json_writer *jw, const attn_cmap *cmap)
{
    char lut[256 * 6 + 1];
    for (int i = 0; i < 256; i++) {
        attn_rgb c = cmap_color(cmap, (i + 0.5) / 256.0);
        snprintf(lut + 6 * i, 7, "%02x%02x%02x", c.r, c.g, c.b);
    }
    json_object_begin(jw, "cmap", JSON_INLINE);
    json_string(jw, "name", cmap_name(cmap));
    json_string(jw, "lut", lut);
    json_end(jw);
}

/* "command": "attn ARGV…" as typed (words with spaces quoted) */
static void page_command(json_writer *jw, int argc, char **argv)
{
    size_t len = 0;
    char *line = NULL;
    FILE *f = open_memstream(&line, &len);
    if (!f) {
        json_null(jw, "command");
        return;
    }
    fputs("attn", f);
    for (int i = 0; i < argc; i++) {
        fputc(' ', f);
        cli_put_word(f, argv[i]);
    }
    json_string(jw, "command", fclose(f) == 0 ? line : NULL); /* NULL: null */
    free(line);
}

void page_head(json_writer *jw, const char *kind, const char *title, int argc, char **argv,
               const attn_cmap *cmap)
{
    json_string(jw, "kind", kind);
    json_string(jw, "title", title);
    page_command(jw, argc, argv);
    if (cmap)
        page_cmap(jw, cmap);
}

void page_tokens(json_writer *jw, const char *key, const char *const *tokens, size_t n)
{
    if (!tokens) {
        json_null(jw, key);
        return;
    }
    json_array_begin(jw, key, JSON_INLINE);
    for (size_t i = 0; i < n; i++)
        json_string(jw, NULL, tokens[i]);
    json_end(jw);
}

int page_doc_text(page_doc_fn write, const void *ctx, char **text, size_t *len)
{
    FILE *f;
    int bad;
    *text = NULL;
    *len = 0;
    if (!(f = open_memstream(text, len)))
        return -1;
    bad = write(f, ctx) != 0;
    bad |= ferror(f) != 0;
    bad |= fclose(f) != 0;
    if (bad) {
        free(*text);
        *text = NULL;
    }
    return bad ? -1 : 0;
}

int page_data_write(page_doc_fn doc, const void *doc_ctx, page_doc_fn page, const void *page_ctx,
                    char **out, size_t *outlen)
{
    char *dtext = NULL, *ptext = NULL;
    size_t dlen = 0, plen = 0;
    int rc;
    *out = NULL;
    *outlen = 0;
    rc = page_doc_text(doc, doc_ctx, &dtext, &dlen) || page_doc_text(page, page_ctx, &ptext, &plen) ||
         page_data_join(dtext, dlen, ptext, plen, out, outlen);
    free(dtext);
    free(ptext);
    return rc ? -1 : 0;
}

/* text[0 … len) without its trailing white space, as a length */
static size_t trimmed(const char *text, size_t len)
{
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
        len--;
    return len;
}

int page_data_join(const char *doc, size_t dlen, const char *page, size_t plen, char **out,
                   size_t *outlen)
{
    size_t end = trimmed(doc, dlen);
    FILE *f;
    if (end < 2 || doc[0] != '{' || doc[end - 1] != '}')
        return -1;
    end = trimmed(doc, end - 1); /* before the closing brace */
    if (!(f = open_memstream(out, outlen)))
        return -1;
    fwrite(doc, 1, end, f);
    /* "{}": page is the only member */
    fputs(end > 1 ? ",\n  \"page\": " : "\n  \"page\": ", f);
    fwrite(page, 1, trimmed(page, plen), f);
    fputs("\n}\n", f);
    if (ferror(f) | fclose(f)) {
        free(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}
