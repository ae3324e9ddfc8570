/* transformer_fast.h — transformer.h's encoder–decoder arranged to be
 * fast (seq2seq_fast.h's interface, tfm_fast_ops): float32 throughout,
 * block_fast.h's loops (the ones attn train's encoder stack runs too),
 * the weights of the forward products transposed
 * once per step, no allocation inside a step. It computes the formulas of
 * transformer.c (the reference, in double); the tests compare the two.
 *
 * Dimensions as in transformer.h: B pairs, Ts source and Tt target positions,
 * Vs and Vt the vocabularies, d num_hiddens, NH heads, p = d / NH, L blocks
 * a side, H the FFN's width.
 */
#ifndef ATTN_TRANSFORMER_FAST_H
#define ATTN_TRANSFORMER_FAST_H

#include <stddef.h>

#include "block_fast.h"
#include "encoder_fast.h"
#include "seq2seq_fast.h"
#include "transformer.h"

extern const s2s_fast_ops tfm_fast_ops;

/* The weights of the forward products, transposed to (in, out) rows
 * (s2s_fast_weights.net). */
typedef struct tfm_fast_weights {
    tfast_block_weights enc[TMODEL_MAX_LAYERS]; /* (L,) attention and FFN */
    tfast_block_weights dec[TMODEL_MAX_LAYERS]; /* (L,) attention1 and the FFN */
    float *cross[TMODEL_MAX_LAYERS][4];         /* (L,) attention2's W_q … W_o, (d, d) */
    float *dense;                               /* (d, Vt) */
} tfm_fast_weights;

/* One decoder block's activations. */
typedef struct tfm_fast_dec_block {
    fl_mha_acts self;            /* attention1: (B, Tt, d), A (B, NH, Tt, Tt) */
    float *N1, *xh1, *rstd1;     /* addnorm1 (B, Tt, d), (B, Tt) */
    fl_mha_acts cross;           /* attention2: Q, O, Y (B, Tt, d); K, V (B, Ts, d);
                                  * A (B, NH, Tt, Ts) */
    float *N2, *xh2, *rstd2;     /* addnorm2 */
    float *H, *R, *F;            /* the FFN: (B, Tt, H), (B, Tt, H), (B, Tt, d) */
    float *N3, *xh3, *rstd3;     /* addnorm3: the block's output */
} tfm_fast_dec_block;

/* One chunk's activations and scratch, for up to Bmax pairs of up to Tmax
 * positions a side (s2s_fast_cache.net). */
typedef struct tfm_fast_cache {
    size_t Bmax, Tmax;
    float *P;                              /* (Tmax, d) the positional encoding */
    float *Xs;                             /* (B, Ts, d) the encoder's input */
    tfast_block enc[TMODEL_MAX_LAYERS];    /* (L,) the encoder's blocks */
    float *Xt;                             /* (B, Tt, d) the decoder's input */
    tfm_fast_dec_block dec[TMODEL_MAX_LAYERS]; /* (L,) */
    float *logits, *dlogits;               /* (B, Tt, Vt) */
    float *dA, *dB, *dC;                   /* (B, Tmax, d) gradients of activations */
    float *dEnc;                           /* (B, Ts, d) of the encoder's output */
    float *dY, *dF;                        /* (B, Tmax, d) */
    float *dO, *dQ, *dK, *dV;              /* (B, Tmax, d) attention's scratch */
    float *dR;                             /* (B, Tmax, H) */
    float *heads;                          /* fl_heads_scratch_alloc */
    int *dec_in, *dec_in2;                 /* (B, Tmax) greedy decoding's inputs */
} tfm_fast_cache;

static inline tfm_fast_cache *tfm_fast_cache_of(const s2s_fast_cache *c)
{
    return c->net;
}

/* The halves of s2s_fast_step's forward pass. The encoder on src (B, Ts)
 * with src_lens (B,): its output (B, Ts, d), the last block's N2, is
 * tfm_fast_enc_out(c, m). */
void tfm_fast_encode(tfm_fast_cache *c, const s2s_model *m, const tfm_fast_weights *w,
                     const int *src, const long *src_lens, size_t B, size_t Ts,
                     const mha_dropout *drop, size_t example0);
const float *tfm_fast_enc_out(const tfm_fast_cache *c, const s2s_model *m);

/* The decoder on dec_in (B, Tt) after tfm_fast_encode of the same pairs:
 * c->logits (B, Tt, Vt). */
void tfm_fast_decode(tfm_fast_cache *c, const s2s_model *m, const tfm_fast_weights *w,
                     const int *dec_in, const long *src_lens, size_t B, size_t Ts, size_t Tt,
                     const mha_dropout *drop, size_t example0);

/* One attention's activations after s2s_fast_step, for the numbers
 * behind its weights (attn translate --explain): kind S2S_HEADS_ENC (the
 * encoder's self-attention of block l: Tq = Tk = Ts), S2S_HEADS_DEC (the
 * decoder's causal self-attention: Tq = Tk = Tt), S2S_HEADS_CROSS (Tq =
 * Tt, Tk = Ts). Q (B, Tq, d) the queries after W_q, K and V (B, Tk, d)
 * the keys and values after W_k and W_v, O (B, Tq, d) the heads' outputs
 * side by side (head h: columns h·p … h·p + p − 1), before W_o; A the
 * weights (B, NH, Tq, Tk). The pointers are the cache's. */
typedef struct tfm_fast_parts {
    const float *Q, *K, *V, *O, *A;
    size_t a_cols; /* A's row length: Tk */
} tfm_fast_parts;

/* 0, or -1 when the model has no such attention. Tt, Ts: that step's
 * lengths. */
int tfm_fast_attention_parts(const s2s_fast_cache *c, const s2s_model *m, int kind, size_t l,
                             size_t Tt, size_t Ts, tfm_fast_parts *out);

#endif
