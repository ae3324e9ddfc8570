/* complexity.c — a convolution, a recurrent and a self-attention layer as
 * naive loops that count their multiply-adds, the same counts without
 * running them, the maximum path length by dependency propagation, and
 * the log-log slope fit (see complexity.h for n, d, k, dil, r). */
#include "complexity.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- layers ---------------------------------------------------------- */

/* The input position tap j of output t reads: t + (j − half)·dil. Returns
 * 1 and sets *s when it lies inside 0 … n−1, else 0 (a padding zero).
 * Compared by division, so that no product can overflow. */
static int tap_position(size_t t, size_t j, size_t half, size_t dil, size_t n, size_t *s)
{
    if (j >= half) {
        size_t ahead = j - half; /* taps after the centre */
        if (ahead != 0 && ahead > (n - 1 - t) / dil)
            return 0;
        *s = t + ahead * dil;
    } else {
        size_t back = half - j; /* taps before the centre */
        if (back > t / dil)
            return 0;
        *s = t - back * dil;
    }
    return 1;
}

cx_count conv_forward(float *y, const float *x, const float *W, const float *b, size_t n,
                      size_t d, size_t k, size_t dil)
{
    const size_t half = (k - 1) / 2; /* taps before the centre tap */
    cx_count macs = 0;
    size_t t, o, j, i, s;

    for (t = 0; t < n; t++) {
        for (o = 0; o < d; o++) {
            /* start from the bias of output channel o */
            double sum = b[o];
            for (j = 0; j < k; j++) {
                const float *xs;  /* (d,) the input position tap j reads */
                const float *w;   /* W[o][·][j]: stride k */
                /* a tap on the zero padding adds nothing: skip it */
                if (!tap_position(t, j, half, dil, n, &s))
                    continue;
                xs = x + s * d;
                w = W + o * d * k + j;
                /* Σ_i W[o][i][j] · x[s][i] */
                for (i = 0; i < d; i++)
                    sum += (double)w[i * k] * xs[i];
                macs += d;
            }
            y[t * d + o] = (float)sum;
        }
    }
    return macs;
}

cx_count rnn_forward(float *H, const float *x, const float *W_xh, const float *W_hh,
                     const float *b, size_t n, size_t d)
{
    cx_count macs = 0;
    size_t t, o, i;

    /* h_0 = 0 */
    memset(H, 0, d * sizeof *H);
    for (t = 1; t <= n; t++) {
        const float *xt = x + (t - 1) * d;   /* (d,) x_t */
        const float *hprev = H + (t - 1) * d; /* (d,) h_{t−1} */
        float *h = H + t * d;                 /* (d,) h_t */
        for (o = 0; o < d; o++) {
            double sum = b[o];
            /* W_xh · x_t: what the new input contributes */
            for (i = 0; i < d; i++)
                sum += (double)W_xh[o * d + i] * xt[i];
            /* W_hh · h_{t−1}: what the state carries from every earlier step */
            for (i = 0; i < d; i++)
                sum += (double)W_hh[o * d + i] * hprev[i];
            h[o] = (float)tanh(sum);
        }
        macs += 2 * (cx_count)d * d;
    }
    return macs;
}

size_t attn_row_width(size_t n, size_t r)
{
    return r == 0 || r > n ? n : r;
}

/* The keys query t sees: lo … hi. */
static void attn_window(size_t t, size_t n, size_t r, size_t *lo, size_t *hi)
{
    size_t before = r ? (r - 1) / 2 : n; /* keys before the query */
    size_t after = r ? r / 2 : n;        /* keys after it */
    *lo = t > before ? t - before : 0;
    *hi = after > n - 1 - t ? n - 1 : t + after;
}

