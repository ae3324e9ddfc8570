/* fast_layers.c — the float32 loops of a Transformer block (see
 * fast_layers.h), shared by train_fast.c and seq2seq_fast.c. */
#include "fast_layers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"

#include "fmath.h"
#include "lanes.h"

#define LN_EPS 1e-5f

/* ---- buffers ------------------------------------------------------------ */

float *fl_zeros(size_t a, size_t b, size_t c, int *failed)
{
    size_t n;
    float *p;
    if (size_mul(a, b, &n) || size_mul(n, c, &n) || n > ((size_t)-1) / sizeof(float) ||
        (p = calloc(n ? n : 1, sizeof(float))) == NULL) {
        *failed = 1;
        return NULL;
    }
    return p;
}

void fl_transpose(float *dst, const float *src, size_t out, size_t in)
{
    for (size_t o = 0; o < out; o++)
        for (size_t i = 0; i < in; i++)
            dst[i * out + o] = src[o * in + i];
}

/* ---- nn.Linear -------------------------------------------------------- */

/* y (n, out) = x (n, in) · Wt (in, out) + bias: rows of Wt added with
 * weights x[r][i], contiguous in o. (Inlined with constant sizes below, so
 * that a row of y stays in vector registers.) */
static inline void lin_fwd_body(float *restrict y, const float *restrict x, size_t n,
                                const float *restrict Wt, const float *restrict bias, size_t in,
                                size_t out)
{
    size_t r, i, o;
    for (r = 0; r < n; r++) {
        float *yr = y + r * out;
        for (o = 0; o < out; o++)
            yr[o] = bias ? bias[o] : 0.0f;
        for (i = 0; i < in; i++) {
            const float xi = x[r * in + i];
            const float *w = Wt + i * out;
#pragma omp simd
            for (o = 0; o < out; o++)
                yr[o] = fmaf(xi, w[o], yr[o]);
        }
    }
}

/* lin_fwd_body for out = nv·16 (nv a constant once inlined): a row of y
 * is held in nv vector registers while the rows of Wt are added, and
 * stored once. The same fused multiply-adds, in the same order, as
 * lin_fwd_body: the same bits. */
static inline void lin_fwd_lanes(float *restrict y, const float *restrict x, size_t n,
                                 const float *restrict Wt, const float *restrict bias, size_t in,
                                 size_t nv)
{
    const size_t out = nv * V16;
    f32x16 acc[4];
    for (size_t r = 0; r < n; r++) {
        for (size_t v = 0; v < nv; v++)
            acc[v] = bias ? v16_load(bias + v * V16) : v16_splat(0.0f);
        for (size_t i = 0; i < in; i++) {
            const f32x16 xi = v16_splat(x[r * in + i]);
            for (size_t v = 0; v < nv; v++)
                acc[v] = v16_fma(xi, v16_load(Wt + i * out + v * V16), acc[v]);
        }
        for (size_t v = 0; v < nv; v++)
            v16_store(y + r * out + v * V16, acc[v]);
    }
}

void fl_linear_forward(float *y, const float *x, size_t n, const float *Wt, const float *bias,
                       size_t in, size_t out)
{
    if (out == 32)
        lin_fwd_lanes(y, x, n, Wt, bias, in, 2); /* the default d */
    else if (out == 64)
        lin_fwd_lanes(y, x, n, Wt, bias, in, 4); /* the translation FFN's dense1 */
    else if (out == 16)
        lin_fwd_lanes(y, x, n, Wt, bias, in, 1);
    else
        lin_fwd_body(y, x, n, Wt, bias, in, out);
}

/* The backward of lin_fwd_body with W (out, in):
 *   dW (out, in) += dyᵀ · x    a row of dW gathers every row of x
 *   db (out,)    += Σ_r dy     (db may be NULL)
 *   dx (n, in)   += dy · W     a row of dx gathers every row of W (dx may be NULL) */
