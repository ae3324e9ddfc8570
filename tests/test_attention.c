/* test_attention.c — multi-head attention against PyTorch.
 *
 * usage: test_attention FIXTURE_DIR
 * Every tests/ref/attention/NN_name.json (scripts/gen_attention_ref.py) is
 * loaded through the same JSON loader as the commands, run, and compared
 * element-wise with |attn − torch| <= 1e-5 + 1e-4·|torch|; the largest
 * difference per fixture is printed. Then: the output state_dict fed back
 * reproduces the output exactly, softmax edge cases, and the online
 * softmax (mha_online_row) by hand and against both forward passes.
 * The backward pass with additive scoring (mha_backward_additive) against
 * torch.autograd: FIXTURE_DIR/../attention_grad/NN_name.json
 * (scripts/gen_attention_grad_ref.py), every gradient within
 * 1e-5 + 1e-4·|torch|. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "attention_backward.h"
#include "attention_fast.h"
#include "check.h"
#include "json_in.h"
#include "problem.h"

/* Compare got with the nested array want of n numbers; returns the largest
 * difference and counts elements outside the tolerance in *bad. */
static double compare_values(const float *gotf, const double *gotd, const cJSON *want, size_t n,
                             int *bad, const char *what, const char *name)
{
    tensor t;
    char err[256];
    double worst = 0.0;
    if (json_get_tensor(want, what, 1, 4, &t, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", name, err);
        (*bad)++;
        return INFINITY;
    }
    if (t.size != n) {
        fprintf(stderr, "%s: %s has %zu numbers, attn made %zu\n", name, what, t.size, n);
        (*bad)++;
        tensor_free(&t);
        return INFINITY;
    }
    for (size_t i = 0; i < n; i++) {
        const double got = gotf ? (double)gotf[i] : gotd[i];
        double d = fabs(got - t.data[i]);
        if (d > worst)
            worst = d;
        if (!(d <= 1e-5 + 1e-4 * fabs(t.data[i])) && (*bad)++ < 5)
            fprintf(stderr, "%s: %s[%zu] = %.9g, torch %.9g\n", name, what, i, got, t.data[i]);
    }
    tensor_free(&t);
    return worst;
}

static double compare(const float *got, const cJSON *want, size_t n, int *bad, const char *what,
                      const char *name)
{
    return compare_values(got, NULL, want, n, bad, what, name);
}

/* Run pr: out (B, Nq, H), weights (B, NH, Nq, Nk), both malloc'd. */
static int run(const problem *pr, int causal, float **out, float **weights)
{
    mha_masks mask = {pr->valid_lens, pr->vl_ndim == 2, causal, 0};
    char err[256];
    size_t H = pr->params.num_hiddens, NH = pr->params.num_heads;
    *out = malloc(pr->B * pr->Nq * H * sizeof(float));
    *weights = malloc(pr->B * NH * pr->Nq * pr->Nk * sizeof(float));
    if (!*out || !*weights)
        return -1;
    if (mha_forward(*out, *weights, NULL, pr->queries.data, problem_keys(pr), problem_values(pr),
                    pr->B, pr->Nq, pr->Nk, &pr->params, &mask, NULL, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    return 0;
}

/* The output JSON's state_dict, fed back with the same inputs, gives the
 * same output bit for bit (weights are written with %.9g). */
static void check_round_trip(const problem *pr, const cJSON *input, int causal, const float *out,
                             const float *weights, const char *name)
{
    char *text = NULL, err[512];
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cJSON *written, *again;
    problem pr2;
    problem_opts o;
    float *out2 = NULL, *w2 = NULL;
    int usage;

    if (!f)
        return;
    problem_write_json(f, pr, pr->self ? "selfattn" : "multihead", out, weights);
    fclose(f);
    written = cJSON_Parse(text);
    CHECK(written != NULL);
    if (!written) {
        free(text);
        return;
    }
    /* the fixture's inputs with the written state_dict */
    again = cJSON_Duplicate(input, 1);
    cJSON_ReplaceItemInObjectCaseSensitive(
        again, "state_dict",
        cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(written, "state_dict"), 1));
    memset(&o, 0, sizeof o);
    o.self = pr->self;
    o.max_mem = (size_t)1 << 30;
    CHECK(problem_from_json(&pr2, again, name, &o, err, sizeof err, &usage) == 0);
    if (pr2.queries.data && run(&pr2, causal, &out2, &w2) == 0) {
        CHECK(memcmp(out, out2, pr->B * pr->Nq * pr->params.num_hiddens * sizeof(float)) == 0);
        CHECK(memcmp(weights, w2, pr->B * pr->params.num_heads * pr->Nq * pr->Nk * sizeof(float)) == 0);
    }
    free(out2);
    free(w2);
    problem_free(&pr2);
    cJSON_Delete(again);
    cJSON_Delete(written);
    free(text);
}

/* The fast path, with the weights and streaming, against PyTorch and
 * against the reference loops: |fast − ref| <= 1e-5 + 1e-4·|ref|. */
static void check_fast(const problem *pr, int causal, const cJSON *expected, const float *ref,
                       const char *name)
{
    const size_t H = pr->params.num_hiddens, NH = pr->params.num_heads;
    const size_t nout = pr->B * pr->Nq * H, nw = pr->B * NH * pr->Nq * pr->Nk;
    mha_masks mask = {pr->valid_lens, pr->vl_ndim == 2, causal, 0};
    float *out = malloc(nout * sizeof *out), *w = malloc(nw * sizeof *w);
    char err[256];
    int bad = 0, pass;
    double dref = 0, d;
    size_t i;

    CHECK(out && w);
    if (!out || !w)
        goto done;
    for (pass = 0; pass < 2; pass++) { /* 0: weights kept, 1: streaming */
        CHECK(mha_forward_fast(out, pass ? NULL : w, pr->queries.data, problem_keys(pr),
                               problem_values(pr), pr->B, pr->Nq, pr->Nk, &pr->params, &mask,
                               NULL, err, sizeof err) == 0);
        d = compare(out, cJSON_GetObjectItemCaseSensitive(expected, "output"), nout, &bad,
                    pass ? "streaming output" : "fast output", name);
        if (!pass)
            compare(w, cJSON_GetObjectItemCaseSensitive(expected, "attention_weights"), nw, &bad,
                    "fast attention_weights", name);
        for (i = 0; i < nout; i++)
            if (fabs(out[i] - ref[i]) > dref)
                dref = fabs(out[i] - ref[i]);
        for (i = 0; i < nout; i++)
            if (!(fabs(out[i] - ref[i]) <= 1e-5 + 1e-4 * fabs(ref[i])))
                bad++;
        (void)d;
    }
    CHECK_INT(bad, 0);
    printf("%-44s fast and streaming vs the reference loops: %.2g\n", "", dref);
done:
    free(out);
    free(w);
}

static int test_fixture(const char *dir, const char *file)
{
    char path[1024], err[512];
    char *text;
    cJSON *root, *input, *expected, *options;
    problem pr;
    problem_opts o;
    float *out = NULL, *weights = NULL;
    int usage, bad = 0, causal;
    double dout, dw;

    snprintf(path, sizeof path, "%s/%s", dir, file);
    text = check_read_file(path, NULL);
    CHECK(text != NULL);
    if (!text)
        return 0;
    root = cJSON_Parse(text);
    free(text);
    CHECK(root != NULL);
    if (!root)
        return 0;
    input = cJSON_GetObjectItemCaseSensitive(root, "input");
    expected = cJSON_GetObjectItemCaseSensitive(root, "expected");
    options = cJSON_GetObjectItemCaseSensitive(root, "options");
    memset(&o, 0, sizeof o);
    o.self = strcmp(cJSON_GetObjectItemCaseSensitive(root, "command")->valuestring, "selfattn") == 0;
    o.max_mem = (size_t)1 << 30;
    o.score_given = 1;
    o.score = strcmp(cJSON_GetObjectItemCaseSensitive(options, "score")->valuestring, "additive") == 0
                  ? SCORE_ADDITIVE : SCORE_DOT;
    causal = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(options, "causal"));

    if (problem_from_json(&pr, input, file, &o, err, sizeof err, &usage)) {
        fprintf(stderr, "%s\n", err);
        CHECK(0);
        cJSON_Delete(root);
        return 0;
    }
    CHECK(run(&pr, causal, &out, &weights) == 0);
    dout = compare(out, cJSON_GetObjectItemCaseSensitive(expected, "output"),
                   pr.B * pr.Nq * pr.params.num_hiddens, &bad, "output", file);
    dw = compare(weights, cJSON_GetObjectItemCaseSensitive(expected, "attention_weights"),
                 pr.B * pr.params.num_heads * pr.Nq * pr.Nk, &bad, "attention_weights", file);
    CHECK_INT(bad, 0);
    printf("%-44s max |diff| output %.2g, weights %.2g\n", file, dout, dw);
    check_round_trip(&pr, input, causal, out, weights, file);
    if (pr.params.score == SCORE_DOT)
        check_fast(&pr, causal, expected, out, file);
    free(out);
    free(weights);
    problem_free(&pr);
    cJSON_Delete(root);
    return 1;
}

/* Compare the doubles got (n) with the nested array grads[name]; counts
 * the differences outside 1e-5 + 1e-4·|torch| in *bad, returns the largest. */
static double compare_grad(const double *got, size_t n, const cJSON *grads, const char *name,
                           const char *file, int *bad)
{
    char what[96];
    snprintf(what, sizeof what, "d %s", name);
    return compare_values(NULL, got, cJSON_GetObjectItemCaseSensitive(grads, name), n, bad, what,
                          file);
}

static double *zeros(size_t n)
{
    return calloc(n ? n : 1, sizeof(double));
}

/* The additive backward pass of fixture NN_name against torch.autograd. */
static void test_additive_backward(const char *dir, const char *name)
{
    char path[1024], err[512];
    cJSON *fx = NULL, *gr = NULL;
    problem pr;
    problem_opts o;
    int usage, bad = 0;
    char *text;

    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    text = check_read_file(path, NULL);
    CHECK(text != NULL);
    fx = text ? cJSON_Parse(text) : NULL;
    free(text);
    snprintf(path, sizeof path, "%s/../attention_grad/%s.json", dir, name);
    text = check_read_file(path, NULL);
    CHECK(text != NULL);
    gr = text ? cJSON_Parse(text) : NULL;
    free(text);
    CHECK(fx != NULL && gr != NULL);
    if (!fx || !gr) {
        cJSON_Delete(fx);
        cJSON_Delete(gr);
        return;
    }
    memset(&o, 0, sizeof o);
    o.self = strcmp(cJSON_GetObjectItemCaseSensitive(fx, "command")->valuestring, "selfattn") == 0;
    o.max_mem = (size_t)1 << 30;
    o.score_given = 1;
    o.score = SCORE_ADDITIVE;
    const int causal = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(fx, "options"), "causal"));
    if (problem_from_json(&pr, cJSON_GetObjectItemCaseSensitive(fx, "input"), name, &o, err,
                          sizeof err, &usage)) {
        fprintf(stderr, "%s\n", err);
        CHECK(0);
        cJSON_Delete(fx);
        cJSON_Delete(gr);
        return;
    }
    const mha_params *m = &pr.params;
    const size_t B = pr.B, Nq = pr.Nq, Nk = pr.Nk, H = m->num_hiddens, NH = m->num_heads;
    const size_t p = H / NH, SA = m->a_W_q.weight.shape[0];
    const size_t Dq = pr.Dq, Dk = pr.Dk, Dv = pr.Dv;
    mha_masks mask = {pr.valid_lens, pr.vl_ndim == 2, causal, 0};
    float *out = malloc(B * Nq * H * sizeof(float));
    float *w = malloc(B * NH * Nq * Nk * sizeof(float));
    mha_trace tr = {malloc(B * Nq * H * sizeof(float)),
                    malloc(B * Nk * H * sizeof(float)),
                    malloc(B * Nk * H * sizeof(float)),
                    NULL,
                    NULL,
                    NULL,
                    malloc(B * Nq * H * sizeof(float))};
    double *dq = zeros(B * Nq * Dq), *dk = zeros(B * Nk * Dk), *dv = zeros(B * Nk * Dv);
    double *dout = zeros(B * Nq * H);
    mha_grads g = {zeros(H * Dq), m->W_q.bias.data ? zeros(H) : NULL,
                   zeros(H * Dk), m->W_k.bias.data ? zeros(H) : NULL,
                   zeros(H * Dv), m->W_v.bias.data ? zeros(H) : NULL,
                   zeros(H * H),  m->W_o.bias.data ? zeros(H) : NULL};
    mha_additive_grads ga = {zeros(SA * p), zeros(SA * p), zeros(SA)};
    tensor dt;
    CHECK(out && w && tr.Q && tr.K && tr.V && tr.concat && dq && dk && dv && dout && g.dW_q &&
          g.dW_k && g.dW_v && g.dW_o && ga.da_W_q && ga.da_W_k && ga.da_w_v);
    CHECK(json_get_tensor(cJSON_GetObjectItemCaseSensitive(gr, "dout"), "dout", 3, 3, &dt, err,
                          sizeof err) == 0);
    CHECK_INT((long)dt.size, (long)(B * Nq * H));
    for (size_t i = 0; i < dt.size && i < B * Nq * H; i++)
        dout[i] = dt.data[i];
    tensor_free(&dt);
    CHECK(mha_forward(out, w, &tr, pr.queries.data, problem_keys(&pr), problem_values(&pr), B, Nq,
                      Nk, m, &mask, NULL, err, sizeof err) == 0);
    /* self-attention: one dX gathers d queries, d keys and d values */
    double *dK = pr.self ? dq : dk, *dV = pr.self ? dq : dv;
    CHECK(mha_backward_additive(dq, dK, dV, &g, &ga, dout, w, &tr, pr.queries.data,
                                problem_keys(&pr), problem_values(&pr), B, Nq, Nk, m, &mask, NULL,
                                err, sizeof err) == 0);
    /* the dot-only entry refuses additive scoring */
    CHECK(mha_backward(dq, dK, dV, &g, dout, w, &tr, pr.queries.data, problem_keys(&pr),
                       problem_values(&pr), B, Nq, Nk, m, &mask, NULL, err, sizeof err) == -1);
    const cJSON *G = cJSON_GetObjectItemCaseSensitive(gr, "grads");
    double worst = 0.0, d;
    if (pr.self) {
        worst = compare_grad(dq, B * Nq * Dq, G, "X", name, &bad);
    } else {
        worst = compare_grad(dq, B * Nq * Dq, G, "queries", name, &bad);
        d = compare_grad(dk, B * Nk * Dk, G, "keys", name, &bad);
        worst = d > worst ? d : worst;
        d = compare_grad(dv, B * Nk * Dv, G, "values", name, &bad);
        worst = d > worst ? d : worst;
    }
    struct {
        const char *key;
        const double *got;
        size_t n;
    } ws[] = {{"W_q.weight", g.dW_q, H * Dq},
              {"W_k.weight", g.dW_k, H * Dk},
              {"W_v.weight", g.dW_v, H * Dv},
              {"W_o.weight", g.dW_o, H * H},
              {"W_q.bias", g.db_q, H},
              {"W_k.bias", g.db_k, H},
              {"W_v.bias", g.db_v, H},
              {"W_o.bias", g.db_o, H},
              {"attention.W_q.weight", ga.da_W_q, SA * p},
              {"attention.W_k.weight", ga.da_W_k, SA * p},
              {"attention.w_v.weight", ga.da_w_v, SA}};
    for (size_t i = 0; i < sizeof ws / sizeof ws[0]; i++) {
        const int in_torch = cJSON_GetObjectItemCaseSensitive(G, ws[i].key) != NULL;
        CHECK_INT(in_torch, ws[i].got != NULL);
        if (!in_torch || !ws[i].got)
            continue;
        d = compare_grad(ws[i].got, ws[i].n, G, ws[i].key, name, &bad);
        worst = d > worst ? d : worst;
    }
    CHECK_INT(bad, 0);
    printf("%-44s backward: max |diff| %.2g\n", name, worst);
    free(out);
    free(w);
    free(tr.Q);
    free(tr.K);
    free(tr.V);
    free(tr.concat);
    free(dq);
    free(dk);
    free(dv);
    free(dout);
    free(g.dW_q);
    free(g.db_q);
    free(g.dW_k);
    free(g.db_k);
    free(g.dW_v);
    free(g.db_v);
    free(g.dW_o);
    free(g.db_o);
    free(ga.da_W_q);
    free(ga.da_W_k);
    free(ga.da_w_v);
    problem_free(&pr);
    cJSON_Delete(fx);
    cJSON_Delete(gr);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void test_softmax(void)
{
    float big[4] = {1e30f, -1e30f, 0.0f, 1e30f};
    float same[5] = {7, 7, 7, 7, 7};
    float masked[3] = {ATTN_MASK_VALUE, ATTN_MASK_VALUE, ATTN_MASK_VALUE};
    size_t k;
    double sum = 0;

    softmax_row(big, 4); /* ±1e30: finite, the two largest share the weight */
    for (k = 0; k < 4; k++) {
        CHECK(isfinite(big[k]));
        sum += big[k];
    }
    CHECK_NEAR(sum, 1.0, 1e-6, 0);
    CHECK_NEAR(big[0], 0.5, 1e-7, 0);
    CHECK_NEAR(big[1], 0.0, 0, 0);
    softmax_row(same, 5); /* all equal: uniform */
    for (k = 0; k < 5; k++)
        CHECK_NEAR(same[k], 0.2, 1e-7, 0);
    softmax_row(masked, 3); /* valid_len 0: every score −1e6, uniform as in d2l */
    for (k = 0; k < 3; k++)
        CHECK_NEAR(masked[k], 1.0 / 3.0, 1e-7, 0);
}

