/* test_complexity.c — the layers of `attn complexity` against values worked
 * out by hand, their multiply-add counts against hand formulas, the path
 * lengths against the chapter's figure and closed forms, and the log-log
 * fit against synthetic data with a known exponent. Nothing here times
 * anything. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "check.h"
#include "complexity.h"
#include "rng.h"

static float *floats(size_t count)
{
    float *p = calloc(count ? count : 1, sizeof *p);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

/* A (d, d) nn.Linear without bias holding w (NULL: zeros). */
static linear make_linear(size_t d, const float *w)
{
    linear l;
    memset(&l, 0, sizeof l);
    l.weight.data = floats(d * d);
    l.weight.ndim = 2;
    l.weight.shape[0] = d;
    l.weight.shape[1] = d;
    l.weight.size = d * d;
    if (w)
        memcpy(l.weight.data, w, d * d * sizeof *w);
    return l;
}

static void fill_random(float *x, size_t count, rng *g)
{
    size_t i;
    for (i = 0; i < count; i++)
        x[i] = (float)(2.0 * rng_uniform(g) - 1.0);
}

/* ---- multiply-add counts by hand --------------------------------------- */

static void test_counts(void)
{
    /* n = 5, k = 3, same padding: outputs 0 and 4 lose one tap each:
     * 2 + 3 + 3 + 3 + 2 = 13 taps, d = 2: 13·4 = 52 (k·n·d² would be 60) */
    CHECK_INT(conv_taps(5, 3, 1), 13);
    CHECK_INT(conv_macs(5, 2, 3, 1), 52);
    /* k = 2 reads t and t+1: the last output loses one tap: 4 + 3 = 7, d = 3: 63 */
    CHECK_INT(conv_taps(4, 2, 1), 7);
    CHECK_INT(conv_macs(4, 3, 2, 1), 63);
    /* k = 5, n = 7: offsets −2 … 2 are inside for 5, 6, 7, 6, 5 outputs = 29 */
    CHECK_INT(conv_taps(7, 5, 1), 29);
    /* n = 2 < k = 5: offsets ±2 never fit, ±1 once each, 0 twice: 4 */
    CHECK_INT(conv_taps(2, 5, 1), 4);
    CHECK_INT(conv_taps(1, 3, 1), 1);
    /* k = 4 (one tap before, two after), n = 6: offsets −1, 0, 1, 2: 5 + 6 + 5 + 4 = 20 */
    CHECK_INT(conv_taps(6, 4, 1), 20);
    /* dilation 3, k = 3, n = 5: offsets −3, 0, 3: 2 + 5 + 2 = 9 */
    CHECK_INT(conv_taps(5, 3, 3), 9);
    /* dilation 5 >= n = 5: only the centre tap: 5 */
    CHECK_INT(conv_taps(5, 3, 5), 5);
    /* the default table: n = 100, d = 512, k = 3: 298 taps · 512² */
    CHECK_INT(conv_taps(100, 3, 1), 298);
    CHECK_INT(conv_macs(100, 512, 3, 1), 78118912ULL);
    /* the largest the command allows: 1000·10^6 taps minus 499·500/2 on the
     * left and 500·501/2 on the right */
    CHECK_INT(conv_taps(1000000, 1000, 1), 1000ULL * 1000000ULL - 250000ULL);

    /* RNN: n·(d·d + d·d) */
    CHECK_INT(rnn_macs(7, 3), 126);
    CHECK_INT(rnn_macs(100, 512), 52428800ULL);
    CHECK_INT(rnn_macs(1, 1), 2);

    /* self-attention n = 4, d = 2: QKᵀ 16·2 + A·V 16·2 = 64; projections 3·4·4 = 48 */
    CHECK_INT(cx_attn_keys(4, 0), 16);
    CHECK_INT(cx_attn_core_macs(4, 2, 0), 64);
    CHECK_INT(cx_attn_proj_macs(4, 2), 48);
    CHECK_INT(cx_attn_core_macs(100, 512, 0), 10240000ULL);
    CHECK_INT(cx_attn_proj_macs(100, 512), 78643200ULL);
    /* restricted r = 3, n = 5: 2 + 3 + 3 + 3 + 2 = 13 keys; d = 2: 2·2·13 = 52 */
    CHECK_INT(cx_attn_keys(5, 3), 13);
    CHECK_INT(cx_attn_core_macs(5, 2, 3), 52);
    /* r = 2 sees t and t+1: 2 + 2 + 2 + 2 + 1 = 9 */
    CHECK_INT(cx_attn_keys(5, 2), 9);
    /* r = 9, n = 100: 100·9 minus 4 + 3 + 2 + 1 missing at each end = 880 */
    CHECK_INT(cx_attn_keys(100, 9), 880);
    /* a window wider than twice the sequence sees every key */
    CHECK_INT(cx_attn_keys(4, 100), 16);
    CHECK_INT(cx_attn_row_width(4, 100), 4);
    CHECK_INT(cx_attn_row_width(10, 3), 3);
    CHECK_INT(cx_attn_row_width(10, 0), 10);
}

