/* attention_demos.c — order blindness (--permute) and why divide by √d
 * (--scale-sweep), the two demos of `attn selfattn` (see attention_demos.h
 * for the dimensions and the mathematics). */
#include "attention_demos.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attention.h"
#include "cli.h"
#include "json_writer.h"
#include "output.h"
#include "page_out.h"
#include "term.h"
#include "checked.h"
#include "fmath.h"

#define MAX_DIM_EXP 20      /* --dims up to 2^20 */
#define SHOW_PERM 32        /* entries of π printed; the JSON has all */
#define SHOW_SENTENCES 4    /* examples whose tokens are printed */
#define LABEL_POSITIONS 64  /* up to this N the figure labels rows "x3" */
#define TEXT_WIDTH 78       /* explanations are wrapped to this */

/* ---- shared ---------------------------------------------------------- */

/* s right-aligned in width columns. */
static void print_right(const char *s, size_t width)
{
    size_t n = term_text_columns(s);
    printf("%*s%s", n < width ? (int)(width - n) : 0, "", s);
}

/* ---- order blindness: the computation --------------------------------- */

int demo_parse_permutation(const char *s, size_t *perm, size_t n, char *err, size_t errlen)
{
    const char *p = s;
    size_t count = 0, i;
    unsigned char *seen = calloc(n, 1); /* (n,) positions listed so far */

    if (!seen) {
        snprintf(err, errlen, "%s", _("--permutation: out of memory"));
        return -1;
    }
    for (;;) {
        const char *start = p;
        char *end;
        /* one position: digits, then a comma or the end */
        if (*p < '0' || *p > '9') {
            snprintf(err, errlen, _("--permutation: expected positions separated by commas, "
                     "like 3,0,2,1, got '%s'"), s);
            goto fail;
        }
        long v = strtol(p, &end, 10); /* LONG_MAX when too long: not a position either */
        p = end;
        if (*p != ',' && *p != '\0') {
            snprintf(err, errlen, _("--permutation: expected positions separated by commas, "
                     "like 3,0,2,1, got '%s'"), s);
            goto fail;
        }
        if (count == n) {
            snprintf(err, errlen, _("--permutation: has more than %zu positions, but the "
                     "sequence has %zu (a permutation of 0 … %zu)"), n, n, n - 1);
            goto fail;
        }
        /* a position of the sequence, listed once */
        if ((unsigned long)v >= n) {
            snprintf(err, errlen, _("--permutation: %.*s is not a position of the sequence of "
                     "%zu (0 … %zu)"), (int)(p - start), start, n, n - 1);
            goto fail;
        }
        if (seen[v]) {
            snprintf(err, errlen, _("--permutation: %ld appears twice (a permutation lists "
                     "each of 0 … %zu once)"), v, n - 1);
            goto fail;
        }
        seen[v] = 1;
        perm[count++] = (size_t)v;
        if (*p == '\0')
            break;
        p++;
    }
    if (count != n) {
        for (i = 0; i < n && seen[i]; i++)
            ;
        char positions[48];
        snprintf(err, errlen, _("--permutation: has %s, but the sequence has %zu "
                 "(a permutation of 0 … %zu; %zu is missing)"),
                 cli_count(positions, sizeof positions, "%zu position", "%zu positions", count),
                 n, n - 1, i);
        goto fail;
    }
    free(seen);
    return 0;
fail:
    free(seen);
    return -1;
}

/* ---- order blindness: the command ------------------------------------- */

/* Example b's token labels (N,), or NULL. */
static char *const *example_tokens(const problem *pr, size_t b)
{
    if (!pr->query_tokens)
        return NULL;
    return pr->per_example ? pr->query_tokens + b * pr->Nq : pr->query_tokens;
}

/* valid_lens shorter than the sequence mask padding, which stays where it
 * is while the tokens move: a usage error. */
static int check_lens(const problem *pr, const char *origin)
{
    size_t count = pr->vl_ndim == 2 ? pr->B * pr->Nq : pr->B;
    for (size_t i = 0; pr->valid_lens && i < count; i++)
        if ((size_t)pr->valid_lens[i] < pr->Nq) {
            cli_error("--permute: valid_len %ld (%s) is shorter than the sequence of %zu: "
                      "padding does not move with the tokens, so every valid_len must cover "
                      "the sequence", pr->valid_lens[i], origin, pr->Nq);
            return -1;
        }
    return 0;
}

