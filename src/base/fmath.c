/* fmath.c — exp, log, pow, tanh, sin and cos from +, −, ×, ÷ and fma only,
 * for the same bits on every machine; the methods are in fmath.h. */
#include "fmath.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fmath_tables.h"

/* An expression evaluated in a wider type (x87) would round differently. */
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "fmath.c needs FLT_EVAL_METHOD 0: each operation rounded to double"
#endif

/* e^x overflows above EXP_MAX (ln of DBL_MAX rounded down) and rounds to 0
 * below EXP_MIN (ln of 2^-1075, half the smallest subnormal). */
#define EXP_MAX 0x1.62e42fefa39efp+9
#define EXP_MIN -0x1.74910d52d3052p+9
/* π/4: below it sin and cos need no reduction. */
#define PIO4 0x1.921fb54442d18p-1

/* ---- exact building blocks ------------------------------------------- */

/* s + e = a + b exactly, s the rounded sum (Knuth's two-sum). */
static inline void two_sum(double a, double b, double *s, double *e)
{
    double sum = a + b;
    double bv = sum - a;
    *e = (a - (sum - bv)) + (b - bv);
    *s = sum;
}

/* p + e = a·b exactly, p the rounded product (fma rounds once). */
static inline void two_prod(double a, double b, double *p, double *e)
{
    double prod = a * b;
    *e = fma(a, b, -prod);
    *p = prod;
}

/* c[0] + x·(c[1] + x·(… + x·c[n-1])): Horner, in this order. */
static inline double horner(const double *c, int n, double x)
{
    double p = c[n - 1];
    for (int i = n - 2; i >= 0; i--)
        p = p * x + c[i];
    return p;
}

