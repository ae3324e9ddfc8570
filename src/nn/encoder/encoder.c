/* encoder.c — the model of encoder.h: parameters, the forward pass
 * block by block (mha_forward for the attention, layers.h for the rest)
 * and the backward pass as naive loops, the same layers in reverse. */
#include "encoder.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention_backward.h"
#include "checked.h"
#include "fmath.h"
#include "layers.h"
#include "posenc.h"
#include "rng.h"
#include "i18n.h"

int tmodel_config_check(const tmodel_config *cfg, char *err, size_t errlen)
{
    if (cfg->vocab < 1 || cfg->classes < 1 || cfg->hiddens < 1 || cfg->heads < 1) {
        snprintf(err, errlen, "%s", _("the model needs a vocabulary, classes, hiddens and heads"));
        return -1;
    }
    if (cfg->hiddens % cfg->heads != 0) {
        snprintf(err, errlen, _("num_hiddens %zu is not divisible by num_heads %zu"), cfg->hiddens,
                 cfg->heads);
        return -1;
    }
    if (!(cfg->dropout >= 0.0 && cfg->dropout < 1.0)) {
        snprintf(err, errlen, _("dropout %g is not in [0, 1)"), cfg->dropout);
        return -1;
    }
    if (cfg->score != SCORE_DOT) { /* the additive score is the Transformer's (transformer.h) */
        snprintf(err, errlen, "%s", _("attn train's attention is the scaled dot product"));
        return -1;
    }
    if (cfg->learned && cfg->posenc) {
        snprintf(err, errlen, "%s", _("the sinusoidal P and a learned pos_embedding: choose one"));
        return -1;
    }
    if (cfg->learned && cfg->max_len < 1) {
        snprintf(err, errlen, "%s", _("a learned pos_embedding needs max_len ≥ 1"));
        return -1;
    }
    if (cfg->layers > TMODEL_MAX_LAYERS) {
        snprintf(err, errlen, _("%zu layers (at most %d)"), cfg->layers, TMODEL_MAX_LAYERS);
        return -1;
    }
    return 0;
}

int tmodel_is_stack(const tmodel_config *cfg)
{
    return cfg->layers > 1 || cfg->ffn > 0;
}

/* ---- one block's parameters ----------------------------------------------- */

int mha_params_alloc(mha_params *a, size_t d, size_t heads, int bias, char *err, size_t errlen)
{
    a->num_heads = heads;
    a->num_hiddens = d;
    a->score = SCORE_DOT;
    a->heads_on = NULL; /* every head */
    return tensor_alloc2(&a->W_q.weight, d, d, err, errlen) ||
           tensor_alloc2(&a->W_k.weight, d, d, err, errlen) ||
           tensor_alloc2(&a->W_v.weight, d, d, err, errlen) ||
           tensor_alloc2(&a->W_o.weight, d, d, err, errlen) ||
           (bias && (tensor_alloc2(&a->W_q.bias, d, 0, err, errlen) ||
                     tensor_alloc2(&a->W_k.bias, d, 0, err, errlen) ||
                     tensor_alloc2(&a->W_v.bias, d, 0, err, errlen) ||
                     tensor_alloc2(&a->W_o.bias, d, 0, err, errlen)));
}

int mha_params_additive(mha_params *a, char *err, size_t errlen)
{
    const size_t p = a->num_hiddens / a->num_heads; /* A = p */
    a->score = SCORE_ADDITIVE;
    return tensor_alloc2(&a->a_W_q.weight, p, p, err, errlen) ||
           tensor_alloc2(&a->a_W_k.weight, p, p, err, errlen) ||
           tensor_alloc2(&a->a_w_v.weight, 1, p, err, errlen);
}

void mha_params_free(mha_params *a)
{
    linear_free(&a->W_q);
    linear_free(&a->W_k);
    linear_free(&a->W_v);
    linear_free(&a->W_o);
    linear_free(&a->a_W_q);
    linear_free(&a->a_W_k);
    linear_free(&a->a_w_v);
}

