/* demo_attention.h — two things the chapter says about self-attention only
 * in words, shown with numbers: `attn selfattn --permute` (order
 * blindness) and `attn selfattn --scale-sweep` (why scores are divided by
 * √d).
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
 * Buffers are row-major float32 (inputs, outputs, weights) as everywhere in
 * attn; statistics are double. Allocations are the callers' unless a
 * function says otherwise.
 */
#ifndef ATTN_DEMO_ATTENTION_H
#define ATTN_DEMO_ATTENTION_H

#include <stddef.h>

#include "problem.h"
#include "render.h"
#include "tensor.h"

/* ---- order blindness (--permute) ----------------------------------- */

/* perm (n,) ← a permutation of 0 … n−1 drawn from seed (Fisher–Yates),
 * drawn again while it is the identity; n >= 2. */
void demo_random_permutation(size_t *perm, size_t n, unsigned long long seed);

/* perm (n,) ← the list s ("3,0,2,1"), which must hold each of 0 … n−1
 * once. 0, or -1 with a message starting "--permutation: " in err. */
int demo_parse_permutation(const char *s, size_t *perm, size_t n, char *err, size_t errlen);

/* Y (B, N, D) ← π·X: Y[b][i] = X[b][perm[i]]. */
void demo_permute_rows(float *Y, const float *X, size_t B, size_t N, size_t D,
                       const size_t *perm);

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
} permute_result;

/* Run pr's module (its weights, masks from its valid_lens) on pr's X and on
 * π·X, adding the positional encoding after permuting when posenc, with the
 * reference loops when naive or for additive scoring, else the fast ones.
 * res owns its tensors afterwards (permute_result_free). 0, or -1 with the
 * reason in err ("out of memory …"). */
int demo_permute_run(permute_result *res, const problem *pr, const size_t *perm, int posenc,
                     int naive, char *err, size_t errlen);
void permute_result_free(permute_result *res);

/* What `attn selfattn --permute` was asked. */
typedef struct demo_permute_opts {
    const char *permutation; /* --permutation, or NULL: random from seed */
    unsigned long long seed;
    int posenc, naive;
    const char *inputs;      /* what X is, for the header ("standard normal") */
    int fill_default;        /* --fill random was chosen by --permute */
    const char *lens_origin; /* where pr's valid_lens came from, for errors */
    const char *png, *json;  /* outputs, or NULL */
    const attn_cmap *cmap;
    const char *font;        /* --font FILE for the figure, or NULL */
    size_t max_mem;
} demo_permute_opts;

/* The demo on pr (loaded or made by the caller, positional encoding not
 * yet added): checks π and valid_lens (usage errors), --max-mem, runs,
 * prints the result (unless the JSON goes to stdout), writes --json and
 * --png. Returns the exit status. */
int demo_permute_command(const problem *pr, const demo_permute_opts *o);

/* ---- why divide by √d (--scale-sweep) ------------------------------ */

/* The statistics of one d. */
typedef struct sweep_point {
    size_t d;
    double var_raw, var_scaled;   /* variance of q·k and of q·k/√d */
    double max_raw, max_scaled;   /* mean largest softmax weight: 1/n … 1 */
    double ent_raw, ent_scaled;   /* mean softmax entropy in nats: log n … 0 */
} sweep_point;

/* pt ← the statistics of S queries q (S, d) and S keys k (S, d): row r's
 * softmax runs over the n scores q_r·k_j for j = r … r+n−1 (mod S), n <= S,
 * so every row has n different keys, each independent of its query; the
 * variances are over all S·n scores (divided by S·n − 1). scores (n,) is
 * scratch. */
void demo_sweep_stats(sweep_point *pt, const float *q, const float *k, size_t S, size_t d,
                      size_t n, double *scores);

/* The same on q and k (S, d) each, scratch, filled first with standard
 * normal numbers from a stream of seed and d (a point does not depend on
 * which other d are swept). */
void demo_sweep_point(sweep_point *pt, size_t d, size_t S, size_t n, unsigned long long seed,
                      float *q, float *k, double *scores);

/* "1:1024" → from <= to, powers of two from 1 to 2^20. 0, or -1 after
 * printing the error naming --dims. */
int demo_parse_dims(const char *s, long *from, long *to);

/* What `attn selfattn --scale-sweep` was asked. */
typedef struct demo_sweep_opts {
    size_t d_from, d_to;     /* powers of two */
    size_t samples, keys;    /* S, n */
    unsigned long long seed;
    const char *png, *json;  /* outputs, or NULL */
    const char *font;        /* --font FILE for the figure, or NULL */
    size_t max_mem;
} demo_sweep_opts;

/* The sweep: --max-mem, the table and its explanation (unless the JSON
 * goes to stdout), --json and --png. Returns the exit status. */
int demo_sweep_command(const demo_sweep_opts *o);

#endif
