/* json_in.c — reading and checking JSON input (see json_in.h). */
#include "json_in.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "checked.h"
#include "i18n.h"

#define PATH_LEN 256

const char *json_type_name(const cJSON *node)
{
    if (!node) return _("nothing");
    if (cJSON_IsArray(node)) return _("an array");
    if (cJSON_IsObject(node)) return _("an object");
    if (cJSON_IsString(node)) return _("a string");
    if (cJSON_IsNumber(node)) return _("a number");
    if (cJSON_IsBool(node)) return _("a boolean");
    if (cJSON_IsNull(node)) return "null";
    return _("an invalid value");
}

/* ---- files ----------------------------------------------------------- */

/* Read all of f into a NUL-terminated buffer; -1 with errno on failure. */
static char *read_all(FILE *f, size_t max_bytes, size_t *len, int *too_big)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap), *grown;
    *too_big = 0;
    if (!buf)
        return NULL;
    for (;;) {
        size_t got;
        if (n + 1 >= cap) {
            if (cap > max_bytes) {
                *too_big = 1;
                free(buf);
                return NULL;
            }
            if (size_mul(cap, 2, &cap) != 0 || (grown = realloc(buf, cap)) == NULL) {
                free(buf);
                errno = ENOMEM;
                return NULL;
            }
            buf = grown;
        }
        got = fread(buf + n, 1, cap - 1 - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) {
                int e = errno;
                free(buf);
                errno = e ? e : EIO;
                return NULL;
            }
            break;
        }
    }
    if (n > max_bytes) {
        *too_big = 1;
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Line and column (from 1) of offset pos in text. */
static void line_col(const char *text, size_t pos, size_t *line, size_t *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < pos; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

/* How deeply arrays and objects are nested at offset pos of text (strings
 * skipped), to tell cJSON's nesting limit from other parse errors. */
static size_t depth_at(const char *text, size_t pos)
{
    size_t depth = 0;
    int in_string = 0;
    for (size_t i = 0; i < pos; i++) {
        char c = text[i];
        if (in_string) {
            if (c == '\\' && i + 1 < pos)
                i++;
            else if (c == '"')
                in_string = 0;
        } else if (c == '"') {
            in_string = 1;
        } else if (c == '[' || c == '{') {
            depth++;
        } else if ((c == ']' || c == '}') && depth > 0) {
            depth--;
        }
    }
    return depth;
}

/* The message for a parse error at offset pos (before the end): nesting
 * beyond cJSON's limit, a NaN or Infinity literal (not JSON), or invalid
 * JSON with the character found there. */
static void explain_invalid(char *err, size_t errlen, const char *path, const char *text,
                            size_t pos, size_t line, size_t col)
{
    static const char *const nonfinite[] = {"-Infinity", "+Infinity", "Infinity", "-inf",
                                            "+inf",      "inf",       "-NaN",     "NaN",
                                            "nan"};
    const char *at = text + pos;
    unsigned char c = (unsigned char)*at;

    if ((c == '[' || c == '{') && depth_at(text, pos) >= CJSON_NESTING_LIMIT) {
        snprintf(err, errlen, _("%s: line %zu, column %zu: arrays and objects nested deeper "
                 "than %d levels"), path, line, col, CJSON_NESTING_LIMIT);
        return;
    }
    for (size_t i = 0; i < sizeof nonfinite / sizeof nonfinite[0]; i++)
        if (strncmp(at, nonfinite[i], strlen(nonfinite[i])) == 0) {
            snprintf(err, errlen, _("%s: line %zu, column %zu: %s is not a JSON number "
                     "(NaN and Infinity are not allowed)"), path, line, col,
                     nonfinite[i]);
            return;
        }
    if (c > 0x20 && c < 0x7f)
        snprintf(err, errlen, _("%s: line %zu, column %zu: invalid JSON at '%c'"), path, line,
                 col, c);
    else
        snprintf(err, errlen, _("%s: line %zu, column %zu: invalid JSON at byte 0x%02x"), path,
                 line, col, c);
}

/* The whole file at path ("-": stdin) as NUL-terminated text of *len
 * bytes, refused when it cannot be read, is larger than max_bytes, is only
 * white space or holds a NUL byte; NULL then, with the message in err. */
static char *read_text(const char *path, size_t max_bytes, size_t *len, char *err,
                       size_t errlen)
{
    FILE *f = stdin;
    struct stat st;
    char *text;
    const char *nul;
    size_t line, col;
    int too_big;

    if (strcmp(path, "-") != 0 && (f = fopen(path, "rb")) == NULL) {
        snprintf(err, errlen, _("%s: cannot open: %s"), path, strerror(errno));
        return NULL;
    }
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, _("%s: cannot read: Is a directory"), path);
        if (f != stdin)
            fclose(f);
        return NULL;
    }
    text = read_all(f, max_bytes, len, &too_big);
    if (f != stdin)
        fclose(f);
    if (!text) {
        if (too_big) {
            char have[32];
            format_bytes(have, sizeof have, (double)max_bytes);
            snprintf(err, errlen, _("%s: larger than %s, the input limit for --max-mem"), path,
                     have);
        } else {
            snprintf(err, errlen, _("%s: cannot read: %s"), path, strerror(errno));
        }
        return NULL;
    }
    if (strspn(text, " \t\r\n") == *len) {
        snprintf(err, errlen, _("%s: empty: expected a JSON object"), path);
        free(text);
        return NULL;
    }
    if ((nul = memchr(text, '\0', *len)) != NULL) {
        line_col(text, (size_t)(nul - text), &line, &col);
        snprintf(err, errlen, _("%s: line %zu, column %zu: a NUL byte: not a JSON text"), path,
                 line, col);
        free(text);
        return NULL;
    }
    return text;
}

