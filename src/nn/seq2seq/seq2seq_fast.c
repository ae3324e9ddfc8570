/* seq2seq_fast.c — seq2seq_fast.h's s2s_fast_* functions: the sizes
 * checked, then the model's architecture's fast path (s2s_arch.fast). */
#include "seq2seq_fast.h"

#include <string.h>

#include "checked.h"

int s2s_fast_weights_alloc(s2s_fast_weights *w, const s2s_model *m)
{
    memset(w, 0, sizeof *w);
    w->arch = m->cfg.arch;
    return w->arch->fast->weights_alloc(w, m);
}

void s2s_fast_weights_update(s2s_fast_weights *w, const s2s_model *m)
{
    w->arch->fast->weights_update(w, m);
}

void s2s_fast_weights_free(s2s_fast_weights *w)
{
    if (w->arch)
        w->arch->fast->weights_free(w);
    memset(w, 0, sizeof *w);
}

int s2s_fast_cache_alloc(s2s_fast_cache *c, const s2s_model *m, size_t Bmax, size_t Tmax)
{
    size_t BT;
    memset(c, 0, sizeof *c);
    if (size_mul(Bmax, Tmax, &BT) || size_mul(BT, m->cfg.heads, &(size_t){0}))
        return -1;
    c->arch = m->cfg.arch;
    c->Bmax = Bmax;
    c->Tmax = Tmax;
    return c->arch->fast->cache_alloc(c, m);
}

int s2s_fast_cache_bytes(const s2s_config *cfg, size_t Bmax, size_t Tmax, size_t *bytes)
{
    return s2s_arch_of(cfg)->fast->cache_bytes(cfg, Bmax, Tmax, bytes);
}

void s2s_fast_cache_free(s2s_fast_cache *c)
{
    if (c->arch)
        c->arch->fast->cache_free(c);
    memset(c, 0, sizeof *c);
}

const float *s2s_fast_cross(const s2s_fast_cache *c, const s2s_model *m, size_t l)
{
    (void)m;
    return c->arch->fast->cross(c, l);
}

const float *s2s_fast_self(const s2s_fast_cache *c, int side, size_t l)
{
    return c->arch->fast->self ? c->arch->fast->self(c, side, l) : NULL;
}

const float *s2s_fast_logits(const s2s_fast_cache *c, const s2s_model *m)
{
    (void)m;
    return c->arch->fast->logits(c);
}

double s2s_fast_step(float *grads, s2s_fast_cache *c, const s2s_model *m,
                     const s2s_fast_weights *w, const int *src, const long *src_lens,
                     const int *dec_in, const int *targets, size_t B, size_t Ts, size_t Tt,
                     double scale, const mha_dropout *drop, size_t example0, size_t *count,
                     size_t *correct)
{
    return c->arch->fast->step(grads, c, m, w, src, src_lens, dec_in, targets, B, Ts, Tt, scale,
                               drop, example0, count, correct);
}

size_t s2s_fast_greedy_batch(s2s_fast_cache *c, const s2s_model *m, const s2s_fast_weights *w,
                             const int *src, const long *src_lens, size_t B, size_t Ts, int bos,
                             int eos, size_t max_len, int *out, size_t *n_out)
{
    if (max_len > c->Tmax)
        max_len = c->Tmax;
    return c->arch->fast->greedy_batch(c, m, w, src, src_lens, B, Ts, bos, eos, max_len, out,
                                       n_out);
}

void s2s_fast_greedy(s2s_fast_cache *c, const s2s_model *m, const s2s_fast_weights *w,
                     const int *src, long src_len, size_t Ts, int bos, int eos, size_t max_len,
                     int *out, size_t *n_out, float *cross)
{
    const size_t L = s2s_cross_blocks(&m->cfg), NH = m->cfg.heads;
    size_t steps;
    if (max_len > c->Tmax)
        max_len = c->Tmax;
    steps = s2s_fast_greedy_batch(c, m, w, src, &src_len, 1, Ts, bos, eos, max_len, out, n_out);
    if (!cross)
        return;
    /* row t of each block's cross-attention: the last decoding's rows are
     * those of every step (a row sees only the positions up to its own) */
    memset(cross, 0, L * NH * max_len * Ts * sizeof *cross);
    for (size_t l = 0; l < L; l++)
        for (size_t h = 0; h < NH; h++)
            for (size_t t = 0; t < steps; t++)
                memcpy(cross + ((l * NH + h) * max_len + t) * Ts,
                       s2s_fast_cross(c, m, l) + (h * steps + t) * Ts, Ts * sizeof *cross);
}
