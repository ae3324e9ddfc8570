/* encoder_fast.c — the model's forward and backward passes in float32 with
 * vectorisable loops (see encoder_fast.h), built from block_fast.h's
 * loops. The reference is encoder.c with attention.c and
 * attention_backward.c: same steps, same names. Every number is the same
 * on every machine (SPEC §12; block_fast.h says how). */
#include "encoder_fast.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "block_fast.h"
#include "posenc.h"


void tfast_block_weights_alloc(tfast_block_weights *bw, size_t d, size_t H, int *failed)
{
    bw->Wq = fl_zeros(d, d, 1, failed);
    bw->Wk = fl_zeros(d, d, 1, failed);
    bw->Wv = fl_zeros(d, d, 1, failed);
    bw->Wo = fl_zeros(d, d, 1, failed);
    if (H) {
        bw->W1 = fl_zeros(d, H, 1, failed);
        bw->W2 = fl_zeros(H, d, 1, failed);
    }
}

void tfast_block_weights_free(tfast_block_weights *bw)
{
    FREE_EACH(bw->Wq, bw->Wk, bw->Wv, bw->Wo, bw->W1, bw->W2);
}

void tfast_block_weights_update(tfast_block_weights *bw, const mha_params *a,
                                const linear *dense1, const linear *dense2, size_t d, size_t H)
{
    fl_transpose(bw->Wq, a->W_q.weight.data, d, d);
    fl_transpose(bw->Wk, a->W_k.weight.data, d, d);
    fl_transpose(bw->Wv, a->W_v.weight.data, d, d);
    fl_transpose(bw->Wo, a->W_o.weight.data, d, d);
    if (H) {
        fl_transpose(bw->W1, dense1->weight.data, H, d);
        fl_transpose(bw->W2, dense2->weight.data, d, H);
    }
}

int tfast_weights_alloc(tfast_weights *w, const tmodel *m)
{
    const size_t d = m->cfg.hiddens, C = m->cfg.classes, H = m->cfg.ffn;
    int failed = 0;
    memset(w, 0, sizeof *w);
    for (size_t l = 0; l < m->cfg.layers; l++)
        tfast_block_weights_alloc(&w->blk[l], d, H, &failed);
    w->head = fl_zeros(d, C, 1, &failed);
    if (failed) {
        tfast_weights_free(w);
        return -1;
    }
    return 0;
}

void tfast_weights_free(tfast_weights *w)
{
    for (size_t l = 0; l < TMODEL_MAX_LAYERS; l++)
        tfast_block_weights_free(&w->blk[l]);
    free(w->head);
    memset(w, 0, sizeof *w);
}


void tfast_weights_update(tfast_weights *w, const tmodel *m)
{
    const size_t d = m->cfg.hiddens, C = m->cfg.classes, H = m->cfg.ffn;
    for (size_t l = 0; l < m->cfg.layers; l++) {
        const tblock *b = &m->blk[l];
        tfast_block_weights_update(&w->blk[l], &b->mha, &b->dense1, &b->dense2, d, H);
    }
    fl_transpose(w->head, m->head_weight.data, C, d);
}

