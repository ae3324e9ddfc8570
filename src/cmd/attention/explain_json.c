/* explain_json.c — the "explain" member of --explain --json (see
 * explain_json.h): mha_forward's trace, cell by cell. */
#include "explain_json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "fmath.h"
#include "layers.h"

/* The sizes of one run. */
typedef struct ex_sizes {
    size_t B, NH, Nq, Nk, H, p, F, A, FA;
} ex_sizes;

/* The first F entries of every head's slice of X (B, N, H), as
 * (B, NH, N, F): buf[((b·NH + h)·N + n)·F + c] = X[(b·N + n)·H + h·p + c]. */
static void head_slices(float *buf, const float *X, const ex_sizes *s, size_t N)
{
    for (size_t b = 0; b < s->B; b++)
        for (size_t h = 0; h < s->NH; h++)
            for (size_t n = 0; n < N; n++)
                memcpy(buf + ((b * s->NH + h) * N + n) * s->F, X + (b * N + n) * s->H + h * s->p,
                       s->F * sizeof(float));
}

/* One tensor member from buf, shape (B, NH, rows, cols) or, with cols 0,
 * (B, NH, rows). */
static void put4(json_writer *jw, const char *key, const float *buf, const ex_sizes *s,
                 size_t rows, size_t cols)
{
    const size_t shape[4] = {s->B, s->NH, rows, cols};
    json_tensor(jw, key, buf, cols ? 4 : 3, shape);
}

/* The mask of every cell (1 masked, 0 not) into buf (B, NH, Nq, Nk), and
 * each row's max and Σ e^(s − max) of the masked scores (as softmax_row
 * computes them, in double) into mx and sum (B, NH, Nq). */
static void mask_and_rows(float *buf, float *mx, float *sum, const problem *pr,
                          const mha_trace *t, int causal, const ex_sizes *s)
{
    const mha_masks mask = {pr->valid_lens, pr->vl_ndim == 2, causal, 0};
    for (size_t b = 0; b < s->B; b++)
        for (size_t h = 0; h < s->NH; h++)
            for (size_t q = 0; q < s->Nq; q++) {
                const size_t r = (b * s->NH + h) * s->Nq + q; /* the row */
                const float *row = t->masked + r * s->Nk;      /* (Nk,) */
                double m = row[0], e = 0.0;
                for (size_t k = 0; k < s->Nk; k++) {
                    buf[r * s->Nk + k] = (float)mha_is_masked(&mask, b, q, k, s->Nq);
                    if (row[k] > m)
                        m = row[k];
                }
                for (size_t k = 0; k < s->Nk; k++)
                    e += fm_exp((double)row[k] - m);
                mx[r] = (float)m;
                sum[r] = (float)e;
            }
}

/* Additive scoring's W_q' q (or W_k' k) of every head's row of X (B, N,
 * H), all A hiddens, into out (B, NH, N, A); row (p,) is scratch. */
static void additive_rows(float *out, const float *X, const linear *W, const ex_sizes *s,
                          size_t N, float *row)
{
    for (size_t b = 0; b < s->B; b++)
        for (size_t h = 0; h < s->NH; h++)
            for (size_t n = 0; n < N; n++) {
                memcpy(row, X + (b * N + n) * s->H + h * s->p, s->p * sizeof(float));
                linear_forward(out + ((b * s->NH + h) * N + n) * s->A, row, 1, W);
            }
}

/* The first FA of each row of A numbers in src (rows, A), into buf. */
static void first_of(float *buf, const float *src, size_t rows, const ex_sizes *s)
{
    for (size_t r = 0; r < rows; r++)
        memcpy(buf + r * s->FA, src + r * s->A, s->FA * sizeof(float));
}

/* Additive scoring's parts: w_v, qa, ka, and tanh(qa + ka) of every cell.
 * qa (B, NH, Nq, A), ka (B, NH, Nk, A) were computed; buf is scratch of
 * B·NH·Nq·Nk·FA floats. */
static void put_additive(json_writer *jw, const mha_params *m, const float *qa, const float *ka,
                         float *buf, const ex_sizes *s)
{
    const size_t rows = s->B * s->NH, shape[5] = {s->B, s->NH, s->Nq, s->Nk, s->FA};
    json_uint(jw, "hiddens", s->A);
    json_uint(jw, "first_hiddens", s->FA);
    json_tensor(jw, "w_v", m->a_w_v.weight.data, 1, &s->FA);
    first_of(buf, qa, rows * s->Nq, s);
    put4(jw, "qa", buf, s, s->Nq, s->FA);
    first_of(buf, ka, rows * s->Nk, s);
    put4(jw, "ka", buf, s, s->Nk, s->FA);
    for (size_t r = 0; r < rows; r++) /* r = b·NH + h */
        for (size_t q = 0; q < s->Nq; q++)
            for (size_t k = 0; k < s->Nk; k++)
                for (size_t a = 0; a < s->FA; a++)
                    buf[((r * s->Nq + q) * s->Nk + k) * s->FA + a] = (float)fm_tanh(
                        (double)(qa[(r * s->Nq + q) * s->A + a] + ka[(r * s->Nk + k) * s->A + a]));
    json_tensor(jw, "tanh", buf, 5, shape);
}

