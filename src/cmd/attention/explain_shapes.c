/* explain_shapes.c — `attn multihead --explain-shapes` (see
 * explain_shapes.h; the layouts are src/nn/attention/heads.h's). Labels:
 * b example, t token (position), h head, c column within the head; the
 * tables fit 80 columns, wrapping a long row and leaving the rest to
 * --json. */
#include "explain_shapes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "cli.h"
#include "heads.h"
#include "json_writer.h"
#include "output.h"
#include "checked.h"

#define WIDTH 80       /* the text fits 80 columns */
#define SHOW_SLICES 8  /* slices (and token rows) printed; --json has all */
#define SHOW_CELLS 8   /* rows of a slice printed */

/* One walk: the sizes, the index maps, the heads computed three ways. */
struct walk {
    size_t B, Nq, Nk, H, NH, p;
    size_t *qkv;      /* (B·NH, Nq, p) transpose_qkv: flat index into (B, Nq, H) */
    size_t *plain;    /* (B·NH, Nq, p) reshape without the permute */
    size_t *back;     /* (B, Nq, H) transpose_output: flat index into (B·NH, Nq, p) */
    long *rep_i;      /* (B·NH,) or (B·NH, Nq) repeat_interleave(valid_lens, NH) */
    long *rep_t;      /* the same rows by repeat (tile) */
    size_t lens_cols; /* 1, or Nq for per-query lengths */
    float *heads;     /* (B, Nq, H) mha_forward's heads side by side (--explain's concat) */
    float *batched;   /* (B, Nq, H) d2l's batch of slices, put back */
    float *no_perm;   /* (B, Nq, H) the same without the permute */
    float *tiled;     /* (B, Nq, H) the same with repeat instead of repeat_interleave */
    double diff, diff_no_perm, diff_tiled;
    const problem *pr;
    const shapes_opts *o;
};

static void walk_free(struct walk *w)
{
    FREE_EACH(w->qkv, w->plain, w->back, w->rep_i, w->rep_t, w->heads, w->batched, w->no_perm,
              w->tiled);
}

/* The bytes of the walk beyond the forward pass: three maps, four (B, Nq,
 * H) results, the keys' and values' slices; 0 or -1 on overflow. */
static int walk_bytes(const problem *pr, size_t *bytes)
{
    size_t nq, nk, n;
    return size_mul(pr->B, pr->Nq, &nq) || size_mul(nq, pr->params.num_hiddens, &nq) ||
           size_mul(pr->B, pr->Nk, &nk) || size_mul(nk, pr->params.num_hiddens, &nk) ||
           size_add(nq, nk, &n) || size_mul(n, 64, bytes);
}

/* ---- labels ------------------------------------------------------------ */

/* The entry of X (B, Nq, H) at flat index s: "b1 t2 h1 c0", and with
 * count > 1 the columns that follow it in the same head, "c0..1". */
static void label(char *buf, size_t n, const struct walk *w, size_t s, size_t count)
{
    const size_t b = s / (w->Nq * w->H), t = s / w->H % w->Nq, col = s % w->H;
    const size_t h = col / w->p, c = col % w->p;
    if (count > 1)
        snprintf(buf, n, "b%zu t%zu h%zu c%zu..%zu", b, t, h, c, c + count - 1);
    else
        snprintf(buf, n, "b%zu t%zu h%zu c%zu", b, t, h, c);
}

/* Row q of slice r of a (B·NH, Nq, p) map: its p entries, which are one
 * head's columns of one token when they follow each other in X. */
static void row_label(char *buf, size_t n, const struct walk *w, const size_t *map, size_t r,
                      size_t q)
{
    const size_t *e = map + (r * w->Nq + q) * w->p; /* (p,) */
    int together = e[w->p - 1] == e[0] + w->p - 1 && e[0] % w->p == 0;
    for (size_t c = 1; c < w->p; c++)
        together &= e[c] == e[0] + c;
    label(buf, n, w, e[0], together ? w->p : 1);
    if (!together)
        snprintf(buf + strlen(buf), n - strlen(buf), "…");
}

