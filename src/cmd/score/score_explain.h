/* score_explain.h — `attn score --explain --json FILE`'s "explain"
 * member, one in each entry of "results": every cell's path, the numbers
 * --explain prints for that cell (the score page's hover panel shows them,
 * SPEC §14).
 *
 * With B examples, Nq queries, Nk keys, queries of Dq, keys of Dk and
 * values of Dv numbers, and Fq, Fk, Fv = min(Dq, 8), min(Dk, 8), min(Dv, 8)
 * first entries of each vector:
 *   score        "additive", "dot", "general" or "sum"
 *   query_size, key_size, value_size   Dq, Dk, Dv
 *   first_q, first_k, first_v          Fq, Fk, Fv
 *   mask_value   the score a masked key gets (−1e6, as d2l)
 *   q            (B, Nq, Fq) each query;  k (B, Nk, Fk) each key
 *   v            (B, Nk, Fv) each value
 *   scores       (B, Nq, Nk) a(q, k) before masking: q·k (dot, not yet
 *                scaled), w_vᵀ tanh(W_q q + W_k k) (additive), W(q)·k =
 *                qᵀ W k (general), Σq + Σk (sum)
 *   masked       (B, Nq, Nk) 1 where the key is at or after the query's
 *                valid length, else 0
 *   masked_scores (B, Nq, Nk) the scores the softmax sees
 *   row_max      (B, Nq) the row's largest masked score
 *   row_sum_exp  (B, Nq) Σ_k e^(s_k − max), the softmax's denominator
 *   output       (B, Nq, Fv) the query's output row, Σ_k w_k v_k
 * and each scoring function its parts:
 *   dot       scale (√Dq: the scores are divided by it), scaled (B, Nq, Nk)
 *             q·k / √Dq (the result's "scores")
 *   additive  hiddens, first_hiddens (h and FA = min(h, 8)), w_v (FA,),
 *             qa (B, Nq, FA) W_q q, ka (B, Nk, FA) W_k k,
 *             tanh (B, Nq, Nk, FA) tanh(W_q q + W_k k)
 *   general   qw (B, Nq, Fk) W(q) = qᵀ W, the query as a key-sized vector
 *             (nn.Linear(Dq, Dk, bias=False) applied to q)
 *   sum       q_sum (B, Nq) Σᵢ qᵢ of each query, k_sum (B, Nk) Σᵢ kᵢ of each key
 * The weight itself is the result's attention_weights (B, Nq, Nk).
 */
#ifndef ATTN_SCORE_EXPLAIN_H
#define ATTN_SCORE_EXPLAIN_H

#include "json_writer.h"
#include "score_cmd.h"

#define SCORE_EXPLAIN_FIRST 8 /* entries shown of each vector */

/* The scratch the members need, allocated before the JSON is written:
 * enough for the largest of the runs. */
typedef struct score_explain_buffers {
    float *f[3]; /* a tensor, row maxima, row sums */
} score_explain_buffers;

/* The bytes score_explain_alloc takes for runs[0 … n) (SIZE_MAX on
 * overflow), for --max-mem's estimate. */
size_t score_explain_bytes(const score_run *runs, size_t n);

/* 0, or -1 when memory runs out (every pointer NULL then). */
int score_explain_alloc(score_explain_buffers *eb, const score_run *runs, size_t n);
void score_explain_free(score_explain_buffers *eb);

/* Writes the "explain" member of run r (computed: every buffer set) into
 * the open object of jw, with eb's scratch; name: its scoring function's
 * (score_names). */
void score_explain_member(json_writer *jw, const score_run *r, const char *name,
                          const score_explain_buffers *eb);

#endif
