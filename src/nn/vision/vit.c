/* vit.c — vit.h: d2l's Vision Transformer, one image at a time, forward
 * and backward as naive loops over the layers of nn/core (linear,
 * LayerNorm, cross-entropy) and nn/attention (multi-head attention and
 * its backward pass). Activations are float32, sums and gradients double,
 * as in the encoder's reference loops. */
#include "vit.h"
#include "vit_work.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention_backward.h"
#include "checked.h"
#include "fmath.h"
#include "layers.h"
#include "rng.h"
#include "i18n.h"

double vit_gelu(double x)
{
    return 0.5 * x * (1.0 + fm_erf(x * 0.70710678118654752)); /* x/√2 */
}

double vit_gelu_grad(double x)
{
    /* d/dx x·Φ(x) = Φ(x) + x·φ(x), φ(x) = e^(−x²/2)/√(2π) */
    return 0.5 * (1.0 + fm_erf(x * 0.70710678118654752)) +
           x * fm_exp(-0.5 * x * x) * 0.39894228040143268;
}

unsigned long long vit_drop_seed(unsigned long long seed, unsigned long long step,
                                 unsigned long long index)
{
    rng r;
    rng_seed(&r, seed ^ (step * 0xd1b54a32d192ed03ULL));
    rng_seed(&r, rng_next(&r) ^ (index * 0x9e3779b97f4a7c15ULL));
    return rng_next(&r) | 1;
}

unsigned long long vit_site_seed(const vit_drop *drop, size_t site)
{
    return drop->seed + (unsigned long long)site * 0x632be59bd9b4e019ULL;
}

int vit_keeps(const vit_drop *drop, size_t site, size_t i)
{
    return rng_uniform_at(vit_site_seed(drop, site), i) >= drop->p;
}

int vit_dropping(const vit_drop *drop)
{
    return drop != NULL && drop->seed != 0 && drop->p > 0;
}

const char *vit_config_check(const vit_config *c, char *buf, size_t buflen)
{
    if (c->channels == 0 || c->img == 0 || c->patch == 0 || c->hiddens == 0 || c->ffn == 0 ||
        c->heads == 0 || c->layers == 0 || c->classes == 0) {
        snprintf(buf, buflen, "%s", _("every size of the model must be at least 1"));
        return buf;
    }
    if (c->img % c->patch != 0) {
        snprintf(buf, buflen, _("the patch %zu does not divide the image side %zu"), c->patch,
                 c->img);
        return buf;
    }
    if (c->hiddens % c->heads != 0) {
        snprintf(buf, buflen, _("the %zu heads do not divide the width %zu"), c->heads,
                 c->hiddens);
        return buf;
    }
    if (c->layers > VIT_MAX_LAYERS) {
        snprintf(buf, buflen, _("at most %d blocks"), VIT_MAX_LAYERS);
        return buf;
    }
    if (!(c->dropout >= 0 && c->dropout < 1)) {
        snprintf(buf, buflen, "%s", _("the dropout must be in [0, 1)"));
        return buf;
    }
    return NULL;
}

void vit_free(vit_model *m)
{
    tensor_free(&m->conv_w);
    tensor_free(&m->conv_b);
    tensor_free(&m->cls);
    tensor_free(&m->pos);
    if (m->blks) {
        for (size_t l = 0; l < m->cfg.layers; l++) {
            vit_block *b = &m->blks[l];
            tensor_free(&b->ln1_w);
            tensor_free(&b->ln1_b);
            linear_free(&b->att.W_q);
            linear_free(&b->att.W_k);
            linear_free(&b->att.W_v);
            linear_free(&b->att.W_o);
            tensor_free(&b->ln2_w);
            tensor_free(&b->ln2_b);
            linear_free(&b->dense1);
            linear_free(&b->dense2);
        }
        free(m->blks);
    }
    tensor_free(&m->head_ln_w);
    tensor_free(&m->head_ln_b);
    linear_free(&m->head);
    free(m->params);
    memset(m, 0, sizeof *m);
}

