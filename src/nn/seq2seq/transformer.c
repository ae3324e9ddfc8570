/* transformer.c — d2l's Transformer encoder–decoder (see transformer.h for
 * the model and the dimensions B, Ts, Tt, Vs, Vt, d, NH, L, H): its table
 * tfm_arch, parameters, the forward pass (the encoder's blocks are
 * encoder.h's tblock, the decoder's written here from the same layers),
 * the backward pass as naive loops in double, and greedy decoding.
 *
 * Every product of sizes in the passes (B·Tt·d, NH·Tt·Ts, …) is bounded
 * by a buffer tfm_cache_alloc allocated with overflow-checked sizes, and
 * the passes refuse a batch larger than the cache. */
#include "transformer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention_backward.h"
#include "checked.h"
#include "layers.h"
#include "posenc.h"
#include "rng.h"
#include "transformer_fast.h"
#include "i18n.h"

/* What seq2seq.c's s2s_config_check leaves to the architecture. */
static int tfm_config_check(const s2s_config *cfg, char *err, size_t errlen)
{
    if (cfg->ffn < 1) {
        snprintf(err, errlen, "%s", _("the Transformer's FFN needs at least 1 hidden unit"));
        return -1;
    }
    if (!(cfg->dropout >= 0.0 && cfg->dropout < 1.0)) {
        snprintf(err, errlen, _("dropout %g is not in [0, 1)"), cfg->dropout);
        return -1;
    }
    if (cfg->rnn != S2S_RNN_GRU) {
        snprintf(err, errlen, "%s", _("the Transformer has no recurrent layers"));
        return -1;
    }
    if (cfg->score != S2S_SCORE_DOT && cfg->score != S2S_SCORE_ADDITIVE) {
        snprintf(err, errlen, _("score %d is not additive (0) or dot (1)"), cfg->score);
        return -1;
    }
    return 0;
}

/* ---- parameters ----------------------------------------------------------- */

static int alloc2(tensor *t, size_t r, size_t c, char *err, size_t errlen)
{
    size_t shape[2] = {r, c};
    return tensor_alloc(t, c ? 2 : 1, shape, err, errlen);
}

static int dec_block_alloc(tfm_dec_block *b, const s2s_config *cfg, char *err, size_t errlen)
{
    const size_t d = cfg->hiddens, H = cfg->ffn;
    const int additive = cfg->score == S2S_SCORE_ADDITIVE;
    return mha_params_alloc(&b->attention1, d, cfg->heads, cfg->bias, err, errlen) ||
           (additive && mha_params_additive(&b->attention1, err, errlen)) ||
           alloc2(&b->ln1_weight, d, 0, err, errlen) || alloc2(&b->ln1_bias, d, 0, err, errlen) ||
           mha_params_alloc(&b->attention2, d, cfg->heads, cfg->bias, err, errlen) ||
           (additive && mha_params_additive(&b->attention2, err, errlen)) ||
           alloc2(&b->ln2_weight, d, 0, err, errlen) || alloc2(&b->ln2_bias, d, 0, err, errlen) ||
           alloc2(&b->dense1.weight, H, d, err, errlen) ||
           alloc2(&b->dense1.bias, H, 0, err, errlen) ||
           alloc2(&b->dense2.weight, d, H, err, errlen) ||
           alloc2(&b->dense2.bias, d, 0, err, errlen) ||
           alloc2(&b->ln3_weight, d, 0, err, errlen) || alloc2(&b->ln3_bias, d, 0, err, errlen);
}

static void dec_block_free(tfm_dec_block *b)
{
    tensor *ts[] = {&b->ln1_weight,    &b->ln1_bias,    &b->ln2_weight,    &b->ln2_bias,
                    &b->dense1.weight, &b->dense1.bias, &b->dense2.weight, &b->dense2.bias,
                    &b->ln3_weight,    &b->ln3_bias};
    mha_params_free(&b->attention1);
    mha_params_free(&b->attention2);
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        tensor_free(ts[i]);
}

/* Append the parameter t under the key prefix + name. */
static void add(s2s_model *m, const char *prefix, const char *name, tensor *t)
{
    tparam_add(m->param, &m->nparams, &m->total, prefix, name, t);
}

/* Encoder block l's parameters, under "encoder.blks.block{l}.". */
static void enc_block_params(s2s_model *m, size_t l)
{
    tfm_model *net = tfm_net(m);
    char pre[48], att[64], an1[64];
    snprintf(pre, sizeof pre, "encoder.blks.block%zu.", l);
    snprintf(att, sizeof att, "%sattention.", pre);
    snprintf(an1, sizeof an1, "%saddnorm1.ln.", pre);
    tblock_params(m->param, &m->nparams, &m->total, &net->enc[l], &net->enc_cfg, pre, att, an1);
}

/* Decoder block l's parameters in d2l's DecoderBlock order: attention1,
 * addnorm1, attention2, addnorm2, ffn, addnorm3. */
static void dec_block_params(s2s_model *m, size_t l)
{
    tfm_model *net = tfm_net(m);
    tfm_dec_block *b = &net->dec[l];
    char pre[64], key[96];
    snprintf(pre, sizeof pre, "decoder.blks.block%zu.", l);
    snprintf(key, sizeof key, "%sattention1.", pre);
    mha_params_list(m->param, &m->nparams, &m->total, &b->attention1, key);
    add(m, pre, "addnorm1.ln.weight", &b->ln1_weight);
    add(m, pre, "addnorm1.ln.bias", &b->ln1_bias);
    snprintf(key, sizeof key, "%sattention2.", pre);
    mha_params_list(m->param, &m->nparams, &m->total, &b->attention2, key);
    add(m, pre, "addnorm2.ln.weight", &b->ln2_weight);
    add(m, pre, "addnorm2.ln.bias", &b->ln2_bias);
    add(m, pre, "ffn.dense1.weight", &b->dense1.weight);
    add(m, pre, "ffn.dense1.bias", &b->dense1.bias);
    add(m, pre, "ffn.dense2.weight", &b->dense2.weight);
    add(m, pre, "ffn.dense2.bias", &b->dense2.bias);
    add(m, pre, "addnorm3.ln.weight", &b->ln3_weight);
    add(m, pre, "addnorm3.ln.bias", &b->ln3_bias);
}

