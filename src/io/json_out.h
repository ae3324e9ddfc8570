/* json_out.h — JSON written straight to a stream, without building a tree
 * in memory (a 10000×512 matrix would need hundreds of MB as cJSON nodes).
 * Input JSON is read with cJSON; output is written here and tested by
 * parsing it back with cJSON.
 *
 * Numbers are printed with "%.9g", enough digits to round-trip a float32
 * (SPEC.md §3). Nothing here checks for write errors: the caller checks
 * the stream (atomic_commit, or main for standard output).
 */
#ifndef ATTN_JSON_OUT_H
#define ATTN_JSON_OUT_H

#include <stdio.h>
#include <stddef.h>

/* A JSON string literal with the needed escapes. */
void json_write_string(FILE *f, const char *s);

/* A float32 as "%.9g" (finite values only: JSON has no NaN). */
void json_write_float(FILE *f, float v);

/* A double parameter as the shortest "%.17g"-exact text ("10000", "0.5"). */
void json_write_double(FILE *f, double v);

/* A row-major tensor as nested arrays, shape (shape[0], …, shape[ndim-1]):
 * the innermost arrays on one line each, outer levels indented by `indent`
 * spaces per level, starting at the current column `indent0`. */
void json_write_tensor(FILE *f, const float *data, size_t ndim, const size_t *shape,
                       int indent0);

#endif
