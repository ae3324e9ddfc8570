/* attention.c — d2l's multi-head attention as naive loops (see
 * attention.h for the dimensions B, Nq, Nk, Dq, Dk, Dv, H, NH, p, A).
 * Sums run in double and are rounded to float32 once, saturated to
 * ±FLT_MAX (attn_to_float): every intermediate stays finite. */
#include "attention.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "rng.h"

/* A double rounded to float32, saturated to ±FLT_MAX where the float would
 * be ±inf: inputs near float32's limits give huge but finite projections
 * and scores, and a non-finite score never reaches a softmax (inf − inf is
 * NaN). (The same in attention_fast.c.) */
static inline float attn_to_float(double x)
{
    return x > FLT_MAX ? FLT_MAX : x < -FLT_MAX ? -FLT_MAX : (float)x;
}

void linear_forward(float *y, const float *x, size_t n, const linear *l)
{
    size_t out = l->weight.shape[0], in = l->weight.shape[1], r, o, i;
    for (r = 0; r < n; r++) {
        const float *xr = x + r * in; /* (in,) one input row */
        for (o = 0; o < out; o++) {
            const float *w = l->weight.data + o * in; /* (in,) row o of weight */
            double sum = l->bias.data ? l->bias.data[o] : 0.0;
            for (i = 0; i < in; i++)
                sum += (double)xr[i] * w[i];
            y[r * out + o] = attn_to_float(sum);
        }
    }
}

int mha_is_masked(const mha_masks *mask, size_t b, size_t q, size_t k, size_t Nq)
{
    if (mask->causal && k > q)
        return 1;
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
    double max, sum = 0.0;
    size_t k;
    /* scores saturated to ±FLT_MAX: x − max is then never inf − inf */
    for (k = 0; k < n; k++)
        x[k] = attn_to_float(x[k]);
    /* find the largest score (for numerical stability) */
    max = x[0];
    for (k = 1; k < n; k++)
        if (x[k] > max)
            max = x[k];
    /* exp and sum */
    for (k = 0; k < n; k++) {
        double e = exp((double)x[k] - max);
        x[k] = (float)e;
        sum += e;
    }
    /* normalize; sum >= 1 because the largest term is exp(0) */
    for (k = 0; k < n; k++)
        x[k] = (float)(x[k] / sum);
}

/* Allocate n floats, or note the failure. */
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

