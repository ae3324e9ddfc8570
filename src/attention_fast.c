/* attention_fast.c — the computation of attention.c, arranged to be fast.
 *
 * Dimensions as in attention.h (B, Nq, Nk, Dq, Dk, Dv, H, NH, p). The
 * formulas are the same; what changes is the order of the loops:
 *
 *   - every product is one matrix product C = A·B over contiguous memory,
 *     done by gemm() in register tiles of MR × NR outputs, with B packed
 *     into NR-wide panels so that the inner loop streams through memory;
 *   - the heads are first copied out of the (B, N, H) projections into
 *     contiguous (B, NH, N, p) blocks (K transposed), so each head is a
 *     plain matrix;
 *   - OpenMP spreads (example, head, block of QB query rows) tasks over the
 *     cores;
 *   - without the weights tensor (weights == NULL), each block of queries
 *     runs an online softmax over blocks of KB keys (FlashAttention's
 *     trick): a running maximum m, a running sum l and a running output
 *     acc, rescaled by exp(m_old − m_new) whenever the maximum grows. The
 *     Nq × Nk matrix never exists: memory is O(n·d).
 *
 * Sums run in float (the reference sums in double), so results agree with
 * attention.c to about 1e-6 relative; the tests compare the two on every
 * PyTorch fixture.
 */
#include "attention_fast.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "cli.h"

/* A register tile of MR × NR outputs: with AVX-512's 32 vector registers
 * of 16 floats, 6 × 32 (12 registers of sums); with AVX2's 16 registers of
 * 8 floats, 6 × 16 (12 registers as well). */
#define MR 6
#if defined(__AVX512F__)
#define NR 32
#else
#define NR 16
#endif
#define KC 256  /* the depth of one packed panel of B */
#define QB 64   /* query rows in one task */
#define KB 256  /* keys in one block of the online softmax */

void attn_set_threads(int n)
{
#ifdef _OPENMP
    if (n > 0)
        omp_set_num_threads(n);
#else
    (void)n;
#endif
}

int attn_max_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

/* ---- matrix product -------------------------------------------------- */

/* acc (MR, NR) += A (MR rows, stride lda, kc columns) · Bp (kc, NR). */
static void tile_full(float acc[MR][NR], const float *A, size_t lda, const float *Bp,
                      size_t kc)
{
    size_t k, r, c;
    for (k = 0; k < kc; k++) {
        const float *b = Bp + k * NR; /* (NR,) row k of the panel */
        for (r = 0; r < MR; r++) {
            const float a = A[r * lda + k];
#pragma omp simd
            for (c = 0; c < NR; c++)
                acc[r][c] += a * b[c];
        }
    }
}

/* The same for the last, shorter block of mr < MR rows. */
static void tile_part(float acc[MR][NR], const float *A, size_t lda, const float *Bp,
                      size_t kc, size_t mr)
{
    size_t k, r, c;
    for (k = 0; k < kc; k++) {
        const float *b = Bp + k * NR;
        for (r = 0; r < mr; r++) {
            const float a = A[r * lda + k];
#pragma omp simd
            for (c = 0; c < NR; c++)
                acc[r][c] += a * b[c];
        }
    }
}

/* C (M, N) = A (M, K) · B (K, N) + bias (N,) (bias may be NULL), all
 * row-major with leading dimensions ldc, lda, ldb, for the columns j_first
 * … j_last−1; with accumulate, C += A · B instead. Single-threaded: the
 * callers parallelise around it, or over its column panels (gemm_par).
 * Bp is scratch of KC·NR floats. */
