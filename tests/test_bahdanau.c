/* test_bahdanau.c — d2l's Seq2Seq with Bahdanau attention (--arch
 * bahdanau: src/nn/seq2seq/gru.c, src/nn/seq2seq/bahdanau.c, through seq2seq.h's API)
 * against PyTorch: nn.GRU alone (outputs, final states and every
 * gradient), the whole model's loss and every gradient, 20 steps of SGD
 * and of Adam with clipping on and off through the trainer
 * (seq2seq_train.h), and greedy decoding token for token with its
 * attention rows; each through the reference (double loops) and through
 * the fast path (src/nn/seq2seq/bahdanau_fast.c, float32). And a model file of
 * --arch bahdanau in SPEC §11's form, written by attn, loaded by PyTorch
 * into d2l's modules with strict=True: the same logits and translations.
 *
 * usage: test_bahdanau FIXTURE_DIR
 *   FIXTURE_DIR  tests/ref/bahdanau (scripts/gen_bahdanau_ref.py); its
 *                sibling bahdanau_model holds model.json (written by
 *                write-model) and what PyTorch computed with it
 *                (gen_bahdanau_ref.py --load)
 *        test_bahdanau write-model DIR [gru|lstm|dot]   writes DIR/model.json
 *                (bahdanau_model, _lstm, _dot: model_files below)
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "checked.h"
#include "torch_fixture.h"
#include "bahdanau.h"
#include "gru.h"
#include "lstm.h"
#include "s2s_model_file.h"
#include "seq2seq.h"
#include "seq2seq_data.h"
#include "seq2seq_fast.h"
#include "seq2seq_train.h"
#include "encoder_task.h"

/* ---- reading fixtures ------------------------------------------------------ */

static cJSON *read_json(const char *path)
{
    char *text = check_read_file(path, NULL);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    free(text);
    if (!root)
        fprintf(stderr, "%s: cannot read\n", path);
    return root;
}

static size_t size_of(const cJSON *c, const char *k)
{
    return (size_t)get(c, k)->valuedouble;
}

/* A model fixture: its configuration and batch (B pairs, T = num_steps
 * positions a side). */
typedef struct fixture {
    cJSON *root;
    s2s_config cfg;
    double clip;
    size_t B, T;
    int *src, *dec_in, *targets; /* (B, T) each; targets −1 at <pad> */
    long *src_lens;              /* (B,) */
} fixture;

static void config_of(s2s_config *cfg, const cJSON *c)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->arch = &bah_arch;
    cfg->src_vocab = size_of(c, "src_vocab");
    cfg->tgt_vocab = size_of(c, "tgt_vocab");
    cfg->hiddens = size_of(c, "hiddens");
    cfg->heads = size_of(c, "heads");
    cfg->layers = size_of(c, "layers");
    /* SPEC §15's --rnn and --score, when the fixture names them */
    cfg->rnn = cJSON_GetObjectItem(c, "rnn") &&
               strcmp(get(c, "rnn")->valuestring, "lstm") == 0;
    cfg->score = cJSON_GetObjectItem(c, "score") &&
                 strcmp(get(c, "score")->valuestring, "dot") == 0;
}

static int fixture_load(fixture *fx, const char *path)
{
    size_t n;
    int *l;
    memset(fx, 0, sizeof *fx);
    if (!(fx->root = read_json(path)))
        return -1;
    config_of(&fx->cfg, get(fx->root, "config"));
    fx->clip = get(get(fx->root, "config"), "clip")->valuedouble;
    fx->T = size_of(get(fx->root, "config"), "num_steps");
    fx->B = (size_t)cJSON_GetArraySize(get(fx->root, "src"));
    fx->src = ints(get(fx->root, "src"), &n);
    fx->dec_in = ints(get(fx->root, "dec_in"), &n);
    fx->targets = ints(get(fx->root, "targets"), &n);
    l = ints(get(fx->root, "src_lens"), &n);
    fx->src_lens = malloc(n * sizeof(long));
    for (size_t i = 0; i < n; i++)
        fx->src_lens[i] = l[i];
    free(l);
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
 * exactly), found by its name (s2s_find): every key of sd is a parameter
 * of m, in m's (state_dict) order, and none is missing. */
static int load_params(s2s_model *m, const cJSON *sd, const char *file)
{
    const cJSON *e;
    size_t i = 0;
    int bad = 0;
    cJSON_ArrayForEach(e, sd)
    {
        tparam *p = s2s_find(m, e->string);
        size_t n;
        double *v;
        if (!p || i >= m->nparams || p != &m->param[i]) {
            fprintf(stderr, "%s: state_dict key %zu \"%s\" is not attn's parameter %zu (%s)\n",
                    file, i, e->string, i, i < m->nparams ? m->param[i].name : "none");
            bad = 1;
            i++;
            continue;
        }
        v = numbers(e, &n);
        if (!v || n != p->t->size) {
            fprintf(stderr, "%s: %s: expected %zu numbers, got %zu\n", file, p->name, p->t->size,
                    n);
            bad = 1;
        } else
            for (size_t j = 0; j < n; j++)
                p->t->data[j] = (float)v[j];
        free(v);
        i++;
    }
    if (i != m->nparams) {
        fprintf(stderr, "%s: %zu tensors in the state_dict, attn's model has %zu\n", file, i,
                m->nparams);
        bad = 1;
    }
    check_count++;
    check_failed += bad;
    return bad ? -1 : 0;
}

/* ---- comparing -------------------------------------------------------------- */

static worst_err w_lstm_out = {"LSTM outputs and final states", 0, 0, 0},
                 w_lstm_grad = {"LSTM gradients", 0, 0, 0};
