/* attention_fast.c — the computation of attention.c, arranged to be fast.
 *
 * Dimensions as in attention.h (B, Nq, Nk, Dq, Dk, Dv, H, NH, p). The
 * formulas are the same; what changes is the order of the loops:
 *
 * The steps keep the reference's numbers (1. project, 2. scores and their
 * scale, 3. mask, 4. softmax, 5. the weighted sum of the values into
 * concat, 6. the output projection); what changes is the order of the
 * loops:
 *
 *   - every product is one matrix product C = A·B (or A·Bᵀ, for the
 *     nn.Linear weights and for Q Kᵀ) in register tiles of MR × NR or
 *     MR × 2·NR outputs that hold the whole depth of the product, with B
 *     packed into NR-wide panels so that the inner loop streams through
 *     memory; C is written once;
 *   - 1. the three projections run as one set of tasks (projection, block
 *     of MC rows, panel of W), each weight packed once per pass; the
 *     1/sqrt(p) of step 2 is folded into Q;
 *   - a head is a slice of columns of Q, K, V: the products read Q_h in
 *     place through a leading dimension of H; K_hᵀ and V_h are packed once;
 *   - one OpenMP parallel region runs the whole pass as phases (pack W,
 *     project, check rows, pack heads, attention tasks of (example, head,
 *     block of QB query rows), the same for W_o), each phase's items
 *     handed out by an atomic counter, without OpenMP's barriers;
 *   - without the weights tensor (weights == NULL), each block of queries
 *     runs an online softmax over blocks of KB keys (FlashAttention's
 *     trick): a running maximum m, a running sum l and a running output
 *     acc, rescaled by exp(m_old − m_new) whenever the maximum grows. The
 *     Nq × Nk matrix never exists: memory is O(n·d).
 *
 * The tiles and the softmax are written in lanes.h's 16-float values, one
 * AVX-512 register, two AVX2 or four NEON registers: every output of a
 * product is one sum over the depth in order, a fused multiply-add a term;
 * the softmax's e^x and its sum of 16 partial sums are lanes.h's. So the
 * numbers are the same on every machine (SPEC §12), whatever its vector
 * width; only the tile's width NR follows the registers the machine has.
 * With AVX-512, the transposed packing (data movement only) uses its
 * intrinsics.
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
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "checked.h"
#include "clock.h"
#include "cores.h"
#include "fmath.h"
#include "lanes.h"
#include "i18n.h"

/* A register tile of MR × NR outputs: with AVX-512's 32 vector registers
 * of 16 floats, 6 × 32 (12 registers of sums); with AVX2's 16 registers of
 * 8 floats, 6 × 16 (12 registers as well). */
#define MR 6
#if defined(__AVX512F__)
#define NR 32
#else
#define NR 16
#endif
#define QB 48   /* query rows in one task, a multiple of MR */
#define KB 512  /* keys in one block of the online softmax */

int mha_fast_threads(size_t B, size_t Nq, size_t Nk, size_t H)
{
    /* threads only when there is work enough to pay for starting them: the
     * chapter's cell (about 0.2 M multiply-adds) runs faster on one */
    double macs = (double)B * ((double)(Nq + 2 * Nk) * (double)H * (double)H +
                               2.0 * (double)Nq * (double)Nk * (double)H);
    return macs > 2e7 ? cores_threads() : 1;
}

/* ---- matrix product -------------------------------------------------- */

/* The tiles hold their sums as NV vectors of 16 lanes a row (lanes.h): NR
 * columns are NV = NR/16 vectors. Each output is one sum over the depth
 * k = 0 … kc−1 in order, from 0, one fused multiply-add a term, so the
 * tile's shape (the machine's NR) never changes a result. The sums live in
 * local variables (registers) and are stored once, at the end. */
#define NV (NR / V16)

/* out (MR, NR) = A (mr ≤ MR rows, stride lda, kc columns) · Bp (kc, NR)
 * (the rows from mr on are left 0): a full tile with mr = MR, or the
 * last, shorter block. */
static inline void tile_part(f32x16 out[MR][NV], const float *A, size_t lda, const float *Bp,
                      size_t kc, size_t mr)
{
    f32x16 acc[MR][NV];
    size_t k, r, v;
    for (r = 0; r < MR; r++)
        for (v = 0; v < NV; v++)
            acc[r][v] = v16_splat(0.0f);
    for (k = 0; k < kc; k++) {
        f32x16 b[NV];
        for (v = 0; v < NV; v++)
            b[v] = v16_load(Bp + k * NR + v * V16);
        for (r = 0; r < mr; r++) {
            const f32x16 a = v16_splat(A[r * lda + k]);
            for (v = 0; v < NV; v++)
                acc[r][v] = v16_fma(a, b[v], acc[r][v]);
        }
    }
    memcpy(out, acc, sizeof acc);
}

/* A full tile: mr = MR. */
static void tile_full(f32x16 out[MR][NV], const float *A, size_t lda, const float *Bp,
                      size_t kc)
{
    tile_part(out, A, lda, Bp, kc, MR);
}

/* out (MR, 2·NR) = A (MR rows, stride lda, kc columns) · [Bp0 Bp1]: two
 * panels side by side, 24 vector registers of sums with AVX-512 (each
 * broadcast of A feeds twice the multiply-adds). */
static void tile_full2(f32x16 out[MR][2 * NV], const float *A, size_t lda, const float *Bp0,
                       const float *Bp1, size_t kc)
{
    f32x16 acc[MR][2 * NV];
    size_t k, r, v;
    for (r = 0; r < MR; r++)
        for (v = 0; v < 2 * NV; v++)
            acc[r][v] = v16_splat(0.0f);
    for (k = 0; k < kc; k++) {
        f32x16 b[2 * NV];
        for (v = 0; v < NV; v++) {
            b[v] = v16_load(Bp0 + k * NR + v * V16);
            b[NV + v] = v16_load(Bp1 + k * NR + v * V16);
        }
        for (r = 0; r < MR; r++) {
            const f32x16 a = v16_splat(A[r * lda + k]);
            for (v = 0; v < 2 * NV; v++)
                acc[r][v] = v16_fma(a, b[v], acc[r][v]);
        }
    }
    memcpy(out, acc, sizeof acc);
}

