/* torch_str.c — str(tensor) as torch/_tensor_str.py writes it (torch_str.h).
 *
 * Two passes over the numbers shown: the first chooses the format (whole
 * numbers, four decimals or scientific) and the common width, the second
 * writes the nested brackets.
 */
#include "torch_str.h"

#include <math.h>
#include <string.h>

#include "checked.h"

#define LINEWIDTH 80 /* PyTorch's print options */
#define THRESHOLD 1000
#define EDGEITEMS 3
#define PRECISION 4  /* PyTorch's default */
#define PRECISION_MAX 9
#define NUM_BUF 64   /* "-3.402823466e+38", or "%.9f" of a float up to 1e8 */

enum torch_mode { MODE_INT_DTYPE, MODE_WHOLE, MODE_FIXED, MODE_SCI };

/* What one print needs: the stream and its column (for the suffix), the
 * format and width, and the summary. */
struct tstr {
    FILE *f;
    size_t col;       /* characters since the last newline */
    enum torch_mode mode;
    int precision;    /* decimals */
    size_t width;     /* every number right-aligned to it */
    int summarize;    /* over THRESHOLD numbers: edges only */
    const size_t *shape;
    size_t ndim;
};

static void put(struct tstr *s, const char *text)
{
    const char *nl = strrchr(text, '\n');
    fputs(text, s->f);
    s->col = nl ? strlen(nl + 1) : s->col + strlen(text);
}

static void put_spaces(struct tstr *s, size_t n)
{
    for (; n > 0; n--)
        put(s, " ");
}

/* Whether index i of an axis of n entries is shown. */
static int shown(const struct tstr *s, size_t i, size_t n)
{
    return !s->summarize || n <= 2 * EDGEITEMS || i < EDGEITEMS || i >= n - EDGEITEMS;
}

/* v as Python formats it in mode; its length. */
static size_t fmt(char *buf, float v, enum torch_mode mode, int precision)
{
    int k;
    if (isnan(v))
        k = snprintf(buf, NUM_BUF, "nan");
    else if (isinf(v))
        k = snprintf(buf, NUM_BUF, "%s", v < 0 ? "-inf" : "inf");
    else if (mode == MODE_INT_DTYPE)
        k = snprintf(buf, NUM_BUF, "%.0f", (double)v);
    else if (mode == MODE_WHOLE)
        k = snprintf(buf, NUM_BUF, "%.0f.", (double)v);
    else if (mode == MODE_SCI)
        k = snprintf(buf, NUM_BUF, "%.*e", precision, (double)v);
    else
        k = snprintf(buf, NUM_BUF, "%.*f", precision, (double)v);
    return k < 0 ? 0 : (size_t)k < NUM_BUF ? (size_t)k : NUM_BUF - 1;
}

/* Whether flat index i is shown (every axis's index shown). */
static int flat_shown(const struct tstr *s, size_t i)
{
    for (size_t d = s->ndim; d-- > 0;) {
        if (!shown(s, i % s->shape[d], s->shape[d]))
            return 0;
        i /= s->shape[d];
    }
    return 1;
}

/* Pass 1: the format and the width, from the numbers shown (PyTorch's
 * _Formatter: for a float tensor, only the nonzero finite ones count). */
static void choose_format(struct tstr *s, const float *t, size_t numel, int integer,
                          int decimals)
{
    char buf[NUM_BUF];
    double amin = INFINITY, amax = 0;
    int any = 0, whole = !decimals;
    s->width = 1;
    s->mode = integer ? MODE_INT_DTYPE : MODE_WHOLE;
    for (size_t i = 0; i < numel; i++) {
        if (!flat_shown(s, i))
            continue;
        if (integer) {
            size_t len = fmt(buf, t[i], MODE_INT_DTYPE, 0);
            s->width = len > s->width ? len : s->width;
            continue;
        }
        if (!isfinite(t[i]) || t[i] == 0)
            continue;
        double a = fabs((double)t[i]);
        any = 1;
        amin = a < amin ? a : amin;
        amax = a > amax ? a : amax;
        whole = whole && t[i] == ceilf(t[i]);
    }
    if (integer || !any)
        return;
    /* the format: whole numbers, or decimals; scientific for a wide range */
    if (whole)
        s->mode = amax / amin > 1000.0 || amax > 1.0e8 ? MODE_SCI : MODE_WHOLE;
    else
        s->mode = amax / amin > 1000.0 || amax > 1.0e8 || amin < 1.0e-4 ? MODE_SCI : MODE_FIXED;
    /* the width: the widest of the nonzero finite numbers shown */
    for (size_t i = 0; i < numel; i++)
        if (flat_shown(s, i) && isfinite(t[i]) && t[i] != 0) {
            size_t len = fmt(buf, t[i], s->mode, s->precision);
            s->width = len > s->width ? len : s->width;
        }
}

