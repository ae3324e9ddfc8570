/* seq2seq_fast.c — seq2seq_fast.h's s2s_fast_* functions: the sizes
 * checked, then the model's architecture's fast path (s2s_arch.fast). */
#include "seq2seq_fast.h"

#include <stdlib.h>
#include <string.h>

#include "checked.h"

const s2s_fast_ops *s2s_fast_ops_of(const s2s_config *cfg)
{
    const s2s_arch *a = s2s_arch_of(cfg);
    return !a->fast_covers || a->fast_covers(cfg) ? a->fast : &s2s_reference_ops;
}

int s2s_fast_weights_alloc(s2s_fast_weights *w, const s2s_model *m)
{
    memset(w, 0, sizeof *w);
    w->arch = m->cfg.arch;
    w->ops = s2s_fast_ops_of(&m->cfg);
    return w->ops->weights_alloc(w, m);
}

void s2s_fast_weights_update(s2s_fast_weights *w, const s2s_model *m)
{
    w->ops->weights_update(w, m);
}

void s2s_fast_weights_free(s2s_fast_weights *w)
{
    if (w->arch)
        w->ops->weights_free(w);
    memset(w, 0, sizeof *w);
}

int s2s_fast_cache_alloc(s2s_fast_cache *c, const s2s_model *m, size_t Bmax, size_t Tmax)
{
    size_t BT;
    memset(c, 0, sizeof *c);
    if (size_mul(Bmax, Tmax, &BT) || size_mul(BT, m->cfg.heads, &(size_t){0}))
        return -1;
    c->arch = m->cfg.arch;
    c->ops = s2s_fast_ops_of(&m->cfg);
    c->Bmax = Bmax;
    c->Tmax = Tmax;
    return c->ops->cache_alloc(c, m);
}

int s2s_fast_cache_bytes(const s2s_config *cfg, size_t Bmax, size_t Tmax, size_t *bytes)
{
    return s2s_fast_ops_of(cfg)->cache_bytes(cfg, Bmax, Tmax, bytes);
}

void s2s_fast_cache_free(s2s_fast_cache *c)
{
    if (c->arch)
        c->ops->cache_free(c);
    memset(c, 0, sizeof *c);
}

const float *s2s_fast_cross(const s2s_fast_cache *c, const s2s_model *m, size_t l)
{
    (void)m;
    return c->ops->cross(c, l);
}

const float *s2s_fast_self(const s2s_fast_cache *c, int side, size_t l)
{
    return c->ops->self ? c->ops->self(c, side, l) : NULL;
}

const float *s2s_fast_logits(const s2s_fast_cache *c, const s2s_model *m)
{
    (void)m;
    return c->ops->logits(c);
}

double s2s_fast_step(float *grads, s2s_fast_cache *c, const s2s_model *m,
                     const s2s_fast_weights *w, const int *src, const long *src_lens,
                     const int *dec_in, const int *targets, size_t B, size_t Ts, size_t Tt,
                     double scale, const mha_dropout *drop, size_t example0, size_t *count,
                     size_t *correct)
{
    return c->ops->step(grads, c, m, w, src, src_lens, dec_in, targets, B, Ts, Tt, scale,
                               drop, example0, count, correct);
}