static void print_perm(const size_t *perm, size_t n)
{
    printf("[");
    for (size_t i = 0; i < n && i < SHOW_PERM; i++)
        printf(i ? ", %zu" : "%zu", perm[i]);
    printf("%s]", n > SHOW_PERM ? ", …" : "");
}

/* What the differences say (res->equal: within float32 rounding). */
static const char *permute_verdict(const permute_result *res, int posenc)
{
    if (res->equal && res->identity)
        return _("Equal: this π is the identity and moves nothing.");
    if (res->equal && res->rows_alike)
        return _("Equal: the rows of X are all alike, so π·X = X and nothing moved; --fill random "
               "or --tokens give tokens that differ.");
    if (res->equal && !posenc)
        return _("Equal up to float32 rounding: without positional encoding self-attention cannot "
               "see the order of its tokens. Permuting them only permutes the outputs and the "
               "weights the same way, f(π·X) = π·f(X) and A(π·X) = π·A(X)·πᵀ: every token "
               "attends to the same tokens as before, wherever they stand.");
    if (res->equal)
        return _("Equal up to float32 rounding, even with positional encoding: here the tokens "
               "that moved are alike.");
    if (posenc)
        return _("Not equal: with the encoding a token's vector depends on where it stands, so "
               "moving the tokens changes what they attend to, not only where the results land. "
               "Self-attention now sees the order (without --posenc the differences are float32 "
               "rounding).");
    return _("Not equal beyond float32 rounding, which self-attention without positional encoding "
           "should be.");
}

static void print_permute(const problem *pr, const demo_permute_opts *o, const size_t *perm,
                          const permute_result *res)
{
    const size_t N = pr->Nq, H = pr->params.num_hiddens, NH = pr->params.num_heads;
    const int fast = !o->naive && pr->params.score == SCORE_DOT;
    const char *x = o->posenc ? "X + P" : "X", *px = o->posenc ? "π·X + P" : "π·X";
    char shape[64];

    tensor_shape_str(shape, sizeof shape, 3, (size_t[]){pr->B, N, pr->Dq});
    printf(_("Order blindness (--permute): X %s, %s%s\n"), shape, _(o->inputs),
           o->fill_default ? _(" (--fill random, --permute's default: rows of ones are all "
                               "alike)") : "");
    printf(_("the same layer on X and on π·X: num_hiddens %zu = %zu heads × %zu, %s%s%s, %s\n"),
           H, NH, H / NH,
           pr->params.score == SCORE_DOT ? _("scaled dot-product") : _("additive scoring"),
           pr->params.W_q.bias.data ? _(", biases") : "",
           pr->valid_lens ? _(", valid_lens covering the sequence") : "",
           fast ? _("fast loops") : _("reference loops"));
    if (o->posenc)
        fputs(_("positional encoding P added after permuting: X + P against π·X + P (the tokens "
               "move, the positions stay)\n"), stdout);
    else
        fputs(_("no positional encoding\n"), stdout);
    printf("π = ");
    print_perm(perm, N);
    printf(_(" (%s): row i of π·X is row π[i] of X\n"),
           o->permutation ? "--permutation" : _("random from --seed, not the identity"));
    for (size_t b = 0; pr->query_tokens && b < pr->B && b < SHOW_SENTENCES; b++) {
        char *const *t = example_tokens(pr, b);
        if (pr->per_example && pr->B > 1)
            printf(_("tokens (example %zu):"), b);
        else
            fputs(_("tokens:"), stdout);
        for (size_t i = 0; i < N; i++)
            printf(" %s", t[i]);
        printf("  →  π·X:");
        for (size_t i = 0; i < N; i++)
            printf(" %s", t[perm[i]]);
        printf("\n");
        if (!pr->per_example)
            break;
    }
    printf(_("largest |f(%s) − π·f(%s)|: %.3g over %zu outputs (which reach %.3g)\n"), px, x,
           res->output_diff, res->out.size, res->output_max);
    printf(_("largest |A(%s) − π·A(%s)·πᵀ|: %.3g over %zu attention weights\n"), px, x,
           res->weight_diff, res->w.size);
    term_put_wrapped(stdout, permute_verdict(res, o->posenc), TEXT_WIDTH);
}

/* --json: the demo's numbers, then both runs in full. */
struct permute_json {
    const problem *pr;
    const demo_permute_opts *o;
    const size_t *perm;
    const permute_result *res;
};

