/* pool_run.c — one `attn pool` run (pool_cmd.h): the data (--input's, or
 * the section's drawn from the seed for one training-set size), then each
 * method asked, in order, into its result. Legend: n training points, m
 * test inputs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "cli.h"
#include "pool.h"
#include "pool_cmd.h"
#include "pool_input.h"
#include "rng.h"

int pool_asked(const struct pool_args *a, int method)
{
    for (size_t i = 0; i < a->nmethods; i++)
        if (a->methods[i] == method)
            return 1;
    return 0;
}

/* The results of method i: nonparametric one per kernel and width, a
 * trained one twice with --keep-self (the default, then keeping self). */
static size_t method_results(const struct pool_args *a, size_t i)
{
    if (a->methods[i] == POOL_NONPARAMETRIC)
        return a->nkernels * a->nsigmas;
    return a->methods[i] >= POOL_PARAMETRIC && a->keep_self ? 2 : 1;
}

size_t pool_result_count(const struct pool_args *a)
{
    size_t nr = 0;
    for (size_t i = 0; i < a->nmethods; i++)
        nr += method_results(a, i);
    return nr;
}

/* The bytes of a run of n training and m test inputs: the data, each
 * result's weights and predictions, parametric training's (n, n). */
static int check_memory(const struct pool_args *a, size_t n, size_t m)
{
    size_t nr = pool_result_count(a), per, total, train = 0;
    int over = size_mul(m, n, &per) || size_add(per, m, &per) || size_mul(per, nr, &total) ||
               size_add(total, 2 * n + 2 * m, &total);
    if (pool_asked(a, POOL_PARAMETRIC) || pool_asked(a, POOL_ADDITIVE))
        over = over || size_mul(n, n, &train) || size_add(total, train, &total);
    /* in doubles; the figures and the page take float copies of one */
    over = over || size_mul(total, sizeof(double) + sizeof(float), &total);
    char what[128];
    snprintf(what, sizeof what,
             i18n_plural("%zu training and %zu test inputs with %zu result",
                         "%zu training and %zu test inputs with %zu results", nr), n, m, nr);
    return cli_check_mem(what, total, over, a->max_mem, NULL) ? EXIT_RUNTIME : EXIT_OK;
}

/* The data: --input's, or the section's drawn with the seed (r goes on to
 * draw w's start). EXIT_OK, or EXIT_RUNTIME after the message. */
static int load_data(pool_run *run, rng *r)
{
    const struct pool_args *a = run->a;
    char err[512];
    rng_seed(r, (unsigned long long)a->seed);
    if (a->input) {
        if (pool_input_load(&run->d, a->input, a->max_mem / 8, err, sizeof err) < 0) {
            cli_error("%s", err);
            return EXIT_RUNTIME;
        }
        int par = pool_asked(a, POOL_PARAMETRIC);
        if (run->d.n < 2 && (par || pool_asked(a, POOL_ADDITIVE))) {
            cli_error("%s: $.x_train: %s pooling needs at least 2 training points (each "
                      "one's keys are the other n - 1), got 1", a->input,
                      par ? "parametric" : "additive");
            return EXIT_RUNTIME;
        }
        return check_memory(a, run->d.n, run->d.m);
    }
    if (check_memory(a, (size_t)a->n_train, 50) != EXIT_OK)
        return EXIT_RUNTIME;
    if (pool_data_generate(&run->d, a->edition, (size_t)a->n_train, a->noise, r) < 0) {
        cli_error("out of memory for %ld training points", a->n_train);
        return EXIT_RUNTIME;
    }
    run->generated = 1;
    return EXIT_OK;
}

/* ---- the results ------------------------------------------------------ */

void pool_result_name(const pool_result *r, char *buf, size_t len)
{
    if (r->method == POOL_NONPARAMETRIC)
        snprintf(buf, len, "nonparametric, %s, σ = %g", pool_kernel_names[r->kernel],
                 r->sigma);
    else
        snprintf(buf, len, "%s%s", pool_method_names[r->method],
                 r->keep_self ? ", keep-self" : "");
}

static void results_free(pool_run *run)
{
    for (size_t i = 0; run->r && i < run->nr; i++) {
        FREE_EACH(run->r[i].yhat, run->r[i].att, run->r[i].losses);
        pool_additive_free(&run->r[i].add_init);
        pool_additive_free(&run->r[i].add);
    }
    free(run->r);
    run->r = NULL;
}

