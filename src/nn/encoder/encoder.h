/* encoder.h — the model attn train trains (SPEC.md §9), in d2l's
 * names, with its forward and backward passes: one self-attention layer, or
 * a stack of d2l's Transformer encoder blocks.
 *
 * Dimensions: B batch, T positions (the padded length), V vocabulary,
 * C classes, d num_hiddens, NH num_heads, p = d / NH, L layers (blocks),
 * H ffn_num_hiddens (0: no FFN).
 *
 *   X      = embedding[tokens] · √d (+ P[t], the chapter's encoding)  (B, T, d)
 *            or, with a learned P (d2l.ai 11.8's pos_embedding, (1, max_len,
 *            d)), + pos_embedding[0, t]: added to the scaled embedding
 *            where the sinusoid is, unscaled like it
 *   for each block l = 0 … L−1, its input X_l (X_0 = X):
 *     Y    = MultiHeadAttention(X_l, X_l, X_l, valid_lens)  (mha_forward)  (B, T, d)
 *     N1   = LayerNorm(X_l + Y) with addnorm (eps 1e-5), else Y          (B, T, d)
 *     with an FFN (H ≥ 1):
 *     F    = dense2(ReLU(dense1(N1)))                                    (B, T, d)
 *     N2   = LayerNorm(N1 + F)                                           (B, T, d)
 *     X_{l+1} = N2 with an FFN, else N1
 *   logits = X_L · head.weightᵀ + head.bias                            (B, T, C)
 *   loss   = mean over positions with a target of −log softmax(logits)[target]
 *
 * With L ≥ 2 or an FFN, addnorm is always on: without the residual a block
 * would pass on only what its attention mixed, and the next block could no
 * longer tell which token sits where. L = 1 without an FFN is the one-layer
 * model, its parameters under the keys "W_q.weight", "addnorm.ln.weight";
 * a stack uses d2l's TransformerEncoder keys ("blks.block0.attention.W_q.
 * weight", "blks.block0.addnorm1.ln.weight", "blks.block0.ffn.dense1.
 * weight", …).
 *
 * A sequence label is a target at one position (the first label_at token)
 * and none elsewhere, so both kinds of task are "targets (B, T), −1 = no
 * target": the head runs at every position and only targeted positions
 * count, as PyTorch's ignore_index.
 *
 * A learned pos_embedding comes first in state_dict order, as PyTorch lists
 * a parameter of the module itself (nn.Parameter) before its submodules'.
 *
 * Parameters are float32 tensors (mha_params keeps its own); gradients are
 * one flat double array laid out parameter after parameter in state_dict
 * order (tmodel.param[i].offset).
 */
#ifndef ATTN_ENCODER_H
#define ATTN_ENCODER_H

#include <stddef.h>

#include "attention.h"
#include "attention_backward.h"
#include "params.h"
#include "rng.h"
#include "tensor.h"

typedef struct tmodel_config {
    size_t vocab;   /* V, <pad> included */
    size_t classes; /* C */
    size_t hiddens; /* d */
    size_t heads;   /* NH, divides d */
    int posenc;     /* add the chapter's P (the sinusoid) */
    int addnorm;    /* Y = LayerNorm(X + Y) */
    int bias;       /* biases on W_q, W_k, W_v, W_o */
    int causal;     /* a query sees no later key */
    double dropout; /* on the attention weights, training only */
    size_t layers;  /* L blocks, 1 … TMODEL_MAX_LAYERS (0 is read as 1) */
    size_t ffn;     /* H, the FFN's hidden units; 0: attention only */
    int learned;    /* add a learned pos_embedding instead of P (not with posenc) */
    size_t max_len; /* with learned: the positions pos_embedding holds (≥ 1) */
    size_t window;  /* R (odd): a query sees the R keys centred on it, or with
                     * causal ending at it (mha_masks); 0: every key. The
                     * reference loops only (encoder_fast.c has no window) */
    score_kind score; /* every head's score: SCORE_DOT (0, attn train's), or
                       * SCORE_ADDITIVE (the Transformer's --score additive;
                       * the reference loops only) */
} tmodel_config;