/* 2^n for a normal exponent, -1022 ≤ n ≤ 1023, from its bits. */
static inline double pow2i(int n)
{
    uint64_t bits = (uint64_t)(n + 1023) << 52;
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* y·2^n for y in [1/2, 4) and -1100 < n ≤ 1024, rounded once: a subnormal
 * result is made by one multiplication of an exact normal product. */
static double scale2(double y, int n)
{
    if (n > 1023)
        return y * 2.0 * pow2i(n - 1);
    if (n >= -1022)
        return y * pow2i(n);
    return y * pow2i(n + 64) * 0x1p-64;
}

/* ---- exp -------------------------------------------------------------- */

/* The reduction of e^x: x = k·ln2/64 + r with |r| ≤ ln2/128 (a little
 * more when k's rounding ties), k = 64·e + j, 0 ≤ j < 64. xl (a few ulp of
 * x at most, 0 for a double argument) joins r. Returns p = e^r − 1. */
static double exp_reduce(double x, double xl, int *e, int *j)
{
    /* k: x·64/ln 2 to the nearest integer (any integer near it would do) */
    double k = nearbyint(x * INV_LN2_64);
    /* r = x − k·ln2/64: k·LN2_64_HI is exact and so is its difference
     * from x (they are within a factor 2); k·LN2_64_LO is below 2^-28 */
    double r = (x - k * LN2_64_HI) - k * LN2_64_LO + xl;
    /* e^r − 1 = r + r²/2! + … + r^6/6!, the first omitted term < 2^-65 */
    double p = r + r * r * horner(exp_coef, 5, r);
    /* k = 64·e + j, floor division (exact in doubles) */
    double kd = floor(k / 64.0);
    *e = (int)kd;
    *j = (int)(k - 64.0 * kd);
    return p;
}

/* e^(x + xl) for EXP_MIN − 1/16 ≤ x ≤ EXP_MAX + 1/16: 2^e·2^(j/64)·(1 + p),
 * 2^(j/64) = hi + lo, summed as hi + (lo + hi·p) and rounded once. */
static double exp_dd(double x, double xl)
{
    int e, j;
    double p = exp_reduce(x, xl, &e, &j);
    double t = exp2_frac[j][0];
    double y = t + (exp2_frac[j][1] + t * p);
    return scale2(y, e);
}

double fm_exp(double x)
{
    if (isnan(x))
        return x + x;
    if (x > EXP_MAX)
        return HUGE_VAL;
    if (x < EXP_MIN)
        return 0.0;
    return exp_dd(x, 0.0);
}

/* e^x − 1 as hi + *lo (about 2^-65 relative), for −40 ≤ x ≤ 50 (tanh
 * takes it up to 44). */
static double expm1_dd(double x, double *lo)
{
    double s, err, tail;
    if (fabs(x) <= 0x1.62e42fefa39efp-2) { /* |x| ≤ ln2/2 */
        /* x²/2 exactly as h + l (fma) */
        double q, ql;
        two_prod(x, x, &q, &ql);
        double h = 0.5 * q, l = 0.5 * ql;
        /* x³·(1/3! + x/4! + … + x^11/14!), the first omitted term below
         * 2^-61·|x| */
        tail = x * q * horner(expm1_coef, 12, x);
        /* x + h exactly as s + err, then the small parts */
        two_sum(x, h, &s, &err);
        tail = err + (l + tail);
    } else {
        /* e^x = 2^e·(hi + lo)·(1 + p): 2^e·hi and 2^e·(lo + hi·p) are
         * exact scalings (|e| ≤ 58) */
        int e, j;
        double p = exp_reduce(x, 0.0, &e, &j);
        double scale = pow2i(e);
        double t = exp2_frac[j][0];
        double big = t * scale;
        double small = (exp2_frac[j][1] + t * p) * scale;
        /* big − 1 exactly as s + err, then the small part */
        two_sum(big, -1.0, &s, &err);
        tail = err + small;
    }
    /* renormalise: hi the rounded sum, lo what it left out */
    double hi = s + tail;
    *lo = tail - (hi - s);
    return hi;
}

double fm_expm1(double x)
{
    double lo;
    if (isnan(x))
        return x + x;
    /* e^x − 1 rounds to −1 below −40 (e^-40 < 2^-54) and to e^x above
     * 40 (1 < 2^-5 ulp of e^40) */
    if (x < -40.0)
        return -1.0;
    if (x > 40.0)
        return fm_exp(x);
    /* x + x²/2 rounds to x (keeping −0) */
    if (fabs(x) < 0x1p-54)
        return x;
    double hi = expm1_dd(x, &lo);
    return hi + lo;
}

/* ---- log -------------------------------------------------------------- */

/* log x as hi + *lo (about 2^-67 relative), for finite x > 0. */
static double log_dd(double x, double *lo)
{
    uint64_t bits;
    int e = 0;
    /* a subnormal x is scaled into the normal range first */
    if (x < DBL_MIN) {
        x *= 0x1p54;
        e = -54;
    }
    memcpy(&bits, &x, sizeof bits);
    /* x = 2^e·m, m in [1, 2): the exponent field, then m's bits with the
     * exponent field of 1 */
    e += (int)(bits >> 52) - 1023;
    uint64_t mbits = (bits & 0x000fffffffffffffu) | 0x3ff0000000000000u;
    double m;
    memcpy(&m, &mbits, sizeof m);
    /* the bucket of m: its first 7 fraction bits; from LOG_FOLD on, m/2
     * (with e + 1) is the mantissa, so that x near 1 stays near 1 */
    int i = (int)((bits >> 45) & 127);
    if (i >= LOG_FOLD)
        e += 1;
    /* r = m/c − 1 exactly: m·log_inv[i] − 1 fits in 53 bits */
    double r = fma(m, log_inv[i], -1.0);
    /* log(1 + r) = r − r²/2 + r³·(1/3 − r/4 + … − r^7/10), r² exact */
    double q, ql;
    two_prod(r, r, &q, &ql);
    double h = 0.5 * q, l = 0.5 * ql;
    double tail = r * q * horner(log1p_coef, 8, r);
    /* e·ln2 + log c + r − h, the large parts, summed exactly */
    double s, err1, err2, err3;
    two_sum((double)e * LN2_HI, log_c[i][0], &s, &err1);
    two_sum(s, r, &s, &err2);
    two_sum(s, -h, &s, &err3);
    /* the small parts: the sums' errors, the lo pieces, −l and the tail */
    double small = (err1 + err2 + err3) +
                   (((double)e * LN2_LO + log_c[i][1]) + (tail - l));
    /* renormalise */
    double hi = s + small;
    *lo = small - (hi - s);
    return hi;
}

/* log x for the special arguments, or 0 with *done = 0. */
static double log_special(double x, int *done)
{
    *done = 1;
    if (isnan(x))
        return x + x;
    if (x == 0.0)
        return -HUGE_VAL;
    if (x < 0.0)
        return NAN;
    if (isinf(x))
        return x;
    *done = 0;
    return 0.0;
}

double fm_log(double x)
{
    int done;
    double lo, v = log_special(x, &done);
    if (done)
        return v;
    double hi = log_dd(x, &lo);
    return hi + lo;
}

/* (hi + lo)·(c_hi + c_lo), rounded once at the end. */
static double mul_dd(double hi, double lo, double c_hi, double c_lo)
{
    double p, pe;
    two_prod(hi, c_hi, &p, &pe);
    return p + (pe + (hi * c_lo + lo * c_hi));
}

/* log(x)·(c_hi + c_lo), c = 1/ln(base), for log2 and log10: the special
 * values as log's, else the double-double log times c, rounded once. */
static double log_scaled(double x, double c_hi, double c_lo)
{
    int done;
    double lo, v = log_special(x, &done);
    if (done)
        return v;
    double hi = log_dd(x, &lo);
    return mul_dd(hi, lo, c_hi, c_lo);
}

double fm_log2(double x) { return log_scaled(x, INV_LN2_HI, INV_LN2_LO); }

double fm_log10(double x) { return log_scaled(x, INV_LN10_HI, INV_LN10_LO); }

/* ---- pow -------------------------------------------------------------- */

/* 1 when y (finite) is an integer, 2 when an odd one, else 0. */
static int integer_kind(double y)
{
    if (floor(y) != y)
        return 0;
    /* from 2^53 on every double is even */
    if (fabs(y) >= 0x1p53)
        return 1;
    double half = 0.5 * y;
    return floor(half) != half ? 2 : 1;
}

double fm_pow(double x, double y)
{
    /* x^0 = 1 and 1^y = 1, NaN or not */
    if (y == 0.0 || x == 1.0)
        return 1.0;
    if (isnan(x) || isnan(y))
        return x + y;
    double ax = fabs(x);
    /* y = ±inf: 1 for |x| = 1, else 0 or inf by |x| < 1 and y's sign */
    if (isinf(y)) {
        if (ax == 1.0)
            return 1.0;
        return (ax < 1.0) == (y > 0.0) ? 0.0 : HUGE_VAL;
    }
    int kind = integer_kind(y);
    /* x = ±0 and ±inf: 0 or inf, with x's sign for an odd y */
    if (x == 0.0 || isinf(x)) {
        int small = (x == 0.0) == (y > 0.0);
        double v = small ? 0.0 : HUGE_VAL;
        return kind == 2 ? copysign(v, x) : v;
    }
    /* x < 0: only an integer y, the sign by its parity */
    double sign = 1.0;
    if (x < 0.0) {
        if (kind == 0)
            return NAN;
        if (kind == 2)
            sign = -1.0;
    }
    /* |x|^y = e^(y·log|x|): log|x| = lh + ll, y·log|x| = zh + zl */
    double ll, lh = log_dd(ax, &ll);
    double zh = y * lh;
    if (zh > EXP_MAX + 0x1p-4)
        return sign * HUGE_VAL;
    if (zh < EXP_MIN - 0x1p-4)
        return sign * 0.0;
    double zl = fma(y, lh, -zh) + y * ll;
    return sign * exp_dd(zh, zl);
}

/* ---- tanh ------------------------------------------------------------- */

double fm_tanh(double x)
{
    if (isnan(x))
        return x + x;
    double ax = fabs(x);
    /* tanh x = x − x³/3 + …: x itself below 2^-27 (keeping −0) */
    if (ax < 0x1p-27)
        return x;
    /* 1 − tanh x = 2/(e^2x + 1) < 2^-62 above 22 */
    if (ax > 22.0)
        return copysign(1.0, x);
    /* t = e^(2|x|) − 1 = th + tl, tanh|x| = t/(t + 2) */
    double tl, th = expm1_dd(2.0 * ax, &tl);
    double dh, dl;
    two_sum(th, 2.0, &dh, &dl);
    dl += tl;
    /* q = th/dh, then the remainder t − q·d (its main part exact by fma)
     * divided by d corrects it */
    double q = th / dh;
    double rem = fma(-q, dh, th) + (tl - q * dl);
    q += rem / dh;
    return copysign(q, x);
}

/* ---- erf -------------------------------------------------------------- */

double fm_erf(double x)
{
    if (isnan(x))
        return x + x;
    double ax = fabs(x);
    /* 1 − erf 6 < 2.2e-17: erf is ±1 in double beyond */
    if (ax >= 6.0)
        return copysign(1.0, x);
    if (ax < 2.0) {
        /* erf x = 2/√π Σ_n (−1)^n x^(2n+1) / (n! (2n+1)); the terms' largest
         * is below 3, so the alternating sum keeps about 15 digits */
        double x2 = ax * ax, term = ax, sum = ax;
        for (int n = 1; n < 60; n++) {
            term *= -x2 / n;                 /* (−1)^n x^(2n+1) / n! */
            double add = term / (2 * n + 1);
            sum += add;
            if (fabs(add) < 1e-17 * fabs(sum))
                break;
        }
        return copysign(sum * 1.1283791670955126, x); /* 2/√π */
    }
    /* erfc x = e^(−x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + 2/(x + …))))),
     * evaluated from the tail up (60 levels: converged to double at 2.5) */
    double f = ax;
    for (int k = 60; k >= 1; k--)
        f = ax + (k / 2.0) / f;
    double erfc = fm_exp(-ax * ax) / f * 0.5641895835477563; /* 1/√π */
    return copysign(1.0 - erfc, x);
}

/* ---- sin, cos --------------------------------------------------------- */

/* x = n·π/2 + r, r = *rh + *rl with |r| ≤ π/4 (a little more when the
 * rounding of n ties); returns n mod 4. For |x| < 2^45. */
static int reduce_cody_waite(double x, double *rh, double *rl)
{
    /* k: x·2/π to the nearest integer, |k| < 2^45 */
    double k = nearbyint(x * INV_PIO2);
    /* k·PIO2_1 and k·PIO2_2 exactly, as p1 + p1e and p2 + p2e */
    double p1, p1e, p2, p2e;
    two_prod(k, PIO2_1, &p1, &p1e);
    two_prod(k, PIO2_2, &p2, &p2e);
    /* x − p1 is exact (x and k·π/2 are within a factor 2 of each other) */
    double t = x - p1;
    /* t − p1e − p2: the large parts exactly, their errors kept */
    double s, e1, e2;
    two_sum(t, -p1e, &s, &e1);
    two_sum(s, -p2, &s, &e2);
    /* the small parts, smallest first: k·PIO2_3 is below 2^-64 */
    double small = ((-k * PIO2_3 - p2e) + e2) + e1;
    /* renormalise */
    *rh = s + small;
    *rl = small - (*rh - s);
    /* n = k mod 4 (floor division, exact) */
    return (int)(k - 4.0 * floor(k / 4.0));
}

/* 32 bits of two_over_pi_bits from its bit j on (j + 32 < 40·32). */
static uint32_t two_over_pi_at(int j)
{
    int w = j / 32, b = j % 32;
    uint64_t pair = (uint64_t)two_over_pi_bits[w] << 32 | two_over_pi_bits[w + 1];
    return (uint32_t)(pair >> (32 - b));
}

/* The same for |x| ≥ 2^45, exactly, from the bits of 2/π (Payne–Hanek):
 * |x| = m·2^E with an integer m < 2^53; the bits of 2/π of weight 2^-i
 * with i < E − 1 add multiples of 4 to x·2/π (nothing to the quadrant
 * and the remainder), the 192 from i = E − 1 on give x·2/π mod 4 to
 * 2^-137, and the rest is smaller still. */
static int reduce_payne_hanek(double x, double *rh, double *rl)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    /* |x| = m·2^E, m with its leading 1 */
    uint64_t m = (bits & 0x000fffffffffffffu) | 0x0010000000000000u;
    int E = (int)((bits >> 52) & 0x7ff) - 1075;
    /* B: 192 bits of 2/π from weight 2^-(E-1) on, as six 32-bit limbs
     * (b[0] the lowest); m·B·2^-190 ≡ x·2/π (mod 4) */
    uint32_t b[6];
    for (int w = 0; w < 6; w++)
        b[5 - w] = two_over_pi_at(E - 1 + 63 + 32 * w);
    /* p = m·B mod 2^192, schoolbook on 32-bit limbs (no term overflows
     * 64 bits: (2^32 − 1)² + 2·(2^32 − 1) = 2^64 − 1) */
    const uint32_t mw[2] = {(uint32_t)m, (uint32_t)(m >> 32)};
    uint32_t p[6] = {0, 0, 0, 0, 0, 0};
    for (int i = 0; i < 2; i++) {
        uint64_t carry = 0;
        for (int j = 0; i + j < 6; j++) {
            uint64_t t = (uint64_t)mw[i] * b[j] + p[i + j] + carry;
            p[i + j] = (uint32_t)t;
            carry = t >> 32;
        }
    }
    /* p·2^-190 in [0, 4): the quadrant is its top two bits, the fraction
     * f the 190 below; f ≥ 1/2 is taken as f − 1 of the next quadrant,
     * its magnitude 2^190 − f (two's complement of the 190 bits) */
    int n = (int)(p[5] >> 30);
    p[5] &= 0x3fffffffu;
    int negative_f = (p[5] & 0x20000000u) != 0;
    if (negative_f) {
        n = (n + 1) & 3;
        uint64_t carry = 1;
        for (int w = 0; w < 6; w++) {
            uint64_t t = (uint64_t)(uint32_t)~p[w] + carry;
            p[w] = (uint32_t)t;
            carry = t >> 32;
        }
        p[5] &= 0x3fffffffu;
    }
    /* |f| as hi + lo: the limbs' values are exact doubles, added from the
     * top with their rounding errors kept */
    double hi = 0.0, lo = 0.0, err;
    for (int w = 5; w >= 0; w--) {
        two_sum(hi, (double)p[w] * pow2i(32 * w - 190), &hi, &err);
        lo += err;
    }
    double f = hi + lo;
    double fl = lo - (f - hi);
    /* r = |f|·π/2: the main product exact, then the small products */
    double r, re;
    two_prod(f, PIO2_1, &r, &re);
    re += f * PIO2_2 + fl * PIO2_1;
    *rh = r + re;
    *rl = re - (*rh - r);
    /* the signs: f's, then x's (sin(−x) = −sin x: quadrant −n) */
    if (negative_f) {
        *rh = -*rh;
        *rl = -*rl;
    }
    if (x < 0.0) {
        *rh = -*rh;
        *rl = -*rl;
        n = (4 - n) & 3;
    }
    return n;
}

