/* train_model.c — the model of train_model.h: parameters, the forward pass
 * block by block (mha_forward for the attention, layers.h for the rest)
 * and the backward pass as naive loops, the same layers in reverse. */
#include "train_model.h"

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

int tmodel_config_check(const tmodel_config *cfg, char *err, size_t errlen)
{
    if (cfg->vocab < 1 || cfg->classes < 1 || cfg->hiddens < 1 || cfg->heads < 1) {
        snprintf(err, errlen, "the model needs a vocabulary, classes, hiddens and heads");
        return -1;
    }
    if (cfg->hiddens % cfg->heads != 0) {
        snprintf(err, errlen, "num_hiddens %zu is not divisible by num_heads %zu", cfg->hiddens,
                 cfg->heads);
        return -1;
    }
    if (!(cfg->dropout >= 0.0 && cfg->dropout < 1.0)) {
        snprintf(err, errlen, "dropout %g is not in [0, 1)", cfg->dropout);
        return -1;
    }
    if (cfg->layers > TMODEL_MAX_LAYERS) {
        snprintf(err, errlen, "%zu layers (at most %d)", cfg->layers, TMODEL_MAX_LAYERS);
        return -1;
    }
    return 0;
}

int tmodel_is_stack(const tmodel_config *cfg)
{
    return cfg->layers > 1 || cfg->ffn > 0;
}

static int alloc2(tensor *t, size_t r, size_t c, char *err, size_t errlen)
{
    size_t shape[2] = {r, c};
    return tensor_alloc(t, c ? 2 : 1, shape, err, errlen);
}

/* The parameter t under the key prefix + name ("blks.block0." +
 * "attention.W_q.weight", or "" + "W_q.weight"). */
static void add_param(tmodel *m, const char *prefix, const char *name, tensor *t)
{
    snprintf(m->param[m->nparams].name, sizeof m->param[0].name, "%s%s", prefix, name);
    m->param[m->nparams].t = t;
    m->param[m->nparams].offset = m->total;
    m->nparams++;
    m->total += t->size;
}

static int block_alloc(tblock *b, const tmodel_config *cfg, char *err, size_t errlen)
{
    const size_t d = cfg->hiddens, H = cfg->ffn;
    b->mha.num_heads = cfg->heads;
    b->mha.num_hiddens = d;
    b->mha.score = SCORE_DOT;
    return alloc2(&b->mha.W_q.weight, d, d, err, errlen) ||
           alloc2(&b->mha.W_k.weight, d, d, err, errlen) ||
           alloc2(&b->mha.W_v.weight, d, d, err, errlen) ||
           alloc2(&b->mha.W_o.weight, d, d, err, errlen) ||
           (cfg->bias && (alloc2(&b->mha.W_q.bias, d, 0, err, errlen) ||
                          alloc2(&b->mha.W_k.bias, d, 0, err, errlen) ||
                          alloc2(&b->mha.W_v.bias, d, 0, err, errlen) ||
                          alloc2(&b->mha.W_o.bias, d, 0, err, errlen))) ||
           (cfg->addnorm && (alloc2(&b->ln1_weight, d, 0, err, errlen) ||
                             alloc2(&b->ln1_bias, d, 0, err, errlen))) ||
           (H && (alloc2(&b->dense1.weight, H, d, err, errlen) ||
                  alloc2(&b->dense1.bias, H, 0, err, errlen) ||
                  alloc2(&b->dense2.weight, d, H, err, errlen) ||
                  alloc2(&b->dense2.bias, d, 0, err, errlen) ||
                  alloc2(&b->ln2_weight, d, 0, err, errlen) ||
                  alloc2(&b->ln2_bias, d, 0, err, errlen)));
}

/* Block b's parameters in state_dict order, under the one-layer keys or
 * d2l's TransformerEncoder keys. */
