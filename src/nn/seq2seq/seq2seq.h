/* seq2seq.h — the encoder–decoders that translate (SPEC.md §11, --task
 * translate), behind one interface: a model of any architecture is an
 * s2s_model, and the s2s_* functions below come to its architecture's
 * table (struct s2s_arch) for what differs. The architectures:
 *
 *   transformer  d2l's Transformer encoder–decoder (transformer.h,
 *                transformer_fast.h; prefix tfm_)
 *   bahdanau     d2l's Seq2Seq with Bahdanau attention (bahdanau.h,
 *                bahdanau_fast.h, its GRU gru.h; prefix bah_)
 *
 * s2s_archs (seq2seq.c) is the one list of them; a new one is its own
 * files, its table, and a line there.
 *
 * Dimensions: B batch, Ts source positions, Tt target positions (both
 * padded to num_steps), Vs and Vt the source and target vocabularies, d
 * num_hiddens, NH num_heads, L layers a side.
 *
 * Every model ends in decoder.dense (Vt, d) and is trained on the same
 * loss: the logits (B, Tt, Vt) of the teacher-forced decoder, whose
 * input dec_in = <bos> + the target without its last entry (position t
 * reads target t − 1 and predicts target t), and
 *   loss = mean over the target entries that are not <pad> of
 *          −log softmax(logits)[target]   (targets (B, Tt), −1 = <pad>)
 *
 * Parameters are float32 tensors under d2l's state_dict names, in
 * state_dict order (s2s_model.param, each architecture's header lists
 * them). Gradients are one flat double array laid out in that order
 * (param[i].offset), as encoder.h's. Every tensor is row-major.
 */
#ifndef ATTN_SEQ2SEQ_H
#define ATTN_SEQ2SEQ_H

#include <stddef.h>

#include "attention.h"
#include "encoder.h"
#include "tensor.h"

struct s2s_arch;
struct s2s_fast_weights; /* seq2seq_fast.h */
struct s2s_fast_cache;

typedef struct s2s_config {
    size_t src_vocab; /* Vs, d2l's Vocab: <unk> <pad> <bos> <eos> included */
    size_t tgt_vocab; /* Vt */
    size_t hiddens;   /* d */
    size_t heads;     /* NH, divides d (bahdanau: 1, its one attention) */
    size_t layers;    /* L blocks (bahdanau: GRU layers) a side, 1 … TMODEL_MAX_LAYERS */
    size_t ffn;       /* H ≥ 1, the FFNs' hidden units (bahdanau: unused) */
    int bias;         /* biases on every W_q, W_k, W_v, W_o (bahdanau: 0) */
    double dropout;   /* on the attention weights, training only (bahdanau: 0) */
    /* --arch: an entry of s2s_archs; NULL: the first, the Transformer (a
     * model's is always set) */
    const struct s2s_arch *arch;
    int rnn;          /* bahdanau's recurrent layers: S2S_RNN_GRU (0) or S2S_RNN_LSTM */
    int score;        /* S2S_SCORE_ADDITIVE (0) or S2S_SCORE_DOT (the Transformer's usual) */
} s2s_config;

/* --rnn (bahdanau only; the Transformer's is 0) and --score: nn.GRU or
 * nn.LSTM a side; additive attention (W_q, W_k, w_v) or scaled dot
 * product (no parameters). Their names, in the model file's "rnn" and
 * "score": s2s_rnn_names, s2s_score_names. The score's default is the
 * architecture's (s2s_arch.default_score): a Transformer's config names
 * S2S_SCORE_DOT itself (S2S_SCORE_ADDITIVE: every head of its three
 * attentions scored additively, transformer.h). */
enum { S2S_RNN_GRU, S2S_RNN_LSTM };
enum { S2S_SCORE_ADDITIVE, S2S_SCORE_DOT };
extern const char *const s2s_rnn_names[];   /* "gru", "lstm", NULL */
extern const char *const s2s_score_names[]; /* "additive", "dot", NULL */
/* What messages call them: "GRU", "LSTM"; "", ", dot-product attention"
 * (after the model's description). */
extern const char *const s2s_rnn_labels[];
extern const char *const s2s_score_notes[];