/* The reduction of any finite x: none up to π/4, Cody–Waite below 2^45,
 * Payne–Hanek above. */
static int reduce_pio2(double x, double *rh, double *rl)
{
    if (fabs(x) <= PIO4) {
        *rh = x;
        *rl = 0.0;
        return 0;
    }
    if (fabs(x) < 0x1p45)
        return reduce_cody_waite(x, rh, rl);
    return reduce_payne_hanek(x, rh, rl);
}

/* sin(rh + rl), |rh| ≤ π/4 + 2^-7: sin rh = rh + rh³·(−1/3! + … + rh^14/17!)
 * (first omitted term below 2^-62·|rh|), plus rl·cos rh ≈ rl·(1 − rh²/2). */
static double sin_poly(double rh, double rl)
{
    double z = rh * rh;
    double tail = rh * z * horner(sin_coef, 8, z);
    return rh + (tail + rl * (1.0 - 0.5 * z));
}

/* cos(rh + rl), |rh| ≤ π/4 + 2^-7: cos rh = 1 − rh²/2 + rh⁴·(1/4! − … +
 * rh^16/20!), 1 − rh²/2 summed exactly, minus rl·sin rh ≈ rl·rh. */
static double cos_poly(double rh, double rl)
{
    /* rh²/2 exactly as h + l */
    double q, ql;
    two_prod(rh, rh, &q, &ql);
    double h = 0.5 * q, l = 0.5 * ql;
    /* w = 1 − h rounded, and what it lost (exact: w ≥ 1/2) */
    double w = 1.0 - h;
    double lost = (1.0 - w) - h;
    double tail = q * q * horner(cos_coef, 9, q);
    return w + (lost + ((tail - l) - rh * rl));
}

