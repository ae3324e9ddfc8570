/* block_fast.h — the float32 loops of a Transformer block, forward and
 * backward, shared by attn train's encoder stack (encoder_fast.c) and the
 * encoder–decoder (transformer_fast.c). Each is the fast arrangement of a
 * reference in double (attention.c, attention_backward.c, layers.c); the
 * tests compare the two.
 *
 * Dimensions: B examples, Tq query positions, Tk key positions (Tq = Tk in
 * self-attention; the decoder's cross-attention reads Tk source positions),
 * d num_hiddens, NH heads, p = d / NH, n rows (B·T), H the FFN's width.
 * Every tensor is row-major; (B, T, d) holds row b·T + t at (b·T + t)·d.
 *
 * The same bits on every machine (SPEC §12): a sum over one vector is in
 * order, term by term, or lanes.h's 16 partial sums in a fixed tree; a
 * multiply-add is fused only where fmaf or v16_fma says so; e^x is
 * lanes.h's. Gradients are ADDED to (+=) unless a function says "=".
 */
#ifndef ATTN_BLOCK_FAST_H
#define ATTN_BLOCK_FAST_H

#include <stddef.h>

#include "attention.h"

/* A new a·b·c floats, zeroed (free with free), the product checked; NULL
 * and *failed set when it overflows or memory runs out. */
float *fl_zeros(size_t a, size_t b, size_t c, int *failed);
/* dst (in, out) = src (out, in)ᵀ: an nn.Linear weight for fl_linear_forward */
void fl_transpose(float *dst, const float *src, size_t out, size_t in);

/* y (n, out) = x (n, in) · Wt (in, out) + bias (bias may be NULL): Wt is
 * the nn.Linear weight transposed, so that a row of y adds rows of Wt. */
void fl_linear_forward(float *y, const float *x, size_t n, const float *Wt, const float *bias,
                       size_t in, size_t out);
/* Its backward with W (out, in), the weight untransposed:
 *   dW (out, in) += dyᵀ · x,  db (out,) += Σ_rows dy (db may be NULL),
 *   dx (n, in) += dy · W (dx may be NULL) */
void fl_linear_backward(float *dx, float *dW, float *db, const float *dy, const float *x,
                        size_t n, const float *W, size_t in, size_t out);

/* One multi-head attention's shapes and masks. Query q of example b sees
 * keys 0 … n−1, n = min(q + 1 with causal, lens[b] when lens, Tk); the
 * other keys have the score −1e6, whose softmax weight is exactly 0 in
 * float32: the loops skip them and give the same numbers. */
typedef struct fl_attention {
    size_t B, Tq, Tk, d, NH, p;
    const long *lens;        /* (B,) valid key lengths, or NULL */
    int causal;
    const mha_dropout *drop; /* dropout on the weights (training), or NULL */
    float inv_sqrt_p;        /* 1/√p */
    float keep_scale;        /* 1/(1 − dropout) */
    /* (NH,) 0: head h switched off (mha_params.heads_on): not computed,
     * its columns of O and its weights in A zeros, no gradient through it
     * (the reference still computes its weights); NULL: every head */
    const unsigned char *heads_on;
} fl_attention;

/* Scratch of fl_heads_forward and fl_heads_backward: 16·(p + 3·Tk)
 * floats (a block of 16 queries' tiles). */
size_t fl_heads_scratch(const fl_attention *s);
/* A new scratch for any attention of d num_hiddens and at most Tmax key
 * positions, zeroed (free with free); NULL and *failed set as fl_zeros. */
float *fl_heads_scratch_alloc(size_t d, size_t Tmax, int *failed);

/* Every head of every example: A (B, NH, Tq, Tk) = softmax(Q_h K_hᵀ/√p,
 * masked) (0 at masked keys, before dropout), O (B, Tq, d) = the heads'
 * A_h·V_h side by side (A through dropout). Q (B, Tq, d), K and V
 * (B, Tk, d). O and A are written (=). */
void fl_heads_forward(float *O, float *A, float *scratch, const float *Q, const float *K,
                      const float *V, const fl_attention *s);
/* Its backward from dO (B, Tq, d): dA = dO·V_hᵀ, dV_h += A_hᵀ dO, the
 * softmax's dS = A ⊙ (dA − Σ dA ⊙ A), then dQ_h += dS K_h / √p and
 * dK_h += dSᵀ Q_h / √p. */
void fl_heads_backward(float *dQ, float *dK, float *dV, float *scratch, const float *dO,
                       const float *A, const float *Q, const float *K, const float *V,
                       const fl_attention *s);

/* out (n, d) = LayerNorm(x + y) · gamma + beta (eps 1e-5), x̂ into xh (n,
 * d) and 1/σ into rstd (n,), all written (=); the mean and the variance as
 * lanes.h's sums. */
