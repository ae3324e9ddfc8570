/* posenc.c — the sinusoidal positional encoding and RoPE (see posenc.h).
 * Legend: N positions (rows), D encoding dimensions (columns), h = ceil(D/2)
 * sin columns; pair j is the sin and cos of frequency omega_j, stored in
 * columns posenc_sin_col(j) and posenc_cos_col(j) of the layout. */
#include "posenc.h"

#include <math.h>
#include <stdlib.h>

#include "checked.h"
#include "fmath.h"
#include "rng.h"
#include "tensor.h"

const char *posenc_layout_name(posenc_layout layout)
{
    return layout == POSENC_CONCAT ? "concat" : "interleaved";
}

double posenc_omega(size_t j, size_t D, double base)
{
    /* omega_j = 1 / base^(2j / D) */
    return 1.0 / fm_pow(base, (double)(2 * j) / (double)D);
}

void posenc_fill_layout(float *P, size_t N, size_t D, double base, posenc_layout layout)
{
    for (size_t j = 0; 2 * j < D; j++) {
        double omega = posenc_omega(j, D, base);
        size_t cs = posenc_sin_col(j, D, layout), cc = posenc_cos_col(j, D, layout);
        for (size_t i = 0; i < N; i++) {
            double angle = (double)i * omega;
            P[i * D + cs] = (float)fm_sin(angle);     /* pair j's sin column */
            if (2 * j + 1 < D)
                P[i * D + cc] = (float)fm_cos(angle); /* and its cos column */
        }
    }
}

void posenc_fill(float *P, size_t N, size_t D, double base)
{
    posenc_fill_layout(P, N, D, base, POSENC_INTERLEAVED);
}

#define RESTART 256 /* rows between fresh sin/cos in posenc_fill_fast */

int posenc_rows_init(posenc_rows *it, size_t D, double base, posenc_layout layout)
{
    const size_t pairs = (D + 1) / 2; /* an odd D's last column is a sin without cos */
    it->D = D;
    it->base = base;
    it->layout = layout;
    it->next = 0;
    it->s = malloc(4 * pairs * sizeof *it->s);
    if (!it->s)
        return -1;
    it->c = it->s + pairs;      /* (pairs,) cos(i·omega_j) of the last row */
    it->rs = it->s + 2 * pairs; /* (pairs,) sin(omega_j): one step of the rotation */
    it->rc = it->s + 3 * pairs; /* (pairs,) cos(omega_j) */
    for (size_t j = 0; j < pairs; j++) {
        double omega = posenc_omega(j, D, base);
        it->rs[j] = fm_sin(omega);
        it->rc[j] = fm_cos(omega);
    }
    return 0;
}

void posenc_rows_get(posenc_rows *it, size_t i, float *row)
{
    const size_t D = it->D, pairs = (D + 1) / 2;
    double *s = it->s, *c = it->c;
    const double *rs = it->rs, *rc = it->rc;
    if (i % RESTART == 0 || i != it->next) {
        /* a fresh start: (sin, cos) of i·omega_j directly */
        for (size_t j = 0; j < pairs; j++) {
            double angle = (double)i * posenc_omega(j, D, it->base);
            s[j] = fm_sin(angle);
            c[j] = fm_cos(angle);
        }
    } else {
        /* rotate row i−1 by omega_j: the chapter's 2×2 matrix with δ = 1 */
#pragma omp simd
        for (size_t j = 0; j < pairs; j++) {
            double s1 = s[j] * rc[j] + c[j] * rs[j];
            double c1 = c[j] * rc[j] - s[j] * rs[j];
            s[j] = s1;
            c[j] = c1;
        }
    }
    /* store each pair where the layout keeps it */
    for (size_t j = 0; 2 * j + 1 < D; j++) {
        row[posenc_sin_col(j, D, it->layout)] = (float)s[j];
        row[posenc_cos_col(j, D, it->layout)] = (float)c[j];
    }
    if (D % 2)
        row[posenc_sin_col(pairs - 1, D, it->layout)] = (float)s[pairs - 1];
    it->next = i + 1;
}

void posenc_rows_free(posenc_rows *it)
{
    free(it->s);
    it->s = NULL;
}

void posenc_fill_fast(float *P, size_t N, size_t D, double base, posenc_layout layout)
{
    posenc_rows it;
    if (posenc_rows_init(&it, D, base, layout) != 0) {
        /* no scratch memory: the reference needs none */
        posenc_fill_layout(P, N, D, base, layout);
        return;
    }
    for (size_t i = 0; i < N; i++)
        posenc_rows_get(&it, i, P + i * D);
    posenc_rows_free(&it);
}

/* The positions i = first … last−1 whose i + delta is a position too
 * (|delta| < N is the caller's promise). */
