/* pool.h — Nadaraya–Watson kernel regression as attention pooling (d2l
 * zh 10.2, d2l.ai 11.2): the test inputs are the queries, the training
 * inputs the keys, the training outputs the values; a kernel (or a
 * softmax of scores) gives each query's weights over the keys, and the
 * prediction is the weighted sum of the values.
 *
 * Legend: n training points (keys x_i, values y_i), m queries. Every
 * array is double and row-major; weights are (m, n), row j the weights of
 * query j over the n keys. Nothing here allocates but pool_data_alloc.
 */
#ifndef ATTN_POOL_H
#define ATTN_POOL_H

#include <stddef.h>

/* ---- the data of the section ------------------------------------------ */

enum pool_edition { POOL_ZH = 0, POOL_EN = 1 };

typedef struct pool_data {
    double *x_train, *y_train; /* (n,) each */
    double *x_test, *y_truth;  /* (m,) each; y_truth NULL when not known */
    size_t n, m;
} pool_data;

/* The truth of the edition: zh 2 sin x + x^0.8, en 2 sin x + x (fm_sin,
 * fm_pow: the same bits everywhere). */
double pool_truth(enum pool_edition ed, double x);

/* The section's data: n inputs uniform on [0, 5) sorted, y = f(x) + noise ·
 * N(0, 1), test inputs 0, 0.1, …, 4.9 with their truth; every value a
 * float32 number. Arrays allocated here (pool_data_free). 0, or -1 when
 * out of memory. The generator is attn's (SplitMix64, Box–Muller), drawn
 * from r in this order: the n inputs, then the n noises. */
struct rng;
int pool_data_generate(pool_data *d, enum pool_edition ed, size_t n, double noise,
                       struct rng *r);
/* Arrays for n training and m test points (y_truth too when truth is
 * set), zeroed: 0, or -1. */
int pool_data_alloc(pool_data *d, size_t n, size_t m, int truth);
void pool_data_free(pool_data *d);

/* ---- nonparametric pooling -------------------------------------------- */

enum pool_kernel {
    POOL_GAUSSIAN = 0, /* softmax(−u²/2) */
    POOL_BOXCAR,       /* 1 where |u| < 1 */
    POOL_CONSTANT,     /* 1 */
    POOL_EPANECHIKOV,  /* max(0, 1 − |u|) */
    POOL_NKERNELS
};
extern const char *const pool_kernel_names[]; /* NULL-terminated */

/* The kernel's value at u (the Gaussian's exp(−u²/2) unnormalised). */
double pool_kernel_value(enum pool_kernel k, double u);

/* Average pooling: every weight 1/n, yhat[j] = mean of y. */
void pool_average(double *yhat, double *att, const double *y, size_t m, size_t n);

/* Nonparametric pooling with kernel k and width sigma > 0: for query j,
 * u_i = (q_j − x_i) / sigma, weights the kernel values normalised to sum
 * 1 (the Gaussian as a softmax of −u²/2, never 0/0), yhat[j] = Σ_i att ·
 * y_i. A query no key reaches (every kernel value 0) gets a row of zeros
 * and yhat NaN. Returns how many such queries. */
size_t pool_nonparametric(double *yhat, double *att, const double *q, const double *x,
                          const double *y, enum pool_kernel k, double sigma, size_t m,
                          size_t n);

/* ---- the width by leave-one-out (--sigma auto) ------------------------- */

/* The grid of widths --sigma auto tries: 10^(i/10 − 2) for i = 0 … 30,
 * 0.01 to 10, ten a decade (fm_pow: the same bits everywhere). */
#define POOL_SIGMA_GRID_N 31
double pool_sigma_grid(size_t i);

/* Leave-one-out error of nonparametric pooling with kernel k and width
 * sigma on the n ≥ 2 training points: each x_i the query, the other n − 1
 * its keys and values (its own weight 0), the squared error of its
 * prediction against y_i. Returns the mean over the points some other
 * point reaches (NaN when none); *unreached counts the others (never for
 * the Gaussian, a softmax). row (n,) is the caller's work row. */
double pool_loo_error(const double *x, const double *y, size_t n, enum pool_kernel k,
                      double sigma, double *row, size_t *unreached);

/* ---- parametric pooling: d2l's NWKernelRegression ---------------------- */

