/* train_fast.c — the model's forward and backward passes in float32 with
 * vectorisable loops (see train_fast.h). The reference is train_model.c
 * with attention.c and attention_backward.c: same steps, same names.
 *
 * Every number is the same on every machine (SPEC §12): a sum over one
 * vector is either in order, term by term, or lanes.h's 16 partial sums
 * in a fixed tree; a multiply-add is fused only where fmaf or v16_fma
 * says so; e^x is lanes.h's. The compiler may vectorise the loops over
 * independent outputs (o, i, k below), which changes no result. */
#include "train_fast.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "fmath.h"
#include "lanes.h"
#include "posenc.h"

#define LN_EPS 1e-5f

static float *fz(size_t a, size_t b, size_t c, int *failed)
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

int tfast_weights_alloc(tfast_weights *w, const tmodel *m)
{
    const size_t d = m->cfg.hiddens, C = m->cfg.classes, H = m->cfg.ffn;
    int failed = 0;
    memset(w, 0, sizeof *w);
    for (size_t l = 0; l < m->cfg.layers; l++) {
        tfast_block_weights *bw = &w->blk[l];
        bw->Wq = fz(d, d, 1, &failed);
        bw->Wk = fz(d, d, 1, &failed);
        bw->Wv = fz(d, d, 1, &failed);
        bw->Wo = fz(d, d, 1, &failed);
        if (H) {
            bw->W1 = fz(d, H, 1, &failed);
            bw->W2 = fz(H, d, 1, &failed);
        }
    }
    w->head = fz(d, C, 1, &failed);
    if (failed) {
        tfast_weights_free(w);
        return -1;
    }
    return 0;
}

void tfast_weights_free(tfast_weights *w)
{
    for (size_t l = 0; l < TMODEL_MAX_LAYERS; l++) {
        tfast_block_weights *bw = &w->blk[l];
        free(bw->Wq);
        free(bw->Wk);
        free(bw->Wv);
        free(bw->Wo);
        free(bw->W1);
        free(bw->W2);
    }
    free(w->head);
    memset(w, 0, sizeof *w);
}

/* dst (in, out) = src (out, in)ᵀ */
static void transpose(float *dst, const float *src, size_t out, size_t in)
{
    size_t o, i;
    for (o = 0; o < out; o++)
        for (i = 0; i < in; i++)
            dst[i * out + o] = src[o * in + i];
}

void tfast_weights_update(tfast_weights *w, const tmodel *m)
{
    const size_t d = m->cfg.hiddens, C = m->cfg.classes, H = m->cfg.ffn;
    for (size_t l = 0; l < m->cfg.layers; l++) {
        const tblock *b = &m->blk[l];
        tfast_block_weights *bw = &w->blk[l];
        transpose(bw->Wq, b->mha.W_q.weight.data, d, d);
        transpose(bw->Wk, b->mha.W_k.weight.data, d, d);
        transpose(bw->Wv, b->mha.W_v.weight.data, d, d);
        transpose(bw->Wo, b->mha.W_o.weight.data, d, d);
        if (H) {
            transpose(bw->W1, b->dense1.weight.data, H, d);
            transpose(bw->W2, b->dense2.weight.data, d, H);
        }
    }
    transpose(w->head, m->head_weight.data, C, d);
}

