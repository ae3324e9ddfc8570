/* transformer_fast.c — the Transformer encoder–decoder's forward and
 * backward passes in float32 (see transformer_fast.h), from block_fast.h's
 * modules, and its table of seq2seq_fast.h's operations, tfm_fast_ops.
 * The reference is transformer.c: same steps, same names. */
#include "transformer_fast.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "posenc.h"

/* ---- weights ----------------------------------------------------------- */

static void tfm_fast_weights_free(s2s_fast_weights *fw);

static int tfm_fast_weights_alloc(s2s_fast_weights *fw, const s2s_model *m)
{
    const size_t d = m->cfg.hiddens, H = m->cfg.ffn, L = m->cfg.layers;
    tfm_fast_weights *w = fw->net = calloc(1, sizeof *w);
    int failed = !w;
    for (size_t l = 0; w && l < L; l++) {
        tfast_block_weights_alloc(&w->enc[l], d, H, &failed);
        tfast_block_weights_alloc(&w->dec[l], d, H, &failed);
        for (int i = 0; i < 4; i++)
            w->cross[l][i] = fl_zeros(d, d, 1, &failed);
    }
    if (w)
        w->dense = fl_zeros(d, m->cfg.tgt_vocab, 1, &failed);
    if (failed) {
        tfm_fast_weights_free(fw);
        return -1;
    }
    return 0;
}
static void tfm_fast_weights_free(s2s_fast_weights *fw)
{
    tfm_fast_weights *w = fw->net;
    if (!w)
        return;
    for (size_t l = 0; l < TMODEL_MAX_LAYERS; l++) {
        tfast_block_weights_free(&w->enc[l]);
        tfast_block_weights_free(&w->dec[l]);
        for (int i = 0; i < 4; i++)
            free(w->cross[l][i]);
    }
    free(w->dense);
    free(w);
    fw->net = NULL;
}

/* dst's four attention weights transposed from m */
static void mha_weights_update(float *Wq, float *Wk, float *Wv, float *Wo, const mha_params *m,
                               size_t d)
{
    fl_transpose(Wq, m->W_q.weight.data, d, d);
    fl_transpose(Wk, m->W_k.weight.data, d, d);
    fl_transpose(Wv, m->W_v.weight.data, d, d);
    fl_transpose(Wo, m->W_o.weight.data, d, d);
}

static void tfm_fast_weights_update(s2s_fast_weights *fw, const s2s_model *m)
{
    const tfm_model *net = tfm_net(m);
    tfm_fast_weights *w = fw->net;
    const size_t d = m->cfg.hiddens, H = m->cfg.ffn;
    for (size_t l = 0; l < m->cfg.layers; l++) {
        const tblock *e = &net->enc[l];
        const tfm_dec_block *b = &net->dec[l];
        tfast_block_weights *ew = &w->enc[l], *dw = &w->dec[l];
        tfast_block_weights_update(ew, &e->mha, &e->dense1, &e->dense2, d, H);
        tfast_block_weights_update(dw, &b->attention1, &b->dense1, &b->dense2, d, H);
        mha_weights_update(w->cross[l][0], w->cross[l][1], w->cross[l][2], w->cross[l][3],
                           &b->attention2, d);
    }
    fl_transpose(w->dense, net->dense.weight.data, m->cfg.tgt_vocab, d);
}

/* ---- the cache ---------------------------------------------------------- */

/* An attention's activations for Bq·Tq query rows and Bk·Tk key rows. */
static void acts_alloc(fl_mha_acts *a, size_t BT, size_t d, size_t NH, size_t Tmax,
                       int *failed)
{
    a->Q = fl_zeros(BT, d, 1, failed);
    a->K = fl_zeros(BT, d, 1, failed);
    a->V = fl_zeros(BT, d, 1, failed);
    a->O = fl_zeros(BT, d, 1, failed);
    a->Y = fl_zeros(BT, d, 1, failed);
    a->A = fl_zeros(BT * NH, Tmax, 1, failed); /* (B, NH, Tq, Tk) ≤ B·Tmax·NH·Tmax */
}

static void acts_free(fl_mha_acts *a)
{
    free(a->Q);
    free(a->K);
    free(a->V);
    free(a->O);
    free(a->Y);
    free(a->A);
}

