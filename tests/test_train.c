/* test_train.c — attn train's core: the model's gradients against PyTorch
 * and against finite differences, Adam against torch.optim.Adam, the data
 * and model files, determinism across threads, and that the built-in tasks
 * learn what they should.
 *
 * usage: test_train FIXTURE_DIR APPLE_JSON [--induction]
 *   FIXTURE_DIR  tests/ref/train (scripts/gen_train_ref.py); its sibling
 *                train_encoder holds a stack saved by attn and PyTorch's
 *                logits for it (gen_train_ref.py --encoder)
 *   APPLE_JSON   data/apple_train.json (the corpus compiled into attn)
 *   --induction  only that 2 layers learn induction and 1 cannot (slow)
 */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attention.h"
#include "check.h"
#include "json_in.h"
#include "model_file.h"
#include "optim.h"
#include "problem.h"
#include "encoder_train.h"
#include "train_data.h"
#include "encoder.h"
#include "encoder_task.h"

/* ---- fixtures ----------------------------------------------------------- */

typedef struct fixture {
    cJSON *root;
    tmodel_config cfg;
    int float64;           /* torch computed it in float64 (learned P, 24 on) */
    size_t B, T;
    int *tokens, *targets; /* (B, T) */
    long *lens;            /* (B,) or NULL */
} fixture;

static int get_bool(const cJSON *o, const char *k)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, k));
}

static size_t get_size(const cJSON *o, const char *k)
{
    return (size_t)cJSON_GetObjectItemCaseSensitive(o, k)->valuedouble;
}

static int fixture_load(fixture *fx, const char *path)
{
    char *text = check_read_file(path, NULL);
    const cJSON *c, *row, *v;
    size_t b, t;
    memset(fx, 0, sizeof *fx);
    if (!text || !(fx->root = cJSON_Parse(text))) {
        fprintf(stderr, "%s: cannot read\n", path);
        free(text);
        return -1;
    }
    free(text);
    c = cJSON_GetObjectItemCaseSensitive(fx->root, "config");
    fx->cfg.vocab = get_size(c, "vocab");
    fx->cfg.classes = get_size(c, "classes");
    fx->cfg.hiddens = get_size(c, "hiddens");
    fx->cfg.heads = get_size(c, "heads");
    fx->cfg.posenc = get_bool(c, "posenc");
    /* a learned pos_embedding (fixtures 24 on): its max_len, in float64 */
    fx->cfg.learned = cJSON_GetObjectItemCaseSensitive(c, "pos_embedding") != NULL;
    fx->cfg.max_len = fx->cfg.learned ? get_size(c, "max_len") : 0;
    fx->float64 = get_bool(c, "float64");
    fx->cfg.addnorm = get_bool(c, "addnorm");
    fx->cfg.bias = get_bool(c, "bias");
    fx->cfg.causal = get_bool(c, "causal");
    /* stacks (fixtures 15 on): layers and ffn; the one-layer model without */
    fx->cfg.layers = cJSON_GetObjectItemCaseSensitive(c, "layers") ? get_size(c, "layers") : 1;
    fx->cfg.ffn = cJSON_GetObjectItemCaseSensitive(c, "ffn") ? get_size(c, "ffn") : 0;
    row = cJSON_GetObjectItemCaseSensitive(fx->root, "tokens");
    fx->B = (size_t)cJSON_GetArraySize(row);
    fx->T = (size_t)cJSON_GetArraySize(row->child);
    fx->tokens = malloc(fx->B * fx->T * sizeof(int));
    fx->targets = malloc(fx->B * fx->T * sizeof(int));
    for (b = 0; b < fx->B; b++)
        for (t = 0; t < fx->T; t++) {
            fx->tokens[b * fx->T + t] =
                cJSON_GetArrayItem(cJSON_GetArrayItem(row, (int)b), (int)t)->valueint;
            fx->targets[b * fx->T + t] = cJSON_GetArrayItem(
                cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(fx->root, "targets"), (int)b),
                (int)t)->valueint;
        }
    v = cJSON_GetObjectItemCaseSensitive(fx->root, "valid_lens");
    if (cJSON_IsArray(v)) {
        fx->lens = malloc(fx->B * sizeof(long));
        for (b = 0; b < fx->B; b++)
            fx->lens[b] = cJSON_GetArrayItem(v, (int)b)->valueint;
    }
    return 0;
}

static void fixture_free(fixture *fx)
{
    cJSON_Delete(fx->root);
    free(fx->tokens);
    free(fx->targets);
    free(fx->lens);
}

/* Every parameter of m from the state_dict object sd. */
static int load_params(tmodel *m, const cJSON *sd, const char *name)
{
    size_t i;
    char err[256];
    for (i = 0; i < m->nparams; i++) {
        tensor t;
        if (json_get_tensor(cJSON_GetObjectItemCaseSensitive(sd, m->param[i].name),
                            m->param[i].name, 1, 3, &t, err, sizeof err) ||
            t.size != m->param[i].t->size) {
            fprintf(stderr, "%s: %s: %s\n", name, m->param[i].name, err);
            return -1;
        }
        memcpy(m->param[i].t->data, t.data, t.size * sizeof(float));
        tensor_free(&t);
    }
    return 0;
}

/* got (n) against the nested numbers of want, |got − want| <= atol +
 * rtol·|want|: the number of misses; the worst difference in *worst. */
static size_t compare_tensor(const double *got, const float *gotf, const cJSON *want, size_t n,
                             double atol, double rtol, double *worst, size_t *worst_at)
{
    tensor t;
    char err[128];
    size_t i, bad = 0;
    *worst = 0.0;
    *worst_at = 0;
    if (json_get_tensor(want, "want", 1, 3, &t, err, sizeof err) || t.size != n)
        return n ? n : 1;
    for (i = 0; i < n; i++) {
        double g = got ? got[i] : gotf[i], d = fabs(g - t.data[i]);
        if (d > *worst) {
            *worst = d;
            *worst_at = i;
        }
        bad += !(d <= atol + rtol * fabs(t.data[i]));
    }
    tensor_free(&t);
    return bad;
}

/* attn train's options for a --data run with the fixture's model. */
static void opts_from_fixture(train_opts *o, const fixture *fx)
{
    train_opts_default(o, TASK_DATA);
    o->hiddens = fx->cfg.hiddens;
    o->heads = fx->cfg.heads;
    o->posenc = fx->cfg.posenc;
    o->learned = fx->cfg.learned;
    o->max_len = fx->cfg.max_len;
    o->addnorm = fx->cfg.addnorm;
    o->bias = fx->cfg.bias;
    o->causal = fx->cfg.causal;
    o->layers = fx->cfg.layers;
    o->ffn = fx->cfg.ffn;
}

/* Every parameter's gradient grads (m->total,) against the fixture's
 * "grads", within atol + rtol·|torch|; a failure prints, llm.c style, the
 * worst difference of the parameter (what: "" or "fast path: "). */
static void check_grads(const char *file, const char *what, const double *grads,
                        const tmodel *m, const cJSON *root, double atol, double rtol)
{
    const cJSON *all = cJSON_GetObjectItemCaseSensitive(root, "grads");
    for (size_t i = 0; i < m->nparams; i++) {
        const cJSON *want = cJSON_GetObjectItemCaseSensitive(all, m->param[i].name);
        double worst;
        size_t at, bad = compare_tensor(grads + m->param[i].offset, NULL, want,
                                        m->param[i].t->size, atol, rtol, &worst, &at);
        check_count++;
        if (bad) {
            check_failed++;
            fprintf(stderr, "%s: %sd %s: %zu of %zu outside %g + %g·|torch|, worst %.3g at "
                    "[%zu]\n", file, what, m->param[i].name, bad, m->param[i].t->size, atol, rtol,
                    worst, at);
        }
    }
}


