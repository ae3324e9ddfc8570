/* bahdanau.c — d2l's Seq2Seq with Bahdanau attention as naive loops in
 * double (see bahdanau.h for the model and the dimensions B, Ts, Tt, Vs,
 * Vt, d, L): parameters, the forward pass step by step, the backward
 * pass through time, greedy decoding, and its table bah_arch.
 *
 * Every product of sizes in the passes (Tt·B·Ts·d, …) is bounded by a
 * buffer bah_cache_alloc allocated with overflow-checked sizes; the
 * caller (seq2seq.c) refuses a batch larger than the cache. */
#include "bahdanau.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bahdanau_fast.h"
#include "checked.h"
#include "fmath.h"
#include "layers.h"
#include "rng.h"
#include "i18n.h"

/* ---- parameters ----------------------------------------------------------- */

static int alloc2(tensor *t, size_t r, size_t c, char *err, size_t errlen)
{
    size_t shape[2] = {r, c};
    return tensor_alloc(t, c ? 2 : 1, shape, err, errlen);
}

static void add(s2s_model *m, const char *prefix, const char *name, tensor *t)
{
    tparam_add(m->param, &m->nparams, &m->total, prefix, name, t);
}

/* Layer l on one side (0 the encoder, 1 the decoder), the GRU's or the
 * LSTM's. */
static rnn_layer *side_layer(const s2s_model *m, int side, size_t l)
{
    bah_model *net = bah_net(m);
    if (m->cfg.rnn == S2S_RNN_LSTM)
        return side ? &net->dec_lstm[l] : &net->enc_lstm[l];
    return side ? &net->dec_rnn[l] : &net->enc_rnn[l];
}

/* Its four tensors: weight_ih, weight_hh, bias_ih, bias_hh. */
static void layer_tensors(const s2s_model *m, int side, size_t l, tensor *ts[4])
{
    rnn_layer *g = side_layer(m, side, l);
    ts[0] = &g->w_ih, ts[1] = &g->w_hh, ts[2] = &g->b_ih, ts[3] = &g->b_hh;
}

/* nn.GRU's and nn.LSTM's names for each layer: prefix + weight_ih_l{k} …
 * bias_hh_l{k}. */
static void rnn_params(s2s_model *m, int side, const char *prefix)
{
    static const char *const names[4] = {"weight_ih_l%zu", "weight_hh_l%zu", "bias_ih_l%zu",
                                         "bias_hh_l%zu"};
    char name[32];
    tensor *ts[4];
    for (size_t l = 0; l < m->cfg.layers; l++) {
        layer_tensors(m, side, l, ts);
        for (size_t i = 0; i < 4; i++) {
            snprintf(name, sizeof name, names[i], l);
            add(m, prefix, name, ts[i]);
        }
    }
}

/* What seq2seq.c's s2s_config_check leaves to the architecture. */
static int bah_config_check(const s2s_config *cfg, char *err, size_t errlen)
{
    if (cfg->heads != 1 || cfg->bias || cfg->dropout != 0.0) {
        snprintf(err, errlen, "%s", _("Bahdanau's model has one attention, without biases or dropout"));
        return -1;
    }
    if (cfg->rnn != S2S_RNN_GRU && cfg->rnn != S2S_RNN_LSTM) {
        snprintf(err, errlen, _("rnn %d is not gru (0) or lstm (1)"), cfg->rnn);
        return -1;
    }
    if (cfg->score != S2S_SCORE_ADDITIVE && cfg->score != S2S_SCORE_DOT) {
        snprintf(err, errlen, _("score %d is not additive (0) or dot (1)"), cfg->score);
        return -1;
    }
    return 0;
}

/* The tensors of m->cfg into a new m->net, listed in m->param; on failure
 * the caller (s2s_alloc) frees what was allocated. */
