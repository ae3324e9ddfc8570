/* heads.h — how d2l's MultiHeadAttention cuts Q, K and V into heads and
 * puts the heads back: its transpose_qkv and transpose_output, and the
 * valid_lens repeated once per head. Dimensions as in attention.h (B, N,
 * H, NH, p = H / NH).
 *
 * d2l computes every head in one batched DotProductAttention. To make the
 * heads a batch it takes W_q(X) (B, N, H) and
 *   reshape  (B, N, NH, p)      head h is columns h·p … h·p+p−1 (no move)
 *   permute(0, 2, 1, 3)  (B, NH, N, p)   the heads before the tokens
 *   reshape  (B·NH, N, p)       slice b·NH + h: example b, head h
 * and back, from the heads' outputs (B·NH, N, p):
 *   reshape  (B, NH, N, p) → permute(0, 2, 1, 3) (B, N, NH, p) → reshape (B, N, H)
 * A reshape of a contiguous tensor moves nothing; the permute moves every
 * entry. Each slice b·NH + h is masked with example b's length, so the
 * lengths go through repeat_interleave(valid_lens, NH, dim=0) (b0 b0 b1
 * b1 …), not repeat/tile (b0 b1 b0 b1 …).
 *
 * Here a layout is an index map: src[i] is the flat index of the input
 * entry that entry i of the (contiguous) result is read from. Data are
 * moved by gathering through a map (mha_gather), so the labels a learner
 * reads and the numbers the check computes come from the same maps.
 */
#ifndef ATTN_HEADS_H
#define ATTN_HEADS_H

#include <stddef.h>

#include "attention.h"

/* d2l's permutation of transpose_qkv and transpose_output. */
extern const int mha_heads_perm[4]; /* {0, 2, 1, 3} */

/* src (d0·d1·d2·d3,) ← for each entry of x.permute(perm), contiguous, the
 * flat index of x (shape[0], shape[1], shape[2], shape[3]) it holds. perm
 * is a permutation of 0 … 3. */
void mha_permute_index(size_t *src, const size_t shape[4], const int perm[4]);

/* transpose_qkv with permutation perm (d2l: mha_heads_perm; {0, 1, 2, 3}
 * is a reshape without the permute): src (B·NH·N·p,) ← the flat index into
 * X (B, N, H) of each entry of the (B·NH, N, p) result. */
void mha_transpose_qkv_index(size_t *src, size_t B, size_t N, size_t H, size_t NH,
                             const int perm[4]);

/* transpose_output, the inverse of transpose_qkv with the same perm:
 * src (B·N·H,) ← the flat index into the heads' outputs (B·NH, N, p) of
 * each entry of the (B, N, H) result. */
void mha_transpose_output_index(size_t *src, size_t B, size_t N, size_t H, size_t NH,
                                const int perm[4]);

/* out[i] = in[src[i]] for i < n. */
void mha_gather(float *out, const float *in, const size_t *src, size_t n);

/* valid_lens (B,) or (B, cols) once per head, into rep (B·NH,) or
 * (B·NH, cols): with interleave, torch.repeat_interleave(valid_lens, NH,
 * dim=0) (row b·NH + h is example b's, as d2l); without,
 * valid_lens.repeat(NH) (1-D; .repeat(NH, 1) for 2-D, as tile), row
 * i·B + b is example b's. cols is 1 for 1-D lengths. */
void mha_repeat_lens(long *rep, const long *lens, size_t B, size_t cols, size_t NH,
                     int interleave);

/* d2l's DotProductAttention on S slices: out (S, Nq, p) = softmax(masked
 * Q Kᵀ / √p) · V for Q (S, Nq, p), K and V (S, Nk, p); mask's valid_lens
 * are (S,) or (S, Nq) (the repeated lengths), slice s masked as example s.
 * The same arithmetic, in the same order, as mha_forward's steps 3–7.
 * Returns 0, or -1 when memory runs out. */
int mha_sliced_attention(float *out, const float *Q, const float *K, const float *V, size_t S,
                         size_t Nq, size_t Nk, size_t p, const mha_masks *mask);

/* The heads as d2l computes them, put back: concat (B, Nq, H) ← Q (B, Nq,
 * H), K and V (B, Nk, H) (the projections) through transpose_qkv with
 * perm, mha_sliced_attention on the B·NH slices with the lengths of mask
 * repeated (interleave as mha_repeat_lens), and transpose_output. With
 * mha_heads_perm and interleave it equals mha_forward's concatenated
 * heads (mha_trace.concat) bit for bit. Returns 0, or -1 with "out of
 * memory …" in err. */
int mha_heads_batched(float *concat, const float *Q, const float *K, const float *V, size_t B,
                      size_t Nq, size_t Nk, size_t H, size_t NH, const mha_masks *mask,
                      const int perm[4], int interleave, char *err, size_t errlen);

#endif
