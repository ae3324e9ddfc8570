/* test_demo.c — the two demos of `attn selfattn`: their computations
 * (src/nn/attention/properties.c) and the parsing of their options
 * (src/cmd/attention/attention_demos.c).
 *
 * Order blindness: permutations drawn and parsed, rows permuted and the
 * differences measured on small hand-made cases; then on random problems
 * the layer run here on X and on π·X (our own permuting and comparing
 * loops) — equal within 1e-5 without positional encoding, apart by more
 * than 1e-2 with it — and the demo's numbers agreeing with ours.
 * Why divide by √d: a small case worked out by hand; then d = 1 … 1024:
 * var(q·k) within 10% of d, var(q·k/√d) within 10% of 1, the scaled
 * softmax's largest weight and entropy in a band, the raw one near one-hot
 * at d = 1024. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "check.h"
#include "attention_demos.h"
#include "collapse.h"
#include "posenc.h"
#include "problem.h"

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

static int is_permutation(const size_t *perm, size_t n)
{
    unsigned char *seen = calloc(n, 1);
    size_t i;
    int ok = seen != NULL;
    for (i = 0; ok && i < n; i++) {
        ok = perm[i] < n && !seen[perm[i]];
        if (ok)
            seen[perm[i]] = 1;
    }
    free(seen);
    return ok;
}

/* ---- order blindness --------------------------------------------------- */

static void test_random_permutation(void)
{
    size_t perm[12], again[12], n, i;
    unsigned long long seed;
    for (n = 2; n <= 12; n++)
        for (seed = 0; seed < 20; seed++) {
            int identity = 1;
            demo_random_permutation(perm, n, seed);
            CHECK(is_permutation(perm, n));
            for (i = 0; i < n; i++)
                identity &= perm[i] == i;
            CHECK(!identity);
            /* the same seed, the same π */
            demo_random_permutation(again, n, seed);
            CHECK(memcmp(perm, again, n * sizeof *perm) == 0);
        }
    /* n = 2 has one other order: [1, 0] */
    demo_random_permutation(perm, 2, 5);
    CHECK_INT(perm[0], 1);
    CHECK_INT(perm[1], 0);
}

static void test_parse_permutation(void)
{
    size_t perm[4];
    char err[256];
    CHECK_INT(demo_parse_permutation("3,0,2,1", perm, 4, err, sizeof err), 0);
    CHECK(perm[0] == 3 && perm[1] == 0 && perm[2] == 2 && perm[3] == 1);
    CHECK_INT(demo_parse_permutation("0", perm, 1, err, sizeof err), 0);
    CHECK_INT(perm[0], 0);

    CHECK_INT(demo_parse_permutation("3,0,2", perm, 4, err, sizeof err), -1);
    CHECK(strcmp(err, "--permutation: has 3 positions, but the sequence has 4 (a permutation "
                      "of 0 … 3; 1 is missing)") == 0);
    CHECK_INT(demo_parse_permutation("3,0,2,1,4", perm, 4, err, sizeof err), -1);
    CHECK(strstr(err, "has more than 4 positions") != NULL);
    CHECK_INT(demo_parse_permutation("3,0,2,4", perm, 4, err, sizeof err), -1);
    CHECK(strcmp(err, "--permutation: 4 is not a position of the sequence of 4 (0 … 3)") == 0);
    CHECK_INT(demo_parse_permutation("3,0,3,1", perm, 4, err, sizeof err), -1);
    CHECK(strcmp(err, "--permutation: 3 appears twice (a permutation lists each of 0 … 3 "
                      "once)") == 0);
    CHECK_INT(demo_parse_permutation("3, 0,2,1", perm, 4, err, sizeof err), -1);
    CHECK(strstr(err, "expected positions separated by commas") != NULL);
    CHECK_INT(demo_parse_permutation("", perm, 4, err, sizeof err), -1);
    CHECK_INT(demo_parse_permutation("-1,0,2,1", perm, 4, err, sizeof err), -1);
    CHECK_INT(demo_parse_permutation("1,0,2,", perm, 3, err, sizeof err), -1);
    CHECK_INT(demo_parse_permutation("99999999999999999999,0,2,1", perm, 4, err, sizeof err),
              -1);
    CHECK(strstr(err, "99999999999999999999 is not a position") != NULL);
}