void fl_addnorm_forward(float *out, float *xh, float *rstd, const float *x, const float *y,
                        const float *gamma, const float *beta, size_t n, size_t d);
/* Its backward from dout (n, d): dgamma (d,) += Σ dout ⊙ x̂, dbeta (d,)
 * += Σ dout, and dZ = rstd (dx̂ − mean(dx̂) − x̂ mean(dx̂ ⊙ x̂)), dx̂ = dout
 * ⊙ gamma, written (=) into both dx and dy: the two terms of the sum. */
void fl_addnorm_backward(float *dx, float *dy, float *dgamma, float *dbeta, const float *dout,
                         const float *xh, const float *rstd, const float *gamma, size_t n,
                         size_t d);

/* R (n·H,) = ReLU(Hin): written (=) */
void fl_relu_forward(float *R, const float *Hin, size_t count);
/* dR (n·H,) = 0 where Hin ≤ 0 (PyTorch's choice at 0), in place */
void fl_relu_backward(float *dR, const float *Hin, size_t count);

/* X (n, d) = embedding[tokens[r]] · scale + P[r mod T] (P (T, d) may be
 * NULL): written (=) */
void fl_embed_forward(float *X, const float *embedding, const int *tokens, size_t n, size_t T,
                      size_t d, float scale, const float *P);
/* dE[tokens[r]] += dX[r] · scale */
void fl_embed_backward(float *dE, const float *dX, const int *tokens, size_t n, size_t d,
                       float scale);

/* Cross-entropy of logits (n, C) against targets (n,) (−1: none): returns
 * the summed loss (in double), *count and *correct (either may be NULL)
 * the targets and how many are the argmax; dlogits (n, C) = (softmax −
 * one-hot) · scale at rows with a target, 0 elsewhere (written =). */
double fl_cross_entropy(float *dlogits, const float *logits, const int *targets, size_t n,
                        size_t C, double scale, size_t *count, size_t *correct);

/* ---- whole modules ------------------------------------------------------ */

/* A linear layer's weight transposed (in, out) for the forward product,
 * and the module itself (its weight (out, in) for the backward, its bias
 * or NULL). */
typedef struct fl_linear {
    const float *Wt;
    const linear *l;
} fl_linear;

/* A gradient buffer's slices for one linear layer: dW (out, in), db (out,)
 * or NULL. */
typedef struct fl_linear_grads {
    float *dW, *db;
} fl_linear_grads;

/* d2l's MultiHeadAttention: its four projections, their gradients, its
 * activations (Q (B, Tq, d), K and V (B, Tk, d), O the heads side by side
 * (B, Tq, d), Y = O·W_oᵀ (B, Tq, d), A (B, NH, Tq, Tk)). */
typedef struct fl_mha {
    fl_linear q, k, v, o;
} fl_mha;
typedef struct fl_mha_grads {
    fl_linear_grads q, k, v, o;
} fl_mha_grads;
typedef struct fl_mha_acts {
    float *Q, *K, *V, *O, *Y, *A;
} fl_mha_acts;
/* Scratch of the backward pass: dO, dQ (B, Tq, d), dK, dV (B, Tk, d). */
typedef struct fl_mha_scratch {
    float *dO, *dQ, *dK, *dV;
    float *heads; /* fl_heads_scratch floats */
} fl_mha_scratch;

/* Y = MultiHeadAttention(xq, xkv, xkv) (queries xq (B, Tq, d), keys and
 * values xkv (B, Tk, d)), every activation into a. */
void fl_mha_forward(const fl_mha_acts *a, float *heads_scratch, const float *xq,
                    const float *xkv, const fl_mha *w, const fl_attention *s);
/* Its backward from dY (B, Tq, d): the weights' gradients into g (+=),
 * dxq (B, Tq, d) += and dxkv (B, Tk, d) += (the same buffer in
 * self-attention: both terms add into it). */
void fl_mha_backward(float *dxq, float *dxkv, const fl_mha_grads *g, const fl_mha_scratch *t,
                     const float *dY, const fl_mha_acts *a, const float *xq, const float *xkv,
                     const fl_mha *w, const fl_attention *s);

/* d2l's PositionWiseFFN: F (n, d) = dense2(ReLU(dense1(x))), with its
 * activations H and R (n, Hn). */
void fl_ffn_forward(float *F, float *H, float *R, const float *x, const fl_linear *dense1,
                    const fl_linear *dense2, size_t n, size_t d, size_t Hn);
/* Its backward from dF (n, d): dR (n, Hn) is scratch; dx (n, d) +=. */
void fl_ffn_backward(float *dx, const fl_linear_grads *g1, const fl_linear_grads *g2, float *dR,
                     const float *dF, const float *H, const float *R, const float *x,
                     const fl_linear *dense1, const fl_linear *dense2, size_t n, size_t d,
                     size_t Hn);

#endif