/* ---- the layers, by hand ------------------------------------------------ */

static void test_conv_by_hand(void)
{
    /* d = 1, k = 3, W = [1, 2, 3], b = 0.5, x = [1, 2, 3, 4]:
     * y_t = 0.5 + 1·x_{t−1} + 2·x_t + 3·x_{t+1}, zeros outside */
    const float x[4] = {1, 2, 3, 4}, W[3] = {1, 2, 3}, b[1] = {0.5f};
    float y[4];
    CHECK_INT(conv_forward(y, x, W, b, 4, 1, 3, 1), 10); /* 2 + 3 + 3 + 2 taps */
    CHECK_NEAR(y[0], 8.5, 0, 0);  /* 0.5 + 2·1 + 3·2 */
    CHECK_NEAR(y[1], 14.5, 0, 0); /* 0.5 + 1 + 4 + 9 */
    CHECK_NEAR(y[2], 20.5, 0, 0); /* 0.5 + 2 + 6 + 12 */
    CHECK_NEAR(y[3], 11.5, 0, 0); /* 0.5 + 3 + 8 */

    /* d = 2, k = 2 (taps at t and t+1), n = 3; W[o][i][j]:
     *   W[0][0] = [1, 0]  W[0][1] = [0, 1]  W[1][0] = [0, 0]  W[1][1] = [2, −1]
     * y[t][0] = x[t][0] + x[t+1][1];  y[t][1] = 1 + 2·x[t][1] − x[t+1][1] */
    {
        const float x2[6] = {1, 2, 3, 4, 5, 6};           /* (3, 2) */
        const float W2[8] = {1, 0, 0, 1, 0, 0, 2, -1};    /* (2, 2, 2) */
        const float b2[2] = {0, 1};
        float y2[6];
        CHECK_INT(conv_forward(y2, x2, W2, b2, 3, 2, 2, 1), 5 * 4); /* 5 taps · d² */
        CHECK_NEAR(y2[0], 5, 0, 0);  /* 1 + 4 */
        CHECK_NEAR(y2[1], 1, 0, 0);  /* 1 + 4 − 4 */
        CHECK_NEAR(y2[2], 9, 0, 0);  /* 3 + 6 */
        CHECK_NEAR(y2[3], 3, 0, 0);  /* 1 + 8 − 6 */
        CHECK_NEAR(y2[4], 5, 0, 0);  /* 5 + padding */
        CHECK_NEAR(y2[5], 13, 0, 0); /* 1 + 12 − padding */
    }

    /* dilation 2, d = 1, k = 3, W = [1, 10, 100], n = 5, x = [1, 2, 3, 4, 5]:
     * y_t = x_{t−2} + 10·x_t + 100·x_{t+2} */
    {
        const float x3[5] = {1, 2, 3, 4, 5}, W3[3] = {1, 10, 100}, b3[1] = {0};
        float y3[5];
        CHECK_INT(conv_forward(y3, x3, W3, b3, 5, 1, 3, 2), 3 + 5 + 3);
        CHECK_NEAR(y3[0], 310, 0, 0);  /* 10·1 + 100·3 */
        CHECK_NEAR(y3[2], 531, 0, 0);  /* 1 + 30 + 500 */
        CHECK_NEAR(y3[4], 53, 0, 0);   /* 3 + 50 */
    }
}