static void test_masks(void)
{
    long lens1[2] = {3, 0};
    long lens2[2 * 3] = {1, 2, 9, 0, 3, 3};
    mha_masks m1 = {lens1, 0, 0, 0}, m2 = {lens2, 1, 0, 0}, causal = {NULL, 0, 1, 0};
    CHECK(!mha_is_masked(&m1, 0, 2, 2, 3));
    CHECK(mha_is_masked(&m1, 0, 2, 3, 3));
    CHECK(mha_is_masked(&m1, 1, 0, 0, 3));
    CHECK(!mha_is_masked(&m2, 0, 2, 8, 3)); /* valid_len 9 >= Nk: nothing masked */
    CHECK(mha_is_masked(&m2, 0, 0, 1, 3));
    CHECK(mha_is_masked(&m2, 1, 0, 0, 3));
    CHECK(!mha_is_masked(&causal, 0, 2, 2, 3));
    CHECK(mha_is_masked(&causal, 0, 2, 3, 3));
}

/* Options for problem_random: B examples of Nq queries and Nk key-value
 * pairs, H hiddens in NH heads, inputs of widths Dq, Dk, Dv drawn from
 * seed, lengths (B, Nq) or (B,) from lens (vl_ndim 2 or 1). */
static void random_opts(problem_opts *o, const long size[5], long Dq, long Dk, long Dv, int bias,
                        unsigned long long seed, long *lens, int vl_ndim)
{
    memset(o, 0, sizeof *o);
    o->batch = size[0];
    o->queries = size[1];
    o->kv = size[2];
    o->hiddens = size[3];
    o->heads = size[4];
    o->query_size = Dq;
    o->key_size = Dk;
    o->value_size = Dv;
    o->bias = bias;
    o->fill_random = 1;
    o->seed = seed;
    o->max_mem = (size_t)1 << 30;
    o->valid_lens = lens;
    o->vl_ndim = vl_ndim;
    o->vl_shape[0] = (size_t)size[0];
    o->vl_shape[1] = (size_t)size[1];
}