static int bah_alloc(s2s_model *m, char *err, size_t errlen)
{
    const size_t d = m->cfg.hiddens, L = m->cfg.layers;
    bah_model *net;
    size_t d2;
    if (size_mul(2, d, &d2)) {
        snprintf(err, errlen, _("num_hiddens %zu is too large"), d);
        return -1;
    }
    if (!(net = m->net = calloc(1, sizeof *net))) {
        snprintf(err, errlen, "%s", _("out of memory for the model"));
        return -1;
    }
    if (alloc2(&net->enc_embedding, m->cfg.src_vocab, d, err, errlen) ||
        alloc2(&net->dec_embedding, m->cfg.tgt_vocab, d, err, errlen) ||
        alloc2(&net->dense.weight, m->cfg.tgt_vocab, d, err, errlen) ||
        alloc2(&net->dense.bias, m->cfg.tgt_vocab, 0, err, errlen))
        return -1;
    /* the additive score's W_q, W_k, w_v (the dot product has none) */
    if (m->cfg.score == S2S_SCORE_ADDITIVE &&
        (alloc2(&net->att_W_k, d, d, err, errlen) || alloc2(&net->att_W_q, d, d, err, errlen) ||
         alloc2(&net->att_w_v, 1, d, err, errlen)))
        return -1;
    for (size_t l = 0; l < L; l++) {
        const size_t in = l == 0 ? d2 : d;
        if (m->cfg.rnn == S2S_RNN_LSTM
                ? lstm_layer_alloc(&net->enc_lstm[l], d, d, err, errlen) ||
                      lstm_layer_alloc(&net->dec_lstm[l], in, d, err, errlen)
                : gru_layer_alloc(&net->enc_rnn[l], d, d, err, errlen) ||
                      gru_layer_alloc(&net->dec_rnn[l], in, d, err, errlen))
            return -1;
    }
    /* state_dict order: Seq2SeqEncoder, then Seq2SeqAttentionDecoder's
     * attention, embedding, rnn, dense */
    add(m, "", "encoder.embedding.weight", &net->enc_embedding);
    rnn_params(m, 0, "encoder.rnn.");
    if (m->cfg.score == S2S_SCORE_ADDITIVE) {
        add(m, "", "decoder.attention.W_k.weight", &net->att_W_k);
        add(m, "", "decoder.attention.W_q.weight", &net->att_W_q);
        add(m, "", "decoder.attention.w_v.weight", &net->att_w_v);
    }
    add(m, "", "decoder.embedding.weight", &net->dec_embedding);
    rnn_params(m, 1, "decoder.rnn.");
    add(m, "", "decoder.dense.weight", &net->dense.weight);
    add(m, "", "decoder.dense.bias", &net->dense.bias);
    return 0;
}

static void bah_free(s2s_model *m)
{
    bah_model *net = bah_net(m);
    if (!net)
        return;
    s2s_ends_free(&net->enc_embedding, &net->dec_embedding, &net->dense);
    for (size_t l = 0; l < TMODEL_MAX_LAYERS; l++) {
        rnn_layer_free(&net->enc_rnn[l]);
        rnn_layer_free(&net->dec_rnn[l]);
        rnn_layer_free(&net->enc_lstm[l]);
        rnn_layer_free(&net->dec_lstm[l]);
    }
    tensor_free(&net->att_W_k);
    tensor_free(&net->att_W_q);
    tensor_free(&net->att_w_v);
    free(net);
}

/* nn.Embedding's start: N(0, 1). */
static void init_normal(tensor *t, rng *r)
{
    for (size_t i = 0; i < t->size; i++)
        t->data[i] = (float)rng_normal(r);
}

/* One side's recurrent layers: nn.GRU's or nn.LSTM's start. */
static void rnn_init(s2s_model *m, int side, rng *r)
{
    for (size_t l = 0; l < m->cfg.layers; l++)
        rnn_layer_init(side_layer(m, side, l), r);
}

/* PyTorch's defaults, drawn from seed in state_dict order. */
static void bah_init(s2s_model *m, unsigned long long seed)
{
    bah_model *net = bah_net(m);
    const size_t d = m->cfg.hiddens;
    rng r;
    rng_seed(&r, seed);
    init_normal(&net->enc_embedding, &r);
    rnn_init(m, 0, &r);
    if (m->cfg.score == S2S_SCORE_ADDITIVE) {
        tparam_uniform(&net->att_W_k, d, &r);
        tparam_uniform(&net->att_W_q, d, &r);
        tparam_uniform(&net->att_w_v, d, &r);
    }
    init_normal(&net->dec_embedding, &r);
    rnn_init(m, 1, &r);
    tparam_uniform(&net->dense.weight, d, &r);
    tparam_uniform(&net->dense.bias, d, &r);
}

/* ---- the cache ------------------------------------------------------------ */