/* text[0 … len) parsed as one JSON value with nothing but white space
 * after it; NULL with the place and the reason in err. */
static cJSON *parse_text(const char *path, const char *text, size_t len, char *err,
                         size_t errlen)
{
    const char *end = NULL;
    size_t line, col;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len + 1, &end, 0);

    if (root && end && strspn(end, " \t\r\n") != strlen(end)) {
        /* a complete value, then more: say where the extra text starts */
        size_t pos = (size_t)(end - text) + strspn(end, " \t\r\n");
        line_col(text, pos, &line, &col);
        snprintf(err, errlen, _("%s: line %zu, column %zu: unexpected text after the JSON value"),
                 path, line, col);
        cJSON_Delete(root);
        return NULL;
    }
    if (!root) {
        size_t pos = end && end >= text && end <= text + len ? (size_t)(end - text) : 0;
        const char *ep = cJSON_GetErrorPtr();
        if (ep && ep >= text && ep <= text + len)
            pos = (size_t)(ep - text);
        line_col(text, pos, &line, &col);
        if (pos >= len)
            snprintf(err, errlen, _("%s: line %zu, column %zu: the JSON ends too early"), path,
                     line, col);
        else
            explain_invalid(err, errlen, path, text, pos, line, col);
    }
    return root;
}

cJSON *json_read_file(const char *path, size_t max_bytes, char *err, size_t errlen)
{
    size_t len = 0;
    char *text = read_text(path, max_bytes, &len, err, errlen);
    cJSON *root;
    if (!text)
        return NULL;
    root = parse_text(path, text, len, err, errlen);
    free(text);
    return root;
}

cJSON *json_parse(const char *name, const char *text, size_t len, char *err, size_t errlen)
{
    const char *nul = memchr(text, '\0', len);
    size_t line, col;
    if (nul) {
        line_col(text, (size_t)(nul - text), &line, &col);
        snprintf(err, errlen, _("%s: line %zu, column %zu: a NUL byte: not a JSON text"), name,
                 line, col);
        return NULL;
    }
    return parse_text(name, text, len, err, errlen);
}

