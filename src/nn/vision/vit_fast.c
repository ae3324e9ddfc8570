/* vit_fast.c — vit.h's fast path: the same ViT, one image at a time, in
 * the buffers of vit_work (so the attention figures and the rollout read
 * either path), with its matrix products in float32 lanes (lanes.h) and
 * GELU from e^x in lanes instead of the reference's double erf.
 *
 * What stays as in vit.c: the LayerNorms, the patches, the tokens and
 * the head (a few hundred numbers an image); the attention's own T × T
 * core runs in float with double sums. The gradients of the parameters
 * are doubles as in the reference: each image's sums are float lanes,
 * added to them once per image.
 *
 * Every sum runs in a fixed order (lanes.h: one IEEE operation per lane,
 * the fused multiply-add written where it is used), so the bits are the
 * same on every machine and for any number of threads; test_vit compares
 * them with the reference loops.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "checked.h"
#include "lanes.h"
#include "layers.h"
#include "rng.h"
#include "vit.h"
#include "vit_work.h"

/* ---- the weights as the forward pass reads them ------------------------ */

/* One linear layer's weight (out, in) transposed to (in, out): the
 * forward pass's lanes run along the outputs. */
typedef struct fast_linear {
    float *WT;          /* (in, out) */
    const float *bias;  /* (out,) or NULL */
    size_t in, out;
} fast_linear;

struct vit_fast {
    fast_linear conv;           /* (K, d) */
    fast_linear *q, *k, *v, *o; /* (L,) each (d, d) */
    fast_linear *d1, *d2;       /* (L,) (d, F) and (F, d) */
    size_t L;
};

static int fl_alloc(fast_linear *f, size_t in, size_t out)
{
    size_t n;
    f->in = in;
    f->out = out;
    f->WT = size_mul(in, out, &n) ? NULL : malloc(n * sizeof(float));
    return f->WT == NULL;
}

static void fl_set(fast_linear *f, const float *W, const float *bias)
{
    /* WT[i][o] = W[o][i] */
    for (size_t o = 0; o < f->out; o++)
        for (size_t i = 0; i < f->in; i++)
            f->WT[i * f->out + o] = W[o * f->in + i];
    f->bias = bias;
}

void vit_fast_free(vit_fast *f)
{
    if (f == NULL)
        return;
    free(f->conv.WT);
    fast_linear *all[6] = {f->q, f->k, f->v, f->o, f->d1, f->d2};
    for (int j = 0; j < 6; j++) {
        for (size_t l = 0; all[j] && l < f->L; l++)
            free(all[j][l].WT);
        free(all[j]);
    }
    free(f);
}

vit_fast *vit_fast_alloc(const vit_model *m)
{
    const size_t d = m->cfg.hiddens, F = m->cfg.ffn, L = m->cfg.layers;
    vit_fast *f = calloc(1, sizeof *f);
    if (f == NULL)
        return NULL;
    f->L = L;
    fast_linear **all[6] = {&f->q, &f->k, &f->v, &f->o, &f->d1, &f->d2};
    int bad = fl_alloc(&f->conv, m->K, d);
    for (int j = 0; j < 6 && !bad; j++)
        bad = (*all[j] = calloc(L, sizeof(fast_linear))) == NULL;
    for (size_t l = 0; l < L && !bad; l++)
        bad = fl_alloc(&f->q[l], d, d) || fl_alloc(&f->k[l], d, d) || fl_alloc(&f->v[l], d, d) ||
              fl_alloc(&f->o[l], d, d) || fl_alloc(&f->d1[l], d, F) || fl_alloc(&f->d2[l], F, d);
    if (bad) {
        vit_fast_free(f);
        return NULL;
    }
    return f;
}

void vit_fast_prepare(vit_fast *f, const vit_model *m)
{
    fl_set(&f->conv, m->conv_w.data, m->conv_b.data);
    for (size_t l = 0; l < f->L; l++) {
        const vit_block *b = &m->blks[l];
        fl_set(&f->q[l], b->att.W_q.weight.data, NULL);
        fl_set(&f->k[l], b->att.W_k.weight.data, NULL);
        fl_set(&f->v[l], b->att.W_v.weight.data, NULL);
        fl_set(&f->o[l], b->att.W_o.weight.data, NULL);
        fl_set(&f->d1[l], b->dense1.weight.data, b->dense1.bias.data);
        fl_set(&f->d2[l], b->dense2.weight.data, b->dense2.bias.data);
    }
}