static worst_err w_gru_out = {"GRU outputs and final states", 0, 0, 0},
                 w_gru_grad = {"GRU gradients", 0, 0, 0}, w_loss = {"loss", 0, 0, 0},
                 w_grad = {"gradients", 0, 0, 1e-3}, w_cross = {"greedy attention", 0, 0, 0},
                 w_fast_loss = {"fast path: loss", 0, 0, 0},
                 w_fast_grad = {"fast path: gradients", 0, 0, 1e-3},
                 w_fast_cross = {"fast path: greedy attention", 0, 0, 0},
                 w_fast_wq = {"fast path: W_q after 20 Adam steps", 0, 0, 1e-3},
                 w_file = {"logits of a loaded model file", 0, 0, 0},
                 w_file_att = {"its translations' attention", 0, 0, 0};

/* The numbers of node against got (n): their count, then compare. */
static void compare_node(const char *file, const char *label, const double *got, size_t n,
                         const cJSON *node, double atol, double rtol, worst_err *w)
{
    size_t k;
    double *want = numbers(node, &k);
    CHECK_INT(k, n);
    if (k == n)
        compare(file, label, got, want, n, atol, rtol, w);
    free(want);
}

static void compare_floats(const char *file, const char *label, const float *got, size_t n,
                           const cJSON *node, double atol, double rtol, worst_err *w)
{
    double *g = malloc((n ? n : 1) * sizeof *g);
    for (size_t i = 0; i < n; i++)
        g[i] = got[i];
    compare_node(file, label, g, n, node, atol, rtol, w);
    free(g);
}

/* ---- the GRU alone ------------------------------------------------------------ */

/* Double against double, from the same float32 weights: what differs is
 * the order of the sums and attn's exp and tanh (within an ulp of
 * glibc's), ~1e-16 relative per operation. Measured (the test prints the
 * worst): outputs within 5e-16, gradients within 3e-15; the tolerance is
 * ten times that, far below what a wrong formula gives. */
#define GRU_ATOL 3e-14
#define GRU_RTOL 1e-12

/* One case of gru.json: nn.GRU(I, d, L) on x (T, B, I) from h0 or zeros;
 * its outputs (T, B, d) and final states (L, B, d); the gradients of
 * Σ output ⊙ R_out + Σ h_n ⊙ R_h. */
static void test_gru_case(const cJSON *cs)
{
    const char *name = get(cs, "name")->valuestring;
    const size_t I = size_of(cs, "input_size"), d = size_of(cs, "hidden_size"),
                 L = size_of(cs, "num_layers"), T = size_of(cs, "T"), B = size_of(cs, "B");
    const cJSON *sd = get(cs, "state_dict"), *gr = get(cs, "grads");
    const int with_h0 = !cJSON_IsNull(get(cs, "h0"));
    gru_layer layers[4];
    gru_grads grads[4];
    gru_stack s;
    char err[256], label[64];
    size_t n;
    double *x = numbers(get(cs, "x"), &n), *h0 = with_h0 ? numbers(get(cs, "h0"), &n) : NULL;
    double *R_out = numbers(get(cs, "R_out"), &n), *R_h = numbers(get(cs, "R_h"), &n);
    double *out = calloc(T * B * d, sizeof *out), *hT = calloc(L * B * d, sizeof *hT);
    double *dx = calloc(T * B * I, sizeof *dx), *dh0 = calloc(L * B * d, sizeof *dh0);
    double *dh = calloc(L * B * d, sizeof *dh);
    CHECK(L <= 4);
    for (size_t l = 0; l < L; l++) {
        const size_t in = l == 0 ? I : d;
        tensor *ts[4];
        double **gs[4] = {&grads[l].w_ih, &grads[l].w_hh, &grads[l].b_ih, &grads[l].b_hh};
        static const char *const names[4] = {"weight_ih", "weight_hh", "bias_ih", "bias_hh"};
        CHECK(gru_layer_alloc(&layers[l], in, d, err, sizeof err) == 0);
        ts[0] = &layers[l].w_ih;
        ts[1] = &layers[l].w_hh;
        ts[2] = &layers[l].b_ih;
        ts[3] = &layers[l].b_hh;
        for (size_t k = 0; k < 4; k++) {
            double *v;
            snprintf(label, sizeof label, "%s_l%zu", names[k], l);
            v = numbers(get(sd, label), &n);
            CHECK_INT(n, ts[k]->size);
            for (size_t j = 0; j < n && j < ts[k]->size; j++)
                ts[k]->data[j] = (float)v[j];
            free(v);
            *gs[k] = calloc(ts[k]->size, sizeof(double));
        }
    }
    CHECK(gru_stack_alloc(&s, L, B, T, I, d, err, sizeof err) == 0);
    gru_stack_forward(&s, layers, x, h0, B, T);
    for (size_t t = 0; t < T; t++)
        memcpy(out + t * B * d, gru_stack_state(&s, L - 1, t), B * d * sizeof *out);
    for (size_t l = 0; l < L; l++)
        memcpy(hT + l * B * d, gru_stack_state(&s, l, T - 1), B * d * sizeof *hT);
    compare_node(name, "output", out, T * B * d, get(cs, "output"), GRU_ATOL, GRU_RTOL,
                 &w_gru_out);
    compare_node(name, "h_n", hT, L * B * d, get(cs, "h_n"), GRU_ATOL, GRU_RTOL, &w_gru_out);
    gru_stack_backward(&s, layers, grads, x, R_out, R_h, dx, dh0, dh, T);
    compare_node(name, "d x", dx, T * B * I, get(gr, "x"), GRU_ATOL, GRU_RTOL, &w_gru_grad);
    if (with_h0)
        compare_node(name, "d h0", dh0, L * B * d, get(gr, "h0"), GRU_ATOL, GRU_RTOL,
                     &w_gru_grad);
    for (size_t l = 0; l < L; l++) {
        const double *gs[4] = {grads[l].w_ih, grads[l].w_hh, grads[l].b_ih, grads[l].b_hh};
        const size_t sizes[4] = {layers[l].w_ih.size, layers[l].w_hh.size, layers[l].b_ih.size,
                                 layers[l].b_hh.size};
        static const char *const names[4] = {"weight_ih", "weight_hh", "bias_ih", "bias_hh"};
        for (size_t k = 0; k < 4; k++) {
            snprintf(label, sizeof label, "d %s_l%zu", names[k], l);
            compare_node(name, label, gs[k], sizes[k], get(gr, label + 2), GRU_ATOL, GRU_RTOL,
                         &w_gru_grad);
        }
    }
    printf("  gru %s: %zu layer%s, I %zu, d %zu, T %zu, B %zu%s: outputs, final states and "
           "every gradient\n",
           name, L, L == 1 ? "" : "s", I, d, T, B, with_h0 ? ", from h0" : ", from zeros");
    gru_stack_free(&s);
    for (size_t l = 0; l < L; l++) {
        rnn_layer_free(&layers[l]);
        free(grads[l].w_ih);
        free(grads[l].w_hh);
        free(grads[l].b_ih);
        free(grads[l].b_hh);
    }
    free(x);
    free(h0);
    free(R_out);
    free(R_h);
    free(out);
    free(hT);
    free(dx);
    free(dh0);
    free(dh);
}