void fm_sincos(double x, double *s, double *c)
{
    /* NaN stays NaN, ±inf gives NaN */
    if (!isfinite(x)) {
        *s = *c = x - x;
        return;
    }
    /* sin x = x and cos x = 1 below 2^-27 (x²/6 < 2^-54), keeping −0 */
    if (fabs(x) < 0x1p-27) {
        *s = x;
        *c = 1.0;
        return;
    }
    double rh, rl;
    int n = reduce_pio2(x, &rh, &rl);
    double sr = sin_poly(rh, rl), cr = cos_poly(rh, rl);
    /* the quadrant: sin(r + n·π/2), cos(r + n·π/2) */
    switch (n) {
    case 0: *s = sr; *c = cr; break;
    case 1: *s = cr; *c = -sr; break;
    case 2: *s = -sr; *c = -cr; break;
    default: *s = -cr; *c = sr; break;
    }
}

double fm_sin(double x)
{
    if (!isfinite(x))
        return x - x;
    if (fabs(x) < 0x1p-27)
        return x;
    /* sin(r + n·π/2): ±sin r for even n, ±cos r for odd */
    double rh, rl;
    int n = reduce_pio2(x, &rh, &rl);
    double v = n & 1 ? cos_poly(rh, rl) : sin_poly(rh, rl);
    return n & 2 ? -v : v;
}