/* Sizes that cross the blocks of the fast path (48 queries, 512 keys,
 * 6 × 16 or 6 × 32 tiles and their pairs, 96-row blocks of the
 * projections): the fast and streaming paths against the reference loops,
 * with 2-D lengths, causal masks, biases and dropout; Nq ≠ Nk and Dq, Dk,
 * Dv all different. The last two cases have work enough (over 2e7
 * multiply-adds) for the fast path to use every core. */
static void test_blocks(void)
{
    static const struct {
        long B, Nq, Nk, H, NH, D;
        int causal, bias;
        double dropout;
    } cases[] = {
        {2, 130, 530, 24, 3, 300, 1, 1, 0.0},
        {1, 65, 257, 16, 1, 7, 0, 0, 0.0},
        {3, 7, 1000, 40, 5, 13, 0, 1, 0.3},
        {1, 200, 200, 64, 2, 64, 1, 0, 0.5},
        {2, 251, 601, 160, 2, 97, 0, 1, 0.0},
        {1, 389, 389, 96, 3, 130, 1, 0, 0.2},
    };
    size_t c;
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        problem_opts o;
        problem pr;
        long lens[2 * 400]; /* B × Nq of the largest case */
        char err[256];
        int usage;
        size_t i, H, NH, nout, nw, pass;
        float *ref, *refw, *out, *w;
        double worst = 0;
        mha_masks mask;
        mha_dropout drop = {cases[c].dropout, 42};

        const long size[5] = {cases[c].B, cases[c].Nq, cases[c].Nk, cases[c].H, cases[c].NH};
        random_opts(&o, size, cases[c].D, cases[c].D + 1, cases[c].D + 2, cases[c].bias, 1000 + c,
                    lens, 2);
        for (i = 0; i < (size_t)(cases[c].B * cases[c].Nq); i++)
            lens[i] = (long)((i * 7919) % (size_t)(cases[c].Nk + 20)); /* 0 … Nk+19 */
        if (problem_random(&pr, &o, err, sizeof err, &usage)) {
            fprintf(stderr, "%s\n", err);
            CHECK(0);
            continue;
        }
        H = pr.params.num_hiddens;
        NH = pr.params.num_heads;
        nout = pr.B * pr.Nq * H;
        nw = pr.B * NH * pr.Nq * pr.Nk;
        mask.valid_lens = pr.valid_lens;
        mask.per_query = 1;
        mask.causal = cases[c].causal;
        ref = malloc(nout * sizeof *ref);
        refw = malloc(nw * sizeof *refw);
        out = malloc(nout * sizeof *out);
        w = malloc(nw * sizeof *w);
        CHECK(ref && refw && out && w);
        if (ref && refw && out && w &&
            mha_forward(ref, refw, NULL, pr.queries.data, problem_keys(&pr), problem_values(&pr),
                        pr.B, pr.Nq, pr.Nk, &pr.params, &mask, &drop, err, sizeof err) == 0) {
            for (pass = 0; pass < 2; pass++) {
                int bad = 0;
                CHECK(mha_forward_fast(out, pass ? NULL : w, pr.queries.data, problem_keys(&pr),
                                       problem_values(&pr), pr.B, pr.Nq, pr.Nk, &pr.params, &mask,
                                       &drop, err, sizeof err) == 0);
                for (i = 0; i < nout; i++) {
                    double d = fabs((double)out[i] - ref[i]);
                    worst = d > worst ? d : worst;
                    bad += !(d <= 1e-5 + 1e-4 * fabs(ref[i]));
                }
                for (i = 0; !pass && i < nw; i++)
                    bad += !(fabs((double)w[i] - refw[i]) <= 1e-6 + 1e-5 * fabs(refw[i]));
                CHECK_INT(bad, 0);
            }
            printf("blocks: B=%zu Nq=%zu Nk=%zu H=%zu NH=%zu%s%s dropout %.1f: fast vs "
                   "reference %.2g\n", pr.B, pr.Nq, pr.Nk, H, NH, cases[c].causal ? " causal" : "",
                   cases[c].bias ? " bias" : "", cases[c].dropout, worst);
        }
        free(ref);
        free(refw);
        free(out);
        free(w);
        problem_free(&pr);
    }
}