/* An AddNorm's output, x̂ (BT, d) and 1/σ (BT,). */
static void norm_alloc(float **N, float **xh, float **rstd, size_t BT, size_t d, int *failed)
{
    *N = fl_zeros(BT, d, 1, failed);
    *xh = fl_zeros(BT, d, 1, failed);
    *rstd = fl_zeros(BT, 1, 1, failed);
}

static void enc_block_alloc(tfast_block *b, size_t BT, size_t d, size_t NH, size_t Tmax,
                            size_t H, int *failed)
{
    fl_mha_acts a;
    acts_alloc(&a, BT, d, NH, Tmax, failed);
    b->Q = a.Q, b->K = a.K, b->V = a.V, b->O = a.O, b->Y = a.Y, b->A = a.A;
    norm_alloc(&b->N, &b->xh, &b->rstd, BT, d, failed);
    b->H = fl_zeros(BT, H, 1, failed);
    b->R = fl_zeros(BT, H, 1, failed);
    b->F = fl_zeros(BT, d, 1, failed);
    norm_alloc(&b->N2, &b->xh2, &b->rstd2, BT, d, failed);
}

static void dec_block_alloc(tfm_fast_dec_block *b, size_t BT, size_t d, size_t NH, size_t Tmax,
                            size_t H, int *failed)
{
    acts_alloc(&b->self, BT, d, NH, Tmax, failed);
    norm_alloc(&b->N1, &b->xh1, &b->rstd1, BT, d, failed);
    acts_alloc(&b->cross, BT, d, NH, Tmax, failed);
    norm_alloc(&b->N2, &b->xh2, &b->rstd2, BT, d, failed);
    b->H = fl_zeros(BT, H, 1, failed);
    b->R = fl_zeros(BT, H, 1, failed);
    b->F = fl_zeros(BT, d, 1, failed);
    norm_alloc(&b->N3, &b->xh3, &b->rstd3, BT, d, failed);
}

static void tfm_fast_cache_free(s2s_fast_cache *fc);

/* fc's sizes set and checked by s2s_fast_cache_alloc (B·Tmax·NH). */
static int tfm_fast_cache_alloc(s2s_fast_cache *fc, const s2s_model *m)
{
    const size_t d = m->cfg.hiddens, NH = m->cfg.heads, H = m->cfg.ffn;
    const size_t Bmax = fc->Bmax, Tmax = fc->Tmax, BT = Bmax * Tmax;
    tfm_fast_cache *c = fc->net = calloc(1, sizeof *c);
    int failed = 0;
    if (!c)
        return -1;
    c->Bmax = Bmax;
    c->Tmax = Tmax;
    c->P = fl_zeros(Tmax, d, 1, &failed);
    c->Xs = fl_zeros(BT, d, 1, &failed);
    c->Xt = fl_zeros(BT, d, 1, &failed);
    for (size_t l = 0; l < m->cfg.layers; l++) {
        enc_block_alloc(&c->enc[l], BT, d, NH, Tmax, H, &failed);
        dec_block_alloc(&c->dec[l], BT, d, NH, Tmax, H, &failed);
    }
    c->logits = fl_zeros(BT, m->cfg.tgt_vocab, 1, &failed);
    c->dlogits = fl_zeros(BT, m->cfg.tgt_vocab, 1, &failed);
    float **g[] = {&c->dA, &c->dB, &c->dC, &c->dEnc, &c->dY, &c->dF,
                   &c->dO, &c->dQ, &c->dK, &c->dV};
    for (size_t i = 0; i < sizeof g / sizeof *g; i++)
        *g[i] = fl_zeros(BT, d, 1, &failed);
    c->dR = fl_zeros(BT, H, 1, &failed);
    c->heads = fl_heads_scratch_alloc(d, Tmax, &failed);
    if (!failed && (!(c->dec_in = calloc(BT ? BT : 1, sizeof *c->dec_in)) ||
                    !(c->dec_in2 = calloc(BT ? BT : 1, sizeof *c->dec_in2))))
        failed = 1;
    if (failed) {
        tfm_fast_cache_free(fc);
        return -1;
    }
    posenc_fill(c->P, Tmax, d, 10000.0);
    return 0;
}

