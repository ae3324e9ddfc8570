/* attention.c — d2l's multi-head attention as naive loops (see
 * attention.h for the dimensions B, Nq, Nk, Dq, Dk, Dv, H, NH, p, A).
 * Sums run in double and are rounded to float32 once, saturated to
 * ±FLT_MAX (f32_saturate): every intermediate stays finite.
 *
 * mha_forward's steps are numbered as `--explain` prints them: 1 project,
 * 2 split into heads, 3 scores, 4 scale, 5 mask, 6 softmax, 7 head output,
 * 8 concatenate, 9 output projection. */
#include "attention.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "fmath.h"
#include "rng.h"
#include "i18n.h"

int mha_is_masked(const mha_masks *mask, size_t b, size_t q, size_t k, size_t Nq)
{
    if (mask->causal && k > q)
        return 1;
    if (mask->window) { /* the R keys centred on q, or ending at q (causal) */
        const size_t half = (mask->window - 1) / 2;
        if (mask->causal ? q - k >= mask->window : (k > q ? k - q : q - k) > half)
            return 1;
    }
    if (mask->valid_lens) {
        long len = mask->per_query ? mask->valid_lens[b * Nq + q] : mask->valid_lens[b];
        if ((long)k >= len)
            return 1;
    }
    return 0;
}

int mha_dropout_keep(const mha_dropout *drop, size_t index)
{
    /* p = 1 drops everything; otherwise keep with probability 1 − p */
    return drop->p < 1.0 && rng_uniform_at(drop->seed, index) >= drop->p;
}

/* (±inf scores are read as ±FLT_MAX: the weights are finite and sum to 1
 * whatever the scores; all equal: uniform.) */
void softmax_row(float *x, size_t n)
{
    /* scores saturated to ±FLT_MAX: x − max is then never inf − inf */
    for (size_t k = 0; k < n; k++)
        x[k] = f32_saturate(x[k]);
    /* find the largest score (for numerical stability) */
    double max = x[0];
    for (size_t k = 1; k < n; k++)
        if (x[k] > max)
            max = x[k];
    /* exp and sum */
    double sum = 0.0;
    for (size_t k = 0; k < n; k++) {
        double e = fm_exp((double)x[k] - max);
        x[k] = (float)e;
        sum += e;
    }
    /* normalize; sum >= 1 because the largest term is exp(0) */
    for (size_t k = 0; k < n; k++)
        x[k] = (float)(x[k] / sum);
}

/* Allocate a·b·c floats, or note the failure. */
static float *alloc_floats(size_t a, size_t b, size_t c, int *failed)
{
    size_t n;
    float *p;
    if (size_mul(a, b, &n) || size_mul(n, c, &n) || (p = float_alloc(n)) == NULL) {
        *failed = 1;
        return NULL;
    }
    return p;
}

/* mha_forward's buffers: the trace's when --explain wants to see them,
 * else its own. */
typedef struct mha_buffers {
    float *Q, *K, *V; /* (B, Nq, H), (B, Nk, H), (B, Nk, H) the projections */
    float *concat;    /* (B, Nq, H) the heads' outputs side by side */
    float *qa, *ka;   /* (Nq, A), (Nk, A) additive: W_q' q and W_k' k, one head */
    float *slice;     /* (max(Nq, Nk), p) additive: one head's columns of Q or K */
    float *dropped;   /* (Nk,) training: one row of weights after dropout */
} mha_buffers;

static void buffers_free(mha_buffers *bf, const mha_trace *t)
{
    if (!t->Q)
        free(bf->Q);
    if (!t->K)
        free(bf->K);
    if (!t->V)
        free(bf->V);
    if (!t->concat)
        free(bf->concat);
    free(bf->qa);
    free(bf->ka);
    free(bf->slice);
    free(bf->dropped);
}

