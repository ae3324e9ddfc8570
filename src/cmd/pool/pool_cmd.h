/* pool_cmd.h — `attn pool` (SPEC.md §13): what its two files share. The
 * command (pool.c) reads the options and the data, runs each method and
 * prints; its outputs (pool_out.c) write the JSON and the figures. Legend: n training points, m test inputs. */
#ifndef ATTN_POOL_CMD_H
#define ATTN_POOL_CMD_H

#include <stddef.h>
#include <stdio.h>

#include "pool.h"

enum pool_method { POOL_AVERAGE = 0, POOL_NONPARAMETRIC, POOL_PARAMETRIC, POOL_NMETHODS };
extern const char *const pool_method_names[]; /* NULL-terminated */

#define POOL_MAX_LIST 16 /* kernels, widths */

struct pool_args {
    int methods[POOL_NMETHODS];  /* in the order asked */
    size_t nmethods;
    int kernels[POOL_MAX_LIST];
    size_t nkernels;
    double sigmas[POOL_MAX_LIST];
    size_t nsigmas;
    int edition;                 /* enum pool_edition */
    long n_train, seed, epochs;
    double noise, w_init, lr;
    int w_given;                 /* --w-init given */
    const char *input;
    const char *png, *weights_png, *plot, *json, *html, *font;
    size_t max_mem;
    int argc;                    /* the command line, for the page */
    char **argv;
};

/* One result: a method (with its kernel and width when nonparametric). */
typedef struct pool_result {
    int method;             /* enum pool_method */
    int kernel;             /* enum pool_kernel; parametric: POOL_GAUSSIAN */
    double sigma;           /* nonparametric only */
    double *yhat;           /* (m,), NaN where no training point reaches */
    double *att;            /* (m, n) */
    size_t unreached;       /* test inputs without a prediction */
    double mse;             /* NaN: no truth, or no prediction */
    double peak;            /* pool_mean_max_weight */
    double w_init, w;       /* parametric */
    double *losses;         /* (epochs,), parametric */
    size_t epochs;
} pool_result;

typedef struct pool_run {
    const struct pool_args *a;
    pool_data d;
    int generated;          /* the section's data (not --input) */
    pool_result *r;
    size_t nr;
} pool_run;

/* "parametric", "nonparametric, gaussian, σ = 0.5": a result's name. */
void pool_result_name(const pool_result *r, char *buf, size_t len);

/* --json FILE: SPEC §13's document. EXIT_OK or EXIT_RUNTIME. */
int pool_out_json(const pool_run *run, FILE *rep);
/* --html FILE: the page (SPEC §10), its data --json's document. EXIT_OK or
 * EXIT_RUNTIME. */
int pool_out_page(const pool_run *run, FILE *rep);
/* --png, --weights-png and --plot, those asked. */
int pool_out_figures(const pool_run *run, FILE *rep);

#endif