static int tfm_fast_cache_bytes(const s2s_config *cfg, size_t Bmax, size_t Tmax, size_t *bytes)
{
    const size_t d = cfg->hiddens, H = cfg->ffn, L = cfg->layers, NH = cfg->heads;
    size_t BT, row, blk, t, n;
    /* per position of the chunk (B·Tmax rows): Xs, Xt, the ten gradients
     * (12 d), logits and dlogits (2 Vt), dR (H), the two decoder inputs
     * (ints, 2); each block pair: the encoder's 5 d attention, 2 norms of
     * 2 d + 1, H and R, F (10 d + 2 H + 2), the decoder's 2 attentions, 3
     * norms, H, R, F (17 d + 2 H + 3), and 3 attention weights of NH·Tmax */
    int over = size_mul(Bmax, Tmax, &BT) || size_mul(27, d, &blk) ||
               size_mul(4, H, &t) || size_add(blk, t, &blk) || size_add(blk, 5, &blk) ||
               size_mul(3, NH, &t) || size_mul(t, Tmax, &t) || size_add(blk, t, &blk) ||
               size_mul(blk, L, &blk) || size_mul(12, d, &row) ||
               size_mul(2, cfg->tgt_vocab, &t) || size_add(row, t, &row) ||
               size_add(row, H, &row) || size_add(row, 2, &row) || size_add(row, blk, &row) ||
               size_mul(row, BT, &n) ||
               /* P (Tmax, d) and the heads' scratch (16·(d + 3·Tmax)) */
               size_mul(Tmax, d, &t) || size_add(n, t, &n) || size_mul(3, Tmax, &t) ||
               size_add(t, d, &t) || size_mul(16, t, &t) || size_add(n, t, &n) ||
               size_mul(n, sizeof(float), bytes);
    return over ? -1 : 0;
}

static void tfm_fast_cache_free(s2s_fast_cache *fc)
{
    tfm_fast_cache *c = tfm_fast_cache_of(fc);
    if (!c)
        return;
    float **p[] = {&c->P,  &c->Xs, &c->Xt, &c->logits, &c->dlogits, &c->dA, &c->dB, &c->dC,
                   &c->dEnc, &c->dY, &c->dF, &c->dO, &c->dQ, &c->dK, &c->dV, &c->dR, &c->heads};
    for (size_t i = 0; i < sizeof p / sizeof *p; i++) {
        free(*p[i]);
        *p[i] = NULL;
    }
    free(c->dec_in);
    free(c->dec_in2);
    c->dec_in = c->dec_in2 = NULL;
    for (size_t l = 0; l < TMODEL_MAX_LAYERS; l++) {
        tfast_block *e = &c->enc[l];
        tfm_fast_dec_block *b = &c->dec[l];
        float *q[] = {e->Q,   e->K,   e->V,     e->O,  e->Y,  e->A,     e->N,  e->xh,
                      e->rstd, e->H,  e->R,     e->F,  e->N2, e->xh2,   e->rstd2,
                      b->N1,  b->xh1, b->rstd1, b->N2, b->xh2, b->rstd2, b->H,  b->R,
                      b->F,   b->N3,  b->xh3,   b->rstd3};
        for (size_t i = 0; i < sizeof q / sizeof *q; i++)
            free(q[i]);
        acts_free(&b->self);
        acts_free(&b->cross);
        memset(e, 0, sizeof *e);
        memset(b, 0, sizeof *b);
    }
    free(c);
    fc->net = NULL;
}

/* ---- the modules of one step -------------------------------------------- */

/* The sizes and constants of one step. */
typedef struct tfm_dims {
    size_t B, Ts, Tt, d, NH, p, H, Vt;
    float sqrt_d;
    fl_attention enc;   /* the encoder's self-attention: Ts × Ts, source lengths */
    fl_attention self;  /* the decoder's: Tt × Tt, causal */
    fl_attention cross; /* the decoder's cross-attention: Tt × Ts, source lengths */
} tfm_dims;


static tfm_dims step_dims(const s2s_model *m, size_t B, size_t Ts, size_t Tt,
                          const long *src_lens)
{
    const size_t d = m->cfg.hiddens, NH = m->cfg.heads, p = d / NH;
    const float inv = (float)(1.0 / sqrt((double)p));
    const float keep = m->cfg.dropout > 0 ? (float)(1.0 / (1.0 - m->cfg.dropout)) : 1.0f;
    tfm_dims s = {B, Ts, Tt, d, NH, p, m->cfg.ffn, m->cfg.tgt_vocab, (float)sqrt((double)d),
                  {B, Ts, Ts, d, NH, p, src_lens, 0, NULL, inv, keep, NULL},
                  {B, Tt, Tt, d, NH, p, NULL, 1, NULL, inv, keep, NULL},
                  {B, Tt, Ts, d, NH, p, src_lens, 0, NULL, inv, keep, NULL}};
    return s;
}

