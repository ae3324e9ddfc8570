/* encoder_fast.h — encoder.h's forward and backward passes arranged to be
 * fast: float32 throughout, inner loops over contiguous memory that the
 * compiler vectorises (the weights of the forward products transposed once
 * per step), no allocation inside a step. It computes exactly the formulas
 * of encoder.c and attention_backward.c (the reference); the tests
 * compare the two on every PyTorch fixture. The trainer uses this path
 * unless train_opts.reference asks for the reference loops.
 *
 * Dimensions as in encoder.h: B, T, V, C, d, NH, p = d / NH.
 */
#ifndef ATTN_ENCODER_FAST_H
#define ATTN_ENCODER_FAST_H

#include <stddef.h>

#include "attention.h"
#include "encoder.h"

/* The weights of the forward products, transposed to (in, out) rows. */
typedef struct tfast_block_weights {
    float *Wq, *Wk, *Wv, *Wo; /* (d, d) each: W_xᵀ */
    float *W1;                /* (d, H): ffn.dense1.weightᵀ */
    float *W2;                /* (H, d): ffn.dense2.weightᵀ */
} tfast_block_weights;

typedef struct tfast_weights {
    tfast_block_weights blk[TMODEL_MAX_LAYERS]; /* (L,) */
    float *head;              /* (d, C): head.weightᵀ */
} tfast_weights;

/* One block's weights: (d, d) four times, and with H the FFN's (d, H) and
 * (H, d); *failed set when memory runs out (free what was allocated with
 * tfast_block_weights_free). The Transformer encoder–decoder's blocks
 * (transformer_fast.c) hold theirs the same way. */
void tfast_block_weights_alloc(tfast_block_weights *bw, size_t d, size_t H, int *failed);
void tfast_block_weights_free(tfast_block_weights *bw);
/* The block's current weights transposed in: the attention a's W_q … W_o
 * and, with H, dense1 and dense2. */
void tfast_block_weights_update(tfast_block_weights *bw, const mha_params *a,
                                const linear *dense1, const linear *dense2, size_t d, size_t H);

int tfast_weights_alloc(tfast_weights *w, const tmodel *m);
/* Copy the model's current weights in (once per step, before the chunks). */
void tfast_weights_update(tfast_weights *w, const tmodel *m);
void tfast_weights_free(tfast_weights *w);

/* One block's activations. */
typedef struct tfast_block {
    float *Q, *K, *V, *O, *Y;    /* (B, T, d); O the heads side by side */
    float *A;                    /* (B, NH, T, T) softmax weights */
    float *N, *xh, *rstd;        /* (B, T, d) addnorm1's output and x̂, (B, T) 1/σ */
    float *H, *R;                /* (B, T, H) dense1's output, after the ReLU */
    float *F;                    /* (B, T, d) dense2's output */
    float *N2, *xh2, *rstd2;     /* addnorm2's */
} tfast_block;

/* One chunk's activations and scratch, for up to Bmax × Tmax positions. */
typedef struct tfast_cache {
    size_t Bmax, Tmax;
    float *P;                    /* (Tmax, d) */
    float *X;                    /* (B, T, d) embedding·√d + P */
    tfast_block blk[TMODEL_MAX_LAYERS]; /* (L,) */
    float *logits;               /* (B, T, C) */
    float *dlogits;              /* (B, T, C) */
    float *dN, *dY, *dO, *dQ, *dK, *dV, *dX, *dF, *dN1; /* (B, T, d) */
    float *dR;                   /* (B, T, H) */
    float *scratch;              /* (fl_heads_scratch_alloc) a block of queries' tiles */
} tfast_cache;

int tfast_cache_alloc(tfast_cache *c, const tmodel *m, size_t Bmax, size_t Tmax);
void tfast_cache_free(tfast_cache *c);

/* The output of block l (B, T, d) after tfast_step. */
const float *tfast_block_out(const tfast_cache *c, const tmodel *m, size_t l);

/* The forward pass of tmodel_forward, up to c->logits; with targets, the
 * summed cross-entropy and correct count of tmodel_loss, then (grads not
 * NULL) the backward pass of tmodel_backward: grads (m->total floats) +=
 * d (loss · scale) / d parameters. Returns the summed loss (0 without
 * targets). */
double tfast_step(float *grads, tfast_cache *c, const tmodel *m, const tfast_weights *w,
                  const int *tokens, const long *lens, const int *targets, size_t B, size_t T,
                  double scale, const mha_dropout *drop, size_t *count, size_t *correct);

#endif