/* The encoder's blocks are §9's stack: AddNorm and an FFN in every one. */
static tmodel_config encoder_config(const s2s_config *cfg)
{
    tmodel_config e = {0};
    e.vocab = cfg->src_vocab;
    e.classes = 1; /* no head */
    e.hiddens = cfg->hiddens;
    e.heads = cfg->heads;
    e.posenc = 1;
    e.addnorm = 1;
    e.bias = cfg->bias;
    e.causal = 0;
    e.dropout = cfg->dropout;
    e.layers = cfg->layers;
    e.ffn = cfg->ffn;
    e.score = cfg->score == S2S_SCORE_ADDITIVE ? SCORE_ADDITIVE : SCORE_DOT;
    return e;
}

/* The tensors of m->cfg into a new m->net, listed in m->param; on failure
 * the caller (s2s_alloc) frees what was allocated. */
static int tfm_alloc(s2s_model *m, char *err, size_t errlen)
{
    const s2s_config *cfg = &m->cfg;
    const size_t d = cfg->hiddens, L = cfg->layers;
    tfm_model *net = m->net = calloc(1, sizeof *net);
    if (!net) {
        snprintf(err, errlen, "%s", _("out of memory for the model"));
        return -1;
    }
    net->enc_cfg = encoder_config(cfg);
    if (alloc2(&net->enc_embedding, cfg->src_vocab, d, err, errlen) ||
        alloc2(&net->dec_embedding, cfg->tgt_vocab, d, err, errlen) ||
        alloc2(&net->dense.weight, cfg->tgt_vocab, d, err, errlen) ||
        alloc2(&net->dense.bias, cfg->tgt_vocab, 0, err, errlen))
        return -1;
    for (size_t l = 0; l < L; l++)
        if (tblock_alloc(&net->enc[l], &net->enc_cfg, err, errlen) ||
            dec_block_alloc(&net->dec[l], cfg, err, errlen))
            return -1;
    /* state_dict order: the encoder, then the decoder */
    add(m, "", "encoder.embedding.weight", &net->enc_embedding);
    for (size_t l = 0; l < L; l++)
        enc_block_params(m, l);
    add(m, "", "decoder.embedding.weight", &net->dec_embedding);
    for (size_t l = 0; l < L; l++)
        dec_block_params(m, l);
    add(m, "", "decoder.dense.weight", &net->dense.weight);
    add(m, "", "decoder.dense.bias", &net->dense.bias);
    return 0;
}

/* An embedding ~ N(0, 1/d): embedding·√d has unit variance, like P. */
static void init_embedding(tensor *t, size_t d, rng *r)
{
    const double sd = 1.0 / sqrt((double)d);
    for (size_t i = 0; i < t->size; i++)
        t->data[i] = (float)(rng_normal(r) * sd);
}

/* SPEC §9's start, drawn from seed in state_dict order: embeddings
 * ~ N(0, 1/d); every nn.Linear weight and bias uniform in ±1/sqrt(in);
 * LayerNorm weight 1, bias 0. */
static void tfm_init(s2s_model *m, unsigned long long seed)
{
    tfm_model *net = tfm_net(m);
    const size_t d = m->cfg.hiddens;
    rng r;
    rng_seed(&r, seed);
    init_embedding(&net->enc_embedding, d, &r);
    for (size_t l = 0; l < m->cfg.layers; l++)
        tblock_init(&net->enc[l], &net->enc_cfg, &r);
    init_embedding(&net->dec_embedding, d, &r);
    for (size_t l = 0; l < m->cfg.layers; l++) {
        tfm_dec_block *b = &net->dec[l];
        mha_params_init(&b->attention1, &r);
        tparam_layernorm(&b->ln1_weight, &b->ln1_bias);
        mha_params_init(&b->attention2, &r);
        tparam_layernorm(&b->ln2_weight, &b->ln2_bias);
        tparam_uniform(&b->dense1.weight, d, &r);
        tparam_uniform(&b->dense1.bias, d, &r);
        tparam_uniform(&b->dense2.weight, m->cfg.ffn, &r);
        tparam_uniform(&b->dense2.bias, m->cfg.ffn, &r);
        tparam_layernorm(&b->ln3_weight, &b->ln3_bias);
    }
    tparam_uniform(&net->dense.weight, d, &r);
    tparam_uniform(&net->dense.bias, d, &r);
}

static void tfm_free(s2s_model *m)
{
    tfm_model *net = tfm_net(m);
    if (!net)
        return;
    s2s_ends_free(&net->enc_embedding, &net->dec_embedding, &net->dense);
    for (size_t l = 0; l < TMODEL_MAX_LAYERS; l++) {
        tblock_free(&net->enc[l]);
        dec_block_free(&net->dec[l]);
    }
    free(net);
}

/* ---- the cache ------------------------------------------------------------ */

