/* score.h — d2l §10.3, attention scoring functions, as naive loops: the
 * masked softmax, additive and scaled dot-product scores, the exercises'
 * general (bilinear) and sum scores, and the weighted sum of the values.
 *
 * Dimensions (d2l's names):
 *   B  batch_size     Nq number of queries     Nk number of key-value pairs
 *   Dq query_size     Dk key_size              Dv value_size
 *   h  num_hiddens of AdditiveAttention
 *
 * Every tensor is row-major float32; weights use nn.Linear's layout
 * (out_features, in_features). Sums run in double, rounded to float once.
 *
 *   masked_softmax(X, valid_lens): keys at k >= valid_len get −1e6, then a
 *       softmax over the last axis (a length 0 gives equal weights)
 *   additive:  scores[b][q][k] = w_v · tanh(W_q q + W_k k)        (B, Nq, Nk)
 *   dot:       scores[b][q][k] = q · k / sqrt(d), Dq = Dk = d     (B, Nq, Nk)
 *   general:   scores[b][q][k] = qᵀ W k, W (Dq, Dk)               (B, Nq, Nk)
 *   sum:       scores[b][q][k] = Σ_i (q_i + k_i), Dq = Dk         (B, Nq, Nk)
 *   output = bmm(masked_softmax(scores, valid_lens), values)      (B, Nq, Dv)
 *
 * The mask and the softmax of a row are nn/attention's (mha_is_masked,
 * softmax_row): the same −1e6 and the same sums as multi-head attention.
 */
#ifndef ATTN_SCORE_H
#define ATTN_SCORE_H

#include <stddef.h>

#include "attention.h"
#include "layers.h"
#include "rng.h"

/* AdditiveAttention's parameters, d2l's state_dict names, no biases. */
typedef struct score_additive {
    linear W_q; /* (h, Dq) */
    linear W_k; /* (h, Dk) */
    linear w_v; /* (1, h) */
} score_additive;

/* The general score's parameter (the section's exercise): W of shape
 * (Dq, Dk) kept as nn.Linear(Dq, Dk, bias=False)'s weight, (Dk, Dq), whose
 * state_dict name is "W.weight": W(q) = q · weightᵀ is qᵀ W, a key-sized
 * vector, then a dot product with k. */
typedef struct score_general {
    linear W; /* (Dk, Dq) */
} score_general;

/* W_q (h, Dq), W_k (h, Dk), w_v (1, h) drawn as nn.Linear's default
 * initialisation draws them, uniform in ±1/sqrt(in_features), from r, in
 * d2l's order (W_k, W_q, w_v). 0, or -1 with tensor_alloc's message. */
int score_additive_init(score_additive *m, size_t Dq, size_t Dk, size_t h, rng *r, char *err,
                        size_t errlen);
void score_additive_free(score_additive *m);

/* W (Dk, Dq) drawn as nn.Linear(Dq, Dk)'s default initialisation draws
 * it, uniform in ±1/sqrt(Dq), from r. 0, or -1 with tensor_alloc's message. */
int score_general_init(score_general *m, size_t Dq, size_t Dk, rng *r, char *err,
                       size_t errlen);
void score_general_free(score_general *m);

/* Step 2 alone: X (B, Nq, Nk) with masked keys set to −1e6, in place
 * (mask->causal is not used here: d2l's masked_softmax has lengths only). */
void score_mask(float *X, size_t B, size_t Nq, size_t Nk, const mha_masks *mask);

/* d2l's masked_softmax in place: X (B, Nq, Nk) scores in, weights out.
 * mask->valid_lens NULL: a plain softmax over the last axis. */
void score_masked_softmax(float *X, size_t B, size_t Nq, size_t Nk, const mha_masks *mask);

/* scores (B, Nq, Nk) = queries (B, Nq, d) · keysᵀ (B, d, Nk) / sqrt(d). */
void score_dot(float *scores, const float *queries, const float *keys, size_t B, size_t Nq,
               size_t Nk, size_t d);

/* scores (B, Nq, Nk) = w_v · tanh(W_q q + W_k k) for queries (B, Nq, Dq)
 * and keys (B, Nk, Dk). qh (B, Nq, h) and kh (B, Nk, h) receive the
 * projections W_q q and W_k k (kept for --explain). */
void score_additive_scores(float *scores, float *qh, float *kh, const float *queries,
                           const float *keys, size_t B, size_t Nq, size_t Nk,
                           const score_additive *m);

/* scores (B, Nq, Nk) = W(queries) (B, Nq, Dk) · keysᵀ (B, Dk, Nk) for
 * queries (B, Nq, Dq): qᵀ W k, one matrix product whatever Dq and Dk. qw
 * (B, Nq, Dk) receives W(q) = q · weightᵀ (kept for --explain). */
void score_general_scores(float *scores, float *qw, const float *queries, const float *keys,
                          size_t B, size_t Nq, size_t Nk, const score_general *m);

/* scores (B, Nq, Nk) = Σ_i (q_i + k_i) for queries (B, Nq, d) and keys
 * (B, Nk, d): Σq + Σk, whose Σq the softmax over the keys cancels. */
void score_sum(float *scores, const float *queries, const float *keys, size_t B, size_t Nq,
               size_t Nk, size_t d);

/* out (B, Nq, Dv) = weights (B, Nq, Nk) · values (B, Nk, Dv): torch.bmm. */
void score_weighted_sum(float *out, const float *weights, const float *values, size_t B,
                        size_t Nq, size_t Nk, size_t Dv);

#endif
