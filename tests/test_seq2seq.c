/* test_seq2seq.c — the Transformer encoder–decoder (src/nn/seq2seq/transformer.c,
 * and its fast path src/nn/seq2seq/transformer_fast.c) against PyTorch and against
 * itself: the loss and every gradient of
 * float64 fixtures, 20 steps of SGD and of Adam with and without
 * clipping, greedy decoding token for token; central finite differences,
 * the masked loss, source padding, the encoder learning only through the
 * cross-attention, clipping, the configuration's errors; and a model file
 * in SPEC §11's form loaded by PyTorch with strict=True.
 *
 * usage: test_seq2seq FIXTURE_DIR
 *   FIXTURE_DIR  tests/ref/seq2seq (scripts/gen_seq2seq_ref.py); its
 *                sibling seq2seq_model holds model.json (written by
 *                write-model) and PyTorch's logits for it
 *                (gen_seq2seq_ref.py --load)
 *        test_seq2seq write-model DIR   writes DIR/model.json
 *        test_seq2seq bench             times one training step of the
 *                                         default size
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "torch_fixture.h"
#include "optim.h"
#include "s2s_model_file.h"
#include "seq2seq.h"
#include "seq2seq_fast.h"
#include "transformer.h"
#include "encoder_task.h"

/* ---- reading fixtures ------------------------------------------------------ */

typedef struct fixture {
    cJSON *root;
    s2s_config cfg;
    double clip;
    size_t B, Ts, Tt;
    int *src, *dec_in, *targets; /* (B, Ts), (B, Tt), (B, Tt) */
    long *src_lens;              /* (B,) */
} fixture;

static void config_of(s2s_config *cfg, const cJSON *c)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->src_vocab = (size_t)get(c, "src_vocab")->valuedouble;
    cfg->tgt_vocab = (size_t)get(c, "tgt_vocab")->valuedouble;
    cfg->hiddens = (size_t)get(c, "hiddens")->valuedouble;
    cfg->heads = (size_t)get(c, "heads")->valuedouble;
    cfg->layers = (size_t)get(c, "layers")->valuedouble;
    cfg->ffn = (size_t)get(c, "ffn")->valuedouble;
    cfg->bias = cJSON_IsTrue(get(c, "bias"));
    /* SPEC §16: "score": "additive" scores every head additively; else dot */
    const cJSON *score = cJSON_GetObjectItemCaseSensitive(c, "score");
    cfg->score = cJSON_IsString(score) && strcmp(score->valuestring, "additive") == 0
                     ? S2S_SCORE_ADDITIVE
                     : S2S_SCORE_DOT;
}

static int fixture_load(fixture *fx, const char *path)
{
    char *text = check_read_file(path, NULL);
    size_t n, nl;
    memset(fx, 0, sizeof *fx);
    if (!text || !(fx->root = cJSON_Parse(text))) {
        fprintf(stderr, "%s: cannot read\n", path);
        free(text);
        return -1;
    }
    free(text);
    config_of(&fx->cfg, get(fx->root, "config"));
    fx->clip = get(get(fx->root, "config"), "clip")->valuedouble;
    fx->B = (size_t)cJSON_GetArraySize(get(fx->root, "src"));
    fx->Ts = (size_t)cJSON_GetArraySize(get(fx->root, "src")->child);
    fx->Tt = (size_t)cJSON_GetArraySize(get(fx->root, "dec_in")->child);
    fx->src = ints(get(fx->root, "src"), &n);
    fx->dec_in = ints(get(fx->root, "dec_in"), &n);
    fx->targets = ints(get(fx->root, "targets"), &n);
    {
        int *l = ints(get(fx->root, "src_lens"), &nl);
        fx->src_lens = malloc(nl * sizeof(long));
        for (size_t i = 0; i < nl; i++)
            fx->src_lens[i] = l[i];
        free(l);
    }
    return 0;
}

static void fixture_free(fixture *fx)
{
    cJSON_Delete(fx->root);
    free(fx->src);
    free(fx->dec_in);
    free(fx->targets);
    free(fx->src_lens);
}

/* Every parameter of m from the state_dict object sd (float32 numbers,
 * exactly). */
static int load_params(s2s_model *m, const cJSON *sd, const char *file)
{
    for (size_t i = 0; i < m->nparams; i++) {
        size_t n;
        double *v = numbers(get(sd, m->param[i].name), &n);
        if (!v || n != m->param[i].t->size) {
            fprintf(stderr, "%s: %s: expected %zu numbers, got %zu\n", file, m->param[i].name,
                    m->param[i].t->size, n);
            free(v);
            return -1;
        }
        for (size_t j = 0; j < n; j++)
            m->param[i].t->data[j] = (float)v[j];
        free(v);
    }
    return 0;
}

/* ---- comparing -------------------------------------------------------------- */

static worst_err w_loss = {"loss", 0, 0, 0}, w_grad = {"gradients", 0, 0, 1e-3},
                 w_norm = {"gradient norms", 0, 0, 0}, w_lsgd = {"SGD losses", 0, 0, 0},
                 w_ladam = {"Adam losses", 0, 0, 0},
                 w_psgd = {"parameters after 20 SGD steps", 0, 0, 0},
                 w_padam = {"parameters after 20 Adam steps", 0, 0, 0},
                 w_wk = {"W_k biases after 20 Adam steps", 0, 0, 0},
                 w_cross = {"greedy cross-attention", 0, 0, 0},
                 w_logits = {"logits of a loaded model file", 0, 0, 0};

/* One batch's mean loss and (when grads) gradients. */
static double loss_and_grads(s2s_model *m, s2s_cache *c, const fixture *fx, double *grads,
                             const mha_dropout *drop)
{
    char err[256];
    size_t count;
    double loss;
    if (s2s_forward(m, c, fx->src, fx->src_lens, fx->dec_in, fx->B, fx->Ts, fx->Tt, drop, err,
                    sizeof err)) {
        fprintf(stderr, "forward: %s\n", err);
        return NAN;
    }
    loss = s2s_loss(c, m, fx->targets, &count, NULL);
    if (grads) {
        memset(grads, 0, m->total * sizeof *grads);
        if (s2s_backward(grads, c, m, fx->src, fx->src_lens, fx->dec_in, fx->targets,
                         1.0 / (double)count, drop, err, sizeof err))
            fprintf(stderr, "backward: %s\n", err);
    }
    return loss / (double)count;
}

/* ---- against PyTorch ------------------------------------------------------------ */

/* Tolerances. The fixtures are float64 and attn's parameters float32 (the
 * fixtures' initial values are float32 numbers, so both start from the
 * same parameters exactly); attn sums in double but keeps every
 * activation as float32, which rounds it by up to 2^-24 ≈ 6e-8 of its
 * size. What reaches a loss or a gradient is a few dozen such roundings
 * of O(1) values: measured over the five fixtures (the test prints it),
 * the loss within 2e-8, every gradient within 4e-8, the gradient norm
 * within 4e-7 relative, 20 steps' losses within 2e-7 relative and the
 * parameters after them within 5e-7 (a few float32 ulps of O(1)
 * weights). Each tolerance is 5–10 times the worst measured, far below
 * what a wrong formula gives (a gradient off by a factor or a sign is off
 * by its own size, 1e-3 … 1). test_train.c's float32 fixtures need 50
 * times more (1e-5 + 1e-4·|torch|): there PyTorch rounds too. */
