/* pool_input.h — `attn pool --input FILE` (SPEC.md §13): the learner's own
 * points as JSON,
 *
 *   {"x_train": [0.3, 1.2, …], "y_train": [1.1, 2.6, …],
 *    "x_test": [0, 0.5, …], "y_truth": [0.0, 1.3, …]}   (y_truth optional)
 *
 * in the given order (not sorted). Every entry a finite number, no list
 * empty, y_train as long as x_train and y_truth as x_test. Errors name the
 * file and the JSON path, e.g.
 *     in.json: $.y_train: expected 50 numbers (as many as $.x_train), got 49
 */
#ifndef ATTN_POOL_INPUT_H
#define ATTN_POOL_INPUT_H

#include <stddef.h>

#include "pool.h"

struct cJSON;

/* The file at path ("-": stdin), at most max_bytes: d filled (pool.h's
 * arrays, freed with pool_data_free; y_truth NULL when absent). 0, or -1
 * with "PATH: $.…: what" in err. */
int pool_input_load(pool_data *d, const char *path, size_t max_bytes, char *err,
                    size_t errlen);

/* The same from parsed JSON; name stands for the file in messages. */
int pool_input_from_json(pool_data *d, const struct cJSON *root, const char *name, char *err,
                         size_t errlen);

#endif