static fl_mha mha_of(const mha_params *p, float *const W[4])
{
    return (fl_mha){{W[0], &p->W_q}, {W[1], &p->W_k}, {W[2], &p->W_v}, {W[3], &p->W_o}};
}

/* The gradient of tensor t in grads (laid out as m->param), or NULL. */
static float *grad_of(float *grads, const s2s_model *m, const tensor *t)
{
    return tparam_gradf(m->param, m->nparams, grads, t);
}

static fl_linear_grads lin_grads(float *grads, const s2s_model *m, const linear *l)
{
    return (fl_linear_grads){grad_of(grads, m, &l->weight), grad_of(grads, m, &l->bias)};
}

static fl_mha_grads mha_grad_slices(float *grads, const s2s_model *m, const mha_params *p)
{
    return (fl_mha_grads){lin_grads(grads, m, &p->W_q), lin_grads(grads, m, &p->W_k),
                          lin_grads(grads, m, &p->W_v), lin_grads(grads, m, &p->W_o)};
}

static fl_mha_acts enc_acts(const tfast_block *b)
{
    return (fl_mha_acts){b->Q, b->K, b->V, b->O, b->Y, b->A};
}

/* ---- forward ------------------------------------------------------------ */

const float *tfm_fast_enc_out(const tfm_fast_cache *c, const s2s_model *m)
{
    return c->enc[m->cfg.layers - 1].N2;
}

/* Encoder block l on x (B, Ts, d): X = addnorm1(x, attention(x, x, x,
 * src_lens)); then addnorm2(X, ffn(X)), into c->enc[l].N2 */
static void enc_block_forward(tfm_fast_cache *c, const s2s_model *m, const tfm_fast_weights *w,
                              size_t l, const float *x, const tfm_dims *s, fl_attention at)
{
    const tfm_model *net = tfm_net(m);
    tfast_block *b = &c->enc[l];
    const tblock *e = &net->enc[l];
    float *const W[4] = {w->enc[l].Wq, w->enc[l].Wk, w->enc[l].Wv, w->enc[l].Wo};
    const fl_mha mw = mha_of(&e->mha, W);
    const fl_mha_acts a = enc_acts(b);
    const fl_linear d1 = {w->enc[l].W1, &e->dense1}, d2 = {w->enc[l].W2, &e->dense2};
    const size_t n = s->B * s->Ts;
    fl_mha_forward(&a, c->heads, x, x, &mw, &at);
    fl_addnorm_forward(b->N, b->xh, b->rstd, x, b->Y, e->ln1_weight.data, e->ln1_bias.data, n,
                       s->d);
    fl_ffn_forward(b->F, b->H, b->R, b->N, &d1, &d2, n, s->d, s->H);
    fl_addnorm_forward(b->N2, b->xh2, b->rstd2, b->N, b->F, e->ln2_weight.data,
                       e->ln2_bias.data, n, s->d);
}

void tfm_fast_encode(tfm_fast_cache *c, const s2s_model *m, const tfm_fast_weights *w,
                     const int *src, const long *src_lens, size_t B, size_t Ts,
                     const mha_dropout *drop, size_t example0)
{
    const tfm_model *net = tfm_net(m);
    const tfm_dims s = step_dims(m, B, Ts, Ts, src_lens);
    const float *x = c->Xs;
    mha_dropout md;
    /* X (B, Ts, d) = embedding[src] · √d + P */
    fl_embed_forward(c->Xs, net->enc_embedding.data, src, B * Ts, Ts, s.d, s.sqrt_d, c->P);
    for (size_t l = 0; l < m->cfg.layers; l++) {
        fl_attention at = s.enc;
        at.drop = s2s_module_dropout(&md, drop, example0, l, s.NH * Ts * Ts);
        at.heads_on = net->enc[l].mha.heads_on;
        enc_block_forward(c, m, w, l, x, &s, at);
        x = c->enc[l].N2;
    }
}