#define GRAD_ATOL 2e-7
#define GRAD_RTOL 1e-5
#define LOSS_RTOL 1e-6  /* the losses of 20 steps */
#define NORM_RTOL 2e-6  /* the gradient norm before clipping */
#define PARAM_ATOL 2e-6 /* the parameters after 20 steps */
#define PARAM_RTOL 1e-5

/* The loss and every parameter's gradient at step 0. */
static void test_fixture_grads(const char *file, const fixture *fx)
{
    char err[256];
    s2s_model m;
    s2s_cache c;
    double *grads, loss;
    const cJSON *all = get(fx->root, "grads");
    CHECK(s2s_alloc(&m, &fx->cfg, err, sizeof err) == 0);
    CHECK(load_params(&m, get(fx->root, "state_dict"), file) == 0);
    CHECK(s2s_cache_alloc(&c, &m, fx->B, fx->Ts, fx->Tt, err, sizeof err) == 0);
    grads = calloc(m.total, sizeof *grads);
    loss = loss_and_grads(&m, &c, fx, grads, NULL);
    note(&w_loss, loss, get(fx->root, "loss")->valuedouble);
    CHECK_NEAR(loss, get(fx->root, "loss")->valuedouble, 1e-7, 1e-7);
    for (size_t i = 0; i < m.nparams; i++) {
        size_t n;
        double *want = numbers(get(all, m.param[i].name), &n);
        CHECK_INT(n, m.param[i].t->size);
        if (n == m.param[i].t->size)
            compare(file, m.param[i].name, grads + m.param[i].offset, want, n, GRAD_ATOL, GRAD_RTOL,
                    &w_grad);
        free(want);
    }
    printf("  %s: loss %.9f, %zu gradients of %zu tensors checked\n", file, loss, m.total,
           m.nparams);
    free(grads);
    s2s_cache_free(&c);
    s2s_free(&m);
}

/* 20 steps of the fixture's optimizer ("sgd" or "adam") on its batch,
 * clipped as its configuration says: the loss and the gradient norm before
 * each step, every parameter after the last. */
static void test_fixture_steps(const char *file, const fixture *fx, const char *which)
{
    const cJSON *run = get(fx->root, which), *sd = get(run, "state_dict");
    const int adam = strcmp(which, "adam") == 0;
    const int steps = get(run, "steps")->valueint;
    char err[256];
    s2s_model m;
    s2s_cache c;
    optim o;
    double *grads;
    CHECK(s2s_alloc(&m, &fx->cfg, err, sizeof err) == 0);
    CHECK(load_params(&m, get(fx->root, "state_dict"), file) == 0);
    CHECK(s2s_cache_alloc(&c, &m, fx->B, fx->Ts, fx->Tt, err, sizeof err) == 0);
    CHECK(optim_init(&o, adam ? OPTIM_ADAM : OPTIM_SGD, get(run, "lr")->valuedouble, m.total, err,
                     sizeof err) == 0);
    grads = calloc(m.total, sizeof *grads);
    for (int s = 0; s < steps; s++) {
        double loss = loss_and_grads(&m, &c, fx, grads, NULL);
        double norm = optim_clip(grads, m.total, fx->clip);
        double want = cJSON_GetArrayItem(get(run, "losses"), s)->valuedouble;
        double wnorm = cJSON_GetArrayItem(get(run, "grad_norms"), s)->valuedouble;
        note(adam ? &w_ladam : &w_lsgd, loss, want);
        note(&w_norm, norm, wnorm);
        CHECK_NEAR(loss, want, 0.0, LOSS_RTOL);
        CHECK_NEAR(norm, wnorm, 0.0, NORM_RTOL);
        optim_step_params(&o, m.param, m.nparams, grads);
    }
    for (size_t i = 0; i < m.nparams; i++) {
        size_t n;
        double *want = numbers(get(sd, m.param[i].name), &n), *got = malloc(n * sizeof *got);
        /* W_k's bias cannot change the output: softmax ignores a shift
         * shared by every key, so its gradient is 0 in exact arithmetic
         * and rounding noise in both codes (1e-17 in PyTorch's float64,
         * 1e-10 in attn's float32 activations). Adam divides that noise
         * by its own square root: each step moves the bias by up to lr,
         * in a direction the noise picks. Checked within lr·steps.
         * (Additive scores pass it through tanh: checked as the rest.) */
        const int noise = adam && fx->cfg.score == S2S_SCORE_DOT &&
                          strstr(m.param[i].name, "W_k.bias") != NULL;
        for (size_t j = 0; j < n; j++)
            got[j] = m.param[i].t->data[j];
        if (noise)
            compare(file, m.param[i].name, got, want, n, o.lr * steps, 0.0, &w_wk);
        else
            compare(file, m.param[i].name, got, want, n, PARAM_ATOL, PARAM_RTOL,
                    adam ? &w_padam : &w_psgd);
        free(want);
        free(got);
    }
    printf("  %s: %d %s steps%s, loss %.6f -> %.6f\n", file, steps, adam ? "Adam" : "SGD",
           fx->clip > 0 ? " clipped to norm 1" : "",
           cJSON_GetArrayItem(get(run, "losses"), 0)->valuedouble,
           cJSON_GetArrayItem(get(run, "losses"), steps - 1)->valuedouble);
    free(grads);
    optim_free(&o);
    s2s_cache_free(&c);
    s2s_free(&m);
}

/* ---- the fast path ------------------------------------------------------------ */

/* The fast path's float32 loops round every sum, where the reference sums
 * in double: within what test_train.c allows its fast path against
 * float32 PyTorch (measured: the test prints the worst). */
#define FAST_ATOL 1e-5
#define FAST_RTOL 1e-4
static worst_err w_fast = {"fast path: gradients", 0, 0, 1e-3},
                 w_fast_drop = {"fast path with dropout: gradients", 0, 0, 1e-3},
                 w_fast_cross = {"fast path: greedy cross-attention", 0, 0, 0};

/* A fast path for m: its transposed weights and a cache of B pairs of up
 * to T positions a side. */
static int fast_setup(s2s_fast_weights *w, s2s_fast_cache *c, const s2s_model *m, size_t B,
                      size_t T)
{
    if (s2s_fast_weights_alloc(w, m) || s2s_fast_cache_alloc(c, m, B, T))
        return -1;
    s2s_fast_weights_update(w, m);
    return 0;
}

static size_t count_targets(const int *targets, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += targets[i] >= 0;
    return k;
}

/* The fast path's loss and gradients (as doubles, into g) of a batch. */
static double fast_loss_grads(const s2s_model *m, s2s_fast_weights *w, s2s_fast_cache *c,
                              const fixture *fx, double *g, const mha_dropout *drop)
{
    const size_t count = count_targets(fx->targets, fx->B * fx->Tt);
    float *gf = calloc(m->total, sizeof *gf);
    double loss = s2s_fast_step(gf, c, m, w, fx->src, fx->src_lens, fx->dec_in, fx->targets,
                                fx->B, fx->Ts, fx->Tt, 1.0 / (double)count, drop, 0, NULL, NULL);
    for (size_t i = 0; i < m->total; i++)
        g[i] = gf[i];
    free(gf);
    return loss / (double)count;
}

/* Step 0 of a PyTorch fixture through the fast path: the loss and every
 * gradient. */