size_t s2s_fast_greedy_batch(s2s_fast_cache *c, const s2s_model *m, const s2s_fast_weights *w,
                             const int *src, const long *src_lens, size_t B, size_t Ts, int bos,
                             int eos, size_t max_len, int *out, size_t *n_out)
{
    if (max_len > c->Tmax)
        max_len = c->Tmax;
    return c->ops->greedy_batch(c, m, w, src, src_lens, B, Ts, bos, eos, max_len, out,
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

/* ---- the reference loops behind the fast path's functions ------------------ */

/* For a configuration its architecture's fast path does not serve: a
 * reference cache (s2s_cache) of Bmax pairs of Tmax positions a side, the
 * step's gradients in double, and greedy decoding's attention rows. */
typedef struct ref_cache {
    s2s_cache cache;
    double *grads; /* (m->total) */
    float *A;      /* (Bmax, Tmax, Tmax) greedy_batch's (B, steps, Ts) */
    int greedy;    /* the last call was greedy_batch: cross is A */
} ref_cache;

static int ref_weights_alloc(s2s_fast_weights *w, const s2s_model *m)
{
    (void)m;
    w->net = NULL; /* the reference reads the model's tensors */
    return 0;
}

static void ref_weights_update(s2s_fast_weights *w, const s2s_model *m)
{
    (void)w, (void)m;
}

static void ref_weights_free(s2s_fast_weights *w)
{
    (void)w;
}

static void ref_cache_free(s2s_fast_cache *c)
{
    ref_cache *r = c->net;
    if (!r)
        return;
    s2s_cache_free(&r->cache);
    FREE_EACH(r->grads, r->A);
    free(r);
    c->net = NULL;
}

static int ref_cache_alloc(s2s_fast_cache *c, const s2s_model *m)
{
    char err[256];
    size_t TT, BTT;
    ref_cache *r = calloc(1, sizeof *r);
    if (!r || size_mul(c->Tmax, c->Tmax, &TT) || size_mul(c->Bmax, TT, &BTT)) {
        free(r);
        return -1;
    }
    c->net = r;
    if (s2s_cache_alloc(&r->cache, m, c->Bmax, c->Tmax, c->Tmax, err, sizeof err) ||
        !(r->grads = calloc(m->total ? m->total : 1, sizeof *r->grads)) ||
        !(r->A = calloc(BTT ? BTT : 1, sizeof *r->A))) {
        ref_cache_free(c);
        return -1;
    }
    return 0;
}

/* An upper bound of what ref_cache_alloc allocates (--max-mem): Bahdanau's
 * reference cache is at most 16 (Tmax, B, d) double buffers a side for
 * the recurrent stacks and activations, the additive features (Tt, B, Ts,
 * d), the logits and their gradient (B, Tt, Vt), the attention rows, and
 * a gradient per parameter (bounded by 32 (d + Vs + Vt) d per layer). */
static int ref_cache_bytes(const s2s_config *cfg, size_t Bmax, size_t Tmax, size_t *bytes)
{
    const size_t d = cfg->hiddens, V = cfg->src_vocab + cfg->tgt_vocab;
    size_t BT, BTd, BTTd, BTV, BTT, P, sum = 0;
    if (size_mul(Bmax, Tmax, &BT) || size_mul(BT, d, &BTd) || size_mul(BTd, Tmax, &BTTd) ||
        size_mul(BT, cfg->tgt_vocab, &BTV) || size_mul(BT, Tmax, &BTT) ||
        size_mul(d + V, d, &P) || size_mul(P, 32 * (cfg->layers + 1), &P) ||
        size_mul(BTd, 16 * (cfg->layers + 1) * sizeof(double), &BTd) ||
        size_mul(BTTd, sizeof(double), &BTTd) || size_mul(BTV, 12, &BTV) ||
        size_mul(BTT, 8, &BTT) || size_mul(P, sizeof(double), &P) ||
        size_add(sum, BTd, &sum) || size_add(sum, BTTd, &sum) || size_add(sum, BTV, &sum) ||
        size_add(sum, BTT, &sum) || size_add(sum, P, &sum))
        return -1;
    *bytes = sum;
    return 0;
}

static double ref_step(float *grads, s2s_fast_cache *c, const s2s_model *m,
                       const s2s_fast_weights *w, const int *src, const long *src_lens,
                       const int *dec_in, const int *targets, size_t B, size_t Ts, size_t Tt,
                       double scale, const mha_dropout *drop, size_t example0, size_t *count,
                       size_t *correct)
{
    ref_cache *r = c->net;
    char err[256];
    double loss = 0.0;
    (void)w;
    r->greedy = 0;
    r->cache.example0 = example0;
    /* the ids were checked by the caller: the passes cannot fail */
    if (s2s_forward(m, &r->cache, src, src_lens, dec_in, B, Ts, Tt, drop, err, sizeof err))
        return 0.0;
    if (!targets)
        return 0.0;
    loss = s2s_loss(&r->cache, m, targets, count, correct);
    if (!grads)
        return loss;
    memset(r->grads, 0, m->total * sizeof *r->grads);
    if (s2s_backward(r->grads, &r->cache, m, src, src_lens, dec_in, targets, scale, drop, err,
                     sizeof err))
        return loss;
    for (size_t i = 0; i < m->total; i++)
        grads[i] += (float)r->grads[i];
    return loss;
}

/* Each source decoded on its own (s2s_greedy), its rows (max_len, Ts)
 * into A at b · max_len · Ts; then A packed to (B, steps, Ts), steps the
 * most any took. */
static size_t ref_greedy_batch(s2s_fast_cache *c, const s2s_model *m, const s2s_fast_weights *w,
                               const int *src, const long *src_lens, size_t B, size_t Ts, int bos,
                               int eos, size_t max_len, int *out, size_t *n_out)
{
    ref_cache *r = c->net;
    char err[256];
    size_t steps = 0;
    (void)w;
    r->greedy = 1;
    for (size_t b = 0; b < B; b++) {
        float *rows = r->A + b * max_len * Ts;
        n_out[b] = 0;
        if (s2s_greedy(m, src + b * Ts, src_lens[b], Ts, bos, eos, max_len, out + b * max_len,
                       &n_out[b], rows, err, sizeof err)) {
            memset(rows, 0, max_len * Ts * sizeof *rows);
            continue;
        }
        /* the rows of the steps taken: one per token, and <eos>'s */
        const size_t took = n_out[b] < max_len ? n_out[b] + 1 : max_len;
        steps = took > steps ? took : steps;
    }
    for (size_t b = 1; b < B; b++) /* to (B, steps, Ts): each moves down */
        memmove(r->A + b * steps * Ts, r->A + b * max_len * Ts, steps * Ts * sizeof *r->A);
    return steps;
}

static const float *ref_cross(const s2s_fast_cache *c, size_t l)
{
    const ref_cache *r = c->net;
    return r->greedy ? r->A : s2s_cross(&r->cache, NULL, l);
}

static const float *ref_self(const s2s_fast_cache *c, int side, size_t l)
{
    const ref_cache *r = c->net;
    return s2s_self(&r->cache, side, l);
}

static const float *ref_logits(const s2s_fast_cache *c)
{
    return ((const ref_cache *)c->net)->cache.logits;
}

const s2s_fast_ops s2s_reference_ops = {
    .weights_alloc = ref_weights_alloc,
    .weights_update = ref_weights_update,
    .weights_free = ref_weights_free,
    .cache_alloc = ref_cache_alloc,
    .cache_bytes = ref_cache_bytes,
    .cache_free = ref_cache_free,
    .step = ref_step,
    .greedy_batch = ref_greedy_batch,
    .cross = ref_cross,
    .self = ref_self,
    .logits = ref_logits,
};