/* The LSTM's parameters of one case (state_dict sd) and zeroed gradients. */
static void lstm_case_layers(lstm_layer *layers, lstm_grads *grads, const cJSON *sd, size_t L,
                             size_t I, size_t d)
{
    static const char *const names[4] = {"weight_ih", "weight_hh", "bias_ih", "bias_hh"};
    char err[256], label[64];
    for (size_t l = 0; l < L; l++) {
        tensor *ts[4] = {&layers[l].w_ih, &layers[l].w_hh, &layers[l].b_ih, &layers[l].b_hh};
        double **gs[4] = {&grads[l].w_ih, &grads[l].w_hh, &grads[l].b_ih, &grads[l].b_hh};
        CHECK(lstm_layer_alloc(&layers[l], l == 0 ? I : d, d, err, sizeof err) == 0);
        for (size_t k = 0; k < 4; k++) {
            size_t n;
            double *v;
            snprintf(label, sizeof label, "%s_l%zu", names[k], l);
            v = numbers(get(sd, label), &n);
            CHECK_INT(n, ts[k]->size);
            for (size_t j = 0; j < n && j < ts[k]->size; j++)
                ts[k]->data[j] = (float)v[j];
            free(v);
            *gs[k] = calloc(ts[k]->size, sizeof(double));
        }
    }
}

/* One case of lstm.json: nn.LSTM(I, d, L) on x (T, B, I) from (h0, c0) or
 * zeros; its outputs, final h and c; the gradients of Σ output ⊙ R_out +
 * Σ h_n ⊙ R_h + Σ c_n ⊙ R_c. */
static void test_lstm_case(const cJSON *cs)
{
    static const char *const names[4] = {"weight_ih", "weight_hh", "bias_ih", "bias_hh"};
    const char *name = get(cs, "name")->valuestring;
    const size_t I = size_of(cs, "input_size"), d = size_of(cs, "hidden_size"),
                 L = size_of(cs, "num_layers"), T = size_of(cs, "T"), B = size_of(cs, "B");
    const cJSON *gr = get(cs, "grads");
    const int with_h0 = !cJSON_IsNull(get(cs, "h0"));
    lstm_layer layers[4];
    lstm_grads grads[4];
    lstm_stack s;
    char err[256], label[64];
    size_t n, LBd = L * B * d;
    double *x = numbers(get(cs, "x"), &n), *h0 = with_h0 ? numbers(get(cs, "h0"), &n) : NULL;
    double *c0 = with_h0 ? numbers(get(cs, "c0"), &n) : NULL;
    double *R_out = numbers(get(cs, "R_out"), &n), *R_h = numbers(get(cs, "R_h"), &n);
    double *R_c = numbers(get(cs, "R_c"), &n);
    double *out = calloc(T * B * d, sizeof *out), *hT = calloc(LBd, sizeof *hT);
    double *cT = calloc(LBd, sizeof *cT), *dx = calloc(T * B * I, sizeof *dx);
    double *dh = calloc(LBd, sizeof *dh), *dc = calloc(LBd, sizeof *dc);
    CHECK(L <= 4);
    lstm_case_layers(layers, grads, get(cs, "state_dict"), L, I, d);
    CHECK(lstm_stack_alloc(&s, L, B, T, I, d, err, sizeof err) == 0);
    lstm_stack_forward(&s, layers, x, h0, c0, B, T);
    for (size_t t = 0; t < T; t++)
        memcpy(out + t * B * d, lstm_stack_state(&s, L - 1, t), B * d * sizeof *out);
    for (size_t l = 0; l < L; l++) {
        memcpy(hT + l * B * d, lstm_stack_state(&s, l, T - 1), B * d * sizeof *hT);
        memcpy(cT + l * B * d, lstm_stack_cell(&s, l, T - 1), B * d * sizeof *cT);
    }
    compare_node(name, "output", out, T * B * d, get(cs, "output"), GRU_ATOL, GRU_RTOL,
                 &w_lstm_out);
    compare_node(name, "h_n", hT, LBd, get(cs, "h_n"), GRU_ATOL, GRU_RTOL, &w_lstm_out);
    compare_node(name, "c_n", cT, LBd, get(cs, "c_n"), GRU_ATOL, GRU_RTOL, &w_lstm_out);
    lstm_stack_backward(&s, layers, grads, x, R_out, R_h, R_c, dx, dh, dc, T);
    compare_node(name, "d x", dx, T * B * I, get(gr, "x"), GRU_ATOL, GRU_RTOL, &w_lstm_grad);
    if (with_h0) {
        compare_node(name, "d h0", dh, LBd, get(gr, "h0"), GRU_ATOL, GRU_RTOL, &w_lstm_grad);
        compare_node(name, "d c0", dc, LBd, get(gr, "c0"), GRU_ATOL, GRU_RTOL, &w_lstm_grad);
    }
    for (size_t l = 0; l < L; l++) {
        const double *gs[4] = {grads[l].w_ih, grads[l].w_hh, grads[l].b_ih, grads[l].b_hh};
        const size_t sizes[4] = {layers[l].w_ih.size, layers[l].w_hh.size, layers[l].b_ih.size,
                                 layers[l].b_hh.size};
        for (size_t k = 0; k < 4; k++) {
            snprintf(label, sizeof label, "d %s_l%zu", names[k], l);
            compare_node(name, label, gs[k], sizes[k], get(gr, label + 2), GRU_ATOL, GRU_RTOL,
                         &w_lstm_grad);
        }
        rnn_layer_free(&layers[l]);
        FREE_EACH(grads[l].w_ih, grads[l].w_hh, grads[l].b_ih, grads[l].b_hh);
    }
    printf("  lstm %s: %zu layer%s, I %zu, d %zu, T %zu, B %zu%s: outputs, final h and c and "
           "every gradient\n",
           name, L, L == 1 ? "" : "s", I, d, T, B, with_h0 ? ", from (h0, c0)" : ", from zeros");
    lstm_stack_free(&s);
    FREE_EACH(x, h0, c0, R_out, R_h, R_c, out, hT, cT, dx, dh, dc);
}