static void test_fast_fixture(const char *file, const fixture *fx)
{
    char err[256];
    s2s_model m;
    s2s_fast_weights w;
    s2s_fast_cache c;
    const cJSON *all = get(fx->root, "grads");
    const size_t T = fx->Ts > fx->Tt ? fx->Ts : fx->Tt;
    double *g, loss;
    CHECK(s2s_alloc(&m, &fx->cfg, err, sizeof err) == 0);
    CHECK(load_params(&m, get(fx->root, "state_dict"), file) == 0);
    CHECK(fast_setup(&w, &c, &m, fx->B, T) == 0);
    g = calloc(m.total, sizeof *g);
    loss = fast_loss_grads(&m, &w, &c, fx, g, NULL);
    CHECK_NEAR(loss, get(fx->root, "loss")->valuedouble, 1e-6, 1e-5);
    for (size_t i = 0; i < m.nparams; i++) {
        size_t n;
        double *want = numbers(get(all, m.param[i].name), &n);
        if (n == m.param[i].t->size)
            compare(file, m.param[i].name, g + m.param[i].offset, want, n, FAST_ATOL, FAST_RTOL,
                    &w_fast);
        free(want);
    }
    free(g);
    s2s_fast_cache_free(&c);
    s2s_fast_weights_free(&w);
    s2s_free(&m);
}

static void test_fixtures(const char *dir)
{
    static const char *const files[] = {
        "01_l1_ffn8_noclip.json", "02_l2_ffn16_bias_clip.json", "03_l2_ffn4_heads4_clip.json",
        "04_l1_ffn12_bias_noclip.json", "05_l2_ffn6_heads1_noclip.json",
        /* SPEC §16: every head of the three attentions scored additively */
        "06_l2_ffn8_bias_additive_clip.json"};
    printf("against PyTorch (float64):\n");
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[512];
        fixture fx;
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        if (fixture_load(&fx, path)) {
            CHECK(0);
            continue;
        }
        test_fixture_grads(files[i], &fx);
        if (s2s_fast_supports(&fx.cfg)) /* additive scores: the reference loops only */
            test_fast_fixture(files[i], &fx);
        test_fixture_steps(files[i], &fx, "sgd");
        test_fixture_steps(files[i], &fx, "adam");
        fixture_free(&fx);
    }
}

/* The fast path's greedy decoding of one case: the same tokens, and the
 * reference's cross-attention (L, NH, max_len, Ts) within float32's
 * rounding. */
static void test_fast_greedy(const s2s_model *m, const cJSON *cs, const int *src, size_t Ts,
                             int bos, int eos, const int *want, size_t nw, const float *cross)
{
    const size_t max_len = (size_t)get(cs, "max_len")->valuedouble;
    const size_t n = m->cfg.layers * m->cfg.heads * max_len * Ts;
    s2s_fast_weights w;
    s2s_fast_cache c;
    int *out = calloc(max_len, sizeof *out);
    float *fc = calloc(n, sizeof *fc);
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    size_t n_out;
    CHECK(fast_setup(&w, &c, m, 1, max_len > Ts ? max_len : Ts) == 0);
    s2s_fast_greedy(&c, m, &w, src, get(cs, "src_len")->valueint, Ts, bos, eos, max_len, out,
                    &n_out, fc);
    CHECK_INT(n_out, nw);
    for (size_t i = 0; i < nw && i < n_out; i++)
        CHECK_INT(out[i], want[i]);
    for (size_t i = 0; i < n; i++) {
        a[i] = fc[i];
        b[i] = cross[i];
    }
    compare("greedy.json", "fast cross", a, b, n, 1e-5, 0.0, &w_fast_cross);
    free(a);
    free(b);
    free(out);
    free(fc);
    s2s_fast_cache_free(&c);
    s2s_fast_weights_free(&w);
}

/* d2l's predict_seq2seq on a trained model: the tokens exactly (the
 * generator checked that each step's largest logit leads the next by
 * more than 1e-3, a thousand times attn's rounding), every step's
 * cross-attention (L, NH, Ts) within 1e-6 (measured: 2e-7). */
static void test_greedy(const char *dir)
{
    char path[512], err[256], *text;
    cJSON *root;
    const cJSON *cs;
    s2s_config cfg;
    s2s_model m;
    size_t Ts, ncases = 0;
    snprintf(path, sizeof path, "%s/greedy.json", dir);
    text = check_read_file(path, NULL);
    root = text ? cJSON_Parse(text) : NULL;
    free(text);
    CHECK(root != NULL);
    if (!root)
        return;
    config_of(&cfg, get(root, "config"));
    Ts = (size_t)get(get(root, "config"), "num_steps")->valuedouble;
    CHECK(s2s_alloc(&m, &cfg, err, sizeof err) == 0);
    CHECK(load_params(&m, get(root, "state_dict"), "greedy.json") == 0);
    cJSON_ArrayForEach(cs, get(root, "cases"))
    {
        size_t n, nw, max_len = (size_t)get(cs, "max_len")->valuedouble, n_out;
        const size_t L = cfg.layers, NH = cfg.heads;
        int *src = ints(get(cs, "src"), &n), *want = ints(get(cs, "tokens"), &nw);
        int *out = calloc(max_len, sizeof *out);
        float *cross = calloc(L * NH * max_len * Ts, sizeof *cross);
        const cJSON *steps = get(cs, "cross"), *st;
        size_t t = 0;
        CHECK(s2s_greedy(&m, src, get(cs, "src_len")->valueint, Ts, get(root, "bos")->valueint,
                         get(root, "eos")->valueint, max_len, out, &n_out, cross, err,
                         sizeof err) == 0);
        CHECK_INT(n_out, nw);
        for (size_t i = 0; i < nw && i < n_out; i++)
            CHECK_INT(out[i], want[i]);
        /* step t of the fixture: (L, NH, Ts); attn's: cross[l][h][t] */
        cJSON_ArrayForEach(st, steps)
        {
            size_t k;
            double *w = numbers(st, &k);
            double *g = malloc(k * sizeof *g);
            for (size_t i = 0; i < k; i++) {
                size_t l = i / (NH * Ts), h = i / Ts % NH, s = i % Ts;
                g[i] = cross[((l * NH + h) * max_len + t) * Ts + s];
            }
            compare("greedy.json", "cross", g, w, k, 1e-6, 0.0, &w_cross);
            free(w);
            free(g);
            t++;
        }
        CHECK_INT(t, n_out + (n_out < max_len)); /* the <eos> step's row too */
        test_fast_greedy(&m, cs, src, Ts, get(root, "bos")->valueint, get(root, "eos")->valueint,
                         want, nw, cross);
        ncases++;
        free(src);
        free(want);
        free(out);
        free(cross);
    }
    printf("greedy decoding: %zu sentences token for token, their cross-attention\n", ncases);
    s2s_free(&m);
    cJSON_Delete(root);
}

/* ---- without PyTorch ------------------------------------------------------------ */

/* A small batch of 3 pairs: sources of 5 positions (lengths 5, 3, 2),
 * targets of 4 (−1 at <pad>), ids < 7 and < 8. */
static const int tiny_src[15] = {4, 5, 6, 4, 3, 6, 5, 3, 1, 1, 4, 3, 1, 1, 1};
static const long tiny_lens[3] = {5, 3, 2};
static const int tiny_dec[12] = {2, 5, 7, 6, 2, 4, 3, 1, 2, 3, 1, 1};
static const int tiny_tgt[12] = {5, 7, 6, 3, 4, 3, -1, -1, 3, -1, -1, -1};

#ifndef TINY_SEED
#define TINY_SEED 14
#endif

static fixture tiny_fixture(void)
{
    fixture fx = {0};
    fx.B = 3;
    fx.Ts = 5;
    fx.Tt = 4;
    fx.src = (int *)tiny_src;
    fx.src_lens = (long *)tiny_lens;
    fx.dec_in = (int *)tiny_dec;
    fx.targets = (int *)tiny_tgt;
    return fx;
}