/* Hand-made: π = [2, 0, 1] on 3 rows. */
static void test_permute_hand(void)
{
    const size_t perm[3] = {2, 0, 1};
    /* X (1, 3, 2): rows (0, 1), (10, 11), (20, 21) */
    const float X[6] = {0, 1, 10, 11, 20, 21};
    float Y[6];
    /* f(X) (1, 3, 1) = [1, 2, 3]; f(π·X) = [3, 1, 2.5]: off by 0.5 at row 2,
     * where π·f(X) has f(X)[1] = 2 */
    const float out[3] = {1, 2, 3}, out_p[3] = {3, 1, 2.5f};
    /* A (1, 1, 3, 3) with A[i][j] = 10i + j, and A_p = π·A·πᵀ but for one
     * entry: A_p[i][j] = A[perm[i]][perm[j]] */
    float w[9], w_p[9];
    size_t i, j;

    demo_permute_rows(Y, X, 1, 3, 2, perm);
    CHECK(Y[0] == 20 && Y[1] == 21 && Y[2] == 0 && Y[3] == 1 && Y[4] == 10 && Y[5] == 11);
    CHECK_NEAR(demo_output_diff(out_p, out, 1, 3, 1, perm), 0.5, 0, 0);
    for (i = 0; i < 3; i++)
        for (j = 0; j < 3; j++)
            w[i * 3 + j] = (float)(10 * i + j);
    for (i = 0; i < 3; i++)
        for (j = 0; j < 3; j++)
            w_p[i * 3 + j] = (float)(10 * perm[i] + perm[j]);
    CHECK_NEAR(demo_weight_diff(w_p, w, 1, 1, 3, perm), 0.0, 0, 0);
    CHECK(w_p[0] == 22 && w_p[1] == 20 && w_p[5] == 1); /* A[2][2], A[2][0], A[0][1] */
    w_p[7] += 0.25f;
    CHECK_NEAR(demo_weight_diff(w_p, w, 1, 1, 3, perm), 0.25, 0, 0);
}

/* A random problem of self-attention without valid_lens. */
static void make_problem(problem *pr, size_t B, size_t N, size_t H, size_t NH, int bias,
                         unsigned long long seed)
{
    problem_opts o;
    char err[256];
    int usage;
    memset(&o, 0, sizeof o);
    o.self = 1;
    o.batch = (long)B;
    o.queries = (long)N;
    o.hiddens = (long)H;
    o.heads = (long)NH;
    o.bias = bias;
    o.fill_random = 1;
    o.no_valid_lens = 1;
    o.seed = seed;
    o.max_mem = (size_t)1 << 30;
    if (problem_random(pr, &o, err, sizeof err, &usage)) {
        fprintf(stderr, "problem_random: %s\n", err);
        exit(1);
    }
}

/* The experiment done here: the reference loops on X and on π·X (with P
 * added after permuting when posenc), our own comparison loops. */