/* ---- the three products of a linear layer, in lanes -------------------- */

/* y (n, out) = x (n, in) · W + bias: lane o of a block sums
 * bias[o] + x[r][0]·W[o][0] + x[r][1]·W[o][1] + … in that order (fma). */
static void lin_forward(float *y, const float *x, size_t n, const fast_linear *f)
{
    const size_t in = f->in, out = f->out;
    size_t r = 0;
    if (out % (4 * V16) == 0) /* two rows at once: each load of Wᵀ serves both */
        for (; r + 2 <= n; r += 2) {
            const float *x0 = x + r * in, *x1 = x0 + in; /* (in,) each */
            for (size_t o = 0; o < out; o += 4 * V16) {
                f32x16 a[4], c[4];
                for (int j = 0; j < 4; j++)
                    a[j] = c[j] = f->bias ? v16_load(f->bias + o + j * V16) : v16_splat(0.0f);
                for (size_t i = 0; i < in; i++) {
                    const f32x16 u = v16_splat(x0[i]), v = v16_splat(x1[i]);
                    const float *w = f->WT + i * out + o;
                    for (int j = 0; j < 4; j++) {
                        const f32x16 wj = v16_load(w + j * V16);
                        a[j] = v16_fma(u, wj, a[j]);
                        c[j] = v16_fma(v, wj, c[j]);
                    }
                }
                for (int j = 0; j < 4; j++) {
                    v16_store(y + r * out + o + j * V16, a[j]);
                    v16_store(y + (r + 1) * out + o + j * V16, c[j]);
                }
            }
        }
    for (; r < n; r++) {
        const float *xr = x + r * in; /* (in,) */
        float *yr = y + r * out;      /* (out,) */
        size_t o = 0;
        for (; o + 4 * V16 <= out; o += 4 * V16) { /* four blocks of 16 outputs at once */
            f32x16 a[4];
            for (int j = 0; j < 4; j++)
                a[j] = f->bias ? v16_load(f->bias + o + j * V16) : v16_splat(0.0f);
            for (size_t i = 0; i < in; i++) {
                const f32x16 xi = v16_splat(xr[i]);
                const float *w = f->WT + i * out + o; /* (64,) of row i of Wᵀ */
                for (int j = 0; j < 4; j++)
                    a[j] = v16_fma(xi, v16_load(w + j * V16), a[j]);
            }
            for (int j = 0; j < 4; j++)
                v16_store(yr + o + j * V16, a[j]);
        }
        for (; o < out; o += V16) { /* the rest, 16 (or fewer) at a time */
            const size_t k = out - o < V16 ? out - o : V16;
            f32x16 a = f->bias ? v16_load_part(f->bias + o, k, 0.0f) : v16_splat(0.0f);
            for (size_t i = 0; i < in; i++)
                a = v16_fma(v16_splat(xr[i]), v16_load_part(f->WT + i * out + o, k, 0.0f), a);
            v16_store_part(yr + o, a, k);
        }
    }
}

/* dx (n, in) = dy (n, out) · W, W (out, in) as the model holds it: lane i
 * of a block sums dy[r][0]·W[0][i] + dy[r][1]·W[1][i] + … in order (four
 * blocks of 16 at once where they fit, their sums independent). */
