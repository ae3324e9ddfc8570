/* lanes_test.c — lanes.h's fused multiply-adds in the pages' WebAssembly
 * module (v16_fma, v8_fma and v16_fma_by: from doubles, with fmaf for
 * ties and results below float's normal range) against fm_fmaf_odd,
 * which test_fmath checks against the machine's fused multiply-add: the
 * same bits for random floats of every exponent, sums that cancel,
 * products of few bits whose sums fall on ties, sums a double rounds onto
 * a tie (normal and subnormal), and results near float's smallest.
 * Compiled for wasm32 by meson.build and run by Node
 * (tests/wasm/run.cjs). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../float_bits.h"
#include "fmath.h"
#include "lanes.h"

static uint32_t state = 2024;
static uint32_t next(void) { return xorshift32(&state); }

/* a·b + c whose exact value lies just below the midpoint between c (a
 * float with an odd last bit) and the float above it, by less than a
 * double can hold: the sum in double is the midpoint itself, and its
 * rounding to even in float would be the float above, not c. a·b is
 * half of c's last bit times (1 + 2^-23)(1 − 2^-23) = 1 − 2^-46. subnormal:
 * c below float's normal range, where the last bit is 2^-149. */
static void trap(float *a, float *b, float *c, int subnormal)
{
    uint32_t u = subnormal ? (next() & 0x007FFFFFu) | 1u : (next() & 0x7E7FFFFFu) | 0x00800001u;
    int e;
    *c = float_of_bits(u | (next() & 0x80000000u));
    if (subnormal)
        e = -150; /* half of 2^-149 */
    else {
        (void)frexpf(*c, &e);
        e -= 25; /* half of c's last bit: c = m·2^e, m in [0.5, 1), 24 bits */
    }
    *a = ldexpf(1.0f + 0x1p-23f, e / 2) * (*c < 0 ? -1.0f : 1.0f);
    *b = ldexpf(1.0f - 0x1p-23f, e - e / 2);
}

/* trap's sums for v16_fma_by, whose a is one for all lanes: a = TRAP_A,
 * b carries the rest of half of c's last bit (c's exponent field kept
 * at most 203, so that b is a normal float) */
#define TRAP_A (0x1p-75f * (1.0f + 0x1p-23f))
static void trap_by(float *b, float *c, int subnormal)
{
    uint32_t u = subnormal ? (next() & 0x007FFFFFu) | 1u
                           : (next() & 0x007FFFFFu) | 1u | (1u + next() % 203u) << 23;
    int e;
    *c = float_of_bits(u | (next() & 0x80000000u));
    if (subnormal)
        e = -150;
    else {
        (void)frexpf(*c, &e);
        e -= 25;
    }
    *b = ldexpf(1.0f - 0x1p-23f, e + 75) * (*c < 0 ? -1.0f : 1.0f);
}

/* lane l of one of six kinds of input */
static void draw(float *a, float *b, float *c, int kind)
{
    *a = float_of_bits(next());
    *b = float_of_bits(next());
    switch (kind) {
    case 0: *c = float_of_bits(next()); break;
    case 1: *c = -(*a * *b) * (1.0f + 0x1p-20f * (float)(next() % 8)); break;
    case 2:
        *a = (float)(next() % 4096) * 0x1p-6f;
        *b = (float)(next() % 4096) * 0x1p-6f;
        *c = (float)(int32_t)next() * 0x1p-8f;
        break;
    case 4: trap(a, b, c, 0); break;
    case 5: trap(a, b, c, 1); break;
    default: /* near float's smallest and largest */
        *a = float_of_bits((next() & 0x80FFFFFFu) | 0x1000000u);
        *b = float_of_bits((next() & 0x80FFFFFFu) | 0x3F000000u);
        *c = float_of_bits((next() & 0x80FFFFFFu) | (next() % 3) << 23);
    }
}

int main(void)
{
    const long n = 200000;
    long differ = 0, differ8 = 0, differ_by = 0;
    for (long i = 0; i < n; i++) {
        float a[V16], b[V16], c[V16], r[V16];
        /* mostly one kind per value (the traps alone), else mixed */
        for (int l = 0; l < V16; l++)
            draw(&a[l], &b[l], &c[l], i % 8 < 7 ? (int)(i % 8) : l % 7);
        v16_store(r, v16_fma(v16_load(a), v16_load(b), v16_load(c)));
        for (int l = 0; l < V16; l++)
            differ += !same_float(r[l], fm_fmaf_odd(a[l], b[l], c[l]));
        v8_store(r, v8_fma(v8_load(a), v8_load(b), v8_load(c)));
        for (int l = 0; l < 8; l++)
            differ8 += !same_float(r[l], fm_fmaf_odd(a[l], b[l], c[l]));
        /* v16_fma_by: one a for the lanes, lane 0's (the traps: their own) */
        {
            const int kind = i % 8 < 7 ? (int)(i % 8) : -1, traps = kind == 4 || kind == 5;
            const float a1 = traps ? TRAP_A : a[0];
            float b1[V16], c1[V16];
            for (int l = 0; l < V16; l++) {
                b1[l] = b[l];
                c1[l] = c[l];
                if (traps)
                    trap_by(&b1[l], &c1[l], kind == 5);
            }
            const v16_factor f = v16_factor_of(v16_load(b1));
            v16_store(r, v16_fma_by(a1, &f, v16_load(c1)));
            for (int l = 0; l < V16; l++)
                differ_by += !same_float(r[l], fm_fmaf_odd(a1, b1[l], c1[l]));
        }
    }
    printf("v16_fma: %ld values of 16 lanes, %ld lanes differ from fmaf\n", n, differ);
    printf("v8_fma:  %ld values of 8 lanes, %ld lanes differ from fmaf\n", n, differ8);
    printf("v16_fma_by: %ld values of 16 lanes, %ld lanes differ from fmaf\n", n, differ_by);
    return differ || differ8 || differ_by;
}