static void block_params(tmodel *m, size_t l)
{
    tblock *b = &m->blk[l];
    const int stack = tmodel_is_stack(&m->cfg);
    const int bias = m->cfg.bias;
    char pre[16], att[32], an1[32];
    if (stack) {
        snprintf(pre, sizeof pre, "blks.block%zu.", l);
        snprintf(att, sizeof att, "%sattention.", pre);
        snprintf(an1, sizeof an1, "%saddnorm1.ln.", pre);
    } else {
        pre[0] = att[0] = '\0';
        snprintf(an1, sizeof an1, "addnorm.ln.");
    }
    add_param(m, att, "W_q.weight", &b->mha.W_q.weight);
    if (bias)
        add_param(m, att, "W_q.bias", &b->mha.W_q.bias);
    add_param(m, att, "W_k.weight", &b->mha.W_k.weight);
    if (bias)
        add_param(m, att, "W_k.bias", &b->mha.W_k.bias);
    add_param(m, att, "W_v.weight", &b->mha.W_v.weight);
    if (bias)
        add_param(m, att, "W_v.bias", &b->mha.W_v.bias);
    add_param(m, att, "W_o.weight", &b->mha.W_o.weight);
    if (bias)
        add_param(m, att, "W_o.bias", &b->mha.W_o.bias);
    if (m->cfg.addnorm) {
        add_param(m, an1, "weight", &b->ln1_weight);
        add_param(m, an1, "bias", &b->ln1_bias);
    }
    if (m->cfg.ffn) {
        char ffn[32], an2[32];
        snprintf(ffn, sizeof ffn, "%sffn.", pre);
        snprintf(an2, sizeof an2, "%saddnorm2.ln.", pre);
        add_param(m, ffn, "dense1.weight", &b->dense1.weight);
        add_param(m, ffn, "dense1.bias", &b->dense1.bias);
        add_param(m, ffn, "dense2.weight", &b->dense2.weight);
        add_param(m, ffn, "dense2.bias", &b->dense2.bias);
        add_param(m, an2, "weight", &b->ln2_weight);
        add_param(m, an2, "bias", &b->ln2_bias);
    }
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
    if (alloc2(&m->embedding, cfg->vocab, d, err, errlen))
        goto fail;
    for (size_t l = 0; l < m->cfg.layers; l++)
        if (block_alloc(&m->blk[l], &m->cfg, err, errlen))
            goto fail;
    if (alloc2(&m->head_weight, cfg->classes, d, err, errlen) ||
        alloc2(&m->head_bias, cfg->classes, 0, err, errlen))
        goto fail;
    /* state_dict order */
    add_param(m, "", "embedding.weight", &m->embedding);
    for (size_t l = 0; l < m->cfg.layers; l++)
        block_params(m, l);
    add_param(m, "", "head.weight", &m->head_weight);
    add_param(m, "", "head.bias", &m->head_bias);
    return 0;
fail:
    tmodel_free(m);
    return -1;
}

/* nn.Linear's default: weight and bias uniform in ±1/sqrt(in_features). */
static void init_uniform(tensor *t, size_t in, rng *r)
{
    const double bound = 1.0 / sqrt((double)in);
    for (size_t i = 0; i < t->size; i++)
        t->data[i] = (float)((2.0 * rng_uniform(r) - 1.0) * bound);
}

/* LayerNorm: weight 1, bias 0 */
static void init_layernorm(tensor *w, tensor *b)
{
    for (size_t i = 0; i < w->size; i++) {
        w->data[i] = 1.0f;
        b->data[i] = 0.0f;
    }
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
    for (size_t l = 0; l < m->cfg.layers; l++) {
        tblock *b = &m->blk[l];
        linear *ls[4] = {&b->mha.W_q, &b->mha.W_k, &b->mha.W_v, &b->mha.W_o};
        for (size_t i = 0; i < 4; i++) {
            init_uniform(&ls[i]->weight, d, &r);
            if (ls[i]->bias.data)
                init_uniform(&ls[i]->bias, d, &r);
        }
        init_layernorm(&b->ln1_weight, &b->ln1_bias);
        if (m->cfg.ffn) {
            init_uniform(&b->dense1.weight, d, &r);
            init_uniform(&b->dense1.bias, d, &r);
            init_uniform(&b->dense2.weight, m->cfg.ffn, &r);
            init_uniform(&b->dense2.bias, m->cfg.ffn, &r);
            init_layernorm(&b->ln2_weight, &b->ln2_bias);
        }
    }
    init_uniform(&m->head_weight, d, &r);
    init_uniform(&m->head_bias, d, &r);
}