/* The gradients of one fixture: attn's reference loops against torch. */
static void test_fixture_grads(const char *dir, const char *file)
{
    char path[512], err[256];
    fixture fx;
    tmodel m;
    tcache c;
    double *grads, loss;
    size_t count, i;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (fixture_load(&fx, path)) {
        CHECK(0);
        return;
    }
    CHECK(tmodel_alloc(&m, &fx.cfg, err, sizeof err) == 0);
    CHECK(load_params(&m, cJSON_GetObjectItemCaseSensitive(fx.root, "state_dict"), file) == 0);
    CHECK(tcache_alloc(&c, &m, fx.B, fx.T, err, sizeof err) == 0);
    grads = calloc(m.total, sizeof *grads);
    CHECK(tmodel_forward(&m, &c, fx.tokens, fx.lens, fx.B, fx.T, NULL, err, sizeof err) == 0);
    loss = tmodel_loss(&c, &m, fx.targets, &count, NULL);
    CHECK(count > 0);
    loss /= (double)count;
    CHECK_NEAR(loss, cJSON_GetObjectItemCaseSensitive(fx.root, "loss")->valuedouble,
               fx.float64 ? 1e-7 : 1e-6, fx.float64 ? 1e-6 : 1e-5);
    CHECK(tmodel_backward(grads, &c, &m, fx.tokens, fx.lens, fx.targets, 1.0 / (double)count,
                          NULL, err, sizeof err) == 0);
    /* torch in float64: the reference within 1e-6 + 1e-5·|torch| */
    check_grads(file, "", grads, &m, fx.root, fx.float64 ? 1e-6 : 1e-5,
                fx.float64 ? 1e-5 : 1e-4);
    /* the fast path (encoder_fast.c) against torch too */
    {
        tfast_cache fc;
        tfast_weights fw;
        float *gf = calloc(m.total, sizeof *gf);
        double *gd = calloc(m.total, sizeof *gd), fl;
        size_t fcount;
        CHECK(tfast_cache_alloc(&fc, &m, fx.B, fx.T) == 0);
        CHECK(tfast_weights_alloc(&fw, &m) == 0);
        tfast_weights_update(&fw, &m);
        fl = tfast_step(gf, &fc, &m, &fw, fx.tokens, fx.lens, fx.targets, fx.B, fx.T,
                        1.0 / (double)count, NULL, &fcount, NULL);
        CHECK_INT(fcount, count);
        CHECK_NEAR(fl / (double)fcount,
                   cJSON_GetObjectItemCaseSensitive(fx.root, "loss")->valuedouble, 1e-6, 1e-5);
        for (i = 0; i < m.total; i++)
            gd[i] = gf[i];
        check_grads(file, "fast path: ", gd, &m, fx.root, 1e-5, 1e-4);
        /* and against the reference loops, element by element */
        {
            double worst = 0.0;
            size_t bad = 0;
            for (i = 0; i < m.total; i++) {
                double dd = fabs(gd[i] - grads[i]);
                worst = dd > worst ? dd : worst;
                bad += !(dd <= 1e-6 + 1e-4 * fabs(grads[i]));
            }
            CHECK(bad == 0);
            if (bad)
                fprintf(stderr, "%s: fast path vs reference: %zu gradients apart, worst %.3g\n",
                        file, bad, worst);
        }
        tfast_weights_free(&fw);
        tfast_cache_free(&fc);
        free(gf);
        free(gd);
    }
    printf("  %s: loss %.7f, %zu parameters' gradients checked (reference and fast)\n", file,
           loss, m.nparams);
    free(grads);
    tcache_free(&c);
    tmodel_free(&m);
    fixture_free(&fx);
}

/* A --data task holding one fixed batch: with batch size 0 the trainer
 * uses it whole at every step, in order. */
static void task_from_fixture(train_task *task, const fixture *fx)
{
    char err[128];
    size_t i;
    memset(task, 0, sizeof *task);
    task->kind = TASK_DATA;
    task->label_at = -1;
    task->V = fx->cfg.vocab;
    task->C = fx->cfg.classes;
    task->vocab = calloc(task->V, sizeof(char *));
    task->classes = calloc(task->C, sizeof(char *));
    for (i = 0; i < task->V; i++) {
        task->vocab[i] = malloc(24);
        snprintf(task->vocab[i], 24, i ? "t%zu" : "<pad>", i);
    }
    for (i = 0; i < task->C; i++) {
        task->classes[i] = malloc(24);
        snprintf(task->classes[i], 24, "c%zu", i);
    }
    train_set_alloc(&task->train, fx->B, fx->T, err, sizeof err);
    memcpy(task->train.tokens, fx->tokens, fx->B * fx->T * sizeof(int));
    memcpy(task->train.targets, fx->targets, fx->B * fx->T * sizeof(int));
    for (i = 0; i < fx->B; i++)
        task->train.lens[i] = fx->lens ? fx->lens[i] : (long)fx->T;
}

/* The steps of an optimizer (key "adam": 50 of torch.optim.Adam, or in the
 * float64 fixtures 10 of "adam" or "sgd") from torch's initial weights on
 * torch's batch: each step's loss and the final weights. Against torch in
 * float64 the reference holds 1e-5; the float32 fast path, and every path
 * against the float32 fixtures, 1e-4 on the loss and 1e-4 + 1e-3·|torch|
 * on the weights. */
static void test_fixture_steps(const char *dir, const char *file, const char *key, int threads,
                               int reference)
{
    char path[512], err[256];
    fixture fx;
    train_task task;
    train_opts o;
    trainer tr;
    tmodel init;
    const cJSON *run, *losses, *sd;
    int s, steps;
    size_t i;
    double worst_loss = 0.0, loss_tol, atol, rtol;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (fixture_load(&fx, path)) {
        CHECK(0);
        return;
    }
    run = cJSON_GetObjectItemCaseSensitive(fx.root, key);
    if (!run) {
        fixture_free(&fx);
        return;
    }
    losses = cJSON_GetObjectItemCaseSensitive(run, "losses");
    steps = cJSON_GetObjectItemCaseSensitive(run, "steps")->valueint;
    CHECK_INT(steps, fx.float64 ? 10 : 50);
    loss_tol = fx.float64 && reference ? 1e-5 : 1e-4;
    atol = fx.float64 && reference ? 1e-5 : 1e-4;
    rtol = fx.float64 && reference ? 1e-5 : 1e-3;
    CHECK(tmodel_alloc(&init, &fx.cfg, err, sizeof err) == 0);
    CHECK(load_params(&init, cJSON_GetObjectItemCaseSensitive(fx.root, "state_dict"), file) == 0);
    task_from_fixture(&task, &fx);
    opts_from_fixture(&o, &fx);
    o.optimizer = strcmp(key, "sgd") == 0 ? OPTIM_SGD : OPTIM_ADAM;
    o.lr = cJSON_GetObjectItemCaseSensitive(run, "lr")->valuedouble;
    o.batch_size = 0;
    o.threads = threads;
    o.reference = reference;
    CHECK(trainer_init(&tr, &task, &o, &init, err, sizeof err) == 0);
    for (s = 0; s < steps; s++) {
        train_stats st;
        double want = cJSON_GetArrayItem(losses, s)->valuedouble, d;
        CHECK(trainer_step(&tr, &st, err, sizeof err) == 0);
        d = fabs(st.loss - want) / fabs(want);
        if (d > worst_loss)
            worst_loss = d;
        if (!(d <= loss_tol)) {
            check_failed++;
            fprintf(stderr, "%s: %s step %d: loss %.9g, torch %.9g\n", file, key, s + 1, st.loss,
                    want);
        }
        check_count++;
    }
    sd = cJSON_GetObjectItemCaseSensitive(run, "state_dict");
    for (i = 0; i < tr.model.nparams; i++) {
        double worst;
        size_t at, bad = compare_tensor(NULL, tr.model.param[i].t->data,
                                        cJSON_GetObjectItemCaseSensitive(sd, tr.model.param[i].name),
                                        tr.model.param[i].t->size, atol, rtol, &worst, &at);
        check_count++;
        if (bad) {
            check_failed++;
            fprintf(stderr, "%s: after %d %s steps, %s: %zu outside %g + %g·|torch|, worst "
                    "%.3g at [%zu]\n", file, steps, key, tr.model.param[i].name, bad, atol, rtol,
                    worst, at);
        }
    }
    printf("  %s: %d %s steps (%s, %d thread%s), worst relative loss difference %.2g\n", file,
           steps, key, reference ? "reference" : "fast", threads, threads == 1 ? "" : "s",
           worst_loss);
    trainer_free(&tr);
    tmodel_free(&init);
    train_task_free(&task);
    fixture_free(&fx);
}