/* One product C = A·B of one panel, or of two side by side: C[:, 0 … w)
 * of M rows, A (M, kc) of stride lda times Bp (kc, NR) (and Bp1, the next
 * NR columns, when not NULL); w = nr, or NR + nr with Bp1. With add,
 * C += A·B; otherwise C = A·B + bias (bias: w values, or NULL for none).
 * The register tiles hold the whole depth kc, so C is written once. */
typedef struct panel_op {
    float *C;
    size_t ldc;
    const float *A;
    size_t lda;
    const float *Bp, *Bp1;
    size_t M, kc, nr;
    const float *bias;
    int add;
} panel_op;

/* C[row, 0 … w) (+)= acc[0 … w) (+ bias) */
static inline void tile_store(const panel_op *op, float *dst, const float *acc, size_t w)
{
    size_t c;
    if (w == 2 * NR && !op->add && !op->bias) { /* the common case, its width known */
#pragma omp simd
        for (c = 0; c < 2 * NR; c++)
            dst[c] = acc[c];
    } else if (op->add) {
#pragma omp simd
        for (c = 0; c < w; c++)
            dst[c] += acc[c];
    } else if (op->bias) {
#pragma omp simd
        for (c = 0; c < w; c++)
            dst[c] = acc[c] + op->bias[c];
    } else {
#pragma omp simd
        for (c = 0; c < w; c++)
            dst[c] = acc[c];
    }
}

static void panel_product(const panel_op *op)
{
    size_t i0, r, v;
    for (i0 = 0; i0 < op->M; i0 += MR) {
        const size_t mr = op->M - i0 < MR ? op->M - i0 : MR;
        const float *A = op->A + i0 * op->lda;
        if (op->Bp1) {
            f32x16 acc[MR][2 * NV];
            float row[2 * NR];
            if (mr == MR) {
                tile_full2(acc, A, op->lda, op->Bp, op->Bp1, op->kc);
            } else {
                f32x16 part0[MR][NV], part1[MR][NV];
                tile_part(part0, A, op->lda, op->Bp, op->kc, mr);
                tile_part(part1, A, op->lda, op->Bp1, op->kc, mr);
                for (r = 0; r < mr; r++)
                    for (v = 0; v < NV; v++) {
                        acc[r][v] = part0[r][v];
                        acc[r][NV + v] = part1[r][v];
                    }
            }
            for (r = 0; r < mr; r++) {
                for (v = 0; v < 2 * NV; v++)
                    v16_store(row + v * V16, acc[r][v]);
                tile_store(op, op->C + (i0 + r) * op->ldc, row, NR + op->nr);
            }
        } else {
            f32x16 acc[MR][NV];
            float row[2 * NR]; /* (tile_store may be given 2·NR) */
            if (mr == MR)
                tile_full(acc, A, op->lda, op->Bp, op->kc);
            else
                tile_part(acc, A, op->lda, op->Bp, op->kc, mr);
            for (r = 0; r < mr; r++) {
                for (v = 0; v < NV; v++)
                    v16_store(row + v * V16, acc[r][v]);
                tile_store(op, op->C + (i0 + r) * op->ldc, row, op->nr);
            }
        }
    }
}

#if defined(__AVX512F__)
/* dst[i·ld + c] = src[c·lds + i] for a 16 × 16 block: rows of src become
 * columns of dst, by 64 shuffles in registers. */
static void transpose16(float *dst, size_t ld, const float *src, size_t lds)
{
    __m512 r[16], t[16];
    int i;
    for (i = 0; i < 16; i++)
        r[i] = _mm512_loadu_ps(src + (size_t)i * lds);
    for (i = 0; i < 16; i += 2) { /* pairs of 32-bit elements */
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (i = 0; i < 16; i += 4) { /* 64-bit pairs: 4 × 4 blocks in each 128-bit lane */
        r[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i]),
                                                   _mm512_castps_pd(t[i + 2])));
        r[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[i]),
                                                       _mm512_castps_pd(t[i + 2])));
        r[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i + 1]),
                                                       _mm512_castps_pd(t[i + 3])));
        r[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[i + 1]),
                                                       _mm512_castps_pd(t[i + 3])));
    }
    /* r[4q + j] holds, in 128-bit lane L, elements 4L … 4L+3 of column j of
     * the 4 × 4 block of rows 4q … 4q+3; gather the lanes */
    for (i = 0; i < 4; i++) {
        t[i] = _mm512_shuffle_f32x4(r[i], r[4 + i], 0x44);      /* lanes 0, 1 | 0, 1 */
        t[4 + i] = _mm512_shuffle_f32x4(r[i], r[4 + i], 0xEE);  /* lanes 2, 3 | 2, 3 */
        t[8 + i] = _mm512_shuffle_f32x4(r[8 + i], r[12 + i], 0x44);
        t[12 + i] = _mm512_shuffle_f32x4(r[8 + i], r[12 + i], 0xEE);
    }
    for (i = 0; i < 4; i++) {
        _mm512_storeu_ps(dst + (size_t)i * ld, _mm512_shuffle_f32x4(t[i], t[8 + i], 0x88));
        _mm512_storeu_ps(dst + (size_t)(4 + i) * ld, _mm512_shuffle_f32x4(t[i], t[8 + i], 0xDD));
        _mm512_storeu_ps(dst + (size_t)(8 + i) * ld,
                         _mm512_shuffle_f32x4(t[4 + i], t[12 + i], 0x88));
        _mm512_storeu_ps(dst + (size_t)(12 + i) * ld,
                         _mm512_shuffle_f32x4(t[4 + i], t[12 + i], 0xDD));
    }
}
#endif