/* The tokens of each example (reordered by perm unless NULL), null
 * without tokens. */
static void write_sentences(json_writer *jw, const char *key, const problem *pr,
                            const size_t *perm)
{
    size_t nb = pr->per_example ? pr->B : 1;
    if (!pr->query_tokens) {
        json_null(jw, key);
        return;
    }
    json_array_begin(jw, key, JSON_INLINE);
    for (size_t b = 0; b < nb; b++) {
        char *const *t = example_tokens(pr, b);
        json_array_begin(jw, NULL, JSON_INLINE);
        for (size_t i = 0; i < pr->Nq; i++)
            json_string(jw, NULL, t[perm ? perm[i] : i]);
        json_end(jw);
    }
    json_end(jw);
}

/* A demo's document begins {"command": "selfattn", "demo": NAME, … */
static void begin_demo_json(json_writer *jw, FILE *f, const char *demo)
{
    json_writer_init(jw, f);
    json_object_begin(jw, NULL, JSON_BLOCK);
    json_string(jw, "command", "selfattn");
    json_string(jw, "demo", demo);
}

/* --json's members (the page of --html begins with them too). */
static void permute_members(json_writer *jw, const void *arg)
{
    const struct permute_json *c = arg;
    const problem *pr = c->pr;
    const permute_result *res = c->res;

    json_string(jw, "command", "selfattn");
    json_string(jw, "demo", "permute");
    json_array_begin(jw, "permutation", JSON_INLINE);
    for (size_t i = 0; i < pr->Nq; i++)
        json_uint(jw, NULL, c->perm[i]);
    json_end(jw);
    json_bool(jw, "posenc", c->o->posenc);
    json_number(jw, "max_output_diff", res->output_diff);
    json_number(jw, "max_weight_diff", res->weight_diff);
    json_number(jw, "max_abs_output", res->output_max);
    json_array_begin(jw, "shape", JSON_INLINE);
    json_uint(jw, NULL, pr->B);
    json_uint(jw, NULL, pr->Nq);
    json_uint(jw, NULL, pr->params.num_hiddens);
    json_end(jw);
    json_uint(jw, "num_heads", pr->params.num_heads);
    json_string(jw, "inputs", c->o->inputs);
    json_uint(jw, "seed", c->o->seed);
    json_string(jw, "loops",
                !c->o->naive && pr->params.score == SCORE_DOT ? "fast" : "reference");
    write_sentences(jw, "tokens", pr, NULL);
    write_sentences(jw, "permuted_tokens", pr, c->perm);
    json_tensor(jw, "output", res->out.data, 3, res->out.shape);
    json_tensor(jw, "output_permuted", res->out_p.data, 3, res->out_p.shape);
    json_tensor(jw, "attention_weights", res->w.data, 4, res->w.shape);
    json_tensor(jw, "attention_weights_permuted", res->w_p.data, 4, res->w_p.shape);
}

static int write_permute_json(FILE *f, const void *arg)
{
    return json_document(f, 0, permute_members, arg);
}

/* --html: the members, then "page": an attention page whose rows are, for
 * each example, A(X), A(π·X) and π·A(X)·πᵀ (which equals A(π·X) unless
 * P is added after permuting), each labelled with its tokens. */