/* Forward: for query j, scores s_i = −((q_j − x_i)·w)²/2, att = softmax(s),
 * yhat[j] = Σ_i att_ji · y_i. With leave_one_out (m = n, the queries the
 * training inputs), key j is not among query j's keys: its weight is 0
 * (the section's keys and values for training point j are the other n − 1). */
void pool_param_forward(double *yhat, double *att, const double *q, const double *x,
                        const double *y, double w, size_t m, size_t n, int leave_one_out);

/* The loss Σ_j (yhat_j − t_j)² (MSELoss without reduction, summed) and
 * its gradient dyhat_j = 2 (yhat_j − t_j). */
double pool_loss(double *dyhat, const double *yhat, const double *t, size_t m);

/* Backward: d loss / d w from dyhat (m,), with the forward's att and yhat,
 * the same inputs in the same order. */
double pool_param_backward(const double *dyhat, const double *att, const double *yhat,
                           const double *q, const double *x, const double *y, double w,
                           size_t m, size_t n, int leave_one_out);

/* The section's training: epochs full-batch SGD steps with lr on x, y
 * (n ≥ 2), from *w; losses[e] the loss before step e. Each training
 * point's keys and values are the other n − 1 (leave one out), or with
 * keep_self all n, itself too (--keep-self: the weight on itself lets a
 * large w memorise). Work buffers yhat, dyhat (n,) and att (n, n) are the
 * caller's. */
void pool_param_train(double *w, double *losses, size_t epochs, double lr, const double *x,
                      const double *y, size_t n, int keep_self, double *yhat, double *dyhat,
                      double *att);

/* ---- additive pooling: 10.3's additive score as the attention --------- */

/* The score of query q and key k (scalars here) is d2l 10.3's
 * a(q, k) = w_vᵀ tanh(W_q q + W_k k), h hidden units, no biases; the
 * weights over the keys its softmax, ŷ = Σ_i att_i y_i. Parameters in
 * nn.Linear's layout, state_dict names W_q.weight (h, 1), W_k.weight
 * (h, 1), w_v.weight (1, h): each (h,) here. */
typedef struct pool_additive {
    size_t h;
    double *W_q, *W_k, *w_v; /* (h,) each */
} pool_additive;

/* Zeroed parameters of h hidden units: 0, or -1 when out of memory. */
int pool_additive_alloc(pool_additive *p, size_t h);
void pool_additive_free(pool_additive *p);
/* dst ← src, the same h. */
void pool_additive_copy(pool_additive *dst, const pool_additive *src);
/* nn.Linear's default start, drawn from r in d2l's order (W_k, W_q, w_v)
 * as float32 values: uniform on ±1/√in_features, so W_k and W_q on ±1
 * (one input), w_v on ±1/√h. */
void pool_additive_init(pool_additive *p, struct rng *r);

/* Forward: as pool_param_forward, with the additive score in place of
 * −((q − x_i)·w)²/2 (leave_one_out: m = n, key j not among query j's). */
void pool_additive_forward(double *yhat, double *att, const double *q, const double *x,
                           const double *y, const pool_additive *p, size_t m, size_t n,
                           int leave_one_out);
/* Backward: the gradients of the loss into g (the same h, overwritten)
 * from dyhat (m,), with the forward's att and yhat and the same inputs. */
void pool_additive_backward(pool_additive *g, const double *dyhat, const double *att,
                            const double *yhat, const double *q, const double *x,
                            const double *y, const pool_additive *p, size_t m, size_t n,
                            int leave_one_out);

/* Its training, as pool_param_train's: epochs full-batch SGD steps with
 * lr on the n ≥ 2 training points, losses[e] the loss before step e:
 * each point's keys and values the other n − 1, or with keep_self every
 * point, itself too. Work buffers yhat, dyhat (n,) and att (n, n) are the
 * caller's; g (the same h as p) receives the last gradients. */
void pool_additive_train(pool_additive *p, pool_additive *g, double *losses, size_t epochs,
                         double lr, const double *x, const double *y, size_t n, int keep_self,
                         double *yhat, double *dyhat, double *att);

/* ---- what the results say ------------------------------------------- */

/* Mean squared error of yhat against t over the queries that have a
 * prediction (NaN yhat skipped); NaN when none has. */
double pool_mse(const double *yhat, const double *t, size_t m);
/* How peaked the weights are: the mean over the queries that have
 * weights of each row's largest weight (1/n for average pooling, 1 when
 * each query looks at one key). NaN when no row has weights. */
double pool_mean_max_weight(const double *att, size_t m, size_t n);

#endif