void tmodel_free(tmodel *m)
{
    tensor_free(&m->embedding);
    for (size_t l = 0; l < TMODEL_MAX_LAYERS; l++) {
        tblock *b = &m->blk[l];
        tensor *ts[] = {&b->mha.W_q.weight, &b->mha.W_k.weight, &b->mha.W_v.weight,
                        &b->mha.W_o.weight, &b->mha.W_q.bias,   &b->mha.W_k.bias,
                        &b->mha.W_v.bias,   &b->mha.W_o.bias,   &b->ln1_weight,
                        &b->ln1_bias,       &b->dense1.weight,  &b->dense1.bias,
                        &b->dense2.weight,  &b->dense2.bias,    &b->ln2_weight,
                        &b->ln2_bias};
        for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
            tensor_free(ts[i]);
    }
    tensor_free(&m->head_weight);
    tensor_free(&m->head_bias);
    m->nparams = 0;
    m->total = 0;
}

tmodel_param *tmodel_find(tmodel *m, const char *name)
{
    for (size_t i = 0; i < m->nparams; i++)
        if (strcmp(m->param[i].name, name) == 0)
            return &m->param[i];
    return NULL;
}

void tmodel_copy_params(tmodel *dst, const tmodel *src)
{
    for (size_t i = 0; i < src->nparams; i++)
        memcpy(dst->param[i].t->data, src->param[i].t->data, src->param[i].t->size * sizeof(float));
}

/* ---- the cache ---------------------------------------------------------- */

static void *alloc_n(size_t a, size_t b, size_t c, size_t elem, int *failed)
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

int tcache_alloc(tcache *c, const tmodel *m, size_t Bmax, size_t Tmax, char *err, size_t errlen)
{
    const size_t d = m->cfg.hiddens, NH = m->cfg.heads, C = m->cfg.classes, H = m->cfg.ffn;
    const int an = m->cfg.addnorm;
    size_t BT;
    int failed = 0;
    memset(c, 0, sizeof *c);
    c->Bmax = Bmax;
    c->Tmax = Tmax;
    if (size_mul(Bmax, Tmax, &BT)) {
        snprintf(err, errlen, "a batch of %zu × %zu positions is too large", Bmax, Tmax);
        return -1;
    }
    c->P = alloc_n(Tmax, d, 1, sizeof(float), &failed);
    c->X = alloc_n(BT, d, 1, sizeof(float), &failed);
    for (size_t l = 0; l < m->cfg.layers; l++) {
        tblock_cache *b = &c->blk[l];
        b->Q = alloc_n(BT, d, 1, sizeof(float), &failed);
        b->K = alloc_n(BT, d, 1, sizeof(float), &failed);
        b->V = alloc_n(BT, d, 1, sizeof(float), &failed);
        b->concat = alloc_n(BT, d, 1, sizeof(float), &failed);
        b->A = alloc_n(BT, NH, Tmax, sizeof(float), &failed);
        b->Y = alloc_n(BT, d, 1, sizeof(float), &failed);
        if (an) {
            b->Z1 = alloc_n(BT, d, 1, sizeof(double), &failed);
            b->mean1 = alloc_n(BT, 1, 1, sizeof(double), &failed);
            b->rstd1 = alloc_n(BT, 1, 1, sizeof(double), &failed);
            b->N1 = alloc_n(BT, d, 1, sizeof(float), &failed);
        }
        if (H) {
            b->H = alloc_n(BT, H, 1, sizeof(float), &failed);
            b->R = alloc_n(BT, H, 1, sizeof(float), &failed);
            b->F = alloc_n(BT, d, 1, sizeof(float), &failed);
            b->Z2 = alloc_n(BT, d, 1, sizeof(double), &failed);
            b->mean2 = alloc_n(BT, 1, 1, sizeof(double), &failed);
            b->rstd2 = alloc_n(BT, 1, 1, sizeof(double), &failed);
            b->N2 = alloc_n(BT, d, 1, sizeof(float), &failed);
        }
    }
    c->logits = alloc_n(BT, C, 1, sizeof(float), &failed);
    c->dlogits = alloc_n(BT, C, 1, sizeof(double), &failed);
    c->dout = alloc_n(BT, d, 1, sizeof(double), &failed);
    c->din = alloc_n(BT, d, 1, sizeof(double), &failed);
    c->dY = alloc_n(BT, d, 1, sizeof(double), &failed);
    c->dZ = alloc_n(BT, d, 1, sizeof(double), &failed);
    c->dN1 = alloc_n(BT, d, 1, sizeof(double), &failed);
    c->dF = alloc_n(BT, d, 1, sizeof(double), &failed);
    c->dR = alloc_n(BT, H ? H : 1, 1, sizeof(double), &failed);
    c->dH = alloc_n(BT, H ? H : 1, 1, sizeof(double), &failed);
    if (failed) {
        tcache_free(c);
        snprintf(err, errlen, "out of memory for a batch of %zu × %zu positions", Bmax, Tmax);
        return -1;
    }
    /* the chapter's P (d2l's PositionalEncoding, interleaved sin and cos) */
    posenc_fill(c->P, Tmax, d, 10000.0);
    return 0;
}