/* One number, right-aligned to the width. */
static void put_number(struct tstr *s, float v)
{
    char buf[NUM_BUF];
    size_t len = fmt(buf, v, s->mode, s->precision);
    if (len < s->width)
        put_spaces(s, s->width - len);
    put(s, buf);
}

/* The last axis: n numbers, ", " between, a new line (indent + 1) after
 * as many as fit in LINEWIDTH − indent; " ..." counts as one. */
static void put_vector(struct tstr *s, const float *v, size_t n, size_t indent)
{
    size_t per_line = indent < LINEWIDTH ? (LINEWIDTH - indent) / (s->width + 2) : 0;
    size_t on_line = 0, item = 0;
    per_line = per_line ? per_line : 1;
    put(s, "[");
    for (size_t j = 0; j < n; j++) {
        int gap = !shown(s, j, n) && j == EDGEITEMS; /* the first hidden one */
        if (!shown(s, j, n) && !gap)
            continue;
        if (item > 0 && on_line == per_line) {
            put(s, ",\n");
            put_spaces(s, indent + 1);
            on_line = 0;
        } else if (item > 0) {
            put(s, ", ");
        }
        if (gap)
            put(s, " ...");
        else
            put_number(s, v[j]);
        on_line++;
        item++;
    }
    put(s, "]");
}

/* The block of axis dim (its numbers from t), at indent: its sub-blocks
 * joined by "," and ndim − dim − 1 newlines, then indent + 1 spaces. */
static void put_block(struct tstr *s, const float *t, size_t dim, size_t indent)
{
    const size_t n = s->shape[dim];
    size_t stride = 1;
    if (dim + 1 == s->ndim) {
        put_vector(s, t, n, indent);
        return;
    }
    for (size_t d = dim + 1; d < s->ndim; d++)
        stride *= s->shape[d]; /* ≤ numel, checked */
    put(s, "[");
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        int gap = !shown(s, i, n) && i == EDGEITEMS;
        if (!shown(s, i, n) && !gap)
            continue;
        if (!first) {
            put(s, ",");
            for (size_t k = dim + 1; k < s->ndim; k++)
                put(s, "\n");
            put_spaces(s, indent + 1);
        }
        first = 0;
        if (gap)
            put(s, "...");
        else
            put_block(s, t + i * stride, dim + 1, indent + 1);
    }
    put(s, "]");
}

/* ", suffix", or ",\n" and the indent before it when the line would pass
 * LINEWIDTH (_add_suffixes: the line counts 2 more than its characters). */
static void put_suffix(struct tstr *s, const char *suffix, size_t indent)
{
    if (s->col + 2 + strlen(suffix) + 2 > LINEWIDTH) {
        put(s, ",\n");
        put_spaces(s, indent);
    } else {
        put(s, ", ");
    }
    put(s, suffix);
}

int torch_str(FILE *f, const float *t, const size_t *shape, size_t ndim, const torch_str_opts *o)
{
    const torch_str_opts none = {0, NULL, 0, 0};
    const size_t indent = strlen("tensor(");
    struct tstr s = {f, 0, MODE_WHOLE, PRECISION, 1, 0, shape, ndim};
    size_t numel = 1;
    char size_suffix[256];
    o = o ? o : &none;
    if (o->precision > 0)
        s.precision = o->precision < PRECISION_MAX ? o->precision : PRECISION_MAX;
    if (ndim > TORCH_STR_MAX_DIMS)
        return -1;
    for (size_t d = 0; d < ndim; d++)
        if (size_mul(numel, shape[d], &numel))
            return -1;
    put(&s, "tensor(");
    if (numel == 0) {
        /* torch.zeros(2, 0): "tensor([], size=(2, 0))" */
        put(&s, "[]");
        size_t k = (size_t)snprintf(size_suffix, sizeof size_suffix, "size=(");
        for (size_t d = 0; d < ndim && k < sizeof size_suffix; d++)
            k += (size_t)snprintf(size_suffix + k, sizeof size_suffix - k, "%s%zu",
                                  d ? ", " : "", shape[d]);
        if (k < sizeof size_suffix)
            snprintf(size_suffix + k, sizeof size_suffix - k, "%s)", ndim == 1 ? "," : "");
        if (ndim != 1)
            put_suffix(&s, size_suffix, indent);
    } else {
        s.summarize = numel > THRESHOLD;
        choose_format(&s, t, numel, o->integer, o->decimals);
        if (ndim == 0)
            put_number(&s, t[0]);
        else
            put_block(&s, t, 0, indent);
    }
    if (o->suffix)
        put_suffix(&s, o->suffix, indent);
    put(&s, ")");
    return 0;
}

void torch_size_str(FILE *f, const size_t *shape, size_t ndim)
{
    fputs("torch.Size([", f);
    for (size_t d = 0; d < ndim; d++)
        fprintf(f, "%s%zu", d ? ", " : "", shape[d]);
    fputs("])", f);
}