/* A tiny model with biases and LayerNorms away from the identity. */
static void tiny_model(s2s_model *m, size_t layers, double dropout)
{
    s2s_config cfg = {7, 8, 8, 2, layers, 6, 1, dropout, &tfm_arch, 0, S2S_SCORE_DOT};
    char err[256];
    CHECK(s2s_alloc(m, &cfg, err, sizeof err) == 0);
    s2s_init(m, TINY_SEED);
    for (size_t i = 0; i < m->nparams; i++) {
        tensor *t = m->param[i].t;
        if (strstr(m->param[i].name, ".ln.weight"))
            for (size_t j = 0; j < t->size; j++)
                t->data[j] = 0.7f + 0.07f * (float)j - 0.01f * (float)i;
        else if (strstr(m->param[i].name, ".ln.bias"))
            for (size_t j = 0; j < t->size; j++)
                t->data[j] = 0.05f * (float)j - 0.2f + 0.005f * (float)i;
    }
}

/* Which ReLU inputs are positive (every block of both sides), into on:
 * where the pattern differs between w − h and w + h a kink lies between
 * them and the central difference is no derivative. */
static size_t relu_pattern(unsigned char *on, const s2s_cache *c, const s2s_model *m)
{
    const size_t H = m->cfg.ffn, ns = c->B * c->Ts * H, nt = c->B * c->Tt * H;
    size_t k = 0;
    for (size_t l = 0; l < m->cfg.layers; l++) {
        for (size_t i = 0; i < ns; i++)
            on[k++] = tfm_cache_of(c)->enc[l].H[i] > 0.0f;
        for (size_t i = 0; i < nt; i++)
            on[k++] = tfm_cache_of(c)->dec[l].H[i] > 0.0f;
    }
    return k;
}

/* Central differences (L(w + h) − L(w − h)) / 2h on every parameter of a
 * tiny model, against the backward pass: a witness independent of
 * PyTorch (with dropout: its masks are fixed by the seed). */
static void test_finite_differences(size_t layers, double dropout)
{
    s2s_model m;
    s2s_cache c;
    char err[256];
    fixture fx = tiny_fixture();
    mha_dropout drop = {dropout, 99};
    const float h = 2e-3f;
    double *grads, worst = 0.0;
    unsigned char *on_p, *on_m;
    size_t bad = 0, kinks = 0, np;
    tiny_model(&m, layers, dropout);
    CHECK(s2s_cache_alloc(&c, &m, fx.B, fx.Ts, fx.Tt, err, sizeof err) == 0);
    grads = calloc(m.total, sizeof *grads);
    on_p = calloc(2 * layers * fx.B * (fx.Ts + fx.Tt) * m.cfg.ffn, 1);
    on_m = calloc(2 * layers * fx.B * (fx.Ts + fx.Tt) * m.cfg.ffn, 1);
    loss_and_grads(&m, &c, &fx, grads, &drop);
    for (size_t i = 0; i < m.nparams; i++) {
        tensor *t = m.param[i].t;
        for (size_t j = 0; j < t->size; j++) {
            float w = t->data[j];
            double lp, lm, fd, an = grads[m.param[i].offset + j], diff;
            t->data[j] = w + h;
            lp = loss_and_grads(&m, &c, &fx, NULL, &drop);
            np = relu_pattern(on_p, &c, &m);
            t->data[j] = w - h;
            lm = loss_and_grads(&m, &c, &fx, NULL, &drop);
            relu_pattern(on_m, &c, &m);
            t->data[j] = w;
            if (memcmp(on_p, on_m, np) != 0) {
                kinks++;
                continue;
            }
            /* the step actually taken in float32 */
            fd = (lp - lm) / ((double)(w + h) - (double)(w - h));
            diff = fabs(fd - an);
            worst = diff > worst ? diff : worst;
            if (!(diff <= 2e-4 + 1e-2 * fabs(an)) && bad++ < 5)
                fprintf(stderr, "finite differences: d %s[%zu] = %.7g, (L(+h) − L(−h))/2h = %.7g\n",
                        m.param[i].name, j, an, fd);
        }
    }
    check_count++;
    if (bad)
        check_failed++;
    CHECK(kinks * 10 < m.total);
    printf("finite differences, %zu block%s a side%s: %zu parameters (%zu across a ReLU's kink "
           "skipped), worst |analytic − numeric| %.2g\n",
           layers, layers == 1 ? "" : "s", dropout > 0 ? ", dropout 0.3" : "", m.total, kinks,
           worst);
    free(on_p);
    free(on_m);
    free(grads);
    s2s_cache_free(&c);
    s2s_free(&m);
}

/* The loss is the mean over the targets that are not <pad>: the count,
 * the value against log-softmax written out here, and d decoder.dense.bias
 * = Σ over those rows of (softmax − one-hot) / count. */
static void test_masked_loss(void)
{
    s2s_model m;
    s2s_cache c;
    char err[256];
    fixture fx = tiny_fixture();
    double *grads, loss, sum = 0.0, *want_db;
    size_t count, rows = 0;
    const size_t Vt = 8;
    tiny_model(&m, 1, 0.0);
    CHECK(s2s_cache_alloc(&c, &m, fx.B, fx.Ts, fx.Tt, err, sizeof err) == 0);
    grads = calloc(m.total, sizeof *grads);
    want_db = calloc(Vt, sizeof *want_db);
    loss = loss_and_grads(&m, &c, &fx, grads, NULL);
    s2s_loss(&c, &m, fx.targets, &count, NULL);
    CHECK_INT(count, 7);
    for (size_t r = 0; r < fx.B * fx.Tt; r++) {
        const float *z = c.logits + r * Vt;
        double e = 0.0;
        if (fx.targets[r] < 0)
            continue;
        for (size_t k = 0; k < Vt; k++)
            e += exp((double)z[k]);
        sum += log(e) - z[fx.targets[r]];
        for (size_t k = 0; k < Vt; k++)
            want_db[k] += (exp((double)z[k]) / e - (k == (size_t)fx.targets[r])) / 7.0;
        rows++;
    }
    CHECK_INT(rows, 7);
    CHECK_NEAR(loss, sum / 7.0, 1e-12, 1e-12);
    {
        const double *db = grads + s2s_find(&m, "decoder.dense.bias")->offset;
        for (size_t k = 0; k < Vt; k++)
            CHECK_NEAR(db[k], want_db[k], 1e-12, 1e-9);
    }
    /* a different target behind <pad> would count: the −1 entries do not */
    {
        int tgt[12];
        memcpy(tgt, tiny_tgt, sizeof tgt);
        tgt[11] = 5;
        CHECK(s2s_loss(&c, &m, tgt, &count, NULL) > 0 && count == 8);
    }
    printf("masked loss: the mean over 7 of 12 target entries, <pad> ignored\n");
    free(want_db);
    free(grads);
    s2s_cache_free(&c);
    s2s_free(&m);
}

/* Source padding is invisible: another token at a padded source position
 * gives the same logits and the same gradients, bit for bit. */
