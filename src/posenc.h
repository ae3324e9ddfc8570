/* posenc.h — the sinusoidal positional encoding of d2l §10.6.3.
 *
 * Dimensions: N = number of positions (steps), D = encoding dimension.
 * P is (N, D), row-major float32, as d2l's PositionalEncoding.P[0, :N, :]:
 *
 *     omega_j    = 1 / base^(2j / D)
 *     P[i][2j]   = sin(i * omega_j)
 *     P[i][2j+1] = cos(i * omega_j)
 *
 * D may be odd: the last column is then a sin column without its cos
 * partner. The angles are computed in double and rounded to float32 once.
 */
#ifndef ATTN_POSENC_H
#define ATTN_POSENC_H

#include <stddef.h>

/* omega_j = 1 / base^(2j / D), the frequency of column pair j. */
double posenc_omega(size_t j, size_t D, double base);

/* P (N, D) ← the positional encoding, sin and cos of every angle: the
 * reference. */
void posenc_fill(float *P, size_t N, size_t D, double base);

/* The same P, fast, by the chapter's own relative-position property: row
 * i+1 is row i rotated pair by pair by the 2×2 matrix of angle omega_j, so
 * after one sin/cos per column pair every further row costs four
 * multiply-adds per pair. The rotation runs in double and restarts from
 * sin/cos every 256 rows, which keeps it within 1e-12 of the reference
 * before the rounding to float32. */
void posenc_fill_fast(float *P, size_t N, size_t D, double base);

/* The rows of posenc_fill_fast one at a time, for a figure of an encoding
 * too large to be worth storing. posenc_rows_get writes row i (D floats);
 * asked in order it rotates, otherwise it starts afresh. */
typedef struct posenc_rows {
    size_t D, next;  /* next: the row a rotation would give */
    double base;
    double *s, *c;   /* (pairs,) sin and cos of the last row's angles */
    double *rs, *rc; /* (pairs,) sin and cos of omega_j */
} posenc_rows;

int posenc_rows_init(posenc_rows *it, size_t D, double base); /* -1: out of memory */
void posenc_rows_get(posenc_rows *it, size_t i, float *row);
void posenc_rows_free(posenc_rows *it);

/* The relative-position property: for offset delta, each pair
 * (P[i][2j], P[i][2j+1]) rotated by the 2×2 matrix
 *     [ cos(delta*omega_j)  sin(delta*omega_j) ]
 *     [-sin(delta*omega_j)  cos(delta*omega_j) ]
 * should equal (P[i+delta][2j], P[i+delta][2j+1]). Returns the largest
 * absolute difference of a component over every i with 0 <= i+delta < N and
 * every full pair j < D/2 (rotation in double on the stored float32 P);
 * *checked (may be NULL) gets the number of (i, j) pairs compared, 0 when
 * none (then the result is 0). */
double posenc_check_relative(const float *P, size_t N, size_t D, double base,
                             long delta, size_t *checked);

/* S (N, N) ← P · Pᵀ, accumulated in double: S[i][k] = Σ_c P[i][c] P[k][c].
 * For even D this is Σ_j cos((i−k)·omega_j): a function of i − k only. */
void posenc_similarity(float *S, const float *P, size_t N, size_t D);

#endif
