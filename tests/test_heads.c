/* test_heads.c — heads switched off in the Transformer encoder–decoder
 * (seq2seq.h's s2s_set_heads, mha_params.heads_on; d2l 10.5's exercise):
 *
 *   - a mask of all ones gives today's bits exactly (reference and fast);
 *   - switching head h off is removing it from the concat: the same bits
 *     as zeroing its p columns of W_o with no mask (an independent
 *     computation of "the model without that head");
 *   - a head whose values are all zero (its rows of W_v zero, no bias:
 *     uniform or not, its weighted values are 0) changes nothing when
 *     switched off;
 *   - the backward pass: no gradient reaches a head switched off (its
 *     rows of W_q, W_k, W_v and its columns of W_o), the others do;
 *   - the fast path against the reference with a mask: the loss, every
 *     gradient, and greedy decoding;
 *   - a hand case at d 4, 2 heads: the numbers worked out on paper;
 *   - Bahdanau's model has no heads to switch.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bahdanau.h"
#include "block_fast.h"
#include "check.h"
#include "seq2seq.h"
#include "seq2seq_fast.h"
#include "transformer.h"

/* 3 pairs: sources of 5 positions (lengths 5, 3, 2), targets of 4. */
static const int src[15] = {4, 5, 6, 4, 3, 6, 5, 3, 1, 1, 4, 3, 1, 1, 1};
static const long lens[3] = {5, 3, 2};
static const int dec_in[12] = {2, 5, 7, 6, 2, 4, 3, 1, 2, 3, 1, 1};
static const int tgt[12] = {5, 7, 6, 3, 4, 3, -1, -1, 3, -1, -1, -1};
enum { B = 3, TS = 5, TT = 4, L = 2, NH = 2, D = 8, P = D / NH };

/* d 8, 2 heads of 4, 2 blocks a side, biases. */
static void model(s2s_model *m, int bias)
{
    s2s_config cfg = {7, 8, D, NH, L, 6, bias, 0.0, &tfm_arch, 0, S2S_SCORE_DOT};
    char err[256];
    CHECK(s2s_alloc(m, &cfg, err, sizeof err) == 0);
    s2s_init(m, 21);
}

/* The reference's logits (B, TT, Vt) into out; with grads, the mean
 * loss's gradients (m->total) too. The loss. */
static double ref_run(const s2s_model *m, float *out, double *grads)
{
    s2s_cache c;
    char err[256];
    size_t count = 0;
    double loss;
    CHECK(s2s_cache_alloc(&c, m, B, TS, TT, err, sizeof err) == 0);
    CHECK(s2s_forward(m, &c, src, lens, dec_in, B, TS, TT, NULL, err, sizeof err) == 0);
    loss = s2s_loss(&c, m, tgt, &count, NULL);
    memcpy(out, c.logits, B * TT * m->cfg.tgt_vocab * sizeof *out);
    if (grads) {
        memset(grads, 0, m->total * sizeof *grads);
        CHECK(s2s_backward(grads, &c, m, src, lens, dec_in, tgt, 1.0 / (double)count, NULL, err,
                           sizeof err) == 0);
    }
    s2s_cache_free(&c);
    return loss / (double)count;
}

/* The fast path's, likewise (grads as doubles). */
static double fast_run(const s2s_model *m, float *out, double *grads)
{
    s2s_fast_weights w;
    s2s_fast_cache c;
    float *g = calloc(m->total, sizeof *g);
    size_t count = 0;
    double loss;
    CHECK(g && s2s_fast_weights_alloc(&w, m) == 0 && s2s_fast_cache_alloc(&c, m, B, TS) == 0);
    s2s_fast_weights_update(&w, m);
    /* the mean: scale 1/count, the count of the targets (7 here) */
    loss = s2s_fast_step(g, &c, m, &w, src, lens, dec_in, tgt, B, TS, TT, 1.0 / 7.0, NULL, 0,
                         &count, NULL);
    CHECK_INT(count, 7);
    memcpy(out, s2s_fast_logits(&c, m), B * TT * m->cfg.tgt_vocab * sizeof *out);
    for (size_t i = 0; grads && i < m->total; i++)
        grads[i] = g[i];
    free(g);
    s2s_fast_cache_free(&c);
    s2s_fast_weights_free(&w);
    return loss / (double)count;
}

static size_t n_logits(const s2s_model *m)
{
    return (size_t)B * TT * m->cfg.tgt_vocab;
}

/* The attention module of kind k in block l. */
static mha_params *module(s2s_model *m, int k, size_t l)
{
    tfm_model *net = tfm_net(m);
    return k == S2S_HEADS_ENC ? &net->enc[l].mha
           : k == S2S_HEADS_DEC ? &net->dec[l].attention1
                                : &net->dec[l].attention2;
}

