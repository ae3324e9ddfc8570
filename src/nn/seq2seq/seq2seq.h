/* seq2seq.h — d2l's Transformer encoder–decoder (SPEC.md §11, --arch
 * transformer: zh.d2l.ai's EncoderDecoder(TransformerEncoder,
 * TransformerDecoder)), its forward and backward passes as naive loops,
 * its loss, and greedy decoding (d2l's predict_seq2seq).
 *
 * Dimensions: B batch, Ts source positions, Tt target positions (both
 * padded to num_steps), Vs and Vt the source and target vocabularies, d
 * num_hiddens, NH num_heads, p = d / NH, L blocks on each side, H
 * ffn_num_hiddens.
 *
 * Encoder: §9's stack of TransformerEncoderBlocks (encoder.h's tblock,
 * the same code as attn train's), not causal, valid_lens = src_lens:
 *   E_0     = encoder.embedding[src] · √d + P[t]                    (B, Ts, d)
 *   E_{l+1} = addnorm2(E', ffn(E')),  E' = addnorm1(E_l, attention(E_l, E_l, E_l))
 *   enc     = E_L                                                   (B, Ts, d)
 * Decoder, teacher-forced: dec_in = <bos> + the target without its last
 * entry, so position t reads target t − 1 and predicts target t:
 *   X_0 = decoder.embedding[dec_in] · √d + P[t]                     (B, Tt, d)
 *   each DecoderBlock l, d2l's names:
 *     X2 = attention1(X, X, X), causal: query t sees keys 0 … t   (B, Tt, d)
 *          (d2l's dec_valid_lens 1 … Tt; target padding not masked)
 *     Y  = addnorm1(X, X2) = LayerNorm(X + X2)                    (B, Tt, d)
 *     Y2 = attention2(Y, enc, enc, src_lens): cross-attention, the
 *          queries from the decoder, keys and values from the encoder,
 *          its weights A2 (B, NH, Tt, Ts)                         (B, Tt, d)
 *     Z  = addnorm2(Y, Y2)                                        (B, Tt, d)
 *     X_{l+1} = addnorm3(Z, ffn(Z)),  ffn = dense2(ReLU(dense1(·)))
 *   logits = X_L · decoder.dense.weightᵀ + decoder.dense.bias      (B, Tt, Vt)
 *   loss   = mean over the target entries that are not <pad> of
 *            −log softmax(logits)[target]   (targets (B, Tt), −1 = <pad>)
 *
 * MultiHeadAttention is §4's (attention.h: mha_forward, mha_backward),
 * with biases on W_q, W_k, W_v, W_o when cfg.bias (--bias, both sides);
 * LayerNorm eps 1e-5; dropout (training only) on the attention weights,
 * each attention module its own stream of the step's seed. P is the
 * chapter's sinusoidal encoding (posenc.h), the same on both sides.
 *
 * The backward pass runs the decoder from the top; every decoder block's
 * cross-attention adds its keys' and values' gradients into d enc
 * (B, Ts, d), which then runs down the encoder: the encoder learns only
 * through the cross-attention.
 *
 * Parameters are float32 tensors under d2l's state_dict names, in
 * state_dict order (s2s_model.param): encoder.embedding.weight,
 * encoder.blks.block0.attention.W_q.weight ([.bias]) … W_o,
 * ….addnorm1.ln.weight/bias, ….ffn.dense1.weight/bias,
 * ….ffn.dense2.weight/bias, ….addnorm2.ln.weight/bias, block1 …;
 * decoder.embedding.weight, decoder.blks.block0.attention1.W_q.weight …,
 * ….addnorm1.ln.*, ….attention2.W_q.weight …, ….addnorm2.ln.*,
 * ….ffn.dense1.*, ….ffn.dense2.*, ….addnorm3.ln.*, block1 …;
 * decoder.dense.weight, decoder.dense.bias. Gradients are one flat double
 * array laid out in that order (param[i].offset), as encoder.h's.
 * Every tensor is row-major.
 */
#ifndef ATTN_SEQ2SEQ_H
#define ATTN_SEQ2SEQ_H

#include <stddef.h>