static void dec_cache_alloc(tfm_dec_cache *c, const s2s_config *cfg, size_t Bmax, size_t Ts,
                            size_t Tt, int *failed)
{
    const size_t d = cfg->hiddens, NH = cfg->heads, H = cfg->ffn;
    size_t BT = 0, BS = 0;
    if (size_mul(Bmax, Tt, &BT) || size_mul(Bmax, Ts, &BS))
        *failed = 1;
    float **fd[] = {&c->Q1, &c->K1,      &c->V1, &c->concat1, &c->X2, &c->Y,
                    &c->Q2, &c->concat2, &c->Y2, &c->Z,       &c->F,  &c->out}; /* (B, Tt, d) */
    double **dd[] = {&c->S1, &c->S2, &c->S3};                                   /* (B, Tt, d) */
    double **st[] = {&c->mean1, &c->rstd1, &c->mean2, &c->rstd2, &c->mean3, &c->rstd3};
    for (size_t i = 0; i < sizeof fd / sizeof fd[0]; i++)
        *fd[i] = tcache_calloc(BT, d, 1, sizeof(float), failed);
    for (size_t i = 0; i < sizeof dd / sizeof dd[0]; i++)
        *dd[i] = tcache_calloc(BT, d, 1, sizeof(double), failed);
    for (size_t i = 0; i < sizeof st / sizeof st[0]; i++)
        *st[i] = tcache_calloc(BT, 1, 1, sizeof(double), failed); /* (B, Tt) */
    c->K2 = tcache_calloc(BS, d, 1, sizeof(float), failed);       /* (B, Ts, d) */
    c->V2 = tcache_calloc(BS, d, 1, sizeof(float), failed);
    c->A1 = tcache_calloc(BT, NH, Tt, sizeof(float), failed); /* (B, NH, Tt, Tt) */
    c->A2 = tcache_calloc(BT, NH, Ts, sizeof(float), failed); /* (B, NH, Tt, Ts) */
    c->H = tcache_calloc(BT, H, 1, sizeof(float), failed);    /* (B, Tt, H) */
    c->R = tcache_calloc(BT, H, 1, sizeof(float), failed);
}

static void dec_cache_free(tfm_dec_cache *c)
{
    void *ps[] = {c->Q1,    c->K1,    c->V1, c->concat1, c->A1,      c->X2, c->S1,
                  c->mean1, c->rstd1, c->Y,  c->Q2,      c->concat2, c->K2, c->V2,
                  c->A2,    c->Y2,    c->S2, c->mean2,   c->rstd2,   c->Z,  c->H,
                  c->R,     c->F,     c->S3, c->mean3,   c->rstd3,   c->out};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
        free(ps[i]);
    memset(c, 0, sizeof *c);
}

/* c's sizes set by s2s_cache_alloc: the logits, their gradient and the
 * Transformer's cache (c->net). */
static int tfm_cache_alloc(s2s_cache *c, const s2s_model *m, char *err, size_t errlen)
{
    const tfm_model *net = tfm_net(m);
    const size_t Bmax = c->Bmax, Ts_max = c->Ts_max, Tt_max = c->Tt_max;
    const size_t d = m->cfg.hiddens, Vt = m->cfg.tgt_vocab,
                 Tmax = Ts_max > Tt_max ? Ts_max : Tt_max;
    const size_t BS = Bmax * Ts_max, BT = Bmax * Tt_max, BM = Bmax * Tmax; /* checked */
    tfm_cache *tc = c->net = calloc(1, sizeof *tc);
    int failed = !tc;
    c->logits = tcache_calloc(BT, Vt, 1, sizeof(float), &failed);
    c->dlogits = tcache_calloc(BT, Vt, 1, sizeof(double), &failed);
    if (tc) {
        tc->P = tcache_calloc(Tmax, d, 1, sizeof(float), &failed);
        tc->Xs = tcache_calloc(BS, d, 1, sizeof(float), &failed);
        tc->Xt = tcache_calloc(BT, d, 1, sizeof(float), &failed);
        for (size_t l = 0; l < m->cfg.layers; l++) {
            tblock_cache_alloc(&tc->enc[l], &net->enc_cfg, BS, Ts_max, &failed);
            dec_cache_alloc(&tc->dec[l], &m->cfg, Bmax, Ts_max, Tt_max, &failed);
        }
        tc->dout = tcache_calloc(BT, d, 1, sizeof(double), &failed);
        tc->din = tcache_calloc(BT, d, 1, sizeof(double), &failed);
        tc->denc = tcache_calloc(BS, d, 1, sizeof(double), &failed);
        tc->dsrc = tcache_calloc(BS, d, 1, sizeof(double), &failed);
        tblock_scratch_alloc(&tc->scratch, BM, d, m->cfg.ffn, &failed);
    }
    if (failed) {
        s2s_cache_free(c);
        snprintf(err, errlen, _("out of memory for a batch of %zu pairs of %zu and %zu positions"),
                 Bmax, Ts_max, Tt_max);
        return -1;
    }
    /* the chapter's P (d2l's PositionalEncoding, interleaved sin and cos) */
    posenc_fill(tc->P, Tmax, d, 10000.0);
    return 0;
}

/* All but the logits and their gradient (s2s_cache_free's). */
static void tfm_cache_free(s2s_cache *c)
{
    tfm_cache *tc = tfm_cache_of(c);
    if (!tc)
        return;
    free(tc->P);
    free(tc->Xs);
    free(tc->Xt);
    for (size_t l = 0; l < TMODEL_MAX_LAYERS; l++) {
        tblock_cache_free(&tc->enc[l]);
        dec_cache_free(&tc->dec[l]);
    }
    free(tc->dout);
    free(tc->din);
    free(tc->denc);
    free(tc->dsrc);
    tblock_scratch_free(&tc->scratch);
    free(tc);
    c->net = NULL;
}

const float *tfm_enc_out(const s2s_cache *c, const s2s_model *m)
{
    return tblock_out(&tfm_cache_of(c)->enc[m->cfg.layers - 1], &tfm_net(m)->enc_cfg);
}

static const float *tfm_cross(const s2s_cache *c, size_t l)
{
    return tfm_cache_of(c)->dec[l].A2;
}