/* Pack B[0 … K, j0 … j0+nr] into Bp (K, NR), zero-padded to NR columns.
 * With b_trans, B is given transposed, as an (N, K) matrix: element (k, j)
 * is B[j·ldb + k] (an nn.Linear weight, or a head's K_h for K_hᵀ). */
static void pack_panel(float *Bp, const float *B, size_t ldb, int b_trans, size_t K, size_t j0,
                       size_t nr)
{
    size_t k, c, k0 = 0;
    if (b_trans) {
#if defined(__AVX512F__)
        /* full panels: 16 × 16 blocks transposed in registers */
        for (; nr == NR && k0 + 16 <= K; k0 += 16)
            for (c = 0; c < NR; c += 16)
                transpose16(Bp + k0 * NR + c, NR, B + (j0 + c) * ldb + k0, ldb);
#endif
        for (c = 0; c < NR; c++) {
            const float *src = B + (j0 + c) * ldb; /* row j0+c of Bᵀ */
            for (k = k0; k < K; k++)
                Bp[k * NR + c] = c < nr ? src[k] : 0.0f;
        }
    } else {
        for (k = 0; k < K; k++) {
            const float *src = B + k * ldb + j0;
            for (c = 0; c < NR; c++)
                Bp[k * NR + c] = c < nr ? src[c] : 0.0f;
        }
    }
}

/* C (M, N) = A (M, K) · B (K, N), or C += A·B with add, for a B packed in
 * advance (pack_panel): panel j (columns j·NR …) starts at Bp + j·pstride
 * and holds rows 0 … K−1 of NR floats. */
static void gemm_packed(float *C, size_t ldc, const float *A, size_t lda, const float *Bp,
                        size_t pstride, size_t M, size_t K, size_t N, int add)
{
    size_t j0 = 0;
    for (; j0 + NR < N; j0 += 2 * NR) { /* two panels, the second maybe narrower */
        panel_op op = {C + j0, ldc, A, lda, Bp + (j0 / NR) * pstride,
                       Bp + (j0 / NR + 1) * pstride, M, K,
                       N - j0 - NR < NR ? N - j0 - NR : NR, NULL, add};
        panel_product(&op);
    }
    if (j0 < N) { /* one last panel */
        panel_op op = {C + j0, ldc, A, lda, Bp + (j0 / NR) * pstride, NULL, M, K, N - j0, NULL,
                       add};
        panel_product(&op);
    }
}

/* The largest of init and s[0 … n−1]; *finite tells whether every s[k]
 * is finite (one pass for both; the maximum is exact in any order). A
 * float is finite when its bits without the sign are at most FLT_MAX's. */
static float max_row(const float *s, size_t n, float init, int *finite)
{
    const i32x16 abs_mask = (i32x16){0} + 0x7fffffff, big = (i32x16){0} + 0x7f7fffff;
    f32x16 m = v16_splat(init);
    i32x16 bad = (i32x16){0}; /* lanes that met a non-finite value */
    int32_t lanes[V16];
    size_t k = 0;
    for (; k + V16 <= n; k += V16) {
        const f32x16 x = v16_load(s + k);
        m = v16_max(x, m);
        bad |= ((i32x16)x & abs_mask) > big;
    }
    if (k < n) { /* the tail, padded with its first element: it changes nothing */
        const f32x16 x = v16_load_part(s + k, n - k, s[k]);
        m = v16_max(x, m);
        bad |= ((i32x16)x & abs_mask) > big;
    }
    memcpy(lanes, &bad, sizeof lanes);
    *finite = 1;
    for (k = 0; k < V16; k++)
        *finite &= lanes[k] == 0;
    return v16_hmax(m);
}

/* Whether s[0 … n−1] are all finite */
static int row_finite(const float *s, size_t n)
{
    int finite;
    (void)max_row(s, n, 0.0f, &finite);
    return finite;
}

/* ---- 1. and 6., the projections -------------------------------------- */

/* One projection Y (M, out) = X (M, in) · Wᵀ + bias of an nn.Linear weight W
 * (out, in), then Y *= scale. */
typedef struct projection {
    float *Y;
    const float *X;
    size_t M;
    const linear *l;
    float scale; /* 1, or Q's 1/sqrt(p) */
    float *Wp;   /* set by project: W packed, panel j of in × NR floats at Wp + j·in·NR */
} projection;

#define MC 96 /* rows of X in one task of a projection: MC × in floats stay in L2 */

/* The floats of W's packed panels for pr[0 … n−1] together. */
static size_t packed_floats(const projection *pr, size_t n)
{
    size_t i, total = 0;
    for (i = 0; i < n; i++) /* sizes already checked: at most the output's floats */
        total += (pr[i].l->weight.shape[0] + NR - 1) / NR * NR * pr[i].l->weight.shape[1];
    return total;
}

/* ---- work shared out without barriers -------------------------------- */

/* The forward pass runs in one parallel region as a sequence of phases;
 * the items of a phase go to whichever thread asks next (an atomic
 * counter), and a thread starts the next phase once every item of this one
 * is done. A thread that the system has not scheduled yet takes no items
 * and holds nobody up: on a machine shared with other work, the pass then
 * waits only for items in progress, not for every thread at every step
 * (as OpenMP's barriers would). */
typedef struct phase {
    atomic_size_t next; /* the next item to hand out */
    atomic_size_t done; /* items finished */
    size_t count;
} phase;

static void phase_init(phase *ph, size_t count)
{
    atomic_init(&ph->next, 0);
    atomic_init(&ph->done, 0);
    ph->count = count;
}

/* The next item of ph for this thread, or 0 when none is left. */
static int phase_take(phase *ph, size_t *item)
{
    *item = atomic_fetch_add(&ph->next, 1);
    return *item < ph->count;
}

static void phase_done(phase *ph)
{
    atomic_fetch_add(&ph->done, 1); /* after this item's writes (sequentially consistent) */
}

/* Wait until every item of ph is done (giving the core away while
 * waiting long: the thread that holds the last item may need it). */