#include "attention.h"
#include "gru.h"
#include "tensor.h"
#include "encoder.h"

/* --arch: which encoder–decoder (SPEC §11) */
typedef enum s2s_arch {
    S2S_TRANSFORMER, /* d2l's Transformer: the rest of this header */
    S2S_BAHDANAU     /* d2l's Seq2Seq with Bahdanau attention: bahdanau.h */
} s2s_arch;

typedef struct s2s_config {
    size_t src_vocab; /* Vs, d2l's Vocab: <unk> <pad> <bos> <eos> included */
    size_t tgt_vocab; /* Vt */
    size_t hiddens;   /* d */
    size_t heads;     /* NH, divides d (bahdanau: 1, its one attention) */
    size_t layers;    /* L blocks (bahdanau: GRU layers) a side, 1 … TMODEL_MAX_LAYERS */
    size_t ffn;       /* H ≥ 1, the FFNs' hidden units (bahdanau: unused) */
    int bias;         /* biases on every W_q, W_k, W_v, W_o (bahdanau: 0) */
    double dropout;   /* on the attention weights, training only (bahdanau: 0) */
    s2s_arch arch;    /* S2S_TRANSFORMER unless set */
} s2s_config;

/* One TransformerDecoderBlock's parameters. */
typedef struct s2s_dec_block {
    mha_params attention1;       /* masked self-attention, (d, d) each */
    tensor ln1_weight, ln1_bias; /* (d,) addnorm1 */
    mha_params attention2;       /* cross-attention */
    tensor ln2_weight, ln2_bias; /* (d,) addnorm2 */
    linear dense1;               /* ffn.dense1: (H, d), bias (H,) */
    linear dense2;               /* ffn.dense2: (d, H), bias (d,) */
    tensor ln3_weight, ln3_bias; /* (d,) addnorm3 */
} s2s_dec_block;

/* embeddings and dense (4); per side and block: an encoder block's 16,
 * a decoder block's 2 × 8 attention, 6 LayerNorm, 4 FFN */
#define S2S_MAX_PARAMS (4 + 42 * TMODEL_MAX_LAYERS)

typedef struct s2s_model {
    s2s_config cfg;
    tmodel_config enc_cfg;                /* the encoder's blocks as §9's stack */
    tensor enc_embedding;                 /* (Vs, d) */
    tblock enc[TMODEL_MAX_LAYERS];        /* (L,) encoder blocks */
    tensor dec_embedding;                 /* (Vt, d) */
    s2s_dec_block dec[TMODEL_MAX_LAYERS]; /* (L,) decoder blocks */
    linear dense;                         /* (Vt, d), bias (Vt,) */
    /* --arch bahdanau (bahdanau.h), with the embeddings and dense above */
    gru_layer enc_rnn[TMODEL_MAX_LAYERS]; /* (L,) encoder.rnn, layer 0's input d */
    gru_layer dec_rnn[TMODEL_MAX_LAYERS]; /* (L,) decoder.rnn, layer 0's input 2d */
    tensor att_W_k, att_W_q;              /* (d, d) decoder.attention.W_k, W_q */
    tensor att_w_v;                       /* (1, d) decoder.attention.w_v */
    size_t nparams;
    tmodel_param param[S2S_MAX_PARAMS]; /* state_dict order */
    size_t total;                       /* number of parameters, all tensors */
} s2s_model;

/* The decoder blocks whose cross-attention the views show: L for the
 * Transformer, 1 for Bahdanau's one attention. */
size_t s2s_cross_blocks(const s2s_config *cfg);

/* Check the configuration (vocabularies, d, NH dividing d, 1 … 12
 * layers, H ≥ 1, dropout in [0, 1)): 0, or -1 with the reason in err. */
int s2s_config_check(const s2s_config *cfg, char *err, size_t errlen);

/* A model with zeroed parameters (s2s_init fills them). 0, or -1 with the
 * reason in err (nothing to free then). */
int s2s_alloc(s2s_model *m, const s2s_config *cfg, char *err, size_t errlen);
/* SPEC §9's start, drawn from seed in state_dict order: embeddings
 * ~ N(0, 1/d); every nn.Linear weight and bias uniform in ±1/sqrt(in);
 * LayerNorm weight 1, bias 0. */
