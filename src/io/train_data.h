/* train_data.h — attn train's data: SPEC.md §9's --data JSON, and the
 * built-in 苹果 corpus (data/apple_train.json, compiled into attn).
 *
 *   {"sequences": [["苹果", "很", "甜"], …],
 *    "labels": ["fruit", …], "label_at": "苹果",        (sequence labels)
 *    "heldout": {"sequences": […], "labels": […]}}     (optional)
 *   {"sequences": [["3", "1", "4"], …], "targets": [["4", "1", "3"], …]}
 *                                   (token targets; null = no target there)
 *
 * The vocabulary is "<pad>" (entry 0, the padding), then every token in
 * order of first appearance: training sequences, training targets, held-out
 * sequences, held-out targets. The classes are the vocabulary (token
 * targets) or the labels in order of first appearance. A sequence label is
 * the target at the first label_at token of its sentence.
 *
 * Errors are one line naming the file and the JSON path:
 *     data.json: $.targets[3]: expected 5 tokens, got 4
 */
#ifndef ATTN_TRAIN_DATA_H
#define ATTN_TRAIN_DATA_H

#include <stddef.h>

#include "encoder_task.h"

struct cJSON;

/* With vocab (V entries) and classes (C) from a saved model (--load), the
 * task uses them and a token or label they lack is an error; NULL: built
 * from the data. task->kind is TASK_DATA. 0, or -1 with the message. */
int train_data_load(train_task *task, const char *path, const char *const *vocab, size_t V,
                    const char *const *classes, size_t C, char *err, size_t errlen);

/* The same from parsed JSON; name stands for the file in messages. */
int train_data_from_json(train_task *task, const struct cJSON *root, const char *name,
                         const char *const *vocab, size_t V, const char *const *classes,
                         size_t C, char *err, size_t errlen);

/* The built-in 苹果 task from the corpus compiled into attn (TASK_APPLE). */
int train_data_apple(train_task *task, const char *const *vocab, size_t V,
                     const char *const *classes, size_t C, char *err, size_t errlen);

/* How many held-out and evaluation sequences a built-in digit task draws. */
#define TRAIN_BUILTIN_HELDOUT 500
#define TRAIN_BUILTIN_EVAL 500

/* A built-in task by its --task name: "reverse" or "previous" (length n,
 * `digits` digit tokens, held-out and evaluation sets drawn from seed) or
 * "apple" (the compiled-in corpus; length and digits unused). vocab and
 * classes as for train_data_load. 0, or -1 with "unknown task "x" (known:
 * reverse, previous, apple)" or another reason in err. */
int train_task_by_name(train_task *task, const char *name, size_t length, size_t digits,
                       unsigned long long seed, const char *const *vocab, size_t V,
                       const char *const *classes, size_t C, char *err, size_t errlen);

/* The corpus's cue words (吃 甜 … for the fruit, 发布 手机 … for the
 * company), NULL-terminated. */
extern const char *const train_apple_cues[];

/* The vocabulary ids of the cue words the task has: ids (room for every
 * cue), *n their number. */
void train_data_cue_ids(const train_task *task, long *ids, size_t *n);

#endif