static void write_permute_page(json_writer *jw, const void *arg)
{
    const struct permute_json *c = arg;
    const problem *pr = c->pr;
    const permute_result *res = c->res;
    const size_t B = pr->B, N = pr->Nq, NH = pr->params.num_heads, NN = N * N;
    static const char *const kinds[3] = {"A(X)", "A(π·X)", "π·A(X)·πᵀ"};
    float *w = malloc(3 * B * NH * NN * sizeof *w + 1); /* (3B, NH, N, N) */
    permute_members(jw, c);
    json_object_begin(jw, "page", JSON_BLOCK);
    page_head(jw, "attention", "attn selfattn --permute", c->o->argc, c->o->argv, c->o->cmap);
    if (!w) { /* a malformed page is refused by output_page */
        json_end(jw);
        json_end(jw);
        return;
    }
    for (size_t b = 0; b < B; b++)
        for (size_t h = 0; h < NH; h++) {
            const float *a = res->w.data + (b * NH + h) * NN, *ap = res->w_p.data + (b * NH + h) * NN;
            float *w0 = w + ((3 * b + 0) * NH + h) * NN, *w1 = w + ((3 * b + 1) * NH + h) * NN;
            float *w2 = w + ((3 * b + 2) * NH + h) * NN;
            memcpy(w0, a, NN * sizeof *w);
            memcpy(w1, ap, NN * sizeof *w);
            for (size_t i = 0; i < N; i++) /* (π·A·πᵀ)[i][j] = A[π(i)][π(j)] */
                for (size_t j = 0; j < N; j++)
                    w2[i * N + j] = a[c->perm[i] * N + c->perm[j]];
        }
    json_tensor_base64(jw, "weights", w, 4, (size_t[]){3 * B, NH, N, N});
    free(w);
    json_bool(jw, "causal", 0);
    json_string(jw, "xlabel", "Key positions");
    json_string(jw, "ylabel", "Query positions");
    json_array_begin(jw, "rows", JSON_BLOCK);
    for (size_t b = 0; b < B; b++) {
        char *const *t = pr->query_tokens ? example_tokens(pr, b) : NULL;
        for (size_t k = 0; k < 3; k++) {
            char name[64];
            snprintf(name, sizeof name, _("%s example %zu"), kinds[k], b);
            json_object_begin(jw, NULL, JSON_INLINE);
            json_string(jw, "name", name);
            for (int axis = 0; axis < 2; axis++) {
                const char *key = axis ? "key_tokens" : "query_tokens";
                if (!t) {
                    json_null(jw, key);
                    continue;
                }
                json_array_begin(jw, key, JSON_INLINE);
                for (size_t i = 0; i < N; i++)
                    json_string(jw, NULL, t[k ? c->perm[i] : i]);
                json_end(jw);
            }
            json_null(jw, "valid_lens");
            json_end(jw);
        }
    }
    json_end(jw);
    json_end(jw);
}

/* --png: example 0, head 1: π·A(X)·πᵀ, A(π·X) and |difference| side by
 * side on one colour scale, from 0 to the largest weight. The difference is
 * drawn magnified by the largest k of 1, 2, 5, … 100 that keeps it on the
 * scale, and its title says by how much: a difference of 0.01 is then
 * visible, while float32 rounding (1e-7, even ×100) stays white. */
/* The figure's three panels: π·A(X)·πᵀ and the difference from pa (2, N,
 * N), A(π·X) as computed from w_p (N, N); their titles in titles. */
static void permute_figure_panels(heat_panel panels[3], char titles[3][96], const float *pa,
                                  const float *w_p, size_t N, int posenc, double worst, double k)
{
    snprintf(titles[0], sizeof titles[0], "π·A(%s)·πᵀ", posenc ? "X+P" : "X");
    snprintf(titles[1], sizeof titles[1], "A(π·X%s)", posenc ? "+P" : "");
    if (k > 1.0)
        snprintf(titles[2], sizeof titles[2], _("|difference| × %g (max %.2g)"), k, worst);
    else
        snprintf(titles[2], sizeof titles[2], _("|difference| (max %.2g)"), worst);
    memset(panels, 0, 3 * sizeof *panels);
    for (size_t i = 0; i < 3; i++) {
        panels[i].data = i == 0 ? pa : i == 1 ? w_p : pa + N * N;
        panels[i].rows = N;
        panels[i].cols = N;
        panels[i].title = titles[i];
    }
}

