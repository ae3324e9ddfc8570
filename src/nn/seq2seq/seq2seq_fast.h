/* seq2seq_fast.h — seq2seq.h's Transformer encoder–decoder arranged to be
 * fast: float32 throughout, block_fast.h's loops (the ones attn train's
 * encoder stack runs too), the weights of the forward products transposed
 * once per step, no allocation inside a step. It computes the formulas of
 * seq2seq.c (the reference, in double); the tests compare the two.
 *
 * Dimensions as in seq2seq.h: B pairs, Ts source and Tt target positions,
 * Vs and Vt the vocabularies, d num_hiddens, NH heads, p = d / NH, L blocks
 * a side, H the FFN's width.
 */
#ifndef ATTN_SEQ2SEQ_FAST_H
#define ATTN_SEQ2SEQ_FAST_H

#include <stddef.h>

#include "bahdanau_fast.h"
#include "block_fast.h"
#include "seq2seq.h"
#include "encoder_fast.h"

/* The weights of the forward products, transposed to (in, out) rows. */
typedef struct s2s_fast_weights {
    tfast_block_weights enc[TMODEL_MAX_LAYERS]; /* (L,) attention and FFN */
    tfast_block_weights dec[TMODEL_MAX_LAYERS]; /* (L,) attention1 and the FFN */
    float *cross[TMODEL_MAX_LAYERS][4];         /* (L,) attention2's W_q … W_o, (d, d) */
    float *dense;                               /* (d, Vt) */
    bah_fast_weights *bah;                      /* --arch bahdanau: all of its weights */
} s2s_fast_weights;

int s2s_fast_weights_alloc(s2s_fast_weights *w, const s2s_model *m);
/* Copy the model's current weights in (once per step, before the chunks). */
void s2s_fast_weights_update(s2s_fast_weights *w, const s2s_model *m);
void s2s_fast_weights_free(s2s_fast_weights *w);

/* One decoder block's activations. */
typedef struct s2s_fast_dec_block {
    fl_mha_acts self;            /* attention1: (B, Tt, d), A (B, NH, Tt, Tt) */
    float *N1, *xh1, *rstd1;     /* addnorm1 (B, Tt, d), (B, Tt) */
    fl_mha_acts cross;           /* attention2: Q, O, Y (B, Tt, d); K, V (B, Ts, d);
                                  * A (B, NH, Tt, Ts) */
    float *N2, *xh2, *rstd2;     /* addnorm2 */
    float *H, *R, *F;            /* the FFN: (B, Tt, H), (B, Tt, H), (B, Tt, d) */
    float *N3, *xh3, *rstd3;     /* addnorm3: the block's output */
} s2s_fast_dec_block;

/* One chunk's activations and scratch, for up to Bmax pairs of up to Tmax
 * positions a side. */
typedef struct s2s_fast_cache {
    size_t Bmax, Tmax;
    float *P;                              /* (Tmax, d) the positional encoding */
    float *Xs;                             /* (B, Ts, d) the encoder's input */
    tfast_block enc[TMODEL_MAX_LAYERS];    /* (L,) the encoder's blocks */
    float *Xt;                             /* (B, Tt, d) the decoder's input */
    s2s_fast_dec_block dec[TMODEL_MAX_LAYERS]; /* (L,) */
    float *logits, *dlogits;               /* (B, Tt, Vt) */
    float *dA, *dB, *dC;                   /* (B, Tmax, d) gradients of activations */
    float *dEnc;                           /* (B, Ts, d) of the encoder's output */
    float *dY, *dF;                        /* (B, Tmax, d) */
    float *dO, *dQ, *dK, *dV;              /* (B, Tmax, d) attention's scratch */
    float *dR;                             /* (B, Tmax, H) */
    float *heads;                          /* fl_heads_scratch_alloc */
    int *dec_in, *dec_in2;                 /* (B, Tmax) greedy decoding's inputs */
    bah_fast_cache *bah;                   /* --arch bahdanau: all of its cache */
} s2s_fast_cache;

int s2s_fast_cache_alloc(s2s_fast_cache *c, const s2s_model *m, size_t Bmax, size_t Tmax);
/* The bytes s2s_fast_cache_alloc allocates for a model of configuration
 * cfg (its buffers, counted as it allocates them): 0, or -1 when the count
 * overflows. For --max-mem, before anything is allocated. */