/* Decoder block l on x (B, Tt, d) and the encoder's output enc (B, Ts, d):
 *   Y = addnorm1(x, attention1(x, x, x, causal))
 *   Z = addnorm2(Y, attention2(Y, enc, enc, src_lens))
 *   addnorm3(Z, ffn(Z)) into c->dec[l].N3 */
static void dec_block_forward(tfm_fast_cache *c, const s2s_model *m, const tfm_fast_weights *w,
                              size_t l, const float *x, const float *enc, const tfm_dims *s,
                              const fl_attention *self, const fl_attention *cross)
{
    const tfm_model *net = tfm_net(m);
    tfm_fast_dec_block *b = &c->dec[l];
    const tfm_dec_block *p = &net->dec[l];
    float *const W1[4] = {w->dec[l].Wq, w->dec[l].Wk, w->dec[l].Wv, w->dec[l].Wo};
    const fl_mha a1 = mha_of(&p->attention1, W1), a2 = mha_of(&p->attention2, w->cross[l]);
    const fl_linear d1 = {w->dec[l].W1, &p->dense1}, d2 = {w->dec[l].W2, &p->dense2};
    const size_t n = s->B * s->Tt, d = s->d;
    fl_mha_forward(&b->self, c->heads, x, x, &a1, self);
    fl_addnorm_forward(b->N1, b->xh1, b->rstd1, x, b->self.Y, p->ln1_weight.data,
                       p->ln1_bias.data, n, d);
    fl_mha_forward(&b->cross, c->heads, b->N1, enc, &a2, cross);
    fl_addnorm_forward(b->N2, b->xh2, b->rstd2, b->N1, b->cross.Y, p->ln2_weight.data,
                       p->ln2_bias.data, n, d);
    fl_ffn_forward(b->F, b->H, b->R, b->N2, &d1, &d2, n, d, s->H);
    fl_addnorm_forward(b->N3, b->xh3, b->rstd3, b->N2, b->F, p->ln3_weight.data,
                       p->ln3_bias.data, n, d);
}

void tfm_fast_decode(tfm_fast_cache *c, const s2s_model *m, const tfm_fast_weights *w,
                     const int *dec_in, const long *src_lens, size_t B, size_t Ts, size_t Tt,
                     const mha_dropout *drop, size_t example0)
{
    const tfm_model *net = tfm_net(m);
    const tfm_dims s = step_dims(m, B, Ts, Tt, src_lens);
    const size_t L = m->cfg.layers;
    const float *x = c->Xt, *enc = tfm_fast_enc_out(c, m);
    mha_dropout md1, md2;
    /* X (B, Tt, d) = embedding[dec_in] · √d + P */
    fl_embed_forward(c->Xt, net->dec_embedding.data, dec_in, B * Tt, Tt, s.d, s.sqrt_d, c->P);
    for (size_t l = 0; l < L; l++) {
        fl_attention self = s.self, cross = s.cross;
        self.drop = s2s_module_dropout(&md1, drop, example0, L + 2 * l, s.NH * Tt * Tt);
        cross.drop = s2s_module_dropout(&md2, drop, example0, L + 2 * l + 1, s.NH * Tt * Ts);
        self.heads_on = net->dec[l].attention1.heads_on;
        cross.heads_on = net->dec[l].attention2.heads_on;
        dec_block_forward(c, m, w, l, x, enc, &s, &self, &cross);
        x = c->dec[l].N3;
    }
    /* logits (B, Tt, Vt) = X · dense.weightᵀ + dense.bias */
    fl_linear_forward(c->logits, x, B * Tt, w->dense, net->dense.bias.data, s.d, s.Vt);
}

/* ---- backward ----------------------------------------------------------- */

/* Decoder block l backward from dN3 (B, Tt, d), the gradient of its output:
 * its parameters' gradients, dX (B, Tt, d) = that of its input x
 * (written), and dEnc (B, Ts, d) += through the cross-attention. dN3 is
 * overwritten (scratch). */