int tfast_cache_alloc(tfast_cache *c, const tmodel *m, size_t Bmax, size_t Tmax)
{
    const size_t d = m->cfg.hiddens, NH = m->cfg.heads, C = m->cfg.classes, H = m->cfg.ffn;
    size_t BT;
    int failed = 0;
    memset(c, 0, sizeof *c);
    if (size_mul(Bmax, Tmax, &BT))
        return -1;
    c->Bmax = Bmax;
    c->Tmax = Tmax;
    c->P = fl_zeros(Tmax, d, 1, &failed);
    c->X = fl_zeros(BT, d, 1, &failed);
    for (size_t l = 0; l < m->cfg.layers; l++) {
        tfast_block *b = &c->blk[l];
        b->Q = fl_zeros(BT, d, 1, &failed);
        b->K = fl_zeros(BT, d, 1, &failed);
        b->V = fl_zeros(BT, d, 1, &failed);
        b->O = fl_zeros(BT, d, 1, &failed);
        b->Y = fl_zeros(BT, d, 1, &failed);
        b->A = fl_zeros(BT, NH, Tmax, &failed);
        if (m->cfg.addnorm) {
            b->N = fl_zeros(BT, d, 1, &failed);
            b->xh = fl_zeros(BT, d, 1, &failed);
            b->rstd = fl_zeros(BT, 1, 1, &failed);
        }
        if (H) {
            b->H = fl_zeros(BT, H, 1, &failed);
            b->R = fl_zeros(BT, H, 1, &failed);
            b->F = fl_zeros(BT, d, 1, &failed);
            b->N2 = fl_zeros(BT, d, 1, &failed);
            b->xh2 = fl_zeros(BT, d, 1, &failed);
            b->rstd2 = fl_zeros(BT, 1, 1, &failed);
        }
    }
    c->logits = fl_zeros(BT, C, 1, &failed);
    c->dlogits = fl_zeros(BT, C, 1, &failed);
    c->dN = fl_zeros(BT, d, 1, &failed);
    c->dY = fl_zeros(BT, d, 1, &failed);
    c->dO = fl_zeros(BT, d, 1, &failed);
    c->dQ = fl_zeros(BT, d, 1, &failed);
    c->dK = fl_zeros(BT, d, 1, &failed);
    c->dV = fl_zeros(BT, d, 1, &failed);
    c->dX = fl_zeros(BT, d, 1, &failed);
    c->dF = fl_zeros(BT, d, 1, &failed);
    c->dN1 = fl_zeros(BT, d, 1, &failed);
    c->dR = fl_zeros(BT, H ? H : 1, 1, &failed);
    c->scratch = fl_heads_scratch_alloc(d, Tmax, &failed);
    if (failed) {
        tfast_cache_free(c);
        return -1;
    }
    posenc_fill(c->P, Tmax, d, 10000.0);
    return 0;
}

void tfast_cache_free(tfast_cache *c)
{
    float **p[] = {&c->P,  &c->X,  &c->logits, &c->dlogits, &c->dN, &c->dY, &c->dO,
                   &c->dQ, &c->dK, &c->dV,     &c->dX,      &c->dF, &c->dN1, &c->dR,
                   &c->scratch};
    size_t i;
    for (i = 0; i < sizeof p / sizeof *p; i++) {
        free(*p[i]);
        *p[i] = NULL;
    }
    for (size_t l = 0; l < TMODEL_MAX_LAYERS; l++) {
        tfast_block *b = &c->blk[l];
        float **q[] = {&b->Q, &b->K, &b->V,  &b->O,  &b->Y,   &b->A,  &b->N,    &b->xh,
                       &b->rstd, &b->H, &b->R, &b->F, &b->N2, &b->xh2, &b->rstd2};
        for (i = 0; i < sizeof q / sizeof *q; i++) {
            free(*q[i]);
            *q[i] = NULL;
        }
    }
}

const float *tfast_block_out(const tfast_cache *c, const tmodel *m, size_t l)
{
    const tfast_block *b = &c->blk[l];
    return m->cfg.ffn ? b->N2 : m->cfg.addnorm ? b->N : b->Y;
}

static float *grad_of(float *grads, const tmodel *m, const tensor *t)
{
    return tparam_gradf(m->param, m->nparams, grads, t);
}

/* The sizes and constants of one step, as encoder_fast.h names them. */
typedef struct step_dims {
    size_t B, T, BT, d, NH, p, C, H;
    float sqrt_d;       /* √d */
    fl_attention attn;  /* the blocks' self-attention: Tq = Tk = T */
} step_dims;

/* The fast modules of block l: its attention and FFN, their weights
 * transposed in w, their gradients' slices of grads (NULL: none). */
static fl_mha block_mha(const tblock *blk, const tfast_block_weights *w)
{
    return (fl_mha){{w->Wq, &blk->mha.W_q}, {w->Wk, &blk->mha.W_k}, {w->Wv, &blk->mha.W_v},
                    {w->Wo, &blk->mha.W_o}};
}

static fl_linear_grads lin_grads(float *grads, const tmodel *m, const linear *l)
{
    return (fl_linear_grads){grad_of(grads, m, &l->weight), grad_of(grads, m, &l->bias)};
}

static fl_mha_acts block_acts(const tfast_block *bk)
{
    return (fl_mha_acts){bk->Q, bk->K, bk->V, bk->O, bk->Y, bk->A};
}

/* 2. attention on the block's input x: Q, K, V (B, T, d), then per head
 * softmax(Q Kᵀ/√p, masked) into A (B, NH, T, T) and ·V into O (B, T, d),
 * then Y = O W_oᵀ */
