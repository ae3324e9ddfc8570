/* lanes.h — sixteen floats as one value, for the fast loops: the same
 * arithmetic, in the same order, on every machine (SPEC §12).
 *
 * A f32x16 holds 16 floats. Every operation acts lane by lane and is one
 * IEEE-754 operation per lane (an add, a multiply, a fused multiply-add
 * written as v16_fma, a comparison), so its result does not depend on how
 * the machine holds the sixteen: one AVX-512 register, two AVX2 registers,
 * four NEON registers, or sixteen scalars. The width is chosen here, in
 * the code, not by a compiler's tuning table: every AVX-512 machine runs
 * 512-bit arithmetic.
 *
 * Sums over a row (v16_sum_row, v16_dot_row, the softmax's Σ e) keep 16
 * partial sums, lane l adding the elements l, l+16, l+32, … in order, and
 * combine them in one fixed tree (v16_hsum): the same bits whatever the
 * vector width. Nothing here may be reassociated by the compiler: the
 * project compiles with -ffp-contract=off and without -ffast-math, and no
 * loop carries an OpenMP reduction.
 *
 * GCC and Clang's vector extension gives the type and the lane-wise
 * +, −, ×, comparisons and bit operations; only the fused multiply-add
 * needs the instruction set's own name (and plain C's fmaf, exactly
 * rounded too, where there is none; WebAssembly has lanes_fma4_try below).
 */
#ifndef ATTN_LANES_H
#define ATTN_LANES_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__AVX512F__) || (defined(__AVX__) && defined(__FMA__))
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#elif defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

#define V16 16 /* lanes */

/* A function of the fast loops inlined wherever it is called, so that
 * constant sizes reach its loops (and its arrays of values stay in
 * registers) however large it is */
#define LANES_INLINE static inline __attribute__((always_inline))

typedef float f32x16 __attribute__((vector_size(64)));
/* Eight floats as one value, for rows of 8 (a head's p = 8 columns): the
 * same rules as f32x16's, lane by lane. */
typedef float f32x8 __attribute__((vector_size(32)));
typedef int32_t i32x16 __attribute__((vector_size(64)));

/* P_load: a value of type T from memory of any alignment (its lanes of
 * element type E in order); P_store: the value's lanes to memory. */
#define LANES_LOAD_STORE(T, P, E)                                                              \
    static inline T P##_load(const E *x)                                                       \
    {                                                                                          \
        T v;                                                                                   \
        memcpy(&v, x, sizeof v);                                                               \
        return v;                                                                              \
    }                                                                                          \
    static inline void P##_store(E *x, T v) { memcpy(x, &v, sizeof v); }

LANES_LOAD_STORE(f32x16, v16, float) /* v16_load, v16_store */

/* x[0 … n−1] (n < 16), the other lanes pad */
static inline f32x16 v16_load_part(const float *x, size_t n, float pad)
{
    float buf[V16];
    size_t l;
    for (l = 0; l < V16; l++)
        buf[l] = l < n ? x[l] : pad;
    return v16_load(buf);
}

/* x[0 … n−1] = lanes 0 … n−1 of v (n < 16) */
static inline void v16_store_part(float *x, f32x16 v, size_t n)
{
    float buf[V16];
    v16_store(buf, v);
    memcpy(x, buf, n * sizeof *x);
}

static inline f32x16 v16_splat(float a)
{
    f32x16 v = {a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a};
    return v;
}

#if defined(__wasm_simd128__)
/* WebAssembly has no fused multiply-add (the pages' module, SPEC.md §14):
 * four lanes of fmaf from doubles. A product of two floats is exact in a
 * double (24 + 24 bits of 53), so a·b + c in double is the exact value
 * rounded once; rounding that to float gives fmaf's result, except when
 * the double lies exactly halfway between two floats (its low 29 bits
 * 0x10000000: the first rounding may have made the tie) or the float is
 * below float's normal range (where floats have fewer bits; a double that
 * rounds to 0 is the exact sum, as a sum that small cannot have been
 * rounded): then fmaf (fmaf_wasi.c), for every lane of the value, which is
 * rare (tests/wasm/lanes_test.c checks the lanes against fmaf, ties and
 * subnormals among them).
 *
 * A value's quarters are taken by shuffles, not through memory (a union
 * indexed in a loop kept every operand on the stack, a third of the
 * time), and the fallback is a function of its own, out of the loops'
 * way. */
