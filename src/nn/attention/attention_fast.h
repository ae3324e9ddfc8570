/* attention_fast.h — attention.h's computation arranged to be fast: tiled
 * matrix products, OpenMP across (example, head, query block), and a
 * streaming online softmax that never stores the Nq × Nk weights.
 * attention.c's loops remain the reference; the tests compare the two. */
#ifndef ATTN_ATTENTION_FAST_H
#define ATTN_ATTENTION_FAST_H

#include <stddef.h>

#include "attention.h"
#include "cores.h"

/* out (B, Nq, H) from queries (B, Nq, Dq), keys (B, Nk, Dk), values
 * (B, Nk, Dv), dot-product scoring only. weights (B, NH, Nq, Nk) is filled
 * when not NULL; when NULL, the weights are never stored (streaming).
 * Returns 0, or -1 with the reason in err. */
int mha_forward_fast(float *out, float *weights, const float *queries, const float *keys,
                     const float *values, size_t B, size_t Nq, size_t Nk, const mha_params *m,
                     const mha_masks *mask, const mha_dropout *drop, char *err, size_t errlen);

/* mha_forward_fast keeps its scratch memory (one block, the size of its
 * largest call) for the next call, so that repeated passes do not fault
 * their pages in again; this frees it. */
void mha_fast_release(void);

/* The threads mha_forward_fast uses for these sizes: all, or one when the
 * work (under 2e7 multiply-adds) would not pay for starting them. */
int mha_fast_threads(size_t B, size_t Nq, size_t Nk, size_t H);

#endif