void tcache_free(tcache *c)
{
    free(c->P);
    free(c->X);
    for (size_t l = 0; l < TMODEL_MAX_LAYERS; l++) {
        tblock_cache *b = &c->blk[l];
        free(b->Q);
        free(b->K);
        free(b->V);
        free(b->concat);
        free(b->A);
        free(b->Y);
        free(b->Z1);
        free(b->mean1);
        free(b->rstd1);
        free(b->N1);
        free(b->H);
        free(b->R);
        free(b->F);
        free(b->Z2);
        free(b->mean2);
        free(b->rstd2);
        free(b->N2);
    }
    free(c->logits);
    free(c->dlogits);
    free(c->dout);
    free(c->din);
    free(c->dY);
    free(c->dZ);
    free(c->dN1);
    free(c->dF);
    free(c->dR);
    free(c->dH);
    memset(c, 0, sizeof *c);
}

const float *tcache_block_out(const tcache *c, const tmodel *m, size_t l)
{
    const tblock_cache *b = &c->blk[l];
    return m->cfg.ffn ? b->N2 : m->cfg.addnorm ? b->N1 : b->Y;
}

const float *tcache_features(const tcache *c, const tmodel *m)
{
    return tcache_block_out(c, m, m->cfg.layers - 1);
}

/* ---- forward ------------------------------------------------------------ */

static mha_trace block_trace(const tblock_cache *b)
{
    mha_trace trace = {0};
    trace.Q = b->Q;
    trace.K = b->K;
    trace.V = b->V;
    trace.concat = b->concat;
    return trace;
}