typedef float lanes_f32x4 __attribute__((vector_size(16)));

/* the lanes 4q … 4q+3 of x, a value of 16 or 8 */
#define LANES_Q(x, q) __builtin_shufflevector(x, x, 4 * (q), 4 * (q) + 1, 4 * (q) + 2, 4 * (q) + 3)

/* the four lanes of x as doubles: lanes 0 and 1, then 2 and 3 */
static inline void lanes_double4(lanes_f32x4 x, v128_t d[2])
{
    d[0] = wasm_f64x2_promote_low_f32x4((v128_t)x);
    d[1] = wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(x, x, 2, 3, 0, 1));
}

/* four lanes of a·b + c, a and b as doubles (lanes_double4): the result
 * when no lane is odd; *odd gains the lanes that are (all bits set) */
static inline lanes_f32x4 lanes_fma4_d(const v128_t a[2], const v128_t b[2], lanes_f32x4 c,
                                       v128_t *odd)
{
    v128_t cd[2];
    lanes_double4(c, cd);
    const v128_t s0 = wasm_f64x2_add(wasm_f64x2_mul(a[0], b[0]), cd[0]),
                 s1 = wasm_f64x2_add(wasm_f64x2_mul(a[1], b[1]), cd[1]);
    const v128_t r = wasm_i32x4_shuffle(wasm_f32x4_demote_f64x2_zero(s0),
                                        wasm_f32x4_demote_f64x2_zero(s1), 0, 1, 4, 5);
    /* the four doubles' low 32 bits, lane by lane: a tie */
    const v128_t lo = wasm_i32x4_shuffle(s0, s1, 0, 2, 4, 6);
    /* the float's magnitude m in 1 … 2^-126 (0x00800000): below the
     * normal range, 0 apart. m + 0x7fffffff is m − 1 + 2^31: from the
     * least int for m = 1 up, past the largest for m = 0 */
    const v128_t mag = wasm_v128_and(r, wasm_i32x4_const_splat(0x7fffffff));
    *odd = wasm_v128_or(*odd, wasm_v128_or(
        wasm_i32x4_eq(wasm_v128_and(lo, wasm_i32x4_const_splat(0x1fffffff)),
                      wasm_i32x4_const_splat(0x10000000)),
        wasm_i32x4_lt(wasm_i32x4_add(mag, wasm_i32x4_const_splat(0x7fffffff)),
                      wasm_i32x4_const_splat((int32_t)0x80800000u))));
    return (lanes_f32x4)r;
}

/* the same from floats */
static inline lanes_f32x4 lanes_fma4_try(lanes_f32x4 a, lanes_f32x4 b, lanes_f32x4 c, v128_t *odd)
{
    v128_t ad[2], bd[2];
    lanes_double4(a, ad);
    lanes_double4(b, bd);
    return lanes_fma4_d(ad, bd, c, odd);
}