#define TMODEL_MAX_LAYERS 12
/* pos_embedding, embedding and head (4), and per block 8 attention, 4
 * LayerNorm, 4 FFN */
#define TMODEL_MAX_PARAMS (4 + 16 * TMODEL_MAX_LAYERS)

/* One block's parameters. */
typedef struct tblock {
    mha_params mha;              /* W_q, W_k, W_v, W_o: (d, d), biases (d,) */
    tensor ln1_weight, ln1_bias; /* (d,) addnorm1, with addnorm */
    linear dense1;               /* ffn.dense1: (H, d), bias (H,) */
    linear dense2;               /* ffn.dense2: (d, H), bias (d,) */
    tensor ln2_weight, ln2_bias; /* (d,) addnorm2, with an FFN */
} tblock;

typedef struct tmodel {
    tmodel_config cfg;
    tensor pos_embedding;      /* (1, max_len, d) with learned, else empty */
    tensor embedding;          /* (V, d) */
    tblock blk[TMODEL_MAX_LAYERS]; /* (L,) the blocks */
    tensor head_weight;        /* (C, d) */
    tensor head_bias;          /* (C,) */
    size_t nparams;
    tparam param[TMODEL_MAX_PARAMS]; /* state_dict order */
    size_t total;              /* number of parameters, all tensors */
} tmodel;

/* Check the configuration (sizes, heads dividing d, dropout in [0, 1),
 * 1 … 12 layers): 0, or -1 with the reason in err. */
int tmodel_config_check(const tmodel_config *cfg, char *err, size_t errlen);

/* Whether the model is a stack (L ≥ 2 or an FFN): d2l's TransformerEncoder
 * keys, and addnorm always on. */
int tmodel_is_stack(const tmodel_config *cfg);

/* A model with zeroed parameters (tmodel_init fills them). 0 or -1. */
int tmodel_alloc(tmodel *m, const tmodel_config *cfg, char *err, size_t errlen);
/* SPEC §9's start: embedding ~ N(0, 1/d); every nn.Linear weight and bias
 * (head.bias too) uniform in ±1/sqrt(in); LayerNorm weight 1, bias 0; a
 * learned pos_embedding ~ N(0, 1) (d2l.ai 11.8's torch.randn), drawn last,
 * so that every other weight is the same as without it for the same
 * seed. */
void tmodel_init(tmodel *m, unsigned long long seed);
void tmodel_free(tmodel *m);
/* The parameter with this state_dict name, or NULL. */
tparam *tmodel_find(tmodel *m, const char *name);
/* Copy every parameter (same configuration). */
void tmodel_copy_params(tmodel *dst, const tmodel *src);

/* What one block's forward pass keeps for the backward pass. */
typedef struct tblock_cache {
    float *Q, *K, *V, *concat; /* (B, T, d) mha_forward's trace */
    float *A;       /* (B, NH, T, T) attention weights (softmax, before dropout) */
    float *Y;       /* (B, T, d) attention output */
    double *Z1;     /* (B, T, d) X_l + Y, with addnorm */
    double *mean1, *rstd1; /* (B, T) its LayerNorm statistics */
    float *N1;      /* (B, T, d) LayerNorm(X_l + Y) */
    float *H, *R;   /* (B, T, H) dense1's output, and after the ReLU */
    float *F;       /* (B, T, d) dense2's output */
    double *Z2;     /* (B, T, d) N1 + F */
    double *mean2, *rstd2; /* (B, T) */
    float *N2;      /* (B, T, d) LayerNorm(N1 + F) */
} tblock_cache;

/* A block's backward scratch, for B·T rows: dY, dZ, dN1, dF (B, T, d) the
 * gradients of the attention's output, of a LayerNorm's input, of N1 and
 * of the FFN's output; dR, dH (B, T, H) of the ReLU's output and input. */