static int write_permute_png(const problem *pr, const demo_permute_opts *o, const size_t *perm,
                             const permute_result *res, text_font *font, FILE *rep)
{
    const size_t N = pr->Nq, NN = N * N;
    float *pa = float_alloc(2 * NN); /* (2, N, N) π·A(X)·πᵀ, |difference| */
    const char **labels = malloc(N * sizeof *labels + 1);  /* (N,) positions of π·X */
    char (*names)[24] = calloc(N < LABEL_POSITIONS ? N : 1, sizeof *names);
    char titles[3][96], what[160];
    char *const *t = example_tokens(pr, 0);
    heat_panel panels[3];
    heat_figure fig;
    double worst, top, k;
    int status = EXIT_RUNTIME;

    if (!pa || !labels || !names) {
        cli_error("%s: out of memory", o->png);
        goto done;
    }
    /* the panels: π·A(X)·πᵀ, A(π·X) as computed, their difference magnified */
    demo_permute_panels(pa, res->w.data, res->w_p.data, N, perm, &worst, &top, &k);
    permute_figure_panels(panels, titles, pa, res->w_p.data, N, o->posenc, worst, k);
    /* the positions of π·X: its tokens, or which row of X each holds */
    for (size_t i = 0; i < N; i++) {
        if (t) {
            labels[i] = t[perm[i]];
        } else if (N < LABEL_POSITIONS) {
            snprintf(names[i], sizeof names[i], "x%zu", perm[i]);
            labels[i] = names[i];
        }
    }
    memset(&fig, 0, sizeof fig);
    fig.panels = panels;
    fig.grid_rows = 1;
    fig.grid_cols = 3;
    fig.xlabel = _("Key positions of π·X");
    fig.ylabel = _("Query positions of π·X");
    if (t || N < LABEL_POSITIONS) {
        fig.xticklabels = labels;
        fig.yticklabels = labels;
    }
    fig.cmap = o->cmap;
    fig.vmin = 0.0;
    fig.vmax = top > 0.0 ? top : 1.0; /* the largest weight: one scale for all three */
    fig.colorbar_label = _("attention weight, example 0, head 1");
    fig.font = font;
    snprintf(what, sizeof what, _("π·A·πᵀ, A(π·X) and their difference, example 0, head 1%s"),
             o->posenc ? _(", positional encoding") : "");
    status = output_heatmap(o->png, &fig, rep, what);
done:
    free(pa);
    free(labels);
    free(names);
    return status;
}

/* The demo's memory: one run's buffers with its weights, the two inputs
 * and outputs, the other run's weights, and the figure's (2, N, N). -1 on
 * overflow. */
static int permute_bytes(const problem *pr, size_t *bytes)
{
    const size_t B = pr->B, N = pr->Nq, D = pr->Dq;
    const size_t H = pr->params.num_hiddens, NH = pr->params.num_heads;
    size_t part;
    return problem_run_bytes(pr, 1, 0, bytes) || tensor_bytes(3, (size_t[]){B, N, D}, &part) ||
                   size_mul(part, 2, &part) || size_add(*bytes, part, bytes) ||
                   tensor_bytes(3, (size_t[]){B, N, H}, &part) || size_mul(part, 2, &part) ||
                   size_add(*bytes, part, bytes) ||
                   tensor_bytes(4, (size_t[]){B, NH, N, N}, &part) ||
                   size_add(*bytes, part, bytes) || tensor_bytes(3, (size_t[]){2, N, N}, &part) ||
                   size_add(*bytes, part, bytes)
               ? -1
               : 0;
}

/* π (N,): given, or drawn; and no padding to leave behind. EXIT_OK, or
 * EXIT_USAGE after the message. */
static int choose_permutation(const problem *pr, const demo_permute_opts *o, size_t *perm)
{
    const size_t N = pr->Nq;
    char err[512];
    if (o->permutation) {
        if (demo_parse_permutation(o->permutation, perm, N, err, sizeof err)) {
            cli_error("%s", err);
            return EXIT_USAGE;
        }
    } else if (N < 2) {
        cli_error("--permute: a sequence of one position has no other order (give --queries 2 "
                  "or more)");
        return EXIT_USAGE;
    } else {
        demo_random_permutation(perm, N, o->seed);
    }
    return check_lens(pr, o->lens_origin) ? EXIT_USAGE : EXIT_OK;
}

/* The results (unless --json -), then --json, --png, --html. */
static int permute_outputs(const problem *pr, const demo_permute_opts *o, const size_t *perm,
                           const permute_result *res, text_font *font)
{
    FILE *rep = output_report_stream(o->json);
    struct permute_json ctx = {pr, o, perm, res};
    int status = EXIT_OK;
    if (!o->json || strcmp(o->json, "-") != 0)
        print_permute(pr, o, perm, res);
    if (o->json) {
        status = output_json(o->json, write_permute_json, &ctx, rep,
                             "the permutation, both runs and their differences");
        if (status != EXIT_OK)
            return status;
    }
    if (o->png)
        status = write_permute_png(pr, o, perm, res, font, rep);
    if (status == EXIT_OK && o->html)
        status = output_page(o->html, "attn selfattn --permute", write_permute_page, &ctx, rep,
                             "a page of A(X), A(π·X) and π·A(X)·πᵀ");
    return status;
}