int tfast_cache_alloc(tfast_cache *c, const tmodel *m, size_t Bmax, size_t Tmax)
{
    const size_t d = m->cfg.hiddens, NH = m->cfg.heads, C = m->cfg.classes, H = m->cfg.ffn;
    size_t BT;
    int failed = 0;
    memset(c, 0, sizeof *c);
    if (size_mul(Bmax, Tmax, &BT))
        return -1;
    c->Bmax = Bmax;
    c->Tmax = Tmax;
    c->P = fz(Tmax, d, 1, &failed);
    c->X = fz(BT, d, 1, &failed);
    for (size_t l = 0; l < m->cfg.layers; l++) {
        tfast_block *b = &c->blk[l];
        b->Q = fz(BT, d, 1, &failed);
        b->K = fz(BT, d, 1, &failed);
        b->V = fz(BT, d, 1, &failed);
        b->O = fz(BT, d, 1, &failed);
        b->Y = fz(BT, d, 1, &failed);
        b->A = fz(BT, NH, Tmax, &failed);
        if (m->cfg.addnorm) {
            b->N = fz(BT, d, 1, &failed);
            b->xh = fz(BT, d, 1, &failed);
            b->rstd = fz(BT, 1, 1, &failed);
        }
        if (H) {
            b->H = fz(BT, H, 1, &failed);
            b->R = fz(BT, H, 1, &failed);
            b->F = fz(BT, d, 1, &failed);
            b->N2 = fz(BT, d, 1, &failed);
            b->xh2 = fz(BT, d, 1, &failed);
            b->rstd2 = fz(BT, 1, 1, &failed);
        }
    }
    c->logits = fz(BT, C, 1, &failed);
    c->dlogits = fz(BT, C, 1, &failed);
    c->dN = fz(BT, d, 1, &failed);
    c->dY = fz(BT, d, 1, &failed);
    c->dO = fz(BT, d, 1, &failed);
    c->dQ = fz(BT, d, 1, &failed);
    c->dK = fz(BT, d, 1, &failed);
    c->dV = fz(BT, d, 1, &failed);
    c->dX = fz(BT, d, 1, &failed);
    c->dF = fz(BT, d, 1, &failed);
    c->dN1 = fz(BT, d, 1, &failed);
    c->dR = fz(BT, H ? H : 1, 1, &failed);
    c->dA = fz(Tmax, 1, 1, &failed);
    c->Ht = fz(d, Tmax, 1, &failed);
    if (failed) {
        tfast_cache_free(c);
        return -1;
    }
    posenc_fill(c->P, Tmax, d, 10000.0);
    return 0;
}

void tfast_cache_free(tfast_cache *c)
{
    float **p[] = {&c->P,  &c->X,  &c->logits, &c->dlogits, &c->dN, &c->dY, &c->dO,
                   &c->dQ, &c->dK, &c->dV,     &c->dX,      &c->dF, &c->dN1, &c->dR,
                   &c->dA, &c->Ht};
    size_t i;
    for (i = 0; i < sizeof p / sizeof *p; i++) {
        free(*p[i]);
        *p[i] = NULL;
    }
    for (size_t l = 0; l < TMODEL_MAX_LAYERS; l++) {
        tfast_block *b = &c->blk[l];
        float **q[] = {&b->Q, &b->K, &b->V,  &b->O,  &b->Y,   &b->A,  &b->N,    &b->xh,
                       &b->rstd, &b->H, &b->R, &b->F, &b->N2, &b->xh2, &b->rstd2};
        for (i = 0; i < sizeof q / sizeof *q; i++) {
            free(*q[i]);
            *q[i] = NULL;
        }
    }
}

const float *tfast_block_out(const tfast_cache *c, const tmodel *m, size_t l)
{
    const tfast_block *b = &c->blk[l];
    return m->cfg.ffn ? b->N2 : m->cfg.addnorm ? b->N : b->Y;
}

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

static void lin_fwd(float *restrict y, const float *restrict x, size_t n, const float *restrict Wt,
                    const float *restrict bias, size_t in, size_t out)
{
    if (in == 32 && out == 32)
        lin_fwd_body(y, x, n, Wt, bias, 32, 32); /* the default d */
    else
        lin_fwd_body(y, x, n, Wt, bias, in, out);
}

/* The backward of lin_fwd with W (out, in):
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

static void lin_bwd(float *restrict dx, float *restrict dW, float *restrict db,
                    const float *restrict dy, const float *restrict x, size_t n,
                    const float *restrict W, size_t in, size_t out)
{
    if (in == 32 && out == 32)
        lin_bwd_body(dx, dW, db, dy, x, n, W, 32, 32); /* the default d */
    else if (in == 32)
        lin_bwd_body(dx, dW, db, dy, x, n, W, 32, out); /* the head */
    else
        lin_bwd_body(dx, dW, db, dy, x, n, W, in, out);
}

static float *grad_of(float *grads, const tmodel *m, const tensor *t)
{
    size_t i;
    if (!t->data)
        return NULL;
    for (i = 0; i < m->nparams; i++)
        if (m->param[i].t == t)
            return grads + m->param[i].offset;
    return NULL;
}