static int buffers_alloc(mha_buffers *bf, const mha_trace *t, size_t B, size_t Nq, size_t Nk,
                         size_t H, size_t p, size_t A, int dropout)
{
    int failed = 0;
    bf->Q = t->Q ? t->Q : alloc_floats(B, Nq, H, &failed);
    bf->K = t->K ? t->K : alloc_floats(B, Nk, H, &failed);
    bf->V = t->V ? t->V : alloc_floats(B, Nk, H, &failed);
    bf->concat = t->concat ? t->concat : alloc_floats(B, Nq, H, &failed);
    bf->qa = A ? alloc_floats(Nq, A, 1, &failed) : NULL;
    bf->ka = A ? alloc_floats(Nk, A, 1, &failed) : NULL;
    bf->slice = A ? alloc_floats(Nq > Nk ? Nq : Nk, p, 1, &failed) : NULL;
    bf->dropped = dropout ? alloc_floats(Nk, 1, 1, &failed) : NULL;
    return failed ? -1 : 0;
}

/* Additive scoring's per-head projections: qa (Nq, A) = Q_h · W_q'ᵀ and
 * ka (Nk, A) = K_h · W_k'ᵀ, Q_h and K_h being columns col … col+p−1 of one
 * example's Q (Nq, H) and K (Nk, H). */
static void additive_project(mha_buffers *bf, const mha_params *m, size_t b, size_t col, size_t Nq,
                             size_t Nk)
{
    const size_t H = m->num_hiddens, p = H / m->num_heads;
    for (size_t q = 0; q < Nq; q++)
        memcpy(bf->slice + q * p, bf->Q + (b * Nq + q) * H + col, p * sizeof(float));
    linear_forward(bf->qa, bf->slice, Nq, &m->a_W_q);
    for (size_t k = 0; k < Nk; k++)
        memcpy(bf->slice + k * p, bf->K + (b * Nk + k) * H + col, p * sizeof(float));
    linear_forward(bf->ka, bf->slice, Nk, &m->a_W_k);
}

/* One raw score: q_h · k_h (dot), or w_v · tanh(qa + ka) (additive, where
 * qa (A,) and ka (A,) are the query's and the key's rows). */
static double score_one(const mha_params *m, const float *q_h, const float *k_h, size_t p,
                        const float *qa, const float *ka, size_t A)
{
    double s = 0.0;
    if (m->score == SCORE_DOT) {
        for (size_t c = 0; c < p; c++)
            s += (double)q_h[c] * k_h[c];
    } else {
        for (size_t a = 0; a < A; a++)
            s += (double)m->a_w_v.weight.data[a] * fm_tanh((double)(qa[a] + ka[a]));
    }
    return s;
}

/* --explain: a score before and after the scale, at flat index i of
 * (B, NH, Nq, Nk). */
static void trace_score(const mha_trace *t, size_t i, double raw, float scaled)
{
    if (t->scores)
        t->scores[i] = f32_saturate(raw);
    if (t->scaled)
        t->scaled[i] = scaled;
}

/* Step 5 for the row of query q of example b: masked keys of att (Nk,)
 * get −1e6; --explain keeps the row at flat index row. */
static void mask_row(float *att, const mha_trace *t, size_t row, const mha_masks *mask, size_t b,
                     size_t q, size_t Nq, size_t Nk)
{
    for (size_t k = 0; k < Nk; k++)
        if (mha_is_masked(mask, b, q, k, Nq))
            att[k] = ATTN_MASK_VALUE;
    if (t->masked)
        memcpy(t->masked + row, att, Nk * sizeof(float));
}

/* Training only: the weights w (Nk,) of the row at flat index row, each
 * zeroed with probability p, the kept ones scaled by 1/(1−p), into
 * dropped (Nk,). */
static const float *dropout_row(float *dropped, const float *w, size_t Nk, size_t row,
                                const mha_dropout *drop)
{
    for (size_t k = 0; k < Nk; k++)
        dropped[k] = mha_dropout_keep(drop, row + k) ? (float)(w[k] / (1.0 - drop->p)) : 0.0f;
    return dropped;
}