cx_count attn_layer_forward(float *Y, float *A, float *Q, float *K, float *V, const float *X,
                            const linear *W_q, const linear *W_k, const linear *W_v, size_t n,
                            size_t d, size_t r)
{
    const size_t width = attn_row_width(n, r);
    const double scale = 1.0 / sqrt((double)d);
    cx_count macs = 0;
    size_t t, s, c, lo, hi;

    /* 1. project: Q = X·W_qᵀ, K = X·W_kᵀ, V = X·W_vᵀ (attention.c's linear layer) */
    linear_forward(Q, X, n, W_q);
    linear_forward(K, X, n, W_k);
    linear_forward(V, X, n, W_v);
    macs += 3 * (cx_count)n * d * d;

    for (t = 0; t < n; t++) {
        const float *q = Q + t * d; /* (d,) this query */
        float *a = A + t * width;   /* (hi − lo + 1,) its scores, then weights */
        attn_window(t, n, r, &lo, &hi);

        /* 2. scores: q · k_s / sqrt(d) for every key s the query sees */
        for (s = lo; s <= hi; s++) {
            const float *key = K + s * d; /* (d,) */
            double dot = 0.0;
            for (c = 0; c < d; c++)
                dot += (double)q[c] * key[c];
            a[s - lo] = (float)(dot * scale);
        }
        macs += (cx_count)(hi - lo + 1) * d;

        /* 3. attention weights: softmax over those keys */
        softmax_row(a, hi - lo + 1);

        /* 4. output: the weighted sum of the values, Σ_s a_s v_s */
        for (c = 0; c < d; c++) {
            double sum = 0.0;
            for (s = lo; s <= hi; s++)
                sum += (double)a[s - lo] * V[s * d + c];
            Y[t * d + c] = (float)sum;
        }
        macs += (cx_count)(hi - lo + 1) * d;
    }
    return macs;
}

/* ---- multiply-add counts ----------------------------------------------- */

cx_count conv_taps(size_t n, size_t k, size_t dil)
{
    const size_t half = (k - 1) / 2;
    cx_count taps = 0;
    size_t j;
    /* tap j, offset m·dil with m = |j − half|, is inside the sequence for
     * the n − m·dil outputs it does not push past an end */
    for (j = 0; j < k; j++) {
        size_t m = j > half ? j - half : half - j;
        if (m != 0 && dil > (n - 1) / m)
            continue; /* m·dil >= n: always on the padding */
        taps += n - m * dil;
    }
    return taps;
}

cx_count conv_macs(size_t n, size_t d, size_t k, size_t dil)
{
    return (cx_count)d * d * conv_taps(n, k, dil);
}

cx_count rnn_macs(size_t n, size_t d)
{
    return (cx_count)n * (d * d + d * d);
}

cx_count attn_keys(size_t n, size_t r)
{
    cx_count keys = 0;
    size_t t, lo, hi;
    if (r == 0)
        return (cx_count)n * n; /* every query sees all n keys */
    for (t = 0; t < n; t++) {
        attn_window(t, n, r, &lo, &hi);
        keys += hi - lo + 1;
    }
    return keys;
}

cx_count attn_core_macs(size_t n, size_t d, size_t r)
{
    return 2 * (cx_count)d * attn_keys(n, r);
}

cx_count attn_proj_macs(size_t n, size_t d)
{
    return 3 * (cx_count)n * d * d;
}

/* ---- maximum path length ----------------------------------------------- */

int path_window(size_t n, size_t left, size_t right, size_t *steps)
{
    /* the positions that depend on input 0, and those that depend on
     * input n−1, at the current step: intervals, because each step reads a
     * contiguous window that includes the position itself */
    size_t a_lo = 0, a_hi = 0, b_lo = n - 1, b_hi = n - 1;
    size_t step = 0;

    /* until one position depends on both */
    while (a_hi < b_lo) {
        size_t na_lo, na_hi, nb_lo, nb_hi;
        /* position t reads t − left … t + right: a dependency at s reaches
         * the positions s − right … s + left, clipped to the sequence */
        na_lo = a_lo > right ? a_lo - right : 0;
        na_hi = left > n - 1 - a_hi ? n - 1 : a_hi + left;
        nb_lo = b_lo > right ? b_lo - right : 0;
        nb_hi = left > n - 1 - b_hi ? n - 1 : b_hi + left;
        /* a step that reaches nothing new never will: stop, do not loop */
        if (na_lo == a_lo && na_hi == a_hi && nb_lo == b_lo && nb_hi == b_hi)
            return PATH_STALLED;
        a_lo = na_lo;
        a_hi = na_hi;
        b_lo = nb_lo;
        b_hi = nb_hi;
        step++;
    }
    *steps = step;
    return 0;
}

/* One convolution layer applied to a dependency set: output t depends on
 * the set when one of its in-range taps reads a position s with in[s] = 1,
 * so each such s marks the outputs that read it, t = s − (j − half)·dil.
 * Returns 1 when out holds a position in does not. */