static const float *tfm_self(const s2s_cache *c, int side, size_t l)
{
    const tfm_cache *tc = tfm_cache_of(c);
    return side == 0 ? tc->enc[l].A : tc->dec[l].A1;
}

const float *tfm_dec_out(const s2s_cache *c, size_t l)
{
    return tfm_cache_of(c)->dec[l].out;
}

/* ---- forward -------------------------------------------------------------- */

/* Module k's dropout for the pairs of cache c (s2s_module_dropout). */
static const mha_dropout *module_drop(mha_dropout *out, const mha_dropout *drop,
                                      const s2s_cache *c, size_t k, size_t per)
{
    return s2s_module_dropout(out, drop, c->example0, k, per);
}

static mha_trace trace_of(float *Q, float *K, float *V, float *concat)
{
    mha_trace t = {0};
    t.Q = Q;
    t.K = K;
    t.V = V;
    t.concat = concat;
    return t;
}

int tfm_encode(const s2s_model *m, s2s_cache *c, const int *src, const long *src_lens, size_t B,
               size_t Ts, const mha_dropout *drop, char *err, size_t errlen)
{
    const tfm_model *net = tfm_net(m);
    tfm_cache *tc = tfm_cache_of(c);
    const size_t d = m->cfg.hiddens, NH = m->cfg.heads;
    const mha_masks mask = {src_lens, 0, 0, 0}; /* no key beyond a source's length */
    const float *x = tc->Xs;

    if (B > c->Bmax || Ts > c->Ts_max) {
        snprintf(err, errlen, _("%zu sources of %zu positions exceed the cache's %zu × %zu"), B, Ts,
                 c->Bmax, c->Ts_max);
        return -1;
    }
    c->B = B;
    c->Ts = Ts;
    /* 1. E_0 (B, Ts, d) = encoder.embedding[src] · √d + P[t] */
    embedding_forward(tc->Xs, net->enc_embedding.data, src, tc->P, B, Ts, d, sqrt((double)d));
    /* 2. the encoder's blocks, each reading the one below (§9's block) */
    for (size_t l = 0; l < m->cfg.layers; l++) {
        mha_dropout dl;
        const mha_dropout *dp = module_drop(&dl, drop, c, l, NH * Ts * Ts);
        if (tblock_forward(&tc->enc[l], &net->enc[l], &net->enc_cfg, x, B, Ts, &mask, dp, err, errlen))
            return -1;
        x = tblock_out(&tc->enc[l], &net->enc_cfg);
    }
    return 0;
}

/* LayerNorm(x + y) (d2l's AddNorm, without its dropout): s (n, d) = x + y
 * in double, out (n, d) = LayerNorm(s), its statistics in mean, rstd (n,). */
static void addnorm_forward(float *out, double *s, double *mean, double *rstd, const float *x,
                            const float *y, const tensor *w, const tensor *b, size_t n, size_t d)
{
    residual_forward(s, x, y, n * d);
    layernorm_forward(out, mean, rstd, s, w->data, b->data, n, d);
}

/* Decoder block l on its input x (B, Tt, d) and the encoder's output enc
 * (B, Ts, d), into tc->dec[l]. */
static int dec_block_forward(s2s_cache *c, const s2s_model *m, size_t l, const float *x,
                             const float *enc, const long *src_lens, const mha_dropout *drop,
                             char *err, size_t errlen)
{
    const tfm_model *net = tfm_net(m);
    tfm_cache *tc = tfm_cache_of(c);
    const size_t B = c->B, Ts = c->Ts, Tt = c->Tt, BT = B * Tt, d = m->cfg.hiddens;
    const size_t NH = m->cfg.heads, L = m->cfg.layers, H = m->cfg.ffn;
    const mha_masks causal = {NULL, 0, 1, 0};    /* query t sees keys 0 … t */
    const mha_masks cross = {src_lens, 0, 0, 0}; /* no key beyond a source's length */
    const tfm_dec_block *b = &net->dec[l];
    tfm_dec_cache *dc = &tc->dec[l];
    mha_trace t1 = trace_of(dc->Q1, dc->K1, dc->V1, dc->concat1);
    mha_trace t2 = trace_of(dc->Q2, dc->K2, dc->V2, dc->concat2);
    mha_dropout d1, d2;
    const mha_dropout *dp1 = module_drop(&d1, drop, c, L + 2 * l, NH * Tt * Tt);
    const mha_dropout *dp2 = module_drop(&d2, drop, c, L + 2 * l + 1, NH * Tt * Ts);

    /* 1. masked self-attention: X2 = attention1(X, X, X), causal */
    if (mha_forward(dc->X2, dc->A1, &t1, x, x, x, B, Tt, Tt, &b->attention1, &causal, dp1, err,
                    errlen))
        return -1;
    /* 2. addnorm1: Y = LayerNorm(X + X2) */
    addnorm_forward(dc->Y, dc->S1, dc->mean1, dc->rstd1, x, dc->X2, &b->ln1_weight, &b->ln1_bias,
                    BT, d);
    /* 3. cross-attention: Y2 = attention2(Y, enc, enc, src_lens), the
     *    queries from the decoder, the keys and values from the encoder */
    if (mha_forward(dc->Y2, dc->A2, &t2, dc->Y, enc, enc, B, Tt, Ts, &b->attention2, &cross, dp2,
                    err, errlen))
        return -1;
    /* 4. addnorm2: Z = LayerNorm(Y + Y2) */
    addnorm_forward(dc->Z, dc->S2, dc->mean2, dc->rstd2, dc->Y, dc->Y2, &b->ln2_weight,
                    &b->ln2_bias, BT, d);
    /* 5. ffn: H = dense1(Z) (B, Tt, H), R = ReLU(H), F = dense2(R) (B, Tt, d) */
    linear_forward(dc->H, dc->Z, BT, &b->dense1);
    relu_forward(dc->R, dc->H, BT * H);
    linear_forward(dc->F, dc->R, BT, &b->dense2);
    /* 6. addnorm3: out = LayerNorm(Z + F) */
    addnorm_forward(dc->out, dc->S3, dc->mean3, dc->rstd3, dc->Z, dc->F, &b->ln3_weight,
                    &b->ln3_bias, BT, d);
    return 0;
}