int demo_permute_command(const problem *pr, const demo_permute_opts *o)
{
    const size_t B = pr->B, N = pr->Nq, D = pr->Dq, NH = pr->params.num_heads;
    const mha_masks mask = {pr->valid_lens, pr->vl_ndim == 2, 0, 0};
    size_t *perm = malloc(N * sizeof *perm + 1); /* (N,) */
    size_t bytes = 0;
    int overflow, status;
    permute_result res;
    char err[512], what[160];
    text_font *font = NULL; /* --font's, for the figure */

    memset(&res, 0, sizeof res);
    if (!perm) {
        cli_error("out of memory");
        return EXIT_RUNTIME;
    }
    if ((status = choose_permutation(pr, o, perm)) != EXIT_OK)
        goto done;

    /* memory, refused up front */
    overflow = permute_bytes(pr, &bytes);
    snprintf(what, sizeof what, _("--permute (two runs of batch %zu × %zu heads × %zu queries × "
             "%zu keys)"), B, NH, N, N);
    if (cli_check_mem(what, bytes, overflow, o->max_mem, NULL)) {
        status = EXIT_RUNTIME;
        goto done;
    }
    /* --font, read and checked before the runs */
    status = output_font_open(o->font, &font);
    if (status != EXIT_OK)
        goto done;

    /* the two runs */
    status = EXIT_RUNTIME;
    if (demo_permute_run(&res, &pr->params, pr->queries.data, B, N, D, &mask, perm, o->posenc,
                         o->naive, err, sizeof err)) {
        cli_error("%s", err);
        goto done;
    }

    status = permute_outputs(pr, o, perm, &res, font);
done:
    permute_result_free(&res);
    free(perm);
    output_font_close(font);
    return status;
}

int demo_parse_dims(const char *s, long *from, long *to)
{
    const char *colon = strchr(s, ':');
    char first[32];
    size_t len = colon ? (size_t)(colon - s) : 0;
    const long max = 1L << MAX_DIM_EXP;
    long v[2];

    if (!colon || len == 0 || len >= sizeof first || colon[1] == '\0') {
        cli_error("--dims: expected FROM:TO like 1:1024 (powers of two), got '%s'", s);
        return -1;
    }
    memcpy(first, s, len);
    first[len] = '\0';
    if (cli_parse_long("--dims", first, 1, max, &v[0]) ||
        cli_parse_long("--dims", colon + 1, 1, max, &v[1]))
        return -1;
    for (int i = 0; i < 2; i++)
        if (v[i] & (v[i] - 1)) {
            cli_error("--dims: %ld is not a power of two (1, 2, 4, …, %ld)", v[i], max);
            return -1;
        }
    if (v[0] > v[1]) {
        cli_error("--dims: FROM must not exceed TO, got '%s'", s);
        return -1;
    }
    *from = v[0];
    *to = v[1];
    return 0;
}

/* ---- why divide by √d: the command ------------------------------------ */

static void print_sweep(const demo_sweep_opts *o, const sweep_point *pts, size_t npts)
{
    const sweep_point *last = &pts[npts - 1];
    const double n = (double)o->keys;
    char text[1600], buf[64];

    printf(_("Why divide by √d (--scale-sweep): q and k of d independent N(0, 1) components,\n"
           "%zu samples per d (--samples), softmax over n = %zu keys (--kv), --seed %llu\n"),
           o->samples, o->keys, o->seed);
    printf(_("uniform softmax: largest weight %.4f (1/%zu), entropy %.4f nats (log %zu)\n\n"),
           1.0 / n, o->keys, fm_log(n), o->keys);
    /* the header, aligned by display columns (√ and · are one column each) */
    printf("%8s", "");
    term_put_field(stdout, _("      variance"), 24, 0);
    term_put_field(stdout, _("  mean largest weight"), 24, 0);
    fputs(_("  mean entropy (nats)"), stdout);
    fputc('\n', stdout);
    print_right("d", 8);
    print_right("q·k", 12);
    print_right("q·k/√d", 12);
    print_right("q·k", 12);
    print_right("q·k/√d", 12);
    print_right("q·k", 12);
    print_right("q·k/√d", 12);
    printf("\n");
    for (size_t i = 0; i < npts; i++) {
        const sweep_point *p = &pts[i];
        printf("%8zu", p->d);
        snprintf(buf, sizeof buf, "%.3f", p->var_raw);
        print_right(buf, 12);
        snprintf(buf, sizeof buf, "%.3f", p->var_scaled);
        print_right(buf, 12);
        printf("%12.4f%12.4f%12.4f%12.4f\n", p->max_raw, p->max_scaled, p->ent_raw,
               p->ent_scaled);
    }
    printf("\n");
    snprintf(text, sizeof text,
             _("q·k = q_1 k_1 + … + q_d k_d adds d products of mean 0 and variance 1, so its "
             "variance is d and the scores grow like √d. A softmax over such scores gets close "
             "to one-hot as d grows: at d = %zu its largest weight averages %.3f and its "
             "entropy %.3f nats (uniform: %.4g and %.3f), so nearly all the weight, and the "
             "gradient, goes to one key. Dividing by √d keeps the variance at 1 for every d, "
             "and the softmax keeps one shape whatever the width (largest weight %.3f, entropy "
             "%.3f nats at d = %zu). That is why scaled dot-product attention computes "
             "softmax(QKᵀ/√d)·V."),
             last->d, last->max_raw, last->ent_raw, 1.0 / n, fm_log(n), last->max_scaled,
             last->ent_scaled, last->d);
    term_put_wrapped(stdout, text, TEXT_WIDTH);
}

