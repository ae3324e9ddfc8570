/* translate_explain.c — the "explain" member of attn translate --explain
 * --json (see translate_explain.h): each attention of the forward pass,
 * cell by cell, from the queries, keys and values the fast path kept
 * (transformer_fast.h's tfm_fast_attention_parts), or the reference
 * loops for a Transformer with additive scores (transformer.h's
 * tfm_attention_parts). */
#include "translate_explain.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "checked.h"
#include "fmath.h"
#include "layers.h"
#include "bahdanau_fast.h"
#include "transformer.h"
#include "transformer_fast.h"

/* One attention of the member: its kind and sizes. */
typedef struct ex_att {
    const char *name;
    int kind;        /* S2S_HEADS_ENC, _DEC, _CROSS */
    size_t Nq, Nk;   /* the cells written: Q's first Nq rows, K's and V's first Nk */
    size_t valid;    /* keys k ≥ valid are masked (the source's S; R for the decoder) */
    int causal;
} ex_att;

/* The sizes of one run: L blocks of NH heads of width p (Bahdanau's: 1,
 * 1, d), F first entries; A the additive score's hiddens (Bahdanau's d, a
 * Transformer's p; 0: dot) and FA of them. */
typedef struct ex_sizes {
    size_t L, NH, d, p, F, A, FA;
} ex_sizes;

/* What a tensor of cells holds. */
enum { EX_SCORE, EX_SCALED, EX_MASKED, EX_MASKED_SCORE };

static size_t first(size_t n)
{
    return n < TRANSLATE_EXPLAIN_FIRST ? n : TRANSLATE_EXPLAIN_FIRST;
}

static ex_sizes sizes_of(const s2s_config *c)
{
    ex_sizes s = {c->layers, c->heads, c->hiddens, c->hiddens / c->heads, 0, 0, 0};
    if (c->arch->recurrent) { /* one attention, one head over the states */
        s.L = s.NH = 1;
        s.p = c->hiddens;
        s.A = c->score == S2S_SCORE_DOT ? 0 : c->hiddens;
    } else if (c->score == S2S_SCORE_ADDITIVE) { /* every head: A = p */
        s.A = s.p;
    }
    s.F = first(s.p);
    s.FA = first(s.A);
    return s;
}

static int is_masked(const ex_att *a, size_t q, size_t k)
{
    return k >= a->valid || (a->causal && k > q);
}

/* What one block's attention reads: a Transformer's or Bahdanau's; with
 * additive scores the scorer's w_v (A,), and a Transformer's W_q q_h and
 * W_k k_h (NH, T, A). */
typedef struct ex_parts {
    int bah;
    tfm_fast_parts t;
    bah_fast_parts b;
    const float *w_v, *qa, *ka;
    size_t T; /* qa's and ka's rows a head */
} ex_parts;

/* A Transformer's additive score, as mha_forward computes it: for each
 * head h, qa (Nq, A) = Q_h · W_q'ᵀ and ka (Nk, A) = K_h · W_k'ᵀ, Q_h and
 * K_h head h's columns of Q (Nq, d) and K (Nk, d). */
static void additive_parts(const translate_explain *e, const ex_att *a, const tfm_parts *p,
                           size_t NH, size_t d)
{
    const size_t dh = d / NH, A = p->mha->a_W_q.weight.shape[0];
    for (size_t h = 0; h < NH; h++) {
        for (size_t q = 0; q < a->Nq; q++)
            memcpy(e->slice + q * dh, p->Q + q * d + h * dh, dh * sizeof(float));
        linear_forward(e->qa + h * e->T * A, e->slice, a->Nq, &p->mha->a_W_q);
        for (size_t k = 0; k < a->Nk; k++)
            memcpy(e->slice + k * dh, p->K + k * d + h * dh, dh * sizeof(float));
        linear_forward(e->ka + h * e->T * A, e->slice, a->Nk, &p->mha->a_W_k);
    }
}

/* The parts of block l's attention a (every pointer the cache's, or for a
 * Transformer's additive scores e's qa and ka, computed here). */