static void lin_dx(float *dx, const float *dy, size_t n, const float *W, size_t in, size_t out)
{
    size_t r = 0;
    if (in % (4 * V16) == 0) /* two rows at once: each load of W serves both */
        for (; r + 2 <= n; r += 2) {
            const float *g0 = dy + r * out, *g1 = g0 + out; /* (out,) each */
            for (size_t i = 0; i < in; i += 4 * V16) {
                f32x16 a[4], c[4];
                for (int j = 0; j < 4; j++)
                    a[j] = c[j] = v16_splat(0.0f);
                for (size_t o = 0; o < out; o++) {
                    const f32x16 u = v16_splat(g0[o]), v = v16_splat(g1[o]);
                    const float *wo = W + o * in + i;
                    for (int j = 0; j < 4; j++) {
                        const f32x16 wj = v16_load(wo + j * V16);
                        a[j] = v16_fma(u, wj, a[j]);
                        c[j] = v16_fma(v, wj, c[j]);
                    }
                }
                for (int j = 0; j < 4; j++) {
                    v16_store(dx + r * in + i + j * V16, a[j]);
                    v16_store(dx + (r + 1) * in + i + j * V16, c[j]);
                }
            }
        }
    for (; r < n; r++) {
        const float *dyr = dy + r * out; /* (out,) */
        float *dxr = dx + r * in;        /* (in,) */
        size_t i = 0;
        for (; i + 4 * V16 <= in; i += 4 * V16) {
            f32x16 a[4] = {v16_splat(0.0f), v16_splat(0.0f), v16_splat(0.0f), v16_splat(0.0f)};
            for (size_t o = 0; o < out; o++) {
                const f32x16 g = v16_splat(dyr[o]);
                const float *wo = W + o * in + i; /* (64,) of row o */
                for (int j = 0; j < 4; j++)
                    a[j] = v16_fma(g, v16_load(wo + j * V16), a[j]);
            }
            for (int j = 0; j < 4; j++)
                v16_store(dxr + i + j * V16, a[j]);
        }
        for (; i < in; i += V16) {
            const size_t k = in - i < V16 ? in - i : V16;
            f32x16 a = v16_splat(0.0f);
            for (size_t o = 0; o < out; o++)
                a = v16_fma(v16_splat(dyr[o]), v16_load_part(W + o * in + i, k, 0.0f), a);
            v16_store_part(dxr + i, a, k);
        }
    }
}

/* the float sums a (k,) added to the double row d (a whole lane's 16 in
 * a loop of fixed length, which the compiler runs in double lanes) */
static inline void add_row(double *d, f32x16 a, size_t k)
{
    float s[V16];
    v16_store(s, a);
    if (k == V16)
        for (size_t j = 0; j < V16; j++)
            d[j] += s[j];
    else
        for (size_t j = 0; j < k; j++)
            d[j] += s[j];
}

/* dW (out, in) += Σ_r dy[r][o]·x[r][i] and dbias (out,) += Σ_r dy[r][o]:
 * this image's sums over its n rows in float lanes (r in order), each
 * added once to the double gradient (four rows of dW at once where they
 * fit, their sums independent). dbias may be NULL. */
static void lin_dw(double *dW, double *dbias, const float *dy, const float *x, size_t n,
                   size_t in, size_t out)
{
    size_t o = 0;
    if (in % V16 == 0) /* eight rows of dW at once: eight independent sums */
        for (; o + 8 <= out; o += 8)
            for (size_t i = 0; i < in; i += V16) {
                f32x16 a[8];
                for (int j = 0; j < 8; j++)
                    a[j] = v16_splat(0.0f);
                for (size_t r = 0; r < n; r++) {
                    const f32x16 xr = v16_load(x + r * in + i);
                    for (int j = 0; j < 8; j++)
                        a[j] = v16_fma(v16_splat(dy[r * out + o + (size_t)j]), xr, a[j]);
                }
                for (int j = 0; j < 8; j++)
                    add_row(dW + (o + (size_t)j) * in + i, a[j], V16);
            }
    for (; o + 4 <= out; o += 4)
        for (size_t i = 0; i < in; i += V16) {
            const size_t k = in - i < V16 ? in - i : V16;
            f32x16 a[4] = {v16_splat(0.0f), v16_splat(0.0f), v16_splat(0.0f), v16_splat(0.0f)};
            for (size_t r = 0; r < n; r++) {
                const f32x16 xr = k == V16 ? v16_load(x + r * in + i)
                                           : v16_load_part(x + r * in + i, k, 0.0f);
                for (int j = 0; j < 4; j++)
                    a[j] = v16_fma(v16_splat(dy[r * out + o + (size_t)j]), xr, a[j]);
            }
            for (int j = 0; j < 4; j++)
                add_row(dW + (o + (size_t)j) * in + i, a[j], k);
        }
    for (; o < out; o++)
        for (size_t i = 0; i < in; i += V16) {
            const size_t k = in - i < V16 ? in - i : V16;
            f32x16 a = v16_splat(0.0f);
            for (size_t r = 0; r < n; r++)
                a = v16_fma(v16_splat(dy[r * out + o]), v16_load_part(x + r * in + i, k, 0.0f),
                            a);
            add_row(dW + o * in + i, a, k);
        }
    if (dbias) /* each output's sum over r in order, 16 outputs at once */
        for (o = 0; o < out; o += V16) {
            const size_t k = out - o < V16 ? out - o : V16;
            double s[V16] = {0};
            for (size_t r = 0; r < n; r++)
                for (size_t j = 0; j < V16; j++)
                    s[j] += j < k ? dy[r * out + o + j] : 0.0f;
            for (size_t j = 0; j < k; j++)
                dbias[o + j] += s[j];
        }
}

