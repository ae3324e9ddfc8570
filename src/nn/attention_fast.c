/* attention_fast.c — the computation of attention.c, arranged to be fast.
 *
 * Dimensions as in attention.h (B, Nq, Nk, Dq, Dk, Dv, H, NH, p). The
 * formulas are the same; what changes is the order of the loops:
 *
 *   - every product is one matrix product C = A·B (or A·Bᵀ, for the
 *     nn.Linear weights and for Q Kᵀ) in register tiles of MR × NR
 *     outputs, with B packed into NR-wide panels so that the inner loop
 *     streams through memory;
 *   - a head is a slice of columns of Q, K, V: the products read it in
 *     place through a leading dimension of H, nothing is copied;
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
 * PyTorch fixture. Inputs near float32's limits can overflow a float sum
 * (±inf, or NaN from inf − inf): each row of a projection, of scores or of
 * a head's output is checked, and the rare row that is not finite is done
 * again with the reference's double sums saturated to ±FLT_MAX, so no
 * non-finite score reaches a softmax and the weights always sum to 1.
 */
#include "attention_fast.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "checked.h"

/* A double rounded to float32, saturated to ±FLT_MAX where the float would
 * be ±inf: inputs near float32's limits give huge but finite projections
 * and scores, and a non-finite score never reaches a softmax (inf − inf is
 * NaN). (The same in attention.c.) */
static inline float attn_to_float(double x)
{
    return x > FLT_MAX ? FLT_MAX : x < -FLT_MAX ? -FLT_MAX : (float)x;
}

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
#define QB 120  /* query rows in one task, a multiple of MR */
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

