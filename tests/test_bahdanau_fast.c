/* test_bahdanau_fast.c — the fast path of d2l's Seq2Seq with Bahdanau
 * attention (src/nn/seq2seq/bahdanau_fast.c, float32) against the reference
 * (src/nn/seq2seq/bahdanau.c, double, through seq2seq.h's s2s_forward, s2s_loss,
 * s2s_backward and s2s_greedy): on random small models of 1 and 2 GRU
 * (and LSTM) layers with the additive (and the dot-product) score, d 8,
 * 16, 20 and 32, vocabularies of about 10, source and target
 * padding of different lengths, 1 to 8 pairs, the summed loss, its counts,
 * the logits, the attention and every parameter's gradient to float
 * tolerance, and greedy decoding token for token. Then the fast path
 * against itself: the same bits when a step runs again, in a fresh cache,
 * with its pairs split into smaller batches (logits, attention, greedy
 * decoding: each pair's numbers are its own), and through the trainer's
 * entry points (seq2seq_fast.h); the trainer (seq2seq_train.c) on the fast
 * path against itself on the reference, and on 1 and 2 threads; and the
 * cache's sizes.
 *
 * usage: test_bahdanau_fast          the tests
 *        test_bahdanau_fast hash     prints a hash of a step's and greedy
 *                                    decoding's bits (to compare builds)
 *        test_bahdanau_fast bench [THREADS]   times one training step of
 *                                    the default size: B 64 in chunks of 8
 *                                    on THREADS threads (2)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "bahdanau.h"
#include "bahdanau_fast.h"
#include "check.h"
#include "rng.h"
#include "seq2seq.h"
#include "seq2seq_fast.h"
#include "seq2seq_train.h"

#define BOS 2
#define EOS 3

/* ---- random models and batches ------------------------------------------- */

/* The variant the tests run on (SPEC §15's --rnn and --score): main runs
 * them for GRU and LSTM, additive and dot; the hashes are the GRU's. */
static int variant_rnn = S2S_RNN_GRU, variant_score = S2S_SCORE_ADDITIVE;

/* A Bahdanau model of L layers, width d, vocabularies Vs and Vt, PyTorch's
 * start drawn from seed; 0 or -1. */
static int model_new(s2s_model *m, size_t L, size_t d, size_t Vs, size_t Vt,
                     unsigned long long seed)
{
    s2s_config cfg = {Vs, Vt, d, 1, L, 1, 0, 0.0, &bah_arch, variant_rnn, variant_score};
    char err[256];
    if (s2s_alloc(m, &cfg, err, sizeof err)) {
        fprintf(stderr, "s2s_alloc: %s\n", err);
        return -1;
    }
    s2s_init(m, seed);
    return 0;
}

/* One batch: src (B, Ts) ids + <eos> + <pad>s of random valid lengths
 * (src_lens), dec_in (B, Tt) <bos> + the target's first Tt − 1, targets
 * (B, Tt) with −1 from a random valid length on. */
typedef struct batch {
    size_t B, Ts, Tt;
    int *src, *dec_in, *targets;
    long *lens;
} batch;

static size_t below(rng *r, size_t n) { return (size_t)(rng_uniform(r) * (double)n) % n; }

static void batch_new(batch *bt, size_t B, size_t Ts, size_t Tt, size_t Vs, size_t Vt, rng *r)
{
    bt->B = B, bt->Ts = Ts, bt->Tt = Tt;
    bt->src = malloc(B * Ts * sizeof *bt->src);
    bt->dec_in = malloc(B * Tt * sizeof *bt->dec_in);
    bt->targets = malloc(B * Tt * sizeof *bt->targets);
    bt->lens = malloc(B * sizeof *bt->lens);
    for (size_t b = 0; b < B; b++) {
        /* lengths 1 … Ts; pair 0 the whole source, pair 1 (B > 1) one token */
        const size_t ls = b == 0 ? Ts : b == 1 ? 1 : 1 + below(r, Ts);
        const size_t lt = b == 0 ? Tt : 1 + below(r, Tt);
        bt->lens[b] = (long)ls;
        for (size_t t = 0; t < Ts; t++)
            bt->src[b * Ts + t] = t + 1 < ls ? 4 + (int)below(r, Vs - 4) : t + 1 == ls ? EOS : 1;
        for (size_t t = 0; t < Tt; t++) {
            const int y = t + 1 < lt ? 4 + (int)below(r, Vt - 4) : t + 1 == lt ? EOS : 1;
            bt->targets[b * Tt + t] = t < lt ? y : -1;
            if (t + 1 < Tt)
                bt->dec_in[b * Tt + t + 1] = y;
        }
        bt->dec_in[b * Tt] = BOS;
    }
}

