/* test_score.c — d2l 10.3's scoring functions against PyTorch.
 *
 * usage: test_score FIXTURE_DIR
 * Every tests/ref/score/NN_name.json (scripts/gen_score_ref.py) is run
 * through nn/attention/score's loops, and its scores, attention weights
 * and output compared with PyTorch's float64 and float32 results,
 * |attn − torch| <= 1e-6 + 1e-6·|torch|; the largest differences are
 * printed. Then masked_softmax's cases against the formula by hand: 1-D
 * and 2-D valid_lens, a length 0 (equal weights) and one above Nk; and the
 * sum score by hand, both queries given the same weights. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "json_in.h"
#include "score.h"

#define TOL 1e-6

static double worst64, worst32;

/* Largest |got − want| over n numbers of the nested array want; counts
 * those outside the tolerance. */
static double compare(const float *got, const cJSON *want, size_t n, const char *what,
                      const char *name)
{
    tensor t;
    char err[256];
    double worst = 0.0;
    if (json_get_tensor(want, what, 1, 4, &t, err, sizeof err) || t.size != n) {
        fprintf(stderr, "%s: %s: unreadable or %zu numbers\n", name, what, n);
        CHECK(0);
        return INFINITY;
    }
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - t.data[i]);
        worst = d > worst ? d : worst;
        if (!(d <= TOL + TOL * fabs(t.data[i])))
            fprintf(stderr, "%s: %s[%zu] = %.9g, torch %.9g\n", name, what, i, got[i],
                    t.data[i]);
        CHECK(d <= TOL + TOL * fabs(t.data[i]));
    }
    tensor_free(&t);
    return worst;
}

static const cJSON *member(const cJSON *o, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(o, name);
}

static int get(const cJSON *root, const char *name, tensor *t)
{
    char err[256];
    int bad = json_get_tensor(member(root, name), name, 2, 3, t, err, sizeof err);
    if (bad)
        fprintf(stderr, "%s\n", err);
    CHECK(!bad);
    return bad;
}

