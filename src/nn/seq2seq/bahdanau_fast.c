/* bahdanau_fast.c — d2l's Seq2Seq with Bahdanau attention in float32 (see
 * bahdanau_fast.h). The reference is bahdanau.c: the same formulas, the
 * same names (bahdanau.h, gru.h), arranged so that the big products run
 * once over every step:
 *
 *   encoder   each layer's input projections W_ih x + b_ih for all Ts
 *             steps at once, then per step only h · W_hhᵀ and the gates;
 *   attention K = H · W_kᵀ once; per step W_q q_t, the scores over the
 *             source positions each pair sees (none beyond src_len: their
 *             weight is 0), the softmax and the context;
 *   decoder   layer 0's W_ih split by columns: its embedding part
 *             (+ b_ih) for all Tt steps at once, its context part per
 *             step; logits for all steps at once;
 *   backward  through time step by step, the weights' gradients as one
 *             product each over the stored activations at the end
 *             (dW_hh += Σ_t dghᵀ_t h_{t−1}: a (3d, T·B) × (T·B, d) product).
 *
 * Sizes: B pairs, Ts source and Tt target positions, d num_hiddens (the
 * embeddings' size too), L GRU layers a side, Vt the target vocabulary;
 * G the gates a layer computes (the GRU's 3, r, z, n; with --rnn lstm
 * the LSTM's 4, i, f, g, o, and a cell carried beside each state). With
 * --score dot the attention is q · H_j / √d: no K, no W_q, no features.
 * The recurrences are time-major as nn.GRU's: (T, B, ·) holds step t of
 * pair b at row t·B + b. The attention's tensors are per pair: (B, Ts, d).
 *
 * The same bits on every machine (SPEC §12): every product is a chain of
 * fused multiply-adds (v16_fma, fmaf) in order of its inner index, each
 * output on its own, whichever loop computes it; sums over a row are
 * lanes.h's 16 partial sums in a fixed tree; e^x is lanes.h's v16_exp (the
 * one every fast softmax uses), σ and tanh are written from it below
 * (within 5 float ulp of fmath.h's in double; fmath.h's scalar tanh, about
 * 15 ns, would cost more than the rest of a step: the attention takes
 * Tt·B·Ts·d of them). */
#include "bahdanau_fast.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bahdanau.h"
#include "checked.h"
#include "block_fast.h"
#include "lanes.h"

/* ---- lanes: partial vectors, σ and tanh ----------------------------------- */

/* x[0 … w−1] (w ≤ 16), the other lanes 0 */
static inline f32x16 ld(const float *x, size_t w)
{
    return w >= V16 ? v16_load(x) : v16_load_part(x, w, 0.0f);
}

/* x[0 … w−1] = lanes 0 … w−1 of v */
static inline void st(float *x, f32x16 v, size_t w)
{
    if (w >= V16)
        v16_store(x, v);
    else
        v16_store_part(x, v, w);
}

/* σ(x) = 1 / (1 + e^−x), e^−x by v16_exp with −x at most 88 (e^88 is
 * finite in float; σ is then below 1e-38 either way) */
static inline f32x16 v16_sigmoid(f32x16 x)
{
    const f32x16 one = v16_splat(1.0f), cap = v16_splat(88.0f);
    f32x16 nx = -x;
    nx = v16_select(nx > cap, cap, nx);
    return one / (one + v16_exp(nx));
}

/* tanh x: for |x| < 0.5 its Taylor series to x^17 (the next term is below
 * 1e-9 of the result), beyond (1 − t)/(1 + t) with t = e^(−2|x|), where
 * 1 − t loses no digits; the sign of x put back. */
static inline f32x16 v16_tanh(f32x16 x)
{
    const i32x16 sign = (i32x16)x & (i32x16)v16_splat(-0.0f);
    const f32x16 ax = (f32x16)((i32x16)x & ~(i32x16)v16_splat(-0.0f));
    const f32x16 one = v16_splat(1.0f);
    const f32x16 x2 = ax * ax;
    f32x16 p = v16_splat(6404582.0f / 10854718875.0f);
    p = v16_fma(p, x2, v16_splat(-929569.0f / 638512875.0f));
    p = v16_fma(p, x2, v16_splat(21844.0f / 6081075.0f));
    p = v16_fma(p, x2, v16_splat(-1382.0f / 155925.0f));
    p = v16_fma(p, x2, v16_splat(62.0f / 2835.0f));
    p = v16_fma(p, x2, v16_splat(-17.0f / 315.0f));
    p = v16_fma(p, x2, v16_splat(2.0f / 15.0f));
    p = v16_fma(p, x2, v16_splat(-1.0f / 3.0f));
    p = v16_fma(p * x2, ax, ax); /* ax + ax·x2·(…) */
    const f32x16 t = v16_exp(v16_splat(-2.0f) * ax);
    const f32x16 big = (one - t) / (one + t);
    const f32x16 r = v16_select(ax < v16_splat(0.5f), p, big);
    return (f32x16)((i32x16)r | sign);
}

/* ---- products --------------------------------------------------------------- */

/* y (n, out) = init + x (n, in) · M (in, out), rows of y ldy apart, of x
 * ldx, of M ldm: row r of y starts from init + r·ldi (ldi 0: one row for
 * all, a bias; init NULL: zeros) and adds the rows of M weighted by
 * x[r][i], one fused multiply-add a term, in order of i. y may be init
 * (ldi = ldy): y +=. This body holds nr rows of y in nv vectors each
 * (inlined with constants: nr·nv independent sums in flight); M's rows
 * must hold nv·16 readable floats. Rows r0 … r0 + nr − 1. */
static inline void mm_rows(float *y, size_t ldy, const float *init, size_t ldi,
                           const float *restrict x, size_t ldx, const float *restrict M,
                           size_t ldm, size_t r0, size_t in, size_t out, size_t nv, size_t nr)
{
    f32x16 acc[4][6];
    for (size_t q = 0; q < nr; q++)
        for (size_t v = 0; v < nv; v++)
            acc[q][v] = init ? ld(init + (r0 + q) * ldi + v * V16, out - v * V16)
                             : v16_splat(0.0f);
    for (size_t i = 0; i < in; i++)
        for (size_t v = 0; v < nv; v++) {
            const v16_factor m = v16_factor_of(v16_load(M + i * ldm + v * V16));
            for (size_t q = 0; q < nr; q++)
                acc[q][v] = v16_fma_by(x[(r0 + q) * ldx + i], &m, acc[q][v]);
        }
    for (size_t q = 0; q < nr; q++)
        for (size_t v = 0; v < nv; v++)
            st(y + (r0 + q) * ldy + v * V16, acc[q][v], out - v * V16);
}

/* mm_rows over every row: blocks of nr (a constant), then one at a time */
static inline void mm_lanes(float *y, size_t ldy, const float *init, size_t ldi,
                            const float *restrict x, size_t ldx, const float *restrict M,
                            size_t ldm, size_t n, size_t in, size_t out, size_t nv, size_t nr)
{
    size_t r = 0;
    for (; r + nr <= n; r += nr)
        mm_rows(y, ldy, init, ldi, x, ldx, M, ldm, r, in, out, nv, nr);
    for (; r < n; r++)
        mm_rows(y, ldy, init, ldi, x, ldx, M, ldm, r, in, out, nv, 1);
}

/* mm_lanes's sums, the same fused multiply-adds in the same order, for
 * any width */
static void mm_body(float *y, size_t ldy, const float *init, size_t ldi, const float *restrict x,
                    size_t ldx, const float *restrict M, size_t ldm, size_t n, size_t in,
                    size_t out)
{
    for (size_t r = 0; r < n; r++) {
        float *yr = y + r * ldy;
        for (size_t o = 0; o < out; o++)
            yr[o] = init ? init[r * ldi + o] : 0.0f;
        for (size_t i = 0; i < in; i++) {
            const float xi = x[r * ldx + i], *mi = M + i * ldm;
#pragma omp simd
            for (size_t o = 0; o < out; o++)
                yr[o] = fmaf(xi, mi[o], yr[o]);
        }
    }
}

/* mm_lanes or mm_body (the same bits): padded says that M's rows hold
 * ⌈out/16⌉·16 readable floats (the transposed weights are padded so) */