/* The largest architecture's count, the Transformer's: embeddings and
 * dense (4); per side and block: an encoder block's 16, a decoder block's
 * 2 × 8 attention, 6 LayerNorm, 4 FFN, and with additive scores 3 more in
 * each of the three attentions */
#define S2S_MAX_PARAMS (4 + 51 * TMODEL_MAX_LAYERS)

typedef struct s2s_model {
    s2s_config cfg;
    void *net; /* the architecture's own tensors: tfm_model, bah_model */
    size_t nparams;
    tparam param[S2S_MAX_PARAMS]; /* state_dict order */
    size_t total;                       /* number of parameters, all tensors */
    /* where its pairs came from: has_seed 1 when the built-in task's
     * (--task translate), drawn from seed (the model file's "seed", so
     * that attn translate draws its held-out pairs again); 0 for --data's
     * pairs or a file without "seed" */
    int has_seed;
    unsigned long seed;
} s2s_model;

/* What a forward pass keeps, for up to Bmax pairs of up to Ts_max source
 * and Tt_max target positions. */
typedef struct s2s_cache {
    const struct s2s_arch *arch;
    size_t Bmax, Ts_max, Tt_max; /* allocated for */
    size_t B, Ts, Tt;            /* the last forward pass's sizes */
    /* dropout streams: the index of this batch's first pair in the step's
     * batch (0 unless a step's batch is split over several caches: then
     * each part draws the dropout masks the whole batch would) */
    size_t example0;
    float *logits;   /* (B, Tt, Vt) */
    double *dlogits; /* (B, Tt, Vt) backward: d loss / d logits */
    void *net;       /* the architecture's: tfm_cache, bah_cache */
} s2s_cache;

/* An architecture: what the commands ask of it, and its operations (the
 * s2s_* functions of the same names check what is common and come here).
 * The fast path's are seq2seq_fast.h's. */
typedef struct s2s_arch {
    const char *name;  /* --arch and the model file's "arch" */
    const char *label; /* what messages call it: "Bahdanau's model" */
    int has_ffn;      /* its blocks have FFNs: the files' "ffn_num_hiddens" */
    int has_self;     /* self-attentions in the encoder and the decoder (--all, the views) */
    int recurrent;    /* its layers are recurrent (GRU layers: a step per position) */
    /* its score when none is named (the model file without "score"):
     * Bahdanau's S2S_SCORE_ADDITIVE, the Transformer's S2S_SCORE_DOT */
    int default_score;
    /* the decoder blocks whose cross-attention the views show */
    size_t (*cross_blocks)(const s2s_config *cfg);
    /* the architecture's own checks, after the common ones */
    int (*config_check)(const s2s_config *cfg, char *err, size_t errlen);
    /* m->cfg set, the rest zero: m->net, its tensors and m->param */
    int (*alloc)(s2s_model *m, char *err, size_t errlen);
    void (*init)(s2s_model *m, unsigned long long seed);
    void (*free)(s2s_model *m);
    /* c's sizes set (checked), the rest zero: c->logits, c->dlogits, c->net */
    int (*cache_alloc)(s2s_cache *c, const s2s_model *m, char *err, size_t errlen);
    void (*cache_free)(s2s_cache *c);
    /* ids and sizes checked */
    int (*forward)(const s2s_model *m, s2s_cache *c, const int *src, const long *src_lens,
                   const int *dec_in, size_t B, size_t Ts, size_t Tt, const mha_dropout *drop,
                   char *err, size_t errlen);
    /* from c->dlogits */
    int (*backward)(double *grads, s2s_cache *c, const s2s_model *m, const int *src,
                    const long *src_lens, const int *dec_in, const mha_dropout *drop, char *err,
                    size_t errlen);
    const float *(*cross)(const s2s_cache *c, size_t l);
    /* side 0 the encoder's, 1 the decoder's; NULL without has_self */
    const float *(*self)(const s2s_cache *c, int side, size_t l);
    /* <bos>, <eos> and src checked */
    int (*greedy)(const s2s_model *m, const int *src, long src_len, size_t Ts, int bos, int eos,
                  size_t max_len, int *out, size_t *n_out, float *cross, char *err,
                  size_t errlen);
    /* switch heads off (s2s_set_heads); NULL: the architecture has no
     * heads to switch (Bahdanau's one attention of one head) */
    void (*set_heads)(s2s_model *m, const unsigned char *on);
    /* the fast path (seq2seq_fast.h) */
    const struct s2s_fast_ops *fast;
    /* whether the fast path runs cfg (NULL: always); when not, the
     * reference loops train and translate it (the Transformer's additive
     * scores) */
    int (*fast_supports)(const s2s_config *cfg);
} s2s_arch;

