/* posenc.h — the sinusoidal positional encoding of d2l §10.6.3, in the
 * chapter's interleaved layout or in two halves, and rotary position
 * embedding (RoPE), which applies the chapter's 2×2 rotation to queries and
 * keys instead of adding P to the input.
 *
 * Dimensions: N = number of positions (steps), D = encoding dimension,
 * h = ceil(D/2) = the number of sin columns.
 * P is (N, D), row-major float32, as d2l's PositionalEncoding.P[0, :N, :]:
 *
 *     omega_j    = 1 / base^(2j / D)
 *     interleaved (the chapter's):   P[i][2j] = sin(i * omega_j),  P[i][2j+1] = cos(i * omega_j)
 *     concat (sin half, cos half):   P[i][j]  = sin(i * omega_j),  P[i][h+j]  = cos(i * omega_j)
 *
 * The two layouts hold the same numbers with the columns permuted, so rows
 * have the same lengths and dot products in both. D may be odd: frequency
 * h−1 then has a sin column without its cos partner (the last column
 * interleaved, the last of the sin half concat). The angles are computed in
 * double and rounded to float32 once.
 */
#ifndef ATTN_POSENC_H
#define ATTN_POSENC_H

#include <stddef.h>

typedef enum posenc_layout {
    POSENC_INTERLEAVED, /* sin, cos, sin, cos, …: the chapter's */
    POSENC_CONCAT       /* every sin column, then every cos column */
} posenc_layout;

/* "interleaved" or "concat". */
const char *posenc_layout_name(posenc_layout layout);

/* The two columns of frequency j: (2j, 2j+1) interleaved, (j, h+j) concat.
 * P keeps sin(i·omega_j) in the first and cos(i·omega_j) in the second, and
 * RoPE rotates these two dimensions together. The cos column exists only
 * for j < D/2 (rounded down). */
static inline size_t posenc_sin_col(size_t j, size_t D, posenc_layout layout)
{
    (void)D;
    return layout == POSENC_CONCAT ? j : 2 * j;
}

static inline size_t posenc_cos_col(size_t j, size_t D, posenc_layout layout)
{
    return layout == POSENC_CONCAT ? (D + 1) / 2 + j : 2 * j + 1;
}

/* omega_j = 1 / base^(2j / D), the frequency of column pair j. */
double posenc_omega(size_t j, size_t D, double base);

/* P (N, D) ← the positional encoding in layout, sin and cos of every
 * angle: the reference. */
void posenc_fill_layout(float *P, size_t N, size_t D, double base, posenc_layout layout);

/* posenc_fill_layout in the chapter's interleaved layout. */
void posenc_fill(float *P, size_t N, size_t D, double base);

/* The same P, fast, by the chapter's own relative-position property: row
 * i+1 is row i rotated pair by pair by the 2×2 matrix of angle omega_j, so
 * after one sin/cos per column pair every further row costs four
 * multiply-adds per pair. The rotation runs in double and restarts from
 * sin/cos every 256 rows, which keeps it within 1e-12 of the reference
 * before the rounding to float32. The layout only decides where each
 * pair's two values are stored. */
void posenc_fill_fast(float *P, size_t N, size_t D, double base, posenc_layout layout);

/* The rows of posenc_fill_fast one at a time, for a figure of an encoding
 * too large to be worth storing. posenc_rows_get writes row i (D floats);
 * asked in order it rotates, otherwise it starts afresh. */
typedef struct posenc_rows {
    size_t D, next;  /* next: the row a rotation would give */
    double base;
    posenc_layout layout;
    double *s, *c;   /* (pairs,) sin and cos of the last row's angles */
    double *rs, *rc; /* (pairs,) sin and cos of omega_j */
} posenc_rows;

int posenc_rows_init(posenc_rows *it, size_t D, double base,
                     posenc_layout layout); /* -1: out of memory */
void posenc_rows_get(posenc_rows *it, size_t i, float *row);
void posenc_rows_free(posenc_rows *it);

/* The relative-position property: for offset delta, each pair
 * (P[i][sin_j], P[i][cos_j]) — columns (2j, 2j+1) interleaved, (j, h+j)
 * concat — rotated by the 2×2 matrix
 *     [ cos(delta*omega_j)  sin(delta*omega_j) ]
 *     [-sin(delta*omega_j)  cos(delta*omega_j) ]
 * should equal (P[i+delta][sin_j], P[i+delta][cos_j]). Returns the largest
 * absolute difference of a component over every i with 0 <= i+delta < N and
 * every full pair j < D/2 (rotation in double on the stored float32 P);
 * *checked (may be NULL) gets the number of (i, j) pairs compared, 0 when
 * none (then the result is 0). */