int mha_forward(float *out, float *weights, mha_trace *trace, const float *queries,
                const float *keys, const float *values, size_t B, size_t Nq, size_t Nk,
                const mha_params *m, const mha_masks *mask, const mha_dropout *drop, char *err,
                size_t errlen)
{
    const size_t H = m->num_hiddens, NH = m->num_heads, p = H / NH;
    const size_t A = m->score == SCORE_ADDITIVE ? m->a_W_q.weight.shape[0] : 0;
    const double scale = 1.0 / sqrt((double)p); /* dot scoring's 1/sqrt(p) */
    const int dropout = drop && drop->p > 0;
    const mha_trace none = {0}, *t = trace ? trace : &none;
    mha_buffers bf;

    if (buffers_alloc(&bf, t, B, Nq, Nk, H, p, A, dropout)) {
        buffers_free(&bf, t);
        snprintf(err, errlen, "%s", _("out of memory for the attention buffers"));
        return -1;
    }
    /* 1. project: Q = queries·W_qᵀ, K = keys·W_kᵀ, V = values·W_vᵀ */
    linear_forward(bf.Q, queries, B * Nq, &m->W_q);
    linear_forward(bf.K, keys, B * Nk, &m->W_k);
    linear_forward(bf.V, values, B * Nk, &m->W_v);
    for (size_t b = 0; b < B; b++) {
        for (size_t h = 0; h < NH; h++) {
            /* 2. split into heads: head h owns columns h·p … h·p+p−1 */
            const size_t col = h * p;
            if (A)
                additive_project(&bf, m, b, col, Nq, Nk);
            for (size_t q = 0; q < Nq; q++) {
                const size_t row = ((b * NH + h) * Nq + q) * Nk;  /* offset of (b, h, q, 0) */
                const float *q_h = bf.Q + (b * Nq + q) * H + col; /* (p,) */
                float *att = weights + row; /* (Nk,) this query's scores, then weights */
                /* 3. scores against every key, 4. scaled by 1/sqrt(p) (dot only) */
                for (size_t k = 0; k < Nk; k++) {
                    const float *k_h = bf.K + (b * Nk + k) * H + col; /* (p,) */
                    double s = score_one(m, q_h, k_h, p, A ? bf.qa + q * A : NULL,
                                         A ? bf.ka + k * A : NULL, A);
                    att[k] = f32_saturate(m->score == SCORE_DOT ? s * scale : s);
                    trace_score(t, row + k, s, att[k]);
                }
                /* 5. mask: keys beyond valid_len (or after q, causal) get −1e6 */
                mask_row(att, t, row, mask, b, q, Nq, Nk);
                /* 6. softmax over the keys (training: then dropout) */
                softmax_row(att, Nk);
                const float *w = dropout ? dropout_row(bf.dropped, att, Nk, row, drop) : att;
                /* 7. head output: the weighted sum of the values, Σ_k w_k v_h[k]
                 *    (a head switched off: zeros, as if cut from the concat) */
                float *o_h = bf.concat + (b * Nq + q) * H + col; /* (p,) 8. into concat */
                if (m->heads_on && !m->heads_on[h]) {
                    memset(o_h, 0, p * sizeof *o_h);
                    continue;
                }
                for (size_t c = 0; c < p; c++) {
                    double sum = 0.0;
                    for (size_t k = 0; k < Nk; k++) {
                        const float *v_h = bf.V + (b * Nk + k) * H + col; /* (p,) */
                        sum += (double)w[k] * v_h[c];
                    }
                    o_h[c] = f32_saturate(sum);
                }
            }
        }
    }
    /* 9. output = concat(head_1 … head_NH) · W_oᵀ */
    linear_forward(out, bf.concat, B * Nq, &m->W_o);
    buffers_free(&bf, t);
    return 0;
}

double mha_forward_macs(size_t B, size_t Nq, size_t Nk, size_t Dq, size_t Dk, size_t Dv, size_t H)
{
    const double b = (double)B, nq = (double)Nq, nk = (double)Nk, h = (double)H;
    return b * (nq * (double)Dq * h + nk * (double)Dk * h + nk * (double)Dv * h +
                nq * h * h)         /* Q, K, V, W_o */
           + 2.0 * b * nq * nk * h; /* scores and weights·V, all heads */
}

double mha_cosine(const float *x, const float *y, size_t n)
{
    double xy = 0, xx = 0, yy = 0;
    for (size_t i = 0; i < n; i++) {
        xy += (double)x[i] * y[i];
        xx += (double)x[i] * x[i];
        yy += (double)y[i] * y[i];
    }
    return xx > 0 && yy > 0 ? xy / sqrt(xx * yy) : 0.0;
}

/* ---- the online softmax, block by block (see attention.h) ---------------- */

