/* block_fast.c — the float32 loops of a Transformer block (see
 * block_fast.h), shared by encoder_fast.c and transformer_fast.c. */
#include "block_fast.h"

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

/* Columns o0 … out−1 of y (n, out) = x (n, in) · Wt (in, out) + bias:
 * rows of Wt added with weights x[r][i], contiguous in o. */
static inline void lin_fwd_body(float *restrict y, const float *restrict x, size_t n,
                                const float *restrict Wt, const float *restrict bias, size_t in,
                                size_t out, size_t o0)
{
    size_t r, i, o;
    for (r = 0; r < n; r++) {
        float *yr = y + r * out;
        for (o = o0; o < out; o++)
            yr[o] = bias ? bias[o] : 0.0f;
        for (i = 0; i < in; i++) {
            const float xi = x[r * in + i];
            const float *w = Wt + i * out;
#pragma omp simd
            for (o = o0; o < out; o++)
                yr[o] = fmaf(xi, w[o], yr[o]);
        }
    }
}

/* Rows r … r+R−1, columns 0 … nv·16−1 of lin_fwd_body (R ≤ 8, nv ≤ 4,
 * R·nv ≤ 16: constants once inlined): the R rows held in vector
 * registers while the rows of Wt are added (each loaded once for the R
 * rows), and stored once. The same fused multiply-adds, in the same
 * order, as lin_fwd_body: the same bits. */
LANES_INLINE void lin_fwd_rows(float *restrict y, const float *restrict x, size_t r, size_t R,
                               const float *restrict Wt, const float *restrict bias, size_t in,
                               size_t nv, size_t out)
{
    f32x16 acc[8][4];
    for (size_t t = 0; t < R; t++)
        for (size_t v = 0; v < nv; v++)
            acc[t][v] = bias ? v16_load(bias + v * V16) : v16_splat(0.0f);
    for (size_t i = 0; i < in; i++)
        for (size_t v = 0; v < nv; v++) {
            const v16_factor w = v16_factor_of(v16_load(Wt + i * out + v * V16));
            for (size_t t = 0; t < R; t++)
                acc[t][v] = v16_fma_by(x[(r + t) * in + i], &w, acc[t][v]);
        }
    for (size_t t = 0; t < R; t++)
        for (size_t v = 0; v < nv; v++)
            v16_store(y + (r + t) * out + v * V16, acc[t][v]);
}

/* lin_fwd_body for out < 16 columns (a small vocabulary's output layer):
 * rows r … r+R−1 (R ≤ 8) in one value each, the first out lanes used, a
 * row of Wt loaded once for the R rows. The same fused multiply-adds, in
 * the same order, as lin_fwd_body: the same bits (and in the pages'
 * WebAssembly module, four lanes at a time instead of C's fmaf). */
LANES_INLINE void lin_fwd_narrow(float *restrict y, const float *restrict x, size_t r, size_t R,
                                 const float *restrict Wt, const float *restrict bias, size_t in,
                                 size_t out)
{
    f32x16 acc[8];
    for (size_t t = 0; t < R; t++)
        acc[t] = bias ? v16_load_part(bias, out, 0.0f) : v16_splat(0.0f);
    for (size_t i = 0; i < in; i++) {
        const v16_factor w = v16_factor_of(v16_load_part(Wt + i * out, out, 0.0f));
        for (size_t t = 0; t < R; t++)
            acc[t] = v16_fma_by(x[(r + t) * in + i], &w, acc[t]);
    }
    for (size_t t = 0; t < R; t++)
        v16_store_part(y + (r + t) * out, acc[t], out);
}