int tfm_dec_block_forward(const s2s_model *m, s2s_cache *c, size_t l, const float *x, size_t B, size_t Tt,
                  const float *enc, size_t Ts, const long *src_lens, char *err, size_t errlen)
{
    if (l >= m->cfg.layers || B > c->Bmax || Tt > c->Tt_max || Ts > c->Ts_max) {
        snprintf(err, errlen, _("decoder block %zu on %zu × %zu against %zu positions exceeds the "
                 "model's %zu blocks or the cache's %zu × %zu, %zu"), l, B, Tt, Ts,
                 m->cfg.layers, c->Bmax, c->Tt_max, c->Ts_max);
        return -1;
    }
    c->B = B;
    c->Ts = Ts;
    c->Tt = Tt;
    return dec_block_forward(c, m, l, x, enc, src_lens, NULL, err, errlen);
}

int tfm_decode(const s2s_model *m, s2s_cache *c, const int *dec_in, const long *src_lens, size_t Tt,
               const mha_dropout *drop, char *err, size_t errlen)
{
    const tfm_model *net = tfm_net(m);
    tfm_cache *tc = tfm_cache_of(c);
    const size_t d = m->cfg.hiddens;
    const float *enc = tfm_enc_out(c, m), *x = tc->Xt;

    if (Tt > c->Tt_max) {
        snprintf(err, errlen, _("%zu target positions exceed the cache's %zu"), Tt, c->Tt_max);
        return -1;
    }
    c->Tt = Tt;
    /* 1. X_0 (B, Tt, d) = decoder.embedding[dec_in] · √d + P[t] */
    embedding_forward(tc->Xt, net->dec_embedding.data, dec_in, tc->P, c->B, Tt, d, sqrt((double)d));
    /* 2–7. the decoder's blocks, each reading the one below and enc */
    for (size_t l = 0; l < m->cfg.layers; l++) {
        if (dec_block_forward(c, m, l, x, enc, src_lens, drop, err, errlen))
            return -1;
        x = tc->dec[l].out;
    }
    /* 8. logits (B, Tt, Vt) = X_L · decoder.dense.weightᵀ + decoder.dense.bias */
    linear_forward(c->logits, x, c->B * Tt, &net->dense);
    return 0;
}

/* Ids and sizes checked by s2s_forward. */
static int tfm_forward(const s2s_model *m, s2s_cache *c, const int *src, const long *src_lens,
                       const int *dec_in, size_t B, size_t Ts, size_t Tt, const mha_dropout *drop,
                       char *err, size_t errlen)
{
    if (tfm_encode(m, c, src, src_lens, B, Ts, drop, err, errlen))
        return -1;
    return tfm_decode(m, c, dec_in, src_lens, Tt, drop, err, errlen);
}

/* ---- backward ------------------------------------------------------------- */

static double *grad(const s2s_model *m, double *grads, const tensor *t)
{
    return tparam_grad(m->param, m->nparams, grads, t);
}

/* The backward of LayerNorm(x + y): from dout (n, d), the LayerNorm's
 * weight and bias gradients +=, and dx, dy (n, d) = its gradient, which the
 * residual passes to both terms (overwritten); ds (n, d) scratch. */
static void addnorm_backward(double *dx, double *dy, double *ds, double *grads, const s2s_model *m,
                             const double *dout, const double *s, const double *mean,
                             const double *rstd, const tensor *w, const tensor *b, size_t n,
                             size_t d)
{
    memset(ds, 0, n * d * sizeof *ds);
    layernorm_backward(ds, grad(m, grads, w), grad(m, grads, b), dout, s, w->data, mean, rstd, n,
                       d);
    memset(dx, 0, n * d * sizeof *dx);
    memset(dy, 0, n * d * sizeof *dy);
    residual_backward(dx, dy, ds, n * d);
}

/* Decoder block l backward: from dout (B, Tt, d), the gradient of its
 * output, its parameters' gradients +=, dx (B, Tt, d) = the gradient of
 * its input x (overwritten), and d enc (tc->denc, B × Ts × d) += what its
 * cross-attention's keys and values pass to the encoder's output. */
