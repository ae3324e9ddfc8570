/* train_model.c — the model of train_model.h: parameters, the forward pass
 * (mha_forward for the attention) and the backward pass as naive loops. */
#include "train_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention_backward.h"
#include "checked.h"
#include "posenc.h"
#include "rng.h"

#define LN_EPS 1e-5

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
    return 0;
}

static int alloc2(tensor *t, size_t r, size_t c, char *err, size_t errlen)
{
    size_t shape[2] = {r, c};
    return tensor_alloc(t, c ? 2 : 1, shape, err, errlen);
}

static void add_param(tmodel *m, const char *name, tensor *t)
{
    m->param[m->nparams].name = name;
    m->param[m->nparams].t = t;
    m->param[m->nparams].offset = m->total;
    m->nparams++;
    m->total += t->size;
}

int tmodel_alloc(tmodel *m, const tmodel_config *cfg, char *err, size_t errlen)
{
    const size_t d = cfg->hiddens;
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    if (tmodel_config_check(cfg, err, errlen))
        return -1;
    m->mha.num_heads = cfg->heads;
    m->mha.num_hiddens = d;
    m->mha.score = SCORE_DOT;
    if (alloc2(&m->embedding, cfg->vocab, d, err, errlen) ||
        alloc2(&m->mha.W_q.weight, d, d, err, errlen) ||
        alloc2(&m->mha.W_k.weight, d, d, err, errlen) ||
        alloc2(&m->mha.W_v.weight, d, d, err, errlen) ||
        alloc2(&m->mha.W_o.weight, d, d, err, errlen) ||
        (cfg->bias && (alloc2(&m->mha.W_q.bias, d, 0, err, errlen) ||
                       alloc2(&m->mha.W_k.bias, d, 0, err, errlen) ||
                       alloc2(&m->mha.W_v.bias, d, 0, err, errlen) ||
                       alloc2(&m->mha.W_o.bias, d, 0, err, errlen))) ||
        (cfg->addnorm && (alloc2(&m->ln_weight, d, 0, err, errlen) ||
                          alloc2(&m->ln_bias, d, 0, err, errlen))) ||
        alloc2(&m->head_weight, cfg->classes, d, err, errlen) ||
        alloc2(&m->head_bias, cfg->classes, 0, err, errlen)) {
        tmodel_free(m);
        return -1;
    }
    /* state_dict order */
    add_param(m, "embedding.weight", &m->embedding);
    add_param(m, "W_q.weight", &m->mha.W_q.weight);
    if (cfg->bias)
        add_param(m, "W_q.bias", &m->mha.W_q.bias);
    add_param(m, "W_k.weight", &m->mha.W_k.weight);
    if (cfg->bias)
        add_param(m, "W_k.bias", &m->mha.W_k.bias);
    add_param(m, "W_v.weight", &m->mha.W_v.weight);
    if (cfg->bias)
        add_param(m, "W_v.bias", &m->mha.W_v.bias);
    add_param(m, "W_o.weight", &m->mha.W_o.weight);
    if (cfg->bias)
        add_param(m, "W_o.bias", &m->mha.W_o.bias);
    if (cfg->addnorm) {
        add_param(m, "addnorm.ln.weight", &m->ln_weight);
        add_param(m, "addnorm.ln.bias", &m->ln_bias);
    }
    add_param(m, "head.weight", &m->head_weight);
    add_param(m, "head.bias", &m->head_bias);
    return 0;
}

/* nn.Linear's default: weight and bias uniform in ±1/sqrt(in_features). */
static void init_uniform(tensor *t, size_t in, rng *r)
{
    const double bound = 1.0 / sqrt((double)in);
    for (size_t i = 0; i < t->size; i++)
        t->data[i] = (float)((2.0 * rng_uniform(r) - 1.0) * bound);
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
    linear *ls[4] = {&m->mha.W_q, &m->mha.W_k, &m->mha.W_v, &m->mha.W_o};
    for (size_t i = 0; i < 4; i++) {
        init_uniform(&ls[i]->weight, d, &r);
        if (ls[i]->bias.data)
            init_uniform(&ls[i]->bias, d, &r);
    }
    /* LayerNorm: weight 1, bias 0 */
    for (size_t i = 0; i < m->ln_weight.size; i++) {
        m->ln_weight.data[i] = 1.0f;
        m->ln_bias.data[i] = 0.0f;
    }
    init_uniform(&m->head_weight, d, &r);
    init_uniform(&m->head_bias, d, &r);
}

