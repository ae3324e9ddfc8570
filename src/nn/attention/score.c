/* score.c — d2l §10.3's scoring functions as naive loops (see score.h for
 * the dimensions B, Nq, Nk, Dq, Dk, Dv, h). Each function is one line of
 * the section's code:
 *   masked_softmax          score_masked_softmax  (score_mask + softmax_row)
 *   AdditiveAttention       score_additive_scores, then the two below
 *   DotProductAttention     score_dot, then the two below
 *   the exercises' scores   score_general_scores (qᵀ W k), score_sum (Σ q_i + k_i)
 *   torch.bmm(weights, V)   score_weighted_sum */
#include "score.h"

#include <math.h>

#include "checked.h"
#include "fmath.h"
#include "rng.h"

/* One weight (out, in) uniform in ±1/sqrt(in), as nn.Linear draws it. */
static int linear_uniform(linear *l, size_t out, size_t in, rng *r, char *err, size_t errlen)
{
    const double bound = 1.0 / sqrt((double)in);
    if (tensor_alloc2(&l->weight, out, in, err, errlen))
        return -1;
    for (size_t i = 0; i < l->weight.size; i++)
        l->weight.data[i] = (float)(bound * (2.0 * rng_uniform(r) - 1.0));
    return 0;
}

int score_additive_init(score_additive *m, size_t Dq, size_t Dk, size_t h, rng *r, char *err,
                        size_t errlen)
{
    /* d2l's __init__ creates W_k, then W_q, then w_v */
    return linear_uniform(&m->W_k, h, Dk, r, err, errlen) ||
                   linear_uniform(&m->W_q, h, Dq, r, err, errlen) ||
                   linear_uniform(&m->w_v, 1, h, r, err, errlen)
               ? -1
               : 0;
}

void score_additive_free(score_additive *m)
{
    linear_free(&m->W_q);
    linear_free(&m->W_k);
    linear_free(&m->w_v);
}

int score_general_init(score_general *m, size_t Dq, size_t Dk, rng *r, char *err,
                       size_t errlen)
{
    /* nn.Linear(Dq, Dk, bias=False): weight (Dk, Dq), bound 1/sqrt(Dq) */
    return linear_uniform(&m->W, Dk, Dq, r, err, errlen);
}

void score_general_free(score_general *m)
{
    linear_free(&m->W);
}

void score_mask(float *X, size_t B, size_t Nq, size_t Nk, const mha_masks *mask)
{
    for (size_t b = 0; b < B; b++)
        for (size_t q = 0; q < Nq; q++) {
            float *row = X + (b * Nq + q) * Nk; /* (Nk,) */
            /* keys at k >= valid_len get −1e6: exp(−1e6 − max) is 0 */
            for (size_t k = 0; k < Nk; k++)
                if (mha_is_masked(mask, b, q, k, Nq))
                    row[k] = ATTN_MASK_VALUE;
        }
}

void score_masked_softmax(float *X, size_t B, size_t Nq, size_t Nk, const mha_masks *mask)
{
    /* 1. mask: the keys that are not there */
    score_mask(X, B, Nq, Nk, mask);
    /* 2. softmax over the keys of each query */
    for (size_t r = 0; r < B * Nq; r++)
        softmax_row(X + r * Nk, Nk);
}

/* scores (B, Nq, Nk) = scale · (q · k) for every query q (B, Nq, d) and
 * key k (B, Nk, d) of the same batch: the dot product of score_dot and of
 * score_general_scores (there on W(q)). */
static void dot_scores(float *scores, const float *queries, const float *keys, size_t B,
                       size_t Nq, size_t Nk, size_t d, double scale)
{
    for (size_t b = 0; b < B; b++)
        for (size_t q = 0; q < Nq; q++) {
            const float *qv = queries + (b * Nq + q) * d; /* (d,) */
            for (size_t k = 0; k < Nk; k++) {
                const float *kv = keys + (b * Nk + k) * d; /* (d,) */
                /* q · k, then · scale */
                double s = 0.0;
                for (size_t c = 0; c < d; c++)
                    s += (double)qv[c] * kv[c];
                scores[(b * Nq + q) * Nk + k] = f32_saturate(s * scale);
            }
        }
}

