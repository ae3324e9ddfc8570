/* layers.h — the layers of d2l's Transformer encoder block that are not
 * attention, each a forward pass and its backward pass as naive loops.
 *
 * Dimensions: N rows (batch × positions), C channels (the features of a
 * row). Every tensor is row-major: row r holds C numbers at r·C.
 *
 * Each `*_forward` has a `*_backward` with the same argument order, llm.c
 * style: outputs (or their gradients) first, then what the forward pass
 * kept, then its inputs, weights and dimensions. Gradients are named d +
 * the tensor and are ADDED to (+=), as PyTorch accumulates .grad; they are
 * doubles, computed from the float32 activations the forward pass kept.
 *
 * nn.Linear's pair is linear_forward and linear_backward (below);
 * attention's is mha_forward and mha_backward (attention.h,
 * attention_backward.h). With them the block is
 *   Z1 = X + MultiHeadAttention(X)     residual_forward
 *   N1 = LayerNorm(Z1)                 layernorm_forward   (addnorm1)
 *   H  = N1 · dense1ᵀ + b1             linear_forward      (ffn.dense1)
 *   R  = ReLU(H)                       relu_forward
 *   F  = R · dense2ᵀ + b2              linear_forward      (ffn.dense2)
 *   Z2 = N1 + F                        residual_forward
 *   N2 = LayerNorm(Z2)                 layernorm_forward   (addnorm2)
 * a model's first step, from tokens to vectors:
 *   X  = embedding[tokens] · √d + P    embedding_forward
 * and its last, from logits to the loss:
 *   loss = Σ −log softmax(logits)[target]   crossentropy_forward
 */
#ifndef ATTN_LAYERS_H
#define ATTN_LAYERS_H

#include <stddef.h>

#include "tensor.h"

typedef struct linear {
    tensor weight; /* (out, in) */
    tensor bias;   /* (out,), or absent: data == NULL */
} linear;

/* Release weight and bias (either may be absent). */
void linear_free(linear *l);

/* y (n, out) = x (n, in) · weightᵀ + bias, sums in double. */
void linear_forward(float *y, const float *x, size_t n, const linear *l);
/* The backward of y (n, out) = x (n, in) · weightᵀ + bias: dx (n, in) +=
 * dy · weight, dweight (out, in) += dyᵀ · x, dbias (out,) += Σ_rows dy.
 * dx or dbias may be NULL when not wanted. */
void linear_backward(double *dx, double *dweight, double *dbias, const double *dy,
                     const float *x, size_t n, const linear *l);

/* PyTorch's LayerNorm default. */
#define LAYERNORM_EPS 1e-5

/* out (N, C) = inp1 + inp2, kept in double: the sum LayerNorm reads is not
 * rounded to float first. */
void residual_forward(double *out, const float *inp1, const float *inp2, size_t n);
/* dinp1 (N, C) += dout, dinp2 (N, C) += dout: a sum passes its gradient to
 * both of its terms unchanged. */
void residual_backward(double *dinp1, double *dinp2, const double *dout, size_t n);

/* LayerNorm over the C channels of each row, biased variance, eps 1e-5:
 *   mean (N,), rstd (N,) = 1 / sqrt(var + eps)
 *   out (N, C) = (inp − mean) · rstd · weight + bias */
void layernorm_forward(float *out, double *mean, double *rstd, const double *inp,
                       const float *weight, const float *bias, size_t N, size_t C);
/* With x̂ = (inp − mean) · rstd and dx̂ = dout ⊙ weight:
 *   dweight (C,) += Σ_rows dout ⊙ x̂,  dbias (C,) += Σ_rows dout,
 *   dinp (N, C) += rstd (dx̂ − mean(dx̂) − x̂ · mean(dx̂ ⊙ x̂)) */
void layernorm_backward(double *dinp, double *dweight, double *dbias, const double *dout,
                        const double *inp, const float *weight, const double *mean,
                        const double *rstd, size_t N, size_t C);

/* BatchNorm1d in training mode (batch statistics, biased variance, eps
 * 1e-5, weight 1 and bias 0 as nn.BatchNorm1d starts): each of the C
 * channels normalised over the N rows,
 *   out (N, C) = (inp − mean_c) / sqrt(var_c + eps).
 * Forward only: attn trains no batch norm; 10.7 compares it with LayerNorm. */
void batchnorm_forward(float *out, const float *inp, size_t N, size_t C);

/* out (n,) = max(inp, 0) */
void relu_forward(float *out, const float *inp, size_t n);
/* dinp (n,) += dout where inp > 0 (PyTorch's choice at 0: no gradient) */
void relu_backward(double *dinp, const double *dout, const float *inp, size_t n);

/* out (N, T, C) = table[tokens[n·T + t]] · scale + P[t] for the N·T
 * positions, tokens (N, T) ids into table (V, C), P (T, C) or NULL (no
 * positional encoding); rounded to float once. */
void embedding_forward(float *out, const float *table, const int *tokens, const float *P,
                       size_t N, size_t T, size_t C, double scale);
/* dtable[tokens[r]] (C,) += dout[r] · scale for the n rows of dout (n, C)
 * (P is a constant: no gradient). */
void embedding_backward(double *dtable, const double *dout, const int *tokens, size_t n,
                        size_t C, double scale);

/* The summed cross-entropy of the rows of logits (N, C) that have a target
 * (targets (N,), −1 none: PyTorch's ignore_index), in double:
 *   loss_r = −log softmax(logits_r)[target_r] = logsumexp(logits_r) − logits_r[target_r]
 * *count (may be NULL) gets the number of rows with a target, *correct
 * (may be NULL) how many of them have the target as the first argmax. */
double crossentropy_forward(const float *logits, const int *targets, size_t N, size_t C,
                            size_t *count, size_t *correct);
/* dlogits (N, C) = (softmax(logits_r) − one-hot(target_r)) · scale on the
 * rows with a target, 0 on the others (overwritten, not added to: the
 * loss is the first step backwards). */
void crossentropy_backward(double *dlogits, const float *logits, const int *targets, size_t N,
                           size_t C, double scale);

#endif
