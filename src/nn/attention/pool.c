/* pool.c — Nadaraya–Watson kernel regression as attention pooling, as
 * naive loops: a query (test input), a key (training input), a kernel
 * value, a normalisation, a weighted sum of the values. Legend and
 * layout in pool.h. exp, sin and pow are fmath's, so that every machine
 * prints the same bits. */
#include "pool.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "fmath.h"
#include "rng.h"

const char *const pool_kernel_names[] = {"gaussian", "boxcar", "constant", "epanechikov",
                                         NULL};

/* ---- the data --------------------------------------------------------- */

double pool_truth(enum pool_edition ed, double x)
{
    /* zh: f(x) = 2 sin(x) + x^0.8; en: f(x) = 2 sin(x) + x */
    double sx = fm_sin(x);
    return ed == POOL_EN ? 2.0 * sx + x : 2.0 * sx + fm_pow(x, 0.8);
}

int pool_data_alloc(pool_data *d, size_t n, size_t m, int truth)
{
    memset(d, 0, sizeof *d);
    size_t nb, mb;
    if (size_mul(n ? n : 1, sizeof(double), &nb) || size_mul(m ? m : 1, sizeof(double), &mb))
        return -1;
    d->x_train = calloc(1, nb);
    d->y_train = calloc(1, nb);
    d->x_test = calloc(1, mb);
    d->y_truth = truth ? calloc(1, mb) : NULL;
    d->n = n;
    d->m = m;
    if (!d->x_train || !d->y_train || !d->x_test || (truth && !d->y_truth)) {
        pool_data_free(d);
        return -1;
    }
    return 0;
}

void pool_data_free(pool_data *d)
{
    FREE_EACH(d->x_train, d->y_train, d->x_test, d->y_truth);
    memset(d, 0, sizeof *d);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define POOL_NTEST 50 /* 0, 0.1, …, 4.9: torch.arange(0, 5, 0.1) */

int pool_data_generate(pool_data *d, enum pool_edition ed, size_t n, double noise, rng *r)
{
    if (pool_data_alloc(d, n, POOL_NTEST, 1) < 0)
        return -1;
    /* x_train (n,): torch.sort(torch.rand(n) * 5), as float32 */
    for (size_t i = 0; i < n; i++)
        d->x_train[i] = (float)(rng_uniform(r) * 5.0);
    qsort(d->x_train, n, sizeof(double), cmp_double);
    /* y_train (n,): f(x) + noise · ε, ε ~ N(0, 1) */
    for (size_t i = 0; i < n; i++)
        d->y_train[i] = (float)(pool_truth(ed, d->x_train[i]) + noise * rng_normal(r));
    /* x_test, y_truth (m,) */
    for (size_t j = 0; j < POOL_NTEST; j++) {
        d->x_test[j] = (float)(0.1 * (double)j);
        d->y_truth[j] = (float)pool_truth(ed, d->x_test[j]);
    }
    return 0;
}

/* ---- nonparametric ---------------------------------------------------- */

double pool_kernel_value(enum pool_kernel k, double u)
{
    double a = fabs(u);
    switch (k) {
    case POOL_GAUSSIAN:
        return fm_exp(-u * u / 2.0);
    case POOL_BOXCAR:
        return a < 1.0 ? 1.0 : 0.0;
    case POOL_CONSTANT:
        return 1.0;
    case POOL_EPANECHIKOV:
        return a < 1.0 ? 1.0 - a : 0.0;
    default:
        return 0.0;
    }
}

void pool_average(double *yhat, double *att, const double *y, size_t m, size_t n)
{
    double mean = 0.0;
    for (size_t i = 0; i < n; i++)
        mean += y[i];
    mean /= (double)n;
    if (!isfinite(mean)) { /* the sum of finite y beyond double's range: each y/n */
        mean = 0.0;
        for (size_t i = 0; i < n; i++)
            mean += y[i] / (double)n;
    }
    for (size_t j = 0; j < m; j++) {
        for (size_t i = 0; i < n; i++)
            att[j * n + i] = 1.0 / (double)n;
        yhat[j] = mean;
    }
}

/* Row a (n,) holding z_i ← the Gaussian kernel's scores −z_i²/2, entry
 * skip ((size_t)-1: none) left out. Where every square overflows (a query
 * far beyond every key, or a huge w), the scores are taken relative to the
 * nearest key instead, −(z_i² − z_near²)/2 = −(z_i − z_near)(z_i + z_near)/2:
 * the same softmax (a shift of every score), finite, so the weight goes to
 * the nearest keys and never to 0/0. */
static void gauss_scores(double *a, size_t n, size_t skip)
{
    size_t near = (size_t)-1;
    int finite = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == skip)
            continue;
        if (near == (size_t)-1 || fabs(a[i]) < fabs(a[near]))
            near = i;
        finite |= -a[i] * a[i] / 2.0 > -INFINITY;
    }
    if (finite || near == (size_t)-1) {
        for (size_t i = 0; i < n; i++)
            a[i] = -a[i] * a[i] / 2.0;
        return;
    }
    const double zn = a[near];
    for (size_t i = 0; i < n; i++)
        a[i] = -(a[i] - zn) * (a[i] + zn) / 2.0;
}