static void batch_free(batch *bt)
{
    free(bt->src);
    free(bt->dec_in);
    free(bt->targets);
    free(bt->lens);
}

static size_t count_targets(const batch *bt)
{
    size_t n = 0;
    for (size_t i = 0; i < bt->B * bt->Tt; i++)
        n += bt->targets[i] >= 0;
    return n;
}

/* ---- comparisons ------------------------------------------------------------ */

/* The largest error seen of each kind, relative to its scale. */
typedef struct worst {
    const char *what;
    double err;
} worst;

static worst w_loss = {"loss", 0}, w_logits = {"logits", 0}, w_att = {"attention", 0},
             w_grad = {"gradients", 0}, w_gcross = {"greedy attention", 0};

/* got (n,) against want (n,): |got − want| ≤ tol · (|want| + scale) with
 * scale the largest |want| (a tensor's entries are compared at its own
 * size); the largest such error into w. Returns the mismatches. */
static size_t compare(const char *label, const float *got, const double *want, size_t n,
                      double tol, worst *w)
{
    double scale = 0.0;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        scale = fabs(want[i]) > scale ? fabs(want[i]) : scale;
    for (size_t i = 0; i < n; i++) {
        const double e = fabs((double)got[i] - want[i]) / (fabs(want[i]) + scale + 1e-30);
        w->err = e > w->err ? e : w->err;
        if (!(e <= tol) && bad++ < 3)
            fprintf(stderr, "  %s[%zu] = %.9g, want %.9g\n", label, i, (double)got[i], want[i]);
    }
    check_count++;
    if (bad) {
        check_failed++;
        fprintf(stderr, "%s: %zu of %zu entries differ\n", label, bad, n);
    }
    return bad;
}

static void compare_f(const char *label, const float *got, const float *want, size_t n,
                      double tol, worst *w)
{
    double *wd = malloc((n ? n : 1) * sizeof *wd);
    for (size_t i = 0; i < n; i++)
        wd[i] = want[i];
    compare(label, got, wd, n, tol, w);
    free(wd);
}

/* A fast path for m: weights and a cache for Bmax pairs of Tmax positions */
typedef struct fast {
    bah_fast_weights *w;
    bah_fast_cache *c;
} fast;

static int fast_new(fast *f, const s2s_model *m, size_t Bmax, size_t Tmax)
{
    f->w = bah_fast_weights_new(m);
    f->c = bah_fast_cache_new(m, Bmax, Tmax);
    if (!f->w || !f->c)
        return -1;
    bah_fast_weights_update(f->w, m);
    return 0;
}

static void fast_free(fast *f)
{
    bah_fast_weights_free(f->w);
    bah_fast_cache_free(f->c);
}

static double fast_step(float *grads, fast *f, const s2s_model *m, const batch *bt, double scale,
                        size_t *count, size_t *correct)
{
    return bah_fast_step(grads, f->c, m, f->w, bt->src, bt->lens, bt->dec_in, bt->targets, bt->B,
                         bt->Ts, bt->Tt, scale, count, correct);
}

/* ---- against the reference ------------------------------------------------ */

/* One random model and batch: the fast step's loss, counts, logits,
 * attention and gradients against s2s_forward, s2s_loss and s2s_backward
 * in double. The fast cache is larger than the batch (Bmax B + 2, Tmax
 * max(Ts, Tt) + 3): a pass uses its own sizes. */