static ex_parts parts_of(const translate_explain *e, const ex_att *a, size_t l)
{
    ex_parts x;
    tfm_parts p;
    memset(&x, 0, sizeof x);
    x.bah = e->m->cfg.arch->recurrent;
    x.T = e->T;
    /* not failing: translate_explain_alloc checked the architecture */
    if (x.bah) {
        (void)bah_fast_attention_parts(e->fc, e->m, 0, &x.b);
        x.w_v = x.b.w_v;
    } else if (!e->rc) {
        (void)tfm_fast_attention_parts(e->fc, e->m, a->kind, l, e->R, e->T, &x.t);
    } else {
        (void)tfm_attention_parts(e->rc, e->m, a->kind, l, &p);
        x.t = (tfm_fast_parts){p.Q, p.K, p.V, p.O, p.A, p.a_cols};
        if (e->qa) {
            additive_parts(e, a, &p, e->m->cfg.heads, e->m->cfg.hiddens);
            x.w_v = p.mha->a_w_v.weight.data;
            x.qa = e->qa;
            x.ka = e->ka;
        }
    }
    return x;
}

/* Head h's slice of position n of: 'q' the queries, 'k' the keys, 'v' the
 * values, 'o' the head's output, 'a' W_q q and 'b' W_k k (additive). */
static const float *slice(const ex_parts *x, const ex_sizes *s, size_t h, char which, size_t n)
{
    if (x->bah) {
        const bah_fast_parts *b = &x->b;
        switch (which) {
        case 'q':
            return b->q + n * b->q_stride;
        case 'a':
            return b->wq + n * b->q_stride;
        case 'b':
            return b->K + n * b->d;
        case 'o':
            return b->context + n * b->c_stride;
        default: /* the keys and the values: the encoder's states */
            return b->H + n * b->d;
        }
    }
    if (which == 'a' || which == 'b') /* a Transformer's additive score */
        return (which == 'a' ? x->qa : x->ka) + (h * x->T + n) * s->A;
    const float *X = which == 'q' ? x->t.Q : which == 'k' ? x->t.K : which == 'v' ? x->t.V : x->t.O;
    return X + n * s->d + h * s->p;
}

/* The score of cell (h, q, k), in double: q·k (dot) or w_vᵀ tanh(W_q q +
 * W_k k) (additive), before any scaling. */
static double raw_score(const ex_parts *x, const ex_sizes *s, size_t h, size_t q, size_t k)
{
    double acc = 0.0;
    if (s->A) {
        const float *qa = slice(x, s, h, 'a', q), *ka = slice(x, s, h, 'b', k);
        for (size_t i = 0; i < s->A; i++)
            acc += (double)x->w_v[i] * fm_tanh((double)(qa[i] + ka[i]));
        return acc;
    }
    const float *qr = slice(x, s, h, 'q', q), *kr = slice(x, s, h, 'k', k);
    for (size_t i = 0; i < s->p; i++)
        acc += (double)qr[i] * (double)kr[i];
    return acc;
}

/* Cell (h, q, k)'s number of kind what. */
static double cell(const ex_parts *x, const ex_att *a, const ex_sizes *s, size_t h, size_t q,
                   size_t k, int what)
{
    const int masked = is_masked(a, q, k);
    const double score = raw_score(x, s, h, q, k);
    const double scaled = s->A ? score : score / sqrt((double)s->p);
    switch (what) {
    case EX_SCORE:
        return score;
    case EX_SCALED:
        return scaled;
    case EX_MASKED:
        return masked;
    default:
        return masked ? ATTN_MASK_VALUE : scaled;
    }
}

/* A tensor (L, NH, Nq, Nk) of cells of kind what. */
static void put_cells(json_writer *jw, const char *key, const translate_explain *e,
                      const ex_att *a, const ex_sizes *s, int what)
{
    const size_t shape[4] = {s->L, s->NH, a->Nq, a->Nk};
    float *out = e->buf;
    for (size_t l = 0; l < s->L; l++) {
        const ex_parts t = parts_of(e, a, l);
        for (size_t h = 0; h < s->NH; h++)
            for (size_t q = 0; q < a->Nq; q++)
                for (size_t k = 0; k < a->Nk; k++)
                    *out++ = (float)cell(&t, a, s, h, q, k, what);
    }
    json_tensor(jw, key, e->buf, 4, shape);
}

/* Each row's max of the masked scores (max 1) or Σ e^(s − max) (max 0),
 * as (L, NH, Nq), in double. */
