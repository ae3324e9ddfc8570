/* bahdanau.h — d2l's Seq2Seq with Bahdanau attention (SPEC.md §11, --arch
 * bahdanau: zh.d2l.ai's EncoderDecoder(Seq2SeqEncoder,
 * Seq2SeqAttentionDecoder)) as naive loops in double: the forward pass,
 * the backward pass through time, and greedy decoding: seq2seq.h's
 * architecture bah_arch (its fast path: bahdanau_fast.h). Its tensors are
 * a bah_model (s2s_model.net), its cache a bah_cache (s2s_cache.net).
 *
 * Dimensions: B pairs, Ts source and Tt target positions, Vs and Vt the
 * vocabularies, d num_hiddens (also the embeddings' size), L GRU layers a
 * side.
 *
 * Encoder (Seq2SeqEncoder), time-major as d2l permutes it:
 *   x_t = encoder.embedding[src[:, t]]                             (B, d)
 *   H, s = GRU_enc(x_0 … x_{Ts−1}) from zeros: H (Ts, B, d) the last
 *          layer's states, s (L, B, d) every layer's after the last step
 *          (all Ts positions, padding included, as d2l runs it)
 * Decoder (Seq2SeqAttentionDecoder), teacher-forced: state = s; for
 * t = 0 … Tt − 1:
 *   q_t   = state[L − 1]: s(t − 1), the last layer's previous state  (B, d)
 *   AdditiveAttention(q_t, H, H, src_lens), decoder.attention's
 *   W_q, W_k (d, d) and w_v (1, d), no biases:
 *     K     = H · W_kᵀ (once)                                     (Ts, B, d)
 *     F_tj  = tanh(W_q q_t + K_j)                                 (B, Ts, d)
 *     e_tj  = w_v · F_tj                                          (B, Ts)
 *     a_t   = softmax over j < src_len of e_t, 0 beyond           (B, Ts)
 *     c_t   = Σ_j a_tj H_j                                        (B, d)
 *   x_t   = [c_t; decoder.embedding[dec_in[:, t]]]                (B, 2d)
 *   state = GRU_dec step(x_t, state); o_t = state[L − 1]          (B, d)
 *   logits_t = o_t · decoder.dense.weightᵀ + decoder.dense.bias   (B, Vt)
 * and the loss as seq2seq.h's: cross-entropy over the targets that are
 * not <pad>.
 *
 * --score dot (DotProductAttention, no parameters): e_tj = q_t · H_j / √d
 * in place of the additive score (F and K unused, Wq holds q_t itself).
 * --rnn lstm: nn.LSTM a side (lstm.h) in place of nn.GRU, the same names
 * (its tensors 4d rows tall); the state is (h, c), the query the last
 * layer's h, the decoder's start the encoder's final (h, c).
 *
 * The backward pass runs the decoder's steps in reverse: step t's
 * gradient reaches the previous state through the GRU and through the
 * query (a_t was computed from s(t − 1)); every step's context and keys
 * add into d H, which runs back through the encoder's GRU with the
 * decoder's gradient of its first state as the encoder's final states'.
 *
 * Parameters (state_dict order): encoder.embedding.weight (Vs, d),
 * encoder.rnn.{weight_ih, weight_hh, bias_ih, bias_hh}_l{k} (k < L; layer
 * 0's input d), decoder.attention.W_k.weight (d, d),
 * decoder.attention.W_q.weight (d, d), decoder.attention.w_v.weight
 * (1, d), decoder.embedding.weight (Vt, d), decoder.rnn.…_l{k} (layer 0's
 * input 2d), decoder.dense.weight (Vt, d), decoder.dense.bias (Vt,).
 * Start: PyTorch's defaults: embeddings ~ N(0, 1), the GRUs' tensors
 * uniform in ±1/sqrt(d), nn.Linear uniform in ±1/sqrt(in). No dropout.
 */
#ifndef ATTN_BAHDANAU_H
#define ATTN_BAHDANAU_H

#include <stddef.h>

#include "gru.h"
#include "lstm.h"
#include "seq2seq.h"

extern const s2s_arch bah_arch;

