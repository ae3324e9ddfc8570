/* train_fast.c — the model's forward and backward passes in float32 with
 * vectorisable loops (see train_fast.h). The reference is train_model.c
 * with attention.c and attention_backward.c: same steps, same names. */
#include "train_fast.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
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
    const size_t d = m->cfg.hiddens, C = m->cfg.classes;
    int failed = 0;
    w->Wq = fz(d, d, 1, &failed);
    w->Wk = fz(d, d, 1, &failed);
    w->Wv = fz(d, d, 1, &failed);
    w->Wo = fz(d, d, 1, &failed);
    w->head = fz(d, C, 1, &failed);
    if (failed) {
        tfast_weights_free(w);
        return -1;
    }
    return 0;
}

void tfast_weights_free(tfast_weights *w)
{
    free(w->Wq);
    free(w->Wk);
    free(w->Wv);
    free(w->Wo);
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
    const size_t d = m->cfg.hiddens, C = m->cfg.classes;
    transpose(w->Wq, m->mha.W_q.weight.data, d, d);
    transpose(w->Wk, m->mha.W_k.weight.data, d, d);
    transpose(w->Wv, m->mha.W_v.weight.data, d, d);
    transpose(w->Wo, m->mha.W_o.weight.data, d, d);
    transpose(w->head, m->head_weight.data, C, d);
}