static void test_rnn_by_hand(void)
{
    /* d = 1: h_t = tanh(0.5·x_t − 0.3·h_{t−1} + 0.1), h_0 = 0 */
    const float x[3] = {1, -1, 0.5f}, W_xh[1] = {0.5f}, W_hh[1] = {-0.3f}, b[1] = {0.1f};
    float H[4]; /* (n + 1, d) */
    double h1 = tanh(0.5 * 1 + 0.1);
    double h2 = tanh(0.5 * -1 - 0.3 * h1 + 0.1);
    double h3 = tanh(0.5 * 0.5 - 0.3 * h2 + 0.1);
    CHECK_INT(rnn_forward(H, x, W_xh, W_hh, b, 3, 1), 6);
    CHECK_NEAR(H[0], 0, 0, 0);
    CHECK_NEAR(H[1], h1, 1e-6, 0);
    CHECK_NEAR(H[2], h2, 1e-6, 0);
    CHECK_NEAR(H[3], h3, 1e-6, 0);

    /* d = 2, W_xh = I, W_hh = [[0, 1], [0, 0]]: h_t[0] = tanh(x_t[0] + h_{t−1}[1]),
     * h_t[1] = tanh(x_t[1]); the row/column order of W_hh matters */
    {
        const float x2[4] = {0.1f, 0.2f, 0.3f, 0.4f};
        const float I[4] = {1, 0, 0, 1}, Whh[4] = {0, 1, 0, 0}, b2[2] = {0, 0};
        float H2[6];
        CHECK_INT(rnn_forward(H2, x2, I, Whh, b2, 2, 2), 2 * 2 * 4);
        CHECK_NEAR(H2[2], tanh(0.1), 1e-6, 0);
        CHECK_NEAR(H2[3], tanh(0.2), 1e-6, 0);
        CHECK_NEAR(H2[4], tanh(0.3 + tanh(0.2)), 1e-6, 0);
        CHECK_NEAR(H2[5], tanh(0.4), 1e-6, 0);
    }
}

static void test_attention_by_hand(void)
{
    /* n = 2, d = 1, every weight 1: q_0 = 0 scores both keys 0 → weights ½, ½;
     * q_1 = 1 scores [0, 1] → weights 1/(1+e), e/(1+e) */
    const float one = 1.0f, X[2] = {0, 1};
    linear W = make_linear(1, &one);
    float Y[2], A[4], Q[2], K[2], V[2];
    const double e = exp(1.0);
    CHECK_INT(cx_attn_forward(Y, A, Q, K, V, X, &W, &W, &W, 2, 1, 0), 3 * 2 + 2 * 4);
    CHECK_NEAR(A[0], 0.5, 1e-7, 0);
    CHECK_NEAR(A[3], e / (1 + e), 1e-7, 0);
    CHECK_NEAR(Y[0], 0.5, 1e-7, 0);
    CHECK_NEAR(Y[1], e / (1 + e), 1e-7, 0);
    free(W.weight.data);

    /* W_q = W_k = 0: all scores 0, so each output is the mean of the values
     * its window sees; W_v = 1, X = [1, 2, 4, 8, 16] */
    {
        const float X5[5] = {1, 2, 4, 8, 16};
        linear Z = make_linear(1, NULL), I = make_linear(1, &one);
        float Y5[5], A5[25], Q5[5], K5[5], V5[5];
        /* r = 3: t − 1 … t + 1 */
        CHECK_INT(cx_attn_forward(Y5, A5, Q5, K5, V5, X5, &Z, &Z, &I, 5, 1, 3), 15 + 2 * 13);
        CHECK_NEAR(Y5[0], 1.5, 1e-6, 0);
        CHECK_NEAR(Y5[1], 7.0 / 3, 1e-6, 0);
        CHECK_NEAR(Y5[2], 14.0 / 3, 1e-6, 0);
        CHECK_NEAR(Y5[3], 28.0 / 3, 1e-6, 0);
        CHECK_NEAR(Y5[4], 12, 1e-6, 0);
        /* row 0 has two weights, row 2 three */
        CHECK_NEAR(A5[0], 0.5, 1e-7, 0);
        CHECK_NEAR(A5[2 * 3 + 2], 1.0 / 3, 1e-7, 0);
        /* r = 2: t and t + 1 */
        CHECK_INT(cx_attn_forward(Y5, A5, Q5, K5, V5, X5, &Z, &Z, &I, 5, 1, 2), 15 + 2 * 9);
        CHECK_NEAR(Y5[1], 3, 1e-6, 0);
        CHECK_NEAR(Y5[3], 12, 1e-6, 0);
        CHECK_NEAR(Y5[4], 16, 1e-6, 0);
        /* no window: the mean of all five */
        CHECK_INT(cx_attn_forward(Y5, A5, Q5, K5, V5, X5, &Z, &Z, &I, 5, 1, 0), 15 + 2 * 25);
        CHECK_NEAR(Y5[2], 31.0 / 5, 1e-6, 0);
        free(Z.weight.data);
        free(I.weight.data);
    }
}

