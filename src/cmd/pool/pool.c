/* pool.c — `attn pool`: d2l zh 10.2 (d2l.ai 11.2), Nadaraya–Watson kernel
 * regression as attention pooling (SPEC.md §13). The section's data (or
 * the learner's points), then average pooling, nonparametric pooling with
 * each kernel and width, and d2l's NWKernelRegression trained as the book
 * trains it; each result's error against the truth, the learned w and how
 * peaked the weights are. Legend: n training points, m test inputs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "cli.h"
#include "commands.h"
#include "options.h"
#include "output.h"
#include "page_out.h"
#include "pool.h"
#include "pool_cmd.h"
#include "pool_input.h"
#include "rng.h"

#define MAX_N_TRAIN 2000000000L /* larger meets --max-mem first */
#define MAX_EPOCHS 1000000L

static const char *const edition_names[] = {"zh", "en", NULL};

/* "a,b,c": each word one of words, at most POOL_MAX_LIST, none twice. */
static int parse_words(const char *opt, const char *s, const char *const *words, int *out,
                       size_t *n)
{
    *n = 0;
    for (const char *p = s;;) {
        size_t len = strcspn(p, ",");
        int k = -1;
        for (int i = 0; words[i]; i++)
            if (strlen(words[i]) == len && strncmp(words[i], p, len) == 0)
                k = i;
        for (size_t j = 0; k >= 0 && j < *n; j++)
            if (out[j] == k) {
                cli_error("%s: '%s' given twice in '%s'", opt, words[k], s);
                return -1;
            }
        if (k < 0 || *n == POOL_MAX_LIST) {
            cli_error("%s: expected a list of %s (comma-separated), got '%s'", opt,
                      words == pool_method_names ? "average, nonparametric, parametric"
                                                 : "gaussian, boxcar, constant, epanechikov",
                      s);
            return -1;
        }
        out[(*n)++] = k;
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
}

static int parse_method(void *args, const char *s)
{
    struct pool_args *a = args;
    return parse_words("--method", s, pool_method_names, a->methods, &a->nmethods);
}

static int parse_kernel(void *args, const char *s)
{
    struct pool_args *a = args;
    return parse_words("--kernel", s, pool_kernel_names, a->kernels, &a->nkernels);
}

/* "0.1,0.2,0.5,1": widths greater than 0. */
static int parse_sigma(void *args, const char *s)
{
    struct pool_args *a = args;
    char word[64];
    a->nsigmas = 0;
    for (const char *p = s;;) {
        size_t len = strcspn(p, ",");
        char *end = NULL;
        double v = NAN;
        if (len > 0 && len < sizeof word) {
            memcpy(word, p, len);
            word[len] = '\0';
            v = strtod(word, &end);
        }
        if (!end || *end != '\0' || !isfinite(v) || !(v > 0.0) || a->nsigmas == POOL_MAX_LIST) {
            cli_error("--sigma: expected widths greater than 0 (at most %d, "
                      "comma-separated), got '%s'", POOL_MAX_LIST, s);
            return -1;
        }
        a->sigmas[a->nsigmas++] = v;
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
}

#define OPT_ARGS struct pool_args
const struct opt pool_options[] = {
    OPT_CALLBACK(0, "method", "LIST", parse_method,
                 "average, nonparametric, parametric, one or more\n"
                 "(default all three, in that order)"),
    OPT_CALLBACK(0, "kernel", "LIST", parse_kernel,
                 "nonparametric kernels: gaussian, boxcar, constant,\n"
                 "epanechikov (default gaussian)"),
    OPT_CALLBACK(0, "sigma", "LIST", parse_sigma,
                 "nonparametric widths, e.g. 0.1,0.2,0.5,1 (default 1);\n"
                 "one result per kernel and width"),
    OPT_CHOICE(0, "edition", edition, "zh|en", edition_names,
               "the data of d2l zh 10.2 (50 points, 2 sin x + x^0.8,\n"
               "noise 0.5) or d2l.ai 11.2 (40, 2 sin x + x, 1)\n"
               "(default zh)"),
    OPT_INT(0, "n-train", n_train, "N", 1, MAX_N_TRAIN, "training points (default 50; en 40)"),
    OPT_REAL(0, "noise", noise, "S", 0.0, 1e6, "the noise's standard deviation (default 0.5; en 1)"),
    OPT_SEED(seed, "the data and w's start (default 0)"),
    OPT_FILE(0, "input", input, "your points: {\"x_train\", \"y_train\", \"x_test\"\n"
                                "and optionally \"y_truth\"} (- for stdin)"),
    OPT_REAL(0, "w-init", w_init, "W", -1e6, 1e6,
             "parametric: w's start (default uniform on [0, 1)\n"
             "from the seed, as torch.rand((1,)))"),
    OPT_INT(0, "epochs", epochs, "N", 0, MAX_EPOCHS, "parametric: SGD steps (default 5)"),
    OPT_REAL(0, "lr", lr, "LR", 0.0, 1e6, "parametric: the learning rate (default 0.5)"),
    OPT_PNG(png, "the fits as d2l draws them: Truth, Pred and the\n"
                 "training points, one panel per result"),
    OPT_FILE(0, "weights-png", weights_png,
             "the weights as heatmaps, 'Sorted training inputs'\n"
             "by 'Sorted testing inputs', one per result"),
    OPT_FILE(0, "plot", plot, "parametric: the loss against the epoch"),
    OPT_HTML(html, "a page: the fits, and pointing at a test input (on\n"
                   "the fits or a heatmap's row) shows its weights over\n"
                   "the training points; the heatmaps, the loss"),
    OPT_FONT(font),
    OPT_JSON(json, "the data and every result; - for stdout"),
    OPT_MAX_MEM(max_mem),
    OPT_HELP(),
    OPT_END(),
};

const struct opt_rule pool_rules[] = {
    OPT_CONFLICTS("input", "edition n-train noise",
                  "--input gives the data, so --%s (for the section's data) does not apply"),
    OPT_RULES_END(),
};

void usage_pool(FILE *f)
{
    fputs("usage: attn pool [--method LIST] [--kernel LIST] [--sigma LIST] [OPTIONS]\n"
          "\n"
          "d2l's attention pooling (zh 10.2, d2l.ai 11.2): Nadaraya–Watson kernel\n"
          "regression, where the test inputs are the queries, the training inputs\n"
          "the keys and their outputs the values. Each query's weights over the\n"
          "keys come from a kernel, and its prediction is the weighted sum of the\n"
          "values:\n"
          "  average        every weight 1/n: the mean of y_train everywhere\n"
          "  nonparametric  u = (x - x_i)/σ; gaussian softmax(-u²/2), boxcar 1\n"
          "                 where |u| < 1, constant 1, epanechikov max(0, 1 - |u|),\n"
          "                 normalised to sum 1\n"
          "  parametric     d2l's NWKernelRegression: softmax(-((x - x_i)·w)²/2)\n"
          "                 with w learned: each training point's keys and values\n"
          "                 are the other n - 1, loss Σ (ŷ_i - y_i)², one SGD step\n"
          "                 an epoch, the book's 'epoch N, loss X' lines\n"
          "\n"
          "The data is the section's (50 inputs uniform on [0, 5), sorted, y = 2 sin x\n"
          "+ x^0.8 + N(0, 0.5²), test inputs 0, 0.1, …, 4.9), drawn with attn's\n"
          "seeded generator, not PyTorch's: the same method, other draws. Printed:\n"
          "each result's MSE against the truth, the learned w, and how peaked the\n"
          "weights are (the mean over the test inputs of the largest weight).\n"
          "\n",
          f);
    opt_usage(f, pool_options);
    fputs("\n"
          "Examples:\n"
          "  attn pool\n"
          "  attn pool --png fits.png --weights-png weights.png --plot loss.png\n"
          "  attn pool --edition en --method nonparametric --sigma 0.1,0.2,0.5,1\n"
          "  attn pool --method nonparametric --kernel gaussian,boxcar,constant,epanechikov\n"
          "  attn pool --method parametric --epochs 10 --json pool.json\n"
          "  attn pool --html pool.html\n"
          "  attn pool --input points.json --json -\n",
          f);
}

/* ---- options and data ------------------------------------------------ */

static int asked(const struct pool_args *a, int method)
{
    for (size_t i = 0; i < a->nmethods; i++)
        if (a->methods[i] == method)
            return 1;
    return 0;
}

/* What the rules of the table cannot say: options for one method when it
 * is not asked. EXIT_OK or EXIT_USAGE. */
static int check_methods(const struct pool_args *a, const opt_given *g)
{
    static const char *const param_only[] = {"w-init", "epochs", "lr", "plot"};
    static const char *const nonparam_only[] = {"kernel", "sigma"};
    for (size_t i = 0; i < 4; i++)
        if (opt_is_given(g, param_only[i]) && !asked(a, POOL_PARAMETRIC)) {
            cli_error("--%s is for --method parametric, which is not asked", param_only[i]);
            return EXIT_USAGE;
        }
    for (size_t i = 0; i < 2; i++)
        if (opt_is_given(g, nonparam_only[i]) && a->nmethods == 1 &&
            a->methods[0] == POOL_PARAMETRIC) {
            cli_error("--%s shapes the nonparametric results; --method parametric alone "
                      "uses the Gaussian softmax with a learned w", nonparam_only[i]);
            return EXIT_USAGE;
        }
    if (a->n_train < 2 && asked(a, POOL_PARAMETRIC)) {
        cli_error("--n-train %ld: parametric pooling needs at least 2 training points "
                  "(each one's keys are the other n - 1)", a->n_train);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

static int parse_args(int argc, char **argv, struct pool_args *a)
{
    opt_given g;
    memset(a, 0, sizeof *a);
    a->methods[0] = POOL_AVERAGE;
    a->methods[1] = POOL_NONPARAMETRIC;
    a->methods[2] = POOL_PARAMETRIC;
    a->nmethods = 3;
    a->kernels[0] = POOL_GAUSSIAN;
    a->nkernels = 1;
    a->sigmas[0] = 1.0;
    a->nsigmas = 1;
    a->epochs = 5;
    a->lr = 0.5;
    a->max_mem = CLI_DEFAULT_MAX_MEM;
    a->argc = argc;
    a->argv = argv;
    a->n_train = -1;
    a->noise = -1.0;
    int status = opt_parse(pool_options, pool_rules, argc, argv, a, &g);
    if (status != EXIT_OK)
        return status;
    a->w_given = opt_is_given(&g, "w-init");
    if (a->n_train < 0)
        a->n_train = a->edition == POOL_EN ? 40 : 50;
    if (a->noise < 0.0)
        a->noise = a->edition == POOL_EN ? 1.0 : 0.5;
    return check_methods(a, &g);
}

static size_t result_count(const struct pool_args *a)
{
    size_t nr = 0;
    for (size_t i = 0; i < a->nmethods; i++)
        nr += a->methods[i] == POOL_NONPARAMETRIC ? a->nkernels * a->nsigmas : 1;
    return nr;
}

/* The bytes of a run of n training and m test inputs: the data, each
 * result's weights and predictions, parametric training's (n, n). */
static int check_memory(const struct pool_args *a, size_t n, size_t m)
{
    size_t nr = result_count(a), per, total, train = 0;
    int over = size_mul(m, n, &per) || size_add(per, m, &per) || size_mul(per, nr, &total) ||
               size_add(total, 2 * n + 2 * m, &total);
    if (asked(a, POOL_PARAMETRIC))
        over = over || size_mul(n, n, &train) || size_add(total, train, &total);
    /* in doubles; the figures and the page take float copies of one */
    over = over || size_mul(total, sizeof(double) + sizeof(float), &total);
    char what[128];
    snprintf(what, sizeof what, "%zu training and %zu test inputs with %zu result%s", n, m, nr,
             nr == 1 ? "" : "s");
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
        if (run->d.n < 2 && asked(a, POOL_PARAMETRIC)) {
            cli_error("%s: $.x_train: parametric pooling needs at least 2 training points "
                      "(each one's keys are the other n - 1), got 1", a->input);
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
        snprintf(buf, len, "%s", pool_method_names[r->method]);
}

static void results_free(pool_run *run)
{
    for (size_t i = 0; run->r && i < run->nr; i++)
        FREE_EACH(run->r[i].yhat, run->r[i].att, run->r[i].losses);
    free(run->r);
    run->r = NULL;
}

/* Parametric: trained on the training points, then the test inputs with
 * all of them as keys. -1 when out of memory. */
static int run_parametric(pool_result *res, const pool_data *d, const struct pool_args *a)
{
    size_t n = d->n, nn;
    if (size_mul(n, n, &nn))
        return -1;
    double *yh = calloc(n, sizeof *yh), *dy = calloc(n, sizeof *dy);
    double *att = calloc(nn, sizeof *att);         /* (n, n) */
    res->losses = calloc(a->epochs ? (size_t)a->epochs : 1, sizeof *res->losses);
    int ok = yh && dy && att && res->losses;
    if (ok) {
        res->epochs = (size_t)a->epochs;
        res->w = res->w_init;
        pool_param_train(&res->w, res->losses, res->epochs, a->lr, d->x_train, d->y_train, n,
                         yh, dy, att);
        pool_param_forward(res->yhat, res->att, d->x_test, d->x_train, d->y_train, res->w,
                           d->m, n, 0);
    }
    FREE_EACH(yh, dy, att);
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
    default:
        if (run_parametric(res, d, a) < 0)
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
    run->nr = result_count(a);
    if (size_mul(run->d.m, run->d.n, &mn) || !(run->r = calloc(run->nr, sizeof *run->r)))
        return -1;
    for (size_t i = 0; i < a->nmethods; i++) {
        int meth = a->methods[i];
        size_t cnt = meth == POOL_NONPARAMETRIC ? a->nkernels * a->nsigmas : 1;
        for (size_t c = 0; c < cnt; c++, k++) {
            pool_result *res = &run->r[k];
            res->method = meth;
            res->kernel = meth == POOL_NONPARAMETRIC ? a->kernels[c / a->nsigmas]
                                                     : POOL_GAUSSIAN;
            res->sigma = meth == POOL_NONPARAMETRIC ? a->sigmas[c % a->nsigmas] : NAN;
            res->w_init = w0;
            res->yhat = calloc(run->d.m, sizeof *res->yhat);
            res->att = calloc(mn ? mn : 1, sizeof *res->att);
            if (!res->yhat || !res->att || run_one(res, &run->d, a) < 0)
                return -1;
        }
    }
    return 0;
}

/* ---- what it prints --------------------------------------------------- */

static void print_setup(FILE *f, const pool_run *run)
{
    const struct pool_args *a = run->a;
    const pool_data *d = &run->d;
    if (run->generated) {
        fprintf(f, "data (d2l %s): %zu training inputs x uniform on [0, 5), sorted;\n"
                   "  y = %s + noise of standard deviation %g;\n"
                   "  %zu test inputs 0, 0.1, ..., 4.9 with the truth f(x)\n"
                   "  (seed %ld, attn's generator: the section's method, not its draws)\n",
                a->edition == POOL_EN ? "d2l.ai 11.2" : "zh 10.2", d->n,
                a->edition == POOL_EN ? "f(x) = 2 sin(x) + x" : "f(x) = 2 sin(x) + x^0.8",
                a->noise, d->m, a->seed);
    } else {
        fprintf(f, "data (%s): %zu training points, %zu test inputs, %s\n", a->input, d->n,
                d->m, d->y_truth ? "with the truth" : "no truth (no MSE)");
    }
    fprintf(f, "attention pooling: the test inputs are the queries, the training inputs "
               "the keys, their y the values\n");
}

static void print_result(FILE *f, const pool_result *r, const pool_data *d,
                         const struct pool_args *a)
{
    char name[96];
    pool_result_name(r, name, sizeof name);
    fprintf(f, "\n%s\n", name);
    if (r->method == POOL_AVERAGE)
        fprintf(f, "  y_hat = mean(y_train) = %.6f at every test input\n", r->yhat[0]);
    if (r->method == POOL_PARAMETRIC) {
        fprintf(f, "  w starts at %.6f (%s); SGD, lr %g, %zu epochs; each training point's "
                   "keys and values are the other %zu\n",
                r->w_init, a->w_given ? "--w-init" : "uniform on [0, 1) from the seed", a->lr,
                r->epochs, d->n - 1);
        for (size_t e = 0; e < r->epochs; e++)
            fprintf(f, "epoch %zu, loss %.6f\n", e + 1, r->losses[e]);
        fprintf(f, "  learned w %.6f\n", r->w);
    }
    if (r->unreached)
        fprintf(f, "  %zu of %zu test inputs no training point reaches (all weights 0): "
                   "no prediction there (null in JSON)\n",
                r->unreached, d->m);
    if (isnan(r->mse))
        fprintf(f, "  MSE: no truth to measure against\n");
    else
        fprintf(f, "  MSE against the truth %.6f\n", r->mse);
    fprintf(f, "  mean largest weight %.6f\n", r->peak);
}

static void print_run(FILE *f, const pool_run *run)
{
    print_setup(f, run);
    for (size_t i = 0; i < run->nr; i++)
        print_result(f, &run->r[i], &run->d, run->a);
    fprintf(f, "\nthe mean largest weight: each test input's largest weight over the %zu "
               "training points, averaged (1/%zu = %.6f when every weight is equal, 1 when "
               "each looks at one point)\n",
            run->d.n, run->d.n, 1.0 / (double)run->d.n);
}

/* ---- the command ------------------------------------------------------ */

static int check_outputs(const struct pool_args *a)
{
    const char *paths[] = {a->png, a->weights_png, a->plot, a->json};
    const char *names[] = {"--png", "--weights-png", "--plot", "--json"};
    int status = output_check_files(paths, names, 4);
    return status != EXIT_OK ? status : output_page_check(a->html);
}

int cmd_pool(int argc, char **argv)
{
    struct pool_args a;
    pool_run run;
    rng r;
    int status = parse_args(argc, argv, &a);
    if (status == OPT_HELP_ASKED) {
        usage_pool(stdout);
        return EXIT_OK;
    }
    if (status != EXIT_OK || (status = check_outputs(&a)) != EXIT_OK)
        return status;
    memset(&run, 0, sizeof run);
    run.a = &a;
    if ((status = load_data(&run, &r)) != EXIT_OK)
        goto done;
    if (run_all(&run, &r) < 0) {
        cli_error("out of memory");
        status = EXIT_RUNTIME;
        goto done;
    }
    FILE *rep = output_report_stream(a.json);
    if (rep == stdout) /* else stdout is the JSON's */
        print_run(stdout, &run);
    if (a.json && (status = pool_out_json(&run, rep)) != EXIT_OK)
        goto done;
    status = pool_out_figures(&run, rep);
    if (status == EXIT_OK && a.html)
        status = pool_out_page(&run, rep);
done:
    results_free(&run);
    pool_data_free(&run.d);
    return status;
}