static void gemm_panels(float *C, size_t ldc, const float *A, size_t lda, const float *B,
                        size_t ldb, const float *bias, size_t M, size_t K, size_t N,
                        size_t j_first, size_t j_last, int accumulate, float *Bp)
{
    size_t j0, k0, i0, k, r, c;
    for (j0 = j_first; j0 < j_last; j0 += NR) {
        const size_t nr = N - j0 < NR ? N - j0 : NR;
        /* start from the bias (or zero), unless adding to C */
        for (i0 = 0; i0 < M && !accumulate; i0++)
            for (c = 0; c < nr; c++)
                C[i0 * ldc + j0 + c] = bias ? bias[j0 + c] : 0.0f;
        for (k0 = 0; k0 < K; k0 += KC) {
            const size_t kc = K - k0 < KC ? K - k0 : KC;
            /* pack B[k0 … k0+kc, j0 … j0+nr] into Bp (kc, NR), zero-padded */
            for (k = 0; k < kc; k++) {
                const float *src = B + (k0 + k) * ldb + j0;
                for (c = 0; c < NR; c++)
                    Bp[k * NR + c] = c < nr ? src[c] : 0.0f;
            }
            /* C[i0 … i0+MR, j0 … j0+nr] += A[i0 …, k0 …] · Bp */
            for (i0 = 0; i0 < M; i0 += MR) {
                const size_t mr = M - i0 < MR ? M - i0 : MR;
                float acc[MR][NR];
                memset(acc, 0, sizeof acc);
                if (mr == MR)
                    tile_full(acc, A + i0 * lda + k0, lda, Bp, kc);
                else
                    tile_part(acc, A + i0 * lda + k0, lda, Bp, kc, mr);
                for (r = 0; r < mr; r++)
                    for (c = 0; c < nr; c++)
                        C[(i0 + r) * ldc + j0 + c] += acc[r][c];
            }
        }
    }
}

/* The same, the column panels shared out over the threads. Returns -1
 * when scratch memory cannot be had. */
static int gemm_par(float *C, size_t ldc, const float *A, size_t lda, const float *B, size_t ldb,
                    const float *bias, size_t M, size_t K, size_t N)
{
    const size_t panels = (N + NR - 1) / NR;
    int failed = 0;
#pragma omp parallel
    {
        float *Bp = malloc(KC * NR * sizeof *Bp); /* (KC, NR) this thread's panel */
        long t;
        if (!Bp) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 1)
        for (t = 0; t < (long)panels; t++) {
            size_t j0 = (size_t)t * NR;
            if (Bp)
                gemm_panels(C, ldc, A, lda, B, ldb, bias, M, K, N, j0,
                            j0 + NR < N ? j0 + NR : N, 0, Bp);
        }
        free(Bp);
    }
    return failed ? -1 : 0;
}

/* ---- softmax --------------------------------------------------------- */

/* e^x in float, written so that the compiler can vectorise it (no branch,
 * no call): x = n·ln2 + r with |r| <= ln2/2, e^r by a degree-6 polynomial
 * (Taylor, error below 2e-7 relative), 2^n put into the exponent bits.
 * Below −87.3 (e^x under float's smallest normal) the result is 0, as the
 * reference's exp gives for a masked score of −1e6. */
static inline float exp_fast(float x)
{
    const float log2e = 1.44269504f, ln2_hi = 0.693145752f, ln2_lo = 1.42860677e-6f;
    const float xc = x < -87.3f ? -87.3f : x > 88.7f ? 88.7f : x;
    const float n = floorf(xc * log2e + 0.5f);
    const float r = xc - n * ln2_hi - n * ln2_lo;
    const float poly = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 +
                                   r * (1.0f / 120 + r * (1.0f / 720))))));
    union { int i; float f; } scale; /* 2^n from a float's bits, n in −126 … 128 */
    scale.i = ((int)n + 127) << 23;
    return x < -87.3f ? 0.0f : poly * scale.f;
}

/* s[k] ← e^(s[k] − shift) for k < n; returns their sum. */
static float exp_row(float *s, size_t n, float shift)
{
    float sum = 0.0f;
    size_t k;
#pragma omp simd reduction(+ : sum)
    for (k = 0; k < n; k++) {
        s[k] = exp_fast(s[k] - shift);
        sum += s[k];
    }
    return sum;
}

