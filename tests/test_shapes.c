/* test_shapes.c — d2l's transpose_qkv, transpose_output and
 * repeat_interleave (src/nn/attention/heads.h) against PyTorch.
 *
 * usage: test_shapes FIXTURE_DIR
 * Every tests/ref/shapes/NN_name.json (scripts/gen_shapes_ref.py) holds
 * PyTorch's layouts of labelled tensors (arange) and the heads of random
 * Q, K, V computed as d2l computes them. For each: the index maps equal
 * PyTorch's entry for entry; of the 24 orders of the four axes, only
 * those that move the entries as (0, 2, 1, 3) does pass, and a reshape
 * without the permute is caught wherever it differs; the lengths by
 * repeat_interleave and by repeat; mha_heads_batched's heads within 1e-6
 * of PyTorch's float32 and float64 ones, and far from them with the
 * permute left out or repeat for repeat_interleave; and, with identity
 * projections, the same bits as mha_forward's concatenated heads (what
 * --explain prints in its steps 7 and 8). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture_dir.h"
#include "heads.h"
#include "json_in.h"

#define TOL 1e-6

static const cJSON *member(const cJSON *o, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(o, name);
}

/* The integers of a nested array, flattened; *n their number. */
static size_t flat_ints(const cJSON *node, long *out, size_t cap, size_t at)
{
    if (cJSON_IsNumber(node)) {
        if (at < cap)
            out[at] = (long)node->valuedouble;
        return at + 1;
    }
    for (const cJSON *c = node ? node->child : NULL; c; c = c->next)
        at = flat_ints(c, out, cap, at);
    return at;
}

/* Whether map (n,) equals the nested array want. */
static int same_map(const size_t *map, size_t n, const cJSON *want)
{
    long *w = malloc((n + 1) * sizeof *w);
    int same = w && flat_ints(want, w, n, 0) == n;
    for (size_t i = 0; same && i < n; i++)
        same = (long)map[i] == w[i];
    free(w);
    return same;
}

static size_t get_size(const cJSON *root, const char *name)
{
    return (size_t)member(root, name)->valuedouble;
}

/* Every permutation of 0 … 3 through transpose_qkv: it equals PyTorch's
 * map exactly when it reads X in the same order as (0, 2, 1, 3). */
static void test_orders(const cJSON *root, size_t B, size_t N, size_t H, size_t NH, size_t *map)
{
    const size_t n = B * N * H;
    size_t *right = malloc(n * sizeof *right);
    int perm[4], passed = 0;
    if (!right) {
        CHECK(0);
        return;
    }
    mha_transpose_qkv_index(right, B, N, H, NH, mha_heads_perm);
    for (int i = 0; i < 256; i++) {
        perm[0] = i & 3, perm[1] = i >> 2 & 3, perm[2] = i >> 4 & 3, perm[3] = i >> 6 & 3;
        if ((1 << perm[0] | 1 << perm[1] | 1 << perm[2] | 1 << perm[3]) != 15)
            continue; /* not a permutation */
        mha_transpose_qkv_index(map, B, N, H, NH, perm);
        const int same_order = memcmp(map, right, n * sizeof *map) == 0;
        CHECK(same_map(map, n, member(root, "transpose_qkv")) == same_order);
        passed += same_order;
    }
    CHECK(passed >= 1);
    /* a reshape without the permute: caught unless it moves nothing
     * (one head or one token) */
    const int plain[4] = {0, 1, 2, 3};
    mha_transpose_qkv_index(map, B, N, H, NH, plain);
    CHECK(same_map(map, n, member(root, "reshape_only")));
    CHECK(same_map(map, n, member(root, "transpose_qkv")) == (NH == 1 || N == 1));
    free(right);
}

static void test_lens(const cJSON *root, size_t B, size_t N, size_t NH)
{
    const cJSON *vl = member(root, "valid_lens");
    long lens[64], rep[256], want[256];
    if (cJSON_IsNull(vl))
        return;
    const size_t cols = cJSON_IsArray(vl->child) ? N : 1, n = flat_ints(vl, lens, 64, 0);
    CHECK(n == B * cols);
    mha_repeat_lens(rep, lens, B, cols, NH, 1);
    CHECK(flat_ints(member(root, "repeat_interleave"), want, 256, 0) == B * NH * cols);
    CHECK(memcmp(rep, want, B * NH * cols * sizeof *rep) == 0);
    mha_repeat_lens(rep, lens, B, cols, NH, 0);
    CHECK(flat_ints(member(root, "repeat"), want, 256, 0) == B * NH * cols);
    CHECK(memcmp(rep, want, B * NH * cols * sizeof *rep) == 0);
}

static double max_diff(const float *a, const float *b, size_t n)
{
    double worst = 0.0;
    for (size_t i = 0; i < n; i++)
        worst = fabs((double)a[i] - b[i]) > worst ? fabs((double)a[i] - b[i]) : worst;
    return worst;
}

/* An identity nn.Linear (H, H) without bias. */
static void identity(linear *l, size_t H)
{
    char err[128];
    memset(l, 0, sizeof *l);
    CHECK(tensor_alloc2(&l->weight, H, H, err, sizeof err) == 0);
    for (size_t i = 0; i < H; i++)
        for (size_t j = 0; j < H; j++)
            l->weight.data[i * H + j] = i == j ? 1.0f : 0.0f;
}

/* mha_forward's concatenated heads (--explain's steps 7 and 8), with
 * identity projections so that its Q, K, V are the fixture's, into concat. */
