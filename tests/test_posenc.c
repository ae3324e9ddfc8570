/* test_posenc.c — the positional encoding against values worked out by
 * hand and against PyTorch (tests/ref/posenc_ref.json, written by
 * scripts/gen_posenc_ref.py), the relative-position rotation, and P·Pᵀ.
 * usage: test_posenc REFERENCE.json */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "posenc.h"

static float *make_P(size_t N, size_t D, double base)
{
    float *P = malloc(N * D * sizeof *P); /* (N, D) */
    if (!P) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    posenc_fill(P, N, D, base);
    return P;
}

static void test_hand_values(void)
{
    float *P = make_P(60, 32, 10000.0); /* the chapter's 60 × 32 */
    size_t j;

    /* position 0: every sin column is 0, every cos column is 1 */
    for (j = 0; j < 16; j++) {
        CHECK_NEAR(P[2 * j], 0.0, 0, 0);
        CHECK_NEAR(P[2 * j + 1], 1.0, 0, 0);
    }
    /* column pair 0 has omega = 1: P[i][0] = sin i, P[i][1] = cos i */
    CHECK_NEAR(P[1 * 32 + 0], sin(1.0), 1e-7, 0);
    CHECK_NEAR(P[1 * 32 + 1], cos(1.0), 1e-7, 0);
    CHECK_NEAR(P[59 * 32 + 0], sin(59.0), 1e-7, 0);
    /* column 8 is pair j = 4: omega = 1/10000^(8/32) = 1/10, so P[10][8] = sin 1 */
    CHECK_NEAR(P[10 * 32 + 8], sin(1.0), 1e-7, 0);
    CHECK_NEAR(P[10 * 32 + 9], cos(1.0), 1e-7, 0);
    /* column 16 is pair j = 8: omega = 1/100, so P[50][16] = sin 0.5 */
    CHECK_NEAR(P[50 * 32 + 16], sin(0.5), 1e-7, 0);
    CHECK_NEAR(posenc_omega(4, 32, 10000.0), 0.1, 1e-15, 0);
    free(P);

    /* odd D = 7: the last column 6 is a sin column with omega = 10000^(-6/7) */
    P = make_P(5, 7, 10000.0);
    CHECK_NEAR(P[4 * 7 + 6], sin(4.0 / pow(10000.0, 6.0 / 7.0)), 1e-7, 0);
    CHECK_NEAR(P[4 * 7 + 5], cos(4.0 / pow(10000.0, 4.0 / 7.0)), 1e-7, 0);
    free(P);

    /* D = 1: a single column sin(i) */
    P = make_P(4, 1, 10000.0);
    CHECK_NEAR(P[3], sin(3.0), 1e-7, 0);
    free(P);

    /* another base: D = 4, base 100: omega_1 = 1/100^(2/4) = 1/10 */
    P = make_P(21, 4, 100.0);
    CHECK_NEAR(P[20 * 4 + 2], sin(2.0), 1e-7, 0);
    CHECK_NEAR(P[20 * 4 + 3], cos(2.0), 1e-7, 0);
    free(P);
}

/* Every stored row of every case, |attn − torch| <= 1e-6 + 1e-5·|torch|. */
static void test_reference(const char *path)
{
    char *text = check_read_file(path, NULL);
    cJSON *root = text ? cJSON_Parse(text) : NULL, *c;
    int ncases = 0;

    CHECK(root != NULL);
    if (!root) {
        free(text);
        return;
    }
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(root, "cases"))
    {
        size_t D = (size_t)cJSON_GetObjectItem(c, "dim")->valuedouble;
        size_t N = (size_t)cJSON_GetObjectItem(c, "steps")->valuedouble;
        double base = cJSON_GetObjectItem(c, "base")->valuedouble;
        cJSON *rows = cJSON_GetObjectItem(c, "rows"), *vals = cJSON_GetObjectItem(c, "P");
        float *P = make_P(N, D, base);
        double worst = 0.0;
        int r, nrows = cJSON_GetArraySize(rows), bad = 0;

        CHECK_INT(cJSON_GetArraySize(vals), nrows);
        for (r = 0; r < nrows; r++) {
            size_t i = (size_t)cJSON_GetArrayItem(rows, r)->valuedouble;
            cJSON *row = cJSON_GetArrayItem(vals, r);
            size_t k;
            CHECK_INT(cJSON_GetArraySize(row), D);
            for (k = 0; k < D; k++) {
                double want = cJSON_GetArrayItem(row, (int)k)->valuedouble;
                double got = P[i * D + k];
                double d = fabs(got - want);
                if (d > worst)
                    worst = d;
                if (!(d <= 1e-6 + 1e-5 * fabs(want))) {
                    if (bad++ < 5)
                        fprintf(stderr, "D=%zu N=%zu: P[%zu][%zu] = %.9g, torch %.9g\n",
                                D, N, i, k, got, want);
                }
            }
        }
        CHECK_INT(bad, 0);
        printf("reference D=%-4zu N=%-6zu rows=%-5d max |attn - torch float64| = %.3g\n",
               D, N, nrows, worst);
        free(P);
        ncases++;
    }
    CHECK(ncases >= 5);
    cJSON_Delete(root);
    free(text);
}