/* ---- GELU in lanes ------------------------------------------------------ */

/* Φ(x), the standard normal CDF, and φ(x) its density, of 16 values:
 * erf by Abramowitz and Stegun 7.1.26 (|error| ≤ 1.5e-7, about a float's
 * rounding at 1), whose e^(−z²) with z = |x|/√2 is φ's e^(−x²/2) too. */
static inline f32x16 v16_normal_cdf(f32x16 x, f32x16 *pdf)
{
    const f32x16 zero = v16_splat(0.0f), one = v16_splat(1.0f);
    const f32x16 ax = v16_select(x < zero, -x, x);
    const f32x16 z = ax * v16_splat(0.70710678f); /* |x|/√2 */
    const f32x16 t = one / v16_fma(v16_splat(0.3275911f), z, one);
    f32x16 poly = v16_splat(1.061405429f);
    poly = v16_fma(poly, t, v16_splat(-1.453152027f));
    poly = v16_fma(poly, t, v16_splat(1.421413741f));
    poly = v16_fma(poly, t, v16_splat(-0.284496736f));
    poly = v16_fma(poly, t, v16_splat(0.254829592f));
    poly = poly * t;
    const f32x16 e = v16_exp(-(z * z));            /* e^(−x²/2) */
    const f32x16 erf_abs = v16_fma(-poly, e, one); /* erf(|x|/√2) */
    const f32x16 erf = v16_select(x < zero, -erf_abs, erf_abs);
    *pdf = e * v16_splat(0.39894228f); /* e^(−x²/2)/√(2π) */
    return v16_splat(0.5f) * (one + erf);
}

/* g (n,) = GELU(h) = h·Φ(h), and gd (n,) = GELU'(h) = Φ(h) + h·φ(h) for
 * the backward pass, from the same Φ and φ */
static void gelu_rows(float *g, float *gd, const float *h, size_t n)
{
    size_t i = 0;
    for (; i + V16 <= n; i += V16) { /* whole lanes */
        const f32x16 x = v16_load(h + i);
        f32x16 pdf;
        const f32x16 cdf = v16_normal_cdf(x, &pdf);
        v16_store(g + i, x * cdf);
        v16_store(gd + i, v16_fma(x, pdf, cdf));
    }
    if (i < n) { /* the rest, the same lanes' arithmetic */
        const size_t k = n - i;
        const f32x16 x = v16_load_part(h + i, k, 0.0f);
        f32x16 pdf;
        const f32x16 cdf = v16_normal_cdf(x, &pdf);
        v16_store_part(g + i, x * cdf, k);
        v16_store_part(gd + i, v16_fma(x, pdf, cdf), k);
    }
}

/* dh (n,) = dg · GELU'(h), gd (n,) the forward pass's GELU'(h) */
static void gelu_grad_rows(float *dh, const float *dg, const float *gd, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dh[i] = dg[i] * gd[i];
}

/* ---- the block ----------------------------------------------------------- */

