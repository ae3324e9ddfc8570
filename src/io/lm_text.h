/* lm_text.h — the text of attn train --task lm (SPEC.md §16): a UTF-8
 * file read as code points, its vocabulary, and the task's windows.
 *
 *   text    (n,) code points, in file order
 *   vocab   (V,) the text's distinct code points, in increasing order
 *   ids     (n,) each character's index in vocab
 *
 * The split: the first n − ⌊n/10⌋ characters train, the last ⌊n/10⌋ are
 * held out. A window of length L at start i reads characters i … i+L−1
 * and its target at position t is character i+t+1 (the next one).
 *
 * In the train_task the vocabulary is "<pad>" (entry 0, as every attn
 * train task has; never in a window) and then the characters, so the
 * token of character c is c + 1 and its class is c (C = V classes).
 */
#ifndef ATTN_LM_TEXT_H
#define ATTN_LM_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "encoder_task.h"

/* The largest text read (bytes). */
#define LM_MAX_BYTES ((size_t)16 << 20)
/* The most training windows: every start while there are at most this
 * many, else starts spaced by the stride that keeps them under it. */
#define LM_MAX_WINDOWS ((size_t)1 << 15)
/* The most windows of the training text the final training figures are
 * measured on (the first ones of its cover, below). */
#define LM_MAX_EVAL_WINDOWS ((size_t)1024)

typedef struct lm_text {
    uint32_t *text; /* (n,) */
    size_t n;
    uint32_t *vocab; /* (V,) sorted */
    size_t V;
    int *ids; /* (n,) */
} lm_text;

/* Decode bytes[0 … len) as UTF-8 into t. name stands for the file in
 * messages: -1 with "NAME: invalid UTF-8 at byte offset K" (K from 0:
 * the first byte that does not start a well-formed character; a NUL byte
 * is refused the same way, as not text), or "out of memory …"; else 0. */
int lm_text_from_bytes(lm_text *t, const char *bytes, size_t len, const char *name, char *err,
                       size_t errlen);

/* The same from a file ("-": standard input), at most LM_MAX_BYTES: -1
 * with "PATH: cannot read: REASON", "PATH: larger than 16 MiB", or
 * lm_text_from_bytes's messages. */
int lm_text_read(lm_text *t, const char *path, char *err, size_t errlen);

void lm_text_free(lm_text *t);

/* How many of n characters train: n − ⌊n/10⌋. */
size_t lm_train_chars(size_t n);

/* The windows of length L over ids (n,) that together predict every
 * character from the second once: starts 0, L, 2L, … and, when (n − 1)
 * is not a multiple of L, one last window ending at the end whose targets
 * are kept only where no earlier window predicted; at most max_windows of
 * them (the first ones). Needs L ≥ 1 and n ≥ L + 1. 0, or -1 (out of memory). */
int lm_cover(train_set *s, const int *ids, size_t n, size_t L, size_t max_windows, char *err,
             size_t errlen);

/* About the bytes lm_task_build allocates for a text of n characters
 * and windows of length L (each window position: a token and a target):
 * 0, or -1 when the count overflows. */
int lm_task_bytes(size_t n, size_t L, size_t *bytes);

/* The task: vocabulary and classes from t, training windows of length L
 * over the training text (every start, or spaced as LM_MAX_WINDOWS
 * says), the held-out text's cover (task->heldout) and the training
 * text's first LM_MAX_EVAL_WINDOWS cover windows (task->eval). kind is
 * TASK_DATA. -1 with "NAME: N characters: too short for --length L (the
 * training and the held-out part (the last 10%) each need L + 1)",
 * "NAME: empty text" or "NAME: --length 0: a window needs at least one
 * character", else 0. */
int lm_task_build(train_task *task, const lm_text *t, size_t L, const char *name, char *err,
                  size_t errlen);

#endif