/* The self-attention layer is d2l's MultiHeadAttention with one head and
 * W_o = I: compare with attention.c on random, non-square-friendly sizes. */
static void test_attention_matches_mha(void)
{
    const size_t n = 7, d = 6;
    rng g;
    float *X = floats(n * d), *Y = floats(n * d), *A = floats(n * n);
    float *Q = floats(n * d), *K = floats(n * d), *V = floats(n * d);
    float *out = floats(n * d), *weights = floats(n * n), *eye = floats(d * d);
    float *w = floats(3 * d * d);
    mha_params m;
    mha_masks mask = {NULL, 0, 0, 0};
    char err[128];
    double worst = 0, worst_w = 0;
    size_t i;

    rng_seed(&g, 42);
    fill_random(X, n * d, &g);
    fill_random(w, 3 * d * d, &g);
    for (i = 0; i < d; i++)
        eye[i * d + i] = 1.0f;
    memset(&m, 0, sizeof m);
    m.num_heads = 1;
    m.num_hiddens = d;
    m.score = SCORE_DOT;
    m.W_q = make_linear(d, w);
    m.W_k = make_linear(d, w + d * d);
    m.W_v = make_linear(d, w + 2 * d * d);
    m.W_o = make_linear(d, eye);

    CHECK_INT(cx_attn_forward(Y, A, Q, K, V, X, &m.W_q, &m.W_k, &m.W_v, n, d, 0),
              3 * n * d * d + 2 * n * n * d);
    CHECK(mha_forward(out, weights, NULL, X, X, X, 1, n, n, &m, &mask, NULL, err,
                      sizeof err) == 0);
    for (i = 0; i < n * d; i++)
        worst = fmax(worst, fabs((double)Y[i] - out[i]));
    for (i = 0; i < n * n; i++)
        worst_w = fmax(worst_w, fabs((double)A[i] - weights[i]));
    CHECK_NEAR(worst, 0, 1e-6, 0);
    CHECK_NEAR(worst_w, 0, 1e-7, 0);

    /* a window wider than 2n − 1 is no restriction: the same numbers */
    {
        float *Y2 = floats(n * d), *A2 = floats(n * n);
        CHECK_INT(cx_attn_forward(Y2, A2, Q, K, V, X, &m.W_q, &m.W_k, &m.W_v, n, d, 2 * n),
                  3 * n * d * d + 2 * n * n * d);
        CHECK(memcmp(Y, Y2, n * d * sizeof *Y) == 0);
        CHECK(memcmp(A, A2, n * n * sizeof *A) == 0);
        free(Y2);
        free(A2);
    }

    free(m.W_q.weight.data);
    free(m.W_k.weight.data);
    free(m.W_v.weight.data);
    free(m.W_o.weight.data);
    free(X), free(Y), free(A), free(Q), free(K), free(V);
    free(out), free(weights), free(eye), free(w);
}

/* What each layer's loops count equals the *_macs formulas, for shapes
 * with n < k, n = k, n ≫ k, even and odd k, dilation and windows. */