/* One SGD step from torch's weights: w − lr·g with torch's gradients. */
static void test_fixture_sgd(const char *dir, const char *file)
{
    char path[512], err[256];
    fixture fx;
    train_task task;
    train_opts o;
    trainer tr;
    tmodel init;
    size_t i, j, bad = 0;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (fixture_load(&fx, path)) {
        CHECK(0);
        return;
    }
    CHECK(tmodel_alloc(&init, &fx.cfg, err, sizeof err) == 0);
    CHECK(load_params(&init, cJSON_GetObjectItemCaseSensitive(fx.root, "state_dict"), file) == 0);
    task_from_fixture(&task, &fx);
    opts_from_fixture(&o, &fx);
    o.optimizer = OPTIM_SGD;
    o.lr = 0.5;
    o.batch_size = 0;
    CHECK(trainer_init(&tr, &task, &o, &init, err, sizeof err) == 0);
    CHECK(trainer_step(&tr, NULL, err, sizeof err) == 0);
    for (i = 0; i < tr.model.nparams; i++) {
        tensor g;
        CHECK(json_get_tensor(cJSON_GetObjectItemCaseSensitive(
                                  cJSON_GetObjectItemCaseSensitive(fx.root, "grads"),
                                  tr.model.param[i].name),
                              "g", 1, 3, &g, err, sizeof err) == 0);
        for (j = 0; j < g.size; j++) {
            double want = (double)init.param[i].t->data[j] - 0.5 * g.data[j];
            bad += !(fabs(tr.model.param[i].t->data[j] - want) <= 1e-6 + 1e-4 * fabs(want));
        }
        tensor_free(&g);
    }
    CHECK_INT(bad, 0);
    trainer_free(&tr);
    tmodel_free(&init);
    train_task_free(&task);
    fixture_free(&fx);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_fixtures(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char *names[64];
    size_t n = 0, i;
    CHECK(d != NULL);
    if (!d)
        return;
    while ((e = readdir(d)) != NULL && n < 64)
        if (strstr(e->d_name, ".json"))
            names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    CHECK(n >= 29); /* 24 on: a learned pos_embedding */
    printf("gradients against PyTorch (%zu fixtures):\n", n);
    for (i = 0; i < n; i++)
        test_fixture_grads(dir, names[i]);
    for (i = 0; i < n; i++) {
        for (int k = 0; k < 2; k++) {
            const char *key = k ? "sgd" : "adam";
            test_fixture_steps(dir, names[i], key, 1, 1);
            test_fixture_steps(dir, names[i], key, 1, 0);
            test_fixture_steps(dir, names[i], key, 2, 0);
        }
        test_fixture_sgd(dir, names[i]);
    }
    for (i = 0; i < n; i++)
        free(names[i]);
}

/* ---- finite differences ------------------------------------------------- */

static double batch_loss(tmodel *m, tcache *c, const int *tok, const long *lens,
                         const int *tgt, size_t B, size_t T, const mha_dropout *drop)
{
    char err[128];
    size_t count;
    double l;
    if (tmodel_forward(m, c, tok, lens, B, T, drop, err, sizeof err))
        return NAN;
    l = tmodel_loss(c, m, tgt, &count, NULL);
    return l / (double)count;
}

/* Which ReLU inputs of every block are positive after a forward pass,
 * into on (L·B·T·H): where the pattern differs between w − h and w + h a
 * kink lies between them and the central difference is no derivative. */
static void relu_pattern(unsigned char *on, const tcache *c, const tmodel *m)
{
    const size_t n = c->B * c->T * m->cfg.ffn;
    for (size_t l = 0; l < m->cfg.layers; l++)
        for (size_t i = 0; i < n; i++)
            on[l * n + i] = c->blk[l].H[i] > 0.0f;
}

/* Central differences (L(w + h) − L(w − h)) / 2h, the loss in double, on
 * every parameter of a small model with biases, AddNorm, valid_lens and
 * dropout (whose mask is fixed by its seed): a witness independent of
 * PyTorch. layers, ffn: a stack of that many blocks (causal). */
static void test_finite_differences(int dropout, size_t layers, size_t ffn, int learned)
{
    /* learned: a pos_embedding of max_len 6 instead of P (its row 5 unused) */
    tmodel_config cfg = {6, 6, 8, 2, !learned, 1, 1, layers > 1, dropout ? 0.3 : 0.0, layers,
                         ffn, learned, learned ? 6 : 0, 0, SCORE_DOT};
    const size_t B = 2, T = 5;
    const int tok[10] = {1, 2, 3, 4, 5, 5, 4, 3, 0, 0};
    const int tgt[10] = {2, -1, 4, 1, 3, 1, 2, 5, -1, -1};
    const long lens[2] = {5, 3};
    mha_dropout drop = {cfg.dropout, 42};
    const float h = ffn ? 2e-3f : 1e-2f; /* smaller with ReLUs: fewer kinks within ±h */
    unsigned char *on_p = calloc(layers * B * T * (ffn ? ffn : 1), 1);
    unsigned char *on_m = calloc(layers * B * T * (ffn ? ffn : 1), 1);
    size_t kinks = 0;
    char err[128];
    tmodel m;
    tcache c;
    double *grads, worst = 0.0;
    size_t i, j, bad = 0, count = 7;
    CHECK(tmodel_alloc(&m, &cfg, err, sizeof err) == 0);
    tmodel_init(&m, 7);
    /* LayerNorms away from the identity, as after training */
    for (size_t l = 0; l < m.cfg.layers; l++)
        for (i = 0; i < 8; i++) {
            m.blk[l].ln1_weight.data[i] = 0.7f + 0.1f * (float)i - 0.05f * (float)l;
            m.blk[l].ln1_bias.data[i] = 0.05f * (float)i - 0.2f + 0.1f * (float)l;
            if (ffn) {
                m.blk[l].ln2_weight.data[i] = 1.3f - 0.07f * (float)i;
                m.blk[l].ln2_bias.data[i] = 0.1f - 0.03f * (float)i;
            }
        }
    CHECK(tcache_alloc(&c, &m, B, T, err, sizeof err) == 0);
    grads = calloc(m.total, sizeof *grads);
    batch_loss(&m, &c, tok, lens, tgt, B, T, &drop);
    CHECK(tmodel_backward(grads, &c, &m, tok, lens, tgt, 1.0 / (double)count, &drop, err,
                          sizeof err) == 0);
    /* the fast path with the same dropout mask gives the same gradients */
    {
        tfast_cache fc;
        tfast_weights fw;
        float *gf = calloc(m.total, sizeof *gf);
        size_t apart = 0;
        CHECK(tfast_cache_alloc(&fc, &m, B, T) == 0);
        CHECK(tfast_weights_alloc(&fw, &m) == 0);
        tfast_weights_update(&fw, &m);
        tfast_step(gf, &fc, &m, &fw, tok, lens, tgt, B, T, 1.0 / (double)count, &drop, NULL,
                   NULL);
        for (j = 0; j < m.total; j++)
            apart += !(fabs(gf[j] - grads[j]) <= 1e-6 + 1e-4 * fabs(grads[j]));
        CHECK_INT(apart, 0);
        tfast_weights_free(&fw);
        tfast_cache_free(&fc);
        free(gf);
    }
    for (i = 0; i < m.nparams; i++) {
        tensor *t = m.param[i].t;
        for (j = 0; j < t->size; j++) {
            float w = t->data[j];
            double lp, lm, fd, an = grads[m.param[i].offset + j], diff;
            t->data[j] = w + h;
            lp = batch_loss(&m, &c, tok, lens, tgt, B, T, &drop);
            relu_pattern(on_p, &c, &m);
            t->data[j] = w - h;
            lm = batch_loss(&m, &c, tok, lens, tgt, B, T, &drop);
            relu_pattern(on_m, &c, &m);
            t->data[j] = w;
            if (ffn && memcmp(on_p, on_m, layers * B * T * ffn) != 0) {
                kinks++; /* a ReLU turned on or off between w − h and w + h */
                continue;
            }
            /* the step actually taken in float32 */
            fd = (lp - lm) / ((double)(w + h) - (double)(w - h));
            diff = fabs(fd - an);
            if (diff > worst)
                worst = diff;
            if (!(diff <= 2e-4 + 1e-2 * fabs(an))) {
                if (bad++ < 5)
                    fprintf(stderr, "finite differences: d %s[%zu] = %.7g, (L(+h) − L(−h))/2h = "
                            "%.7g\n", m.param[i].name, j, an, fd);
            }
        }
    }
    check_count++;
    if (bad)
        check_failed++;
    CHECK(kinks * 10 < m.total); /* most parameters are checked */
    printf("finite differences%s, %zu layer%s%s%s: %zu parameters (%zu across a ReLU's kink "
           "skipped), worst |analytic − numeric| %.2g\n", dropout ? " (dropout 0.3)" : "",
           m.cfg.layers, m.cfg.layers == 1 ? "" : "s", ffn ? " with FFN" : "",
           learned ? ", learned P" : "", m.total, kinks,
           worst);
    free(on_p);
    free(on_m);
    free(grads);
    tcache_free(&c);
    tmodel_free(&m);
}


/* ---- --data files -------------------------------------------------------- */

/* Parse text as --data named "data.json": 0 or -1 with the message in err. */
static int data_from(train_task *task, const char *text, const char *const *vocab, size_t V,
                     const char *const *classes, size_t C, char *err, size_t errlen)
{
    cJSON *root = cJSON_Parse(text);
    int rc;
    if (!root) {
        snprintf(err, errlen, "(test JSON does not parse)");
        memset(task, 0, sizeof *task);
        return -1;
    }
    rc = train_data_from_json(task, root, "data.json", vocab, V, classes, C, err, errlen);
    cJSON_Delete(root);
    return rc;
}

static void check_error(const char *text, const char *want)
{
    train_task task;
    char err[512] = "";
    check_count++;
    if (data_from(&task, text, NULL, 0, NULL, 0, err, sizeof err) == 0 || strcmp(err, want) != 0) {
        check_failed++;
        fprintf(stderr, "data %s\n  error: %s\n  want:  %s\n", text, err, want);
    }
    train_task_free(&task);
}

static void test_data(void)
{
    train_task t;
    char err[512];
    int i;

    /* token targets, padded, null = no target; vocabulary <pad>, then
     * sequences, then targets, in order of first appearance */
    CHECK(data_from(&t, "{\"sequences\": [[\"3\", \"1\", \"4\"], [\"1\", \"5\"]],"
                        " \"targets\": [[\"4\", \"1\", \"9\"], [null, \"1\"]]}",
                    NULL, 0, NULL, 0, err, sizeof err) == 0);
    {
        const char *vocab[] = {"<pad>", "3", "1", "4", "5", "9"};
        const int tok[] = {1, 2, 3, 2, 4, 0}, tgt[] = {3, 2, 5, -1, 2, -1};
        CHECK_INT(t.V, 6);
        for (i = 0; i < 6 && (size_t)i < t.V; i++)
            CHECK(strcmp(t.vocab[i], vocab[i]) == 0);
        CHECK(t.classes == t.vocab);
        CHECK_INT(t.label_at, -1);
        CHECK_INT(t.train.n, 2);
        CHECK_INT(t.train.T, 3);
        for (i = 0; i < 6; i++) {
            CHECK_INT(t.train.tokens[i], tok[i]);
            CHECK_INT(t.train.targets[i], tgt[i]);
        }
        CHECK_INT(t.train.lens[0], 3);
        CHECK_INT(t.train.lens[1], 2);
        CHECK_INT(t.heldout.n, 0);
    }
    train_task_free(&t);

    /* sequence labels: the target at the first label_at token; classes in
     * order of first appearance; the held-out part */
    CHECK(data_from(&t, "{\"sequences\": [[\"a\", \"x\", \"x\"], [\"b\", \"x\"]],"
                        " \"labels\": [\"p\", \"q\"], \"label_at\": \"x\","
                        " \"heldout\": {\"sequences\": [[\"x\", \"b\"]], \"labels\": [\"q\"]}}",
                    NULL, 0, NULL, 0, err, sizeof err) == 0);
    CHECK_INT(t.V, 4);
    CHECK_INT(t.C, 2);
    CHECK(t.C == 2 && strcmp(t.classes[0], "p") == 0 && strcmp(t.classes[1], "q") == 0);
    CHECK_INT(t.label_at, 2);
    {
        const int tgt[] = {-1, 0, -1, -1, 1, -1};
        for (i = 0; i < 6; i++)
            CHECK_INT(t.train.targets[i], tgt[i]);
        CHECK_INT(t.heldout.n, 1);
        CHECK_INT(t.heldout.targets[0], 1);
        CHECK_INT(t.heldout.targets[1], -1);
    }
    train_task_free(&t);

    /* a saved model's vocabulary: an unknown token is an error */
    {
        const char *vocab[] = {"<pad>", "a", "b"};
        CHECK(data_from(&t, "{\"sequences\": [[\"a\", \"b\"]], \"targets\": [[\"b\", \"a\"]]}",
                        vocab, 3, vocab, 3, err, sizeof err) == 0);
        CHECK_INT(t.V, 3);
        CHECK_INT(t.train.tokens[0], 1);
        train_task_free(&t);
        CHECK(data_from(&t, "{\"sequences\": [[\"a\", \"c\"]], \"targets\": [[\"b\", \"a\"]]}",
                        vocab, 3, vocab, 3, err, sizeof err) == -1);
        CHECK(strcmp(err, "data.json: $.sequences[0][1]: \"c\" is not in the model's "
                          "vocabulary") == 0);
        train_task_free(&t);
    }

    /* every error: one line naming the JSON path */
    check_error("{\"sequences\": [[\"a\", \"b\"], [\"a\", \"b\", \"c\", \"d\", \"e\"]],"
                " \"targets\": [[\"a\", \"b\"], [\"a\", \"b\", \"c\", \"d\"]]}",
                "data.json: $.targets[1]: expected 5 tokens, got 4");
    check_error("{\"sequences\": [[\"苹果\", \"甜\"], [\"很\", \"甜\"]], \"labels\": [\"f\", \"f\"],"
                " \"label_at\": \"苹果\"}",
                "data.json: $.sequences[1]: no \"苹果\" (label_at) in the sentence");
    check_error("{\"sequences\": [], \"targets\": []}",
                "data.json: $.sequences: empty: expected at least one sequence");
    check_error("{\"sequences\": [[\"a\", 3]], \"targets\": [[\"a\", \"a\"]]}",
                "data.json: $.sequences[0][1]: expected a token (a string), got a number");
    check_error("{\"sequences\": [[]], \"targets\": [[]]}",
                "data.json: $.sequences[0]: empty: expected at least one token");
    check_error("{\"sequences\": [[\"a\"]]}", "data.json: $: missing \"targets\"");
    check_error("{\"sequences\": [[\"a\"]], \"labels\": [\"x\"]}",
                "data.json: $: has \"labels\" but no \"label_at\" (the token a label is read at)");
    check_error("{\"sequences\": [[\"a\"]], \"targets\": [[\"a\"]], \"label\": 1}",
                "data.json: $.label: unknown key (known: sequences, targets, labels, label_at, "
                "heldout)");
    check_error("{\"sequences\": [[\"<pad>\"]], \"targets\": [[\"a\"]]}",
                "data.json: $.sequences[0][0]: \"<pad>\" is reserved for padding");
    check_error("{\"sequences\": [[\"a\"]], \"targets\": [[1]]}",
                "data.json: $.targets[0][0]: expected a token (a string) or null, got a number");
    check_error("{\"sequences\": [[\"a\"]], \"labels\": [\"x\", \"y\"], \"label_at\": \"a\"}",
                "data.json: $.labels: expected 1 labels (one per sequence), got 2");
    check_error("{\"sequences\": [[\"a\"]], \"targets\": [[\"a\"]],"
                " \"heldout\": {\"sequences\": [[\"a\", \"b\"]], \"targets\": [[\"a\"]]}}",
                "data.json: $.heldout.targets[0]: expected 2 tokens, got 1");
    check_error("[1]", "data.json: $: expected an object, got an array");

    /* tasks by name */
    CHECK(train_task_by_name(&t, "reverse", 6, 5, 1, NULL, 0, NULL, 0, err, sizeof err) == 0);
    CHECK_INT(t.V, 6);
    CHECK_INT(t.heldout.n, TRAIN_BUILTIN_HELDOUT);
    CHECK_INT(t.heldout.T, 6);
    /* reverse: the target at i is the token at n−1−i */
    for (i = 0; i < 6; i++)
        CHECK_INT(t.heldout.targets[i], t.heldout.tokens[5 - i]);
    {
        const char *v[] = {"<pad>", "0", "1", "2", "3", "4"}, *w[] = {"<pad>", "0", "1"};
        train_task u;
        CHECK(train_task_by_name(&u, "reverse", 6, 5, 1, v, 6, v, 6, err, sizeof err) == 0);
        train_task_free(&u);
        CHECK(train_task_by_name(&u, "reverse", 6, 5, 1, w, 3, w, 3, err, sizeof err) == -1);
        CHECK(strstr(err, "vocabulary") != NULL);
    }
    train_task_free(&t);
    CHECK(train_task_by_name(&t, "previous", 5, 10, 1, NULL, 0, NULL, 0, err, sizeof err) == 0);
    /* previous: nothing at 0, the token at i−1 after */
    CHECK_INT(t.eval.targets[0], -1);
    for (i = 1; i < 5; i++)
        CHECK_INT(t.eval.targets[i], t.eval.tokens[i - 1]);
    train_task_free(&t);
    CHECK(train_task_by_name(&t, "sort", 5, 10, 1, NULL, 0, NULL, 0, err, sizeof err) == -1);
    CHECK(strcmp(err, "unknown task \"sort\" (known: reverse, previous, apple, induction)") == 0);

    /* a file that is not there */
    CHECK(train_data_load(&t, "/nonexistent/data.json", NULL, 0, NULL, 0, err, sizeof err) == -1);
    CHECK(strncmp(err, "/nonexistent/data.json: ", 24) == 0);
}

/* The 苹果 corpus: the compiled-in copy is data/apple_train.json; at
 * least 60 training sentences of both senses; held-out sentences never in
 * training, every held-out word seen in training; every sentence has a
 * cue word. */
static void test_apple_corpus(const char *path)
{
    train_task a, f;
    char err[512];
    long cues[64];
    size_t ncues, i, j, k, V_train = 0, senses[2] = {0, 0};
    CHECK(train_data_apple(&a, NULL, 0, NULL, 0, err, sizeof err) == 0);
    CHECK(train_data_load(&f, path, NULL, 0, NULL, 0, err, sizeof err) == 0);
    CHECK_INT(a.kind, TASK_APPLE);
    CHECK_INT(a.V, f.V);
    CHECK_INT(a.train.n, f.train.n);
    CHECK_INT(a.heldout.n, f.heldout.n);
    CHECK(a.train.n * a.train.T == f.train.n * f.train.T &&
          memcmp(a.train.tokens, f.train.tokens, a.train.n * a.train.T * sizeof(int)) == 0);
    CHECK(a.train.n >= 60);
    CHECK(a.heldout.n >= 20);
    CHECK(a.C == 2 && strcmp(a.classes[0], "fruit") == 0 && strcmp(a.classes[1], "company") == 0);
    CHECK(a.label_at >= 0 && strcmp(a.vocab[a.label_at], "苹果") == 0);
    for (i = 0; i < a.train.n * a.train.T; i++) {
        if ((size_t)a.train.tokens[i] + 1 > V_train)
            V_train = (size_t)a.train.tokens[i] + 1;
        if (a.train.targets[i] >= 0)
            senses[a.train.targets[i]]++;
    }
    CHECK(senses[0] >= 30 && senses[1] >= 30);
    train_data_cue_ids(&a, cues, &ncues);
    for (i = 0; train_apple_cues[i]; i++)
        ;
    CHECK_INT(ncues, i); /* every cue word is in the corpus */
    for (i = 0; i < a.heldout.n; i++) {
        const int *h = a.heldout.tokens + i * a.heldout.T;
        int has_cue = 0;
        for (k = 0; k < (size_t)a.heldout.lens[i]; k++) {
            /* every held-out word was seen in training (ids in order of appearance) */
            CHECK((size_t)h[k] < V_train);
            for (j = 0; j < ncues; j++)
                has_cue |= h[k] == cues[j];
        }
        CHECK(has_cue);
        for (j = 0; j < a.train.n; j++) {
            const int *tr = a.train.tokens + j * a.train.T;
            int same = a.train.lens[j] == a.heldout.lens[i];
            for (k = 0; same && k < (size_t)a.heldout.lens[i]; k++)
                same = tr[k] == h[k];
            check_count++;
            if (same) {
                check_failed++;
                fprintf(stderr, "held-out sentence %zu is training sentence %zu\n", i, j);
            }
        }
    }
    /* no word but the cues tells the sense in training: every other word
     * occurs in fruit and in company sentences, every cue word in one
     * sense only (else a head could read 一个 or 新的 instead of 吃 or 发布) */
    {
        unsigned char *senses_of = calloc(a.V, 1); /* (V,) bit 0 fruit, bit 1 company */
        CHECK(senses_of != NULL);
        for (i = 0; senses_of && i < a.train.n; i++) {
            const int *tok = a.train.tokens + i * a.train.T;
            const int *tg = a.train.targets + i * a.train.T;
            int sense = -1;
            for (k = 0; k < (size_t)a.train.lens[i]; k++)
                if (tg[k] >= 0)
                    sense = tg[k];
            CHECK(sense == 0 || sense == 1);
            for (k = 0; sense >= 0 && k < (size_t)a.train.lens[i]; k++)
                senses_of[tok[k]] |= (unsigned char)(1u << sense);
        }
        for (i = 1; senses_of && i < V_train; i++) {
            int is_cue = 0, ok;
            for (j = 0; j < ncues; j++)
                is_cue |= (long)i == cues[j];
            if ((long)i == a.label_at)
                ok = senses_of[i] == 3;
            else
                ok = is_cue ? senses_of[i] == 1 || senses_of[i] == 2 : senses_of[i] == 3;
            check_count++;
            if (!ok) {
                check_failed++;
                fprintf(stderr, "%s word \"%s\" occurs in %s in training\n",
                        is_cue ? "cue" : "non-cue", a.vocab[i],
                        senses_of[i] == 3 ? "both senses" : "one sense only");
            }
        }
        free(senses_of);
    }
    train_task_free(&a);
    train_task_free(&f);
}

/* ---- the model file -------------------------------------------------------- */

static void test_model_file(void)
{
    train_task task;
    train_opts o;
    trainer tr;
    tmodel back;
    char err[512], path[] = "/tmp/attn_test_train_XXXXXX";
    char **vocab, **classes;
    size_t V, C, i;
    int fd = mkstemp(path), s;
    CHECK(fd >= 0);
    if (fd >= 0)
        close(fd);
    CHECK(train_data_apple(&task, NULL, 0, NULL, 0, err, sizeof err) == 0);
    train_opts_default(&o, TASK_APPLE);
    o.bias = 1;
    o.addnorm = 1;
    o.seed = 3;
    CHECK(trainer_init(&tr, &task, &o, NULL, err, sizeof err) == 0);
    for (s = 0; s < 3; s++)
        CHECK(trainer_step(&tr, NULL, err, sizeof err) == 0);
    CHECK(model_file_save(path, &tr.model, (const char *const *)task.vocab,
                          (const char *const *)task.classes, err, sizeof err) == 0);

    /* read back: every parameter bit for bit */
    CHECK(model_file_load(path, &back, &vocab, &V, &classes, &C, 0, 0.0, err, sizeof err) == 0);
    CHECK_INT(V, task.V);
    CHECK_INT(C, task.C);
    CHECK_INT(back.nparams, tr.model.nparams);
    CHECK_INT(back.nparams, 13);
    for (i = 0; i < back.nparams && i < tr.model.nparams; i++) {
        CHECK(strcmp(back.param[i].name, tr.model.param[i].name) == 0);
        CHECK(memcmp(back.param[i].t->data, tr.model.param[i].t->data,
                     back.param[i].t->size * sizeof(float)) == 0);
    }
    for (i = 0; i < V && i < task.V; i++)
        CHECK(strcmp(vocab[i], task.vocab[i]) == 0);
    CHECK(back.cfg.posenc == 1 && back.cfg.addnorm == 1 && back.cfg.bias == 1);
    /* --load: the loaded model continues where it stopped */
    {
        trainer cont;
        train_stats st;
        CHECK(trainer_init(&cont, &task, &o, &back, err, sizeof err) == 0);
        CHECK(memcmp(cont.model.head_weight.data, tr.model.head_weight.data,
                     tr.model.head_weight.size * sizeof(float)) == 0);
        CHECK(trainer_step(&cont, &st, err, sizeof err) == 0);
        CHECK(isfinite(st.loss));
        trainer_free(&cont);
        /* options that disagree with the model are refused */
        o.posenc = 0;
        CHECK(trainer_init(&cont, &task, &o, &back, err, sizeof err) == -1);
        CHECK(strstr(err, "does not fit the options") != NULL);
        o.posenc = 1;
    }

    /* its attention part is what multihead/selfattn --input read: the
     * existing loader (problem.c) takes the W_* entries as they are */
    {
        char *text = check_read_file(path, NULL);
        cJSON *root = text ? cJSON_Parse(text) : NULL, *in = cJSON_CreateObject();
        cJSON *sd = root ? cJSON_GetObjectItemCaseSensitive(root, "state_dict") : NULL, *a;
        cJSON *sd2 = cJSON_CreateObject(), *X = cJSON_CreateArray(), *row;
        problem pr;
        problem_opts po;
        int usage = 0, r, c;
        CHECK(sd != NULL);
        cJSON_ArrayForEach(a, sd) if (strncmp(a->string, "W_", 2) == 0)
            cJSON_AddItemToObject(sd2, a->string, cJSON_Duplicate(a, 1));
        for (r = 0; r < 3; r++) {
            row = cJSON_CreateArray();
            for (c = 0; c < 32; c++)
                cJSON_AddItemToArray(row, cJSON_CreateNumber(0.25 * c - r));
            cJSON_AddItemToArray(X, row);
        }
        cJSON_AddItemToObject(in, "X", X);
        cJSON_AddItemToObject(in, "num_heads",
                              cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(root, "num_heads"), 1));
        cJSON_AddItemToObject(in, "state_dict", sd2);
        memset(&po, 0, sizeof po);
        po.self = 1;
        memset(&pr, 0, sizeof pr);
        CHECK(problem_from_json(&pr, in, "model.json", &po, err, sizeof err, &usage) == 0);
        CHECK_INT(pr.params.num_heads, 4);
        CHECK_INT(pr.params.num_hiddens, 32);
        CHECK(pr.params.W_q.weight.data && memcmp(pr.params.W_q.weight.data,
                                                  tr.model.blk[0].mha.W_q.weight.data,
                                                  32 * 32 * sizeof(float)) == 0);
        CHECK(pr.params.W_o.weight.data && memcmp(pr.params.W_o.weight.data,
                                                  tr.model.blk[0].mha.W_o.weight.data,
                                                  32 * 32 * sizeof(float)) == 0);
        CHECK(pr.params.W_v.bias.data && memcmp(pr.params.W_v.bias.data,
                                                tr.model.blk[0].mha.W_v.bias.data,
                                                32 * sizeof(float)) == 0);
        problem_free(&pr);
        cJSON_Delete(in);
        cJSON_Delete(root);
        free(text);
    }
    tmodel_free(&back);
    for (i = 0; i < V; i++)
        free(vocab[i]);
    free(vocab);
    for (i = 0; i < C; i++)
        free(classes[i]);
    free(classes);

    /* a model whose shapes disagree names the place */
    {
        FILE *f = fopen(path, "w");
        if (f) {
            fputs("{\"command\": \"train\", \"vocab\": [\"<pad>\", \"a\"], \"classes\": [\"a\"], "
                  "\"num_hiddens\": 2, \"num_heads\": 1, \"posenc\": true, \"addnorm\": false, "
                  "\"state_dict\": {\"embedding.weight\": [[1, 2]]}}", f);
            fclose(f);
        }
        CHECK(model_file_load(path, &back, &vocab, &V, &classes, &C, 0, 0.0, err, sizeof err) ==
              -1);
        CHECK(strstr(err, "$.state_dict[\"embedding.weight\"]: expected shape (2, 2), got (1, 2)") !=
              NULL);
        if (!strstr(err, "expected shape (2, 2)"))
            fprintf(stderr, "model error: %s\n", err);
    }
    /* an unwritable place: refused, nothing half-written */
    CHECK(model_file_save("/nonexistent/dir/model.json", &tr.model,
                          (const char *const *)task.vocab, (const char *const *)task.classes, err,
                          sizeof err) == -1);
    remove(path);
    trainer_free(&tr);
    train_task_free(&task);
}


