/* train_explain.h — `attn train --explain --json FILE` (SPEC.md §9, §14):
 * the "explain" member, the path of every cell of the probes' attention
 * at the steps the page keeps, so that a train page's hover shows the
 * numbers behind a weight for the step its slider is on.
 *
 * What is stored: nothing of the model. At each kept step the loop is
 * at (train_explain_record, called where train_page_record is), the
 * probes go through the model's forward pass with the weights of that
 * step, each block's attention runs again on that block's input with
 * its trace (mha_forward, the same call and input as the page's
 * weights), and the step's paths are written at once as JSON text,
 * which the member then holds. Their size is bounded: a run keeps at
 * most about TE_MAX_FLOATS numbers of paths.
 *
 * The member, with P probes (those of the first probe's length, as the
 * page's), L layers, NH heads, T tokens:
 *   layers, heads, length, causal   L, NH, T, and the model's mask
 *   stride       every stride-th logged step is kept (and the last): 1,
 *                or a multiple of the page's stride when the paths would
 *                pass TE_MAX_FLOATS (the page then has steps without one)
 *   probes       (P,) {"name": a sense or null, "tokens": its labels}
 *   steps        (kept,) {"step": s, "probes": (P,) of (L,) layer objects}
 * A layer object is the document multihead --explain --json writes for
 * one example (B = 1), the layer's self-attention on its input X_l:
 *   explain            explain_json.h's member: q, k, v, scores, scaled,
 *                      masked, masked_scores, row_max, row_sum_exp,
 *                      head_output, as (1, NH, …)
 *   attention_weights  (1, NH, T, T) the weights, the page's at that step
 */
#ifndef ATTN_TRAIN_EXPLAIN_H
#define ATTN_TRAIN_EXPLAIN_H

#include <stddef.h>

#include "encoder_train.h"
#include "json_writer.h"

#define TE_MAX_FLOATS ((size_t)1 << 20)

/* A probe, borrowed: tokens (len,), their labels, a sense or NULL. */
typedef struct train_explain_probe {
    const int *tokens;
    const char *const *labels;
    size_t len;
    const char *name;
} train_explain_probe;

typedef struct train_explain train_explain;

/* The member's recorder for a run of tr's model over steps steps logged
 * every `every`, its probes (n, borrowed until train_explain_free).
 * EXIT_OK, or EXIT_RUNTIME after its message. */
int train_explain_begin(train_explain **ex, const trainer *tr, const train_explain_probe *probes,
                        size_t n, long steps, long every);

/* The loop has made s steps: a kept step's paths, from tr's weights now.
 * ex NULL: nothing. EXIT_OK, or EXIT_RUNTIME after its message. */
int train_explain_record(train_explain *ex, trainer *tr, long s);

/* The "explain" member into the open object of jw. */
void train_explain_member(json_writer *jw, const train_explain *ex);

void train_explain_free(train_explain *ex);

#endif