static void test_counts_match_layers(void)
{
    static const size_t ns[] = {1, 2, 3, 5, 8, 13};
    static const size_t ks[] = {2, 3, 4, 5, 7};
    const size_t d = 3;
    float *x = floats(13 * d), *y = floats(14 * d), *W = floats(d * d * 7), *b = floats(d);
    float *Q = floats(13 * d), *K = floats(13 * d), *V = floats(13 * d), *A = floats(13 * 13);
    linear L = make_linear(d, NULL);
    size_t i, j, dil;

    for (i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        size_t n = ns[i];
        for (j = 0; j < sizeof ks / sizeof ks[0]; j++)
            for (dil = 1; dil <= 4; dil++)
                CHECK_INT(conv_forward(y, x, W, b, n, d, ks[j], dil), conv_macs(n, d, ks[j], dil));
        CHECK_INT(rnn_forward(y, x, W, W, b, n, d), rnn_macs(n, d));
        CHECK_INT(rnn_macs(n, d), n * 2 * d * d);
        CHECK_INT(cx_attn_forward(y, A, Q, K, V, x, &L, &L, &L, n, d, 0),
                  cx_attn_core_macs(n, d, 0) + cx_attn_proj_macs(n, d));
        CHECK_INT(cx_attn_core_macs(n, d, 0), 2 * n * n * d);
        for (j = 2; j <= 9; j++)
            CHECK_INT(cx_attn_forward(y, A, Q, K, V, x, &L, &L, &L, n, d, j),
                      cx_attn_core_macs(n, d, j) + cx_attn_proj_macs(n, d));
        /* for n >= k the hand formula: k·n taps minus the triangles at the
         * ends, (k−1)/2 taps deep on the left and k/2 on the right */
        for (j = 0; j < sizeof ks / sizeof ks[0]; j++) {
            size_t k = ks[j], left = (k - 1) / 2, right = k / 2;
            if (n >= k)
                CHECK_INT(conv_taps(n, k, 1),
                          k * n - left * (left + 1) / 2 - right * (right + 1) / 2);
        }
    }
    free(x), free(y), free(W), free(b), free(Q), free(K), free(V), free(A);
    free(L.weight.data);
}

/* ---- maximum path length ------------------------------------------------ */

static size_t path_or_fail(int (*f)(size_t, size_t, size_t *), size_t n, size_t k)
{
    size_t steps = 9999;
    if (f(n, k, &steps) != 0)
        return 9999;
    return steps;
}