/* One fixture: the forward pass, then both precisions compared. */
static void run_fixture(const cJSON *root, const char *name)
{
    tensor q, k, v;
    score_additive m;
    score_general g;
    long *lens = NULL;
    size_t vl_ndim = 0, vshape[2];
    char err[256];
    memset(&m, 0, sizeof m);
    memset(&g, 0, sizeof g);
    if (get(root, "queries", &q) || get(root, "keys", &k) || get(root, "values", &v))
        return;
    const size_t B = q.shape[0], Nq = q.shape[1], Nk = k.shape[1], Dv = v.shape[2];
    const char *kind = member(root, "score")->valuestring;
    const int additive = strcmp(kind, "additive") == 0, general = strcmp(kind, "general") == 0;
    const int sum = strcmp(kind, "sum") == 0;
    const cJSON *vl = member(root, "valid_lens");
    if (!cJSON_IsNull(vl))
        CHECK(json_get_lens(vl, "valid_lens", 1000, &lens, &vl_ndim, vshape, err, sizeof err) == 0);
    const mha_masks mask = {lens, vl_ndim == 2, 0, 0};
    float *scores = malloc(B * Nq * Nk * sizeof(float)), *out = malloc(B * Nq * Dv * sizeof(float));
    float *weights = malloc(B * Nq * Nk * sizeof(float));
    CHECK(scores && out && weights);
    if (additive) {
        const cJSON *sd = member(root, "state_dict");
        get(sd, "W_q.weight", &m.W_q.weight);
        get(sd, "W_k.weight", &m.W_k.weight);
        get(sd, "w_v.weight", &m.w_v.weight);
        const size_t h = m.W_q.weight.shape[0];
        float *qh = malloc(B * Nq * h * sizeof(float)), *kh = malloc(B * Nk * h * sizeof(float));
        CHECK(qh && kh);
        score_additive_scores(scores, qh, kh, q.data, k.data, B, Nq, Nk, &m);
        free(qh);
        free(kh);
    } else if (general) {
        const size_t Dk = k.shape[2];
        float *qw = malloc(B * Nq * Dk * sizeof(float));
        CHECK(qw != NULL);
        get(member(root, "state_dict"), "W.weight", &g.W.weight);
        CHECK(g.W.weight.shape[0] == Dk && g.W.weight.shape[1] == q.shape[2]);
        score_general_scores(scores, qw, q.data, k.data, B, Nq, Nk, &g);
        free(qw);
    } else if (sum) {
        CHECK(q.shape[2] == k.shape[2]);
        score_sum(scores, q.data, k.data, B, Nq, Nk, q.shape[2]);
    } else {
        score_dot(scores, q.data, k.data, B, Nq, Nk, q.shape[2]);
    }
    memcpy(weights, scores, B * Nq * Nk * sizeof(float));
    score_masked_softmax(weights, B, Nq, Nk, &mask);
    score_weighted_sum(out, weights, v.data, B, Nq, Nk, Dv);
    for (int p = 0; p < 2; p++) {
        const cJSON *ref = member(root, p ? "float32" : "float64");
        double w = 0.0, d;
        d = compare(scores, member(ref, "scores"), B * Nq * Nk, "scores", name);
        w = d > w ? d : w;
        d = compare(weights, member(ref, "attention_weights"), B * Nq * Nk, "weights", name);
        w = d > w ? d : w;
        d = compare(out, member(ref, "output"), B * Nq * Dv, "output", name);
        w = d > w ? d : w;
        printf("%-36s %s: max |attn - torch| %.3g\n", name, p ? "float32" : "float64", w);
        if (p)
            worst32 = w > worst32 ? w : worst32;
        else
            worst64 = w > worst64 ? w : worst64;
    }
    score_additive_free(&m);
    score_general_free(&g);
    tensor_free(&q);
    tensor_free(&k);
    tensor_free(&v);
    free(lens);
    free(scores);
    free(out);
    free(weights);
}