/* the value of 16 lanes made of four */
static inline f32x16 lanes_join16(lanes_f32x4 r0, lanes_f32x4 r1, lanes_f32x4 r2, lanes_f32x4 r3)
{
    const f32x8 r01 = __builtin_shufflevector(r0, r1, 0, 1, 2, 3, 4, 5, 6, 7),
                r23 = __builtin_shufflevector(r2, r3, 0, 1, 2, 3, 4, 5, 6, 7);
    return __builtin_shufflevector(r01, r23, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}

/* r[l] = fmaf(a[l], b[l], c[l]) for l < n: the rare lanes' way */
__attribute__((noinline, cold)) static void lanes_fmaf_n(float *r, const float *a, const float *b,
                                                       const float *c, int n)
{
    for (int l = 0; l < n; l++)
        r[l] = fmaf(a[l], b[l], c[l]);
}
#endif

/* a·b + c rounded once, in every lane */
static inline f32x16 v16_fma(f32x16 a, f32x16 b, f32x16 c)
{
#if defined(__AVX512F__)
    return (f32x16)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c);
#elif defined(__AVX__) && defined(__FMA__)
    union { f32x16 v; __m256 h[2]; } x = {a}, y = {b}, z = {c}, r;
    r.h[0] = _mm256_fmadd_ps(x.h[0], y.h[0], z.h[0]);
    r.h[1] = _mm256_fmadd_ps(x.h[1], y.h[1], z.h[1]);
    return r.v;
#elif defined(__aarch64__)
    union { f32x16 v; float32x4_t q[4]; } x = {a}, y = {b}, z = {c}, r;
    for (int i = 0; i < 4; i++)
        r.q[i] = vfmaq_f32(z.q[i], x.q[i], y.q[i]);
    return r.v;
#elif defined(__wasm_simd128__)
    v128_t odd = wasm_i32x4_const_splat(0);
    const lanes_f32x4 r0 = lanes_fma4_try(LANES_Q(a, 0), LANES_Q(b, 0), LANES_Q(c, 0), &odd),
                      r1 = lanes_fma4_try(LANES_Q(a, 1), LANES_Q(b, 1), LANES_Q(c, 1), &odd),
                      r2 = lanes_fma4_try(LANES_Q(a, 2), LANES_Q(b, 2), LANES_Q(c, 2), &odd),
                      r3 = lanes_fma4_try(LANES_Q(a, 3), LANES_Q(b, 3), LANES_Q(c, 3), &odd);
    if (__builtin_expect(wasm_v128_any_true(odd), 0)) {
        f32x16 r;
        lanes_fmaf_n((float *)&r, (const float *)&a, (const float *)&b, (const float *)&c, V16);
        return r;
    }
    return lanes_join16(r0, r1, r2, r3);
#else
    f32x16 r;
    for (int l = 0; l < V16; l++)
        r[l] = fmaf(a[l], b[l], c[l]);
    return r;
#endif
}

/* A factor of several fused multiply-adds with a splat (a row of W times
 * each of the rows of x held in registers): v16_factor_of prepares it
 * once, and v16_fma_by(a, f, c) is v16_fma(v16_splat(a), f's value, c),
 * the same bits. In the pages' module the preparation is its lanes as
 * doubles, promoted once instead of at every multiply-add; elsewhere it
 * is the value itself. */
#if defined(__wasm_simd128__)
typedef struct {
    f32x16 v;
    v128_t d[4][2]; /* lanes 4q … 4q+3, lanes_double4 */
} v16_factor;

LANES_INLINE v16_factor v16_factor_of(f32x16 b)
{
    v16_factor f;
    f.v = b;
    lanes_double4(LANES_Q(b, 0), f.d[0]);
    lanes_double4(LANES_Q(b, 1), f.d[1]);
    lanes_double4(LANES_Q(b, 2), f.d[2]);
    lanes_double4(LANES_Q(b, 3), f.d[3]);
    return f;
}

LANES_INLINE f32x16 v16_fma_by(float a, const v16_factor *b, f32x16 c)
{
    const v128_t ad[2] = {wasm_f64x2_splat((double)a), wasm_f64x2_splat((double)a)};
    v128_t odd = wasm_i32x4_const_splat(0);
    const lanes_f32x4 r0 = lanes_fma4_d(ad, b->d[0], LANES_Q(c, 0), &odd),
                      r1 = lanes_fma4_d(ad, b->d[1], LANES_Q(c, 1), &odd),
                      r2 = lanes_fma4_d(ad, b->d[2], LANES_Q(c, 2), &odd),
                      r3 = lanes_fma4_d(ad, b->d[3], LANES_Q(c, 3), &odd);
    if (__builtin_expect(wasm_v128_any_true(odd), 0))
        return v16_fma(v16_splat(a), b->v, c);
    return lanes_join16(r0, r1, r2, r3);
}
#else
typedef f32x16 v16_factor;

