/* vit_work.h — what one image's pass through the ViT keeps (vit.h's
 * vit_work), shared by the reference loops (vit.c) and the fast path
 * (vit_fast.c), which fill the same buffers: the attention figures and
 * the rollout read either. Private to nn/vision. */
#ifndef ATTN_VIT_WORK_H
#define ATTN_VIT_WORK_H

#include <stddef.h>

#include "vit.h"

/* What one image's forward pass keeps, block by block. */
typedef struct vit_bwork {
    double *X;       /* (T, d) the block's input (the residual stream) */
    float *N1;       /* (T, d) LN1(X) */
    double *mean1, *rstd1; /* (T,) */
    float *A;        /* (T, d) MHA(N1) */
    float *W;        /* (NH, T, T) attention weights (before dropout) */
    float *Qp, *Kp, *Vp, *concat; /* (T, d) the attention's trace */
    double *X1;      /* (T, d) X + A */
    float *N2;       /* (T, d) LN2(X1) */
    double *mean2, *rstd2; /* (T,) */
    float *H;        /* (T, F) dense1(N2) */
    float *G;        /* (T, F) dropout(GELU(H)) */
    float *M;        /* (T, d) dense2(G), before its dropout */
    /* the fast path's: what its backward pass reads again */
    float *GD;       /* (T, F) GELU'(H) */
    unsigned char *keep_att, *keep_gelu, *keep_out; /* dropout's masks, 1 kept:
                                (NH, T, T) the weights', (T, F) GELU's, (T, d) dense2's */
} vit_bwork;

struct vit_work {
    float *patches;  /* (P, K) each patch's pixels, (c, i, j) order */
    float *E;        /* (P, d) the patch embedding */
    vit_bwork *b;    /* (L,) */
    double *XL;      /* (T, d) the last block's output */
    float *cls;      /* (d,) X_L[0] as float, the head's input */
    float *hn;       /* (d,) head.0(cls) */
    unsigned char *keep0; /* (T, d) the embedding's dropout mask, 1 kept */
    double hmean, hrstd;
    /* the backward pass's gradients of the activations */
    double *dX, *dX1, *dN;   /* (T, d) */
    double *dH, *dG;         /* (T, F) */
    double *dM;              /* (T, d) */
    double *dhn, *dcls;      /* (d,) */
    double *dE;              /* (P, d) */
    /* the fast path's float scratch (vit_fast.c) */
    float *fdy;              /* (T, max(d, F)) an output gradient as floats */
    float *fdx;              /* (T, max(d, F)) an input gradient as floats */
    float *dQ, *dK, *dV;     /* (T, d) the attention's projections' gradients */
    float *dC;               /* (T, d) the gradient of concat */
    float *KT;               /* (dh, Tp) one head's keys or values, transposed;
                                Tp: T rounded up to 16, the rest zeros */
    float *row;              /* (Tp,) one row of weights' gradient, or of
                                dropout(W) */
    float *PT, *ST;          /* (T, T) one head's dropout(W)ᵀ and dSᵀ */
    void **owned;    /* every allocation, for vit_work_free */
    size_t nowned, capowned;
};

/* The pieces both paths share (vit.c). The dropout sites of one image:
 * 0 the embedding; per block l, 1 + 3l its attention weights, 2 + 3l
 * after GELU, 3 + 3l after dense2. */
unsigned long long vit_site_seed(const vit_drop *drop, size_t site);
int vit_keeps(const vit_drop *drop, size_t site, size_t i); /* element i kept */
int vit_dropping(const vit_drop *drop);                     /* dropout on */
void vit_patchify(vit_work *w, const vit_model *m, const float *image); /* w->patches */
void vit_tokens(vit_work *w, const vit_model *m, const vit_drop *drop); /* w->E to X0 */
void vit_head(vit_work *w, float *logits, const vit_model *m);          /* w->XL to logits */
/* dlogits to w->dX (T, d), the head's gradients added */
void vit_head_backward(vit_work *w, double *grads, const double *dlogits, const vit_model *m);
/* w->dX of X0 to w->dE (P, d), cls_token's and pos_embedding's added */
void vit_tokens_backward(vit_work *w, double *grads, const vit_model *m, const vit_drop *drop);

#endif