/* The largest of init and s[0 … n−1]. */
static float max_row(const float *s, size_t n, float init)
{
    float m = init;
    size_t k;
#pragma omp simd reduction(max : m)
    for (k = 0; k < n; k++)
        m = s[k] > m ? s[k] : m;
    return m;
}

/* The first masked key of query q of example b: keys from here on get the
 * score −1e6 (mha_is_masked, for a whole row at once). */
static size_t first_masked(const mha_masks *mask, size_t b, size_t q, size_t Nq, size_t Nk)
{
    size_t limit = Nk;
    if (mask->valid_lens) {
        long len = mask->per_query ? mask->valid_lens[b * Nq + q] : mask->valid_lens[b];
        if (len >= 0 && (size_t)len < limit)
            limit = (size_t)len;
    }
    if (mask->causal && q + 1 < limit)
        limit = q + 1;
    return limit;
}

/* ---- the forward pass ------------------------------------------------ */

/* Wᵀ (in, out) of a Linear's weight (out, in). */
static float *transposed(const linear *l)
{
    const size_t out = l->weight.shape[0], in = l->weight.shape[1];
    float *t = malloc(in * out * sizeof *t + 1);
    size_t o, i;
    if (!t)
        return NULL;
    for (o = 0; o < out; o++)
        for (i = 0; i < in; i++)
            t[i * out + o] = l->weight.data[o * in + i];
    return t;
}

/* Scratch of one task: scores of a block, the running output, m and l. */
typedef struct task_mem {
    float *S;   /* (QB, KB) scores of a block; (QB, Nk) rows of weights with dropout */
    float *acc; /* (QB, p) running output */
    float *m;   /* (QB,) running maximum */
    float *l;   /* (QB,) running sum */
    float *Bp;  /* (KC, NR) a packed panel */
} task_mem;

/* One task: example b, head h, query rows q0 … q0+nq−1, weights kept. */
static void block_with_weights(float *concat, float *weights, const float *Qh, const float *KhT,
                               const float *Vh, size_t b, size_t h, size_t q0, size_t nq,
                               size_t Nq, size_t Nk, size_t H, size_t NH, size_t p,
                               const mha_masks *mask, const mha_dropout *drop, task_mem *t)
{
    const size_t bh = b * NH + h;
    float *W = weights + (bh * Nq + q0) * Nk; /* (nq, Nk) these rows of the weights */
    const float *P = W;                         /* what multiplies V */
    size_t q, k;

    /* 1. scores = (Q_h / sqrt(p)) · K_hᵀ straight into the weights rows */
    gemm_panels(W, Nk, Qh + (bh * Nq + q0) * p, p, KhT + bh * p * Nk, Nk, NULL, nq, p, Nk, 0,
                Nk, 0, t->Bp);
    for (q = 0; q < nq; q++) {
        float *w = W + q * Nk;
        float max, sum;
        /* 2. mask, 3. softmax over the keys */
        for (k = first_masked(mask, b, q0 + q, Nq, Nk); k < Nk; k++)
            w[k] = ATTN_MASK_VALUE;
        max = max_row(w, Nk, w[0]);
        sum = exp_row(w, Nk, max);
#pragma omp simd
        for (k = 0; k < Nk; k++)
            w[k] /= sum;
    }
    if (drop && drop->p > 0) { /* training: dropout on a copy of the weights */
        for (q = 0; q < nq; q++)
            for (k = 0; k < Nk; k++) {
                size_t idx = (bh * Nq + q0 + q) * Nk + k;
                t->S[q * Nk + k] =
                    mha_dropout_keep(drop, idx) ? (float)(W[q * Nk + k] / (1.0 - drop->p)) : 0.0f;
            }
        P = t->S;
    }
    /* 4. head output = weights · V_h into this head's columns of concat */
    gemm_panels(concat + (b * Nq + q0) * H + h * p, H, P, Nk, Vh + bh * Nk * p, p, NULL, nq, Nk,
                p, 0, p, 0, t->Bp);
}