static void compare_here(const problem *pr, const size_t *perm, int posenc, double *dout,
                         double *dw)
{
    const size_t B = pr->B, N = pr->Nq, D = pr->Dq, H = pr->params.num_hiddens;
    const size_t NH = pr->params.num_heads;
    const mha_masks mask = {NULL, 0, 0, 0};
    float *X = xmalloc(B * N * D * sizeof *X), *Xp = xmalloc(B * N * D * sizeof *Xp);
    float *P = xmalloc(N * D * sizeof *P);
    float *out = xmalloc(B * N * H * sizeof *out), *out_p = xmalloc(B * N * H * sizeof *out);
    float *w = xmalloc(B * NH * N * N * sizeof *w), *w_p = xmalloc(B * NH * N * N * sizeof *w);
    char err[256];
    size_t b, h, i, j, c;

    posenc_fill(P, N, D, 10000.0);
    for (b = 0; b < B; b++)
        for (i = 0; i < N; i++)
            for (c = 0; c < D; c++) {
                float pe = posenc ? P[i * D + c] : 0.0f;
                X[(b * N + i) * D + c] = pr->queries.data[(b * N + i) * D + c] + pe;
                Xp[(b * N + i) * D + c] = pr->queries.data[(b * N + perm[i]) * D + c] + pe;
            }
    CHECK_INT(mha_forward(out, w, NULL, X, X, X, B, N, N, &pr->params, &mask, NULL, err,
                          sizeof err), 0);
    CHECK_INT(mha_forward(out_p, w_p, NULL, Xp, Xp, Xp, B, N, N, &pr->params, &mask, NULL, err,
                          sizeof err), 0);
    *dout = *dw = 0.0;
    for (b = 0; b < B; b++)
        for (i = 0; i < N; i++)
            for (c = 0; c < H; c++)
                *dout = fmax(*dout, fabs((double)out_p[(b * N + i) * H + c] -
                                         out[(b * N + perm[i]) * H + c]));
    for (b = 0; b < B; b++)
        for (h = 0; h < NH; h++)
            for (i = 0; i < N; i++)
                for (j = 0; j < N; j++)
                    *dw = fmax(*dw, fabs((double)w_p[((b * NH + h) * N + i) * N + j] -
                                         w[((b * NH + h) * N + perm[i]) * N + perm[j]]));
    free(X);
    free(Xp);
    free(P);
    free(out);
    free(out_p);
    free(w);
    free(w_p);
}

static void test_permute_random(void)
{
    const mha_masks nomask = {NULL, 0, 0, 0};
    /* (B, N, H, NH, bias, seed): non-square throughout */
    static const size_t cases[][6] = {
        {2, 7, 12, 3, 0, 1}, {1, 5, 16, 2, 1, 2}, {3, 11, 20, 4, 0, 3}, {1, 2, 6, 1, 0, 4}};
    size_t c, naive;
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        problem pr;
        size_t *perm = xmalloc(cases[c][1] * sizeof *perm);
        double here_out, here_w;
        char err[256];
        make_problem(&pr, cases[c][0], cases[c][1], cases[c][2], cases[c][3], (int)cases[c][4],
                     cases[c][5]);
        demo_random_permutation(perm, pr.Nq, cases[c][5]);

        /* without positional encoding: equal up to float32 rounding */
        compare_here(&pr, perm, 0, &here_out, &here_w);
        CHECK(here_out < 1e-5);
        CHECK(here_w < 1e-5);
        for (naive = 0; naive < 2; naive++) {
            permute_result res;
            CHECK_INT(demo_permute_run(&res, &pr.params, pr.queries.data, pr.B, pr.Nq, pr.Dq,
                                       &nomask, perm, 0, (int)naive, err, sizeof err),
                      0);
            CHECK(res.output_diff < 1e-5);
            CHECK(res.weight_diff < 1e-5);
            CHECK(res.output_max > 0.01); /* the outputs are not all 0 */
            CHECK(res.equal && !res.identity && !res.rows_alike);
            permute_result_free(&res);
        }

        /* with it: clearly apart, and the demo measures what we measure */
        compare_here(&pr, perm, 1, &here_out, &here_w);
        CHECK(here_out > 1e-2);
        CHECK(here_w > 1e-2);
        for (naive = 0; naive < 2; naive++) {
            permute_result res;
            CHECK_INT(demo_permute_run(&res, &pr.params, pr.queries.data, pr.B, pr.Nq, pr.Dq,
                                       &nomask, perm, 1, (int)naive, err, sizeof err),
                      0);
            CHECK(res.output_diff > 1e-2);
            CHECK(res.weight_diff > 1e-2);
            CHECK_NEAR(res.output_diff, here_out, 1e-5, 1e-4);
            CHECK_NEAR(res.weight_diff, here_w, 1e-5, 1e-4);
            CHECK(!res.equal);
            permute_result_free(&res);
        }
        free(perm);
        problem_free(&pr);
    }
}

/* The figure's panels by hand: N = 2, π = [1, 0], A(X) = [[.9, .1], [.4, .6]]
 * so π·A·πᵀ = [[.6, .4], [.1, .9]]; A(π·X) off by 0.004 at [0][1]: the
 * largest weight .9, 0.004 × 100 = 0.4 fits, so the difference is drawn
 * × 100. Off by 0.05 instead: × 10 (0.5), since × 20 = 1.0 would not. */
