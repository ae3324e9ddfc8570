/* test_collapse.c — `attn selfattn --depth`'s layers and measures
 * (src/nn/attention/collapse.h) against PyTorch.
 *
 * usage: test_collapse FIXTURE_DIR
 * Every tests/ref/collapse/NN_name.json (scripts/gen_collapse_ref.py)
 * holds X, d2l's MultiHeadAttention weights and, for attention alone,
 * with a residual and with AddNorm, the spread and the rank-1 residual at
 * depths 0 … 3, computed by PyTorch in float64. collapse_layer (float32
 * between layers) and collapse_measure must give them within 1e-5 + 1e-4
 * relative; the largest differences are printed. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture_dir.h"
#include "collapse.h"
#include "json_in.h"

#define DEPTHS 4

static double worst;

static const cJSON *member(const cJSON *o, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(o, name);
}

static int get_tensor(const cJSON *node, const char *what, size_t ndim, tensor *t)
{
    char err[256];
    int bad = json_get_tensor(node, what, ndim, ndim, t, err, sizeof err);
    if (bad)
        fprintf(stderr, "%s\n", err);
    CHECK(!bad);
    return bad;
}

/* The mean of the measures over the B examples of X (B, N, H). */
static void measure(const float *X, size_t B, size_t N, size_t H, double *mean, double *s,
                    double *r)
{
    double ss = 0, rr = 0, one_s, one_r;
    for (size_t b = 0; b < B; b++) {
        collapse_measure(X + b * N * H, N, H, mean, &one_s, &one_r);
        ss += one_s;
        rr += one_r;
    }
    *s = ss / (double)B;
    *r = rr / (double)B;
}

static void compare(double got, const cJSON *want, const char *name, const char *what, int d)
{
    const double w = want->valuedouble, diff = fabs(got - w);
    worst = diff > worst ? diff : worst;
    if (!(diff <= 1e-5 + 1e-4 * fabs(w)))
        fprintf(stderr, "%s: %s at depth %d: %.9g, torch %.9g\n", name, what, d, got, w);
    CHECK(diff <= 1e-5 + 1e-4 * fabs(w));
}

static void run_fixture(const cJSON *root, const char *name)
{
    const char *keys[4] = {"W_q.weight", "W_k.weight", "W_v.weight", "W_o.weight"};
    const cJSON *sd = member(root, "state_dict");
    tensor X;
    mha_params m;
    char err[256];
    memset(&m, 0, sizeof m);
    linear *l[4] = {&m.W_q, &m.W_k, &m.W_v, &m.W_o};
    if (get_tensor(member(root, "X"), "X", 3, &X))
        return;
    for (int i = 0; i < 4; i++)
        get_tensor(member(sd, keys[i]), keys[i], 2, &l[i]->weight);
    const size_t B = X.shape[0], N = X.shape[1], H = X.shape[2];
    m.num_heads = (size_t)member(root, "num_heads")->valuedouble;
    m.num_hiddens = H;
    m.score = SCORE_DOT;
    float *cur = malloc(X.size * sizeof *cur), *next = malloc(X.size * sizeof *next);
    double *mean = malloc(H * sizeof *mean);
    CHECK(cur && next && mean);
    for (int k = 0; cur && next && mean && k < COLLAPSE_KINDS; k++) {
        const cJSON *want = member(root, collapse_names[k]);
        memcpy(cur, X.data, X.size * sizeof *cur);
        for (int d = 0; d < DEPTHS; d++) {
            double s, r;
            if (d > 0) { /* one more layer, the same weights */
                CHECK(collapse_layer(next, cur, B, N, &m, NULL, (enum collapse_kind)k, err,
                                     sizeof err) == 0);
                float *t = cur;
                cur = next;
                next = t;
            }
            measure(cur, B, N, H, mean, &s, &r);
            compare(s, cJSON_GetArrayItem(member(want, "spread"), d), name, "spread", d);
            compare(r, cJSON_GetArrayItem(member(want, "rank1_residual"), d), name,
                    "rank-1 residual", d);
        }
    }
    free(cur);
    free(next);
    free(mean);
    tensor_free(&X);
    for (int i = 0; i < 4; i++)
        linear_free(l[i]);
}

int main(int argc, char **argv)
{
    int fixtures = fixture_dir_run(argc, argv, "test_collapse", run_fixture);
    if (fixtures < 0)
        return 2;
    CHECK(fixtures == 3);
    printf("  worst |attn − torch| over the spread and rank-1 residual: %.2e\n", worst);
    return check_summary("collapse");
}