LANES_INLINE v16_factor v16_factor_of(f32x16 b) { return b; }

LANES_INLINE f32x16 v16_fma_by(float a, const v16_factor *b, f32x16 c)
{
    return v16_fma(v16_splat(a), *b, c);
}
#endif

/* f32x8, eight floats (declared above): the same operations */
LANES_LOAD_STORE(f32x8, v8, float) /* v8_load, v8_store */

static inline f32x8 v8_splat(float a)
{
    f32x8 v = {a, a, a, a, a, a, a, a};
    return v;
}

/* x[0 … n−1] (n ≤ 8), the other lanes 0 */
static inline f32x8 v8_load_part(const float *x, size_t n)
{
    f32x8 v = {0, 0, 0, 0, 0, 0, 0, 0};
    memcpy(&v, x, n * sizeof *x);
    return v;
}

/* x[0 … n−1] = lanes 0 … n−1 of v (n ≤ 8) */
static inline void v8_store_part(float *x, f32x8 v, size_t n) { memcpy(x, &v, n * sizeof *x); }

/* r (8 values of 8) transposed in place: lane i of r[j] ← lane j of r[i].
 * Only moves: no arithmetic. */
static inline void v8_transpose(f32x8 r[8])
{
    f32x8 t[8], u[8];
    for (int k = 0; k < 8; k += 2) { /* pairs of rows interleaved */
        t[k] = __builtin_shufflevector(r[k], r[k + 1], 0, 8, 1, 9, 4, 12, 5, 13);
        t[k + 1] = __builtin_shufflevector(r[k], r[k + 1], 2, 10, 3, 11, 6, 14, 7, 15);
    }
    for (int k = 0; k < 8; k += 4) { /* then pairs of pairs */
        u[k] = __builtin_shufflevector(t[k], t[k + 2], 0, 1, 8, 9, 4, 5, 12, 13);
        u[k + 1] = __builtin_shufflevector(t[k], t[k + 2], 2, 3, 10, 11, 6, 7, 14, 15);
        u[k + 2] = __builtin_shufflevector(t[k + 1], t[k + 3], 0, 1, 8, 9, 4, 5, 12, 13);
        u[k + 3] = __builtin_shufflevector(t[k + 1], t[k + 3], 2, 3, 10, 11, 6, 7, 14, 15);
    }
    for (int k = 0; k < 4; k++) { /* then the halves of four rows */
        r[k] = __builtin_shufflevector(u[k], u[k + 4], 0, 1, 2, 3, 8, 9, 10, 11);
        r[k + 4] = __builtin_shufflevector(u[k], u[k + 4], 4, 5, 6, 7, 12, 13, 14, 15);
    }
}

/* a·b + c rounded once, in every lane */
static inline f32x8 v8_fma(f32x8 a, f32x8 b, f32x8 c)
{
#if defined(__AVX__) && defined(__FMA__)
    return (f32x8)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c);
#elif defined(__aarch64__)
    union { f32x8 v; float32x4_t q[2]; } x = {a}, y = {b}, z = {c}, r;
    for (int i = 0; i < 2; i++)
        r.q[i] = vfmaq_f32(z.q[i], x.q[i], y.q[i]);
    return r.v;
#elif defined(__wasm_simd128__)
    v128_t odd = wasm_i32x4_const_splat(0);
    const lanes_f32x4 r0 = lanes_fma4_try(LANES_Q(a, 0), LANES_Q(b, 0), LANES_Q(c, 0), &odd),
                      r1 = lanes_fma4_try(LANES_Q(a, 1), LANES_Q(b, 1), LANES_Q(c, 1), &odd);
    if (__builtin_expect(wasm_v128_any_true(odd), 0)) {
        f32x8 r;
        lanes_fmaf_n((float *)&r, (const float *)&a, (const float *)&b, (const float *)&c, 8);
        return r;
    }
    return __builtin_shufflevector(r0, r1, 0, 1, 2, 3, 4, 5, 6, 7);