static void attention_forward(tfast_cache *c, tfast_block *bk, const tblock *blk,
                              const tfast_block_weights *w, const float *x, const step_dims *s)
{
    const fl_mha mw = block_mha(blk, w);
    const fl_mha_acts acts = block_acts(bk);
    fl_mha_forward(&acts, c->scratch, x, x, &mw, &s->attn);
}

/* 4. (ffn) H (B, T, H) = N · W1 + b1, R = ReLU(H), F (B, T, d) = R · W2 + b2 */
static void ffn_forward(tfast_block *bk, const tblock *blk, const tfast_block_weights *w,
                        const step_dims *s)
{
    const fl_linear d1 = {w->W1, &blk->dense1}, d2 = {w->W2, &blk->dense2};
    fl_ffn_forward(bk->F, bk->H, bk->R, bk->N, &d1, &d2, s->BT, s->d, s->H);
}

/* 4'. ffn backward, from dF (B, T, d): d dense2, dR = dF · W2 (B, T, H),
 * dH = dR where H > 0 (in dR), d dense1, and dN += dH · W1 */
static void ffn_backward(float *grads, tfast_cache *c, const tfast_block *bk, const tblock *blk,
                         const tmodel *m, float *dN, const step_dims *s)
{
    const fl_linear d1 = {NULL, &blk->dense1}, d2 = {NULL, &blk->dense2};
    const fl_linear_grads g1 = lin_grads(grads, m, &blk->dense1),
                          g2 = lin_grads(grads, m, &blk->dense2);
    fl_ffn_backward(dN, &g1, &g2, c->dR, c->dF, bk->H, bk->R, bk->N, &d1, &d2, s->BT, s->d,
                    s->H);
}

/* 2'. attention backward, from dY (B, T, d): d W_o and dO; per head dA,
 * dV, dS, dQ, dK; then d W_q, d W_k, d W_v, and dX += dQ W_q + dK W_k +
 * dV W_v, x the block's input */
static void attention_backward(float *grads, tfast_cache *c, tfast_block *bk, const tblock *blk,
                               const tmodel *m, const float *x, float *dX, const step_dims *s)
{
    const fl_mha mw = {{NULL, &blk->mha.W_q}, {NULL, &blk->mha.W_k}, {NULL, &blk->mha.W_v},
                       {NULL, &blk->mha.W_o}};
    const fl_mha_grads g = {lin_grads(grads, m, &blk->mha.W_q), lin_grads(grads, m, &blk->mha.W_k),
                            lin_grads(grads, m, &blk->mha.W_v), lin_grads(grads, m, &blk->mha.W_o)};
    const fl_mha_scratch t = {c->dO, c->dQ, c->dK, c->dV, c->scratch};
    const fl_mha_acts acts = block_acts(bk);
    fl_mha_backward(dX, dX, &g, &t, c->dY, &acts, x, x, &mw, &s->attn);
}

/* Block l backward: dN (B, T, d) the gradient of its output, dX that of its
 * input x (overwritten). */
static void block_backward(float *grads, tfast_cache *c, const tmodel *m, size_t l,
                           const float *x, float *dN, float *dX, const step_dims *s)
{
    tfast_block *bk = &c->blk[l];
    const tblock *blk = &m->blk[l];
    const size_t bytes = s->BT * s->d * sizeof(float);
    if (s->H) {
        /* addnorm2: dZ2 into dF and dN1, then the FFN adds into dN1 */
        fl_addnorm_backward(c->dN1, c->dF, grad_of(grads, m, &blk->ln2_weight),
                            grad_of(grads, m, &blk->ln2_bias), dN, bk->xh2, bk->rstd2,
                            blk->ln2_weight.data, s->BT, s->d);
        ffn_backward(grads, c, bk, blk, m, c->dN1, s);
        dN = c->dN1;
    }
    if (m->cfg.addnorm) {
        fl_addnorm_backward(dX, c->dY, grad_of(grads, m, &blk->ln1_weight),
                            grad_of(grads, m, &blk->ln1_bias), dN, bk->xh, bk->rstd,
                            blk->ln1_weight.data, s->BT, s->d);
    } else {
        memset(dX, 0, bytes);
        memcpy(c->dY, dN, bytes); /* dY = dN */
    }
    attention_backward(grads, c, bk, blk, m, x, dX, s);
}