/* One task without the weights: the online softmax over blocks of keys. */
static void block_streaming(float *concat, const float *Qh, const float *KhT, const float *Vh,
                            size_t b, size_t h, size_t q0, size_t nq, size_t Nq, size_t Nk,
                            size_t H, size_t NH, size_t p, const mha_masks *mask,
                            const mha_dropout *drop, task_mem *t)
{
    const size_t bh = b * NH + h;
    size_t q, k, k0, c;

    for (q = 0; q < nq; q++) {
        t->m[q] = -INFINITY;
        t->l[q] = 0.0f;
    }
    memset(t->acc, 0, nq * p * sizeof *t->acc);
    for (k0 = 0; k0 < Nk; k0 += KB) {
        const size_t nk = Nk - k0 < KB ? Nk - k0 : KB;
        /* scores of this block: S (nq, nk) = (Q_h / sqrt(p)) · K_h[k0 …]ᵀ */
        gemm_panels(t->S, KB, Qh + (bh * Nq + q0) * p, p, KhT + bh * p * Nk + k0, Nk, NULL, nq,
                    p, nk, 0, nk, 0, t->Bp);
        for (q = 0; q < nq; q++) {
            float *s = t->S + q * KB, *acc = t->acc + q * p;
            float m_old = t->m[q], m_new, rescale, sum;
            size_t limit = first_masked(mask, b, q0 + q, Nq, Nk);
            for (k = limit > k0 ? limit - k0 : 0; k < nk; k++)
                s[k] = ATTN_MASK_VALUE;
            /* the running maximum, and what the old terms must be scaled by */
            m_new = max_row(s, nk, m_old);
            rescale = m_old == -INFINITY ? 0.0f : exp_fast(m_old - m_new);
            sum = exp_row(s, nk, m_new); /* unnormalised weights of the block */
            t->l[q] = t->l[q] * rescale + sum;
            t->m[q] = m_new;
#pragma omp simd
            for (c = 0; c < p; c++)
                acc[c] *= rescale;
            if (drop && drop->p > 0)
                for (k = 0; k < nk; k++)
                    s[k] = mha_dropout_keep(drop, (bh * Nq + q0 + q) * Nk + k0 + k)
                               ? (float)(s[k] / (1.0 - drop->p))
                               : 0.0f;
        }
        /* acc (nq, p) += P (nq, nk) · V_h[k0 …] (nk, p) */
        gemm_panels(t->acc, p, t->S, KB, Vh + (bh * Nk + k0) * p, p, NULL, nq, nk, p, 0, p, 1,
                    t->Bp);
    }
    /* normalise: head output = acc / l */
    for (q = 0; q < nq; q++) {
        float *dst = concat + (b * Nq + q0 + q) * H + h * p;
        for (c = 0; c < p; c++)
            dst[c] = t->acc[q * p + c] / t->l[q];
    }
}