/* Slice r's name: "b1 h0" in d2l's layout (row b·NH + h). */
static void slice_name(char *buf, size_t n, const struct walk *w, size_t r)
{
    snprintf(buf, n, "b%zu h%zu", r / w->NH, r % w->NH);
}

/* ---- the tables ---------------------------------------------------------- */

/* The columns text takes on a terminal (a character each). */
static size_t columns(const char *text)
{
    size_t n = 0;
    for (; *text; text++)
        n += ((unsigned char)*text & 0xC0) != 0x80;
    return n;
}

/* text without its trailing spaces, then a newline */
static void print_line(char *text)
{
    size_t n = strlen(text);
    while (n && text[n - 1] == ' ')
        text[--n] = '\0';
    printf("%s\n", text);
}

/* A (B·NH, Nq, p) map as a table: a line per slice (wrapped to 80
 * columns), each of its rows labelled; after a slice, what mark_fn says
 * of it (NULL: nothing). */
static void print_slices(const struct walk *w, const size_t *map,
                         void (*mark_fn)(char *, size_t, const struct walk *, size_t))
{
    const size_t S = w->B * w->NH, shown = w->Nq < SHOW_CELLS ? w->Nq : SHOW_CELLS;
    char lab[128], line[1024];
    size_t cellw = 0, used;
    for (size_t r = 0; r < S && r < SHOW_SLICES; r++)
        for (size_t q = 0; q < shown; q++) {
            row_label(lab, sizeof lab, w, map, r, q);
            cellw = strlen(lab) + 2 > cellw ? strlen(lab) + 2 : cellw;
        }
    const size_t per_line = (WIDTH - 7) / cellw ? (WIDTH - 7) / cellw : 1;
    for (size_t r = 0; r < S && r < SHOW_SLICES; r++) {
        used = (size_t)snprintf(line, sizeof line, "  [%zu]%s", r, r < 10 ? " " : "");
        for (size_t q = 0; q < shown; q++) {
            if (q && q % per_line == 0) { /* wrap: the slice goes on below */
                print_line(line);
                used = (size_t)snprintf(line, sizeof line, "      ");
            }
            row_label(lab, sizeof lab, w, map, r, q);
            used += (size_t)snprintf(line + used, sizeof line - used, " %-*s", (int)cellw - 1,
                                     lab);
        }
        char tail[256] = "";
        if (shown < w->Nq)
            snprintf(tail, sizeof tail, _(" … (%zu rows)"), w->Nq);
        if (mark_fn)
            mark_fn(tail + strlen(tail), sizeof tail - strlen(tail), w, r);
        while (used && line[used - 1] == ' ')
            line[--used] = '\0';
        if (tail[0] && columns(line) + columns(tail) > WIDTH) { /* on a line of its own */
            print_line(line);
            used = (size_t)snprintf(line, sizeof line, "     ");
        }
        snprintf(line + used, sizeof line - used, "%s", tail);
        print_line(line);
    }
    if (S > SHOW_SLICES)
        printf(_("  … %zu slices in all (--json has every one)\n"), S);
}

/* The tokens and heads the rows of slice r come from without the
 * permute: a note when they are not one head's columns of token 0 … Nq−1. */
static void mixing_mark(char *buf, size_t n, const struct walk *w, size_t r)
{
    size_t t_lo = SIZE_MAX, t_hi = 0, h_lo = SIZE_MAX, h_hi = 0, wrong = 0;
    for (size_t q = 0; q < w->Nq; q++) {
        const size_t s = w->plain[(r * w->Nq + q) * w->p];
        const size_t t = s / w->H % w->Nq, h = s % w->H / w->p;
        t_lo = t < t_lo ? t : t_lo;
        t_hi = t > t_hi ? t : t_hi;
        h_lo = h < h_lo ? h : h_lo;
        h_hi = h > h_hi ? h : h_hi;
        wrong |= t != q || h != r % w->NH;
    }
    buf[0] = '\0';
    if (wrong)
        snprintf(buf, n, "  ← t%zu..%zu, h%zu..%zu", t_lo, t_hi, h_lo, h_hi);
}