/* ---- stacks: d2l's TransformerEncoder names, the induction task --------- */

/* A model attn saved (FIXTURES/../sub/model.json) against the logits
 * PyTorch computed for it after load_state_dict (logits.json: tokens,
 * valid_lens, logits, missing_keys): within 1e-5 + 1e-4·|torch|. check
 * looks at the loaded model first. */
static void test_saved_logits(const char *fixtures, const char *sub,
                              void (*check_model)(const tmodel *m), const char *what)
{
    char mpath[512], lpath[512], err[512];
    char **vocab = NULL, **classes = NULL;
    size_t V = 0, C = 0, B, T, b, t, k, bad = 0;
    tmodel m;
    tcache c;
    cJSON *root;
    const cJSON *toks, *vl, *logits;
    char *text;
    int *tok;
    long *lens;
    double worst = 0.0;
    snprintf(mpath, sizeof mpath, "%s/../%s/model.json", fixtures, sub);
    snprintf(lpath, sizeof lpath, "%s/../%s/logits.json", fixtures, sub);
    text = check_read_file(lpath, NULL);
    root = text ? cJSON_Parse(text) : NULL;
    free(text);
    CHECK(root != NULL);
    if (!root)
        return;
    CHECK(model_file_load(mpath, &m, &vocab, &V, &classes, &C, 0, 0.0, err, sizeof err) == 0);
    check_model(&m);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "missing_keys")) == 0);
    toks = cJSON_GetObjectItemCaseSensitive(root, "tokens");
    vl = cJSON_GetObjectItemCaseSensitive(root, "valid_lens");
    logits = cJSON_GetObjectItemCaseSensitive(root, "logits");
    B = (size_t)cJSON_GetArraySize(toks);
    T = (size_t)cJSON_GetArraySize(toks->child);
    tok = malloc(B * T * sizeof *tok);
    lens = malloc(B * sizeof *lens);
    for (b = 0; b < B; b++) {
        lens[b] = cJSON_GetArrayItem(vl, (int)b)->valueint;
        for (t = 0; t < T; t++)
            tok[b * T + t] = cJSON_GetArrayItem(cJSON_GetArrayItem(toks, (int)b), (int)t)->valueint;
    }
    CHECK(tcache_alloc(&c, &m, B, T, err, sizeof err) == 0);
    CHECK(tmodel_forward(&m, &c, tok, lens, B, T, NULL, err, sizeof err) == 0);
    for (b = 0; b < B; b++)
        for (t = 0; t < T; t++)
            for (k = 0; k < C; k++) {
                const cJSON *want = cJSON_GetArrayItem(
                    cJSON_GetArrayItem(cJSON_GetArrayItem(logits, (int)b), (int)t), (int)k);
                double d = fabs(c.logits[(b * T + t) * C + k] - want->valuedouble);
                worst = d > worst ? d : worst;
                bad += !(d <= 1e-5 + 1e-4 * fabs(want->valuedouble));
            }
    CHECK_INT(bad, 0);
    printf("%s: logits of %zu × %zu positions within 1e-5 + 1e-4·|torch| (worst %.2g)\n", what,
           B, T, worst);
    free(tok);
    free(lens);
    tcache_free(&c);
    tmodel_free(&m);
    train_strings_free(vocab, V);
    train_strings_free(classes, C);
    cJSON_Delete(root);
}