#else
    f32x8 r;
    for (int l = 0; l < 8; l++)
        r[l] = fmaf(a[l], b[l], c[l]);
    return r;
#endif
}

/* Eight doubles as one value (Adam's update), the same rules */
typedef double f64x8 __attribute__((vector_size(64)));

LANES_LOAD_STORE(f64x8, v8d, double) /* v8d_load, v8d_store */

static inline f64x8 v8d_splat(double a)
{
    f64x8 v = {a, a, a, a, a, a, a, a};
    return v;
}

/* √x in every lane, correctly rounded (IEEE-754's square root) */
static inline f64x8 v8d_sqrt(f64x8 x)
{
#if defined(__AVX512F__)
    return (f64x8)_mm512_sqrt_pd((__m512d)x);
#elif defined(__AVX__)
    union { f64x8 v; __m256d h[2]; } a = {x}, r;
    r.h[0] = _mm256_sqrt_pd(a.h[0]);
    r.h[1] = _mm256_sqrt_pd(a.h[1]);
    return r.v;
#elif defined(__aarch64__)
    union { f64x8 v; float64x2_t q[4]; } a = {x}, r;
    for (int i = 0; i < 4; i++)
        r.q[i] = vsqrtq_f64(a.q[i]);
    return r.v;
#else
    f64x8 r;
    for (int l = 0; l < 8; l++)
        r[l] = sqrt(x[l]);
    return r;
#endif
}

static inline i32x16 v16_splat_i(int32_t a)
{
    i32x16 v = {a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a};
    return v;
}

/* where mask (all ones or zero in a lane) a, else b */
static inline f32x16 v16_select(i32x16 mask, f32x16 a, f32x16 b)
{
    return (f32x16)(((i32x16)a & mask) | ((i32x16)b & ~mask));
}

/* the larger of a and b in every lane (b where they are equal) */
static inline f32x16 v16_max(f32x16 a, f32x16 b) { return v16_select(a > b, a, b); }

/* Σ of the 16 lanes in one fixed tree: lanes l and l+8, then l and l+4,
 * l and l+2, 0 and 1 */
static inline float v16_hsum(f32x16 v)
{
    typedef float f32x4 __attribute__((vector_size(16)));
    typedef float f32x2 __attribute__((vector_size(8)));
    /* halves taken in registers (GCC ≥ 12 and Clang's shufflevector) */
    const f32x8 x8 = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) +
                     __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
    const f32x4 x4 = __builtin_shufflevector(x8, x8, 0, 1, 2, 3) +
                     __builtin_shufflevector(x8, x8, 4, 5, 6, 7);
    const f32x2 x2 = __builtin_shufflevector(x4, x4, 0, 1) + __builtin_shufflevector(x4, x4, 2, 3);
    return x2[0] + x2[1];
}

/* The largest lane (exact: the order does not matter) */
static inline float v16_hmax(f32x16 v)
{
    float x[V16], m;
    v16_store(x, v);
    m = x[0];
    for (int l = 1; l < V16; l++)
        m = x[l] > m ? x[l] : m;
    return m;
}

/* e^x in every lane, in float, for x ≤ 88.7 (callers subtract a row's
 * maximum first, so that x ≤ 0): x = n·ln2 + r with n the nearest integer
 * to x·log2(e) and |r| ≤ ln2/2 (ln2 in two parts, so that n·ln2_hi is
 * exact), e^r by its Taylor polynomial of degree 6 (relative error below
 * 2e-7), then 2^n put into the exponent bits. Below −87.3, where e^x is
 * under float's smallest normal, the result is 0 (as for the masked scores
 * of −1e6). NaN is not expected (callers check). */