/* The keys query q of example b sees: 0 … n−1, n = min(q + 1 with the
 * causal mask, valid_len, T). The rest have the score −1e6, whose softmax
 * weight exp(−1e6 − max) is exactly 0 in float32: the loops skip them and
 * give the same numbers (a causal step does about half the work). */
static inline size_t visible(const long *lens, int causal, size_t b, size_t q, size_t T)
{
    size_t n = causal && q + 1 < T ? q + 1 : T;
    if (lens && (size_t)lens[b] < n)
        n = (size_t)lens[b];
    return n;
}

/* Head h of example b, forward: for every query q, the scores against
 * the keys it sees (K_hᵀ transposed into c->Ht so that they are p rows
 * added), the softmax into bk->A (0 at masked keys), the weighted sum of
 * the values into bk->O. Inlined with constant T and p for the defaults,
 * when the row of scores (T,) and the head output (p,) stay in registers. */
static inline void head_forward(tfast_cache *c, tfast_block *bk, size_t b, size_t h, size_t T,
                                size_t p, size_t d, size_t NH, const long *lens, int causal,
                                const mha_dropout *drop, float inv_sqrt_p, float keep_scale)
{
    const int dropping = drop && drop->p > 0;
    size_t q, k, i;
    float *restrict Ht = c->Ht;
    for (k = 0; k < T; k++)
        for (i = 0; i < p; i++)
            Ht[i * T + k] = bk->K[(b * T + k) * d + h * p + i];
    for (q = 0; q < T; q++) {
        const size_t row = ((b * NH + h) * T + q) * T, n = visible(lens, causal, b, q, T);
        const float *restrict qq = bk->Q + (b * T + q) * d + h * p;
        float *restrict a = bk->A + row, *restrict o = bk->O + (b * T + q) * d + h * p;
        float max, sum;
        /* scores Q_h[q] · K_h[k] / √p for the keys it sees */
        for (k = 0; k < T; k++)
            a[k] = 0.0f;
        for (i = 0; i < p; i++) {
            const float qi = qq[i], *kt = Ht + i * T;
#pragma omp simd
            for (k = 0; k < n; k++)
                a[k] = fmaf(qi, kt[k], a[k]);
        }
        for (k = 0; k < n; k++)
            a[k] *= inv_sqrt_p;
        /* softmax over them, the largest subtracted first */
        max = a[0];
        for (k = 1; k < n; k++)
            max = a[k] > max ? a[k] : max;
        sum = v16_exp_row(a, n, max);
        for (k = 0; k < n; k++)
            a[k] /= sum;
        /* head output Σ_k a_k V_h[k] (a_k through dropout in training) */
        for (i = 0; i < p; i++)
            o[i] = 0.0f;
        for (k = 0; k < n; k++) {
            const float *v = bk->V + (b * T + k) * d + h * p;
            float ak = a[k];
            if (dropping)
                ak = mha_dropout_keep(drop, row + k) ? ak * keep_scale : 0.0f;
#pragma omp simd
            for (i = 0; i < p; i++)
                o[i] = fmaf(ak, v[i], o[i]);
        }
    }
}

/* Head h of example b, backward: for every query q and the keys it sees,
 * da = dO · V_hᵀ (V_h transposed into c->Ht), dV_h += a dO, the softmax's
 * backward dS = A ⊙ (dA − Σ dA ⊙ A), the 1/√p scale, then dQ_h[q] += dS
 * K_h and dK_h += dS Q_h[q] (masked keys have weight 0 and no gradient). */
