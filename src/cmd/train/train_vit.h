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

/* attn train --task vit: the whole run, its exit status (argc, argv: the
 * command line, as --html's page shows it). */
int train_vit(struct train_args *a, const opt_given *g, int argc, char **argv);

#endif
