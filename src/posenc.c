/* posenc.c — the sinusoidal positional encoding (see posenc.h).
 * Legend: N positions (rows), D encoding dimensions (columns). */
#include "posenc.h"

#include <math.h>
#include <stdlib.h>

double posenc_omega(size_t j, size_t D, double base)
{
    /* omega_j = 1 / base^(2j / D) */
    return 1.0 / pow(base, (double)(2 * j) / (double)D);
}

void posenc_fill(float *P, size_t N, size_t D, double base)
{
    size_t i, j;
    for (j = 0; 2 * j < D; j++) {
        double omega = posenc_omega(j, D, base);
        for (i = 0; i < N; i++) {
            double angle = (double)i * omega;
            P[i * D + 2 * j] = (float)sin(angle);          /* even column: sin */
            if (2 * j + 1 < D)
                P[i * D + 2 * j + 1] = (float)cos(angle);  /* odd column: cos */
        }
    }
}

#define RESTART 256 /* rows between fresh sin/cos in posenc_fill_fast */

int posenc_rows_init(posenc_rows *it, size_t D, double base)
{
    const size_t pairs = (D + 1) / 2; /* an odd D's last column is a sin without cos */
    size_t j;
    it->D = D;
    it->base = base;
    it->next = 0;
    it->s = malloc(4 * pairs * sizeof *it->s);
    if (!it->s)
        return -1;
    it->c = it->s + pairs;      /* (pairs,) cos(i·omega_j) of the last row */
    it->rs = it->s + 2 * pairs; /* (pairs,) sin(omega_j): one step of the rotation */
    it->rc = it->s + 3 * pairs; /* (pairs,) cos(omega_j) */
    for (j = 0; j < pairs; j++) {
        double omega = posenc_omega(j, D, base);
        it->rs[j] = sin(omega);
        it->rc[j] = cos(omega);
    }
    return 0;
}

void posenc_rows_get(posenc_rows *it, size_t i, float *row)
{
    const size_t D = it->D, pairs = (D + 1) / 2;
    double *s = it->s, *c = it->c;
    const double *rs = it->rs, *rc = it->rc;
    size_t j;
    if (i % RESTART == 0 || i != it->next) {
        /* a fresh start: (sin, cos) of i·omega_j directly */
        for (j = 0; j < pairs; j++) {
            double angle = (double)i * posenc_omega(j, D, it->base);
            s[j] = sin(angle);
            c[j] = cos(angle);
        }
    } else {
        /* rotate row i−1 by omega_j: the chapter's 2×2 matrix with δ = 1 */
#pragma omp simd
        for (j = 0; j < pairs; j++) {
            double s1 = s[j] * rc[j] + c[j] * rs[j];
            double c1 = c[j] * rc[j] - s[j] * rs[j];
            s[j] = s1;
            c[j] = c1;
        }
    }
    for (j = 0; 2 * j + 1 < D; j++) {
        row[2 * j] = (float)s[j];
        row[2 * j + 1] = (float)c[j];
    }
    if (D % 2)
        row[D - 1] = (float)s[pairs - 1];
    it->next = i + 1;
}

void posenc_rows_free(posenc_rows *it)
{
    free(it->s);
    it->s = NULL;
}

void posenc_fill_fast(float *P, size_t N, size_t D, double base)
{
    posenc_rows it;
    size_t i;
    if (posenc_rows_init(&it, D, base) != 0) {
        posenc_fill(P, N, D, base); /* no scratch memory: the reference needs none */
        return;
    }
    for (i = 0; i < N; i++)
        posenc_rows_get(&it, i, P + i * D);
    posenc_rows_free(&it);
}

double posenc_check_relative(const float *P, size_t N, size_t D, double base,
                             long delta, size_t *checked)
{
    double worst = 0.0;
    size_t count = 0, i, j;
    /* |delta| < N is the caller's promise; positions with i + delta in range */
    size_t first = delta < 0 ? (size_t)(-delta) : 0;
    size_t last = delta > 0 ? N - (size_t)delta : N; /* exclusive */

    for (j = 0; 2 * j + 1 < D; j++) {
        double omega = posenc_omega(j, D, base);
        double c = cos((double)delta * omega), s = sin((double)delta * omega);
        for (i = first; i < last; i++) {
            const float *p = P + i * D + 2 * j;                       /* p_i  */
            const float *q = P + (size_t)((long)i + delta) * D + 2 * j; /* p_{i+δ} */
            /* rotate (p_i,2j, p_i,2j+1) by delta·omega_j */
            double r0 = c * p[0] + s * p[1];
            double r1 = -s * p[0] + c * p[1];
            double d0 = fabs(r0 - q[0]), d1 = fabs(r1 - q[1]);
            if (d0 > worst)
                worst = d0;
            if (d1 > worst)
                worst = d1;
            count++;
        }
    }
    if (checked)
        *checked = count;
    return worst;
}

void posenc_similarity(float *S, const float *P, size_t N, size_t D)
{
    size_t i, k, c;
    for (i = 0; i < N; i++) {
        for (k = i; k < N; k++) {
            /* S[i][k] = p_i · p_k; the matrix is symmetric */
            double dot = 0.0;
            for (c = 0; c < D; c++)
                dot += (double)P[i * D + c] * P[k * D + c];
            S[i * N + k] = (float)dot;
            S[k * N + i] = (float)dot;
        }
    }
}
