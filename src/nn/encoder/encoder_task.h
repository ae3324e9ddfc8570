/* encoder_task.h — what attn train learns: a vocabulary, classes, and
 * sequences with their targets, drawn fresh for the built-in tasks or read
 * from a --data file (src/io/train_data.h).
 *
 * A set of n sequences padded to T positions, row-major:
 *   tokens  (n, T) vocabulary ids; 0 is "<pad>", always vocabulary entry 0
 *   lens    (n,)   the real lengths (valid_lens), 1 … T
 *   targets (n, T) class ids, −1 where a position has no target
 *
 * Built-in tasks (vocabulary "<pad>", "0", "1", …; the classes are the
 * vocabulary, so a target is a token):
 *   reverse  — n digits, target at i = the token at n−1−i (anti-diagonal)
 *   previous — target at i = the token at i−1, none at 0 (sub-diagonal)
 *   induction — distinct tokens named by letters ("a" … "z", "A" … "Z",
 *               then "aa", "ab", …): a filler of n − 2s tokens, a segment
 *               A of s tokens (s uniform in n/4 … n/2), then A again; the
 *               target at every position i of the second copy but its
 *               last is the token at i+1 (in … A B … A, B), none elsewhere.
 *               Only a head that finds the earlier copy of token i and
 *               reads what follows it can tell: a previous-token head in
 *               one layer, an induction head in the next.
 */
#ifndef ATTN_ENCODER_TASK_H
#define ATTN_ENCODER_TASK_H

#include <stddef.h>

#include "rng.h"

typedef struct train_set {
    size_t n, T;
    int *tokens;  /* (n, T) */
    long *lens;   /* (n,) */
    int *targets; /* (n, T), −1: none */
} train_set;

/* TASK_APPLE is the built-in 苹果 corpus, read like --data (TASK_DATA). */
typedef enum train_kind {
    TASK_REVERSE,
    TASK_PREVIOUS,
    TASK_APPLE,
    TASK_INDUCTION,
    TASK_DATA
} train_kind;

/* The shortest induction sequence: a segment of n/4 ≥ 2 tokens twice. */
#define TRAIN_INDUCTION_MIN_LEN 8
/* Tokens induction can name: 52 letters, then 26·26 pairs. */
#define TRAIN_INDUCTION_MAX_VOCAB (52 + 26 * 26)

typedef struct train_task {
    train_kind kind;
    char **vocab;        /* (V,) owned strings, vocab[0] = "<pad>" */
    size_t V;
    char **classes;      /* (C,) owned strings */
    size_t C;
    long label_at;       /* vocabulary id of the label token; −1: token targets */
    size_t length;       /* built-in: the sequence length n */
    size_t digits;       /* built-in: how many digit tokens */
    train_set train;     /* --data: the training sequences; built-in: none (n 0) */
    train_set heldout;   /* n 0 when there is none */
    train_set eval;      /* built-in: a fixed set for the final training accuracy */
} train_task;

/* The largest padded length and vocabulary attn train accepts. */
#define TRAIN_MAX_LEN 512
#define TRAIN_MAX_VOCAB 100000

/* Allocate a set of n sequences of T positions (zeroed tokens, lens T,
 * targets −1). 0, or -1 with "out of memory …" in err. */
int train_set_alloc(train_set *s, size_t n, size_t T, char *err, size_t errlen);
void train_set_free(train_set *s);

/* A built-in task: reverse, previous or induction over `digits` tokens
 * (digits, or letters for induction), length n, with heldout_n held-out and eval_n evaluation sequences drawn from the
 * seed (streams of their own, so the training batches never depend on
 * them). 0, or -1 with the reason in err. */
int train_task_builtin(train_task *task, train_kind kind, size_t length, size_t digits,
                       size_t heldout_n, size_t eval_n, unsigned long long seed, char *err,
                       size_t errlen);

/* Fill sequence i of s with random digits and its targets (built-in). */
void train_task_draw(const train_task *task, train_set *s, size_t i, rng *r);

void train_task_free(train_task *task);

/* Free n strings allocated one by one and the array holding them (a
 * vocabulary or a class list); s may be NULL. */
void train_strings_free(char **s, size_t n);

/* A probe example for the figures: the first held-out sequence (else
 * training, else evaluation) whose label is class_id (any sequence when
 * class_id < 0 or the task has token targets): *tokens (len,) points into
 * the task. -1 when there is none. */
int train_task_probe(const train_task *task, long class_id, const int **tokens, size_t *len);

/* The vocabulary id of a token, or −1. */
long train_task_token(const train_task *task, const char *token);

#endif