int mha_fast_threads(size_t B, size_t Nq, size_t Nk, size_t H)
{
    /* threads only when there is work enough to pay for starting them: the
     * chapter's cell (about 0.2 M multiply-adds) runs faster on one */
    double macs = (double)B * ((double)(Nq + 2 * Nk) * (double)H * (double)H +
                               2.0 * (double)Nq * (double)Nk * (double)H);
    return macs > 2e7 ? attn_max_threads() : 1;
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

/* C[:, 0 … nr) += A (M, kc) · Bp (kc, NR) for one packed panel of B:
 * register tiles of MR rows. */
static void panel_product(float *C, size_t ldc, const float *A, size_t lda, const float *Bp,
                          size_t M, size_t kc, size_t nr)
{
    size_t i0, r, c;
    for (i0 = 0; i0 < M; i0 += MR) {
        const size_t mr = M - i0 < MR ? M - i0 : MR;
        float acc[MR][NR];
        memset(acc, 0, sizeof acc);
        if (mr == MR)
            tile_full(acc, A + i0 * lda, lda, Bp, kc);
        else
            tile_part(acc, A + i0 * lda, lda, Bp, kc, mr);
        for (r = 0; r < mr; r++)
            for (c = 0; c < nr; c++)
                C[(i0 + r) * ldc + c] += acc[r][c];
    }
}

/* Pack B[k0 … k0+kc, j0 … j0+nr] into Bp (kc, NR), zero-padded. With
 * b_trans, B is given transposed, as an (N, K) matrix: element (k, j) is
 * B[j·ldb + k]. */
static void pack_panel(float *Bp, const float *B, size_t ldb, int b_trans, size_t k0, size_t kc,
                       size_t j0, size_t nr)
{
    size_t k, c;
    if (b_trans) {
        for (c = 0; c < NR; c++) {
            const float *src = B + (j0 + c) * ldb + k0; /* row j0+c of Bᵀ */
            for (k = 0; k < kc; k++)
                Bp[k * NR + c] = c < nr ? src[k] : 0.0f;
        }
    } else {
        for (k = 0; k < kc; k++) {
            const float *src = B + (k0 + k) * ldb + j0;
            for (c = 0; c < NR; c++)
                Bp[k * NR + c] = c < nr ? src[c] : 0.0f;
        }
    }
}

/* C (M, N) = A (M, K) · B (K, N) + bias (N,) (bias may be NULL), all
 * row-major with leading dimensions ldc, lda, ldb, for the columns j_first
 * … j_last−1; with accumulate, C += A · B instead; b_trans as for
 * pack_panel (an nn.Linear weight is Bᵀ). Single-threaded: the callers
 * parallelise around it (linear_par). Bp is scratch of KC·NR floats. */
static void gemm_panels(float *C, size_t ldc, const float *A, size_t lda, const float *B,
                        size_t ldb, int b_trans, const float *bias, size_t M, size_t K,
                        size_t N, size_t j_first, size_t j_last, int accumulate, float *Bp)
{
    size_t j0, k0, i, c;
    for (j0 = j_first; j0 < j_last; j0 += NR) {
        const size_t nr = N - j0 < NR ? N - j0 : NR;
        /* start from the bias (or zero), unless adding to C */
        for (i = 0; i < M && !accumulate; i++)
            for (c = 0; c < nr; c++)
                C[i * ldc + j0 + c] = bias ? bias[j0 + c] : 0.0f;
        for (k0 = 0; k0 < K; k0 += KC) {
            const size_t kc = K - k0 < KC ? K - k0 : KC;
            pack_panel(Bp, B, ldb, b_trans, k0, kc, j0, nr);
            panel_product(C + j0, ldc, A + k0, lda, Bp, M, kc, nr);
        }
    }
}

/* C (M, N) += A (M, K) · B (K, N) for a B packed in advance: panel j (its
 * columns j·NR …) starts at Bp + j·pstride and holds rows 0 … K−1 of NR
 * floats. */
static void gemm_packed(float *C, size_t ldc, const float *A, size_t lda, const float *Bp,
                        size_t pstride, size_t M, size_t K, size_t N)
{
    size_t j0, k0;
    for (j0 = 0; j0 < N; j0 += NR) {
        const size_t nr = N - j0 < NR ? N - j0 : NR;
        for (k0 = 0; k0 < K; k0 += KC) {
            const size_t kc = K - k0 < KC ? K - k0 : KC;
            panel_product(C + j0, ldc, A + k0, lda, Bp + (j0 / NR) * pstride + k0 * NR, M, kc,
                          nr);
        }
    }
}

/* Whether s[0 … n−1] are all finite (a vectorised check, cheap next to the
 * products that made them). */
static int row_finite(const float *s, size_t n)
{
    int ok = 1;
    size_t k;
#pragma omp simd reduction(& : ok)
    for (k = 0; k < n; k++)
        ok &= fabsf(s[k]) <= FLT_MAX;
    return ok;
}

/* Y (M, out) = X (M, in) · Wᵀ + bias for an nn.Linear weight W (out, in),
 * the column panels shared out over the threads; rows whose float sums
 * overflowed are done again in double (linear_forward, saturated). Returns
 * -1 when scratch memory cannot be had. */
static int linear_par(float *Y, const float *X, size_t M, const linear *l, int parallel)
{
    const size_t out = l->weight.shape[0], in = l->weight.shape[1];
    const size_t panels = (out + NR - 1) / NR;
    int failed = 0;
    long i;
#pragma omp parallel if (parallel)
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
                gemm_panels(Y, out, X, in, l->weight.data, in, 1, l->bias.data, M, in, out, j0,
                            j0 + NR < out ? j0 + NR : out, 0, Bp);
        }
        free(Bp);
    }
    if (failed)
        return -1;
#pragma omp parallel for if (parallel)
    for (i = 0; i < (long)M; i++)
        if (!row_finite(Y + (size_t)i * out, out))
            linear_forward(Y + (size_t)i * out, X + (size_t)i * in, 1, l);
    return 0;
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

/* ---- rows done again in double -------------------------------------- */

/* The score of a query (already scaled by 1/sqrt(p)) against a key, summed
 * in double and saturated to float as the reference does; −1e6 when the
 * key is masked. */
static float score_exact(const float *qs, const float *kr, size_t p, int masked)
{
    double s = 0.0;
    size_t c;
    if (masked)
        return ATTN_MASK_VALUE;
    for (c = 0; c < p; c++)
        s += (double)qs[c] * kr[c];
    return attn_to_float(s);
}

/* One row of weights w (Nk,) whose float scores were not finite: the
 * scores again in double, then the reference's softmax. Kh is this head's
 * column 0 of K (Nk rows of stride H); keys from limit on are masked. */
static void weights_exact(float *w, const float *qs, const float *Kh, size_t Nk, size_t H,
                          size_t p, size_t limit)
{
    size_t k;
    for (k = 0; k < Nk; k++)
        w[k] = score_exact(qs, Kh + k * H, p, k >= limit);
    softmax_row(w, Nk);
}

/* dst (p,) = Σ_k P[k] V_h[k] in double, saturated: a head's output row
 * whose float sum overflowed. */
