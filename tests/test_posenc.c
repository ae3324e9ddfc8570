/* test_posenc.c — the positional encoding against values worked out by
 * hand and against PyTorch (tests/ref/posenc_ref.json, written by
 * scripts/gen_posenc_ref.py), the relative-position rotation, and P·Pᵀ;
 * the concat layout against sin and cos computed here from the formula,
 * and RoPE against rotations computed here by hand.
 * usage: test_posenc REFERENCE.json */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "posenc.h"

static float *alloc_floats(size_t n)
{
    float *p = malloc(n * sizeof *p);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

static float *make_P(size_t N, size_t D, double base)
{
    float *P = alloc_floats(N * D); /* (N, D) */
    posenc_fill(P, N, D, base);
    return P;
}

static float *make_P_in(size_t N, size_t D, double base, posenc_layout layout)
{
    float *P = alloc_floats(N * D); /* (N, D) */
    posenc_fill_layout(P, N, D, base, layout);
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
        double e = posenc_check_relative(P, 100, 32, 10000.0, POSENC_INTERLEAVED, delta,
                                         &checked);
        CHECK_INT(checked, (size_t)(100 - labs(delta)) * 16);
        if (e > worst)
            worst = e;
    }
    CHECK(worst < 1e-5);
    printf("relative 100x32, |delta| <= 50: worst %.3g\n", worst);

    /* a corrupted entry is found: the check can fail */
    P[60 * 32 + 10] += 0.01f;
    CHECK(posenc_check_relative(P, 100, 32, 10000.0, POSENC_INTERLEAVED, 7, NULL) > 0.009);
    free(P);

    /* odd D: the last column has no partner and is skipped */
    P = make_P(30, 7, 10000.0);
    CHECK(posenc_check_relative(P, 30, 7, 10000.0, POSENC_INTERLEAVED, 5, &checked) < 1e-6);
    CHECK_INT(checked, 25 * 3);
    free(P);

    /* long: positions up to 10000 with float32 entries */
    P = make_P(10000, 64, 10000.0);
    CHECK(posenc_check_relative(P, 10000, 64, 10000.0, POSENC_INTERLEAVED, 50, NULL) < 1e-5);
    CHECK(posenc_check_relative(P, 10000, 64, 10000.0, POSENC_INTERLEAVED, 9999, &checked) <
          1e-5);
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
    static const posenc_layout layouts[] = {POSENC_INTERLEAVED, POSENC_CONCAT};
    size_t d, i, l;
    for (l = 0; l < 2; l++)
        for (d = 0; d < sizeof dims / sizeof dims[0]; d++) {
            size_t N = dims[d] == 512 ? 10000 : 3000, D = dims[d];
            float *ref = make_P_in(N, D, 10000.0, layouts[l]), *fast = alloc_floats(N * D);
            double worst = 0.0;
            posenc_fill_fast(fast, N, D, 10000.0, layouts[l]);
            for (i = 0; i < N * D; i++)
                worst = fmax(worst, fabs((double)fast[i] - ref[i]));
            /* the same double values up to 1e-12, so the float32 roundings agree
             * but for the rare value on a rounding boundary: one ulp */
            CHECK(worst <= 1.2e-7);
            printf("fast %-11s D=%-4zu N=%-6zu max |rotation - sin/cos| = %.3g\n",
                   posenc_layout_name(layouts[l]), D, N, worst);
            free(ref);
            free(fast);
        }
}

/* ---- layouts ----------------------------------------------------------- */

/* The concat layout, sin half then cos half, against sin and cos computed
 * here in double from the formula: h = ceil(D/2) sin columns. */