static int dec_block_backward(double *dx, double *grads, s2s_cache *c, const s2s_model *m, size_t l,
                              const double *dout, const float *x, const float *enc,
                              const long *src_lens, const mha_dropout *drop, char *err,
                              size_t errlen)
{
    const tfm_model *net = tfm_net(m);
    tfm_cache *tc = tfm_cache_of(c);
    const size_t B = c->B, Ts = c->Ts, Tt = c->Tt, BT = B * Tt, d = m->cfg.hiddens;
    const size_t NH = m->cfg.heads, L = m->cfg.layers, H = m->cfg.ffn;
    const mha_masks causal = {NULL, 0, 1, 0}, cross = {src_lens, 0, 0, 0};
    const tfm_dec_block *b = &net->dec[l];
    tfm_dec_cache *dc = &tc->dec[l];
    /* the block's gradients, in the scratch (B, Tt, d) buffers, each
     * reused once its value has been read: dS of a LayerNorm's input, dZ,
     * dF, then dY, dY2, then dX2 (the FFN's dR, dH: (B, Tt, H)) */
    tblock_scratch *s = &tc->scratch;
    double *dS = s->dZ, *dZ = s->dN1, *dF = s->dF, *dY = s->dF, *dY2 = s->dY, *dX2 = s->dY;
    mha_trace t1 = trace_of(dc->Q1, dc->K1, dc->V1, dc->concat1);
    mha_trace t2 = trace_of(dc->Q2, dc->K2, dc->V2, dc->concat2);
    mha_grads g1, g2;
    mha_additive_grads a1, a2; /* NULLs with dot scoring */
    mha_dropout d1, d2;
    const mha_dropout *dp1 = module_drop(&d1, drop, c, L + 2 * l, NH * Tt * Tt);
    const mha_dropout *dp2 = module_drop(&d2, drop, c, L + 2 * l + 1, NH * Tt * Ts);

    /* 6'. addnorm3: out = LayerNorm(Z + F): dZ and dF */
    addnorm_backward(dZ, dF, dS, grads, m, dout, dc->S3, dc->mean3, dc->rstd3, &b->ln3_weight,
                     &b->ln3_bias, BT, d);
    /* 5'. ffn: dR (B, Tt, H) = dF · dense2, dH = dR where H > 0,
     *     dZ += dH · dense1, and the dense layers' gradients */
    memset(s->dR, 0, BT * H * sizeof *s->dR);
    linear_backward(s->dR, grad(m, grads, &b->dense2.weight), grad(m, grads, &b->dense2.bias), dF,
                    dc->R, BT, &b->dense2);
    memset(s->dH, 0, BT * H * sizeof *s->dH);
    relu_backward(s->dH, s->dR, dc->H, BT * H);
    linear_backward(dZ, grad(m, grads, &b->dense1.weight), grad(m, grads, &b->dense1.bias), s->dH,
                    dc->Z, BT, &b->dense1);
    /* 4'. addnorm2: Z = LayerNorm(Y + Y2): dY and dY2 */
    addnorm_backward(dY, dY2, dS, grads, m, dZ, dc->S2, dc->mean2, dc->rstd2, &b->ln2_weight,
                     &b->ln2_bias, BT, d);
    /* 3'. cross-attention Y2 = attention2(Y, enc, enc): dY += its queries'
     *     gradient, d enc += its keys' and values' */
    mha_params_grads(&g2, m->param, m->nparams, grads, &b->attention2);
    mha_additive_grads_find(&a2, m->param, m->nparams, grads, &b->attention2);
    if (mha_backward_additive(dY, tc->denc, tc->denc, &g2, &a2, dY2, dc->A2, &t2, dc->Y, enc, enc,
                              B, Tt, Ts, &b->attention2, &cross, dp2, err, errlen))
        return -1;
    /* 2'. addnorm1: Y = LayerNorm(X + X2): dX (dx) and dX2 */
    addnorm_backward(dx, dX2, dS, grads, m, dY, dc->S1, dc->mean1, dc->rstd1, &b->ln1_weight,
                     &b->ln1_bias, BT, d);
    /* 1'. X2 = attention1(X, X, X): queries, keys and values are all X,
     *     so their three gradients add up in dx */
    mha_params_grads(&g1, m->param, m->nparams, grads, &b->attention1);
    mha_additive_grads_find(&a1, m->param, m->nparams, grads, &b->attention1);
    return mha_backward_additive(dx, dx, dx, &g1, &a1, dX2, dc->A1, &t1, x, x, x, B, Tt, Tt,
                                 &b->attention1, &causal, dp1, err, errlen);
}

/* The decoder backward from d logits: its parameters' gradients, the
 * decoder embedding's, and d enc (tc->denc, overwritten). */
static int decoder_backward(double *grads, s2s_cache *c, const s2s_model *m, const int *dec_in,
                            const long *src_lens, const mha_dropout *drop, char *err, size_t errlen)
{
    const tfm_model *net = tfm_net(m);
    tfm_cache *tc = tfm_cache_of(c);
    const size_t d = m->cfg.hiddens, BT = c->B * c->Tt;
    const float *enc = tfm_enc_out(c, m);
    double *dout = tc->dout, *din = tc->din, *tmp;

    /* 8'. logits = X_L · dense.weightᵀ + dense.bias: d dense.weight (Vt, d)
     *     += d logitsᵀ · X_L, d dense.bias += Σ d logits, dout = d logits · dense.weight */
    memset(dout, 0, BT * d * sizeof *dout);
    linear_backward(dout, grad(m, grads, &net->dense.weight), grad(m, grads, &net->dense.bias),
                    c->dlogits, tc->dec[m->cfg.layers - 1].out, BT, &net->dense);
    /* 7'–2'. the blocks from the top, each adding its share of d enc */
    memset(tc->denc, 0, c->B * c->Ts * d * sizeof *tc->denc);
    for (size_t l = m->cfg.layers; l-- > 0;) {
        const float *x = l ? tc->dec[l - 1].out : tc->Xt;
        if (dec_block_backward(din, grads, c, m, l, dout, x, enc, src_lens, drop, err, errlen))
            return -1;
        tmp = dout;
        dout = din;
        din = tmp;
    }
    /* 1'. X_0 = decoder.embedding[dec_in] · √d + P: its rows' gradients */
    embedding_backward(grad(m, grads, &net->dec_embedding), dout, dec_in, BT, d, sqrt((double)d));
    return 0;
}

/* The encoder backward from d enc (tc->denc): its blocks' and its
 * embedding's gradients. */