static void test_source_padding(void)
{
    s2s_model m;
    s2s_cache c;
    char err[256];
    fixture fx = tiny_fixture();
    int src[15];
    float *logits;
    double *g1, *g2;
    const size_t nl = fx.B * fx.Tt * 8;
    tiny_model(&m, 2, 0.0);
    CHECK(s2s_cache_alloc(&c, &m, fx.B, fx.Ts, fx.Tt, err, sizeof err) == 0);
    g1 = calloc(m.total, sizeof *g1);
    g2 = calloc(m.total, sizeof *g2);
    logits = malloc(nl * sizeof *logits);
    loss_and_grads(&m, &c, &fx, g1, NULL);
    memcpy(logits, c.logits, nl * sizeof *logits);
    memcpy(src, tiny_src, sizeof src);
    src[8] = 6;  /* example 1, position 3 ≥ its length 3 */
    src[14] = 0; /* example 2, position 4 ≥ 2 */
    fx.src = src;
    loss_and_grads(&m, &c, &fx, g2, NULL);
    CHECK(memcmp(logits, c.logits, nl * sizeof *logits) == 0);
    CHECK(memcmp(g1, g2, m.total * sizeof *g1) == 0);
    /* a token within the length does change them */
    src[7] = 4;
    loss_and_grads(&m, &c, &fx, g2, NULL);
    CHECK(memcmp(logits, c.logits, nl * sizeof *logits) != 0);
    printf("source padding: changing a padded source token changes no logit and no gradient\n");
    free(logits);
    free(g1);
    free(g2);
    s2s_cache_free(&c);
    s2s_free(&m);
}

/* The encoder learns only through the cross-attention: its gradients are
 * nonzero, and exactly zero once every cross-attention's W_v is zero
 * (then its output no longer depends on the encoder). */
static void test_encoder_through_cross(void)
{
    s2s_model m;
    s2s_cache c;
    char err[256];
    fixture fx = tiny_fixture();
    double *grads;
    size_t enc_end, nonzero = 0, dec_nonzero = 0;
    tiny_model(&m, 2, 0.0);
    enc_end = s2s_find(&m, "decoder.embedding.weight")->offset; /* the encoder's come first */
    CHECK(s2s_cache_alloc(&c, &m, fx.B, fx.Ts, fx.Tt, err, sizeof err) == 0);
    grads = calloc(m.total, sizeof *grads);
    loss_and_grads(&m, &c, &fx, grads, NULL);
    for (size_t i = 0; i < m.nparams && m.param[i].offset < enc_end; i++) {
        size_t nz = 0;
        for (size_t j = 0; j < m.param[i].t->size; j++)
            nz += grads[m.param[i].offset + j] != 0.0;
        CHECK(nz > 0); /* every encoder tensor learns */
        nonzero += nz;
    }
    for (size_t l = 0; l < m.cfg.layers; l++) {
        memset(tfm_net(&m)->dec[l].attention2.W_v.weight.data, 0, tfm_net(&m)->dec[l].attention2.W_v.weight.size * 4);
        memset(tfm_net(&m)->dec[l].attention2.W_v.bias.data, 0, tfm_net(&m)->dec[l].attention2.W_v.bias.size * 4);
    }
    loss_and_grads(&m, &c, &fx, grads, NULL);
    for (size_t i = 0; i < enc_end; i++)
        CHECK(grads[i] == 0.0);
    for (size_t i = enc_end; i < m.total; i++)
        dec_nonzero += grads[i] != 0.0;
    CHECK(dec_nonzero > 0);
    printf("encoder: %zu of %zu gradients nonzero; none with every cross-attention's W_v zero\n",
           nonzero, enc_end);
    free(grads);
    s2s_cache_free(&c);
    s2s_free(&m);
}

/* Dropout: a batch split in two caches (example0 0 and 2) draws the masks
 * the whole batch draws. */
static void test_dropout_split(void)
{
    static const int src[20] = {4, 5, 6, 3, 1, 6, 3, 1, 1, 1, 5, 5, 4, 6, 3, 4, 3, 1, 1, 1};
    static const long lens[4] = {4, 2, 5, 2};
    static const int dec[16] = {2, 5, 7, 6, 2, 4, 3, 1, 2, 3, 1, 1, 2, 7, 7, 3};
    s2s_model m;
    s2s_cache whole, half;
    char err[256];
    mha_dropout drop = {0.3, 1234};
    const size_t per = 4 * 8; /* Tt · Vt logits per pair */
    int same = 1;
    tiny_model(&m, 2, 0.3);
    CHECK(s2s_cache_alloc(&whole, &m, 4, 5, 4, err, sizeof err) == 0);
    CHECK(s2s_cache_alloc(&half, &m, 2, 5, 4, err, sizeof err) == 0);
    CHECK(s2s_forward(&m, &whole, src, lens, dec, 4, 5, 4, &drop, err, sizeof err) == 0);
    for (size_t b0 = 0; b0 < 4; b0 += 2) {
        half.example0 = b0;
        CHECK(s2s_forward(&m, &half, src + b0 * 5, lens + b0, dec + b0 * 4, 2, 5, 4, &drop, err,
                          sizeof err) == 0);
        same &= memcmp(half.logits, whole.logits + b0 * per, 2 * per * sizeof(float)) == 0;
    }
    CHECK(same);
    /* and dropout does change them */
    CHECK(s2s_forward(&m, &half, src, lens, dec, 2, 5, 4, NULL, err, sizeof err) == 0);
    CHECK(memcmp(half.logits, whole.logits, 2 * per * sizeof(float)) != 0);
    printf("dropout: a batch split in two draws the masks of the whole\n");
    s2s_cache_free(&whole);
    s2s_cache_free(&half);
    s2s_free(&m);
}

/* With dropout, the fast path draws the reference's masks: the tiny
 * model's gradients agree (a different mask would move them by their own
 * size). */
static void test_fast_dropout(void)
{
    fixture fx = tiny_fixture();
    mha_dropout drop = {0.3, 987};
    s2s_model m;
    s2s_cache c;
    s2s_fast_weights w;
    s2s_fast_cache fc;
    char err[256];
    double *gr, *gf;
    tiny_model(&m, 2, 0.3);
    CHECK(s2s_cache_alloc(&c, &m, fx.B, fx.Ts, fx.Tt, err, sizeof err) == 0);
    CHECK(fast_setup(&w, &fc, &m, fx.B, 5) == 0);
    gr = calloc(m.total, sizeof *gr);
    gf = calloc(m.total, sizeof *gf);
    CHECK_NEAR(fast_loss_grads(&m, &w, &fc, &fx, gf, &drop),
               loss_and_grads(&m, &c, &fx, gr, &drop), 1e-6, 1e-5);
    for (size_t i = 0; i < m.nparams; i++)
        compare("tiny, dropout 0.3", m.param[i].name, gf + m.param[i].offset,
                gr + m.param[i].offset, m.param[i].t->size, FAST_ATOL, FAST_RTOL, &w_fast_drop);
    printf("fast path: dropout draws the reference's masks\n");
    free(gr);
    free(gf);
    s2s_fast_cache_free(&fc);
    s2s_fast_weights_free(&w);
    s2s_cache_free(&c);
    s2s_free(&m);
}

/* Greedy decoding is the teacher-forced forward pass on its own output:
 * s2s_forward on <bos> + out gives out as each position's argmax and the
 * same cross-attention, bit for bit. */