static void test_paths(void)
{
    size_t n, k, steps, want, power;

    /* the chapter's figure: x_1 and x_5 in the receptive field of 2 layers, k = 3 */
    CHECK_INT(path_or_fail(path_conv, 5, 3), 2);
    CHECK_INT(path_or_fail(path_conv, 9, 3), 4);
    CHECK_INT(path_or_fail(path_conv, 17, 5), 4);
    CHECK_INT(path_or_fail(path_conv, 6, 3), 3);
    CHECK_INT(path_or_fail(path_conv, 5, 2), 4);
    CHECK_INT(path_or_fail(path_conv, 1, 3), 0);
    CHECK_INT(path_or_fail(path_conv, 2, 3), 1);
    CHECK_INT(path_or_fail(path_conv, 100, 3), 50);
    /* the same by boolean sets, and ⌈(n−1)/(k−1)⌉ for many n and k */
    for (k = 2; k <= 7; k++)
        for (n = 1; n <= 120; n++) {
            want = n == 1 ? 0 : (n - 2) / (k - 1) + 1;
            CHECK_INT(path_or_fail(path_conv, n, k), want);
            CHECK(path_conv_sets(n, k, 0, &steps) == 0 && steps == want);
        }

    /* dilated (dilations 1, 3, 9, …): n = 5 → layers 1 and 3 meet at once:
     * x_1 reaches {1, 2} then {1, 2, 4, 5} */
    CHECK_INT(path_or_fail(path_dilated, 5, 3), 2);
    CHECK_INT(path_or_fail(path_dilated, 9, 3), 2);   /* {1,2,4,5} meets {5,6,8,9} at 5 */
    CHECK_INT(path_or_fail(path_dilated, 10, 3), 3);  /* 3² = 9 < 10 positions */
    CHECK_INT(path_or_fail(path_dilated, 27, 3), 3);
    CHECK_INT(path_or_fail(path_dilated, 28, 3), 4);
    CHECK_INT(path_or_fail(path_dilated, 8, 2), 3);   /* 2³ = 8 */
    CHECK_INT(path_or_fail(path_dilated, 9, 2), 4);
    CHECK_INT(path_or_fail(path_dilated, 1, 2), 0);
    CHECK_INT(path_or_fail(path_dilated, 100, 3), 5); /* 3⁴ = 81 < 100 <= 243 */
    /* ⌈log_k n⌉ for many n and k */
    for (k = 2; k <= 6; k++)
        for (n = 1; n <= 300; n++) {
            want = 0;
            for (power = 1; power < n; power *= k)
                want++;
            CHECK_INT(path_or_fail(path_dilated, n, k), want);
        }

    /* RNN: x_1 reaches h_n after n − 1 recurrences */
    for (n = 1; n <= 50; n++) {
        CHECK(path_rnn(n, &steps) == 0);
        CHECK_INT(steps, n - 1);
    }
    CHECK(path_rnn(100000, &steps) == 0 && steps == 99999);

    /* self-attention: one layer connects every pair */
    CHECK(path_attention(1, &steps) == 0 && steps == 0);
    for (n = 2; n <= 50; n++)
        CHECK(path_attention(n, &steps) == 0 && steps == 1);

    /* restricted self-attention: a window of r acts like a kernel of r */
    CHECK_INT(path_or_fail(path_restricted, 5, 3), 2);
    CHECK_INT(path_or_fail(path_restricted, 100, 9), 13);
    CHECK_INT(path_or_fail(path_restricted, 5, 2), 4);
    CHECK_INT(path_or_fail(path_restricted, 5, 10), 1);  /* sees everything */
    CHECK_INT(path_or_fail(path_restricted, 5, 8), 1);   /* 3 before, 4 after: covers 0 … 4 from 1 */

    /* a kernel or window of one never connects: stopped, not looping */
    CHECK_INT(path_conv(5, 1, &steps), PATH_STALLED);
    CHECK_INT(path_conv_sets(5, 1, 0, &steps), PATH_STALLED);
    CHECK_INT(path_conv_sets(5, 1, 1, &steps), PATH_STALLED);
    CHECK_INT(path_restricted(5, 1, &steps), PATH_STALLED);
    CHECK_INT(path_window(5, 0, 0, &steps), PATH_STALLED);
    /* but with one position there is nothing to connect */
    CHECK(path_conv(1, 1, &steps) == 0 && steps == 0);
}

/* ---- the fit ---------------------------------------------------------- */