static void phase_wait(phase *ph)
{
    unsigned spins = 0;
    while (atomic_load(&ph->done) < ph->count)
        if (++spins > 256)
            sched_yield();
}

/* ---- 1. and 6., the projections, as phases ---------------------------- */

/* Up to three projections done together: their weights' panels, their
 * tasks of (projection, MC rows, one panel of W), and their rows. */
typedef struct proj_set {
    projection *pr;
    size_t n;
    size_t np[3], nb[3];  /* panels of W, blocks of rows */
    size_t off[4], toff[4], roff[4]; /* the first panel, task, row of each */
    phase pack, tasks, rows;
} proj_set;

#define ROWS_ITEM 32 /* rows in one item of the row pass */

/* Set up ps for pr[0 … n−1] (n <= 3), W's packed panels in Wp
 * (packed_floats(pr, n) floats). */
static void proj_init(proj_set *ps, projection *pr, size_t n, float *Wp)
{
    size_t i;
    ps->pr = pr;
    ps->n = n;
    ps->off[0] = ps->toff[0] = ps->roff[0] = 0;
    for (i = 0; i < n; i++) {
        const size_t out = pr[i].l->weight.shape[0], in = pr[i].l->weight.shape[1];
        ps->np[i] = (out + NR - 1) / NR;
        ps->nb[i] = (pr[i].M + MC - 1) / MC;
        ps->off[i + 1] = ps->off[i] + ps->np[i];
        ps->toff[i + 1] = ps->toff[i] + ps->np[i] * ps->nb[i];
        ps->roff[i + 1] = ps->roff[i] + (pr[i].M + ROWS_ITEM - 1) / ROWS_ITEM;
        pr[i].Wp = Wp;
        Wp += ps->np[i] * NR * in;
    }
    phase_init(&ps->pack, ps->off[n]);
    phase_init(&ps->tasks, ps->toff[n]);
    phase_init(&ps->rows, ps->roff[n]);
}

/* Which projection item t of a phase with first items first[] belongs to. */
static size_t proj_of(const size_t *first, size_t t)
{
    size_t w = 0;
    while (t >= first[w + 1])
        w++;
    return w;
}

/* This thread's share of the projections: W's panels packed once; then Y
 * in tasks ordered (projection, block of rows, panel), so that the threads
 * share a block of X while it is in cache; then the rows: a row whose
 * float sums overflowed is done again in double (linear_forward,
 * saturated), and the scale applied. */
static void proj_run(proj_set *ps)
{
    size_t t;
    while (phase_take(&ps->pack, &t)) {
        const size_t w = proj_of(ps->off, t), j = t - ps->off[w];
        const linear *l = ps->pr[w].l;
        const size_t out = l->weight.shape[0], in = l->weight.shape[1];
        pack_panel(ps->pr[w].Wp + j * in * NR, l->weight.data, in, 1, in, j * NR,
                   out - j * NR < NR ? out - j * NR : NR);
        phase_done(&ps->pack);
    }
    phase_wait(&ps->pack);
    while (phase_take(&ps->tasks, &t)) {
        const size_t w = proj_of(ps->toff, t), rest = t - ps->toff[w];
        const size_t rb = rest / ps->np[w], j = rest % ps->np[w];
        const projection *pr = &ps->pr[w];
        const size_t out = pr->l->weight.shape[0], in = pr->l->weight.shape[1];
        const size_t r0 = rb * MC, j0 = j * NR;
        panel_op op = {pr->Y + r0 * out + j0, out, pr->X + r0 * in, in, pr->Wp + j * in * NR,
                       NULL, pr->M - r0 < MC ? pr->M - r0 : MC, in,
                       out - j0 < NR ? out - j0 : NR,
                       pr->l->bias.data ? pr->l->bias.data + j0 : NULL, 0};
        panel_product(&op);
        phase_done(&ps->tasks);
    }
    phase_wait(&ps->tasks);
    while (phase_take(&ps->rows, &t)) {
        const size_t w = proj_of(ps->roff, t), r0 = (t - ps->roff[w]) * ROWS_ITEM;
        const projection *pr = &ps->pr[w];
        const size_t out = pr->l->weight.shape[0], in = pr->l->weight.shape[1];
        size_t r, c;
        for (r = r0; r < pr->M && r < r0 + ROWS_ITEM; r++) {
            float *y = pr->Y + r * out;
            if (!row_finite(y, out))
                linear_forward(y, pr->X + r * in, 1, pr->l);
            if (pr->scale != 1.0f) {
#pragma omp simd
                for (c = 0; c < out; c++)
                    y[c] *= pr->scale;
            }
        }
        phase_done(&ps->rows);
    }
    phase_wait(&ps->rows);
}

/* ---- softmax --------------------------------------------------------- */

/* s[k] ← e^(s[k] − shift) for k < n, returns their sum: lanes.h's e^x and
 * its sum of 16 partial sums, the same bits on every machine. */
static float exp_row(float *s, size_t n, float shift) { return v16_exp_row(s, n, shift); }

/* The first masked key of query q of example b: keys from here on get the
 * score −1e6 (mha_is_masked, for a whole row at once); and in *start the
 * first key a window lets q see (0 without --window): keys before it are
 * masked too. */
static size_t first_masked(const mha_masks *mask, size_t b, size_t q, size_t Nq, size_t Nk,
                           size_t *start)
{
    size_t limit = Nk;
    *start = 0;
    if (mask->window) {
        /* the R keys centred on q, or (causal) the R keys ending at q */
        const size_t before = mask->causal ? mask->window - 1 : (mask->window - 1) / 2;
        const size_t after = mask->causal ? 0 : (mask->window - 1) / 2;
        *start = q > before ? q - before : 0;
        if (q + after + 1 < limit)
            limit = q + after + 1;
    }
    if (mask->valid_lens) {
        long len = mask->per_query ? mask->valid_lens[b * Nq + q] : mask->valid_lens[b];
        if (len >= 0 && (size_t)len < limit)
            limit = (size_t)len;
    }
    if (mask->causal && q + 1 < limit)
        limit = q + 1;
    return limit;
}