int tfast_cache_alloc(tfast_cache *c, const tmodel *m, size_t Bmax, size_t Tmax)
{
    const size_t d = m->cfg.hiddens, NH = m->cfg.heads, C = m->cfg.classes;
    size_t BT;
    int failed = 0;
    memset(c, 0, sizeof *c);
    if (size_mul(Bmax, Tmax, &BT))
        return -1;
    c->Bmax = Bmax;
    c->Tmax = Tmax;
    c->P = fz(Tmax, d, 1, &failed);
    c->X = fz(BT, d, 1, &failed);
    c->Q = fz(BT, d, 1, &failed);
    c->K = fz(BT, d, 1, &failed);
    c->V = fz(BT, d, 1, &failed);
    c->O = fz(BT, d, 1, &failed);
    c->Y = fz(BT, d, 1, &failed);
    c->A = fz(BT, NH, Tmax, &failed);
    c->N = fz(BT, d, 1, &failed);
    c->rstd = fz(BT, 1, 1, &failed);
    c->logits = fz(BT, C, 1, &failed);
    c->dlogits = fz(BT, C, 1, &failed);
    c->dN = fz(BT, d, 1, &failed);
    c->dY = fz(BT, d, 1, &failed);
    c->dO = fz(BT, d, 1, &failed);
    c->dQ = fz(BT, d, 1, &failed);
    c->dK = fz(BT, d, 1, &failed);
    c->dV = fz(BT, d, 1, &failed);
    c->dX = fz(BT, d, 1, &failed);
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
    float **p[] = {&c->P, &c->X, &c->Q, &c->K, &c->V, &c->O, &c->Y, &c->A, &c->N, &c->rstd,
                   &c->logits, &c->dlogits, &c->dN, &c->dY, &c->dO, &c->dQ, &c->dK, &c->dV,
                   &c->dX, &c->dA, &c->Ht};
    size_t i;
    for (i = 0; i < sizeof p / sizeof *p; i++) {
        free(*p[i]);
        *p[i] = NULL;
    }
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
                yr[o] += xi * w[o];
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
                dw[i] += g * xr[i];
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
                    dxr[i] += g * w[i];
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

static int masked(const long *lens, int causal, size_t b, size_t q, size_t k)
{
    return (causal && k > q) || (lens && (long)k >= lens[b]);
}

/* Head h of example b, forward: for every query q, the scores against
 * every key (K_hᵀ transposed into c->Ht so that they are p rows added),
 * the mask, the softmax into c->A, the weighted sum of the values into
 * c->O. Inlined with constant T and p for the defaults, when the row of
 * scores (T,) and the head output (p,) stay in registers. */
static inline void head_forward(tfast_cache *c, size_t b, size_t h, size_t T, size_t p, size_t d,
                                size_t NH, const long *lens, int causal,
                                const mha_dropout *drop, float inv_sqrt_p, float keep_scale)
{
    const int dropping = drop && drop->p > 0;
    size_t q, k, i;
    float *restrict Ht = c->Ht;
    for (k = 0; k < T; k++)
        for (i = 0; i < p; i++)
            Ht[i * T + k] = c->K[(b * T + k) * d + h * p + i];
    for (q = 0; q < T; q++) {
        const size_t row = ((b * NH + h) * T + q) * T;
        const float *restrict qq = c->Q + (b * T + q) * d + h * p;
        float *restrict a = c->A + row, *restrict o = c->O + (b * T + q) * d + h * p;
        float max, sum = 0.0f;
        /* scores Q_h[q] · K_h[k] / √p for every k, masked keys −1e6 */
        for (k = 0; k < T; k++)
            a[k] = 0.0f;
        for (i = 0; i < p; i++) {
            const float qi = qq[i], *kt = Ht + i * T;
#pragma omp simd
            for (k = 0; k < T; k++)
                a[k] += qi * kt[k];
        }
        for (k = 0; k < T; k++)
            a[k] = masked(lens, causal, b, q, k) ? ATTN_MASK_VALUE : a[k] * inv_sqrt_p;
        /* softmax over the keys, the largest subtracted first */
        max = a[0];
        for (k = 1; k < T; k++)
            max = a[k] > max ? a[k] : max;
        for (k = 0; k < T; k++)
            sum += (a[k] = expf(a[k] - max));
        for (k = 0; k < T; k++)
            a[k] /= sum;
        /* head output Σ_k a_k V_h[k] (a_k through dropout in training) */
        for (i = 0; i < p; i++)
            o[i] = 0.0f;
        for (k = 0; k < T; k++) {
            const float *v = c->V + (b * T + k) * d + h * p;
            float ak = a[k];
            if (dropping)
                ak = mha_dropout_keep(drop, row + k) ? ak * keep_scale : 0.0f;
#pragma omp simd
            for (i = 0; i < p; i++)
                o[i] += ak * v[i];
        }
    }
}

/* Head h of example b, backward: for every query q, da = dO · V_hᵀ (V_h
 * transposed into c->Ht), dV_h += a dO, the softmax's backward
 * dS = A ⊙ (dA − Σ dA ⊙ A) (zero at masked keys), the 1/√p scale, then
 * dQ_h[q] += dS K_h and dK_h += dS Q_h[q]. */
static inline void head_backward(tfast_cache *c, size_t b, size_t h, size_t T, size_t p,
                                 size_t d, size_t NH, const long *lens, int causal,
                                 const mha_dropout *drop, float inv_sqrt_p, float keep_scale)
{
    const int dropping = drop && drop->p > 0;
    size_t q, k, i;
    float *restrict Ht = c->Ht, *restrict dA = c->dA;
    for (k = 0; k < T; k++)
        for (i = 0; i < p; i++)
            Ht[i * T + k] = c->V[(b * T + k) * d + h * p + i];
    for (q = 0; q < T; q++) {
        const size_t row = ((b * NH + h) * T + q) * T;
        const float *restrict a = c->A + row, *restrict dO = c->dO + (b * T + q) * d + h * p;
        const float *restrict qq = c->Q + (b * T + q) * d + h * p;
        float *restrict dq = c->dQ + (b * T + q) * d + h * p, dot = 0.0f;
        /* da_k = dO · V_h[k] for every k */
        for (k = 0; k < T; k++)
            dA[k] = 0.0f;
        for (i = 0; i < p; i++) {
            const float g = dO[i], *vt = Ht + i * T;
#pragma omp simd
            for (k = 0; k < T; k++)
                dA[k] += g * vt[k];
        }
        for (k = 0; k < T; k++) {
            float *restrict dv = c->dV + (b * T + k) * d + h * p, ak = a[k];
            int keep = !dropping || mha_dropout_keep(drop, row + k);
            if (dropping) {
                ak = keep ? ak * keep_scale : 0.0f;
                dA[k] = keep ? dA[k] * keep_scale : 0.0f;
            }
            /* dV_h[k] += a_k dO */
#pragma omp simd
            for (i = 0; i < p; i++)
                dv[i] += ak * dO[i];
            dot += dA[k] * a[k];
        }
        for (k = 0; k < T; k++) {
            const float *restrict kk = c->K + (b * T + k) * d + h * p;
            float *restrict dk = c->dK + (b * T + k) * d + h * p, ds;
            if (masked(lens, causal, b, q, k))
                continue;
            ds = a[k] * (dA[k] - dot) * inv_sqrt_p;
#pragma omp simd
            for (i = 0; i < p; i++) {
                dq[i] += ds * kk[i];
                dk[i] += ds * qq[i];
            }
        }
    }
}

/* The sizes and constants of one step, as train_fast.h names them. */
typedef struct step_dims {
    size_t B, T, BT, d, NH, p, C;
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
                x[i] = e[i] * s->sqrt_d + P[i];
        } else {
#pragma omp simd
            for (i = 0; i < d; i++)
                x[i] = e[i] * s->sqrt_d;
        }
    }
}

