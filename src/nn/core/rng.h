/* rng.h — seeded random numbers for attn's inputs, weights and dropout.
 * SplitMix64: one 64-bit state, the same sequence for the same seed on
 * every machine, so `--seed N` gives byte-identical output. */
#ifndef ATTN_RNG_H
#define ATTN_RNG_H

#include <stddef.h>

typedef struct rng {
    unsigned long long state;
} rng;

void rng_seed(rng *r, unsigned long long seed);
unsigned long long rng_next(rng *r);
/* uniform in [0, 1) with 53 random bits */
double rng_uniform(rng *r);
/* standard normal (Box–Muller) */
double rng_normal(rng *r);

/* The uniform in [0, 1) at position `index` of the stream of `seed`, without
 * drawing the ones before it: the same number whichever order (or thread)
 * asks. Dropout uses it, one index per attention weight; inline, as the
 * fast loops draw one per element. It is rng_uniform after rng_seed(seed +
 * index·γ): SplitMix64's state after `index` steps, stepped once more. */
static inline double rng_uniform_at(unsigned long long seed, unsigned long long index)
{
    unsigned long long z = seed + (index + 1) * 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}
/* mask (n,): mask[i] = 1 where rng_uniform_at(seed, i) ≥ p (dropout keeps
 * element i), 0 where not; eight positions at a time in 64-bit lanes,
 * the same mask as the scalar test, bit for bit. */
void rng_keep_mask(unsigned char *mask, unsigned long long seed, size_t n, double p);
/* a (n,) in a new order, Fisher–Yates with r: every order as likely. */
void rng_shuffle(rng *r, size_t *a, size_t n);

#endif