static inline void lin_bwd_body(float *restrict dx, float *restrict dW, float *restrict db,
                                const float *restrict dy, const float *restrict x, size_t n,
                                const float *restrict W, size_t in, size_t out)
{
    size_t r, i, o;
    for (o = 0; o < out; o++) {
        float *dw = dW + o * in;
        float sb = 0.0f;
        for (r = 0; r < n; r++) {
            const float g = dy[r * out + o];
            const float *xr = x + r * in;
            sb += g;
#pragma omp simd
            for (i = 0; i < in; i++)
                dw[i] = fmaf(g, xr[i], dw[i]);
        }
        if (db)
            db[o] += sb;
    }
    if (dx)
        for (r = 0; r < n; r++) {
            float *dxr = dx + r * in;
            for (o = 0; o < out; o++) {
                const float g = dy[r * out + o];
                const float *w = W + o * in;
#pragma omp simd
                for (i = 0; i < in; i++)
                    dxr[i] = fmaf(g, w[i], dxr[i]);
            }
        }
}

/* lin_bwd_body for in = nv·16: a row of dW, and a row of dx, held in nv
 * vector registers over the sum's terms, in lin_bwd_body's order. */
static inline void lin_bwd_lanes(float *restrict dx, float *restrict dW, float *restrict db,
                                 const float *restrict dy, const float *restrict x, size_t n,
                                 const float *restrict W, size_t nv, size_t out)
{
    const size_t in = nv * V16;
    f32x16 acc[4];
    for (size_t o = 0; o < out; o++) {
        float *dw = dW + o * in;
        float sb = 0.0f;
        for (size_t v = 0; v < nv; v++)
            acc[v] = v16_load(dw + v * V16);
        for (size_t r = 0; r < n; r++) {
            const float g = dy[r * out + o];
            sb += g;
            for (size_t v = 0; v < nv; v++)
                acc[v] = v16_fma(v16_splat(g), v16_load(x + r * in + v * V16), acc[v]);
        }
        for (size_t v = 0; v < nv; v++)
            v16_store(dw + v * V16, acc[v]);
        if (db)
            db[o] += sb;
    }
    if (dx)
        for (size_t r = 0; r < n; r++) {
            for (size_t v = 0; v < nv; v++)
                acc[v] = v16_load(dx + r * in + v * V16);
            for (size_t o = 0; o < out; o++) {
                const f32x16 g = v16_splat(dy[r * out + o]);
                for (size_t v = 0; v < nv; v++)
                    acc[v] = v16_fma(g, v16_load(W + o * in + v * V16), acc[v]);
            }
            for (size_t v = 0; v < nv; v++)
                v16_store(dx + r * in + v * V16, acc[v]);
        }
}

void fl_linear_backward(float *dx, float *dW, float *db, const float *dy, const float *x,
                        size_t n, const float *W, size_t in, size_t out)
{
    if (in == 32)
        lin_bwd_lanes(dx, dW, db, dy, x, n, W, 2, out); /* the default d */
    else if (in == 64)
        lin_bwd_lanes(dx, dW, db, dy, x, n, W, 4, out); /* the translation FFN's dense2 */
    else if (in == 16)
        lin_bwd_lanes(dx, dW, db, dy, x, n, W, 1, out);
    else
        lin_bwd_body(dx, dW, db, dy, x, n, W, in, out);
}


/* ---- multi-head attention ------------------------------------------- */

/* The keys query q of example b sees: 0 … n−1 (fast_layers.h). */
static inline size_t visible(const fl_attention *s, size_t b, size_t q)
{
    size_t n = s->causal && q + 1 < s->Tk ? q + 1 : s->Tk;
    if (s->lens && (size_t)s->lens[b] < n)
        n = (size_t)s->lens[b];
    return n;
}

size_t fl_heads_scratch(const fl_attention *s) { return s->p * s->Tk + s->Tk; }

/* Head h of example b, forward: for every query q, the scores against the
 * keys it sees (K_hᵀ transposed into Ht so that they are p rows added),
 * the softmax into A (0 at masked keys), the weighted sum of the values
 * into O. Inlined with constant Tq, Tk and p for the defaults, when the
 * row of scores (Tk,) and the head output (p,) stay in registers. */