/* --window R (the restricted self-attention): the fast path, with the
 * weights kept and streaming, against the reference loops, on sizes
 * whose windows cross the fast path's blocks of keys, with and without
 * causal, lengths and dropout. */
static void test_window_blocks(void)
{
    static const struct {
        long B, Nq, Nk, H, NH, D, R;
        int causal;
        double dropout;
    } cases[] = {
        {2, 130, 130, 24, 3, 30, 3, 0, 0.0},   {1, 300, 300, 16, 2, 7, 65, 0, 0.0},
        {1, 300, 300, 16, 2, 7, 65, 1, 0.0},   {2, 257, 257, 32, 4, 20, 1, 0, 0.3},
        {1, 520, 520, 16, 1, 9, 257, 1, 0.2},  {1, 70, 200, 16, 2, 9, 31, 0, 0.0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        problem_opts o;
        problem pr;
        long lens[2 * 520]; /* B × Nq of the largest case */
        char err[256];
        int usage;
        float *ref, *refw, *out, *w;
        double worst = 0;
        mha_masks mask;
        mha_dropout drop = {cases[c].dropout, 7};
        const long size[5] = {cases[c].B, cases[c].Nq, cases[c].Nk, cases[c].H, cases[c].NH};
        random_opts(&o, size, cases[c].D, cases[c].D + 1, cases[c].D + 2, 1, 2000 + c, lens, 2);
        for (size_t i = 0; i < (size_t)(cases[c].B * cases[c].Nq); i++)
            lens[i] = (long)((i * 7919) % (size_t)(cases[c].Nk + 20)); /* 0 … Nk+19 */
        if (problem_random(&pr, &o, err, sizeof err, &usage)) {
            fprintf(stderr, "%s\n", err);
            CHECK(0);
            continue;
        }
        const size_t H = pr.params.num_hiddens, NH = pr.params.num_heads;
        const size_t nout = pr.B * pr.Nq * H, nw = pr.B * NH * pr.Nq * pr.Nk;
        mask.valid_lens = c % 2 ? pr.valid_lens : NULL; /* lengths in every other case */
        mask.per_query = 1;
        mask.causal = cases[c].causal;
        mask.window = (size_t)cases[c].R;
        ref = malloc(nout * sizeof *ref);
        refw = malloc(nw * sizeof *refw);
        out = malloc(nout * sizeof *out);
        w = malloc(nw * sizeof *w);
        CHECK(ref && refw && out && w);
        if (ref && refw && out && w &&
            mha_forward(ref, refw, NULL, pr.queries.data, problem_keys(&pr), problem_values(&pr),
                        pr.B, pr.Nq, pr.Nk, &pr.params, &mask, &drop, err, sizeof err) == 0) {
            for (size_t pass = 0; pass < 2; pass++) {
                int bad = 0;
                CHECK(mha_forward_fast(out, pass ? NULL : w, pr.queries.data, problem_keys(&pr),
                                       problem_values(&pr), pr.B, pr.Nq, pr.Nk, &pr.params, &mask,
                                       &drop, err, sizeof err) == 0);
                for (size_t i = 0; i < nout; i++) {
                    double d = fabs((double)out[i] - ref[i]);
                    worst = d > worst ? d : worst;
                    bad += !(d <= 1e-5 + 1e-4 * fabs(ref[i]));
                }
                for (size_t i = 0; !pass && i < nw; i++)
                    bad += !(fabs((double)w[i] - refw[i]) <= 1e-6 + 1e-5 * fabs(refw[i]));
                CHECK_INT(bad, 0);
            }
            printf("window: B=%zu Nq=%zu Nk=%zu R=%ld%s%s dropout %.1f: fast vs reference "
                   "%.2g\n", pr.B, pr.Nq, pr.Nk, cases[c].R, cases[c].causal ? " causal" : "",
                   mask.valid_lens ? " lengths" : "", cases[c].dropout, worst);
        }
        free(ref);
        free(refw);
        free(out);
        free(w);
        problem_free(&pr);
    }
}

/* --window R by hand: which keys each query sees (mha_is_masked), then the
 * weights of a small layer: zero exactly outside the window, positive
 * inside, each row summing to 1. */
static void test_window_by_hand(void)
{
    /* R = 3: query 2 sees keys 1, 2, 3; query 0 sees 0, 1 (the edge) */
    const mha_masks r3 = {NULL, 0, 0, 3}, r3c = {NULL, 0, 1, 3}, r1 = {NULL, 0, 0, 1};
    const long len3[1] = {3};
    const mha_masks r5len = {len3, 0, 0, 5};
    CHECK(mha_is_masked(&r3, 0, 2, 0, 6));
    CHECK(!mha_is_masked(&r3, 0, 2, 1, 6));
    CHECK(!mha_is_masked(&r3, 0, 2, 2, 6));
    CHECK(!mha_is_masked(&r3, 0, 2, 3, 6));
    CHECK(mha_is_masked(&r3, 0, 2, 4, 6));
    CHECK(!mha_is_masked(&r3, 0, 0, 1, 6) && mha_is_masked(&r3, 0, 0, 2, 6));
    /* causal R = 3: query 4 sees keys 2, 3, 4 */
    CHECK(mha_is_masked(&r3c, 0, 4, 1, 6));
    CHECK(!mha_is_masked(&r3c, 0, 4, 2, 6) && !mha_is_masked(&r3c, 0, 4, 4, 6));
    CHECK(mha_is_masked(&r3c, 0, 4, 5, 6));
    /* R = 1: the query's own key only */
    CHECK(!mha_is_masked(&r1, 0, 3, 3, 6) && mha_is_masked(&r1, 0, 3, 2, 6) &&
          mha_is_masked(&r1, 0, 3, 4, 6));
    /* R = 5 and valid_len 3: query 1 sees keys 0 … 2 (3 is beyond the length) */
    CHECK(!mha_is_masked(&r5len, 0, 1, 2, 6) && mha_is_masked(&r5len, 0, 1, 3, 6));

    /* a layer: B 1, N 7, H 4, 2 heads, R 3 and causal R 3 */
    for (int causal = 0; causal < 2; causal++) {
        problem_opts o;
        problem pr;
        char err[256];
        int usage;
        float out[7 * 4], w[2 * 7 * 7];
        const long size[5] = {1, 7, 7, 4, 2};
        const mha_masks m = {NULL, 0, causal, 3};
        const mha_dropout none = {0.0, 0};
        random_opts(&o, size, 5, 6, 7, 0, 77, NULL, 0);
        if (problem_random(&pr, &o, err, sizeof err, &usage)) {
            fprintf(stderr, "%s\n", err);
            CHECK(0);
            continue;
        }
        CHECK(mha_forward(out, w, NULL, pr.queries.data, problem_keys(&pr), problem_values(&pr),
                          1, 7, 7, &pr.params, &m, &none, err, sizeof err) == 0);
        int zero_ok = 1, sum_ok = 1;
        for (size_t h = 0; h < 2; h++)
            for (size_t i = 0; i < 7; i++) {
                double sum = 0.0;
                for (size_t j = 0; j < 7; j++) {
                    const float x = w[(h * 7 + i) * 7 + j];
                    /* by hand: |i − j| ≤ 1; causal: i − 2 ≤ j ≤ i */
                    const int inside = causal ? j <= i && i - j <= 2
                                              : (i > j ? i - j : j - i) <= 1;
                    zero_ok &= inside ? x > 0.0f : x == 0.0f;
                    sum += x;
                }
                sum_ok &= fabs(sum - 1.0) <= 1e-6;
            }
        CHECK(zero_ok);
        CHECK(sum_ok);
        problem_free(&pr);
    }
}

/* ---- numerics at the limits of float32 --------------------------------- */

/* Every weight finite, each row summing to 1 within 1e-6; with uniform,
 * each weight 1/(the row's unmasked keys) within 1e-6. Returns the number
 * of bad rows. */
static int check_weight_rows(const float *w, size_t rows, size_t Nk, const problem *pr,
                             int causal, int uniform)
{
    mha_masks mask = {pr->valid_lens, pr->vl_ndim == 2, causal, 0};
    const size_t NH = pr->params.num_heads;
    size_t r, k;
    int bad = 0;
    for (r = 0; r < rows; r++) {
        const float *row = w + r * Nk;
        const size_t q = r % pr->Nq, b = r / (pr->Nq * NH);
        double sum = 0.0;
        size_t valid = 0;
        int ok = 1;
        for (k = 0; k < Nk; k++) {
            ok &= isfinite(row[k]) && row[k] >= 0.0f;
            sum += row[k];
            valid += !mha_is_masked(&mask, b, q, k, pr->Nq);
        }
        ok &= fabs(sum - 1.0) <= 1e-6;
        if (uniform) {
            double want = valid ? 1.0 / (double)valid : 1.0 / (double)Nk;
            for (k = 0; k < Nk; k++)
                ok &= fabs(row[k] - (mha_is_masked(&mask, b, q, k, pr->Nq) && valid ? 0.0
                                                                                   : want)) <= 1e-6;
        }
        if (!ok && bad++ < 3)
            fprintf(stderr, "weights row %zu: sum %.9g, first %.9g\n", r, sum, row[0]);
    }
    return bad;
}

static size_t count_nonfinite(const float *x, size_t n)
{
    size_t i, bad = 0;
    for (i = 0; i < n; i++)
        bad += !isfinite(x[i]);
    return bad;
}

/* Scores up to ±1e30 and beyond float32 (saturated), inputs near FLT_MAX
 * that overflow the projections, all-equal rows: the reference, the fast
 * and the streaming loops give finite weights that sum to 1 within 1e-6
 * (uniform for equal rows), and a finite output. */
static void test_extremes(void)
{
    static const struct {
        const char *what;
        double scale;  /* X = scale · (±1 or a random sign) */
        int no_proj;   /* identity projections: scores = X Xᵀ / sqrt(p) */
        int equal;     /* every entry of X the same: uniform weights */
        int lens, causal;
    } cases[] = {
        {"scores up to ±1e30", 1e15, 1, 0, 0, 0},
        {"scores beyond float32, masked", 3e38, 1, 0, 1, 1},
        {"projections overflow float32", 1e38, 0, 0, 0, 0},
        {"projections overflow float32, masked", FLT_MAX, 0, 0, 1, 0},
        {"all-equal rows", 0.5, 1, 1, 0, 0},
        {"all-equal rows of 1e30", 1e30, 1, 1, 1, 0},
        {"all-equal rows near FLT_MAX", 3e38, 0, 1, 0, 0},
    };
    /* (equal rows are uniform over the unmasked keys when their scores are
     * above the mask's −1e6, as with X·X here; a score saturated to −FLT_MAX
     * loses to a masked key's −1e6, in d2l as here) */
    size_t c;
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        problem_opts o;
        problem pr;
        long lens[2] = {7, 0}; /* valid_len 0: every key masked, uniform as in d2l */
        char err[256];
        int usage, pass;
        size_t i, nout, nw;
        float *out, *w;
        mha_masks mask;

        memset(&o, 0, sizeof o);
        o.self = 1;
        o.batch = 2;
        o.queries = 300; /* crosses the fast path's query and key blocks */
        o.hiddens = 8;
        o.heads = 2;
        o.no_proj = cases[c].no_proj;
        o.bias = !cases[c].no_proj;
        o.fill_random = 1;
        o.seed = 77 + c;
        o.max_mem = (size_t)1 << 30;
        if (cases[c].lens) {
            o.valid_lens = lens;
            o.vl_ndim = 1;
            o.vl_shape[0] = 2;
            o.vl_shape[1] = 1;
        } else {
            o.no_valid_lens = 1;
        }
        if (problem_random(&pr, &o, err, sizeof err, &usage)) {
            fprintf(stderr, "%s: %s\n", cases[c].what, err);
            CHECK(0);
            continue;
        }
        for (i = 0; i < pr.queries.size; i++) {
            double sign = cases[c].equal || pr.queries.data[i] >= 0 ? 1.0 : -1.0;
            pr.queries.data[i] = (float)(sign * cases[c].scale);
        }
        nout = pr.B * pr.Nq * pr.params.num_hiddens;
        nw = pr.B * pr.params.num_heads * pr.Nq * pr.Nk;
        mask.valid_lens = pr.valid_lens;
        mask.per_query = 0;
        mask.causal = cases[c].causal;
        out = malloc(nout * sizeof *out);
        w = malloc(nw * sizeof *w);
        CHECK(out && w);
        for (pass = 0; out && w && pass < 3; pass++) { /* reference, fast, streaming */
            int status = pass == 0
                ? mha_forward(out, w, NULL, pr.queries.data, problem_keys(&pr),
                              problem_values(&pr), pr.B, pr.Nq, pr.Nk, &pr.params, &mask, NULL,
                              err, sizeof err)
                : mha_forward_fast(out, pass == 1 ? w : NULL, pr.queries.data,
                                   problem_keys(&pr), problem_values(&pr), pr.B, pr.Nq, pr.Nk,
                                   &pr.params, &mask, NULL, err, sizeof err);
            CHECK_INT(status, 0);
            if (pass < 2)
                CHECK_INT(check_weight_rows(w, nw / pr.Nk, pr.Nk, &pr, cases[c].causal,
                                            cases[c].equal), 0);
            CHECK_INT(count_nonfinite(out, nout), 0);
            if (pass == 2)
                printf("extremes: %-40s reference, fast, streaming: finite, rows sum to 1\n",
                       cases[c].what);
        }
        free(out);
        free(w);
        problem_free(&pr);
    }
}