/* 1'. from dX (B, T, d), the gradient of X: d embedding[token] += dX · √d;
 * a learned P: d pos_embedding[0, t] += dX[b, t] for b = 0, 1, … in turn
 * (a fixed order of the sums) */
static void embed_backward(float *grads, const tmodel *m, const float *dX, const int *tokens,
                           const step_dims *s)
{
    const size_t d = s->d;
    fl_embed_backward(grad_of(grads, m, &m->embedding), dX, tokens, s->BT, d, s->sqrt_d);
    if (!m->cfg.learned)
        return;
    float *dP = grad_of(grads, m, &m->pos_embedding); /* (T, d) rows used */
    for (size_t r = 0; r < s->BT; r++) {
        float *dp = dP + (r % s->T) * d;
        const float *dx = dX + r * d;
#pragma omp simd
        for (size_t i = 0; i < d; i++)
            dp[i] += dx[i];
    }
}

double tfast_step(float *grads, tfast_cache *c, const tmodel *m, const tfast_weights *w,
                  const int *tokens, const long *lens, const int *targets, size_t B, size_t T,
                  double scale, const mha_dropout *drop, size_t *count, size_t *correct)
{
    const size_t d = m->cfg.hiddens, NH = m->cfg.heads, p = d / NH, L = m->cfg.layers;
    const int dropping = drop && drop->p > 0;
    const step_dims s = {
        .B = B,
        .T = T,
        .BT = B * T,
        .d = d,
        .NH = NH,
        .p = p,
        .C = m->cfg.classes,
        .H = m->cfg.ffn,
        .sqrt_d = (float)sqrt((double)d),
        .attn = {.B = B, .Tq = T, .Tk = T, .d = d, .NH = NH, .p = p, .lens = lens,
                 .causal = m->cfg.causal, .drop = drop,
                 .inv_sqrt_p = (float)(1.0 / sqrt((double)p)),
                 .keep_scale = dropping ? (float)(1.0 / (1.0 - drop->p)) : 1.0f},
    };
    const size_t bytes = s.BT * d * sizeof(float);
    const float *x = c->X;
    float *dN = c->dN, *dX = c->dX;
    double loss;

    /* 1. X (B, T, d) = embedding[token] · √d (+ P[t]: the sinusoid, or the
     *    learned pos_embedding[0, t]) */
    fl_embed_forward(c->X, m->embedding.data, tokens, s.BT, T, d, s.sqrt_d,
                     tmodel_positions(m, c->P));
    for (size_t l = 0; l < L; l++) {
        tfast_block *bk = &c->blk[l];
        const tblock *blk = &m->blk[l];
        attention_forward(c, bk, blk, &w->blk[l], x, &s);
        if (m->cfg.addnorm)
            fl_addnorm_forward(bk->N, bk->xh, bk->rstd, x, bk->Y, blk->ln1_weight.data,
                               blk->ln1_bias.data, s.BT, d);
        if (s.H) {
            ffn_forward(bk, blk, &w->blk[l], &s);
            fl_addnorm_forward(bk->N2, bk->xh2, bk->rstd2, bk->N, bk->F, blk->ln2_weight.data,
                               blk->ln2_bias.data, s.BT, d);
        }
        x = tfast_block_out(c, m, l);
    }
    /* 6. logits (B, T, C) = X_L · head.weightᵀ + head.bias */
    fl_linear_forward(c->logits, x, s.BT, w->head, m->head_bias.data, d, s.C);
    if (!targets)
        return 0.0;
    /* 5. the summed loss, and d logits (B, T, C) = (softmax − one-hot) · scale */
    loss = fl_cross_entropy(c->dlogits, c->logits, targets, s.BT, s.C, scale, count, correct);
    if (!grads)
        return loss;

    /* 6'. d head.weight, d head.bias, dN = d logits · head.weight */
    memset(dN, 0, bytes);
    fl_linear_backward(dN, grad_of(grads, m, &m->head_weight), grad_of(grads, m, &m->head_bias),
                       c->dlogits, x, s.BT, m->head_weight.data, d, s.C);
    /* the blocks from the top: a block's input gradient is the output
     * gradient of the block below */
    for (size_t l = L; l-- > 0;) {
        float *tmp;
        block_backward(grads, c, m, l, l ? tfast_block_out(c, m, l - 1) : c->X, dN, dX, &s);
        tmp = dN;
        dN = dX;
        dX = tmp;
    }
    embed_backward(grads, m, dN, tokens, &s);
    return loss;
}
