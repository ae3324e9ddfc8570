/* encoder_train.h — the training loop of attn train: a model, its optimizer and a
 * task, one call per step, evaluation, and what the command shows (the
 * probe's attention, the 苹果 measurements).
 *
 * Determinism: a batch is cut into chunks of TRAIN_CHUNK examples whatever
 * the number of threads; each chunk's forward and backward pass writes its
 * own gradient buffer, and the buffers are added in chunk order. The same
 * seed therefore gives bit-identical losses and weights with 1 or more
 * threads.
 */
#ifndef ATTN_ENCODER_TRAIN_H
#define ATTN_ENCODER_TRAIN_H

#include <stddef.h>

#include "optim.h"
#include "encoder_fast.h"
#include "encoder.h"
#include "encoder_task.h"

#define TRAIN_CHUNK 8

/* The threads of a step's chunks: threads (--threads) when given, else
 * the cores free now (cores_threads) for a step of work multiply-adds
 * of 2e6 or more (enough to pay for waking them), else one. Both
 * trainers' choice. */
int train_choose_threads(int threads, double work);
/* The dropout seed of step (0, 1, …) of a training seeded with seed: one
 * stream per step, the same in both trainers. */
unsigned long long train_step_seed(unsigned long long seed, long step);
/* sum (total,) = 0 + chunk 0's gradient + chunk 1's + … in chunk order,
 * each element on its own (the same bits with any nth): chunk c's at
 * c·total of grads (double), or of gradsf (float) when grads is NULL.
 * Blocks of the array are shared out among nth threads. Both trainers'
 * (this one's and seq2seq_train.h's). */
void train_sum_grads(double *sum, const double *grads, const float *gradsf, size_t nchunks,
                     size_t total, int nth);

typedef struct train_opts {
    size_t hiddens, heads;   /* d, NH */
    size_t layers, ffn;      /* L blocks (0 is read as 1), the FFN's H (0: none) */
    int posenc, addnorm, bias, causal;
    int learned;             /* a learned pos_embedding instead of the sinusoid */
    size_t max_len;          /* its positions; 0: the task's longest sequence */
    double dropout;
    optim_kind optimizer;
    double lr;
    size_t batch_size;       /* 0: the whole training set (--data) */
    unsigned long long seed;
    int threads;             /* 0: every core, or one for tiny steps */
    long steps;              /* the default number of steps (the command loops) */
    int reference;           /* 1: the naive double loops instead of encoder_fast.c */
    size_t window;           /* R, --window (0: none); the reference loops only */
} train_opts;

/* The defaults of attn train for a task (d 32, 4 heads, P on, Adam …). */
void train_opts_default(train_opts *o, train_kind kind);

typedef struct trainer {
    train_task *task;        /* borrowed */
    train_opts opts;
    tmodel model;
    optim opt;
    long step;               /* updates done */
    size_t B, T;             /* batch size, padded length */
    train_set batch;         /* (B, T) the current batch */
    rng data_rng;            /* draws the built-in batches or shuffles --data */
    size_t *order, cursor;   /* --data: this epoch's order */
    size_t nchunks;
    tcache *cache;           /* (nchunks,) the reference's caches */
    tfast_cache *fcache;     /* (nchunks,) the fast path's */
    tfast_weights fw;        /* the fast path's transposed weights */
    double *chunk_grads;     /* (nchunks, total), the reference's */
    float *chunk_gradsf;     /* (nchunks, total), the fast path's */
    double *grads;           /* (total,) the batch's gradient */
    double *chunk_loss;      /* (nchunks,) */
    double *chunk_scores;    /* (nchunks, 2·L·NH) induction measures' sums */
    size_t *chunk_positions; /* (nchunks,) the positions they sum over */
    size_t *chunk_count, *chunk_correct; /* (nchunks,) */
} trainer;

/* The longest sequence of the task: its training batches, its held-out
 * and evaluation sets. A learned pos_embedding holds that many positions
 * unless train_opts.max_len says otherwise. */