void mha_params_list(tparam *list, size_t *n, size_t *total, mha_params *a,
                     const char *prefix)
{
    linear *ls[4] = {&a->W_q, &a->W_k, &a->W_v, &a->W_o};
    static const char *const names[4][2] = {{"W_q.weight", "W_q.bias"},
                                            {"W_k.weight", "W_k.bias"},
                                            {"W_v.weight", "W_v.bias"},
                                            {"W_o.weight", "W_o.bias"}};
    for (size_t i = 0; i < 4; i++) {
        tparam_add(list, n, total, prefix, names[i][0], &ls[i]->weight);
        if (ls[i]->bias.data)
            tparam_add(list, n, total, prefix, names[i][1], &ls[i]->bias);
    }
    if (a->score == SCORE_ADDITIVE) { /* the score's, right after W_o */
        tparam_add(list, n, total, prefix, "score.W_q.weight", &a->a_W_q.weight);
        tparam_add(list, n, total, prefix, "score.W_k.weight", &a->a_W_k.weight);
        tparam_add(list, n, total, prefix, "score.w_v.weight", &a->a_w_v.weight);
    }
}

void mha_params_init(mha_params *a, rng *r)
{
    linear *ls[4] = {&a->W_q, &a->W_k, &a->W_v, &a->W_o};
    for (size_t i = 0; i < 4; i++) {
        tparam_uniform(&ls[i]->weight, a->num_hiddens, r);
        if (ls[i]->bias.data)
            tparam_uniform(&ls[i]->bias, a->num_hiddens, r);
    }
    if (a->score == SCORE_ADDITIVE) { /* nn.Linear(p, p), (p, p), (p, 1): ±1/sqrt(p) */
        const size_t p = a->num_hiddens / a->num_heads;
        tparam_uniform(&a->a_W_q.weight, p, r);
        tparam_uniform(&a->a_W_k.weight, p, r);
        tparam_uniform(&a->a_w_v.weight, p, r);
    }
}

void mha_params_grads(mha_grads *g, const tparam *list, size_t n, double *grads,
                      const mha_params *a)
{
    g->dW_q = tparam_grad(list, n, grads, &a->W_q.weight);
    g->db_q = tparam_grad(list, n, grads, &a->W_q.bias);
    g->dW_k = tparam_grad(list, n, grads, &a->W_k.weight);
    g->db_k = tparam_grad(list, n, grads, &a->W_k.bias);
    g->dW_v = tparam_grad(list, n, grads, &a->W_v.weight);
    g->db_v = tparam_grad(list, n, grads, &a->W_v.bias);
    g->dW_o = tparam_grad(list, n, grads, &a->W_o.weight);
    g->db_o = tparam_grad(list, n, grads, &a->W_o.bias);
}

void mha_additive_grads_find(mha_additive_grads *g, const tparam *list, size_t n,
                             double *grads, const mha_params *a)
{
    g->da_W_q = tparam_grad(list, n, grads, &a->a_W_q.weight);
    g->da_W_k = tparam_grad(list, n, grads, &a->a_W_k.weight);
    g->da_w_v = tparam_grad(list, n, grads, &a->a_w_v.weight);
}

int tblock_alloc(tblock *b, const tmodel_config *cfg, char *err, size_t errlen)
{
    const size_t d = cfg->hiddens, H = cfg->ffn;
    return mha_params_alloc(&b->mha, d, cfg->heads, cfg->bias, err, errlen) ||
           (cfg->score == SCORE_ADDITIVE && mha_params_additive(&b->mha, err, errlen)) ||
           (cfg->addnorm && (tensor_alloc2(&b->ln1_weight, d, 0, err, errlen) ||
                             tensor_alloc2(&b->ln1_bias, d, 0, err, errlen))) ||
           (H && (tensor_alloc2(&b->dense1.weight, H, d, err, errlen) ||
                  tensor_alloc2(&b->dense1.bias, H, 0, err, errlen) ||
                  tensor_alloc2(&b->dense2.weight, d, H, err, errlen) ||
                  tensor_alloc2(&b->dense2.bias, d, 0, err, errlen) ||
                  tensor_alloc2(&b->ln2_weight, d, 0, err, errlen) ||
                  tensor_alloc2(&b->ln2_bias, d, 0, err, errlen)));
}