static int encoder_backward(double *grads, s2s_cache *c, const s2s_model *m, const int *src,
                            const long *src_lens, const mha_dropout *drop, char *err, size_t errlen)
{
    const tfm_model *net = tfm_net(m);
    tfm_cache *tc = tfm_cache_of(c);
    const size_t d = m->cfg.hiddens, NH = m->cfg.heads, B = c->B, Ts = c->Ts;
    const mha_masks mask = {src_lens, 0, 0, 0};
    double *dout = tc->denc, *din = tc->dsrc, *tmp;

    /* the blocks from the top: the gradient of a block's input is the
     * gradient of the output of the block below */
    for (size_t l = m->cfg.layers; l-- > 0;) {
        const float *x = l ? tblock_out(&tc->enc[l - 1], &net->enc_cfg) : tc->Xs;
        tblock_grads g;
        mha_dropout dl;
        const mha_dropout *dp = module_drop(&dl, drop, c, l, NH * Ts * Ts);
        tblock_grads_find(&g, m->param, m->nparams, grads, &net->enc[l]);
        if (tblock_backward(din, &g, &tc->scratch, &tc->enc[l], &net->enc[l], &net->enc_cfg, dout, x, B,
                            Ts, &mask, dp, err, errlen))
            return -1;
        tmp = dout;
        dout = din;
        din = tmp;
    }
    /* E_0 = encoder.embedding[src] · √d + P: its rows' gradients */
    embedding_backward(grad(m, grads, &net->enc_embedding), dout, src, B * Ts, d, sqrt((double)d));
    return 0;
}

/* From c->dlogits (s2s_backward's). */
static int tfm_backward(double *grads, s2s_cache *c, const s2s_model *m, const int *src,
                        const long *src_lens, const int *dec_in, const mha_dropout *drop,
                        char *err, size_t errlen)
{
    /* the decoder, then the encoder from what the cross-attentions passed down */
    if (decoder_backward(grads, c, m, dec_in, src_lens, drop, err, errlen))
        return -1;
    return encoder_backward(grads, c, m, src, src_lens, drop, err, errlen);
}

/* ---- greedy decoding ------------------------------------------------------ */

/* Step t's cross-attention (row t of every decoder block's A2, the cache
 * holding one pair of t + 1 target positions) into cross (L, NH, Tmax, Ts). */
static void keep_cross(float *cross, const s2s_cache *c, const s2s_model *m, size_t t, size_t Tmax)
{
    tfm_cache *tc = tfm_cache_of(c);
    const size_t NH = m->cfg.heads, Ts = c->Ts, Tt = c->Tt;
    for (size_t l = 0; l < m->cfg.layers; l++)
        for (size_t h = 0; h < NH; h++)
            memcpy(cross + ((l * NH + h) * Tmax + t) * Ts, tc->dec[l].A2 + (h * Tt + t) * Ts,
                   Ts * sizeof(float));
}

/* What a step of greedy decoding reads: the encoder's output in the cache,
 * the cross rows (L, NH, max_len, Ts). */
typedef struct greedy_step {
    const s2s_model *m;
    s2s_cache *c;
    const long *lens;
    float *cross;
    size_t max_len;
} greedy_step;

/* Step t: the causal decoder over the prefix dec_in[0 … t]; position t's
 * cross-attention into cross. */
static const float *decode_prefix(void *ctx, const int *dec_in, size_t t, char *err,
                                  size_t errlen)
{
    const greedy_step *g = ctx;
    if (tfm_decode(g->m, g->c, dec_in, g->lens, t + 1, NULL, err, errlen))
        return NULL;
    if (g->cross)
        keep_cross(g->cross, g->c, g->m, t, g->max_len);
    return g->c->logits + t * g->m->cfg.tgt_vocab;
}

int tfm_greedy(const s2s_model *m, const int *src, long src_len, size_t Ts, int bos, int eos,
               size_t max_len, int *out, size_t *n_out, float *cross, char *err, size_t errlen)
{
    const size_t Vt = m->cfg.tgt_vocab;
    const long lens[1] = {src_len};
    s2s_cache c;
    greedy_step step;
    int *dec_in, status = -1;
    size_t cells;

    if (cross) {
        if (size_mul(m->cfg.layers, m->cfg.heads, &cells) || size_mul(cells, max_len, &cells) ||
            size_mul(cells, Ts, &cells)) {
            snprintf(err, errlen, _("the cross-attention of %zu steps is too large"), max_len);
            return -1;
        }
        memset(cross, 0, cells * sizeof *cross);
    }
    if (max_len == 0)
        return 0;
    if (s2s_cache_alloc(&c, m, 1, Ts, max_len, err, errlen))
        return -1;
    dec_in = calloc(max_len, sizeof *dec_in);
    if (!dec_in) {
        snprintf(err, errlen, _("out of memory for %zu decoding steps"), max_len);
        goto done;
    }
    /* 1. the encoder runs once on the source */
    if (tfm_encode(m, &c, src, lens, 1, Ts, NULL, err, errlen))
        goto done;
    /* 2. from <bos>: the decoder over the prefix, its last position's
     *    argmax the next token, fed back, until <eos> or max_len tokens */
    step = (greedy_step){m, &c, lens, cross, max_len};
    status = s2s_greedy_loop(decode_prefix, &step, dec_in, Vt, bos, eos, max_len, out, n_out,
                             err, errlen);
done:
    free(dec_in);
    s2s_cache_free(&c);
    return status;
}

/* ---- heads switched off -------------------------------------------------- */

/* s2s_set_heads: each attention module reads its row (NH,) of on
 * (S2S_HEAD_KINDS, L, NH), or NULL. */
static void tfm_set_heads(s2s_model *m, const unsigned char *on)
{
    tfm_model *net = tfm_net(m);
    const size_t L = m->cfg.layers, NH = m->cfg.heads;
    for (size_t l = 0; l < L; l++) {
        net->enc[l].mha.heads_on = on ? on + (S2S_HEADS_ENC * L + l) * NH : NULL;
        net->dec[l].attention1.heads_on = on ? on + (S2S_HEADS_DEC * L + l) * NH : NULL;
        net->dec[l].attention2.heads_on = on ? on + (S2S_HEADS_CROSS * L + l) * NH : NULL;
    }
}

/* ---- for the commands: memory and an attention's parts ------------------- */