/* ---- tensors --------------------------------------------------------- */

/* path followed by "[i]"; a path too long for dst is cut short. */
static void path_index(char *dst, size_t dstlen, const char *path, size_t i)
{
    int n = snprintf(dst, dstlen, "%s[%zu]", path, i);
    if (n < 0 || (size_t)n >= dstlen)
        dst[dstlen - 1] = '\0'; /* truncated: still a terminated string */
}

/* The shape, read along the first elements: [[1, 2], [3, 4]] → (2, 2). */
static int probe_shape(const cJSON *node, const char *path, size_t max_ndim, size_t *ndim,
                       size_t *shape, char *err, size_t errlen)
{
    char p[PATH_LEN];
    *ndim = 0;
    snprintf(p, sizeof p, "%s", path);
    while (cJSON_IsArray(node)) {
        int n = cJSON_GetArraySize(node);
        if (*ndim == max_ndim) {
            snprintf(err, errlen, _("%s: expected at most %zu nested arrays, found more"), path,
                     max_ndim);
            return -1;
        }
        shape[(*ndim)++] = (size_t)n;
        if (n == 0)
            return 0;
        node = node->child;
        snprintf(p + strlen(p), sizeof p - strlen(p), "[0]");
    }
    if (!cJSON_IsNumber(node)) {
        snprintf(err, errlen, _("%s: expected %s, got %s"), p,
                 *ndim ? _("a number") : _("an array of numbers"), json_type_name(node));
        return -1;
    }
    return 0;
}

/* Check node against shape[level …] and copy its numbers to *dst. */
static int fill_level(const cJSON *node, const char *path, size_t level, size_t ndim,
                      const size_t *shape, float **dst, char *err, size_t errlen)
{
    char p[PATH_LEN];
    const cJSON *item;
    size_t i = 0, n;

    if (!cJSON_IsArray(node)) {
        snprintf(err, errlen, _("%s: expected an array of %zu %s, got %s"), path, shape[level],
                 level + 1 == ndim ? _("numbers") : _("arrays"), json_type_name(node));
        return -1;
    }
    n = (size_t)cJSON_GetArraySize(node);
    if (n != shape[level]) {
        snprintf(err, errlen, _("%s: expected %zu %s, got %zu"), path, shape[level],
                 level + 1 == ndim ? "numbers" : "arrays", n);
        return -1;
    }
    cJSON_ArrayForEach(item, node)
    {
        path_index(p, sizeof p, path, i++);
        if (level + 1 < ndim) {
            if (fill_level(item, p, level + 1, ndim, shape, dst, err, errlen) != 0)
                return -1;
            continue;
        }
        if (!cJSON_IsNumber(item)) {
            snprintf(err, errlen, _("%s: expected a number, got %s"), p, json_type_name(item));
            return -1;
        }
        if (!isfinite(item->valuedouble) || fabs(item->valuedouble) > FLT_MAX) {
            snprintf(err, errlen, _("%s: expected a finite float32 number, got %g"), p,
                     item->valuedouble);
            return -1;
        }
        *(*dst)++ = (float)item->valuedouble;
    }
    return 0;
}

int json_get_tensor(const cJSON *node, const char *path, size_t min_ndim, size_t max_ndim,
                    tensor *out, char *err, size_t errlen)
{
    size_t shape[TENSOR_MAX_DIM], ndim;
    float *dst;

    memset(out, 0, sizeof *out);
    if (max_ndim > TENSOR_MAX_DIM)
        max_ndim = TENSOR_MAX_DIM;
    if (!cJSON_IsArray(node)) {
        snprintf(err, errlen, _("%s: expected an array of numbers, got %s"), path,
                 json_type_name(node));
        return -1;
    }
    if (probe_shape(node, path, max_ndim, &ndim, shape, err, errlen) != 0)
        return -1;
    for (size_t i = 0; i < ndim; i++)
        if (shape[i] == 0) {
            snprintf(err, errlen, _("%s: an empty array%s"), path,
                     i ? " inside" : "");
            return -1;
        }
    if (ndim < min_ndim) {
        snprintf(err, errlen, _("%s: expected a %zu-D%s array of numbers, got a %zu-D array"),
                 path, min_ndim, max_ndim > min_ndim ? " or deeper" : "", ndim);
        return -1;
    }
    if (tensor_alloc(out, ndim, shape, err, errlen) != 0)
        return -1;
    dst = out->data;
    if (fill_level(node, path, 0, ndim, shape, &dst, err, errlen) != 0) {
        tensor_free(out);
        return -1;
    }
    return 0;
}