void tblock_free(tblock *b)
{
    tensor *ts[] = {&b->ln1_weight,    &b->ln1_bias,      &b->dense1.weight, &b->dense1.bias,
                    &b->dense2.weight, &b->dense2.bias,   &b->ln2_weight,    &b->ln2_bias};
    mha_params_free(&b->mha);
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        tensor_free(ts[i]);
}

void tblock_params(tparam *list, size_t *n, size_t *total, tblock *b,
                   const tmodel_config *cfg, const char *pre, const char *att, const char *an1)
{
    mha_params_list(list, n, total, &b->mha, att);
    if (cfg->addnorm) {
        tparam_add(list, n, total, an1, "weight", &b->ln1_weight);
        tparam_add(list, n, total, an1, "bias", &b->ln1_bias);
    }
    if (cfg->ffn) {
        char ffn[64], an2[64];
        snprintf(ffn, sizeof ffn, "%sffn.", pre);
        snprintf(an2, sizeof an2, "%saddnorm2.ln.", pre);
        tparam_add(list, n, total, ffn, "dense1.weight", &b->dense1.weight);
        tparam_add(list, n, total, ffn, "dense1.bias", &b->dense1.bias);
        tparam_add(list, n, total, ffn, "dense2.weight", &b->dense2.weight);
        tparam_add(list, n, total, ffn, "dense2.bias", &b->dense2.bias);
        tparam_add(list, n, total, an2, "weight", &b->ln2_weight);
        tparam_add(list, n, total, an2, "bias", &b->ln2_bias);
    }
}

void tblock_init(tblock *b, const tmodel_config *cfg, rng *r)
{
    mha_params_init(&b->mha, r);
    if (cfg->addnorm)
        tparam_layernorm(&b->ln1_weight, &b->ln1_bias);
    if (cfg->ffn) {
        tparam_uniform(&b->dense1.weight, cfg->hiddens, r);
        tparam_uniform(&b->dense1.bias, cfg->hiddens, r);
        tparam_uniform(&b->dense2.weight, cfg->ffn, r);
        tparam_uniform(&b->dense2.bias, cfg->ffn, r);
        tparam_layernorm(&b->ln2_weight, &b->ln2_bias);
    }
}

void tblock_grads_find(tblock_grads *g, const tparam *list, size_t n, double *grads,
                       const tblock *b)
{
    mha_params_grads(&g->mha, list, n, grads, &b->mha);
    mha_additive_grads_find(&g->add, list, n, grads, &b->mha);
    g->dln1_weight = tparam_grad(list, n, grads, &b->ln1_weight);
    g->dln1_bias = tparam_grad(list, n, grads, &b->ln1_bias);
    g->ddense1_weight = tparam_grad(list, n, grads, &b->dense1.weight);
    g->ddense1_bias = tparam_grad(list, n, grads, &b->dense1.bias);
    g->ddense2_weight = tparam_grad(list, n, grads, &b->dense2.weight);
    g->ddense2_bias = tparam_grad(list, n, grads, &b->dense2.bias);
    g->dln2_weight = tparam_grad(list, n, grads, &b->ln2_weight);
    g->dln2_bias = tparam_grad(list, n, grads, &b->ln2_bias);
}

/* Block l's parameters in state_dict order, under the one-layer keys or
 * d2l's TransformerEncoder keys. */
static void block_params(tmodel *m, size_t l)
{
    char pre[40], att[64], an1[64];
    if (tmodel_is_stack(&m->cfg)) {
        snprintf(pre, sizeof pre, "blks.block%zu.", l);
        snprintf(att, sizeof att, "%sattention.", pre);
        snprintf(an1, sizeof an1, "%saddnorm1.ln.", pre);
    } else {
        pre[0] = att[0] = '\0';
        snprintf(an1, sizeof an1, "addnorm.ln.");
    }
    tblock_params(m->param, &m->nparams, &m->total, &m->blk[l], &m->cfg, pre, att, an1);
}