static void put_rows(json_writer *jw, const char *key, const translate_explain *e,
                     const ex_att *a, const ex_sizes *s, int max)
{
    const size_t shape[3] = {s->L, s->NH, a->Nq};
    float *out = e->buf;
    for (size_t l = 0; l < s->L; l++) {
        const ex_parts t = parts_of(e, a, l);
        for (size_t h = 0; h < s->NH; h++)
            for (size_t q = 0; q < a->Nq; q++) {
                double m = cell(&t, a, s, h, q, 0, EX_MASKED_SCORE), sum = 0.0;
                for (size_t k = 1; k < a->Nk; k++)
                    m = fmax(m, cell(&t, a, s, h, q, k, EX_MASKED_SCORE));
                for (size_t k = 0; k < a->Nk; k++)
                    sum += fm_exp(cell(&t, a, s, h, q, k, EX_MASKED_SCORE) - m);
                *out++ = (float)(max ? m : sum);
            }
    }
    json_tensor(jw, key, e->buf, 3, shape);
}

/* The first F entries of each head's slice (slice's which) for N
 * positions, as (L, NH, N, F) (W_q q and W_k k: FA entries). */
static void put_slices(json_writer *jw, const char *key, const translate_explain *e,
                       const ex_att *a, const ex_sizes *s, char which, size_t N)
{
    const size_t F = which == 'a' || which == 'b' ? s->FA : s->F;
    const size_t shape[4] = {s->L, s->NH, N, F};
    float *out = e->buf;
    for (size_t l = 0; l < s->L; l++) {
        const ex_parts t = parts_of(e, a, l);
        for (size_t h = 0; h < s->NH; h++)
            for (size_t n = 0; n < N; n++) {
                memcpy(out, slice(&t, s, h, which, n), F * sizeof *out);
                out += F;
            }
    }
    json_tensor(jw, key, e->buf, 4, shape);
}

/* Additive scoring's tanh(W_q q + W_k k), its first FA entries, of every
 * cell: (L, NH, Nq, Nk, FA). */
static void put_tanh(json_writer *jw, const translate_explain *e, const ex_att *a,
                     const ex_sizes *s)
{
    const size_t shape[5] = {s->L, s->NH, a->Nq, a->Nk, s->FA};
    float *out = e->buf;
    for (size_t l = 0; l < s->L; l++) {
        const ex_parts t = parts_of(e, a, l);
        for (size_t h = 0; h < s->NH; h++)
            for (size_t q = 0; q < a->Nq; q++)
                for (size_t k = 0; k < a->Nk; k++) {
                    const float *qa = slice(&t, s, h, 'a', q), *ka = slice(&t, s, h, 'b', k);
                    for (size_t i = 0; i < s->FA; i++)
                        *out++ = (float)fm_tanh((double)(qa[i] + ka[i]));
                }
    }
    json_tensor(jw, "tanh", e->buf, 5, shape);
}

/* A Transformer's additive scorer's w_v, its first FA entries, of each
 * block's attention a: (L, FA). */
static void put_w_v(json_writer *jw, const translate_explain *e, const ex_att *a,
                    const ex_sizes *s)
{
    const size_t shape[2] = {s->L, s->FA};
    float *out = e->buf;
    for (size_t l = 0; l < s->L; l++) {
        const ex_parts t = parts_of(e, a, l);
        memcpy(out, t.w_v, s->FA * sizeof *out);
        out += s->FA;
    }
    json_tensor(jw, "w_v", e->buf, 2, shape);
}

/* One attention's object. */
static void put_attention(json_writer *jw, const translate_explain *e, const ex_att *a,
                          const ex_sizes *s)
{
    json_object_begin(jw, a->name, JSON_BLOCK);
    json_uint(jw, "queries", a->Nq);
    json_uint(jw, "keys", a->Nk);
    put_slices(jw, "q", e, a, s, 'q', a->Nq);
    put_slices(jw, "k", e, a, s, 'k', a->Nk);
    put_slices(jw, "v", e, a, s, 'v', a->Nk);
    put_cells(jw, "scores", e, a, s, EX_SCORE);
    if (!s->A)
        put_cells(jw, "scaled", e, a, s, EX_SCALED);
    put_cells(jw, "masked", e, a, s, EX_MASKED);
    put_cells(jw, "masked_scores", e, a, s, EX_MASKED_SCORE);
    put_rows(jw, "row_max", e, a, s, 1);
    put_rows(jw, "row_sum_exp", e, a, s, 0);
    put_slices(jw, "head_output", e, a, s, 'o', a->Nq);
    if (s->A) {
        if (!e->m->cfg.arch->recurrent)
            put_w_v(jw, e, a, s);
        put_slices(jw, "qa", e, a, s, 'a', a->Nq);
        put_slices(jw, "ka", e, a, s, 'b', a->Nk);
        put_tanh(jw, e, a, s);
    }
    json_end(jw);
}