/* Every tensor of m at m->cfg's sizes (zeros). */
static int vit_alloc(vit_model *m, char *err, size_t errlen)
{
    const vit_config *cfg = &m->cfg;
    const size_t d = cfg->hiddens, F = cfg->ffn, Q = cfg->classes, p = cfg->patch;
    size_t conv_shape[4] = {d, cfg->channels, p, p}, cls_shape[3] = {1, 1, d},
           pos_shape[3] = {1, m->T, d};
    int bad = tensor_alloc(&m->conv_w, 4, conv_shape, err, errlen) ||
              tensor_alloc2(&m->conv_b, d, 0, err, errlen) ||
              tensor_alloc(&m->cls, 3, cls_shape, err, errlen) ||
              tensor_alloc(&m->pos, 3, pos_shape, err, errlen);
    for (size_t l = 0; l < cfg->layers && !bad; l++) {
        vit_block *b = &m->blks[l];
        b->att.num_heads = cfg->heads;
        b->att.num_hiddens = d;
        b->att.score = SCORE_DOT;
        bad = tensor_alloc2(&b->ln1_w, d, 0, err, errlen) ||
              tensor_alloc2(&b->ln1_b, d, 0, err, errlen) ||
              tensor_alloc2(&b->att.W_q.weight, d, d, err, errlen) ||
              tensor_alloc2(&b->att.W_k.weight, d, d, err, errlen) ||
              tensor_alloc2(&b->att.W_v.weight, d, d, err, errlen) ||
              tensor_alloc2(&b->att.W_o.weight, d, d, err, errlen) ||
              tensor_alloc2(&b->ln2_w, d, 0, err, errlen) ||
              tensor_alloc2(&b->ln2_b, d, 0, err, errlen) ||
              tensor_alloc2(&b->dense1.weight, F, d, err, errlen) ||
              tensor_alloc2(&b->dense1.bias, F, 0, err, errlen) ||
              tensor_alloc2(&b->dense2.weight, d, F, err, errlen) ||
              tensor_alloc2(&b->dense2.bias, d, 0, err, errlen);
    }
    bad = bad || tensor_alloc2(&m->head_ln_w, d, 0, err, errlen) ||
          tensor_alloc2(&m->head_ln_b, d, 0, err, errlen) ||
          tensor_alloc2(&m->head.weight, Q, d, err, errlen) ||
          tensor_alloc2(&m->head.bias, Q, 0, err, errlen);
    return bad ? -1 : 0;
}

/* The parameters in the state_dict's order. */
static void vit_list(vit_model *m)
{
    const vit_config *cfg = &m->cfg;
    /* the state_dict's order: a module's own parameters, then its
     * children's (ViT: cls_token, pos_embedding, then patch_embedding …) */
    tparam *L = m->params;
    size_t *n = &m->nparams, *tot = &m->total;
    tparam_add(L, n, tot, "", "cls_token", &m->cls);
    tparam_add(L, n, tot, "", "pos_embedding", &m->pos);
    tparam_add(L, n, tot, "patch_embedding.conv.", "weight", &m->conv_w);
    tparam_add(L, n, tot, "patch_embedding.conv.", "bias", &m->conv_b);
    for (size_t l = 0; l < cfg->layers; l++) {
        vit_block *b = &m->blks[l];
        char pre[48];
        snprintf(pre, sizeof pre, "blks.%zu.", l);
        char att[64], mlp[64];
        snprintf(att, sizeof att, "%sattention.", pre);
        snprintf(mlp, sizeof mlp, "%smlp.", pre);
        tparam_add(L, n, tot, pre, "ln1.weight", &b->ln1_w);
        tparam_add(L, n, tot, pre, "ln1.bias", &b->ln1_b);
        tparam_add(L, n, tot, att, "W_q.weight", &b->att.W_q.weight);
        tparam_add(L, n, tot, att, "W_k.weight", &b->att.W_k.weight);
        tparam_add(L, n, tot, att, "W_v.weight", &b->att.W_v.weight);
        tparam_add(L, n, tot, att, "W_o.weight", &b->att.W_o.weight);
        tparam_add(L, n, tot, pre, "ln2.weight", &b->ln2_w);
        tparam_add(L, n, tot, pre, "ln2.bias", &b->ln2_b);
        tparam_add(L, n, tot, mlp, "dense1.weight", &b->dense1.weight);
        tparam_add(L, n, tot, mlp, "dense1.bias", &b->dense1.bias);
        tparam_add(L, n, tot, mlp, "dense2.weight", &b->dense2.weight);
        tparam_add(L, n, tot, mlp, "dense2.bias", &b->dense2.bias);
    }
    tparam_add(L, n, tot, "head.0.", "weight", &m->head_ln_w);
    tparam_add(L, n, tot, "head.0.", "bias", &m->head_ln_b);
    tparam_add(L, n, tot, "head.1.", "weight", &m->head.weight);
    tparam_add(L, n, tot, "head.1.", "bias", &m->head.bias);

}