int bah_cache_alloc(bah_cache *c, const s2s_model *m, size_t Bmax, size_t Ts_max, size_t Tt_max,
                    char *err, size_t errlen)
{
    const size_t d = m->cfg.hiddens, L = m->cfg.layers;
    size_t BS, BT, BTS, LB, d2;
    int failed = 0;
    memset(c, 0, sizeof *c);
    if (size_mul(Bmax, Ts_max, &BS) || size_mul(Bmax, Tt_max, &BT) || size_mul(BT, Ts_max, &BTS) ||
        size_mul(L, Bmax, &LB) || size_mul(2, d, &d2) || size_mul(BTS, d, &BTS)) {
        snprintf(err, errlen, _("a batch of %zu pairs of %zu and %zu positions is too large"), Bmax,
                 Ts_max, Tt_max);
        return -1;
    }
    c->Bmax = Bmax;
    c->Ts_max = Ts_max;
    c->Tt_max = Tt_max;
    c->lstm = m->cfg.rnn == S2S_RNN_LSTM;
    c->dot = m->cfg.score == S2S_SCORE_DOT;
    if (c->lstm ? lstm_stack_alloc(&c->enc_l, L, Bmax, Ts_max, d, d, err, errlen)
                : gru_stack_alloc(&c->enc, L, Bmax, Ts_max, d, d, err, errlen))
        return -1;
    if (c->lstm ? lstm_stack_alloc(&c->dec_l, L, Bmax, Tt_max, d2, d, err, errlen)
                : gru_stack_alloc(&c->dec, L, Bmax, Tt_max, d2, d, err, errlen)) {
        gru_stack_free(&c->enc);
        lstm_stack_free(&c->enc_l);
        return -1;
    }
    double **bs[] = {&c->xs, &c->K, &c->dH, &c->dK, &c->dxs}; /* (Ts, B, d) */
    for (size_t i = 0; i < sizeof bs / sizeof bs[0]; i++)
        *bs[i] = tcache_calloc(BS, d, 1, sizeof(double), &failed);
    double **bt[] = {&c->Wq, &c->o, &c->do_}; /* (Tt, B, d) */
    for (size_t i = 0; i < sizeof bt / sizeof bt[0]; i++)
        *bt[i] = tcache_calloc(BT, d, 1, sizeof(double), &failed);
    double **lb[] = {&c->s0, &c->dstate, &c->denc_h}; /* (2, L, B, d) */
    for (size_t i = 0; i < sizeof lb / sizeof lb[0]; i++)
        *lb[i] = tcache_calloc(LB, d, 2, sizeof(double), &failed);
    c->F = tcache_calloc(BTS, 1, 1, sizeof(double), &failed);       /* (Tt, B, Ts, d) */
    c->a = tcache_calloc(BT, Ts_max, 1, sizeof(double), &failed);   /* (Tt, B, Ts) */
    c->A = tcache_calloc(BT, Ts_max, 1, sizeof(float), &failed);    /* (B, Tt, Ts) */
    c->xt = tcache_calloc(BT, d2, 1, sizeof(double), &failed);      /* (Tt, B, 2d) */
    c->dx = tcache_calloc(Bmax, d2, 1, sizeof(double), &failed);    /* (B, 2d) */
    c->dWq = tcache_calloc(Bmax, d, 1, sizeof(double), &failed);    /* (B, d) */
    c->de = tcache_calloc(Ts_max, 1, 1, sizeof(double), &failed);   /* (Ts,) */
    if (failed) {
        bah_cache_free(c);
        snprintf(err, errlen, _("out of memory for a batch of %zu pairs of %zu and %zu positions"),
                 Bmax, Ts_max, Tt_max);
        return -1;
    }
    return 0;
}

void bah_cache_free(bah_cache *c)
{
    void *ps[] = {c->xs, c->s0, c->K,  c->Wq,     c->F,  c->a,  c->A,   c->xt,  c->o,
                  c->do_, c->dx, c->dstate, c->dH, c->dK, c->dxs, c->denc_h, c->dWq, c->de};
    gru_stack_free(&c->enc);
    gru_stack_free(&c->dec);
    lstm_stack_free(&c->enc_l);
    lstm_stack_free(&c->dec_l);
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
        free(ps[i]);
    memset(c, 0, sizeof *c);
}

/* ---- forward -------------------------------------------------------------- */

/* y (n, out) = x (n, in) · Wᵀ, W (out, in) float32, in double. */
static void matmul_t(double *y, const double *x, const float *W, size_t n, size_t in, size_t out)
{
    for (size_t r = 0; r < n; r++)
        for (size_t i = 0; i < out; i++) {
            double s = 0.0;
            for (size_t k = 0; k < in; k++)
                s += (double)W[i * in + k] * x[r * in + k];
            y[r * out + i] = s;
        }
}

/* A source's valid length as the mask reads it: 1 … Ts. */
static size_t valid_len(const long *src_lens, size_t b, size_t Ts)
{
    if (!src_lens || src_lens[b] <= 0 || (size_t)src_lens[b] > Ts)
        return Ts;
    return (size_t)src_lens[b];
}

/* Layer l's hidden state (the GRU's, or the LSTM's h) after step t of
 * the encoder (side 0) or the decoder (side 1) (B, d); t = (size_t)-1:
 * the start's. */
