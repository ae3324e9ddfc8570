/* train_translate.h — one run of `attn train` on a translation model
 * (train_translate.c: the data, the loop) and what it shows
 * (translate_view.c: the printout, --png, --plot, --json, --save,
 * --html). Dimensions: N pairs, T num_steps, L blocks a side, NH heads.
 */
#ifndef ATTN_TRANSLATE_RUN_H
#define ATTN_TRANSLATE_RUN_H

#include <stddef.h>
#include <stdio.h>

#include "train_cmd.h"
#include "json_writer.h"
#include "seq2seq_data.h"
#include "seq2seq_train.h"

#define XRUN_TRAIN_PAIRS 2000 /* the grammar's training pairs */
#define XRUN_HELDOUT_PAIRS 200 /* and held-out pairs */
#define XRUN_NSNAP 5          /* the probe's cross-attention kept at 5 steps */
#define XRUN_EXAMPLES 4       /* held-out translations printed */

struct xpage; /* --html's record of the probe (train_translate_page.c) */

/* One logged step. */
typedef struct xhist {
    long step;
    double loss, accuracy;            /* the batch's, teacher-forced */
    double bleu, exact, alignment;    /* held-out, before the step's update; NaN: none */
    double seconds;                   /* training seconds before the step (the held-out
                                       * figures' and --html's time left out) */
} xhist;

typedef struct xrun {
    const struct train_args *a;
    int argc;                  /* the command line (the page shows it) */
    char **argv;
    long steps;
    s2s_corpus corpus;     /* the pairs, training and held-out */
    int builtin;               /* the grammar's pairs (alignment known) */
    s2s_vocab src_v, tgt_v;
    size_t T;                  /* num_steps */
    s2s_arrays train, held;
    s2s_model loaded;          /* --load */
    int has_loaded;
    s2s_trainer tr;
    int tr_ready;
    xhist *hist;
    size_t nhist, hist_cap;
    double last_bleu;
    /* the probe: one held-out pair (or the first training pair) */
    size_t probe;              /* its index in its set */
    const s2s_arrays *probe_set;
    const s2s_pairs *probe_pairs;
    const char *src_labels[TRAIN_MAX_NUM_STEPS]; /* (T,) its source words, <eos>, <pad> */
    const char *tgt_labels[TRAIN_MAX_NUM_STEPS]; /* (T,) its target words, <eos>, <pad> */
    size_t src_len, tgt_len;   /* valid entries (<eos> included) */
    long snap_step[XRUN_NSNAP];
    float *snap_cross[XRUN_NSNAP]; /* (L, NH, T, T) teacher-forced cross-attention */
    size_t nsnap;
    float *final_enc, *final_self, *final_cross; /* (L, NH, T, T) after the last step */
    /* after the last step */
    double seconds;            /* the loop's, evaluation included */
    double eval_seconds;       /* of which the held-out figures and --html's records */
    double train_seconds;      /* seconds − eval_seconds */
    train_stats final_train;
    double final_bleu, final_exact, final_align, final_align_first;
    int *pred;                 /* (N_heldout, T) greedy translations */
    size_t *n_pred;            /* (N_heldout,) */
    struct xpage *page;        /* --html: the probe at every logged step; NULL without */
} xrun;

/* translate_view.c */
int xrun_check_outputs(const struct train_args *a);
int xrun_load_model(xrun *r);
int xrun_choose_probe(xrun *r);
int xrun_snapshot(xrun *r, size_t i);
int xrun_final_attention(xrun *r);
int xrun_outputs(const xrun *r);
/* --json's object (SPEC §11: history entries with heldout_bleu; final with
 * bleu, exact and, for the built-in task, alignment). */
int xrun_write_json(FILE *f, const void *ctx);
/* train_translate_page.c, --html: xpage_open after the trainer and the
 * probe are ready (nothing without --html), xpage_record(r, s) at the top
 * of every pass of the loop (s steps made) while r->page is set,
 * xpage_write after the last step, xpage_free always. */
int xpage_open(xrun *r);
int xpage_record(xrun *r, long s);
int xpage_write(const xrun *r, FILE *rep);
void xpage_free(xrun *r);
/* train_translate.c: a run is xrun_prepare (r->a, r->steps, r->argc,
 * r->argv set, the rest zero), xrun_choose_snapshots and xrun_train_loop
 * (r->steps), xrun_finish, then xrun_final_attention; xrun_free always. */
int xrun_prepare(xrun *r);
void xrun_choose_snapshots(xrun *r, long steps);
int xrun_train_loop(xrun *r, long steps);
int xrun_finish(xrun *r);
void xrun_free(xrun *r);
/* train_compare_arch.c: --compare-arch, after the checks of a
 * translation run. */
int train_compare_arch(const struct train_args *a, int argc, char **argv);
/* train_translate_page.c: the kept steps, the probe's greedy translation
 * at each and its cross-attention (S, L, NH, Tq, Ts) as "steps",
 * "step_translations", "cross" members; 0, or -1 (memory). */
int xpage_run_members(json_writer *jw, const xrun *r);

#endif