int s2s_fast_cache_bytes(const s2s_config *cfg, size_t Bmax, size_t Tmax, size_t *bytes);
void s2s_fast_cache_free(s2s_fast_cache *c);

/* Every function below comes to bahdanau_fast.h for a model of --arch
 * bahdanau, but s2s_fast_encode, s2s_fast_decode and s2s_fast_enc_out
 * (the Transformer's halves). */

/* The cross-attention (B, NH, Tt, Ts) of decoder block l after
 * s2s_fast_step (bahdanau: its one attention, NH = 1, l = 0); after
 * s2s_fast_greedy_batch (B, NH, steps, Ts). */
const float *s2s_fast_cross(const s2s_fast_cache *c, const s2s_model *m, size_t l);
/* The logits (B, Tt, Vt) after s2s_fast_step. */
const float *s2s_fast_logits(const s2s_fast_cache *c, const s2s_model *m);

/* The encoder on src (B, Ts) with src_lens (B,): its output (B, Ts, d),
 * the last block's N2, is s2s_fast_enc_out(c, m). */
void s2s_fast_encode(s2s_fast_cache *c, const s2s_model *m, const s2s_fast_weights *w,
                     const int *src, const long *src_lens, size_t B, size_t Ts,
                     const mha_dropout *drop, size_t example0);
const float *s2s_fast_enc_out(const s2s_fast_cache *c, const s2s_model *m);

/* The decoder on dec_in (B, Tt) after s2s_fast_encode of the same pairs:
 * c->logits (B, Tt, Vt). */
void s2s_fast_decode(s2s_fast_cache *c, const s2s_model *m, const s2s_fast_weights *w,
                     const int *dec_in, const long *src_lens, size_t B, size_t Ts, size_t Tt,
                     const mha_dropout *drop, size_t example0);

/* Dropout (training only) draws each attention module's mask as the
 * reference does (s2s_module_dropout): example0 is the index of this
 * chunk's first pair in the step's batch.
 *
 * One training step's forward pass (encode, decode), then with targets
 * (B, Tt) (−1: padding) the summed cross-entropy, its count and correct
 * count, and (grads not NULL) the backward pass: grads (m->total floats,
 * laid out as m->param) += d (loss · scale) / d parameters. Returns the
 * summed loss (0 without targets). */
double s2s_fast_step(float *grads, s2s_fast_cache *c, const s2s_model *m,
                     const s2s_fast_weights *w, const int *src, const long *src_lens,
                     const int *dec_in, const int *targets, size_t B, size_t Ts, size_t Tt,
                     double scale, const mha_dropout *drop, size_t example0, size_t *count,
                     size_t *correct);

/* d2l's predict_seq2seq on B sources at once: src (B, Ts), src_lens (B,);
 * out (B, max_len) each one's ids (max_len ≤ Tmax), n_out (B,) their
 * numbers. Returns the decoder's last input length (the steps taken):
 * c->dec[l].cross.A then holds (B, NH, steps, Ts). */
size_t s2s_fast_greedy_batch(s2s_fast_cache *c, const s2s_model *m, const s2s_fast_weights *w,
                             const int *src, const long *src_lens, size_t B, size_t Ts, int bos,
                             int eos, size_t max_len, int *out, size_t *n_out);

/* d2l's predict_seq2seq on one source src (Ts,) of valid length src_len:
 * from <bos>, the argmax fed back, up to max_len (≤ Tmax) tokens, stopping
 * at <eos> (not output). out (max_len,) the ids, *n_out their number;
 * cross, when not NULL, (L, NH, max_len, Ts): row t of every block's
 * cross-attention when it chose token t (the last step's, as d2l keeps
 * it; rows past *n_out + 1 are 0). The cache needs Bmax ≥ 1. */
void s2s_fast_greedy(s2s_fast_cache *c, const s2s_model *m, const s2s_fast_weights *w,
                     const int *src, long src_len, size_t Ts, int bos, int eos, size_t max_len,
                     int *out, size_t *n_out, float *cross);

#endif
