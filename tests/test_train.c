/* test_train.c — attn train's core: the model's gradients against PyTorch
 * and against finite differences, Adam against torch.optim.Adam, the data
 * and model files, determinism across threads, and that the built-in tasks
 * learn what they should.
 *
 * usage: test_train FIXTURE_DIR APPLE_JSON
 *   FIXTURE_DIR  tests/ref/train (scripts/gen_train_ref.py)
 *   APPLE_JSON   data/apple_train.json (the corpus compiled into attn)
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
#include "train.h"
#include "train_data.h"
#include "train_model.h"
#include "train_task.h"

/* ---- fixtures ----------------------------------------------------------- */

typedef struct fixture {
    cJSON *root;
    tmodel_config cfg;
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
    fx->cfg.addnorm = get_bool(c, "addnorm");
    fx->cfg.bias = get_bool(c, "bias");
    fx->cfg.causal = get_bool(c, "causal");
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
                            m->param[i].name, 1, 2, &t, err, sizeof err) ||
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
    if (json_get_tensor(want, "want", 1, 2, &t, err, sizeof err) || t.size != n)
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
    CHECK_NEAR(loss, cJSON_GetObjectItemCaseSensitive(fx.root, "loss")->valuedouble, 1e-6, 1e-5);
    CHECK(tmodel_backward(grads, &c, &m, fx.tokens, fx.lens, fx.targets, 1.0 / (double)count,
                          NULL, err, sizeof err) == 0);
    for (i = 0; i < m.nparams; i++) {
        const cJSON *want = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(fx.root, "grads"), m.param[i].name);
        double worst;
        size_t at, bad = compare_tensor(grads + m.param[i].offset, NULL, want,
                                        m.param[i].t->size, 1e-5, 1e-4, &worst, &at);
        check_count++;
        if (bad) {
            check_failed++;
            /* llm.c style: the worst difference of the parameter */
            fprintf(stderr, "%s: d %s: %zu of %zu outside 1e-5 + 1e-4·|torch|, worst %.3g at "
                    "[%zu]\n", file, m.param[i].name, bad, m.param[i].t->size, worst, at);
        }
    }
    printf("  %s: loss %.7f, %zu parameters' gradients checked\n", file, loss, m.nparams);
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