/* The value of one base64 digit, or -1. */
static int base64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

/* The base64 text s (RFC 4648, '=' padding) decoded into out, which
 * holds exactly want bytes: 0, or -1 with the reason in err. */
static int base64_decode(const char *s, const char *path, unsigned char *out, size_t want,
                         char *err, size_t errlen)
{
    size_t len = strlen(s), pad = 0, got;
    if (len % 4 != 0) {
        snprintf(err, errlen, _("%s.base64: %zu characters, not a multiple of 4"), path, len);
        return -1;
    }
    while (pad < 2 && pad < len && s[len - 1 - pad] == '=')
        pad++;
    got = len / 4 * 3 - pad;
    if (got != want) {
        snprintf(err, errlen, _("%s.base64: %zu bytes, the shape wants %zu (4 per float32)"),
                 path, got, want);
        return -1;
    }
    for (size_t i = 0, o = 0; i < len; i += 4) {
        unsigned long group = 0;
        for (size_t k = 0; k < 4; k++) {
            int v = i + k >= len - pad ? 0 : base64_value((unsigned char)s[i + k]);
            if (v < 0) {
                snprintf(err, errlen, _("%s.base64: character %zu is not a base64 digit"), path,
                         i + k + 1);
                return -1;
            }
            group = group << 6 | (unsigned long)v;
        }
        for (int k = 2; k >= 0 && o < want; k--, o++)
            out[o] = (unsigned char)(group >> (8 * k));
    }
    return 0;
}

/* A base64 tensor's members but its digits: "dtype" float32, "shape" of
 * min_ndim … max_ndim sizes each at least 1 (into shape, *ndim, and *count
 * numbers), "base64" a string of as many digits as they want (*digits).
 * 0, or -1 with the place in err. */
static int base64_head(const cJSON *node, const char *path, size_t min_ndim, size_t max_ndim,
                       size_t *shape, size_t *ndim, size_t *count, const char **digits,
                       char *err, size_t errlen)
{
    const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(node, "dtype");
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(node, "shape");
    const cJSON *b64 = cJSON_GetObjectItemCaseSensitive(node, "base64");
    const cJSON *item;
    char p[PATH_LEN];
    size_t bytes;
    *ndim = 0;
    *count = 1;
    if (!cJSON_IsString(dtype) || strcmp(dtype->valuestring, "float32") != 0) {
        snprintf(err, errlen, _("%s.dtype: expected \"float32\", got %s"), path,
                 cJSON_IsString(dtype) ? dtype->valuestring : json_type_name(dtype));
        return -1;
    }
    if (!cJSON_IsString(b64)) {
        snprintf(err, errlen, _("%s.base64: expected a string, got %s"), path,
                 json_type_name(b64));
        return -1;
    }
    if (!cJSON_IsArray(sh)) {
        snprintf(err, errlen, _("%s.shape: expected an array of sizes, got %s"), path,
                 json_type_name(sh));
        return -1;
    }
    if ((size_t)cJSON_GetArraySize(sh) < min_ndim || (size_t)cJSON_GetArraySize(sh) > max_ndim) {
        snprintf(err, errlen, _("%s.shape: expected %zu to %zu sizes, got %d"), path, min_ndim,
                 max_ndim, cJSON_GetArraySize(sh));
        return -1;
    }
    snprintf(p, sizeof p, "%s.shape", path);
    cJSON_ArrayForEach(item, sh)
    {
        long n;
        char q[PATH_LEN];
        path_index(q, sizeof q, p, *ndim);
        if (json_get_count(item, q, 1, 1L << 30, &n, err, errlen))
            return -1;
        shape[(*ndim)++] = (size_t)n;
        if (size_mul(*count, (size_t)n, count)) {
            snprintf(err, errlen, _("%s: too many numbers"), p);
            return -1;
        }
    }
    if (size_mul(*count, sizeof(float), &bytes) || bytes > SIZE_MAX / 2) {
        snprintf(err, errlen, _("%s: too many numbers"), p);
        return -1;
    }
    /* the text's length before any allocation: 4 digits per 3 bytes */
    if (strlen(b64->valuestring) != (bytes + 2) / 3 * 4) {
        snprintf(err, errlen, _("%s.base64: %zu characters, the shape's %zu float32 want %zu"),
                 path, strlen(b64->valuestring), *count, (bytes + 2) / 3 * 4);
        return -1;
    }
    *digits = b64->valuestring;
    return 0;
}