static inline void head_forward(float *restrict O, float *restrict A, float *restrict Ht,
                                const float *Q, const float *K, const float *V, size_t b,
                                size_t h, size_t Tq, size_t Tk, size_t p, const fl_attention *s)
{
    const int dropping = s->drop && s->drop->p > 0;
    const size_t d = s->d, NH = s->NH;
    size_t q, k, i;
    for (k = 0; k < Tk; k++) /* Ht (p, Tk) = K_hᵀ */
        for (i = 0; i < p; i++)
            Ht[i * Tk + k] = K[(b * Tk + k) * d + h * p + i];
    for (q = 0; q < Tq; q++) {
        const size_t row = ((b * NH + h) * Tq + q) * Tk, n = visible(s, b, q);
        const float *restrict qq = Q + (b * Tq + q) * d + h * p;
        float *restrict a = A + row, *restrict o = O + (b * Tq + q) * d + h * p;
        float max, sum;
        /* scores Q_h[q] · K_h[k] / √p for the keys it sees */
        for (k = 0; k < Tk; k++)
            a[k] = 0.0f;
        for (i = 0; i < p; i++) {
            const float qi = qq[i], *kt = Ht + i * Tk;
#pragma omp simd
            for (k = 0; k < n; k++)
                a[k] = fmaf(qi, kt[k], a[k]);
        }
        for (k = 0; k < n; k++)
            a[k] *= s->inv_sqrt_p;
        /* softmax over them, the largest subtracted first */
        max = n ? a[0] : 0.0f;
        for (k = 1; k < n; k++)
            max = a[k] > max ? a[k] : max;
        sum = v16_exp_row(a, n, max);
        for (k = 0; k < n; k++)
            a[k] /= sum;
        /* head output Σ_k a_k V_h[k] (a_k through dropout in training) */
        for (i = 0; i < p; i++)
            o[i] = 0.0f;
        for (k = 0; k < n; k++) {
            const float *v = V + (b * Tk + k) * d + h * p;
            float ak = a[k];
            if (dropping)
                ak = mha_dropout_keep(s->drop, row + k) ? ak * s->keep_scale : 0.0f;
#pragma omp simd
            for (i = 0; i < p; i++)
                o[i] = fmaf(ak, v[i], o[i]);
        }
    }
}

/* Head h of example b, backward: for every query q and the keys it sees,
 * da = dO · V_hᵀ (V_h transposed into Ht), dV_h += a dO, the softmax's
 * backward dS = A ⊙ (dA − Σ dA ⊙ A), the 1/√p scale, then dQ_h[q] += dS
 * K_h and dK_h += dS Q_h[q] (masked keys have weight 0 and no gradient). */
static inline void head_backward(float *restrict dQ, float *restrict dK, float *restrict dV,
                                 float *restrict Ht, float *restrict dA, const float *dO,
                                 const float *A, const float *Q, const float *K, const float *V,
                                 size_t b, size_t h, size_t Tq, size_t Tk, size_t p,
                                 const fl_attention *s)
{
    const int dropping = s->drop && s->drop->p > 0;
    const size_t d = s->d, NH = s->NH;
    size_t q, k, i;
    for (k = 0; k < Tk; k++) /* Ht (p, Tk) = V_hᵀ */
        for (i = 0; i < p; i++)
            Ht[i * Tk + k] = V[(b * Tk + k) * d + h * p + i];
    for (q = 0; q < Tq; q++) {
        const size_t row = ((b * NH + h) * Tq + q) * Tk, n = visible(s, b, q);
        const float *restrict a = A + row, *restrict g = dO + (b * Tq + q) * d + h * p;
        const float *restrict qq = Q + (b * Tq + q) * d + h * p;
        float *restrict dq = dQ + (b * Tq + q) * d + h * p, dot = 0.0f;
        /* da_k = dO · V_h[k] for every key it sees */
        for (k = 0; k < n; k++)
            dA[k] = 0.0f;
        for (i = 0; i < p; i++) {
            const float gi = g[i], *vt = Ht + i * Tk;
#pragma omp simd
            for (k = 0; k < n; k++)
                dA[k] = fmaf(gi, vt[k], dA[k]);
        }
        for (k = 0; k < n; k++) {
            float *restrict dv = dV + (b * Tk + k) * d + h * p, ak = a[k];
            int keep = !dropping || mha_dropout_keep(s->drop, row + k);
            if (dropping) {
                ak = keep ? ak * s->keep_scale : 0.0f;
                dA[k] = keep ? dA[k] * s->keep_scale : 0.0f;
            }
            /* dV_h[k] += a_k dO */
#pragma omp simd
            for (i = 0; i < p; i++)
                dv[i] = fmaf(ak, g[i], dv[i]);
            dot += dA[k] * a[k];
        }
        for (k = 0; k < n; k++) {
            const float *restrict kk = K + (b * Tk + k) * d + h * p;
            float *restrict dk = dK + (b * Tk + k) * d + h * p;
            const float ds = a[k] * (dA[k] - dot) * s->inv_sqrt_p;
#pragma omp simd
            for (i = 0; i < p; i++) {
                dq[i] = fmaf(ds, kk[i], dq[i]);
                dk[i] = fmaf(ds, qq[i], dk[i]);
            }
        }
    }
}