/* A stack saved by attn train (tests/ref/train_encoder/model.json) loads
 * into d2l's TransformerEncoder with strict=False. */
static void check_stack(const tmodel *m)
{
    CHECK_INT(m->cfg.layers, 2);
    CHECK_INT(m->cfg.ffn, 32);
    CHECK(m->cfg.addnorm == 1 && m->cfg.causal == 0);
    CHECK(tmodel_find((tmodel *)m, "blks.block1.ffn.dense2.bias") != NULL);
    CHECK(tmodel_find((tmodel *)m, "blks.block0.addnorm2.ln.weight") != NULL);
}

/* A learned P saved by attn train (tests/ref/train_learned/model.json)
 * loads into PyTorch's module with strict=True. */
static void check_learned(const tmodel *m)
{
    CHECK(m->cfg.learned == 1 && m->cfg.posenc == 0);
    CHECK_INT(m->cfg.max_len, 8);
    CHECK(strcmp(m->param[0].name, "pos_embedding") == 0);
    CHECK(m->pos_embedding.ndim == 3 && m->pos_embedding.shape[0] == 1 &&
          m->pos_embedding.shape[2] == 16);
}

/* Write text to path. */
static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* A stack's file: d2l's keys, num_layers, ffn_num_hiddens, causal; read
 * back bit for bit; a key missing or extra is refused with its name. */