/* d2l's initial weights from seed, in the order the modules are built. */
static void vit_start(vit_model *m, unsigned long long seed)
{
    const vit_config *cfg = &m->cfg;
    const size_t d = cfg->hiddens, F = cfg->ffn;
    rng r;
    rng_seed(&r, seed);
    tparam_uniform(&m->conv_w, m->K, &r);
    tparam_uniform(&m->conv_b, m->K, &r);
    for (size_t i = 0; i < m->pos.size; i++)
        m->pos.data[i] = (float)rng_normal(&r);
    for (size_t l = 0; l < cfg->layers; l++) {
        vit_block *b = &m->blks[l];
        tparam_layernorm(&b->ln1_w, &b->ln1_b);
        tparam_uniform(&b->att.W_q.weight, d, &r);
        tparam_uniform(&b->att.W_k.weight, d, &r);
        tparam_uniform(&b->att.W_v.weight, d, &r);
        tparam_uniform(&b->att.W_o.weight, d, &r);
        tparam_layernorm(&b->ln2_w, &b->ln2_b);
        tparam_uniform(&b->dense1.weight, d, &r);
        tparam_uniform(&b->dense1.bias, d, &r);
        tparam_uniform(&b->dense2.weight, F, &r);
        tparam_uniform(&b->dense2.bias, F, &r);
    }
    tparam_layernorm(&m->head_ln_w, &m->head_ln_b);
    tparam_uniform(&m->head.weight, d, &r);
    tparam_uniform(&m->head.bias, d, &r);
}

int vit_init(vit_model *m, const vit_config *cfg, unsigned long long seed, char *err,
             size_t errlen)
{
    char why[160];
    memset(m, 0, sizeof *m);
    if (vit_config_check(cfg, why, sizeof why)) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    const size_t side = cfg->img / cfg->patch;
    m->cfg = *cfg;
    m->P = side * side;
    m->T = m->P + 1;
    m->K = cfg->channels * cfg->patch * cfg->patch;
    m->blks = calloc(cfg->layers, sizeof *m->blks);
    /* cls_token, pos_embedding, the conv's two, 12 a block, the head's 4 */
    m->params = calloc(4 + 12 * cfg->layers + 4, sizeof *m->params);
    if (m->blks == NULL || m->params == NULL) {
        vit_free(m);
        snprintf(err, errlen, "%s", _("out of memory for the model"));
        return -1;
    }
    if (vit_alloc(m, err, errlen) != 0) {
        vit_free(m);
        return -1;
    }
    vit_list(m);
    vit_start(m, seed);
    return 0;
}

static void *w_take(vit_work *w, size_t count, size_t elem, int *failed)
{
    size_t bytes;
    void *p = NULL;
    if (*failed || size_mul(count ? count : 1, elem, &bytes) ||
        (p = calloc(1, bytes)) == NULL || w->nowned == w->capowned) {
        free(p);
        *failed = 1;
        return NULL;
    }
    w->owned[w->nowned++] = p;
    return p;
}

void vit_work_free(vit_work *w)
{
    if (w == NULL)
        return;
    for (size_t i = 0; i < w->nowned; i++)
        free(w->owned[i]);
    free(w->owned);
    free(w);
}

/* One block's forward tensors and dropout masks (vit_bwork), taken from w's
 * list: T tokens of width d, NH heads, F the MLP's width. */