void translate_explain_json(json_writer *jw, const translate_explain *e)
{
    const ex_sizes s = sizes_of(&e->m->cfg);
    const ex_att att[3] = {
        {"cross", S2S_HEADS_CROSS, e->R, e->T, e->S, 0},
        {"encoder", S2S_HEADS_ENC, e->S, e->T, e->S, 0},
        {"decoder", S2S_HEADS_DEC, e->R, e->R, e->R, 1},
    };
    json_object_begin(jw, "explain", JSON_BLOCK);
    json_string(jw, "score", s.A ? "additive" : "dot");
    json_uint(jw, "p", s.p);
    json_uint(jw, "first", s.F);
    if (!s.A)
        json_number(jw, "scale", sqrt((double)s.p));
    json_number(jw, "mask_value", ATTN_MASK_VALUE);
    if (s.A) {
        json_uint(jw, "hiddens", s.A);
        json_uint(jw, "first_hiddens", s.FA);
        if (e->m->cfg.arch->recurrent) /* a Transformer's: each attention's own */
            json_tensor(jw, "w_v", parts_of(e, &att[0], 0).b.w_v, 1, &s.FA);
    }
    for (int i = 0; i < (e->all ? 3 : 1); i++)
        put_attention(jw, e, &att[i], &s);
    json_end(jw);
}

/* The floats of the scratch: (L, NH, T, max(T·max(FA, 1), F)) covers
 * every tensor (Nq, Nk ≤ T). 0, or -1 on overflow. */
static int scratch_floats(const s2s_config *c, size_t T, size_t *n)
{
    const ex_sizes s = sizes_of(c);
    size_t cols = 0;
    if (size_mul(T, s.FA ? s.FA : 1, &cols))
        return -1;
    cols = cols > s.F ? cols : s.F;
    return size_mul(s.L, s.NH, n) || size_mul(*n, T, n) || size_mul(*n, cols, n) ? -1 : 0;
}

/* A Transformer's additive scores: qa and ka (NH, T, A), the slice (T, p). */
static int additive_floats(const s2s_config *c, size_t T, size_t *qa, size_t *slice)
{
    const ex_sizes s = sizes_of(c);
    *qa = *slice = 0;
    if (c->arch->recurrent || !s.A)
        return 0;
    return size_mul(s.NH, T, qa) || size_mul(*qa, s.A, qa) || size_mul(T, s.p, slice) ? -1 : 0;
}

size_t translate_explain_bytes(const s2s_config *c, size_t T)
{
    size_t n = 0, qa = 0, slice = 0;
    return scratch_floats(c, T, &n) || additive_floats(c, T, &qa, &slice) ||
                   size_add(n, qa, &n) || size_add(n, qa, &n) || size_add(n, slice, &n) ||
                   size_mul(n, sizeof(float), &n)
               ? SIZE_MAX
               : n;
}

int translate_explain_alloc(translate_explain *e)
{
    size_t n = 0, qa = 0, slice = 0;
    e->buf = e->qa = e->ka = e->slice = NULL;
    if (scratch_floats(&e->m->cfg, e->T, &n) || additive_floats(&e->m->cfg, e->T, &qa, &slice) ||
        (e->fc == NULL) != (e->rc != NULL) || (qa && !e->rc))
        return -1;
    if (qa && (!(e->qa = float_alloc(qa)) || !(e->ka = float_alloc(qa)) ||
               !(e->slice = float_alloc(slice))))
        return -1;
    return (e->buf = float_alloc(n ? n : 1)) ? 0 : -1;
}

void translate_explain_free(translate_explain *e)
{
    FREE_EACH(e->buf, e->qa, e->ka, e->slice);
    e->buf = e->qa = e->ka = e->slice = NULL;
}