int tmodel_alloc(tmodel *m, const tmodel_config *cfg, char *err, size_t errlen)
{
    const size_t d = cfg->hiddens;
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    if (m->cfg.layers == 0)
        m->cfg.layers = 1;
    if (tmodel_is_stack(&m->cfg))
        m->cfg.addnorm = 1; /* the residual carries each token up the stack */
    if (tmodel_config_check(&m->cfg, err, errlen))
        return -1;
    if (m->cfg.learned) {
        const size_t shape[3] = {1, m->cfg.max_len, d};
        if (tensor_alloc(&m->pos_embedding, 3, shape, err, errlen))
            goto fail;
    }
    if (tensor_alloc2(&m->embedding, cfg->vocab, d, err, errlen))
        goto fail;
    for (size_t l = 0; l < m->cfg.layers; l++)
        if (tblock_alloc(&m->blk[l], &m->cfg, err, errlen))
            goto fail;
    if (tensor_alloc2(&m->head_weight, cfg->classes, d, err, errlen) ||
        tensor_alloc2(&m->head_bias, cfg->classes, 0, err, errlen))
        goto fail;
    /* state_dict order: the module's own parameter, then its submodules' */
    if (m->cfg.learned)
        tparam_add(m->param, &m->nparams, &m->total, "", "pos_embedding", &m->pos_embedding);
    tparam_add(m->param, &m->nparams, &m->total, "", "embedding.weight", &m->embedding);
    for (size_t l = 0; l < m->cfg.layers; l++)
        block_params(m, l);
    tparam_add(m->param, &m->nparams, &m->total, "", "head.weight", &m->head_weight);
    tparam_add(m->param, &m->nparams, &m->total, "", "head.bias", &m->head_bias);
    return 0;
fail:
    tmodel_free(m);
    return -1;
}

void tmodel_init(tmodel *m, unsigned long long seed)
{
    const size_t d = m->cfg.hiddens;
    const double sd = 1.0 / sqrt((double)d);
    rng r;
    rng_seed(&r, seed);
    /* embedding ~ N(0, 1/d): embedding·√d has unit variance, like P */
    for (size_t i = 0; i < m->embedding.size; i++)
        m->embedding.data[i] = (float)(rng_normal(&r) * sd);
    for (size_t l = 0; l < m->cfg.layers; l++)
        tblock_init(&m->blk[l], &m->cfg, &r);
    tparam_uniform(&m->head_weight, d, &r);
    tparam_uniform(&m->head_bias, d, &r);
    /* pos_embedding ~ N(0, 1), d2l.ai 11.8's torch.randn, drawn after the
     * rest: the other weights are those of the same seed without it */
    for (size_t i = 0; i < m->pos_embedding.size; i++)
        m->pos_embedding.data[i] = (float)rng_normal(&r);
}

void tmodel_free(tmodel *m)
{
    tensor_free(&m->pos_embedding);
    tensor_free(&m->embedding);
    for (size_t l = 0; l < TMODEL_MAX_LAYERS; l++)
        tblock_free(&m->blk[l]);
    tensor_free(&m->head_weight);
    tensor_free(&m->head_bias);
    m->nparams = 0;
    m->total = 0;
}

tparam *tmodel_find(tmodel *m, const char *name)
{
    return tparam_find(m->param, m->nparams, name);
}

void tmodel_copy_params(tmodel *dst, const tmodel *src)
{
    tparam_copy(dst->param, src->param, src->nparams);
}

/* ---- the cache ---------------------------------------------------------- */

