/* translate_explain.h — `attn translate --input MODEL --explain --json
 * FILE "SENTENCE"`'s "explain" member: every cell's path, the numbers
 * behind each weight the page shows (SPEC §14's hover), from the forward
 * pass on <bos> + the translation (teacher-forced on the model's own
 * output, which is what greedy decoding computed step by step: row t of
 * every attention is the step that wrote target word t).
 *
 * A Transformer of L blocks, NH heads of width p = d / NH, F = min(p, 8)
 * first entries of a head's vectors; S the source entries read (the valid
 * length), T num_steps (the source row, padded with <pad> to T), R the
 * rows written (translate_cmd.h). The member is
 *   score        "dot" (a Transformer; Bahdanau's: "additive" or "dot")
 *   p, first     p and F
 *   scale        √p (dot only: the scores are divided by it)
 *   mask_value   the score a masked key gets (−1e6, as d2l)
 * and one object per attention, "cross" always, "encoder" and "decoder"
 * with --all (the views the page shows), each with Nq queries and Nk keys:
 *   cross   Nq = R, Nk = T: the decoder's rows over the whole source row,
 *           its <pad> keys (k ≥ S) masked by the valid length
 *   encoder Nq = S, Nk = T: the source's words over the source row, <pad>
 *           keys masked
 *   decoder Nq = R, Nk = R: the causal self-attention, key k > query q
 *           masked
 * each holding
 *   queries, keys  Nq and Nk
 *   q            (L, NH, Nq, F) each query's head slice Q_h[i] (after W_q)
 *   k, v         (L, NH, Nk, F) each key's K_h[j], each value's V_h[j]
 *   scores       (L, NH, Nq, Nk) q·k over all p entries (in double)
 *   scaled       (L, NH, Nq, Nk) q·k / √p (dot only)
 *   masked       (L, NH, Nq, Nk) 1 where the key is masked, else 0
 *   masked_scores (L, NH, Nq, Nk) the scores softmax sees (mask_value)
 *   row_max      (L, NH, Nq) the row's largest masked score
 *   row_sum_exp  (L, NH, Nq) Σ_j e^(s_j − max), the softmax's denominator
 *   head_output  (L, NH, Nq, F) Σ_j w_j v_j, the head's output (before W_o)
 * A Bahdanau model (--arch bahdanau) has "cross" alone, L = NH = 1, p = d:
 * at step t the query q is s(t′−1), the decoder's last layer's previous
 * state, the keys k and values v the encoder's states H_j, head_output the
 * context c_t. Its additive score (--score additive, the default) has no
 * "scale" or "scaled" and adds, A = d hiddens, FA = min(A, 8):
 *   hiddens, first_hiddens  A and FA
 *   w_v          (FA,) the scorer's w_v
 *   qa           (1, 1, Nq, FA) W_q q;  ka (1, 1, Nk, FA) W_k k
 *   tanh         (1, 1, Nq, Nk, FA) tanh(W_q q + W_k k)
 *   scores       w_vᵀ tanh(W_q q + W_k k) over all A
 * (--score dot: q·H_j, ÷√d, as a Transformer's.)
 * A Transformer with additive scores (attn train --arch transformer
 * --score additive: every head scored w_vᵀ tanh(W_q q_h + W_k k_h), the
 * weights one set per attention module, A = p) has no "scale" or
 * "scaled" either; its top level adds hiddens and first_hiddens (A = p
 * and FA), each attention's object
 *   w_v          (L, FA) each block's scorer's w_v
 *   qa           (L, NH, Nq, FA) W_q q_h;  ka (L, NH, Nk, FA) W_k k_h
 *   tanh         (L, NH, Nq, Nk, FA) tanh(W_q q_h + W_k k_h)
 *   scores       w_vᵀ tanh(W_q q_h + W_k k_h) over all A
 * read from the reference loops' forward pass (the fast path scores by
 * dot products only).
 * The weight itself is the document's cross_attention, encoder_attention,
 * decoder_attention (their first S columns: the keys shown).
 */
#ifndef ATTN_TRANSLATE_EXPLAIN_H
#define ATTN_TRANSLATE_EXPLAIN_H

#include <stddef.h>

#include "json_writer.h"
#include "seq2seq.h"
#include "seq2seq_fast.h"

#define TRANSLATE_EXPLAIN_FIRST 8 /* entries shown of each vector */

/* What the member reads: the cache after s2s_fast_step (fc) or, for a
 * model the fast path does not run, s2s_forward (rc; fc NULL) on the
 * sentence's source row (T) and <bos> + the translation (R positions),
 * and the scratch translate_explain_alloc gives it. */
typedef struct translate_explain {
    const s2s_fast_cache *fc;
    const s2s_cache *rc;
    const s2s_model *m;
    size_t S, R, T;
    int all;   /* --all: the encoder's and the decoder's too */
    float *buf; /* (L, NH, max(Nq·Nk, N·F)) */
    /* a Transformer's additive scores: one attention's W_q q_h and W_k k_h
     * (NH, T, A) (T rows a head, the first Nq or Nk used), a head's slice
     * of Q or K (T, p); NULL otherwise */
    float *qa, *ka, *slice;
} translate_explain;

/* The bytes translate_explain_alloc takes (SIZE_MAX on overflow), for
 * --max-mem's estimate (R ≤ T). */
size_t translate_explain_bytes(const s2s_config *c, size_t T);

/* e->buf for e's sizes (every other field set): 0, or -1 when memory runs
 * out or the sizes overflow. */
int translate_explain_alloc(translate_explain *e);
void translate_explain_free(translate_explain *e);

/* Writes the "explain" member into the open object of jw. */
void translate_explain_json(json_writer *jw, const translate_explain *e);

#endif