static inline void head_backward(tfast_cache *c, tfast_block *bk, size_t b, size_t h, size_t T,
                                 size_t p, size_t d, size_t NH, const long *lens, int causal,
                                 const mha_dropout *drop, float inv_sqrt_p, float keep_scale)
{
    const int dropping = drop && drop->p > 0;
    size_t q, k, i;
    float *restrict Ht = c->Ht, *restrict dA = c->dA;
    for (k = 0; k < T; k++)
        for (i = 0; i < p; i++)
            Ht[i * T + k] = bk->V[(b * T + k) * d + h * p + i];
    for (q = 0; q < T; q++) {
        const size_t row = ((b * NH + h) * T + q) * T, n = visible(lens, causal, b, q, T);
        const float *restrict a = bk->A + row, *restrict dO = c->dO + (b * T + q) * d + h * p;
        const float *restrict qq = bk->Q + (b * T + q) * d + h * p;
        float *restrict dq = c->dQ + (b * T + q) * d + h * p, dot = 0.0f;
        /* da_k = dO · V_h[k] for every key it sees */
        for (k = 0; k < n; k++)
            dA[k] = 0.0f;
        for (i = 0; i < p; i++) {
            const float g = dO[i], *vt = Ht + i * T;
#pragma omp simd
            for (k = 0; k < n; k++)
                dA[k] = fmaf(g, vt[k], dA[k]);
        }
        for (k = 0; k < n; k++) {
            float *restrict dv = c->dV + (b * T + k) * d + h * p, ak = a[k];
            int keep = !dropping || mha_dropout_keep(drop, row + k);
            if (dropping) {
                ak = keep ? ak * keep_scale : 0.0f;
                dA[k] = keep ? dA[k] * keep_scale : 0.0f;
            }
            /* dV_h[k] += a_k dO */
#pragma omp simd
            for (i = 0; i < p; i++)
                dv[i] = fmaf(ak, dO[i], dv[i]);
            dot += dA[k] * a[k];
        }
        for (k = 0; k < n; k++) {
            const float *restrict kk = bk->K + (b * T + k) * d + h * p;
            float *restrict dk = c->dK + (b * T + k) * d + h * p;
            const float ds = a[k] * (dA[k] - dot) * inv_sqrt_p;
#pragma omp simd
            for (i = 0; i < p; i++) {
                dq[i] = fmaf(ds, kk[i], dq[i]);
                dk[i] = fmaf(ds, qq[i], dk[i]);
            }
        }
    }
}

/* The sizes and constants of one step, as train_fast.h names them. */
typedef struct step_dims {
    size_t B, T, BT, d, NH, p, C, H;
    float sqrt_d, inv_sqrt_p, keep_scale; /* √d, 1/√p, 1/(1 − dropout) */
    int causal;
    const long *lens;        /* (B,) valid lengths, or NULL */
    const mha_dropout *drop; /* or NULL */
} step_dims;

/* 1. X (B, T, d) = embedding[token] · √d (+ P[t]) */
static void embed_forward(tfast_cache *c, const tmodel *m, const int *tokens, const step_dims *s)
{
    const size_t d = s->d;
    size_t r, i;
    for (r = 0; r < s->BT; r++) {
        const float *e = m->embedding.data + (size_t)tokens[r] * d, *P = c->P + (r % s->T) * d;
        float *x = c->X + r * d;
        if (m->cfg.posenc) {
#pragma omp simd
            for (i = 0; i < d; i++)
                x[i] = fmaf(e[i], s->sqrt_d, P[i]);
        } else {
#pragma omp simd
            for (i = 0; i < d; i++)
                x[i] = e[i] * s->sqrt_d;
        }
    }
}

/* Head h of example b both ways, with constant T and p for the sizes of the
 * defaults (reverse and previous: T 8; induction: T 20; p 8). */
static void head_forward_any(tfast_cache *c, tfast_block *bk, size_t b, size_t h,
                             const step_dims *s)
{
    if (s->T == 8 && s->p == 8) /* a row of scores fits a register */
        head_forward(c, bk, b, h, 8, 8, s->d, s->NH, s->lens, s->causal, s->drop,
                     s->inv_sqrt_p, s->keep_scale);
    else if (s->T == 20 && s->p == 8)
        head_forward(c, bk, b, h, 20, 8, s->d, s->NH, s->lens, s->causal, s->drop,
                     s->inv_sqrt_p, s->keep_scale);
    else
        head_forward(c, bk, b, h, s->T, s->p, s->d, s->NH, s->lens, s->causal, s->drop,
                     s->inv_sqrt_p, s->keep_scale);
}