static void test_greedy_is_forward(void)
{
    s2s_model m;
    s2s_cache c;
    char err[256];
    const size_t Ts = 5, max_len = 6, L = 2, NH = 2;
    int out[6], dec[7];
    size_t n_out, same = 1;
    float cross[2 * 2 * 6 * 5];
    tiny_model(&m, L, 0.0);
    CHECK(s2s_greedy(&m, tiny_src, 5, Ts, 2, 0, max_len, out, &n_out, cross, err, sizeof err) == 0);
    CHECK(n_out >= 3); /* <unk> (0) as <eos>: decoded to max_len or nearly */
    dec[0] = 2;
    memcpy(dec + 1, out, n_out * sizeof *out);
    CHECK(s2s_cache_alloc(&c, &m, 1, Ts, n_out + 1, err, sizeof err) == 0);
    CHECK(s2s_forward(&m, &c, tiny_src, tiny_lens, dec, 1, Ts, n_out + 1, NULL, err, sizeof err) ==
          0);
    for (size_t t = 0; t < n_out; t++) {
        const float *z = c.logits + t * 8;
        size_t best = 0;
        for (size_t k = 1; k < 8; k++)
            best = z[k] > z[best] ? k : best;
        CHECK_INT(best, out[t]);
    }
    for (size_t l = 0; l < L; l++)
        for (size_t h = 0; h < NH; h++)
            for (size_t t = 0; t < n_out; t++)
                same &= memcmp(cross + ((l * NH + h) * max_len + t) * Ts,
                               tfm_cache_of(&c)->dec[l].A2 + (h * (n_out + 1) + t) * Ts, Ts * sizeof(float)) == 0;
    CHECK(same);
    printf("greedy decoding: %zu tokens, the forward pass on them agrees bit for bit\n", n_out);
    /* max_len 0: nothing; bad ids: refused */
    CHECK(s2s_greedy(&m, tiny_src, 5, Ts, 2, 3, 0, out, &n_out, NULL, err, sizeof err) == 0);
    CHECK_INT(n_out, 0);
    CHECK(s2s_greedy(&m, tiny_src, 5, Ts, 2, 8, 4, out, &n_out, NULL, err, sizeof err) == -1);
    CHECK(strcmp(err, "<bos> 2 or <eos> 8 is not in the vocabulary of 8") == 0);
    s2s_cache_free(&c);
    s2s_free(&m);
}

static void test_clip(void)
{
    double g[3] = {3.0, 0.0, 4.0};
    CHECK_NEAR(optim_clip(g, 3, 10.0), 5.0, 0, 0);
    CHECK(g[0] == 3.0 && g[2] == 4.0); /* below θ: untouched */
    CHECK_NEAR(optim_clip(g, 3, 0.0), 5.0, 0, 0);
    CHECK(g[0] == 3.0); /* θ 0: off */
    CHECK_NEAR(optim_clip(g, 3, 1.0), 5.0, 0, 0);
    CHECK_NEAR(g[0], 0.6, 1e-15, 0);
    CHECK_NEAR(g[2], 0.8, 1e-15, 0);
    CHECK_NEAR(optim_clip(g, 3, 1.0), 1.0, 1e-15, 0);
}

static void check_config_error(s2s_config cfg, const char *want)
{
    char err[256] = "";
    s2s_model m;
    CHECK(s2s_alloc(&m, &cfg, err, sizeof err) == -1);
    check_count++;
    if (strcmp(err, want) != 0) {
        check_failed++;
        fprintf(stderr, "config error: %s\n  want: %s\n", err, want);
    }
}

static void test_config(void)
{
    s2s_config ok = {9, 10, 8, 2, 2, 16, 1, 0.1, &tfm_arch, 0, S2S_SCORE_DOT};
    s2s_config c;
    s2s_model m;
    char err[256];
    size_t per_enc = 16, per_dec = 26; /* tensors of a block with biases */
    CHECK(s2s_alloc(&m, &ok, err, sizeof err) == 0);
    CHECK_INT(m.nparams, 4 + 2 * (per_enc + per_dec));
    CHECK(strcmp(m.param[0].name, "encoder.embedding.weight") == 0);
    CHECK(strcmp(m.param[1].name, "encoder.blks.block0.attention.W_q.weight") == 0);
    CHECK(strcmp(m.param[2].name, "encoder.blks.block0.attention.W_q.bias") == 0);
    CHECK(strcmp(m.param[1 + 2 * per_enc].name, "decoder.embedding.weight") == 0);
    CHECK(strcmp(m.param[2 + 2 * per_enc + 8].name, "decoder.blks.block0.addnorm1.ln.weight") == 0);
    CHECK(strcmp(m.param[m.nparams - 1].name, "decoder.dense.bias") == 0);
    CHECK(s2s_find(&m, "decoder.blks.block1.addnorm3.ln.bias") != NULL);
    CHECK(s2s_find(&m, "decoder.blks.block2.addnorm3.ln.bias") == NULL);
    /* embeddings and dense (9 + 10 + 10)·8 + 10; an encoder block: four
     * (8, 8) weights and (8,) biases, two LayerNorms, dense1 (16, 8) + 16,
     * dense2 (8, 16) + 8; a decoder block: eight weights and biases, three
     * LayerNorms, the same FFN */
    CHECK_INT(m.total, 29 * 8 + 10 + 2 * (4 * 72 + 2 * 16 + 128 + 16 + 128 + 8) +
                           2 * (8 * 72 + 3 * 16 + 128 + 16 + 128 + 8));
    s2s_free(&m);
    c = ok;
    c.heads = 3;
    check_config_error(c, "num_hiddens 8 is not divisible by num_heads 3");
    c = ok;
    c.ffn = 0;
    check_config_error(c, "the Transformer's FFN needs at least 1 hidden unit");
    c = ok;
    c.layers = 13;
    check_config_error(c, "13 layers (1 to 12)");
    c = ok;
    c.dropout = 1.0;
    check_config_error(c, "dropout 1 is not in [0, 1)");
    c = ok;
    c.tgt_vocab = 0;
    check_config_error(c, "the model needs two vocabularies, hiddens and heads");
    /* ids out of range */
    {
        s2s_cache cc;
        int bad_src[15];
        memcpy(bad_src, tiny_src, sizeof bad_src);
        bad_src[6] = 9;
        CHECK(s2s_alloc(&m, &ok, err, sizeof err) == 0);
        CHECK(s2s_cache_alloc(&cc, &m, 3, 5, 4, err, sizeof err) == 0);
        CHECK(s2s_forward(&m, &cc, bad_src, tiny_lens, tiny_dec, 3, 5, 4, NULL, err, sizeof err) ==
              -1);
        CHECK(strcmp(err, "source [1][1]: id 9 is not in the vocabulary of 9") == 0);
        CHECK(s2s_forward(&m, &cc, tiny_src, tiny_lens, tiny_dec, 4, 5, 4, NULL, err, sizeof err) ==
              -1);
        s2s_cache_free(&cc);
        s2s_free(&m);
    }
}

/* ---- the model file ------------------------------------------------------------- */

static const char *const model_src_vocab[] = {"<unk>", "<pad>", "<bos>", "<eos>", "the",
                                              "red",   "car",   "is",    "fast"};
static const char *const model_tgt_vocab[] = {"<unk>",   "<pad>", "<bos>", "<eos>",  "la",
                                              "voiture", "rouge", "est",   "rapide", "."};
#define MODEL_STEPS 6

/* The model tests/ref/seq2seq_model/model.json holds: 2 blocks a side,
 * d 8, 2 heads, FFN 12, biases, from seed 5. */
static int model_for_file(s2s_model *m)
{
    s2s_config cfg = {9, 10, 8, 2, 2, 12, 1, 0.0, &tfm_arch, 0, S2S_SCORE_DOT};
    char err[256];
    if (s2s_alloc(m, &cfg, err, sizeof err))
        return -1;
    s2s_init(m, 5);
    return 0;
}