/* A mask of ones, all three kinds. */
static void ones(unsigned char *on)
{
    memset(on, 1, S2S_HEAD_KINDS * L * NH);
}

static void test_all_ones(void)
{
    s2s_model m;
    unsigned char on[S2S_HEAD_KINDS * L * NH];
    float *a, *b;
    double *ga, *gb;
    model(&m, 1);
    a = calloc(n_logits(&m), sizeof *a);
    b = calloc(n_logits(&m), sizeof *b);
    ga = calloc(m.total, sizeof *ga);
    gb = calloc(m.total, sizeof *gb);
    ones(on);
    for (int fast = 0; fast < 2; fast++) {
        double la, lb;
        CHECK(s2s_set_heads(&m, NULL) == 0);
        la = fast ? fast_run(&m, a, ga) : ref_run(&m, a, ga);
        CHECK(s2s_set_heads(&m, on) == 0);
        lb = fast ? fast_run(&m, b, gb) : ref_run(&m, b, gb);
        CHECK(memcmp(a, b, n_logits(&m) * sizeof *a) == 0);
        CHECK(memcmp(ga, gb, m.total * sizeof *ga) == 0);
        CHECK(memcmp(&la, &lb, sizeof la) == 0);
    }
    printf("a mask of ones: the same bits as none (logits, loss, gradients; both paths)\n");
    free(a);
    free(b);
    free(ga);
    free(gb);
    s2s_free(&m);
}

/* Head h of module (k, l) off against its columns h·p … h·p+p−1 of W_o
 * zeroed: the same logits, bit for bit (the reference), and close (the
 * fast path, whose sums are float32 in another order). */
static void test_equals_cut(int k, size_t l, size_t h)
{
    s2s_model m, cut;
    unsigned char on[S2S_HEAD_KINDS * L * NH];
    float *a = NULL, *b = NULL, *full = NULL;
    double worst = 0.0;
    model(&m, 1);
    model(&cut, 1);
    a = calloc(n_logits(&m), sizeof *a);
    b = calloc(n_logits(&m), sizeof *b);
    full = calloc(n_logits(&m), sizeof *full);
    {
        tensor *wo = &module(&cut, k, l)->W_o.weight; /* (d, d): out × in */
        for (size_t r = 0; r < D; r++)
            for (size_t c = h * P; c < (h + 1) * P; c++)
                wo->data[r * D + c] = 0.0f;
    }
    ones(on);
    on[(k * L + l) * NH + h] = 0;
    CHECK(s2s_set_heads(&m, on) == 0);
    ref_run(&m, a, NULL);
    ref_run(&cut, b, NULL);
    CHECK(memcmp(a, b, n_logits(&m) * sizeof *a) == 0);
    fast_run(&m, a, NULL);
    fast_run(&cut, b, NULL);
    for (size_t i = 0; i < n_logits(&m); i++)
        worst = fmax(worst, fabs((double)a[i] - b[i]));
    CHECK(worst <= 1e-5);
    /* and the head mattered: the full model's logits differ */
    CHECK(s2s_set_heads(&m, NULL) == 0);
    ref_run(&m, full, NULL);
    ref_run(&cut, b, NULL);
    CHECK(memcmp(full, b, n_logits(&m) * sizeof *b) != 0);
    free(a);
    free(b);
    free(full);
    s2s_free(&m);
    s2s_free(&cut);
}

/* A head whose values are zero (its rows of W_v zero, no biases): its
 * output is 0 whatever its weights, and switching it off changes no bit. */
static void test_zero_values(void)
{
    s2s_model m;
    unsigned char on[S2S_HEAD_KINDS * L * NH];
    float *a, *b;
    model(&m, 0);
    a = calloc(n_logits(&m), sizeof *a);
    b = calloc(n_logits(&m), sizeof *b);
    {
        tensor *wv = &module(&m, S2S_HEADS_CROSS, 1)->W_v.weight; /* rows = outputs */
        memset(wv->data + 1 * P * D, 0, P * D * sizeof *wv->data); /* head 2's rows */
    }
    ref_run(&m, a, NULL);
    ones(on);
    on[(S2S_HEADS_CROSS * L + 1) * NH + 1] = 0;
    CHECK(s2s_set_heads(&m, on) == 0);
    ref_run(&m, b, NULL);
    CHECK(memcmp(a, b, n_logits(&m) * sizeof *a) == 0);
    fast_run(&m, b, NULL);
    CHECK(s2s_set_heads(&m, NULL) == 0);
    fast_run(&m, a, NULL);
    CHECK(memcmp(a, b, n_logits(&m) * sizeof *a) == 0);
    printf("a head of zero values switched off: no bit changes (both paths)\n");
    free(a);
    free(b);
    s2s_free(&m);
}