static void test_step(size_t L, size_t d, size_t B, size_t Ts, size_t Tt, unsigned long long seed)
{
    const size_t Vs = 10 + seed % 3, Vt = 9 + seed % 4;
    s2s_model m;
    s2s_cache c;
    fast f;
    batch bt;
    rng r;
    char err[256], label[96];
    size_t count, correct, fcount, fcorrect, n;
    double loss, floss, *g;
    float *gf;
    rng_seed(&r, seed);
    if (model_new(&m, L, d, Vs, Vt, seed)) {
        CHECK(0);
        return;
    }
    batch_new(&bt, B, Ts, Tt, Vs, Vt, &r);
    n = count_targets(&bt);
    CHECK(s2s_cache_alloc(&c, &m, B, Ts, Tt, err, sizeof err) == 0);
    CHECK(fast_new(&f, &m, B + 2, (Ts > Tt ? Ts : Tt) + 3) == 0);
    g = calloc(m.total, sizeof *g);
    gf = calloc(m.total, sizeof *gf);
    CHECK(s2s_forward(&m, &c, bt.src, bt.lens, bt.dec_in, B, Ts, Tt, NULL, err, sizeof err) == 0);
    loss = s2s_loss(&c, &m, bt.targets, &count, &correct);
    CHECK(s2s_backward(g, &c, &m, bt.src, bt.lens, bt.dec_in, bt.targets, 1.0 / (double)n, NULL,
                       err, sizeof err) == 0);
    floss = fast_step(gf, &f, &m, &bt, 1.0 / (double)n, &fcount, &fcorrect);
    CHECK_INT(fcount, count);
    CHECK_INT(fcorrect, correct);
    CHECK_NEAR(floss, loss, 0.0, 1e-5);
    w_loss.err = fmax(w_loss.err, fabs(floss - loss) / fabs(loss));
    snprintf(label, sizeof label, "L %zu d %zu B %zu Ts %zu Tt %zu: logits", L, d, B, Ts, Tt);
    compare_f(label, bah_fast_logits(f.c), c.logits, B * Tt * Vt, 1e-4, &w_logits);
    snprintf(label, sizeof label, "L %zu d %zu B %zu Ts %zu Tt %zu: attention", L, d, B, Ts, Tt);
    compare_f(label, bah_fast_attention(f.c), s2s_cross(&c, &m, 0), B * Tt * Ts, 1e-4, &w_att);
    for (size_t i = 0; i < m.nparams; i++) {
        const tparam *p = &m.param[i];
        snprintf(label, sizeof label, "L %zu d %zu B %zu: d %s", L, d, B, p->name);
        compare(label, gf + p->offset, g + p->offset, p->t->size, 1e-4, &w_grad);
    }
    free(g);
    free(gf);
    fast_free(&f);
    s2s_cache_free(&c);
    batch_free(&bt);
    s2s_free(&m);
}

/* Greedy decoding of B sources at once against s2s_greedy one by one:
 * the same tokens, and every step's attention row (that of the step that
 * chose <eos> too). Returns how many sources stopped at <eos> after
 * step 0 (before max_len tokens). */