static void vit_bwork_take(vit_work *w, vit_bwork *b, size_t T, size_t d, size_t F, size_t NH,
                           int *failed)
{
    const size_t Td = T * d, TF = T * F;
    b->X = w_take(w, Td, sizeof(double), failed);
    b->N1 = w_take(w, Td, sizeof(float), failed);
    b->mean1 = w_take(w, T, sizeof(double), failed);
    b->rstd1 = w_take(w, T, sizeof(double), failed);
    b->A = w_take(w, Td, sizeof(float), failed);
    b->W = w_take(w, NH * T * T, sizeof(float), failed);
    b->Qp = w_take(w, Td, sizeof(float), failed);
    b->Kp = w_take(w, Td, sizeof(float), failed);
    b->Vp = w_take(w, Td, sizeof(float), failed);
    b->concat = w_take(w, Td, sizeof(float), failed);
    b->X1 = w_take(w, Td, sizeof(double), failed);
    b->N2 = w_take(w, Td, sizeof(float), failed);
    b->mean2 = w_take(w, T, sizeof(double), failed);
    b->rstd2 = w_take(w, T, sizeof(double), failed);
    b->H = w_take(w, TF, sizeof(float), failed);
    b->G = w_take(w, TF, sizeof(float), failed);
    b->M = w_take(w, Td, sizeof(float), failed);
    b->GD = w_take(w, TF, sizeof(float), failed);
    b->keep_att = w_take(w, NH * T * T, 1, failed);
    b->keep_gelu = w_take(w, TF, 1, failed);
    b->keep_out = w_take(w, Td, 1, failed);
}

vit_work *vit_work_alloc(const vit_model *m)
{
    const size_t T = m->T, d = m->cfg.hiddens, F = m->cfg.ffn, NH = m->cfg.heads,
                 L = m->cfg.layers, P = m->P, K = m->K;
    vit_work *w = calloc(1, sizeof *w);
    int failed = 0;
    if (w == NULL)
        return NULL;
    w->capowned = 48 + 24 * L;
    w->owned = calloc(w->capowned, sizeof *w->owned);
    if (w->owned == NULL) {
        free(w);
        return NULL;
    }
    const size_t Td = T * d, TF = T * F; /* small: vit_init allocated larger */
    w->patches = w_take(w, P * K, sizeof(float), &failed);
    w->E = w_take(w, P * d, sizeof(float), &failed);
    w->b = w_take(w, L, sizeof(vit_bwork), &failed);
    for (size_t l = 0; l < L && !failed; l++)
        vit_bwork_take(w, &w->b[l], T, d, F, NH, &failed);
    w->keep0 = w_take(w, Td, 1, &failed);
    w->XL = w_take(w, Td, sizeof(double), &failed);
    w->cls = w_take(w, d, sizeof(float), &failed);
    w->hn = w_take(w, d, sizeof(float), &failed);
    w->dX = w_take(w, Td, sizeof(double), &failed);
    w->dX1 = w_take(w, Td, sizeof(double), &failed);
    w->dN = w_take(w, Td, sizeof(double), &failed);
    w->dH = w_take(w, TF, sizeof(double), &failed);
    w->dG = w_take(w, TF, sizeof(double), &failed);
    w->dM = w_take(w, Td, sizeof(double), &failed);
    w->dhn = w_take(w, d, sizeof(double), &failed);
    w->dcls = w_take(w, d, sizeof(double), &failed);
    w->dE = w_take(w, P * d, sizeof(double), &failed);
    const size_t wide = T * (F > d ? F : d); /* ≥ P·d: P < T */
    w->fdy = w_take(w, wide, sizeof(float), &failed);
    w->fdx = w_take(w, wide, sizeof(float), &failed);
    w->dQ = w_take(w, Td, sizeof(float), &failed);
    w->dK = w_take(w, Td, sizeof(float), &failed);
    w->dV = w_take(w, Td, sizeof(float), &failed);
    w->dC = w_take(w, Td, sizeof(float), &failed);
    const size_t Tp = (T + 15) / 16 * 16; /* T padded to whole lanes */
    w->KT = w_take(w, d * Tp, sizeof(float), &failed);
    w->row = w_take(w, Tp, sizeof(float), &failed);
    w->PT = w_take(w, T * T, sizeof(float), &failed);
    w->ST = w_take(w, T * T, sizeof(float), &failed);
    if (failed) {
        vit_work_free(w);
        return NULL;
    }
    return w;
}

/* A tensor's data seen as the matrix (r, c), for linear_forward's view of
 * the convolution's weight (d, C, p, p) as (d, K). */