/* y (n,) = Σ_j a[j] · X[j·stride …] over j < na, in order of j (fma),
 * each block of 16 outputs summed in registers */
static void gemv_rows(float *y, const float *a, size_t na, const float *X, size_t stride,
                      size_t n)
{
    size_t c = 0;
    for (; c + 2 * V16 <= n; c += 2 * V16) { /* two blocks: two independent sums */
        f32x16 s0 = v16_splat(0.0f), s1 = v16_splat(0.0f);
        for (size_t j = 0; j < na; j++) {
            const f32x16 aj = v16_splat(a[j]);
            s0 = v16_fma(aj, v16_load(X + j * stride + c), s0);
            s1 = v16_fma(aj, v16_load(X + j * stride + c + V16), s1);
        }
        v16_store(y + c, s0);
        v16_store(y + c + V16, s1);
    }
    for (; c < n; c += V16) {
        const size_t k = n - c < V16 ? n - c : V16;
        f32x16 s0 = v16_splat(0.0f);
        if (k == V16)
            for (size_t j = 0; j < na; j++)
                s0 = v16_fma(v16_splat(a[j]), v16_load(X + j * stride + c), s0);
        else
            for (size_t j = 0; j < na; j++)
                s0 = v16_fma(v16_splat(a[j]), v16_load_part(X + j * stride + c, k, 0.0f), s0);
        if (k == V16)
            v16_store(y + c, s0);
        else
            v16_store_part(y + c, s0, k);
    }
}

/* T rounded up to whole lanes */
static size_t padded(size_t T)
{
    return (T + V16 - 1) / V16 * V16;
}

/* XT (dh, Tp) = head h's columns of X (T, d), transposed, each row's
 * Tp − T last entries 0 (Tp = padded(T)): whole lanes along T */
static void head_transposed(float *XT, const float *X, size_t T, size_t d, size_t h, size_t dh)
{
    const size_t Tp = padded(T);
    for (size_t c = 0; c < dh; c++) {
        for (size_t k = 0; k < T; k++)
            XT[c * Tp + k] = X[k * d + h * dh + c];
        for (size_t k = T; k < Tp; k++)
            XT[c * Tp + k] = 0.0f;
    }
}

/* The attention core of one image, per head h (dh = d/NH columns):
 * W_h (T, T) = softmax(Q_h K_hᵀ/√dh) kept in b->W (before dropout), and
 * concat_h = dropout(W_h) · V_h (b->keep_att the mask, with p > 0);
 * lanes along the keys for the scores (K_h transposed), along the
 * columns for concat. */
static void attention_core(vit_work *w, vit_bwork *b, const vit_model *m, const mha_dropout *ad)
{
    const size_t T = m->T, d = m->cfg.hiddens, NH = m->cfg.heads, dh = d / NH;
    const size_t Tp = padded(T);
    const float scale = (float)(1.0 / sqrt((double)dh));
    const double keep_div = 1.0 - ad->p; /* a kept weight ÷ (1 − p) */
    float *row = w->row; /* (Tp,) the scores, then dropout(W) */
    for (size_t h = 0; h < NH; h++) {
        head_transposed(w->KT, b->Kp, T, d, h, dh); /* (dh, Tp) */
        for (size_t q = 0; q < T; q++) {
            const float *Qq = b->Qp + q * d + h * dh; /* (dh,) */
            float *Wq = b->W + (h * T + q) * T;       /* (T,) */
            /* scores: Wq[k] = Σ_c Q[q][c] · K[k][c], c in order */
            gemv_rows(row, Qq, dh, w->KT, Tp, Tp);
            float mx = -INFINITY;
            for (size_t k = 0; k < T; k++) {
                Wq[k] = row[k] * scale;
                mx = Wq[k] > mx ? Wq[k] : mx;
            }
            const float sum = v16_exp_row(Wq, T, mx);
            for (size_t k = 0; k < T; k++)
                Wq[k] /= sum;
            /* concat[q][h·dh + c] = Σ_k dropout(W)[q][k] · V[k][h·dh + c] */
            const unsigned char *keep = b->keep_att + (h * T + q) * T; /* (T,) */
            if (ad->p > 0)
                for (size_t k = 0; k < T; k++) { /* no branch: the compiler's lanes */
                    const float kept = (float)(Wq[k] / keep_div);
                    row[k] = keep[k] ? kept : 0.0f;
                }
            else
                for (size_t k = 0; k < T; k++)
                    row[k] = Wq[k];
            gemv_rows(b->concat + q * d + h * dh, row, T, b->Vp + h * dh, d, dh);
        }
    }
}