typedef struct tblock_scratch {
    double *dY, *dZ, *dN1, *dF;
    double *dR, *dH;
} tblock_scratch;

/* What one forward pass keeps for the backward pass, for up to Bmax
 * examples of up to Tmax positions. */
typedef struct tcache {
    size_t Bmax, Tmax, B, T;
    float *P;       /* (Tmax, d) the chapter's positional encoding */
    float *X;       /* (B, T, d) embedding·√d + P */
    tblock_cache blk[TMODEL_MAX_LAYERS]; /* (L,) */
    float *logits;  /* (B, T, C) */
    /* backward scratch: d logits (B, T, C); the gradients of a block's
     * output and input, dout and din (B, T, d); inside a block, scratch */
    double *dlogits, *dout, *din;
    tblock_scratch scratch;
} tcache;

int tcache_alloc(tcache *c, const tmodel *m, size_t Bmax, size_t Tmax, char *err,
                 size_t errlen);
void tcache_free(tcache *c);

/* What is added to the scaled embedding, (T, d) rows by position: the
 * learned pos_embedding, or sinusoid (the chapter's P) with posenc, or
 * NULL (nothing). */
const float *tmodel_positions(const tmodel *m, const float *sinusoid);

/* The output of block l (B, T, d): N2 with an FFN, N1 with addnorm, else Y. */
const float *tcache_block_out(const tcache *c, const tmodel *m, size_t l);
/* The output the head reads, (B, T, d): the last block's. */
const float *tcache_features(const tcache *c, const tmodel *m);

/* The forward pass on tokens (B, T) (vocabulary ids) with lens (B,) (NULL:
 * all T) up to the logits. drop: dropout on the attention weights (NULL or
 * p 0 in evaluation). 0, or -1 with the reason in err. */
int tmodel_forward(tmodel *m, tcache *c, const int *tokens, const long *lens, size_t B,
                   size_t T, const mha_dropout *drop, char *err, size_t errlen);

/* The summed cross-entropy over positions with a target (targets (B, T),
 * −1 none), in double; *count gets their number and *correct how many
 * have the target as the argmax (either may be NULL). */
double tmodel_loss(const tcache *c, const tmodel *m, const int *targets, size_t *count,
                   size_t *correct);

/* The backward pass of loss·scale (scale = 1/count for the mean) after
 * tmodel_forward on the same batch: grads (m->total) += d loss·scale /
 * d every parameter. 0, or -1 with the reason in err. */
int tmodel_backward(double *grads, tcache *c, const tmodel *m, const int *tokens,
                    const long *lens, const int *targets, double scale,
                    const mha_dropout *drop, char *err, size_t errlen);

/* ---- the pieces of a model, shared ----------------------------------------
 *
 * tmodel's blocks and the encoder of transformer.h's encoder–decoder are
 * the same d2l TransformerEncoderBlock; both models list their parameters
 * the same way. These are the one copy of a block's parameters, initialisation,
 * forward and backward pass: a block reads d, NH, H, addnorm and bias
 * from a tmodel_config (the model's, or the encoder's of transformer.h).
 */

/* d2l's MultiHeadAttention(d, d, d, d, NH, bias): W_q, W_k, W_v, W_o (d, d),
 * with bias their (d,) biases. 0, or -1 with the reason in err (the caller
 * frees what was allocated with mha_params_free). */
int mha_params_alloc(mha_params *a, size_t d, size_t heads, int bias, char *err, size_t errlen);
/* Additive scoring for a allocated by mha_params_alloc: d2l's
 * AdditiveAttention(num_hiddens = p) shared by the heads, no biases:
 * a_W_q, a_W_k (p, p), a_w_v (1, p); a->score = SCORE_ADDITIVE. 0 or -1
 * (mha_params_free frees them). */
int mha_params_additive(mha_params *a, char *err, size_t errlen);
void mha_params_free(mha_params *a);
/* Its parameters in state_dict order under prefix ("blks.block0.attention."):
 * W_q.weight, [W_q.bias], W_k.weight, …, W_o.weight, [W_o.bias], and with
 * additive scoring score.W_q.weight, score.W_k.weight, score.w_v.weight. */
