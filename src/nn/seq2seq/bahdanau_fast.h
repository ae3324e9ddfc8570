/* bahdanau_fast.h — bahdanau.h's Seq2Seq with Bahdanau attention arranged
 * to be fast: float32, lanes.h's 16-float values and block_fast.h's
 * linear loops, the weights transposed once per step, no allocation
 * inside a step. It computes the formulas of bahdanau.c (the reference,
 * in double); the tests compare the two. seq2seq_fast.h's s2s_fast_*
 * functions come here (bah_fast_ops) for a model of --arch bahdanau.
 *
 * Dimensions as in bahdanau.h: B pairs, Ts source and Tt target
 * positions, Vt the target vocabulary, d num_hiddens, L GRU (or LSTM:
 * --rnn lstm) layers a side; --score dot's attention as well.
 *
 * Reproducible as the rest of the fast paths (SPEC §12): every float
 * result has one order of operations on every machine — fused
 * multiply-adds only where written (v16_fma, fmaf), sums as lanes.h's
 * fixed partial sums, attn's own exp and tanh (fmath.h).
 */
#ifndef ATTN_BAHDANAU_FAST_H
#define ATTN_BAHDANAU_FAST_H

#include <stddef.h>

#include "seq2seq_fast.h"

extern const s2s_fast_ops bah_fast_ops;

/* The model's weights arranged for the forward products (filled by
 * bah_fast_weights_update, once per step). */
typedef struct bah_fast_weights bah_fast_weights;
/* One chunk's activations and scratch, for up to Bmax pairs of up to
 * Tmax positions a side. */
typedef struct bah_fast_cache bah_fast_cache;

/* NULL when out of memory. */
bah_fast_weights *bah_fast_weights_new(const s2s_model *m);
void bah_fast_weights_update(bah_fast_weights *w, const s2s_model *m);
void bah_fast_weights_free(bah_fast_weights *w);

/* NULL when out of memory or the sizes overflow. */
bah_fast_cache *bah_fast_cache_new(const s2s_model *m, size_t Bmax, size_t Tmax);
/* The bytes bah_fast_cache_new allocates for a model of configuration
 * cfg: 0, or -1 when the count overflows (for --max-mem). */
int bah_fast_cache_bytes(const s2s_config *cfg, size_t Bmax, size_t Tmax, size_t *bytes);
void bah_fast_cache_free(bah_fast_cache *c);

/* One training step's forward pass on src (B, Ts), src_lens (B,), dec_in
 * (B, Tt); then with targets (B, Tt) (−1: padding) the summed
 * cross-entropy, its count and correct count (either may be NULL), and
 * (grads not NULL) the backward pass: grads (m->total floats, laid out as
 * m->param) += d (loss · scale) / d parameters. Returns the summed loss
 * (0 without targets). */
double bah_fast_step(float *grads, bah_fast_cache *c, const s2s_model *m,
                     const bah_fast_weights *w, const int *src, const long *src_lens,
                     const int *dec_in, const int *targets, size_t B, size_t Ts, size_t Tt,
                     double scale, size_t *count, size_t *correct);

/* After bah_fast_step: the logits (B, Tt, Vt) and the attention weights
 * (B, Tt, Ts) (that is (B, 1, Tt, Ts): one head). */
const float *bah_fast_logits(const bah_fast_cache *c);
const float *bah_fast_attention(const bah_fast_cache *c);

/* d2l's predict_seq2seq on B sources at once: src (B, Ts), src_lens (B,);
 * out (B, max_len) each one's ids (max_len ≤ Tmax), n_out (B,) their
 * numbers; the state carried from step to step, each source stopping at
 * its <eos>. Returns the steps taken: bah_fast_attention then holds
 * (B, steps, Ts), row t the attention of the step that chose token t. */
size_t bah_fast_greedy_batch(bah_fast_cache *c, const s2s_model *m, const bah_fast_weights *w,
                             const int *src, const long *src_lens, size_t B, size_t Ts, int bos,
                             int eos, size_t max_len, int *out, size_t *n_out);

/* After the forward pass of s2s_fast_step on B pairs: pair b's attention,
 * for the numbers behind its weights (attn translate --explain). Ts and Tt
 * the pass's lengths; step t's rows are at t · q_stride (q, wq) and
 * t · c_stride (context). The pointers are the cache's and the model's. */
typedef struct bah_fast_parts {
    size_t d, Ts, Tt;
    int dot;              /* --score dot: q · H_j / √d (K, w_v NULL) */
    const float *q;       /* (d,) step t's query s(t′−1), the last layer's previous state */
    const float *wq;      /* (d,) additive: W_q q_t; dot: q_t itself */
    size_t q_stride;
    const float *H;       /* (Ts, d) the encoder's states: the values (and dot's keys) */
    const float *K;       /* (Ts, d) additive: W_k H_j */
    const float *w_v;     /* (d,) additive: w_v */
    const float *A;       /* (Tt, Ts) the weights */
    const float *context; /* (d,) step t's Σ_j a_j H_j */
    size_t c_stride;
} bah_fast_parts;

/* 0, or -1 when c is not a Bahdanau model's cache or b is past its pass. */
int bah_fast_attention_parts(const s2s_fast_cache *c, const s2s_model *m, size_t b,
                             bah_fast_parts *out);

#endif