static void dec_block_backward(float *grads, tfm_fast_cache *c, const s2s_model *m, size_t l,
                               const float *x, const float *enc, float *dN3, float *dX,
                               const tfm_dims *s, const fl_attention *self,
                               const fl_attention *cross)
{
    const tfm_model *net = tfm_net(m);
    tfm_fast_dec_block *b = &c->dec[l];
    const tfm_dec_block *p = &net->dec[l];
    float *const none[4] = {NULL, NULL, NULL, NULL};
    const fl_mha a1 = mha_of(&p->attention1, none), a2 = mha_of(&p->attention2, none);
    const fl_mha_grads g1 = mha_grad_slices(grads, m, &p->attention1),
                       g2 = mha_grad_slices(grads, m, &p->attention2);
    const fl_linear d1 = {NULL, &p->dense1}, d2 = {NULL, &p->dense2};
    const fl_linear_grads gd1 = lin_grads(grads, m, &p->dense1),
                          gd2 = lin_grads(grads, m, &p->dense2);
    const fl_mha_scratch t = {c->dO, c->dQ, c->dK, c->dV, c->heads};
    const size_t n = s->B * s->Tt, d = s->d;
    float *dN2 = c->dB, *dN1 = c->dC;
    /* addnorm3: dZ3 into dF and dN2; the FFN adds into dN2 */
    fl_addnorm_backward(dN2, c->dF, grad_of(grads, m, &p->ln3_weight),
                        grad_of(grads, m, &p->ln3_bias), dN3, b->xh3, b->rstd3,
                        p->ln3_weight.data, n, d);
    fl_ffn_backward(dN2, &gd1, &gd2, c->dR, c->dF, b->H, b->R, b->N2, &d1, &d2, n, d, s->H);
    /* addnorm2: dZ2 into dY (attention2's output) and dN1; attention2
     * adds into dN1 (its queries) and dEnc (its keys and values) */
    fl_addnorm_backward(dN1, c->dY, grad_of(grads, m, &p->ln2_weight),
                        grad_of(grads, m, &p->ln2_bias), dN2, b->xh2, b->rstd2,
                        p->ln2_weight.data, n, d);
    fl_mha_backward(dN1, c->dEnc, &g2, &t, c->dY, &b->cross, b->N1, enc, &a2, cross);
    /* addnorm1: dZ1 into dY and dX; attention1 adds into dX */
    fl_addnorm_backward(dX, c->dY, grad_of(grads, m, &p->ln1_weight),
                        grad_of(grads, m, &p->ln1_bias), dN1, b->xh1, b->rstd1,
                        p->ln1_weight.data, n, d);
    fl_mha_backward(dX, dX, &g1, &t, c->dY, &b->self, x, x, &a1, self);
}

/* Encoder block l backward from dN2 (B, Ts, d): dX (B, Ts, d) that of its
 * input x (written); dN2 is overwritten (scratch). */
static void enc_block_backward(float *grads, tfm_fast_cache *c, const s2s_model *m, size_t l,
                               const float *x, float *dN2, float *dX, const tfm_dims *s,
                               const fl_attention *at)
{
    const tfm_model *net = tfm_net(m);
    tfast_block *b = &c->enc[l];
    const tblock *e = &net->enc[l];
    float *const none[4] = {NULL, NULL, NULL, NULL};
    const fl_mha a = mha_of(&e->mha, none);
    const fl_mha_grads g = mha_grad_slices(grads, m, &e->mha);
    const fl_linear d1 = {NULL, &e->dense1}, d2 = {NULL, &e->dense2};
    const fl_linear_grads gd1 = lin_grads(grads, m, &e->dense1),
                          gd2 = lin_grads(grads, m, &e->dense2);
    const fl_mha_scratch t = {c->dO, c->dQ, c->dK, c->dV, c->heads};
    const fl_mha_acts acts = enc_acts(b);
    const size_t n = s->B * s->Ts, d = s->d;
    float *dN1 = c->dC;
    fl_addnorm_backward(dN1, c->dF, grad_of(grads, m, &e->ln2_weight),
                        grad_of(grads, m, &e->ln2_bias), dN2, b->xh2, b->rstd2,
                        e->ln2_weight.data, n, d);
    fl_ffn_backward(dN1, &gd1, &gd2, c->dR, c->dF, b->H, b->R, b->N, &d1, &d2, n, d, s->H);
    fl_addnorm_backward(dX, c->dY, grad_of(grads, m, &e->ln1_weight),
                        grad_of(grads, m, &e->ln1_bias), dN1, b->xh, b->rstd,
                        e->ln1_weight.data, n, d);
    fl_mha_backward(dX, dX, &g, &t, c->dY, &acts, x, x, &a, at);
}

