/* pool_sweep.c — `attn pool --n-train LIST` (zh 10.2's first exercise):
 * the section's run for each training-set size, the data of each size
 * drawn from the same seed (each is what `attn pool --n-train N` alone
 * draws), the same test inputs 0, 0.1, …, 4.9; each result's MSE against
 * the truth by size, as a table or --json's document
 *   {"command": "pool", "n_train": [sizes], "x_test", "y_truth",
 *    "results": [{"method", "kernel", "sigma", "mse": [one per size],
 *                 parametric: "w_init", "w", "sigma_w": [one per size]}]}.
 * Legend: S sizes, R results (the same R for every size). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "cli.h"
#include "json_writer.h"
#include "output.h"
#include "pool_cmd.h"

/* What is kept of each size's run. */
typedef struct sweep {
    const struct pool_args *a;
    size_t S, R, m;
    pool_result *first;   /* (R,): the first size's results, for their names */
    double *mse, *w0, *w; /* (R, S) each */
    size_t *unreached;    /* (R, S): test inputs without a prediction */
    double *x_test, *y_truth; /* (m,): the same for every size */
} sweep;

/* A column's head: "average", "gaussian, σ = 1", "parametric". */
static void column_name(const pool_result *r, char *buf, size_t len)
{
    if (r->method == POOL_NONPARAMETRIC)
        snprintf(buf, len, "%s, σ = %g", pool_kernel_names[r->kernel], r->sigma);
    else
        snprintf(buf, len, "%s%s", pool_method_names[r->method],
                 r->keep_self ? ", keep-self" : "");
}

/* Columns a UTF-8 string takes (σ is one). */
static size_t display_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

/* Size s's run into column s of sw. EXIT_OK, or the status after the
 * message. */
static int run_size(sweep *sw, size_t s)
{
    struct pool_args b = *sw->a;
    pool_run run;
    b.n_train = sw->a->n_trains[s];
    memset(&run, 0, sizeof run);
    run.a = &b;
    int status = pool_run_compute(&run);
    for (size_t k = 0; status == EXIT_OK && k < sw->R; k++) {
        const pool_result *r = &run.r[k];
        sw->mse[k * sw->S + s] = r->mse;
        sw->w0[k * sw->S + s] = r->w_init;
        sw->w[k * sw->S + s] = r->w;
        sw->unreached[k * sw->S + s] = r->unreached;
    }
    if (status == EXIT_OK && s == 0) { /* the names and the test inputs, once */
        memcpy(sw->x_test, run.d.x_test, sw->m * sizeof *sw->x_test);
        memcpy(sw->y_truth, run.d.y_truth, sw->m * sizeof *sw->y_truth);
        for (size_t k = 0; k < sw->R; k++) {
            sw->first[k] = run.r[k];
            sw->first[k].yhat = sw->first[k].att = sw->first[k].losses = NULL;
        }
    }
    pool_run_free(&run);
    return status;
}

/* ---- what it prints --------------------------------------------------- */

static void print_head(FILE *f, const sweep *sw)
{
    const struct pool_args *a = sw->a;
    fprintf(f, _("data (d2l %s): for each training-set size n, n inputs x uniform on [0, 5), "
               "sorted;\n"
               "  y = %s + noise of standard deviation %g;\n"
               "  the same %zu test inputs 0, 0.1, ..., 4.9 with the truth f(x)\n"
               "  (seed %ld for every size: each size's data are those of "
               "`attn pool --n-train n`)\n"),
            a->edition == POOL_EN ? "d2l.ai 11.2" : "zh 10.2",
            a->edition == POOL_EN ? "f(x) = 2 sin(x) + x" : "f(x) = 2 sin(x) + x^0.8", a->noise,
            sw->m, a->seed);
}

/* The table: a row per size, a column per result's MSE, then each
 * parametric result's learned w. */