int mha_forward_fast(float *out, float *weights, const float *queries, const float *keys,
                     const float *values, size_t B, size_t Nq, size_t Nk, const mha_params *m,
                     const mha_masks *mask, const mha_dropout *drop, char *err, size_t errlen)
{
    const size_t H = m->num_hiddens, NH = m->num_heads, p = H / NH;
    const size_t qblocks = (Nq + QB - 1) / QB, ntasks = B * NH * qblocks;
    const float scale = (float)(1.0 / sqrt((double)p));
    float *WqT = NULL, *WkT = NULL, *WvT = NULL, *WoT = NULL;
    float *Q = NULL, *K = NULL, *V = NULL;       /* (B, N, H) projections */
    float *Qh = NULL, *KhT = NULL, *Vh = NULL;   /* (B, NH, Nq, p), (B, NH, p, Nk), (B, NH, Nk, p) */
    float *concat = NULL;                        /* (B, Nq, H) */
    size_t b, h, n, c, bytes;
    int failed = 0, status = -1;

    if (m->score != SCORE_DOT) {
        snprintf(err, errlen, "the fast path does dot-product scoring only");
        return -1;
    }
    if (size_mul(B * (Nq > Nk ? Nq : Nk), H * sizeof(float), &bytes)) {
        snprintf(err, errlen, "the attention buffers are too large");
        return -1;
    }
    WqT = transposed(&m->W_q);
    WkT = transposed(&m->W_k);
    WvT = transposed(&m->W_v);
    WoT = transposed(&m->W_o);
    Q = malloc(bytes);
    K = malloc(bytes);
    V = malloc(bytes);
    Qh = malloc(bytes);
    KhT = malloc(bytes);
    Vh = malloc(bytes);
    concat = malloc(bytes);
    if (!WqT || !WkT || !WvT || !WoT || !Q || !K || !V || !Qh || !KhT || !Vh || !concat)
        goto oom;

    /* 1. project: Q = queries·W_qᵀ + b_q, K, V likewise */
    if (gemm_par(Q, H, queries, m->W_q.weight.shape[1], WqT, H, m->W_q.bias.data, B * Nq,
                 m->W_q.weight.shape[1], H) ||
        gemm_par(K, H, keys, m->W_k.weight.shape[1], WkT, H, m->W_k.bias.data, B * Nk,
                 m->W_k.weight.shape[1], H) ||
        gemm_par(V, H, values, m->W_v.weight.shape[1], WvT, H, m->W_v.bias.data, B * Nk,
                 m->W_v.weight.shape[1], H))
        goto oom;

    /* 2. split into heads: contiguous Q_h / sqrt(p), K_hᵀ and V_h */
    for (b = 0; b < B; b++)
        for (h = 0; h < NH; h++) {
            const size_t bh = b * NH + h;
            for (n = 0; n < Nq; n++)
                for (c = 0; c < p; c++)
                    Qh[(bh * Nq + n) * p + c] = Q[(b * Nq + n) * H + h * p + c] * scale;
            for (n = 0; n < Nk; n++)
                for (c = 0; c < p; c++) {
                    KhT[(bh * p + c) * Nk + n] = K[(b * Nk + n) * H + h * p + c];
                    Vh[(bh * Nk + n) * p + c] = V[(b * Nk + n) * H + h * p + c];
                }
        }

    /* 3. every (example, head, block of queries) on its own */
#pragma omp parallel
    {
        task_mem t;
        long task;
        size_t srow = weights ? Nk : KB; /* a row of S */
        t.S = malloc(QB * srow * sizeof(float));
        t.acc = malloc(QB * p * sizeof(float));
        t.m = malloc(QB * sizeof(float));
        t.l = malloc(QB * sizeof(float));
        t.Bp = malloc(KC * NR * sizeof(float));
        if (!t.S || !t.acc || !t.m || !t.l || !t.Bp) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 1)
        for (task = 0; task < (long)ntasks; task++) {
            const size_t bh = (size_t)task / qblocks, q0 = ((size_t)task % qblocks) * QB;
            const size_t nq = Nq - q0 < QB ? Nq - q0 : QB;
            if (failed)
                continue;
            if (weights)
                block_with_weights(concat, weights, Qh, KhT, Vh, bh / NH, bh % NH, q0, nq, Nq,
                                   Nk, H, NH, p, mask, drop, &t);
            else
                block_streaming(concat, Qh, KhT, Vh, bh / NH, bh % NH, q0, nq, Nq, Nk, H, NH, p,
                                mask, drop, &t);
        }
        free(t.S);
        free(t.acc);
        free(t.m);
        free(t.l);
        free(t.Bp);
    }
    if (failed)
        goto oom;

    /* 4. output = concat · W_oᵀ + b_o */
    if (gemm_par(out, H, concat, H, WoT, H, m->W_o.bias.data, B * Nq, H, H))
        goto oom;
    status = 0;
    goto done;
oom:
    snprintf(err, errlen, "out of memory for the attention buffers");
done:
    free(WqT);
    free(WkT);
    free(WvT);
    free(WoT);
    free(Q);
    free(K);
    free(V);
    free(Qh);
    free(KhT);
    free(Vh);
    free(concat);
    return status;
}