/* *bytes += a·b·c elements of elem bytes: 0, or 1 on overflow. */
static int count(size_t *bytes, size_t a, size_t b, size_t c, size_t elem)
{
    size_t n;
    return size_mul(a, b, &n) || size_mul(n, c, &n) || size_mul(n, elem, &n) ||
           size_add(*bytes, n, bytes);
}

/* One encoder block's and one decoder block's cache (tblock_cache_alloc
 * with AddNorm and the FFN, dec_cache_alloc). */
static int count_blocks(size_t *bytes, const s2s_config *cfg, size_t BS, size_t BT, size_t Ts,
                        size_t Tt)
{
    const size_t d = cfg->hiddens, NH = cfg->heads, H = cfg->ffn, F = sizeof(float),
                 D = sizeof(double);
    return count(bytes, BS, d, 7, F) ||     /* Q, K, V, concat, Y, N1, N2 */
           count(bytes, BS, NH, Ts, F) ||   /* A */
           count(bytes, BS, d, 2, D) ||     /* Z1, Z2 */
           count(bytes, BS, 4, 1, D) ||     /* mean1, rstd1, mean2, rstd2 */
           count(bytes, BS, H, 2, F) ||     /* H, R */
           count(bytes, BS, d, 1, F) ||     /* F */
           count(bytes, BT, d, 12, F) ||    /* Q1 … out */
           count(bytes, BT, d, 3, D) ||     /* S1, S2, S3 */
           count(bytes, BT, 6, 1, D) ||     /* their statistics */
           count(bytes, BS, d, 2, F) ||     /* K2, V2 */
           count(bytes, BT, NH, Tt + Ts, F) || /* A1, A2 */
           count(bytes, BT, H, 2, F);       /* H, R */
}

int tfm_cache_bytes(const s2s_config *cfg, size_t Bmax, size_t Ts_max, size_t Tt_max,
                    size_t *bytes)
{
    const size_t d = cfg->hiddens, Vt = cfg->tgt_vocab, H = cfg->ffn ? cfg->ffn : 1;
    const size_t Tmax = Ts_max > Tt_max ? Ts_max : Tt_max, p = d / (cfg->heads ? cfg->heads : 1);
    size_t BS = 0, BT = 0, BM = 0, rows = 0;
    *bytes = 0;
    if (size_mul(Bmax, Ts_max, &BS) || size_mul(Bmax, Tt_max, &BT) || size_mul(Bmax, Tmax, &BM) ||
        size_add(BS, BT, &rows))
        return -1;
    for (size_t l = 0; l < cfg->layers; l++)
        if (count_blocks(bytes, cfg, BS, BT, Ts_max, Tt_max))
            return -1;
    return count(bytes, BT, Vt, 1, sizeof(float) + sizeof(double)) || /* logits, dlogits */
                   count(bytes, Tmax, d, 1, sizeof(float)) ||         /* P */
                   count(bytes, rows, d, 1, sizeof(float)) ||         /* Xs, Xt */
                   count(bytes, rows, d, 2, sizeof(double)) ||        /* dout, din, denc, dsrc */
                   count(bytes, BM, d, 4, sizeof(double)) ||          /* the scratch: dY … dF */
                   count(bytes, BM, H, 2, sizeof(double)) ||          /* dR, dH */
                   count(bytes, Tmax, p, 3, sizeof(float)) /* mha_forward's qa, ka, slice */
               ? -1
               : 0;
}

int tfm_attention_parts(const s2s_cache *c, const s2s_model *m, int kind, size_t l,
                        tfm_parts *out)
{
    const tfm_cache *tc = tfm_cache_of(c);
    const tfm_model *net = tfm_net(m);
    if (c->arch != m->cfg.arch || !m->cfg.arch->has_self || l >= m->cfg.layers)
        return -1;
    if (kind == S2S_HEADS_ENC) {
        const tblock_cache *b = &tc->enc[l];
        *out = (tfm_parts){b->Q, b->K, b->V, b->concat, b->A, c->Ts, &net->enc[l].mha};
    } else if (kind == S2S_HEADS_DEC) {
        const tfm_dec_cache *b = &tc->dec[l];
        *out = (tfm_parts){b->Q1, b->K1, b->V1, b->concat1, b->A1, c->Tt, &net->dec[l].attention1};
    } else if (kind == S2S_HEADS_CROSS) {
        const tfm_dec_cache *b = &tc->dec[l];
        *out = (tfm_parts){b->Q2, b->K2, b->V2, b->concat2, b->A2, c->Ts, &net->dec[l].attention2};
    } else {
        return -1;
    }
    return 0;
}

/* ---- the table ------------------------------------------------------------ */

static size_t tfm_cross_blocks(const s2s_config *cfg)
{
    return cfg->layers;
}

/* transformer_fast.c scores by dot products only: additive scores run
 * the reference loops. */
static int tfm_fast_supports(const s2s_config *cfg)
{
    return cfg->score == S2S_SCORE_DOT;
}

const s2s_arch tfm_arch = {
    .name = "transformer",
    .label = "d2l's Transformer",
    .has_ffn = 1,
    .has_self = 1,
    .recurrent = 0,
    .default_score = S2S_SCORE_DOT,
    .cross_blocks = tfm_cross_blocks,
    .config_check = tfm_config_check,
    .alloc = tfm_alloc,
    .init = tfm_init,
    .free = tfm_free,
    .cache_alloc = tfm_cache_alloc,
    .cache_free = tfm_cache_free,
    .forward = tfm_forward,
    .backward = tfm_backward,
    .cross = tfm_cross,
    .self = tfm_self,
    .greedy = tfm_greedy,
    .set_heads = tfm_set_heads,
    .fast = &tfm_fast_ops,
    .fast_supports = tfm_fast_supports,
};