/* ---- the attention of one block of queries ---------------------------- */

/* What every task of one forward pass reads: the projections, each head's
 * K_hᵀ and V_h packed, the sizes, the masks and the dropout. Head h of an
 * example is columns h·p … h·p+p−1 of Q, K, V (stride H); Q is already
 * scaled by 1/sqrt(p). */
typedef struct mha_job {
    float *concat;  /* (B, Nq, H) the heads' outputs side by side */
    float *weights; /* (B, NH, Nq, Nk), or NULL: streaming */
    const float *Q; /* (B, Nq, H) */
    const float *K; /* (B, Nk, H) */
    const float *V; /* (B, Nk, H) */
    const float *Kp; /* (B·NH) × kp_head: K_hᵀ (p, Nk) in NR-wide panels of keys */
    const float *Vp; /* (B·NH) × vp_head: V_h (Nk, p) in NR-wide panels of columns */
    size_t kp_head, vp_head;
    size_t B, Nq, Nk, H, NH, p;
    const mha_masks *mask;
    const mha_dropout *drop; /* NULL or p = 0: none */
} mha_job;

/* One task: example b, head h, query rows q0 … q0+nq−1. */
typedef struct mha_task {
    size_t b, h, q0, nq;
} mha_task;

/* Scratch of one thread. */
typedef struct task_mem {
    float *S;   /* (QB, KB) scores of a block; (QB, Nk) rows of weights with dropout */
    float *acc; /* (QB, p) running output */
    float *m;   /* (QB,) running maximum */
    float *l;   /* (QB,) running sum */
    unsigned char *redo; /* (QB,) rows whose float sums overflowed: done in double */
    double *dacc;        /* (p,) the double sums of such a row */
} task_mem;

static const float *task_q(const mha_job *j, const mha_task *t, size_t q)
{
    return j->Q + (t->b * j->Nq + t->q0 + q) * j->H + t->h * j->p; /* (p,) Q_h[q0 + q] */
}

static const float *task_kh(const mha_job *j, const mha_task *t)
{
    return j->K + t->b * j->Nk * j->H + t->h * j->p; /* K_h[0], rows of stride H */
}

static const float *task_vh(const mha_job *j, const mha_task *t)
{
    return j->V + t->b * j->Nk * j->H + t->h * j->p; /* V_h[0], rows of stride H */
}

static float *task_out(const mha_job *j, const mha_task *t, size_t q)
{
    return j->concat + (t->b * j->Nq + t->q0 + q) * j->H + t->h * j->p; /* (p,) in concat */
}

static int has_dropout(const mha_job *j)
{
    return j->drop && j->drop->p > 0;
}

/* The flat index of weight (b, h, q0 + q, k), the one dropout draws for. */
static size_t weight_index(const mha_job *j, const mha_task *t, size_t q, size_t k)
{
    return ((t->b * j->NH + t->h) * j->Nq + t->q0 + q) * j->Nk + k;
}

/* ---- rows done again in double -------------------------------------- */

/* The score of a query (already scaled by 1/sqrt(p)) against a key, summed
 * in double and saturated to float as the reference does; −1e6 when the
 * key is masked (steps 2 and 3 of one score). */
static float score_exact(const float *qs, const float *kr, size_t p, int masked)
{
    double s = 0.0;
    size_t c;
    if (masked)
        return ATTN_MASK_VALUE;
    for (c = 0; c < p; c++)
        s += (double)qs[c] * kr[c];
    return f32_saturate(s);
}

/* Row q of a task's weights w (Nk,) whose float scores were not finite:
 * 2. the scores again in double, 3. the mask (before start, from limit on), 4. the
 * reference's softmax. */
static void weights_exact(const mha_job *j, const mha_task *t, size_t q, float *w,
                          size_t start, size_t limit)
{
    const float *qs = task_q(j, t, q), *Kh = task_kh(j, t);
    size_t k;
    for (k = 0; k < j->Nk; k++)
        w[k] = score_exact(qs, Kh + k * j->H, j->p, k < start || k >= limit);
    softmax_row(w, j->Nk);
}

/* 5. Row q of a task's head output, Σ_k P[k] V_h[k] in double, saturated:
 * for a row whose float sum overflowed. */
static void output_exact(const mha_job *j, const mha_task *t, size_t q, const float *P)
{
    const float *Vh = task_vh(j, t);
    float *dst = task_out(j, t, q);
    size_t k, c;
    for (c = 0; c < j->p; c++) {
        double sum = 0.0;
        for (k = 0; k < j->Nk; k++)
            sum += (double)P[k] * Vh[k * j->H + c];
        dst[c] = f32_saturate(sum);
    }
}

/* The streaming path's fallback for row q of a task: two passes over the
 * keys in double (2.–3. the largest masked score; then 4. e^(s − max),
 * their sum, dropout, and 5. Σ e·V_h), the weights never stored. acc is
 * scratch of p doubles. */
static void stream_row_exact(const mha_job *j, const mha_task *t, size_t q, double *acc)
{
    const float *qs = task_q(j, t, q), *Kh = task_kh(j, t), *Vh = task_vh(j, t);
    size_t start;
    const size_t limit = first_masked(j->mask, t->b, t->q0 + q, j->Nq, j->Nk, &start);
    const size_t H = j->H;
    float *dst = task_out(j, t, q);
    double max = -HUGE_VAL, l = 0.0;
    size_t k, c;
    for (k = 0; k < j->Nk; k++) {
        double s = score_exact(qs, Kh + k * H, j->p, k < start || k >= limit);
        max = s > max ? s : max;
    }
    for (c = 0; c < j->p; c++)
        acc[c] = 0.0;
    for (k = 0; k < j->Nk; k++) {
        double e = fm_exp(score_exact(qs, Kh + k * H, j->p, k < start || k >= limit) - max);
        l += e;
        if (has_dropout(j))
            e = mha_dropout_keep(j->drop, weight_index(j, t, q, k)) ? e / (1.0 - j->drop->p)
                                                                     : 0.0;
        for (c = 0; c < j->p; c++)
            acc[c] += e * Vh[k * H + c];
    }
    for (c = 0; c < j->p; c++) /* l >= 1: the largest term is e^0 */
        dst[c] = f32_saturate(acc[c] / l);
}