static linear linear_view(const tensor *weight, const tensor *bias, size_t r, size_t c)
{
    linear v;
    memset(&v, 0, sizeof v);
    v.weight.data = weight->data;
    v.weight.ndim = 2;
    v.weight.shape[0] = r;
    v.weight.shape[1] = c;
    v.weight.size = r * c;
    if (bias) {
        v.bias.data = bias->data;
        v.bias.ndim = 1;
        v.bias.shape[0] = r;
        v.bias.size = r;
    }
    return v;
}

/* Block l of one image: its input w->b[l].X to the next block's input
 * (or w->XL after the last). */
static int vit_block_forward(vit_work *w, const vit_model *m, size_t l, const vit_drop *drop,
                             char *err, size_t errlen)
{
    const size_t T = m->T, d = m->cfg.hiddens, F = m->cfg.ffn;
    const int dr = vit_dropping(drop);
    const double keep_scale = dr ? 1.0 / (1.0 - drop->p) : 1.0;
    const vit_block *blk = &m->blks[l];
    vit_bwork *b = &w->b[l];
    /* N1 = LN1(X); A = MHA(N1, N1, N1) */
    layernorm_forward(b->N1, b->mean1, b->rstd1, b->X, blk->ln1_w.data, blk->ln1_b.data, T,
                      d);
    mha_trace tr = {0};
    tr.Q = b->Qp;
    tr.K = b->Kp;
    tr.V = b->Vp;
    tr.concat = b->concat;
    mha_masks nomask = {NULL, 0, 0, 0};
    mha_dropout ad = {dr ? drop->p : 0.0, dr ? vit_site_seed(drop, 1 + 3 * l) : 0};
    if (mha_forward(b->A, b->W, &tr, b->N1, b->N1, b->N1, 1, T, T, &blk->att, &nomask, &ad,
                    err, errlen) != 0)
        return -1;
    /* X1 = X + A (the stream stays float32 as PyTorch's) */
    for (size_t i = 0; i < T * d; i++)
        b->X1[i] = (float)(b->X[i] + b->A[i]);
    /* N2 = LN2(X1); H = dense1(N2); G = dropout(GELU(H)) */
    layernorm_forward(b->N2, b->mean2, b->rstd2, b->X1, blk->ln2_w.data, blk->ln2_b.data, T,
                      d);
    linear_forward(b->H, b->N2, T, &blk->dense1);
    for (size_t i = 0; i < T * F; i++) {
        float g = (float)vit_gelu(b->H[i]);
        b->G[i] = dr ? (vit_keeps(drop, 2 + 3 * l, i) ? (float)(g * keep_scale) : 0.0f) : g;
    }
    /* M = dense2(G); X' = X1 + dropout(M) */
    linear_forward(b->M, b->G, T, &blk->dense2);
    double *next = l + 1 < m->cfg.layers ? w->b[l + 1].X : w->XL;
    for (size_t i = 0; i < T * d; i++) {
        double mv = dr ? (vit_keeps(drop, 3 + 3 * l, i) ? (float)(b->M[i] * keep_scale) : 0.0)
                       : b->M[i];
        next[i] = (float)(b->X1[i] + mv);
    }
    return 0;
}

void vit_patchify(vit_work *w, const vit_model *m, const float *image)
{
    const size_t C = m->cfg.channels, S = m->cfg.img, p = m->cfg.patch, side = S / p;
    const size_t K = m->K;
    /* the patches (P, K): patch (a, b) is rows a·p …, columns b·p …;
     * its pixels in the convolution weight's (c, i, j) order */
    for (size_t a = 0; a < side; a++)
        for (size_t b = 0; b < side; b++) {
            float *row = w->patches + (a * side + b) * K; /* (K,) */
            for (size_t c = 0; c < C; c++)
                for (size_t i = 0; i < p; i++)
                    for (size_t j = 0; j < p; j++)
                        row[(c * p + i) * p + j] = image[(c * S + a * p + i) * S + b * p + j];
        }
}

