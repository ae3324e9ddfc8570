/* explain_json.h — `attn multihead|selfattn --explain --json FILE`'s
 * "explain" member: every cell's path, the numbers --explain prints for
 * that cell (a page's hover panel shows them, SPEC §14).
 *
 * With B examples, NH heads of width p, Nq queries and Nk keys, F = min(p,
 * 8) first entries of a head's vectors and, for additive scoring, FA =
 * min(A, 8) first entries of its A hiddens:
 *   score        "dot" or "additive"
 *   p, first     p and F
 *   scale        √p (dot only: the scores are divided by it)
 *   mask_value   the score a masked key gets (−1e6, as d2l)
 *   q            (B, NH, Nq, F) each query's head slice Q_h[i]
 *   k, v         (B, NH, Nk, F) each key's K_h[j], each value's V_h[j]
 *   scores       (B, NH, Nq, Nk) q·k (dot), w_vᵀ tanh(W_q q + W_k k) (additive)
 *   scaled       (B, NH, Nq, Nk) q·k / √p (dot only)
 *   masked       (B, NH, Nq, Nk) 1 where the key is masked (valid length,
 *                causal), else 0
 *   masked_scores (B, NH, Nq, Nk) the scores softmax sees
 *   row_max      (B, NH, Nq) the row's largest masked score
 *   row_sum_exp  (B, NH, Nq) Σ_j e^(s_j − max), the softmax's denominator
 *   head_output  (B, NH, Nq, F) Σ_j w_j v_j (with --train, after dropout)
 * additive scoring adds
 *   hiddens, first_hiddens  A and FA
 *   w_v          (FA,) the scorer's w_v
 *   qa           (B, NH, Nq, FA) W_q q;  ka (B, NH, Nk, FA) W_k k
 *   tanh         (B, NH, Nq, Nk, FA) tanh(W_q q + W_k k)
 * The weight itself is the document's attention_weights (B, NH, Nq, Nk).
 */
#ifndef ATTN_EXPLAIN_JSON_H
#define ATTN_EXPLAIN_JSON_H

#include "attention.h"
#include "json_writer.h"
#include "problem.h"

#define EXPLAIN_FIRST 8 /* entries shown of each vector */

/* The scratch the member needs, allocated before the JSON is written. */
typedef struct explain_buffers {
    float *f[6]; /* a tensor, row maxima, row sums, W_q q (additive), W_k k, a head's row */
} explain_buffers;

/* The bytes explain_json_alloc takes for pr's run (SIZE_MAX on overflow),
 * for --max-mem's estimate. */
size_t explain_json_bytes(const problem *pr);

/* 0, or -1 when memory runs out (every pointer NULL then). */
int explain_json_alloc(explain_buffers *eb, const problem *pr);
void explain_json_free(explain_buffers *eb);

/* Writes the "explain" member of pr's run into the open object of jw from
 * the trace of mha_forward (every pointer set), with eb's scratch.
 * causal: --causal. */
void explain_json_member(json_writer *jw, const problem *pr, const mha_trace *t, int causal,
                         const explain_buffers *eb);

#endif
