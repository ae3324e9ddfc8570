/* model_input.h — a model saved by attn train (SPEC.md §9) as the input of
 * attn selfattn: `attn selfattn --input model.json --tokens "苹果 发布 了 新的
 * 产品"` runs the trained attention on those tokens.
 *
 * X (B, N, d) = embedding[token]·√d (+ P when the model was trained with
 * it), as attn train computes it; the W_q, W_k, W_v, W_o of the file; the
 * sentences' lengths as valid_lens when they differ ("<pad>" after a short
 * one, as in training).
 *
 * A stack (--layers N or --ffn) is run here, block by block as attn train
 * runs it (causal when it was trained so): pr->layers, pr->stack_weights
 * (every block's attention) and pr->stack_output (the last block's) hold
 * the result, pr->params and pr->queries block 0's.
 */
#ifndef ATTN_MODEL_INPUT_H
#define ATTN_MODEL_INPUT_H

#include <stddef.h>

#include "problem.h"

/* 1 when the JSON file at path is a model of attn train ("command":
 * "train"), else 0 (also when it cannot be read: the caller's loader
 * then says why). */
int model_input_is_model(const char *path, size_t max_bytes);

/* The problem for the sentences of tokens (--tokens' syntax, "|" between
 * sentences) from the model at path. 0, or -1 with the message in err;
 * *usage is 1 when the error is the command line's (no --tokens). */
int model_input_load(problem *pr, const char *path, const char *tokens, char *err,
                     size_t errlen, int *usage);

#endif