static void test_relative(void)
{
    float *P = make_P(100, 32, 10000.0);
    long delta;
    size_t checked;
    double worst = 0.0;

    /* offsets 1 … 50 and back: the rotation maps p_i onto p_{i+δ} */
    for (delta = -50; delta <= 50; delta++) {
        double e = posenc_check_relative(P, 100, 32, 10000.0, delta, &checked);
        CHECK_INT(checked, (size_t)(100 - labs(delta)) * 16);
        if (e > worst)
            worst = e;
    }
    CHECK(worst < 1e-5);
    printf("relative 100x32, |delta| <= 50: worst %.3g\n", worst);

    /* a corrupted entry is found: the check can fail */
    P[60 * 32 + 10] += 0.01f;
    CHECK(posenc_check_relative(P, 100, 32, 10000.0, 7, NULL) > 0.009);
    free(P);

    /* odd D: the last column has no partner and is skipped */
    P = make_P(30, 7, 10000.0);
    CHECK(posenc_check_relative(P, 30, 7, 10000.0, 5, &checked) < 1e-6);
    CHECK_INT(checked, 25 * 3);
    free(P);

    /* long: positions up to 10000 with float32 entries */
    P = make_P(10000, 64, 10000.0);
    CHECK(posenc_check_relative(P, 10000, 64, 10000.0, 50, NULL) < 1e-5);
    CHECK(posenc_check_relative(P, 10000, 64, 10000.0, 9999, &checked) < 1e-5);
    CHECK_INT(checked, 32);
    free(P);
}

static void test_similarity(void)
{
    size_t N = 40, D = 16, i, k, j;
    float *P = make_P(N, D, 10000.0);
    float *S = malloc(N * N * sizeof *S); /* (N, N) */
    CHECK(S != NULL);
    if (!S)
        return;
    posenc_similarity(S, P, N, D);
    for (i = 0; i < N; i++)
        for (k = 0; k < N; k++) {
            /* p_i · p_k = Σ_j sin(iω)sin(kω) + cos(iω)cos(kω) = Σ_j cos((i−k)ω_j) */
            double want = 0.0;
            for (j = 0; j < D / 2; j++)
                want += cos(((double)i - (double)k) * posenc_omega(j, D, 10000.0));
            CHECK_NEAR(S[i * N + k], want, 1e-5, 1e-6);
        }
    CHECK_NEAR(S[0], (double)D / 2, 1e-6, 0);
    free(S);
    free(P);
}

/* The rotation recurrence against sin and cos of every angle. */
static void test_fast(void)
{
    static const size_t dims[] = {1, 2, 7, 32, 33, 512};
    size_t d, i;
    for (d = 0; d < sizeof dims / sizeof dims[0]; d++) {
        size_t N = dims[d] == 512 ? 10000 : 3000, D = dims[d];
        float *ref = make_P(N, D, 10000.0), *fast = malloc(N * D * sizeof *fast);
        double worst = 0.0;
        CHECK(fast != NULL);
        if (!fast) {
            free(ref);
            continue;
        }
        posenc_fill_fast(fast, N, D, 10000.0);
        for (i = 0; i < N * D; i++)
            worst = fmax(worst, fabs((double)fast[i] - ref[i]));
        /* the same double values up to 1e-12, so the float32 roundings agree
         * but for the rare value on a rounding boundary: one ulp */
        CHECK(worst <= 1.2e-7);
        printf("fast D=%-4zu N=%-6zu max |rotation - sin/cos| = %.3g\n", D, N, worst);
        free(ref);
        free(fast);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_posenc REFERENCE.json\n");
        return 2;
    }
    test_hand_values();
    test_fast();
    test_reference(argv[1]);
    test_relative();
    test_similarity();
    return check_summary("test_posenc");
}
