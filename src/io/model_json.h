/* model_json.h — what every model file shares: attn train's (model_file.h,
 * SPEC.md §9) and a translation model's (s2s_model_file.h, §11) are both a
 * JSON object of known keys, lists of distinct names, counts and a
 * state_dict of float32 tensors, written whole or not at all. The messages
 * name the JSON path ("$.state_dict[\"k\"]: …"); the caller prefixes the
 * file's. */
#ifndef ATTN_MODEL_JSON_H
#define ATTN_MODEL_JSON_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdio.h>

#include "atomic_file.h"
#include "encoder.h"
#include "json_writer.h"

/* ---- writing ----------------------------------------------------------- */

/* Every model file is {"command": "train", …, "state_dict": {…}}. Its
 * beginning, written by jw (set up here) on f: */
void model_json_begin(json_writer *jw, FILE *f);
/* Its end: "state_dict": {name: tensor, …} in the list's order, and the
 * closing brace. 0, or -1 when the writer refused a call (an internal
 * error; write errors of the stream are the caller's to check). */
int model_json_end(json_writer *jw, const tparam *params, size_t n);

/* "state_dict": {name: tensor, …} alone, into the open object of jw (a
 * page's writer sets base64_from: its tensors then base64 objects, which
 * model_json_read_params reads too). */
void model_json_state_dict_write(json_writer *jw, const tparam *params, size_t n);

/* key: [s[0], …, s[n-1]] on one line. */
void model_json_write_strings(json_writer *jw, const char *key, const char *const *s, size_t n);

/* The end of a model file written to af (atomic_open of path) by a
 * writer that returned write_rc: committed when that is 0; else (a refused
 * writer call) abandoned, no file left, with "PATH: internal error:
 * malformed JSON". 0, or -1 with "PATH: …" in err. */
int model_json_commit(atomic_file *af, const char *path, int write_rc, char *err, size_t errlen);

/* ---- reading ----------------------------------------------------------- */

/* The model file at path parsed (up to 1 GiB) and given to reader(root,
 * args, …), which fills args' outputs: 0, or -1 with "PATH: …" in err
 * (json_read_file's messages, or reader's prefixed with the path). */
int model_json_load(const char *path,
                    int (*reader)(const cJSON *root, void *args, char *err, size_t errlen),
                    void *args, char *err, size_t errlen);

/* The value at key, or NULL with "$: missing \"key\"" in err. */
const cJSON *model_json_required(const cJSON *root, const char *key, char *err, size_t errlen);

/* The state_dict at root: an object, or NULL with "$.state_dict: expected
 * an object, got …" in err. */
const cJSON *model_json_state_dict(const cJSON *root, char *err, size_t errlen);

/* root an object whose keys are all among keys (NULL-terminated), else
 * "$.k: unknown key (WHAT has k1, k2, …)". */
int model_json_check_keys(const cJSON *root, const char *const *keys, const char *what,
                          char *err, size_t errlen);

/* A check of a list of names read at path, before they are copied: 0, or
 * -1 with a message in err. */
typedef int model_json_names_check(const char *path, const char *const *v, size_t n,
                                   char *err, size_t errlen);

/* The array of strings at key ("$: missing \"key\"" without it): check
 * (when not NULL) accepts it, it is not empty, every string once; copied
 * into *out, n strings (free with encoder_task.h's train_strings_free).
 * On failure *out is NULL and *n 0. */
int model_json_get_names(const cJSON *root, const char *key, model_json_names_check *check,
                         char ***out, size_t *n, char *err, size_t errlen);

/* The count at key, in [lo, hi], into *out. An absent key is an error
 * ("$: missing \"key\"") when required, else leaves *out as it is. */
int model_json_get_count(const cJSON *root, const char *key, long lo, long hi, int required,
                         size_t *out, char *err, size_t errlen);

/* A configuration that needs far more parameters than the state_dict sd
 * holds numbers is refused before anything is allocated (a file of 100
 * bytes saying num_hiddens 100000 would ask for gigabytes). need is a
 * lower bound on its parameters (over: it overflowed size_t); up to 1 Mi,
 * or twice the numbers in sd, pass, to be checked tensor by tensor. The
 * message: "$.state_dict: N numbers, far fewer than a model of MODEL has
 * parameters (at least NEED)". */
int model_json_check_size(const cJSON *sd, size_t need, int over, const char *model, char *err,
                          size_t errlen);

/* The state_dict sd into the n parameters of a list: every key one of
 * them ("$.state_dict[\"k\"]: not a parameter of this model", followed by
 * hint(k)), every one there ("$.state_dict: missing \"k\""), each of its
 * shape ("$.state_dict[\"k\"]: expected shape (2, 3), got (3)"). */
int model_json_read_params(const cJSON *sd, const tparam *params, size_t n,
                           const char *(*hint)(const char *key), char *err, size_t errlen);

#endif
