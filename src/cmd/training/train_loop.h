/* train_loop.h — the training loop both of attn train's model families
 * run (train.c: the encoder tasks; train_translate_run.c: translation).
 *
 * For s = 0, 1, … steps: the snapshot due at step s (snap_steps), the
 * record callback (the --html page's), then step s + 1 — logged when it
 * is the first, the last or a multiple of --log-every (its held-out
 * figures are measured before its update). The progress: on a terminal a
 * bar on stderr, redrawn at most every 0.1 s and cleared at the end,
 *   "step 120/400 [######....] loss 0.5321<bar_text>  850 steps/s  0.3 s left"
 * else a line for each multiple of --log-every,
 *   "step 120/400: loss 0.5321<line_text>".
 * The callbacks return EXIT_OK, or an exit status after their message
 * (when the bar is shown, a step clears it before its message). */
#ifndef ATTN_TRAIN_LOOP_H
#define ATTN_TRAIN_LOOP_H

#include <stddef.h>

typedef struct train_loop train_loop;
struct train_loop {
    /* set by the caller */
    long steps, every;      /* --steps, --log-every */
    int bar;                /* show the bar (stderr a terminal), else the lines */
    const long *snap_steps; /* (nsnap,) increasing */
    size_t nsnap;
    void *run; /* the callbacks' */
    int (*snapshot)(train_loop *lp, size_t i); /* at step snap_steps[i] */
    int (*record)(train_loop *lp, long s);     /* at the top of every pass, s steps made */
    int (*step)(train_loop *lp, long s, int logged); /* step s, 1 … steps */
    /* set by the step: its loss, and the progress's text after it */
    double loss;
    char bar_text[64], line_text[64];
    /* set by the loop */
    double t0;      /* now_seconds() at the start */
    double seconds; /* the whole loop's */
};

/* Run the loop: EXIT_OK, or the first failing callback's status. */
int train_loop_run(train_loop *lp);

/* Room for one more entry in a history of *n entries of size bytes,
 * *cap allocated (doubling from 64): 0, or EXIT_RUNTIME after "out of
 * memory for the history". */
int train_hist_room(void **hist, size_t n, size_t *cap, size_t size);

#endif