static void test_lstm(const char *dir)
{
    char path[512];
    cJSON *root;
    const cJSON *cs;
    snprintf(path, sizeof path, "%s/lstm.json", dir);
    root = read_json(path);
    CHECK(root != NULL);
    if (!root)
        return;
    printf("nn.LSTM against PyTorch (float64):\n");
    cJSON_ArrayForEach(cs, get(root, "cases")) test_lstm_case(cs);
    cJSON_Delete(root);
}

static void test_gru(const char *dir)
{
    char path[512];
    cJSON *root;
    const cJSON *cs;
    snprintf(path, sizeof path, "%s/gru.json", dir);
    root = read_json(path);
    CHECK(root != NULL);
    if (!root)
        return;
    printf("nn.GRU against PyTorch (float64):\n");
    cJSON_ArrayForEach(cs, get(root, "cases")) test_gru_case(cs);
    cJSON_Delete(root);
}

/* ---- the whole model, step 0 ------------------------------------------------------ */

/* The model's parameters are float32 (the fixtures' initial values are
 * float32 numbers: both start from the same parameters exactly); attn
 * computes in double but rounds the logits to float32 (2^-24 ≈ 6e-8 of
 * their size), which is what reaches the loss and every gradient.
 * Measured over the four fixtures: the loss within 3e-9, every gradient
 * within 1.3e-9 (5e-8 of its size). Tolerances about ten times that. */
#define LOSS_ATOL 3e-8
#define GRAD_ATOL 1.5e-8
#define GRAD_RTOL 1e-6

/* The loss and every parameter's gradient at step 0, through seq2seq.h. */
static void test_fixture_grads(const char *file, const fixture *fx)
{
    char err[256];
    s2s_model m;
    s2s_cache c;
    double *grads, loss;
    size_t count;
    const cJSON *all = get(fx->root, "grads");
    CHECK(s2s_alloc(&m, &fx->cfg, err, sizeof err) == 0);
    CHECK(load_params(&m, get(fx->root, "state_dict"), file) == 0);
    CHECK(s2s_cache_alloc(&c, &m, fx->B, fx->T, fx->T, err, sizeof err) == 0);
    grads = calloc(m.total, sizeof *grads);
    CHECK(s2s_forward(&m, &c, fx->src, fx->src_lens, fx->dec_in, fx->B, fx->T, fx->T, NULL, err,
                      sizeof err) == 0);
    loss = s2s_loss(&c, &m, fx->targets, &count, NULL);
    CHECK(s2s_backward(grads, &c, &m, fx->src, fx->src_lens, fx->dec_in, fx->targets,
                       1.0 / (double)count, NULL, err, sizeof err) == 0);
    loss /= (double)count;
    note(&w_loss, loss, get(fx->root, "loss")->valuedouble);
    CHECK_NEAR(loss, get(fx->root, "loss")->valuedouble, LOSS_ATOL, 0.0);
    for (size_t i = 0; i < m.nparams; i++)
        compare_node(file, m.param[i].name, grads + m.param[i].offset, m.param[i].t->size,
                     get(all, m.param[i].name), GRAD_ATOL, GRAD_RTOL, &w_grad);
    printf("  %s: loss %.9f, %zu gradients of %zu tensors checked\n", file, loss, m.total,
           m.nparams);
    free(grads);
    s2s_cache_free(&c);
    s2s_free(&m);
}

/* ---- the fast path, step 0 ------------------------------------------------------- */

/* The fast path computes in float32 (fixed partial sums, attn's own exp
 * and tanh): each activation rounded by 2^-24 of its size, the errors
 * carried through the recurrence both ways. Measured over the four
 * fixtures (the test prints the worst): the loss within 5e-9 relative,
 * every gradient within 2.1e-8, 20 steps' losses and gradient norms
 * within 8e-8 relative, the parameters after them within 9e-7 (W_q after
 * Adam's: 1.8e-5, see test_fixture_steps), the greedy attention within
 * 5e-8. Tolerances five to ten times that. */
