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

void rng_shuffle(rng *r, size_t *a, size_t n)
{
    for (size_t j = n; j-- > 1;) {
        size_t k = (size_t)(rng_next(r) % (j + 1)), tmp = a[j];
        a[j] = a[k];
        a[k] = tmp;
    }
}