void s2s_init(s2s_model *m, unsigned long long seed);
void s2s_free(s2s_model *m);
/* The parameter with this state_dict name, or NULL. */
tmodel_param *s2s_find(s2s_model *m, const char *name);
/* Copy every parameter (same configuration). */
void s2s_copy_params(s2s_model *dst, const s2s_model *src);

/* One decoder block's forward pass, kept for the backward pass. */
typedef struct s2s_dec_cache {
    float *Q1, *K1, *V1, *concat1; /* (B, Tt, d) attention1's trace */
    float *A1;                     /* (B, NH, Tt, Tt) self-attention weights (before dropout) */
    float *X2;                     /* (B, Tt, d) attention1's output */
    double *S1;                    /* (B, Tt, d) X + X2 */
    double *mean1, *rstd1;         /* (B, Tt) its LayerNorm statistics */
    float *Y;                      /* (B, Tt, d) addnorm1's output */
    float *Q2, *concat2;           /* (B, Tt, d) attention2's trace */
    float *K2, *V2;                /* (B, Ts, d) the encoder's output projected */
    float *A2;                     /* (B, NH, Tt, Ts) cross-attention weights (before dropout) */
    float *Y2;                     /* (B, Tt, d) attention2's output */
    double *S2;                    /* (B, Tt, d) Y + Y2 */
    double *mean2, *rstd2;         /* (B, Tt) */
    float *Z;                      /* (B, Tt, d) addnorm2's output */
    float *H, *R;                  /* (B, Tt, H) dense1's output, and after the ReLU */
    float *F;                      /* (B, Tt, d) dense2's output */
    double *S3;                    /* (B, Tt, d) Z + F */
    double *mean3, *rstd3;         /* (B, Tt) */
    float *out;                    /* (B, Tt, d) addnorm3's output: the block's */
} s2s_dec_cache;

/* What a forward pass keeps, for up to Bmax pairs of up to Ts_max source
 * and Tt_max target positions. */
typedef struct s2s_cache {
    size_t Bmax, Ts_max, Tt_max; /* allocated for */
    size_t B, Ts, Tt;            /* the last forward pass's sizes */
    /* dropout streams: the index of this batch's first pair in the step's
     * batch (0 unless a step's batch is split over several caches: then
     * each part draws the dropout masks the whole batch would) */
    size_t example0;
    float *P;                             /* (max(Ts_max, Tt_max), d) the chapter's P */
    float *Xs;                            /* (B, Ts, d) the encoder's input E_0 */
    tblock_cache enc[TMODEL_MAX_LAYERS];  /* (L,) A: (B, NH, Ts, Ts) */
    float *Xt;                            /* (B, Tt, d) the decoder's input X_0 */
    s2s_dec_cache dec[TMODEL_MAX_LAYERS]; /* (L,) */
    float *logits;                        /* (B, Tt, Vt) */
    /* backward: d logits (B, Tt, Vt); the gradients of a decoder block's
     * output and input (B, Tt, d); d enc and an encoder block's input
     * gradient (B, Ts, d); a block's scratch, B·max(Ts, Tt) rows */
    double *dlogits, *dout, *din, *denc, *dsrc;
    tblock_scratch scratch;
    struct bah_cache *bah; /* --arch bahdanau: its cache (bahdanau.h), the
                            * rest unused but P, logits and dlogits */
} s2s_cache;

int s2s_cache_alloc(s2s_cache *c, const s2s_model *m, size_t Bmax, size_t Ts_max, size_t Tt_max,
                    char *err, size_t errlen);
void s2s_cache_free(s2s_cache *c);

/* The cross-attention (B, NH, Tt, Ts) of decoder block l after a forward
 * pass (bahdanau: its attention, NH = 1, l = 0). */
const float *s2s_cross(const s2s_cache *c, const s2s_model *m, size_t l);

/* The encoder's output enc (B, Ts, d) and decoder block l's output
 * (B, Tt, d) after a forward pass. */
const float *s2s_enc_out(const s2s_cache *c, const s2s_model *m);
const float *s2s_dec_out(const s2s_cache *c, size_t l);