static int spread(unsigned char *out, const unsigned char *in, size_t n, size_t k,
                  size_t dil)
{
    const size_t half = (k - 1) / 2;
    size_t s, t, j;
    int grew = 0;
    memset(out, 0, n);
    for (s = 0; s < n; s++) {
        if (!in[s])
            continue;
        for (j = 0; j < k; j++) {
            /* tap j of output t reads s when t = s + (half − j)·dil;
             * tap_position gives s + (j' − half')·dil, so ask it for
             * j' = k−1−j and half' = k−1−half */
            if (tap_position(s, k - 1 - j, k - 1 - half, dil, n, &t))
                out[t] = 1;
        }
    }
    for (t = 0; t < n; t++)
        if (out[t] && !in[t])
            grew = 1;
    return grew;
}

/* Whether some position is in both sets. */
static int sets_meet(const unsigned char *a, const unsigned char *b, size_t n)
{
    size_t t;
    for (t = 0; t < n; t++)
        if (a[t] && b[t])
            return 1;
    return 0;
}

int path_conv_sets(size_t n, size_t k, int dilated, size_t *steps)
{
    unsigned char *a = calloc(n, 1);    /* (n,) depends on input 0 */
    unsigned char *b = calloc(n, 1);    /* (n,) depends on input n−1 */
    unsigned char *next = calloc(n, 1); /* (n,) the next layer's set */
    unsigned char *tmp;
    size_t layer = 0, dil = 1;
    int status = 0;

    if (!a || !b || !next) {
        status = PATH_NOMEM;
        goto done;
    }
    a[0] = 1;
    b[n - 1] = 1;
    while (!sets_meet(a, b, n)) {
        int grew;
        /* one more layer of dilation dil, applied to both sets */
        grew = spread(next, a, n, k, dil);
        tmp = a, a = next, next = tmp;
        grew |= spread(next, b, n, k, dil);
        tmp = b, b = next, next = tmp;
        /* a layer that reaches nothing new: no further one will either
         * (the dilation only grows), so stop instead of looping */
        if (!grew) {
            status = PATH_STALLED;
            goto done;
        }
        layer++;
        /* WaveNet's stack: dilation k^l in layer l (once it reaches n, only
         * the centre tap is inside, so n stands for every larger value) */
        if (dilated)
            dil = dil > n / k ? n : dil * k;
    }
    *steps = layer;
done:
    free(a);
    free(b);
    free(next);
    return status;
}

int path_conv(size_t n, size_t k, size_t *steps)
{
    return path_window(n, (k - 1) / 2, k / 2, steps);
}

int path_dilated(size_t n, size_t k, size_t *steps)
{
    return path_conv_sets(n, k, 1, steps);
}

int path_rnn(size_t n, size_t *steps)
{
    /* h_t = f(x_t, h_{t−1}): unrolled over time, each step passes what the
     * state holds one position on, so input 0 reaches h_t after t steps
     * and input n−1 reaches only h_{n−1} */
    return path_window(n, 1, 0, steps);
}

int path_attention(size_t n, size_t *steps)
{
    /* every query reads every key */
    return path_window(n, n - 1, n - 1, steps);
}

int path_restricted(size_t n, size_t r, size_t *steps)
{
    return path_window(n, (r - 1) / 2, r / 2, steps);
}

/* ---- measurements ------------------------------------------------------ */

double fit_loglog_slope(const double *x, const double *y, size_t m)
{
    double mx = 0.0, my = 0.0, sxx = 0.0, sxy = 0.0;
    size_t i;
    if (m < 2)
        return NAN;
    /* means of log x and log y */
    for (i = 0; i < m; i++) {
        if (!(x[i] > 0.0) || !(y[i] > 0.0))
            return NAN;
        mx += log(x[i]);
        my += log(y[i]);
    }
    mx /= (double)m;
    my /= (double)m;
    /* slope = Σ (lx − mx)(ly − my) / Σ (lx − mx)² */
    for (i = 0; i < m; i++) {
        double dx = log(x[i]) - mx, dy = log(y[i]) - my;
        sxx += dx * dx;
        sxy += dx * dy;
    }
    if (sxx == 0.0)
        return NAN;
    return sxy / sxx;
}

double median_sort(double *v, size_t m)
{
    size_t i, j;
    /* insertion sort: m is a handful of repetitions */
    for (i = 1; i < m; i++) {
        double x = v[i];
        for (j = i; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
    return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}
