/* vit.h — d2l.ai 11.8's Vision Transformer, forward and backward as naive
 * loops (one image at a time; a batch is its images, shared out among
 * threads).
 *
 * Dimensions (d2l's names where it has them):
 *   C  channels of the image (1: Fashion-MNIST is grey)
 *   S  img_size, the image's side in pixels (S × S)
 *   p  patch_size; P = (S / p)² patches, T = P + 1 tokens (<cls> first)
 *   K  = C·p·p, one patch's pixels
 *   d  num_hiddens     F mlp_num_hiddens     NH num_heads     L num_blks
 *   Q  classes (10)
 *
 * The model, as d2l writes it:
 *   E  (P, d)  = patches (P, K) · conv.weightᵀ + conv.bias
 *              (PatchEmbedding: a convolution with kernel = stride = p is
 *               a linear map of each patch's pixels, read in (c, i, j) order)
 *   X0 (T, d)  = dropout(cat(<cls>, E) + pos_embedding)
 *   each ViTBlock, pre-norm:
 *     X' = X + MHA(LN1(X))               (d2l's MultiHeadAttention, no bias,
 *                                          dropout on its attention weights)
 *     X'' = X' + dropout(dense2(dropout(GELU(dense1(LN2(X'))))))
 *   logits (Q,) = head.1(head.0(X_L[0]))  (LayerNorm, then Linear on <cls>)
 *   loss = mean over the batch of cross-entropy(logits, label)
 * GELU is the exact form x·Φ(x) = x/2 · (1 + erf(x/√2)) with attn's erf.
 *
 * Parameters are float32 in state_dict order (params.h's list, d2l's
 * names); gradients are doubles, one flat array in that order.
 */
#ifndef ATTN_VIT_H
#define ATTN_VIT_H

#include <stddef.h>

#include "attention.h"
#include "params.h"
#include "tensor.h"

typedef struct vit_config {
    size_t channels;  /* C */
    size_t img;       /* S */
    size_t patch;     /* p */
    size_t hiddens;   /* d */
    size_t ffn;       /* F */
    size_t heads;     /* NH */
    size_t layers;    /* L */
    size_t classes;   /* Q */
    double dropout;   /* emb_dropout and blk_dropout alike */
} vit_config;

typedef struct vit_block {
    tensor ln1_w, ln1_b; /* (d,) */
    mha_params att;      /* W_q, W_k, W_v, W_o (d, d), no biases */
    tensor ln2_w, ln2_b; /* (d,) */
    linear dense1;       /* (F, d), (F,) */
    linear dense2;       /* (d, F), (d,) */
} vit_block;

#define VIT_MAX_LAYERS 64

typedef struct vit_model {
    vit_config cfg;
    size_t P, T, K;         /* patches, tokens, pixels of a patch */
    tensor conv_w, conv_b;  /* (d, C, p, p), (d,) */
    tensor cls;             /* (1, 1, d) */
    tensor pos;             /* (1, T, d) */
    vit_block *blks;        /* (L,) */
    tensor head_ln_w, head_ln_b; /* (d,) */
    linear head;            /* (Q, d), (Q,) */
    tparam *params;         /* state_dict order */
    size_t nparams, total;  /* total: the gradients' count */
} vit_model;

/* The reason a configuration cannot be built ("the patch 5 does not
 * divide the image side 28", …), or NULL when it can. */
const char *vit_config_check(const vit_config *cfg, char *buf, size_t buflen);

/* A model of cfg with d2l's initial weights from seed: nn.Linear's and
 * nn.Conv2d's uniform ±1/√fan_in, <cls> zeros, pos_embedding standard
 * normal, LayerNorms 1 and 0. 0, or -1 with the reason in err. */
int vit_init(vit_model *m, const vit_config *cfg, unsigned long long seed, char *err,
             size_t errlen);
void vit_free(vit_model *m);

/* Everything one image's forward pass keeps for its backward pass
 * (allocated once per thread, reused image after image). */
typedef struct vit_work vit_work;

vit_work *vit_work_alloc(const vit_model *m);
void vit_work_free(vit_work *w);

/* Where the dropout of one image's forward pass comes from: seed (0: no
 * dropout, evaluation mode). Each site (the embedding, each block's
 * attention, GELU and MLP outputs) draws from its own stream. */
typedef struct vit_drop {
    double p;
    unsigned long long seed;
} vit_drop;

/* One image (C, S, S) in [0, 1] through the model: logits (Q,); w keeps
 * what the backward pass and the attention figures read. drop NULL (or
 * its seed 0): evaluation mode. 0, or -1 with the reason in err. */
int vit_forward(vit_work *w, float *logits, const vit_model *m, const float *image,
                const vit_drop *drop, char *err, size_t errlen);

/* Block l alone in evaluation mode on B inputs X (B, T, d) of any T ≥ 1
 * (d2l's ViTBlock on a tensor of its own, as 11.8's shape cell runs it):
 * Y (B, T, d). 0, or -1 with the reason in err. */
int vit_block_apply(float *Y, const vit_model *m, size_t l, const float *X, size_t B, size_t T,
                    char *err, size_t errlen);

/* The <cls> query's attention of block l (NH, T) from the last forward
 * pass of w (the softmax, before dropout). */
void vit_cls_attention(float *out, const vit_work *w, const vit_model *m, size_t l);
/* The attention weights of block l (NH, T, T) of the last forward pass
 * of w (before dropout). */
const float *vit_attention_weights(const vit_work *w, size_t l);
/* The attention rollout of <cls> (T,) over every block of the last
 * forward pass of w (Abnar & Zuidema 2020: the product over blocks of the
 * head-averaged (A + I)/2, each row renormalised; its row 0). out is all
 * zeros when memory runs out. */
void vit_rollout(double *out, const vit_work *w, const vit_model *m);

/* The backward pass of the last vit_forward of w, from dlogits (Q,):
 * every parameter's gradient ADDED into grads (m->total, state_dict
 * order). The same drop as the forward pass. 0, or -1 with the reason. */
int vit_backward(vit_work *w, double *grads, const double *dlogits, const vit_model *m,
                 const float *image, const vit_drop *drop, char *err, size_t errlen);

/* The fast path (vit_fast.c): the same passes over one image with float32
 * lanes for the matrix products and GELU, into the same vit_work (the
 * attention figures and the rollout read it alike); the parameters'
 * gradients are doubles as vit_backward's. Its weights are a transposed
 * copy: vit_fast_prepare after every change of m's weights (each step).
 * vit_fast_alloc returns NULL when memory runs out. */
typedef struct vit_fast vit_fast;

vit_fast *vit_fast_alloc(const vit_model *m);
void vit_fast_free(vit_fast *f);
void vit_fast_prepare(vit_fast *f, const vit_model *m);
void vit_forward_fast(vit_work *w, float *logits, const vit_model *m, const vit_fast *f,
                      const float *image, const vit_drop *drop);
void vit_backward_fast(vit_work *w, double *grads, const double *dlogits, const vit_model *m,
                       const vit_drop *drop);

/* The exact GELU and its derivative, in double. */
double vit_gelu(double x);
double vit_gelu_grad(double x);

/* The seed of image `index` of step `step` from a run's seed: each image
 * of each step its own dropout. */
unsigned long long vit_drop_seed(unsigned long long seed, unsigned long long step,
                                 unsigned long long index);

#endif
