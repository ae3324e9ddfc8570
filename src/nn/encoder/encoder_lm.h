/* encoder_lm.h — attn train --task lm's model at work (SPEC.md §16): the
 * unigram baseline it is measured against, and text generated from it
 * one character at a time.
 *
 * Characters are numbered as io/lm_text.h numbers them: class c is
 * vocabulary entry c + 1 (entry 0 is <pad>, never generated), so a
 * context of tokens (n,) holds characters + 1 and the logits (C,) at a
 * position score the next character.
 *
 * Reproducible (SPEC §12): the softmax of sampling uses fm_exp and the
 * draw attn's rng; the same model, seed and temperature give the same
 * characters on every machine.
 */
#ifndef ATTN_ENCODER_LM_H
#define ATTN_ENCODER_LM_H

#include <stddef.h>

#include "encoder.h"
#include "rng.h"

/* The unigram baseline's perplexity: each character's probability from
 * the training text with add-one smoothing over the V characters,
 *   p(c) = (count of c in train + 1) / (ntrain + V),
 * and the perplexity exp(−(1/m) Σ log p(targets[i])) over targets (m,),
 * the characters the model predicts (−1: none there, skipped). train
 * (ntrain,) and targets hold characters 0 … V−1. 0 when m has none. */
double lm_unigram_perplexity(const int *train, size_t ntrain, const int *targets, size_t m,
                             size_t V);

/* The index of the largest of z (C,) (the first of equals): greedy
 * decoding. */
size_t lm_argmax(const float *z, size_t C);

/* A draw from softmax(z / temperature) (C,), temperature > 0:
 *   p_i = exp((z_i − max z) / temperature) / Σ_j exp((z_j − max z) / temperature)
 * u = rng_uniform(r)·Σ, then the first i whose running sum exceeds u. */
size_t lm_pick(const float *z, size_t C, double temperature, rng *r);

/* Generate count characters after prompt (np ≥ 1 tokens, characters + 1)
 * into out (count,) as characters: at each step the last ≤ L tokens
 * (L the context the model was trained on) are run through the model
 * and the logits at the last position give the next character: drawn
 * (lm_pick) at temperature > 0 from a stream seeded with seed, or the
 * argmax at temperature 0 (greedy). 0, or -1 with the reason in err. */
int lm_generate(tmodel *m, const int *prompt, size_t np, size_t L, size_t count,
                double temperature, unsigned long long seed, int *out, char *err,
                size_t errlen);

#endif
