/* train_vit.h — `attn train --task vit` (train_vit.c, SPEC.md §16): d2l.ai
 * 11.8's Vision Transformer on Fashion-MNIST. */
#ifndef ATTN_TRAIN_VIT_H
#define ATTN_TRAIN_VIT_H

#include <stdio.h>

#include "idx.h"
#include "train_cmd.h"
#include "vit.h"

/* The options only --task vit reads, refused for the other tasks: exit 2
 * with a message, or EXIT_OK. */
int train_vit_only(const struct train_args *a, const opt_given *g);

/* attn train --task vit: the whole run, its exit status. */
int train_vit(struct train_args *a, const opt_given *g);

/* --png (train_vit_png.c): the first 8 test images with the <cls>
 * query's attention over their patches, per head of the last block and
 * rolled out over the blocks. EXIT_OK or EXIT_RUNTIME. */
int train_vit_png(const char *path, const char *font_path, const vit_model *m,
                  const idx_set *test, FILE *rep);

#endif