static void test_stack_file(void)
{
    train_task task;
    train_opts o;
    trainer tr;
    tmodel back;
    char err[512], path[] = "/tmp/attn_test_stack_XXXXXX";
    char **vocab, **classes, *text;
    size_t V, C, i;
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0)
        close(fd);
    CHECK(train_task_builtin(&task, TASK_INDUCTION, 12, 16, 8, 8, 1, err, sizeof err) == 0);
    train_opts_default(&o, TASK_INDUCTION);
    o.ffn = 16;
    o.bias = 1;
    o.hiddens = 8;
    o.heads = 2;
    o.layers = 3;
    o.batch_size = 4;
    CHECK(trainer_init(&tr, &task, &o, NULL, err, sizeof err) == 0);
    CHECK(trainer_step(&tr, NULL, err, sizeof err) == 0);
    CHECK(model_file_save(path, &tr.model, (const char *const *)task.vocab,
                          (const char *const *)task.classes, err, sizeof err) == 0);
    text = check_read_file(path, NULL);
    CHECK(text && strstr(text, "\"num_layers\": 3,\n  \"ffn_num_hiddens\": 16,") != NULL);
    CHECK(text && strstr(text, "\"causal\": true") != NULL);
    CHECK(text && strstr(text, "\"addnorm\"") == NULL);
    CHECK(text && strstr(text, "\"blks.block2.attention.W_o.bias\"") != NULL);
    CHECK(text && strstr(text, "\"blks.block2.addnorm2.ln.bias\"") != NULL);
    CHECK(model_file_load(path, &back, &vocab, &V, &classes, &C, 0, 0.0, err, sizeof err) == 0);
    CHECK_INT(back.cfg.layers, 3);
    CHECK_INT(back.cfg.ffn, 16);
    CHECK(back.cfg.causal == 1 && back.cfg.bias == 1 && back.cfg.addnorm == 1);
    CHECK_INT(back.nparams, tr.model.nparams);
    CHECK_INT(back.nparams, 3 + 3 * 16);
    for (i = 0; i < back.nparams && i < tr.model.nparams; i++) {
        CHECK(strcmp(back.param[i].name, tr.model.param[i].name) == 0);
        CHECK(memcmp(back.param[i].t->data, tr.model.param[i].t->data,
                     back.param[i].t->size * sizeof(float)) == 0);
    }
    tmodel_free(&back);
    train_strings_free(vocab, V);
    train_strings_free(classes, C);
    /* a block's key missing: named */
    if (text) {
        char *cut = strstr(text, "\"blks.block1.ffn.dense1.bias\"");
        char *mod = malloc(strlen(text) + 1);
        strcpy(mod, text);
        mod[cut - text + 23] = 'X'; /* "blks.block1.ffn.dense1X" */
        write_text(path, mod);
        CHECK(model_file_load(path, &back, &vocab, &V, &classes, &C, 0, 0.0, err, sizeof err) ==
              -1);
        CHECK(strstr(err, "$.state_dict[\"blks.block1.ffn.dense1Xbias\"]: not a parameter of "
                          "this model") != NULL);
        /* more layers than the file has */
        strcpy(mod, text);
        cut = strstr(mod, "\"num_layers\": 3");
        cut[14] = '4';
        write_text(path, mod);
        CHECK(model_file_load(path, &back, &vocab, &V, &classes, &C, 0, 0.0, err, sizeof err) ==
              -1);
        CHECK(strstr(err, "$.state_dict: missing \"blks.block3.attention.W_q.weight\"") != NULL);
        /* more than 12 */
        cut[13] = '1';
        cut[14] = '3';
        write_text(path, mod);
        CHECK(model_file_load(path, &back, &vocab, &V, &classes, &C, 0, 0.0, err, sizeof err) ==
              -1);
        CHECK(strstr(err, "$.num_layers") != NULL);
        free(mod);
    }
    free(text);
    remove(path);
    trainer_free(&tr);
    train_task_free(&task);
}