static const double *state_h(const bah_cache *c, int side, size_t l, size_t t)
{
    if (c->lstm)
        return lstm_stack_state(side ? &c->dec_l : &c->enc_l, l, t);
    return gru_stack_state(side ? &c->dec : &c->enc, l, t);
}

void bah_encode(const s2s_model *m, bah_cache *c, const int *src, size_t B, size_t Ts)
{
    const bah_model *net = bah_net(m);
    const size_t d = m->cfg.hiddens, L = m->cfg.layers;
    c->B = B;
    c->Ts = Ts;
    c->Tt = c->Tt_max;
    /* 1. xs (Ts, B, d) = encoder.embedding[src], time-major */
    for (size_t t = 0; t < Ts; t++)
        for (size_t b = 0; b < B; b++)
            for (size_t k = 0; k < d; k++)
                c->xs[(t * B + b) * d + k] =
                    net->enc_embedding.data[(size_t)src[b * Ts + t] * d + k];
    /* 2. the encoder's GRU (or LSTM) from zeros: H (Ts, B, d), its final
     * states s0 (the LSTM's h, then its c) */
    if (c->lstm)
        lstm_stack_forward(&c->enc_l, net->enc_lstm, c->xs, NULL, NULL, B, Ts);
    else
        gru_stack_forward(&c->enc, net->enc_rnn, c->xs, NULL, B, Ts);
    for (size_t l = 0; l < L; l++) {
        memcpy(c->s0 + l * B * d, state_h(c, 0, l, Ts - 1), B * d * sizeof *c->s0);
        if (c->lstm)
            memcpy(c->s0 + (L + l) * B * d, lstm_stack_cell(&c->enc_l, l, Ts - 1),
                   B * d * sizeof *c->s0);
    }
    /* 3. K (Ts, B, d) = H · W_kᵀ, once for every step (the additive score's) */
    for (size_t t = 0; t < Ts && !c->dot; t++)
        matmul_t(c->K + t * B * d, state_h(c, 0, L - 1, t), net->att_W_k.data, B, d, d);
    /* 4. the decoder starts from the encoder's final states */
    if (c->lstm)
        lstm_stack_start(&c->dec_l, c->s0, c->s0 + L * B * d, B);
    else
        gru_stack_start(&c->dec, c->s0, B);
}

/* Step t's additive attention for row b: q' = W_q q_t (d,) given; the
 * features F (Ts, d), the weights a (Ts,) and the context ctx (d,). With
 * --score dot, q' = q_t and e_j = q_t · H_j / √d. */
static void attend(const s2s_model *m, bah_cache *c, size_t t, size_t b, size_t len, double *ctx)
{
    const bah_model *net = bah_net(m);
    const size_t d = m->cfg.hiddens, B = c->B, Ts = c->Ts;
    const double *q = c->Wq + (t * B + b) * d;
    double *F = c->F + ((t * B + b) * Ts) * d, *a = c->a + (t * B + b) * Ts;
    double max = -INFINITY, sum = 0.0;
    /* e_j = w_v · tanh(q' + K_j), j < len; the others masked out */
    for (size_t j = 0; j < Ts; j++) {
        const double *H = state_h(c, 0, m->cfg.layers - 1, j) + b * d;
        double e = 0.0;
        for (size_t i = 0; i < d && !c->dot; i++) {
            F[j * d + i] = fm_tanh(q[i] + c->K[(j * B + b) * d + i]);
            e += (double)net->att_w_v.data[i] * F[j * d + i];
        }
        /* or e_j = q · H_j / √d (DotProductAttention) */
        if (c->dot) {
            for (size_t i = 0; i < d; i++)
                e += q[i] * H[i];
            e /= sqrt((double)d);
        }
        a[j] = e;
        if (j < len && e > max)
            max = e;
    }
    /* a = softmax over j < len, 0 beyond (d2l's masked_softmax) */
    for (size_t j = 0; j < Ts; j++) {
        a[j] = j < len ? fm_exp(a[j] - max) : 0.0;
        sum += a[j];
    }
    for (size_t j = 0; j < Ts; j++) {
        a[j] /= sum;
        c->A[(b * c->Tt + t) * Ts + j] = (float)a[j];
    }
    /* ctx = Σ_j a_j H_j */
    for (size_t i = 0; i < d; i++) {
        double s = 0.0;
        for (size_t j = 0; j < Ts; j++)
            s += a[j] * state_h(c, 0, m->cfg.layers - 1, j)[b * d + i];
        ctx[i] = s;
    }
}

