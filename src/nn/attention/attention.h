/* attention.h — d2l's multi-head attention as naive loops.
 *
 * Dimensions (d2l's names):
 *   B  batch_size              Nq number of queries     Nk number of key-value pairs
 *   Dq query_size              Dk key_size              Dv value_size
 *   H  num_hiddens             NH num_heads             p  = H / NH, one head's width
 *   A  hidden size of additive scoring (d2l's AdditiveAttention num_hiddens)
 *
 * Weights use nn.Linear's layout: weight (out_features, in_features),
 * y = x · weightᵀ + bias. Every tensor is row-major float32.
 *
 * The computation (d2l §10.5, MultiHeadAttention in eval mode):
 *   Q = queries·W_qᵀ  K = keys·W_kᵀ  V = values·W_vᵀ              (B, N, H)
 *   head i uses columns i·p … i·p+p−1 of Q, K, V
 *   scores_i = Q_i K_iᵀ / sqrt(p)                 (dot)           (B, NH, Nq, Nk)
 *            = w_v · tanh(W_q' q + W_k' k)        (additive)
 *   keys at k >= valid_len (and k > q with causal) get the score −1e6
 *   weights_i = softmax over keys;  head_i = weights_i · V_i      (B, NH, Nq, p)
 *   output = concat(head_1 … head_NH) · W_oᵀ                      (B, Nq, H)
 * A head switched off (mha_params.heads_on, d2l 10.5's exercise: how much
 * does each head matter?) has head_i = 0 in the concat: exactly what
 * removing it and its p columns of W_o would compute.
 */
#ifndef ATTN_ATTENTION_H
#define ATTN_ATTENTION_H

#include <float.h>
#include <stddef.h>

#include "layers.h"
#include "tensor.h"

/* The score given to masked keys before the softmax, as in d2l. */
#define ATTN_MASK_VALUE (-1e6f)

typedef enum score_kind { SCORE_DOT, SCORE_ADDITIVE } score_kind;

typedef struct mha_params {
    size_t num_heads;  /* NH */
    size_t num_hiddens; /* H */
    score_kind score;
    linear W_q; /* (H, Dq) */
    linear W_k; /* (H, Dk) */
    linear W_v; /* (H, Dv) */
    linear W_o; /* (H, H) */
    /* additive scoring only: d2l's AdditiveAttention(p, p, A), no biases,
     * shared by every head */
    linear a_W_q; /* (A, p) */
    linear a_W_k; /* (A, p) */
    linear a_w_v; /* (1, A) */
    /* (NH,) 0: head h is switched off (its output zeros in the concat, no
     * gradient through it); NULL: every head on. Borrowed: the caller keeps
     * it alive while the module runs (seq2seq.h's s2s_set_heads). */
    const unsigned char *heads_on;
} mha_params;

typedef struct mha_masks {
    const long *valid_lens; /* (B,) or (B, Nq); NULL: no lengths */
    int per_query;          /* 1 when valid_lens is (B, Nq) */
    int causal;             /* mask keys after the query's position */
    /* R (odd): the restricted self-attention; query q sees the R keys
     * |q − k| ≤ (R − 1)/2, or with causal the R keys q − R + 1 … q;
     * 0: every key (no window) */
    size_t window;
} mha_masks;

/* Dropout on the attention weights (training mode only). */
typedef struct mha_dropout {
    double p;               /* probability of zeroing a weight; 0: none */
    unsigned long long seed;
} mha_dropout;

/* Every intermediate, for --explain. Any pointer may be NULL. */
typedef struct mha_trace {
    float *Q;      /* (B, Nq, H) queries · W_qᵀ (+ b_q) */
    float *K;      /* (B, Nk, H) */
    float *V;      /* (B, Nk, H) */
    float *scores; /* (B, NH, Nq, Nk) dot: Q_i K_iᵀ;  additive: w_v·tanh(…) */
    float *scaled; /* (B, NH, Nq, Nk) dot: scores / sqrt(p);  additive: scores */
    float *masked; /* (B, NH, Nq, Nk) after the −1e6 fill */
    float *concat; /* (B, Nq, H) the heads' outputs side by side */
} mha_trace;

/* out (B, Nq, H) and weights (B, NH, Nq, Nk) from queries (B, Nq, Dq),
 * keys (B, Nk, Dk), values (B, Nk, Dv). Shapes were checked by the caller.
 * Returns 0, or -1 with "out of memory …" in err. */