static void test_concat_values(void)
{
    static const size_t dims[] = {1, 2, 7, 32, 33};
    size_t d;
    float *P;

    for (d = 0; d < sizeof dims / sizeof dims[0]; d++) {
        size_t D = dims[d], N = 60, h = (D + 1) / 2, i, j;
        double worst = 0.0;
        P = make_P_in(N, D, 10000.0, POSENC_CONCAT);
        for (i = 0; i < N; i++)
            for (j = 0; j < h; j++) {
                double angle = (double)i / pow(10000.0, 2.0 * (double)j / (double)D);
                worst = fmax(worst, fabs(P[i * D + j] - sin(angle)));         /* sin half */
                if (j < D - h)
                    worst = fmax(worst, fabs(P[i * D + h + j] - cos(angle))); /* cos half */
            }
        CHECK(worst <= 1e-7);
        printf("concat D=%-3zu N=%zu max |P - formula| = %.3g\n", D, N, worst);
        free(P);
    }

    /* by hand, D = 32, h = 16: j = 4 has omega = 1/10, so P[10][4] = sin 1 and
     * P[10][20] = cos 1; column 16 is cos(i · 1); row 0 is 0 … 0, 1 … 1 */
    P = make_P_in(60, 32, 10000.0, POSENC_CONCAT);
    CHECK_NEAR(P[10 * 32 + 4], sin(1.0), 1e-7, 0);
    CHECK_NEAR(P[10 * 32 + 20], cos(1.0), 1e-7, 0);
    CHECK_NEAR(P[3 * 32 + 16], cos(3.0), 1e-7, 0);
    CHECK_NEAR(P[3 * 32 + 0], sin(3.0), 1e-7, 0);
    CHECK_NEAR(P[15], 0.0, 0, 0);
    CHECK_NEAR(P[16], 1.0, 0, 0);
    CHECK_NEAR(P[31], 1.0, 0, 0);
    free(P);

    /* odd D = 7: sin columns 0 … 3 (column 3 has no cos), cos columns 4 … 6 */
    CHECK_INT(posenc_sin_col(3, 7, POSENC_CONCAT), 3);
    CHECK_INT(posenc_cos_col(0, 7, POSENC_CONCAT), 4);
    CHECK_INT(posenc_cos_col(2, 7, POSENC_CONCAT), 6);
    CHECK_INT(posenc_sin_col(3, 7, POSENC_INTERLEAVED), 6);
    P = make_P_in(5, 7, 10000.0, POSENC_CONCAT);
    CHECK_NEAR(P[4 * 7 + 3], sin(4.0 / pow(10000.0, 6.0 / 7.0)), 1e-7, 0);
    CHECK_NEAR(P[4 * 7 + 6], cos(4.0 / pow(10000.0, 4.0 / 7.0)), 1e-7, 0);
    free(P);
}

/* interleaved and concat hold the same columns permuted: interleaved column
 * 2j is concat column j, 2j+1 is h+j, and every concat column is hit once.
 * So rows keep their dot products and P·Pᵀ is the same in both. */
static void test_layout_permutation(void)
{
    static const size_t dims[] = {1, 2, 7, 32, 33};
    size_t d;
    for (d = 0; d < sizeof dims / sizeof dims[0]; d++) {
        size_t D = dims[d], N = 50, h = (D + 1) / 2, i, c;
        float *Pi = make_P_in(N, D, 10000.0, POSENC_INTERLEAVED);
        float *Pc = make_P_in(N, D, 10000.0, POSENC_CONCAT);
        float *Si = alloc_floats(N * N), *Sc = alloc_floats(N * N); /* (N, N) each */
        int hits[40] = {0}, bad = 0;
        double worst = 0.0;

        for (c = 0; c < D; c++) {
            size_t cc = c % 2 == 0 ? c / 2 : h + c / 2; /* where column c goes */
            hits[cc]++;
            for (i = 0; i < N; i++)
                if (Pi[i * D + c] != Pc[i * D + cc])
                    bad++;
        }
        CHECK_INT(bad, 0);
        for (c = 0; c < D; c++)
            CHECK_INT(hits[c], 1);

        posenc_similarity(Si, Pi, N, D);
        posenc_similarity(Sc, Pc, N, D);
        for (i = 0; i < N * N; i++)
            worst = fmax(worst, fabs((double)Si[i] - Sc[i]));
        /* the same products summed in another order: a float32 rounding at most */
        CHECK(worst <= 1e-5);
        printf("P·Pᵀ D=%-3zu N=%zu max |interleaved - concat| = %.3g\n", D, N, worst);
        if (D == 32) {
            /* and for even D both are Σ_j cos((i−k)·omega_j), worked out here */
            size_t k, j;
            for (i = 0; i < N; i += 7)
                for (k = 0; k < N; k += 5) {
                    double want = 0.0;
                    for (j = 0; j < D / 2; j++)
                        want += cos(((double)i - (double)k) /
                                    pow(10000.0, 2.0 * (double)j / (double)D));
                    CHECK_NEAR(Sc[i * N + k], want, 1e-5, 1e-6);
                }
        }
        free(Si);
        free(Sc);
        free(Pi);
        free(Pc);
    }
}