static void head_backward_any(tfast_cache *c, tfast_block *bk, size_t b, size_t h,
                              const step_dims *s)
{
    if (s->T == 8 && s->p == 8)
        head_backward(c, bk, b, h, 8, 8, s->d, s->NH, s->lens, s->causal, s->drop,
                      s->inv_sqrt_p, s->keep_scale);
    else if (s->T == 20 && s->p == 8)
        head_backward(c, bk, b, h, 20, 8, s->d, s->NH, s->lens, s->causal, s->drop,
                      s->inv_sqrt_p, s->keep_scale);
    else
        head_backward(c, bk, b, h, s->T, s->p, s->d, s->NH, s->lens, s->causal, s->drop,
                      s->inv_sqrt_p, s->keep_scale);
}

/* 2. attention on the block's input x: Q, K, V (B, T, d), then per head
 * softmax(Q Kᵀ/√p, masked) into A (B, NH, T, T) and ·V into O (B, T, d),
 * then Y = O W_oᵀ */
static void attention_forward(tfast_cache *c, tfast_block *bk, const tblock *blk,
                              const tfast_block_weights *w, const float *x, const step_dims *s)
{
    const size_t d = s->d, BT = s->BT;
    size_t b, h;
    lin_fwd(bk->Q, x, BT, w->Wq, blk->mha.W_q.bias.data, d, d);
    lin_fwd(bk->K, x, BT, w->Wk, blk->mha.W_k.bias.data, d, d);
    lin_fwd(bk->V, x, BT, w->Wv, blk->mha.W_v.bias.data, d, d);
    for (b = 0; b < s->B; b++)
        for (h = 0; h < s->NH; h++)
            head_forward_any(c, bk, b, h, s);
    lin_fwd(bk->Y, bk->O, BT, w->Wo, blk->mha.W_o.bias.data, d, d);
}

/* 3. (addnorm) out (B, T, d) = LayerNorm(x + y), x̂ into xh, 1/σ into rstd
 * (B, T); the mean and the variance as lanes.h's sums of 16 partial sums */
static void addnorm_forward(float *out, float *xh, float *rstd, const float *x, const float *y,
                            const float *gamma, const float *beta, const step_dims *s)
{
    const size_t d = s->d;
    size_t r, i;
    for (r = 0; r < s->BT; r++) {
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
            float h = hr[i] * rs;
            hr[i] = h;
            nr[i] = fmaf(h, gamma[i], beta[i]);
        }
    }
}

/* 4. (ffn) H (B, T, H) = N · W1 + b1, R = ReLU(H), F (B, T, d) = R · W2 + b2 */
static void ffn_forward(tfast_block *bk, const tblock *blk, const tfast_block_weights *w,
                        const step_dims *s)
{
    const size_t d = s->d, H = s->H, n = s->BT * H;
    size_t i;
    lin_fwd(bk->H, bk->N, s->BT, w->W1, blk->dense1.bias.data, d, H);
    for (i = 0; i < n; i++)
        bk->R[i] = bk->H[i] > 0.0f ? bk->H[i] : 0.0f;
    lin_fwd(bk->F, bk->R, s->BT, w->W2, blk->dense2.bias.data, H, d);
}

/* 5. the summed loss over the positions with a target, their count and
 * correct count, and d logits (B, T, C) = (softmax − one-hot) · scale */
static double loss_forward_backward(tfast_cache *c, const int *targets, double scale,
                                    const step_dims *s, size_t *count, size_t *correct)
{
    const size_t C = s->C;
    size_t r, k, n = 0, right = 0;
    double loss = 0.0;
    for (r = 0; r < s->BT; r++) {
        const float *z = c->logits + r * C;
        float *dz = c->dlogits + r * C, max = z[0];
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
        for (k = 0; k < C; k++)
            sum += dz[k];
        loss += max + attn_log(sum) - z[targets[r]];
        n++;
        right += arg == (size_t)targets[r];
        for (k = 0; k < C; k++)
            dz[k] = (float)((dz[k] / sum - (k == (size_t)targets[r])) * scale);
    }
    if (count)
        *count = n;
    if (correct)
        *correct = right;
    return loss;
}

/* 3'. LayerNorm backward, from dn (B, T, d) and x̂: d ln.weight, d ln.bias,
 * and dZ = rstd (dx̂ − mean(dx̂) − x̂ mean(dx̂ x̂)), where dx̂ = dn ⊙
 * ln.weight, written (=) into both dy and dx: the two terms of the sum */