/* How many slices of the reshape without the permute hold a row that is
 * not (token q, head r mod NH). */
static size_t mixed_slices(const struct walk *w)
{
    size_t count = 0;
    char mark[160];
    for (size_t r = 0; r < w->B * w->NH; r++) {
        mixing_mark(mark, sizeof mark, w, r);
        count += mark[0] != '\0';
    }
    return count;
}

/* ---- the steps ----------------------------------------------------------- */

static void print_steps(const struct walk *w)
{
    const size_t B = w->B, N = w->Nq, H = w->H, NH = w->NH, p = w->p;
    char s[4][96];
    snprintf(s[0], sizeof s[0], "(%zu, %zu, %zu)", B, N, H);
    snprintf(s[1], sizeof s[1], "(%zu, %zu, %zu, %zu)", B, N, NH, p);
    snprintf(s[2], sizeof s[2], "(%zu, %zu, %zu, %zu)", B, NH, N, p);
    snprintf(s[3], sizeof s[3], "(%zu, %zu, %zu)", B * NH, N, p);
    printf(_("transpose_qkv: the heads of W_q(X) as one batch of B·h = %zu slices\n"), B * NH);
    printf(_("  W_q(X)                %-14s [b, t, j]: column j = h·%zu + c\n"), s[0], p);
    printf(_("  reshape(B, N, h, H/h) %-14s [b, t, h, c]: nothing moves\n"), s[1]);
    printf(_("  permute(0, 2, 1, 3)   %-14s [b, t, h, c] moves to [b, h, t, c]\n"), s[2]);
    printf(_("  reshape(B·h, N, H/h)  %-14s slice b·%zu + h: example b, head h\n"), s[3], NH);
    if (w->Nk != w->Nq)
        printf(_("  keys and values alike, with N = %zu: (%zu, %zu, %zu) → (%zu, %zu, %zu)\n"),
               w->Nk, B, w->Nk, H, B * NH, w->Nk, p);
    else
        printf(_("  keys and values alike: (%zu, %zu, %zu) → (%zu, %zu, %zu)\n"), B, N, H, B * NH,
               N, p);
}

/* keys a length masks: those at k >= len, and no more than Nk */
static size_t kept_keys(long len, size_t Nk)
{
    return len < 0 ? 0 : (size_t)len < Nk ? (size_t)len : Nk;
}

/* What repeat's length does to slice r (1-D lengths): "" when it masks
 * the same keys as repeat_interleave's. */
static void lens_effect(char *buf, size_t n, const struct walk *w, size_t r)
{
    const size_t ki = kept_keys(w->rep_i[r], w->Nk), kt = kept_keys(w->rep_t[r], w->Nk);
    const size_t lo = ki < kt ? ki : kt, hi = ki < kt ? kt : ki; /* keys lo … hi−1 differ */
    char keys[64];
    buf[0] = '\0';
    if (lo == hi)
        return;
    if (hi - lo == 1)
        snprintf(keys, sizeof keys, _("key %zu"), lo);
    else
        snprintf(keys, sizeof keys, _("keys %zu..%zu"), lo, hi - 1);
    snprintf(buf, n, kt < ki ? "  ← masks %s too" : "  ← leaves %s unmasked", keys);
}

/* Whether repeat masks slice r otherwise than repeat_interleave. */
static int lens_wrong(const struct walk *w, size_t r)
{
    for (size_t c = 0; c < w->lens_cols; c++)
        if (kept_keys(w->rep_i[r * w->lens_cols + c], w->Nk) !=
            kept_keys(w->rep_t[r * w->lens_cols + c], w->Nk))
            return 1;
    return 0;
}

/* valid_lens through repeat_interleave, beside repeat: the slices that
 * repeat would mask with another example's length. */