void *tcache_calloc(size_t a, size_t b, size_t c, size_t elem, int *failed)
{
    size_t n, bytes;
    void *p;
    if (size_mul(a, b, &n) || size_mul(n, c, &n) || size_mul(n, elem, &bytes) ||
        (p = calloc(bytes ? bytes : 1, 1)) == NULL) {
        *failed = 1;
        return NULL;
    }
    return p;
}

void tblock_cache_alloc(tblock_cache *b, const tmodel_config *cfg, size_t BT, size_t Tmax,
                        int *failed)
{
    const size_t d = cfg->hiddens, NH = cfg->heads, H = cfg->ffn;
    memset(b, 0, sizeof *b);
    b->Q = tcache_calloc(BT, d, 1, sizeof(float), failed);
    b->K = tcache_calloc(BT, d, 1, sizeof(float), failed);
    b->V = tcache_calloc(BT, d, 1, sizeof(float), failed);
    b->concat = tcache_calloc(BT, d, 1, sizeof(float), failed);
    b->A = tcache_calloc(BT, NH, Tmax, sizeof(float), failed);
    b->Y = tcache_calloc(BT, d, 1, sizeof(float), failed);
    if (cfg->addnorm) {
        b->Z1 = tcache_calloc(BT, d, 1, sizeof(double), failed);
        b->mean1 = tcache_calloc(BT, 1, 1, sizeof(double), failed);
        b->rstd1 = tcache_calloc(BT, 1, 1, sizeof(double), failed);
        b->N1 = tcache_calloc(BT, d, 1, sizeof(float), failed);
    }
    if (H) {
        b->H = tcache_calloc(BT, H, 1, sizeof(float), failed);
        b->R = tcache_calloc(BT, H, 1, sizeof(float), failed);
        b->F = tcache_calloc(BT, d, 1, sizeof(float), failed);
        b->Z2 = tcache_calloc(BT, d, 1, sizeof(double), failed);
        b->mean2 = tcache_calloc(BT, 1, 1, sizeof(double), failed);
        b->rstd2 = tcache_calloc(BT, 1, 1, sizeof(double), failed);
        b->N2 = tcache_calloc(BT, d, 1, sizeof(float), failed);
    }
}

void tblock_cache_free(tblock_cache *b)
{
    void *ps[] = {b->Q,  b->K,     b->V,     b->concat, b->A,     b->Y,     b->Z1,
                  b->mean1, b->rstd1, b->N1, b->H,      b->R,     b->F,     b->Z2,
                  b->mean2, b->rstd2, b->N2};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
        free(ps[i]);
    memset(b, 0, sizeof *b);
}

void tblock_scratch_alloc(tblock_scratch *s, size_t BT, size_t d, size_t H, int *failed)
{
    s->dY = tcache_calloc(BT, d, 1, sizeof(double), failed);
    s->dZ = tcache_calloc(BT, d, 1, sizeof(double), failed);
    s->dN1 = tcache_calloc(BT, d, 1, sizeof(double), failed);
    s->dF = tcache_calloc(BT, d, 1, sizeof(double), failed);
    s->dR = tcache_calloc(BT, H ? H : 1, 1, sizeof(double), failed);
    s->dH = tcache_calloc(BT, H ? H : 1, 1, sizeof(double), failed);
}

void tblock_scratch_free(tblock_scratch *s)
{
    FREE_EACH(s->dY, s->dZ, s->dN1, s->dF, s->dR, s->dH);
    memset(s, 0, sizeof *s);
}