/* ---- the two kinds of task --------------------------------------------- */

/* One task with the weights kept: its rows of the weights tensor are
 * filled, then multiply V_h. */
static void block_with_weights(const mha_job *j, const mha_task *t, task_mem *mem)
{
    const size_t Nk = j->Nk, p = j->p, bh = t->b * j->NH + t->h;
    float *W = j->weights + (bh * j->Nq + t->q0) * Nk; /* (nq, Nk) these rows of the weights */
    const float *P = W;                                  /* what multiplies V */
    size_t q, k;

    /* 2. scores = (Q_h / sqrt(p)) · K_hᵀ straight into the weights rows
     * (the scale was folded into Q in step 1) */
    gemm_packed(W, Nk, task_q(j, t, 0), j->H, j->Kp + bh * j->kp_head, p * NR, t->nq, p, Nk, 0);
    for (q = 0; q < t->nq; q++) {
        float *w = W + q * Nk;
        float max, sum, inv;
        int finite;
        size_t start;
        const size_t limit = first_masked(j->mask, t->b, t->q0 + q, j->Nq, Nk, &start);
        /* 3. mask: keys from limit on (beyond valid_len, or after q) and
         * before start (outside a window) get −1e6 */
        for (k = limit; k < Nk; k++)
            w[k] = ATTN_MASK_VALUE;
        for (k = 0; k < start && k < Nk; k++)
            w[k] = ATTN_MASK_VALUE;
        /* 4. softmax over the keys */
        max = max_row(w, Nk, w[0], &finite);
        mem->redo[q] = !finite;
        if (mem->redo[q]) { /* a float score overflowed: this row in double */
            weights_exact(j, t, q, w, start, limit);
            continue;
        }
        sum = exp_row(w, Nk, max);
        inv = 1.0f / sum; /* sum >= 1: the largest term is e^0 */
#pragma omp simd
        for (k = 0; k < Nk; k++)
            w[k] *= inv;
    }
    if (has_dropout(j)) { /* (training only) dropout, on a copy of the weights */
        for (q = 0; q < t->nq; q++)
            for (k = 0; k < Nk; k++)
                mem->S[q * Nk + k] = mha_dropout_keep(j->drop, weight_index(j, t, q, k))
                                         ? (float)(W[q * Nk + k] / (1.0 - j->drop->p))
                                         : 0.0f;
        P = mem->S;
    }
    /* 5. head output = weights · V_h, the weighted sum of the values, into
     * this head's columns of concat */
    gemm_packed(task_out(j, t, 0), j->H, P, Nk, j->Vp + bh * j->vp_head, Nk * NR, t->nq, Nk, p,
                0);
    for (q = 0; q < t->nq; q++)
        if (mem->redo[q] || !row_finite(task_out(j, t, q), p))
            output_exact(j, t, q, P + q * Nk);
}

/* One task without the weights: an online softmax over blocks of KB keys. */
static void block_streaming(const mha_job *j, const mha_task *t, task_mem *mem)
{
    const size_t Nk = j->Nk, p = j->p, bh = t->b * j->NH + t->h;
    const float *Kp = j->Kp + bh * j->kp_head, *Vp = j->Vp + bh * j->vp_head;
    size_t q, k, k0, c;

    for (q = 0; q < t->nq; q++) {
        mem->m[q] = -INFINITY;
        mem->l[q] = 0.0f;
        mem->redo[q] = 0;
    }
    for (k0 = 0; k0 < Nk; k0 += KB) {
        const size_t nk = Nk - k0 < KB ? Nk - k0 : KB;
        /* 2. scores of this block: S (nq, nk) = (Q_h / sqrt(p)) · K_h[k0 …]ᵀ */
        gemm_packed(mem->S, KB, task_q(j, t, 0), j->H, Kp + (k0 / NR) * p * NR, p * NR, t->nq,
                    p, nk, 0);
        for (q = 0; q < t->nq; q++) {
            float *s = mem->S + q * KB, *acc = mem->acc + q * p;
            float m_old = mem->m[q], m_new, rescale, sum;
            size_t start;
            const size_t limit = first_masked(j->mask, t->b, t->q0 + q, j->Nq, Nk, &start);
            int finite;
            /* 3. mask: from limit on, and before start (a window) */
            for (k = limit > k0 ? limit - k0 : 0; k < nk; k++)
                s[k] = ATTN_MASK_VALUE;
            for (k = 0; k0 + k < start && k < nk; k++)
                s[k] = ATTN_MASK_VALUE;
            /* 4. softmax, online: the running maximum */
            m_new = max_row(s, nk, m_old, &finite);
            if (mem->redo[q] || !finite) {
                /* a float score overflowed: the row is done in double at
                 * the end; here it adds nothing */
                mem->redo[q] = 1;
                memset(s, 0, nk * sizeof *s);
                continue;
            }
            /* and what the old terms must be scaled by */
            rescale = m_old == -INFINITY ? 0.0f : v16_exp1(m_old - m_new);
            sum = exp_row(s, nk, m_new); /* unnormalised weights of the block */
            mem->l[q] = mem->l[q] * rescale + sum;
            mem->m[q] = m_new;
            if (k0 > 0) {
#pragma omp simd
                for (c = 0; c < p; c++)
                    acc[c] *= rescale;
            }
            if (has_dropout(j)) /* (training only) dropout */
                for (k = 0; k < nk; k++)
                    s[k] = mha_dropout_keep(j->drop, weight_index(j, t, q, k0 + k))
                               ? (float)(s[k] / (1.0 - j->drop->p))
                               : 0.0f;
        }
        /* 5. the weighted sum of the values, so far: acc (nq, p) (+)= P (nq, nk)
         * · V_h[k0 …] (nk, p); the first block stores */
        gemm_packed(mem->acc, p, mem->S, KB, Vp + k0 * NR, Nk * NR, t->nq, nk, p, k0 > 0);
    }
    /* 4. (the softmax's division) head output = acc / l */
    for (q = 0; q < t->nq; q++) {
        float *dst = task_out(j, t, q);
        if (!mem->redo[q]) {
            for (c = 0; c < p; c++)
                dst[c] = mem->acc[q * p + c] / mem->l[q];
        }
        if (mem->redo[q] || !row_finite(dst, p))
            stream_row_exact(j, t, q, mem->dacc);
    }
}

