/* translate_explain.c — the "explain" member of attn translate --explain
 * --json (see translate_explain.h): each attention of the forward pass,
 * cell by cell, from the queries, keys and values the fast path kept
 * (transformer_fast.h's tfm_fast_attention_parts). */
#include "translate_explain.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "checked.h"
#include "fmath.h"
#include "transformer_fast.h"

/* One attention of the member: its kind and sizes. */
typedef struct ex_att {
    const char *name;
    int kind;        /* S2S_HEADS_ENC, _DEC, _CROSS */
    size_t Nq, Nk;   /* the cells written: Q's first Nq rows, K's and V's first Nk */
    size_t valid;    /* keys k ≥ valid are masked (the source's S; R for the decoder) */
    int causal;
} ex_att;

/* The sizes of one run. */
typedef struct ex_sizes {
    size_t L, NH, d, p, F;
} ex_sizes;

/* What a tensor of cells holds. */
enum { EX_SCORE, EX_SCALED, EX_MASKED, EX_MASKED_SCORE };

static ex_sizes sizes_of(const s2s_config *c)
{
    ex_sizes s = {c->layers, c->heads, c->hiddens, c->hiddens / c->heads, 0};
    s.F = s.p < TRANSLATE_EXPLAIN_FIRST ? s.p : TRANSLATE_EXPLAIN_FIRST;
    return s;
}

static int is_masked(const ex_att *a, size_t q, size_t k)
{
    return k >= a->valid || (a->causal && k > q);
}

/* q·k of head h, all p entries, in double. */
static double dot_qk(const tfm_fast_parts *t, const ex_sizes *s, size_t h, size_t q, size_t k)
{
    const float *qr = t->Q + q * s->d + h * s->p, *kr = t->K + k * s->d + h * s->p;
    double acc = 0.0;
    for (size_t i = 0; i < s->p; i++)
        acc += (double)qr[i] * (double)kr[i];
    return acc;
}

/* Cell (h, q, k)'s number of kind what. */
static double cell(const tfm_fast_parts *t, const ex_att *a, const ex_sizes *s, size_t h,
                   size_t q, size_t k, int what)
{
    const int masked = is_masked(a, q, k);
    const double score = dot_qk(t, s, h, q, k);
    switch (what) {
    case EX_SCORE:
        return score;
    case EX_SCALED:
        return score / sqrt((double)s->p);
    case EX_MASKED:
        return masked;
    default:
        return masked ? ATTN_MASK_VALUE : score / sqrt((double)s->p);
    }
}

/* The parts of block l's attention a (the pass's own: every pointer the
 * cache's). */
static tfm_fast_parts parts_of(const translate_explain *e, const ex_att *a, size_t l)
{
    tfm_fast_parts t;
    if (tfm_fast_attention_parts(e->fc, e->m, a->kind, l, e->R, e->T, &t) != 0)
        memset(&t, 0, sizeof t); /* not reached: the caller checked the architecture */
    return t;
}

/* A tensor (L, NH, Nq, Nk) of cells of kind what. */
static void put_cells(json_writer *jw, const char *key, const translate_explain *e,
                      const ex_att *a, const ex_sizes *s, int what)
{
    const size_t shape[4] = {s->L, s->NH, a->Nq, a->Nk};
    float *out = e->buf;
    for (size_t l = 0; l < s->L; l++) {
        const tfm_fast_parts t = parts_of(e, a, l);
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
        const tfm_fast_parts t = parts_of(e, a, l);
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

/* The first F entries of each head's slice of X (one of the parts: 'q',
 * 'k', 'v', 'o') for N positions, as (L, NH, N, F). */
static void put_slices(json_writer *jw, const char *key, const translate_explain *e,
                       const ex_att *a, const ex_sizes *s, char which, size_t N)
{
    const size_t shape[4] = {s->L, s->NH, N, s->F};
    float *out = e->buf;
    for (size_t l = 0; l < s->L; l++) {
        const tfm_fast_parts t = parts_of(e, a, l);
        const float *X = which == 'q' ? t.Q : which == 'k' ? t.K : which == 'v' ? t.V : t.O;
        for (size_t h = 0; h < s->NH; h++)
            for (size_t n = 0; n < N; n++) {
                memcpy(out, X + n * s->d + h * s->p, s->F * sizeof *out);
                out += s->F;
            }
    }
    json_tensor(jw, key, e->buf, 4, shape);
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
    put_cells(jw, "scaled", e, a, s, EX_SCALED);
    put_cells(jw, "masked", e, a, s, EX_MASKED);
    put_cells(jw, "masked_scores", e, a, s, EX_MASKED_SCORE);
    put_rows(jw, "row_max", e, a, s, 1);
    put_rows(jw, "row_sum_exp", e, a, s, 0);
    put_slices(jw, "head_output", e, a, s, 'o', a->Nq);
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
    json_string(jw, "score", "dot");
    json_uint(jw, "p", s.p);
    json_uint(jw, "first", s.F);
    json_number(jw, "scale", sqrt((double)s.p));
    json_number(jw, "mask_value", ATTN_MASK_VALUE);
    for (int i = 0; i < (e->all ? 3 : 1); i++)
        put_attention(jw, e, &att[i], &s);
    json_end(jw);
}

/* The floats of the scratch: (L, NH, max(T·T, T·F)) covers every
 * tensor (Nq, Nk ≤ T). 0, or -1 on overflow. */
static int scratch_floats(const s2s_config *c, size_t T, size_t *n)
{
    const ex_sizes s = sizes_of(c);
    const size_t cols = T > s.F ? T : s.F;
    return size_mul(s.L, s.NH, n) || size_mul(*n, T, n) || size_mul(*n, cols, n) ? -1 : 0;
}

size_t translate_explain_bytes(const s2s_config *c, size_t T)
{
    size_t n = 0;
    return scratch_floats(c, T, &n) || size_mul(n, sizeof(float), &n) ? SIZE_MAX : n;
}

int translate_explain_alloc(translate_explain *e)
{
    size_t n = 0;
    e->buf = NULL;
    if (!e->m->cfg.arch->has_self || scratch_floats(&e->m->cfg, e->T, &n))
        return -1;
    return (e->buf = float_alloc(n ? n : 1)) ? 0 : -1;
}

void translate_explain_free(translate_explain *e)
{
    free(e->buf);
    e->buf = NULL;
}