int tcache_alloc(tcache *c, const tmodel *m, size_t Bmax, size_t Tmax, char *err, size_t errlen)
{
    const size_t d = m->cfg.hiddens, C = m->cfg.classes;
    size_t BT;
    int failed = 0;
    memset(c, 0, sizeof *c);
    c->Bmax = Bmax;
    c->Tmax = Tmax;
    if (size_mul(Bmax, Tmax, &BT)) {
        snprintf(err, errlen, _("a batch of %zu × %zu positions is too large"), Bmax, Tmax);
        return -1;
    }
    c->P = tcache_calloc(Tmax, d, 1, sizeof(float), &failed);
    c->X = tcache_calloc(BT, d, 1, sizeof(float), &failed);
    for (size_t l = 0; l < m->cfg.layers; l++)
        tblock_cache_alloc(&c->blk[l], &m->cfg, BT, Tmax, &failed);
    c->logits = tcache_calloc(BT, C, 1, sizeof(float), &failed);
    c->dlogits = tcache_calloc(BT, C, 1, sizeof(double), &failed);
    c->dout = tcache_calloc(BT, d, 1, sizeof(double), &failed);
    c->din = tcache_calloc(BT, d, 1, sizeof(double), &failed);
    tblock_scratch_alloc(&c->scratch, BT, d, m->cfg.ffn, &failed);
    if (failed) {
        tcache_free(c);
        snprintf(err, errlen, _("out of memory for a batch of %zu × %zu positions"), Bmax, Tmax);
        return -1;
    }
    /* the chapter's P (d2l's PositionalEncoding, interleaved sin and cos) */
    posenc_fill(c->P, Tmax, d, 10000.0);
    return 0;
}

void tcache_free(tcache *c)
{
    FREE_EACH(c->P, c->X, c->logits, c->dlogits, c->dout, c->din);
    for (size_t l = 0; l < TMODEL_MAX_LAYERS; l++)
        tblock_cache_free(&c->blk[l]);
    tblock_scratch_free(&c->scratch);
    memset(c, 0, sizeof *c);
}

const float *tblock_out(const tblock_cache *b, const tmodel_config *cfg)
{
    return cfg->ffn ? b->N2 : cfg->addnorm ? b->N1 : b->Y;
}

const float *tcache_block_out(const tcache *c, const tmodel *m, size_t l)
{
    return tblock_out(&c->blk[l], &m->cfg);
}

const float *tcache_features(const tcache *c, const tmodel *m)
{
    return tcache_block_out(c, m, m->cfg.layers - 1);
}

/* ---- forward ------------------------------------------------------------ */

const float *tmodel_positions(const tmodel *m, const float *sinusoid)
{
    return m->cfg.learned ? m->pos_embedding.data : m->cfg.posenc ? sinusoid : NULL;
}

static mha_trace block_trace(const tblock_cache *b)
{
    mha_trace trace = {0};
    trace.Q = b->Q;
    trace.K = b->K;
    trace.V = b->V;
    trace.concat = b->concat;
    return trace;
}

int tblock_forward(tblock_cache *bc, const tblock *b, const tmodel_config *cfg, const float *x,
                   size_t B, size_t T, const mha_masks *mask, const mha_dropout *drop, char *err,
                   size_t errlen)
{
    const size_t d = cfg->hiddens, BT = B * T, H = cfg->ffn;
    mha_trace trace = block_trace(bc);

    /* 2. Y (B, T, d) = MultiHeadAttention(X_l, X_l, X_l, valid_lens), keeping
     *    Q, K, V and the heads' outputs for the backward pass */
    if (mha_forward(bc->Y, bc->A, &trace, x, x, x, B, T, T, &b->mha, mask, drop, err, errlen))
        return -1;
    if (!cfg->addnorm)
        return 0;
    /* 3. addnorm1: Z1 = X_l + Y, N1 = LayerNorm(Z1) over the d features */
    residual_forward(bc->Z1, x, bc->Y, BT * d);
    layernorm_forward(bc->N1, bc->mean1, bc->rstd1, bc->Z1, b->ln1_weight.data,
                      b->ln1_bias.data, BT, d);
    if (!H)
        return 0;
    /* 4. ffn: H = dense1(N1) (B, T, H), R = ReLU(H), F = dense2(R) (B, T, d) */
    linear_forward(bc->H, bc->N1, BT, &b->dense1);
    relu_forward(bc->R, bc->H, BT * H);
    linear_forward(bc->F, bc->R, BT, &b->dense2);
    /* 5. addnorm2: Z2 = N1 + F, N2 = LayerNorm(Z2) */
    residual_forward(bc->Z2, bc->N1, bc->F, BT * d);
    layernorm_forward(bc->N2, bc->mean2, bc->rstd2, bc->Z2, b->ln2_weight.data,
                      b->ln2_bias.data, BT, d);
    return 0;
}

