/* cells_compute.c — each printing cell of zh.d2l.ai chapter 10 (and
 * d2l.ai chapter 11) computed by attn's modules (cells_compute.h).
 *
 * Sizes are the book's; where attn's module differs from the book's in a
 * way the printed output cannot show, the comment says so.
 */
#include "cells_compute.h"
#include "i18n.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bahdanau.h"
#include "checked.h"
#include "encoder.h"
#include "layers.h"
#include "pool.h"
#include "rng.h"
#include "score.h"
#include "selfattn.h"
#include "seq2seq.h"
#include "torch_str.h"
#include "transformer.h"
#include "vit.h"

/* "out of memory" into err; -1. */
static int no_memory(char *err, size_t errlen, const char *what)
{
    snprintf(err, errlen, _("out of memory for %s"), what);
    return -1;
}

/* n floats, each v (NULL when out of memory). */
static float *filled(size_t n, float v)
{
    float *p = malloc(n * sizeof *p);
    for (size_t i = 0; p && i < n; i++)
        p[i] = v;
    return p;
}

/* ---- 10.2 attention pooling ------------------------------------------- */

int cells_n_test(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    pool_data d;
    rng r;
    rng_seed(&r, seed);
    /* the section's data: x_test = arange(0, 5, 0.1) */
    if (pool_data_generate(&d, POOL_ZH, 50, 0.5, &r) < 0)
        return no_memory(err, errlen, "the section's data");
    fprintf(f, "%zu", d.m);
    pool_data_free(&d);
    return 0;
}

int cells_bmm_shape(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    /* X ones (2, 1, 4), Y ones (2, 4, 6): torch.bmm(X, Y) (2, 1, 6) */
    const size_t B = 2, a = 1, b = 4, c = 6;
    float *X = filled(B * a * b, 1), *Y = filled(B * b * c, 1), *Z = filled(B * a * c, 0);
    (void)seed;
    if (!X || !Y || !Z) {
        FREE_EACH(X, Y, Z);
        return no_memory(err, errlen, "the batch matrix product");
    }
    score_weighted_sum(Z, X, Y, B, a, b, c);
    torch_size_str(f, (size_t[]){B, a, c}, 3);
    FREE_EACH(X, Y, Z);
    return 0;
}

int cells_en_bmm_shape(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    /* Q ones (2, 3, 4), K ones (2, 4, 6): torch.bmm(Q, K) (2, 3, 6) */
    const size_t B = 2, a = 3, b = 4, c = 6;
    float *Q = filled(B * a * b, 1), *K = filled(B * b * c, 1), *Z = filled(B * a * c, 0);
    (void)seed;
    if (!Q || !K || !Z) {
        FREE_EACH(Q, K, Z);
        return no_memory(err, errlen, "the batch matrix product");
    }
    score_weighted_sum(Z, Q, K, B, a, b, c);
    torch_size_str(f, (size_t[]){B, a, c}, 3);
    FREE_EACH(Q, K, Z);
    return 0;
}

int cells_bmm_weights(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    /* weights 0.1 · ones (2, 10) as (2, 1, 10), values arange(20.0) as (2, 10, 1) */
    float w[20], v[20], out[2];
    (void)seed;
    (void)err;
    (void)errlen;
    for (size_t i = 0; i < 20; i++) {
        w[i] = 1.0f * 0.1f;
        v[i] = (float)i;
    }
    score_weighted_sum(out, w, v, 2, 1, 10, 1);
    return torch_str(f, out, (size_t[]){2, 1, 1}, 3, NULL);
}