void bah_decode_step(const s2s_model *m, bah_cache *c, float *logits, const long *src_lens,
                     const int *dec_in, size_t t)
{
    const bah_model *net = bah_net(m);
    const size_t d = m->cfg.hiddens, L = m->cfg.layers, B = c->B, Tt = c->Tt,
                 Vt = m->cfg.tgt_vocab;
    double *x = c->xt + t * B * 2 * d, *o = c->o + t * B * d;
    /* 1. the query: s(t − 1), the last layer's previous state (the LSTM's
     * h); W_q q (B, d), or q itself for the dot product */
    if (c->dot)
        memcpy(c->Wq + t * B * d, state_h(c, 1, L - 1, t - 1), B * d * sizeof *c->Wq);
    else
        matmul_t(c->Wq + t * B * d, state_h(c, 1, L - 1, t - 1), net->att_W_q.data, B, d, d);
    for (size_t b = 0; b < B; b++) {
        /* 2. x_t = [context; decoder.embedding[dec_in[b, t]]] (2d,) */
        const size_t token = (size_t)dec_in[b * Tt + t];
        attend(m, c, t, b, valid_len(src_lens, b, c->Ts), x + b * 2 * d);
        for (size_t k = 0; k < d; k++)
            x[b * 2 * d + d + k] = net->dec_embedding.data[token * d + k];
    }
    /* 3. the GRU's (LSTM's) step; its last layer's h is the output o_t (B, d) */
    if (c->lstm)
        lstm_stack_step(&c->dec_l, net->dec_lstm, t, x);
    else
        gru_stack_step(&c->dec, net->dec_rnn, t, x);
    memcpy(o, state_h(c, 1, L - 1, t), B * d * sizeof *o);
    /* 4. logits[b, t] (Vt,) = o_t · decoder.dense.weightᵀ + decoder.dense.bias */
    for (size_t b = 0; b < B; b++)
        for (size_t v = 0; v < Vt; v++) {
            double s = net->dense.bias.data[v];
            for (size_t k = 0; k < d; k++)
                s += (double)net->dense.weight.data[v * d + k] * o[b * d + k];
            logits[(b * Tt + t) * Vt + v] = (float)s;
        }
}

void bah_forward(const s2s_model *m, bah_cache *c, float *logits, const int *src,
                 const long *src_lens, const int *dec_in, size_t B, size_t Ts, size_t Tt)
{
    bah_encode(m, c, src, B, Ts);
    c->Tt = Tt;
    for (size_t t = 0; t < Tt; t++)
        bah_decode_step(m, c, logits, src_lens, dec_in, t);
}

/* ---- backward ------------------------------------------------------------- */

static double *grad(const s2s_model *m, double *grads, const tensor *t)
{
    return tparam_grad(m->param, m->nparams, grads, t);
}

/* One side's recurrent layers' gradients (the GRU's or the LSTM's). */
static void side_grads(rnn_grads *g, const s2s_model *m, double *grads, int side)
{
    tensor *ts[4];
    double *p[4];
    for (size_t l = 0; l < m->cfg.layers; l++) {
        layer_tensors(m, side, l, ts);
        for (size_t i = 0; i < 4; i++)
            p[i] = grad(m, grads, ts[i]);
        g[l] = (rnn_grads){p[0], p[1], p[2], p[3]};
    }
}

/* The dense layer's backward: from dlogits (B, Tt, Vt), its weight and
 * bias gradients +=, and d o (Tt, B, d) = dlogits · W. */
static void dense_backward(double *grads, bah_cache *c, const s2s_model *m, const double *dlogits)
{
    const bah_model *net = bah_net(m);
    const size_t d = m->cfg.hiddens, B = c->B, Tt = c->Tt, Vt = m->cfg.tgt_vocab;
    double *dW = grad(m, grads, &net->dense.weight), *db = grad(m, grads, &net->dense.bias);
    for (size_t t = 0; t < Tt; t++)
        for (size_t b = 0; b < B; b++) {
            const double *dl = dlogits + (b * Tt + t) * Vt, *o = c->o + (t * B + b) * d;
            double *dout = c->do_ + (t * B + b) * d;
            memset(dout, 0, d * sizeof *dout);
            for (size_t v = 0; v < Vt; v++) {
                db[v] += dl[v];
                for (size_t k = 0; k < d; k++) {
                    dW[v * d + k] += dl[v] * o[k];
                    dout[k] += (double)net->dense.weight.data[v * d + k] * dl[v];
                }
            }
        }
}

/* Step t's attention backward for row b, from dctx (d,) = d loss / d c_t
 * (the decoder GRU's input gradient's first d entries): d H, d K and
 * d w_v +=, and c->dWq[b] (d,) = d loss / d (W_q q_t). */