/* The model's tensors (s2s_model.net). */
typedef struct bah_model {
    tensor enc_embedding;                 /* (Vs, d) */
    gru_layer enc_rnn[TMODEL_MAX_LAYERS]; /* (L,) encoder.rnn, layer 0's input d */
    tensor att_W_k, att_W_q;              /* (d, d) decoder.attention.W_k, W_q */
    tensor att_w_v;                       /* (1, d) decoder.attention.w_v */
    tensor dec_embedding;                 /* (Vt, d) */
    gru_layer dec_rnn[TMODEL_MAX_LAYERS]; /* (L,) decoder.rnn, layer 0's input 2d */
    linear dense;                         /* (Vt, d), bias (Vt,) */
    /* --rnn lstm: encoder.rnn and decoder.rnn are these (enc_rnn and
     * dec_rnn unallocated) */
    lstm_layer enc_lstm[TMODEL_MAX_LAYERS], dec_lstm[TMODEL_MAX_LAYERS];
} bah_model;

static inline bah_model *bah_net(const s2s_model *m)
{
    return m->net;
}

/* What a forward pass keeps, for up to Bmax pairs of up to Ts_max source
 * and Tt_max target positions. */
typedef struct bah_cache {
    size_t Bmax, Ts_max, Tt_max;
    size_t B, Ts, Tt;
    double *xs;     /* (Ts, B, d) the encoder's input */
    int lstm;       /* --rnn lstm: the stacks below are enc_l and dec_l */
    int dot;        /* --score dot */
    gru_stack enc;  /* the encoder's GRU: H = its last layer's states */
    lstm_stack enc_l, dec_l; /* or its LSTM and the decoder's */
    double *s0;     /* (2, L, B, d) its final states: the decoder's start
                     * (the GRU's h, or the LSTM's h then c) */
    double *K;      /* (Ts, B, d) H · W_kᵀ */
    double *Wq;     /* (Tt, B, d) W_q q_t */
    double *F;      /* (Tt, B, Ts, d) tanh(W_q q_t + K_j) */
    double *a;      /* (Tt, B, Ts) the attention weights */
    float *A;       /* (B, Tt, Ts) the same in float, for the views */
    double *xt;     /* (Tt, B, 2d) the decoder GRU's inputs [c_t; embedding] */
    gru_stack dec;  /* the decoder's GRU, from the encoder's final states */
    double *o;      /* (Tt, B, d) the decoder's outputs */
    /* backward: d o (Tt, B, d), d x_t (B, 2d), d state (L, B, d), d H and
     * d K (Ts, B, d), d xs (Ts, B, d), the encoder's state gradient
     * (L, B, d), d (W_q q_t) (B, d); with an LSTM, dstate and denc_h
     * (2, L, B, d): d h then d c */
    double *do_, *dx, *dstate, *dH, *dK, *dxs, *denc_h, *dWq;
    double *de; /* (Ts,) the scores' gradient, one row at a time */
} bah_cache;

int bah_cache_alloc(bah_cache *c, const s2s_model *m, size_t Bmax, size_t Ts_max, size_t Tt_max,
                    char *err, size_t errlen);
void bah_cache_free(bah_cache *c);

/* The forward pass: src (B, Ts), src_lens (B,) (NULL: all Ts), dec_in
 * (B, Tt); the logits (B, Tt, Vt) into logits, the attention into c->A.
 * Ids are checked by the caller (s2s_forward). */
void bah_forward(const s2s_model *m, bah_cache *c, float *logits, const int *src,
                 const long *src_lens, const int *dec_in, size_t B, size_t Ts, size_t Tt);
/* The same in two halves, as greedy decoding runs it: the encoder (which
 * sets c->Tt = Tt_max), then decoder step t (0, 1, … in order) on column
 * t of dec_in (B, c->Tt), its logits into row t of logits (B, c->Tt, Vt)
 * and of c->A. */
void bah_encode(const s2s_model *m, bah_cache *c, const int *src, size_t B, size_t Ts);
void bah_decode_step(const s2s_model *m, bah_cache *c, float *logits, const long *src_lens,
                     const int *dec_in, size_t t);
/* The backward pass from dlogits (B, Tt, Vt) = d loss / d logits after
 * bah_forward on the same batch: grads (m->total, laid out as m->param)
 * +=. */
void bah_backward(double *grads, bah_cache *c, const s2s_model *m, const double *dlogits,
                  const int *src, const long *src_lens, const int *dec_in);

/* Greedy decoding, d2l's predict_seq2seq: as s2s_greedy (seq2seq.h, which
 * checks the ids), the state carried from step to step; cross (max_len,
 * Ts) or NULL: row t the attention of the step that produced token t (and
 * of the step that produced <eos>). 0, or -1 with the reason in err. */
int bah_greedy(const s2s_model *m, const int *src, long src_len, size_t Ts, int bos, int eos,
               size_t max_len, int *out, size_t *n_out, float *cross, char *err, size_t errlen);

#endif
