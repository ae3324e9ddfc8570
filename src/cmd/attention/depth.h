/* depth.h — `attn selfattn --depth N`: the same self-attention layer
 * applied N times, alone, with a residual connection, and with the
 * residual and LayerNorm (d2l's AddNorm), and at every depth how far the
 * tokens still are from one vector (src/nn/attention/collapse.h defines
 * the two measures). A table, --plot and --json.
 */
#ifndef ATTN_DEPTH_H
#define ATTN_DEPTH_H

#include <stddef.h>

#include "problem.h"

#define DEPTH_MAX 1000 /* --depth's largest value */

typedef struct depth_opts {
    size_t depth;           /* N ≥ 1 */
    int causal;             /* --causal */
    int posenc;             /* X has P added (for the header) */
    const char *inputs;     /* what X is, for the header ("standard normal") */
    const char *plot;       /* --plot FILE, or NULL */
    const char *json;       /* --json FILE, "-" for stdout, or NULL */
    const char *font;       /* --font FILE for the figure, or NULL */
    size_t max_mem;
} depth_opts;

/* The run on pr (self-attention, no valid_lens, X of width num_hiddens:
 * checked here, exit 1 otherwise): --max-mem, the layers, the table
 * (unless the JSON goes to stdout), --json and --plot. Returns the exit
 * status. */
int depth_command(const problem *pr, const depth_opts *o);

#endif
