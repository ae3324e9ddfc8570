/* float_bits.h — for the tests of fused multiply-adds (test_fmath.c, and
 * wasm/lanes_test.c in the pages' module): a float from its bits, two
 * floats the same to the bit (any NaN the same as any other), and a
 * 32-bit xorshift for the bits, each test with its own state. */
#ifndef ATTN_TESTS_FLOAT_BITS_H
#define ATTN_TESTS_FLOAT_BITS_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* the next of *state's sequence (Marsaglia's xorshift, 13, 17, 5) */
static inline uint32_t xorshift32(uint32_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 17;
    *state ^= *state << 5;
    return *state;
}

static inline float float_of_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline int same_float(float a, float b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

#endif