static void test_permute_panels(void)
{
    const size_t perm[2] = {1, 0};
    const float w[4] = {0.9f, 0.1f, 0.4f, 0.6f};
    float w_p[4] = {0.6f, 0.404f, 0.1f, 0.9f}, panels[8];
    double worst, top, zoom;

    demo_permute_panels(panels, w, w_p, 2, perm, &worst, &top, &zoom);
    CHECK(panels[0] == 0.6f && panels[1] == 0.4f && panels[2] == 0.1f && panels[3] == 0.9f);
    CHECK_NEAR(worst, 0.004, 1e-7, 0);
    CHECK_NEAR(top, 0.9, 1e-7, 0);
    CHECK_NEAR(zoom, 100, 0, 0);
    CHECK_NEAR(panels[5], 0.4, 1e-5, 0);
    CHECK_NEAR(panels[4], 0.0, 0, 0);
    w_p[1] = 0.45f;
    demo_permute_panels(panels, w, w_p, 2, perm, &worst, &top, &zoom);
    CHECK_NEAR(zoom, 10, 0, 0);
    CHECK_NEAR(panels[5], 0.5, 1e-5, 0);
}

/* The verdict flags: the identity moves nothing; rows of ones are alike. */
static void test_permute_flags(void)
{
    const mha_masks nomask = {NULL, 0, 0, 0};
    const size_t id[3] = {0, 1, 2}, swap[3] = {1, 0, 2};
    problem pr;
    permute_result res;
    char err[256];
    make_problem(&pr, 2, 3, 8, 2, 0, 9);
    CHECK_INT(demo_permute_run(&res, &pr.params, pr.queries.data, 2, 3, pr.Dq, &nomask, id, 1, 1,
                               err, sizeof err),
              0);
    CHECK(res.identity && res.equal && !res.rows_alike);
    CHECK_NEAR(res.output_diff, 0.0, 0, 0);
    permute_result_free(&res);
    for (size_t i = 0; i < pr.queries.size; i++)
        pr.queries.data[i] = 1.0f;
    CHECK_INT(demo_permute_run(&res, &pr.params, pr.queries.data, 2, 3, pr.Dq, &nomask, swap, 0, 1,
                               err, sizeof err),
              0);
    CHECK(!res.identity && res.equal && res.rows_alike);
    permute_result_free(&res);
    problem_free(&pr);
}

/* ---- why divide by √d -------------------------------------------------- */

/* The entropy of the two weights (p, 1 − p), in nats. */
static double entropy2(double p)
{
    return -p * log(p) - (1.0 - p) * log(1.0 - p);
}

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

/* S = 3 queries and keys of d = 4, n = 2 keys per row (scale 1/√4 = 1/2):
 *   q0 = (1,0,0,0)  q1 = (0,1,3,0)  q2 = (1,1,1,1)
 *   k0 = (2,0,0,0)  k1 = (0,0,1,0)  k2 = (1,-1,0,0)
 * row 0 takes k0, k1: scores 2, 0;  row 1 k1, k2: 3, -1;  row 2 k2, k0: 0, 2.
 * Six scores summing to 6 (mean 1), squares summing to 18:
 *   var = (18 − 6²/6) / 5 = 2.4, and scaled by 1/2: 2.4 / 4 = 0.6.
 * A softmax over two scores with gap g gives the larger one σ(g): gaps 2, 4,
 * 2 raw and 1, 2, 1 scaled. */