/* 2. attention: Q, K, V (B, T, d), then per head softmax(Q Kᵀ/√p, masked)
 * into A (B, NH, T, T) and ·V into O (B, T, d), then Y = O W_oᵀ */
static void attention_forward(tfast_cache *c, const tmodel *m, const tfast_weights *w,
                              const step_dims *s)
{
    const size_t d = s->d, BT = s->BT;
    size_t b, h;
    lin_fwd(c->Q, c->X, BT, w->Wq, m->mha.W_q.bias.data, d, d);
    lin_fwd(c->K, c->X, BT, w->Wk, m->mha.W_k.bias.data, d, d);
    lin_fwd(c->V, c->X, BT, w->Wv, m->mha.W_v.bias.data, d, d);
    for (b = 0; b < s->B; b++)
        for (h = 0; h < s->NH; h++) {
            if (s->T == 8 && s->p == 8) /* the defaults: a row of scores fits a register */
                head_forward(c, b, h, 8, 8, d, s->NH, s->lens, s->causal, s->drop, s->inv_sqrt_p,
                             s->keep_scale);
            else
                head_forward(c, b, h, s->T, s->p, d, s->NH, s->lens, s->causal, s->drop,
                             s->inv_sqrt_p, s->keep_scale);
        }
    lin_fwd(c->Y, c->O, BT, w->Wo, m->mha.W_o.bias.data, d, d);
}

