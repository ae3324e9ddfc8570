/* pool.c — `attn pool`: d2l zh 10.2 (d2l.ai 11.2), Nadaraya–Watson kernel
 * regression as attention pooling (SPEC.md §13). The section's data (or
 * the learner's points), then average pooling, nonparametric pooling with
 * each kernel and width, and d2l's NWKernelRegression trained as the book
 * trains it; each result's error against the truth, the learned w and how
 * peaked the weights are. Legend: n training points, m test inputs. */
#include <errno.h>
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

#define MAX_N_TRAIN 2000000000L /* larger meets --max-mem first */
#define MAX_EPOCHS 1000000L
#define MAX_SCORE_HIDDENS 4096L

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
                      words == pool_method_names
                          ? "average, nonparametric, parametric, additive"
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

/* "0.1,0.2,0.5,1": widths greater than 0; or "auto". */
static int parse_sigma(void *args, const char *s)
{
    struct pool_args *a = args;
    char word[64];
    a->nsigmas = 0;
    a->sigma_auto = strcmp(s, "auto") == 0;
    if (a->sigma_auto) { /* one result per kernel, its width chosen later */
        a->sigmas[a->nsigmas++] = NAN;
        return 0;
    }
    if (strncmp(s, "auto,", 5) == 0 || strstr(s, ",auto")) {
        cli_error("--sigma: auto chooses one width by leave-one-out; give it alone, "
                  "not in a list ('%s')", s);
        return -1;
    }
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

/* "50" or "10,20,50,100,200": training-set sizes from 1 to MAX_N_TRAIN,
 * at most POOL_MAX_LIST, none empty, none twice. */
static int parse_n_train(void *args, const char *s)
{
    struct pool_args *a = args;
    a->nsizes = 0;
    for (const char *p = s;;) {
        size_t len = strcspn(p, ",");
        char *end = NULL;
        long v = -1;
        if (len > 0 && p[0] >= '0' && p[0] <= '9') {
            errno = 0;
            v = strtol(p, &end, 10);
            if (errno || end != p + len || v < 1 || v > MAX_N_TRAIN)
                v = -1;
        }
        for (size_t i = 0; v > 0 && i < a->nsizes; i++)
            if (a->n_trains[i] == v) {
                cli_error("--n-train: %ld given twice in '%s'", v, s);
                return -1;
            }
        if (v < 1 || a->nsizes == POOL_MAX_LIST) {
            cli_error("--n-train: expected a size from 1 to %ld, or a list of them "
                      "(comma-separated, at most %d), got '%s'", MAX_N_TRAIN, POOL_MAX_LIST, s);
            return -1;
        }
        a->n_trains[a->nsizes++] = v;
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
}

#define OPT_ARGS struct pool_args
const struct opt pool_options[] = {
    OPT_CALLBACK(0, "method", "LIST", parse_method,
                 "average, nonparametric, parametric, additive, one\n"
                 "or more (default the first three, in that order)"),
    OPT_CALLBACK(0, "kernel", "LIST", parse_kernel,
                 "nonparametric kernels: gaussian, boxcar, constant,\n"
                 "epanechikov (default gaussian)"),
    OPT_CALLBACK(0, "sigma", "LIST|auto", parse_sigma,
                 "nonparametric widths, e.g. 0.1,0.2,0.5,1 (default 1);\n"
                 "one result per kernel and width. auto: for each\n"
                 "kernel the width of the grid 0.01 to 10 (ten a\n"
                 "decade, 10^(i/10 - 2), i = 0 ... 30) whose\n"
                 "leave-one-out error on the training points is least"),
    OPT_FILE(0, "sigma-png", sigma_png, "--sigma auto: the leave-one-out error against σ"),
    OPT_CHOICE(0, "edition", edition, "zh|en", edition_names,
               "the data of d2l zh 10.2 (50 points, 2 sin x + x^0.8,\n"
               "noise 0.5) or d2l.ai 11.2 (40, 2 sin x + x, 1)\n"
               "(default zh)"),
    OPT_CALLBACK(0, "n-train", "N|LIST", parse_n_train,
                 "training points (default 50; en 40); a list such as\n"
                 "10,20,50,100,200 runs each size (the same seed,\n"
                 "the same test inputs) and prints each result's MSE\n"
                 "by size"),
    OPT_REAL(0, "noise", noise, "S", 0.0, 1e6, "the noise's standard deviation (default 0.5; en 1)"),
    OPT_SEED(seed, "the data, w's start and additive's (default 0)"),
    OPT_FILE(0, "input", input, "your points: {\"x_train\", \"y_train\", \"x_test\"\n"
                                "and optionally \"y_truth\"} (- for stdin)"),
    OPT_FLAG(0, "keep-self", keep_self,
             "parametric and additive: train each again with\n"
             "every training point also its own key (all n,\n"
             "itself too) and print both side by side"),
    OPT_REAL(0, "w-init", w_init, "W", -1e6, 1e6,
             "parametric: w's start (default uniform on [0, 1)\n"
             "from the seed, as torch.rand((1,)))"),
    OPT_INT(0, "score-hiddens", score_hiddens, "H", 1, MAX_SCORE_HIDDENS,
            "additive: the hidden units of its score (default 8)"),
    OPT_INT(0, "epochs", epochs, "N", 0, MAX_EPOCHS,
            "parametric and additive: SGD steps (default 5)"),
    OPT_REAL(0, "lr", lr, "LR", 0.0, 1e6,
             "parametric and additive: the learning rate (default\n0.5)"),
    OPT_PNG(png, "the fits as d2l draws them: Truth, Pred and the\n"
                 "training points, one panel per result"),
    OPT_FILE(0, "weights-png", weights_png,
             "the weights as heatmaps, 'Sorted training inputs'\n"
             "by 'Sorted testing inputs', one per result"),
    OPT_FILE(0, "plot", plot, "parametric and additive: the loss against the epoch"),
    OPT_FILE(0, "kernels-png", kernels_png,
             "the four kernels on [-2.5, 2.5], four panels in a row\n"
             "on one y range, as d2l.ai 11.2's figure"),
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
    fputs(_("usage: attn pool [--method LIST] [--kernel LIST] [--sigma LIST] [OPTIONS]\n"
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
          "  additive       10.3's additive score as the attention: softmax over the\n"
          "                 keys of w_vᵀ tanh(W_q x + W_k x_i) (h hidden units,\n"
          "                 --score-hiddens), all of W_q, W_k, w_v learned as\n"
          "                 parametric's w is (the same exclusion, loss, SGD, epochs\n"
          "                 and lr); they start as nn.Linear's do (uniform on\n"
          "                 ±1/√in_features), drawn from the seed after w's start\n"
          "\n"
          "The data is the section's (50 inputs uniform on [0, 5), sorted, y = 2 sin x\n"
          "+ x^0.8 + N(0, 0.5²), test inputs 0, 0.1, …, 4.9), drawn with attn's\n"
          "seeded generator, not PyTorch's: the same method, other draws. Printed:\n"
          "each result's MSE against the truth, the learned w (and the Gaussian width\n"
          "it amounts to, σ = 1/|w|), and how peaked the weights are (the mean over\n"
          "the test inputs of the largest weight).\n"
          "\n"),
          f);
    opt_usage(f, pool_options);
    fputs(_("\n"
          "Examples:\n"
          "  attn pool\n"
          "  attn pool --png fits.png --weights-png weights.png --plot loss.png\n"
          "  attn pool --edition en --method nonparametric --sigma 0.1,0.2,0.5,1\n"
          "  attn pool --method nonparametric --kernel gaussian,boxcar,constant,epanechikov\n"
          "  attn pool --method parametric --epochs 10 --json pool.json\n"
          "  attn pool --n-train 10,20,50,100,200\n"
          "  attn pool --sigma auto --kernel gaussian,epanechikov --sigma-png loo.png\n"
          "  attn pool --method parametric,additive --lr 0.01 --epochs 300\n"
          "  attn pool --method parametric --keep-self --epochs 500\n"
          "  attn pool --method average --kernels-png kernels.png\n"
          "  attn pool --html pool.html\n"
          "  attn pool --input points.json --json -\n"),
          f);
}

/* ---- options and data ------------------------------------------------ */

/* --n-train LIST: one run's figures and page do not apply. EXIT_OK or
 * EXIT_USAGE. */
static int check_sizes(const struct pool_args *a, const opt_given *g)
{
    static const char *const one_run[] = {"png", "weights-png", "plot", "html"};
    for (size_t i = 0; a->nsizes > 1 && i < 4; i++)
        if (opt_is_given(g, one_run[i])) {
            cli_error("--%s draws one run; --n-train with %zu sizes prints a table of "
                      "MSEs (give one size for --%s)", one_run[i], a->nsizes, one_run[i]);
            return EXIT_USAGE;
        }
    return EXIT_OK;
}

/* --sigma auto and --sigma-png. EXIT_OK or EXIT_USAGE. */
static int check_auto(const struct pool_args *a, const opt_given *g)
{
    if (opt_is_given(g, "sigma-png") && !a->sigma_auto) {
        cli_error("--sigma-png draws the leave-one-out error of --sigma auto, which is not "
                  "given");
        return EXIT_USAGE;
    }
    if (!a->sigma_auto)
        return EXIT_OK;
    if (!pool_asked(a, POOL_NONPARAMETRIC)) {
        cli_error("--sigma auto chooses the nonparametric width, and --method nonparametric "
                  "is not asked");
        return EXIT_USAGE;
    }
    if (a->nsizes > 1) {
        cli_error("--sigma auto chooses a width for one training set; --n-train with %zu "
                  "sizes would choose one per size (give one size)", a->nsizes);
        return EXIT_USAGE;
    }
    if (a->nsizes == 1 && a->n_trains[0] < 2) {
        cli_error("--n-train %ld: --sigma auto's leave-one-out needs at least 2 training "
                  "points", a->n_trains[0]);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* What the rules of the table cannot say: options for one method when it
 * is not asked. EXIT_OK or EXIT_USAGE. */
static int check_methods(const struct pool_args *a, const opt_given *g)
{
    static const char *const trained_only[] = {"epochs", "lr", "plot", "keep-self"};
    static const char *const nonparam_only[] = {"kernel", "sigma"};
    int trained = pool_asked(a, POOL_PARAMETRIC) || pool_asked(a, POOL_ADDITIVE);
    if (opt_is_given(g, "w-init") && !pool_asked(a, POOL_PARAMETRIC)) {
        cli_error("--w-init is for --method parametric, which is not asked");
        return EXIT_USAGE;
    }
    for (size_t i = 0; i < 4; i++)
        if (opt_is_given(g, trained_only[i]) && !trained) {
            cli_error("--%s is for --method parametric or additive, neither of which is asked",
                      trained_only[i]);
            return EXIT_USAGE;
        }
    if (opt_is_given(g, "score-hiddens") && !pool_asked(a, POOL_ADDITIVE)) {
        cli_error("--score-hiddens is for --method additive, which is not asked");
        return EXIT_USAGE;
    }
    for (size_t i = 0; i < 2; i++)
        if (opt_is_given(g, nonparam_only[i]) && a->nmethods == 1 &&
            a->methods[0] >= POOL_PARAMETRIC) {
            if (a->methods[0] == POOL_PARAMETRIC)
                cli_error("--%s shapes the nonparametric results; --method parametric alone "
                          "uses the Gaussian softmax with a learned w", nonparam_only[i]);
            else
                cli_error("--%s shapes the nonparametric results; --method additive alone "
                          "learns its scores", nonparam_only[i]);
            return EXIT_USAGE;
        }
    for (size_t i = 0; i < a->nsizes; i++)
        if (a->n_trains[i] < 2 && trained) {
            cli_error("--n-train %ld: %s pooling needs at least 2 training points "
                      "(each one's keys are the other n - 1)", a->n_trains[i],
                      pool_asked(a, POOL_PARAMETRIC) ? "parametric" : "additive");
            return EXIT_USAGE;
        }
    return check_sizes(a, g) != EXIT_OK ? EXIT_USAGE : check_auto(a, g);
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
    a->score_hiddens = 8;
    a->lr = 0.5;
    a->max_mem = CLI_DEFAULT_MAX_MEM;
    a->argc = argc;
    a->argv = argv;
    a->noise = -1.0;
    int status = opt_parse(pool_options, pool_rules, argc, argv, a, &g);
    if (status != EXIT_OK)
        return status;
    a->w_given = opt_is_given(&g, "w-init");
    if (a->nsizes == 0) {
        a->n_trains[0] = a->edition == POOL_EN ? 40 : 50;
        a->nsizes = 1;
    }
    a->n_train = a->n_trains[0];
    if (a->noise < 0.0)
        a->noise = a->edition == POOL_EN ? 1.0 : 0.5;
    return check_methods(a, &g);
}

/* ---- what it prints --------------------------------------------------- */

static void print_setup(FILE *f, const pool_run *run)
{
    const struct pool_args *a = run->a;
    const pool_data *d = &run->d;
    if (run->generated) {
        fprintf(f, _("data (d2l %s): %zu training inputs x uniform on [0, 5), sorted;\n"
                   "  y = %s + noise of standard deviation %g;\n"
                   "  %zu test inputs 0, 0.1, ..., 4.9 with the truth f(x)\n"
                   "  (seed %ld, attn's generator: the section's method, not its draws)\n"),
                a->edition == POOL_EN ? "d2l.ai 11.2" : "zh 10.2", d->n,
                a->edition == POOL_EN ? "f(x) = 2 sin(x) + x" : "f(x) = 2 sin(x) + x^0.8",
                a->noise, d->m, a->seed);
    } else {
        fprintf(f, _("data (%s): %zu training points, %zu test inputs, %s\n"), a->input, d->n,
                d->m, d->y_truth ? "with the truth" : "no truth (no MSE)");
    }
    fputs(_("attention pooling: the test inputs are the queries, the training inputs "
               "the keys, their y the values\n"), f);
}

/* --sigma auto: the leave-one-out error at each width, a column per
 * kernel, the chosen width marked. */
static void print_auto(FILE *f, const pool_run *run)
{
    fprintf(f, _("\n--sigma auto: each training point predicted from the other %zu, the mean "
               "squared error (leave-one-out) at each width of the grid 10^(i/10 - 2), "
               "i = 0, ..., 30 (0.01 to 10, ten a decade):\n%10s"), run->d.n - 1, "σ");
    for (size_t k = 0; k < run->nautos; k++)
        fprintf(f, "  %14s", pool_kernel_names[run->autos[k].kernel]);
    fputc('\n', f);
    for (size_t i = 0; i < POOL_SIGMA_GRID_N; i++) {
        char line[16 * (POOL_NKERNELS + 1)];
        size_t len = (size_t)snprintf(line, sizeof line, "%9.6f", pool_sigma_grid(i));
        for (size_t k = 0; k < run->nautos && len < sizeof line; k++) {
            const pool_sigma_auto *au = &run->autos[k];
            if (au->unreached[i])
                len += (size_t)snprintf(line + len, sizeof line - len, _("  %4zu unreached"),
                                        au->unreached[i]);
            else
                len += (size_t)snprintf(line + len, sizeof line - len, "  %13.6f%c",
                                        au->loo[i], i == au->best ? '*' : ' ');
        }
        while (len > 0 && line[len - 1] == ' ') /* the chosen width's mark, or none */
            line[--len] = '\0';
        fprintf(f, "%s\n", line);
    }
    for (size_t k = 0; k < run->nautos; k++) {
        const pool_sigma_auto *au = &run->autos[k];
        int flat = 1, edge = au->best == 0 || au->best == POOL_SIGMA_GRID_N - 1;
        for (size_t i = 1; i < POOL_SIGMA_GRID_N; i++)
            flat = flat && au->loo[i] == au->loo[0] && !au->unreached[i];
        fprintf(f, _("%s: σ = %g, the least leave-one-out error (%.6f)%s\n"),
                pool_kernel_names[au->kernel], pool_sigma_grid(au->best), au->loo[au->best],
                flat ? _(": every width gives it (the kernel does not depend on σ)")
                : edge ? _(", at the grid's end: a width beyond it may do better") : "");
    }
    fputs(_("(unreached: training points no other point reaches at that width; such a "
               "width is not chosen)\n"), f);
}

/* A trained result's keys for each training point: "the other 49", or
 * with --keep-self "all 50, itself too". */
static const char *keys_said(const pool_result *r, const pool_data *d, char *buf, size_t len)
{
    if (r->keep_self)
        snprintf(buf, len, _("all %zu, itself too (--keep-self)"), d->n);
    else
        snprintf(buf, len, _("the other %zu"), d->n - 1);
    return buf;
}

/* One of additive's parameters, (h,) on one line. */
static void print_vector(FILE *f, const char *what, const double *v, size_t h)
{
    fprintf(f, "  %s", what);
    for (size_t u = 0; u < h; u++)
        fprintf(f, " %.6f", v[u]);
    fputc('\n', f);
}

static void print_additive(FILE *f, const pool_result *r, const pool_data *d,
                           const struct pool_args *a)
{
    const pool_additive *p = &r->add;
    char keys[64];
    fprintf(f, _("  a(q, k) = w_v · tanh(W_q q + W_k k), %zu hidden units; W_k.weight (%zu, 1), "
               "W_q.weight (%zu, 1) and w_v.weight (1, %zu) start as nn.Linear's (from the "
               "seed); SGD, lr %g, %zu epochs; each training point's keys and values are %s\n"),
            p->h, p->h, p->h, p->h, a->lr, r->epochs, keys_said(r, d, keys, sizeof keys));
    for (size_t e = 0; e < r->epochs; e++)
        fprintf(f, "epoch %zu, loss %.6f\n", e + 1, r->losses[e]);
    fputs(_("  learned (state_dict, each as a row):\n"), f);
    print_vector(f, "W_k.weight", p->W_k, p->h);
    print_vector(f, "W_q.weight", p->W_q, p->h);
    print_vector(f, "w_v.weight", p->w_v, p->h);
}

static void print_result(FILE *f, const pool_result *r, const pool_data *d,
                         const struct pool_args *a)
{
    char name[96], keys[64];
    pool_result_name(r, name, sizeof name);
    fprintf(f, "\n%s\n", name);
    if (r->method == POOL_AVERAGE)
        fprintf(f, _("  y_hat = mean(y_train) = %.6f at every test input\n"), r->yhat[0]);
    if (r->method == POOL_ADDITIVE)
        print_additive(f, r, d, a);
    if (r->method == POOL_PARAMETRIC) {
        fprintf(f, _("  w starts at %.6f (%s); SGD, lr %g, %zu epochs; each training point's "
                   "keys and values are %s\n"),
                r->w_init, a->w_given ? "--w-init" : _("uniform on [0, 1) from the seed"), a->lr,
                r->epochs, keys_said(r, d, keys, sizeof keys));
        for (size_t e = 0; e < r->epochs; e++)
            fprintf(f, "epoch %zu, loss %.6f\n", e + 1, r->losses[e]);
        if (r->w != 0.0)
            fprintf(f, _("  learned w %.6f: the Gaussian of width σ = 1/|w| = %.6f\n"), r->w,
                    1.0 / fabs(r->w));
        else
            fputs(_("  learned w 0: σ = 1/|w| is infinite, every weight equal\n"), f);
    }
    if (!d->y_truth) {
        if (r->unreached)
            fprintf(f, _("  %zu of %zu test inputs no training point reaches (all weights 0): "
                       "no prediction there (null in JSON)\n"),
                    r->unreached, d->m);
        fputs(_("  MSE: no truth to measure against\n"), f);
    } else if (r->unreached == d->m) {
        fputs(_("  MSE against the truth: none, no test input has a training point within "
                   "σ (every weight 0: no prediction, null in JSON)\n"), f);
    } else if (r->unreached) {
        /* the error is over the reached inputs only: say how many were not */
        fprintf(f, i18n_plural("  MSE against the truth %.6f over %zu of %zu test inputs; %zu has no "
                               "training point within σ (every weight 0: no prediction, null in "
                               "JSON)\n",
                               "  MSE against the truth %.6f over %zu of %zu test inputs; %zu have no "
                               "training point within σ (every weight 0: no prediction, null in "
                               "JSON)\n", r->unreached),
                r->mse, d->m - r->unreached, d->m, r->unreached);
    } else {
        fprintf(f, _("  MSE against the truth %.6f\n"), r->mse);
    }
    if (r->unreached == d->m)
        fputs(_("  mean largest weight: none\n"), f);
    else
        fprintf(f, _("  mean largest weight %.6f%s\n"), r->peak,
                r->unreached ? _(" (over the same test inputs)") : "");
}

/* One row of the side by side: what, then each of the pair's values. */
static void print_pair_row(FILE *f, const char *what, double a, double b)
{
    fputs("  ", f);
    term_put_field(f, what, 22, 0); /* by display width: σ one column, 中文 two */
    fprintf(f, " %14.6f %14.6f\n", a, b);
}

/* --keep-self: a trained result (r) beside the same trained keeping self
 * (k): the loss at each epoch, w and its width, the test error. */
static void print_keep_self(FILE *f, const pool_result *r, const pool_result *k)
{
    char what[64];
    fprintf(f, _("\n%s: the default against --keep-self (each training point also its own "
               "key)\n"), pool_method_names[r->method]);
    fprintf(f, "  %22s ", "");
    term_put_field(f, _("default"), 14, 1);
    fprintf(f, " %14s\n", "keep-self");
    /* the loss at epochs 1, 2, 5, 10, 20, 50, … and the last */
    for (size_t e = 1, step = 0; e <= r->epochs; step++) {
        snprintf(what, sizeof what, _("epoch %zu, loss"), e);
        print_pair_row(f, what, r->losses[e - 1], k->losses[e - 1]);
        size_t next = step % 3 == 1 ? e / 2 * 5 : e * 2;
        e = e < r->epochs && next > r->epochs ? r->epochs : next;
    }
    if (r->method == POOL_PARAMETRIC) {
        print_pair_row(f, _("learned w"), r->w, k->w);
        print_pair_row(f, "σ = 1/|w|", r->w != 0.0 ? 1.0 / fabs(r->w) : INFINITY,
                       k->w != 0.0 ? 1.0 / fabs(k->w) : INFINITY);
    }
    print_pair_row(f, _("MSE against the truth"), r->mse, k->mse);
    print_pair_row(f, _("mean largest weight"), r->peak, k->peak);
}

static void print_run(FILE *f, const pool_run *run)
{
    print_setup(f, run);
    if (run->nautos)
        print_auto(f, run);
    for (size_t i = 0; i < run->nr; i++)
        print_result(f, &run->r[i], &run->d, run->a);
    for (size_t i = 1; i < run->nr; i++)
        if (run->r[i].keep_self)
            print_keep_self(f, &run->r[i - 1], &run->r[i]);
    fprintf(f, _("\nthe mean largest weight: each test input's largest weight over the %zu "
               "training points, averaged (1/%zu = %.6f when every weight is equal, 1 when "
               "each looks at one point)\n"),
            run->d.n, run->d.n, 1.0 / (double)run->d.n);
}

/* ---- the command ------------------------------------------------------ */

static int check_outputs(const struct pool_args *a)
{
    const char *paths[] = {a->png, a->weights_png, a->plot, a->sigma_png, a->kernels_png,
                           a->json};
    const char *names[] = {"--png", "--weights-png", "--plot", "--sigma-png", "--kernels-png",
                           "--json"};
    int status = output_check_files(paths, names, 6);
    return status != EXIT_OK ? status : output_page_check(a->html);
}

int cmd_pool(int argc, char **argv)
{
    struct pool_args a;
    pool_run run;
    int status = parse_args(argc, argv, &a);
    if (status == OPT_HELP_ASKED) {
        usage_pool(stdout);
        return EXIT_OK;
    }
    if (status != EXIT_OK || (status = check_outputs(&a)) != EXIT_OK)
        return status;
    if (a.nsizes > 1) {
        status = pool_sweep(&a);
        return status == EXIT_OK && a.kernels_png
                   ? pool_out_kernels(&a, output_report_stream(a.json))
                   : status;
    }
    memset(&run, 0, sizeof run);
    run.a = &a;
    if ((status = pool_run_compute(&run)) != EXIT_OK)
        goto done;
    FILE *rep = output_report_stream(a.json);
    if (rep == stdout) /* else stdout is the JSON's */
        print_run(stdout, &run);
    if (a.json && (status = pool_out_json(&run, rep)) != EXIT_OK)
        goto done;
    status = pool_out_figures(&run, rep);
    if (status == EXIT_OK && a.html)
        status = pool_out_page(&run, rep);
    if (status == EXIT_OK && a.kernels_png)
        status = pool_out_kernels(&a, rep);
done:
    pool_run_free(&run);
    return status;
}