/* Whether the fast path runs cfg (its architecture's fast_supports). */
int s2s_fast_supports(const s2s_config *cfg);
/* What messages add after the model's description for cfg's score: ""
 * for its architecture's default, else ", dot-product attention" or
 * ", additive scores". */
const char *s2s_score_note(const s2s_config *cfg);

/* The kinds of attention whose heads s2s_set_heads switches, in the order
 * of its mask: the encoder's self-attention, the decoder's masked
 * self-attention (attention1), the cross-attention (attention2). */
enum { S2S_HEADS_ENC, S2S_HEADS_DEC, S2S_HEADS_CROSS, S2S_HEAD_KINDS };

/* Every architecture, NULL-terminated; the first is the default. */
extern const s2s_arch *const s2s_archs[];
/* The architecture of this name, or NULL. */
const s2s_arch *s2s_arch_find(const char *name);
/* cfg->arch, or the default when NULL. */
const s2s_arch *s2s_arch_of(const s2s_config *cfg);

/* The decoder blocks whose cross-attention the views show: L for the
 * Transformer, 1 for Bahdanau's one attention. */
size_t s2s_cross_blocks(const s2s_config *cfg);

/* Check the configuration (vocabularies, d, NH dividing d, 1 … 12
 * layers, then the architecture's: H ≥ 1, dropout in [0, 1)): 0, or -1
 * with the reason in err. */
int s2s_config_check(const s2s_config *cfg, char *err, size_t errlen);

/* d2l 10.5's exercise, pruning heads: on (S2S_HEAD_KINDS, L, NH), entry
 * (kind, l, h) 0 switches head h of block l's attention of that kind off
 * (its output zeros before W_o, as if cut from the concat: mha_params'
 * heads_on), 1 keeps it; NULL: every head on again. Every pass (reference
 * and fast, forward and backward) reads it. Borrowed: on stays alive
 * while the model runs. 0, or -1 when the architecture has no heads to
 * switch (arch->set_heads NULL: Bahdanau's). */
int s2s_set_heads(s2s_model *m, const unsigned char *on);

/* A model with zeroed parameters (s2s_init fills them). 0, or -1 with the
 * reason in err (nothing to free then). */
int s2s_alloc(s2s_model *m, const s2s_config *cfg, char *err, size_t errlen);
/* The architecture's start, drawn from seed in state_dict order. */
void s2s_init(s2s_model *m, unsigned long long seed);
void s2s_free(s2s_model *m);
/* The parameter with this state_dict name, or NULL. */
tparam *s2s_find(s2s_model *m, const char *name);
/* Copy every parameter (same configuration). */
void s2s_copy_params(s2s_model *dst, const s2s_model *src);

int s2s_cache_alloc(s2s_cache *c, const s2s_model *m, size_t Bmax, size_t Ts_max, size_t Tt_max,
                    char *err, size_t errlen);
void s2s_cache_free(s2s_cache *c);

/* The cross-attention (B, NH, Tt, Ts) of decoder block l after a forward
 * pass (bahdanau: its attention, NH = 1, l = 0). */
const float *s2s_cross(const s2s_cache *c, const s2s_model *m, size_t l);
/* The self-attention of block l after a forward pass: side 0 the
 * encoder's (B, NH, Ts, Ts), 1 the decoder's (B, NH, Tt, Tt); NULL when
 * the architecture has none. */
const float *s2s_self(const s2s_cache *c, int side, size_t l);

/* Whether a batch's ids are in range: src (B, Ts) < Vs, dec_in (B, Tt)
 * < Vt, targets (B, Tt) −1 or < Vt (src, dec_in or targets may be NULL:
 * not checked). 0, or -1 with the first bad entry named in err. */
int s2s_check_ids(const s2s_model *m, const int *src, const int *dec_in, const int *targets,
                  size_t B, size_t Ts, size_t Tt, char *err, size_t errlen);