/* softmax_row on ±inf, ±FLT_MAX and mixed: finite, summing to 1. */
static void test_softmax_limits(void)
{
    float rows[][4] = {
        {INFINITY, INFINITY, 0.0f, -INFINITY},
        {-INFINITY, -INFINITY, -INFINITY, -INFINITY},
        {FLT_MAX, -FLT_MAX, FLT_MAX, -FLT_MAX},
        {-FLT_MAX, -FLT_MAX, -FLT_MAX, -FLT_MAX},
        {1e30f, 1e30f, 1e30f, 1e30f},
    };
    static const float want[][4] = {
        {0.5f, 0.5f, 0.0f, 0.0f},
        {0.25f, 0.25f, 0.25f, 0.25f},
        {0.5f, 0.0f, 0.5f, 0.0f},
        {0.25f, 0.25f, 0.25f, 0.25f},
        {0.25f, 0.25f, 0.25f, 0.25f},
    };
    size_t r, k;
    for (r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        double sum = 0.0;
        softmax_row(rows[r], 4);
        for (k = 0; k < 4; k++) {
            CHECK(isfinite(rows[r][k]));
            CHECK_NEAR(rows[r][k], want[r][k], 1e-7, 0);
            sum += rows[r][k];
        }
        CHECK_NEAR(sum, 1.0, 1e-6, 0);
    }
}