double posenc_check_relative(const float *P, size_t N, size_t D, double base,
                             posenc_layout layout, long delta, size_t *checked);

/* S (N, N) ← P · Pᵀ, accumulated in double: S[i][k] = Σ_c P[i][c] P[k][c].
 * For even D this is Σ_j cos((i−k)·omega_j): a function of i − k only, and
 * the same in both layouts (permuting columns keeps dot products). */
void posenc_similarity(float *S, const float *P, size_t N, size_t D);

/* ---- RoPE: rotary position embedding (RoFormer, Su et al. 2021) --------
 *
 * For x of even dimension D at position m, every pair (x_a, x_b) — (2j,
 * 2j+1) interleaved as in RoFormer, (j, j+D/2) concat as GPT-NeoX and LLaMA
 * do it ("rotate half") — turns by the angle m·omega_j:
 *
 *     RoPE(x, m)_a = x_a cos(m·omega_j) − x_b sin(m·omega_j)
 *     RoPE(x, m)_b = x_a sin(m·omega_j) + x_b cos(m·omega_j)
 *
 * A turn by m then by n − m is a turn by n, and turns keep dot products, so
 * the score <RoPE(q, m), RoPE(k, n)> = <q, RoPE(k, n − m)> sees only the
 * offset n − m. Vectors are (D,) float32; angles and products run in
 * double and are rounded to float32 once, like a model's float32 tensors.
 */

/* y (D,) ← RoPE(x, m); y and x may be the same array. D even. */
void posenc_rope_apply(float *y, const float *x, size_t D, double m, double base,
                       posenc_layout layout);

/* X (N, D) ← row i = RoPE(x, i) for i = 0 … N−1. D even. */
void posenc_rope_rows(float *X, const float *x, size_t N, size_t D, double base,
                      posenc_layout layout);

/* S (N, N) ← S[m][n] = <Qr[m], Kr[n]>, accumulated in double and rounded to
 * float32: the scores of query rows Qr (N, D) against key rows Kr (N, D). */
void posenc_rope_scores(float *S, const float *Qr, const float *Kr, size_t N, size_t D);

/* The largest |S[m][n] − <q, RoPE(k, n − m)>| over every m, n < N: how far
 * the scores S (N, N) of posenc_rope_scores are from a function of the
 * offset alone. The reference is computed in double from q, k (D,). */
double posenc_rope_offset_error(const float *S, const float *q, const float *k, size_t N,
                                size_t D, double base, posenc_layout layout);

/* RoPE's relative property for offset delta, on X (N, D) with rows
 * RoPE(x, i): every pair of row i turned by delta·omega_j should equal the
 * pair of row i+delta. The largest absolute difference of a component over
 * every i with 0 <= i+delta < N and every pair (rotation in double on the
 * stored float32 rows); *checked (may be NULL) as posenc_check_relative. */
double posenc_rope_check_relative(const float *X, size_t N, size_t D, double base,
                                  posenc_layout layout, long delta, size_t *checked);

/* ---- RoPE on a random query and key (attn posenc --rope) ---------------
 *
 * A unit query q and key k (standard normal draws from a seed, q first,
 * each scaled to length 1, so that every score lies in [−1, 1]) turned to
 * every position, their scores, and how far the scores are from a
 * function of the offset alone. */
typedef struct posenc_rope_demo {
    size_t N, D;
    float *q, *k;        /* (D,) each, one buffer (2, D): q, then k */
    float *Qr, *Kr;      /* (N, D) each: RoPE(q, m), RoPE(k, n) */
    float *S;            /* (N, N) S[m][n] = RoPE(q, m) · RoPE(k, n) */
    double offset_error; /* posenc_rope_offset_error(S, q, k, …) */
} posenc_rope_demo;

/* The bytes posenc_rope_demo_alloc takes; -1 on overflow. */
int posenc_rope_demo_bytes(size_t N, size_t D, size_t *bytes);

/* The buffers for N positions of even D, sizes within
 * posenc_rope_demo_bytes; -1 when out of memory (nothing to free then). */
int posenc_rope_demo_alloc(posenc_rope_demo *r, size_t N, size_t D);
void posenc_rope_demo_free(posenc_rope_demo *r);

/* Draw q and k from seed, turn them, score them, measure the offset error. */
void posenc_rope_demo_run(posenc_rope_demo *r, double base, posenc_layout layout,
                          unsigned long long seed);

/* X (B, N, D) += P (N, D), the chapter's encoding (interleaved, base
 * 10000), the same for every example. 0, or -1 when out of memory. */
int posenc_add(float *X, size_t B, size_t N, size_t D);

#endif