size_t train_task_longest(const train_task *task);

/* A trainer for task. With model NULL a new model starts from opts.seed;
 * otherwise its parameters are copied (its configuration must match the
 * task's vocabulary and classes: --load). A learned pos_embedding must
 * hold the task's longest sequence. 0, or -1 with the reason. */
int trainer_init(trainer *tr, train_task *task, const train_opts *opts, const tmodel *model,
                 char *err, size_t errlen);
void trainer_free(trainer *tr);

typedef struct train_stats {
    double loss;       /* mean cross-entropy over the targeted positions */
    double accuracy;   /* share of them whose argmax is the target, in [0, 1] */
    size_t count;      /* targeted positions */
} train_stats;

/* A step's summed loss over count targets (correct of them the argmax)
 * as its mean: -1 with "step N: the loss became nan; try a smaller --lr"
 * in err when it is not finite, else 0 with the mean loss, the accuracy
 * and count in stats (when not NULL) and the mean in *mean. */
int train_step_stats(train_stats *stats, double *mean, double sum, size_t correct, size_t count,
                     long step, char *err, size_t errlen);

/* One step: the next batch, its loss and accuracy before the update
 * (stats), the gradients, one optimizer update. A loss that is not finite
 * stops with -1 and "step S: the loss became nan; try a smaller --lr" in
 * err, the weights untouched. */
int trainer_step(trainer *tr, train_stats *stats, char *err, size_t errlen);

/* Loss and accuracy on a whole set, without dropout. */
int trainer_evaluate(trainer *tr, const train_set *s, train_stats *stats, char *err,
                     size_t errlen);

/* The same, and the induction measures of SPEC §9 over the positions of s
 * that have a target (for the induction task: the second copy of A),
 * for each layer l and head h at [l·NH + h] of prev and ind (L·NH):
 *   prev  the head's weight on position i−1 (a previous-token head);
 *   ind   its weight on the position just after the earlier copy of the
 *         token at i (an induction head: in … A B … A, on B);
 * averaged over those positions (0 when there is none). */
int trainer_evaluate_scores(trainer *tr, const train_set *s, train_stats *stats, double *prev,
                            double *ind, char *err, size_t errlen);

/* Where a loss curve fell fastest: loss (n,) the loss of steps 1 … n, in
 * windows of w = max(1, n/20) steps: the step i at which the mean of the w
 * losses before it exceeds the mean of the w from it by the most; *from =
 * i − w/2 and *to = i + w/2, within 1 … n. -1 when n < 2. */
int train_fastest_fall(const double *loss, size_t n, long *from, long *to);

typedef struct train_final {
    train_stats train;   /* on --data's training set, or the built-in evaluation set */
    train_stats heldout;
    int has_heldout;
} train_final;

/* SPEC §9's "final": measured after the last update. */
int trainer_final(trainer *tr, train_final *f, char *err, size_t errlen);

/* The attention weights (L, NH, len, len) of one sequence tokens (len,):
 * every block's heads, the lowest first. */
int trainer_attention(trainer *tr, const int *tokens, size_t len, float *weights, char *err,
                      size_t errlen);

/* The 苹果 measurements over a set with sequence labels (apple, or any
 * labelled --data with cue words): where the label token first occurs,
 *   cue_weight   the attention it puts on cue tokens, summed over the cue
 *                keys, averaged over heads and sentences;
 *   cos_within   mean cosine similarity of its output features (the
 *                head's input) over pairs of sentences of the same class;
 *   cos_across   … over pairs of different classes;
 *   cos_*_input  the same for its input X (embedding·√d + P).
 * cues: vocabulary ids (ncues). */
typedef struct train_apple {
    double accuracy;
    double cue_weight;
    double cos_within, cos_across;
    double cos_within_input, cos_across_input;
} train_apple;

int trainer_apple(trainer *tr, const train_set *s, const long *cues, size_t ncues,
                  train_apple *out, char *err, size_t errlen);

#endif