static void output_exact(float *dst, const float *P, const float *Vh, size_t Nk, size_t H,
                         size_t p)
{
    size_t k, c;
    for (c = 0; c < p; c++) {
        double sum = 0.0;
        for (k = 0; k < Nk; k++)
            sum += (double)P[k] * Vh[k * H + c];
        dst[c] = attn_to_float(sum);
    }
}

/* The streaming path's fallback for one query row: two passes over the
 * keys (the largest score, then e^(s − max) and Σ e·V) in double, the
 * weights never stored; dropout as in the online loop. acc is scratch of
 * p doubles; idx0 is the flat index of weight (b, h, q, 0). */
static void stream_row_exact(float *dst, double *acc, const float *qs, const float *Kh,
                             const float *Vh, size_t Nk, size_t H, size_t p, size_t limit,
                             const mha_dropout *drop, size_t idx0)
{
    double max = -HUGE_VAL, l = 0.0;
    size_t k, c;
    for (k = 0; k < Nk; k++) {
        double s = score_exact(qs, Kh + k * H, p, k >= limit);
        max = s > max ? s : max;
    }
    for (c = 0; c < p; c++)
        acc[c] = 0.0;
    for (k = 0; k < Nk; k++) {
        double e = exp(score_exact(qs, Kh + k * H, p, k >= limit) - max);
        l += e;
        if (drop && drop->p > 0)
            e = mha_dropout_keep(drop, idx0 + k) ? e / (1.0 - drop->p) : 0.0;
        for (c = 0; c < p; c++)
            acc[c] += e * Vh[k * H + c];
    }
    for (c = 0; c < p; c++) /* l >= 1: the largest term is e^0 */
        dst[c] = attn_to_float(acc[c] / l);
}

/* ---- the forward pass ------------------------------------------------ */

/* Scratch of one task: scores of a block, the running output, m and l. */
typedef struct task_mem {
    float *S;   /* (QB, KB) scores of a block; (QB, Nk) rows of weights with dropout */
    float *acc; /* (QB, p) running output */
    float *m;   /* (QB,) running maximum */
    float *l;   /* (QB,) running sum */
    unsigned char *redo; /* (QB,) rows whose float sums overflowed: done in double */
    double *dacc;        /* (p,) the double sums of such a row */
} task_mem;

/* One task: example b, head h, query rows q0 … q0+nq−1, weights kept.
 * Q is already scaled by 1/sqrt(p); head h is columns h·p … h·p+p−1 of
 * Q (B, Nq, H). Kp and Vp are this head's K_hᵀ and V_h packed in panels
 * (pack_heads). */