/* A training run's buffers: ŷ and dŷ (n,), the weights (n, n). */
typedef struct train_bufs {
    double *yh, *dy, *att;
} train_bufs;

/* t for n training points and res->losses for a->epochs (then
 * res->epochs): 1, or 0 when out of memory (free t all the same). */
static int train_bufs_alloc(train_bufs *t, pool_result *res, size_t n,
                            const struct pool_args *a)
{
    size_t nn;
    *t = (train_bufs){NULL, NULL, NULL};
    if (size_mul(n, n, &nn))
        return 0;
    t->yh = calloc(n, sizeof *t->yh);
    t->dy = calloc(n, sizeof *t->dy);
    t->att = calloc(nn, sizeof *t->att); /* (n, n) */
    res->losses = calloc(a->epochs ? (size_t)a->epochs : 1, sizeof *res->losses);
    if (!(t->yh && t->dy && t->att && res->losses))
        return 0;
    res->epochs = (size_t)a->epochs;
    return 1;
}

static void train_bufs_free(train_bufs *t)
{
    FREE_EACH(t->yh, t->dy, t->att);
}

/* Parametric: trained on the training points, then the test inputs with
 * all of them as keys. -1 when out of memory. */
static int run_parametric(pool_result *res, const pool_data *d, const struct pool_args *a)
{
    const size_t n = d->n;
    train_bufs t;
    int ok = train_bufs_alloc(&t, res, n, a);
    if (ok) {
        res->w = res->w_init;
        pool_param_train(&res->w, res->losses, res->epochs, a->lr, d->x_train, d->y_train, n,
                         res->keep_self, t.yh, t.dy, t.att);
        pool_param_forward(res->yhat, res->att, d->x_test, d->x_train, d->y_train, res->w,
                           d->m, n, 0);
    }
    train_bufs_free(&t);
    return ok ? 0 : -1;
}

/* Additive: from res->add_init, trained as parametric is, then the test
 * inputs with every training point as keys. -1 when out of memory. */
static int run_additive(pool_result *res, const pool_data *d, const struct pool_args *a)
{
    const size_t n = d->n;
    pool_additive g = {0};
    train_bufs t;
    if (pool_additive_alloc(&res->add, res->add_init.h) < 0 ||
        pool_additive_alloc(&g, res->add_init.h) < 0)
        return -1;
    int ok = train_bufs_alloc(&t, res, n, a);
    if (ok) {
        pool_additive_copy(&res->add, &res->add_init);
        pool_additive_train(&res->add, &g, res->losses, res->epochs, a->lr, d->x_train,
                            d->y_train, n, res->keep_self, t.yh, t.dy, t.att);
        pool_additive_forward(res->yhat, res->att, d->x_test, d->x_train, d->y_train, &res->add,
                              d->m, n, 0);
    }
    train_bufs_free(&t);
    pool_additive_free(&g);
    return ok ? 0 : -1;
}

/* The result of one method (kernel, sigma: nonparametric's). */
static int run_one(pool_result *res, const pool_data *d, const struct pool_args *a)
{
    const size_t n = d->n, m = d->m;
    switch (res->method) {
    case POOL_AVERAGE:
        pool_average(res->yhat, res->att, d->y_train, m, n);
        break;
    case POOL_NONPARAMETRIC:
        res->unreached = pool_nonparametric(res->yhat, res->att, d->x_test, d->x_train,
                                            d->y_train, (enum pool_kernel)res->kernel,
                                            res->sigma, m, n);
        break;
    case POOL_PARAMETRIC:
        if (run_parametric(res, d, a) < 0)
            return -1;
        break;
    default:
        if (run_additive(res, d, a) < 0)
            return -1;
    }
    res->mse = d->y_truth ? pool_mse(res->yhat, d->y_truth, m) : NAN;
    res->peak = pool_mean_max_weight(res->att, m, n);
    return 0;
}

