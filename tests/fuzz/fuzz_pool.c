/* fuzz_pool.c — libFuzzer harness for `attn pool --input FILE` (SPEC.md
 * §13; src/io/pool_input.c, src/nn/attention/pool.c, src/cmd/pool/).
 *
 * The bytes are an --input file:
 *   1. parsed with cJSON and read by pool_input_from_json; what loads is
 *      checked against pool_input.h's promises: no list empty, y_train as
 *      long as x_train, y_truth (when present) as long as x_test, every
 *      number finite;
 *   2. when it loads and is small, the methods run on it directly: average
 *      and every kernel at σ 0.1 and 1, each row of weights in [0, 1] and
 *      summing to 1, or all 0 with no prediction (boxcar, Epanechikov out
 *      of reach) — checked where no square can overflow (every number
 *      within ±1e6: beyond, the Gaussian's scores reach −inf);
 *   3. `attn pool --input FILE` in-process (when it is small, or does not
 *      load: the command's own refusal) with every method and kernel,
 *      two widths, --epochs 2, --json and --html into a temporary folder
 *      (the page's writer on whatever the data is), then with the
 *      exercises' options (--sigma auto, --method additive, --keep-self):
 *      the exit status must be 0, 1 or 2.
 *
 * The corpus: tests/fuzz/corpus/pool/ (tests/fuzz/make_corpus.py: valid
 * inputs, ragged, NaN, empty, mismatched lengths, far and huge numbers).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "commands.h"
#include "fuzz.h"
#include "pool.h"
#include "pool_input.h"

#define FUZZ_POOL_CELLS 4096 /* m × n run directly and by the command */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet();
    cli_set_command("pool");
    return 0;
}

/* pool_input.h's promises for what loaded from root. */
static void fuzz_check_data(const pool_data *d, const cJSON *root)
{
    const cJSON *truth = cJSON_GetObjectItemCaseSensitive(root, "y_truth");
    if (d->n < 1 || d->m < 1 || !d->x_train || !d->y_train || !d->x_test ||
        (truth != NULL) != (d->y_truth != NULL))
        abort();
    if ((size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "x_train")) != d->n ||
        (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "y_train")) != d->n ||
        (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "x_test")) != d->m)
        abort();
    for (size_t i = 0; i < d->n; i++)
        if (!isfinite(d->x_train[i]) || !isfinite(d->y_train[i]))
            abort();
    for (size_t j = 0; j < d->m; j++)
        if (!isfinite(d->x_test[j]) || (d->y_truth && !isfinite(d->y_truth[j])))
            abort();
}

/* Every number of d within ±1e6: no score or sum can overflow. */
static int fuzz_moderate(const pool_data *d)
{
    for (size_t i = 0; i < d->n; i++)
        if (fabs(d->x_train[i]) > 1e6 || fabs(d->y_train[i]) > 1e6)
            return 0;
    for (size_t j = 0; j < d->m; j++)
        if (fabs(d->x_test[j]) > 1e6)
            return 0;
    return 1;
}

/* Each row of att (m, n) in [0, 1] summing to 1 with a finite ŷ, or all 0
 * with ŷ NaN; unreached the count of the latter. */
static void fuzz_check_rows(const double *yhat, const double *att, size_t m, size_t n,
                            size_t unreached)
{
    size_t zero = 0;
    for (size_t j = 0; j < m; j++) {
        double sum = 0.0;
        for (size_t i = 0; i < n; i++) {
            double a = att[j * n + i];
            if (!(a >= 0.0 && a <= 1.0 + 1e-12))
                abort();
            sum += a;
        }
        if (sum == 0.0 && isnan(yhat[j]))
            zero++;
        else if (fabs(sum - 1.0) > 1e-9 || !isfinite(yhat[j]))
            abort();
    }
    if (zero != unreached)
        abort();
}