int json_get_tensor_base64(const cJSON *node, const char *path, size_t min_ndim,
                           size_t max_ndim, tensor *out, char *err, size_t errlen)
{
    size_t shape[TENSOR_MAX_DIM], ndim, count;
    const char *digits;
    unsigned char *raw;

    memset(out, 0, sizeof *out);
    if (max_ndim > TENSOR_MAX_DIM)
        max_ndim = TENSOR_MAX_DIM;
    if (base64_head(node, path, min_ndim, max_ndim, shape, &ndim, &count, &digits, err,
                    errlen) ||
        tensor_alloc(out, ndim, shape, err, errlen))
        return -1;
    if (!(raw = malloc(count * sizeof(float)))) {
        snprintf(err, errlen, _("%s: out of memory"), path);
        tensor_free(out);
        return -1;
    }
    if (base64_decode(digits, path, raw, count * sizeof(float), err, errlen)) {
        free(raw);
        tensor_free(out);
        return -1;
    }
    /* little-endian float32, as json_writer writes them */
    for (size_t i = 0; i < count; i++) {
        uint32_t u = 0;
        float v;
        for (int k = 3; k >= 0; k--)
            u = u << 8 | raw[4 * i + (size_t)k];
        memcpy(&v, &u, sizeof v);
        if (!isfinite(v)) {
            snprintf(err, errlen, _("%s: number %zu is not finite"), path, i);
            free(raw);
            tensor_free(out);
            return -1;
        }
        out->data[i] = v;
    }
    free(raw);
    return 0;
}

/* One length: an integer in 0 … max. */
static int get_len(const cJSON *item, const char *p, long max, long *v, char *err,
                   size_t errlen)
{
    double d;
    if (!cJSON_IsNumber(item)) {
        snprintf(err, errlen, _("%s: expected an integer >= 0, got %s"), p, json_type_name(item));
        return -1;
    }
    d = item->valuedouble;
    if (!(d >= 0) || d != floor(d) || d > (double)max) {
        snprintf(err, errlen, _("%s: expected an integer from 0 to %ld, got %g"), p, max, d);
        return -1;
    }
    *v = (long)d;
    return 0;
}