static void print_lens(const struct walk *w)
{
    const problem *pr = w->pr;
    const size_t S = w->B * w->NH;
    size_t wrong = 0;
    char name[32], effect[96];
    if (!pr->valid_lens) {
        fputs(_("\nvalid_lens None: no slice is masked, and none needs repeating.\n"), stdout);
        return;
    }
    printf(_("\nvalid_lens %s, one per slice: torch.repeat_interleave(valid_lens, %zu, dim=0)\n"
           "beside valid_lens.repeat(%s), as tile would give:\n"),
           pr->vl_ndim == 2 ? "(B, N)" : "(B,)", w->NH, pr->vl_ndim == 2 ? "h, 1" : "h");
    fputs(_("  slice       repeat_interleave   repeat\n"), stdout);
    for (size_t r = 0; r < S; r++) {
        const int bad = lens_wrong(w, r);
        wrong += (size_t)bad;
        if (r >= SHOW_SLICES)
            continue;
        slice_name(name, sizeof name, w, r);
        if (w->lens_cols == 1) {
            char ri[48];
            lens_effect(effect, sizeof effect, w, r);
            snprintf(ri, sizeof ri, "%ld (b%zu)", w->rep_i[r], r / w->NH);
            printf("  [%zu]%s %-7s %-19s %ld (b%zu)%s\n", r, r < 10 ? " " : "", name, ri,
                   w->rep_t[r], r % w->B, effect);
        } else {
            printf(_("  [%zu]%s %-7s b%zu's row%-10s b%zu's row%s\n"), r, r < 10 ? " " : "", name,
                   r / w->NH, "", r % w->B, bad ? _("  ← other lengths") : "");
        }
    }
    if (S > SHOW_SLICES)
        printf(_("  … %zu slices in all\n"), S);
    printf(_("repeat would mask %zu of %zu slices wrongly%s\n"), wrong, S,
           wrong ? _(", with another example's lengths") : _(" (here the lengths agree)"));
}

/* transpose_output: which slice and row each token's columns come from. */
static void print_back(const struct walk *w)
{
    const size_t B = w->B, N = w->Nq, NH = w->NH, p = w->p;
    printf(_("\ntranspose_output: the heads' outputs (%zu, %zu, %zu) back to (%zu, %zu, %zu)\n"),
           B * NH, N, p, B, N, w->H);
    printf(_("  reshape(B, h, N, H/h) (%zu, %zu, %zu, %zu) → permute(0, 2, 1, 3) (%zu, %zu, %zu, "
           "%zu)\n  → reshape(B, N, H): token [b, t] gets slice b·%zu + h's row t as columns "
           "h·%zu …\n"), B, NH, N, p, B, N, NH, p, NH, p);
    for (size_t bt = 0; bt < B * N && bt < SHOW_SLICES; bt++) {
        printf("  b%zu t%zu ←", bt / N, bt % N);
        for (size_t h = 0; h < NH && h < 4; h++) {
            const size_t s = w->back[bt * w->H + h * p]; /* into (B·NH, N, p) */
            printf(_("%s [%zu] row %zu"), h ? " |" : "", s / (N * p), s / p % N);
        }
        printf("%s\n", NH > 4 ? " | …" : "");
    }
    if (B * N > SHOW_SLICES)
        printf(_("  … %zu tokens in all\n"), B * N);
}

/* The check: the batch of slices, put back, against --explain's heads. */
static void print_check(const struct walk *w)
{
    printf(_("\nCheck: DotProductAttention on the %zu slices, put back by transpose_output,\n"
           "against the per-head outputs of --explain (Step 7, side by side in Step 8):\n"
           "  largest difference %.3g%s\n"), w->B * w->NH, w->diff,
           w->diff == 0 ? _(" (the same bits)") : "");
    if (w->pr->valid_lens)
        printf(_("  with repeat instead of repeat_interleave: %.3g%s\n"), w->diff_tiled,
               w->diff_tiled == 0 ? _(" (no difference here)") : "");
    printf(_("  with a reshape without the permute: %.3g%s\n"), w->diff_no_perm,
           w->diff_no_perm == 0 ? (w->NH == 1 || w->Nq == 1 ? _(" (the permute moves nothing here)")
                                                            : _(" (equal tokens hide it)"))
                                : "");
}

