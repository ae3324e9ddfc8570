/* attention_fast.h — attention.h's computation arranged to be fast: tiled
 * matrix products, OpenMP across (example, head, query block), and a
 * streaming online softmax that never stores the Nq × Nk weights.
 * attention.c's loops remain the reference; the tests compare the two. */
#ifndef ATTN_ATTENTION_FAST_H
#define ATTN_ATTENTION_FAST_H

#include <stddef.h>

#include "attention.h"

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

/* Threads for the parallel loops: attn_set_threads(n) fixes them at n
 * (--threads N); n <= 0 leaves the default. attn_max_threads() is the
 * number for the work about to start: the fixed one, or by default the
 * cores free at this moment (cores_free: the cores OpenMP would use,
 * OMP_NUM_THREADS included, less those other processes keep busy), read
 * again every 20 ms. Results are the same bits for any number, so the
 * count may change from one step to the next; on a machine busy with
 * other work a step then runs on the cores it can have, instead of
 * waiting at every barrier for a thread the system has not scheduled. */
void attn_set_threads(int n);
int attn_max_threads(void);

/* The threads mha_forward_fast uses for these sizes: all, or one when the
 * work (under 2e7 multiply-adds) would not pay for starting them. */
int mha_fast_threads(size_t B, size_t Nq, size_t Nk, size_t H);

#endif
