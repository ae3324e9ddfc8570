/* train_posemb.h — attn train's learned positional embedding looked at
 * (SPEC.md §15, zh 10.6's exercise): the learned P (d2l.ai 11.8's
 * pos_embedding, (1, max_len, d)) beside the chapter's sinusoid.
 *
 *   --pos-png FILE   P as a heatmap (positions × d), and under it the
 *                    learned P·Pᵀ beside the sinusoid's P·Pᵀ (max_len ×
 *                    max_len each, each on its own colour scale)
 *   the band         the mean cosine similarity of neighbouring positions
 *                    (|i − j| = 1) and of the others (|i − j| ≥ 2), for
 *                    the learned P and for the sinusoid of the same size:
 *                    a band on P·Pᵀ's diagonal is neighbours more alike
 */
#ifndef ATTN_TRAIN_POSEMB_H
#define ATTN_TRAIN_POSEMB_H

#include <stdio.h>

#include "encoder.h"
#include "render.h"

/* The mean cosine of positions i ≠ j of P (n, d): near, over |i − j| = 1;
 * far, over |i − j| ≥ 2 (0 when there are none). */
typedef struct train_pos_band {
    double learned_near, learned_far;   /* the model's pos_embedding */
    double sinusoid_near, sinusoid_far; /* the chapter's P, (max_len, d) */
    double moved; /* ‖P − P₀‖ / ‖P₀‖, P₀ its start from the seed; NaN: unknown */
} train_pos_band;

/* Both, for a model with a learned P, and how far P moved from the start
 * tmodel_init(seed) gives it (seed < 0: unknown, a model of --load). 0,
 * or -1 when memory runs out. */
int train_pos_band_of(train_pos_band *b, const tmodel *m, long long seed);

/* What --pos-png draws: the model (with a learned P) and the file. */
typedef struct train_pos_png {
    const char *path;
    const tmodel *m;
} train_pos_png;

/* The figure (an output_figure_fn: ctx a train_pos_png): EXIT_OK, or
 * EXIT_RUNTIME after the error line. */
int train_pos_png_write(const void *ctx, text_font *font, FILE *rep);

#endif