/* Whether a batch's ids are in range: src (B, Ts) < Vs, dec_in (B, Tt)
 * < Vt, targets (B, Tt) −1 or < Vt (src, dec_in or targets may be NULL:
 * not checked). 0, or -1 with the first bad entry named in err. */
int s2s_check_ids(const s2s_model *m, const int *src, const int *dec_in, const int *targets,
                  size_t B, size_t Ts, size_t Tt, char *err, size_t errlen);

/* The forward pass: src (B, Ts) source ids, src_lens (B,) their valid
 * lengths (NULL: all Ts), dec_in (B, Tt) decoder input ids; the logits
 * (B, Tt, Vt) into c->logits, and every attention's weights in the cache
 * for the views: c->enc[l].A (B, NH, Ts, Ts), c->dec[l].A1 (B, NH, Tt, Tt),
 * c->dec[l].A2 (B, NH, Tt, Ts). drop: dropout on the attention weights
 * (NULL or p 0 in evaluation). 0, or -1 with the reason in err. */
int s2s_forward(const s2s_model *m, s2s_cache *c, const int *src, const long *src_lens,
                const int *dec_in, size_t B, size_t Ts, size_t Tt, const mha_dropout *drop,
                char *err, size_t errlen);
/* The forward pass in its two halves: s2s_encode sets c->B, c->Ts and
 * the encoder's output; s2s_decode runs the decoder on dec_in (B, Tt)
 * against it (the same src_lens). Ids are not checked here. */
int s2s_encode(const s2s_model *m, s2s_cache *c, const int *src, const long *src_lens, size_t B,
               size_t Ts, const mha_dropout *drop, char *err, size_t errlen);
int s2s_decode(const s2s_model *m, s2s_cache *c, const int *dec_in, const long *src_lens, size_t Tt,
               const mha_dropout *drop, char *err, size_t errlen);

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

/* Attention module k's dropout (encoder block l: k = l; decoder block l:
 * attention1 k = L + 2l, attention2 k = L + 2l + 1): the step's stream
 * drop jumped to position k·2^40 + example0·per (per: the module's
 * weights of one pair, NH·Nq·Nk; example0: the index of the part's first
 * pair in the step's batch), so that each module draws its own mask and a
 * batch split into parts draws what the whole batch would. Into *out, or
 * NULL without dropout. The fast path (seq2seq_fast.c) draws the same. */
const mha_dropout *s2s_module_dropout(mha_dropout *out, const mha_dropout *drop,
                                     size_t example0, size_t k, size_t per);

/* The first index of the largest of x (n,), as torch.argmax: greedy
 * decoding's next token. */
int s2s_argmax(const float *x, size_t n);

/* Greedy decoding, d2l's predict_seq2seq: src (Ts,) one source sentence
 * (ids + <eos>, padded to Ts) of src_len valid entries; from <bos>, each
 * step's argmax (the first largest logit) is fed back, until <eos> (not
 * output) or max_len tokens. out (max_len,) gets the ids, *n_out their
 * number. cross (L, NH, max_len, Ts), or NULL: the cross-attention of
 * every step, row t = the weights of the query that produced token t;
 * when the decoding stopped at <eos>, row *n_out is that step's (as
 * d2l's figures show it); later rows 0.
 *
 * Step t's decoder input is position t, P[t] added, as in training: d2l
 * runs the decoder one token at a time with the earlier positions' keys
 * and values kept (DecoderBlock's state[2]), which computes exactly what
 * this does by running the causal decoder over the prefix <bos> y_1 …
 * y_t (the same numbers, recomputed). (zh.d2l.ai's TransformerDecoder
 * adds P[0] to every step's token, because its input is one position
 * long each time; attn gives position t the P[t] it was trained with.)
 * So s2s_forward on src and dec_in = <bos> + out gives the same
 * cross-attention, and every self-attention, for the views.
 * 0, or -1 with the reason in err (ids out of range, out of memory). */
int s2s_greedy(const s2s_model *m, const int *src, long src_len, size_t Ts, int bos, int eos,
               size_t max_len, int *out, size_t *n_out, float *cross, char *err, size_t errlen);

#endif
