/* train_cmd.h — what `attn train` (train.c) shares with the files of
 * its model families: the options as parsed, and the translation models'
 * runs (train_translate.c, SPEC.md §11). */
#ifndef ATTN_TRAIN_CMD_H
#define ATTN_TRAIN_CMD_H

#include <stddef.h>

#include "options.h"

/* --task's choices: train_kind's four built-in tasks, then translate, lm
 * and vit. */
#define TRAIN_TASK_TRANSLATE 4
#define TRAIN_TASK_LM 5
#define TRAIN_TASK_VIT 6
/* --arch's choices */
typedef enum train_arch { ARCH_TRANSFORMER, ARCH_BAHDANAU } train_arch;
/* --pos-embedding's choices: what is added to the scaled embedding */
typedef enum train_pos { POS_SINUSOID, POS_LEARNED, POS_NONE } train_pos;
/* The largest --num-steps. */
#define TRAIN_MAX_NUM_STEPS 512

struct train_args {
    int task, optimizer, color, arch;
    int rnn, score; /* --arch bahdanau's: S2S_RNN_*, S2S_SCORE_* (0: GRU, additive) */
    int score_given; /* --score was given (the Transformer's default is dot) */
    int reference_loops; /* translate: train with the reference loops (both runs of
                          * the Transformer's --compare-score, timed alike) */
    int arch_given;  /* --arch was given (--compare-score: the Transformer's with
                      * --arch transformer, else Bahdanau's) */
    int posenc, addnorm, causal, bias, compare_posenc, compare_layers, compare_arch;
    int pos_embedding; /* train_pos: --pos-embedding, or --posenc / --no-posenc */
    int compare_rnn, compare_score; /* Bahdanau against itself: GRU/LSTM, additive/dot */
    int explain; /* --explain: the paths in --json's document (train_explain.h) */
    const char *confusion_png; /* --task vit */
    const char *data, *png, *plot, *json, *save, *load, *font, *html, *pos_png;
    long length, vocab, hiddens, heads, steps, batch_size, seed, threads, log_every;
    long layers, ffn; /* −1: the task's default (induction 2 layers) */
    long window;      /* --window R (odd); 0: every key */
    long num_steps, max_examples, min_freq; /* translation; −1: the default */
    long epochs, train_size, test_size, patch; /* --task vit; −1: the default */
    long img_size;    /* --task vit: --img-size; 0: the data's own */
    double dropout, lr, clip;
    long sample;          /* lm: characters generated after training */
    double temperature;   /* lm: the sampling's, > 0 */
    int compare_causal;   /* lm: with the mask and without */
    size_t max_mem;
};

/* Whether the run trains a translation model: --task translate, or a
 * --data file of sentence pairs (d2l's fra.txt, or JSON with "pairs"). */
int train_is_translation(const struct train_args *a);

/* The options only translation reads, refused for the other tasks: exit 2
 * with a message, or EXIT_OK. */
int train_not_translation(const opt_given *g);

/* attn train for a translation model: the whole run, its exit status. */
int train_translate(const struct train_args *a, const opt_given *g, int argc, char **argv);

/* attn train --task lm (train_lm.c, SPEC.md §16): the whole run, its exit
 * status (argc, argv: the command line, as --html's page shows it). */
int train_lm(struct train_args *a, const opt_given *g, int argc, char **argv);

#endif