static void mm(float *y, size_t ldy, const float *init, size_t ldi, const float *x, size_t ldx,
               const float *M, size_t ldm, int padded, size_t n, size_t in, size_t out)
{
    size_t nv = (out + V16 - 1) / V16;
    if (!padded && out % V16 != 0)
        nv = 0;
    switch (nv) { /* about 8 sums in flight */
    case 1: mm_lanes(y, ldy, init, ldi, x, ldx, M, ldm, n, in, out, 1, 4); break;
    case 2: mm_lanes(y, ldy, init, ldi, x, ldx, M, ldm, n, in, out, 2, 4); break;
    case 3: mm_lanes(y, ldy, init, ldi, x, ldx, M, ldm, n, in, out, 3, 2); break;
    case 4: mm_lanes(y, ldy, init, ldi, x, ldx, M, ldm, n, in, out, 4, 2); break;
    case 5: mm_lanes(y, ldy, init, ldi, x, ldx, M, ldm, n, in, out, 5, 2); break;
    case 6: mm_lanes(y, ldy, init, ldi, x, ldx, M, ldm, n, in, out, 6, 2); break;
    default: mm_body(y, ldy, init, ldi, x, ldx, M, ldm, n, in, out); break;
    }
}

/* Weight gradients: dW (out, in) += dyᵀ · x over the n rows of dy (n,
 * out, rows ldy apart) and x (n, in), and db (out,) += Σ_r dy (db may be
 * NULL): fl_linear_backward's sums without dx, each dW[o][i] one chain of
 * fused multiply-adds in order of r from its value, each db[o] a sum in
 * order of r then added, the same bits. This body holds no outputs' rows
 * of dW (nv vectors each, a constant once inlined) while x's rows pass
 * once. Outputs o0 … o0 + no − 1. */