/* ---- scratch memory, kept between calls ------------------------------ */

/* A forward pass needs tens of MB of buffers. Allocated afresh on every
 * call, the C library gives large blocks back to the kernel when they are
 * freed, and the next call pays a page fault for every 4 KiB again (a
 * tenth of a BERT-base layer's time on 2 cores). So the block of the last
 * call is kept for the next: taken on entry (atomically: two calls at the
 * same time never share it), given back on exit; a larger need replaces
 * it. mha_fast_release frees it. */
static _Atomic(struct kept_block *) kept;

typedef struct kept_block {
    size_t bytes; /* usable bytes after the header */
    max_align_t align[];
} kept_block;

static kept_block *block_take(size_t bytes)
{
    kept_block *b = atomic_exchange(&kept, NULL);
    if (b && b->bytes >= bytes)
        return b;
    free(b);
    if (bytes > SIZE_MAX - sizeof *b - 64 || (b = malloc(sizeof *b + bytes + 64)) == NULL)
        return NULL;
    b->bytes = bytes + 64;
    return b;
}

static void block_give(kept_block *b)
{
    free(atomic_exchange(&kept, b));
}

void mha_fast_release(void)
{
    free(atomic_exchange(&kept, NULL));
}

/* Buffers carved one after the other from a block, each 64-byte aligned:
 * a first pass with base NULL adds up the size. */
typedef struct carver {
    char *base;
    size_t off;
    int too_large;
} carver;

/* Room for a × b elements of size bytes. */
static void *carve(carver *c, size_t a, size_t b, size_t size)
{
    size_t bytes;
    void *p;
    if (size_mul(a, b, &bytes) || size_mul(bytes, size, &bytes) ||
        bytes > SIZE_MAX / 2 - c->off) {
        c->too_large = 1;
        return NULL;
    }
    p = c->base ? c->base + c->off : NULL;
    c->off += (bytes + 63) / 64 * 64;
    return p;
}

/* Every buffer of one forward pass. */
typedef struct fast_buffers {
    float *Q, *K, *V; /* (B, Nq, H), (B, Nk, H), (B, Nk, H) */
    float *concat;    /* (B, Nq, H) the heads side by side */
    float *Kp, *Vp;   /* (B·NH, kp_head), (B·NH, vp_head) packed heads */
    float *Wp;        /* the packed weights of one pass of projections */
    task_mem *tm;     /* (threads,) each thread's scratch */
} fast_buffers;

/* The buffers for the sizes of job (its pointers unused), wp_floats of
 * packed weights and the scratch of each of threads. */
static void carve_all(carver *c, fast_buffers *f, const mha_job *job, size_t wp_floats,
                      int threads)
{
    const size_t B = job->B, Nq = job->Nq, Nk = job->Nk, H = job->H, NH = job->NH, p = job->p;
    const size_t srow = job->weights ? Nk : KB; /* a row of S */
    int i;
    /* B·Nq, B·Nk and B·NH: checked by the caller (B·Nq·H fits) */
    f->Q = carve(c, B * Nq, H, sizeof(float));
    f->concat = carve(c, B * Nq, H, sizeof(float));
    f->K = carve(c, B * Nk, H, sizeof(float));
    f->V = carve(c, B * Nk, H, sizeof(float));
    f->Kp = carve(c, B * NH, job->kp_head, sizeof(float));
    f->Vp = carve(c, B * NH, job->vp_head, sizeof(float));
    f->Wp = carve(c, wp_floats, 1, sizeof(float));
    f->tm = carve(c, (size_t)threads, 1, sizeof(task_mem));
    for (i = 0; i < threads; i++) {
        task_mem t;
        t.S = carve(c, QB, srow, sizeof(float));
        t.acc = carve(c, QB, p, sizeof(float));
        t.m = carve(c, QB, 1, sizeof(float));
        t.l = carve(c, QB, 1, sizeof(float));
        t.redo = carve(c, QB, 1, 1);
        t.dacc = carve(c, p, 1, sizeof(double));
        if (f->tm)
            f->tm[i] = t;
    }
}

/* ---- the forward pass ------------------------------------------------ */

/* The sizes of job's packed heads (kp_head, vp_head) and of every buffer,
 * checked, then one kept block carved into f for them all: the block, or
 * NULL with err set. */
static kept_block *take_buffers(fast_buffers *f, mha_job *job, size_t wp_floats, int threads,
                                char *err, size_t errlen)
{
    const size_t B = job->B, Nq = job->Nq, Nk = job->Nk, H = job->H, NH = job->NH, p = job->p;
    const size_t kpanels = (Nk + NR - 1) / NR, vpanels = (p + NR - 1) / NR;
    carver c = {NULL, 0, 0};
    kept_block *block;
    size_t x;
    if (size_mul(B, Nq > Nk ? Nq : Nk, &x) || size_mul(x, H, &x) || size_mul(B, NH, &x) ||
        size_mul(kpanels * NR, p, &job->kp_head) || size_mul(vpanels * NR, Nk, &job->vp_head))
        c.too_large = 1;
    if (!c.too_large)
        carve_all(&c, f, job, wp_floats, threads);
    if (c.too_large) {
        snprintf(err, errlen, "%s", _("the attention buffers are too large"));
        return NULL;
    }
    block = block_take(c.off);
    if (!block) {
        snprintf(err, errlen, "%s", _("out of memory for the attention buffers"));
        return NULL;
    }
    c.base = (char *)block->align + (64 - (uintptr_t)block->align % 64) % 64;
    c.off = 0;
    carve_all(&c, f, job, wp_floats, threads);
    return block;
}

