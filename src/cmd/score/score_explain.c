/* score_explain.c — the "explain" member of `attn score --explain --json`
 * (see score_explain.h): a run's numbers, cell by cell. */
#include "score_explain.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "fmath.h"

/* The sizes of one run: F the first entries of each vector. */
typedef struct sx_sizes {
    size_t B, Nq, Nk, Fq, Fk, Fv, FA;
} sx_sizes;

static size_t first_of(size_t n)
{
    return n < SCORE_EXPLAIN_FIRST ? n : SCORE_EXPLAIN_FIRST;
}

static sx_sizes sizes_of(const score_run *r)
{
    const sx_sizes s = {r->B, r->Nq, r->Nk, first_of(r->Dq), first_of(r->Dk), first_of(r->Dv),
                        r->kind == KIND_ADDITIVE ? first_of(r->h) : 0};
    return s;
}

/* The first F of each row of D numbers of X (rows, D), into buf (rows, F). */
static void firsts(float *buf, const float *X, size_t rows, size_t D, size_t F)
{
    for (size_t i = 0; i < rows; i++)
        memcpy(buf + i * F, X + i * D, F * sizeof(float));
}

/* One member (B, rows, cols), or (B, rows) with cols 0. */
static void put3(json_writer *jw, const char *key, const float *buf, const sx_sizes *s,
                 size_t rows, size_t cols)
{
    const size_t shape[3] = {s->B, rows, cols};
    json_tensor(jw, key, buf, cols ? 3 : 2, shape);
}

/* The first F of each row of X (B, rows, D) as a member. */
static void put_firsts(json_writer *jw, const char *key, float *buf, const float *X,
                       const sx_sizes *s, size_t rows, size_t D, size_t F)
{
    firsts(buf, X, s->B * rows, D, F);
    put3(jw, key, buf, s, rows, F);
}

/* The sum of each of the rows of D numbers of X (rows, D), into buf. */
static void row_sums(float *buf, const float *X, size_t rows, size_t D)
{
    for (size_t i = 0; i < rows; i++) {
        double sum = 0.0;
        for (size_t c = 0; c < D; c++)
            sum += X[i * D + c];
        buf[i] = f32_saturate(sum);
    }
}

/* dot: q·k of every cell before the scaling, then the scale and the
 * scaled scores the run computed. */
static void put_dot(json_writer *jw, const score_run *r, float *buf, const sx_sizes *s)
{
    const size_t d = r->Dq;
    for (size_t b = 0; b < s->B; b++)
        for (size_t q = 0; q < s->Nq; q++)
            for (size_t k = 0; k < s->Nk; k++) {
                const float *qv = r->queries.data + (b * s->Nq + q) * d;
                const float *kv = r->keys.data + (b * s->Nk + k) * d;
                double dot = 0.0;
                for (size_t c = 0; c < d; c++)
                    dot += (double)qv[c] * kv[c];
                buf[(b * s->Nq + q) * s->Nk + k] = f32_saturate(dot);
            }
    put3(jw, "scores", buf, s, s->Nq, s->Nk);
    json_number(jw, "scale", sqrt((double)d));
    put3(jw, "scaled", r->scores, s, s->Nq, s->Nk);
}

/* additive: w_v, W_q q, W_k k and tanh(W_q q + W_k k), their first FA
 * hiddens, then the scores. */
static void put_additive(json_writer *jw, const score_run *r, float *buf, const sx_sizes *s)
{
    const size_t h = r->h, FA = s->FA, shape[4] = {s->B, s->Nq, s->Nk, FA};
    json_uint(jw, "hiddens", h);
    json_uint(jw, "first_hiddens", FA);
    json_tensor(jw, "w_v", r->m.w_v.weight.data, 1, &FA);
    put_firsts(jw, "qa", buf, r->qh, s, s->Nq, h, FA);
    put_firsts(jw, "ka", buf, r->kh, s, s->Nk, h, FA);
    for (size_t b = 0; b < s->B; b++)
        for (size_t q = 0; q < s->Nq; q++)
            for (size_t k = 0; k < s->Nk; k++)
                for (size_t a = 0; a < FA; a++) {
                    const float x = r->qh[(b * s->Nq + q) * h + a] + r->kh[(b * s->Nk + k) * h + a];
                    buf[((b * s->Nq + q) * s->Nk + k) * FA + a] = (float)fm_tanh((double)x);
                }
    json_tensor(jw, "tanh", buf, 4, shape);
    put3(jw, "scores", r->scores, s, s->Nq, s->Nk);
}

/* The scoring function's parts and its scores a(q, k). */
static void put_scoring(json_writer *jw, const score_run *r, float *buf, const sx_sizes *s)
{
    if (r->kind == KIND_DOT) {
        put_dot(jw, r, buf, s);
        return;
    }
    if (r->kind == KIND_ADDITIVE) {
        put_additive(jw, r, buf, s);
        return;
    }
    if (r->kind == KIND_GENERAL) {
        put_firsts(jw, "qw", buf, r->qw, s, s->Nq, r->Dk, s->Fk);
    } else {
        row_sums(buf, r->queries.data, s->B * s->Nq, r->Dq);
        put3(jw, "q_sum", buf, s, s->Nq, 0);
        row_sums(buf, r->keys.data, s->B * s->Nk, r->Dk);
        put3(jw, "k_sum", buf, s, s->Nk, 0);
    }
    put3(jw, "scores", r->scores, s, s->Nq, s->Nk);
}