static void addnorm_backward(float *dx, float *dy, float *dgamma, float *dbeta, const float *dn,
                             const float *xh, const float *rstd, const float *gamma,
                             const step_dims *s)
{
    const size_t d = s->d;
    size_t r, i;
    for (r = 0; r < s->BT; r++) {
        const float *dr = dn + r * d, *hr = xh + r * d;
        float m1 = 0.0f, m2 = 0.0f;
        for (i = 0; i < d; i++) {
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

/* 4'. ffn backward, from dF (B, T, d): d dense2, dR = dF · W2 (B, T, H),
 * dH = dR where H > 0 (in dR), d dense1, and dN += dH · W1 */
static void ffn_backward(float *grads, tfast_cache *c, const tfast_block *bk, const tblock *blk,
                         const tmodel *m, float *dN, const step_dims *s)
{
    const size_t d = s->d, H = s->H, n = s->BT * H;
    size_t i;
    memset(c->dR, 0, n * sizeof *c->dR);
    lin_bwd(c->dR, grad_of(grads, m, &blk->dense2.weight), grad_of(grads, m, &blk->dense2.bias),
            c->dF, bk->R, s->BT, blk->dense2.weight.data, H, d);
    for (i = 0; i < n; i++)
        if (!(bk->H[i] > 0.0f))
            c->dR[i] = 0.0f;
    lin_bwd(dN, grad_of(grads, m, &blk->dense1.weight), grad_of(grads, m, &blk->dense1.bias),
            c->dR, bk->N, s->BT, blk->dense1.weight.data, d, H);
}

/* 2'. attention backward, from dY (B, T, d): d W_o and dO; per head dA,
 * dV, dS, dQ, dK; then d W_q, d W_k, d W_v, and dX += dQ W_q + dK W_k +
 * dV W_v, x the block's input */
static void attention_backward(float *grads, tfast_cache *c, tfast_block *bk, const tblock *blk,
                               const tmodel *m, const float *x, float *dX, const step_dims *s)
{
    const size_t d = s->d, BT = s->BT, bytes = BT * d * sizeof(float);
    size_t b, h;
    memset(c->dO, 0, bytes);
    memset(c->dQ, 0, bytes);
    memset(c->dK, 0, bytes);
    memset(c->dV, 0, bytes);
    lin_bwd(c->dO, grad_of(grads, m, &blk->mha.W_o.weight), grad_of(grads, m, &blk->mha.W_o.bias),
            c->dY, bk->O, BT, blk->mha.W_o.weight.data, d, d);
    for (b = 0; b < s->B; b++)
        for (h = 0; h < s->NH; h++)
            head_backward_any(c, bk, b, h, s);
    lin_bwd(dX, grad_of(grads, m, &blk->mha.W_q.weight), grad_of(grads, m, &blk->mha.W_q.bias),
            c->dQ, x, BT, blk->mha.W_q.weight.data, d, d);
    lin_bwd(dX, grad_of(grads, m, &blk->mha.W_k.weight), grad_of(grads, m, &blk->mha.W_k.bias),
            c->dK, x, BT, blk->mha.W_k.weight.data, d, d);
    lin_bwd(dX, grad_of(grads, m, &blk->mha.W_v.weight), grad_of(grads, m, &blk->mha.W_v.bias),
            c->dV, x, BT, blk->mha.W_v.weight.data, d, d);
}

/* 1'. d embedding[token] += dX · √d */
static void embed_backward(float *grads, const float *dX, const tmodel *m, const int *tokens,
                           const step_dims *s)
{
    const size_t d = s->d;
    float *dE = grad_of(grads, m, &m->embedding);
    size_t r, i;
    for (r = 0; r < s->BT; r++) {
        float *de = dE + (size_t)tokens[r] * d;
        const float *dx = dX + r * d;
#pragma omp simd
        for (i = 0; i < d; i++)
            de[i] = fmaf(dx[i], s->sqrt_d, de[i]);
    }
}

/* Block l backward: dN (B, T, d) the gradient of its output, dX that of its
 * input x (overwritten). */
static void block_backward(float *grads, tfast_cache *c, const tmodel *m, size_t l,
                           const float *x, float *dN, float *dX, const step_dims *s)
{
    tfast_block *bk = &c->blk[l];
    const tblock *blk = &m->blk[l];
    const size_t bytes = s->BT * s->d * sizeof(float);
    if (s->H) {
        /* addnorm2: dZ2 into dF and dN1, then the FFN adds into dN1 */
        addnorm_backward(c->dN1, c->dF, grad_of(grads, m, &blk->ln2_weight),
                         grad_of(grads, m, &blk->ln2_bias), dN, bk->xh2, bk->rstd2,
                         blk->ln2_weight.data, s);
        ffn_backward(grads, c, bk, blk, m, c->dN1, s);
        dN = c->dN1;
    }
    if (m->cfg.addnorm) {
        addnorm_backward(dX, c->dY, grad_of(grads, m, &blk->ln1_weight),
                         grad_of(grads, m, &blk->ln1_bias), dN, bk->xh, bk->rstd,
                         blk->ln1_weight.data, s);
    } else {
        memset(dX, 0, bytes);
        memcpy(c->dY, dN, bytes); /* dY = dN */
    }
    attention_backward(grads, c, bk, blk, m, x, dX, s);
}

double tfast_step(float *grads, tfast_cache *c, const tmodel *m, const tfast_weights *w,
                  const int *tokens, const long *lens, const int *targets, size_t B, size_t T,
                  double scale, const mha_dropout *drop, size_t *count, size_t *correct)
{
    const size_t d = m->cfg.hiddens, NH = m->cfg.heads, p = d / NH, L = m->cfg.layers;
    const int dropping = drop && drop->p > 0;
    const step_dims s = {
        .B = B,
        .T = T,
        .BT = B * T,
        .d = d,
        .NH = NH,
        .p = p,
        .C = m->cfg.classes,
        .H = m->cfg.ffn,
        .sqrt_d = (float)sqrt((double)d),
        .inv_sqrt_p = (float)(1.0 / sqrt((double)p)),
        .keep_scale = dropping ? (float)(1.0 / (1.0 - drop->p)) : 1.0f,
        .causal = m->cfg.causal,
        .lens = lens,
        .drop = drop,
    };
    const size_t bytes = s.BT * d * sizeof(float);
    const float *x = c->X;
    float *dN = c->dN, *dX = c->dX;
    double loss;

    embed_forward(c, m, tokens, &s);
    for (size_t l = 0; l < L; l++) {
        tfast_block *bk = &c->blk[l];
        const tblock *blk = &m->blk[l];
        attention_forward(c, bk, blk, &w->blk[l], x, &s);
        if (m->cfg.addnorm)
            addnorm_forward(bk->N, bk->xh, bk->rstd, x, bk->Y, blk->ln1_weight.data,
                            blk->ln1_bias.data, &s);
        if (s.H) {
            ffn_forward(bk, blk, &w->blk[l], &s);
            addnorm_forward(bk->N2, bk->xh2, bk->rstd2, bk->N, bk->F, blk->ln2_weight.data,
                            blk->ln2_bias.data, &s);
        }
        x = tfast_block_out(c, m, l);
    }
    /* 6. logits (B, T, C) = X_L · head.weightᵀ + head.bias */
    lin_fwd(c->logits, x, s.BT, w->head, m->head_bias.data, d, s.C);
    if (!targets)
        return 0.0;
    loss = loss_forward_backward(c, targets, scale, &s, count, correct);
    if (!grads)
        return loss;

    /* 6'. d head.weight, d head.bias, dN = d logits · head.weight */
    memset(dN, 0, bytes);
    lin_bwd(dN, grad_of(grads, m, &m->head_weight), grad_of(grads, m, &m->head_bias), c->dlogits,
            x, s.BT, m->head_weight.data, d, s.C);
    /* the blocks from the top: a block's input gradient is the output
     * gradient of the block below */
    for (size_t l = L; l-- > 0;) {
        float *tmp;
        block_backward(grads, c, m, l, l ? tfast_block_out(c, m, l - 1) : c->X, dN, dX, &s);
        tmp = dN;
        dN = dX;
        dX = tmp;
    }
    embed_backward(grads, dN, m, tokens, &s);
    return loss;
}