static int write_model(const char *dir)
{
    s2s_model m;
    if (model_for_file(&m))
        return 1;
    return save_model_file(dir, &m, model_src_vocab, model_tgt_vocab, MODEL_STEPS);
}

/* The committed model file loads, and gives the logits PyTorch computed
 * after loading it with strict=True into d2l's modules. */
static void test_model_file_torch(const char *dir)
{
    char path[512], err[512], **sv, **tv, *text;
    s2s_model m;
    s2s_cache c;
    size_t steps, n, B, Ts, Tt;
    cJSON *root;
    snprintf(path, sizeof path, "%s/model.json", dir);
    CHECK(s2s_model_load(path, &m, &sv, &tv, &steps, 0.0, err, sizeof err) == 0);
    if (!m.nparams) {
        fprintf(stderr, "%s\n", err);
        return;
    }
    CHECK_INT(steps, MODEL_STEPS);
    CHECK(m.cfg.bias && m.cfg.layers == 2 && m.cfg.ffn == 12);
    CHECK(strcmp(tv[5], "voiture") == 0);
    snprintf(path, sizeof path, "%s/logits.json", dir);
    text = check_read_file(path, NULL);
    root = text ? cJSON_Parse(text) : NULL;
    free(text);
    CHECK(root != NULL && cJSON_IsTrue(get(root, "strict")));
    if (root) {
        int *src = ints(get(root, "src"), &n), *dec = ints(get(root, "dec_in"), &n);
        int *l = ints(get(root, "src_lens"), &B);
        long lens[8];
        double *want = numbers(get(root, "logits"), &n), *got;
        Ts = (size_t)cJSON_GetArraySize(get(root, "src")->child);
        Tt = (size_t)cJSON_GetArraySize(get(root, "dec_in")->child);
        for (size_t i = 0; i < B && i < 8; i++)
            lens[i] = l[i];
        /* the file's keys in PyTorch's state_dict() order */
        CHECK_INT(cJSON_GetArraySize(get(root, "keys")), m.nparams);
        for (size_t i = 0; i < m.nparams; i++)
            CHECK(strcmp(cJSON_GetArrayItem(get(root, "keys"), (int)i)->valuestring,
                         m.param[i].name) == 0);
        CHECK(s2s_cache_alloc(&c, &m, B, Ts, Tt, err, sizeof err) == 0);
        CHECK(s2s_forward(&m, &c, src, lens, dec, B, Ts, Tt, NULL, err, sizeof err) == 0);
        got = malloc(n * sizeof *got);
        CHECK_INT(n, B * Tt * m.cfg.tgt_vocab);
        for (size_t i = 0; i < n; i++)
            got[i] = c.logits[i];
        compare("logits.json", "logits", got, want, n, 1e-6, 1e-6, &w_logits);
        printf("model file: %s loads in attn and in PyTorch (strict=True); %zu logits agree\n", dir,
               n);
        s2s_cache_free(&c);
        free(src);
        free(dec);
        free(l);
        free(want);
        free(got);
        cJSON_Delete(root);
    }
    train_strings_free(sv, m.cfg.src_vocab);
    train_strings_free(tv, m.cfg.tgt_vocab);
    s2s_free(&m);
}

/* Parse text as a model file: 0, or -1 with the message in err. */
static int model_from_text(const char *text, char *err, size_t errlen)
{
    cJSON *root = cJSON_Parse(text);
    s2s_model m;
    char **sv, **tv;
    size_t steps;
    int rc;
    if (!root) {
        snprintf(err, errlen, "(test JSON does not parse)");
        return -1;
    }
    rc = s2s_model_from_json(root, &m, &sv, &tv, &steps, 0.0, err, errlen);
    if (rc == 0) {
        train_strings_free(sv, m.cfg.src_vocab);
        train_strings_free(tv, m.cfg.tgt_vocab);
        s2s_free(&m);
    }
    cJSON_Delete(root);
    return rc;
}

/* The model written to memory, with one edit: find → repl (first match). */
static char *model_text(const char *find, const char *repl)
{
    s2s_model m;
    char *buf = NULL, *at, *out;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    model_for_file(&m);
    s2s_model_write(f, &m, model_src_vocab, model_tgt_vocab, MODEL_STEPS);
    fclose(f);
    s2s_free(&m);
    if (!find)
        return buf;
    at = strstr(buf, find);
    out = malloc(len + strlen(repl) + 1);
    if (!at || !out) {
        free(out);
        return buf;
    }
    memcpy(out, buf, (size_t)(at - buf));
    strcpy(out + (at - buf), repl);
    strcat(out, at + strlen(find));
    free(buf);
    return out;
}

static void check_model_error(const char *find, const char *repl, const char *want)
{
    char *text = model_text(find, repl), err[512] = "";
    check_count++;
    if (model_from_text(text, err, sizeof err) == 0 || strcmp(err, want) != 0) {
        check_failed++;
        fprintf(stderr, "model file with %s -> %s\n  error: %s\n  want:  %s\n", find, repl, err,
                want);
    }
    free(text);
}

/* Written and read back: the same parameters, bit for bit; a broken file:
 * one message naming the key. */
static void test_model_file_round_trip(void)
{
    char *text = model_text(NULL, NULL), err[512];
    cJSON *root = cJSON_Parse(text);
    s2s_model a, b;
    char **sv, **tv;
    size_t steps, same = 1;
    model_for_file(&a);
    CHECK(s2s_model_from_json(root, &b, &sv, &tv, &steps, 0.0, err, sizeof err) == 0);
    CHECK_INT(b.nparams, a.nparams);
    for (size_t i = 0; i < a.nparams && i < b.nparams; i++)
        same &= strcmp(a.param[i].name, b.param[i].name) == 0 &&
                memcmp(a.param[i].t->data, b.param[i].t->data, a.param[i].t->size * 4) == 0;
    CHECK(same);
    train_strings_free(sv, b.cfg.src_vocab);
    train_strings_free(tv, b.cfg.tgt_vocab);
    s2s_free(&a);
    s2s_free(&b);
    cJSON_Delete(root);
    free(text);
    check_model_error("\"decoder.dense.bias\"", "\"decoder.dense.biaz\"",
                      "$.state_dict[\"decoder.dense.biaz\"]: not a parameter of this model");
    check_model_error("\"fast\"", "\"fast\", \"slow\"",
                      "$.state_dict[\"encoder.embedding.weight\"]: expected shape (10, 8), got "
                      "(9, 8)");
    check_model_error("\"<bos>\", \"<eos>\", \"the\"", "\"<eos>\", \"<bos>\", \"the\"",
                      "$.src_vocab[2]: expected \"<bos>\" (d2l's Vocab begins <unk> <pad> <bos> "
                      "<eos>), got \"<eos>\"");
    check_model_error("\"car\"", "\"red\"", "$.src_vocab[6]: \"red\" appears twice");
    /* a Transformer's file relabelled: refused at its first Transformer key */
    check_model_error("\"arch\": \"transformer\"", "\"arch\": \"bahdanau\"",
                      "$.num_heads: 2, but Bahdanau's model (\"arch\": \"bahdanau\") has one "
                      "attention");
    check_model_error("\"arch\": \"transformer\"", "\"arch\": \"rnn\"",
                      "$.arch: expected \"transformer\" or \"bahdanau\", got \"rnn\"");
    check_model_error("\"num_heads\": 2", "\"num_heads\": 3",
                      "$.num_heads: 3 does not divide num_hiddens 8");
    check_model_error("\"num_steps\": 6,", "", "$: missing \"num_steps\"");
    check_model_error("\"num_layers\": 2", "\"num_layers\": 3",
                      "$.state_dict: missing \"encoder.blks.block2.attention.W_q.weight\"");
    check_model_error("\"encoder.blks.block0.attention.W_q.bias\"",
                      "\"encoder.blks.block0.attention.W_q.biax\"",
                      "$.state_dict[\"encoder.blks.block0.attention.W_q.biax\"]: not a parameter "
                      "of this model");
    check_model_error("\"num_hiddens\": 8", "\"num_hiddens\": 80000",
                      "$.state_dict: 2978 numbers, far fewer than a model of num_hiddens 80000, "
                      "2 layers and vocabularies of 9 and 10 has parameters (at least "
                      "153610000000)");
    check_model_error("\"task\": \"translate\"", "\"task\": \"reverse\"",
                      "$.task: expected \"translate\", got \"reverse\"");
    check_model_error("\"task\": \"translate\"", "\"vocab\": [\"a\"]",
                      "$: a self-attention model of attn train (it has \"vocab\", no \"task\": "
                      "\"translate\"), not a translation model; attn selfattn --input reads it");
    check_model_error("\"command\"", "\"comand\"",
                      "$.comand: unknown key (a translation model has command, task, arch, "
                      "src_vocab, tgt_vocab, num_hiddens, num_heads, num_layers, ffn_num_hiddens, "
                      "num_steps, seed, rnn, score, state_dict)");
    /* SPEC §15's "rnn" is Bahdanau's; SPEC §16's "score": "additive" asks
     * the Transformer for its score's weights, which a dot model's file
     * lacks */
    check_model_error("\"num_steps\"", "\"rnn\": \"lstm\", \"num_steps\"",
                      "$.rnn: d2l's Transformer (\"arch\": \"transformer\") has no recurrent "
                      "layers");
    check_model_error("\"num_steps\"", "\"score\": \"additive\", \"num_steps\"",
                      "$.state_dict: missing \"encoder.blks.block0.attention.score.W_q.weight\"");
    check_model_error("\"num_steps\"", "\"score\": \"cosine\", \"num_steps\"",
                      "$.score: expected \"additive\" or \"dot\", got \"cosine\"");
    printf("model file: written and read back bit for bit; 17 broken files refused\n");
}