int tmodel_forward(tmodel *m, tcache *c, const int *tokens, const long *lens, size_t B,
                   size_t T, const mha_dropout *drop, char *err, size_t errlen)
{
    const size_t d = m->cfg.hiddens;
    const double sqrt_d = sqrt((double)d);
    mha_masks mask = {lens, 0, m->cfg.causal, m->cfg.window};
    linear head = {m->head_weight, m->head_bias};
    const float *x;

    if (B > c->Bmax || T > c->Tmax) {
        snprintf(err, errlen, _("a batch of %zu × %zu positions exceeds the cache's %zu × %zu"), B,
                 T, c->Bmax, c->Tmax);
        return -1;
    }
    if (m->cfg.learned && T > m->cfg.max_len) {
        snprintf(err, errlen, _("sequences of %zu positions, but pos_embedding holds %zu (max_len)"),
                 T, m->cfg.max_len);
        return -1;
    }
    c->B = B;
    c->T = T;

    /* 1. X (B, T, d) = embedding[token] · √d (+ P[t], the sinusoid or the
     *    learned pos_embedding[0, t]) */
    embedding_forward(c->X, m->embedding.data, tokens, tmodel_positions(m, c->P), B, T, d,
                      sqrt_d);

    /* 2–5. the blocks, each reading the one below */
    x = c->X;
    for (size_t l = 0; l < m->cfg.layers; l++) {
        if (tblock_forward(&c->blk[l], &m->blk[l], &m->cfg, x, B, T, &mask, drop, err, errlen))
            return -1;
        x = tcache_block_out(c, m, l);
    }

    /* 6. logits (B, T, C) = X_L · head.weightᵀ + head.bias */
    linear_forward(c->logits, x, B * T, &head);
    return 0;
}

double tmodel_loss(const tcache *c, const tmodel *m, const int *targets, size_t *count,
                   size_t *correct)
{
    return crossentropy_forward(c->logits, targets, c->B * c->T, m->cfg.classes, count, correct);
}

/* ---- backward ----------------------------------------------------------- */

int tblock_backward(double *dx, const tblock_grads *g, tblock_scratch *s, tblock_cache *bc,
                    const tblock *b, const tmodel_config *cfg, const double *dout,
                    const float *x, size_t B, size_t T, const mha_masks *mask,
                    const mha_dropout *drop, char *err, size_t errlen)
{
    const size_t d = cfg->hiddens, H = cfg->ffn, BT = B * T, n = BT * d;
    mha_trace trace = block_trace(bc);
    const double *dN = dout; /* the gradient of N1 (or Y) */

    memset(dx, 0, n * sizeof *dx);
    if (H) {
        /* 5'. addnorm2: dZ2 from LayerNorm's backward, then the residual
         *     gives it to N1 and to F */
        memset(s->dZ, 0, n * sizeof *s->dZ);
        layernorm_backward(s->dZ, g->dln2_weight, g->dln2_bias, dout, bc->Z2, b->ln2_weight.data,
                           bc->mean2, bc->rstd2, BT, d);
        memset(s->dN1, 0, n * sizeof *s->dN1);
        memset(s->dF, 0, n * sizeof *s->dF);
        residual_backward(s->dN1, s->dF, s->dZ, n);
        /* 4'. ffn: dR (B, T, H) = dF · dense2, dH = dR where H > 0,
         *     dN1 += dH · dense1, and the dense layers' gradients */
        memset(s->dR, 0, BT * H * sizeof *s->dR);
        linear_backward(s->dR, g->ddense2_weight, g->ddense2_bias, s->dF, bc->R, BT, &b->dense2);
        memset(s->dH, 0, BT * H * sizeof *s->dH);
        relu_backward(s->dH, s->dR, bc->H, BT * H);
        linear_backward(s->dN1, g->ddense1_weight, g->ddense1_bias, s->dH, bc->N1, BT,
                        &b->dense1);
        dN = s->dN1;
    }

    if (cfg->addnorm) {
        /* 3'. addnorm1: dZ1 from LayerNorm's backward; the residual gives it
         *     to X_l (dx) and to Y */
        memset(s->dZ, 0, n * sizeof *s->dZ);
        layernorm_backward(s->dZ, g->dln1_weight, g->dln1_bias, dN, bc->Z1, b->ln1_weight.data,
                           bc->mean1, bc->rstd1, BT, d);
        memset(s->dY, 0, n * sizeof *s->dY);
        residual_backward(dx, s->dY, s->dZ, n);
    } else {
        memcpy(s->dY, dN, n * sizeof *s->dY);
    }

    /* 2'. Y = MultiHeadAttention(X_l, X_l, X_l): queries, keys and values
     *     are all X_l, so their three gradients add up in dx */
    return mha_backward_additive(dx, dx, dx, &g->mha, &g->add, s->dY, bc->A, &trace, x, x, x, B,
                                 T, T, &b->mha, mask, drop, err, errlen);
}