void fl_heads_forward(float *O, float *A, float *scratch, const float *Q, const float *K,
                      const float *V, const fl_attention *s)
{
    const size_t Tq = s->Tq, Tk = s->Tk, p = s->p;
    for (size_t b = 0; b < s->B; b++)
        for (size_t h = 0; h < s->NH; h++) {
            /* constant sizes for the defaults (reverse and previous: T 8;
             * induction: T 20; translate: T 12; p 8) keep a row of scores
             * in a register */
            if (Tq == 8 && Tk == 8 && p == 8)
                head_forward(O, A, scratch, Q, K, V, b, h, 8, 8, 8, s);
            else if (Tq == 20 && Tk == 20 && p == 8)
                head_forward(O, A, scratch, Q, K, V, b, h, 20, 20, 8, s);
            else if (Tq == 12 && Tk == 12 && p == 8) /* translate's num_steps */
                head_forward(O, A, scratch, Q, K, V, b, h, 12, 12, 8, s);
            else
                head_forward(O, A, scratch, Q, K, V, b, h, Tq, Tk, p, s);
        }
}

void fl_heads_backward(float *dQ, float *dK, float *dV, float *scratch, const float *dO,
                       const float *A, const float *Q, const float *K, const float *V,
                       const fl_attention *s)
{
    const size_t Tq = s->Tq, Tk = s->Tk, p = s->p;
    float *Ht = scratch, *dA = scratch + p * Tk;
    for (size_t b = 0; b < s->B; b++)
        for (size_t h = 0; h < s->NH; h++) {
            if (Tq == 8 && Tk == 8 && p == 8)
                head_backward(dQ, dK, dV, Ht, dA, dO, A, Q, K, V, b, h, 8, 8, 8, s);
            else if (Tq == 20 && Tk == 20 && p == 8)
                head_backward(dQ, dK, dV, Ht, dA, dO, A, Q, K, V, b, h, 20, 20, 8, s);
            else if (Tq == 12 && Tk == 12 && p == 8)
                head_backward(dQ, dK, dV, Ht, dA, dO, A, Q, K, V, b, h, 12, 12, 8, s);
            else
                head_backward(dQ, dK, dV, Ht, dA, dO, A, Q, K, V, b, h, Tq, Tk, p, s);
        }
}

/* ---- AddNorm, ReLU, embedding, loss ------------------------------------ */