/* The backward pass after s2s_fast_step's forward pass and loss: from
 * c->dlogits down the decoder, then from dEnc down the encoder. */
static void backward(float *grads, tfm_fast_cache *c, const s2s_model *m, const int *src,
                     const int *dec_in, const tfm_dims *s, const mha_dropout *drop,
                     size_t example0)
{
    const tfm_model *net = tfm_net(m);
    const size_t L = m->cfg.layers, d = s->d, nt = s->B * s->Tt, ns = s->B * s->Ts;
    const float *dec_out = c->dec[L - 1].N3, *enc = tfm_fast_enc_out(c, m);
    mha_dropout md1, md2;
    /* d dense, and dN3 of the top block (in dA) = d logits · dense.weight */
    memset(c->dA, 0, nt * d * sizeof *c->dA);
    fl_linear_backward(c->dA, grad_of(grads, m, &net->dense.weight),
                       grad_of(grads, m, &net->dense.bias), c->dlogits, dec_out, nt,
                       net->dense.weight.data, d, s->Vt);
    memset(c->dEnc, 0, ns * d * sizeof *c->dEnc);
    for (size_t l = L; l-- > 0;) {
        fl_attention self = s->self, cross = s->cross;
        self.drop = s2s_module_dropout(&md1, drop, example0, L + 2 * l, s->NH * s->Tt * s->Tt);
        cross.drop =
            s2s_module_dropout(&md2, drop, example0, L + 2 * l + 1, s->NH * s->Tt * s->Ts);
        self.heads_on = net->dec[l].attention1.heads_on;
        cross.heads_on = net->dec[l].attention2.heads_on;
        /* the gradient of block l's output in dA becomes that of its
         * input, the output of block l − 1 (dN3 is read before dX is
         * written) */
        dec_block_backward(grads, c, m, l, l ? c->dec[l - 1].N3 : c->Xt, enc, c->dA, c->dA, s,
                           &self, &cross);
    }
    fl_embed_backward(grad_of(grads, m, &net->dec_embedding), c->dA, dec_in, nt, d, s->sqrt_d);
    /* the encoder, from the gradient of its output */
    for (size_t l = L; l-- > 0;) {
        fl_attention at = s->enc;
        at.drop = s2s_module_dropout(&md1, drop, example0, l, s->NH * s->Ts * s->Ts);
        at.heads_on = net->enc[l].mha.heads_on;
        enc_block_backward(grads, c, m, l, l ? c->enc[l - 1].N2 : c->Xs, c->dEnc, c->dEnc, s,
                           &at);
    }
    fl_embed_backward(grad_of(grads, m, &net->enc_embedding), c->dEnc, src, ns, d, s->sqrt_d);
}

static double tfm_fast_step(float *grads, s2s_fast_cache *fc, const s2s_model *m,
                            const s2s_fast_weights *fw, const int *src, const long *src_lens,
                            const int *dec_in, const int *targets, size_t B, size_t Ts,
                            size_t Tt, double scale, const mha_dropout *drop, size_t example0,
                            size_t *count, size_t *correct)
{
    const tfm_dims s = step_dims(m, B, Ts, Tt, src_lens);
    tfm_fast_cache *c = tfm_fast_cache_of(fc);
    const tfm_fast_weights *w = fw->net;
    double loss;
    tfm_fast_encode(c, m, w, src, src_lens, B, Ts, drop, example0);
    tfm_fast_decode(c, m, w, dec_in, src_lens, B, Ts, Tt, drop, example0);
    if (!targets)
        return 0.0;
    /* the summed loss, and d logits (B, Tt, Vt) = (softmax − one-hot) · scale */
    loss = fl_cross_entropy(c->dlogits, c->logits, targets, B * Tt, s.Vt, scale, count,
                            correct);
    if (grads)
        backward(grads, c, m, src, dec_in, &s, drop, example0);
    return loss;
}

/* ---- greedy decoding ------------------------------------------------------ */