#define FAST_ATOL 2e-7
#define FAST_RTOL 1e-5
#define FAST_LOSS_RTOL 5e-8
#define FAST_STEPS_RTOL 5e-7 /* the losses and gradient norms of 20 steps */
#define FAST_PARAM_ATOL 5e-6
#define FAST_PARAM_RTOL 2e-5
#define WQ "decoder.attention.W_q.weight"
#define FAST_WQ_ADAM_ATOL 1e-4 /* W_q after 20 Adam steps: test_fixture_steps */

/* The fast path's loss and every gradient at step 0 (s2s_fast_step, as
 * the trainer calls it), against PyTorch. */
static void test_fast_grads(const char *file, const fixture *fx)
{
    char err[256];
    s2s_model m;
    s2s_fast_weights w;
    s2s_fast_cache c;
    size_t count = 0, correct = 0;
    double loss, *g;
    float *gf;
    const cJSON *all = get(fx->root, "grads");
    CHECK(s2s_alloc(&m, &fx->cfg, err, sizeof err) == 0);
    CHECK(load_params(&m, get(fx->root, "state_dict"), file) == 0);
    CHECK(s2s_fast_weights_alloc(&w, &m) == 0);
    CHECK(s2s_fast_cache_alloc(&c, &m, fx->B, fx->T) == 0);
    s2s_fast_weights_update(&w, &m);
    gf = calloc(m.total, sizeof *gf);
    g = calloc(m.total, sizeof *g);
    for (size_t i = 0; i < fx->B * fx->T; i++)
        count += fx->targets[i] >= 0;
    loss = s2s_fast_step(gf, &c, &m, &w, fx->src, fx->src_lens, fx->dec_in, fx->targets, fx->B,
                         fx->T, fx->T, 1.0 / (double)count, NULL, 0, &count, &correct) /
           (double)count;
    note(&w_fast_loss, loss, get(fx->root, "loss")->valuedouble);
    CHECK_NEAR(loss, get(fx->root, "loss")->valuedouble, 0.0, FAST_LOSS_RTOL);
    for (size_t i = 0; i < m.total; i++)
        g[i] = gf[i];
    for (size_t i = 0; i < m.nparams; i++)
        compare_node(file, m.param[i].name, g + m.param[i].offset, m.param[i].t->size,
                     get(all, m.param[i].name), FAST_ATOL, FAST_RTOL, &w_fast_grad);
    printf("  %s: fast path, loss %.9f and its %zu gradients\n", file, loss, m.total);
    free(g);
    free(gf);
    s2s_fast_cache_free(&c);
    s2s_fast_weights_free(&w);
    s2s_free(&m);
}

/* ---- 20 steps through the trainer ------------------------------------------------ */

/* A way to train: the reference (double loops, bahdanau.c) or the fast
 * path, with the tolerances its arithmetic allows (losses and gradient
 * norms relative, parameters absolute + relative). */
typedef struct train_path {
    const char *name;
    int reference;
    double loss_rtol, norm_rtol, param_atol, param_rtol;
    worst_err loss, norm, param;
} train_path;

/* The reference: every loss and norm within a few float32 roundings of
 * the logits (measured: 4e-8 relative), the parameters within a few
 * float32 ulps (measured: 7e-7 for weights of size 2 to 3, whose ulp is
 * 2.4e-7): tolerances five to ten times that. */
static train_path path_reference = {
    "reference", 1, 3e-7, 3e-7, 2e-6, 1e-5,
    {"reference: losses of 20 steps", 0, 0, 0},
    {"reference: gradient norms", 0, 0, 0},
    {"reference: parameters after 20 steps", 0, 0, 1e-3}};
/* The fast path (bahdanau_fast.c): float32 activations and sums, each
 * rounding 2^-24 of its size, through 20 steps of a recurrence:
 * FAST_* below. */
static train_path path_fast = {
    "fast path", 0, FAST_STEPS_RTOL, FAST_STEPS_RTOL, FAST_PARAM_ATOL, FAST_PARAM_RTOL,
    {"fast path: losses of 20 steps", 0, 0, 0},
    {"fast path: gradient norms", 0, 0, 0},
    {"fast path: parameters after 20 steps", 0, 0, 1e-3}};
static train_path *const paths[] = {&path_reference, &path_fast};

/* The fixture's batch as a set of N = B pairs of T positions, for the
 * trainer (batch size 0: every pair, in order, each step). */
static void fixture_arrays(s2s_arrays *a, const fixture *fx, int *tgt, long *tgt_valid)
{
    memset(a, 0, sizeof *a);
    a->n = fx->B;
    a->T = fx->T;
    a->src = fx->src;
    a->dec_in = fx->dec_in;
    a->src_valid = fx->src_lens;
    a->tgt = tgt;
    a->tgt_valid = tgt_valid;
    for (size_t b = 0; b < fx->B; b++) {
        tgt_valid[b] = 0;
        for (size_t t = 0; t < fx->T; t++) {
            const int y = fx->targets[b * fx->T + t];
            tgt[b * fx->T + t] = y >= 0 ? y : 1; /* <pad> */
            tgt_valid[b] += y >= 0;
        }
    }
}

/* 20 steps of the fixture's optimizer ("sgd" or "adam") on its batch,
 * clipped as its configuration says, through s2s_trainer: the loss and
 * the gradient norm before each step, every parameter after the last. */