static void reference_heads(float *concat, const tensor *Q, const tensor *K, const tensor *V,
                            size_t NH, const mha_masks *mask)
{
    const size_t B = Q->shape[0], Nq = Q->shape[1], Nk = K->shape[1], H = Q->shape[2];
    mha_params m;
    char err[128];
    memset(&m, 0, sizeof m);
    m.num_heads = NH;
    m.num_hiddens = H;
    m.score = SCORE_DOT;
    identity(&m.W_q, H);
    identity(&m.W_k, H);
    identity(&m.W_v, H);
    identity(&m.W_o, H);
    float *out = malloc(B * Nq * H * sizeof *out), *w = malloc(B * NH * Nq * Nk * sizeof *w);
    mha_trace t = {NULL, NULL, NULL, NULL, NULL, NULL, concat};
    CHECK(out && w);
    if (out && w)
        CHECK(mha_forward(out, w, &t, Q->data, K->data, V->data, B, Nq, Nk, &m, mask, NULL, err,
                          sizeof err) == 0);
    free(out);
    free(w);
    linear_free(&m.W_q);
    linear_free(&m.W_k);
    linear_free(&m.W_v);
    linear_free(&m.W_o);
}

/* Whether repeat masks some slice's keys otherwise than repeat_interleave. */
static int lens_move(const long *lens, size_t B, size_t cols, size_t NH, size_t Nk)
{
    long a[256], b[256];
    mha_repeat_lens(a, lens, B, cols, NH, 1);
    mha_repeat_lens(b, lens, B, cols, NH, 0);
    for (size_t i = 0; i < B * NH * cols; i++)
        if ((a[i] < (long)Nk ? a[i] : (long)Nk) != (b[i] < (long)Nk ? b[i] : (long)Nk))
            return 1;
    return 0;
}

static void test_shapes_numbers(const cJSON *root, const char *name, size_t NH)
{
    tensor Q, K, V, want32, want64;
    char err[256];
    long lens[64];
    const cJSON *vl = member(root, "valid_lens");
    if (json_get_tensor(member(root, "Q"), "Q", 3, 3, &Q, err, sizeof err) ||
        json_get_tensor(member(root, "K"), "K", 3, 3, &K, err, sizeof err) ||
        json_get_tensor(member(root, "V"), "V", 3, 3, &V, err, sizeof err) ||
        json_get_tensor(member(root, "concat"), "concat", 3, 3, &want32, err, sizeof err) ||
        json_get_tensor(member(root, "concat64"), "concat64", 3, 3, &want64, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", name, err);
        CHECK(0);
        return;
    }
    const size_t B = Q.shape[0], Nq = Q.shape[1], Nk = K.shape[1], H = Q.shape[2], n = Q.size;
    const size_t cols = !cJSON_IsNull(vl) && cJSON_IsArray(vl->child) ? Nq : 1;
    const int has_lens = !cJSON_IsNull(vl) && flat_ints(vl, lens, 64, 0) > 0;
    const mha_masks mask = {has_lens ? lens : NULL, cols > 1, 0, 0};
    const int plain[4] = {0, 1, 2, 3};
    float *got = malloc(n * sizeof *got), *ref = malloc(n * sizeof *ref);
    CHECK(got && ref);
    /* d2l's way: within 1e-6 of PyTorch in float32 and float64 */
    CHECK(mha_heads_batched(got, Q.data, K.data, V.data, B, Nq, Nk, H, NH, &mask,
                            mha_heads_perm, 1, err, sizeof err) == 0);
    for (size_t i = 0; i < n; i++) {
        CHECK_NEAR(got[i], want32.data[i], TOL, TOL);
        CHECK_NEAR(got[i], want64.data[i], TOL, TOL);
    }
    printf("  %-28s heads against torch: %.2e (float32), %.2e (float64)\n", name,
           max_diff(got, want32.data, n), max_diff(got, want64.data, n));
    /* the same bits as mha_forward's heads */
    reference_heads(ref, &Q, &K, &V, NH, &mask);
    CHECK(memcmp(got, ref, n * sizeof *got) == 0);
    /* a wrong layout is caught */
    CHECK(mha_heads_batched(got, Q.data, K.data, V.data, B, Nq, Nk, H, NH, &mask, plain, 1, err,
                            sizeof err) == 0);
    CHECK((max_diff(got, want32.data, n) > 1e-3) == (NH > 1 && Nq > 1));
    CHECK(mha_heads_batched(got, Q.data, K.data, V.data, B, Nq, Nk, H, NH, &mask,
                            mha_heads_perm, 0, err, sizeof err) == 0);
    CHECK((max_diff(got, want32.data, n) > 1e-3) ==
          (has_lens && lens_move(lens, B, cols, NH, Nk)));
    free(got);
    free(ref);
    tensor_free(&Q);
    tensor_free(&K);
    tensor_free(&V);
    tensor_free(&want32);
    tensor_free(&want64);
}

static void run_fixture(const cJSON *root, const char *name)
{
    const size_t B = get_size(root, "B"), N = get_size(root, "Nq"), H = get_size(root, "H");
    const size_t NH = get_size(root, "num_heads"), n = B * N * H;
    size_t *map = malloc(n * sizeof *map);
    CHECK(map != NULL);
    if (!map)
        return;
    /* the three maps, entry for entry */
    mha_transpose_qkv_index(map, B, N, H, NH, mha_heads_perm);
    CHECK(same_map(map, n, member(root, "transpose_qkv")));
    mha_transpose_output_index(map, B, N, H, NH, mha_heads_perm);
    CHECK(same_map(map, n, member(root, "transpose_output")));
    test_orders(root, B, N, H, NH, map);
    test_lens(root, B, N, NH);
    test_shapes_numbers(root, name, NH);
    free(map);
}

int main(int argc, char **argv)
{
    int fixtures = fixture_dir_run(argc, argv, "test_shapes", run_fixture);
    if (fixtures < 0)
        return 2;
    CHECK(fixtures == 6);
    return check_summary("heads");
}
