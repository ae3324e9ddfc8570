/* rng.c — SplitMix64 and the distributions attn draws from (see rng.h). */
#include "rng.h"

#include <math.h>

#include "fmath.h"

void rng_seed(rng *r, unsigned long long seed) { r->state = seed; }

unsigned long long rng_next(rng *r)
{
    unsigned long long z = (r->state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double rng_uniform(rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

double rng_normal(rng *r)
{
    /* Box–Muller: u1 in (0, 1] so that log(u1) is finite */
    double u1 = 1.0 - rng_uniform(r), u2 = rng_uniform(r);
    return sqrt(-2.0 * fm_log(u1)) * fm_cos(2.0 * 3.14159265358979323846 * u2);
}

void rng_keep_mask(unsigned char *mask, unsigned long long seed, size_t n, double p)
{
    /* rng_uniform_at's u = k·2⁻⁵³ with k = z >> 11 an integer below 2⁵³:
     * u ≥ p exactly when k ≥ ⌈p·2⁵³⌉ (p·2⁵³ is exact, a power of two's
     * multiple), so the lanes compare integers; p ≥ 1 keeps nothing, as
     * no k reaches 2⁵³. */
    typedef unsigned long long u64x8 __attribute__((vector_size(64)));
    const unsigned long long min_k =
        p <= 0.0 ? 0ULL : p >= 1.0 ? (1ULL << 53) : (unsigned long long)ceil(p * 0x1.0p53);
    const u64x8 lane = {1, 2, 3, 4, 5, 6, 7, 8}; /* index + 1 of each lane */
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        u64x8 z = seed + ((unsigned long long)i + lane) * 0x9e3779b97f4a7c15ULL;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        const u64x8 k = (z ^ (z >> 31)) >> 11;
        for (int j = 0; j < 8; j++)
            mask[i + (size_t)j] = k[j] >= min_k;
    }
    for (; i < n; i++)
        mask[i] = rng_uniform_at(seed, i) >= p;
}

void rng_shuffle(rng *r, size_t *a, size_t n)
{
    for (size_t j = n; j-- > 1;) {
        size_t k = (size_t)(rng_next(r) % (j + 1)), tmp = a[j];
        a[j] = a[k];
        a[k] = tmp;
    }
}