static void test_fixture_steps(const char *file, const fixture *fx, const char *which,
                               train_path *p)
{
    const cJSON *run = get(fx->root, which), *sd = get(run, "state_dict");
    const int adam = strcmp(which, "adam") == 0, steps = get(run, "steps")->valueint;
    s2s_train_opts opts = {adam ? OPTIM_ADAM : OPTIM_SGD, get(run, "lr")->valuedouble, fx->clip,
                           0, 1, 1, p->reference};
    char err[256];
    s2s_model m;
    s2s_trainer tr;
    s2s_arrays a;
    int *tgt = calloc(fx->B * fx->T, sizeof *tgt);
    long *tgt_valid = calloc(fx->B, sizeof *tgt_valid);
    size_t clipped = 0;
    fixture_arrays(&a, fx, tgt, tgt_valid);
    CHECK(s2s_alloc(&m, &fx->cfg, err, sizeof err) == 0);
    CHECK(load_params(&m, get(fx->root, "state_dict"), file) == 0);
    if (s2s_trainer_init(&tr, &a, NULL, &opts, &m, err, sizeof err)) {
        fprintf(stderr, "%s: %s: %s\n", file, p->name, err);
        CHECK(0);
        goto done;
    }
    for (int s = 0; s < steps; s++) {
        train_stats st;
        const double want = cJSON_GetArrayItem(get(run, "losses"), s)->valuedouble;
        const double wnorm = cJSON_GetArrayItem(get(run, "grad_norms"), s)->valuedouble;
        if (s2s_trainer_step(&tr, &st, err, sizeof err)) {
            fprintf(stderr, "%s: %s step %d: %s\n", file, p->name, s + 1, err);
            CHECK(0);
            break;
        }
        note(&p->loss, st.loss, want);
        note(&p->norm, tr.grad_norm, wnorm);
        CHECK_NEAR(st.loss, want, 0.0, p->loss_rtol);
        CHECK_NEAR(tr.grad_norm, wnorm, 0.0, p->norm_rtol);
        clipped += fx->clip > 0 && tr.grad_norm > fx->clip;
    }
    CHECK_INT(clipped, get(run, "clipped")->valueint);
    for (size_t i = 0; i < tr.model.nparams; i++) {
        const tparam *q = &tr.model.param[i];
        /* W_q's gradient is small (1e-6 … 1e-4 here: the query moves
         * every score j by w_v ⊙ (1 − F_j²) · W_q dq, and the softmax's
         * gradient sums to 0 over j, so those moves nearly cancel); the
         * fast path's float32 rounding, 1e-11 of it absolute as
         * everywhere, is then up to 7e-5 of it, and Adam, which divides
         * the gradient by its own size, turns that into steps off by as
         * much of lr. Checked within FAST_WQ_ADAM_ATOL (measured: the
         * test prints the worst); SGD moves by lr · the gradient, as
         * precise as the rest. */
        const int wq = !p->reference && adam && strcmp(q->name, WQ) == 0;
        compare_floats(file, q->name, q->t->data, q->t->size, get(sd, q->name),
                       wq ? FAST_WQ_ADAM_ATOL : p->param_atol, wq ? 0.0 : p->param_rtol,
                       wq ? &w_fast_wq : &p->param);
    }
    printf("  %s: %s, %d %s steps (%zu clipped), loss %.6f -> %.6f\n", file, p->name, steps,
           adam ? "Adam" : "SGD", clipped, cJSON_GetArrayItem(get(run, "losses"), 0)->valuedouble,
           cJSON_GetArrayItem(get(run, "losses"), steps - 1)->valuedouble);
    s2s_trainer_free(&tr);
done:
    s2s_free(&m);
    free(tgt);
    free(tgt_valid);
}

static void test_fixtures(const char *dir)
{
    /* 05 … 08: SPEC §15's --rnn lstm and --score dot */
    static const char *const files[] = {"01_l1_d8_noclip.json",     "02_l2_d8_clip.json",
                                        "03_l1_d16_clip.json",      "04_l2_d6_noclip.json",
                                        "05_lstm_l1_d8_noclip.json", "06_lstm_l2_d8_clip.json",
                                        "07_dot_l2_d8_clip.json",   "08_lstm_dot_l1_d6_noclip.json"};
    printf("the model against PyTorch (float64):\n");
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[512];
        fixture fx;
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        if (fixture_load(&fx, path)) {
            CHECK(0);
            continue;
        }
        test_fixture_grads(files[i], &fx);
        test_fast_grads(files[i], &fx);
        for (size_t k = 0; k < sizeof paths / sizeof paths[0]; k++) {
            test_fixture_steps(files[i], &fx, "sgd", paths[k]);
            test_fixture_steps(files[i], &fx, "adam", paths[k]);
        }
        fixture_free(&fx);
    }
}

/* ---- greedy decoding --------------------------------------------------------------- */

/* The fast path's greedy decoding of one case (s2s_fast_greedy): the same
 * tokens, the attention rows within float32's rounding of PyTorch's. */
static void test_fast_greedy(const s2s_model *m, const cJSON *cs, const int *src, long len,
                             size_t Ts, int bos, int eos, const int *want, size_t nw)
{
    const size_t max_len = size_of(cs, "max_len");
    const size_t rows = (size_t)cJSON_GetArraySize(get(cs, "attention"));
    s2s_fast_weights w;
    s2s_fast_cache c;
    int *out = calloc(max_len, sizeof *out);
    float *cross = calloc(max_len * Ts, sizeof *cross);
    size_t n_out;
    CHECK(s2s_fast_weights_alloc(&w, m) == 0);
    CHECK(s2s_fast_cache_alloc(&c, m, 1, max_len > Ts ? max_len : Ts) == 0);
    s2s_fast_weights_update(&w, m);
    s2s_fast_greedy(&c, m, &w, src, len, Ts, bos, eos, max_len, out, &n_out, cross);
    CHECK_INT(n_out, nw);
    for (size_t i = 0; i < nw && i < n_out; i++)
        CHECK_INT(out[i], want[i]);
    compare_floats("greedy.json", "fast attention", cross, rows * Ts, get(cs, "attention"), 5e-7,
                   0.0, &w_fast_cross);
    for (size_t i = rows * Ts; i < max_len * Ts; i++)
        CHECK(cross[i] == 0.0f);
    free(out);
    free(cross);
    s2s_fast_cache_free(&c);
    s2s_fast_weights_free(&w);
}