/* 50 Adam steps from torch's initial weights on torch's batch. */
static void test_fixture_adam(const char *dir, const char *file, int threads)
{
    char path[512], err[256];
    fixture fx;
    train_task task;
    train_opts o;
    trainer tr;
    tmodel init;
    const cJSON *adam, *losses, *sd;
    int s, steps;
    size_t i;
    double worst_loss = 0.0;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (fixture_load(&fx, path)) {
        CHECK(0);
        return;
    }
    adam = cJSON_GetObjectItemCaseSensitive(fx.root, "adam");
    if (!adam) {
        fixture_free(&fx);
        return;
    }
    losses = cJSON_GetObjectItemCaseSensitive(adam, "losses");
    steps = cJSON_GetObjectItemCaseSensitive(adam, "steps")->valueint;
    CHECK_INT(steps, 50);
    CHECK(tmodel_alloc(&init, &fx.cfg, err, sizeof err) == 0);
    CHECK(load_params(&init, cJSON_GetObjectItemCaseSensitive(fx.root, "state_dict"), file) == 0);
    task_from_fixture(&task, &fx);
    train_opts_default(&o, TASK_DATA);
    o.hiddens = fx.cfg.hiddens;
    o.heads = fx.cfg.heads;
    o.posenc = fx.cfg.posenc;
    o.addnorm = fx.cfg.addnorm;
    o.bias = fx.cfg.bias;
    o.causal = fx.cfg.causal;
    o.lr = cJSON_GetObjectItemCaseSensitive(adam, "lr")->valuedouble;
    o.batch_size = 0;
    o.threads = threads;
    CHECK(trainer_init(&tr, &task, &o, &init, err, sizeof err) == 0);
    for (s = 0; s < steps; s++) {
        train_stats st;
        double want = cJSON_GetArrayItem(losses, s)->valuedouble, d;
        CHECK(trainer_step(&tr, &st, err, sizeof err) == 0);
        d = fabs(st.loss - want) / fabs(want);
        if (d > worst_loss)
            worst_loss = d;
        if (!(d <= 1e-4)) {
            check_failed++;
            fprintf(stderr, "%s: Adam step %d: loss %.9g, torch %.9g\n", file, s + 1, st.loss,
                    want);
        }
        check_count++;
    }
    sd = cJSON_GetObjectItemCaseSensitive(adam, "state_dict");
    for (i = 0; i < tr.model.nparams; i++) {
        double worst;
        size_t at, bad = compare_tensor(NULL, tr.model.param[i].t->data,
                                        cJSON_GetObjectItemCaseSensitive(sd, tr.model.param[i].name),
                                        tr.model.param[i].t->size, 1e-4, 1e-3, &worst, &at);
        check_count++;
        if (bad) {
            check_failed++;
            fprintf(stderr, "%s: after 50 Adam steps, %s: %zu outside 1e-4 + 1e-3·|torch|, worst "
                    "%.3g at [%zu]\n", file, tr.model.param[i].name, bad, worst, at);
        }
    }
    printf("  %s: 50 Adam steps (%d thread%s), worst relative loss difference %.2g\n", file,
           threads, threads == 1 ? "" : "s", worst_loss);
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
    CHECK(n >= 12);
    printf("gradients against PyTorch (%zu fixtures):\n", n);
    for (i = 0; i < n; i++)
        test_fixture_grads(dir, names[i]);
    for (i = 0; i < n; i++) {
        test_fixture_adam(dir, names[i], 1);
        test_fixture_adam(dir, names[i], 2);
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

/* Central differences (L(w + h) − L(w − h)) / 2h, the loss in double, on
 * every parameter of a small model with biases, AddNorm, valid_lens and
 * dropout (whose mask is fixed by its seed): a witness independent of
 * PyTorch. */
static void test_finite_differences(int dropout)
{
    tmodel_config cfg = {6, 6, 8, 2, 1, 1, 1, 0, dropout ? 0.3 : 0.0};
    const size_t B = 2, T = 5;
    const int tok[10] = {1, 2, 3, 4, 5, 5, 4, 3, 0, 0};
    const int tgt[10] = {2, -1, 4, 1, 3, 1, 2, 5, -1, -1};
    const long lens[2] = {5, 3};
    mha_dropout drop = {cfg.dropout, 42};
    const float h = 1e-2f;
    char err[128];
    tmodel m;
    tcache c;
    double *grads, worst = 0.0;
    size_t i, j, bad = 0, count = 7;
    CHECK(tmodel_alloc(&m, &cfg, err, sizeof err) == 0);
    tmodel_init(&m, 7);
    /* a LayerNorm away from the identity, as after training */
    for (i = 0; i < 8; i++) {
        m.ln_weight.data[i] = 0.7f + 0.1f * (float)i;
        m.ln_bias.data[i] = 0.05f * (float)i - 0.2f;
    }
    CHECK(tcache_alloc(&c, &m, B, T, err, sizeof err) == 0);
    grads = calloc(m.total, sizeof *grads);
    batch_loss(&m, &c, tok, lens, tgt, B, T, &drop);
    CHECK(tmodel_backward(grads, &c, &m, tok, lens, tgt, 1.0 / (double)count, &drop, err,
                          sizeof err) == 0);
    for (i = 0; i < m.nparams; i++) {
        tensor *t = m.param[i].t;
        for (j = 0; j < t->size; j++) {
            float w = t->data[j];
            double lp, lm, fd, an = grads[m.param[i].offset + j], diff;
            t->data[j] = w + h;
            lp = batch_loss(&m, &c, tok, lens, tgt, B, T, &drop);
            t->data[j] = w - h;
            lm = batch_loss(&m, &c, tok, lens, tgt, B, T, &drop);
            t->data[j] = w;
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
    printf("finite differences%s: %zu parameters, worst |analytic − numeric| %.2g\n",
           dropout ? " (dropout 0.3)" : "", m.total, worst);
    free(grads);
    tcache_free(&c);
    tmodel_free(&m);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_train FIXTURE_DIR APPLE_JSON\n");
        return 2;
    }
    test_fixtures(argv[1]);
    test_finite_differences(0);
    test_finite_differences(1);
    return check_summary("train");
}