/* Every result, in the order asked; w's start drawn from r. */
static int run_all(pool_run *run, rng *r)
{
    const struct pool_args *a = run->a;
    size_t k = 0, mn;
    double w0 = a->w_given ? a->w_init : (float)rng_uniform(r); /* torch.rand((1,)) */
    pool_additive add0 = {0};
    run->nr = pool_result_count(a);
    if (size_mul(run->d.m, run->d.n, &mn) || !(run->r = calloc(run->nr, sizeof *run->r)))
        return -1;
    if (pool_asked(a, POOL_ADDITIVE)) { /* its start, drawn after w's */
        if (pool_additive_alloc(&add0, (size_t)a->score_hiddens) < 0)
            return -1;
        pool_additive_init(&add0, r);
    }
    for (size_t i = 0; i < a->nmethods; i++) {
        int meth = a->methods[i];
        size_t cnt = method_results(a, i);
        for (size_t c = 0; c < cnt; c++, k++) {
            pool_result *res = &run->r[k];
            res->method = meth;
            res->keep_self = meth >= POOL_PARAMETRIC && c == 1;
            res->kernel = meth == POOL_NONPARAMETRIC ? a->kernels[c / a->nsigmas]
                                                     : POOL_GAUSSIAN;
            res->sigma = meth != POOL_NONPARAMETRIC ? NAN
                         : a->sigma_auto ? pool_sigma_grid(run->autos[c].best)
                                         : a->sigmas[c % a->nsigmas];
            res->w_init = w0;
            res->yhat = calloc(run->d.m, sizeof *res->yhat);
            res->att = calloc(mn ? mn : 1, sizeof *res->att);
            if (meth == POOL_ADDITIVE &&
                pool_additive_alloc(&res->add_init, (size_t)a->score_hiddens) == 0)
                pool_additive_copy(&res->add_init, &add0);
            if (!res->yhat || !res->att || (meth == POOL_ADDITIVE && !res->add_init.W_q) ||
                run_one(res, &run->d, a) < 0) {
                pool_additive_free(&add0);
                return -1;
            }
        }
    }
    pool_additive_free(&add0);
    return 0;
}

/* --sigma auto: for each kernel asked, the leave-one-out error at every
 * width of the grid, and the width of the least among those that predict
 * every training point with a finite error (the smallest such width on a
 * tie). EXIT_OK, or EXIT_RUNTIME after the message. */
static int choose_widths(pool_run *run)
{
    const struct pool_args *a = run->a;
    const pool_data *d = &run->d;
    if (d->n < 2) {
        cli_error("%s: $.x_train: --sigma auto's leave-one-out needs at least 2 training "
                  "points, got 1", a->input);
        return EXIT_RUNTIME;
    }
    double *row = calloc(d->n, sizeof *row); /* (n,) */
    if (!row) {
        cli_error("out of memory");
        return EXIT_RUNTIME;
    }
    int status = EXIT_OK;
    run->nautos = a->nkernels;
    for (size_t k = 0; k < a->nkernels && status == EXIT_OK; k++) {
        pool_sigma_auto *au = &run->autos[k];
        size_t best = POOL_SIGMA_GRID_N;
        au->kernel = a->kernels[k];
        for (size_t i = 0; i < POOL_SIGMA_GRID_N; i++) {
            au->loo[i] = pool_loo_error(d->x_train, d->y_train, d->n,
                                        (enum pool_kernel)au->kernel, pool_sigma_grid(i), row,
                                        &au->unreached[i]);
            if (au->unreached[i] == 0 && isfinite(au->loo[i]) &&
                (best == POOL_SIGMA_GRID_N || au->loo[i] < au->loo[best]))
                best = i;
        }
        au->best = best;
        if (best == POOL_SIGMA_GRID_N) {
            cli_error("--sigma auto: no width from 0.01 to 10 lets the %s kernel predict every "
                      "training point from the others with a finite error; give --sigma",
                      pool_kernel_names[au->kernel]);
            status = EXIT_RUNTIME;
        }
    }
    free(row);
    return status;
}

int pool_run_compute(pool_run *run)
{
    rng r;
    int status = load_data(run, &r);
    if (status == EXIT_OK && run->a->sigma_auto && pool_asked(run->a, POOL_NONPARAMETRIC))
        status = choose_widths(run);
    if (status == EXIT_OK && run_all(run, &r) < 0) {
        cli_error("out of memory");
        status = EXIT_RUNTIME;
    }
    return status;
}

void pool_run_free(pool_run *run)
{
    results_free(run);
    pool_data_free(&run->d);
}