struct sweep_json {
    const demo_sweep_opts *o;
    const sweep_point *pts;
    size_t npts;
};

/* --json's members after "demo" (the page of --html has them too). */
static void sweep_members(json_writer *jw, const struct sweep_json *c)
{
    static const char *const keys[] = {"var_raw", "var_scaled", "max_weight_raw",
                                       "max_weight_scaled", "entropy_raw", "entropy_scaled"};
    json_array_begin(jw, "dims", JSON_INLINE);
    for (size_t i = 0; i < c->npts; i++)
        json_uint(jw, NULL, c->pts[i].d);
    json_end(jw);
    for (size_t s = 0; s < 6; s++) {
        json_array_begin(jw, keys[s], JSON_INLINE);
        for (size_t i = 0; i < c->npts; i++) {
            const sweep_point *p = &c->pts[i];
            const double v[6] = {p->var_raw, p->var_scaled, p->max_raw, p->max_scaled,
                                 p->ent_raw, p->ent_scaled};
            json_number(jw, NULL, v[s]);
        }
        json_end(jw);
    }
    json_uint(jw, "samples", c->o->samples);
    json_uint(jw, "keys", c->o->keys);
    json_uint(jw, "seed", c->o->seed);
}

static int write_sweep_json(FILE *f, const void *arg)
{
    json_writer jw;
    begin_demo_json(&jw, f, "scale-sweep");
    sweep_members(&jw, arg);
    json_end(&jw);
    return json_writer_finish(&jw);
}

/* --html: the members, then "page" of kind scale_sweep (scale_sweep.js
 * draws the two charts of --png from the members). */
static void write_sweep_page(json_writer *jw, const void *arg)
{
    const struct sweep_json *c = arg;
    json_string(jw, "command", "selfattn");
    json_string(jw, "demo", "scale-sweep");
    sweep_members(jw, c);
    json_object_begin(jw, "page", JSON_BLOCK);
    page_head(jw, "scale_sweep", "attn selfattn --scale-sweep", c->o->argc, c->o->argv, NULL);
    json_end(jw);
}

/* --png: the mean largest weight against log₂ d above, the variances
 * (log scale) below, one image. */