static void attend_backward(double *grads, bah_cache *c, const s2s_model *m, size_t t, size_t b,
                            const double *dctx)
{
    const bah_model *net = bah_net(m);
    const size_t d = m->cfg.hiddens, B = c->B, Ts = c->Ts, L = m->cfg.layers;
    const double *a = c->a + (t * B + b) * Ts, *F = c->F + ((t * B + b) * Ts) * d;
    double *dq = c->dWq + b * d, *de = c->de, dot = 0.0;
    /* c = Σ_j a_j H_j: d a_j = dctx · H_j (into de), d H_j += a_j dctx */
    for (size_t j = 0; j < Ts; j++) {
        const double *H = state_h(c, 0, L - 1, j) + b * d;
        double s = 0.0;
        for (size_t i = 0; i < d; i++) {
            s += dctx[i] * H[i];
            c->dH[(j * B + b) * d + i] += a[j] * dctx[i];
        }
        de[j] = s;
        dot += a[j] * s;
    }
    /* the softmax: d e_j = a_j (d a_j − Σ_k a_k d a_k), 0 where masked */
    for (size_t j = 0; j < Ts; j++)
        de[j] = a[j] * (de[j] - dot);
    memset(dq, 0, d * sizeof *dq);
    if (c->dot) {
        /* e_j = q · H_j / √d: d q += d e_j H_j / √d, d H_j += d e_j q / √d */
        const double *q = c->Wq + (t * B + b) * d, sd = sqrt((double)d);
        for (size_t j = 0; j < Ts; j++) {
            double *dH = c->dH + (j * B + b) * d;
            const double *H = state_h(c, 0, L - 1, j) + b * d;
            for (size_t i = 0; i < d; i++) {
                dq[i] += de[j] * H[i] / sd;
                dH[i] += de[j] * q[i] / sd;
            }
        }
        return;
    }
    /* e_j = w_v · F_j, F_j = tanh(q' + K_j): d w_v += d e_j F_j, and
     * d (q' + K_j) = d e_j w_v ⊙ (1 − F_j²), into d q' and d K_j */
    double *dwv = grad(m, grads, &net->att_w_v);
    for (size_t j = 0; j < Ts; j++)
        for (size_t i = 0; i < d; i++) {
            const double f = F[j * d + i];
            const double dpre = de[j] * (double)net->att_w_v.data[i] * (1.0 - f * f);
            dwv[i] += de[j] * f;
            dq[i] += dpre;
            c->dK[(j * B + b) * d + i] += dpre;
        }
}

/* q' = W_q q_t: d W_q += d q' ⊗ q, and d q (= d s(t − 1)'s last layer)
 * += W_qᵀ d q', into dstate's last layer (for the dot product q' = q). */
static void query_backward(double *grads, bah_cache *c, const s2s_model *m, size_t t)
{
    const bah_model *net = bah_net(m);
    const size_t d = m->cfg.hiddens, B = c->B, L = m->cfg.layers;
    const double *q = state_h(c, 1, L - 1, t - 1);
    double *ds = c->dstate + (L - 1) * B * d;
    if (c->dot) {
        for (size_t i = 0; i < B * d; i++)
            ds[i] += c->dWq[i];
        return;
    }
    double *dW = grad(m, grads, &net->att_W_q);
    for (size_t b = 0; b < B; b++)
        for (size_t i = 0; i < d; i++) {
            const double g = c->dWq[b * d + i];
            for (size_t k = 0; k < d; k++) {
                dW[i * d + k] += g * q[b * d + k];
                ds[b * d + k] += (double)net->att_W_q.data[i * d + k] * g;
            }
        }
}

/* The decoder's steps in reverse: from d o, the GRU's, the attention's and
 * the embedding's gradients; d H and d K gathered; c->dstate ends as d
 * loss / d the decoder's start (the encoder's final states). */
static void decoder_backward(double *grads, bah_cache *c, const s2s_model *m, const int *dec_in)
{
    const bah_model *net = bah_net(m);
    const size_t d = m->cfg.hiddens, B = c->B, Tt = c->Tt, L = m->cfg.layers;
    rnn_grads g[TMODEL_MAX_LAYERS];
    double *demb = grad(m, grads, &net->dec_embedding);
    side_grads(g, m, grads, 1);
    memset(c->dstate, 0, 2 * L * B * d * sizeof *c->dstate);
    for (size_t t = Tt; t-- > 0;) {
        /* o_t is the last layer's state after step t */
        rnn_add(c->dstate + (L - 1) * B * d, c->do_ + t * B * d, B * d);
        /* the GRU's (LSTM's) step: dstate now d the states after step
         * t − 1 (the LSTM's d h, then d c); dx (B, 2d) */
        memset(c->dx, 0, B * 2 * d * sizeof *c->dx);
        if (c->lstm)
            lstm_stack_step_backward(&c->dec_l, net->dec_lstm, g, t, c->dstate,
                                     c->dstate + L * B * d, c->xt + t * B * 2 * d, c->dx);
        else
            gru_stack_step_backward(&c->dec, net->dec_rnn, g, t, c->dstate,
                                    c->xt + t * B * 2 * d, c->dx);
        for (size_t b = 0; b < B; b++) {
            /* x_t = [c_t; embedding]: the embedding row's gradient */
            const size_t token = (size_t)dec_in[b * Tt + t];
            for (size_t k = 0; k < d; k++)
                demb[token * d + k] += c->dx[b * 2 * d + d + k];
            attend_backward(grads, c, m, t, b, c->dx + b * 2 * d);
        }
        /* the query was s(t − 1): its gradient joins dstate's last layer */
        query_backward(grads, c, m, t);
    }
}