void tmodel_free(tmodel *m)
{
    tensor_free(&m->embedding);
    tensor_free(&m->mha.W_q.weight);
    tensor_free(&m->mha.W_k.weight);
    tensor_free(&m->mha.W_v.weight);
    tensor_free(&m->mha.W_o.weight);
    tensor_free(&m->mha.W_q.bias);
    tensor_free(&m->mha.W_k.bias);
    tensor_free(&m->mha.W_v.bias);
    tensor_free(&m->mha.W_o.bias);
    tensor_free(&m->ln_weight);
    tensor_free(&m->ln_bias);
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
    const size_t d = m->cfg.hiddens, NH = m->cfg.heads, C = m->cfg.classes;
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
    c->Q = alloc_n(BT, d, 1, sizeof(float), &failed);
    c->K = alloc_n(BT, d, 1, sizeof(float), &failed);
    c->V = alloc_n(BT, d, 1, sizeof(float), &failed);
    c->concat = alloc_n(BT, d, 1, sizeof(float), &failed);
    c->A = alloc_n(BT, NH, Tmax, sizeof(float), &failed);
    c->Y = alloc_n(BT, d, 1, sizeof(float), &failed);
    c->N = alloc_n(BT, d, 1, sizeof(float), &failed);
    c->mean = alloc_n(BT, 1, 1, sizeof(double), &failed);
    c->rstd = alloc_n(BT, 1, 1, sizeof(double), &failed);
    c->logits = alloc_n(BT, C, 1, sizeof(float), &failed);
    c->dlogits = alloc_n(BT, C, 1, sizeof(double), &failed);
    c->dN = alloc_n(BT, d, 1, sizeof(double), &failed);
    c->dY = alloc_n(BT, d, 1, sizeof(double), &failed);
    c->dX = alloc_n(BT, d, 1, sizeof(double), &failed);
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
    free(c->Q);
    free(c->K);
    free(c->V);
    free(c->concat);
    free(c->A);
    free(c->Y);
    free(c->N);
    free(c->mean);
    free(c->rstd);
    free(c->logits);
    free(c->dlogits);
    free(c->dN);
    free(c->dY);
    free(c->dX);
    memset(c, 0, sizeof *c);
}

const float *tcache_features(const tcache *c, const tmodel *m)
{
    return m->cfg.addnorm ? c->N : c->Y;
}

/* ---- forward ------------------------------------------------------------ */

int tmodel_forward(tmodel *m, tcache *c, const int *tokens, const long *lens, size_t B,
                   size_t T, const mha_dropout *drop, char *err, size_t errlen)
{
    const size_t d = m->cfg.hiddens, C = m->cfg.classes;
    const double sqrt_d = sqrt((double)d);
    mha_masks mask = {lens, 0, m->cfg.causal};
    mha_trace trace = {0};
    linear head = {m->head_weight, m->head_bias};

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
            float *x = c->X + (b * T + t) * d;
            for (size_t i = 0; i < d; i++)
                x[i] = (float)(e[i] * sqrt_d + (m->cfg.posenc ? c->P[t * d + i] : 0.0));
        }

    /* 2. Y (B, T, d) = MultiHeadAttention(X, X, X, valid_lens), keeping
     *    Q, K, V and the heads' outputs for the backward pass */
    trace.Q = c->Q;
    trace.K = c->K;
    trace.V = c->V;
    trace.concat = c->concat;
    if (mha_forward(c->Y, c->A, &trace, c->X, c->X, c->X, B, T, T, &m->mha, &mask, drop, err,
                    errlen))
        return -1;

    /* 3. (addnorm) N = LayerNorm(X + Y) over the d features, eps 1e-5 */
    if (m->cfg.addnorm) {
        for (size_t b = 0; b < B * T; b++) {
            const float *x = c->X + b * d, *y = c->Y + b * d;
            double mean = 0.0, var = 0.0;
            for (size_t i = 0; i < d; i++)
                mean += (double)x[i] + y[i];
            mean /= (double)d;
            for (size_t i = 0; i < d; i++) {
                double z = (double)x[i] + y[i] - mean;
                var += z * z;
            }
            var /= (double)d; /* biased, as LayerNorm */
            double rstd = 1.0 / sqrt(var + LN_EPS);
            c->mean[b] = mean;
            c->rstd[b] = rstd;
            for (size_t i = 0; i < d; i++)
                c->N[b * d + i] = (float)(((double)x[i] + y[i] - mean) * rstd *
                                              m->ln_weight.data[i] + m->ln_bias.data[i]);
        }
    }

    /* 4. logits (B, T, C) = N · head.weightᵀ + head.bias */
    (void)C;
    linear_forward(c->logits, tcache_features(c, m), B * T, &head);
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
            sum += exp((double)z[k] - max);
        /* −log softmax(z)[target] = logsumexp(z) − z[target] */
        loss += max + log(sum) - z[targets[r]];
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