/* Block l on its input x (B, T, d), into c->blk[l]. */
static int block_forward(tblock_cache *bc, const tblock *b, const tmodel *m, const float *x,
                         size_t B, size_t T, const mha_masks *mask, const mha_dropout *drop,
                         char *err, size_t errlen)
{
    const size_t d = m->cfg.hiddens, BT = B * T, H = m->cfg.ffn;
    mha_trace trace = block_trace(bc);

    /* 2. Y (B, T, d) = MultiHeadAttention(X_l, X_l, X_l, valid_lens), keeping
     *    Q, K, V and the heads' outputs for the backward pass */
    if (mha_forward(bc->Y, bc->A, &trace, x, x, x, B, T, T, &b->mha, mask, drop, err, errlen))
        return -1;
    if (!m->cfg.addnorm)
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
    mha_masks mask = {lens, 0, m->cfg.causal};
    linear head = {m->head_weight, m->head_bias};
    const float *x;

    if (B > c->Bmax || T > c->Tmax) {
        snprintf(err, errlen, "a batch of %zu × %zu positions exceeds the cache's %zu × %zu", B,
                 T, c->Bmax, c->Tmax);
        return -1;
    }
    c->B = B;
    c->T = T;

    /* 1. X (B, T, d) = embedding[token] · √d (+ P[t]) */
    for (size_t b = 0; b < B; b++)
        for (size_t t = 0; t < T; t++) {
            const float *e = m->embedding.data + (size_t)tokens[b * T + t] * d; /* (d,) */
            float *xr = c->X + (b * T + t) * d;
            for (size_t i = 0; i < d; i++)
                xr[i] = (float)(e[i] * sqrt_d + (m->cfg.posenc ? c->P[t * d + i] : 0.0));
        }

    /* 2–5. the blocks, each reading the one below */
    x = c->X;
    for (size_t l = 0; l < m->cfg.layers; l++) {
        if (block_forward(&c->blk[l], &m->blk[l], m, x, B, T, &mask, drop, err, errlen))
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
    const size_t C = m->cfg.classes;
    size_t n = 0, right = 0;
    double loss = 0.0;
    for (size_t r = 0; r < c->B * c->T; r++) {
        const float *z = c->logits + r * C; /* (C,) */
        double max, sum = 0.0;
        size_t arg = 0;
        if (targets[r] < 0)
            continue;
        max = z[0];
        for (size_t k = 1; k < C; k++)
            if (z[k] > max) {
                max = z[k];
                arg = k;
            }
        for (size_t k = 0; k < C; k++)
            sum += attn_exp((double)z[k] - max);
        /* −log softmax(z)[target] = logsumexp(z) − z[target] */
        loss += max + attn_log(sum) - z[targets[r]];
        n++;
        right += arg == (size_t)targets[r];
    }
    if (count)
        *count = n;
    if (correct)
        *correct = right;
    return loss;
}

/* ---- backward ----------------------------------------------------------- */

static double *grad_of(double *grads, const tmodel *m, const tensor *t)
{
    if (!t->data)
        return NULL;
    for (size_t i = 0; i < m->nparams; i++)
        if (m->param[i].t == t)
            return grads + m->param[i].offset;
    return NULL;
}

/* Block l backward: from dout (B, T, d), the gradient of its output, every
 * parameter's gradient += and din (B, T, d) = the gradient of its input x. */
static int block_backward(double *grads, double *din, tcache *c, size_t l, const tmodel *m,
                          const double *dout, const float *x, const mha_masks *mask,
                          const mha_dropout *drop, char *err, size_t errlen)
{
    const size_t d = m->cfg.hiddens, H = m->cfg.ffn, B = c->B, T = c->T, BT = B * T;
    const size_t n = BT * d;
    const tblock *b = &m->blk[l];
    tblock_cache *bc = &c->blk[l];
    mha_trace trace = block_trace(bc);
    mha_grads g;
    const double *dN = dout; /* the gradient of N1 (or Y) */

    memset(din, 0, n * sizeof *din);
    if (H) {
        /* 5'. addnorm2: dZ2 from LayerNorm's backward, then the residual
         *     gives it to N1 and to F */
        memset(c->dZ, 0, n * sizeof *c->dZ);
        layernorm_backward(c->dZ, grad_of(grads, m, &b->ln2_weight),
                           grad_of(grads, m, &b->ln2_bias), dout, bc->Z2, b->ln2_weight.data,
                           bc->mean2, bc->rstd2, BT, d);
        memset(c->dN1, 0, n * sizeof *c->dN1);
        memset(c->dF, 0, n * sizeof *c->dF);
        residual_backward(c->dN1, c->dF, c->dZ, n);
        /* 4'. ffn: dR (B, T, H) = dF · dense2, dH = dR where H > 0,
         *     dN1 += dH · dense1, and the dense layers' gradients */
        memset(c->dR, 0, BT * H * sizeof *c->dR);
        linear_backward(c->dR, grad_of(grads, m, &b->dense2.weight),
                        grad_of(grads, m, &b->dense2.bias), c->dF, bc->R, BT, &b->dense2);
        memset(c->dH, 0, BT * H * sizeof *c->dH);
        relu_backward(c->dH, c->dR, bc->H, BT * H);
        linear_backward(c->dN1, grad_of(grads, m, &b->dense1.weight),
                        grad_of(grads, m, &b->dense1.bias), c->dH, bc->N1, BT, &b->dense1);
        dN = c->dN1;
    }

    if (m->cfg.addnorm) {
        /* 3'. addnorm1: dZ1 from LayerNorm's backward; the residual gives it
         *     to X_l (din) and to Y */
        memset(c->dZ, 0, n * sizeof *c->dZ);
        layernorm_backward(c->dZ, grad_of(grads, m, &b->ln1_weight),
                           grad_of(grads, m, &b->ln1_bias), dN, bc->Z1, b->ln1_weight.data,
                           bc->mean1, bc->rstd1, BT, d);
        memset(c->dY, 0, n * sizeof *c->dY);
        residual_backward(din, c->dY, c->dZ, n);
    } else {
        memcpy(c->dY, dN, n * sizeof *c->dY);
    }

    /* 2'. Y = MultiHeadAttention(X_l, X_l, X_l): queries, keys and values
     *     are all X_l, so their three gradients add up in din */
    g.dW_q = grad_of(grads, m, &b->mha.W_q.weight);
    g.db_q = grad_of(grads, m, &b->mha.W_q.bias);
    g.dW_k = grad_of(grads, m, &b->mha.W_k.weight);
    g.db_k = grad_of(grads, m, &b->mha.W_k.bias);
    g.dW_v = grad_of(grads, m, &b->mha.W_v.weight);
    g.db_v = grad_of(grads, m, &b->mha.W_v.bias);
    g.dW_o = grad_of(grads, m, &b->mha.W_o.weight);
    g.db_o = grad_of(grads, m, &b->mha.W_o.bias);
    return mha_backward(din, din, din, &g, c->dY, bc->A, &trace, x, x, x, B, T, T, &b->mha, mask,
                        drop, err, errlen);
}

int tmodel_backward(double *grads, tcache *c, const tmodel *m, const int *tokens,
                    const long *lens, const int *targets, double scale,
                    const mha_dropout *drop, char *err, size_t errlen)
{
    const size_t d = m->cfg.hiddens, C = m->cfg.classes, B = c->B, T = c->T, BT = B * T;
    const double sqrt_d = sqrt((double)d);
    mha_masks mask = {lens, 0, m->cfg.causal};
    linear head = {m->head_weight, m->head_bias};
    double *dE = grad_of(grads, m, &m->embedding);
    double *dout = c->dout, *din = c->din;

    /* 7. d logits (B, T, C) = (softmax(logits) − one-hot(target)) · scale,
     *    zero where there is no target */
    for (size_t r = 0; r < BT; r++) {
        const float *z = c->logits + r * C;
        double *dz = c->dlogits + r * C;
        double max, sum = 0.0;
        if (targets[r] < 0) {
            memset(dz, 0, C * sizeof *dz);
            continue;
        }
        max = z[0];
        for (size_t k = 1; k < C; k++)
            if (z[k] > max)
                max = z[k];
        for (size_t k = 0; k < C; k++)
            sum += (dz[k] = attn_exp((double)z[k] - max));
        for (size_t k = 0; k < C; k++)
            dz[k] = (dz[k] / sum - (k == (size_t)targets[r])) * scale;
    }

    /* 6'. logits = X_L · head.weightᵀ + head.bias:
     *     d head.weight (C, d) += d logitsᵀ · X_L, d head.bias (C,) += Σ d logits,
     *     dout (B, T, d) = d logits · head.weight */
    memset(dout, 0, BT * d * sizeof *dout);
    linear_backward(dout, grad_of(grads, m, &m->head_weight), grad_of(grads, m, &m->head_bias),
                    c->dlogits, tcache_features(c, m), BT, &head);

    /* 5'–2'. the blocks from the top: the gradient of a block's input is
     *        the gradient of the output of the block below */
    for (size_t l = m->cfg.layers; l-- > 0;) {
        const float *x = l ? tcache_block_out(c, m, l - 1) : c->X;
        double *tmp;
        if (block_backward(grads, din, c, l, m, dout, x, &mask, drop, err, errlen))
            return -1;
        tmp = dout;
        dout = din;
        din = tmp;
    }

    /* 1'. X = embedding[token] · √d (+ P): d embedding[token] (d,) += dX · √d
     *     (P is a constant) */
    for (size_t r = 0; r < BT; r++) {
        double *de = dE + (size_t)tokens[r] * d;
        for (size_t i = 0; i < d; i++)
            de[i] += dout[r * d + i] * sqrt_d;
    }
    return 0;
}
