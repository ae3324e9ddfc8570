/* explain_shapes.h — `attn multihead --explain-shapes`: d2l's
 * transpose_qkv and transpose_output walked on labelled entries (which
 * example, token, head and column each row of the (B·NH, N, p) tensor
 * holds), the valid_lens through repeat_interleave beside repeat, what a
 * reshape without the permute would mix, and the heads put back checked
 * against the per-head outputs of --explain. The layouts are
 * src/nn/attention/heads.h's index maps; this module prints them and
 * writes them as JSON.
 */
#ifndef ATTN_EXPLAIN_SHAPES_H
#define ATTN_EXPLAIN_SHAPES_H

#include <stddef.h>

#include "problem.h"

typedef struct shapes_opts {
    int causal;           /* --causal: also mask keys after the query */
    const char *json;     /* --json FILE, "-" for stdout, or NULL */
    size_t max_mem;
} shapes_opts;

/* The walk on pr (loaded or drawn by the caller; dot-product scoring):
 * --max-mem, the reference forward pass with its trace, the heads
 * computed as one batch and compared with it, the text (unless the JSON
 * goes to stdout) and --json. Returns the exit status. */
int shapes_explain_command(const problem *pr, const shapes_opts *o);

#endif