int mha_forward(float *out, float *weights, mha_trace *trace, const float *queries,
                const float *keys, const float *values, size_t B, size_t Nq, size_t Nk,
                const mha_params *m, const mha_masks *mask, const mha_dropout *drop,
                char *err, size_t errlen)
{
    const size_t H = m->num_hiddens, NH = m->num_heads, p = H / NH;
    const size_t A = m->score == SCORE_ADDITIVE ? m->a_W_q.weight.shape[0] : 0;
    const double scale = 1.0 / sqrt((double)p);
    mha_trace none = {0};
    int failed = 0, status = -1;
    size_t b, h, q, k, c, a;

    /* buffers, the caller's when --explain wants to see them */
    if (!trace)
        trace = &none;
    float *Q = trace->Q ? trace->Q : alloc_floats(B, Nq, H, &failed);           /* (B, Nq, H) */
    float *K = trace->K ? trace->K : alloc_floats(B, Nk, H, &failed);           /* (B, Nk, H) */
    float *V = trace->V ? trace->V : alloc_floats(B, Nk, H, &failed);           /* (B, Nk, H) */
    float *concat = trace->concat ? trace->concat : alloc_floats(B, Nq, H, &failed); /* (B, Nq, H) */
    float *qh = alloc_floats(1, p, 1, &failed);              /* (p,) one query's head slice */
    float *qa = A ? alloc_floats(Nq, A, 1, &failed) : NULL;  /* (Nq, A) W_q' q, one head */
    float *ka = A ? alloc_floats(Nk, A, 1, &failed) : NULL;  /* (Nk, A) W_k' k, one head */
    float *slice = A ? alloc_floats(Nq > Nk ? Nq : Nk, p, 1, &failed) : NULL; /* (N, p) */
    float *dropped = drop && drop->p > 0 ? alloc_floats(Nk, 1, 1, &failed) : NULL; /* (Nk,) */
    if (failed) {
        snprintf(err, errlen, "out of memory for the attention buffers");
        goto done;
    }

    /* 1. project: Q = queries·W_qᵀ, K = keys·W_kᵀ, V = values·W_vᵀ */
    linear_forward(Q, queries, B * Nq, &m->W_q);
    linear_forward(K, keys, B * Nk, &m->W_k);
    linear_forward(V, values, B * Nk, &m->W_v);

    for (b = 0; b < B; b++) {
        for (h = 0; h < NH; h++) {
            const size_t col = h * p; /* head h owns columns col … col+p−1 */

            if (m->score == SCORE_ADDITIVE) {
                /* additive: qa = Q_h·W_q'ᵀ (Nq, A), ka = K_h·W_k'ᵀ (Nk, A) */
                for (q = 0; q < Nq; q++)
                    memcpy(slice + q * p, Q + (b * Nq + q) * H + col, p * sizeof(float));
                linear_forward(qa, slice, Nq, &m->a_W_q);
                for (k = 0; k < Nk; k++)
                    memcpy(slice + k * p, K + (b * Nk + k) * H + col, p * sizeof(float));
                linear_forward(ka, slice, Nk, &m->a_W_k);
            }

            for (q = 0; q < Nq; q++) {
                const size_t row = ((b * NH + h) * Nq + q) * Nk; /* offset of (b, h, q, 0) */
                float *w = weights + row; /* (Nk,) this query's scores, then weights */
                const float *vw = w;      /* the weights that multiply V */
                memcpy(qh, Q + (b * Nq + q) * H + col, p * sizeof(float));

                /* 2. scores of this query against every key */
                for (k = 0; k < Nk; k++) {
                    double s = 0.0;
                    if (m->score == SCORE_DOT) {
                        /* Q_h[q] · K_h[k] */
                        const float *kk = K + (b * Nk + k) * H + col;
                        for (c = 0; c < p; c++)
                            s += (double)qh[c] * kk[c];
                        if (trace->scores)
                            trace->scores[row + k] = attn_to_float(s);
                        s *= scale; /* / sqrt(p) */
                    } else {
                        /* w_v · tanh(qa[q] + ka[k]) */
                        for (a = 0; a < A; a++)
                            s += (double)m->a_w_v.weight.data[a] *
                                 tanh((double)(qa[q * A + a] + ka[k * A + a]));
                        if (trace->scores)
                            trace->scores[row + k] = attn_to_float(s);
                    }
                    w[k] = attn_to_float(s); /* never ±inf */
                    if (trace->scaled)
                        trace->scaled[row + k] = w[k];
                }

                /* 3. mask: keys beyond valid_len (or after q, causal) get −1e6 */
                for (k = 0; k < Nk; k++)
                    if (mha_is_masked(mask, b, q, k, Nq))
                        w[k] = ATTN_MASK_VALUE;
                if (trace->masked)
                    memcpy(trace->masked + row, w, Nk * sizeof(float));

                /* 4. softmax over the keys */
                softmax_row(w, Nk);

                /* (training only) dropout on the weights, kept ones scaled by 1/(1−p) */
                if (dropped) {
                    for (k = 0; k < Nk; k++)
                        dropped[k] = mha_dropout_keep(drop, row + k)
                                         ? (float)(w[k] / (1.0 - drop->p))
                                         : 0.0f;
                    vw = dropped;
                }

                /* 5. head output: the weighted sum of the values, Σ_k w_k V_h[k] */
                for (c = 0; c < p; c++) {
                    double sum = 0.0;
                    for (k = 0; k < Nk; k++)
                        sum += (double)vw[k] * V[(b * Nk + k) * H + col + c];
                    concat[(b * Nq + q) * H + col + c] = attn_to_float(sum);
                }
            }
        }
    }

    /* 6. output = concat(heads) · W_oᵀ */
    linear_forward(out, concat, B * Nq, &m->W_o);
    status = 0;
done:
    if (!trace->Q) free(Q);
    if (!trace->K) free(K);
    if (!trace->V) free(V);
    if (!trace->concat) free(concat);
    free(qh);
    free(qa);
    free(ka);
    free(slice);
    free(dropped);
    return status;
}