/* max_len ≤ c->Tmax (s2s_fast_greedy_batch's). */
static size_t tfm_fast_greedy_batch(s2s_fast_cache *fc, const s2s_model *m,
                                    const s2s_fast_weights *fw, const int *src,
                                    const long *src_lens, size_t B, size_t Ts, int bos, int eos,
                                    size_t max_len, int *out, size_t *n_out)
{
    const size_t Vt = m->cfg.tgt_vocab;
    tfm_fast_cache *c = tfm_fast_cache_of(fc);
    const tfm_fast_weights *w = fw->net;
    int *hist = c->dec_in;   /* (B, max_len) <bos> y1 y2 … of each pair */
    int *in = c->dec_in2;    /* (B, t + 1) the decoder's input of step t */
    size_t t, b, running = B, steps = 0;
    tfm_fast_encode(c, m, w, src, src_lens, B, Ts, NULL, 0);
    for (b = 0; b < B; b++) {
        hist[b * max_len] = bos;
        for (t = 1; t < max_len; t++) /* a finished pair is fed <eos>: its rows go unread */
            hist[b * max_len + t] = eos;
        n_out[b] = SIZE_MAX;           /* still decoding */
    }
    for (t = 0; t < max_len && running > 0; t++) {
        /* the decoder on <bos> y1 … yt of every pair: the last row's
         * argmax (the first largest logit) is y(t+1) */
        for (b = 0; b < B; b++)
            memcpy(in + b * (t + 1), hist + b * max_len, (t + 1) * sizeof *in);
        tfm_fast_decode(c, m, w, in, src_lens, B, Ts, t + 1, NULL, 0);
        steps = t + 1;
        for (b = 0; b < B; b++) {
            const int arg = s2s_argmax(c->logits + (b * (t + 1) + t) * Vt, Vt);
            if (n_out[b] != SIZE_MAX)
                continue; /* done: its <eos> came earlier */
            if (arg == eos) {
                n_out[b] = t;
                running--;
                continue;
            }
            out[b * max_len + t] = arg;
            if (t + 1 < max_len)
                hist[b * max_len + t + 1] = arg;
        }
    }
    for (b = 0; b < B; b++)
        if (n_out[b] == SIZE_MAX)
            n_out[b] = max_len; /* no <eos> within max_len */
    return steps;
}

/* ---- an attention's parts (transformer_fast.h) ------------------------------ */

int tfm_fast_attention_parts(const s2s_fast_cache *c, const s2s_model *m, int kind, size_t l,
                             size_t Tt, size_t Ts, tfm_fast_parts *out)
{
    const tfm_fast_cache *tc = tfm_fast_cache_of(c);
    if (c->arch != m->cfg.arch || !m->cfg.arch->has_self || l >= m->cfg.layers)
        return -1;
    if (kind == S2S_HEADS_ENC) {
        const tfast_block *b = &tc->enc[l];
        *out = (tfm_fast_parts){b->Q, b->K, b->V, b->O, b->A, Ts};
    } else if (kind == S2S_HEADS_DEC || kind == S2S_HEADS_CROSS) {
        const fl_mha_acts *a = kind == S2S_HEADS_DEC ? &tc->dec[l].self : &tc->dec[l].cross;
        *out = (tfm_fast_parts){a->Q, a->K, a->V, a->O, a->A, kind == S2S_HEADS_DEC ? Tt : Ts};
    } else {
        return -1;
    }
    return 0;
}

/* ---- the table ------------------------------------------------------------ */

static const float *tfm_fast_cross(const s2s_fast_cache *c, size_t l)
{
    return tfm_fast_cache_of(c)->dec[l].cross.A;
}

static const float *tfm_fast_self(const s2s_fast_cache *c, int side, size_t l)
{
    const tfm_fast_cache *tc = tfm_fast_cache_of(c);
    return side == 0 ? tc->enc[l].A : tc->dec[l].self.A;
}

static const float *tfm_fast_logits(const s2s_fast_cache *c)
{
    return tfm_fast_cache_of(c)->logits;
}

const s2s_fast_ops tfm_fast_ops = {
    .weights_alloc = tfm_fast_weights_alloc,
    .weights_update = tfm_fast_weights_update,
    .weights_free = tfm_fast_weights_free,
    .cache_alloc = tfm_fast_cache_alloc,
    .cache_bytes = tfm_fast_cache_bytes,
    .cache_free = tfm_fast_cache_free,
    .step = tfm_fast_step,
    .greedy_batch = tfm_fast_greedy_batch,
    .cross = tfm_fast_cross,
    .self = tfm_fast_self,
    .logits = tfm_fast_logits,
};
