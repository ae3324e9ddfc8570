/* pool_cmd.h — `attn pool` (SPEC.md §13): what its files share. The
 * command (pool.c) reads the options and prints; a run (pool_run.c) reads
 * the data and runs each method; its outputs (pool_out.c) write the JSON
 * and the figures; --n-train LIST (pool_sweep.c) runs each size.
 * Legend: n training points, m test inputs. */
#ifndef ATTN_POOL_CMD_H
#define ATTN_POOL_CMD_H

#include <stddef.h>
#include <stdio.h>

#include "pool.h"

enum pool_method {
    POOL_AVERAGE = 0,
    POOL_NONPARAMETRIC,
    POOL_PARAMETRIC,
    POOL_ADDITIVE, /* 10.3's additive score as the attention, trained */
    POOL_NMETHODS
};
extern const char *const pool_method_names[]; /* NULL-terminated */

#define POOL_MAX_LIST 16 /* kernels, widths */

struct pool_args {
    int methods[POOL_NMETHODS];  /* in the order asked */
    size_t nmethods;
    int kernels[POOL_MAX_LIST];
    size_t nkernels;
    double sigmas[POOL_MAX_LIST];
    size_t nsigmas;
    int sigma_auto;              /* --sigma auto: by leave-one-out */
    int edition;                 /* enum pool_edition */
    long n_trains[POOL_MAX_LIST]; /* --n-train's sizes, in the order given */
    size_t nsizes;               /* 0: the edition's one size */
    long n_train, seed, epochs;  /* n_train: the size of this run */
    long score_hiddens;          /* additive: h */
    double noise, w_init, lr;
    int w_given;                 /* --w-init given */
    int keep_self;               /* --keep-self: trained results again, self kept */
    const char *input;
    const char *png, *weights_png, *plot, *json, *html, *font, *sigma_png, *kernels_png;
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
    pool_additive add_init, add; /* additive: its start and its learned parameters */
    int keep_self;          /* parametric, additive: trained with each point its own key */
    double *losses;         /* (epochs,), parametric and additive */
    size_t epochs;
} pool_result;

/* --sigma auto for one kernel: the leave-one-out error at each width of
 * the grid (pool_sigma_grid) and the width chosen. */
typedef struct pool_sigma_auto {
    int kernel;                              /* enum pool_kernel */
    double loo[POOL_SIGMA_GRID_N];           /* mean squared error, NaN: none */
    size_t unreached[POOL_SIGMA_GRID_N];     /* points no other point reaches */
    size_t best;                             /* the grid's index chosen */
} pool_sigma_auto;

typedef struct pool_run {
    const struct pool_args *a;
    pool_data d;
    int generated;          /* the section's data (not --input) */
    pool_sigma_auto autos[POOL_NKERNELS]; /* --sigma auto: one per kernel asked */
    size_t nautos;
    pool_result *r;
    size_t nr;
} pool_run;

/* pool_run.c: whether method is among those asked; how many results the
 * methods asked give (nonparametric one per kernel and width). */
int pool_asked(const struct pool_args *a, int method);
size_t pool_result_count(const struct pool_args *a);

/* pool_run.c: the data of run->a (--input's, or the section's for the size
 * run->a->n_train drawn from the seed) and every result, in a zeroed run.
 * EXIT_OK, or the status after the message. pool_run_free releases it. */
int pool_run_compute(pool_run *run);
void pool_run_free(pool_run *run);

/* pool_sweep.c: --n-train LIST, each size's run and each result's MSE
 * against the truth: the table, or --json's document. */
int pool_sweep(const struct pool_args *a);

/* "parametric", "nonparametric, gaussian, σ = 0.5": a result's name. */
void pool_result_name(const pool_result *r, char *buf, size_t len);

/* A figure's title: "average", "gaussian, σ = 1", "parametric, w = 13.3". */
void pool_result_title(const pool_result *r, char *buf, size_t len);

/* JSON: key: [v[0], …, v[n-1]] and key: v, NaN as null. */
struct json_writer;
void pool_json_numbers(struct json_writer *jw, const char *key, const double *v, size_t n);
void pool_json_number(struct json_writer *jw, const char *key, double v);
/* A result's "method", "kernel" (null where there is none) and "sigma". */
void pool_json_method(struct json_writer *jw, const pool_result *r);

/* --json FILE: SPEC §13's document. EXIT_OK or EXIT_RUNTIME. */
int pool_out_json(const pool_run *run, FILE *rep);
/* --html FILE: the page (SPEC §10), its data --json's document. EXIT_OK or
 * EXIT_RUNTIME. */
int pool_out_page(const pool_run *run, FILE *rep);
/* --kernels-png: the four kernels drawn as d2l.ai 11.2 draws them (no
 * data needed). EXIT_OK or EXIT_RUNTIME. */
int pool_out_kernels(const struct pool_args *a, FILE *rep);
/* --png, --weights-png and --plot, those asked. */
int pool_out_figures(const pool_run *run, FILE *rep);

#endif
