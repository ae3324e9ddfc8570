/* train_model.h — the one-layer self-attention model attn train trains
 * (SPEC.md §9), in d2l's names, with its forward and backward passes.
 *
 * Dimensions: B batch, T positions (the padded length), V vocabulary,
 * C classes, d num_hiddens, NH num_heads, p = d / NH.
 *
 *   X      = embedding[tokens] · √d (+ P[t], the chapter's encoding)  (B, T, d)
 *   Y      = MultiHeadAttention(X, X, X, valid_lens)   (mha_forward)  (B, T, d)
 *   N      = LayerNorm(X + Y) with addnorm (eps 1e-5), else Y         (B, T, d)
 *   logits = N · head.weightᵀ + head.bias                             (B, T, C)
 *   loss   = mean over positions with a target of −log softmax(logits)[target]
 *
 * A sequence label is a target at one position (the first label_at token)
 * and none elsewhere, so both kinds of task are "targets (B, T), −1 = no
 * target": the head runs at every position and only targeted positions
 * count, as PyTorch's ignore_index.
 *
 * Parameters are float32 tensors (mha_params keeps its own); gradients are
 * one flat double array laid out parameter after parameter in state_dict
 * order (tmodel.param[i].offset).
 */
#ifndef ATTN_TRAIN_MODEL_H
#define ATTN_TRAIN_MODEL_H

#include <stddef.h>

#include "attention.h"
#include "tensor.h"

typedef struct tmodel_config {
    size_t vocab;   /* V, <pad> included */
    size_t classes; /* C */
    size_t hiddens; /* d */
    size_t heads;   /* NH, divides d */
    int posenc;     /* add the chapter's P */
    int addnorm;    /* Y = LayerNorm(X + Y) */
    int bias;       /* biases on W_q, W_k, W_v, W_o */
    int causal;     /* a query sees no later key */
    double dropout; /* on the attention weights, training only */
} tmodel_config;

#define TMODEL_MAX_PARAMS 13

typedef struct tmodel_param {
    const char *name; /* the state_dict key: "embedding.weight", "W_q.bias", … */
    tensor *t;
    size_t offset;    /* where its gradient starts in the flat array */
} tmodel_param;

typedef struct tmodel {
    tmodel_config cfg;
    tensor embedding;          /* (V, d) */
    mha_params mha;            /* W_q, W_k, W_v, W_o: (d, d), biases (d,) */
    tensor ln_weight, ln_bias; /* (d,), with addnorm */
    tensor head_weight;        /* (C, d) */
    tensor head_bias;          /* (C,) */
    size_t nparams;
    tmodel_param param[TMODEL_MAX_PARAMS]; /* state_dict order */
    size_t total;              /* number of parameters, all tensors */
} tmodel;

/* Check the configuration (sizes, heads dividing d, dropout in [0, 1)):
 * 0, or -1 with the reason in err. */
int tmodel_config_check(const tmodel_config *cfg, char *err, size_t errlen);

/* A model with zeroed parameters (tmodel_init fills them). 0 or -1. */
int tmodel_alloc(tmodel *m, const tmodel_config *cfg, char *err, size_t errlen);
/* SPEC §9's start: embedding ~ N(0, 1/d); every nn.Linear weight and bias
 * (head.bias too) uniform in ±1/sqrt(in); LayerNorm weight 1, bias 0. */
void tmodel_init(tmodel *m, unsigned long long seed);
void tmodel_free(tmodel *m);
/* The parameter with this state_dict name, or NULL. */
tmodel_param *tmodel_find(tmodel *m, const char *name);
/* Copy every parameter (same configuration). */
void tmodel_copy_params(tmodel *dst, const tmodel *src);

/* What one forward pass keeps for the backward pass, for up to Bmax
 * examples of up to Tmax positions. */
typedef struct tcache {
    size_t Bmax, Tmax, B, T;
    float *P;       /* (Tmax, d) the chapter's positional encoding */
    float *X;       /* (B, T, d) embedding·√d + P */
    float *Q, *K, *V, *concat; /* (B, T, d) mha_forward's trace */
    float *A;       /* (B, NH, T, T) attention weights (softmax, before dropout) */
    float *Y;       /* (B, T, d) attention output */
    float *N;       /* (B, T, d) LayerNorm(X + Y) with addnorm */
    double *mean, *rstd; /* (B, T) LayerNorm statistics */
    float *logits;  /* (B, T, C) */
    double *dlogits, *dN, *dY, *dX; /* backward scratch */
} tcache;

int tcache_alloc(tcache *c, const tmodel *m, size_t Bmax, size_t Tmax, char *err,
                 size_t errlen);
void tcache_free(tcache *c);

/* The layer output the head reads, (B, T, d): N with addnorm, else Y. */
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

#endif