/* The relative-position rotation on the pairs (P[i][j], P[i][h+j]). */
static void test_relative_concat(void)
{
    static const size_t dims[] = {32, 7, 33};
    size_t d, checked;
    float *P;

    for (d = 0; d < sizeof dims / sizeof dims[0]; d++) {
        size_t D = dims[d], N = 100;
        double worst = 0.0;
        long delta;
        P = make_P_in(N, D, 10000.0, POSENC_CONCAT);
        for (delta = -50; delta <= 50; delta++) {
            double e = posenc_check_relative(P, N, D, 10000.0, POSENC_CONCAT, delta, &checked);
            CHECK_INT(checked, (size_t)(100 - labs(delta)) * (D / 2));
            worst = fmax(worst, e);
        }
        CHECK(worst < 1e-5);
        printf("relative concat %zux%zu, |delta| <= 50: worst %.3g\n", N, D, worst);
        free(P);
    }

    /* the check can fail: a corrupted cos-half entry, and the wrong layout */
    P = make_P_in(100, 32, 10000.0, POSENC_CONCAT);
    CHECK(posenc_check_relative(P, 100, 32, 10000.0, POSENC_INTERLEAVED, 3, NULL) > 0.1);
    P[60 * 32 + 16 + 5] += 0.01f;
    CHECK(posenc_check_relative(P, 100, 32, 10000.0, POSENC_CONCAT, 7, NULL) > 0.009);
    free(P);

    /* interleaved at odd D, beside the even case of test_relative */
    P = make_P_in(100, 33, 10000.0, POSENC_INTERLEAVED);
    CHECK(posenc_check_relative(P, 100, 33, 10000.0, POSENC_INTERLEAVED, 50, &checked) < 1e-5);
    CHECK_INT(checked, 50 * 16);
    free(P);
}

/* ---- RoPE ---------------------------------------------------------------- */

/* RoPE worked out here: pair j is (2j, 2j+1) or (j, j+D/2), turned by
 * m / base^(2j/D), in double. */
static void rope_by_hand(double *y, const float *x, size_t D, double m, double base,
                         posenc_layout layout)
{
    size_t j;
    for (j = 0; j < D / 2; j++) {
        size_t a = layout == POSENC_CONCAT ? j : 2 * j;
        size_t b = layout == POSENC_CONCAT ? j + D / 2 : 2 * j + 1;
        double angle = m / pow(base, 2.0 * (double)j / (double)D);
        y[a] = x[a] * cos(angle) - x[b] * sin(angle);
        y[b] = x[a] * sin(angle) + x[b] * cos(angle);
    }
}

/* A fixed irregular vector of length 1 (not from attn's generator). */
static void unit_vector(float *x, size_t D, double phase)
{
    double norm = 0.0;
    size_t c;
    for (c = 0; c < D; c++) {
        x[c] = (float)(sin(1.3 * (double)c + phase) + 0.5 * cos(0.7 * (double)(c * c) + phase));
        norm += (double)x[c] * x[c];
    }
    for (c = 0; c < D; c++)
        x[c] = (float)(x[c] / sqrt(norm));
}

static void test_rope_hand(void)
{
    static const posenc_layout layouts[] = {POSENC_INTERLEAVED, POSENC_CONCAT};
    float x2[2] = {1.0f, 0.0f}, y2[2];
    float x4[4] = {1.0f, 2.0f, 3.0f, 4.0f}, y4[4];
    size_t l;

    for (l = 0; l < 2; l++) {
        /* D = 2: omega_0 = 1, so x = (1, 0) at m = 1 becomes (cos 1, sin 1) */
        posenc_rope_apply(y2, x2, 2, 1.0, 10000.0, layouts[l]);
        CHECK_NEAR(y2[0], cos(1.0), 1e-7, 0);
        CHECK_NEAR(y2[1], sin(1.0), 1e-7, 0);
        /* m = 0 turns nothing */
        posenc_rope_apply(y4, x4, 4, 0.0, 100.0, layouts[l]);
        CHECK(y4[0] == 1.0f && y4[1] == 2.0f && y4[2] == 3.0f && y4[3] == 4.0f);
    }

    /* D = 4, base 100, m = 3: omega = 1 and 1/10, angles 3 and 0.3 */
    posenc_rope_apply(y4, x4, 4, 3.0, 100.0, POSENC_INTERLEAVED); /* pairs (0,1), (2,3) */
    CHECK_NEAR(y4[0], 1 * cos(3.0) - 2 * sin(3.0), 1e-6, 0);
    CHECK_NEAR(y4[1], 1 * sin(3.0) + 2 * cos(3.0), 1e-6, 0);
    CHECK_NEAR(y4[2], 3 * cos(0.3) - 4 * sin(0.3), 1e-6, 0);
    CHECK_NEAR(y4[3], 3 * sin(0.3) + 4 * cos(0.3), 1e-6, 0);
    posenc_rope_apply(y4, x4, 4, 3.0, 100.0, POSENC_CONCAT);      /* pairs (0,2), (1,3) */
    CHECK_NEAR(y4[0], 1 * cos(3.0) - 3 * sin(3.0), 1e-6, 0);
    CHECK_NEAR(y4[2], 1 * sin(3.0) + 3 * cos(3.0), 1e-6, 0);
    CHECK_NEAR(y4[1], 2 * cos(0.3) - 4 * sin(0.3), 1e-6, 0);
    CHECK_NEAR(y4[3], 2 * sin(0.3) + 4 * cos(0.3), 1e-6, 0);
    /* in place gives the same */
    posenc_rope_apply(x4, x4, 4, 3.0, 100.0, POSENC_CONCAT);
    CHECK(x4[0] == y4[0] && x4[1] == y4[1] && x4[2] == y4[2] && x4[3] == y4[3]);
}