/* The member's numbers, buf, mx, sum, qa, ka, row allocated. */
static void put_member(json_writer *jw, const problem *pr, const mha_trace *t, int causal,
                       const ex_sizes *s, float *const *f)
{
    float *buf = f[0], *mx = f[1], *sum = f[2], *qa = f[3], *ka = f[4];
    const int dot = pr->params.score == SCORE_DOT;
    json_object_begin(jw, "explain", JSON_BLOCK);
    json_string(jw, "score", dot ? "dot" : "additive");
    json_uint(jw, "p", s->p);
    json_uint(jw, "first", s->F);
    if (dot)
        json_number(jw, "scale", sqrt((double)s->p));
    json_number(jw, "mask_value", ATTN_MASK_VALUE);
    head_slices(buf, t->Q, s, s->Nq);
    put4(jw, "q", buf, s, s->Nq, s->F);
    head_slices(buf, t->K, s, s->Nk);
    put4(jw, "k", buf, s, s->Nk, s->F);
    head_slices(buf, t->V, s, s->Nk);
    put4(jw, "v", buf, s, s->Nk, s->F);
    put4(jw, "scores", t->scores, s, s->Nq, s->Nk);
    if (dot)
        put4(jw, "scaled", t->scaled, s, s->Nq, s->Nk);
    mask_and_rows(buf, mx, sum, pr, t, causal, s);
    put4(jw, "masked", buf, s, s->Nq, s->Nk);
    put4(jw, "masked_scores", t->masked, s, s->Nq, s->Nk);
    put4(jw, "row_max", mx, s, s->Nq, 0);
    put4(jw, "row_sum_exp", sum, s, s->Nq, 0);
    head_slices(buf, t->concat, s, s->Nq);
    put4(jw, "head_output", buf, s, s->Nq, s->F);
    if (!dot) {
        additive_rows(qa, t->Q, &pr->params.a_W_q, s, s->Nq, f[5]);
        additive_rows(ka, t->K, &pr->params.a_W_k, s, s->Nk, f[5]);
        put_additive(jw, &pr->params, qa, ka, buf, s);
    }
    json_end(jw);
}

/* n = a·b·c·d, or -1 on overflow. */
static int mul4(size_t a, size_t b, size_t c, size_t d, size_t *n)
{
    return size_mul(a, b, n) || size_mul(*n, c, n) || size_mul(*n, d, n) ? -1 : 0;
}

static ex_sizes sizes_of(const problem *pr)
{
    const mha_params *m = &pr->params;
    ex_sizes s = {pr->B, m->num_heads, pr->Nq, pr->Nk, m->num_hiddens, 0, 0, 0, 0};
    s.p = s.H / s.NH;
    s.F = s.p < EXPLAIN_FIRST ? s.p : EXPLAIN_FIRST;
    s.A = m->score == SCORE_ADDITIVE ? m->a_W_q.weight.shape[0] : 0;
    s.FA = s.A < EXPLAIN_FIRST ? s.A : EXPLAIN_FIRST;
    return s;
}

/* The floats of each of the six buffers; -1 on overflow. */
static int buffer_counts(const ex_sizes *s, size_t n[6])
{
    size_t big = 0;
    int failed = 0;
    /* a tensor: the largest of (B, NH, Nq, Nk·max(FA, 1)) and (B, NH, max(Nq, Nk), F) */
    failed |= mul4(s->B, s->NH, s->Nq, s->Nk, &n[0]) || size_mul(n[0], s->FA ? s->FA : 1, &n[0]);
    failed |= mul4(s->B, s->NH, s->Nq > s->Nk ? s->Nq : s->Nk, s->F, &big);
    n[0] = n[0] > big ? n[0] : big;
    failed |= mul4(s->B, s->NH, s->Nq, 1, &n[1]); /* row maxima (B, NH, Nq) */
    n[2] = n[1];                                   /* row sums */
    failed |= mul4(s->B, s->NH, s->Nq, s->A, &n[3]);
    failed |= mul4(s->B, s->NH, s->Nk, s->A, &n[4]);
    n[5] = s->p;
    return failed ? -1 : 0;
}

size_t explain_json_bytes(const problem *pr)
{
    const ex_sizes s = sizes_of(pr);
    size_t n[6], total = 0;
    if (buffer_counts(&s, n))
        return SIZE_MAX;
    for (size_t i = 0; i < 6; i++)
        if (size_add(total, n[i], &total))
            return SIZE_MAX;
    return size_mul(total, sizeof(float), &total) ? SIZE_MAX : total;
}

int explain_json_alloc(explain_buffers *eb, const problem *pr)
{
    const ex_sizes s = sizes_of(pr);
    size_t n[6];
    int failed = buffer_counts(&s, n);
    memset(eb, 0, sizeof *eb);
    for (size_t i = 0; i < 6 && !failed; i++)
        failed |= n[i] && (eb->f[i] = float_alloc(n[i])) == NULL;
    if (failed)
        explain_json_free(eb);
    return failed ? -1 : 0;
}

void explain_json_free(explain_buffers *eb)
{
    for (size_t i = 0; i < 6; i++) {
        free(eb->f[i]);
        eb->f[i] = NULL;
    }
}

void explain_json_member(json_writer *jw, const problem *pr, const mha_trace *t, int causal,
                         const explain_buffers *eb)
{
    const ex_sizes s = sizes_of(pr);
    put_member(jw, pr, t, causal, &s, eb->f);
}