static void block_forward(vit_work *w, const vit_model *m, const vit_fast *f, size_t l,
                          const vit_drop *drop)
{
    const size_t T = m->T, d = m->cfg.hiddens, F = m->cfg.ffn;
    const size_t NH = m->cfg.heads;
    const int dr = vit_dropping(drop);
    const double keep_scale = dr ? 1.0 / (1.0 - drop->p) : 1.0;
    const vit_block *blk = &m->blks[l];
    vit_bwork *b = &w->b[l];
    /* the block's three dropout masks (vit_keeps's, in lanes), kept for the
     * backward pass */
    if (dr) {
        rng_keep_mask(b->keep_att, vit_site_seed(drop, 1 + 3 * l), NH * T * T, drop->p);
        rng_keep_mask(b->keep_gelu, vit_site_seed(drop, 2 + 3 * l), T * F, drop->p);
        rng_keep_mask(b->keep_out, vit_site_seed(drop, 3 + 3 * l), T * d, drop->p);
    }
    /* N1 = LN1(X); Q, K, V (T, d) = N1 · W_qᵀ, W_kᵀ, W_vᵀ */
    layernorm_forward(b->N1, b->mean1, b->rstd1, b->X, blk->ln1_w.data, blk->ln1_b.data, T,
                      d);
    lin_forward(b->Qp, b->N1, T, &f->q[l]);
    lin_forward(b->Kp, b->N1, T, &f->k[l]);
    lin_forward(b->Vp, b->N1, T, &f->v[l]);
    const mha_dropout ad = {dr ? drop->p : 0.0, dr ? vit_site_seed(drop, 1 + 3 * l) : 0};
    attention_core(w, b, m, &ad);
    /* A = concat · W_oᵀ; X1 = X + A */
    lin_forward(b->A, b->concat, T, &f->o[l]);
    for (size_t i = 0; i < T * d; i++)
        b->X1[i] = (float)(b->X[i] + b->A[i]);
    /* N2 = LN2(X1); H = dense1(N2); G = dropout(GELU(H)) */
    layernorm_forward(b->N2, b->mean2, b->rstd2, b->X1, blk->ln2_w.data, blk->ln2_b.data, T,
                      d);
    lin_forward(b->H, b->N2, T, &f->d1[l]);
    gelu_rows(b->G, b->GD, b->H, T * F);
    if (dr)
        for (size_t i = 0; i < T * F; i++)
            b->G[i] = b->keep_gelu[i] ? (float)(b->G[i] * keep_scale) : 0.0f;
    /* M = dense2(G); X' = X1 + dropout(M) */
    lin_forward(b->M, b->G, T, &f->d2[l]);
    double *next = l + 1 < m->cfg.layers ? w->b[l + 1].X : w->XL;
    for (size_t i = 0; i < T * d; i++) {
        double mv = dr ? (b->keep_out[i] ? (float)(b->M[i] * keep_scale) : 0.0) : b->M[i];
        next[i] = (float)(b->X1[i] + mv);
    }
}

void vit_forward_fast(vit_work *w, float *logits, const vit_model *m, const vit_fast *f,
                      const float *image, const vit_drop *drop)
{
    vit_patchify(w, m, image);
    lin_forward(w->E, w->patches, m->P, &f->conv); /* E (P, d) */
    vit_tokens(w, m, drop);
    for (size_t l = 0; l < m->cfg.layers; l++)
        block_forward(w, m, f, l, drop);
    vit_head(w, logits, m);
}

/* ---- backwards ---------------------------------------------------------- */

static void to_float(float *y, const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = (float)x[i];
}