int cells_pool_epochs(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    /* as attn pool draws them: the data, then w's start torch.rand((1,)) */
    pool_data d;
    rng r;
    double losses[5], *yhat, *dyhat, *att;
    rng_seed(&r, seed);
    if (pool_data_generate(&d, POOL_ZH, 50, 0.5, &r) < 0)
        return no_memory(err, errlen, "the section's data");
    double w = (float)rng_uniform(&r);
    yhat = malloc(d.n * sizeof *yhat);
    dyhat = malloc(d.n * sizeof *dyhat);
    att = malloc(d.n * d.n * sizeof *att);
    if (!yhat || !dyhat || !att) {
        FREE_EACH(yhat, dyhat, att);
        pool_data_free(&d);
        return no_memory(err, errlen, "the training");
    }
    /* 5 epochs of SGD, lr 0.5, each point's keys the other 49; the loss
     * printed is the one before each step, as the cell prints it */
    pool_param_train(&w, losses, 5, 0.5, d.x_train, d.y_train, d.n, 0, yhat, dyhat,
                     att);
    for (size_t e = 0; e < 5; e++)
        fprintf(f, "%sepoch %zu, loss %.6f", e ? "\n" : "", e + 1, losses[e]);
    FREE_EACH(yhat, dyhat, att);
    pool_data_free(&d);
    return 0;
}

/* ---- 10.3 scoring functions ---------------------------------------------- */

/* masked_softmax(torch.rand(2, 2, 4), lens): call 0 or 1 of the section,
 * X drawn as `attn score --masked-softmax` draws it (one stream, in turn). */
static int masked_softmax_call(FILE *f, unsigned long long seed, int call)
{
    static const long lens1[2] = {2, 3}, lens2[4] = {1, 3, 2, 4};
    const mha_masks masks[2] = {{lens1, 0, 0, 0}, {lens2, 1, 0, 0}};
    float X[2 * 2 * 4];
    rng g;
    rng_seed(&g, seed);
    for (int c = 0; c <= call; c++)
        for (size_t i = 0; i < 16; i++)
            X[i] = (float)rng_uniform(&g);
    score_masked_softmax(X, 2, 2, 4, &masks[call]);
    return torch_str(f, X, (size_t[]){2, 2, 4}, 3, NULL);
}

int cells_masked_softmax_lens(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    return masked_softmax_call(f, seed, 0);
}

int cells_masked_softmax_lens2d(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    return masked_softmax_call(f, seed, 1);
}

/* The section's keys, values and lengths: keys ones (2, 10, 2), values
 * arange(40) as (10, 4) for each example, valid_lens [2, 6]. */
static void section_kv(float *keys, float *values)
{
    for (size_t i = 0; i < 2 * 10 * 2; i++)
        keys[i] = 1.0f;
    for (size_t i = 0; i < 2 * 10 * 4; i++)
        values[i] = (float)(i % 40);
}

/* AdditiveAttention(2, 20, 8) on the section's inputs: out (2, 1, 4). */
static int additive_out(float *out, unsigned long long seed, char *err, size_t errlen)
{
    static const long lens[2] = {2, 6};
    const mha_masks mask = {lens, 0, 0, 0};
    float queries[2 * 20], keys[40], values[80], scores[20], qh[2 * 8], kh[2 * 10 * 8];
    score_additive m;
    memset(&m, 0, sizeof m); /* no biases: their tensors stay empty */
    rng g;
    rng_seed(&g, seed);
    /* queries normal (2, 1, 20); AdditiveAttention(2, 20, 8) drawn after them */
    for (size_t i = 0; i < 40; i++)
        queries[i] = (float)rng_normal(&g);
    section_kv(keys, values);
    if (score_additive_init(&m, 20, 2, 8, &g, err, errlen))
        return -1;
    score_additive_scores(scores, qh, kh, queries, keys, 2, 1, 10, &m);
    score_masked_softmax(scores, 2, 1, 10, &mask);
    score_weighted_sum(out, scores, values, 2, 1, 10, 4);
    score_additive_free(&m);
    return 0;
}

int cells_additive(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    float out[8];
    if (additive_out(out, seed, err, errlen))
        return -1;
    /* the module has parameters: its output carries bmm's grad_fn */
    return torch_str(f, out, (size_t[]){2, 1, 4}, 3,
                     &(torch_str_opts){0, "grad_fn=<BmmBackward0>", 0, 1});
}

int cells_en_additive_shape(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    float out[8];
    if (additive_out(out, seed, err, errlen))
        return -1;
    torch_size_str(f, (size_t[]){2, 1, 4}, 3);
    return 0;
}