/* ---- timing ----------------------------------------------------------------------- */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One training step of SPEC §11's default size: B 64, Ts = Tt = 10, d 32,
 * 4 heads, 2 blocks a side, FFN 64, vocabularies of 40. */
static int bench(void)
{
    s2s_config cfg = {40, 40, 32, 4, 2, 64, 0, 0.0, &tfm_arch, 0, S2S_SCORE_DOT};
    const size_t B = 64, T = 10;
    s2s_model m;
    s2s_cache c;
    char err[256];
    int *src = malloc(B * T * sizeof *src), *dec = malloc(B * T * sizeof *dec);
    int *tgt = malloc(B * T * sizeof *tgt);
    long *lens = malloc(B * sizeof *lens);
    double *grads, best = 1e9, total = 0.0, fwd = 1e9;
    const int reps = 10;
    if (s2s_alloc(&m, &cfg, err, sizeof err) || s2s_cache_alloc(&c, &m, B, T, T, err, sizeof err))
        return 1;
    s2s_init(&m, 1);
    grads = calloc(m.total, sizeof *grads);
    for (size_t i = 0; i < B * T; i++) {
        src[i] = 4 + (int)(i * 7 % 36);
        dec[i] = 4 + (int)(i * 11 % 36);
        tgt[i] = (i % T) < 8 ? 4 + (int)(i * 13 % 36) : -1;
    }
    for (size_t b = 0; b < B; b++)
        lens[b] = 6 + (long)(b % 5);
    for (int r = 0; r < reps; r++) {
        double t0 = now(), dt;
        size_t count;
        s2s_forward(&m, &c, src, lens, dec, B, T, T, NULL, err, sizeof err);
        s2s_loss(&c, &m, tgt, &count, NULL);
        fwd = now() - t0 < fwd ? now() - t0 : fwd;
        s2s_backward(grads, &c, &m, src, lens, dec, tgt, 1.0 / (double)count, NULL, err,
                     sizeof err);
        dt = now() - t0;
        best = dt < best ? dt : best;
        total += dt;
    }
    printf("s2s_forward + s2s_backward, B %zu, T %zu, d 32, 4 heads, 2 blocks a side, FFN 64, "
           "%zu parameters: best %.1f ms (the forward pass and loss %.1f), mean %.1f ms of %d\n",
           B, T, m.total, best * 1e3, fwd * 1e3, total / reps * 1e3, reps);
    free(src);
    free(dec);
    free(tgt);
    free(lens);
    free(grads);
    s2s_cache_free(&c);
    s2s_free(&m);
    return 0;
}

/* seq2seq.h's table of architectures: every entry found by its name,
 * whole (every operation there, self-attention exactly when it says so),
 * the default the first; an unknown name refused. */
static void test_arch_table(void)
{
    const s2s_config none = {0};
    size_t n = 0;
    for (const s2s_arch *const *a = s2s_archs; *a; a++, n++) {
        const s2s_arch *x = *a;
        const s2s_fast_ops *f = x->fast;
        CHECK(x->name && x->label && s2s_arch_find(x->name) == x);
        CHECK(x->cross_blocks && x->config_check && x->alloc && x->init && x->free);
        CHECK(x->cache_alloc && x->cache_free && x->forward && x->backward && x->cross);
        CHECK(x->greedy && f && (x->self != NULL) == (x->has_self != 0));
        CHECK(f->weights_alloc && f->weights_update && f->weights_free && f->cache_alloc);
        CHECK(f->cache_bytes && f->cache_free && f->step && f->greedy_batch && f->cross);
        CHECK(f->logits && (f->self != NULL) == (x->has_self != 0));
    }
    CHECK(n == 2 && s2s_archs[0] == &tfm_arch && s2s_arch_of(&none) == &tfm_arch);
    CHECK(s2s_arch_find("rnn") == NULL && s2s_arch_find("") == NULL);
    CHECK(s2s_arch_find("Transformer") == NULL);
}

int main(int argc, char **argv)
{
    char model_dir[512];
    if (argc > 2 && strcmp(argv[1], "write-model") == 0)
        return write_model(argv[2]);
    if (argc > 1 && strcmp(argv[1], "bench") == 0)
        return bench();
    if (argc < 2) {
        fprintf(stderr, "usage: test_seq2seq FIXTURE_DIR | write-model DIR | bench\n");
        return 2;
    }
    test_arch_table();
    test_config();
    test_clip();
    test_masked_loss();
    test_source_padding();
    test_encoder_through_cross();
    test_dropout_split();
    test_fast_dropout();
    test_greedy_is_forward();
    test_finite_differences(1, 0.0);
    test_finite_differences(2, 0.3);
    test_fixtures(argv[1]);
    test_greedy(argv[1]);
    snprintf(model_dir, sizeof model_dir, "%s_model", argv[1]);
    test_model_file_round_trip();
    test_model_file_torch(model_dir);
    printf("against PyTorch, over every fixture:\n");
    report(&w_loss);
    report(&w_grad);
    report(&w_norm);
    report(&w_lsgd);
    report(&w_ladam);
    report(&w_psgd);
    report(&w_padam);
    report(&w_wk);
    report(&w_cross);
    report(&w_logits);
    report(&w_fast);
    report(&w_fast_drop);
    report(&w_fast_cross);
    return check_summary("seq2seq");
}