double fm_cos(double x)
{
    if (!isfinite(x))
        return x - x;
    if (fabs(x) < 0x1p-27)
        return 1.0;
    /* cos(r + n·π/2): cos r, −sin r, −cos r, sin r */
    double rh, rl;
    int n = reduce_pio2(x, &rh, &rl);
    double v = n & 1 ? sin_poly(rh, rl) : cos_poly(rh, rl);
    return (n + 1) & 2 ? -v : v;
}

/* a·b + c rounded once, without a fused multiply-add instruction: by
 * rounding to odd (Boldo and Melquiond). a·b is exact in a double (24 + 24
 * bits of 53); s = a·b + c rounded to double, e its error, exactly
 * (Knuth's two-sum); when s is inexact (e ≠ 0) and its last bit even, the
 * neighbour of s on e's side is taken instead, whose last bit is odd. A
 * value rounded to odd with 53 bits, then to nearest with 24, is the
 * exact value rounded to nearest once: fmaf's result, also where the
 * float is subnormal or overflows. */
float fm_fmaf_odd(float a, float b, float c)
{
    const double ab = (double)a * (double)b, dc = (double)c;
    double s = ab + dc;
    const double t = s - ab;
    const double e = (ab - (s - t)) + (dc - t); /* s + e = a·b + c exactly */
    if (e != 0.0 && isfinite(s)) {
        uint64_t u;
        memcpy(&u, &s, sizeof u);
        if (!(u & 1)) {
            /* one step away from zero when e has s's sign, else towards */
            u += (e > 0.0) == (s > 0.0) ? 1 : (uint64_t)-1;
            memcpy(&s, &u, sizeof s);
        }
    }
    return (float)s;
}