/* The online softmax of attention.c, by hand: p = 1, q = 1, keys 0, 2, 1
 * (scores 0, 2, 1 since sqrt(1) = 1), values 1, 0, 3, blocks of 2.
 * Block 0: max 2, m −inf → 2, rescale 0, l = 1 + e^−2, acc = e^−2·1.
 * Block 1: max 1, m stays 2, rescale 1, l += e^−1, acc += e^−1·3.
 * With valid_len 2 the third key scores −1e6 and adds nothing. */
static void test_online_by_hand(void)
{
    const float q[1] = {1}, K[3] = {0, 2, 1}, V[3] = {1, 0, 3};
    const long two[1] = {2};
    const mha_masks none = {NULL, 0, 0, 0}, len2 = {two, 0, 0, 0};
    const double e1 = exp(-1.0), e2 = exp(-2.0);
    mha_online r;

    CHECK(mha_online_alloc(&r, 3, 1, 2) == 0);
    if (r.acc == NULL)
        return;
    CHECK_INT(r.nblocks, 2);
    mha_online_row(&r, q, K, V, 1, 3, &none, 0, 0, 1);
    CHECK_NEAR(r.scores[0], 0.0, 0, 0);
    CHECK_NEAR(r.scores[1], 2.0, 0, 0);
    CHECK_NEAR(r.scores[2], 1.0, 0, 0);
    CHECK_NEAR(r.block_max[0], 2.0, 0, 0);
    CHECK_NEAR(r.block_max[1], 1.0, 0, 0);
    CHECK(r.m[0] == -INFINITY);
    CHECK_NEAR(r.m[1], 2.0, 0, 0);
    CHECK_NEAR(r.m[2], 2.0, 0, 0);
    CHECK_NEAR(r.rescale[0], 0.0, 0, 0);
    CHECK_NEAR(r.rescale[1], 1.0, 0, 0);
    CHECK_NEAR(r.block_sum[0], 1.0 + e2, 1e-15, 1e-15);
    CHECK_NEAR(r.block_sum[1], e1, 1e-15, 1e-15);
    CHECK_NEAR(r.l[1], 1.0 + e2, 1e-15, 1e-15);
    CHECK_NEAR(r.l[2], 1.0 + e2 + e1, 1e-15, 1e-15);
    CHECK_NEAR(r.acc[1], e2, 1e-15, 1e-15);
    CHECK_NEAR(r.acc[2], e2 + 3 * e1, 1e-15, 1e-15);
    CHECK_NEAR(r.out[0], (e2 + 3 * e1) / (1 + e2 + e1), 1e-15, 1e-15);
    {
        /* the softmax weights of scores 0, 2, 1 give the same output */
        const float w[3] = {(float)(e2 / (1 + e2 + e1)), (float)(1 / (1 + e2 + e1)),
                            (float)(e1 / (1 + e2 + e1))};
        CHECK(mha_online_diff(&r, w, V, 1, 3) < 1e-7);
    }

    /* the first block already has the larger maximum: m −inf → 2 → 2 */
    mha_online_row(&r, q, K, V, 1, 3, &len2, 0, 0, 1);
    CHECK_NEAR(r.scores[2], -1e6, 0, 0);
    CHECK_NEAR(r.block_max[1], -1e6, 0, 0);
    CHECK_NEAR(r.m[2], 2.0, 0, 0);
    CHECK_NEAR(r.block_sum[1], 0.0, 0, 0);
    CHECK_NEAR(r.out[0], e2 / (1 + e2), 1e-15, 1e-15);

    /* one block per key: the maximum grows at key 1, rescaling key 0's term
     * by e^(0 − 2) */
    mha_online_free(&r);
    CHECK(mha_online_alloc(&r, 3, 1, 1) == 0);
    if (r.acc == NULL)
        return;
    CHECK_INT(r.nblocks, 3);
    mha_online_row(&r, q, K, V, 1, 3, &none, 0, 0, 1);
    CHECK_NEAR(r.l[1], 1.0, 0, 0);
    CHECK_NEAR(r.rescale[1], e2, 1e-15, 1e-15);
    CHECK_NEAR(r.l[2], e2 + 1.0, 1e-15, 1e-15);
    CHECK_NEAR(r.rescale[2], 1.0, 0, 0);
    CHECK_NEAR(r.out[0], (e2 + 3 * e1) / (1 + e2 + e1), 1e-15, 1e-15);
    mha_online_free(&r);
    CHECK(mha_online_alloc(&r, 3, 1, 0) == -1);
}