int tmodel_backward(double *grads, tcache *c, const tmodel *m, const int *tokens,
                    const long *lens, const int *targets, double scale,
                    const mha_dropout *drop, char *err, size_t errlen)
{
    const size_t d = m->cfg.hiddens, C = m->cfg.classes, B = c->B, T = c->T, BT = B * T;
    const double sqrt_d = sqrt((double)d);
    mha_masks mask = {lens, 0, m->cfg.causal, m->cfg.window};
    linear head = {m->head_weight, m->head_bias};
    double *dE = tparam_grad(m->param, m->nparams, grads, &m->embedding);
    double *dout = c->dout, *din = c->din;

    /* 7. d logits (B, T, C) = (softmax(logits) − one-hot(target)) · scale,
     *    zero where there is no target */
    crossentropy_backward(c->dlogits, c->logits, targets, BT, C, scale);

    /* 6'. logits = X_L · head.weightᵀ + head.bias:
     *     d head.weight (C, d) += d logitsᵀ · X_L, d head.bias (C,) += Σ d logits,
     *     dout (B, T, d) = d logits · head.weight */
    memset(dout, 0, BT * d * sizeof *dout);
    linear_backward(dout, tparam_grad(m->param, m->nparams, grads, &m->head_weight),
                    tparam_grad(m->param, m->nparams, grads, &m->head_bias), c->dlogits,
                    tcache_features(c, m), BT, &head);

    /* 5'–2'. the blocks from the top: the gradient of a block's input is
     *        the gradient of the output of the block below */
    for (size_t l = m->cfg.layers; l-- > 0;) {
        const float *x = l ? tcache_block_out(c, m, l - 1) : c->X;
        tblock_grads g;
        double *tmp;
        tblock_grads_find(&g, m->param, m->nparams, grads, &m->blk[l]);
        if (tblock_backward(din, &g, &c->scratch, &c->blk[l], &m->blk[l], &m->cfg, dout, x, B, T,
                            &mask, drop, err, errlen))
            return -1;
        tmp = dout;
        dout = din;
        din = tmp;
    }

    /* 1'. X = embedding[token] · √d (+ P): d embedding[token] (d,) += dX · √d
     *     (the sinusoid is a constant; a learned P gets dX summed over the
     *     batch: d pos_embedding[0, t] (d,) += Σ_b dX[b, t]) */
    embedding_backward(dE, dout, tokens, BT, d, sqrt_d);
    if (m->cfg.learned) {
        double *dP = tparam_grad(m->param, m->nparams, grads, &m->pos_embedding);
        for (size_t b = 0; b < B; b++)
            for (size_t t = 0; t < T; t++)
                for (size_t i = 0; i < d; i++)
                    dP[t * d + i] += dout[(b * T + t) * d + i];
    }
    return 0;
}