/* DotProductAttention on the section's inputs: out (2, 1, 4). */
static void dot_out(float *out, unsigned long long seed)
{
    static const long lens[2] = {2, 6};
    const mha_masks mask = {lens, 0, 0, 0};
    float queries[2 * 2], keys[40], values[80], scores[20];
    rng g;
    rng_seed(&g, seed + 1);
    /* queries normal (2, 1, 2); DotProductAttention has no parameters */
    for (size_t i = 0; i < 4; i++)
        queries[i] = (float)rng_normal(&g);
    section_kv(keys, values);
    score_dot(scores, queries, keys, 2, 1, 10, 2);
    score_masked_softmax(scores, 2, 1, 10, &mask);
    score_weighted_sum(out, scores, values, 2, 1, 10, 4);
}

int cells_dot(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    float out[8];
    (void)err;
    (void)errlen;
    dot_out(out, seed);
    return torch_str(f, out, (size_t[]){2, 1, 4}, 3, &(torch_str_opts){0, NULL, 0, 1});
}

int cells_en_dot_shape(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    float out[8];
    (void)err;
    (void)errlen;
    dot_out(out, seed);
    torch_size_str(f, (size_t[]){2, 1, 4}, 3);
    return 0;
}

/* ---- 10.4 Bahdanau attention ------------------------------------------ */

/* The section's encoder and attention decoder on zeros (4, 7): which
 * part is printed (BAH_TUPLE the zh cell's tuple; else one shape). */
enum bah_part { BAH_TUPLE, BAH_OUTPUT, BAH_ENC, BAH_HIDDEN };

static void bah_print(FILE *f, const s2s_cache *c, const s2s_model *m, enum bah_part part)
{
    const bah_cache *bc = c->net;
    /* output (B, Tt, Vt); the state: the encoder's outputs (B, Ts, d),
     * the hidden state (L, B, d) and the valid lengths: 3 parts */
    const size_t out[3] = {c->B, c->Tt, m->cfg.tgt_vocab};
    const size_t enc[3] = {bc->B, bc->Ts, bc->enc.st.d}, hidden[2] = {bc->dec.st.B, bc->dec.st.d};
    if (part == BAH_OUTPUT)
        torch_size_str(f, out, 3);
    else if (part == BAH_ENC)
        torch_size_str(f, enc, 3);
    else if (part == BAH_HIDDEN)
        torch_size_str(f, hidden, 2);
    if (part != BAH_TUPLE)
        return;
    fputc('(', f);
    torch_size_str(f, out, 3);
    fprintf(f, ", 3, ");
    torch_size_str(f, enc, 3);
    fprintf(f, ", %zu, ", bc->dec.st.L);
    torch_size_str(f, hidden, 2);
    fputc(')', f);
}

static int bahdanau(FILE *f, unsigned long long seed, enum bah_part part, char *err,
                    size_t errlen)
{
    /* vocab 10, num_hiddens 16, 2 layers (attn's embeddings are
     * num_hiddens wide: the book's embed_size 8 shows in no shape);
     * X zeros (4, 7) as the source and the decoder's input */
    const size_t B = 4, T = 7;
    s2s_config cfg = {10, 10, 16, 1, 2, 1, 0, 0, s2s_arch_find("bahdanau"), S2S_RNN_GRU,
                      S2S_SCORE_ADDITIVE};
    s2s_model m;
    s2s_cache c;
    int X[4 * 7] = {0}, rc = -1;
    if (s2s_alloc(&m, &cfg, err, errlen))
        return -1;
    s2s_init(&m, seed);
    if (s2s_cache_alloc(&c, &m, B, T, T, err, errlen)) {
        s2s_free(&m);
        return -1;
    }
    if (s2s_forward(&m, &c, X, NULL, X, B, T, T, NULL, err, errlen) == 0) {
        bah_print(f, &c, &m, part);
        rc = 0;
    }
    s2s_cache_free(&c);
    s2s_free(&m);
    return rc;
}

int cells_bahdanau_shapes(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    return bahdanau(f, seed, BAH_TUPLE, err, errlen);
}

int cells_en_bahdanau_output(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    return bahdanau(f, seed, BAH_OUTPUT, err, errlen);
}

int cells_en_bahdanau_enc(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    return bahdanau(f, seed, BAH_ENC, err, errlen);
}

int cells_en_bahdanau_hidden(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    return bahdanau(f, seed, BAH_HIDDEN, err, errlen);
}

