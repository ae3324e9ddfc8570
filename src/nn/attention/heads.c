/* heads.c — d2l's transpose_qkv, transpose_output and repeat_interleave
 * as index maps, and the heads computed as one batch of slices (see
 * heads.h for the layouts and the dimensions). */
#include "heads.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "fmath.h"
#include "i18n.h"

const int mha_heads_perm[4] = {0, 2, 1, 3};

void mha_permute_index(size_t *src, const size_t shape[4], const int perm[4])
{
    /* the input's strides, row-major */
    const size_t stride[4] = {shape[1] * shape[2] * shape[3], shape[2] * shape[3], shape[3], 1};
    /* the result's shape: axis i of the result is axis perm[i] of the input */
    const size_t out[4] = {shape[perm[0]], shape[perm[1]], shape[perm[2]], shape[perm[3]]};
    size_t i = 0;
    for (size_t o0 = 0; o0 < out[0]; o0++)
        for (size_t o1 = 0; o1 < out[1]; o1++)
            for (size_t o2 = 0; o2 < out[2]; o2++)
                for (size_t o3 = 0; o3 < out[3]; o3++) {
                    /* result [o0, o1, o2, o3] is input [..] with index o_k on axis perm[k] */
                    src[i++] = o0 * stride[perm[0]] + o1 * stride[perm[1]] +
                               o2 * stride[perm[2]] + o3 * stride[perm[3]];
                }
}

void mha_transpose_qkv_index(size_t *src, size_t B, size_t N, size_t H, size_t NH,
                             const int perm[4])
{
    /* 1. reshape (B, N, H) → (B, N, NH, p): the same entries, a new view */
    const size_t view[4] = {B, N, NH, H / NH};
    /* 2. permute(0, 2, 1, 3) → (B, NH, N, p); 3. reshape (B·NH, N, p): no move */
    mha_permute_index(src, view, perm);
}

void mha_transpose_output_index(size_t *src, size_t B, size_t N, size_t H, size_t NH,
                                const int perm[4])
{
    const size_t view[4] = {B, N, NH, H / NH}; /* what transpose_qkv viewed */
    int inv[4];
    size_t moved[4];
    for (int i = 0; i < 4; i++) {
        inv[perm[i]] = i;         /* the permutation that undoes perm */
        moved[i] = view[perm[i]]; /* the shape transpose_qkv's permute made */
    }
    /* 1. reshape (B·NH, N, p) → (B, NH, N, p); 2. permute(0, 2, 1, 3) →
     * (B, N, NH, p); 3. reshape (B, N, H) */
    mha_permute_index(src, moved, inv);
}

void mha_gather(float *out, const float *in, const size_t *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = in[src[i]];
}

void mha_repeat_lens(long *rep, const long *lens, size_t B, size_t cols, size_t NH,
                     int interleave)
{
    for (size_t r = 0; r < B * NH; r++) {
        /* repeat_interleave: rows b·NH … b·NH+NH−1 are example b's;
         * repeat/tile: the whole list again, row r is example r mod B's */
        const size_t b = interleave ? r / NH : r % B;
        memcpy(rep + r * cols, lens + b * cols, cols * sizeof *rep);
    }
}

int mha_sliced_attention(float *out, const float *Q, const float *K, const float *V, size_t S,
                         size_t Nq, size_t Nk, size_t p, const mha_masks *mask)
{
    const double scale = 1.0 / sqrt((double)p);
    float *att = float_alloc(Nk ? Nk : 1); /* (Nk,) one query's scores, then weights */
    if (!att)
        return -1;
    for (size_t s = 0; s < S; s++)
        for (size_t q = 0; q < Nq; q++) {
            const float *q_s = Q + (s * Nq + q) * p; /* (p,) */
            /* scores Q Kᵀ / √p, masked as slice s's length says, softmax */
            for (size_t k = 0; k < Nk; k++) {
                const float *k_s = K + (s * Nk + k) * p; /* (p,) */
                double dot = 0.0;
                for (size_t c = 0; c < p; c++)
                    dot += (double)q_s[c] * k_s[c];
                att[k] = f32_saturate(dot * scale);
                if (mha_is_masked(mask, s, q, k, Nq))
                    att[k] = ATTN_MASK_VALUE;
            }
            softmax_row(att, Nk);
            /* the weighted sum of the values */
            for (size_t c = 0; c < p; c++) {
                double sum = 0.0;
                for (size_t k = 0; k < Nk; k++)
                    sum += (double)att[k] * V[(s * Nk + k) * p + c];
                out[(s * Nq + q) * p + c] = f32_saturate(sum);
            }
        }
    free(att);
    return 0;
}

int mha_heads_batched(float *concat, const float *Q, const float *K, const float *V, size_t B,
                      size_t Nq, size_t Nk, size_t H, size_t NH, const mha_masks *mask,
                      const int perm[4], int interleave, char *err, size_t errlen)
{
    const size_t p = H / NH, cols = mask->per_query ? Nq : 1, nq = B * Nq * H, nk = B * Nk * H;
    /* the sizes were checked by the caller (they fit --max-mem) */
    size_t *iq = malloc(nq * sizeof *iq + 1), *ik = malloc(nk * sizeof *ik + 1);
    size_t *io = malloc(nq * sizeof *io + 1);
    float *Qs = float_alloc(nq + 1), *Ks = float_alloc(nk + 1), *Vs = float_alloc(nk + 1);
    float *Os = float_alloc(nq + 1);
    long *lens = mask->valid_lens ? malloc(B * NH * cols * sizeof *lens) : NULL;
    int status = -1;
    if (!iq || !ik || !io || !Qs || !Ks || !Vs || !Os || (mask->valid_lens && !lens)) {
        snprintf(err, errlen, "%s", _("out of memory for the heads as one batch"));
        goto done;
    }
    /* transpose_qkv: (B, N, H) → (B·NH, N, p), for queries, keys and values */
    mha_transpose_qkv_index(iq, B, Nq, H, NH, perm);
    mha_transpose_qkv_index(ik, B, Nk, H, NH, perm);
    mha_gather(Qs, Q, iq, nq);
    mha_gather(Ks, K, ik, nk);
    mha_gather(Vs, V, ik, nk);
    /* valid_lens, once per head: (B·NH,) or (B·NH, Nq) */
    if (lens)
        mha_repeat_lens(lens, mask->valid_lens, B, cols, NH, interleave);
    const mha_masks sliced = {lens, mask->per_query, mask->causal, 0};
    /* DotProductAttention on the B·NH slices: (B·NH, Nq, p) */
    if (mha_sliced_attention(Os, Qs, Ks, Vs, B * NH, Nq, Nk, p, &sliced)) {
        snprintf(err, errlen, "%s", _("out of memory for the heads as one batch"));
        goto done;
    }
    /* transpose_output: (B·NH, Nq, p) → (B, Nq, H) */
    mha_transpose_output_index(io, B, Nq, H, NH, perm);
    mha_gather(concat, Os, io, nq);
    status = 0;
done:
    FREE_EACH(iq, ik, io, Qs, Ks, Vs, Os, lens);
    return status;
}