/* The online softmax row by row, against the reference loops' weights·V
 * and, through W_o, against mha_forward's output and the fast streaming
 * loops' (weights never stored), at block sizes that do and do not divide
 * Nk, with lengths per example or per query and causal masks. */
static void test_online_blocks(void)
{
    static const struct {
        long B, Nq, Nk, H, NH, block;
        int per_query, causal;
    } cases[] = {
        {2, 5, 7, 6, 2, 1, 0, 0},     {2, 5, 7, 6, 2, 2, 0, 1}, {1, 9, 13, 8, 4, 4, 1, 0},
        {3, 4, 70, 12, 3, 64, 1, 1},  {1, 3, 5, 4, 1, 5, 0, 0}, {2, 6, 5, 10, 5, 7, 1, 1},
        {1, 66, 300, 16, 2, 3, 1, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        problem_opts o;
        problem pr;
        long lens[66];
        char err[256];
        int usage;
        const long size[5] = {cases[c].B, cases[c].Nq, cases[c].Nk, cases[c].H, cases[c].NH};
        const size_t nl = (size_t)(cases[c].per_query ? cases[c].B * cases[c].Nq : cases[c].B);
        for (size_t i = 0; i < nl; i++)
            lens[i] = 1 + (long)((i * 31) % (size_t)cases[c].Nk); /* 1 … Nk */
        random_opts(&o, size, cases[c].H + 1, cases[c].H + 2, cases[c].H + 3, 1, 77 + c, lens,
                    cases[c].per_query ? 2 : 1);
        if (problem_random(&pr, &o, err, sizeof err, &usage)) {
            fprintf(stderr, "%s\n", err);
            CHECK(0);
            continue;
        }
        const size_t B = pr.B, Nq = pr.Nq, Nk = pr.Nk, H = pr.params.num_hiddens;
        const size_t NH = pr.params.num_heads, p = H / NH;
        const mha_masks mask = {pr.valid_lens, cases[c].per_query, cases[c].causal, 0};
        const mha_dropout nodrop = {0.0, 0};
        float *ref = calloc(B * Nq * H, sizeof(float)), *w = calloc(B * NH * Nq * Nk, 4);
        float *Q = calloc(B * Nq * H, 4), *K = calloc(B * Nk * H, 4), *V = calloc(B * Nk * H, 4);
        float *concat = calloc(B * Nq * H, 4), *out = calloc(B * Nq * H, 4);
        float *fast = calloc(B * Nq * H, 4);
        mha_trace t = {0};
        mha_online r;
        double worst_row = 0, worst_out = 0, worst_fast = 0;
        int bad = 0;
        t.Q = Q;
        t.K = K;
        t.V = V;
        CHECK(mha_online_alloc(&r, Nk, p, (size_t)cases[c].block) == 0);
        CHECK(ref && w && Q && K && V && concat && out && fast);
        if (ref && w && Q && K && V && concat && out && fast && r.acc &&
            mha_forward(ref, w, &t, pr.queries.data, problem_keys(&pr), problem_values(&pr), B, Nq,
                        Nk, &pr.params, &mask, &nodrop, err, sizeof err) == 0 &&
            mha_forward_fast(fast, NULL, pr.queries.data, problem_keys(&pr), problem_values(&pr), B,
                             Nq, Nk, &pr.params, &mask, &nodrop, err, sizeof err) == 0) {
            CHECK_INT(r.nblocks, (Nk + (size_t)cases[c].block - 1) / (size_t)cases[c].block);
            for (size_t b = 0; b < B; b++)
                for (size_t h = 0; h < NH; h++)
                    for (size_t q = 0; q < Nq; q++) {
                        const float *V_h = V + b * Nk * H + h * p;
                        mha_online_row(&r, Q + (b * Nq + q) * H + h * p, K + b * Nk * H + h * p,
                                        V_h, H, Nk, &mask, b, q, Nq);
                        double d =
                            mha_online_diff(&r, w + ((b * NH + h) * Nq + q) * Nk, V_h, H, Nk);
                        worst_row = d > worst_row ? d : worst_row;
                        bad += !(d <= 1e-6);
                        /* the running sum ends at Σ e^(s − max) ≥ 1 */
                        bad += !(r.l[r.nblocks] >= 1.0);
                        for (size_t i = 0; i < p; i++)
                            concat[(b * Nq + q) * H + h * p + i] = (float)r.out[i];
                    }
            linear_forward(out, concat, B * Nq, &pr.params.W_o);
            for (size_t i = 0; i < B * Nq * H; i++) {
                double d = fabs((double)out[i] - ref[i]), f = fabs((double)out[i] - fast[i]);
                worst_out = d > worst_out ? d : worst_out;
                worst_fast = f > worst_fast ? f : worst_fast;
                bad += !(d <= 1e-5 + 1e-5 * fabs(ref[i]));
                bad += !(f <= 1e-5 + 1e-4 * fabs(ref[i]));
            }
            CHECK_INT(bad, 0);
            printf("online softmax: B=%zu Nq=%zu Nk=%zu H=%zu NH=%zu block %ld: against "
                   "weights·V %.2g, reference output %.2g, fast streaming %.2g\n",
                   B, Nq, Nk, H, NH, cases[c].block, worst_row, worst_out, worst_fast);
        } else {
            CHECK(0);
        }
        mha_online_free(&r);
        free(ref);
        free(w);
        free(Q);
        free(K);
        free(V);
        free(concat);
        free(out);
        free(fast);
        problem_free(&pr);
    }
}

/* Multiply-adds by hand: B = 2, Nq = 3, Nk = 5, Dq = 7, Dk = 11, Dv = 13,
 * H = 4: projections 2·(3·7·4 + 5·11·4 + 5·13·4 + 3·4·4) = 2·612 = 1224,
 * scores and weights·V 2·2·3·5·4 = 240. */
static void test_forward_macs(void)
{
    CHECK_NEAR(mha_forward_macs(2, 3, 5, 7, 11, 13, 4), 1464.0, 0, 0);
    CHECK_NEAR(mha_forward_macs(1, 1, 1, 1, 1, 1, 1), 6.0, 0, 0);
}

/* Cosines by hand: (1, 0, 1)·(1, 1, 0) = 1 over √2·√2: 1/2; opposite: −1;
 * a zero vector: 0. */
static void test_cosine(void)
{
    const float x[3] = {1, 0, 1}, y[3] = {1, 1, 0}, z[3] = {0, 0, 0}, mx[3] = {-2, 0, -2};
    CHECK_NEAR(mha_cosine(x, y, 3), 0.5, 1e-15, 0);
    CHECK_NEAR(mha_cosine(x, mx, 3), -1.0, 1e-15, 0);
    CHECK_NEAR(mha_cosine(x, z, 3), 0.0, 0, 0);
}

int main(int argc, char **argv)
{
    DIR *d;
    struct dirent *e;
    char *names[256];
    size_t n = 0, i;
    int ran = 0;

    if (argc != 2) {
        fprintf(stderr, "usage: test_attention FIXTURE_DIR\n");
        return 2;
    }
    d = opendir(argv[1]);
    CHECK(d != NULL);
    if (!d)
        return check_summary("test_attention");
    while ((e = readdir(d)) != NULL && n < 256) {
        size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0) {
            names[n] = malloc(len + 1);
            if (names[n])
                memcpy(names[n++], e->d_name, len + 1);
        }
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    for (i = 0; i < n; i++) {
        ran += test_fixture(argv[1], names[i]);
        free(names[i]);
    }
    CHECK(ran >= 25);
    test_additive_backward(argv[1], "12_additive_nomask");
    test_additive_backward(argv[1], "13_additive_valid_lens_1d");
    test_additive_backward(argv[1], "14_additive_valid_lens_2d");
    test_additive_backward(argv[1], "15_additive_causal_selfattn");
    printf("%d fixtures compared with PyTorch\n", ran);
    test_softmax();
    test_masks();
    test_blocks();
    test_window_blocks();
    test_window_by_hand();
    test_extremes();
    test_softmax_limits();
    test_online_by_hand();
    test_online_blocks();
    test_forward_macs();
    test_cosine();
    return check_summary("test_attention");
}