/* The forward pass: src (B, Ts) source ids, src_lens (B,) their valid
 * lengths (NULL: all Ts), dec_in (B, Tt) decoder input ids; the logits
 * (B, Tt, Vt) into c->logits, and every attention's weights in the cache
 * for the views (s2s_cross, s2s_self). drop: dropout on the attention
 * weights (NULL or p 0 in evaluation). 0, or -1 with the reason in err. */
int s2s_forward(const s2s_model *m, s2s_cache *c, const int *src, const long *src_lens,
                const int *dec_in, size_t B, size_t Ts, size_t Tt, const mha_dropout *drop,
                char *err, size_t errlen);

/* The summed cross-entropy over the target entries that are not <pad>
 * (targets (B, Tt), −1 = <pad>, the others < Vt), in double, after
 * s2s_forward; *count gets their number, *correct how many have the
 * target as the argmax (either may be NULL). The loss of SPEC §11 is
 * this sum / *count. */
double s2s_loss(const s2s_cache *c, const s2s_model *m, const int *targets, size_t *count,
                size_t *correct);

/* The backward pass of loss·scale (scale = 1/count for the mean) after
 * s2s_forward on the same batch and dropout: grads (m->total) += d
 * loss·scale / d every parameter. 0, or -1 with the reason in err. */
int s2s_backward(double *grads, s2s_cache *c, const s2s_model *m, const int *src,
                 const long *src_lens, const int *dec_in, const int *targets, double scale,
                 const mha_dropout *drop, char *err, size_t errlen);

/* Attention module k's dropout (the Transformer's encoder block l: k = l;
 * decoder block l: attention1 k = L + 2l, attention2 k = L + 2l + 1): the
 * step's stream drop jumped to position k·2^40 + example0·per (per: the
 * module's weights of one pair, NH·Nq·Nk; example0: the index of the
 * part's first pair in the step's batch), so that each module draws its
 * own mask and a batch split into parts draws what the whole batch would.
 * Into *out, or NULL without dropout. The fast path draws the same. */
const mha_dropout *s2s_module_dropout(mha_dropout *out, const mha_dropout *drop,
                                     size_t example0, size_t k, size_t per);

/* Release what every architecture has at its two ends: encoder.embedding,
 * decoder.embedding and decoder.dense. */
void s2s_ends_free(tensor *enc_embedding, tensor *dec_embedding, linear *dense);

/* The first index of the largest of x (n,), as torch.argmax: greedy
 * decoding's next token. */
int s2s_argmax(const float *x, size_t n);

/* Greedy decoding's loop, for an architecture's greedy: from <bos> in
 * dec_in[0], step t runs the decoder to position t (step returns the
 * logits (Vt,) of position t, or NULL with the reason in err), its argmax
 * is the next token, fed back in dec_in[t + 1], until <eos> (not output)
 * or max_len tokens; out gets them, *n_out (from 0) their number. */
typedef const float *s2s_step_fn(void *ctx, const int *dec_in, size_t t, char *err,
                                 size_t errlen);
int s2s_greedy_loop(s2s_step_fn *step, void *ctx, int *dec_in, size_t Vt, int bos, int eos,
                    size_t max_len, int *out, size_t *n_out, char *err, size_t errlen);

/* Greedy decoding, d2l's predict_seq2seq: src (Ts,) one source sentence
 * (ids + <eos>, padded to Ts) of src_len valid entries; from <bos>, each
 * step's argmax (the first largest logit) is fed back, until <eos> (not
 * output) or max_len tokens. out (max_len,) gets the ids, *n_out their
 * number. cross (s2s_cross_blocks, NH, max_len, Ts), or NULL: the
 * cross-attention of every step, row t = the weights of the query that
 * produced token t; when the decoding stopped at <eos>, row *n_out is
 * that step's (as d2l's figures show it); later rows 0. So s2s_forward on
 * src and dec_in = <bos> + out gives the same cross-attention, and every
 * self-attention, for the views (transformer.h says how).
 * 0, or -1 with the reason in err (ids out of range, out of memory). */
int s2s_greedy(const s2s_model *m, const int *src, long src_len, size_t Ts, int bos, int eos,
               size_t max_len, int *out, size_t *n_out, float *cross, char *err, size_t errlen);

#endif
