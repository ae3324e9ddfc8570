/* score_cmd.h — `attn score` (SPEC.md §13): what its three files share.
 * The command (score.c) reads the options, computes each scoring function
 * and calls the others; its inputs (score_input.c) are the section's cells
 * or a JSON file; its outputs (score_out.c) print for a person and write
 * the JSON, the figure and the page; score_explain.c writes --explain
 * --json's every cell's path. Dimensions as in score.h: B, Nq, Nk,
 * Dq, Dk, Dv, h. */
#ifndef ATTN_SCORE_CMD_H
#define ATTN_SCORE_CMD_H

#include <stddef.h>
#include <stdio.h>

#include "json_in.h"
#include "options.h"
#include "render.h"
#include "score.h"
#include "tensor.h"

/* the order of score_names; additive and dot by default, in that order */
enum { KIND_ADDITIVE, KIND_DOT, KIND_GENERAL, KIND_SUM, NKINDS };
extern const char *const score_names[];  /* the kinds' order, NULL-terminated */
extern const char *const score_modules[]; /* AdditiveAttention, … */

struct score_args {
    const char *input, *png, *json, *font, *html;
    const attn_cmap *cmap;
    int color;          /* term_color_mode */
    int score;          /* --score: the index in score_names */
    int score_given;    /* 0: additive and dot, additive first */
    int masked_softmax, explain, hiddens_given;
    int keys_random;    /* --keys random: the cells' keys normal(0, 1) */
    long seed, hiddens;
    long queries;       /* --queries: the cells' queries per example (default 1) */
    size_t max_mem;
    opt_lens lens;      /* --valid-lens: instead of the cells' or the file's */
    int argc;           /* the command line, for the page */
    char **argv;
};

/* The inputs of one scoring function, and everything it computes. */
typedef struct score_run {
    int kind;
    size_t B, Nq, Nk, Dq, Dk, Dv, h; /* h: additive only */
    tensor queries, keys, values;    /* (B, Nq, Dq), (B, Nk, Dk), (B, Nk, Dv) */
    long *lens;                      /* (B,) or (B, Nq); NULL: no valid_lens */
    size_t vl_ndim;
    score_additive m;                /* additive only */
    score_general g;                 /* general only */
    int has_state_dict;              /* m or g came from the file */
    float *qh, *kh;                  /* (B, Nq, h), (B, Nk, h) additive: W_q q, W_k k */
    float *qw;                       /* (B, Nq, Dk) general: W(q) = qᵀ W */
    float *scores, *masked, *weights; /* (B, Nq, Nk) each */
    float *output;                   /* (B, Nq, Dv) */
} score_run;

/* ---- score_input.c: the inputs ---------------------------------------- */

void score_run_free(score_run *r);
/* The section's cell for one kind (SPEC §13). 0, or -1 with err. */
int score_cell(score_run *r, int kind, const struct score_args *a, char *err, size_t errlen);
/* The file's members are those of the format: 0, or -1 with err. */
int score_check_members(const cJSON *root, char *err, size_t errlen);
/* One run's inputs from the parsed file; *usage is set for an error of
 * the options (--score-hiddens with a state_dict). 0, or -1 with err. */
int score_run_from_json(score_run *r, int kind, const cJSON *root, const struct score_args *a,
                        char *err, size_t errlen, int *usage);

/* ---- score_out.c: what is printed and written ------------------------- */

struct score_explain_buffers; /* score_explain.h */

struct score_out {
    const score_run *runs;
    size_t nruns;
    const struct score_args *args;
    const float *page_weights; /* (nruns, B, Nq, Nk) for --html, else NULL */
    /* --explain --json: each result's "explain" member with this scratch
     * (score_explain.h); NULL: none */
    const struct score_explain_buffers *explain;
};

/* Each run: the module, --explain's steps, the output and the weights. */
void score_print_runs(const score_run *runs, size_t n, const struct score_args *a);
/* --masked-softmax: the section's two calls. EXIT_OK. */
int score_print_masked_softmax(const struct score_args *a);
/* --json, --png, --html: EXIT_OK, or the exit status after the message. */
int score_out_json(const struct score_out *o, FILE *rep);
int score_out_png(const struct score_out *o, FILE *rep);
int score_out_page(const struct score_out *o, FILE *rep);

#endif