void vit_tokens(vit_work *w, const vit_model *m, const vit_drop *drop)
{
    const size_t T = m->T, d = m->cfg.hiddens;
    const int dr = vit_dropping(drop);
    const double keep_scale = dr ? 1.0 / (1.0 - drop->p) : 1.0;
    /* X0 (T, d) = dropout(cat(<cls>, E) + pos); the mask kept for the
     * backward pass (keep0[i] = vit_keeps(drop, 0, i)) */
    double *X0 = w->b[0].X;
    if (dr)
        rng_keep_mask(w->keep0, vit_site_seed(drop, 0), T * d, drop->p);
    for (size_t t = 0; t < T; t++)
        for (size_t k = 0; k < d; k++) {
            float tok = t == 0 ? m->cls.data[k] : w->E[(t - 1) * d + k];
            float v = (float)((double)tok + m->pos.data[t * d + k]);
            X0[t * d + k] = dr ? (w->keep0[t * d + k] ? (float)(v * keep_scale) : 0.0) : v;
        }
}

void vit_head(vit_work *w, float *logits, const vit_model *m)
{
    /* logits = head.1(head.0(X_L[0])) */
    layernorm_forward(w->hn, &w->hmean, &w->hrstd, w->XL, m->head_ln_w.data, m->head_ln_b.data,
                      1, m->cfg.hiddens);
    linear_forward(logits, w->hn, 1, &m->head);
}

int vit_forward(vit_work *w, float *logits, const vit_model *m, const float *image,
                const vit_drop *drop, char *err, size_t errlen)
{
    const size_t P = m->P, K = m->K, d = m->cfg.hiddens;
    /* 1. the patches (P, K) */
    vit_patchify(w, m, image);
    /* 2. E (P, d) = patches · conv.weightᵀ + conv.bias */
    linear conv = linear_view(&m->conv_w, &m->conv_b, d, K);
    linear_forward(w->E, w->patches, P, &conv);
    /* 3. X0 (T, d) = dropout(cat(<cls>, E) + pos) */
    vit_tokens(w, m, drop);
    /* 4. the blocks */
    for (size_t l = 0; l < m->cfg.layers; l++)
        if (vit_block_forward(w, m, l, drop, err, errlen) != 0)
            return -1;
    /* 5. the head on <cls> */
    vit_head(w, logits, m);
    return 0;
}

int vit_block_apply(float *Y, const vit_model *m, size_t l, const float *X, size_t B, size_t T,
                    char *err, size_t errlen)
{
    const size_t d = m->cfg.hiddens;
    /* the model seen with T tokens (its weights shared): block l's
       buffers, and its output, sized for them */
    vit_model at = *m;
    at.T = T;
    at.P = T - 1;
    vit_work *w = T >= 1 ? vit_work_alloc(&at) : NULL;
    if (w == NULL) {
        snprintf(err, errlen, "%s", _("out of memory for the block's buffers"));
        return -1;
    }
    int rc = 0;
    for (size_t b = 0; b < B && rc == 0; b++) {
        double *in = w->b[l].X; /* (T, d) */
        for (size_t i = 0; i < T * d; i++)
            in[i] = X[b * T * d + i];
        rc = vit_block_forward(w, &at, l, NULL, err, errlen);
        const double *out = l + 1 < m->cfg.layers ? w->b[l + 1].X : w->XL;
        for (size_t i = 0; i < T * d && rc == 0; i++)
            Y[b * T * d + i] = (float)out[i];
    }
    vit_work_free(w);
    return rc;
}

void vit_cls_attention(float *out, const vit_work *w, const vit_model *m, size_t l)
{
    const size_t T = m->T, NH = m->cfg.heads;
    /* weights (NH, T, T): the <cls> query is row 0 of each head */
    for (size_t h = 0; h < NH; h++)
        memcpy(out + h * T, w->b[l].W + h * T * T, T * sizeof(float));
}

const float *vit_attention_weights(const vit_work *w, size_t l)
{
    return w->b[l].W;
}