static int write_sweep_png(const demo_sweep_opts *o, const sweep_point *pts, size_t npts,
                           text_font *font, FILE *rep)
{
    double *v = malloc(6 * npts * sizeof *v + 1); /* (6, npts) x, max, var, uniform */
    double *x = v, *mr = v + npts, *ms = v + 2 * npts, *vr = v + 3 * npts, *vs = v + 4 * npts,
           *un = v + 5 * npts;
    char title[2][160], xlabel[96], uniform[48], err[512];
    attn_image top = {0, 0, NULL}, bottom = {0, 0, NULL}, img = {0, 0, NULL};
    int status = EXIT_RUNTIME;

    if (!v) {
        cli_error("%s: out of memory", o->png);
        return EXIT_RUNTIME;
    }
    for (size_t i = 0; i < npts; i++) {
        x[i] = fm_log2((double)pts[i].d);
        mr[i] = pts[i].max_raw;
        ms[i] = pts[i].max_scaled;
        vr[i] = pts[i].var_raw;
        vs[i] = pts[i].var_scaled;
        un[i] = 1.0 / (double)o->keys;
    }
    snprintf(xlabel, sizeof xlabel, _("log₂ d   (d = %zu … %zu)"), pts[0].d, pts[npts - 1].d);
    snprintf(uniform, sizeof uniform, _("uniform, 1/%zu"), o->keys);
    snprintf(title[0], sizeof title[0], _("Softmax over %zu keys: mean largest weight "
             "(1 = one-hot)"), o->keys);
    snprintf(title[1], sizeof title[1], "%s", _("Variance of the scores: q·k grows like d, q·k/√d "
             "stays at 1"));
    {
        const plot_series s1[3] = {{x, mr, npts, "q·k"}, {x, ms, npts, "q·k/√d"},
                                   {x, un, npts, uniform}};
        const plot_series s2[2] = {{x, vr, npts, "q·k"}, {x, vs, npts, "q·k/√d"}};
        const plot_figure f1 = {.series = s1, .nseries = 3, .title = title[0],
                                .xlabel = xlabel, .ylabel = _("largest weight"),
                                .height = 420, .font = font};
        const plot_figure f2 = {.series = s2, .nseries = 2, .title = title[1],
                                .xlabel = xlabel, .ylabel = _("variance"), .logy = 1,
                                .height = 420, .font = font};
        if (plot_draw(&top, &f1, err, sizeof err) || plot_draw(&bottom, &f2, err, sizeof err)) {
            cli_error("%s: %s", o->png, err);
            goto done;
        }
    }
    /* the two plots stacked: rows of top, then rows of bottom (same width) */
    if (image_alloc(&img, top.w, top.h + bottom.h, err, sizeof err)) {
        cli_error("%s: %s", o->png, err);
        goto done;
    }
    memcpy(img.rgb, top.rgb, (size_t)top.w * (size_t)top.h * 3);
    memcpy(img.rgb + (size_t)top.w * (size_t)top.h * 3, bottom.rgb,
           (size_t)bottom.w * (size_t)bottom.h * 3);
    status = output_png(o->png, &img, rep, "the softmax's largest weight and the variance "
                        "of the scores against d");
done:
    image_free(&top);
    image_free(&bottom);
    image_free(&img);
    free(v);
    return status;
}

/* The sweep's progress on a terminal. */
static void sweep_progress(size_t d, size_t d_to)
{
    fputc('\r', stderr); /* the line redrawn in place */
    fprintf(stderr, _("scale sweep: d = %zu of %zu "), d, d_to);
}

int demo_sweep_command(const demo_sweep_opts *o)
{
    sweep_point pts[MAX_DIM_EXP + 1];
    size_t npts = 0, bytes;
    int overflow, status = EXIT_RUNTIME, show = isatty(STDERR_FILENO);
    char what[160], err[256];
    FILE *rep = output_report_stream(o->json);
    text_font *font = NULL; /* --font's, for the figure */

    /* memory, refused up front */
    overflow = demo_sweep_bytes(o->samples, o->d_to, o->keys, &bytes);
    snprintf(what, sizeof what, _("--scale-sweep --samples %zu --dims %zu:%zu"), o->samples, o->d_from,
             o->d_to);
    if (cli_check_mem(what, bytes, overflow, o->max_mem, NULL))
        return EXIT_RUNTIME;
    /* --font, read and checked before the sweep */
    if (output_font_open(o->font, &font) != EXIT_OK)
        return EXIT_RUNTIME;

    /* every d: draw, score, softmax */
    if (demo_sweep(pts, MAX_DIM_EXP + 1, &npts, o->d_from, o->d_to, o->samples, o->keys, o->seed,
                   show ? sweep_progress : NULL, err, sizeof err)) {
        cli_error("%s", err);
        goto done;
    }
    if (show)
        fprintf(stderr, "\r%40s\r", "");

    /* the table, then the files */
    if (!o->json || strcmp(o->json, "-") != 0)
        print_sweep(o, pts, npts);
    status = EXIT_OK;
    if (o->json) {
        struct sweep_json ctx = {o, pts, npts};
        status = output_json(o->json, write_sweep_json, &ctx, rep,
                             "variances, largest weights and entropies against d");
        if (status != EXIT_OK)
            goto done;
    }
    if (o->png)
        status = write_sweep_png(o, pts, npts, font, rep);
    if (status == EXIT_OK && o->html) {
        struct sweep_json ctx = {o, pts, npts};
        status = output_page(o->html, "attn selfattn --scale-sweep", write_sweep_page, &ctx, rep,
                             "a page of the largest weight and the variance against d");
    }
done:
    output_font_close(font);
    return status;
}