static void test_sweep_hand(void)
{
    const float q[12] = {1, 0, 0, 0, 0, 1, 3, 0, 1, 1, 1, 1};
    const float k[12] = {2, 0, 0, 0, 0, 0, 1, 0, 1, -1, 0, 0};
    double scores[2];
    sweep_point pt;

    demo_sweep_stats(&pt, q, k, 3, 4, 2, scores);
    CHECK_INT(pt.d, 4);
    CHECK_NEAR(pt.var_raw, 2.4, 1e-12, 0);
    CHECK_NEAR(pt.var_scaled, 0.6, 1e-12, 0);
    CHECK_NEAR(pt.max_raw, (2 * sigmoid(2) + sigmoid(4)) / 3, 1e-12, 0);
    CHECK_NEAR(pt.max_raw, 0.914536, 1e-6, 0);
    CHECK_NEAR(pt.max_scaled, (2 * sigmoid(1) + sigmoid(2)) / 3, 1e-12, 0);
    CHECK_NEAR(pt.max_scaled, 0.780971, 1e-6, 0);
    CHECK_NEAR(pt.ent_raw, (2 * entropy2(sigmoid(2)) + entropy2(sigmoid(4))) / 3, 1e-12, 0);
    CHECK_NEAR(pt.ent_scaled, (2 * entropy2(sigmoid(1)) + entropy2(sigmoid(2))) / 3, 1e-12, 0);

    /* equal scores: uniform, largest weight 1/n, entropy log n */
    {
        const float q1[3] = {0, 0, 0}, k1[3] = {1, 2, 3};
        double s3[3];
        demo_sweep_stats(&pt, q1, k1, 3, 1, 3, s3);
        CHECK_NEAR(pt.max_raw, 1.0 / 3.0, 1e-12, 0);
        CHECK_NEAR(pt.ent_raw, log(3.0), 1e-12, 0);
        CHECK_NEAR(pt.var_raw, 0.0, 1e-12, 0);
    }
}

static void test_sweep(void)
{
    const size_t S = 10000, n = 16, dmax = 1024;
    float *q = xmalloc(S * dmax * sizeof *q), *k = xmalloc(S * dmax * sizeof *k);
    double scores[16], prev_raw = 0.0;
    sweep_point pt, again;
    size_t d;

    for (d = 1; d <= dmax; d *= 2) {
        demo_sweep_point(&pt, d, S, n, 0, q, k, scores);
        printf("d %4zu: var %9.3f %6.3f  largest weight %.4f %.4f  entropy %.4f %.4f\n", d,
               pt.var_raw, pt.var_scaled, pt.max_raw, pt.max_scaled, pt.ent_raw,
               pt.ent_scaled);
        CHECK_INT(pt.d, d);
        /* variance: d raw, 1 scaled, within 10% */
        CHECK_NEAR(pt.var_raw, (double)d, 0, 0.1);
        CHECK_NEAR(pt.var_scaled, 1.0, 0, 0.1);
        /* scaled: one shape whatever d (uniform would be 1/16 and log 16 = 2.77) */
        CHECK(pt.max_scaled > 0.15 && pt.max_scaled < 0.35);
        CHECK(pt.ent_scaled > 2.1 && pt.ent_scaled < 2.6);
        /* raw: ever more peaked */
        CHECK(pt.max_raw >= prev_raw - 0.01);
        CHECK(pt.max_raw >= pt.max_scaled - 0.01);
        prev_raw = pt.max_raw;
        if (d == 1) /* 1/√1 = 1: both the same */
            CHECK(pt.max_raw == pt.max_scaled && pt.ent_raw == pt.ent_scaled);
    }
    /* d = 1024: near one-hot without the factor */
    CHECK(pt.max_raw > 0.9);
    CHECK(pt.ent_raw < 0.2);
    /* the same seed and d, the same numbers; another seed, others */
    demo_sweep_point(&again, 1024, S, n, 0, q, k, scores);
    CHECK(again.var_raw == pt.var_raw && again.max_raw == pt.max_raw);
    demo_sweep_point(&again, 1024, S, n, 1, q, k, scores);
    CHECK(again.var_raw != pt.var_raw);
    free(q);
    free(k);
}

/* The whole sweep: one point per power of two, each the same as
 * demo_sweep_point's; the buffer size by hand. */