static void print_walk(const struct walk *w)
{
    fputs(_("attn multihead --explain-shapes: d2l's transpose_qkv and transpose_output\n"), stdout);
    printf(_("queries (%zu, %zu, %zu), keys and values (%zu, %zu, %zu); num_hiddens %zu = %zu "
           "heads × %zu\n"), w->B, w->Nq, w->H, w->B, w->Nk, w->H, w->H, w->NH, w->p);
    fputs(_("labels: b example, t token, h head, c column within the head\n\n"), stdout);
    print_steps(w);
    printf("\n");
    fputs(_("The (B·h, N, H/h) tensor, slice by slice: its rows are the tokens in order\n"), stdout);
    print_slices(w, w->qkv, NULL);
    fputs(_("\nWithout the permute, reshape(B·h, N, H/h) straight from (B, N, H):\n"), stdout);
    print_slices(w, w->plain, mixing_mark);
    const size_t mixed = mixed_slices(w);
    if (mixed)
        printf(_("%zu of %zu slices mix tokens and heads: a \"query\" of such a head is a piece "
               "of\nanother token, and its attention is not the head's.\n"), mixed,
               w->B * w->NH);
    else
        printf(_("With %s the permute moves nothing: both layouts agree.\n"),
               w->NH == 1 ? _("one head") : _("one token"));
    print_lens(w);
    print_back(w);
    print_check(w);
}

/* ---- --json -------------------------------------------------------------- */

/* A map of n0 × n1 × n2 indices as nested arrays, the last axis inline. */
static void json_map(json_writer *jw, const char *key, const size_t *map, size_t n0, size_t n1,
                     size_t n2)
{
    json_array_begin(jw, key, JSON_BLOCK);
    for (size_t i = 0; i < n0; i++) {
        json_array_begin(jw, NULL, n1 * n2 <= 16 ? JSON_INLINE : JSON_BLOCK);
        for (size_t j = 0; j < n1; j++) {
            json_array_begin(jw, NULL, JSON_INLINE);
            for (size_t k = 0; k < n2; k++)
                json_uint(jw, NULL, map[(i * n1 + j) * n2 + k]);
            json_end(jw);
        }
        json_end(jw);
    }
    json_end(jw);
}

/* Lengths (rows, cols) as a list, or a list of lists when cols > 1. */
static void json_lens(json_writer *jw, const char *key, const long *v, size_t rows, size_t cols,
                      int two_d)
{
    json_array_begin(jw, key, JSON_INLINE);
    for (size_t r = 0; r < rows; r++) {
        if (two_d)
            json_array_begin(jw, NULL, JSON_INLINE);
        for (size_t c = 0; c < cols; c++)
            json_int(jw, NULL, v[r * cols + c]);
        if (two_d)
            json_end(jw);
    }
    json_end(jw);
}

static void json_shape(json_writer *jw, const char *op, size_t n, const size_t *shape)
{
    json_object_begin(jw, NULL, JSON_INLINE);
    json_string(jw, "op", op);
    json_array_begin(jw, "shape", JSON_INLINE);
    for (size_t i = 0; i < n; i++)
        json_uint(jw, NULL, shape[i]);
    json_end(jw);
    json_end(jw);
}