/* The largest |gradient| over rows r0 … r0+n−1 (or columns, cols) of a
 * (d, d) weight's gradient at g. */
static double largest(const double *g, size_t r0, size_t n, int cols)
{
    double w = 0.0;
    for (size_t r = 0; r < D; r++)
        for (size_t c = 0; c < D; c++) {
            size_t at = cols ? c : r;
            if (at >= r0 && at < r0 + n)
                w = fmax(w, fabs(g[r * D + c]));
        }
    return w;
}

/* The backward pass with a mask: the fast path's loss and gradients
 * against the reference's; no gradient reaches the head switched off. */
static void test_backward(void)
{
    s2s_model m;
    unsigned char on[S2S_HEAD_KINDS * L * NH];
    float *a, *b;
    double *gr, *gf, worst = 0.0, la, lb;
    model(&m, 1);
    a = calloc(n_logits(&m), sizeof *a);
    b = calloc(n_logits(&m), sizeof *b);
    gr = calloc(m.total, sizeof *gr);
    gf = calloc(m.total, sizeof *gf);
    ones(on);
    on[(S2S_HEADS_ENC * L + 0) * NH + 1] = 0;   /* enc1.2 */
    on[(S2S_HEADS_DEC * L + 1) * NH + 0] = 0;   /* dec2.1 */
    on[(S2S_HEADS_CROSS * L + 0) * NH + 0] = 0; /* cross1.1 */
    CHECK(s2s_set_heads(&m, on) == 0);
    la = ref_run(&m, a, gr);
    lb = fast_run(&m, b, gf);
    CHECK_NEAR(lb, la, 1e-6, 1e-5);
    for (size_t i = 0; i < n_logits(&m); i++)
        worst = fmax(worst, fabs((double)a[i] - b[i]));
    CHECK(worst <= 1e-5);
    worst = 0.0;
    for (size_t i = 0; i < m.total; i++)
        worst = fmax(worst, fabs(gf[i] - gr[i]) / (1e-4 + fabs(gr[i])));
    CHECK(worst <= 2e-2);
    printf("fast path with three heads off: logits, loss and gradients as the reference's "
           "(worst relative %.2g)\n",
           worst);
    for (int fast = 0; fast < 2; fast++) {
        const double *g = fast ? gf : gr;
        const int kinds[3] = {S2S_HEADS_ENC, S2S_HEADS_DEC, S2S_HEADS_CROSS};
        const size_t ls[3] = {0, 1, 0}, hs[3] = {1, 0, 0};
        for (int i = 0; i < 3; i++) {
            mha_params *p = module(&m, kinds[i], ls[i]);
            const double *gq = tparam_grad(m.param, m.nparams, (double *)g, &p->W_q.weight);
            const double *gv = tparam_grad(m.param, m.nparams, (double *)g, &p->W_v.weight);
            const double *go = tparam_grad(m.param, m.nparams, (double *)g, &p->W_o.weight);
            const size_t off = hs[i] * P, other = (1 - hs[i]) * P;
            CHECK(largest(gq, off, P, 0) == 0.0 && largest(gv, off, P, 0) == 0.0);
            CHECK(largest(go, off, P, 1) == 0.0);
            CHECK(largest(gv, other, P, 0) > 0.0 && largest(go, other, P, 1) > 0.0);
        }
    }
    printf("no gradient reaches a head switched off (W_q, W_v rows, W_o columns)\n");
    free(a);
    free(b);
    free(gr);
    free(gf);
    s2s_free(&m);
}

/* Greedy decoding with heads off: the fast path's tokens are the
 * reference's. */
static void test_greedy(void)
{
    s2s_model m;
    unsigned char on[S2S_HEAD_KINDS * L * NH];
    s2s_fast_weights w;
    s2s_fast_cache c;
    int out_r[TS], out_f[TS];
    size_t nr = 0, nf = 0;
    char err[256];
    model(&m, 1);
    ones(on);
    on[(S2S_HEADS_CROSS * L + 1) * NH + 1] = 0;
    on[(S2S_HEADS_ENC * L + 1) * NH + 0] = 0;
    CHECK(s2s_set_heads(&m, on) == 0);
    CHECK(s2s_fast_weights_alloc(&w, &m) == 0 && s2s_fast_cache_alloc(&c, &m, 1, TS) == 0);
    s2s_fast_weights_update(&w, &m);
    for (size_t b = 0; b < B; b++) {
        CHECK(s2s_greedy(&m, src + b * TS, lens[b], TS, 2, 3, TS, out_r, &nr, NULL, err,
                         sizeof err) == 0);
        s2s_fast_greedy(&c, &m, &w, src + b * TS, lens[b], TS, 2, 3, TS, out_f, &nf, NULL);
        CHECK_INT(nf, nr);
        CHECK(memcmp(out_r, out_f, nr * sizeof *out_r) == 0);
    }
    printf("greedy decoding with two heads off: the fast path's tokens are the reference's\n");
    s2s_fast_cache_free(&c);
    s2s_fast_weights_free(&w);
    s2s_free(&m);
}