void fl_addnorm_forward(float *out, float *xh, float *rstd, const float *x, const float *y,
                        const float *gamma, const float *beta, size_t n, size_t d)
{
    size_t r, i;
    for (r = 0; r < n; r++) {
        const float *xr = x + r * d, *yr = y + r * d;
        float *nr = out + r * d, *hr = xh + r * d, mean, var, rs;
        for (i = 0; i < d; i++) /* z = x + y, in out for now */
            nr[i] = xr[i] + yr[i];
        mean = v16_sum_row(nr, d) / (float)d;
        for (i = 0; i < d; i++) /* z − mean, in xh for now */
            hr[i] = nr[i] - mean;
        var = v16_dot_row(hr, hr, d) / (float)d;
        rs = 1.0f / sqrtf(var + LN_EPS);
        rstd[r] = rs;
        for (i = 0; i < d; i++) {
            float hi = hr[i] * rs;
            hr[i] = hi;
            nr[i] = fmaf(hi, gamma[i], beta[i]);
        }
    }
}

void fl_addnorm_backward(float *dx, float *dy, float *dgamma, float *dbeta, const float *dout,
                         const float *xh, const float *rstd, const float *gamma, size_t n,
                         size_t d)
{
    size_t r, i;
    for (r = 0; r < n; r++) {
        const float *dr = dout + r * d, *hr = xh + r * d;
        float m1 = 0.0f, m2 = 0.0f;
        for (i = 0; i < d; i++) { /* in order of i */
            float dxh = dr[i] * gamma[i];
            dgamma[i] += dr[i] * hr[i];
            dbeta[i] += dr[i];
            m1 += dxh;
            m2 += dxh * hr[i];
        }
        m1 /= (float)d;
        m2 /= (float)d;
        for (i = 0; i < d; i++) {
            float dz = rstd[r] * (dr[i] * gamma[i] - m1 - hr[i] * m2);
            dy[r * d + i] = dz;
            dx[r * d + i] = dz;
        }
    }
}

void fl_relu_forward(float *R, const float *Hin, size_t count)
{
    for (size_t i = 0; i < count; i++)
        R[i] = Hin[i] > 0.0f ? Hin[i] : 0.0f;
}

void fl_relu_backward(float *dR, const float *Hin, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (!(Hin[i] > 0.0f))
            dR[i] = 0.0f;
}

void fl_embed_forward(float *X, const float *embedding, const int *tokens, size_t n, size_t T,
                      size_t d, float scale, const float *P)
{
    size_t r, i;
    for (r = 0; r < n; r++) {
        const float *e = embedding + (size_t)tokens[r] * d;
        float *x = X + r * d;
        if (P) {
            const float *pr = P + (r % T) * d;
#pragma omp simd
            for (i = 0; i < d; i++)
                x[i] = fmaf(e[i], scale, pr[i]);
        } else {
#pragma omp simd
            for (i = 0; i < d; i++)
                x[i] = e[i] * scale;
        }
    }
}

void fl_embed_backward(float *dE, const float *dX, const int *tokens, size_t n, size_t d,
                       float scale)
{
    size_t r, i;
    for (r = 0; r < n; r++) {
        float *de = dE + (size_t)tokens[r] * d;
        const float *dx = dX + r * d;
#pragma omp simd
        for (i = 0; i < d; i++)
            de[i] = fmaf(dx[i], scale, de[i]);
    }
}

double fl_cross_entropy(float *dlogits, const float *logits, const int *targets, size_t n,
                        size_t C, double scale, size_t *count, size_t *correct)
{
    size_t r, k, seen = 0, right = 0;
    double loss = 0.0;
    for (r = 0; r < n; r++) {
        const float *z = logits + r * C;
        float *dz = dlogits + r * C, max = z[0];
        double sum = 0.0;
        size_t arg = 0;
        if (targets[r] < 0) {
            memset(dz, 0, C * sizeof *dz);
            continue;
        }
        for (k = 1; k < C; k++)
            if (z[k] > max) {
                max = z[k];
                arg = k;
            }
        memcpy(dz, z, C * sizeof *dz);
        (void)v16_exp_row(dz, C, max); /* dz = e^(z − max) */
        for (k = 0; k < C; k++)        /* their sum in double, in order */
            sum += dz[k];
        loss += max + attn_log(sum) - z[targets[r]];
        seen++;
        right += arg == (size_t)targets[r];
        for (k = 0; k < C; k++)
            dz[k] = (float)((dz[k] / sum - (k == (size_t)targets[r])) * scale);
    }
    if (count)
        *count = seen;
    if (correct)
        *correct = right;
    return loss;
}

