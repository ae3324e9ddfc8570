/* json_writer.c — streaming JSON output over a nesting stack (see
 * json_writer.h). */
#include "json_writer.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void json_writer_init(json_writer *jw, FILE *f)
{
    jw->f = f;
    jw->depth = 0;
    jw->done = 0;
    jw->failed = 0;
    jw->base64_from = 0;
    jw->omit_above = 0;
}

int json_writer_finish(const json_writer *jw)
{
    return jw->failed || !jw->done ? -1 : 0;
}

static int refuse(json_writer *jw)
{
    jw->failed = 1;
    return -1;
}

static void indent(FILE *f, int n)
{
    fprintf(f, "%*s", n, "");
}

static void write_escaped(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', f);
    for (; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        case '\b': fputs("\\b", f); break;
        case '\f': fputs("\\f", f); break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f); /* UTF-8 passes through unchanged */
        }
    }
    fputc('"', f);
}

/* Before a value: check the key against the container, then write the
 * separator, the line break and indent the layout asks for, and the key.
 * Returns the indent of the line the value starts on, or -1 (refused). */
static int open_value(json_writer *jw, const char *key)
{
    int in;
    if (jw->failed || jw->done)
        return refuse(jw);
    if (jw->depth == 0)
        return key ? refuse(jw) : 0; /* the document itself */
    {
        struct json_level *l = &jw->level[jw->depth - 1];
        if (l->is_array ? key != NULL : key == NULL)
            return refuse(jw);
        in = l->indent;
        switch (l->layout) {
        case JSON_BLOCK:
            fputs(l->empty ? "\n" : ",\n", jw->f);
            in += 2;
            indent(jw->f, in);
            break;
        case JSON_INLINE:
            if (!l->empty)
                fputs(", ", jw->f);
            break;
        case JSON_ALIGNED:
            in += 1;
            if (!l->empty) {
                fputs(",\n", jw->f);
                indent(jw->f, in);
            }
            break;
        }
        l->empty = 0;
    }
    if (key) {
        write_escaped(jw->f, key);
        fputs(": ", jw->f);
    }
    return in;
}

/* After a value: the document ends with a newline. */
static int close_value(json_writer *jw)
{
    if (jw->depth == 0) {
        fputc('\n', jw->f);
        jw->done = 1;
    }
    return 0;
}

static int begin(json_writer *jw, const char *key, json_layout layout, int is_array)
{
    int in;
    if (jw->depth == JSON_MAX_DEPTH)
        return refuse(jw);
    in = open_value(jw, key);
    if (in < 0)
        return -1;
    jw->level[jw->depth].is_array = (unsigned char)is_array;
    jw->level[jw->depth].empty = 1;
    jw->level[jw->depth].layout = layout;
    jw->level[jw->depth].indent = in;
    jw->depth++;
    fputc(is_array ? '[' : '{', jw->f);
    return 0;
}

int json_object_begin(json_writer *jw, const char *key, json_layout layout)
{
    return begin(jw, key, layout, 0);
}

int json_array_begin(json_writer *jw, const char *key, json_layout layout)
{
    return begin(jw, key, layout, 1);
}

int json_end(json_writer *jw)
{
    if (jw->failed || jw->depth == 0)
        return refuse(jw);
    jw->depth--;
    {
        const struct json_level *l = &jw->level[jw->depth];
        if (l->layout == JSON_BLOCK && !l->empty) {
            fputc('\n', jw->f);
            indent(jw->f, l->indent);
        }
        fputc(l->is_array ? ']' : '}', jw->f);
    }
    return close_value(jw);
}

int json_relayout(json_writer *jw, json_layout layout)
{
    if (jw->failed || jw->depth == 0)
        return refuse(jw);
    jw->level[jw->depth - 1].layout = layout;
    return 0;
}

int json_string(json_writer *jw, const char *key, const char *value)
{
    if (open_value(jw, key) < 0)
        return -1;
    if (value)
        write_escaped(jw->f, value);
    else
        fputs("null", jw->f);
    return close_value(jw);
}

int json_number(json_writer *jw, const char *key, double value)
{
    if (open_value(jw, key) < 0)
        return -1;
    if (isfinite(value))
        fprintf(jw->f, "%.9g", value);
    else
        fputs("null", jw->f);
    return close_value(jw);
}

int json_number_exact(json_writer *jw, const char *key, double value)
{
    char buf[40];
    if (open_value(jw, key) < 0)
        return -1;
    if (!isfinite(value)) {
        fputs("null", jw->f);
    } else if (value == floor(value) && fabs(value) < 1e15) {
        fprintf(jw->f, "%.0f", value); /* whole numbers as integers: 10000 */
    } else {
        /* the fewest digits that read back as the same double */
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(buf, sizeof buf, "%.*g", prec, value);
            if (strtod(buf, NULL) == value)
                break;
        }
        fputs(buf, jw->f);
    }
    return close_value(jw);
}

int json_int(json_writer *jw, const char *key, intmax_t value)
{
    if (open_value(jw, key) < 0)
        return -1;
    fprintf(jw->f, "%" PRIdMAX, value);
    return close_value(jw);
}

int json_uint(json_writer *jw, const char *key, uintmax_t value)
{
    if (open_value(jw, key) < 0)
        return -1;
    fprintf(jw->f, "%" PRIuMAX, value);
    return close_value(jw);
}

int json_bool(json_writer *jw, const char *key, int value)
{
    if (open_value(jw, key) < 0)
        return -1;
    fputs(value ? "true" : "false", jw->f);
    return close_value(jw);
}

int json_null(json_writer *jw, const char *key)
{
    if (open_value(jw, key) < 0)
        return -1;
    fputs("null", jw->f);
    return close_value(jw);
}