/* ---- 10.5, 10.6 multi-head and self-attention --------------------------- */

/* MultiHeadAttention(100, …, 5 heads) on queries ones (2, 4, 100) and keys
 * = values ones (2, Nk, 100), valid_lens [3, 2]: the output's shape. */
static int mha_shape(FILE *f, unsigned long long seed, size_t Nk, char *err, size_t errlen)
{
    static const long lens[2] = {3, 2};
    const mha_masks mask = {lens, 0, 0, 0};
    const size_t B = 2, Nq = 4, d = 100, NH = 5;
    mha_params p;
    mha_trace trace;
    rng g;
    int rc = -1;
    float *q = filled(B * Nq * d, 1), *kv = filled(B * Nk * d, 1);
    float *out = filled(B * Nq * d, 0), *w = filled(B * NH * Nq * Nk, 0);
    memset(&p, 0, sizeof p);
    memset(&trace, 0, sizeof trace);
    if (!q || !kv || !out || !w) {
        no_memory(err, errlen, "the attention");
    } else if (mha_params_alloc(&p, d, NH, 0, err, errlen) == 0) {
        rng_seed(&g, seed);
        mha_params_init(&p, &g);
        if (mha_forward(out, w, &trace, q, kv, kv, B, Nq, Nk, &p, &mask, NULL, err, errlen) == 0) {
            torch_size_str(f, (size_t[]){B, Nq, p.num_hiddens}, 3);
            rc = 0;
        }
    }
    mha_params_free(&p);
    FREE_EACH(q, kv, out, w);
    return rc;
}

int cells_mha_cross_shape(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    return mha_shape(f, seed, 6, err, errlen);
}

int cells_mha_self_shape(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    return mha_shape(f, seed, 4, err, errlen);
}

/* 10.5 and 10.6: `attention.eval()` prints the module, as `attn
 * multihead --describe` prints it: MultiHeadAttention(100, …, 5 heads,
 * dropout 0.5) without biases. */
int cells_mha_module(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    mha_params p;
    rng g;
    memset(&p, 0, sizeof p);
    if (mha_params_alloc(&p, 100, 5, 0, err, errlen) != 0) {
        mha_params_free(&p);
        return -1;
    }
    rng_seed(&g, seed);
    mha_params_init(&p, &g);
    selfattn_describe(f, &p, 0.5);
    mha_params_free(&p);
    return 0;
}

/* for i in range(8): i and its three lowest bits, in the edition's words */
static void binary_lines(FILE *f, int zh)
{
    for (int i = 0; i < 8; i++) {
        char bits[4] = {(char)('0' + (i >> 2 & 1)), (char)('0' + (i >> 1 & 1)),
                        (char)('0' + (i & 1)), '\0'};
        if (i)
            fputc('\n', f);
        if (zh)
            fprintf(f, "%d的二进制是：%s", i, bits);
        else
            fprintf(f, "%d in binary is %s", i, bits);
    }
}

int cells_binary_zh(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    (void)seed;
    (void)err;
    (void)errlen;
    binary_lines(f, 1);
    return 0;
}

int cells_binary_en(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    (void)seed;
    (void)err;
    (void)errlen;
    binary_lines(f, 0);
    return 0;
}

/* ---- 10.7 the Transformer ---------------------------------------------- */

/* nn.Linear(in, out) as PyTorch starts it: weight and bias uniform in
 * ±1/sqrt(in), drawn from r. */
static int linear_init(linear *l, size_t in, size_t out, rng *r, char *err, size_t errlen)
{
    const double bound = 1.0 / sqrt((double)in);
    memset(l, 0, sizeof *l);
    if (tensor_alloc2(&l->weight, out, in, err, errlen) ||
        tensor_alloc(&l->bias, 1, (size_t[]){out}, err, errlen))
        return -1;
    for (size_t i = 0; i < l->weight.size; i++)
        l->weight.data[i] = (float)((2 * rng_uniform(r) - 1) * bound);
    for (size_t i = 0; i < l->bias.size; i++)
        l->bias.data[i] = (float)((2 * rng_uniform(r) - 1) * bound);
    return 0;
}