void mha_params_list(tparam *list, size_t *n, size_t *total, mha_params *a,
                     const char *prefix);
/* Drawn in that order, each uniform in ±1/sqrt(d) (the score's ±1/sqrt(p)). */
void mha_params_init(mha_params *a, rng *r);
/* Where their gradients are in grads (laid out by list). */
void mha_params_grads(mha_grads *g, const tparam *list, size_t n, double *grads,
                      const mha_params *a);
/* The additive score's (all NULL with dot scoring). */
void mha_additive_grads_find(mha_additive_grads *g, const tparam *list, size_t n,
                             double *grads, const mha_params *a);

/* A block of cfg's shape (zeroed); -1 with the reason in err. */
int tblock_alloc(tblock *b, const tmodel_config *cfg, char *err, size_t errlen);
void tblock_free(tblock *b);
/* Block b's parameters appended in state_dict order: the attention's
 * under att ("blks.block0.attention."), addnorm1's under an1
 * ("blks.block0.addnorm1.ln."), the FFN's and addnorm2's under pre + "ffn."
 * and pre + "addnorm2.ln." (pre "blks.block0."). */
void tblock_params(tparam *list, size_t *n, size_t *total, tblock *b,
                   const tmodel_config *cfg, const char *pre, const char *att, const char *an1);
/* SPEC §9's start, drawn in state_dict order. */
void tblock_init(tblock *b, const tmodel_config *cfg, rng *r);

/* Where a block's gradients are in the flat array (NULL: absent). */
typedef struct tblock_grads {
    mha_grads mha;
    mha_additive_grads add; /* the score's, additive scoring only */
    double *dln1_weight, *dln1_bias;
    double *ddense1_weight, *ddense1_bias, *ddense2_weight, *ddense2_bias;
    double *dln2_weight, *dln2_bias;
} tblock_grads;
void tblock_grads_find(tblock_grads *g, const tparam *list, size_t n, double *grads,
                       const tblock *b);

/* a·b·c elements of elem bytes, zeroed, the size overflow-checked; on
 * failure NULL and *failed = 1 (so that a run of allocations is checked
 * once at its end). */
void *tcache_calloc(size_t a, size_t b, size_t c, size_t elem, int *failed);
/* A block's cache for BT = B·T rows of up to Tmax keys; a failure sets
 * *failed (free with tblock_cache_free either way). */
void tblock_cache_alloc(tblock_cache *b, const tmodel_config *cfg, size_t BT, size_t Tmax,
                        int *failed);
void tblock_cache_free(tblock_cache *b);
/* Scratch for BT rows of width d and FFN width H; a failure sets *failed. */
void tblock_scratch_alloc(tblock_scratch *s, size_t BT, size_t d, size_t H, int *failed);
void tblock_scratch_free(tblock_scratch *s);
/* A block's output (B, T, d): N2 with an FFN, N1 with addnorm, else Y. */
const float *tblock_out(const tblock_cache *b, const tmodel_config *cfg);

/* The block on its input x (B, T, d): attention (with mask and dropout),
 * [addnorm1, [ffn, addnorm2]], everything kept in bc. 0, or -1 with the
 * reason in err. */
int tblock_forward(tblock_cache *bc, const tblock *b, const tmodel_config *cfg, const float *x,
                   size_t B, size_t T, const mha_masks *mask, const mha_dropout *drop, char *err,
                   size_t errlen);
/* Its backward pass after tblock_forward: from dout (B, T, d), the
 * gradient of its output, every parameter's gradient += (g) and dx
 * (B, T, d) = the gradient of its input x (overwritten). */
int tblock_backward(double *dx, const tblock_grads *g, tblock_scratch *s, tblock_cache *bc,
                    const tblock *b, const tmodel_config *cfg, const double *dout,
                    const float *x, size_t B, size_t T, const mha_masks *mask,
                    const mha_dropout *drop, char *err, size_t errlen);

#endif