static void test_fit(void)
{
    double x[7], y[7], noisy[7];
    size_t i;
    for (i = 0; i < 7; i++)
        x[i] = 64.0 * pow(2.0, (double)i); /* 64 … 4096 */

    /* y = 3·x^1.7 exactly */
    for (i = 0; i < 7; i++)
        y[i] = 3.0 * pow(x[i], 1.7);
    CHECK_NEAR(fit_loglog_slope(x, y, 7), 1.7, 1e-12, 0);
    /* y = 2e-9·x²: the chapter's self-attention */
    for (i = 0; i < 7; i++)
        y[i] = 2e-9 * x[i] * x[i];
    CHECK_NEAR(fit_loglog_slope(x, y, 7), 2.0, 1e-12, 0);
    /* linear, on two points only */
    CHECK_NEAR(fit_loglog_slope(x + 5, x + 5, 2), 1.0, 1e-12, 0);

    /* noise ±10 % alternating on y = x: log y = log x + ε_i, and the slope
     * moves by Σ (u_i − ū) ε_i / Σ (u_i − ū)² with u_i − ū = (i − 3)·ln 2;
     * ε = ln 1.1·(+1, −1, +1, −1, +1, −1, +1) gives
     * Σ (i − 3)·(±1) = −3 + 2 − 1 + 0 + 1 − 2 + 3 = 0: the slope stays 1 */
    for (i = 0; i < 7; i++)
        noisy[i] = x[i] * (i % 2 ? 1.0 / 1.1 : 1.1);
    CHECK_NEAR(fit_loglog_slope(x, noisy, 7), 1.0, 1e-12, 0);
    /* a noise growing with x does tilt it: ε_i = 0.05·i·ln 2 adds 0.05 */
    for (i = 0; i < 7; i++)
        noisy[i] = x[i] * pow(2.0, 0.05 * (double)i);
    CHECK_NEAR(fit_loglog_slope(x, noisy, 7), 1.05, 1e-12, 0);

    /* what cannot be fitted */
    CHECK(isnan(fit_loglog_slope(x, y, 1)));
    CHECK(isnan(fit_loglog_slope(x, y, 0)));
    {
        double same[3] = {8, 8, 8}, zero[3] = {1, 0, 2};
        CHECK(isnan(fit_loglog_slope(same, y, 3)));
        CHECK(isnan(fit_loglog_slope(x, zero, 3)));
    }

    /* the median of repetitions */
    {
        double a[3] = {3, 1, 2}, b[4] = {4, 1, 3, 2}, c[1] = {5}, d[5] = {9, 1, 1, 7, 100};
        CHECK_NEAR(median_sort(a, 3), 2, 0, 0);
        CHECK_NEAR(median_sort(b, 4), 2.5, 0, 0);
        CHECK_NEAR(median_sort(c, 1), 5, 0, 0);
        CHECK_NEAR(median_sort(d, 5), 7, 0, 0);
    }
}

/* The chapter's table for n = 7, d = 3, k = 2, r = 4, every value by hand:
 * conv k = 2 reads t and t+1: 7 + 6 = 13 taps, d²·13 = 117 (k·n·d² = 126
 * with the padding tap); path: input 0 never spreads, input 6 one position
 * a layer: 6 layers. RNN 7·2·9 = 126. Attention 2·49·3 = 294 + 3·7·9 = 189.
 * Restricted r = 4 sees t−1 … t+2: 3+4+4+4+4+3+2 = 24 keys, 2·3·24 = 144;
 * path 2 layers ({0,1} → {0,1,2}, {4,5,6} → {2,…,6}). Dilated k = 2:
 * dilations 1, 2, 4 with 13, 12, 10 taps: 9·35 = 315 over ⌈log_2 7⌉ = 3
 * layers. Crossovers (counts / d, m = n − 1): 2m² > 2m·3 from m = 4, so
 * n >= 4; 2m² > 3·(2m − 1) fails at m = 2, so n >= 3; with projections
 * always. */