/* Row a (n,) ← softmax(s) in place: the largest score subtracted, exp,
 * divided by the sum. Entry skip ((size_t)-1: none) is 0. */
static void softmax_row(double *a, size_t n, size_t skip)
{
    double mx = -INFINITY, sum = 0.0;
    for (size_t i = 0; i < n; i++)
        if (i != skip && a[i] > mx)
            mx = a[i];
    for (size_t i = 0; i < n; i++) {
        a[i] = i == skip ? 0.0 : fm_exp(a[i] - mx);
        sum += a[i];
    }
    for (size_t i = 0; i < n; i++)
        a[i] /= sum;
}

/* yhat = Σ_i a_i y_i */
static double weighted_sum(const double *a, const double *y, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += a[i] * y[i];
    return s;
}

size_t pool_nonparametric(double *yhat, double *att, const double *q, const double *x,
                          const double *y, enum pool_kernel k, double sigma, size_t m,
                          size_t n)
{
    size_t unreached = 0;
    for (size_t j = 0; j < m; j++) {
        double *a = att + j * n; /* (n,) query j's weights */
        if (k == POOL_GAUSSIAN) {
            /* scores −u²/2, then a softmax: a tiny σ still gives weights */
            for (size_t i = 0; i < n; i++)
                a[i] = (q[j] - x[i]) / sigma; /* u_i */
            gauss_scores(a, n, (size_t)-1);
            softmax_row(a, n, (size_t)-1);
        } else {
            /* kernel values, then their sum as the normalisation */
            double sum = 0.0;
            for (size_t i = 0; i < n; i++) {
                a[i] = pool_kernel_value(k, (q[j] - x[i]) / sigma);
                sum += a[i];
            }
            if (sum == 0.0) { /* no key within reach: no prediction */
                unreached++;
                yhat[j] = NAN;
                continue;
            }
            for (size_t i = 0; i < n; i++)
                a[i] /= sum;
        }
        yhat[j] = weighted_sum(a, y, n);
    }
    return unreached;
}

/* ---- the width by leave-one-out ---------------------------------------- */

double pool_sigma_grid(size_t i)
{
    /* 10^(i/10 − 2): 0.01, 0.0125893, …, 10 */
    return fm_pow(10.0, (double)i / 10.0 - 2.0);
}

double pool_loo_error(const double *x, const double *y, size_t n, enum pool_kernel k,
                      double sigma, double *row, size_t *unreached)
{
    double err = 0.0;
    size_t reached = 0;
    *unreached = 0;
    for (size_t i = 0; i < n; i++) {
        /* query x_i, keys the other n − 1: u_j = (x_i − x_j) / σ */
        if (k == POOL_GAUSSIAN) {
            for (size_t j = 0; j < n; j++)
                row[j] = (x[i] - x[j]) / sigma;
            gauss_scores(row, n, i);
            softmax_row(row, n, i);
        } else {
            /* kernel values without x_i itself, then their sum */
            double sum = 0.0;
            for (size_t j = 0; j < n; j++) {
                row[j] = j == i ? 0.0 : pool_kernel_value(k, (x[i] - x[j]) / sigma);
                sum += row[j];
            }
            if (sum == 0.0) { /* no other point within reach: no prediction */
                (*unreached)++;
                continue;
            }
            for (size_t j = 0; j < n; j++)
                row[j] /= sum;
        }
        /* the squared error of ŷ_i = Σ_j a_j y_j */
        double e = weighted_sum(row, y, n) - y[i];
        err += e * e;
        reached++;
    }
    return reached ? err / (double)reached : NAN;
}

