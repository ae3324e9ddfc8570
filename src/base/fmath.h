/* fmath.h — attn's own exp, log, pow, tanh, sin and cos: the same bits on
 * every machine (SPEC.md §12).
 *
 * libm's transcendental functions differ by CPU code path (x86-64-v3,
 * AVX-512, aarch64) and by C library version, in the last bit of a few
 * results; a softmax or a positional encoding that calls them prints
 * different digits on different machines. These are written with +, −, ×,
 * ÷, sqrt and fma (each correctly rounded by IEEE 754, so identical
 * everywhere) and exact helpers (floor, nearbyint, the bits of a double),
 * compiled without contraction (-ffp-contract=off): each result is one
 * function of the input on every conforming machine. They assume the
 * default rounding mode (to nearest) and FLT_EVAL_METHOD 0 (checked).
 * Their constants (scripts/gen_fmath_tables.py → fmath_tables.h) are
 * Taylor coefficients and tables computed with 200-bit arithmetic.
 *
 * The methods, in short (hi + lo: a double-double, about 106 bits):
 *   exp     x = k·ln2/64 + r, |r| ≤ ln2/128 (k·ln2/64 in two pieces);
 *           e^x = 2^(k/64)·(1 + p(r)), 2^(j/64) from a table as hi + lo,
 *           p Taylor to r^6.
 *   expm1   |x| ≤ ln2/2: x + x²/2 (x² exact by fma) + x³·Taylor to x^14;
 *           beyond: exp's reduction, 2^e·2^(j/64)·(1 + p) − 1 summed
 *           exactly before the last rounding.
 *   log     x = 2^e·m; an 8-bit 1/c for m's bucket (of 128) makes
 *           r = m/c − 1 exact, |r| < 2^-7; log x = e·ln2 + log c +
 *           log(1 + r), log c from a table as hi + lo, log(1 + r) Taylor
 *           to r^10, all summed as hi + lo (about 2^-67 relative).
 *   log2, log10   that hi + lo times 1/ln 2 or 1/ln 10 (as hi + lo):
 *           log2(2^k) = k and log10(10^k) = k exactly.
 *   pow     |x|^y = e^(y·log|x|), log|x| as hi + lo, y·log|x| as hi + lo
 *           (fma), its lo part added to exp's reduced argument.
 *   tanh    t = expm1(2|x|) as hi + lo, tanh|x| = t/(t + 2) with the
 *           division's remainder (fma) added back.
 *   sin, cos   x = n·π/2 + r, |r| ≤ π/4, r as hi + lo: for |x| < 2^45 with
 *           π/2 in three doubles, each k·piece exact by fma; beyond, with
 *           the bits of 2/π (Payne–Hanek, exact for every double).
 *           sin r and cos r Taylor to r^17 and r^20.
 *
 * Accuracy, measured against glibc 2.36 on 3 to 5 million points per
 * function (tests/test_fmath.c prints the worst case of each): every
 * function, pow too, within 1 ulp of glibc's result (expm1, log10 and tanh
 * against glibc's long double versions, its double ones erring by up to 2
 * ulp), and equal to it on 99.1 % (sin, cos) to 99.99 % (log) of the
 * points. Exact results come out exact: exp(0) = 1, log(1) = 0,
 * log2(2^k) = k, log10(10^k) = k and pow(10, k) = 1e{k} for k ≤ 22.
 * The same bits on x86-64 (gcc and clang, with and without hardware FMA)
 * and aarch64: test_fmath checks a hash of 100000 results per function.
 *
 * Special values follow C11 (annex F): a NaN argument gives NaN; exp
 * overflows to +inf and underflows through the subnormals to +0; log(±0)
 * = −inf, log(x < 0) = NaN, log(+inf) = +inf; tanh(±inf) = ±1; sin and cos
 * of ±inf are NaN; sin, tanh and expm1 keep the sign of ±0. pow as C's:
 *   pow(x, ±0) = 1 and pow(1, y) = 1, even for NaN; pow(−1, ±inf) = 1;
 *   pow(±0, y): y < 0 odd integer ±inf, other y < 0 +inf, y > 0 odd
 *   integer ±0, other y > 0 +0; pow(x, −inf) = +inf for |x| < 1, +0 for
 *   |x| > 1, pow(x, +inf) the reverse; pow(−inf, y) = pow(−0, −y) and
 *   pow(+inf, y) = +0 for y < 0, +inf for y > 0; x < 0 finite: NaN for a
 *   non-integer y, else ±pow(−x, y) by the parity of y.
 */
#ifndef ATTN_FMATH_H
#define ATTN_FMATH_H

/* e^x, e^x − 1. */
double fm_exp(double x);
double fm_expm1(double x);
/* Natural, base-2 and base-10 logarithms. */
double fm_log(double x);
double fm_log2(double x);
double fm_log10(double x);
/* x^y, with C's special cases (above). */
double fm_pow(double x, double y);
double fm_tanh(double x);
/* The error function erf x = 2/√π ∫₀ˣ e^(−t²) dt (GELU's exact form uses
 * it): its Maclaurin series below |x| = 2, erfc's continued fraction
 * above, ±1 beyond 6; within a few units of 1e-15 of erf, not correctly
 * rounded as the others are. */
double fm_erf(double x);
/* sin x and cos x (x in radians); fm_sincos gives both from one
 * reduction, the same bits as fm_sin and fm_cos. */
double fm_sin(double x);
double fm_cos(double x);
void fm_sincos(double x, double *s, double *c);

/* fmaf(a, b, c), exactly as C's (a·b + c rounded once), from double
 * arithmetic alone: the pages' WebAssembly module, which has no fused
 * multiply-add instruction, uses it for fmaf (fmaf_wasi.c). */
float fm_fmaf_odd(float a, float b, float c);

#endif