static inline void wgrad_rows(float *restrict dW, float *restrict db, const float *restrict dy,
                              size_t ldy, const float *restrict x, size_t n, size_t in,
                              size_t o0, size_t no, size_t nv)
{
    f32x16 acc[4][4];
    v16_factor xv[4];
    float sb[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (size_t q = 0; q < no; q++)
        for (size_t v = 0; v < nv; v++)
            acc[q][v] = v16_load(dW + (o0 + q) * in + v * V16);
    for (size_t r = 0; r < n; r++) {
        for (size_t v = 0; v < nv; v++)
            xv[v] = v16_factor_of(v16_load(x + r * in + v * V16));
        for (size_t q = 0; q < no; q++) {
            const float g = dy[r * ldy + o0 + q];
            sb[q] += g;
            for (size_t v = 0; v < nv; v++)
                acc[q][v] = v16_fma_by(g, &xv[v], acc[q][v]);
        }
    }
    for (size_t q = 0; q < no; q++) {
        for (size_t v = 0; v < nv; v++)
            v16_store(dW + (o0 + q) * in + v * V16, acc[q][v]);
        if (db)
            db[o0 + q] += sb[q];
    }
}

static inline void wgrad_lanes(float *dW, float *db, const float *dy, const float *x, size_t n,
                               size_t in, size_t out, size_t nv, size_t no)
{
    size_t o = 0;
    for (; o + no <= out; o += no)
        wgrad_rows(dW, db, dy, out, x, n, in, o, no, nv);
    for (; o < out; o++)
        wgrad_rows(dW, db, dy, out, x, n, in, o, 1, nv);
}

/* dW += dyᵀ · x, db += Σ dy (see wgrad_rows): dy (n, out), x (n, in) */
static void wgrad(float *dW, float *db, const float *dy, const float *x, size_t n, size_t in,
                  size_t out)
{
    if (in == 16)
        wgrad_lanes(dW, db, dy, x, n, in, out, 1, 4);
    else if (in == 32)
        wgrad_lanes(dW, db, dy, x, n, in, out, 2, 4); /* the default d */
    else if (in == 48)
        wgrad_lanes(dW, db, dy, x, n, in, out, 3, 2);
    else if (in == 64)
        wgrad_lanes(dW, db, dy, x, n, in, out, 4, 2); /* the decoder's first W_ih */
    else
        fl_linear_backward(NULL, dW, db, dy, x, n, NULL, in, out);
}

/* ---- buffers ------------------------------------------------------------- */

/* Buffers carved from one allocation: counted first (base NULL), then
 * placed. Each starts on a multiple of 16 floats. */
typedef struct plan {
    float *base; /* NULL while counting */
    size_t n;    /* floats so far */
    int over;    /* a count overflowed */
} plan;

/* The next a·b·c floats of p (NULL while counting) */
static float *take(plan *p, size_t a, size_t b, size_t c)
{
    size_t n;
    float *at;
    if (p->over || size_mul(a, b, &n) || size_mul(n, c, &n) || size_add(n, V16 - 1, &n)) {
        p->over = 1;
        return NULL;
    }
    n -= n % V16;
    at = p->base ? p->base + p->n : NULL;
    if (size_add(p->n, n, &p->n))
        p->over = 1;
    return at;
}

/* p's floats, zeroed: 0, or -1 when the count overflowed or memory ran out */
static int plan_alloc(plan *p)
{
    if (p->over || p->n > ((size_t)-1) / sizeof(float))
        return -1;
    p->base = calloc(p->n ? p->n : 1, sizeof(float));
    return p->base ? 0 : -1;
}

/* n rounded up to a multiple of 16 (the padded rows of the weights) */
static size_t pad16(size_t n) { return n + (V16 - n % V16) % V16; }

/* ---- weights -------------------------------------------------------------- */

/* A recurrent layer's four tensors, the GRU's or the LSTM's (the same
 * names and layout, G·d rows): side 0 the encoder's, 1 the decoder's. */
typedef struct rnn_view {
    const tensor *w_ih, *w_hh, *b_ih, *b_hh;
} rnn_view;

static rnn_view layer_of(const s2s_model *m, int side, size_t l)
{
    const bah_model *net = bah_net(m);
    if (m->cfg.rnn == S2S_RNN_LSTM) {
        const lstm_layer *q = side ? &net->dec_lstm[l] : &net->enc_lstm[l];
        return (rnn_view){&q->w_ih, &q->w_hh, &q->b_ih, &q->b_hh};
    }
    const gru_layer *q = side ? &net->dec_rnn[l] : &net->enc_rnn[l];
    return (rnn_view){&q->w_ih, &q->w_hh, &q->b_ih, &q->b_hh};
}

/* The forward products' weights transposed to (in, out) rows, each row
 * padded to a multiple of 16 floats (zeros), so that mm_lanes reads whole
 * vectors. g = pad16(3d), the gates' row; dp = pad16(d); vp = pad16(Vt). */
struct bah_fast_weights {
    size_t L, d, Vt, g, dp, vp;
    size_t G;      /* the gates: 3 (GRU: r, z, n) or 4 (LSTM: i, f, g, o) */
    int lstm, dot; /* --rnn lstm, --score dot (then Wq and Wk are empty) */
    float *enc_ih[TMODEL_MAX_LAYERS]; /* (d, g) encoder.rnn.weight_ih_l{k}ᵀ */
    float *enc_hh[TMODEL_MAX_LAYERS]; /* (d, g) encoder.rnn.weight_hh_l{k}ᵀ */
    float *dec_ih[TMODEL_MAX_LAYERS]; /* (I, g) decoder.rnn.weight_ih_l{k}ᵀ: layer 0's
                                       * rows 0 … d−1 read the context, d … 2d−1 the
                                       * embedding */
    float *dec_hh[TMODEL_MAX_LAYERS]; /* (d, g) */
    float *Wq, *Wk;                   /* (d, dp) decoder.attention.W_q, W_k ᵀ */
    float *dense;                     /* (d, vp) decoder.dense.weightᵀ */
    float *block;                     /* the one allocation */
};

static void weights_layout(bah_fast_weights *w, plan *p)
{
    const size_t d = w->d;
    for (size_t l = 0; l < w->L; l++) {
        w->enc_ih[l] = take(p, d, w->g, 1);
        w->enc_hh[l] = take(p, d, w->g, 1);
        w->dec_ih[l] = take(p, l ? d : 2 * d, w->g, 1);
        w->dec_hh[l] = take(p, d, w->g, 1);
    }
    w->Wq = take(p, w->dot ? 0 : d, w->dp, 1);
    w->Wk = take(p, w->dot ? 0 : d, w->dp, 1);
    w->dense = take(p, d, w->vp, 1);
}

bah_fast_weights *bah_fast_weights_new(const s2s_model *m)
{
    const size_t d = m->cfg.hiddens;
    bah_fast_weights *w = calloc(1, sizeof *w);
    plan p = {NULL, 0, 0};
    size_t g3, t;
    if (!w)
        return NULL;
    w->L = m->cfg.layers;
    w->d = d;
    w->Vt = m->cfg.tgt_vocab;
    w->lstm = m->cfg.rnn == S2S_RNN_LSTM;
    w->dot = m->cfg.score == S2S_SCORE_DOT;
    w->G = w->lstm ? 4 : 3;
    /* the padded widths must not overflow either */
    if (w->L > TMODEL_MAX_LAYERS || size_mul(w->G, d, &g3) || size_add(g3, V16, &t) ||
        size_add(w->Vt, V16, &t)) {
        free(w);
        return NULL;
    }
    w->g = pad16(g3);
    w->dp = pad16(d);
    w->vp = pad16(w->Vt);
    weights_layout(w, &p);
    if (plan_alloc(&p)) {
        free(w);
        return NULL;
    }
    w->block = p.base;
    p.n = 0;
    weights_layout(w, &p);
    return w;
}

void bah_fast_weights_free(bah_fast_weights *w)
{
    if (!w)
        return;
    free(w->block);
    free(w);
}

/* dst (in, ld) = src (out, in)ᵀ: rows of ld ≥ out floats, the padding
 * left as it is (zeros) */
static void transpose_pad(float *dst, size_t ld, const float *src, size_t out, size_t in)
{
    for (size_t o = 0; o < out; o++)
        for (size_t i = 0; i < in; i++)
            dst[i * ld + o] = src[o * in + i];
}

void bah_fast_weights_update(bah_fast_weights *w, const s2s_model *m)
{
    const size_t d = w->d, G = w->G;
    for (size_t l = 0; l < w->L; l++) {
        const rnn_view e = layer_of(m, 0, l), g = layer_of(m, 1, l);
        transpose_pad(w->enc_ih[l], w->g, e.w_ih->data, G * d, d);
        transpose_pad(w->enc_hh[l], w->g, e.w_hh->data, G * d, d);
        transpose_pad(w->dec_ih[l], w->g, g.w_ih->data, G * d, l ? d : 2 * d);
        transpose_pad(w->dec_hh[l], w->g, g.w_hh->data, G * d, d);
    }
    if (!w->dot) { /* the additive score's */
        transpose_pad(w->Wq, w->dp, bah_net(m)->att_W_q.data, d, d);
        transpose_pad(w->Wk, w->dp, bah_net(m)->att_W_k.data, d, d);
    }
    transpose_pad(w->dense, w->vp, bah_net(m)->dense.weight.data, w->Vt, d);
}

/* ---- the cache ------------------------------------------------------------ */

/* One chunk's activations (for the backward pass) and scratch; T1 =
 * Tmax + 1. Time-major (T, B, ·) unless said. */
struct bah_fast_cache {
    size_t Bmax, Tmax, L, d, Vt;
    size_t G;                            /* 3 gates (GRU) or 4 (LSTM) */
    int lstm;                            /* --rnn lstm: the cells below are allocated */
    size_t B, Ts, Tt;                    /* the last pass's sizes */
    /* the encoder */
    float *xs;                           /* (Ts, B, d) the embedded source */
    float *egi;                          /* (Ts, B, 3d) a layer's W_ih x + b_ih */
    float *enc_h[TMODEL_MAX_LAYERS];     /* (T1, B, d) layer l's states, row 0 the start (0) */
    float *enc_gates[TMODEL_MAX_LAYERS]; /* (Ts, B, 3d) r | z | n */
    float *enc_hn[TMODEL_MAX_LAYERS];    /* (Ts, B, d) W_hn h + b_hn (LSTM: tanh(c')) */
    float *enc_c[TMODEL_MAX_LAYERS];     /* LSTM: (T1, B, d) layer l's cells, row 0 the start */
    /* the attention */
    float *H;                            /* (B, Ts, d) the encoder's last layer's states */
    float *K;                            /* (B, Ts, d) H · W_kᵀ */
    float *Wq;                           /* (Tt, B, d) W_q q_t */
    float *F;                            /* (Tt, B, Ts, d) tanh(W_q q_t + K_j), j < src_len */
    float *A;                            /* (B, Tt, Ts) the attention weights */
    float *Ag;                           /* (Tt, B, Ts) greedy decoding's, by step */
    /* the decoder */
    float *xt;                           /* (Tt, B, 2d) [c_t; embedding] */
    float *ge;                           /* (Tt, B, 3d) the embedding's part of layer 0's
                                          * W_ih x + b_ih */
    float *dec_h[TMODEL_MAX_LAYERS];     /* (T1, B, d) row 0 the encoder's final states */
    float *dec_gates[TMODEL_MAX_LAYERS]; /* (Tt, B, 3d) */
    float *dec_hn[TMODEL_MAX_LAYERS];    /* (Tt, B, d) */
    float *dec_c[TMODEL_MAX_LAYERS];     /* LSTM: (T1, B, d) row 0 the encoder's final cells */
    float *gi, *gh;                      /* (B, 3d) a step's W_ih x + b_ih, W_hh h + b_hh */
    float *o;                            /* (B, Tt, d) the decoder's outputs */
    float *logits, *dlogits;             /* (B, Tt, Vt) */
    /* backward */
    float *do_;                          /* (B, Tt, d) d o */
    float *dstate;                       /* (L, B, d) d every layer's state */
    float *dcell;                        /* LSTM: (L, B, d) d every layer's cell */
    float *dc;                           /* (B, d) d c_t */
    float *da;                           /* (Ts,) a pair's d a_t (scratch) */
    float *dWq;                          /* (Tt, B, d) d (W_q q_t) */
    float *dH, *dK;                      /* (B, Ts, d) */
    float *dout, *dx;                    /* (Ts, B, d) an encoder layer's output and input */
    float *dgi[TMODEL_MAX_LAYERS];       /* (Tt, B, 3d) d (W_ih x + b_ih) of decoder layer l
                                          * (dgi[0], dgh[0]: the encoder's layer's too) */
    float *dgh[TMODEL_MAX_LAYERS];       /* (Tt, B, 3d) d (W_hh h + b_hh) */
    float *block;                        /* the floats' one allocation */
    int *src_tm, *din_tm;                /* (Ts, B), (Tt, B) the ids time-major */
    int *tok;                            /* (B,) greedy decoding's inputs */
};

static void cache_layout(bah_fast_cache *c, plan *p)
{
    const size_t Bm = c->Bmax, T = c->Tmax, d = c->d, T1 = T + 1;
    size_t BT = 0;
    if (T1 == 0 || size_mul(Bm, T, &BT))
        p->over = 1;
    c->xs = take(p, BT, d, 1);
    c->egi = take(p, BT, c->G, d);
    for (size_t l = 0; l < c->L; l++) {
        c->enc_h[l] = take(p, T1, Bm, d);
        c->enc_gates[l] = take(p, BT, c->G, d);
        c->enc_hn[l] = take(p, BT, d, 1);
        c->dec_h[l] = take(p, T1, Bm, d);
        c->dec_gates[l] = take(p, BT, c->G, d);
        c->dec_hn[l] = take(p, BT, d, 1);
        c->enc_c[l] = take(p, c->lstm ? T1 : 0, Bm, d);
        c->dec_c[l] = take(p, c->lstm ? T1 : 0, Bm, d);
        c->dgi[l] = take(p, BT, c->G, d);
        c->dgh[l] = take(p, BT, c->G, d);
    }
    c->H = take(p, BT, d, 1);
    c->K = take(p, BT, d, 1);
    c->Wq = take(p, BT, d, 1);
    c->F = take(p, BT, T, d);
    c->A = take(p, BT, T, 1);
    c->Ag = take(p, BT, T, 1);
    c->xt = take(p, BT, 2, d);
    c->ge = take(p, BT, c->G, d);
    c->gi = take(p, Bm, c->G, d);
    c->gh = take(p, Bm, c->G, d);
    c->o = take(p, BT, d, 1);
    c->logits = take(p, BT, c->Vt, 1);
    c->dlogits = take(p, BT, c->Vt, 1);
    c->do_ = take(p, BT, d, 1);
    c->dstate = take(p, c->L, Bm, d);
    c->dcell = take(p, c->lstm ? c->L : 0, Bm, d);
    c->dc = take(p, Bm, d, 1);
    c->da = take(p, T, 1, 1);
    c->dWq = take(p, BT, d, 1);
    c->dH = take(p, BT, d, 1);
    c->dK = take(p, BT, d, 1);
    c->dout = take(p, BT, d, 1);
    c->dx = take(p, BT, d, 1);
}

/* The ints: src_tm and din_tm (Bmax·Tmax each) and tok (Bmax): 0, or -1
 * when the count overflows */
static int cache_ints(size_t Bmax, size_t Tmax, size_t *n)
{
    size_t BT;
    return size_mul(Bmax, Tmax, &BT) || size_mul(BT, 2, n) || size_add(*n, Bmax, n) ||
                   *n > ((size_t)-1) / sizeof(int)
               ? -1
               : 0;
}

/* A cache's sizes from the configuration, nothing allocated: 0, or -1 */
static int cache_sizes(bah_fast_cache *c, const s2s_config *cfg, size_t Bmax, size_t Tmax)
{
    memset(c, 0, sizeof *c);
    c->Bmax = Bmax;
    c->Tmax = Tmax;
    c->L = cfg->layers;
    c->d = cfg->hiddens;
    c->Vt = cfg->tgt_vocab;
    c->lstm = cfg->rnn == S2S_RNN_LSTM;
    c->G = c->lstm ? 4 : 3;
    return c->L > TMODEL_MAX_LAYERS ? -1 : 0;
}

int bah_fast_cache_bytes(const s2s_config *cfg, size_t Bmax, size_t Tmax, size_t *bytes)
{
    bah_fast_cache c;
    plan p = {NULL, 0, 0};
    size_t ni, nf, b;
    if (cache_sizes(&c, cfg, Bmax, Tmax))
        return -1;
    cache_layout(&c, &p);
    /* the struct, the floats (at least one), the ints (at least one) */
    if (p.over || cache_ints(Bmax, Tmax, &ni) || size_mul(p.n ? p.n : 1, sizeof(float), &nf) ||
        size_add(sizeof c, nf, &b) || size_add(b, (ni ? ni : 1) * sizeof(int), bytes))
        return -1;
    return 0;
}

bah_fast_cache *bah_fast_cache_new(const s2s_model *m, size_t Bmax, size_t Tmax)
{
    bah_fast_cache *c = malloc(sizeof *c);
    plan p = {NULL, 0, 0};
    size_t ni, BT;
    if (!c)
        return NULL;
    if (cache_sizes(c, &m->cfg, Bmax, Tmax) || cache_ints(Bmax, Tmax, &ni)) {
        free(c);
        return NULL;
    }
    cache_layout(c, &p);
    if (plan_alloc(&p) || !(c->src_tm = calloc(ni ? ni : 1, sizeof(int)))) {
        free(p.base);
        free(c);
        return NULL;
    }
    c->block = p.base;
    p.n = 0;
    cache_layout(c, &p);
    BT = Bmax * Tmax; /* checked by cache_ints */
    c->din_tm = c->src_tm + BT;
    c->tok = c->din_tm + BT;
    return c;
}

void bah_fast_cache_free(bah_fast_cache *c)
{
    if (!c)
        return;
    free(c->block);
    free(c->src_tm);
    free(c);
}

const float *bah_fast_logits(const bah_fast_cache *c) { return c->logits; }
const float *bah_fast_attention(const bah_fast_cache *c) { return c->A; }

int bah_fast_attention_parts(const s2s_fast_cache *fc, const s2s_model *m, size_t b,
                             bah_fast_parts *out)
{
    const bah_fast_cache *c = fc->net;
    size_t d, B, Ts, Tt;
    if (fc->arch != m->cfg.arch || !m->cfg.arch->recurrent || !c || b >= c->B)
        return -1;
    d = c->d, B = c->B, Ts = c->Ts, Tt = c->Tt;
    *out = (bah_fast_parts){d, Ts, Tt, m->cfg.score == S2S_SCORE_DOT,
                            c->dec_h[c->L - 1] + b * d, c->Wq + b * d, B * d,
                            c->H + b * Ts * d, NULL, NULL, c->A + b * Tt * Ts,
                            c->xt + b * 2 * d, B * 2 * d};
    if (!out->dot) {
        out->K = c->K + b * Ts * d;
        out->w_v = bah_net(m)->att_w_v.data;
    }
    return 0;
}

/* ---- the GRU's gates ------------------------------------------------------ */

/* One GRU cell's gates on B rows (gru.h), from gi (B, 3d) = W_i x + b_i and
 * gh (B, 3d) = W_h h + b_h:
 *   r = σ(gi_r + gh_r), z = σ(gi_z + gh_z), n = tanh(gi_n + r ⊙ gh_n),
 *   h_out = (1 − z) ⊙ n + z ⊙ h
 * gates (B, 3d) gets r | z | n, hn (B, d) gh_n, h_out (B, d) the state. */
static void gru_gates(float *h_out, float *gates, float *hn, const float *gi, const float *gh,
                      const float *h, size_t B, size_t d)
{
    const f32x16 one = v16_splat(1.0f);
    for (size_t b = 0; b < B; b++) {
        const float *gib = gi + b * 3 * d, *ghb = gh + b * 3 * d;
        float *g = gates + b * 3 * d;
        for (size_t k = 0; k < d; k += V16) { /* 16 units at a time */
            const size_t w = d - k;
            const f32x16 r = v16_sigmoid(ld(gib + k, w) + ld(ghb + k, w));
            const f32x16 z = v16_sigmoid(ld(gib + d + k, w) + ld(ghb + d + k, w));
            const f32x16 ghn = ld(ghb + 2 * d + k, w);
            const f32x16 n = v16_tanh(ld(gib + 2 * d + k, w) + r * ghn);
            const f32x16 hp = ld(h + b * d + k, w);
            st(g + k, r, w);
            st(g + d + k, z, w);
            st(g + 2 * d + k, n, w);
            st(hn + b * d + k, ghn, w);
            st(h_out + b * d + k, (one - z) * n + z * hp, w);
        }
    }
}

/* Their backward from dh (B, d) = d loss / d h_out:
 *   dn = dh ⊙ (1 − z), dz = dh ⊙ (h − n), the pre-activations
 *   d_n = dn ⊙ (1 − n²), d_r = d_n ⊙ hn ⊙ r(1 − r), d_z = dz ⊙ z(1 − z);
 * dgi (B, 3d) = [d_r | d_z | d_n], dgh (B, 3d) = [d_r | d_z | d_n ⊙ r]
 * (written), and dh = z ⊙ dh, the part that reaches h directly (the
 * caller adds dgh · W_hh). */
static void gru_gates_backward(float *dgi, float *dgh, float *dh, const float *gates,
                               const float *hn, const float *h, size_t B, size_t d)
{
    const f32x16 one = v16_splat(1.0f);
    for (size_t b = 0; b < B; b++) {
        const float *g = gates + b * 3 * d;
        float *dib = dgi + b * 3 * d, *dhb = dgh + b * 3 * d;
        for (size_t k = 0; k < d; k += V16) {
            const size_t w = d - k;
            const f32x16 r = ld(g + k, w), z = ld(g + d + k, w), n = ld(g + 2 * d + k, w);
            const f32x16 dhv = ld(dh + b * d + k, w), hp = ld(h + b * d + k, w);
            const f32x16 dan = dhv * (one - z) * (one - n * n);
            const f32x16 dar = dan * ld(hn + b * d + k, w) * (r * (one - r));
            const f32x16 daz = dhv * (hp - n) * (z * (one - z));
            st(dib + k, dar, w);
            st(dib + d + k, daz, w);
            st(dib + 2 * d + k, dan, w);
            st(dhb + k, dar, w);
            st(dhb + d + k, daz, w);
            st(dhb + 2 * d + k, dan * r, w);
            st(dh + b * d + k, dhv * z, w);
        }
    }
}

/* ---- the LSTM's gates ------------------------------------------------------- */

/* One LSTM cell's gates on B rows (lstm.h), from gi, gh (B, 4d) = W_i x +
 * b_i, W_h h + b_h and the cell before, cp (B, d):
 *   i = σ(a_i), f = σ(a_f), g = tanh(a_g), o = σ(a_o)  (a = gi + gh),
 *   c_out = f ⊙ cp + i ⊙ g, h_out = o ⊙ tanh(c_out)
 * gates (B, 4d) gets i | f | g | o, tc (B, d) tanh(c_out). */
static void lstm_gates(float *h_out, float *c_out, float *gates, float *tc, const float *gi,
                       const float *gh, const float *cp, size_t B, size_t d)
{
    for (size_t b = 0; b < B; b++) {
        const float *gib = gi + b * 4 * d, *ghb = gh + b * 4 * d;
        float *g = gates + b * 4 * d;
        for (size_t k = 0; k < d; k += V16) { /* 16 units at a time */
            const size_t w = d - k;
            const f32x16 ig = v16_sigmoid(ld(gib + k, w) + ld(ghb + k, w));
            const f32x16 fg = v16_sigmoid(ld(gib + d + k, w) + ld(ghb + d + k, w));
            const f32x16 gg = v16_tanh(ld(gib + 2 * d + k, w) + ld(ghb + 2 * d + k, w));
            const f32x16 og = v16_sigmoid(ld(gib + 3 * d + k, w) + ld(ghb + 3 * d + k, w));
            const f32x16 cn = fg * ld(cp + b * d + k, w) + ig * gg;
            const f32x16 t = v16_tanh(cn);
            st(g + k, ig, w);
            st(g + d + k, fg, w);
            st(g + 2 * d + k, gg, w);
            st(g + 3 * d + k, og, w);
            st(c_out + b * d + k, cn, w);
            st(tc + b * d + k, t, w);
            st(h_out + b * d + k, og * t, w);
        }
    }
}

/* Their backward from dh, dc (B, d) = d loss / d h_out, c_out:
 *   d c' = dc + dh ⊙ o ⊙ (1 − tanh²c'), the pre-activations
 *   d_i = d c' ⊙ g ⊙ i(1 − i), d_f = d c' ⊙ cp ⊙ f(1 − f),
 *   d_g = d c' ⊙ i ⊙ (1 − g²), d_o = dh ⊙ tanh c' ⊙ o(1 − o);
 * dgi = dgh (B, 4d) = [d_i | d_f | d_g | d_o] (written), dc = d c' ⊙ f
 * (d cp) and dh = 0 (the caller adds dgh · W_hh). */
static void lstm_gates_backward(float *dgi, float *dgh, float *dh, float *dc, const float *gates,
                                const float *tc, const float *cp, size_t B, size_t d)
{
    const f32x16 one = v16_splat(1.0f);
    for (size_t b = 0; b < B; b++) {
        const float *g = gates + b * 4 * d;
        float *dib = dgi + b * 4 * d, *dhb = dgh + b * 4 * d;
        for (size_t k = 0; k < d; k += V16) {
            const size_t w = d - k;
            const f32x16 ig = ld(g + k, w), fg = ld(g + d + k, w), gg = ld(g + 2 * d + k, w);
            const f32x16 og = ld(g + 3 * d + k, w), t = ld(tc + b * d + k, w);
            const f32x16 dhv = ld(dh + b * d + k, w);
            const f32x16 dct = ld(dc + b * d + k, w) + dhv * og * (one - t * t);
            const f32x16 da[4] = {dct * gg * (ig * (one - ig)),
                                  dct * ld(cp + b * d + k, w) * (fg * (one - fg)),
                                  dct * ig * (one - gg * gg), dhv * t * (og * (one - og))};
            for (size_t q = 0; q < 4; q++) {
                st(dib + q * d + k, da[q], w);
                st(dhb + q * d + k, da[q], w);
            }
            st(dc + b * d + k, dct * fg, w);
            st(dh + b * d + k, v16_splat(0.0f), w);
        }
    }
}

/* ---- forward ---------------------------------------------------------------- */

/* The sizes of one pass. */
typedef struct dims {
    size_t B, Ts, Tt, L, d, Vt;
    size_t g;          /* pad16(G·d): the transposed gates' rows */
    size_t G;          /* the gates: 3 (GRU) or 4 (LSTM) */
    int lstm, dot;     /* --rnn lstm, --score dot */
    const long *lens;  /* (B,) source lengths, or NULL: Ts */
} dims;

static dims dims_of(const bah_fast_weights *w, size_t B, size_t Ts, size_t Tt, const long *lens)
{
    dims s = {B, Ts, Tt, w->L, w->d, w->Vt, w->g, w->G, w->lstm, w->dot, lens};
    return s;
}

/* The source positions pair b attends to, as bahdanau.c's mask reads its
 * length: src_len when it is 1 … Ts, else all Ts */
static size_t visible(const dims *s, size_t b)
{
    if (!s->lens || s->lens[b] <= 0 || (size_t)s->lens[b] > s->Ts)
        return s->Ts;
    return (size_t)s->lens[b];
}

/* rows (T, B) = ids (B, T)ᵀ */
static void ids_time_major(int *rows, const int *ids, size_t B, size_t T)
{
    for (size_t t = 0; t < T; t++)
        for (size_t b = 0; b < B; b++)
            rows[t * B + b] = ids[b * T + t];
}

/* Layer l's cell at step t of the encoder (side 0) or the decoder (1),
 * the GRU's or the LSTM's: from gi, gh (B, G·d) and the state before (row
 * t of h and, for an LSTM, of the cells), row t + 1 of each; its gates
 * and its hn (GRU) or tanh c' (LSTM) kept for the backward pass. */
static void cell_step(bah_fast_cache *c, const dims *s, int side, size_t l, size_t t,
                      const float *gi, const float *gh)
{
    const size_t B = s->B, d = s->d, G = s->G;
    float *h = (side ? c->dec_h : c->enc_h)[l];
    float *gates = (side ? c->dec_gates : c->enc_gates)[l] + t * B * G * d;
    float *hn = (side ? c->dec_hn : c->enc_hn)[l] + t * B * d;
    if (s->lstm) {
        float *cc = (side ? c->dec_c : c->enc_c)[l];
        lstm_gates(h + (t + 1) * B * d, cc + (t + 1) * B * d, gates, hn, gi, gh, cc + t * B * d,
                   B, d);
    } else
        gru_gates(h + (t + 1) * B * d, gates, hn, gi, gh, h + t * B * d, B, d);
}

/* Its backward from dh (B, d) (and, LSTM, dcs (B, d): the cell's), which
 * become the part that reaches the state before directly; dgi, dgh
 * (B, G·d) written. */
static void cell_step_backward(bah_fast_cache *c, const dims *s, int side, size_t l, size_t t,
                               float *dgi, float *dgh, float *dh, float *dcs)
{
    const size_t B = s->B, d = s->d, G = s->G;
    const float *h = (side ? c->dec_h : c->enc_h)[l];
    const float *gates = (side ? c->dec_gates : c->enc_gates)[l] + t * B * G * d;
    const float *hn = (side ? c->dec_hn : c->enc_hn)[l] + t * B * d;
    if (s->lstm)
        lstm_gates_backward(dgi, dgh, dh, dcs, gates, hn, (side ? c->dec_c : c->enc_c)[l] + t * B * d,
                            B, d);
    else
        gru_gates_backward(dgi, dgh, dh, gates, hn, h + t * B * d, B, d);
}

/* The encoder: xs (Ts, B, d) = encoder.embedding[src], then each layer
 * over all steps: its input projections at once, the recurrence step by
 * step from zeros. */
static void encode(bah_fast_cache *c, const s2s_model *m, const bah_fast_weights *w,
                   const dims *s)
{
    const size_t B = s->B, d = s->d, n = s->Ts * B, G = s->G;
    for (size_t r = 0; r < n; r++) /* row t·B + b */
        memcpy(c->xs + r * d, bah_net(m)->enc_embedding.data + (size_t)c->src_tm[r] * d,
               d * sizeof(float));
    for (size_t l = 0; l < s->L; l++) {
        const rnn_view g = layer_of(m, 0, l);
        const float *x = l ? c->enc_h[l - 1] + B * d : c->xs; /* (Ts, B, d) */
        float *h = c->enc_h[l];                                 /* (Ts + 1, B, d) */
        /* egi (Ts·B, 3d) = x · W_ihᵀ + b_ih, every step at once */
        mm(c->egi, G * d, g.b_ih->data, 0, x, d, w->enc_ih[l], s->g, 1, n, d, G * d);
        memset(h, 0, B * d * sizeof *h);
        if (s->lstm) /* the cells start at zero too */
            memset(c->enc_c[l], 0, B * d * sizeof *h);
        for (size_t t = 0; t < s->Ts; t++) {
            const float *hp = h + t * B * d;
            /* gh (B, G·d) = h_{t−1} · W_hhᵀ + b_hh, then the gates */
            mm(c->gh, G * d, g.b_hh->data, 0, hp, d, w->enc_hh[l], s->g, 1, B, d, G * d);
            cell_step(c, s, 0, l, t, c->egi + t * B * G * d, c->gh);
        }
    }
}

/* What the decoder starts from: H (B, Ts, d), the encoder's last layer's
 * states per pair; K = H · W_kᵀ; every decoder layer's state before step
 * 0, the encoder layer's after its last step. */
static void decode_start(bah_fast_cache *c, const bah_fast_weights *w, const dims *s)
{
    const size_t B = s->B, d = s->d, Ts = s->Ts;
    const float *top = c->enc_h[s->L - 1];
    for (size_t b = 0; b < B; b++)
        for (size_t t = 0; t < Ts; t++)
            memcpy(c->H + (b * Ts + t) * d, top + ((t + 1) * B + b) * d, d * sizeof(float));
    if (!s->dot) /* the additive score's keys */
        mm(c->K, d, NULL, 0, c->H, d, w->Wk, w->dp, 1, B * Ts, d, d);
    for (size_t l = 0; l < s->L; l++) {
        memcpy(c->dec_h[l], c->enc_h[l] + Ts * B * d, B * d * sizeof(float));
        if (s->lstm)
            memcpy(c->dec_c[l], c->enc_c[l] + Ts * B * d, B * d * sizeof(float));
    }
}

/* Steps t0 … t0 + nt − 1's decoder inputs: the embedding half of xt
 * (nt, B, 2d) from din_tm, and ge (nt·B, 3d) = embedding · W_ih[:, d:]ᵀ
 * + b_ih, all rows at once. */
static void decode_embed(bah_fast_cache *c, const s2s_model *m, const bah_fast_weights *w,
                         const dims *s, size_t t0, size_t nt)
{
    const size_t B = s->B, d = s->d, r0 = t0 * B, n = nt * B, G = s->G;
    for (size_t r = r0; r < r0 + n; r++)
        memcpy(c->xt + r * 2 * d + d, bah_net(m)->dec_embedding.data + (size_t)c->din_tm[r] * d,
               d * sizeof(float));
    mm(c->ge + r0 * G * d, G * d, layer_of(m, 1, 0).b_ih->data, 0, c->xt + r0 * 2 * d + d, 2 * d,
       w->dec_ih[0] + d * s->g, s->g, 1, n, d, G * d);
}

/* Pair b's attention at one step (bahdanau.h), over the n source
 * positions it sees (n ≤ Ts; the others' weights are 0, their features
 * unused):
 *   F_j = tanh(wq + K_j) (n, d), e_j = w_v · F_j (16 partial sums),
 *   a = softmax(e) (Ts,): 0 beyond n, c = Σ_{j<n} a_j H_j (d,)
 * wv NULL: --score dot, wq the query q itself, e_j = q · H_j / √d (16
 * partial sums, then the division; F unused). */
static void attend(float *c_out, float *a, float *F, const float *wq, const float *K,
                   const float *H, const float *wv, size_t n, size_t Ts, size_t d)
{
    size_t j, k;
    float max, sum;
    for (j = 0; j < n; j++) {
        f32x16 e = v16_splat(0.0f);
        for (k = 0; k < d && wv; k += V16) { /* lane l: k ≡ l mod 16 */
            const f32x16 f = v16_tanh(ld(wq + k, d - k) + ld(K + j * d + k, d - k));
            st(F + j * d + k, f, d - k);
            e = v16_fma(f, ld(wv + k, d - k), e);
        }
        for (k = 0; k < d && !wv; k += V16)
            e = v16_fma(ld(wq + k, d - k), ld(H + j * d + k, d - k), e);
        a[j] = wv ? v16_hsum(e) : v16_hsum(e) / sqrtf((float)d);
    }
    /* the softmax over the scores it sees, the largest subtracted first */
    max = n ? a[0] : 0.0f;
    for (j = 1; j < n; j++)
        max = a[j] > max ? a[j] : max;
    sum = v16_exp_row(a, n, max);
    for (j = 0; j < n; j++)
        a[j] /= sum;
    for (j = n; j < Ts; j++)
        a[j] = 0.0f;
    /* the context Σ_j a_j H_j, in order of j */
    for (k = 0; k < d; k += V16) {
        f32x16 acc = v16_splat(0.0f);
        for (j = 0; j < n; j++)
            acc = v16_fma(v16_splat(a[j]), ld(H + j * d + k, d - k), acc);
        st(c_out + k, acc, d - k);
    }
}

/* Decoder step t, its inputs' embedding half already in xt and ge: the
 * query q_t = the last layer's previous state, every pair's attention
 * (row t of pair b into A + b·a_stride, Ts floats), the context into xt,
 * then the GRU's layers. */
static void decode_step(bah_fast_cache *c, const s2s_model *m, const bah_fast_weights *w,
                        const dims *s, size_t t, float *A, size_t a_stride)
{
    const size_t B = s->B, d = s->d, Ts = s->Ts, L = s->L, G = s->G;
    const float *q = c->dec_h[L - 1] + t * B * d; /* (B, d) */
    float *wq = c->Wq + t * B * d, *xt = c->xt + t * B * 2 * d;
    /* W_q q_t (B, d); the dot product's query is q_t itself */
    if (s->dot)
        memcpy(wq, q, B * d * sizeof *wq);
    else
        mm(wq, d, NULL, 0, q, d, w->Wq, w->dp, 1, B, d, d);
    for (size_t b = 0; b < B; b++)
        attend(xt + b * 2 * d, A + b * a_stride, c->F + (t * B + b) * Ts * d, wq + b * d,
               c->K + b * Ts * d, c->H + b * Ts * d, s->dot ? NULL : bah_net(m)->att_w_v.data,
               visible(s, b), Ts, d);
    for (size_t l = 0; l < L; l++) {
        const rnn_view g = layer_of(m, 1, l);
        const float *hp = c->dec_h[l] + t * B * d;
        if (l == 0) /* gi = ge_t + c_t · W_ih[:, :d]ᵀ */
            mm(c->gi, G * d, c->ge + t * B * G * d, G * d, xt, 2 * d, w->dec_ih[0], s->g, 1, B,
               d, G * d);
        else /* gi = (layer l − 1's new state) · W_ihᵀ + b_ih */
            mm(c->gi, G * d, g.b_ih->data, 0, c->dec_h[l - 1] + (t + 1) * B * d, d,
               w->dec_ih[l], s->g, 1, B, d, G * d);
        mm(c->gh, G * d, g.b_hh->data, 0, hp, d, w->dec_hh[l], s->g, 1, B, d, G * d);
        cell_step(c, s, 1, l, t, c->gi, c->gh);
    }
}

/* The teacher-forced forward pass: logits (B, Tt, Vt) and A (B, Tt, Ts). */
static void forward(bah_fast_cache *c, const s2s_model *m, const bah_fast_weights *w,
                    const dims *s)
{
    const size_t B = s->B, d = s->d, Tt = s->Tt, L = s->L;
    encode(c, m, w, s);
    decode_start(c, w, s);
    decode_embed(c, m, w, s, 0, Tt);
    for (size_t t = 0; t < Tt; t++)
        decode_step(c, m, w, s, t, c->A + t * s->Ts, Tt * s->Ts);
    /* o (B, Tt, d) = the last layer's states; logits = o · denseᵀ + bias */
    for (size_t b = 0; b < B; b++)
        for (size_t t = 0; t < Tt; t++)
            memcpy(c->o + (b * Tt + t) * d, c->dec_h[L - 1] + ((t + 1) * B + b) * d,
                   d * sizeof(float));
    mm(c->logits, s->Vt, bah_net(m)->dense.bias.data, 0, c->o, d, w->dense, w->vp, 1, B * Tt, d, s->Vt);
}

/* ---- backward --------------------------------------------------------------- */

/* The gradient of tensor t in grads (laid out as m->param), or NULL. */
static float *grad_of(float *grads, const s2s_model *m, const tensor *t)
{
    return tparam_gradf(m->param, m->nparams, grads, t);
}

/* Pair b's attention backward at one step, from dc (d,) = d loss / d c:
 *   da_j = dc · H_j, dH_j += a_j dc, the softmax's de_j = a_j (da_j − Σ_k
 *   a_k da_k), dw_v += de_j F_j, dP_j = de_j w_v ⊙ (1 − F_j²) (tanh's
 *   input), d(W_q q) += Σ_j dP_j, dK_j += dP_j
 * over the n positions it sees (the others have weight 0: no gradient).
 * da is scratch (n,). wv NULL: --score dot, F the query q (d,): with
 * de'_j = de_j / √d, dq += de'_j H_j and dH_j += de'_j q (dK, dwv
 * unused). */
static void attend_backward(float *dwq, float *dK, float *dH, float *dwv, float *da,
                            const float *dc, const float *a, const float *F, const float *H,
                            const float *wv, size_t n, size_t d)
{
    const f32x16 one = v16_splat(1.0f);
    size_t j, k;
    float dot = 0.0f;
    for (j = 0; j < n; j++) {
        f32x16 acc = v16_splat(0.0f);
        for (k = 0; k < d; k += V16) {
            const f32x16 g = ld(dc + k, d - k);
            acc = v16_fma(g, ld(H + j * d + k, d - k), acc);
            st(dH + j * d + k, v16_fma(v16_splat(a[j]), g, ld(dH + j * d + k, d - k)), d - k);
        }
        da[j] = v16_hsum(acc);
    }
    for (j = 0; j < n; j++) /* Σ_k a_k da_k, in order */
        dot += a[j] * da[j];
    for (j = 0; j < n && !wv; j++) {
        const f32x16 de = v16_splat(a[j] * (da[j] - dot) / sqrtf((float)d));
        for (k = 0; k < d; k += V16) {
            const size_t w = d - k;
            st(dwq + k, v16_fma(de, ld(H + j * d + k, w), ld(dwq + k, w)), w);
            st(dH + j * d + k, v16_fma(de, ld(F + k, w), ld(dH + j * d + k, w)), w);
        }
    }
    for (j = 0; j < n && wv; j++) {
        const f32x16 de = v16_splat(a[j] * (da[j] - dot));
        for (k = 0; k < d; k += V16) {
            const size_t w = d - k;
            const f32x16 f = ld(F + j * d + k, w);
            const f32x16 dp = de * ld(wv + k, w) * (one - f * f);
            st(dwv + k, v16_fma(de, f, ld(dwv + k, w)), w);
            st(dwq + k, ld(dwq + k, w) + dp, w);
            st(dK + j * d + k, ld(dK + j * d + k, w) + dp, w);
        }
    }
}

/* Decoder step t backward (the steps in reverse): c->dstate holds d loss /
 * d every layer's state after step t; on return, before it. Each layer's
 * dgi, dgh of step t are kept for the weights' products; the attention
 * adds into dH, dK, dWq_t, dw_v and, through the query, dstate[L − 1]. */
static void decode_step_backward(bah_fast_cache *c, const s2s_model *m, float *dwv,
                                 const dims *s, size_t t)
{
    const size_t B = s->B, d = s->d, Ts = s->Ts, Tt = s->Tt, L = s->L, G = s->G;
    float *dtop = c->dstate + (L - 1) * B * d, *dwq = c->dWq + t * B * d;
    for (size_t b = 0; b < B; b++) /* d o_t into the last layer's state */
        for (size_t k = 0; k < d; k++)
            dtop[b * d + k] += c->do_[(b * Tt + t) * d + k];
    for (size_t l = L; l-- > 0;) {
        const rnn_view g = layer_of(m, 1, l);
        float *dh = c->dstate + l * B * d, *dcs = s->lstm ? c->dcell + l * B * d : NULL;
        float *dgi = c->dgi[l] + t * B * G * d, *dgh = c->dgh[l] + t * B * G * d;
        cell_step_backward(c, s, 1, l, t, dgi, dgh, dh, dcs);
        /* dh += dgh · W_hh */
        mm(dh, d, dh, d, dgh, G * d, g.w_hh->data, d, 0, B, G * d, d);
        if (l > 0) /* into layer l − 1's state after step t: dgi · W_ih */
            mm(c->dstate + (l - 1) * B * d, d, c->dstate + (l - 1) * B * d, d, dgi, G * d,
               g.w_ih->data, d, 0, B, G * d, d);
        else /* dc (B, d) = dgi · W_ih[:, :d] */
            mm(c->dc, d, NULL, 0, dgi, G * d, g.w_ih->data, 2 * d, 0, B, G * d, d);
    }
    memset(dwq, 0, B * d * sizeof *dwq);
    for (size_t b = 0; b < B; b++)
        attend_backward(dwq + b * d, c->dK + b * Ts * d, c->dH + b * Ts * d, dwv, c->da,
                        c->dc + b * d, c->A + (b * Tt + t) * Ts,
                        s->dot ? c->Wq + (t * B + b) * d : c->F + (t * B + b) * Ts * d,
                        c->H + b * Ts * d, s->dot ? NULL : bah_net(m)->att_w_v.data,
                        visible(s, b), d);
    /* the query: dstate[L − 1] += d(W_q q_t) · W_q, or d q_t itself */
    if (s->dot)
        for (size_t i = 0; i < B * d; i++)
            dtop[i] += dwq[i];
    else
        mm(dtop, d, dtop, d, dwq, d, bah_net(m)->att_W_q.data, d, 0, B, d, d);
}

/* A GRU or LSTM layer's weight gradients over T·B rows at once: dgi, dgh
 * (T·B, G·d), x (T·B, I) its inputs and h (T·B, d) its states before each
 * step: dW_ih += dgiᵀ x, db_ih += Σ dgi, dW_hh += dghᵀ h, db_hh += Σ dgh. */
static void rnn_weight_grads(float *grads, const s2s_model *m, rnn_view g,
                             const float *dgi, const float *dgh, const float *x, size_t I,
                             const float *h, size_t n, size_t d)
{
    const size_t G = m->cfg.rnn == S2S_RNN_LSTM ? 4 : 3;
    wgrad(grad_of(grads, m, g.w_ih), grad_of(grads, m, g.b_ih), dgi, x, n, I, G * d);
    wgrad(grad_of(grads, m, g.w_hh), grad_of(grads, m, g.b_hh), dgh, h, n, d, G * d);
}

/* The decoder's backward pass from dlogits: dense, the steps in reverse,
 * then each layer's weights, W_q, the decoder's embedding, and K's
 * gradient through W_k into dH. On return dH (B, Ts, d) is d loss / d the
 * encoder's outputs and dstate (L, B, d) / d its final states. */
static void decoder_backward(float *grads, bah_fast_cache *c, const s2s_model *m,
                             const dims *s)
{
    const size_t B = s->B, d = s->d, Ts = s->Ts, Tt = s->Tt, L = s->L, n = Tt * B, G = s->G;
    memset(c->do_, 0, B * Tt * d * sizeof *c->do_);
    /* d dense, and d o (B·Tt, d) = dlogits · dense.weight */
    fl_linear_backward(c->do_, grad_of(grads, m, &bah_net(m)->dense.weight),
                       grad_of(grads, m, &bah_net(m)->dense.bias), c->dlogits, c->o, B * Tt,
                       bah_net(m)->dense.weight.data, d, s->Vt);
    memset(c->dstate, 0, L * B * d * sizeof *c->dstate);
    if (s->lstm)
        memset(c->dcell, 0, L * B * d * sizeof *c->dcell);
    memset(c->dH, 0, B * Ts * d * sizeof *c->dH);
    memset(c->dK, 0, B * Ts * d * sizeof *c->dK);
    for (size_t t = Tt; t-- > 0;)
        decode_step_backward(c, m, grad_of(grads, m, &bah_net(m)->att_w_v), s, t);
    for (size_t l = 0; l < L; l++)
        rnn_weight_grads(grads, m, layer_of(m, 1, l), c->dgi[l], c->dgh[l],
                         l ? c->dec_h[l - 1] + B * d : c->xt, l ? d : 2 * d, c->dec_h[l], n, d);
    /* d W_q += d(W_q q)ᵀ q over every step (q_t = dec_h[L − 1] row t) */
    if (!s->dot)
        wgrad(grad_of(grads, m, &bah_net(m)->att_W_q), NULL, c->dWq, c->dec_h[L - 1], n, d, d);
    /* the embedding: d xt[:, d:] (Tt·B, d) = dgi_0 · W_ih[:, d:] */
    mm(c->dx, d, NULL, 0, c->dgi[0], G * d, layer_of(m, 1, 0).w_ih->data + d, 2 * d, 0, n, G * d, d);
    fl_embed_backward(grad_of(grads, m, &bah_net(m)->dec_embedding), c->dx, c->din_tm, n, d, 1.0f);
    /* K = H · W_kᵀ: d W_k += dKᵀ H, dH += dK · W_k (the additive score's) */
    if (s->dot)
        return;
    wgrad(grad_of(grads, m, &bah_net(m)->att_W_k), NULL, c->dK, c->H, B * Ts, d, d);
    mm(c->dH, d, c->dH, d, c->dK, d, bah_net(m)->att_W_k.data, d, 0, B * Ts, d, d);
}

/* The encoder's backward pass from dH (B, Ts, d) and dstate (L, B, d):
 * layer by layer from the top, each over its steps in reverse, then its
 * weights' products; the source embedding last. */
static void encoder_backward(float *grads, bah_fast_cache *c, const s2s_model *m,
                             const dims *s)
{
    const size_t B = s->B, d = s->d, Ts = s->Ts, n = Ts * B, G = s->G;
    float *dout = c->dout, *dx = c->dx, *dgi = c->dgi[0], *dgh = c->dgh[0];
    for (size_t b = 0; b < B; b++) /* dout (Ts, B, d) = dH (B, Ts, d) by step */
        for (size_t t = 0; t < Ts; t++)
            memcpy(dout + (t * B + b) * d, c->dH + (b * Ts + t) * d, d * sizeof *dout);
    for (size_t l = s->L; l-- > 0;) {
        const rnn_view g = layer_of(m, 0, l);
        float *dh = c->dstate + l * B * d, *swap;
        float *dcs = s->lstm ? c->dcell + l * B * d : NULL;
        for (size_t t = Ts; t-- > 0;) {
            for (size_t k = 0; k < B * d; k++)
                dh[k] += dout[t * B * d + k];
            cell_step_backward(c, s, 0, l, t, dgi + t * B * G * d, dgh + t * B * G * d, dh, dcs);
            mm(dh, d, dh, d, dgh + t * B * G * d, G * d, g.w_hh->data, d, 0, B, G * d, d);
        }
        rnn_weight_grads(grads, m, g, dgi, dgh, l ? c->enc_h[l - 1] + B * d : c->xs, d,
                         c->enc_h[l], n, d);
        /* d of the layer's input (Ts·B, d) = dgi · W_ih: the output of
         * layer l − 1, or the embedded source */
        mm(dx, d, NULL, 0, dgi, G * d, g.w_ih->data, d, 0, n, G * d, d);
        swap = dout, dout = dx, dx = swap;
    }
    fl_embed_backward(grad_of(grads, m, &bah_net(m)->enc_embedding), dout, c->src_tm, n, d, 1.0f);
}

double bah_fast_step(float *grads, bah_fast_cache *c, const s2s_model *m,
                     const bah_fast_weights *w, const int *src, const long *src_lens,
                     const int *dec_in, const int *targets, size_t B, size_t Ts, size_t Tt,
                     double scale, size_t *count, size_t *correct)
{
    const dims s = dims_of(w, B, Ts, Tt, src_lens);
    double loss;
    assert(B <= c->Bmax && Ts <= c->Tmax && Tt <= c->Tmax); /* the caller's promise */
    c->B = B, c->Ts = Ts, c->Tt = Tt;
    ids_time_major(c->src_tm, src, B, Ts);
    ids_time_major(c->din_tm, dec_in, B, Tt);
    forward(c, m, w, &s);
    if (!targets)
        return 0.0;
    /* the summed loss, and d logits (B, Tt, Vt) = (softmax − one-hot) · scale */
    loss = fl_cross_entropy(c->dlogits, c->logits, targets, B * Tt, s.Vt, scale, count,
                            correct);
    if (grads) {
        decoder_backward(grads, c, m, &s);
        encoder_backward(grads, c, m, &s);
    }
    return loss;
}

/* ---- greedy decoding ---------------------------------------------------- */

/* Step t's choices: each pair still decoding takes its argmax; <eos> ends
 * it (not output). Returns how many ended. */
static size_t greedy_choose(bah_fast_cache *c, const float *logits, size_t B, size_t Vt,
                            size_t t, int eos, size_t max_len, int *out, size_t *n_out)
{
    size_t ended = 0;
    for (size_t b = 0; b < B; b++) {
        const int arg = s2s_argmax(logits + b * Vt, Vt);
        if (n_out[b] != SIZE_MAX)
            continue; /* done: its <eos> came earlier (it is fed <eos>) */
        if (arg == eos) {
            n_out[b] = t;
            c->tok[b] = eos;
            ended++;
            continue;
        }
        out[b * max_len + t] = arg;
        c->tok[b] = arg;
    }
    return ended;
}

size_t bah_fast_greedy_batch(bah_fast_cache *c, const s2s_model *m, const bah_fast_weights *w,
                             const int *src, const long *src_lens, size_t B, size_t Ts, int bos,
                             int eos, size_t max_len, int *out, size_t *n_out)
{
    const size_t d = w->d, Vt = w->Vt, L = w->L;
    size_t b, t, running = B, steps = 0;
    dims s;
    assert(B <= c->Bmax && Ts <= c->Tmax);
    if (max_len > c->Tmax)
        max_len = c->Tmax;
    s = dims_of(w, B, Ts, max_len, src_lens);
    c->B = B, c->Ts = Ts, c->Tt = max_len;
    ids_time_major(c->src_tm, src, B, Ts);
    encode(c, m, w, &s);
    decode_start(c, w, &s);
    for (b = 0; b < B; b++) {
        c->tok[b] = bos;
        n_out[b] = SIZE_MAX; /* still decoding */
    }
    for (t = 0; t < max_len && running > 0; t++) {
        /* the decoder on every pair's last token; logits (B, Vt) = o_t ·
         * denseᵀ + bias, as the teacher-forced pass computes them */
        memcpy(c->din_tm + t * B, c->tok, B * sizeof *c->tok);
        decode_embed(c, m, w, &s, t, 1);
        decode_step(c, m, w, &s, t, c->Ag + t * B * Ts, Ts);
        mm(c->logits, Vt, bah_net(m)->dense.bias.data, 0, c->dec_h[L - 1] + (t + 1) * B * d, d, w->dense,
           w->vp, 1, B, d, Vt);
        steps = t + 1;
        running -= greedy_choose(c, c->logits, B, Vt, t, eos, max_len, out, n_out);
    }
    for (b = 0; b < B; b++)
        if (n_out[b] == SIZE_MAX)
            n_out[b] = max_len; /* no <eos> within max_len */
    /* A (B, steps, Ts) from Ag (steps, B, Ts) */
    for (b = 0; b < B; b++)
        for (t = 0; t < steps; t++)
            memcpy(c->A + (b * steps + t) * Ts, c->Ag + (t * B + b) * Ts, Ts * sizeof *c->A);
    return steps;
}

/* ---- the table ------------------------------------------------------------ */

static int weights_alloc_op(s2s_fast_weights *w, const s2s_model *m)
{
    return (w->net = bah_fast_weights_new(m)) ? 0 : -1;
}

static void weights_update_op(s2s_fast_weights *w, const s2s_model *m)
{
    bah_fast_weights_update(w->net, m);
}

static void weights_free_op(s2s_fast_weights *w)
{
    bah_fast_weights_free(w->net);
    w->net = NULL;
}

static int cache_alloc_op(s2s_fast_cache *c, const s2s_model *m)
{
    return (c->net = bah_fast_cache_new(m, c->Bmax, c->Tmax)) ? 0 : -1;
}

static void cache_free_op(s2s_fast_cache *c)
{
    bah_fast_cache_free(c->net);
    c->net = NULL;
}

static double step_op(float *grads, s2s_fast_cache *c, const s2s_model *m,
                      const s2s_fast_weights *w, const int *src, const long *src_lens,
                      const int *dec_in, const int *targets, size_t B, size_t Ts, size_t Tt,
                      double scale, const mha_dropout *drop, size_t example0, size_t *count,
                      size_t *correct)
{
    (void)drop, (void)example0; /* no dropout: bahdanau.h */
    return bah_fast_step(grads, c->net, m, w->net, src, src_lens, dec_in, targets, B, Ts, Tt,
                         scale, count, correct);
}

static size_t greedy_batch_op(s2s_fast_cache *c, const s2s_model *m, const s2s_fast_weights *w,
                              const int *src, const long *src_lens, size_t B, size_t Ts, int bos,
                              int eos, size_t max_len, int *out, size_t *n_out)
{
    return bah_fast_greedy_batch(c->net, m, w->net, src, src_lens, B, Ts, bos, eos, max_len, out,
                                 n_out);
}

static const float *cross_op(const s2s_fast_cache *c, size_t l)
{
    (void)l; /* its one attention */
    return bah_fast_attention(c->net);
}

static const float *logits_op(const s2s_fast_cache *c)
{
    return bah_fast_logits(c->net);
}

const s2s_fast_ops bah_fast_ops = {
    .weights_alloc = weights_alloc_op,
    .weights_update = weights_update_op,
    .weights_free = weights_free_op,
    .cache_alloc = cache_alloc_op,
    .cache_bytes = bah_fast_cache_bytes,
    .cache_free = cache_free_op,
    .step = step_op,
    .greedy_batch = greedy_batch_op,
    .cross = cross_op,
    .self = NULL,
    .logits = logits_op,
};