void vit_rollout(double *out, const vit_work *w, const vit_model *m)
{
    const size_t T = m->T, NH = m->cfg.heads;
    /* The rollout is R = Ã_L · … · Ã_1, Ã_l = rows-renormalised
     * (mean_h A_l,h + I) / 2; only its <cls> row is wanted:
     * v = e_0ᵀ, then v ← v · Ã_l from the last block down. */
    for (size_t i = 0; i < T; i++)
        out[i] = 0.0;
    double *v = calloc(T, sizeof(double)), *nv = calloc(T, sizeof(double));
    if (v == NULL || nv == NULL) {
        free(v);
        free(nv);
        return;
    }
    v[0] = 1.0;
    for (size_t l = m->cfg.layers; l-- > 0;) {
        const float *W = w->b[l].W; /* (NH, T, T) */
        for (size_t j = 0; j < T; j++)
            nv[j] = 0.0;
        for (size_t i = 0; i < T; i++) {
            if (v[i] == 0.0)
                continue;
            /* row i of (mean_h A + I)/2, renormalised (its sum is 1 already:
             * each A_h row sums to 1) */
            double rowsum = 0.0;
            for (size_t j = 0; j < T; j++) {
                double a = 0.0;
                for (size_t h = 0; h < NH; h++)
                    a += W[(h * T + i) * T + j];
                rowsum += (a / (double)NH + (i == j)) / 2.0;
            }
            for (size_t j = 0; j < T; j++) {
                double a = 0.0;
                for (size_t h = 0; h < NH; h++)
                    a += W[(h * T + i) * T + j];
                nv[j] += v[i] * ((a / (double)NH + (i == j)) / 2.0) / rowsum;
            }
        }
        memcpy(v, nv, T * sizeof(double));
    }
    memcpy(out, v, T * sizeof(double));
    free(v);
    free(nv);
}

/* Block l backwards: w->dX, the gradient of its output, becomes the
 * gradient of its input; its parameters' gradients added into grads. */
static int vit_block_backward(vit_work *w, double *grads, const vit_model *m, size_t l,
                              const vit_drop *drop, char *err, size_t errlen)
{
    const size_t T = m->T, d = m->cfg.hiddens, F = m->cfg.ffn;
    const int dr = vit_dropping(drop);
    const double keep_scale = dr ? 1.0 / (1.0 - drop->p) : 1.0;
    const tparam *L = m->params;
    const size_t n = m->nparams;
    double *g = grads, *dX = w->dX;
#define GRAD(t) tparam_grad(L, n, g, (t))
    const vit_block *blk = &m->blks[l];
    vit_bwork *b = &w->b[l];
    double *dX1 = w->dX1; /* (T, d) */
    /* X' = X1 + dropout(M): dX1 = dX; dM = dX ⊙ mask · scale */
    for (size_t i = 0; i < T * d; i++) {
        dX1[i] = dX[i];
        w->dM[i] = dr ? (vit_keeps(drop, 3 + 3 * l, i) ? dX[i] * keep_scale : 0.0) : dX[i];
    }
    /* M = G · dense2ᵀ + b: dG (T, F) */
    memset(w->dG, 0, T * F * sizeof(double));
    linear_backward(w->dG, GRAD(&blk->dense2.weight), GRAD(&blk->dense2.bias), w->dM, b->G,
                    T, &blk->dense2);
    /* G = dropout(GELU(H)): dH = dG ⊙ mask · scale · GELU'(H) */
    for (size_t i = 0; i < T * F; i++) {
        double gi = dr ? (vit_keeps(drop, 2 + 3 * l, i) ? w->dG[i] * keep_scale : 0.0) : w->dG[i];
        w->dH[i] = gi * vit_gelu_grad(b->H[i]);
    }
    /* H = N2 · dense1ᵀ + b: dN (T, d) */
    memset(w->dN, 0, T * d * sizeof(double));
    linear_backward(w->dN, GRAD(&blk->dense1.weight), GRAD(&blk->dense1.bias), w->dH, b->N2,
                    T, &blk->dense1);
    /* N2 = LN2(X1): dX1 += … */
    layernorm_backward(dX1, GRAD(&blk->ln2_w), GRAD(&blk->ln2_b), w->dN, b->X1,
                       blk->ln2_w.data, b->mean2, b->rstd2, T, d);
    /* X1 = X + A: dX = dX1, dA = dX1 */
    for (size_t i = 0; i < T * d; i++)
        dX[i] = dX1[i];
    /* A = MHA(N1, N1, N1): dN (T, d) once for queries, keys and values */
    memset(w->dN, 0, T * d * sizeof(double));
    mha_grads mg = {GRAD(&blk->att.W_q.weight), NULL, GRAD(&blk->att.W_k.weight), NULL,
                    GRAD(&blk->att.W_v.weight), NULL, GRAD(&blk->att.W_o.weight), NULL};
    mha_trace tr = {0};
    tr.Q = b->Qp;
    tr.K = b->Kp;
    tr.V = b->Vp;
    tr.concat = b->concat;
    mha_masks nomask = {NULL, 0, 0, 0};
    mha_dropout ad = {dr ? drop->p : 0.0, dr ? vit_site_seed(drop, 1 + 3 * l) : 0};
    if (mha_backward(w->dN, w->dN, w->dN, &mg, dX1, b->W, &tr, b->N1, b->N1, b->N1, 1, T, T,
                     &blk->att, &nomask, &ad, err, errlen) != 0)
        return -1;
    /* N1 = LN1(X): dX += … */
    layernorm_backward(dX, GRAD(&blk->ln1_w), GRAD(&blk->ln1_b), w->dN, b->X,
                       blk->ln1_w.data, b->mean1, b->rstd1, T, d);
#undef GRAD
    return 0;
}