static size_t test_greedy(size_t L, size_t d, size_t B, size_t Ts, size_t max_len,
                          double eos_bias, unsigned long long seed)
{
    const size_t Vs = 11, Vt = 10;
    s2s_model m;
    fast f;
    batch bt;
    rng r;
    char err[256];
    int *out = calloc(B * max_len, sizeof *out), *ref = calloc(max_len, sizeof *ref);
    size_t *n_out = calloc(B, sizeof *n_out), steps, eos_stops = 0, later = 0;
    float *cross = calloc(max_len * Ts, sizeof *cross);
    rng_seed(&r, seed);
    if (model_new(&m, L, d, Vs, Vt, seed)) {
        CHECK(0);
        return 0;
    }
    /* logits that depend more on the state than at the start, and <eos>
     * more likely, so that sources stop at different steps */
    for (size_t i = 0; i < bah_net(&m)->dense.weight.size; i++)
        bah_net(&m)->dense.weight.data[i] *= 6.0f;
    bah_net(&m)->dense.bias.data[EOS] += (float)eos_bias;
    batch_new(&bt, B, Ts, 1, Vs, Vt, &r);
    CHECK(fast_new(&f, &m, B, max_len > Ts ? max_len : Ts) == 0);
    steps = bah_fast_greedy_batch(f.c, &m, f.w, bt.src, bt.lens, B, Ts, BOS, EOS, max_len, out,
                                  n_out);
    for (size_t b = 0; b < B; b++) {
        size_t n_ref, rows;
        CHECK(s2s_greedy(&m, bt.src + b * Ts, bt.lens[b], Ts, BOS, EOS, max_len, ref, &n_ref,
                         cross, err, sizeof err) == 0);
        CHECK_INT(n_out[b], n_ref);
        for (size_t t = 0; t < n_ref && t < n_out[b]; t++)
            CHECK_INT(out[b * max_len + t], ref[t]);
        rows = n_ref < max_len ? n_ref + 1 : n_ref; /* with the <eos> step's */
        eos_stops += n_ref < max_len;
        later += n_ref > 0 && n_ref < max_len;
        CHECK(rows <= steps);
        for (size_t t = 0; t < rows && t < steps; t++)
            compare_f("greedy attention", bah_fast_attention(f.c) + (b * steps + t) * Ts,
                      cross + t * Ts, Ts, 1e-4, &w_gcross);
    }
    printf("greedy, L %zu d %zu: %zu sources, %zu stopped at <eos> (%zu after step 0), "
           "%zu steps\n", L, d, B, eos_stops, later, steps);
    free(out);
    free(ref);
    free(n_out);
    free(cross);
    fast_free(&f);
    batch_free(&bt);
    s2s_free(&m);
    return later;
}