/* One level of the nested arrays: data holds shape[0] × … × shape[ndim-1]
 * elements, `count` of them. */
static int tensor_level(json_writer *jw, const char *key, const float *data, size_t ndim,
                        const size_t *shape, size_t count)
{
    size_t inner = count / (shape[0] ? shape[0] : 1); /* elements per sub-array */
    if (json_array_begin(jw, key, ndim == 1 ? JSON_INLINE : JSON_BLOCK))
        return -1;
    for (size_t i = 0; i < shape[0]; i++) {
        if (ferror(jw->f))
            break; /* a failed stream: stop early, the caller reports it */
        if (ndim == 1 ? json_number(jw, NULL, data[i])
                      : tensor_level(jw, NULL, data + i * inner, ndim - 1, shape + 1, inner))
            return -1;
    }
    return json_end(jw);
}

/* {"dtype": "float32", "shape": [...], then the caller's member}: the
 * object is left open. */
static int tensor_head(json_writer *jw, const char *key, size_t ndim, const size_t *shape)
{
    json_object_begin(jw, key, JSON_INLINE);
    json_string(jw, "dtype", "float32");
    json_array_begin(jw, "shape", JSON_INLINE);
    for (size_t i = 0; i < ndim; i++)
        json_uint(jw, NULL, shape[i]);
    return json_end(jw);
}

/* Base64 (RFC 4648, with '=' padding), written a byte at a time: three
 * bytes in, four digits out. */
struct base64_out {
    FILE *f;
    unsigned char group[3];
    size_t filled;
};

static const char base64_digits[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void base64_put(struct base64_out *b, unsigned char byte)
{
    const unsigned char *g = b->group;
    b->group[b->filled++] = byte;
    if (b->filled < 3)
        return;
    fputc(base64_digits[g[0] >> 2], b->f);
    fputc(base64_digits[(g[0] & 3) << 4 | g[1] >> 4], b->f);
    fputc(base64_digits[(g[1] & 15) << 2 | g[2] >> 6], b->f);
    fputc(base64_digits[g[2] & 63], b->f);
    b->filled = 0;
}

/* The last one or two bytes, padded. */
static void base64_finish(struct base64_out *b)
{
    const unsigned char *g = b->group;
    if (b->filled == 1) {
        fputc(base64_digits[g[0] >> 2], b->f);
        fputc(base64_digits[(g[0] & 3) << 4], b->f);
        fputs("==", b->f);
    } else if (b->filled == 2) {
        fputc(base64_digits[g[0] >> 2], b->f);
        fputc(base64_digits[(g[0] & 3) << 4 | g[1] >> 4], b->f);
        fputc(base64_digits[(g[1] & 15) << 2], b->f);
        fputc('=', b->f);
    }
    b->filled = 0;
}

/* The count float32 values of data, little-endian, in base64, quoted. */
static void write_base64(FILE *f, const float *data, size_t count)
{
    struct base64_out b = {f, {0}, 0};
    fputc('"', f);
    for (size_t i = 0; i < count; i++) {
        uint32_t u;
        memcpy(&u, &data[i], sizeof u);
        for (int k = 0; k < 4; k++) /* the bytes of u, lowest first */
            base64_put(&b, (unsigned char)(u >> (8 * k)));
    }
    base64_finish(&b);
    fputc('"', f);
}

static size_t tensor_count(size_t ndim, const size_t *shape)
{
    size_t count = 1;
    for (size_t i = 0; i < ndim; i++)
        count *= shape[i]; /* the caller allocated data, so this cannot overflow */
    return count;
}

int json_tensor_base64(json_writer *jw, const char *key, const float *data, size_t ndim,
                       const size_t *shape)
{
    if (tensor_head(jw, key, ndim, shape) || open_value(jw, "base64") < 0)
        return -1;
    write_base64(jw->f, data, tensor_count(ndim, shape));
    close_value(jw);
    return json_end(jw);
}

int json_tensor(json_writer *jw, const char *key, const float *data, size_t ndim,
                const size_t *shape)
{
    size_t count = tensor_count(ndim, shape);
    if (ndim == 0)
        return json_number(jw, key, data[0]);
    if (jw->omit_above > 0 && count > jw->omit_above) {
        char note[160];
        snprintf(note, sizeof note,
                 "%zu numbers, more than the page keeps (%zu); --json writes them", count,
                 jw->omit_above);
        if (tensor_head(jw, key, ndim, shape))
            return -1;
        json_string(jw, "omitted", note);
        return json_end(jw);
    }
    if (jw->base64_from > 0 && count >= jw->base64_from)
        return json_tensor_base64(jw, key, data, ndim, shape);
    return tensor_level(jw, key, data, ndim, shape, count);
}

int json_base64(json_writer *jw, const char *key, const unsigned char *bytes, size_t len)
{
    struct base64_out b = {jw->f, {0}, 0};
    if (open_value(jw, key) < 0)
        return -1;
    fputc('"', jw->f);
    for (size_t i = 0; i < len; i++)
        base64_put(&b, bytes[i]);
    base64_finish(&b);
    fputc('"', jw->f);
    return close_value(jw);
}

int json_raw(json_writer *jw, const char *key, const char *text, size_t len)
{
    if (open_value(jw, key) < 0)
        return -1;
    fwrite(text, 1, len, jw->f);
    return close_value(jw);
}

int json_document(FILE *f, size_t base64_from, json_members_fn members, const void *ctx)
{
    json_writer jw;
    json_writer_init(&jw, f);
    jw.base64_from = base64_from;
    json_object_begin(&jw, NULL, JSON_BLOCK);
    members(&jw, ctx);
    json_end(&jw);
    return json_writer_finish(&jw);
}
