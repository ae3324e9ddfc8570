/* selfattn.h — what `attn multihead` shares beyond its entry point
 * (commands.h): --describe's module print, which `attn cells` prints for
 * the book's `attention.eval()` cells. */
#ifndef ATTN_SELFATTN_H
#define ATTN_SELFATTN_H

#include <stdio.h>

#include "attention.h"

/* d2l's MultiHeadAttention m with dropout p as PyTorch prints the module
 * (repr), without a final newline:
 *   MultiHeadAttention(
 *     (attention): DotProductAttention(
 *       (dropout): Dropout(p=0.5, inplace=False)
 *     )
 *     (W_q): Linear(in_features=100, out_features=100, bias=False)
 *     …
 *   ) */
void selfattn_describe(FILE *f, const mha_params *m, double dropout);

#endif