int mha_online_alloc(mha_online *r, size_t Nk, size_t p, size_t block)
{
    size_t rows, nscores, nrows, nacc, nout;
    memset(r, 0, sizeof *r);
    if (!block || size_add(ceil_div(Nk, block), 1, &rows) ||
        size_mul(Nk, sizeof(double), &nscores) || size_mul(rows, sizeof(double), &nrows) ||
        size_mul(rows * sizeof(double), p, &nacc) || size_mul(p, sizeof(double), &nout))
        return -1;
    r->block = block;
    r->nblocks = rows - 1;
    r->p = p;
    r->scores = malloc(nscores ? nscores : 1);
    r->block_max = malloc(nrows);
    r->block_sum = malloc(nrows);
    r->rescale = malloc(nrows);
    r->m = malloc(nrows);
    r->l = malloc(nrows);
    r->acc = malloc(nacc ? nacc : 1);
    r->out = malloc(nout ? nout : 1);
    if (!r->scores || !r->block_max || !r->block_sum || !r->rescale || !r->m || !r->l || !r->acc ||
        !r->out) {
        mha_online_free(r);
        return -1;
    }
    return 0;
}

void mha_online_free(mha_online *r)
{
    FREE_EACH(r->scores, r->block_max, r->block_sum, r->rescale, r->m, r->l, r->acc, r->out);
    memset(r, 0, sizeof *r);
}

void mha_online_row(mha_online *r, const float *q_h, const float *K_h, const float *V_h,
                     size_t ld, size_t Nk, const mha_masks *mask, size_t b, size_t q, size_t Nq)
{
    const size_t p = r->p;
    const double scale = 1.0 / sqrt((double)p);
    r->m[0] = -INFINITY;
    r->l[0] = 0.0;
    for (size_t c = 0; c < p; c++)
        r->acc[c] = 0.0;
    for (size_t j = 0; j < r->nblocks; j++) {
        const size_t k0 = j * r->block, n = k0 + r->block < Nk ? r->block : Nk - k0;
        const double *s = r->scores + k0; /* (n,) this block's scores */
        /* 1. the block's scores, scaled and masked, and their maximum */
        double bmax = -INFINITY;
        for (size_t k = k0; k < k0 + n; k++) {
            const float *k_h = K_h + k * ld; /* (p,) */
            double dot = 0.0;
            for (size_t c = 0; c < p; c++)
                dot += (double)q_h[c] * k_h[c];
            r->scores[k] = mha_is_masked(mask, b, q, k, Nq) ? ATTN_MASK_VALUE : dot * scale;
            bmax = r->scores[k] > bmax ? r->scores[k] : bmax;
        }
        /* 2. the new running maximum, and the factor that rescales the old terms */
        const double m_old = r->m[j], m_new = bmax > m_old ? bmax : m_old;
        const double rescale = m_old == -INFINITY ? 0.0 : fm_exp(m_old - m_new);
        /* 3. the block's terms e^(s − m_new), summed */
        double bsum = 0.0;
        for (size_t k = 0; k < n; k++)
            bsum += fm_exp(s[k] - m_new);
        /* 4. the running sum and output: the old ones rescaled, this block's added */
        const double *acc_old = r->acc + j * p; /* (p,) */
        double *acc_new = r->acc + (j + 1) * p; /* (p,) */
        for (size_t c = 0; c < p; c++) {
            double add = 0.0;
            for (size_t k = 0; k < n; k++)
                add += fm_exp(s[k] - m_new) * V_h[(k0 + k) * ld + c];
            acc_new[c] = acc_old[c] * rescale + add;
        }
        r->block_max[j] = bmax;
        r->block_sum[j] = bsum;
        r->rescale[j] = rescale;
        r->m[j + 1] = m_new;
        r->l[j + 1] = r->l[j] * rescale + bsum;
    }
    /* 5. the head output: acc / l */
    for (size_t c = 0; c < p; c++)
        r->out[c] = r->acc[r->nblocks * p + c] / r->l[r->nblocks];
}

double mha_online_diff(const mha_online *r, const float *w, const float *V_h, size_t ld,
                        size_t Nk)
{
    double diff = 0.0;
    for (size_t c = 0; c < r->p; c++) {
        double ref = 0.0; /* Σ_k w_k v_h[k][c] */
        for (size_t k = 0; k < Nk; k++)
            ref += (double)w[k] * V_h[k * ld + c];
        diff = fabs(r->out[c] - ref) > diff ? fabs(r->out[c] - ref) : diff;
    }
    return diff;
}