/* d2l's predict_seq2seq on a trained model: the tokens exactly (the
 * generator checked that each step's largest logit leads the next by
 * more than 1e-3), every step's attention row within 1e-6; rows past
 * the last step 0. Then the teacher-forced forward pass on <bos> + the
 * tokens gives the same attention, bit for bit. */
static void test_greedy(const char *dir)
{
    char path[512], err[256];
    cJSON *root;
    const cJSON *cs;
    s2s_config cfg;
    s2s_model m;
    size_t Ts, ncases = 0;
    snprintf(path, sizeof path, "%s/greedy.json", dir);
    root = read_json(path);
    CHECK(root != NULL);
    if (!root)
        return;
    config_of(&cfg, get(root, "config"));
    Ts = size_of(get(root, "config"), "num_steps");
    CHECK(s2s_alloc(&m, &cfg, err, sizeof err) == 0);
    CHECK(load_params(&m, get(root, "state_dict"), "greedy.json") == 0);
    cJSON_ArrayForEach(cs, get(root, "cases"))
    {
        const size_t max_len = size_of(cs, "max_len");
        const int bos = get(root, "bos")->valueint, eos = get(root, "eos")->valueint;
        size_t n, nw, n_out, rows;
        int *src = ints(get(cs, "src"), &n), *want = ints(get(cs, "tokens"), &nw);
        int *out = calloc(max_len, sizeof *out), *dec = calloc(max_len + 1, sizeof *dec);
        float *cross = calloc(max_len * Ts, sizeof *cross);
        const long len = get(cs, "src_len")->valueint;
        s2s_cache c;
        CHECK(s2s_greedy(&m, src, len, Ts, bos, eos, max_len, out, &n_out, cross, err,
                         sizeof err) == 0);
        CHECK_INT(n_out, nw);
        for (size_t i = 0; i < nw && i < n_out; i++)
            CHECK_INT(out[i], want[i]);
        /* step t's row: the fixture's (Ts,); the <eos> step's row too */
        rows = (size_t)cJSON_GetArraySize(get(cs, "attention"));
        CHECK_INT(rows, n_out + (n_out < max_len));
        compare_floats("greedy.json", "attention", cross, rows * Ts, get(cs, "attention"), 1e-6,
                       0.0, &w_cross);
        for (size_t i = rows * Ts; i < max_len * Ts; i++)
            CHECK(cross[i] == 0.0f);
        /* teacher-forced on <bos> + out: the same rows, bit for bit */
        dec[0] = bos;
        memcpy(dec + 1, out, n_out * sizeof *out);
        CHECK(s2s_cache_alloc(&c, &m, 1, Ts, rows, err, sizeof err) == 0);
        CHECK(s2s_forward(&m, &c, src, &len, dec, 1, Ts, rows, NULL, err, sizeof err) == 0);
        CHECK(memcmp(s2s_cross(&c, &m, 0), cross, rows * Ts * sizeof *cross) == 0);
        s2s_cache_free(&c);
        test_fast_greedy(&m, cs, src, len, Ts, bos, eos, want, nw);
        ncases++;
        free(src);
        free(want);
        free(out);
        free(dec);
        free(cross);
    }
    printf("greedy decoding: %zu sentences token for token, their attention rows, by the "
           "reference and the fast path; the teacher-forced pass on the output agrees bit for "
           "bit\n",
           ncases);
    s2s_free(&m);
    cJSON_Delete(root);
}

/* ---- the model file ------------------------------------------------------------- */

static const char *const model_src_vocab[] = {"<unk>", "<pad>", "<bos>", "<eos>", "the",
                                              "red",   "car",   "is",    "fast"};
static const char *const model_tgt_vocab[] = {"<unk>",   "<pad>", "<bos>", "<eos>",  "la",
                                              "voiture", "rouge", "est",   "rapide", "."};
#define MODEL_STEPS 6

/* The model tests/ref/bahdanau_model/model.json holds: 2 GRU layers a
 * side, d 8, from seed 7 (untrained, its translations of logits.json
 * stop both ways: <eos> at once, or num_steps tokens; every argmax ahead
 * of the next logit by over 0.01). bahdanau_model_lstm: the same with
 * LSTMs (--rnn lstm), bahdanau_model_dot: with --score dot. */
static const struct {
    const char *suffix;
    int rnn, score;
} model_files[] = {{"", S2S_RNN_GRU, S2S_SCORE_ADDITIVE},
                   {"_lstm", S2S_RNN_LSTM, S2S_SCORE_ADDITIVE},
                   {"_dot", S2S_RNN_GRU, S2S_SCORE_DOT}};