static void write_members(json_writer *jw, const void *arg)
{
    const struct walk *w = arg;
    const problem *pr = w->pr;
    const size_t S = w->B * w->NH;
    json_string(jw, "command", "multihead");
    json_string(jw, "explain", "shapes");
    json_uint(jw, "batch", w->B);
    json_uint(jw, "num_queries", w->Nq);
    json_uint(jw, "num_kv", w->Nk);
    json_uint(jw, "num_hiddens", w->H);
    json_uint(jw, "num_heads", w->NH);
    json_array_begin(jw, "steps", JSON_BLOCK);
    json_shape(jw, "W_q(X)", 3, (size_t[]){w->B, w->Nq, w->H});
    json_shape(jw, "reshape", 4, (size_t[]){w->B, w->Nq, w->NH, w->p});
    json_shape(jw, "permute(0, 2, 1, 3)", 4, (size_t[]){w->B, w->NH, w->Nq, w->p});
    json_shape(jw, "reshape", 3, (size_t[]){S, w->Nq, w->p});
    json_end(jw);
    json_map(jw, "transpose_qkv", w->qkv, S, w->Nq, w->p);
    json_map(jw, "reshape_only", w->plain, S, w->Nq, w->p);
    json_map(jw, "transpose_output", w->back, w->B, w->Nq, w->H);
    if (!pr->valid_lens) {
        json_null(jw, "valid_lens");
        json_null(jw, "repeat_interleave");
        json_null(jw, "repeat");
    } else {
        json_lens(jw, "valid_lens", pr->valid_lens, w->B, w->lens_cols, pr->vl_ndim == 2);
        json_lens(jw, "repeat_interleave", w->rep_i, S, w->lens_cols, pr->vl_ndim == 2);
        json_lens(jw, "repeat", w->rep_t, S, w->lens_cols, pr->vl_ndim == 2);
    }
    json_number(jw, "max_diff", w->diff);
    if (pr->valid_lens)
        json_number(jw, "max_diff_repeat", w->diff_tiled);
    else
        json_null(jw, "max_diff_repeat");
    json_number(jw, "max_diff_no_permute", w->diff_no_perm);
}

static int write_json(FILE *f, const void *arg)
{
    return json_document(f, 0, write_members, arg);
}

/* ---- the command ----------------------------------------------------------- */

static double max_abs_diff(const float *a, const float *b, size_t n)
{
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double d = fabs((double)a[i] - b[i]);
        worst = d > worst ? d : worst;
    }
    return worst;
}

/* The reference forward pass (mha_forward, as --explain runs it) into
 * w->heads, its trace's concatenated heads. 0, or -1 after the error. */
static int reference_heads(struct walk *w, const mha_masks *mask)
{
    const problem *pr = w->pr;
    const size_t nq = w->B * w->Nq * w->H, nk = w->B * w->Nk * w->H;
    const size_t nw = w->B * w->NH * w->Nq * w->Nk;
    float *out = float_alloc(nq + 1), *weights = float_alloc(nw + 1);
    float *Q = float_alloc(nq + 1), *K = float_alloc(nk + 1), *V = float_alloc(nk + 1);
    mha_trace t = {Q, K, V, NULL, NULL, NULL, w->heads};
    char err[256];
    int status = -1;
    if (!out || !weights || !Q || !K || !V) {
        cli_error("out of memory for --explain-shapes");
    } else if (mha_forward(out, weights, &t, pr->queries.data, problem_keys(pr),
                           problem_values(pr), w->B, w->Nq, w->Nk, &pr->params, mask, NULL, err,
                           sizeof err)) {
        cli_error("%s", err);
    } else {
        /* d2l's path from the same projections: the batch of slices, with
         * the right layout, without the permute, and with repeat */
        const int plain[4] = {0, 1, 2, 3};
        const size_t B = w->B, Nq = w->Nq, Nk = w->Nk, H = w->H, NH = w->NH;
        if (mha_heads_batched(w->batched, Q, K, V, B, Nq, Nk, H, NH, mask, mha_heads_perm, 1,
                              err, sizeof err) ||
            mha_heads_batched(w->no_perm, Q, K, V, B, Nq, Nk, H, NH, mask, plain, 1, err,
                              sizeof err) ||
            mha_heads_batched(w->tiled, Q, K, V, B, Nq, Nk, H, NH, mask, mha_heads_perm, 0, err,
                              sizeof err))
            cli_error("%s", err);
        else
            status = 0;
    }
    FREE_EACH(out, weights, Q, K, V);
    return status;
}