/* The encoder's backward: K = H · W_kᵀ into d W_k and d H; then the GRU
 * through time from d H and the decoder start's gradient, and the
 * embedding rows. */
static void encoder_backward(double *grads, bah_cache *c, const s2s_model *m, const int *src)
{
    const bah_model *net = bah_net(m);
    const size_t d = m->cfg.hiddens, B = c->B, Ts = c->Ts, L = m->cfg.layers;
    rnn_grads g[TMODEL_MAX_LAYERS];
    double *dWk = c->dot ? NULL : grad(m, grads, &net->att_W_k);
    double *demb = grad(m, grads, &net->enc_embedding);
    side_grads(g, m, grads, 0);
    for (size_t t = 0; t < Ts && !c->dot; t++) {
        const double *H = state_h(c, 0, L - 1, t);
        for (size_t b = 0; b < B; b++)
            for (size_t i = 0; i < d; i++) {
                const double dk = c->dK[(t * B + b) * d + i];
                for (size_t k = 0; k < d; k++) {
                    dWk[i * d + k] += dk * H[b * d + k];
                    c->dH[(t * B + b) * d + k] += (double)net->att_W_k.data[i * d + k] * dk;
                }
            }
    }
    memset(c->dxs, 0, Ts * B * d * sizeof *c->dxs);
    if (c->lstm)
        lstm_stack_backward(&c->enc_l, net->enc_lstm, g, c->xs, c->dH, c->dstate,
                            c->dstate + L * B * d, c->dxs, c->denc_h, c->denc_h + L * B * d, Ts);
    else
        gru_stack_backward(&c->enc, net->enc_rnn, g, c->xs, c->dH, c->dstate, c->dxs, NULL,
                           c->denc_h, Ts);
    for (size_t t = 0; t < Ts; t++)
        for (size_t b = 0; b < B; b++)
            for (size_t k = 0; k < d; k++)
                demb[(size_t)src[b * Ts + t] * d + k] += c->dxs[(t * B + b) * d + k];
}

void bah_backward(double *grads, bah_cache *c, const s2s_model *m, const double *dlogits,
                  const int *src, const long *src_lens, const int *dec_in)
{
    const size_t n = c->Ts * c->B * m->cfg.hiddens;
    (void)src_lens; /* the masked weights are 0 in c->a: nothing flows there */
    memset(c->dH, 0, n * sizeof *c->dH);
    memset(c->dK, 0, n * sizeof *c->dK);
    dense_backward(grads, c, m, dlogits);
    decoder_backward(grads, c, m, dec_in);
    encoder_backward(grads, c, m, src);
}

/* ---- greedy decoding ------------------------------------------------------ */

/* What a step of greedy decoding reads: the decoder's state in the cache,
 * the logits of every step (max_len, Vt), the cross rows (max_len, Ts). */
typedef struct greedy_step {
    const s2s_model *m;
    bah_cache *c;
    float *logits;
    const long *lens;
    size_t Ts;
    float *cross;
} greedy_step;

/* Step t: the decoder one step on from its state; its attention into row
 * t of cross. */
static const float *decode_step(void *ctx, const int *dec_in, size_t t, char *err, size_t errlen)
{
    const greedy_step *g = ctx;
    const size_t Vt = g->m->cfg.tgt_vocab, Ts = g->Ts;
    (void)err;
    (void)errlen;
    bah_decode_step(g->m, g->c, g->logits, g->lens, dec_in, t);
    if (g->cross)
        memcpy(g->cross + t * Ts, g->c->A + t * Ts, Ts * sizeof *g->cross);
    return g->logits + t * Vt;
}

