/* encoder_lm.c — the unigram baseline and generation (see encoder_lm.h). */
#include "encoder_lm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "fmath.h"
#include "i18n.h"

double lm_unigram_perplexity(const int *train, size_t ntrain, const int *targets, size_t m,
                             size_t V)
{
    size_t *count = calloc(V ? V : 1, sizeof *count), used = 0;
    double nll = 0.0;
    if (!count)
        return 0.0;
    for (size_t i = 0; i < ntrain; i++)
        count[train[i]]++;
    for (size_t i = 0; i < m; i++) {
        if (targets[i] < 0)
            continue;
        /* p(c) = (count + 1) / (ntrain + V) */
        nll -= fm_log(((double)count[targets[i]] + 1.0) / ((double)ntrain + (double)V));
        used++;
    }
    free(count);
    return used ? fm_exp(nll / (double)used) : 0.0;
}

size_t lm_argmax(const float *z, size_t C)
{
    size_t best = 0;
    for (size_t i = 1; i < C; i++)
        if (z[i] > z[best])
            best = i;
    return best;
}

size_t lm_pick(const float *z, size_t C, double temperature, rng *r)
{
    const double zmax = z[lm_argmax(z, C)];
    double sum = 0.0, u, run = 0.0;
    for (size_t i = 0; i < C; i++) /* Σ exp((z_i − max) / T) */
        sum += fm_exp(((double)z[i] - zmax) / temperature);
    u = rng_uniform(r) * sum;
    for (size_t i = 0; i < C; i++) {
        run += fm_exp(((double)z[i] - zmax) / temperature);
        if (run > u)
            return i;
    }
    return lm_argmax(z, C); /* u within rounding of Σ: the last step's */
}

int lm_generate(tmodel *m, const int *prompt, size_t np, size_t L, size_t count,
                double temperature, unsigned long long seed, int *out, char *err,
                size_t errlen)
{
    const size_t C = m->cfg.classes;
    size_t total;
    int *ctx; /* (np + count,) the prompt and what follows, as tokens */
    tcache cache;
    rng r;
    if (size_add(np, count, &total) || total > ((size_t)-1) / sizeof *ctx ||
        !(ctx = malloc(total * sizeof *ctx))) {
        snprintf(err, errlen, _("out of memory for %zu characters"), count);
        return -1;
    }
    if (tcache_alloc(&cache, m, 1, L, err, errlen)) {
        free(ctx);
        return -1;
    }
    memcpy(ctx, prompt, np * sizeof *ctx);
    rng_seed(&r, seed);
    for (size_t k = 0; k < count; k++) {
        const size_t have = np + k, n = have < L ? have : L; /* the last n tokens */
        size_t next;
        if (tmodel_forward(m, &cache, ctx + have - n, NULL, 1, n, NULL, err, errlen)) {
            tcache_free(&cache);
            free(ctx);
            return -1;
        }
        /* logits (1, n, C): the last row scores the next character */
        const float *z = cache.logits + (n - 1) * C;
        next = temperature > 0 ? lm_pick(z, C, temperature, &r) : lm_argmax(z, C);
        out[k] = (int)next;
        ctx[have] = (int)next + 1;
    }
    tcache_free(&cache);
    free(ctx);
    return 0;
}