static void test_against_reference(void)
{
    static const struct {
        size_t L, d, B, Ts, Tt;
    } cases[] = {
        {1, 8, 1, 5, 4},  {1, 8, 3, 6, 9},  {2, 8, 5, 7, 5},   {1, 32, 8, 12, 12},
        {2, 32, 8, 9, 11}, {1, 32, 4, 4, 7}, {2, 16, 6, 8, 6}, {1, 20, 7, 10, 8},
        {2, 20, 2, 3, 3},  {1, 32, 1, 1, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        test_step(cases[i].L, cases[i].d, cases[i].B, cases[i].Ts, cases[i].Tt, 100 + i);
    printf("against the reference: %zu random models and batches\n",
           sizeof cases / sizeof *cases);
    static const double eos_bias[6] = {0.5, 1.0, 1.0, 0.5, 0.5, 0.0};
    size_t later = 0;
    for (unsigned long long s = 0; s < 6; s++)
        later += test_greedy(1 + s % 2, s < 3 ? 8 : 32, 8, 9, 12, eos_bias[s], 300 + s);
    CHECK(later >= 8); /* the seeds' sources stop at many different steps */
}

/* ---- the same bits ----------------------------------------------------------- */

/* a (n,) and b (n,) bit for bit */
static int same_bits(const void *a, const void *b, size_t bytes) { return memcmp(a, b, bytes) == 0; }

/* The step again, in the same cache and in a fresh one of other
 * capacities, and through seq2seq_fast.h's entry points (the trainer's):
 * the same loss, logits, attention and gradients, bit for bit. */
static void test_repeat(size_t L, size_t d, unsigned long long seed)
{
    const size_t B = 8, Ts = 10, Tt = 9, Vs = 12, Vt = 11;
    s2s_model m;
    fast f, f2;
    s2s_fast_weights sw;
    s2s_fast_cache sc;
    batch bt;
    rng r;
    size_t nl = B * Tt * Vt, na = B * Tt * Ts, c1, c2, k1, k2;
    float *g1, *g2, *l1 = malloc(nl * sizeof *l1), *a1 = malloc(na * sizeof *a1);
    double loss1, loss2;
    rng_seed(&r, seed);
    if (model_new(&m, L, d, Vs, Vt, seed)) {
        CHECK(0);
        return;
    }
    batch_new(&bt, B, Ts, Tt, Vs, Vt, &r);
    g1 = calloc(m.total, sizeof *g1);
    g2 = calloc(m.total, sizeof *g2);
    CHECK(fast_new(&f, &m, B, 12) == 0 && fast_new(&f2, &m, 11, 17) == 0);
    loss1 = fast_step(g1, &f, &m, &bt, 0.01, &c1, &k1);
    memcpy(l1, bah_fast_logits(f.c), nl * sizeof *l1);
    memcpy(a1, bah_fast_attention(f.c), na * sizeof *a1);
    for (int run = 0; run < 3; run++) {
        fast *fr = run == 1 ? &f2 : &f;
        memset(g2, 0, m.total * sizeof *g2);
        if (run < 2)
            loss2 = fast_step(g2, fr, &m, &bt, 0.01, &c2, &k2);
        else { /* the trainer's way in */
            CHECK(s2s_fast_weights_alloc(&sw, &m) == 0 && s2s_fast_cache_alloc(&sc, &m, 8, 12) == 0);
            s2s_fast_weights_update(&sw, &m);
            loss2 = s2s_fast_step(g2, &sc, &m, &sw, bt.src, bt.lens, bt.dec_in, bt.targets, B, Ts,
                                  Tt, 0.01, NULL, 0, &c2, &k2);
        }
        CHECK(loss2 == loss1 && c2 == c1 && k2 == k1);
        CHECK(same_bits(g1, g2, m.total * sizeof *g1));
        CHECK(same_bits(l1, run < 2 ? bah_fast_logits(fr->c) : s2s_fast_logits(&sc, &m),
                        nl * sizeof *l1));
        CHECK(same_bits(a1, run < 2 ? bah_fast_attention(fr->c) : s2s_fast_cross(&sc, &m, 0),
                        na * sizeof *a1));
    }
    s2s_fast_cache_free(&sc);
    s2s_fast_weights_free(&sw);
    free(g1);
    free(g2);
    free(l1);
    free(a1);
    fast_free(&f);
    fast_free(&f2);
    batch_free(&bt);
    s2s_free(&m);
}

/* Pairs b0 … b0 + nb − 1 of bt as a batch of their own */
static batch part(const batch *bt, size_t b0, size_t nb)
{
    batch p = {nb, bt->Ts, bt->Tt, bt->src + b0 * bt->Ts, bt->dec_in + b0 * bt->Tt,
               bt->targets + b0 * bt->Tt, bt->lens + b0};
    return p;
}

/* A batch of 8 and the same pairs as batches of 3, 4 and 1: each pair's
 * logits and attention the same bits (its numbers are its own), the
 * gradients' sum near (only the order of the pairs' sums differs); greedy
 * decoding of the 8 at once and one by one: the same tokens and attention
 * bits. */
static void test_split(size_t L, size_t d, unsigned long long seed)
{
    const size_t B = 8, Ts = 9, Tt = 10, Vs = 10, Vt = 12, parts[3][2] = {{0, 3}, {3, 4}, {7, 1}};
    s2s_model m;
    fast f = {NULL, NULL}, fp = {NULL, NULL};
    batch bt;
    rng r;
    size_t nl = Tt * Vt, na = Tt * Ts, steps, n_out[8], n1;
    float *g = NULL, *gp = NULL, *l = malloc(B * nl * sizeof *l), *a = malloc(B * 12 * Ts * sizeof *a);
    double *gs = NULL, loss, lossp = 0.0;
    int out[8 * 12], out1[12];
    rng_seed(&r, seed);
    if (model_new(&m, L, d, Vs, Vt, seed)) {
        CHECK(0);
        return;
    }
    batch_new(&bt, B, Ts, Tt, Vs, Vt, &r);
    g = calloc(m.total, sizeof *g);
    gp = calloc(m.total, sizeof *gp);
    gs = calloc(m.total, sizeof *gs);
    CHECK(fast_new(&f, &m, B, 12) == 0 && fast_new(&fp, &m, 4, 12) == 0);
    loss = fast_step(g, &f, &m, &bt, 1.0, NULL, NULL);
    memcpy(l, bah_fast_logits(f.c), B * nl * sizeof *l);
    memcpy(a, bah_fast_attention(f.c), B * na * sizeof *a);
    for (size_t i = 0; i < 3; i++) {
        const batch p = part(&bt, parts[i][0], parts[i][1]);
        memset(gp, 0, m.total * sizeof *gp);
        lossp += fast_step(gp, &fp, &m, &p, 1.0, NULL, NULL);
        for (size_t k = 0; k < m.total; k++)
            gs[k] += gp[k];
        CHECK(same_bits(bah_fast_logits(fp.c), l + parts[i][0] * nl,
                        p.B * nl * sizeof *l));
        CHECK(same_bits(bah_fast_attention(fp.c), a + parts[i][0] * na, p.B * na * sizeof *a));
    }
    CHECK_NEAR(lossp, loss, 0.0, 1e-6);
    compare("split batch: gradients", g, gs, m.total, 1e-5, &(worst){"", 0});
    /* greedy: 8 at once, then each alone */
    steps = bah_fast_greedy_batch(f.c, &m, f.w, bt.src, bt.lens, B, Ts, BOS, EOS, 12, out, n_out);
    memcpy(a, bah_fast_attention(f.c), B * steps * Ts * sizeof *a);
    for (size_t b = 0; b < B; b++) {
        size_t s1 = bah_fast_greedy_batch(fp.c, &m, fp.w, bt.src + b * Ts, bt.lens + b, 1, Ts, BOS,
                                          EOS, 12, out1, &n1);
        CHECK_INT(n1, n_out[b]);
        CHECK(same_bits(out1, out + b * 12, n1 * sizeof *out1));
        CHECK(s1 <= steps);
        CHECK(same_bits(bah_fast_attention(fp.c), a + b * steps * Ts, s1 * Ts * sizeof *a));
    }
    free(g);
    free(gp);
    free(gs);
    free(l);
    free(a);
    fast_free(&f);
    fast_free(&fp);
    batch_free(&bt);
    s2s_free(&m);
}

/* ---- the trainer ------------------------------------------------------------- */

/* n random pairs of T entries as seq2seq_data.h builds them: ids, <eos>,
 * <pad>s; dec_in <bos> + the target */
static void pairs_new(s2s_arrays *a, size_t n, size_t T, size_t Vs, size_t Vt, rng *r)
{
    batch bt;
    batch_new(&bt, n, T, T, Vs, Vt, r);
    memset(a, 0, sizeof *a);
    a->n = n, a->T = T;
    a->src = bt.src, a->dec_in = bt.dec_in, a->tgt = bt.targets, a->src_valid = bt.lens;
    a->tgt_valid = malloc(n * sizeof *a->tgt_valid);
    for (size_t i = 0; i < n; i++) {
        long v = 0;
        for (size_t t = 0; t < T; t++)
            if (a->tgt[i * T + t] >= 0)
                v = (long)t + 1;
            else
                a->tgt[i * T + t] = 1; /* <pad>: the trainer masks from tgt_valid on */
        a->tgt_valid[i] = v;
    }
}

/* 30 Adam steps of batches of 12 (a chunk of 8 and one of 4) on the fast
 * path, 1 and 2 threads, against the reference: the losses near, the
 * weights near; the two thread counts the same bits. */
static void test_trainer(size_t L, size_t d)
{
    const size_t n = 40, T = 9, V = 12;
    s2s_config cfg = {V, V, d, 1, L, 1, 0, 0.0, &bah_arch, variant_rnn, variant_score};
    s2s_train_opts o = {OPTIM_ADAM, 0.01, 1.0, 12, 5, 1, 0};
    s2s_trainer tr[3]; /* fast on 1 thread, fast on 2, the reference */
    s2s_arrays a;
    rng r;
    char err[256];
    double wl = 0.0, wp = 0.0;
    rng_seed(&r, 77);
    pairs_new(&a, n, T, V, V, &r);
    for (int k = 0; k < 3; k++) {
        o.threads = k == 1 ? 2 : 1;
        o.reference = k == 2;
        CHECK(s2s_trainer_init(&tr[k], &a, &cfg, &o, NULL, err, sizeof err) == 0);
    }
    for (int step = 0; step < 30; step++) {
        train_stats st[3];
        for (int k = 0; k < 3; k++)
            CHECK(s2s_trainer_step(&tr[k], &st[k], err, sizeof err) == 0);
        CHECK(st[0].loss == st[1].loss && st[0].count == st[2].count);
        CHECK_NEAR(st[0].loss, st[2].loss, 0.0, 1e-4);
        wl = fmax(wl, fabs(st[0].loss - st[2].loss) / st[2].loss);
    }
    for (size_t i = 0; i < tr[0].model.nparams; i++) {
        const tensor *t0 = tr[0].model.param[i].t, *t1 = tr[1].model.param[i].t,
                     *t2 = tr[2].model.param[i].t;
        CHECK(same_bits(t0->data, t1->data, t0->size * sizeof *t0->data));
        for (size_t j = 0; j < t0->size; j++)
            wp = fmax(wp, fabs(t0->data[j] - t2->data[j]));
    }
    CHECK(wp < 1e-3);
    printf("trainer, L %zu d %zu: 30 Adam steps, the fast path's loss within %.2g of the "
           "reference's, its weights within %.2g; 1 and 2 threads the same bits\n",
           L, d, wl, wp);
    for (int k = 0; k < 3; k++)
        s2s_trainer_free(&tr[k]);
    s2s_arrays_free(&a);
}

/* ---- sizes ------------------------------------------------------------------- */

static void test_sizes(void)
{
    s2s_config cfg = {40, 40, 32, 1, 2, 1, 0, 0.0, &bah_arch, 0, 0};
    s2s_model m;
    size_t small, big;
    CHECK(bah_fast_cache_bytes(&cfg, 8, 12, &small) == 0);
    CHECK(bah_fast_cache_bytes(&cfg, 16, 12, &big) == 0);
    CHECK(small > 8 * 12 * 32 * sizeof(float) && big > small);
    /* a count that overflows: refused, nothing allocated */
    CHECK(bah_fast_cache_bytes(&cfg, SIZE_MAX / 4, 12, &big) == -1);
    CHECK(bah_fast_cache_bytes(&cfg, 8, SIZE_MAX, &big) == -1);
    cfg.hiddens = SIZE_MAX / 2;
    CHECK(bah_fast_cache_bytes(&cfg, 8, 12, &big) == -1);
    if (model_new(&m, 2, 8, 10, 10, 1)) {
        CHECK(0);
        return;
    }
    CHECK(bah_fast_cache_new(&m, SIZE_MAX / 8, 12) == NULL);
    CHECK(bah_fast_cache_new(&m, 8, SIZE_MAX) == NULL);
    s2s_free(&m);
    printf("sizes: a chunk of 8 pairs of 12 positions, d 32, 2 layers: %zu bytes\n", small);
}

/* ---- the bits, for comparing machines ---------------------------------------- */

/* FNV-1a over bytes, continuing h */
static unsigned long long fnv(unsigned long long h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

/* A hash of everything a step and greedy decoding give, for two models:
 * the same line from every build (gcc, clang; AVX-512, AVX2, NEON) and any
 * thread count is SPEC §12's promise (scripts/reproducible compares whole
 * runs; this is the quick look). */
static int print_hashes(void)
{
    static const size_t cfgs[2][2] = {{2, 32}, {1, 20}};
    for (size_t k = 0; k < 2; k++) {
        const size_t L = cfgs[k][0], d = cfgs[k][1], B = 8, Ts = 11, Tt = 10, V = 13;
        s2s_model m;
        fast f;
        batch bt;
        rng r;
        float *g;
        int out[8 * 12];
        size_t n_out[8], steps;
        unsigned long long h = 0xcbf29ce484222325ULL;
        double loss;
        rng_seed(&r, 900 + k);
        if (model_new(&m, L, d, V, V, 900 + k) || fast_new(&f, &m, B, 12))
            return 1;
        batch_new(&bt, B, Ts, Tt, V, V, &r);
        g = calloc(m.total, sizeof *g);
        loss = fast_step(g, &f, &m, &bt, 0.01, NULL, NULL);
        h = fnv(h, &loss, sizeof loss);
        h = fnv(h, bah_fast_logits(f.c), B * Tt * V * sizeof(float));
        h = fnv(h, bah_fast_attention(f.c), B * Tt * Ts * sizeof(float));
        h = fnv(h, g, m.total * sizeof *g);
        steps = bah_fast_greedy_batch(f.c, &m, f.w, bt.src, bt.lens, B, Ts, BOS, EOS, 12, out,
                                      n_out);
        for (size_t b = 0; b < B; b++)
            h = fnv(fnv(h, &n_out[b], sizeof n_out[b]), out + b * 12, n_out[b] * sizeof *out);
        h = fnv(h, bah_fast_attention(f.c), B * steps * Ts * sizeof(float));
        printf("L %zu d %zu: loss %.17g, hash %016llx\n", L, d, loss, h);
        free(g);
        fast_free(&f);
        batch_free(&bt);
        s2s_free(&m);
    }
    return 0;
}

/* ---- timing ------------------------------------------------------------------- */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One training step as the trainer runs it (seq2seq_train.c): B 64 pairs
 * in 8 chunks of 8 over 2 threads, Ts = Tt = 12, d 32, 1 GRU layer a side,
 * vocabularies of 40; the weights arranged, every chunk's forward and
 * backward pass, the chunks' gradients summed in double. */
static int bench(int threads)
{
    enum { B = 64, CH = 8, NCH = B / CH, T = 12, REPS = 200 };
    s2s_model m;
    batch bt;
    rng r;
    fast f[NCH];
    float *gf;
    double *g, times[REPS];
    size_t n;
    rng_seed(&r, 7);
    if (model_new(&m, 1, 32, 40, 40, 7))
        return 1;
    batch_new(&bt, B, T, T, 40, 40, &r);
    n = count_targets(&bt);
    gf = calloc(NCH * m.total, sizeof *gf);
    g = calloc(m.total, sizeof *g);
    for (int c = 0; c < NCH; c++)
        if (fast_new(&f[c], &m, CH, T))
            return 1;
    for (int rep = 0; rep < REPS; rep++) {
        const double t0 = now();
        for (int c = 1; c < NCH; c++) /* the trainer arranges one copy */
            bah_fast_weights_update(f[c].w, &m);
#pragma omp parallel for schedule(static) num_threads(threads)
        for (int c = 0; c < NCH; c++) {
            const batch p = part(&bt, (size_t)c * CH, CH);
            memset(gf + c * m.total, 0, m.total * sizeof *gf);
            (void)fast_step(gf + c * m.total, &f[c], &m, &p, 1.0 / (double)n, NULL, NULL);
        }
        memset(g, 0, m.total * sizeof *g);
        for (int c = 0; c < NCH; c++)
            for (size_t i = 0; i < m.total; i++)
                g[i] += gf[c * m.total + i];
        times[rep] = now() - t0;
    }
    qsort(times, REPS, sizeof *times, cmp_double);
    printf("bah_fast_step, B %d in chunks of %d on %d threads, Ts = Tt = %d, d 32, 1 layer, "
           "V 40, %zu parameters: best %.3f ms, median %.3f ms of %d\n",
           B, CH, threads, T, m.total, times[0] * 1e3, times[REPS / 2] * 1e3, REPS);
    for (int c = 0; c < NCH; c++)
        fast_free(&f[c]);
    free(gf);
    free(g);
    batch_free(&bt);
    s2s_free(&m);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "hash") == 0)
        return print_hashes();
    if (argc > 1 && strcmp(argv[1], "bench") == 0)
        return bench(argc > 2 ? atoi(argv[2]) : 2);
    test_sizes();
    for (int v = 0; v < 4; v++) { /* GRU, LSTM; additive, dot */
        variant_rnn = v & 1 ? S2S_RNN_LSTM : S2S_RNN_GRU;
        variant_score = v & 2 ? S2S_SCORE_DOT : S2S_SCORE_ADDITIVE;
        printf("%s, %s score:\n", s2s_rnn_labels[variant_rnn], s2s_score_names[variant_score]);
        test_against_reference();
        test_repeat(1, 32, 500);
        test_repeat(2, 20, 501);
        test_split(1, 32, 600);
        test_split(2, 8, 601);
        test_trainer(1, 32);
        test_trainer(2, 16);
    }
    printf("largest errors against the reference (relative to each tensor's largest entry):\n");
    printf("  loss %.2g, logits %.2g, attention %.2g, gradients %.2g, greedy attention %.2g\n",
           w_loss.err, w_logits.err, w_att.err, w_grad.err, w_gcross.err);
    return check_summary("bahdanau_fast");
}