void vit_head_backward(vit_work *w, double *grads, const double *dlogits, const vit_model *m)
{
    const size_t T = m->T, d = m->cfg.hiddens;
    const tparam *L = m->params;
    const size_t n = m->nparams;
    double *g = grads;
#define GRAD(t) tparam_grad(L, n, g, (t))
    /* dhn (d,) from dlogits (Q,); dcls (d,) through LayerNorm */
    memset(w->dhn, 0, d * sizeof(double));
    memset(w->dcls, 0, d * sizeof(double));
    linear_backward(w->dhn, GRAD(&m->head.weight), GRAD(&m->head.bias), dlogits, w->hn, 1,
                    &m->head);
    layernorm_backward(w->dcls, GRAD(&m->head_ln_w), GRAD(&m->head_ln_b), w->dhn, w->XL,
                       m->head_ln_w.data, &w->hmean, &w->hrstd, 1, d);
    /* dX (T, d): only <cls>'s row reaches the head */
    double *dX = w->dX;
    memset(dX, 0, T * d * sizeof(double));
    memcpy(dX, w->dcls, d * sizeof(double));
#undef GRAD
}

void vit_tokens_backward(vit_work *w, double *grads, const vit_model *m, const vit_drop *drop)
{
    const size_t T = m->T, d = m->cfg.hiddens;
    const int dr = vit_dropping(drop);
    const double keep_scale = dr ? 1.0 / (1.0 - drop->p) : 1.0;
    const tparam *L = m->params;
    const size_t n = m->nparams;
    double *g = grads, *dX = w->dX;
#define GRAD(t) tparam_grad(L, n, g, (t))
    /* X0 = dropout(cat(<cls>, E) + pos): dpos (T, d), dcls (d,), dE (P, d) */
    double *dpos = GRAD(&m->pos), *dclsp = GRAD(&m->cls);
    for (size_t t = 0; t < T; t++)
        for (size_t k = 0; k < d; k++) {
            double gi = dX[t * d + k];
            if (dr) /* the forward pass's mask */
                gi = w->keep0[t * d + k] ? gi * keep_scale : 0.0;
            dpos[t * d + k] += gi;
            if (t == 0)
                dclsp[k] += gi;
            else
                w->dE[(t - 1) * d + k] = gi;
        }
#undef GRAD
}

int vit_backward(vit_work *w, double *grads, const double *dlogits, const vit_model *m,
                 const float *image, const vit_drop *drop, char *err, size_t errlen)
{
    const size_t P = m->P, K = m->K, d = m->cfg.hiddens;
    const tparam *L = m->params;
    const size_t n = m->nparams;
    double *g = grads;
    (void)image;
#define GRAD(t) tparam_grad(L, n, g, (t))
    /* 5. the head: dX (T, d) */
    vit_head_backward(w, grads, dlogits, m);
    /* 4. the blocks, last first; dX holds the gradient of the block's output */
    for (size_t l = m->cfg.layers; l-- > 0;)
        if (vit_block_backward(w, grads, m, l, drop, err, errlen) != 0)
            return -1;
    /* 3. the tokens: dE (P, d) */
    vit_tokens_backward(w, grads, m, drop);
    /* 2. E = patches · conv.weightᵀ + conv.bias */
    linear conv = linear_view(&m->conv_w, &m->conv_b, d, K);
    linear_backward(NULL, GRAD(&m->conv_w), GRAD(&m->conv_b), w->dE, w->patches, P, &conv);
#undef GRAD
    return 0;
}