/* The induction sequences: distinct letters, a filler, A (n/4 … n/2), A
 * again; the target at each position of the second copy but its last is
 * the next token. */
static void test_induction_task(void)
{
    train_task task;
    char err[256];
    size_t i, t, lo = 99, hi = 0;
    CHECK(train_task_builtin(&task, TASK_INDUCTION, 20, 32, 200, 10, 4, err, sizeof err) == 0);
    CHECK_INT(task.V, 33);
    CHECK(strcmp(task.vocab[1], "a") == 0 && strcmp(task.vocab[26], "z") == 0 &&
          strcmp(task.vocab[27], "A") == 0 && strcmp(task.vocab[32], "F") == 0);
    for (i = 0; i < task.heldout.n; i++) {
        const int *tok = task.heldout.tokens + i * 20, *tgt = task.heldout.targets + i * 20;
        size_t s, f, u;
        /* the segment's length: the second copy starts at the first repeat */
        for (t = 1; t < 20; t++) {
            for (u = 0; u < t && tok[u] != tok[t]; u++)
                ;
            if (u < t)
                break;
        }
        s = 20 - t;
        f = t - s;
        lo = s < lo ? s : lo;
        hi = s > hi ? s : hi;
        for (t = 0; t < f + s; t++)
            for (u = 0; u < t; u++)
                CHECK(tok[t] != tok[u]); /* distinct */
        for (t = 0; t < s; t++)
            CHECK_INT(tok[f + s + t], tok[f + t]); /* A again */
        for (t = 0; t < 20; t++)
            CHECK_INT(tgt[t], t >= f + s && t < 19 ? tok[t + 1] : -1);
    }
    CHECK_INT(lo, 5);
    CHECK_INT(hi, 10);
    train_task_free(&task);
    /* too short, too few tokens */
    CHECK(train_task_builtin(&task, TASK_INDUCTION, 7, 32, 1, 1, 0, err, sizeof err) == -1);
    CHECK(train_task_builtin(&task, TASK_INDUCTION, 20, 19, 1, 1, 0, err, sizeof err) == -1);
    {
        /* where the loss fell fastest: a cliff from 3 to 1 at step 61 */
        double loss[100];
        long from, to;
        for (i = 0; i < 100; i++)
            loss[i] = i < 60 ? 3.0 : 1.0;
        CHECK(train_fastest_fall(loss, 100, &from, &to) == 0);
        CHECK_INT(from, 59);
        CHECK_INT(to, 63);
        CHECK(train_fastest_fall(loss, 1, &from, &to) == -1);
    }
}

/* Train induction with L layers (seed), then: held-out accuracy, and the
 * scores of trainer_evaluate_scores against the formula on the weights
 * trainer_attention gives for each held-out sequence. Returns the best
 * induction score of a layer above the first (or of the only one). */
static double train_induction(size_t layers, unsigned long long seed, double *acc)
{
    train_task task;
    train_opts o;
    trainer tr;
    train_stats st;
    char err[256];
    double prev[2 * 4], ind[2 * 4], best = 0.0, want_p[2 * 4] = {0}, want_i[2 * 4] = {0};
    size_t n = 0, L, i, h, l;
    long s;
    float *w;
    CHECK(train_task_builtin(&task, TASK_INDUCTION, 20, 32, 64, 8, seed, err, sizeof err) == 0);
    train_opts_default(&o, TASK_INDUCTION);
    o.layers = layers;
    o.seed = seed;
    CHECK(trainer_init(&tr, &task, &o, NULL, err, sizeof err) == 0);
    for (s = 0; s < o.steps; s++)
        CHECK(trainer_step(&tr, NULL, err, sizeof err) == 0);
    L = tr.model.cfg.layers;
    CHECK(trainer_evaluate_scores(&tr, &task.heldout, &st, prev, ind, err, sizeof err) == 0);
    *acc = st.accuracy;
    w = malloc(L * 4 * 20 * 20 * sizeof *w);
    for (i = 0; i < task.heldout.n; i++) {
        const int *tok = task.heldout.tokens + i * 20, *tgt = task.heldout.targets + i * 20;
        CHECK(trainer_attention(&tr, tok, 20, w, err, sizeof err) == 0);
        for (size_t q = 0; q < 20; q++) {
            size_t j;
            if (tgt[q] < 0)
                continue;
            for (j = 0; tok[j] != tok[q]; j++)
                ;
            for (l = 0; l < L; l++)
                for (h = 0; h < 4; h++) {
                    const float *row = w + ((l * 4 + h) * 20 + q) * 20;
                    want_p[l * 4 + h] += row[q - 1];
                    want_i[l * 4 + h] += row[j + 1];
                }
            n++;
        }
    }
    for (l = 0; l < L; l++)
        for (h = 0; h < 4; h++) {
            CHECK_NEAR(prev[l * 4 + h], want_p[l * 4 + h] / (double)n, 1e-5, 1e-4);
            CHECK_NEAR(ind[l * 4 + h], want_i[l * 4 + h] / (double)n, 1e-5, 1e-4);
            if ((L == 1 || l >= 1) && ind[l * 4 + h] > best)
                best = ind[l * 4 + h];
        }
    free(w);
    trainer_free(&tr);
    train_task_free(&task);
    return best;
}

/* Two layers learn induction, one cannot (fixed seeds). */
static void test_induction_learns(void)
{
    double acc, best;
    best = train_induction(2, 0, &acc);
    printf("induction, 2 layers, seed 0: held-out accuracy %.4f, best layer-2 induction score "
           "%.2f\n", acc, best);
    CHECK(acc >= 0.95);
    CHECK(best >= 0.5);
    best = train_induction(1, 0, &acc);
    printf("induction, 1 layer, seed 0: held-out accuracy %.4f, best induction score %.2f\n", acc,
           best);
    CHECK(acc <= 0.5);
}

/* ---- determinism ------------------------------------------------------------ */

/* Steps of a task with 1 and 2 threads: bit-identical losses and weights. */
static void test_determinism(double dropout)
{
    train_task task;
    train_opts o;
    trainer a, b;
    char err[256];
    int s, same_loss = 1, same_weights = 1;
    size_t i;
    CHECK(train_task_builtin(&task, TASK_REVERSE, 8, 10, 64, 64, 11, err, sizeof err) == 0);
    train_opts_default(&o, TASK_REVERSE);
    o.seed = 11;
    o.dropout = dropout;
    o.threads = 1;
    CHECK(trainer_init(&a, &task, &o, NULL, err, sizeof err) == 0);
    o.threads = 2;
    CHECK(trainer_init(&b, &task, &o, NULL, err, sizeof err) == 0);
    for (s = 0; s < 20; s++) {
        train_stats sa, sb;
        CHECK(trainer_step(&a, &sa, err, sizeof err) == 0);
        CHECK(trainer_step(&b, &sb, err, sizeof err) == 0);
        same_loss &= memcmp(&sa.loss, &sb.loss, sizeof sa.loss) == 0;
    }
    for (i = 0; i < a.model.nparams; i++)
        same_weights &= memcmp(a.model.param[i].t->data, b.model.param[i].t->data,
                               a.model.param[i].t->size * sizeof(float)) == 0;
    CHECK(same_loss);
    CHECK(same_weights);
    /* and a different seed gives different weights */
    trainer_free(&b);
    o.seed = 12;
    CHECK(trainer_init(&b, &task, &o, NULL, err, sizeof err) == 0);
    CHECK(memcmp(a.model.embedding.data, b.model.embedding.data, 4 * sizeof(float)) != 0);
    printf("determinism (dropout %.1f): 20 steps with 1 and 2 threads bit-identical: %s\n",
           dropout, same_loss && same_weights ? "yes" : "NO");
    trainer_free(&a);
    trainer_free(&b);
    train_task_free(&task);
}