/* ---- parametric: NWKernelRegression ----------------------------------- */

void pool_param_forward(double *yhat, double *att, const double *q, const double *x,
                        const double *y, double w, size_t m, size_t n, int leave_one_out)
{
    for (size_t j = 0; j < m; j++) {
        double *a = att + j * n; /* (n,) */
        /* scores s_i = −((q_j − x_i)·w)²/2 */
        for (size_t i = 0; i < n; i++)
            a[i] = (q[j] - x[i]) * w;
        gauss_scores(a, n, leave_one_out ? j : (size_t)-1);
        /* softmax over the keys (without key j when leaving it out) */
        softmax_row(a, n, leave_one_out ? j : (size_t)-1);
        /* the weighted sum of the values */
        yhat[j] = weighted_sum(a, y, n);
    }
}

double pool_loss(double *dyhat, const double *yhat, const double *t, size_t m)
{
    double loss = 0.0;
    for (size_t j = 0; j < m; j++) {
        double e = yhat[j] - t[j];
        loss += e * e;
        dyhat[j] = 2.0 * e;
    }
    return loss;
}

double pool_param_backward(const double *dyhat, const double *att, const double *yhat,
                           const double *q, const double *x, const double *y, double w,
                           size_t m, size_t n, int leave_one_out)
{
    double dw = 0.0;
    for (size_t j = 0; j < m; j++) {
        const double *a = att + j * n;
        for (size_t i = 0; i < n; i++) {
            if (leave_one_out && i == j)
                continue;
            /* d yhat_j / d a_i = y_i; through the softmax:
             * ds_i = a_i (y_i − yhat_j) · dyhat_j */
            double ds = a[i] * (y[i] - yhat[j]) * dyhat[j];
            /* s_i = −(d·w)²/2, so ds_i / dw = −d²·w */
            double d = q[j] - x[i];
            dw += ds * (-d * d * w);
        }
    }
    return dw;
}

void pool_param_train(double *w, double *losses, size_t epochs, double lr, const double *x,
                      const double *y, size_t n, int keep_self, double *yhat, double *dyhat,
                      double *att)
{
    for (size_t e = 0; e < epochs; e++) {
        /* forward on the training points, each without itself unless kept */
        pool_param_forward(yhat, att, x, x, y, *w, n, n, !keep_self);
        losses[e] = pool_loss(dyhat, yhat, y, n);
        /* backward, then one SGD step */
        double dw = pool_param_backward(dyhat, att, yhat, x, x, y, *w, n, n, !keep_self);
        *w -= lr * dw;
    }
}

/* ---- additive pooling -------------------------------------------------- */

int pool_additive_alloc(pool_additive *p, size_t h)
{
    p->h = h;
    p->W_q = calloc(h, sizeof *p->W_q);
    p->W_k = calloc(h, sizeof *p->W_k);
    p->w_v = calloc(h, sizeof *p->w_v);
    if (p->W_q && p->W_k && p->w_v)
        return 0;
    pool_additive_free(p);
    return -1;
}

void pool_additive_free(pool_additive *p)
{
    FREE_EACH(p->W_q, p->W_k, p->w_v);
    p->W_q = p->W_k = p->w_v = NULL;
}

void pool_additive_copy(pool_additive *dst, const pool_additive *src)
{
    memcpy(dst->W_q, src->W_q, src->h * sizeof *src->W_q);
    memcpy(dst->W_k, src->W_k, src->h * sizeof *src->W_k);
    memcpy(dst->w_v, src->w_v, src->h * sizeof *src->w_v);
}

void pool_additive_init(pool_additive *p, rng *r)
{
    const double bound_v = 1.0 / sqrt((double)p->h); /* 1/√in_features of w_v */
    /* d2l's __init__ makes W_k, then W_q (one input each: ±1), then w_v */
    for (size_t u = 0; u < p->h; u++)
        p->W_k[u] = (float)(2.0 * rng_uniform(r) - 1.0);
    for (size_t u = 0; u < p->h; u++)
        p->W_q[u] = (float)(2.0 * rng_uniform(r) - 1.0);
    for (size_t u = 0; u < p->h; u++)
        p->w_v[u] = (float)(bound_v * (2.0 * rng_uniform(r) - 1.0));
}