static int model_for_file(s2s_model *m, int rnn, int score)
{
    s2s_config cfg = {9, 10, 8, 1, 2, 0, 0, 0.0, &bah_arch, rnn, score};
    char err[256];
    if (s2s_alloc(m, &cfg, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    s2s_init(m, 7);
    return 0;
}

static int write_model(const char *dir, const char *which)
{
    s2s_model m;
    const int rnn = strcmp(which, "lstm") == 0, score = strcmp(which, "dot") == 0;
    if (model_for_file(&m, rnn, score))
        return 1;
    return save_model_file(dir, &m, model_src_vocab, model_tgt_vocab, MODEL_STEPS);
}

/* One translation of logits.json: PyTorch's tokens and attention rows
 * against the reference's and the fast path's greedy decoding. */
static void check_translation(const s2s_model *m, const cJSON *tr, size_t T)
{
    char err[256];
    size_t n, nw, n_out, n_fast, rows;
    int *src = ints(get(tr, "src"), &n), *want = ints(get(tr, "tokens"), &nw);
    int *out = calloc(T, sizeof *out), *fout = calloc(T, sizeof *fout);
    float *cross = calloc(T * T, sizeof *cross), *fcross = calloc(T * T, sizeof *fcross);
    const long len = get(tr, "src_len")->valueint;
    s2s_fast_weights w;
    s2s_fast_cache c;
    CHECK(s2s_greedy(m, src, len, T, 2, 3, T, out, &n_out, cross, err, sizeof err) == 0);
    CHECK(s2s_fast_weights_alloc(&w, m) == 0);
    CHECK(s2s_fast_cache_alloc(&c, m, 1, T) == 0);
    s2s_fast_weights_update(&w, m);
    s2s_fast_greedy(&c, m, &w, src, len, T, 2, 3, T, fout, &n_fast, fcross);
    CHECK_INT(n_out, nw);
    CHECK_INT(n_fast, nw);
    for (size_t i = 0; i < nw && i < n_out && i < n_fast; i++) {
        CHECK_INT(out[i], want[i]);
        CHECK_INT(fout[i], want[i]);
    }
    rows = (size_t)cJSON_GetArraySize(get(tr, "attention"));
    CHECK_INT(rows, n_out + (n_out < T));
    compare_floats("logits.json", "translation attention", cross, rows * T, get(tr, "attention"),
                   1e-6, 0.0, &w_file_att);
    compare_floats("logits.json", "fast translation attention", fcross, rows * T,
                   get(tr, "attention"), 5e-7, 0.0, &w_fast_cross);
    s2s_fast_cache_free(&c);
    s2s_fast_weights_free(&w);
    free(src);
    free(want);
    free(out);
    free(fout);
    free(cross);
    free(fcross);
}

/* The committed model file loads (the parameters of model_for_file, bit
 * for bit) and gives the logits and greedy translations PyTorch computed
 * after loading it with strict=True into EncoderDecoder(Seq2SeqEncoder,
 * Seq2SeqAttentionDecoder). */
static void test_model_file_torch(const char *dir, int rnn, int score)
{
    char path[512], err[512], **sv, **tv;
    s2s_model m, want_m;
    s2s_cache c;
    size_t steps, n, B, Ts, Tt, same = 1, ntr = 0;
    cJSON *root;
    const cJSON *tr;
    snprintf(path, sizeof path, "%s/model.json", dir);
    CHECK(s2s_model_load(path, &m, &sv, &tv, &steps, 0.0, err, sizeof err) == 0);
    if (!m.nparams) {
        fprintf(stderr, "%s\n", err);
        return;
    }
    CHECK(m.cfg.arch == &bah_arch && m.cfg.layers == 2 && m.cfg.hiddens == 8);
    CHECK(m.cfg.rnn == rnn && m.cfg.score == score);
    CHECK_INT(steps, MODEL_STEPS);
    CHECK(strcmp(tv[5], "voiture") == 0);
    CHECK(model_for_file(&want_m, rnn, score) == 0);
    CHECK_INT(m.nparams, want_m.nparams);
    for (size_t i = 0; i < m.nparams && i < want_m.nparams; i++)
        same &= strcmp(m.param[i].name, want_m.param[i].name) == 0 &&
                memcmp(m.param[i].t->data, want_m.param[i].t->data,
                       m.param[i].t->size * sizeof(float)) == 0;
    CHECK(same);
    s2s_free(&want_m);
    snprintf(path, sizeof path, "%s/logits.json", dir);
    root = read_json(path);
    CHECK(root != NULL && cJSON_IsTrue(get(root, "strict")));
    if (root) {
        int *src = ints(get(root, "src"), &n), *dec = ints(get(root, "dec_in"), &n);
        int *l = ints(get(root, "src_lens"), &B);
        long lens[8];
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
        compare_floats("logits.json", "logits", c.logits, B * Tt * m.cfg.tgt_vocab,
                       get(root, "logits"), 1e-6, 1e-6, &w_file);
        cJSON_ArrayForEach(tr, get(root, "translations"))
        {
            check_translation(&m, tr, steps);
            ntr++;
        }
        CHECK_INT(ntr, B);
        printf("model file: %s loads in attn and in PyTorch (strict=True); %zu logits and %zu "
               "translations agree\n",
               dir, B * Tt * m.cfg.tgt_vocab, ntr);
        s2s_cache_free(&c);
        free(src);
        free(dec);
        free(l);
        cJSON_Delete(root);
    }
    train_strings_free(sv, m.cfg.src_vocab);
    train_strings_free(tv, m.cfg.tgt_vocab);
    s2s_free(&m);
}

int main(int argc, char **argv)
{
    char model_dir[512];
    if (argc > 2 && strcmp(argv[1], "write-model") == 0)
        return write_model(argv[2], argc > 3 ? argv[3] : "gru");
    if (argc < 2) {
        fprintf(stderr, "usage: test_bahdanau FIXTURE_DIR | write-model DIR [gru|lstm|dot]\n");
        return 2;
    }
    test_gru(argv[1]);
    test_lstm(argv[1]);
    test_fixtures(argv[1]);
    test_greedy(argv[1]);
    for (size_t i = 0; i < sizeof model_files / sizeof model_files[0]; i++) {
        snprintf(model_dir, sizeof model_dir, "%s_model%s", argv[1], model_files[i].suffix);
        test_model_file_torch(model_dir, model_files[i].rnn, model_files[i].score);
    }
    printf("against PyTorch, over every fixture:\n");
    report(&w_gru_out);
    report(&w_gru_grad);
    report(&w_lstm_out);
    report(&w_lstm_grad);
    report(&w_loss);
    report(&w_grad);
    report(&w_fast_loss);
    report(&w_fast_grad);
    for (size_t k = 0; k < sizeof paths / sizeof paths[0]; k++) {
        report(&paths[k]->loss);
        report(&paths[k]->norm);
        report(&paths[k]->param);
    }
    report(&w_fast_wq);
    report(&w_cross);
    report(&w_fast_cross);
    report(&w_file);
    report(&w_file_att);
    return check_summary("bahdanau");
}
