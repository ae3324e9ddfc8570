/* complexity.c — a convolution, a recurrent and a self-attention layer as
 * naive loops that count their multiply-adds, the same counts without
 * running them, the maximum path length by dependency propagation, and
 * the log-log slope fit (see complexity.h for n, d, k, dil, r). */
#include "complexity.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "clock.h"
#include "fmath.h"
#include "rng.h"
#include "i18n.h"

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
    size_t s;

    for (size_t t = 0; t < n; t++) {
        for (size_t o = 0; o < d; o++) {
            /* start from the bias of output channel o */
            double sum = b[o];
            for (size_t j = 0; j < k; j++) {
                /* a tap on the zero padding adds nothing: skip it */
                if (!tap_position(t, j, half, dil, n, &s))
                    continue;
                const float *xs = x + s * d;        /* (d,) the input position tap j reads */
                const float *w = W + o * d * k + j; /* W[o][·][j]: stride k */
                /* Σ_i W[o][i][j] · x[s][i] */
                for (size_t i = 0; i < d; i++)
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

    /* h_0 = 0 */
    memset(H, 0, d * sizeof *H);
    for (size_t t = 1; t <= n; t++) {
        const float *xt = x + (t - 1) * d;   /* (d,) x_t */
        const float *hprev = H + (t - 1) * d; /* (d,) h_{t−1} */
        float *h = H + t * d;                 /* (d,) h_t */
        for (size_t o = 0; o < d; o++) {
            double sum = b[o];
            /* W_xh · x_t: what the new input contributes */
            for (size_t i = 0; i < d; i++)
                sum += (double)W_xh[o * d + i] * xt[i];
            /* W_hh · h_{t−1}: what the state carries from every earlier step */
            for (size_t i = 0; i < d; i++)
                sum += (double)W_hh[o * d + i] * hprev[i];
            h[o] = (float)fm_tanh(sum);
        }
        macs += 2 * (cx_count)d * d;
    }
    return macs;
}

size_t cx_attn_row_width(size_t n, size_t r)
{
    return r == 0 || r > n ? n : r;
}

/* The keys query t sees: lo … hi. */
static void cx_attn_window(size_t t, size_t n, size_t r, size_t *lo, size_t *hi)
{
    size_t before = r ? (r - 1) / 2 : n; /* keys before the query */
    size_t after = r ? r / 2 : n;        /* keys after it */
    *lo = t > before ? t - before : 0;
    *hi = after > n - 1 - t ? n - 1 : t + after;
}

cx_count cx_attn_forward(float *Y, float *A, float *Q, float *K, float *V, const float *X,
                            const linear *W_q, const linear *W_k, const linear *W_v, size_t n,
                            size_t d, size_t r)
{
    const size_t width = cx_attn_row_width(n, r);
    const double scale = 1.0 / sqrt((double)d);
    cx_count macs = 0;
    size_t lo, hi;

    /* 1. project: Q = X·W_qᵀ, K = X·W_kᵀ, V = X·W_vᵀ (attention.c's linear layer) */
    linear_forward(Q, X, n, W_q);
    linear_forward(K, X, n, W_k);
    linear_forward(V, X, n, W_v);
    macs += 3 * (cx_count)n * d * d;

    for (size_t t = 0; t < n; t++) {
        const float *q = Q + t * d; /* (d,) this query */
        float *a = A + t * width;   /* (hi − lo + 1,) its scores, then weights */
        cx_attn_window(t, n, r, &lo, &hi);

        /* 2. scores: q · k_s / sqrt(d) for every key s the query sees */
        for (size_t s = lo; s <= hi; s++) {
            const float *key = K + s * d; /* (d,) */
            double dot = 0.0;
            for (size_t c = 0; c < d; c++)
                dot += (double)q[c] * key[c];
            a[s - lo] = (float)(dot * scale);
        }
        macs += (cx_count)(hi - lo + 1) * d;

        /* 3. attention weights: softmax over those keys */
        softmax_row(a, hi - lo + 1);

        /* 4. output: the weighted sum of the values, Σ_s a_s v_s */
        for (size_t c = 0; c < d; c++) {
            double sum = 0.0;
            for (size_t s = lo; s <= hi; s++)
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
    /* tap j, offset m·dil with m = |j − half|, is inside the sequence for
     * the n − m·dil outputs it does not push past an end */
    for (size_t j = 0; j < k; j++) {
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

cx_count cx_attn_keys(size_t n, size_t r)
{
    cx_count keys = 0;
    size_t lo, hi;
    if (r == 0)
        return (cx_count)n * n; /* every query sees all n keys */
    for (size_t t = 0; t < n; t++) {
        cx_attn_window(t, n, r, &lo, &hi);
        keys += hi - lo + 1;
    }
    return keys;
}

cx_count cx_attn_core_macs(size_t n, size_t d, size_t r)
{
    return 2 * (cx_count)d * cx_attn_keys(n, r);
}

cx_count cx_attn_proj_macs(size_t n, size_t d)
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
        /* position t reads t − left … t + right: a dependency at s reaches
         * the positions s − right … s + left, clipped to the sequence */
        size_t na_lo = a_lo > right ? a_lo - right : 0;
        size_t na_hi = left > n - 1 - a_hi ? n - 1 : a_hi + left;
        size_t nb_lo = b_lo > right ? b_lo - right : 0;
        size_t nb_hi = left > n - 1 - b_hi ? n - 1 : b_hi + left;
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
    size_t t;
    int grew = 0;
    memset(out, 0, n);
    for (size_t s = 0; s < n; s++) {
        if (!in[s])
            continue;
        for (size_t j = 0; j < k; j++) {
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
    for (size_t t = 0; t < n; t++)
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
        /* one more layer of dilation dil, applied to both sets */
        int grew = spread(next, a, n, k, dil);
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
    if (m < 2)
        return NAN;
    /* means of log x and log y */
    for (size_t i = 0; i < m; i++) {
        if (!(x[i] > 0.0) || !(y[i] > 0.0))
            return NAN;
        mx += fm_log(x[i]);
        my += fm_log(y[i]);
    }
    mx /= (double)m;
    my /= (double)m;
    /* slope = Σ (lx − mx)(ly − my) / Σ (lx − mx)² */
    for (size_t i = 0; i < m; i++) {
        double dx = fm_log(x[i]) - mx, dy = fm_log(y[i]) - my;
        sxx += dx * dx;
        sxy += dx * dy;
    }
    if (sxx == 0.0)
        return NAN;
    return sxy / sxx;
}

double median_sort(double *v, size_t m)
{
    size_t j;
    /* insertion sort: m is a handful of repetitions */
    for (size_t i = 1; i < m; i++) {
        double x = v[i];
        for (j = i; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
    return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

/* ---- the chapter's table --------------------------------------------- */

/* How a row's maximum path length grows with n. */
enum path_rule {
    PATH_PER_WINDOW, /* ⌈(n−1)/(w−1)⌉ layers of a window of w (the row's k or r) */
    PATH_LINEAR,     /* n − 1 steps */
    PATH_ONE,        /* one layer (n ≥ 2) */
    PATH_LOG         /* ⌈log_k n⌉ layers */
};

/* One row description per layer type. The O() value is
 * w^w_exp · n^n_exp · d^d_exp, multiplied in that order, w being the row's
 * k or r (or 1). */
static const struct row_desc {
    const char *key, *label;
    const char *name;       /* printf format, with the row's k or r */
    char size;              /* 'k', 'r' or 0: the size in name and formulas */
    const char *complexity; /* O() of the computation */
    int w_exp, n_exp, d_exp;
    const char *sequential; /* O() of the sequential operations */
    int sequential_is_n;    /* n of them (else 1) */
    const char *path;       /* O() of the maximum path length */
    const char *path_exact; /* printf format, with the row's k */
    enum path_rule path_rule;
    const char *unit;
} row_descs[CX_NLAYERS] = {
    [CX_CONV] = {"convolution", N_("convolution"), N_("convolution, k = %zu"), 'k', "O(k·n·d²)", 1, 1, 2,
                 "O(1)", 0, "O(n/k)", "⌈(n−1)/(k−1)⌉", PATH_PER_WINDOW, "layers"},
    [CX_RNN] = {"recurrent", N_("recurrent"), N_("recurrent (tanh)"), 0, "O(n·d²)", 0, 1, 2, "O(n)", 1,
                "O(n)", "n−1", PATH_LINEAR, "steps"},
    [CX_ATTN] = {"self_attention", N_("self-attention"), N_("self-attention"), 0, "O(n²·d)", 0, 2, 1,
                 "O(1)", 0, "O(1)", "1", PATH_ONE, "layers"},
    [CX_RESTRICTED] = {"restricted_self_attention", N_("restricted"), N_("restricted attn, r = %zu"), 'r',
                       "O(r·n·d)", 1, 1, 1, "O(1)", 0, "O(n/r)", "⌈(n−1)/(r−1)⌉", PATH_PER_WINDOW,
                       "layers"},
    [CX_DILATED] = {"dilated_convolution", N_("dilated"), N_("dilated conv, k = %zu"), 'k', "O(k·n·d²)", 1,
                    1, 2, "O(1)", 0, "O(log_k n)", "⌈log_%zu n⌉", PATH_LOG, "layers"},
};

const char *cx_layer_label(cx_layer layer)
{
    return _(row_descs[layer].label);
}

cx_count cx_layer_macs(cx_layer layer, size_t n, size_t d, size_t k, size_t r)
{
    switch (layer) {
    case CX_RNN: return rnn_macs(n, d);
    case CX_ATTN: return cx_attn_core_macs(n, d, 0) + cx_attn_proj_macs(n, d);
    case CX_RESTRICTED: return cx_attn_core_macs(n, d, r) + cx_attn_proj_macs(n, d);
    default: return conv_macs(n, d, k, 1); /* CX_CONV, and CX_DILATED's layer 0 */
    }
}

/* ⌈log_k n⌉: the fewest L with k^L >= n. */
static size_t ceil_log(size_t n, size_t k)
{
    size_t L = 0, power = 1;
    while (power < n) {
        power = power > n / k ? n : power * k;
        L++;
    }
    return L;
}

/* w^w_exp · n^n_exp · d^d_exp, multiplied left to right. */
static double big_o_value(const struct row_desc *rd, double w, double n, double d)
{
    double y = 1.0;
    for (int i = 0; i < rd->w_exp; i++)
        y *= w;
    for (int i = 0; i < rd->n_exp; i++)
        y *= n;
    for (int i = 0; i < rd->d_exp; i++)
        y *= d;
    return y;
}

/* Propagate dependencies for one layer type (see path_window). */
static int measured_path(cx_layer layer, const cx_table *t, size_t *steps)
{
    switch (layer) {
    case CX_CONV: return path_conv(t->n, t->k, steps);
    case CX_RNN: return path_rnn(t->n, steps);
    case CX_ATTN: return path_attention(t->n, steps);
    case CX_RESTRICTED: return path_restricted(t->n, t->r, steps);
    default: return path_dilated(t->n, t->k, steps);
    }
}

/* Multiply-adds of the stack of layers that connects x_1 and x_n. */
static double stack_macs(cx_layer layer, const cx_table *t)
{
    const cx_row *row = &t->rows[layer];
    double sum = 0.0;
    switch (layer) {
    case CX_RNN: return t->n > 1 ? (double)row->macs : 0.0; /* its steps are one layer's */
    case CX_ATTN: return t->n > 1 ? (double)row->macs : 0.0;
    case CX_DILATED:
        for (size_t l = 0, dil = 1; l < row->path_measured; l++) {
            sum += (double)conv_macs(t->n, t->d, t->k, dil);
            dil = dil > t->n / t->k ? t->n : dil * t->k; /* beyond n only the centre tap counts */
        }
        return sum;
    default: return (double)row->path_measured * (double)row->macs; /* identical layers */
    }
}

/* One row from its description; then the path, measured. */
static int build_row(cx_table *t, cx_layer layer)
{
    const struct row_desc *rd = &row_descs[layer];
    const size_t n = t->n, w = rd->size == 'r' ? t->r : rd->size == 'k' ? t->k : 1;
    cx_row *row = &t->rows[layer];
    row->key = rd->key;
    snprintf(row->name, sizeof row->name, rd->name, w);
    snprintf(row->label, sizeof row->label, _(rd->name), w);
    row->complexity = rd->complexity;
    row->big_o = big_o_value(rd, (double)w, (double)n, (double)t->d);
    row->macs = cx_layer_macs(layer, n, t->d, t->k, t->r);
    row->sequential = rd->sequential;
    row->sequential_n = rd->sequential_is_n ? n : 1;
    row->path = rd->path;
    snprintf(row->path_exact, sizeof row->path_exact, rd->path_exact, t->k);
    switch (rd->path_rule) {
    case PATH_PER_WINDOW:
        row->path_big_o = (double)n / (double)w;
        row->path_formula = ceil_div(n - 1, w - 1);
        break;
    case PATH_LINEAR:
        row->path_big_o = (double)n;
        row->path_formula = n - 1;
        break;
    case PATH_ONE:
        row->path_big_o = 1.0;
        row->path_formula = n > 1 ? 1 : 0;
        break;
    case PATH_LOG:
        row->path_big_o = n > 1 ? fm_log((double)n) / fm_log((double)t->k) : 0.0;
        row->path_formula = ceil_log(n, t->k);
        break;
    }
    row->unit = rd->unit;
    int status = measured_path(layer, t, &row->path_measured);
    if (status == 0)
        row->stack_macs = stack_macs(layer, t);
    return status;
}

/* The smallest n0 with attention (QKᵀ and A·V, plus W_q, W_k, W_v when
 * with_proj) costlier than the other layer (CX_RNN or CX_CONV) for every
 * n >= n0, knowing it is for every n >= bound: walk down from bound to the
 * last n where it is not. The counts, each divided by d (all are multiples
 * of d), so that they fit in 64 bits far beyond --n's limit:
 *   attention 2·n² (+ 3·n·d)   recurrent 2·n·d   convolution d·taps(n) */
static size_t first_costlier(cx_layer layer, int with_proj, size_t bound, const cx_table *t)
{
    const cx_count d = t->d;
    for (size_t n = bound; n > 1; n--) {
        cx_count m = n - 1;
        cx_count attn = 2 * m * m + (with_proj ? 3 * m * d : 0);
        cx_count other = layer == CX_RNN ? 2 * m * d : d * conv_taps((size_t)m, t->k, 1);
        if (attn <= other)
            return n;
    }
    return 1;
}

int cx_table_build(cx_table *t, size_t n, size_t d, size_t k, size_t r, cx_layer *layer)
{
    memset(t, 0, sizeof *t);
    t->n = n;
    t->d = d;
    t->k = k;
    t->r = r;
    t->attn_core = cx_attn_core_macs(n, d, 0);
    t->attn_proj = cx_attn_proj_macs(n, d);
    t->restricted_core = cx_attn_core_macs(n, d, r);
    t->conv_full = (cx_count)k * n * d * d;
    t->conv_taps = conv_taps(n, k, 1);
    t->attn_keys = cx_attn_keys(n, r);
    for (int l = 0; l < CX_NLAYERS; l++) {
        int status = build_row(t, (cx_layer)l);
        if (status != 0) {
            *layer = (cx_layer)l;
            return status;
        }
    }
    /* where self-attention becomes costlier: the chapter's O() rules, and
     * the exact counts (costlier for every n beyond d, resp. k·d/2) */
    t->than_rnn.rule = "n > d";
    t->than_rnn.big_o_n = d + 1;
    t->than_rnn.core_n = first_costlier(CX_RNN, 0, d + 1, t);
    t->than_rnn.proj_n = first_costlier(CX_RNN, 1, d + 1, t);
    t->than_conv.rule = "n > k·d";
    t->than_conv.big_o_n = k * d + 1;
    t->than_conv.core_n = first_costlier(CX_CONV, 0, k * d / 2 + 1, t);
    t->than_conv.proj_n = first_costlier(CX_CONV, 1, k * d / 2 + 1, t);
    return 0;
}

/* ---- timing the layers ----------------------------------------------- */

void cx_sweep_points(cx_measurement *me, size_t from, size_t to)
{
    size_t n = from;
    me->m = 0;
    while (n < to && me->m < CX_MAX_SWEEP - 1) {
        me->n[me->m++] = n;
        n *= 2;
    }
    me->n[me->m++] = to;
}

/* The buffers for the largest n, and the layers' weights. */
typedef struct bench {
    size_t N, d, k, r;
    float *X;             /* (N, d) random input */
    float *Y;             /* (N + 1, d) output; the RNN's h_0 … h_N */
    float *Q, *K, *V;     /* (N, d) each */
    float *A;             /* (N, N) attention weights */
    float *conv_W;        /* (d, d, k) */
    float *conv_b;        /* (d,) */
    float *W_xh, *W_hh;   /* (d, d) each */
    float *rnn_b;         /* (d,) */
    linear W_q, W_k, W_v; /* (d, d) each, no bias */
} bench;

int cx_measure_bytes(size_t N, size_t d, size_t k, size_t *bytes)
{
    size_t floats = 0, part;
    if (size_mul(N, d, &part) || size_mul(part, 5, &part) || size_add(floats, part, &floats) ||
        size_add(floats, d, &floats) ||                             /* Y's extra row */
        size_mul(N, N, &part) || size_add(floats, part, &floats) || /* A */
        size_mul(d, d, &part) || size_mul(part, k + 5, &part) ||    /* conv, W_xh, W_hh, W_q,k,v */
        size_add(floats, part, &floats) || size_add(floats, 2 * d, &floats) ||
        size_mul(floats, sizeof(float), bytes))
        return -1;
    return 0;
}

static float *alloc_floats(size_t count, int *failed)
{
    float *p = count && !*failed ? float_alloc(count) : NULL;
    if (!p)
        *failed = 1;
    return p;
}

static void bench_free(bench *b)
{
    FREE_EACH(b->X, b->Y, b->Q, b->K, b->V, b->A, b->conv_W, b->conv_b, b->W_xh, b->W_hh,
              b->rnn_b);
    tensor_free(&b->W_q.weight);
    tensor_free(&b->W_k.weight);
    tensor_free(&b->W_v.weight);
}

/* uniform in ±bound, like PyTorch's default initialisation */
static void fill_uniform(float *w, size_t count, double bound, rng *g)
{
    for (size_t i = 0; i < count; i++)
        w[i] = (float)((2.0 * rng_uniform(g) - 1.0) * bound);
}

/* The buffers and weights; sizes within cx_measure_bytes, so these
 * products fit. */
static int bench_init(bench *b, size_t N, size_t d, size_t k, size_t r, unsigned long long seed)
{
    size_t shape[2] = {d, d};
    char err[256];
    int failed = 0;
    rng g;

    memset(b, 0, sizeof *b);
    b->N = N;
    b->d = d;
    b->k = k;
    b->r = r;
    b->X = alloc_floats(N * d, &failed);
    b->Y = alloc_floats((N + 1) * d, &failed);
    b->Q = alloc_floats(N * d, &failed);
    b->K = alloc_floats(N * d, &failed);
    b->V = alloc_floats(N * d, &failed);
    b->A = alloc_floats(N * N, &failed);
    b->conv_W = alloc_floats(d * d * k, &failed);
    b->conv_b = alloc_floats(d, &failed);
    b->W_xh = alloc_floats(d * d, &failed);
    b->W_hh = alloc_floats(d * d, &failed);
    b->rnn_b = alloc_floats(d, &failed);
    if (failed || tensor_alloc(&b->W_q.weight, 2, shape, err, sizeof err) ||
        tensor_alloc(&b->W_k.weight, 2, shape, err, sizeof err) ||
        tensor_alloc(&b->W_v.weight, 2, shape, err, sizeof err)) {
        bench_free(b);
        return -1;
    }
    rng_seed(&g, seed);
    /* input: standard normal */
    for (size_t i = 0; i < N * d; i++)
        b->X[i] = (float)rng_normal(&g);
    /* weights: uniform in ±1/sqrt(fan_in) */
    fill_uniform(b->conv_W, d * d * k, 1.0 / sqrt((double)(d * k)), &g);
    fill_uniform(b->conv_b, d, 1.0 / sqrt((double)(d * k)), &g);
    fill_uniform(b->W_xh, d * d, 1.0 / sqrt((double)d), &g);
    fill_uniform(b->W_hh, d * d, 1.0 / sqrt((double)d), &g);
    fill_uniform(b->rnn_b, d, 1.0 / sqrt((double)d), &g);
    fill_uniform(b->W_q.weight.data, d * d, 1.0 / sqrt((double)d), &g);
    fill_uniform(b->W_k.weight.data, d * d, 1.0 / sqrt((double)d), &g);
    fill_uniform(b->W_v.weight.data, d * d, 1.0 / sqrt((double)d), &g);
    return 0;
}

/* One forward pass of a layer over the first n positions. */
static cx_count run_layer(bench *b, cx_layer layer, size_t n)
{
    switch (layer) {
    case CX_CONV: return conv_forward(b->Y, b->X, b->conv_W, b->conv_b, n, b->d, b->k, 1);
    case CX_RNN: return rnn_forward(b->Y, b->X, b->W_xh, b->W_hh, b->rnn_b, n, b->d);
    case CX_ATTN:
        return cx_attn_forward(b->Y, b->A, b->Q, b->K, b->V, b->X, &b->W_q, &b->W_k, &b->W_v, n,
                                  b->d, 0);
    default:
        return cx_attn_forward(b->Y, b->A, b->Q, b->K, b->V, b->X, &b->W_q, &b->W_k, &b->W_v, n,
                                  b->d, b->r);
    }
}

/* Passes of one layer at n that make a timed repetition last at least
 * CX_TIMED_SECONDS, from one untimed pass (which also warms the buffers). */
static long calibrate(bench *b, cx_layer layer, size_t n, cx_count *macs)
{
    double start = now_seconds();
    *macs = run_layer(b, layer, n);
    double once = now_seconds() - start;
    if (once >= CX_TIMED_SECONDS)
        return 1;
    if (once < CX_TIMED_SECONDS / CX_MAX_ITERS)
        return CX_MAX_ITERS;
    return (long)ceil(CX_TIMED_SECONDS / once);
}

/* The mean time of one pass over iters passes, by both clocks. */
static void time_passes(bench *b, cx_layer layer, size_t n, long iters, double *cpu, double *wall)
{
    double wall0 = now_seconds(), cpu0 = cpu_seconds();
    for (long it = 0; it < iters; it++)
        run_layer(b, layer, n);
    *cpu = (cpu_seconds() - cpu0) / (double)iters;
    *wall = (now_seconds() - wall0) / (double)iters;
}

/* The growth exponents, on the upper half of the sweep (at least two
 * points): of the median times by each clock, and of the counts. */
static void fit_slopes(cx_measurement *me)
{
    size_t nfit = (me->m + 1) / 2;
    if (nfit < 2)
        nfit = 2;
    me->fit_from = me->m - nfit;
    for (int layer = 0; layer < CX_NMEASURED; layer++) {
        double x[CX_MAX_SWEEP], y[CX_MAX_SWEEP];
        for (size_t i = 0; i < nfit; i++) {
            x[i] = (double)me->n[me->fit_from + i];
            y[i] = (double)me->macs[layer][me->fit_from + i];
        }
        me->count_slope[layer] = fit_loglog_slope(x, y, nfit);
        for (int c = 0; c < 2; c++)
            me->slope[c][layer] = fit_loglog_slope(x, me->seconds[c][layer] + me->fit_from, nfit);
    }
}

/* One sweep of --measure: the layers' buffers, where the progress stands,
 * and the passes per timed repetition of each layer and n. */
typedef struct sweep {
    bench b;
    cx_measurement *me;
    cx_progress_fn *progress;
    void *ctx;
    double done, total;                        /* multiply-adds (+1e6 a pass) */
    long iters[CX_NMEASURED][CX_MAX_SWEEP];    /* passes per timed repetition */
} sweep;

static void sweep_progress(const sweep *s, int layer, size_t n)
{
    if (s->progress)
        s->progress(s->ctx, s->done, s->total, (cx_layer)layer, n);
}

/* 1. one untimed pass per layer and n: the count, checked against the
 * formula, and the passes per repetition. 0, or -1 with the reason. */
static int sweep_calibrate(sweep *s, char *err, size_t errlen)
{
    cx_measurement *me = s->me;
    for (size_t i = 0; i < me->m; i++) {
        for (int layer = 0; layer < CX_NMEASURED; layer++) {
            const size_t n = me->n[i];
            const cx_count want = cx_layer_macs((cx_layer)layer, n, me->d, me->k, me->r);
            sweep_progress(s, layer, n);
            s->iters[layer][i] = calibrate(&s->b, (cx_layer)layer, n, &me->macs[layer][i]);
            if (me->macs[layer][i] != want) {
                snprintf(err, errlen,
                         _("internal error: the %s layer performed %llu multiply-adds at n = %zu, "
                         "its formula says %llu"),
                         cx_layer_label((cx_layer)layer), me->macs[layer][i], n, want);
                return -1;
            }
            s->done += (double)want + 1e6;
        }
    }
    return 0;
}

/* 2. the timed repetitions, in rounds over every layer and n, into
 * samples (clock, layer, point, rep) */
static void sweep_time(sweep *s, double (*samples)[CX_NMEASURED][CX_MAX_SWEEP][CX_MAX_REPS])
{
    cx_measurement *me = s->me;
    for (size_t rep = 0; rep < me->reps; rep++) {
        for (size_t i = 0; i < me->m; i++) {
            for (int layer = 0; layer < CX_NMEASURED; layer++) {
                sweep_progress(s, layer, me->n[i]);
                time_passes(&s->b, (cx_layer)layer, me->n[i], s->iters[layer][i],
                            &samples[CX_CPU][layer][i][rep], &samples[CX_WALL][layer][i][rep]);
                s->done += (double)me->macs[layer][i] + 1e6;
            }
        }
    }
}

int cx_measure(cx_measurement *me, size_t d, size_t k, size_t r, size_t reps, int clock,
               unsigned long long seed, cx_progress_fn *progress, void *ctx, char *err,
               size_t errlen)
{
    double start = now_seconds();
    double(*samples)[CX_NMEASURED][CX_MAX_SWEEP][CX_MAX_REPS]; /* (clock, layer, point, rep) */
    sweep s = {.me = me, .progress = progress, .ctx = ctx};

    me->clock = clock;
    me->d = d;
    me->k = k;
    me->r = r;
    me->reps = reps;
    samples = malloc(2 * sizeof *samples);
    if (!samples || bench_init(&s.b, me->n[me->m - 1], d, k, r, seed)) {
        free(samples);
        snprintf(err, errlen, "%s", _("out of memory for the --measure buffers"));
        return -1;
    }
    /* the progress moves with the multiply-adds, which time follows */
    for (size_t i = 0; i < me->m; i++)
        for (int layer = 0; layer < CX_NMEASURED; layer++)
            s.total += (double)(reps + 1) *
                       ((double)cx_layer_macs((cx_layer)layer, me->n[i], d, k, r) + 1e6);
    if (sweep_calibrate(&s, err, errlen)) {
        bench_free(&s.b);
        free(samples);
        return -1;
    }
    sweep_time(&s, samples);
    bench_free(&s.b);
    /* 3. the median of the repetitions */
    for (int c = 0; c < 2; c++)
        for (int layer = 0; layer < CX_NMEASURED; layer++)
            for (size_t i = 0; i < me->m; i++)
                me->seconds[c][layer][i] = median_sort(samples[c][layer][i], reps);
    free(samples);
    me->total_seconds = now_seconds() - start;
    /* 4. the growth exponents */
    fit_slopes(me);
    return 0;
}