static void test_sweep_run(void)
{
    sweep_point pts[8], one;
    size_t npts = 0, bytes = 0;
    float q[200 * 8], k[200 * 8];
    double scores[5];
    char err[128];
    CHECK_INT(demo_sweep(pts, 8, &npts, 2, 8, 200, 5, 3, NULL, err, sizeof err), 0);
    CHECK_INT(npts, 3);
    CHECK_INT(pts[0].d, 2);
    CHECK_INT(pts[2].d, 8);
    demo_sweep_point(&one, 4, 200, 5, 3, q, k, scores);
    CHECK(one.var_raw == pts[1].var_raw && one.ent_scaled == pts[1].ent_scaled);
    /* q, k (200, 8) floats and 5 doubles */
    CHECK_INT(demo_sweep_bytes(200, 8, 5, &bytes), 0);
    CHECK_INT(bytes, 2 * 200 * 8 * sizeof(float) + 5 * sizeof(double));
    CHECK_INT(demo_sweep_bytes((size_t)-1, 8, 5, &bytes), -1);
}

/* --depth's measures by hand, and one layer of each kind on two tokens
 * with identity projections, one head: scores X Xᵀ / √2 = I / √2, so
 * token 0's weights are (a, 1 − a), a = e^(1/√2) / (e^(1/√2) + 1). */
static void test_collapse_hand(void)
{
    const float opposite[4] = {1, 0, -1, 0}, same[4] = {1, 1, 1, 1}, apart[4] = {3, 0, 1, 0};
    double mean[2], spread, residual;
    collapse_measure(opposite, 2, 2, mean, &spread, &residual); /* x̄ = 0 */
    CHECK_NEAR(spread, 1.0, 1e-12, 0);
    CHECK_NEAR(residual, 1.0, 1e-12, 0);
    collapse_measure(same, 2, 2, mean, &spread, &residual); /* one vector */
    CHECK(spread == 0 && residual == 0);
    collapse_measure(apart, 2, 2, mean, &spread, &residual); /* x̄ = (2, 0) */
    CHECK_NEAR(mean[0], 2.0, 1e-12, 0);
    CHECK_NEAR(spread, 1.0, 1e-12, 0);
    CHECK_NEAR(residual, sqrt(2.0 / 10.0), 1e-12, 0);

    const float X[4] = {1, 0, 0, 1};
    const double a = exp(1 / sqrt(2.0)) / (exp(1 / sqrt(2.0)) + 1);
    const double mha[4] = {a, 1 - a, 1 - a, a};
    mha_params m;
    float out[4];
    char err[128];
    memset(&m, 0, sizeof m);
    m.num_heads = 1;
    m.num_hiddens = 2;
    linear *l[4] = {&m.W_q, &m.W_k, &m.W_v, &m.W_o};
    for (int i = 0; i < 4; i++) {
        CHECK(tensor_alloc2(&l[i]->weight, 2, 2, err, sizeof err) == 0);
        memcpy(l[i]->weight.data, X, sizeof X); /* the identity */
    }
    CHECK(collapse_layer(out, X, 1, 2, &m, NULL, COLLAPSE_ATTENTION, err, sizeof err) == 0);
    for (int i = 0; i < 4; i++)
        CHECK_NEAR(out[i], mha[i], 1e-7, 0);
    CHECK(collapse_layer(out, X, 1, 2, &m, NULL, COLLAPSE_RESIDUAL, err, sizeof err) == 0);
    for (int i = 0; i < 4; i++)
        CHECK_NEAR(out[i], X[i] + mha[i], 1e-7, 0);
    /* LayerNorm of (1 + a, 1 − a): (±a) / sqrt(a² + 1e-5) */
    CHECK(collapse_layer(out, X, 1, 2, &m, NULL, COLLAPSE_ADDNORM, err, sizeof err) == 0);
    const double ln = a / sqrt(a * a + 1e-5);
    CHECK_NEAR(out[0], ln, 1e-6, 0);
    CHECK_NEAR(out[1], -ln, 1e-6, 0);
    CHECK_NEAR(out[2], -ln, 1e-6, 0);
    CHECK_NEAR(out[3], ln, 1e-6, 0);
    for (int i = 0; i < 4; i++)
        linear_free(l[i]);
}

int main(void)
{
    test_collapse_hand();
    test_random_permutation();
    test_parse_permutation();
    test_permute_hand();
    test_permute_random();
    test_permute_panels();
    test_permute_flags();
    test_sweep_hand();
    test_sweep();
    test_sweep_run();
    return check_summary("test_demo");
}