static void print_table(FILE *f, const sweep *sw)
{
    char name[96];
    size_t width[POOL_MAX_LIST * POOL_MAX_LIST + 4], marked = 0;
    fprintf(f, _("\nMSE against the truth on the %zu test inputs, by training-set size:\n"),
            sw->m);
    fprintf(f, "%7s", "n_train");
    for (size_t k = 0; k < sw->R; k++) {
        column_name(&sw->first[k], name, sizeof name);
        width[k] = display_width(name) > 10 ? display_width(name) : 10;
        fprintf(f, "  %*s%s", (int)(width[k] - display_width(name)), "", name);
    }
    for (size_t k = 0; k < sw->R; k++)
        if (sw->first[k].method == POOL_PARAMETRIC)
            fprintf(f, "  %12s  %s", sw->first[k].keep_self ? "w, keep-self" : "learned w",
                    "σ = 1/|w|");
    fputc('\n', f);
    for (size_t s = 0; s < sw->S; s++) {
        fprintf(f, "%7ld", sw->a->n_trains[s]);
        for (size_t k = 0; k < sw->R; k++) {
            double v = sw->mse[k * sw->S + s];
            int part = sw->unreached[k * sw->S + s] > 0;
            marked += part;
            if (isnan(v))
                fprintf(f, "  %*s", (int)width[k], "none");
            else
                fprintf(f, "  %*.6f%s", (int)width[k] - part, v, part ? "*" : "");
        }
        for (size_t k = 0; k < sw->R; k++)
            if (sw->first[k].method == POOL_PARAMETRIC)
                fprintf(f, "  %12.6f  %9.6f", sw->w[k * sw->S + s],
                        1.0 / fabs(sw->w[k * sw->S + s]));
        fputc('\n', f);
    }
    if (marked)
        fputs(_("* over the test inputs some training point reaches (the others have no "
                   "prediction); none: no test input has one\n"), f);
}

/* ---- --json ------------------------------------------------------------ */

static void write_members(json_writer *jw, const void *arg)
{
    const sweep *sw = arg;
    double sizes[POOL_MAX_LIST], sig[POOL_MAX_LIST];
    for (size_t s = 0; s < sw->S; s++)
        sizes[s] = (double)sw->a->n_trains[s];
    json_string(jw, "command", "pool");
    pool_json_numbers(jw, "n_train", sizes, sw->S);
    pool_json_numbers(jw, "x_test", sw->x_test, sw->m);
    pool_json_numbers(jw, "y_truth", sw->y_truth, sw->m);
    json_array_begin(jw, "results", JSON_BLOCK);
    for (size_t k = 0; k < sw->R; k++) {
        const pool_result *r = &sw->first[k];
        json_object_begin(jw, NULL, JSON_BLOCK);
        pool_json_method(jw, r);
        if (r->keep_self)
            json_bool(jw, "keep_self", 1);
        pool_json_numbers(jw, "mse", sw->mse + k * sw->S, sw->S);
        if (r->method == POOL_PARAMETRIC) {
            for (size_t s = 0; s < sw->S; s++)
                sig[s] = sw->w[k * sw->S + s] != 0.0 ? 1.0 / fabs(sw->w[k * sw->S + s]) : NAN;
            pool_json_numbers(jw, "w_init", sw->w0 + k * sw->S, sw->S);
            pool_json_numbers(jw, "w", sw->w + k * sw->S, sw->S);
            pool_json_numbers(jw, "sigma_w", sig, sw->S);
        }
        json_end(jw);
    }
    json_end(jw);
}

static int write_json(FILE *f, const void *arg)
{
    return json_document(f, 0, write_members, arg);
}

/* ---- the command ------------------------------------------------------ */

int pool_sweep(const struct pool_args *a)
{
    sweep sw = {.a = a, .S = a->nsizes, .m = 50};
    size_t RS;
    int status = EXIT_RUNTIME;
    sw.R = pool_result_count(a);
    if (size_mul(sw.R, sw.S, &RS)) {
        cli_error("out of memory");
        return EXIT_RUNTIME;
    }
    sw.first = calloc(sw.R, sizeof *sw.first);
    sw.mse = calloc(RS, sizeof *sw.mse);
    sw.w0 = calloc(RS, sizeof *sw.w0);
    sw.w = calloc(RS, sizeof *sw.w);
    sw.unreached = calloc(RS, sizeof *sw.unreached);
    sw.x_test = calloc(sw.m, sizeof *sw.x_test);
    sw.y_truth = calloc(sw.m, sizeof *sw.y_truth);
    if (!sw.first || !sw.mse || !sw.w0 || !sw.w || !sw.unreached || !sw.x_test || !sw.y_truth)
        cli_error("out of memory");
    else
        status = EXIT_OK;
    for (size_t s = 0; status == EXIT_OK && s < sw.S; s++)
        status = run_size(&sw, s);
    if (status == EXIT_OK) {
        FILE *rep = output_report_stream(a->json);
        if (rep == stdout) { /* else stdout is the JSON's */
            print_head(stdout, &sw);
            print_table(stdout, &sw);
        }
        if (a->json)
            status = output_json(a->json, write_json, &sw, rep,
                                 "each result's MSE by training-set size");
    }
    FREE_EACH(sw.first, sw.mse, sw.w0, sw.w, sw.unreached, sw.x_test, sw.y_truth);
    return status;
}