/* The mask of every cell (1 masked, 0 not) into buf (B, Nq, Nk), and each
 * row's max and Σ e^(s − max) of the masked scores (as softmax_row
 * computes them, in double) into mx and sum (B, Nq). */
static void mask_and_rows(float *buf, float *mx, float *sum, const score_run *r,
                          const sx_sizes *s)
{
    const mha_masks mask = {r->lens, r->vl_ndim == 2, 0, 0};
    for (size_t b = 0; b < s->B; b++)
        for (size_t q = 0; q < s->Nq; q++) {
            const size_t i = b * s->Nq + q;           /* the row */
            const float *row = r->masked + i * s->Nk; /* (Nk,) */
            double m = row[0], e = 0.0;
            for (size_t k = 0; k < s->Nk; k++) {
                buf[i * s->Nk + k] = (float)mha_is_masked(&mask, b, q, k, s->Nq);
                if (row[k] > m)
                    m = row[k];
            }
            for (size_t k = 0; k < s->Nk; k++)
                e += fm_exp((double)row[k] - m);
            mx[i] = (float)m;
            sum[i] = (float)e;
        }
}

void score_explain_member(json_writer *jw, const score_run *r, const char *name,
                          const score_explain_buffers *eb)
{
    const sx_sizes s = sizes_of(r);
    float *buf = eb->f[0], *mx = eb->f[1], *sum = eb->f[2];
    json_object_begin(jw, "explain", JSON_BLOCK);
    json_string(jw, "score", name);
    json_uint(jw, "query_size", r->Dq);
    json_uint(jw, "key_size", r->Dk);
    json_uint(jw, "value_size", r->Dv);
    json_uint(jw, "first_q", s.Fq);
    json_uint(jw, "first_k", s.Fk);
    json_uint(jw, "first_v", s.Fv);
    json_number(jw, "mask_value", ATTN_MASK_VALUE);
    put_firsts(jw, "q", buf, r->queries.data, &s, s.Nq, r->Dq, s.Fq);
    put_firsts(jw, "k", buf, r->keys.data, &s, s.Nk, r->Dk, s.Fk);
    put_firsts(jw, "v", buf, r->values.data, &s, s.Nk, r->Dv, s.Fv);
    put_scoring(jw, r, buf, &s);
    mask_and_rows(buf, mx, sum, r, &s);
    put3(jw, "masked", buf, &s, s.Nq, s.Nk);
    put3(jw, "masked_scores", r->masked, &s, s.Nq, s.Nk);
    put3(jw, "row_max", mx, &s, s.Nq, 0);
    put3(jw, "row_sum_exp", sum, &s, s.Nq, 0);
    put_firsts(jw, "output", buf, r->output, &s, s.Nq, r->Dv, s.Fv);
    json_end(jw);
}

/* The floats of the three buffers for run r; -1 on overflow. The tensor:
 * the largest of (B, Nq, Nk, max(FA, 1)) and (B, max(Nq, Nk), 8), which
 * holds every first-entries member and every sum. */
static int buffer_counts(const score_run *r, size_t n[3])
{
    const sx_sizes s = sizes_of(r);
    size_t big = 0;
    int failed = size_mul(s.B, s.Nq, &n[1]) || size_mul(n[1], s.Nk, &n[0]) ||
                 size_mul(n[0], s.FA ? s.FA : 1, &n[0]) ||
                 size_mul(s.B, s.Nq > s.Nk ? s.Nq : s.Nk, &big) ||
                 size_mul(big, SCORE_EXPLAIN_FIRST, &big);
    n[0] = n[0] > big ? n[0] : big;
    n[2] = n[1];
    return failed ? -1 : 0;
}

/* The largest of each buffer's count over the runs; -1 on overflow. */
static int max_counts(const score_run *runs, size_t nruns, size_t n[3])
{
    n[0] = n[1] = n[2] = 0;
    for (size_t i = 0; i < nruns; i++) {
        size_t m[3];
        if (buffer_counts(&runs[i], m))
            return -1;
        for (size_t j = 0; j < 3; j++)
            n[j] = m[j] > n[j] ? m[j] : n[j];
    }
    return 0;
}

size_t score_explain_bytes(const score_run *runs, size_t nruns)
{
    size_t n[3], total = 0;
    if (max_counts(runs, nruns, n))
        return SIZE_MAX;
    for (size_t i = 0; i < 3; i++)
        if (size_add(total, n[i], &total))
            return SIZE_MAX;
    return size_mul(total, sizeof(float), &total) ? SIZE_MAX : total;
}

int score_explain_alloc(score_explain_buffers *eb, const score_run *runs, size_t nruns)
{
    size_t n[3];
    int failed = max_counts(runs, nruns, n);
    memset(eb, 0, sizeof *eb);
    for (size_t i = 0; i < 3 && !failed; i++)
        failed |= (eb->f[i] = float_alloc(n[i] ? n[i] : 1)) == NULL;
    if (failed)
        score_explain_free(eb);
    return failed ? -1 : 0;
}

void score_explain_free(score_explain_buffers *eb)
{
    for (size_t i = 0; i < 3; i++) {
        free(eb->f[i]);
        eb->f[i] = NULL;
    }
}