int json_get_lens(const cJSON *node, const char *path, long max, long **out, size_t *ndim,
                  size_t shape[2], char *err, size_t errlen)
{
    char p[PATH_LEN], q[PATH_LEN];
    const cJSON *row, *item;
    size_t rows, cols = 1, i = 0, j, total;
    long *v;

    *out = NULL;
    if (!cJSON_IsArray(node) || cJSON_GetArraySize(node) == 0) {
        snprintf(err, errlen, _("%s: expected a non-empty array of integers, got %s"), path,
                 cJSON_IsArray(node) ? _("an empty array") : json_type_name(node));
        return -1;
    }
    rows = (size_t)cJSON_GetArraySize(node);
    *ndim = cJSON_IsArray(node->child) ? 2 : 1;
    if (*ndim == 2) {
        cols = (size_t)cJSON_GetArraySize(node->child);
        if (cols == 0) {
            snprintf(err, errlen, _("%s[0]: an empty array"), path);
            return -1;
        }
    }
    if (size_mul(rows, cols, &total) != 0 || (v = calloc(total, sizeof *v)) == NULL) {
        snprintf(err, errlen, _("%s: out of memory"), path);
        return -1;
    }
    cJSON_ArrayForEach(row, node)
    {
        path_index(p, sizeof p, path, i);
        if (*ndim == 1) {
            if (get_len(row, p, max, &v[i], err, errlen) != 0)
                goto fail;
        } else {
            if (!cJSON_IsArray(row) || (size_t)cJSON_GetArraySize(row) != cols) {
                if (cJSON_IsArray(row))
                    snprintf(err, errlen, _("%s: expected %zu integers, got %d"), p, cols,
                             cJSON_GetArraySize(row));
                else
                    snprintf(err, errlen, _("%s: expected an array of %zu integers, got %s"), p,
                             cols, json_type_name(row));
                goto fail;
            }
            j = 0;
            cJSON_ArrayForEach(item, row)
            {
                path_index(q, sizeof q, p, j);
                if (get_len(item, q, max, &v[i * cols + j], err, errlen) != 0)
                    goto fail;
                j++;
            }
        }
        i++;
    }
    shape[0] = rows;
    shape[1] = cols;
    *out = v;
    return 0;
fail:
    free(v);
    return -1;
}

int json_get_strings(const cJSON *node, const char *path, const char ***out, size_t *n,
                     char *err, size_t errlen)
{
    char p[PATH_LEN];
    const cJSON *item;
    const char **v;
    size_t i = 0, count;

    *out = NULL;
    *n = 0;
    if (!cJSON_IsArray(node) || cJSON_GetArraySize(node) == 0) {
        snprintf(err, errlen, _("%s: expected a non-empty array of strings, got %s"), path,
                 cJSON_IsArray(node) ? _("an empty array") : json_type_name(node));
        return -1;
    }
    count = (size_t)cJSON_GetArraySize(node);
    v = calloc(count, sizeof *v);
    if (!v) {
        snprintf(err, errlen, _("%s: out of memory"), path);
        return -1;
    }
    cJSON_ArrayForEach(item, node)
    {
        if (!cJSON_IsString(item)) {
            path_index(p, sizeof p, path, i);
            snprintf(err, errlen, _("%s: expected a string, got %s"), p, json_type_name(item));
            free(v);
            return -1;
        }
        v[i++] = item->valuestring;
    }
    *out = v;
    *n = count;
    return 0;
}

int json_get_count(const cJSON *node, const char *path, long min, long max, long *out,
                   char *err, size_t errlen)
{
    double d;
    if (!cJSON_IsNumber(node)) {
        snprintf(err, errlen, _("%s: expected an integer, got %s"), path, json_type_name(node));
        return -1;
    }
    d = node->valuedouble;
    if (!(d >= (double)min && d <= (double)max) || d != floor(d)) {
        snprintf(err, errlen, _("%s: expected an integer from %ld to %ld, got %g"), path, min,
                 max, d);
        return -1;
    }
    *out = (long)d;
    return 0;
}

/* ---- paths ------------------------------------------------------------ */

/* The longest path taken (messages quote it whole) */
#define JSON_PATH_MAX 200

/* One step of a path at s: a member ".name" (*name, *len) or an index
 * "[i]" (*index; *name NULL). The characters it takes, or 0 when s does
 * not start a step. */