/* Scores of RoPE(q, m) and RoPE(k, n) depend on n − m only, and the rows
 * turn into one another by R(δ), for both pair layouts. */
static void test_rope_scores(void)
{
    static const posenc_layout layouts[] = {POSENC_INTERLEAVED, POSENC_CONCAT};
    const size_t N = 100, D = 32;
    size_t l;

    for (l = 0; l < 2; l++) {
        posenc_layout layout = layouts[l];
        float q[32], k[32];
        float *Qr = alloc_floats(N * D), *Kr = alloc_floats(N * D); /* (N, D) each */
        float *S = alloc_floats(N * N);                             /* (N, N) */
        double want[199], y[32], rows_worst = 0.0, worst = 0.0, rel = 0.0, e;
        size_t m, n, c, checked;
        long d, delta;

        unit_vector(q, D, 0.2);
        unit_vector(k, D, 1.9);
        posenc_rope_rows(Qr, q, N, D, 10000.0, layout);
        posenc_rope_rows(Kr, k, N, D, 10000.0, layout);
        /* the rows against RoPE by hand */
        for (m = 0; m < N; m++) {
            rope_by_hand(y, q, D, (double)m, 10000.0, layout);
            for (c = 0; c < D; c++)
                rows_worst = fmax(rows_worst, fabs(Qr[m * D + c] - y[c]));
        }
        CHECK(rows_worst <= 1e-7);

        /* want[d] = q · RoPE(k, d), by hand, for every offset d = n − m */
        for (d = -99; d <= 99; d++) {
            double dot = 0.0;
            rope_by_hand(y, k, D, (double)d, 10000.0, layout);
            for (c = 0; c < D; c++)
                dot += q[c] * y[c];
            want[d + 99] = dot;
        }
        posenc_rope_scores(S, Qr, Kr, N, D);
        for (m = 0; m < N; m++)
            for (n = 0; n < N; n++)
                worst = fmax(worst, fabs(S[m * N + n] - want[(long)n - (long)m + 99]));
        CHECK(worst < 1e-5);
        e = posenc_rope_offset_error(S, q, k, N, D, 10000.0, layout);
        CHECK_NEAR(e, worst, 1e-9, 0);
        printf("RoPE %-11s %zux%zu: max |S[m][n] - q·RoPE(k, n-m)| = %.3g\n",
               posenc_layout_name(layout), N, D, worst);
        /* rotations keep lengths: S[m][m] = q · k at every m */
        CHECK_NEAR(S[37 * N + 37], want[99], 1e-6, 0);

        /* RoPE(x, i+δ) = R(δ)·RoPE(x, i), δ = −50 … 50 */
        for (delta = -50; delta <= 50; delta++) {
            rel = fmax(rel, posenc_rope_check_relative(Qr, N, D, 10000.0, layout, delta,
                                                       &checked));
            CHECK_INT(checked, (size_t)(100 - labs(delta)) * 16);
        }
        CHECK(rel < 1e-5);
        printf("RoPE %-11s %zux%zu, |delta| <= 50: relative worst %.3g\n",
               posenc_layout_name(layout), N, D, rel);

        /* the checks can fail: the other pairing, a corrupted row, a corrupted score */
        CHECK(posenc_rope_check_relative(Qr, N, D, 10000.0, layouts[1 - l], 3, NULL) > 0.01);
        Qr[40 * D + 9] += 0.01f;
        CHECK(posenc_rope_check_relative(Qr, N, D, 10000.0, layout, 5, NULL) > 0.009);
        S[5 * N + 70] += 0.01f;
        CHECK(posenc_rope_offset_error(S, q, k, N, D, 10000.0, layout) > 0.009);
        free(Qr);
        free(Kr);
        free(S);
    }
}

