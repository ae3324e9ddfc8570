/* properties.c — order blindness and the √d scale of self-attention as
 * computations (see properties.h). */
#include "properties.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention_fast.h"
#include "checked.h"
#include "fmath.h"
#include "posenc.h"
#include "rng.h"
#include "i18n.h"

/* ---- order blindness ------------------------------------------------- */

void demo_random_permutation(size_t *perm, size_t n, unsigned long long seed)
{
    rng r;
    int identity;
    rng_seed(&r, seed ^ 0x9e2a7a7e9e2a7a7eULL); /* a stream of its own */
    if (n == 0)
        return;
    do {
        /* Fisher–Yates: perm[i] swapped with a uniform perm[j], j <= i */
        for (size_t i = 0; i < n; i++)
            perm[i] = i;
        for (size_t i = n - 1; i > 0; i--) {
            size_t j = (size_t)(rng_uniform(&r) * (double)(i + 1)), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        /* the identity moves nothing: draw again */
        identity = 1;
        for (size_t i = 0; i < n; i++)
            identity &= perm[i] == i;
    } while (identity && n >= 2);
}

void demo_permute_rows(float *Y, const float *X, size_t B, size_t N, size_t D, const size_t *perm)
{
    for (size_t b = 0; b < B; b++)
        for (size_t i = 0; i < N; i++) /* row i of π·X is row perm[i] of X */
            memcpy(Y + (b * N + i) * D, X + (b * N + perm[i]) * D, D * sizeof *Y);
}

double demo_output_diff(const float *out_p, const float *out, size_t B, size_t N, size_t H,
                        const size_t *perm)
{
    double worst = 0.0;
    for (size_t b = 0; b < B; b++)
        for (size_t i = 0; i < N; i++) {
            const float *fp = out_p + (b * N + i) * H;    /* (H,) f(π·X)[i] */
            const float *f = out + (b * N + perm[i]) * H; /* (H,) (π·f(X))[i] */
            for (size_t c = 0; c < H; c++) {
                double d = fabs((double)fp[c] - f[c]);
                worst = d > worst ? d : worst;
            }
        }
    return worst;
}

double demo_weight_diff(const float *w_p, const float *w, size_t B, size_t NH, size_t N,
                        const size_t *perm)
{
    double worst = 0.0;
    for (size_t bh = 0; bh < B * NH; bh++) {
        const float *ap = w_p + bh * N * N; /* (N, N) A(π·X) of one example and head */
        const float *a = w + bh * N * N;    /* (N, N) A(X) */
        for (size_t i = 0; i < N; i++)
            for (size_t j = 0; j < N; j++) {
                /* (π·A·πᵀ)[i][j] = A[perm[i]][perm[j]] */
                double d = fabs((double)ap[i * N + j] - a[perm[i] * N + perm[j]]);
                worst = d > worst ? d : worst;
            }
    }
    return worst;
}

void permute_result_free(permute_result *res)
{
    tensor_free(&res->out);
    tensor_free(&res->out_p);
    tensor_free(&res->w);
    tensor_free(&res->w_p);
}

/* out (B, N, H) and weights (B, NH, N, N) of self-attention on X (B, N, D). */
static int forward(float *out, float *weights, const float *X, const mha_params *m, size_t B,
                   size_t N, const mha_masks *mask, int naive, char *err, size_t errlen)
{
    const mha_dropout drop = {0.0, 0};
    if (!naive && m->score == SCORE_DOT)
        return mha_forward_fast(out, weights, X, X, X, B, N, N, m, mask, &drop, err, errlen);
    return mha_forward(out, weights, NULL, X, X, X, B, N, N, m, mask, &drop, err, errlen);
}

/* Whether every example's rows of X (B, N, D) are one and the same row
 * (inputs of ones): then π·X = X and nothing can differ. */
static int rows_alike(const float *X, size_t B, size_t N, size_t D)
{
    for (size_t b = 0; b < B; b++)
        for (size_t i = 1; i < N; i++)
            if (memcmp(X + (b * N + i) * D, X + b * N * D, D * sizeof(float)) != 0)
                return 0;
    return 1;
}

int demo_permute_run(permute_result *res, const mha_params *m, const float *X0, size_t B, size_t N,
                     size_t D, const mha_masks *mask, const size_t *perm, int posenc, int naive,
                     char *err, size_t errlen)
{
    const size_t H = m->num_hiddens, NH = m->num_heads;
    size_t oshape[3] = {B, N, H}, wshape[4] = {B, NH, N, N}, xshape[3] = {B, N, D};
    tensor X = {0}, Xp = {0}; /* (B, N, D) the two inputs */
    int status = -1;

    memset(res, 0, sizeof *res);
    if (tensor_alloc(&res->out, 3, oshape, err, errlen) ||
        tensor_alloc(&res->out_p, 3, oshape, err, errlen) ||
        tensor_alloc(&res->w, 4, wshape, err, errlen) ||
        tensor_alloc(&res->w_p, 4, wshape, err, errlen) ||
        tensor_alloc(&X, 3, xshape, err, errlen) || tensor_alloc(&Xp, 3, xshape, err, errlen))
        goto done;
    /* 1. the inputs: X, and π·X, its rows moved */
    memcpy(X.data, X0, X.size * sizeof *X.data);
    demo_permute_rows(Xp.data, X.data, B, N, D, perm);

    /* 2. with --posenc, P added by position after permuting: X + P and
     * π·X + P (the tokens moved, the positions did not) */
    if (posenc && (posenc_add(X.data, B, N, D) || posenc_add(Xp.data, B, N, D))) {
        snprintf(err, errlen, "%s", _("out of memory for the positional encoding"));
        goto done;
    }

    /* 3. the same layer, the same weights, on both */
    if (forward(res->out.data, res->w.data, X.data, m, B, N, mask, naive, err, errlen) ||
        forward(res->out_p.data, res->w_p.data, Xp.data, m, B, N, mask, naive, err, errlen))
        goto done;

    /* 4. f(π·X) against π·f(X), A(π·X) against π·A(X)·πᵀ */
    res->output_diff = demo_output_diff(res->out_p.data, res->out.data, B, N, H, perm);
    res->weight_diff = demo_weight_diff(res->w_p.data, res->w.data, B, NH, N, perm);
    res->output_max = 0.0;
    for (size_t e = 0; e < res->out.size; e++)
        res->output_max = fmax(res->output_max, fabs((double)res->out.data[e]));

    /* 5. the verdict: equal within float32 rounding, and why it may be */
    res->equal = res->output_diff <= 1e-5 * fmax(1.0, res->output_max) && res->weight_diff <= 1e-5;
    res->identity = 1;
    for (size_t i = 0; i < N; i++)
        res->identity &= perm[i] == i;
    res->rows_alike = rows_alike(X0, B, N, D);
    status = 0;
done:
    if (status)
        permute_result_free(res);
    tensor_free(&X);
    tensor_free(&Xp);
    return status;
}

void demo_permute_panels(float *panels, const float *w, const float *w_p, size_t N,
                         const size_t *perm, double *worst, double *top, double *zoom)
{
    static const double zooms[] = {100, 50, 20, 10, 5, 2, 1};
    const size_t NN = N * N;
    float *pa = panels, *diff = panels + NN; /* (N, N) each */
    *worst = 0.0;
    *top = 0.0;
    *zoom = 1.0;
    /* π·A(X)·πᵀ, and its difference from A(π·X) as computed */
    for (size_t i = 0; i < N; i++)
        for (size_t j = 0; j < N; j++) {
            pa[i * N + j] = w[perm[i] * N + perm[j]];
            double d = fabs((double)w_p[i * N + j] - pa[i * N + j]);
            diff[i * N + j] = (float)d;
            *worst = fmax(*worst, d);
            *top = fmax(*top, fmax(pa[i * N + j], w_p[i * N + j]));
        }
    /* the difference magnified as far as the scale allows, up to 100 times */
    for (size_t i = 0; i < sizeof zooms / sizeof zooms[0]; i++)
        if (*worst * zooms[i] <= *top) {
            *zoom = zooms[i];
            break;
        }
    for (size_t i = 0; i < NN; i++)
        diff[i] = (float)(diff[i] * *zoom);
}

/* ---- why divide by √d ------------------------------------------------ */

void demo_sweep_stats(sweep_point *pt, const float *q, const float *k, size_t S, size_t d, size_t n,
                      double *scores)
{
    const double scale = 1.0 / sqrt((double)d);
    double sum[2] = {0.0, 0.0}, sumsq[2] = {0.0, 0.0}; /* raw, scaled */
    double peak[2] = {0.0, 0.0}, ent[2] = {0.0, 0.0};
    const double count = (double)S * (double)n;

    for (size_t r = 0; r < S; r++) {
        const float *qr = q + r * d; /* (d,) query r */

        /* 1. its scores against keys r … r+n−1 (mod S): q·k = Σ_i q_i k_i */
        for (size_t j = 0; j < n; j++) {
            const float *kj = k + ((r + j) % S) * d; /* (d,) */
            double s = 0.0;
            for (size_t i = 0; i < d; i++)
                s += (double)qr[i] * kj[i];
            scores[j] = s;
        }

        for (size_t v = 0; v < 2; v++) {
            const double c = v ? scale : 1.0; /* q·k, or q·k/√d */
            double m = -INFINITY, z = 0.0, dot = 0.0;

            /* 2. sums and sums of squares, for the variance */
            for (size_t j = 0; j < n; j++) {
                sum[v] += c * scores[j];
                sumsq[v] += c * scores[j] * c * scores[j];
            }

            /* 3. softmax: the largest score first (for numerical stability) */
            for (size_t j = 0; j < n; j++)
                m = fmax(m, c * scores[j]);
            /* z = Σ_j e^(s_j − m), at least 1 */
            for (size_t j = 0; j < n; j++)
                z += fm_exp(c * scores[j] - m);

            /* 4. the largest weight is e^0 / z; the entropy
             * −Σ_j w_j log w_j = log z − Σ_j w_j (s_j − m) */
            for (size_t j = 0; j < n; j++)
                dot += fm_exp(c * scores[j] - m) / z * (c * scores[j] - m);
            peak[v] += 1.0 / z;
            ent[v] += fm_log(z) - dot;
        }
    }

    /* 5. the means over the rows, the variances over every score */
    pt->d = d;
    pt->var_raw = (sumsq[0] - sum[0] * sum[0] / count) / (count - 1.0);
    pt->var_scaled = (sumsq[1] - sum[1] * sum[1] / count) / (count - 1.0);
    pt->max_raw = peak[0] / (double)S;
    pt->max_scaled = peak[1] / (double)S;
    pt->ent_raw = ent[0] / (double)S;
    pt->ent_scaled = ent[1] / (double)S;
}

/* x (n,) ← standard normal numbers, two at a time by Marsaglia's polar
 * method: (u, v) uniform in the unit disc, s = u² + v², then u·f and v·f
 * with f = sqrt(−2 ln s / s) are independent N(0, 1) — one logarithm and
 * one root per pair, no sine or cosine (the sweep draws millions). */
static void fill_normal(float *x, size_t n, rng *r)
{
    for (size_t i = 0; i < n; i += 2) {
        double u, v, s;
        do { /* a point of the unit disc, not its centre */
            u = 2.0 * rng_uniform(r) - 1.0;
            v = 2.0 * rng_uniform(r) - 1.0;
            s = u * u + v * v;
        } while (s >= 1.0 || s == 0.0);
        double f = sqrt(-2.0 * fm_log(s) / s);
        x[i] = (float)(u * f);
        if (i + 1 < n)
            x[i + 1] = (float)(v * f);
    }
}

void demo_sweep_point(sweep_point *pt, size_t d, size_t S, size_t n, unsigned long long seed,
                      float *q, float *k, double *scores)
{
    rng r;
    /* every d its own stream, so a point does not depend on --dims */
    rng_seed(&r, seed ^ (0x9e3779b97f4a7c15ULL * (unsigned long long)d));
    /* q (S, d), then k (S, d): independent standard normal components */
    fill_normal(q, S * d, &r);
    fill_normal(k, S * d, &r);
    demo_sweep_stats(pt, q, k, S, d, n, scores);
}

int demo_sweep_bytes(size_t S, size_t d_to, size_t n, size_t *bytes)
{
    size_t part;
    /* q and k at the largest d, one row's scores */
    return size_mul(S, d_to, bytes) || size_mul(*bytes, 2 * sizeof(float), bytes) ||
                   size_mul(n, sizeof(double), &part) || size_add(*bytes, part, bytes)
               ? -1
               : 0;
}

int demo_sweep(sweep_point *pts, size_t max_pts, size_t *npts, size_t d_from, size_t d_to, size_t S,
               size_t n, unsigned long long seed, void (*progress)(size_t d, size_t d_to),
               char *err, size_t errlen)
{
    float *q = float_alloc(S * d_to);           /* (S, d_to) */
    float *k = float_alloc(S * d_to);           /* (S, d_to) */
    double *scores = malloc(n * sizeof *scores); /* (n,) */
    int status = -1;

    *npts = 0;
    if (!q || !k || !scores) {
        snprintf(err, errlen, "%s", _("out of memory for --scale-sweep"));
        goto done;
    }
    /* every d: draw, score, softmax */
    for (size_t d = d_from; d <= d_to && *npts < max_pts; d *= 2) {
        if (progress)
            progress(d, d_to);
        demo_sweep_point(&pts[(*npts)++], d, S, n, seed, q, k, scores);
    }
    status = 0;
done:
    free(q);
    free(k);
    free(scores);
    return status;
}
