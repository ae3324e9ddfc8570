/* translate_heads.h — `attn translate --input MODEL --head-importance` and
 * `--prune-heads LIST` (d2l 10.5's exercise: how much does each head
 * matter, and what does a model without some of them give?), run by
 * translate.c's command when either option is given (translate_heads.c).
 *
 * A head is named as attn translate prints it, numbered from 1: a kind
 * (enc: the encoder's self-attention, dec: the decoder's masked
 * self-attention, cross: the cross-attention), a block and a head:
 * "enc1.3" is the encoder's block 1, head 3. A head switched off has its
 * output replaced by zeros before W_o (seq2seq.h's s2s_set_heads): the
 * model without it.
 *
 * The pairs measured: the held-out pairs of the model's task, drawn again
 * from the seed its file names (the 200 attn train draws with
 * TRANSLATE_HELDOUT_PAIRS), or --data FILE's held-out pairs ("heldout" of
 * JSON pairs), or every pair of a file without them. BLEU is d2l's (k = 2,
 * greedy decoding, averaged over the pairs, as attn train's held-out
 * BLEU); the loss is the teacher-forced cross-entropy over the targets
 * that are not <pad>, as the trainer computes it.
 */
#ifndef ATTN_TRANSLATE_HEADS_H
#define ATTN_TRANSLATE_HEADS_H

#include <stddef.h>

#include "render.h"

typedef struct translate_heads_args {
    const char *input;    /* the model */
    const char *data;     /* --data FILE, or NULL: the task's held-out pairs */
    const char *prune;    /* --prune-heads LIST, or NULL: --head-importance */
    const char *sentence; /* --prune-heads with a SENTENCE: translated both ways; or NULL */
    const char *png, *json, *font;
    const attn_cmap *cmap;
    size_t max_mem;
} translate_heads_args;

/* The run: EXIT_OK, EXIT_USAGE or EXIT_RUNTIME after the error line. */
int translate_heads(const translate_heads_args *a);

#endif
