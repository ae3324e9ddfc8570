/* properties.h — two things the chapter says about self-attention only in
 * words, as computations: order blindness (`attn selfattn --permute`) and
 * why scores are divided by √d (`attn selfattn --scale-sweep`). The
 * commands that print and draw them are in src/cmd/attention/attention_demos.c.
 *
 * Dimensions as in attention.h: B batch, N sequence length (Nq = Nk = N in
 * self-attention), D width of X, H num_hiddens, NH num_heads; for the
 * sweep, d the width of q and k, S samples, n keys per softmax row.
 *
 * Order blindness. π is a permutation of the positions 0 … N−1, written as
 * the list perm: (π·X)[i] = X[perm[i]], the same π for every example.
 * Without positional encoding self-attention is permutation-equivariant:
 *     f(π·X) = π·f(X)          f(π·X)[i] = f(X)[perm[i]]
 *     A(π·X) = π·A(X)·πᵀ       A(π·X)[i][j] = A(X)[perm[i]][perm[j]]
 * for the output f and the attention weights A of every head. With the
 * positional encoding P added by position after permuting (the tokens
 * move, the positions stay), π·X + P ≠ π·(X + P) and both equalities fail.
 *
 * Why divide by √d. q and k with d independent standard normal components:
 * q·k = Σ_i q_i k_i adds d products of variance 1, so var(q·k) = d and
 * var(q·k/√d) = 1. A softmax over n scores of variance d tends to one-hot
 * as d grows (largest weight → 1, entropy → 0); divided by √d its shape
 * does not depend on d.
 *
 * Buffers are row-major float32 (inputs, outputs, weights); statistics are
 * double. Allocations are the callers' unless a function says otherwise.
 */
#ifndef ATTN_PROPERTIES_H
#define ATTN_PROPERTIES_H

#include <stddef.h>

#include "attention.h"
#include "tensor.h"

/* ---- order blindness ------------------------------------------------- */

/* perm (n,) ← a permutation of 0 … n−1 drawn from seed (Fisher–Yates),
 * drawn again while it is the identity; n >= 2. */
void demo_random_permutation(size_t *perm, size_t n, unsigned long long seed);

/* Y (B, N, D) ← π·X: Y[b][i] = X[b][perm[i]]. */
void demo_permute_rows(float *Y, const float *X, size_t B, size_t N, size_t D, const size_t *perm);

/* max |out_p[b][i][c] − out[b][perm[i]][c]|: f(π·X) against π·f(X), for
 * out and out_p (B, N, H). */
double demo_output_diff(const float *out_p, const float *out, size_t B, size_t N, size_t H,
                        const size_t *perm);

/* max |w_p[b][h][i][j] − w[b][h][perm[i]][perm[j]]|: A(π·X) against
 * π·A(X)·πᵀ, for w and w_p (B, NH, N, N). */
double demo_weight_diff(const float *w_p, const float *w, size_t B, size_t NH, size_t N,
                        const size_t *perm);

/* Both runs of the layer and their comparison. */
typedef struct permute_result {
    tensor out, out_p;  /* (B, N, H) f(X), f(π·X); with posenc f(X + P), f(π·X + P) */
    tensor w, w_p;      /* (B, NH, N, N) A(X), A(π·X); likewise */
    double output_diff; /* max |f(π·X) − π·f(X)| */
    double weight_diff; /* max |A(π·X) − π·A(X)·πᵀ| */
    double output_max;  /* max |f(X)|: the scale the output difference is read against */
    int equal;          /* both differences within float32 rounding: output_diff <=
                           1e-5·max(1, output_max), weight_diff <= 1e-5 */
    int identity;       /* π moves nothing */
    int rows_alike;     /* every example's rows of X are one row: π·X = X */
} permute_result;

/* Run the module m (masks from mask) on X (B, N, D) and on π·X, adding the
 * positional encoding after permuting when posenc, with the reference
 * loops when naive or for additive scoring, else the fast ones. res owns
 * its tensors afterwards (permute_result_free). 0, or -1 with the reason
 * in err ("out of memory …"). */
int demo_permute_run(permute_result *res, const mha_params *m, const float *X, size_t B, size_t N,
                     size_t D, const mha_masks *mask, const size_t *perm, int posenc, int naive,
                     char *err, size_t errlen);
void permute_result_free(permute_result *res);

/* The figure's panels for one head's weights A(X) = w and A(π·X) = w_p
 * (N, N): panels (2, N, N) ← π·A(X)·πᵀ and |A(π·X) − π·A(X)·πᵀ| × *zoom,
 * *zoom the largest of 100, 50, 20, 10, 5, 2, 1 that keeps the magnified
 * difference within *top, the largest weight of both (so that a
 * difference of 0.01 shows while float32 rounding stays 0). *worst is the
 * largest difference before magnifying. */
void demo_permute_panels(float *panels, const float *w, const float *w_p, size_t N,
                         const size_t *perm, double *worst, double *top, double *zoom);

/* ---- why divide by √d ------------------------------------------------ */

/* The statistics of one d. */
typedef struct sweep_point {
    size_t d;
    double var_raw, var_scaled; /* variance of q·k and of q·k/√d */
    double max_raw, max_scaled; /* mean largest softmax weight: 1/n … 1 */
    double ent_raw, ent_scaled; /* mean softmax entropy in nats: log n … 0 */
} sweep_point;

/* pt ← the statistics of S queries q (S, d) and S keys k (S, d): row r's
 * softmax runs over the n scores q_r·k_j for j = r … r+n−1 (mod S), n <= S,
 * so every row has n different keys, each independent of its query; the
 * variances are over all S·n scores (divided by S·n − 1). scores (n,) is
 * scratch. */
void demo_sweep_stats(sweep_point *pt, const float *q, const float *k, size_t S, size_t d, size_t n,
                      double *scores);

/* The same on q and k (S, d) each, scratch, filled first with standard
 * normal numbers from a stream of seed and d (a point does not depend on
 * which other d are swept). */
void demo_sweep_point(sweep_point *pt, size_t d, size_t S, size_t n, unsigned long long seed,
                      float *q, float *k, double *scores);

/* Bytes demo_sweep allocates for d up to d_to; -1 on overflow. */
int demo_sweep_bytes(size_t S, size_t d_to, size_t n, size_t *bytes);

/* pts ← one point for each d = d_from, 2·d_from, … ≤ d_to (powers of two),
 * at most max_pts; *npts their count. progress, when not NULL, is called
 * before each d. 0, or -1 with "out of memory …" in err. */
int demo_sweep(sweep_point *pts, size_t max_pts, size_t *npts, size_t d_from, size_t d_to, size_t S,
               size_t n, unsigned long long seed, void (*progress)(size_t d, size_t d_to),
               char *err, size_t errlen);

#endif