/* A hand case, one attention of d 4 and 2 heads (p 2), every weight the
 * identity: the query q = (1, 0, 0, 0) against the keys and values
 * x1 = (1, 0, 0, 0) and x2 = (0, 1, 0, 0).
 *   head 1 (columns 0, 1): scores q_h·k_h/√2 = (1/√2, 0), weights
 *          w = softmax = (e^(1/√2), 1)/(e^(1/√2) + 1), output (w1, w2);
 *   head 2 (columns 2, 3): q_h = 0, uniform weights over identical
 *          values (0, 0): output (0, 0).
 * So the attention gives (w1, w2, 0, 0); head 1 off gives 0; head 2 off
 * changes nothing. The reference and the fast path. */
static void test_hand(void)
{
    static const float q[4] = {1, 0, 0, 0}, kv[8] = {1, 0, 0, 0, 0, 1, 0, 0};
    const double e = exp(1.0 / sqrt(2.0)), w1 = e / (e + 1.0), w2 = 1.0 / (e + 1.0);
    const double want[3][4] = {{w1, w2, 0, 0}, {0, 0, 0, 0}, {w1, w2, 0, 0}};
    static const unsigned char on[3][2] = {{1, 1}, {0, 1}, {1, 0}};
    mha_params m;
    char err[128];
    float out[4], A[4], Q[4], K[8], V[8], O[4], Y[4], Wt[16], *scratch;
    int failed = 0;
    memset(&m, 0, sizeof m);
    CHECK(mha_params_alloc(&m, 4, 2, 0, err, sizeof err) == 0);
    linear *ls[4] = {&m.W_q, &m.W_k, &m.W_v, &m.W_o};
    for (int i = 0; i < 4; i++)
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 4; c++)
                ls[i]->weight.data[r * 4 + c] = r == c ? 1.0f : 0.0f;
    fl_transpose(Wt, m.W_q.weight.data, 4, 4); /* the identity */
    scratch = fl_heads_scratch_alloc(4, 2, &failed);
    CHECK(!failed);
    for (int c = 0; c < 3; c++) {
        const mha_masks mask = {NULL, 0, 0, 0};
        const fl_mha fw = {{Wt, &m.W_q}, {Wt, &m.W_k}, {Wt, &m.W_v}, {Wt, &m.W_o}};
        const fl_mha_acts acts = {Q, K, V, O, Y, A};
        fl_attention at = {1, 1, 2, 4, 2, 2, NULL, 0, NULL, (float)(1.0 / sqrt(2.0)), 1.0f,
                           on[c]};
        m.heads_on = on[c];
        CHECK(mha_forward(out, A, NULL, q, kv, kv, 1, 1, 2, &m, &mask, NULL, err, sizeof err) ==
              0);
        fl_mha_forward(&acts, scratch, q, kv, &fw, &at);
        for (int i = 0; i < 4; i++) {
            CHECK_NEAR(out[i], want[c][i], 1e-7, 1e-6);
            CHECK_NEAR(Y[i], want[c][i], 1e-6, 1e-5);
        }
    }
    printf("by hand, d 4 and 2 heads: (w1, w2, 0, 0); head 1 off: 0; head 2 (uniform over "
           "identical values 0) off: unchanged\n");
    m.heads_on = NULL;
    mha_params_free(&m);
    free(scratch);
}

static void test_bahdanau(void)
{
    s2s_model m;
    s2s_config cfg = {7, 8, 6, 1, 1, 0, 0, 0.0, &bah_arch, 0, 0};
    unsigned char on[1] = {0};
    char err[256];
    CHECK(s2s_alloc(&m, &cfg, err, sizeof err) == 0);
    CHECK(s2s_set_heads(&m, on) == -1);
    CHECK(s2s_set_heads(&m, NULL) == -1);
    s2s_free(&m);
}

int main(void)
{
    test_all_ones();
    for (int k = 0; k < S2S_HEAD_KINDS; k++)
        for (size_t l = 0; l < L; l++)
            for (size_t h = 0; h < NH; h++)
                test_equals_cut(k, l, h);
    printf("each of the 12 heads off: the bits of its W_o columns zeroed (reference), within "
           "1e-5 (fast)\n");
    test_zero_values();
    test_backward();
    test_greedy();
    test_hand();
    test_bahdanau();
    return check_summary("heads");
}
