/* train_translate.h — one run of `attn train` on a translation model
 * (--task translate, or --data of sentence pairs; SPEC.md §11), shared by
 * the files of that run. Two prefixes say what a name belongs to:
 *   translation_run_       the run itself: a translation model trained,
 *                          its history and its probe's attention kept
 *                          (train_translate_run.c), and what attn train
 *                          shows of it (train_translate_view.c)
 *   translation_run_page_  that run's --html page: the probe recorded at
 *                          every logged step, then the page written
 *                          (train_translate_page.c)
 * (translate_page_ names, translate/translate_page.h, are the page of one
 * translation, which both attn translate and this run's page show.)
 *
 * The files call one way: train_translate.c (the command) → the run, the
 * view, the page and train_compare_arch.c; compare_arch → the run and
 * the page; the run → the page's recorder; the page → the view's --json.
 * Dimensions: N pairs, T num_steps, L blocks a side, NH heads.
 */
#ifndef ATTN_TRAIN_TRANSLATE_H
#define ATTN_TRAIN_TRANSLATE_H

#include <stddef.h>
#include <stdio.h>

#include "train_cmd.h"
#include "json_writer.h"
#include "seq2seq_data.h"
#include "seq2seq_task.h"
#include "seq2seq_train.h"

#define TRANSLATION_TRAIN_PAIRS TRANSLATE_TRAIN_PAIRS     /* the grammar's training pairs */
#define TRANSLATION_HELDOUT_PAIRS TRANSLATE_HELDOUT_PAIRS /* and held-out pairs */
#define TRANSLATION_NSNAP 5           /* the probe's cross-attention kept at 5 steps */
#define TRANSLATION_EXAMPLES 4        /* held-out translations printed */

struct translation_run_page; /* --html's record of the probe (train_translate_page.c) */

/* One logged step. */
typedef struct translation_hist {
    long step;
    double loss, accuracy;            /* the batch's, teacher-forced */
    double bleu, exact, alignment;    /* held-out, before the step's update; NaN: none */
    double seconds;                   /* training seconds before the step (the held-out
                                       * figures' and --html's time left out) */
} translation_hist;

typedef struct translation_run {
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
    translation_hist *hist;
    size_t nhist, hist_cap;
    double last_bleu;
    /* the probe: one held-out pair (or the first training pair) */
    size_t probe;              /* its index in its set */
    const s2s_arrays *probe_set;
    const s2s_pairs *probe_pairs;
    const char *src_labels[TRAIN_MAX_NUM_STEPS]; /* (T,) its source words, <eos>, <pad> */
    const char *tgt_labels[TRAIN_MAX_NUM_STEPS]; /* (T,) its target words, <eos>, <pad> */
    size_t src_len, tgt_len;   /* valid entries (<eos> included) */
    long snap_step[TRANSLATION_NSNAP];
    float *snap_cross[TRANSLATION_NSNAP]; /* (L, NH, T, T) teacher-forced cross-attention */
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
    struct translation_run_page *page;        /* --html: the probe at every logged step; NULL without */
} translation_run;

/* train_translate_run.c: translation_run_train on a zeroed run trains it
 * with the options a (argc, argv: the command line, for the page): the
 * pairs, the model, the probe, --html's recorder, the loop, the figures
 * after the last step; then translation_run_final_attention, the probe's
 * attention after the last step (for the view). translation_run_free
 * always. EXIT_OK, or the exit status after a message. */
int translation_run_train(translation_run *r, const struct train_args *a, int argc, char **argv);
int translation_run_final_attention(translation_run *r);
void translation_run_free(translation_run *r);

/* train_translate_view.c: the printout (unless --json -), --save, --png,
 * --plot and --json, each reported on the report stream. */
int translation_run_outputs(const translation_run *r);
/* --json's object (SPEC §11: history entries with heldout_bleu; final with
 * bleu, exact and, for the built-in task, alignment). */
int translation_run_write_json(FILE *f, const void *ctx);
/* What that object and --compare-arch's runs (compared) share: "history",
 * one object a logged step ("step", "seconds" when compared, "loss",
 * "train_accuracy" unless compared, "heldout_bleu", "heldout_exact",
 * "alignment"), then "final" opened with "loss", "train_accuracy" unless
 * compared, "bleu", "exact", "alignment" (null without a held-out set),
 * for the caller to add to and close. */
void translation_run_json_history(json_writer *jw, const translation_run *r, int compared);

/* train_translate_page.c, --html: translation_run_page_open after the
 * trainer and the probe are ready (nothing without --html),
 * translation_run_page_record(r, s) at the top of every pass of the loop
 * (s steps made) while r->page is set, translation_run_page_write after
 * the last step, translation_run_page_free always. */
int translation_run_page_open(translation_run *r);
int translation_run_page_record(translation_run *r, long s);
int translation_run_page_write(const translation_run *r, FILE *rep);
void translation_run_page_free(translation_run *r);
/* The kept steps, the probe's greedy translation at each and its
 * cross-attention (S, L, NH, Tq, Ts) as "steps", "step_translations",
 * "cross" members (--compare-arch's page); 0, or -1 (memory). */
int translation_run_page_members(json_writer *jw, const translation_run *r);

/* train_compare_arch.c: --compare-arch (--compare-rnn, --compare-score,
 * --compare-layers), after the checks of a
 * translation run. */
int train_compare_arch(const struct train_args *a, int argc, char **argv);

#endif