/* lin_fwd_body's columns 0 … nv·16−1, 16/nv rows at a time (at most 8) */
LANES_INLINE void lin_fwd_lanes(float *restrict y, const float *restrict x, size_t n,
                                const float *restrict Wt, const float *restrict bias, size_t in,
                                size_t nv, size_t out)
{
    const size_t R = nv <= 2 ? 8 : 16 / nv;
    size_t r = 0;
    for (; r + R <= n; r += R)
        lin_fwd_rows(y, x, r, R, Wt, bias, in, nv, out);
    for (; r < n; r++)
        lin_fwd_rows(y, x, r, 1, Wt, bias, in, nv, out);
}

void fl_linear_forward(float *y, const float *x, size_t n, const float *Wt, const float *bias,
                       size_t in, size_t out)
{
    if (out == 32)
        lin_fwd_lanes(y, x, n, Wt, bias, in, 2, 32); /* the default d */
    else if (out == 64)
        lin_fwd_lanes(y, x, n, Wt, bias, in, 4, 64); /* the translation FFN's dense1 */
    else if (out == 16)
        lin_fwd_lanes(y, x, n, Wt, bias, in, 1, 16);
    else if (out > 32 && out < 48) { /* the output layer of a small vocabulary */
        lin_fwd_lanes(y, x, n, Wt, bias, in, 2, out);
        lin_fwd_body(y, x, n, Wt, bias, in, out, 32);
    } else if (out > 0 && out < 16) { /* the same, smaller */
        size_t r = 0;
        for (; r + 8 <= n; r += 8)
            lin_fwd_narrow(y, x, r, 8, Wt, bias, in, out);
        for (; r < n; r++)
            lin_fwd_narrow(y, x, r, 1, Wt, bias, in, out);
    } else
        lin_fwd_body(y, x, n, Wt, bias, in, out, 0);
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

/* Rows o … o+R−1 of lin_bwd_body's dW and db for in = nv·16 (R ≤ 8, nv ≤
 * 4, R·nv ≤ 16: constants once inlined): R rows of dW held in vector registers
 * over the sum's terms (a row of x loaded once for the R rows), in
 * lin_bwd_body's order. */
LANES_INLINE void lin_bwd_dw(float *restrict dW, float *restrict db, const float *restrict dy,
                             const float *restrict x, size_t n, size_t o, size_t R, size_t nv,
                             size_t out)
{
    const size_t in = nv * V16;
    f32x16 acc[8][4];
    float sb[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    for (size_t t = 0; t < R; t++)
        for (size_t v = 0; v < nv; v++)
            acc[t][v] = v16_load(dW + (o + t) * in + v * V16);
    for (size_t r = 0; r < n; r++) {
        for (size_t v = 0; v < nv; v++) {
            const v16_factor xv = v16_factor_of(v16_load(x + r * in + v * V16));
            for (size_t t = 0; t < R; t++)
                acc[t][v] = v16_fma_by(dy[r * out + o + t], &xv, acc[t][v]);
        }
        for (size_t t = 0; t < R; t++)
            sb[t] += dy[r * out + o + t];
    }
    for (size_t t = 0; t < R; t++) {
        for (size_t v = 0; v < nv; v++)
            v16_store(dW + (o + t) * in + v * V16, acc[t][v]);
        if (db)
            db[o + t] += sb[t];
    }
}

/* Rows r … r+R−1 of lin_bwd_body's dx for in = nv·16, held in vector
 * registers over the sum's terms (a row of W loaded once for the R rows),
 * in lin_bwd_body's order. */
LANES_INLINE void lin_bwd_dx(float *restrict dx, const float *restrict dy,
                             const float *restrict W, size_t r, size_t R, size_t nv, size_t out)
{
    const size_t in = nv * V16;
    f32x16 acc[8][4];
    for (size_t t = 0; t < R; t++)
        for (size_t v = 0; v < nv; v++)
            acc[t][v] = v16_load(dx + (r + t) * in + v * V16);
    for (size_t o = 0; o < out; o++)
        for (size_t v = 0; v < nv; v++) {
            const v16_factor w = v16_factor_of(v16_load(W + o * in + v * V16));
            for (size_t t = 0; t < R; t++)
                acc[t][v] = v16_fma_by(dy[(r + t) * out + o], &w, acc[t][v]);
        }
    for (size_t t = 0; t < R; t++)
        for (size_t v = 0; v < nv; v++)
            v16_store(dx + (r + t) * in + v * V16, acc[t][v]);
}

/* lin_bwd_body for in = nv·16, 16/nv rows of dW (at most 8), then of dx,
 * at a time */
LANES_INLINE void lin_bwd_lanes(float *restrict dx, float *restrict dW, float *restrict db,
                                const float *restrict dy, const float *restrict x, size_t n,
                                const float *restrict W, size_t nv, size_t out)
{
    const size_t R = nv <= 2 ? 8 : 16 / nv;
    size_t o = 0, r = 0;
    for (; o + R <= out; o += R)
        lin_bwd_dw(dW, db, dy, x, n, o, R, nv, out);
    for (; o < out; o++)
        lin_bwd_dw(dW, db, dy, x, n, o, 1, nv, out);
    if (!dx)
        return;
    for (; r + R <= n; r += R)
        lin_bwd_dx(dx, dy, W, r, R, nv, out);
    for (; r < n; r++)
        lin_bwd_dx(dx, dy, W, r, 1, nv, out);
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

/* The keys query q of example b sees: 0 … n−1 (block_fast.h). */
static inline size_t visible(const fl_attention *s, size_t b, size_t q)
{
    size_t n = s->causal && q + 1 < s->Tk ? q + 1 : s->Tk;
    if (s->lens && (size_t)s->lens[b] < n)
        n = (size_t)s->lens[b];
    return n;
}

size_t fl_heads_scratch(const fl_attention *s) { return V16 * (s->p + 3 * s->Tk); }

float *fl_heads_scratch_alloc(size_t d, size_t Tmax, int *failed)
{
    size_t n;
    if (size_mul(3, Tmax, &n) || size_add(n, d, &n)) {
        *failed = 1;
        return NULL;
    }
    return fl_zeros(V16, n, 1, failed); /* 16·(p + 3·Tk) ≤ 16·(d + 3·Tmax) */
}

/* One head's block of up to 16 queries, q0 … q0+nq−1, one in each lane of
 * a f32x16: the keys each sees, n[l] (0 in the lanes past nq; n grows
 * with q, so that the queries that see a key are the block's last ones),
 * and kmax, the most. */
typedef struct head_block {
    i32x16 nv; /* n as lanes */
    int32_t n[V16];
    size_t b, h, q0, nq, kmax;
    size_t row0; /* A's flat index of (b, h, q0, 0) */
} head_block;

static inline head_block block_of(const fl_attention *s, size_t b, size_t h, size_t q0,
                                  size_t Tq, size_t Tk)
{
    head_block k;
    k.b = b, k.h = h, k.q0 = q0, k.nq = Tq - q0 < V16 ? Tq - q0 : V16, k.kmax = 0;
    k.row0 = ((b * s->NH + h) * Tq + q0) * Tk;
    for (size_t l = 0; l < V16; l++) { /* lane l: query q0 + l */
        const size_t n = l < k.nq ? visible(s, b, q0 + l) : 0;
        k.n[l] = (int32_t)n;
        k.kmax = n > k.kmax ? n : k.kmax;
    }
    memcpy(&k.nv, k.n, sizeof k.nv);
    return k;
}

/* dst (cols, 16) = src's rows 0 … rows−1 (rows ≤ 16, row stride ss)
 * transposed: lane l of row j is src[l·ss + j] (0 past rows), 8 × 8 at a
 * time in registers. */
LANES_INLINE void to_lanes(float *restrict dst, const float *restrict src, size_t ss,
                           size_t rows, size_t cols)
{
    for (size_t j0 = 0; j0 < cols; j0 += 8) { /* columns j0 … j0+nc−1 */
        const size_t nc = cols - j0 < 8 ? cols - j0 : 8;
        for (size_t l0 = 0; l0 < V16; l0 += 8) { /* lanes l0 … l0+7 */
            f32x8 r[8];
            for (size_t k = 0; k < 8; k++)
                if (l0 + k >= rows)
                    r[k] = v8_splat(0.0f);
                else if (nc == 8)
                    r[k] = v8_load(src + (l0 + k) * ss + j0);
                else
                    r[k] = v8_load_part(src + (l0 + k) * ss + j0, nc);
            v8_transpose(r);
            for (size_t k = 0; k < nc; k++)
                v8_store(dst + (j0 + k) * V16 + l0, r[k]);
        }
    }
}

/* The inverse: dst[l·ds + j] = lane l of src's row j (src (cols, 16)), for
 * l < rows and j < cols. */
LANES_INLINE void from_lanes(float *restrict dst, size_t ds, const float *restrict src,
                             size_t rows, size_t cols)
{
    for (size_t j0 = 0; j0 < cols; j0 += 8) { /* columns j0 … j0+nc−1 */
        const size_t nc = cols - j0 < 8 ? cols - j0 : 8;
        for (size_t l0 = 0; l0 < rows; l0 += 8) { /* lanes l0 … l0+7 */
            f32x8 r[8];
            for (size_t k = 0; k < 8; k++)
                r[k] = k < nc ? v8_load(src + (j0 + k) * V16 + l0) : v8_splat(0.0f);
            v8_transpose(r);
            for (size_t k = 0; k < 8 && l0 + k < rows; k++) {
                float *row = dst + (l0 + k) * ds + j0;
                if (nc == 8)
                    v8_store(row, r[k]);
                else
                    v8_store_part(row, r[k], nc);
            }
        }
    }
}

/* The lanes whose weight (q0 + l, key j) dropout keeps */
static inline i32x16 block_keep(const mha_dropout *drop, const head_block *k, size_t Tk,
                                size_t j)
{
    int32_t m[V16];
    i32x16 v;
    for (size_t l = 0; l < V16; l++)
        m[l] = mha_dropout_keep(drop, k->row0 + l * Tk + j) ? -1 : 0;
    memcpy(&v, m, sizeof v);
    return v;
}

/* y (p,) = y's values (add) or 0, then + c[j·cs] · x[j·xs + 0 … p−1] for j
 * = 0 … n−1, one fused multiply-add a term in order of j: a row of
 * weights times rows of values, 8 columns a value. */
LANES_INLINE void rows_fma(float *restrict y, const float *restrict c, size_t cs,
                           const float *restrict x, size_t xs, size_t n, size_t p, int add)
{
    size_t i = 0, j;
    for (; i + 8 <= p; i += 8) { /* columns i … i+7 */
        f32x8 acc = add ? v8_load(y + i) : v8_splat(0.0f);
        for (j = 0; j < n; j++)
            acc = v8_fma(v8_splat(c[j * cs]), v8_load(x + j * xs + i), acc);
        v8_store(y + i, acc);
    }
    for (; i < p; i++) { /* the columns past the last 8 */
        float acc = add ? y[i] : 0.0f;
        for (j = 0; j < n; j++)
            acc = fmaf(c[j * cs], x[j * xs + i], acc);
        y[i] = acc;
    }
}

/* A block of head h's queries, forward, the queries in lanes and the keys
 * in rows of at (Tk, 16): the scores Q_h[q]·K_h[j]/√p (the fused
 * multiply-adds over i in order), the softmax over the keys each query
 * sees (the largest first, then v16_exp_row's e^(x − max) and its sum: 16
 * partial sums, sum l adding the keys l, l+16, … in order, v16_hsum's
 * tree), A's rows (0 at masked keys), then O_h[q] = Σ_j a_qj V_h[j]
 * (a through dropout, in pt) row by row: the same operations, in the same
 * order, as one query at a time. Inlined with constant Tq, Tk and p for
 * the defaults. */
LANES_INLINE void block_forward(float *restrict O, float *restrict A, float *restrict sc,
                                const float *Q, const float *K, const float *V,
                                const head_block *k, size_t Tq, size_t Tk, size_t p,
                                const fl_attention *s)
{
    const int dropping = s->drop && s->drop->p > 0;
    const size_t d = s->d, hp = k->h * p, b = k->b;
    float *restrict qt = sc, *restrict at = sc + p * V16, *restrict pt = at + Tk * V16;
    f32x16 m = v16_splat(0.0f), part[V16];
    size_t j, i, l, w;
    to_lanes(qt, Q + (b * Tq + k->q0) * d + hp, d, k->nq, p); /* Q_hᵀ (p, 16) */
    for (j = 0; j < k->kmax; j++) { /* scores (kmax, 16), their max over seen keys */
        const float *kr = K + (b * Tk + j) * d + hp;
        f32x16 x = v16_splat(0.0f);
        for (i = 0; i < p; i++)
            x = v16_fma(v16_splat(kr[i]), v16_load(qt + i * V16), x);
        x = x * v16_splat(s->inv_sqrt_p);
        m = j == 0 ? x : v16_select((v16_splat_i((int32_t)j) < k->nv) & (x > m), x, m);
        v16_store(at + j * V16, x);
    }
    for (l = 0; l < V16; l++)
        part[l] = v16_splat(0.0f);
    for (j = 0; j < k->kmax; j++) { /* e^(x − max), 0 at masked keys (kmax, 16) */
        const i32x16 seen = v16_splat_i((int32_t)j) < k->nv;
        const f32x16 e = v16_exp(
            v16_select(seen, v16_load(at + j * V16) - m, v16_splat(-INFINITY)));
        v16_store(at + j * V16, e);
        part[j % V16] = part[j % V16] + e;
    }
    for (w = V16 / 2; w >= 1; w /= 2) /* v16_hsum's tree */
        for (l = 0; l < w; l++)
            part[l] = part[l] + part[l + w];
    for (j = 0; j < Tk; j++) { /* the weights (Tk, 16), through dropout in pt */
        const i32x16 seen = v16_splat_i((int32_t)j) < k->nv;
        const f32x16 a = j < k->kmax ? v16_select(seen, v16_load(at + j * V16) / part[0],
                                                  v16_splat(0.0f))
                                     : v16_splat(0.0f);
        v16_store(at + j * V16, a);
        if (dropping)
            v16_store(pt + j * V16, v16_select(block_keep(s->drop, k, Tk, j),
                                               a * v16_splat(s->keep_scale), v16_splat(0.0f)));
    }
    from_lanes(A + k->row0, Tk, at, k->nq, Tk); /* A (nq, Tk) = atᵀ */
    for (l = 0; l < k->nq; l++) /* O_h[q] (p,) = Σ_{j < n_q} a_qj V_h[j] */
        rows_fma(O + (b * Tq + k->q0 + l) * d + hp, (dropping ? pt : at) + l, V16,
                 V + b * Tk * d + hp, d, (size_t)k->n[l], p, 0);
}

/* The same block backward, queries in lanes: dA_qj = dO_h[q]·V_h[j] (the
 * fused multiply-adds over i in order; through dropout), Σ_j dA_qj a_qj in
 * order of j, dS = a ⊙ (dA − Σ) / √p into dt (Tk, 16); then row by row
 * dV_h[j] += Σ_q a_qj dO_h[q] and dK_h[j] += Σ_q dS_qj Q_h[q] in order of
 * q (over the queries that see key j), dQ_h[q] += Σ_j dS_qj K_h[j] in
 * order of j: each sum the terms of one query at a time, in its order. */
LANES_INLINE void block_backward(float *restrict dQ, float *restrict dK, float *restrict dV,
                                 float *restrict sc, const float *dO, const float *A,
                                 const float *Q, const float *K, const float *V,
                                 const head_block *k, size_t Tq, size_t Tk, size_t p,
                                 const fl_attention *s)
{
    const int dropping = s->drop && s->drop->p > 0;
    const size_t d = s->d, hp = k->h * p, b = k->b, rows = (b * Tq + k->q0) * d + hp;
    float *restrict gt = sc, *restrict at = sc + p * V16, *restrict dt = at + Tk * V16,
                    *restrict pt = dt + Tk * V16;
    f32x16 dot = v16_splat(0.0f);
    size_t j, i, l;
    to_lanes(gt, dO + rows, d, k->nq, p);     /* dO_hᵀ (p, 16) */
    to_lanes(at, A + k->row0, Tk, k->nq, Tk); /* the block's rows of A transposed (Tk, 16) */
    for (j = 0; j < k->kmax; j++) { /* dA (kmax, 16) and Σ_j dA a */
        const float *vr = V + (b * Tk + j) * d + hp;
        const f32x16 a = v16_load(at + j * V16);
        f32x16 da = v16_splat(0.0f);
        for (i = 0; i < p; i++)
            da = v16_fma(v16_splat(vr[i]), v16_load(gt + i * V16), da);
        if (dropping) {
            const i32x16 keep = block_keep(s->drop, k, Tk, j);
            const f32x16 ks = v16_splat(s->keep_scale);
            da = v16_select(keep, da * ks, v16_splat(0.0f));
            v16_store(pt + j * V16, v16_select(keep, a * ks, v16_splat(0.0f)));
        }
        dot = v16_select(v16_splat_i((int32_t)j) < k->nv, dot + da * a, dot);
        v16_store(dt + j * V16, da);
    }
    for (j = 0; j < k->kmax; j++) /* dS (kmax, 16) */
        v16_store(dt + j * V16, (v16_load(at + j * V16) * (v16_load(dt + j * V16) - dot)) *
                                    v16_splat(s->inv_sqrt_p));
    for (j = 0; j < k->kmax; j++) { /* dV_h[j], dK_h[j] (p,): the queries q ≥ q1 see key j */
        size_t q1 = 0;
        while (q1 < k->nq && (size_t)k->n[q1] <= j)
            q1++;
        rows_fma(dV + (b * Tk + j) * d + hp, (dropping ? pt : at) + j * V16 + q1, 1,
                 dO + rows + q1 * d, d, k->nq - q1, p, 1);
        rows_fma(dK + (b * Tk + j) * d + hp, dt + j * V16 + q1, 1, Q + rows + q1 * d, d,
                 k->nq - q1, p, 1);
    }
    for (l = 0; l < k->nq; l++) /* dQ_h[q] (p,) */
        rows_fma(dQ + rows + l * d, dt + l, V16, K + b * Tk * d + hp, d, (size_t)k->n[l], p, 1);
}

/* Every head and block of queries of every example, with sizes Tq, Tk and
 * p (constants once inlined) */
LANES_INLINE void heads_forward(float *O, float *A, float *sc, const float *Q, const float *K,
                                const float *V, size_t Tq, size_t Tk, size_t p,
                                const fl_attention *s)
{
    for (size_t b = 0; b < s->B; b++)
        for (size_t h = 0; h < s->NH; h++) {
            if (s->heads_on && !s->heads_on[h]) { /* switched off: not computed, A 0 */
                memset(A + (b * s->NH + h) * Tq * Tk, 0, Tq * Tk * sizeof *A);
                continue;
            }
            for (size_t q0 = 0; q0 < Tq; q0 += V16) {
                const head_block k = block_of(s, b, h, q0, Tq, Tk);
                block_forward(O, A, sc, Q, K, V, &k, Tq, Tk, p, s);
            }
        }
}

LANES_INLINE void heads_backward(float *dQ, float *dK, float *dV, float *sc, const float *dO,
                                 const float *A, const float *Q, const float *K,
                                 const float *V, size_t Tq, size_t Tk, size_t p,
                                 const fl_attention *s)
{
    for (size_t b = 0; b < s->B; b++)
        for (size_t h = 0; h < s->NH; h++) {
            if (s->heads_on && !s->heads_on[h])
                continue; /* switched off: no gradient */
            for (size_t q0 = 0; q0 < Tq; q0 += V16) { /* in order: dK's and dV's sums */
                const head_block k = block_of(s, b, h, q0, Tq, Tk);
                block_backward(dQ, dK, dV, sc, dO, A, Q, K, V, &k, Tq, Tk, p, s);
            }
        }
}

void fl_heads_forward(float *O, float *A, float *scratch, const float *Q, const float *K,
                      const float *V, const fl_attention *s)
{
    const size_t Tq = s->Tq, Tk = s->Tk, p = s->p;
    /* constant sizes for the defaults (reverse and previous: T 8;
     * induction: T 20; translate: T 12; p 8) */
    if (Tq == 8 && Tk == 8 && p == 8)
        heads_forward(O, A, scratch, Q, K, V, 8, 8, 8, s);
    else if (Tq == 20 && Tk == 20 && p == 8)
        heads_forward(O, A, scratch, Q, K, V, 20, 20, 8, s);
    else if (Tq == 12 && Tk == 12 && p == 8) /* translate's num_steps */
        heads_forward(O, A, scratch, Q, K, V, 12, 12, 8, s);
    else
        heads_forward(O, A, scratch, Q, K, V, Tq, Tk, p, s);
}

void fl_heads_backward(float *dQ, float *dK, float *dV, float *scratch, const float *dO,
                       const float *A, const float *Q, const float *K, const float *V,
                       const fl_attention *s)
{
    const size_t Tq = s->Tq, Tk = s->Tk, p = s->p;
    if (Tq == 8 && Tk == 8 && p == 8)
        heads_backward(dQ, dK, dV, scratch, dO, A, Q, K, V, 8, 8, 8, s);
    else if (Tq == 20 && Tk == 20 && p == 8)
        heads_backward(dQ, dK, dV, scratch, dO, A, Q, K, V, 20, 20, 8, s);
    else if (Tq == 12 && Tk == 12 && p == 8)
        heads_backward(dQ, dK, dV, scratch, dO, A, Q, K, V, 12, 12, 8, s);
    else
        heads_backward(dQ, dK, dV, scratch, dO, A, Q, K, V, Tq, Tk, p, s);
}

/* ---- AddNorm, ReLU, embedding, loss ------------------------------------ */

/* Rows r0 … r0+R−1 of fl_addnorm_forward (R ≤ 4, a constant once
 * inlined), each step for the R rows side by side, so that their sums
 * overlap. */
LANES_INLINE void addnorm_fwd_rows(float *out, float *xh, float *rstd, const float *x,
                                   const float *y, const float *gamma, const float *beta,
                                   size_t r0, size_t R, size_t d)
{
    float mean[4], rs[4];
    size_t t, i;
    for (t = 0; t < R; t++) { /* z = x + y, in out for now */
        const size_t r = r0 + t;
        for (i = 0; i < d; i++)
            out[r * d + i] = x[r * d + i] + y[r * d + i];
    }
    for (t = 0; t < R; t++)
        mean[t] = v16_sum_row(out + (r0 + t) * d, d) / (float)d;
    for (t = 0; t < R; t++) /* z − mean, in xh for now */
        for (i = 0; i < d; i++)
            xh[(r0 + t) * d + i] = out[(r0 + t) * d + i] - mean[t];
    for (t = 0; t < R; t++) {
        const float *hr = xh + (r0 + t) * d;
        const float var = v16_dot_row(hr, hr, d) / (float)d;
        rs[t] = 1.0f / sqrtf(var + LN_EPS);
        rstd[r0 + t] = rs[t];
    }
    for (t = 0; t < R; t++) {
        float *nr = out + (r0 + t) * d, *hr = xh + (r0 + t) * d;
        for (i = 0; i < d; i++) {
            float hi = hr[i] * rs[t];
            hr[i] = hi;
            nr[i] = fmaf(hi, gamma[i], beta[i]);
        }
    }
}

void fl_addnorm_forward(float *out, float *xh, float *rstd, const float *x, const float *y,
                        const float *gamma, const float *beta, size_t n, size_t d)
{
    size_t r = 0;
    for (; r + 4 <= n; r += 4)
        addnorm_fwd_rows(out, xh, rstd, x, y, gamma, beta, r, 4, d);
    for (; r < n; r++)
        addnorm_fwd_rows(out, xh, rstd, x, y, gamma, beta, r, 1, d);
}

/* Rows r0 … r0+R−1 of fl_addnorm_backward (R ≤ 4, a constant once
 * inlined): the R rows' sums side by side, each in order of i, so that
 * their additions overlap; dgamma and dbeta in order of rows. Every row is
 * read before any is written (dx may be dout). */
LANES_INLINE void addnorm_bwd_rows(float *dx, float *dy, float *dgamma, float *dbeta,
                                   const float *dout, const float *xh, const float *rstd,
                                   const float *gamma, size_t r0, size_t R, size_t d)
{
    float m1[4] = {0.0f, 0.0f, 0.0f, 0.0f}, m2[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    size_t t, i;
    for (i = 0; i < d; i++) /* Σ dx̂ and Σ dx̂ ⊙ x̂ of each row */
        for (t = 0; t < R; t++) {
            const float dxh = dout[(r0 + t) * d + i] * gamma[i];
            m1[t] += dxh;
            m2[t] += dxh * xh[(r0 + t) * d + i];
        }
    for (t = 0; t < R; t++) { /* dgamma, dbeta (d,) */
        const float *dr = dout + (r0 + t) * d, *hr = xh + (r0 + t) * d;
        for (i = 0; i < d; i++) {
            dgamma[i] += dr[i] * hr[i];
            dbeta[i] += dr[i];
        }
    }
    for (t = 0; t < R; t++) { /* dZ (d,) of each row */
        const size_t r = r0 + t;
        const float *dr = dout + r * d, *hr = xh + r * d;
        const float a = m1[t] / (float)d, c = m2[t] / (float)d;
        for (i = 0; i < d; i++) {
            float dz = rstd[r] * (dr[i] * gamma[i] - a - hr[i] * c);
            dy[r * d + i] = dz;
            dx[r * d + i] = dz;
        }
    }
}

void fl_addnorm_backward(float *dx, float *dy, float *dgamma, float *dbeta, const float *dout,
                         const float *xh, const float *rstd, const float *gamma, size_t n,
                         size_t d)
{
    size_t r = 0;
    for (; r + 4 <= n; r += 4)
        addnorm_bwd_rows(dx, dy, dgamma, dbeta, dout, xh, rstd, gamma, r, 4, d);
    for (; r < n; r++)
        addnorm_bwd_rows(dx, dy, dgamma, dbeta, dout, xh, rstd, gamma, r, 1, d);
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
        loss += max + fm_log(sum) - z[targets[r]];
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

/* The columns of the heads s->heads_on switches off, zeros in X (n, d). */
static void heads_off(float *X, size_t n, const fl_attention *s)
{
    for (size_t h = 0; s->heads_on && h < s->NH; h++)
        if (!s->heads_on[h])
            for (size_t i = 0; i < n; i++)
                memset(X + i * s->d + h * s->p, 0, s->p * sizeof *X);
}

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
    /* the heads switched off: zeros in O, as if cut from the concat */
    heads_off(a->O, nq, s);
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
    /* a head switched off is a constant 0 in O: no gradient */
    heads_off(t->dO, nq, s);
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