static inline f32x16 v16_exp(f32x16 x)
{
    const f32x16 lo = v16_splat(-87.3f);
    const f32x16 log2e = v16_splat(0x1.715476p+0f);   /* log2(e) */
    const f32x16 ln2_hi = v16_splat(0x1.62e4p-1f);    /* ln 2, 16 bits */
    const f32x16 ln2_lo = v16_splat(0x1.7f7d1cp-20f); /* ln 2 − ln2_hi */
    const f32x16 round = v16_splat(0x1.8p23f);        /* adding it rounds to an integer */
    const i32x16 below = x < lo;
    const f32x16 xc = v16_max(x, lo);
    /* n = nearest integer to x·log2(e), ties to even, exact for |n| < 2^22 */
    const f32x16 n = (xc * log2e + round) - round;
    /* r = x − n·ln2 */
    f32x16 r = v16_fma(-n, ln2_hi, xc);
    r = v16_fma(-n, ln2_lo, r);
    /* e^r = 1 + r + r²/2 + … + r⁶/720, Horner's rule */
    f32x16 p = v16_splat(1.0f / 720);
    p = v16_fma(p, r, v16_splat(1.0f / 120));
    p = v16_fma(p, r, v16_splat(1.0f / 24));
    p = v16_fma(p, r, v16_splat(1.0f / 6));
    p = v16_fma(p, r, v16_splat(0.5f));
    p = v16_fma(p, r, v16_splat(1.0f));
    p = v16_fma(p, r, v16_splat(1.0f));
    /* 2^n from its exponent bits, n in −126 … 128; 0 below −87.3 */
    const i32x16 bits = (__builtin_convertvector(n, i32x16) + 127) << 23;
    return (f32x16)((i32x16)(p * (f32x16)bits) & ~below);
}

/* e^x of one float, by the same operations as v16_exp's lanes */
static inline float v16_exp1(float x)
{
    f32x16 e = v16_exp(v16_splat(x));
    return e[0];
}

/* x[k] ← e^(x[k] − shift) for k < n; returns Σ_k of the new x[k] as 16
 * partial sums (lane l: k ≡ l mod 16, in order of k) combined by v16_hsum */
static inline float v16_exp_row(float *x, size_t n, float shift)
{
    const f32x16 sh = v16_splat(shift);
    f32x16 sum = v16_splat(0.0f);
    size_t k = 0;
    for (; k + V16 <= n; k += V16) {
        f32x16 e = v16_exp(v16_load(x + k) - sh);
        v16_store(x + k, e);
        sum = sum + e;
    }
    if (k < n) { /* the tail: lanes past n are e^(−inf) = 0 and add 0 */
        f32x16 e = v16_exp(v16_load_part(x + k, n - k, -INFINITY) - sh);
        v16_store_part(x + k, e, n - k);
        sum = sum + e;
    }
    return v16_hsum(sum);
}

/* Σ_k x[k] as 16 partial sums combined by v16_hsum */
static inline float v16_sum_row(const float *x, size_t n)
{
    f32x16 sum = v16_splat(0.0f);
    size_t k = 0;
    for (; k + V16 <= n; k += V16)
        sum = sum + v16_load(x + k);
    if (k < n)
        sum = sum + v16_load_part(x + k, n - k, 0.0f);
    return v16_hsum(sum);
}

/* Σ_k a[k]·b[k] as 16 partial sums (lane l: k ≡ l mod 16, one fused
 * multiply-add a term, in order of k) combined by v16_hsum */
static inline float v16_dot_row(const float *a, const float *b, size_t n)
{
    f32x16 sum = v16_splat(0.0f);
    size_t k = 0;
    for (; k + V16 <= n; k += V16)
        sum = v16_fma(v16_load(a + k), v16_load(b + k), sum);
    if (k < n)
        sum = v16_fma(v16_load_part(a + k, n - k, 0.0f), v16_load_part(b + k, n - k, 0.0f), sum);
    return v16_hsum(sum);
}

#endif