/* 3. (addnorm) N (B, T, d) = LayerNorm(X + Y), 1/σ into rstd (B, T) */
static void addnorm_forward(tfast_cache *c, const tmodel *m, const step_dims *s)
{
    const size_t d = s->d;
    size_t r, i;
    for (r = 0; r < s->BT; r++) {
        const float *x = c->X + r * d, *y = c->Y + r * d;
        float *nr = c->N + r * d, mean = 0.0f, var = 0.0f, rs;
#pragma omp simd reduction(+ : mean)
        for (i = 0; i < d; i++)
            mean += x[i] + y[i];
        mean /= (float)d;
#pragma omp simd reduction(+ : var)
        for (i = 0; i < d; i++) {
            float z = x[i] + y[i] - mean;
            var += z * z;
        }
        rs = 1.0f / sqrtf(var / (float)d + LN_EPS);
        c->rstd[r] = rs;
        /* x̂ = (Z − mean)/σ waits in dY's buffer for the backward pass */
        for (i = 0; i < d; i++) {
            float xh = (x[i] + y[i] - mean) * rs;
            c->dY[r * d + i] = xh;
            nr[i] = xh * m->ln_weight.data[i] + m->ln_bias.data[i];
        }
    }
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
        for (k = 0; k < C; k++)
            sum += (dz[k] = expf(z[k] - max));
        loss += max + log(sum) - z[targets[r]];
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

/* 3'. LayerNorm backward, from dN (B, T, d) and x̂ in dY: d ln.weight,
 * d ln.bias, and dZ = rstd (dx̂ − mean(dx̂) − x̂ mean(dx̂ x̂)), where
 * dx̂ = dN ⊙ ln.weight, into both dY and dX (the residual) */
static void addnorm_backward(float *grads, tfast_cache *c, const tmodel *m, const step_dims *s)
{
    const size_t d = s->d;
    float *dgamma = grad_of(grads, m, &m->ln_weight), *dbeta = grad_of(grads, m, &m->ln_bias);
    size_t r, i;
    for (r = 0; r < s->BT; r++) {
        const float *dn = c->dN + r * d;
        float *xh = c->dY + r * d; /* x̂, replaced by dZ below */
        float m1 = 0.0f, m2 = 0.0f;
        for (i = 0; i < d; i++) {
            float dxh = dn[i] * m->ln_weight.data[i];
            dgamma[i] += dn[i] * xh[i];
            dbeta[i] += dn[i];
            m1 += dxh;
            m2 += dxh * xh[i];
        }
        m1 /= (float)d;
        m2 /= (float)d;
        for (i = 0; i < d; i++) {
            float dz = c->rstd[r] * (dn[i] * m->ln_weight.data[i] - m1 - xh[i] * m2);
            xh[i] = dz;
            c->dX[r * d + i] = dz;
        }
    }
}

/* 2'. attention backward, from dY (B, T, d): d W_o and dO; per head dA,
 * dV, dS, dQ, dK; then d W_q, d W_k, d W_v, and dX += dQ W_q + dK W_k +
 * dV W_v */
static void attention_backward(float *grads, tfast_cache *c, const tmodel *m, const step_dims *s)
{
    const size_t d = s->d, BT = s->BT, bytes = BT * d * sizeof(float);
    size_t b, h;
    memset(c->dO, 0, bytes);
    memset(c->dQ, 0, bytes);
    memset(c->dK, 0, bytes);
    memset(c->dV, 0, bytes);
    lin_bwd(c->dO, grad_of(grads, m, &m->mha.W_o.weight), grad_of(grads, m, &m->mha.W_o.bias),
            c->dY, c->O, BT, m->mha.W_o.weight.data, d, d);
    for (b = 0; b < s->B; b++)
        for (h = 0; h < s->NH; h++) {
            if (s->T == 8 && s->p == 8)
                head_backward(c, b, h, 8, 8, d, s->NH, s->lens, s->causal, s->drop, s->inv_sqrt_p,
                              s->keep_scale);
            else
                head_backward(c, b, h, s->T, s->p, d, s->NH, s->lens, s->causal, s->drop,
                              s->inv_sqrt_p, s->keep_scale);
        }
    lin_bwd(c->dX, grad_of(grads, m, &m->mha.W_q.weight), grad_of(grads, m, &m->mha.W_q.bias),
            c->dQ, c->X, BT, m->mha.W_q.weight.data, d, d);
    lin_bwd(c->dX, grad_of(grads, m, &m->mha.W_k.weight), grad_of(grads, m, &m->mha.W_k.bias),
            c->dK, c->X, BT, m->mha.W_k.weight.data, d, d);
    lin_bwd(c->dX, grad_of(grads, m, &m->mha.W_v.weight), grad_of(grads, m, &m->mha.W_v.bias),
            c->dV, c->X, BT, m->mha.W_v.weight.data, d, d);
}

/* 1'. d embedding[token] += dX · √d */
static void embed_backward(float *grads, const tfast_cache *c, const tmodel *m, const int *tokens,
                           const step_dims *s)
{
    const size_t d = s->d;
    float *dE = grad_of(grads, m, &m->embedding);
    size_t r, i;
    for (r = 0; r < s->BT; r++) {
        float *de = dE + (size_t)tokens[r] * d;
        const float *dx = c->dX + r * d;
#pragma omp simd
        for (i = 0; i < d; i++)
            de[i] += dx[i] * s->sqrt_d;
    }
}

double tfast_step(float *grads, tfast_cache *c, const tmodel *m, const tfast_weights *w,
                  const int *tokens, const long *lens, const int *targets, size_t B, size_t T,
                  double scale, const mha_dropout *drop, size_t *count, size_t *correct)
{
    const size_t d = m->cfg.hiddens, NH = m->cfg.heads, p = d / NH;
    const int dropping = drop && drop->p > 0;
    const step_dims s = {
        .B = B,
        .T = T,
        .BT = B * T,
        .d = d,
        .NH = NH,
        .p = p,
        .C = m->cfg.classes,
        .sqrt_d = (float)sqrt((double)d),
        .inv_sqrt_p = (float)(1.0 / sqrt((double)p)),
        .keep_scale = dropping ? (float)(1.0 / (1.0 - drop->p)) : 1.0f,
        .causal = m->cfg.causal,
        .lens = lens,
        .drop = drop,
    };
    const size_t bytes = s.BT * d * sizeof(float);
    const float *feat = m->cfg.addnorm ? c->N : c->Y; /* (B, T, d) the head's input */
    double loss;

    embed_forward(c, m, tokens, &s);
    attention_forward(c, m, w, &s);
    if (m->cfg.addnorm)
        addnorm_forward(c, m, &s);
    /* 4. logits (B, T, C) = feat · head.weightᵀ + head.bias */
    lin_fwd(c->logits, feat, s.BT, w->head, m->head_bias.data, d, s.C);
    if (!targets)
        return 0.0;
    loss = loss_forward_backward(c, targets, scale, &s, count, correct);
    if (!grads)
        return loss;

    /* 4'. d head.weight, d head.bias, dN = d logits · head.weight */
    memset(c->dN, 0, bytes);
    lin_bwd(c->dN, grad_of(grads, m, &m->head_weight), grad_of(grads, m, &m->head_bias), c->dlogits,
            feat, s.BT, m->head_weight.data, d, s.C);
    memset(c->dX, 0, bytes);
    if (m->cfg.addnorm)
        addnorm_backward(grads, c, m, &s);
    else
        memcpy(c->dY, c->dN, bytes); /* dY = dN */
    attention_backward(grads, c, m, &s);
    embed_backward(grads, c, m, tokens, &s);
    return loss;
}