/* A loss that stops being finite stops training, naming the step; a
 * learning rate that is not positive is refused. */
static void test_divergence(void)
{
    train_task task;
    train_opts o;
    trainer tr;
    char err[256] = "";
    int s, rc = 0;
    CHECK(train_task_builtin(&task, TASK_REVERSE, 8, 10, 8, 8, 1, err, sizeof err) == 0);
    train_opts_default(&o, TASK_REVERSE);
    o.optimizer = OPTIM_SGD;
    o.lr = 1e30;
    CHECK(trainer_init(&tr, &task, &o, NULL, err, sizeof err) == 0);
    for (s = 0; s < 20 && rc == 0; s++)
        rc = trainer_step(&tr, NULL, err, sizeof err);
    CHECK_INT(rc, -1);
    CHECK(strncmp(err, "step ", 5) == 0 && strstr(err, "try a smaller --lr") != NULL);
    printf("divergence: %s\n", err);
    trainer_free(&tr);
    o.lr = 0.0;
    CHECK(trainer_init(&tr, &task, &o, NULL, err, sizeof err) == -1);
    CHECK(strstr(err, "learning rate") != NULL);
    train_task_free(&task);
}

/* ---- it learns ---------------------------------------------------------------- */

/* How many of head h's rows q (from q0) put their largest weight on key
 * key_of(q); weights (NH, n, n). */
static size_t rows_on(const float *w, size_t h, size_t n, size_t q0, int reverse)
{
    size_t q, k, hits = 0;
    for (q = q0; q < n; q++) {
        const float *row = w + (h * n + q) * n;
        size_t arg = 0;
        for (k = 1; k < n; k++)
            if (row[k] > row[arg])
                arg = k;
        hits += arg == (reverse ? n - 1 - q : q - 1);
    }
    return hits;
}

static double train_builtin(train_kind kind, int posenc, long steps, unsigned long long seed,
                            size_t *best_head_rows, float *weights)
{
    train_task task;
    train_opts o;
    trainer tr;
    train_final f;
    char err[256];
    long s;
    const int probe[8] = {3, 8, 1, 5, 10, 2, 7, 4};
    size_t h;
    CHECK(train_task_builtin(&task, kind, 8, 10, 500, 100, seed, err, sizeof err) == 0);
    train_opts_default(&o, kind);
    o.posenc = posenc;
    o.seed = seed;
    CHECK(trainer_init(&tr, &task, &o, NULL, err, sizeof err) == 0);
    for (s = 0; s < steps; s++)
        if (trainer_step(&tr, NULL, err, sizeof err)) {
            CHECK(0);
            break;
        }
    CHECK(trainer_final(&tr, &f, err, sizeof err) == 0);
    CHECK(f.has_heldout);
    CHECK(trainer_attention(&tr, probe, 8, weights, err, sizeof err) == 0);
    *best_head_rows = 0;
    for (h = 0; h < 4; h++) {
        size_t r = rows_on(weights, h, 8, kind == TASK_REVERSE ? 0 : 1, kind == TASK_REVERSE);
        if (r > *best_head_rows)
            *best_head_rows = r;
    }
    trainer_free(&tr);
    train_task_free(&task);
    return f.heldout.accuracy;
}

static void test_learns(void)
{
    float w[4 * 8 * 8];
    size_t rows;
    double acc;
    train_opts o;

    train_opts_default(&o, TASK_REVERSE);
    acc = train_builtin(TASK_REVERSE, 1, o.steps, 1, &rows, w);
    printf("reverse with P, %ld steps: held-out accuracy %.4f; best head's argmax on the "
           "anti-diagonal in %zu of 8 rows\n", o.steps, acc, rows);
    CHECK(acc >= 0.99);
    CHECK_INT(rows, 8);

    acc = train_builtin(TASK_REVERSE, 0, o.steps, 1, &rows, w);
    printf("reverse without P, %ld steps: held-out accuracy %.4f\n", o.steps, acc);
    CHECK(acc < 0.5);

    train_opts_default(&o, TASK_PREVIOUS);
    acc = train_builtin(TASK_PREVIOUS, 1, o.steps, 2, &rows, w);
    printf("previous, %ld steps: held-out accuracy %.4f; best head's argmax on the "
           "sub-diagonal in %zu of 7 rows\n", o.steps, acc, rows);
    CHECK(acc >= 0.99);
    CHECK_INT(rows, 7);

    /* 苹果: held-out accuracy, attention on the cue words, two clusters */
    {
        train_task task;
        trainer tr;
        train_apple before, after;
        char err[256];
        long cues[64], s;
        size_t ncues;
        CHECK(train_data_apple(&task, NULL, 0, NULL, 0, err, sizeof err) == 0);
        train_opts_default(&o, TASK_APPLE);
        o.seed = 1;
        CHECK(trainer_init(&tr, &task, &o, NULL, err, sizeof err) == 0);
        train_data_cue_ids(&task, cues, &ncues);
        CHECK(trainer_apple(&tr, &task.heldout, cues, ncues, &before, err, sizeof err) == 0);
        for (s = 0; s < o.steps; s++)
            CHECK(trainer_step(&tr, NULL, err, sizeof err) == 0);
        CHECK(trainer_apple(&tr, &task.heldout, cues, ncues, &after, err, sizeof err) == 0);
        printf("apple, %ld steps: held-out accuracy %.3f -> %.3f; 苹果's weight on cue words "
               "%.2f -> %.2f; cosine within %.2f -> %.2f, across %.2f -> %.2f\n", o.steps,
               before.accuracy, after.accuracy, before.cue_weight, after.cue_weight,
               before.cos_within, after.cos_within, before.cos_across, after.cos_across);
        CHECK(after.accuracy >= 0.95);
        CHECK(after.cue_weight >= 0.5);
        CHECK(after.cue_weight > before.cue_weight + 0.2);
        CHECK(after.cos_within > 0.8);
        CHECK(after.cos_across < 0.0);
        /* the probes: a fruit and a company sentence of the held-out part */
        {
            const int *tok;
            size_t len, k, has = 0;
            CHECK(train_task_probe(&task, 0, &tok, &len) == 0);
            CHECK(tok == task.heldout.tokens);
            CHECK(train_task_probe(&task, 1, &tok, &len) == 0);
            for (k = 0; k < len; k++)
                has += tok[k] == task.label_at;
            CHECK(has >= 1);
            CHECK(len == task.heldout.T || tok[len] == 0); /* padding after it */
            {
                /* its label, at its first 苹果, is the company (class 1) */
                const int *tg = task.heldout.targets + (tok - task.heldout.tokens);
                for (k = 0; k < len && tok[k] != task.label_at; k++)
                    ;
                CHECK(k < len && tg[k] == 1);
            }
            CHECK(train_task_probe(&task, 5, &tok, &len) == -1);
        }
        trainer_free(&tr);
        train_task_free(&task);
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_train FIXTURE_DIR APPLE_JSON [--induction]\n");
        return 2;
    }
    if (argc > 3 && strcmp(argv[3], "--induction") == 0) {
#ifndef __OPTIMIZE__
        (void)test_induction_learns;
        printf("skipped in an unoptimized build (too slow there): two layers learn "
               "induction\n");
        return 77;
#else
        test_induction_learns();
        return check_summary("train_induction");
#endif
    }
    test_fixtures(argv[1]);
    test_finite_differences(0, 1, 0, 0);
    test_finite_differences(1, 1, 0, 0);
    test_finite_differences(0, 2, 0, 0);
    test_finite_differences(0, 2, 6, 0);
    test_finite_differences(1, 3, 5, 0);
    test_finite_differences(0, 3, 5, 0);
    test_finite_differences(1, 2, 0, 0);
    test_finite_differences(0, 1, 0, 1);
    test_finite_differences(1, 2, 6, 1);
    test_data();
    test_apple_corpus(argv[2]);
    test_model_file();
    test_saved_logits(argv[1], "train_encoder", check_stack,
                      "d2l TransformerEncoder: model.json loads with strict=False");
    test_saved_logits(argv[1], "train_learned", check_learned,
                      "a learned P: model.json loads with strict=True");
    test_stack_file();
    test_induction_task();
    test_determinism(0.0);
    test_determinism(0.2);
    test_divergence();
    test_learns();
    return check_summary("train");
}