int cells_ffn(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    /* PositionWiseFFN(4, 4, 8) on ones (2, 3, 4): dense2(ReLU(dense1(X))), then [0] */
    linear dense1, dense2;
    float X[6 * 4], H[6 * 4], R[6 * 4], Y[6 * 8];
    rng g;
    int rc = -1;
    rng_seed(&g, seed);
    for (size_t i = 0; i < 24; i++)
        X[i] = 1.0f;
    memset(&dense2, 0, sizeof dense2);
    if (linear_init(&dense1, 4, 4, &g, err, errlen) == 0 &&
        linear_init(&dense2, 4, 8, &g, err, errlen) == 0) {
        linear_forward(H, X, 6, &dense1); /* (2·3, 4) */
        relu_forward(R, H, 6 * 4);
        linear_forward(Y, R, 6, &dense2); /* (2·3, 8) */
        rc = torch_str(f, Y, (size_t[]){3, 8}, 2,
                       &(torch_str_opts){0, "grad_fn=<SelectBackward0>", 0, 0});
    }
    linear_free(&dense1);
    linear_free(&dense2);
    return rc;
}

int cells_ln_bn(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    /* X = [[1, 2], [2, 3]]: LayerNorm(2) normalises each row, BatchNorm1d(2)
     * each column (over the batch) */
    const float X[4] = {1, 2, 2, 3}, ones[2] = {1, 1}, zeros[2] = {0, 0};
    double Xd[4], mean[2], rstd[2];
    float ln[4], bn[4];
    (void)seed;
    (void)err;
    (void)errlen;
    for (size_t i = 0; i < 4; i++)
        Xd[i] = X[i];
    layernorm_forward(ln, mean, rstd, Xd, ones, zeros, 2, 2);
    batchnorm_forward(bn, X, 2, 2);
    /* print('layer norm:', ln(X), '\nbatch norm:', bn(X)) */
    fputs("layer norm: ", f);
    torch_str(f, ln, (size_t[]){2, 2}, 2, &(torch_str_opts){0, "grad_fn=<NativeLayerNormBackward0>", 0, 0});
    fputs(" \nbatch norm: ", f);
    return torch_str(f, bn, (size_t[]){2, 2}, 2,
                     &(torch_str_opts){0, "grad_fn=<NativeBatchNormBackward0>", 0, 0});
}

int cells_add_norm(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    /* AddNorm([3, 4]) on X = Y = ones (2, 3, 4): LayerNorm over each
     * example's 3 × 4 entries of X + Y */
    float X[24], out[24], w[12], b[12];
    double S[24], mean[2], rstd[2];
    (void)seed;
    (void)err;
    (void)errlen;
    for (size_t i = 0; i < 24; i++)
        X[i] = 1.0f;
    for (size_t i = 0; i < 12; i++)
        w[i] = 1.0f, b[i] = 0.0f;
    residual_forward(S, X, X, 24);
    layernorm_forward(out, mean, rstd, S, w, b, 2, 12);
    torch_size_str(f, (size_t[]){2, 3, 4}, 3);
    return 0;
}

/* EncoderBlock(24, 24, 24, 24, [100, 24], 24, 48, 8, 0.5) on ones (2, 100,
 * 24), valid_lens [3, 2], in evaluation: its output into out (2·100·24).
 * attn's LayerNorm normalises each position's 24 entries ([24]); the
 * book's norm_shape [100, 24] takes the whole sequence: the same shape. */
static int encoder_block_out(float *out, unsigned long long seed, char *err, size_t errlen)
{
    static const long lens[2] = {3, 2};
    const mha_masks mask = {lens, 0, 0, 0};
    const size_t B = 2, T = 100, d = 24;
    tmodel_config cfg = {0};
    tblock blk;
    tblock_cache bc;
    rng g;
    int failed = 0, rc = -1;
    float *X = filled(B * T * d, 1);
    cfg.hiddens = d, cfg.heads = 8, cfg.addnorm = 1, cfg.ffn = 48, cfg.layers = 1;
    memset(&blk, 0, sizeof blk);
    memset(&bc, 0, sizeof bc);
    if (!X)
        return no_memory(err, errlen, "the encoder block");
    if (tblock_alloc(&blk, &cfg, err, errlen) == 0) {
        rng_seed(&g, seed);
        tblock_init(&blk, &cfg, &g);
        tblock_cache_alloc(&bc, &cfg, B * T, T, &failed);
        if (failed)
            no_memory(err, errlen, "the encoder block");
        else if (tblock_forward(&bc, &blk, &cfg, X, B, T, &mask, NULL, err, errlen) == 0) {
            memcpy(out, tblock_out(&bc, &cfg), B * T * d * sizeof *out);
            rc = 0;
        }
    }
    tblock_cache_free(&bc);
    tblock_free(&blk);
    free(X);
    return rc;
}