void score_dot(float *scores, const float *queries, const float *keys, size_t B, size_t Nq,
               size_t Nk, size_t d)
{
    /* score = q · k / sqrt(d); sqrt is correctly rounded (IEEE) */
    dot_scores(scores, queries, keys, B, Nq, Nk, d, 1.0 / sqrt((double)d));
}

void score_additive_scores(float *scores, float *qh, float *kh, const float *queries,
                           const float *keys, size_t B, size_t Nq, size_t Nk,
                           const score_additive *m)
{
    const size_t h = m->W_q.weight.shape[0];
    const float *w_v = m->w_v.weight.data; /* (h,) */
    /* 1. project: queries · W_qᵀ (B, Nq, h), keys · W_kᵀ (B, Nk, h) */
    linear_forward(qh, queries, B * Nq, &m->W_q);
    linear_forward(kh, keys, B * Nk, &m->W_k);
    for (size_t b = 0; b < B; b++)
        for (size_t q = 0; q < Nq; q++)
            for (size_t k = 0; k < Nk; k++) {
                const float *qa = qh + (b * Nq + q) * h, *ka = kh + (b * Nk + k) * h;
                /* 2. features = tanh(W_q q + W_k k), 3. score = w_v · features */
                double s = 0.0;
                for (size_t a = 0; a < h; a++)
                    s += (double)w_v[a] * fm_tanh((double)(qa[a] + ka[a]));
                scores[(b * Nq + q) * Nk + k] = f32_saturate(s);
            }
}

void score_general_scores(float *scores, float *qw, const float *queries, const float *keys,
                          size_t B, size_t Nq, size_t Nk, const score_general *m)
{
    const size_t Dk = m->W.weight.shape[0];
    /* 1. W(q) = q · weightᵀ = qᵀ W: each query as a key-sized vector (B, Nq, Dk) */
    linear_forward(qw, queries, B * Nq, &m->W);
    /* 2. score = W(q) · k = qᵀ W k (no scaling: · 1 is exact) */
    dot_scores(scores, qw, keys, B, Nq, Nk, Dk, 1.0);
}

void score_sum(float *scores, const float *queries, const float *keys, size_t B, size_t Nq,
               size_t Nk, size_t d)
{
    for (size_t b = 0; b < B; b++)
        for (size_t q = 0; q < Nq; q++) {
            const float *qv = queries + (b * Nq + q) * d; /* (d,) */
            for (size_t k = 0; k < Nk; k++) {
                const float *kv = keys + (b * Nk + k) * d; /* (d,) */
                /* score = Σ_i (q_i + k_i), term by term as the formula reads */
                double s = 0.0;
                for (size_t i = 0; i < d; i++)
                    s += (double)qv[i] + (double)kv[i];
                scores[(b * Nq + q) * Nk + k] = f32_saturate(s);
            }
        }
}

void score_weighted_sum(float *out, const float *weights, const float *values, size_t B,
                        size_t Nq, size_t Nk, size_t Dv)
{
    for (size_t b = 0; b < B; b++)
        for (size_t q = 0; q < Nq; q++) {
            const float *w = weights + (b * Nq + q) * Nk; /* (Nk,) */
            float *o = out + (b * Nq + q) * Dv;           /* (Dv,) */
            /* o = Σ_k w_k v_k */
            for (size_t c = 0; c < Dv; c++) {
                double sum = 0.0;
                for (size_t k = 0; k < Nk; k++)
                    sum += (double)w[k] * values[(b * Nk + k) * Dv + c];
                o[c] = f32_saturate(sum);
            }
        }
}