/* The attention core backwards, from dC = ∂/∂concat (T, d): dQ, dK, dV
 * (T, d), through dropout(W)'s mask and the softmax; lanes along the
 * keys for ∂/∂W (V_h transposed), along the columns for the rest. dV and
 * dK sum over the queries: dropout(W_h) and dS_h are kept transposed
 * (w->PT, w->ST), and each key's row sums its column, queries in order. */
static void attention_core_backward(vit_work *w, const vit_bwork *b, const vit_model *m,
                                    const mha_dropout *ad)
{
    const size_t T = m->T, d = m->cfg.hiddens, NH = m->cfg.heads, dh = d / NH;
    const size_t Tp = padded(T);
    const float scale = (float)(1.0 / sqrt((double)dh));
    /* a kept weight's factor 1/(1 − p) (0 where dropped) */
    const float kept_scale = ad->p > 0 ? (float)(1.0 / (1.0 - ad->p)) : 1.0f;
    float *g = w->row;           /* (Tp,) ∂/∂W[q][·], then dS[q][·] */
    float *PT = w->PT, *ST = w->ST; /* (T, T) dropout(W_h)ᵀ and dS_hᵀ */
    for (size_t h = 0; h < NH; h++) {
        head_transposed(w->KT, b->Vp, T, d, h, dh); /* V_hᵀ (dh, Tp) */
        for (size_t q = 0; q < T; q++) {
            const float *Wq = b->W + (h * T + q) * T; /* (T,) before dropout */
            const unsigned char *keep = b->keep_att + (h * T + q) * T; /* (T,) */
            const float *dCq = w->dC + q * d + h * dh;
            /* ∂/∂dropout(W)[q][k] = Σ_c dC[q][c] · V[k][c] */
            gemv_rows(g, dCq, dh, w->KT, Tp, Tp);
            double dot = 0.0;
            for (size_t k = 0; k < T; k++) {
                const float kept = ad->p > 0 ? (keep[k] ? kept_scale : 0.0f) : 1.0f;
                PT[k * T + q] = Wq[k] * kept; /* dropout(W)[q][k] */
                g[k] *= kept;
                dot += (double)g[k] * Wq[k];
            }
            /* softmax: dS = W ⊙ (∂W − Σ W·∂W), then ÷√dh */
            for (size_t k = 0; k < T; k++) {
                g[k] = (float)(Wq[k] * (g[k] - dot)) * scale; /* dS[q][k] */
                ST[k * T + q] = g[k];
            }
            /* dQ[q] = Σ_k dS[q][k] · K[k] */
            gemv_rows(w->dQ + q * d + h * dh, g, T, b->Kp + h * dh, d, dh);
        }
        for (size_t k = 0; k < T; k++) {
            /* dV[k] = Σ_q dropout(W)[q][k] · dC[q]; dK[k] = Σ_q dS[q][k] · Q[q] */
            gemv_rows(w->dV + k * d + h * dh, PT + k * T, T, w->dC + h * dh, d, dh);
            gemv_rows(w->dK + k * d + h * dh, ST + k * T, T, b->Qp + h * dh, d, dh);
        }
    }
}

/* dN (T, d) = Σ of the three projections' input gradients; their weights'
 * gradients added. */
static void projections_backward(vit_work *w, double *grads, const vit_model *m, size_t l)
{
    const size_t T = m->T, d = m->cfg.hiddens;
    const vit_block *blk = &m->blks[l];
    const vit_bwork *b = &w->b[l];
    const float *dP[3] = {w->dQ, w->dK, w->dV};
    const tensor *Wt[3] = {&blk->att.W_q.weight, &blk->att.W_k.weight, &blk->att.W_v.weight};
    for (size_t i = 0; i < T * d; i++)
        w->dN[i] = 0.0;
    for (int j = 0; j < 3; j++) {
        lin_dw(tparam_grad(m->params, m->nparams, grads, Wt[j]), NULL, dP[j], b->N1, T, d, d);
        lin_dx(w->fdx, dP[j], T, Wt[j]->data, d, d);
        for (size_t i = 0; i < T * d; i++)
            w->dN[i] += w->fdx[i];
    }
}