int bah_greedy(const s2s_model *m, const int *src, long src_len, size_t Ts, int bos, int eos,
               size_t max_len, int *out, size_t *n_out, float *cross, char *err, size_t errlen)
{
    const size_t Vt = m->cfg.tgt_vocab;
    const long lens[1] = {src_len};
    bah_cache c;
    greedy_step step;
    float *logits = NULL;
    int *dec_in = NULL, status = -1, failed = 0;
    size_t cells;

    *n_out = 0;
    if (size_mul(max_len, Ts, &cells)) {
        snprintf(err, errlen, _("the attention of %zu steps is too large"), max_len);
        return -1;
    }
    if (cross)
        memset(cross, 0, cells * sizeof *cross);
    if (max_len == 0)
        return 0;
    if (bah_cache_alloc(&c, m, 1, Ts, max_len, err, errlen))
        return -1;
    logits = tcache_calloc(max_len, Vt, 1, sizeof *logits, &failed);
    dec_in = tcache_calloc(max_len, 1, 1, sizeof *dec_in, &failed);
    if (failed) {
        snprintf(err, errlen, _("out of memory for %zu decoding steps"), max_len);
        goto done;
    }
    /* the encoder once; then from <bos>, each step's argmax fed back, the
     * state carried, until <eos> or max_len tokens */
    bah_encode(m, &c, src, 1, Ts);
    step = (greedy_step){m, &c, logits, lens, Ts, cross};
    status = s2s_greedy_loop(decode_step, &step, dec_in, Vt, bos, eos, max_len, out, n_out, err,
                             errlen);
done:
    free(logits);
    free(dec_in);
    bah_cache_free(&c);
    return status;
}

/* ---- the table ------------------------------------------------------------ */

static size_t bah_cross_blocks(const s2s_config *cfg)
{
    (void)cfg;
    return 1; /* its one attention */
}

/* c's sizes set by s2s_cache_alloc: the logits, their gradient (BT, Vt)
 * and the bah_cache. */
static int bah_cache_part(s2s_cache *c, const s2s_model *m, char *err, size_t errlen)
{
    const size_t BT = c->Bmax * c->Tt_max; /* checked */
    int failed = 0;
    c->logits = tcache_calloc(BT, m->cfg.tgt_vocab, 1, sizeof(float), &failed);
    c->dlogits = tcache_calloc(BT, m->cfg.tgt_vocab, 1, sizeof(double), &failed);
    c->net = calloc(1, sizeof(bah_cache));
    if (failed || !c->net) {
        s2s_cache_free(c);
        snprintf(err, errlen, _("out of memory for a batch of %zu positions"), BT);
        return -1;
    }
    if (bah_cache_alloc(c->net, m, c->Bmax, c->Ts_max, c->Tt_max, err, errlen)) {
        free(c->net);
        c->net = NULL;
        s2s_cache_free(c);
        return -1;
    }
    return 0;
}

static void bah_cache_part_free(s2s_cache *c)
{
    if (c->net)
        bah_cache_free(c->net);
    free(c->net);
    c->net = NULL;
}

static int bah_forward_op(const s2s_model *m, s2s_cache *c, const int *src, const long *src_lens,
                          const int *dec_in, size_t B, size_t Ts, size_t Tt,
                          const mha_dropout *drop, char *err, size_t errlen)
{
    (void)drop, (void)err, (void)errlen; /* no dropout: bahdanau.h */
    bah_forward(m, c->net, c->logits, src, src_lens, dec_in, B, Ts, Tt);
    c->B = B;
    c->Ts = Ts;
    c->Tt = Tt;
    return 0;
}

static int bah_backward_op(double *grads, s2s_cache *c, const s2s_model *m, const int *src,
                           const long *src_lens, const int *dec_in, const mha_dropout *drop,
                           char *err, size_t errlen)
{
    (void)drop, (void)err, (void)errlen;
    bah_backward(grads, c->net, m, c->dlogits, src, src_lens, dec_in);
    return 0;
}

static const float *bah_cross(const s2s_cache *c, size_t l)
{
    (void)l;
    return ((const bah_cache *)c->net)->A;
}

const s2s_arch bah_arch = {
    .name = "bahdanau",
    .label = "Bahdanau's model",
    .has_ffn = 0,
    .has_self = 0,
    .recurrent = 1,
    .default_score = S2S_SCORE_ADDITIVE,
    .cross_blocks = bah_cross_blocks,
    .config_check = bah_config_check,
    .alloc = bah_alloc,
    .init = bah_init,
    .free = bah_free,
    .cache_alloc = bah_cache_part,
    .cache_free = bah_cache_part_free,
    .forward = bah_forward_op,
    .backward = bah_backward_op,
    .cross = bah_cross,
    .self = NULL,
    .greedy = bah_greedy,
    .fast = &bah_fast_ops,
};