static int test_fixture(const char *dir, const char *name)
{
    char path[1024], err[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    cJSON *root = json_read_file(path, (size_t)1 << 26, err, sizeof err);
    CHECK(root != NULL);
    if (!root) {
        fprintf(stderr, "%s\n", err);
        return 0;
    }
    run_fixture(root, name);
    cJSON_Delete(root);
    return 1;
}

/* masked_softmax by the formula: e^x over the unmasked keys / their sum,
 * 0 at the masked ones; all masked: 1/Nk each. */
static void test_masked_softmax_by_hand(void)
{
    const float X0[2 * 2 * 3] = {0.1f, 0.7f, -0.3f, 1.2f, 0.0f, 0.5f,
                                 -1.0f, 2.0f, 0.25f, 0.3f, 0.3f, -0.6f};
    const long lens1[2] = {2, 0}, lens2[4] = {1, 3, 0, 7};
    const mha_masks cases[3] = {{lens1, 0, 0, 0}, {lens2, 1, 0, 0}, {NULL, 0, 0, 0}};
    for (int c = 0; c < 3; c++) {
        float X[12];
        memcpy(X, X0, sizeof X);
        score_masked_softmax(X, 2, 2, 3, &cases[c]);
        for (size_t b = 0; b < 2; b++)
            for (size_t q = 0; q < 2; q++) {
                long len = !cases[c].valid_lens ? 3
                           : c == 0          ? lens1[b]
                                             : lens2[b * 2 + q];
                const size_t n = len > 3 ? 3 : (size_t)len, r = (b * 2 + q) * 3;
                double sum = 0.0;
                for (size_t k = 0; k < n; k++)
                    sum += exp((double)X0[r + k]);
                for (size_t k = 0; k < 3; k++) {
                    double want = n == 0 ? 1.0 / 3 : k < n ? exp((double)X0[r + k]) / sum : 0.0;
                    CHECK_NEAR(X[r + k], want, 1e-7, 1e-6);
                }
            }
    }
}

/* The section's cells: keys all alike, so the weights are 1/valid_len and
 * the output the mean of the first valid_len values: [2, 3, 4, 5] and
 * [10, 11, 12, 13]. */
static void test_section_cells(void)
{
    float q[2 * 2], k[2 * 10 * 2], v[2 * 10 * 4], s[20], out[8];
    const long lens[2] = {2, 6};
    const mha_masks mask = {lens, 0, 0, 0};
    for (size_t i = 0; i < 4; i++)
        q[i] = (float)i - 1.5f;
    for (size_t i = 0; i < 40; i++)
        k[i] = 1.0f;
    for (size_t i = 0; i < 80; i++)
        v[i] = (float)(i % 40);
    score_dot(s, q, k, 2, 1, 10, 2);
    score_masked_softmax(s, 2, 1, 10, &mask);
    score_weighted_sum(out, s, v, 2, 1, 10, 4);
    for (size_t c = 0; c < 4; c++) {
        CHECK_NEAR(out[c], 2.0 + c, 1e-6, 0);
        CHECK_NEAR(out[4 + c], 10.0 + c, 1e-5, 0);
    }
    CHECK_NEAR(s[0], 0.5, 1e-7, 0);
    CHECK_NEAR(s[10], 1.0 / 6, 1e-7, 0);
    CHECK(s[2] == 0.0f && s[16] == 0.0f);
}

/* The sum score by hand: q (1, 2), (5, -1) against keys (0, 1), (2, 2),
 * (-1, 0): Σq 3 and 4, Σk 1, 4, -1, scores Σq + Σk; both queries get
 * softmax(1, 4, -1) (the softmax cancels Σq), and with a length 2 the
 * same softmax of (1, 4). */
static void test_sum_by_hand(void)
{
    const float q[4] = {1, 2, 5, -1}, k[6] = {0, 1, 2, 2, -1, 0};
    const float want_s[6] = {4, 7, 2, 5, 8, 3};
    const long lens[1] = {2};
    const mha_masks none = {NULL, 0, 0, 0}, two = {lens, 0, 0, 0};
    float s[6], w[6];
    score_sum(s, q, k, 1, 2, 3, 2);
    for (size_t i = 0; i < 6; i++)
        CHECK(s[i] == want_s[i]);
    for (int m = 0; m < 2; m++) {
        const size_t n = m ? 2 : 3;
        double z = 0.0;
        memcpy(w, s, sizeof w);
        score_masked_softmax(w, 1, 2, 3, m ? &two : &none);
        for (size_t j = 0; j < n; j++)
            z += exp((double)want_s[j] - 3.0);
        for (size_t j = 0; j < 3; j++) {
            const double want = j < n ? exp((double)want_s[j] - 3.0) / z : 0.0;
            CHECK_NEAR(w[j], want, 1e-7, 1e-6);
            CHECK(w[j] == w[3 + j]); /* the two rows: the same bits here */
        }
    }
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    char *names[64];
    size_t n = 0;
    struct dirent *e;
    DIR *d = argc == 2 ? opendir(argv[1]) : NULL;
    CHECK(d != NULL);
    if (!d)
        return check_summary("test_score");
    while ((e = readdir(d)) != NULL && n < 64)
        if (strstr(e->d_name, ".json") && (names[n] = malloc(strlen(e->d_name) + 1)))
            strcpy(names[n++], e->d_name);
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    int ran = 0;
    for (size_t i = 0; i < n; i++) {
        ran += test_fixture(argv[1], names[i]);
        free(names[i]);
    }
    CHECK(ran >= 15);
    printf("%d fixtures compared with PyTorch: max |attn - torch| %.3g (float64), %.3g "
           "(float32)\n", ran, worst64, worst32);
    test_masked_softmax_by_hand();
    test_section_cells();
    test_sum_by_hand();
    return check_summary("test_score");
}