int tmodel_backward(double *grads, tcache *c, const tmodel *m, const int *tokens,
                    const long *lens, const int *targets, double scale,
                    const mha_dropout *drop, char *err, size_t errlen)
{
    const size_t d = m->cfg.hiddens, C = m->cfg.classes, B = c->B, T = c->T, BT = B * T;
    const double sqrt_d = sqrt((double)d);
    mha_masks mask = {lens, 0, m->cfg.causal};
    mha_trace trace = {0};
    mha_grads g;
    linear head = {m->head_weight, m->head_bias};
    double *dE = grad_of(grads, m, &m->embedding);

    /* 5. d logits (B, T, C) = (softmax(logits) − one-hot(target)) · scale,
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
            sum += (dz[k] = exp((double)z[k] - max));
        for (size_t k = 0; k < C; k++)
            dz[k] = (dz[k] / sum - (k == (size_t)targets[r])) * scale;
    }

    /* 4. logits = N · head.weightᵀ + head.bias:
     *    d head.weight (C, d) += d logitsᵀ · N, d head.bias (C,) += Σ d logits,
     *    dN (B, T, d) = d logits · head.weight */
    memset(c->dN, 0, BT * d * sizeof *c->dN);
    linear_backward(c->dN, grad_of(grads, m, &m->head_weight), grad_of(grads, m, &m->head_bias),
                    c->dlogits, tcache_features(c, m), BT, &head);

    memset(c->dX, 0, BT * d * sizeof *c->dX);
    if (m->cfg.addnorm) {
        /* 3. N = x̂ · γ + β with x̂ = (Z − mean) · rstd, Z = X + Y:
         *    dγ (d,) += Σ dN x̂,  dβ (d,) += Σ dN,  dx̂ = dN γ,
         *    dZ = rstd (dx̂ − mean(dx̂) − x̂ · mean(dx̂ x̂)),  dX += dZ, dY = dZ */
        double *dgamma = grad_of(grads, m, &m->ln_weight);
        double *dbeta = grad_of(grads, m, &m->ln_bias);
        for (size_t r = 0; r < BT; r++) {
            const float *x = c->X + r * d, *y = c->Y + r * d;
            const double *dn = c->dN + r * d;
            double mean_dxh = 0.0, mean_dxh_xh = 0.0;
            for (size_t i = 0; i < d; i++) {
                double xh = ((double)x[i] + y[i] - c->mean[r]) * c->rstd[r];
                double dxh = dn[i] * m->ln_weight.data[i];
                dgamma[i] += dn[i] * xh;
                dbeta[i] += dn[i];
                mean_dxh += dxh;
                mean_dxh_xh += dxh * xh;
            }
            mean_dxh /= (double)d;
            mean_dxh_xh /= (double)d;
            for (size_t i = 0; i < d; i++) {
                double xh = ((double)x[i] + y[i] - c->mean[r]) * c->rstd[r];
                double dxh = dn[i] * m->ln_weight.data[i];
                double dz = c->rstd[r] * (dxh - mean_dxh - xh * mean_dxh_xh);
                c->dY[r * d + i] = dz;
                c->dX[r * d + i] += dz; /* the residual path */
            }
        }
    } else {
        memcpy(c->dY, c->dN, BT * d * sizeof *c->dY);
    }

    /* 2. Y = MultiHeadAttention(X, X, X): queries, keys and values are all X,
     *    so their three gradients add up in dX (B, T, d) */
    trace.Q = c->Q;
    trace.K = c->K;
    trace.V = c->V;
    trace.concat = c->concat;
    g.dW_q = grad_of(grads, m, &m->mha.W_q.weight);
    g.db_q = grad_of(grads, m, &m->mha.W_q.bias);
    g.dW_k = grad_of(grads, m, &m->mha.W_k.weight);
    g.db_k = grad_of(grads, m, &m->mha.W_k.bias);
    g.dW_v = grad_of(grads, m, &m->mha.W_v.weight);
    g.db_v = grad_of(grads, m, &m->mha.W_v.bias);
    g.dW_o = grad_of(grads, m, &m->mha.W_o.weight);
    g.db_o = grad_of(grads, m, &m->mha.W_o.bias);
    if (mha_backward(c->dX, c->dX, c->dX, &g, c->dY, c->A, &trace, c->X, c->X, c->X, B, T, T,
                     &m->mha, &mask, drop, err, errlen))
        return -1;

    /* 1. X = embedding[token] · √d (+ P): d embedding[token] (d,) += dX · √d
     *    (P is a constant) */
    for (size_t r = 0; r < BT; r++) {
        double *de = dE + (size_t)tokens[r] * d;
        for (size_t i = 0; i < d; i++)
            de[i] += c->dX[r * d + i] * sqrt_d;
    }
    return 0;
}