int cells_encoder_block(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    float *out = filled(2 * 100 * 24, 0);
    if (!out)
        return no_memory(err, errlen, "the encoder block");
    int rc = encoder_block_out(out, seed, err, errlen);
    if (rc == 0)
        torch_size_str(f, (size_t[]){2, 100, 24}, 3);
    free(out);
    return rc;
}

/* d2l's Transformer at d, NH heads, L blocks and FFN H, vocabularies V,
 * started from seed, with a cache for B × T on each side. */
static int transformer(s2s_model *m, s2s_cache *c, size_t V, size_t d, size_t NH, size_t L,
                       size_t H, size_t B, size_t T, unsigned long long seed, char *err,
                       size_t errlen)
{
    s2s_config cfg = {V, V, d, NH, L, H, 0, 0, s2s_arch_find("transformer"), S2S_RNN_GRU,
                      S2S_SCORE_DOT};
    if (s2s_alloc(m, &cfg, err, errlen))
        return -1;
    s2s_init(m, seed);
    if (s2s_cache_alloc(c, m, B, T, T, err, errlen)) {
        s2s_free(m);
        return -1;
    }
    return 0;
}

int cells_encoder(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    /* TransformerEncoder(200, 24, …, 8 heads, 2 blocks) on ones (2, 100)
     * as token ids, valid_lens [3, 2] */
    static const long lens[2] = {3, 2};
    s2s_model m;
    s2s_cache c;
    int ids[2 * 100], rc;
    for (size_t i = 0; i < 200; i++)
        ids[i] = 1;
    if (transformer(&m, &c, 200, 24, 8, 2, 48, 2, 100, seed, err, errlen))
        return -1;
    rc = tfm_encode(&m, &c, ids, lens, 2, 100, NULL, err, errlen);
    if (rc == 0) /* the encoder's output (B, Ts, d) */
        torch_size_str(f, (size_t[]){c.B, c.Ts, m.cfg.hiddens}, 3);
    s2s_cache_free(&c);
    s2s_free(&m);
    return rc;
}

int cells_decoder_block(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    /* DecoderBlock(24, …, 8 heads, i = 0) on X ones (2, 100, 24), the state
     * [encoder_blk(X, valid_lens), valid_lens, [None]] */
    static const long lens[2] = {3, 2};
    s2s_model m;
    s2s_cache c;
    float *X = filled(2 * 100 * 24, 1), *enc = filled(2 * 100 * 24, 0);
    int rc = -1;
    if (!X || !enc) {
        FREE_EACH(X, enc);
        return no_memory(err, errlen, "the decoder block");
    }
    if (encoder_block_out(enc, seed, err, errlen) == 0 &&
        transformer(&m, &c, 200, 24, 8, 1, 48, 2, 100, seed, err, errlen) == 0) {
        rc = tfm_dec_block_forward(&m, &c, 0, X, 2, 100, enc, 100, lens, err, errlen);
        if (rc == 0) /* the block's output (B, Tt, d) */
            torch_size_str(f, (size_t[]){c.B, c.Tt, m.cfg.hiddens}, 3);
        s2s_cache_free(&c);
        s2s_free(&m);
    }
    FREE_EACH(X, enc);
    return rc;
}

/* The trained model's weights at the section's training sizes: num_hiddens
 * 32, 4 heads, 2 blocks, FFN 64, num_steps 10; one source sentence (3
 * words and <eos>, padded) and the decoder over num_steps positions. The
 * cell concatenates the blocks' weights (B·NH, rows, cols) and reshapes
 * them to (num_layers, num_heads, -1, num_steps). */