/* a(q, k) = Σ_u w_v[u] · tanh(W_q[u] q + W_k[u] k) */
static double additive_score(const pool_additive *p, double q, double k)
{
    double s = 0.0;
    for (size_t u = 0; u < p->h; u++)
        s += p->w_v[u] * fm_tanh(p->W_q[u] * q + p->W_k[u] * k);
    return s;
}

void pool_additive_forward(double *yhat, double *att, const double *q, const double *x,
                           const double *y, const pool_additive *p, size_t m, size_t n,
                           int leave_one_out)
{
    for (size_t j = 0; j < m; j++) {
        double *a = att + j * n; /* (n,) */
        size_t skip = leave_one_out ? j : (size_t)-1;
        /* scores s_i = w_vᵀ tanh(W_q q_j + W_k x_i) */
        for (size_t i = 0; i < n; i++)
            a[i] = i == skip ? 0.0 : additive_score(p, q[j], x[i]);
        /* softmax over the keys (without key j when leaving it out) */
        softmax_row(a, n, skip);
        /* the weighted sum of the values */
        yhat[j] = weighted_sum(a, y, n);
    }
}

void pool_additive_backward(pool_additive *g, const double *dyhat, const double *att,
                            const double *yhat, const double *q, const double *x,
                            const double *y, const pool_additive *p, size_t m, size_t n,
                            int leave_one_out)
{
    memset(g->W_q, 0, p->h * sizeof *g->W_q);
    memset(g->W_k, 0, p->h * sizeof *g->W_k);
    memset(g->w_v, 0, p->h * sizeof *g->w_v);
    for (size_t j = 0; j < m; j++) {
        const double *a = att + j * n;
        for (size_t i = 0; i < n; i++) {
            if (leave_one_out && i == j)
                continue;
            /* through ŷ_j = Σ a_i y_i and the softmax:
             * ds_i = a_i (y_i − ŷ_j) · dyhat_j */
            double ds = a[i] * (y[i] - yhat[j]) * dyhat[j];
            for (size_t u = 0; u < p->h; u++) {
                /* s = Σ_u w_v[u] t_u, t_u = tanh(z_u), z_u = W_q[u] q + W_k[u] k */
                double t = fm_tanh(p->W_q[u] * q[j] + p->W_k[u] * x[i]);
                g->w_v[u] += ds * t;
                double dz = ds * p->w_v[u] * (1.0 - t * t); /* tanh' = 1 − t² */
                g->W_q[u] += dz * q[j];
                g->W_k[u] += dz * x[i];
            }
        }
    }
}

void pool_additive_train(pool_additive *p, pool_additive *g, double *losses, size_t epochs,
                         double lr, const double *x, const double *y, size_t n, int keep_self,
                         double *yhat, double *dyhat, double *att)
{
    for (size_t e = 0; e < epochs; e++) {
        /* forward on the training points, each without itself unless kept */
        pool_additive_forward(yhat, att, x, x, y, p, n, n, !keep_self);
        losses[e] = pool_loss(dyhat, yhat, y, n);
        /* backward, then one SGD step on every parameter */
        pool_additive_backward(g, dyhat, att, yhat, x, x, y, p, n, n, !keep_self);
        for (size_t u = 0; u < p->h; u++) {
            p->W_q[u] -= lr * g->W_q[u];
            p->W_k[u] -= lr * g->W_k[u];
            p->w_v[u] -= lr * g->w_v[u];
        }
    }
}

/* ---- what the results say ------------------------------------------- */

double pool_mse(const double *yhat, const double *t, size_t m)
{
    double s = 0.0;
    size_t k = 0;
    for (size_t j = 0; j < m; j++) {
        if (isnan(yhat[j]))
            continue;
        double e = yhat[j] - t[j];
        s += e * e;
        k++;
    }
    return k ? s / (double)k : NAN;
}

double pool_mean_max_weight(const double *att, size_t m, size_t n)
{
    double s = 0.0;
    size_t k = 0;
    for (size_t j = 0; j < m; j++) {
        double mx = 0.0;
        for (size_t i = 0; i < n; i++)
            mx = att[j * n + i] > mx ? att[j * n + i] : mx;
        if (mx > 0.0) {
            s += mx;
            k++;
        }
    }
    return k ? s / (double)k : NAN;
}