static size_t path_step(const char *s, const char **name, size_t *len, size_t *index)
{
    *name = NULL;
    if (s[0] == '.') {
        size_t n = strcspn(s + 1, ".[");
        if (n == 0)
            return 0;
        *name = s + 1;
        *len = n;
        return n + 1;
    }
    if (s[0] == '[') {
        size_t n = strspn(s + 1, "0123456789");
        if (n == 0 || n > 9 || s[1 + n] != ']' || (n > 1 && s[1] == '0'))
            return 0;
        *index = (size_t)strtoul(s + 1, NULL, 10);
        return n + 2;
    }
    return 0;
}

int json_path_check(const char *path, char *err, size_t errlen)
{
    const char *name;
    size_t len = 0, index = 0, used = 1, n;
    if (strlen(path) > JSON_PATH_MAX) {
        snprintf(err, errlen, _("expected a JSON path of at most %d characters"), JSON_PATH_MAX);
        return -1;
    }
    if (path[0] != '$') {
        snprintf(err, errlen, _("expected a JSON path starting with $, like "
                 "$.attention_weights or $.cross_attention[1], got '%s'"), path);
        return -1;
    }
    while (path[used] != '\0') {
        n = path_step(path + used, &name, &len, &index);
        if (n == 0) {
            snprintf(err, errlen, _("expected .member or [index] at character %zu of '%s'"),
                     used + 1, path);
            return -1;
        }
        used += n;
    }
    return 0;
}

/* The members of object node, as "a, b, c" (the first few) into buf. */
static void member_list(const cJSON *node, char *buf, size_t buflen)
{
    const cJSON *item;
    size_t used = 0, count = 0;
    buf[0] = '\0';
    cJSON_ArrayForEach(item, node)
    {
        int n;
        if (count == 8 || used + 8 >= buflen) {
            snprintf(buf + used, buflen - used, ", …");
            return;
        }
        n = snprintf(buf + used, buflen - used, "%s%.40s", count ? ", " : "",
                     item->string ? item->string : "");
        if (n < 0 || (size_t)n >= buflen - used)
            return;
        used += (size_t)n;
        count++;
    }
}

/* One step from node: its member name[0 … len) or its entry index; NULL
 * with the message in err (here is the path up to and with the step). */
static const cJSON *take_step(const cJSON *node, const char *here, const char *name, size_t len,
                              size_t index, char *err, size_t errlen)
{
    const cJSON *item;
    if (name) {
        char key[JSON_PATH_MAX + 1], members[160];
        if (!cJSON_IsObject(node)) {
            snprintf(err, errlen, _("%s: no such member: the value before it is %s, not an "
                     "object"), here, json_type_name(node));
            return NULL;
        }
        memcpy(key, name, len);
        key[len] = '\0';
        if ((item = cJSON_GetObjectItemCaseSensitive(node, key)) == NULL) {
            member_list(node, members, sizeof members);
            snprintf(err, errlen, _("%s: no such member (the object has %s%s)"), here,
                     members[0] ? "" : "none", members);
        }
        return item;
    }
    if (!cJSON_IsArray(node)) {
        snprintf(err, errlen, _("%s: no such index: the value before it is %s, not an array"),
                 here, json_type_name(node));
        return NULL;
    }
    if (index >= (size_t)cJSON_GetArraySize(node)) {
        const int size = cJSON_GetArraySize(node);
        snprintf(err, errlen,
                 i18n_plural("%s: no such index (the array has %d entry)",
                             "%s: no such index (the array has %d entries)", (unsigned long)size),
                 here, size);
        return NULL;
    }
    return cJSON_GetArrayItem(node, (int)index);
}

const cJSON *json_at_path(const cJSON *root, const char *path, char *err, size_t errlen)
{
    char here[JSON_PATH_MAX + 1];
    const char *name;
    size_t len = 0, index = 0, used = 1;
    const cJSON *node = root;

    if (json_path_check(path, err, errlen) != 0)
        return NULL;
    while (node && path[used] != '\0') {
        size_t n = path_step(path + used, &name, &len, &index);
        used += n;
        memcpy(here, path, used);
        here[used] = '\0';
        node = take_step(node, here, name, len, index, err, errlen);
    }
    return node;
}