static void block_with_weights(float *concat, float *weights, const float *Q, const float *Kp,
                               const float *Vp, const float *Kh, const float *Vh, size_t b,
                               size_t h, size_t q0, size_t nq, size_t Nq, size_t Nk, size_t H,
                               size_t NH, size_t p, const mha_masks *mask,
                               const mha_dropout *drop, task_mem *t)
{
    const size_t bh = b * NH + h;
    float *W = weights + (bh * Nq + q0) * Nk; /* (nq, Nk) these rows of the weights */
    const float *P = W;                         /* what multiplies V */
    size_t q, k;

    /* 1. scores = (Q_h / sqrt(p)) · K_hᵀ straight into the weights rows */
    memset(W, 0, nq * Nk * sizeof *W);
    gemm_packed(W, Nk, Q + (b * Nq + q0) * H + h * p, H, Kp, p * NR, nq, p, Nk);
    for (q = 0; q < nq; q++) {
        float *w = W + q * Nk;
        float max, sum;
        const size_t limit = first_masked(mask, b, q0 + q, Nq, Nk);
        /* 2. mask, 3. softmax over the keys */
        for (k = limit; k < Nk; k++)
            w[k] = ATTN_MASK_VALUE;
        t->redo[q] = !row_finite(w, Nk);
        if (t->redo[q]) { /* a float score overflowed: this row in double */
            weights_exact(w, Q + (b * Nq + q0 + q) * H + h * p, Kh, Nk, H, p, limit);
            continue;
        }
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
    for (q = 0; q < nq; q++)
        memset(concat + (b * Nq + q0 + q) * H + h * p, 0, p * sizeof *concat);
    gemm_packed(concat + (b * Nq + q0) * H + h * p, H, P, Nk, Vp, Nk * NR, nq, Nk, p);
    for (q = 0; q < nq; q++) {
        float *dst = concat + (b * Nq + q0 + q) * H + h * p;
        if (t->redo[q] || !row_finite(dst, p))
            output_exact(dst, P + q * Nk, Vh, Nk, H, p);
    }
}

/* One task without the weights: the online softmax over blocks of keys. */
static void block_streaming(float *concat, const float *Q, const float *Kp, const float *Vp,
                            const float *Kh, const float *Vh, size_t b, size_t h, size_t q0,
                            size_t nq, size_t Nq, size_t Nk, size_t H, size_t NH, size_t p,
                            const mha_masks *mask, const mha_dropout *drop, task_mem *t)
{
    const size_t bh = b * NH + h;
    size_t q, k, k0, c;

    for (q = 0; q < nq; q++) {
        t->m[q] = -INFINITY;
        t->l[q] = 0.0f;
        t->redo[q] = 0;
    }
    memset(t->acc, 0, nq * p * sizeof *t->acc);
    for (k0 = 0; k0 < Nk; k0 += KB) {
        const size_t nk = Nk - k0 < KB ? Nk - k0 : KB;
        /* scores of this block: S (nq, nk) = (Q_h / sqrt(p)) · K_h[k0 …]ᵀ */
        for (q = 0; q < nq; q++)
            memset(t->S + q * KB, 0, nk * sizeof *t->S);
        gemm_packed(t->S, KB, Q + (b * Nq + q0) * H + h * p, H, Kp + (k0 / NR) * p * NR, p * NR,
                    nq, p, nk);
        for (q = 0; q < nq; q++) {
            float *s = t->S + q * KB, *acc = t->acc + q * p;
            float m_old = t->m[q], m_new, rescale, sum;
            size_t limit = first_masked(mask, b, q0 + q, Nq, Nk);
            for (k = limit > k0 ? limit - k0 : 0; k < nk; k++)
                s[k] = ATTN_MASK_VALUE;
            if (t->redo[q] || !row_finite(s, nk)) {
                /* a float score overflowed: the row is done in double at
                 * the end; here it adds nothing */
                t->redo[q] = 1;
                memset(s, 0, nk * sizeof *s);
                continue;
            }
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
        gemm_packed(t->acc, p, t->S, KB, Vp + k0 * NR, Nk * NR, nq, nk, p);
    }
    /* normalise: head output = acc / l */
    for (q = 0; q < nq; q++) {
        float *dst = concat + (b * Nq + q0 + q) * H + h * p;
        if (!t->redo[q]) {
            for (c = 0; c < p; c++)
                dst[c] = t->acc[q * p + c] / t->l[q];
        }
        if (t->redo[q] || !row_finite(dst, p))
            stream_row_exact(dst, t->dacc, Q + (b * Nq + q0 + q) * H + h * p, Kh, Vh, Nk, H, p,
                             first_masked(mask, b, q0 + q, Nq, Nk), drop, (bh * Nq + q0 + q) * Nk);
    }
}

int mha_forward_fast(float *out, float *weights, const float *queries, const float *keys,
                     const float *values, size_t B, size_t Nq, size_t Nk, const mha_params *m,
                     const mha_masks *mask, const mha_dropout *drop, char *err, size_t errlen)
{
    const size_t H = m->num_hiddens, NH = m->num_heads, p = H / NH;
    const size_t qblocks = (Nq + QB - 1) / QB, ntasks = B * NH * qblocks;
    const float scale = (float)(1.0 / sqrt((double)p));
    float *Q = NULL, *K = NULL, *V = NULL; /* (B, Nq, H), (B, Nk, H), (B, Nk, H) */
    float *concat = NULL;                  /* (B, Nq, H) the heads side by side */
    float *Kp = NULL, *Vp = NULL;          /* (B·NH, kp_head), (B·NH, vp_head) packed heads */
    const size_t kpanels = (Nk + NR - 1) / NR, vpanels = (p + NR - 1) / NR;
    const size_t kp_head = kpanels * p * NR, vp_head = vpanels * Nk * NR;
    size_t qbytes, kbytes, pbytes;
    long i;
    int failed = 0, status = -1;
    const int parallel = mha_fast_threads(B, Nq, Nk, H) > 1;

    if (m->score != SCORE_DOT) {
        snprintf(err, errlen, "the fast path does dot-product scoring only");
        return -1;
    }
    if (size_mul(B * Nq, H * sizeof(float), &qbytes) ||
        size_mul(B * Nk, H * sizeof(float), &kbytes) ||
        size_mul(B * NH, (kp_head > vp_head ? kp_head : vp_head) * sizeof(float), &pbytes)) {
        snprintf(err, errlen, "the attention buffers are too large");
        return -1;
    }
    Q = malloc(qbytes);
    K = malloc(kbytes);
    V = malloc(kbytes);
    concat = malloc(qbytes);
    Kp = malloc(pbytes);
    Vp = malloc(pbytes);
    if (!Q || !K || !V || !concat || !Kp || !Vp)
        goto oom;

    /* 1. project: Q = queries·W_qᵀ + b_q, K, V likewise */
    if (linear_par(Q, queries, B * Nq, &m->W_q, parallel) ||
        linear_par(K, keys, B * Nk, &m->W_k, parallel) ||
        linear_par(V, values, B * Nk, &m->W_v, parallel))
        goto oom;
    /* fold the 1/sqrt(p) of the scores into Q */
#pragma omp parallel for simd if (parallel)
    for (i = 0; i < (long)(B * Nq * H); i++)
        Q[i] *= scale;

    /* 2. each head's K_hᵀ and V_h packed in NR-wide panels, once */
#pragma omp parallel for schedule(dynamic, 1) if (parallel)
    for (i = 0; i < (long)(B * NH); i++) {
        const size_t b = (size_t)i / NH, h = (size_t)i % NH, j0max = kpanels * NR;
        float *kp = Kp + (size_t)i * kp_head, *vp = Vp + (size_t)i * vp_head;
        size_t j0;
        /* K_hᵀ (p, Nk): panel j holds keys j·NR … for every one of the p rows */
        for (j0 = 0; j0 < j0max; j0 += NR)
            pack_panel(kp + (j0 / NR) * p * NR, K + b * Nk * H + h * p, H, 1, 0, p, j0,
                       Nk - j0 < NR ? Nk - j0 : NR);
        /* V_h (Nk, p): panel j holds columns j·NR … for every key */
        for (j0 = 0; j0 < vpanels * NR; j0 += NR)
            pack_panel(vp + (j0 / NR) * Nk * NR, V + b * Nk * H + h * p, H, 0, 0, Nk, j0,
                       p - j0 < NR ? p - j0 : NR);
    }

    /* 3. every (example, head, block of queries) on its own */
#pragma omp parallel if (parallel)
    {
        task_mem t;
        long task;
        size_t srow = weights ? Nk : KB; /* a row of S */
        t.S = malloc(QB * srow * sizeof(float));
        t.acc = malloc(QB * p * sizeof(float));
        t.m = malloc(QB * sizeof(float));
        t.l = malloc(QB * sizeof(float));
        t.redo = malloc(QB);
        t.dacc = malloc(p * sizeof(double));
        if (!t.S || !t.acc || !t.m || !t.l || !t.redo || !t.dacc) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 1)
        for (task = 0; task < (long)ntasks; task++) {
            const size_t bh = (size_t)task / qblocks, q0 = ((size_t)task % qblocks) * QB;
            const size_t nq = Nq - q0 < QB ? Nq - q0 : QB;
            if (failed)
                continue;
            /* this head's column 0 of K and V, for rows done again in double */
            const float *Kh = K + (bh / NH) * Nk * H + (bh % NH) * p;
            const float *Vh = V + (bh / NH) * Nk * H + (bh % NH) * p;
            if (weights)
                block_with_weights(concat, weights, Q, Kp + bh * kp_head, Vp + bh * vp_head, Kh,
                                   Vh, bh / NH, bh % NH, q0, nq, Nq, Nk, H, NH, p, mask, drop,
                                   &t);
            else
                block_streaming(concat, Q, Kp + bh * kp_head, Vp + bh * vp_head, Kh, Vh,
                                bh / NH, bh % NH, q0, nq, Nq, Nk, H, NH, p, mask, drop, &t);
        }
        free(t.S);
        free(t.acc);
        free(t.m);
        free(t.l);
        free(t.redo);
        free(t.dacc);
    }
    if (failed)
        goto oom;

    /* 4. output = concat · W_oᵀ + b_o */
    if (linear_par(out, concat, B * Nq, &m->W_o, parallel))
        goto oom;
    status = 0;
    goto done;
oom:
    snprintf(err, errlen, "out of memory for the attention buffers");
done:
    free(Q);
    free(K);
    free(V);
    free(concat);
    free(Kp);
    free(Vp);
    return status;
}