enum tfm_weights { TFM_ENC_SELF, TFM_DEC_SELF, TFM_CROSS };

static int tfm_weights_shape(FILE *f, unsigned long long seed, enum tfm_weights which, char *err,
                             size_t errlen)
{
    static const long lens[1] = {4};
    static const int src[10] = {4, 5, 6, 3, 1, 1, 1, 1, 1, 1};
    static const int dec_in[10] = {2, 7, 8, 9, 4, 5, 6, 7, 8, 3};
    s2s_model m;
    s2s_cache c;
    int rc;
    if (transformer(&m, &c, 10, 32, 4, 2, 64, 1, 10, seed, err, errlen))
        return -1;
    rc = s2s_forward(&m, &c, src, lens, dec_in, 1, 10, 10, NULL, err, errlen);
    if (rc == 0) {
        const size_t L = m.cfg.layers, NH = m.cfg.heads;
        /* each block's weights (B, NH, rows, cols): the encoder's Ts × Ts,
         * the decoder's Tt × Tt, the cross-attention's Tt × Ts */
        const size_t rows = which == TFM_ENC_SELF ? c.Ts : c.Tt;
        const size_t cols = which == TFM_DEC_SELF ? c.Tt : c.Ts;
        size_t total = 0;
        for (size_t l = 0; l < L; l++) {
            const float *A = which == TFM_CROSS ? s2s_cross(&c, &m, l)
                                                : s2s_self(&c, which == TFM_DEC_SELF, l);
            total += A ? c.B * NH * rows * cols : 0;
        }
        torch_size_str(f, (size_t[]){L, NH, total / (L * NH * cols), cols}, 4);
    }
    s2s_cache_free(&c);
    s2s_free(&m);
    return rc;
}

int cells_enc_weights_shape(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    return tfm_weights_shape(f, seed, TFM_ENC_SELF, err, errlen);
}

int cells_en_dec_self_shape(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    return tfm_weights_shape(f, seed, TFM_DEC_SELF, err, errlen);
}

int cells_en_cross_shape(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    return tfm_weights_shape(f, seed, TFM_CROSS, err, errlen);
}

/* en 11.8: PatchEmbedding(96, 16, 512) on zeros (4, 3, 96, 96): each image
 * through a ViT whose patch embedding is that one (3 channels, patches of
 * 16, d 512), its (P, d) embedding P = 36 patches; the shape of the four */
int cells_en_patch_embedding(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    const vit_config cfg = {3, 96, 16, 512, 48, 8, 1, 10, 0.0};
    vit_model m;
    if (vit_init(&m, &cfg, seed, err, errlen))
        return -1;
    vit_work *w = vit_work_alloc(&m);
    float *image = filled(3 * 96 * 96, 0), logits[10];
    int rc = 0;
    if (!w || !image)
        rc = no_memory(err, errlen, "the patch embedding");
    for (size_t b = 0; b < 4 && rc == 0; b++)
        rc = vit_forward(w, logits, &m, image, NULL, err, errlen);
    if (rc == 0) /* patch_emb(X): (batch, patches, num_hiddens) */
        torch_size_str(f, (size_t[]){4, m.P, m.cfg.hiddens}, 3);
    free(image);
    vit_work_free(w);
    vit_free(&m);
    return rc;
}

/* en 11.8: ViTBlock(24, 24, 48, 8, 0.5) in eval mode on ones (2, 100, 24) */
int cells_en_vit_block(FILE *f, unsigned long long seed, char *err, size_t errlen)
{
    const vit_config cfg = {1, 1, 1, 24, 48, 8, 1, 10, 0.5};
    vit_model m;
    if (vit_init(&m, &cfg, seed, err, errlen))
        return -1;
    float *X = filled(2 * 100 * 24, 1), *Y = filled(2 * 100 * 24, 0);
    int rc = X && Y ? vit_block_apply(Y, &m, 0, X, 2, 100, err, errlen)
                    : no_memory(err, errlen, "the ViT block");
    if (rc == 0) /* encoder_blk(X): X's shape */
        torch_size_str(f, (size_t[]){2, 100, 24}, 3);
    free(X);
    free(Y);
    vit_free(&m);
    return rc;
}
