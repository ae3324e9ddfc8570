/* vit_show.h — what a trained Vision Transformer shows (SPEC.md §16),
 * for `attn train --task vit` and `attn vit`: the <cls> figure
 * (vit_png.c) and one image through a model (vit.c). */
#ifndef ATTN_VIT_SHOW_H
#define ATTN_VIT_SHOW_H

#include <stdio.h>

#include "idx.h"
#include "vit.h"

#define VIT_PNG_MAX 16 /* rows of the <cls> figure */

/* One image as the model reads it. */
typedef struct vit_picture {
    const float *pixels; /* (S, S) in [0, 1], S the model's img_size */
    int label;           /* its true class, or -1 (a learner's own image) */
} vit_picture;

/* The <cls> figure of n ≤ VIT_PNG_MAX pictures to path: each row the
 * image, the last block's heads and the rollout, with its labels.
 * EXIT_OK or EXIT_RUNTIME (said on stderr). */
int vit_png(const char *path, const char *font_path, const vit_model *m, const vit_picture *pics,
            size_t n, FILE *rep);

/* The same for the first n (at most VIT_PNG_MAX) images of set, whose
 * sides must be the model's. */
int vit_png_set(const char *path, const char *font_path, const vit_model *m, const idx_set *set,
                size_t n, FILE *rep);

#endif
