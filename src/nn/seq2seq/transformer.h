/* transformer.h — d2l's Transformer encoder–decoder (SPEC.md §11, --arch
 * transformer: zh.d2l.ai's EncoderDecoder(TransformerEncoder,
 * TransformerDecoder)), its forward and backward passes as naive loops,
 * and greedy decoding (d2l's predict_seq2seq): seq2seq.h's architecture
 * tfm_arch (its fast path: transformer_fast.h).
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
#ifndef ATTN_TRANSFORMER_H
#define ATTN_TRANSFORMER_H

#include <stddef.h>

#include "attention.h"
#include "encoder.h"
#include "seq2seq.h"
#include "tensor.h"

extern const s2s_arch tfm_arch;

/* One TransformerDecoderBlock's parameters. */
typedef struct tfm_dec_block {
    mha_params attention1;       /* masked self-attention, (d, d) each */
    tensor ln1_weight, ln1_bias; /* (d,) addnorm1 */
    mha_params attention2;       /* cross-attention */
    tensor ln2_weight, ln2_bias; /* (d,) addnorm2 */
    linear dense1;               /* ffn.dense1: (H, d), bias (H,) */
    linear dense2;               /* ffn.dense2: (d, H), bias (d,) */
    tensor ln3_weight, ln3_bias; /* (d,) addnorm3 */
} tfm_dec_block;

/* The model's tensors (s2s_model.net). */
typedef struct tfm_model {
    tmodel_config enc_cfg;                /* the encoder's blocks as §9's stack */
    tensor enc_embedding;                 /* (Vs, d) */
    tblock enc[TMODEL_MAX_LAYERS];        /* (L,) encoder blocks */
    tensor dec_embedding;                 /* (Vt, d) */
    tfm_dec_block dec[TMODEL_MAX_LAYERS]; /* (L,) decoder blocks */
    linear dense;                         /* (Vt, d), bias (Vt,) */
} tfm_model;

static inline tfm_model *tfm_net(const s2s_model *m)
{
    return m->net;
}

/* One decoder block's forward pass, kept for the backward pass. */
typedef struct tfm_dec_cache {
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
} tfm_dec_cache;

/* What a forward pass keeps besides seq2seq.h's s2s_cache (its net). */
typedef struct tfm_cache {
    float *P;                             /* (max(Ts_max, Tt_max), d) the chapter's P */
    float *Xs;                            /* (B, Ts, d) the encoder's input E_0 */
    tblock_cache enc[TMODEL_MAX_LAYERS];  /* (L,) A: (B, NH, Ts, Ts) */
    float *Xt;                            /* (B, Tt, d) the decoder's input X_0 */
    tfm_dec_cache dec[TMODEL_MAX_LAYERS]; /* (L,) */
    /* backward: the gradients of a decoder block's output and input
     * (B, Tt, d); d enc and an encoder block's input gradient (B, Ts, d);
     * a block's scratch, B·max(Ts, Tt) rows */
    double *dout, *din, *denc, *dsrc;
    tblock_scratch scratch;
} tfm_cache;

static inline tfm_cache *tfm_cache_of(const s2s_cache *c)
{
    return c->net;
}

/* The encoder's output enc (B, Ts, d) and decoder block l's output
 * (B, Tt, d) after a forward pass. */
const float *tfm_enc_out(const s2s_cache *c, const s2s_model *m);
const float *tfm_dec_out(const s2s_cache *c, size_t l);

/* The forward pass (s2s_forward) in its two halves: tfm_encode sets c->B,
 * c->Ts and the encoder's output; tfm_decode runs the decoder on dec_in
 * (B, Tt) against it (the same src_lens): the logits (B, Tt, Vt) into
 * c->logits, and every attention's weights in the cache for the views:
 * enc[l].A (B, NH, Ts, Ts), dec[l].A1 (B, NH, Tt, Tt), dec[l].A2
 * (B, NH, Tt, Ts). Ids are not checked here. */
int tfm_encode(const s2s_model *m, s2s_cache *c, const int *src, const long *src_lens, size_t B,
               size_t Ts, const mha_dropout *drop, char *err, size_t errlen);
int tfm_decode(const s2s_model *m, s2s_cache *c, const int *dec_in, const long *src_lens, size_t Tt,
               const mha_dropout *drop, char *err, size_t errlen);

/* Decoder block l alone, in evaluation (no dropout), as d2l's
 * DecoderBlock(X, state) is called on its own: x (B, Tt, d) its input,
 * enc (B, Ts, d) the encoder's output with src_lens (NULL: all Ts); its
 * output tfm_dec_out(c, l) (B, Tt, d). attn's attention1 is causal in
 * evaluation too (d2l's sees every position when not training). 0, or -1
 * with the reason in err. */
int tfm_dec_block_forward(const s2s_model *m, s2s_cache *c, size_t l, const float *x, size_t B, size_t Tt,
                  const float *enc, size_t Ts, const long *src_lens, char *err, size_t errlen);

/* Greedy decoding (s2s_greedy): cross (L, NH, max_len, Ts).
 *
 * Step t's decoder input is position t, P[t] added, as in training: d2l
 * runs the decoder one token at a time with the earlier positions' keys
 * and values kept (DecoderBlock's state[2]), which computes exactly what
 * this does by running the causal decoder over the prefix <bos> y_1 …
 * y_t (the same numbers, recomputed). (zh.d2l.ai's TransformerDecoder
 * adds P[0] to every step's token, because its input is one position
 * long each time; attn gives position t the P[t] it was trained with.)
 * So s2s_forward on src and dec_in = <bos> + out gives the same
 * cross-attention, and every self-attention, for the views. */
int tfm_greedy(const s2s_model *m, const int *src, long src_len, size_t Ts, int bos, int eos,
               size_t max_len, int *out, size_t *n_out, float *cross, char *err, size_t errlen);

/* The bytes s2s_cache_alloc takes for this Transformer and Bmax pairs of
 * Ts_max source and Tt_max target positions (the buffers tfm_cache_alloc
 * allocates, counted as it allocates them), plus what one mha_forward call
 * allocates for itself (additive scores: W_q q and W_k k of one head, a
 * head's slice): for --max-mem, before anything is allocated. 0, or -1
 * when the count overflows. */
int tfm_cache_bytes(const s2s_config *cfg, size_t Bmax, size_t Ts_max, size_t Tt_max,
                    size_t *bytes);

/* One attention's activations after a forward pass of the reference loops
 * (s2s_forward), for the numbers behind its weights (attn translate
 * --explain), as transformer_fast.h's tfm_fast_parts: kind S2S_HEADS_ENC
 * (the encoder's self-attention of block l: Tq = Tk = Ts), S2S_HEADS_DEC
 * (the decoder's causal self-attention: Tq = Tk = Tt), S2S_HEADS_CROSS
 * (Tq = Tt, Tk = Ts). Q (B, Tq, d), K and V (B, Tk, d) after W_q, W_k,
 * W_v; O (B, Tq, d) the heads' outputs side by side, before W_o; A the
 * weights (B, NH, Tq, Tk); mha the module's parameters (its additive
 * score's a_W_q, a_W_k, a_w_v when the model scores additively). The
 * pointers are the cache's and the model's. */
typedef struct tfm_parts {
    const float *Q, *K, *V, *O, *A;
    size_t a_cols; /* A's row length: Tk */
    const mha_params *mha;
} tfm_parts;

/* 0, or -1 when the model has no such attention. */
int tfm_attention_parts(const s2s_cache *c, const s2s_model *m, int kind, size_t l,
                        tfm_parts *out);

#endif
