/* attention_backward.h — the backward pass of d2l's multi-head attention
 * (attention.h), as naive loops in double beside mha_forward's.
 *
 * Dimensions as in attention.h: B batch, Nq queries, Nk key-value pairs,
 * Dq/Dk/Dv input widths, H num_hiddens, NH num_heads, p = H / NH.
 *
 * The arguments follow mha_forward's order, llm.c style: the gradients
 * first (named d + the tensor), then the gradient of the output, then what
 * the forward pass kept (its weights and trace), the inputs, the weights,
 * the dimensions. Every gradient is ADDED to (+=), as PyTorch accumulates
 * .grad: self-attention passes one dX for dqueries, dkeys and dvalues.
 */
#ifndef ATTN_ATTENTION_BACKWARD_H
#define ATTN_ATTENTION_BACKWARD_H

#include <stddef.h>

#include "attention.h"

/* The gradients of the four projections; a bias's is NULL when the layer
 * has no bias. Shapes as the weights: dW_q (H, Dq), db_q (H,), …,
 * dW_o (H, H), db_o (H,). */
typedef struct mha_grads {
    double *dW_q, *db_q;
    double *dW_k, *db_k;
    double *dW_v, *db_v;
    double *dW_o, *db_o;
} mha_grads;

/* The gradients of the additive score's weights (attention.h's a_W_q
 * (A, p), a_W_k (A, p), a_w_v (1, A)), same shapes. */
typedef struct mha_additive_grads {
    double *da_W_q, *da_W_k, *da_w_v;
} mha_additive_grads;

/* dqueries (B, Nq, Dq), dkeys (B, Nk, Dk), dvalues (B, Nk, Dv) and g from
 * dout (B, Nq, H), the forward pass's weights (B, NH, Nq, Nk) (the softmax,
 * before dropout) and trace->Q, K, V, concat, and the same inputs, weights,
 * masks and dropout the forward pass ran with. Dot-product scoring only
 * (additive: mha_backward_additive). Returns 0, or -1 with the reason in
 * err (out of memory, additive scoring, a trace without Q, K, V or
 * concat). */
int mha_backward(double *dqueries, double *dkeys, double *dvalues, const mha_grads *g,
                 const double *dout, const float *weights, const mha_trace *trace,
                 const float *queries, const float *keys, const float *values, size_t B, size_t Nq,
                 size_t Nk, const mha_params *m, const mha_masks *mask, const mha_dropout *drop,
                 char *err, size_t errlen);

/* As mha_backward, for either scoring: with additive scoring ga receives
 * the score's gradients (+=); ga may be NULL with dot-product scoring. */
int mha_backward_additive(double *dqueries, double *dkeys, double *dvalues, const mha_grads *g,
                          const mha_additive_grads *ga, const double *dout, const float *weights,
                          const mha_trace *trace, const float *queries, const float *keys,
                          const float *values, size_t B, size_t Nq, size_t Nk, const mha_params *m,
                          const mha_masks *mask, const mha_dropout *drop, char *err, size_t errlen);

#endif
