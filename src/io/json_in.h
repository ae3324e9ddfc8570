/* json_in.h — JSON input read with cJSON, checked at every place.
 *
 * Every error message names the place in JSON path notation ($.queries[1][3])
 * with what was expected and what was found, e.g.
 *     $.queries[1][3]: expected 100 numbers, got 99
 * The caller prefixes the file name and the command (attn CMD: FILE: …).
 * Functions return 0, or -1 with the message in err[errlen].
 */
#ifndef ATTN_JSON_IN_H
#define ATTN_JSON_IN_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "tensor.h"

/* Read and parse a whole file ("-" is standard input). Refuses a missing or
 * unreadable file, a directory, an empty file, bytes that are not JSON
 * (with line and column), anything after the JSON value, and files larger
 * than max_bytes. The caller frees the result with cJSON_Delete. */
cJSON *json_read_file(const char *path, size_t max_bytes, char *err, size_t errlen);

/* Parse text[0 … len), NUL-terminated at len, as json_read_file parses a
 * file it has read (a NUL byte inside, or anything after the value, is an
 * error with its line and column); name stands for the file in messages.
 * For a caller that has read the bytes itself. */
cJSON *json_parse(const char *name, const char *text, size_t len, char *err, size_t errlen);

/* The nested arrays of numbers at node as a tensor of min_ndim … max_ndim
 * dimensions: rectangular, every entry a finite number within float32's
 * range. path names node in messages ("$.queries"). */
int json_get_tensor(const cJSON *node, const char *path, size_t min_ndim, size_t max_ndim,
                    tensor *out, char *err, size_t errlen);

/* The same from the object json_writer writes for a page (json_tensor_base64):
 * {"dtype": "float32", "shape": [...], "base64": "..."}, its float32 values
 * little-endian; every size at least 1, the bytes exactly the shape's,
 * every number finite. */
int json_get_tensor_base64(const cJSON *node, const char *path, size_t min_ndim,
                           size_t max_ndim, tensor *out, char *err, size_t errlen);

/* Integers >= 0 and <= max at node, 1-D or 2-D: out gets shape[0] × shape[1]
 * values (shape[1] = 1 and *ndim = 1 for a 1-D array). The caller frees *out. */
int json_get_lens(const cJSON *node, const char *path, long max, long **out, size_t *ndim,
                  size_t shape[2], char *err, size_t errlen);

/* An array of strings; *out is an array of n pointers into the cJSON tree
 * (valid while it lives), freed by the caller with free(). */
int json_get_strings(const cJSON *node, const char *path, const char ***out, size_t *n,
                     char *err, size_t errlen);

/* A non-negative integer (num_heads). */
int json_get_count(const cJSON *node, const char *path, long min, long max, long *out,
                   char *err, size_t errlen);

/* The JSON type of node in words: "a string", "an array", … */
const char *json_type_name(const cJSON *node);

/* A JSON path as attn's messages write them: "$", then members ".name"
 * (any characters but '.' and '[') and indices "[3]", e.g.
 * "$.attention_weights" or "$.cross_attention[1]". json_path_check: 0 when
 * path has that form, else -1 with what is wrong in err. json_at_path: the
 * node of root at path (checked first), or NULL with the place and the
 * reason in err, e.g. "$.cross_attention[4]: no such index (the array has
 * 2 entries)" or "$.weights: no such member". */
int json_path_check(const char *path, char *err, size_t errlen);
const cJSON *json_at_path(const cJSON *root, const char *path, char *err, size_t errlen);

#endif