static void offset_range(size_t N, long delta, size_t *first, size_t *last)
{
    *first = delta < 0 ? (size_t)(-delta) : 0;
    *last = delta > 0 ? N - (size_t)delta : N;
}

/* The larger of worst and the differences of a rotated pair (r0, r1) from
 * the pair (y0, y1) it should equal. */
static double pair_worst(double worst, double r0, double r1, double y0, double y1)
{
    return fmax(worst, fmax(fabs(r0 - y0), fabs(r1 - y1)));
}

double posenc_check_relative(const float *P, size_t N, size_t D, double base,
                             posenc_layout layout, long delta, size_t *checked)
{
    double worst = 0.0;
    size_t count = 0;
    size_t first, last;
    offset_range(N, delta, &first, &last);

    for (size_t j = 0; 2 * j + 1 < D; j++) {
        double omega = posenc_omega(j, D, base);
        double c = fm_cos((double)delta * omega), s = fm_sin((double)delta * omega);
        size_t cs = posenc_sin_col(j, D, layout), cc = posenc_cos_col(j, D, layout);
        for (size_t i = first; i < last; i++) {
            const float *p = P + i * D;                                /* p_i  */
            const float *q = P + (size_t)((long)i + delta) * D;        /* p_{i+δ} */
            /* rotate (p_i[sin_j], p_i[cos_j]) by delta·omega_j */
            double r0 = c * p[cs] + s * p[cc];
            double r1 = -s * p[cs] + c * p[cc];
            worst = pair_worst(worst, r0, r1, q[cs], q[cc]);
            count++;
        }
    }
    if (checked)
        *checked = count;
    return worst;
}

void posenc_similarity(float *S, const float *P, size_t N, size_t D)
{
    for (size_t i = 0; i < N; i++) {
        for (size_t k = i; k < N; k++) {
            /* S[i][k] = p_i · p_k; the matrix is symmetric */
            double dot = 0.0;
            for (size_t c = 0; c < D; c++)
                dot += (double)P[i * D + c] * P[k * D + c];
            S[i * N + k] = (float)dot;
            S[k * N + i] = (float)dot;
        }
    }
}

/* ---- RoPE ------------------------------------------------------------ */

void posenc_rope_apply(float *y, const float *x, size_t D, double m, double base,
                       posenc_layout layout)
{
    for (size_t j = 0; j < D / 2; j++) {
        /* pair j: the two dimensions where P keeps sin_j and cos_j */
        size_t a = posenc_sin_col(j, D, layout), b = posenc_cos_col(j, D, layout);
        double angle = m * posenc_omega(j, D, base);
        double c = fm_cos(angle), s = fm_sin(angle);
        double xa = x[a], xb = x[b];
        /* turn (x_a, x_b) by m·omega_j */
        y[a] = (float)(xa * c - xb * s);
        y[b] = (float)(xa * s + xb * c);
    }
}

void posenc_rope_rows(float *X, const float *x, size_t N, size_t D, double base,
                      posenc_layout layout)
{
    for (size_t i = 0; i < N; i++)
        posenc_rope_apply(X + i * D, x, D, (double)i, base, layout); /* row i = RoPE(x, i) */
}

void posenc_rope_scores(float *S, const float *Qr, const float *Kr, size_t N, size_t D)
{
    for (size_t m = 0; m < N; m++) {
        for (size_t n = 0; n < N; n++) {
            /* S[m][n] = RoPE(q, m) · RoPE(k, n) */
            double dot = 0.0;
            for (size_t c = 0; c < D; c++)
                dot += (double)Qr[m * D + c] * Kr[n * D + c];
            S[m * N + n] = (float)dot;
        }
    }
}

double posenc_rope_offset_error(const float *S, const float *q, const float *k, size_t N,
                                size_t D, double base, posenc_layout layout)
{
    const long n_max = (long)N - 1;
    double worst = 0.0;

    for (long d = -n_max; d <= n_max; d++) {
        /* want = q · RoPE(k, d), the score every (m, m + d) should have */
        double want = 0.0;
        for (size_t j = 0; j < D / 2; j++) {
            size_t a = posenc_sin_col(j, D, layout), b = posenc_cos_col(j, D, layout);
            double angle = (double)d * posenc_omega(j, D, base);
            double c = fm_cos(angle), s = fm_sin(angle);
            double ka = k[a] * c - k[b] * s; /* k's pair j turned by d·omega_j */
            double kb = k[a] * s + k[b] * c;
            want += q[a] * ka + q[b] * kb;
        }
        /* the diagonal n = m + d of S: both m and n in 0 … N−1 */
        for (size_t m = d < 0 ? (size_t)(-d) : 0; (long)m <= n_max && (long)m + d <= n_max; m++) {
            double diff = fabs(S[m * N + (size_t)((long)m + d)] - want);
            if (diff > worst)
                worst = diff;
        }
    }
    return worst;
}

