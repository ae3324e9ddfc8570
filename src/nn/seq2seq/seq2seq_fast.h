/* seq2seq_fast.h — the fast path of seq2seq.h's encoder–decoders: float32
 * throughout, the weights of the forward products arranged once per step,
 * no allocation inside a step. Each architecture's (transformer_fast.h,
 * bahdanau_fast.h) computes the formulas of its reference loops (in
 * double); the tests compare the two. The s2s_fast_* functions below come
 * to the model's architecture (s2s_arch.fast, struct s2s_fast_ops).
 *
 * Dimensions as in seq2seq.h: B pairs, Ts source and Tt target positions,
 * Vs and Vt the vocabularies, d num_hiddens, NH heads, L layers a side.
 */
#ifndef ATTN_SEQ2SEQ_FAST_H
#define ATTN_SEQ2SEQ_FAST_H

#include <stddef.h>

#include "seq2seq.h"

/* The weights of the forward products, arranged (filled by
 * s2s_fast_weights_update, once per step). */
typedef struct s2s_fast_weights {
    const s2s_arch *arch;
    void *net; /* the architecture's: tfm_fast_weights, bah_fast_weights */
} s2s_fast_weights;

/* One chunk's activations and scratch, for up to Bmax pairs of up to Tmax
 * positions a side. */
typedef struct s2s_fast_cache {
    const s2s_arch *arch;
    size_t Bmax, Tmax;
    void *net; /* the architecture's: tfm_fast_cache, bah_fast_cache */
} s2s_fast_cache;

/* An architecture's fast path (the functions below of the same names;
 * the sizes are checked and the structs' common fields set before). */
typedef struct s2s_fast_ops {
    int (*weights_alloc)(s2s_fast_weights *w, const s2s_model *m);
    void (*weights_update)(s2s_fast_weights *w, const s2s_model *m);
    void (*weights_free)(s2s_fast_weights *w);
    int (*cache_alloc)(s2s_fast_cache *c, const s2s_model *m);
    int (*cache_bytes)(const s2s_config *cfg, size_t Bmax, size_t Tmax, size_t *bytes);
    void (*cache_free)(s2s_fast_cache *c);
    double (*step)(float *grads, s2s_fast_cache *c, const s2s_model *m,
                   const s2s_fast_weights *w, const int *src, const long *src_lens,
                   const int *dec_in, const int *targets, size_t B, size_t Ts, size_t Tt,
                   double scale, const mha_dropout *drop, size_t example0, size_t *count,
                   size_t *correct);
    /* max_len ≤ c->Tmax */
    size_t (*greedy_batch)(s2s_fast_cache *c, const s2s_model *m, const s2s_fast_weights *w,
                           const int *src, const long *src_lens, size_t B, size_t Ts, int bos,
                           int eos, size_t max_len, int *out, size_t *n_out);
    const float *(*cross)(const s2s_fast_cache *c, size_t l);
    const float *(*self)(const s2s_fast_cache *c, int side, size_t l); /* NULL: none */
    const float *(*logits)(const s2s_fast_cache *c);
} s2s_fast_ops;

int s2s_fast_weights_alloc(s2s_fast_weights *w, const s2s_model *m);
/* Copy the model's current weights in (once per step, before the chunks). */
void s2s_fast_weights_update(s2s_fast_weights *w, const s2s_model *m);
void s2s_fast_weights_free(s2s_fast_weights *w);

int s2s_fast_cache_alloc(s2s_fast_cache *c, const s2s_model *m, size_t Bmax, size_t Tmax);
/* The bytes s2s_fast_cache_alloc allocates for a model of configuration
 * cfg (its buffers, counted as it allocates them): 0, or -1 when the count
 * overflows. For --max-mem, before anything is allocated. */
int s2s_fast_cache_bytes(const s2s_config *cfg, size_t Bmax, size_t Tmax, size_t *bytes);
void s2s_fast_cache_free(s2s_fast_cache *c);

/* The cross-attention (B, NH, Tt, Ts) of decoder block l after
 * s2s_fast_step (bahdanau: its one attention, NH = 1, l = 0); after
 * s2s_fast_greedy_batch (B, NH, steps, Ts). */
const float *s2s_fast_cross(const s2s_fast_cache *c, const s2s_model *m, size_t l);
/* The self-attention of block l after s2s_fast_step: side 0 the
 * encoder's (B, NH, Tmax, Tmax) rows of Ts, 1 the decoder's (B, NH, Tt,
 * Tt); NULL when the architecture has none. */
const float *s2s_fast_self(const s2s_fast_cache *c, int side, size_t l);
/* The logits (B, Tt, Vt) after s2s_fast_step. */
const float *s2s_fast_logits(const s2s_fast_cache *c, const s2s_model *m);

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
 * numbers. Returns the steps taken: s2s_fast_cross then holds
 * (B, NH, steps, Ts), row t the attention of the step that chose token t. */
size_t s2s_fast_greedy_batch(s2s_fast_cache *c, const s2s_model *m, const s2s_fast_weights *w,
                             const int *src, const long *src_lens, size_t B, size_t Ts, int bos,
                             int eos, size_t max_len, int *out, size_t *n_out);

/* d2l's predict_seq2seq on one source src (Ts,) of valid length src_len:
 * from <bos>, the argmax fed back, up to max_len (≤ Tmax) tokens, stopping
 * at <eos> (not output). out (max_len,) the ids, *n_out their number;
 * cross, when not NULL, (s2s_cross_blocks, NH, max_len, Ts): row t of
 * every block's cross-attention when it chose token t (the last step's,
 * as d2l keeps it; rows past *n_out + 1 are 0). The cache needs Bmax ≥ 1. */
void s2s_fast_greedy(s2s_fast_cache *c, const s2s_model *m, const s2s_fast_weights *w,
                     const int *src, long src_len, size_t Ts, int bos, int eos, size_t max_len,
                     int *out, size_t *n_out, float *cross);

#endif