/* (packing) head i = b·NH + h: its K_hᵀ and V_h in NR-wide panels, once */
static void pack_head(const fast_buffers *f, const mha_job *job, size_t i)
{
    const size_t Nk = job->Nk, H = job->H, NH = job->NH, p = job->p;
    const size_t kpanels = (Nk + NR - 1) / NR, vpanels = (p + NR - 1) / NR;
    const size_t b = i / NH, h = i % NH;
    float *kp = f->Kp + i * job->kp_head, *vp = f->Vp + i * job->vp_head;
    const float *Kh = f->K + b * Nk * H + h * p, *Vh = f->V + b * Nk * H + h * p;
    size_t j0;
    /* K_hᵀ (p, Nk): panel j holds keys j·NR … for every one of the p rows */
    for (j0 = 0; j0 < kpanels * NR; j0 += NR)
        pack_panel(kp + (j0 / NR) * p * NR, Kh, H, 1, p, j0, Nk - j0 < NR ? Nk - j0 : NR);
    /* V_h (Nk, p): panel j holds columns j·NR … for every key */
    for (j0 = 0; j0 < vpanels * NR; j0 += NR)
        pack_panel(vp + (j0 / NR) * Nk * NR, Vh, H, 0, Nk, j0, p - j0 < NR ? p - j0 : NR);
}

/* 2.–5. task i = (example, head, block of queries) on its own: scores,
 * scale (in Q), mask, softmax, weighted sum of the values into concat */
static void attend_task(const mha_job *job, size_t i, task_mem *t)
{
    const size_t qblocks = (job->Nq + QB - 1) / QB;
    const size_t bh = i / qblocks, q0 = (i % qblocks) * QB;
    const mha_task task = {bh / job->NH, bh % job->NH, q0, job->Nq - q0 < QB ? job->Nq - q0 : QB};
    if (job->weights)
        block_with_weights(job, &task, t);
    else
        block_streaming(job, &task, t);
}

/* Steps 1 to 6 on `threads` threads of one parallel region (each with its
 * scratch f->tm[thread]), the phases one after the other. */
static void run_steps(const fast_buffers *f, const mha_job *job, proj_set *qkv_set,
                      proj_set *o_set, int threads)
{
    const size_t qblocks = (job->Nq + QB - 1) / QB;
    phase heads, tasks; /* packing the heads; the attention tasks */
    phase_init(&heads, job->B * job->NH);
    phase_init(&tasks, job->B * job->NH * qblocks);
    (void)threads; /* (unused without OpenMP) */
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
        task_mem *t = &f->tm[
#ifdef _OPENMP
            omp_get_thread_num()
#else
            0
#endif
        ];
        size_t i;

        /* 1. project: Q = queries·W_qᵀ + b_q, K, V likewise, the three at
         * once; the 1/sqrt(p) of step 2 is folded into Q */
        proj_run(qkv_set);

        /* (packing) each head's K_hᵀ and V_h */
        while (phase_take(&heads, &i)) {
            pack_head(f, job, i);
            phase_done(&heads);
        }
        phase_wait(&heads);

        /* 2.–5. every (example, head, block of queries) */
        while (phase_take(&tasks, &i)) {
            attend_task(job, i, t);
            phase_done(&tasks);
        }
        phase_wait(&tasks);

        /* 6. output = concat(heads) · W_oᵀ + b_o */
        proj_run(o_set);
    }
}

int mha_forward_fast(float *out, float *weights, const float *queries, const float *keys,
                     const float *values, size_t B, size_t Nq, size_t Nk, const mha_params *m,
                     const mha_masks *mask, const mha_dropout *drop, char *err, size_t errlen)
{
    const size_t H = m->num_hiddens, NH = m->num_heads, p = H / NH;
    const int parallel = mha_fast_threads(B, Nq, Nk, H) > 1;
    const int threads = parallel ? cores_threads() : 1;
    projection qkv[3] = {{NULL, queries, B * Nq, &m->W_q, (float)(1.0 / sqrt((double)p)), NULL},
                         {NULL, keys, B * Nk, &m->W_k, 1.0f, NULL},
                         {NULL, values, B * Nk, &m->W_v, 1.0f, NULL}};
    projection proj_o = {out, NULL, B * Nq, &m->W_o, 1.0f, NULL};
    size_t wp_floats;
    fast_buffers f;
    kept_block *block;
    mha_job job;
    proj_set qkv_set, o_set;

    if (m->score != SCORE_DOT) {
        snprintf(err, errlen, "%s", _("the fast path does dot-product scoring only"));
        return -1;
    }
    /* the sizes of every buffer, checked, then one block for them all */
    wp_floats = packed_floats(qkv, 3) > packed_floats(&proj_o, 1) ? packed_floats(qkv, 3)
                                                                    : packed_floats(&proj_o, 1);
    job = (mha_job){NULL, weights, NULL, NULL, NULL, NULL, NULL, 0, 0,
                     B, Nq, Nk, H, NH, p, mask, drop};
    block = take_buffers(&f, &job, wp_floats, threads, err, errlen);
    if (!block)
        return -1;

    qkv[0].Y = f.Q;
    qkv[1].Y = f.K;
    qkv[2].Y = f.V;
    proj_o.X = f.concat;
    proj_init(&qkv_set, qkv, 3, f.Wp);
    proj_init(&o_set, &proj_o, 1, f.Wp); /* the same room: W_o is packed after step 1 */
    job.concat = f.concat;
    job.Q = f.Q;
    job.K = f.K;
    job.V = f.V;
    job.Kp = f.Kp;
    job.Vp = f.Vp;
    run_steps(&f, &job, &qkv_set, &o_set, threads);
    block_give(block);
    return 0;
}