double posenc_rope_check_relative(const float *X, size_t N, size_t D, double base,
                                  posenc_layout layout, long delta, size_t *checked)
{
    double worst = 0.0;
    size_t count = 0;
    size_t first, last;
    offset_range(N, delta, &first, &last);

    for (size_t j = 0; j < D / 2; j++) {
        double omega = posenc_omega(j, D, base);
        double c = fm_cos((double)delta * omega), s = fm_sin((double)delta * omega);
        size_t a = posenc_sin_col(j, D, layout), b = posenc_cos_col(j, D, layout);
        for (size_t i = first; i < last; i++) {
            const float *x = X + i * D;                          /* RoPE(x, i)   */
            const float *y = X + (size_t)((long)i + delta) * D;  /* RoPE(x, i+δ) */
            /* turn (x_a, x_b) by delta·omega_j with RoPE's [c −s; s c]: the
             * chapter's matrix with the pair's order swapped, as
             * RoPE((1, 0), m) = (cos, sin) where P's pair is (sin, cos) */
            double r0 = c * x[a] - s * x[b];
            double r1 = s * x[a] + c * x[b];
            worst = pair_worst(worst, r0, r1, y[a], y[b]);
            count++;
        }
    }
    if (checked)
        *checked = count;
    return worst;
}

/* ---- RoPE on a random query and key ----------------------------------- */

int posenc_rope_demo_bytes(size_t N, size_t D, size_t *bytes)
{
    size_t vbytes, rbytes, sbytes;
    /* q and k, the turned rows, the scores */
    if (size_mul(D, 2 * sizeof(float), &vbytes) || size_mul(N, D, &rbytes) ||
        size_mul(rbytes, sizeof(float), &rbytes) || size_mul(N, N, &sbytes) ||
        size_mul(sbytes, sizeof(float), &sbytes) || size_add(vbytes, rbytes, bytes) ||
        size_add(*bytes, rbytes, bytes) || size_add(*bytes, sbytes, bytes))
        return -1;
    return 0;
}

int posenc_rope_demo_alloc(posenc_rope_demo *r, size_t N, size_t D)
{
    r->N = N;
    r->D = D;
    r->q = malloc(2 * D * sizeof(float));
    r->k = r->q ? r->q + D : NULL;
    r->Qr = big_floats(N * D * sizeof(float));
    r->Kr = big_floats(N * D * sizeof(float));
    r->S = big_floats(N * N * sizeof(float));
    r->offset_error = 0.0;
    if (!r->q || !r->Qr || !r->Kr || !r->S) {
        posenc_rope_demo_free(r);
        return -1;
    }
    return 0;
}

void posenc_rope_demo_free(posenc_rope_demo *r)
{
    FREE_EACH(r->S, r->Kr, r->Qr, r->q);
    r->q = r->k = r->Qr = r->Kr = r->S = NULL;
}

/* x (D,) ← standard normal draws, scaled to length 1. */
static void draw_unit(rng *g, float *x, size_t D)
{
    double norm = 0.0;
    for (size_t c = 0; c < D; c++) {
        x[c] = (float)rng_normal(g);
        norm += (double)x[c] * x[c];
    }
    norm = sqrt(norm);
    for (size_t c = 0; c < D; c++)
        x[c] = (float)(x[c] / norm);
}

void posenc_rope_demo_run(posenc_rope_demo *r, double base, posenc_layout layout,
                          unsigned long long seed)
{
    const size_t N = r->N, D = r->D;
    rng g;
    /* 1. q, k: standard normal from the seed, each scaled to length 1 */
    rng_seed(&g, seed);
    draw_unit(&g, r->q, D);
    draw_unit(&g, r->k, D);
    /* 2. Qr[m] = RoPE(q, m), Kr[n] = RoPE(k, n) for every position */
    posenc_rope_rows(r->Qr, r->q, N, D, base, layout);
    posenc_rope_rows(r->Kr, r->k, N, D, base, layout);
    /* 3. S[m][n] = Qr[m] · Kr[n] */
    posenc_rope_scores(r->S, r->Qr, r->Kr, N, D);
    /* 4. how far S is from q · RoPE(k, n − m) */
    r->offset_error = posenc_rope_offset_error(r->S, r->q, r->k, N, D, base, layout);
}

int posenc_add(float *X, size_t B, size_t N, size_t D)
{
    float *P = float_alloc(N * D); /* (N, D) */
    if (!P)
        return -1;
    posenc_fill(P, N, D, 10000.0);
    for (size_t b = 0; b < B; b++)
        for (size_t e = 0; e < N * D; e++)
            X[b * N * D + e] += P[e];
    free(P);
    return 0;
}