/* 2. the methods on d, directly */
static void fuzz_methods(const pool_data *d)
{
    static const double sigmas[] = {0.1, 1.0};
    const size_t m = d->m, n = d->n;
    double *yhat = calloc(m, sizeof *yhat), *att = calloc(m * n, sizeof *att);
    if (!yhat || !att)
        abort();
    pool_average(yhat, att, d->y_train, m, n);
    fuzz_check_rows(yhat, att, m, n, 0);
    for (int k = 0; k < POOL_NKERNELS; k++)
        for (size_t s = 0; s < 2; s++) {
            size_t unreached = pool_nonparametric(yhat, att, d->x_test, d->x_train, d->y_train,
                                                  (enum pool_kernel)k, sigmas[s], m, n);
            if (k == POOL_GAUSSIAN && unreached)
                abort(); /* a softmax reaches every key */
            fuzz_check_rows(yhat, att, m, n, unreached);
            /* leave-one-out: a finite error over the points reached, or NaN
             * when none is; the Gaussian reaches every point */
            size_t un = 0;
            double e = n >= 2 ? pool_loo_error(d->x_train, d->y_train, n, (enum pool_kernel)k,
                                               sigmas[s], att, &un)
                              : 0.0;
            if (un > n || (un < n && !(e >= 0.0 && isfinite(e))) || (un == n && !isnan(e)) ||
                (k == POOL_GAUSSIAN && un))
                abort();
        }
    free(yhat);
    free(att);
}

/* 3. attn pool --input path …, every output, in a folder made for it and
 * removed after */
static void fuzz_command(const char *path)
{
    char dir[] = "/tmp/attn-fuzz-pool-XXXXXX", json[64], html[64];
    if (!mkdtemp(dir))
        abort();
    snprintf(json, sizeof json, "%s/p.json", dir);
    snprintf(html, sizeof html, "%s/p.html", dir);
    char *argv[] = {"pool", "--input", (char *)path, "--kernel",
                    "gaussian,boxcar,constant,epanechikov", "--sigma", "0.1,1", "--epochs", "2",
                    "--max-mem", "16M", "--json", json, "--html", html, NULL};
    /* the exercises' options on the same data */
    char *argv2[] = {"pool", "--input", (char *)path, "--method",
                     "nonparametric,parametric,additive", "--kernel", "gaussian,boxcar,epanechikov",
                     "--sigma", "auto", "--score-hiddens", "2", "--epochs", "2", "--keep-self",
                     "--max-mem", "16M", "--json", json, NULL};
    int status, status2;
    cli_set_command("pool");
    status = cmd_pool((int)(sizeof argv / sizeof argv[0]) - 1, argv);
    fflush(stdout);
    clearerr(stdout);
    status2 = cmd_pool((int)(sizeof argv2 / sizeof argv2[0]) - 1, argv2);
    fflush(stdout);
    clearerr(stdout);
    unlink(json);
    unlink(html);
    rmdir(dir);
    if (status < 0 || status > 2 || status2 < 0 || status2 > 2)
        abort(); /* SPEC.md §2: exit status 0, 1 or 2 */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[1024];
    pool_data d;
    int small = 1; /* what does not load is run too: the command's refusal */
    const char *path = fuzz_file(0, data, size);
    cJSON *root = cJSON_ParseWithLength((const char *)data, size);

    if (!path) {
        cJSON_Delete(root);
        return 0;
    }
    memset(&d, 0, sizeof d);
    if (root && pool_input_from_json(&d, root, "fuzz", err, sizeof err) == 0) {
        fuzz_check_data(&d, root);
        small = d.m * d.n <= FUZZ_POOL_CELLS && d.n * d.n <= FUZZ_POOL_CELLS;
        if (small && fuzz_moderate(&d))
            fuzz_methods(&d);
        pool_data_free(&d);
    }
    cJSON_Delete(root);
    if (small)
        fuzz_command(path);
    return 0;
}