int mha_forward(float *out, float *weights, mha_trace *trace, const float *queries,
                const float *keys, const float *values, size_t B, size_t Nq, size_t Nk,
                const mha_params *m, const mha_masks *mask, const mha_dropout *drop,
                char *err, size_t errlen);

/* Whether dropout keeps the attention weight at flat index ((b·NH + h)·Nq
 * + q)·Nk + k: the same answer in every code path and thread. */
int mha_dropout_keep(const mha_dropout *drop, size_t index);

/* Whether key k is masked for query q of example b. */
int mha_is_masked(const mha_masks *mask, size_t b, size_t q, size_t k, size_t Nq);

/* softmax in place over x (n,), the largest value subtracted first so that
 * exp never overflows; masked scores are already −1e6. */
void softmax_row(float *x, size_t n);

/* Multiply-adds of one forward pass with dot scoring: the four
 * projections, B·(Nq·Dq + Nk·Dk + Nk·Dv + Nq·H)·H, and Q_i K_iᵀ and
 * weights·V_i of every head, 2·B·Nq·Nk·H (a multiply-add is 2 FLOPs). */
double mha_forward_macs(size_t B, size_t Nq, size_t Nk, size_t Dq, size_t Dk, size_t Dv, size_t H);

/* The cosine similarity x·y / (|x|·|y|) of x and y (n,), in double; 0 when
 * either is all zeros. */
double mha_cosine(const float *x, const float *y, size_t n);

/* ---- the online softmax, block by block ---------------------------------
 *
 * What attention_fast.c's streaming loops do (FlashAttention's trick),
 * written out in double for one query of one head and recorded block by
 * block, for `--stream --explain` and for the tests. The keys are taken in
 * blocks of `block`; block j updates
 *   m_{j+1}   = max(m_j, the block's largest score)        m_0 = −inf
 *   rescale_j = e^(m_j − m_{j+1})                           (0 for j = 0)
 *   l_{j+1}   = l_j · rescale_j + Σ_block e^(s − m_{j+1})   l_0 = 0
 *   acc_{j+1} = acc_j · rescale_j + Σ_block e^(s − m_{j+1}) · v_k
 * and the head output is acc / l after the last block: softmax(s) · V
 * without ever holding a whole row of weights. */
typedef struct mha_online {
    size_t block;      /* keys per block */
    size_t nblocks;    /* ⌈Nk / block⌉ */
    size_t p;          /* width of a head */
    double *scores;    /* (Nk,) q_h·k_h / sqrt(p); masked keys −1e6 */
    double *block_max; /* (nblocks,) each block's largest score */
    double *block_sum; /* (nblocks,) Σ e^(s − m_{j+1}) over block j */
    double *rescale;   /* (nblocks,) e^(m_j − m_{j+1}) */
    double *m;         /* (nblocks + 1,) running maximum, m[0] = −inf */
    double *l;         /* (nblocks + 1,) running sum, l[0] = 0 */
    double *acc;       /* (nblocks + 1, p) running output, row 0 zeros */
    double *out;       /* (p,) acc / l after the last block */
} mha_online;

/* A record for Nk keys in blocks of block ≥ 1 and heads of width p; the
 * caller owns it and frees it with mha_online_free. Returns 0, or -1 when
 * the sizes overflow or memory runs out (nothing to free then). */
int mha_online_alloc(mha_online *r, size_t Nk, size_t p, size_t block);
void mha_online_free(mha_online *r);

/* The online softmax of query q of example b against Nk keys, into r:
 * q_h (p,) the query's head slice, K_h and V_h Nk rows of p with row k at
 * K_h + k·ld (a head's columns of K (Nk, H) and V (Nk, H): ld = H), keys
 * masked as mha_is_masked(mask, b, q, k, Nq) says. Nk ≥ 1. */
void mha_online_row(mha_online *r, const float *q_h, const float *K_h, const float *V_h,
                     size_t ld, size_t Nk, const mha_masks *mask, size_t b, size_t q, size_t Nq);

/* The largest |r->out[c] − Σ_k w[k]·V_h[k][c]| over the head's p columns:
 * the online softmax against the stored weights w (Nk,) of the same row. */
double mha_online_diff(const mha_online *r, const float *w, const float *V_h, size_t ld,
                        size_t Nk);

#endif