/* ---- whole modules ------------------------------------------------------ */

void fl_mha_forward(const fl_mha_acts *a, float *heads_scratch, const float *xq,
                    const float *xkv, const fl_mha *w, const fl_attention *s)
{
    const size_t d = s->d, nq = s->B * s->Tq, nk = s->B * s->Tk;
    /* Q = xq·W_qᵀ, K = xkv·W_kᵀ, V = xkv·W_vᵀ (+ biases) */
    fl_linear_forward(a->Q, xq, nq, w->q.Wt, w->q.l->bias.data, d, d);
    fl_linear_forward(a->K, xkv, nk, w->k.Wt, w->k.l->bias.data, d, d);
    fl_linear_forward(a->V, xkv, nk, w->v.Wt, w->v.l->bias.data, d, d);
    /* every head: softmax(Q_h K_hᵀ/√p, masked) · V_h, side by side in O */
    fl_heads_forward(a->O, a->A, heads_scratch, a->Q, a->K, a->V, s);
    /* Y = O·W_oᵀ (+ b_o) */
    fl_linear_forward(a->Y, a->O, nq, w->o.Wt, w->o.l->bias.data, d, d);
}

void fl_mha_backward(float *dxq, float *dxkv, const fl_mha_grads *g, const fl_mha_scratch *t,
                     const float *dY, const fl_mha_acts *a, const float *xq, const float *xkv,
                     const fl_mha *w, const fl_attention *s)
{
    const size_t d = s->d, nq = s->B * s->Tq, nk = s->B * s->Tk;
    memset(t->dO, 0, nq * d * sizeof *t->dO);
    memset(t->dQ, 0, nq * d * sizeof *t->dQ);
    memset(t->dK, 0, nk * d * sizeof *t->dK);
    memset(t->dV, 0, nk * d * sizeof *t->dV);
    /* d W_o, and dO = dY·W_o */
    fl_linear_backward(t->dO, g->o.dW, g->o.db, dY, a->O, nq, w->o.l->weight.data, d, d);
    /* the heads: dQ, dK, dV */
    fl_heads_backward(t->dQ, t->dK, t->dV, t->heads, t->dO, a->A, a->Q, a->K, a->V, s);
    /* d W_q, W_k, W_v, and the inputs' gradients */
    fl_linear_backward(dxq, g->q.dW, g->q.db, t->dQ, xq, nq, w->q.l->weight.data, d, d);
    fl_linear_backward(dxkv, g->k.dW, g->k.db, t->dK, xkv, nk, w->k.l->weight.data, d, d);
    fl_linear_backward(dxkv, g->v.dW, g->v.db, t->dV, xkv, nk, w->v.l->weight.data, d, d);
}

void fl_ffn_forward(float *F, float *H, float *R, const float *x, const fl_linear *dense1,
                    const fl_linear *dense2, size_t n, size_t d, size_t Hn)
{
    fl_linear_forward(H, x, n, dense1->Wt, dense1->l->bias.data, d, Hn);
    fl_relu_forward(R, H, n * Hn);
    fl_linear_forward(F, R, n, dense2->Wt, dense2->l->bias.data, Hn, d);
}

void fl_ffn_backward(float *dx, const fl_linear_grads *g1, const fl_linear_grads *g2, float *dR,
                     const float *dF, const float *H, const float *R, const float *x,
                     const fl_linear *dense1, const fl_linear *dense2, size_t n, size_t d,
                     size_t Hn)
{
    memset(dR, 0, n * Hn * sizeof *dR);
    /* d dense2, dR = dF·W2 */
    fl_linear_backward(dR, g2->dW, g2->db, dF, R, n, dense2->l->weight.data, Hn, d);
    /* the ReLU passes the gradient where H > 0 */
    fl_relu_backward(dR, H, n * Hn);
    /* d dense1, dx += dH·W1 */
    fl_linear_backward(dx, g1->dW, g1->db, dR, x, n, dense1->l->weight.data, d, Hn);
}
