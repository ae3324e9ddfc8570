/* train_page.h — `attn train --html FILE` (SPEC.md §9, §10): the probe's
 * attention at every logged step, kept as training runs, and the page that
 * scrubs through it: a step slider and a play button moving the heatmaps
 * (rows = layers; for apple 苹果's row in each sentence) and a cursor on the
 * loss and accuracy curves together.
 *
 * One page per process, held here, so that train.c only calls in:
 *   train_page_open     once, after the options: checks the path up front
 *   train_page_run      per training run (--compare-posenc: two), its probes
 *   train_page_probe    once per probe of that run
 *   train_page_record   at the top of every pass of the training loop
 *   train_page_write    after the runs, with --json's writer for each run
 *   train_page_close    at the end, whatever happened
 * Every call but open does nothing when no page is open. */
#ifndef ATTN_TRAIN_PAGE_H
#define ATTN_TRAIN_PAGE_H

#include <stdio.h>

#include "encoder_train.h"

/* path NULL: no page. EXIT_OK, or EXIT_RUNTIME when path cannot be
 * written (said as "attn train: --html PATH: cannot create: …"). */
int train_page_open(const char *path, int argc, char **argv);

/* A new run of tr (label "with P", "without P", or NULL for the only run)
 * that will take steps steps, logging every `every`. EXIT_OK or
 * EXIT_RUNTIME. */
int train_page_run(const trainer *tr, const char *label, long steps, long every);

/* A probe of the current run: tokens (len,), their labels, at = the query
 * shown alone (apple: 苹果's position) when name is not NULL. */
int train_page_probe(const int *tokens, size_t len, size_t at, const char *const *labels,
                     const char *name);

/* The most numbers of attention a run keeps for the page. */
#define TP_MAX_FLOATS ((size_t)1 << 21)

/* Whether the loop's pass s (s steps made) is logged, as train.c logs
 * its history: the first step, every `every`-th and the last; and 0, the
 * weights before training. */
int train_page_logged(long s, long steps, long every);

/* The stride over the logged steps of a run of steps steps that keeps at
 * most about max_floats numbers, per of them a kept step: every
 * stride-th logged step is kept (the first is) and the last; 1 keeps
 * them all. The page's with TP_MAX_FLOATS; --explain's (train_explain.h)
 * a multiple of it. */
long train_page_stride(size_t per, long steps, long every, size_t max_floats);

/* A logged step's figures, as --json's history has them (NaN: none). */
typedef struct train_page_stats {
    long step;
    double loss, train_accuracy, heldout_accuracy;
} train_page_stats;

/* The loop has made s of steps steps: keep the probes' attention when s
 * is logged (0, 1, every `every`-th, the last); st: step s's figures
 * (NULL for s = 0). When the page asks for a stream (page_out.h's
 * ATTN_PAGE_STREAM), each logged step is also written there as it comes,
 * one JSON object per line:
 *   the first of a run: {"run": i, "kind", "title", "command", "cmap" (as
 *     the page's "page" has them), "label", "layers", "heads", "length",
 *     "causal", "stride", "probes" (as the page's runs have them),
 *     "steps": the steps it will take, "every": --log-every}
 *   then one per logged step: {"run": i, "step": s, "history": st as an
 *     entry of --json's history (null at 0), and "attention": the probes'
 *     (probes, layers, heads, T, T) as base64 when the step is kept}.
 * EXIT_OK or EXIT_RUNTIME. */
int train_page_record(trainer *tr, long s, const train_page_stats *st);

/* The page: for each of the nruns runs, write_json(f, ctxs[i]) writes
 * that run's --json document. One run: the data is that document plus
 * "page"; two (--compare-posenc, --compare-layers): {"command": "train",
 * compare (the option's key, "compare_posenc" or "compare_layers"): true,
 * "runs": [the two documents], "page": …}. EXIT_OK or EXIT_RUNTIME. */
int train_page_write(int (*write_json)(FILE *f, const void *ctx), const void *const *ctxs,
                     size_t nruns, const char *compare, FILE *rep);

void train_page_close(void);

#endif