/* The maps and the three results. 0, or -1 after the error. */
static int walk_alloc(struct walk *w, const problem *pr, const shapes_opts *o)
{
    const size_t nq = pr->B * pr->Nq * pr->params.num_hiddens;
    const int plain[4] = {0, 1, 2, 3};
    memset(w, 0, sizeof *w);
    w->pr = pr;
    w->o = o;
    w->B = pr->B;
    w->Nq = pr->Nq;
    w->Nk = pr->Nk;
    w->H = pr->params.num_hiddens;
    w->NH = pr->params.num_heads;
    w->p = w->H / w->NH;
    w->lens_cols = pr->vl_ndim == 2 ? pr->Nq : 1;
    w->qkv = malloc(nq * sizeof *w->qkv + 1);
    w->plain = malloc(nq * sizeof *w->plain + 1);
    w->back = malloc(nq * sizeof *w->back + 1);
    w->heads = float_alloc(nq + 1);
    w->batched = float_alloc(nq + 1);
    w->no_perm = float_alloc(nq + 1);
    w->tiled = float_alloc(nq + 1);
    if (pr->valid_lens) {
        w->rep_i = malloc(w->B * w->NH * w->lens_cols * sizeof(long));
        w->rep_t = malloc(w->B * w->NH * w->lens_cols * sizeof(long));
    }
    if (!w->qkv || !w->plain || !w->back || !w->heads || !w->batched || !w->no_perm ||
        !w->tiled || (pr->valid_lens && (!w->rep_i || !w->rep_t))) {
        cli_error("out of memory for --explain-shapes");
        return -1;
    }
    mha_transpose_qkv_index(w->qkv, w->B, w->Nq, w->H, w->NH, mha_heads_perm);
    mha_transpose_qkv_index(w->plain, w->B, w->Nq, w->H, w->NH, plain);
    mha_transpose_output_index(w->back, w->B, w->Nq, w->H, w->NH, mha_heads_perm);
    if (pr->valid_lens) {
        mha_repeat_lens(w->rep_i, pr->valid_lens, w->B, w->lens_cols, w->NH, 1);
        mha_repeat_lens(w->rep_t, pr->valid_lens, w->B, w->lens_cols, w->NH, 0);
    }
    return 0;
}

int shapes_explain_command(const problem *pr, const shapes_opts *o)
{
    const mha_masks mask = {pr->valid_lens, pr->vl_ndim == 2, o->causal, 0};
    size_t run, extra, total;
    struct walk w;
    int status = EXIT_RUNTIME;
    char what[160];
    /* --max-mem: the traced forward pass, then the maps and the batches */
    int overflow = problem_run_bytes(pr, 1, 1, &run) || walk_bytes(pr, &extra) ||
                   size_add(run, extra, &total);
    snprintf(what, sizeof what, _("batch %zu × %zu heads × %zu queries × %zu keys"), pr->B,
             pr->params.num_heads, pr->Nq, pr->Nk);
    if (cli_check_mem(what, overflow ? SIZE_MAX : total, overflow, o->max_mem, NULL))
        return EXIT_RUNTIME;
    if (walk_alloc(&w, pr, o) == 0 && reference_heads(&w, &mask) == 0) {
        const size_t n = w.B * w.Nq * w.H;
        w.diff = max_abs_diff(w.batched, w.heads, n);
        w.diff_no_perm = max_abs_diff(w.no_perm, w.heads, n);
        w.diff_tiled = max_abs_diff(w.tiled, w.heads, n);
        FILE *rep = output_report_stream(o->json);
        if (!(o->json && strcmp(o->json, "-") == 0))
            print_walk(&w);
        status = EXIT_OK;
        if (w.diff != 0) { /* the layouts are wrong: never a silent wrong answer */
            cli_error("--explain-shapes: the heads put back differ from --explain's by %.3g",
                      w.diff);
            status = EXIT_RUNTIME;
        } else if (o->json)
            status = output_json(o->json, write_json, &w, rep, "the index maps as JSON");
    }
    walk_free(&w);
    return status;
}