static void block_backward(vit_work *w, double *grads, const vit_model *m, size_t l,
                           const vit_drop *drop)
{
    const size_t T = m->T, d = m->cfg.hiddens, F = m->cfg.ffn;
    const int dr = vit_dropping(drop);
    const double keep_scale = dr ? 1.0 / (1.0 - drop->p) : 1.0;
    const tparam *L = m->params;
    const size_t n = m->nparams;
#define GRAD(t) tparam_grad(L, n, grads, (t))
    const vit_block *blk = &m->blks[l];
    vit_bwork *b = &w->b[l];
    double *dX = w->dX, *dX1 = w->dX1;
    /* X' = X1 + dropout(M): dX1 = dX; dM (as floats, fdy) = dX ⊙ mask · scale */
    for (size_t i = 0; i < T * d; i++) {
        dX1[i] = dX[i];
        w->fdy[i] = (float)(dr ? (b->keep_out[i] ? dX[i] * keep_scale : 0.0) : dX[i]);
    }
    /* M = G · dense2ᵀ + b: dG (T, F) in fdx */
    lin_dw(GRAD(&blk->dense2.weight), GRAD(&blk->dense2.bias), w->fdy, b->G, T, F, d);
    lin_dx(w->fdx, w->fdy, T, blk->dense2.weight.data, F, d);
    /* G = dropout(GELU(H)): dH (T, F) in fdy */
    if (dr)
        for (size_t i = 0; i < T * F; i++)
            w->fdx[i] = b->keep_gelu[i] ? (float)(w->fdx[i] * keep_scale) : 0.0f;
    gelu_grad_rows(w->fdy, w->fdx, b->GD, T * F);
    /* H = N2 · dense1ᵀ + b: dN (T, d) */
    lin_dw(GRAD(&blk->dense1.weight), GRAD(&blk->dense1.bias), w->fdy, b->N2, T, d, F);
    lin_dx(w->fdx, w->fdy, T, blk->dense1.weight.data, d, F);
    for (size_t i = 0; i < T * d; i++)
        w->dN[i] = w->fdx[i];
    /* N2 = LN2(X1): dX1 += … */
    layernorm_backward(dX1, GRAD(&blk->ln2_w), GRAD(&blk->ln2_b), w->dN, b->X1,
                       blk->ln2_w.data, b->mean2, b->rstd2, T, d);
    /* X1 = X + A: dX = dX1; A = concat · W_oᵀ: dC (T, d) */
    for (size_t i = 0; i < T * d; i++)
        dX[i] = dX1[i];
    to_float(w->fdy, dX1, T * d);
    lin_dw(GRAD(&blk->att.W_o.weight), NULL, w->fdy, b->concat, T, d, d);
    lin_dx(w->dC, w->fdy, T, blk->att.W_o.weight.data, d, d);
    const mha_dropout ad = {dr ? drop->p : 0.0, dr ? vit_site_seed(drop, 1 + 3 * l) : 0};
    attention_core_backward(w, b, m, &ad);
    projections_backward(w, grads, m, l);
    /* N1 = LN1(X): dX += … */
    layernorm_backward(dX, GRAD(&blk->ln1_w), GRAD(&blk->ln1_b), w->dN, b->X, blk->ln1_w.data,
                       b->mean1, b->rstd1, T, d);
#undef GRAD
}

void vit_backward_fast(vit_work *w, double *grads, const double *dlogits, const vit_model *m,
                       const vit_drop *drop)
{
    const size_t P = m->P, d = m->cfg.hiddens;
    vit_head_backward(w, grads, dlogits, m);
    for (size_t l = m->cfg.layers; l-- > 0;)
        block_backward(w, grads, m, l, drop);
    vit_tokens_backward(w, grads, m, drop);
    /* E = patches · conv.weightᵀ + conv.bias: the weight's gradient only */
    to_float(w->fdy, w->dE, P * d);
    lin_dw(tparam_grad(m->params, m->nparams, grads, &m->conv_w),
           tparam_grad(m->params, m->nparams, grads, &m->conv_b), w->fdy, w->patches, P, m->K, d);
}