static void test_table_by_hand(void)
{
    static const struct {
        const char *key, *name;
        double big_o;
        cx_count macs;
        size_t sequential_n;
        double path_big_o;
        size_t path_formula, path_measured;
        double stack_macs;
    } want[CX_NLAYERS] = {
        {"convolution", "convolution, k = 2", 126, 117, 1, 3.5, 6, 6, 702},
        {"recurrent", "recurrent (tanh)", 63, 126, 7, 7, 6, 6, 126},
        {"self_attention", "self-attention", 147, 483, 1, 1, 1, 1, 483},
        {"restricted_self_attention", "restricted attn, r = 4", 84, 333, 1, 1.75, 2, 2, 666},
        {"dilated_convolution", "dilated conv, k = 2", 126, 117, 1, 2.807354922057604, 3, 3, 315},
    };
    cx_table t;
    cx_layer bad = CX_NLAYERS;
    CHECK(cx_table_build(&t, 7, 3, 2, 4, &bad) == 0);
    CHECK_INT(bad, CX_NLAYERS);
    for (int l = 0; l < CX_NLAYERS; l++) {
        const cx_row *row = &t.rows[l];
        CHECK(strcmp(row->key, want[l].key) == 0);
        CHECK(strcmp(row->name, want[l].name) == 0);
        CHECK_NEAR(row->big_o, want[l].big_o, 0, 0);
        CHECK_INT(row->macs, want[l].macs);
        CHECK_INT(row->sequential_n, want[l].sequential_n);
        CHECK_NEAR(row->path_big_o, want[l].path_big_o, 1e-15, 1e-15);
        CHECK_INT(row->path_formula, want[l].path_formula);
        CHECK_INT(row->path_measured, want[l].path_measured);
        CHECK_NEAR(row->stack_macs, want[l].stack_macs, 0, 0);
    }
    CHECK(strcmp(t.rows[CX_DILATED].path_exact, "⌈log_2 n⌉") == 0);
    CHECK(strcmp(t.rows[CX_RESTRICTED].path_exact, "⌈(n−1)/(r−1)⌉") == 0);
    CHECK(strcmp(t.rows[CX_RNN].unit, "steps") == 0);
    CHECK_INT(t.conv_full, 126);
    CHECK_INT(t.conv_taps, 13);
    CHECK_INT(t.attn_keys, 24);
    CHECK_INT(t.attn_core, 294);
    CHECK_INT(t.attn_proj, 189);
    CHECK_INT(t.restricted_core, 144);
    CHECK_INT(t.than_rnn.big_o_n, 4);
    CHECK_INT(t.than_rnn.core_n, 4);
    CHECK_INT(t.than_rnn.proj_n, 1);
    CHECK_INT(t.than_conv.big_o_n, 7);
    CHECK_INT(t.than_conv.core_n, 3);
    CHECK_INT(t.than_conv.proj_n, 1);

    /* n = 1: nothing to connect, no path, no stack */
    CHECK(cx_table_build(&t, 1, 4, 3, 5, &bad) == 0);
    CHECK_INT(t.rows[CX_CONV].macs, 16);     /* the centre tap only */
    CHECK_INT(t.rows[CX_ATTN].macs, 8 + 48); /* 2·1·4 + 3·1·16 */
    for (int l = 0; l < CX_NLAYERS; l++) {
        CHECK_INT(t.rows[l].path_measured, 0);
        CHECK_INT(t.rows[l].path_formula, 0);
        CHECK_NEAR(t.rows[l].stack_macs, 0, 0, 0);
    }
}

/* The sweep, the buffer size and a real (tiny) measurement. */
static void test_measure(void)
{
    cx_measurement me;
    size_t bytes = 0;
    char err[256];
    memset(&me, 0, sizeof me);
    cx_sweep_points(&me, 3, 20);
    CHECK_INT(me.m, 4);
    CHECK_INT(me.n[0], 3);
    CHECK_INT(me.n[2], 12);
    CHECK_INT(me.n[3], 20);
    /* N = 4, d = 2, k = 3: 5·8 + 2 + 16 + 4·8 + 4 = 94 floats */
    CHECK(cx_measure_bytes(4, 2, 3, &bytes) == 0);
    CHECK_INT(bytes, 94 * sizeof(float));
    CHECK(cx_measure_bytes((size_t)-1 / 2, 2, 3, &bytes) == -1);

    cx_sweep_points(&me, 4, 16);
    CHECK(cx_measure(&me, 3, 3, 3, 2, CX_WALL, 1, NULL, NULL, err, sizeof err) == 0);
    CHECK_INT(me.fit_from, 1); /* the upper half of 4, 8, 16: 8 and 16 */
    CHECK_INT(me.clock, CX_WALL);
    for (int l = 0; l < CX_NMEASURED; l++)
        for (size_t i = 0; i < me.m; i++) {
            CHECK_INT(me.macs[l][i], cx_layer_macs((cx_layer)l, me.n[i], 3, 3, 3));
            CHECK(me.seconds[CX_CPU][l][i] >= 0 && me.seconds[CX_WALL][l][i] > 0);
        }
    /* the recurrent count is linear in n: slope exactly 1 */
    CHECK_NEAR(me.count_slope[CX_RNN], 1.0, 1e-12, 0);
    CHECK(strcmp(cx_layer_label(CX_ATTN), "self-attention") == 0);
}

int main(void)
{
    test_counts();
    test_conv_by_hand();
    test_rnn_by_hand();
    test_attention_by_hand();
    test_attention_matches_mha();
    test_counts_match_layers();
    test_paths();
    test_fit();
    test_table_by_hand();
    test_measure();
    return check_summary("complexity");
}
