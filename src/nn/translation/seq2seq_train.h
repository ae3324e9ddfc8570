/* seq2seq_train.h — the training loop of an encoder–decoder that
 * translates (SPEC.md §11): batches of sentence pairs, one call per step
 * (Adam or SGD, gradients clipped to a global norm), and what the command
 * shows: the loss teacher-forced, greedy translations and their BLEU, the
 * share translated exactly, and how well the cross-attention aligns.
 *
 * Dimensions: N pairs of a set, B pairs a batch, T num_steps (source and
 * target both padded to it), Vs and Vt the vocabularies, L blocks a side,
 * NH heads.
 *
 * Determinism, as encoder_train.h's: a batch is cut into chunks of TRAIN_CHUNK
 * pairs whatever the number of threads, each chunk's gradients go to its
 * own buffer, and the buffers are added in chunk order; evaluation splits
 * a set into chunks the same way. The same seed gives the same bits with
 * any --threads, on every machine.
 */
#ifndef ATTN_SEQ2SEQ_TRAIN_H
#define ATTN_SEQ2SEQ_TRAIN_H

#include <stddef.h>

#include "optim.h"
#include "rng.h"
#include "seq2seq.h"
#include "seq2seq_data.h"
#include "seq2seq_fast.h"
#include "encoder_train.h"

typedef struct s2s_train_opts {
    optim_kind optimizer;
    double lr;
    double clip;             /* the global norm gradients are clipped to; 0: none */
    size_t batch_size;       /* 0 (or ≥ N): every pair, in file order, each step */
    unsigned long long seed; /* the model's start, the batches, dropout */
    int threads;             /* 0: every core, or one for tiny steps */
    int reference;           /* 1: the reference loops (double) instead of the fast path */
} s2s_train_opts;

typedef struct s2s_trainer {
    s2s_train_opts opts;
    s2s_model model;
    optim opt;
    long step;               /* updates done */
    const s2s_arrays *data; /* (N, T) borrowed: the training pairs */
    size_t B, T;
    int *src, *dec_in, *tgt; /* (B, T) the batch; tgt −1 past each target's length */
    long *src_lens;          /* (B,) */
    rng data_rng;            /* shuffles the pairs, epoch by epoch */
    size_t *order, cursor;   /* this epoch's order */
    size_t nchunks;
    s2s_cache *cache;        /* (nchunks,) the reference's */
    s2s_fast_cache *fcache;  /* (nchunks,) the fast path's */
    s2s_fast_weights fw;     /* the fast path's transposed weights */
    double *chunk_grads;     /* (nchunks, total), the reference's */
    float *chunk_gradsf;     /* (nchunks, total), the fast path's */
    double *grads;           /* (total,) the batch's gradient */
    double *chunk_loss;      /* (nchunks,) */
    size_t *chunk_count, *chunk_correct; /* (nchunks,) */
    double grad_norm;        /* the last step's norm before clipping */
} s2s_trainer;

/* A trainer on data (borrowed until s2s_trainer_free). With model NULL a
 * new model of configuration cfg starts from opts->seed; otherwise its
 * parameters are copied (cfg is then the model's). 0, or -1 with the
 * reason in err. */
int s2s_trainer_init(s2s_trainer *tr, const s2s_arrays *data, const s2s_config *cfg,
                     const s2s_train_opts *opts, const s2s_model *model, char *err,
                     size_t errlen);
void s2s_trainer_free(s2s_trainer *tr);

/* One step: the next batch, its loss and accuracy (teacher-forced, before
 * the update) into stats, the gradients, clipping, one update. A loss
 * that is not finite stops with -1 and "step S: the loss became nan; try a
 * smaller --lr" in err, the weights untouched. */
int s2s_trainer_step(s2s_trainer *tr, train_stats *stats, char *err, size_t errlen);

/* Teacher-forced loss and accuracy on a whole set, without dropout. */
int s2s_trainer_evaluate(s2s_trainer *tr, const s2s_arrays *set, train_stats *stats,
                         char *err, size_t errlen);

/* Greedy translations of every pair of set: out (N, T) the ids, n_out
 * (N,) their numbers (d2l's predict_seq2seq on each source row). */
int s2s_trainer_translate_set(s2s_trainer *tr, const s2s_arrays *set, int *out,
                              size_t *n_out, char *err, size_t errlen);

/* One source sentence's greedy translation: src (T,) its ids + <eos>,
 * padded, src_len its valid length; out (T,), *n_out; cross (L, NH, T,
 * T), or NULL, each step's cross-attention (s2s_greedy's). */
int s2s_trainer_translate(s2s_trainer *tr, const int *src, long src_len, int *out,
                          size_t *n_out, float *cross, char *err, size_t errlen);

/* BLEU (d2l's bleu, k = 2) of the greedy translations of set against
 * pairs' targets (the same pairs, in order), averaged over the pairs, and
 * the share translated exactly. pred, when not NULL, (N, T) and n_pred
 * (N,) get the translations. */
int s2s_trainer_bleu(s2s_trainer *tr, const s2s_arrays *set, const s2s_pairs *pairs,
                     const s2s_vocab *tgt_vocab, double *bleu, double *exact, int *pred,
                     size_t *n_pred, char *err, size_t errlen);

/* The alignment score (SPEC §11) of set's pairs, whose generator knows
 * which source word each target word translates (pairs->align): the share
 * of target words, teacher-forced, whose cross-attention row in decoder
 * block `block` (heads averaged) is largest on that source word. */
int s2s_trainer_alignment(s2s_trainer *tr, const s2s_arrays *set, const s2s_pairs *pairs,
                          size_t block, double *score, char *err, size_t errlen);

/* Every attention of one teacher-forced pair, for the views: enc (L, NH,
 * T, T), self (L, NH, T, T), cross (L, NH, T, T) (target × source); any
 * may be NULL. */
int s2s_trainer_attention(s2s_trainer *tr, const int *src, long src_len, const int *dec_in,
                          float *enc, float *self, float *cross, char *err, size_t errlen);

#endif