/* posenc_rope_demo: q and k of length 1; each score the dot product of q
 * and k turned here by hand (angles m·ω_j, ω_j = 10000^(−2j/D),
 * interleaved pairs), in double; the offset error small; the same seed the
 * same draw. N = 5, D = 6: non-square. */
static void test_rope_demo(void)
{
    const size_t N = 5, D = 6;
    posenc_rope_demo r, again;
    size_t bytes = 0;
    CHECK(posenc_rope_demo_bytes(N, D, &bytes) == 0);
    CHECK(bytes == (2 * D + 2 * N * D + N * N) * sizeof(float));
    CHECK(posenc_rope_demo_bytes((size_t)-1, D, &bytes) == -1);
    if (posenc_rope_demo_alloc(&r, N, D) || posenc_rope_demo_alloc(&again, N, D)) {
        CHECK(0);
        return;
    }
    posenc_rope_demo_run(&r, 10000.0, POSENC_INTERLEAVED, 7);
    double qq = 0, kk = 0, qk = 0, worst = 0;
    for (size_t c = 0; c < D; c++) {
        qq += (double)r.q[c] * r.q[c];
        kk += (double)r.k[c] * r.k[c];
        qk += fabs((double)r.q[c] - r.k[c]);
    }
    CHECK_NEAR(qq, 1.0, 1e-6, 0);
    CHECK_NEAR(kk, 1.0, 1e-6, 0);
    CHECK(qk > 0.1); /* two different draws */
    for (size_t m = 0; m < N; m++)
        for (size_t n = 0; n < N; n++) {
            double s = 0.0;
            for (size_t j = 0; j < D / 2; j++) {
                double w = pow(10000.0, -2.0 * (double)j / (double)D);
                double cm = cos((double)m * w), sm = sin((double)m * w);
                double cn = cos((double)n * w), sn = sin((double)n * w);
                double qa = r.q[2 * j] * cm - r.q[2 * j + 1] * sm;
                double qb = r.q[2 * j] * sm + r.q[2 * j + 1] * cm;
                double ka = r.k[2 * j] * cn - r.k[2 * j + 1] * sn;
                double kb = r.k[2 * j] * sn + r.k[2 * j + 1] * cn;
                s += qa * ka + qb * kb;
            }
            worst = fmax(worst, fabs(r.S[m * N + n] - s));
        }
    CHECK(worst < 1e-6);
    CHECK(r.offset_error < 1e-6);
    posenc_rope_demo_run(&again, 10000.0, POSENC_INTERLEAVED, 7);
    CHECK(again.q[0] == r.q[0] && again.k[D - 1] == r.k[D - 1] && again.S[7] == r.S[7]);
    posenc_rope_demo_free(&r);
    posenc_rope_demo_free(&again);
}

/* posenc_add on zeros (B = 2, N = 3, D = 4) gives P in every example:
 * P[i][2j] = sin(i/10000^(2j/4)), P[i][2j+1] = cos(…); on ones, 1 + P. */
static void test_posenc_add(void)
{
    float X[2 * 3 * 4];
    for (size_t e = 0; e < 24; e++)
        X[e] = e < 12 ? 0.0f : 1.0f;
    CHECK(posenc_add(X, 2, 3, 4) == 0);
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 2; j++) {
            double angle = (double)i / pow(10000.0, 2.0 * (double)j / 4.0);
            CHECK_NEAR(X[i * 4 + 2 * j], sin(angle), 1e-7, 0);
            CHECK_NEAR(X[i * 4 + 2 * j + 1], cos(angle), 1e-7, 0);
            CHECK_NEAR(X[12 + i * 4 + 2 * j], 1.0 + sin(angle), 1e-6, 0);
            CHECK_NEAR(X[12 + i * 4 + 2 * j + 1], 1.0 + cos(angle), 1e-6, 0);
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
    test_concat_values();
    test_layout_permutation();
    test_relative_concat();
    test_rope_hand();
    test_rope_scores();
    test_rope_demo();
    test_posenc_add();
    return check_summary("test_posenc");
}
