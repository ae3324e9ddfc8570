/* score_out.c — what `attn score` (SPEC.md §13) shows: each scoring
 * function's module, output and weights as PyTorch prints them, every
 * step (--explain), the section's masked_softmax calls, and its files:
 * --json, the figure (--png) and the page (--html). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json_writer.h"
#include "output.h"
#include "page_out.h"
#include "rng.h"
#include "score_cmd.h"
#include "score_explain.h"
#include "term.h"

const char *const score_names[] = {"additive", "dot", "general", "sum", NULL};
const char *const score_modules[] = {"AdditiveAttention", "DotProductAttention",
                                     "GeneralAttention", "SumAttention"};

/* A run's score as a formula: "a(q, k) = …". */
static void formula(char *buf, size_t n, const score_run *r)
{
    if (r->kind == KIND_ADDITIVE)
        snprintf(buf, n, "a(q, k) = w_vᵀ tanh(W_q q + W_k k)");
    else if (r->kind == KIND_GENERAL)
        snprintf(buf, n, "a(q, k) = qᵀ W k");
    else if (r->kind == KIND_SUM)
        snprintf(buf, n, "a(q, k) = Σᵢ (qᵢ + kᵢ)");
    else
        snprintf(buf, n, "a(q, k) = q·k / sqrt(%zu)", r->Dq);
}

/* Whether the output has a grad_fn in PyTorch: its weights are parameters. */
static int has_parameters(const score_run *r)
{
    return r->kind == KIND_ADDITIVE || r->kind == KIND_GENERAL;
}

/* ---- what a learner sees --------------------------------------------- */

/* "[2, 6]", "[[1, 3], [2, 4]]" or "None", cut with "…" when long. */
static void lens_text(char *buf, size_t n, const score_run *r)
{
    const size_t count = r->vl_ndim == 2 ? r->B * r->Nq : r->B, per = r->vl_ndim == 2 ? r->Nq : 0;
    size_t used = 0, i;
    if (!r->lens) {
        snprintf(buf, n, "None");
        return;
    }
    used += (size_t)snprintf(buf, n, "[");
    for (i = 0; i < count && used + 48 < n; i++) {
        const int open = per && i % per == 0, close = per && i % per == per - 1;
        used += (size_t)snprintf(buf + used, n - used, "%s%s%ld%s", i ? ", " : "",
                                 open ? "[" : "", r->lens[i], close ? "]" : "");
    }
    snprintf(buf + used, n - used, "%s]", i < count ? ", …" : "");
}

static void print_module(const score_run *r, const struct score_args *a)
{
    char q[64], k[64], v[64], lens[256], f[64];
    tensor_shape_str(q, sizeof q, 3, r->queries.shape);
    tensor_shape_str(k, sizeof k, 3, r->keys.shape);
    tensor_shape_str(v, sizeof v, 3, r->values.shape);
    lens_text(lens, sizeof lens, r);
    formula(f, sizeof f, r);
    if (r->kind == KIND_ADDITIVE)
        printf("AdditiveAttention(key_size=%zu, query_size=%zu, num_hiddens=%zu): %s\n", r->Dk,
               r->Dq, r->h, f);
    else if (r->kind == KIND_GENERAL)
        printf(_("GeneralAttention(query_size=%zu, key_size=%zu): %s, W (%zu, %zu)\n"
               "W(q) = qᵀ W as nn.Linear(%zu, %zu, bias=False), its W.weight (%zu, %zu); then "
               "W(q)·k\n"), r->Dq, r->Dk, f, r->Dq, r->Dk, r->Dq, r->Dk, r->Dk, r->Dq);
    else if (r->kind == KIND_SUM)
        printf("SumAttention(): %s = Σq + Σk\n", f);
    else
        printf("DotProductAttention(): %s\n", f);
    if (a->input)
        printf(_("queries %s, keys %s, values %s, valid_lens %s; from the file%s\n"), q, k, v,
               lens, has_parameters(r) && !r->has_state_dict
                         ? _(", weights random (nn.Linear's initialisation)") : "");
    else
        printf(_("queries %s normal(0, 1), keys %s %s, values %s arange(40), valid_lens %s\n"), q,
               k, a->keys_random ? "normal(0, 1)" : "ones", v, lens);
}

/* The output as PyTorch prints it, then the weights as numbers and (on a
 * colour terminal) as a heatmap, d2l's show_heatmaps of (B·Nq, Nk). */
static void print_result(const score_run *r, const struct score_args *a)
{
    printf("attention(queries, keys, values, valid_lens)\n");
    term_tensor3(stdout, r->output, (size_t[]){r->B, r->Nq, r->Dv}, 4,
                 has_parameters(r) ? "grad_fn=<BmmBackward0>" : NULL);
    fputs(_("\nattention.attention_weights: a softmax over the keys that are there\n"), stdout);
    term_tensor3(stdout, r->weights, (size_t[]){r->B, r->Nq, r->Nk}, 4, NULL);
    if (term_use_color(a->color, stdout)) {
        term_heatmap_opts o;
        memset(&o, 0, sizeof o);
        o.cmap = a->cmap;
        o.vmin = 0.0;
        o.vmax = 1.0;
        fputs(_("\nKeys → across, Queries ↓ (examples one after the other)\n"), stdout);
        term_heatmap(stdout, r->weights, r->B * r->Nq, r->Nk, &o);
    }
}

/* After label, the sum of each of the N vectors (d,) of example b of X
 * (B, N, d). */
static void print_sums(const char *label, const float *X, size_t b, size_t N, size_t d)
{
    printf("%s", label);
    for (size_t n = 0; n < N; n++) {
        double s = 0.0;
        for (size_t i = 0; i < d; i++)
            s += X[(b * N + n) * d + i];
        printf(" %.4f", s);
    }
}

/* --explain, the sum score: Σq of each query and Σk of each key of
 * example b, whose sums the scores are. */
static void explain_sums(const score_run *r, size_t b)
{
    print_sums("Σq of each query:", r->queries.data, b, r->Nq, r->Dq);
    print_sums("\nΣk of each key:", r->keys.data, b, r->Nk, r->Dq);
    fputs(_("\nscores: Σq + Σk for every query and key; a query adds the same Σq to all\n"
           "its keys, which the softmax takes away\n"), stdout);
}

/* --explain: one example's four steps. */
static void explain_example(const score_run *r, size_t b)
{
    const size_t Nq = r->Nq, Nk = r->Nk, h = r->h, nn = Nq * Nk;
    char len[64] = "";
    if (r->lens && r->vl_ndim == 1)
        snprintf(len, sizeof len, _(", valid_len %ld"), r->lens[b]);
    else if (r->lens)
        snprintf(len, sizeof len, "%s", _(", valid_lens per query"));
    printf(_("\n=== %s, example %zu%s ===\n"), score_modules[r->kind], b, len);
    if (r->kind == KIND_ADDITIVE) {
        fputs(_("\nStep 1. Scores: a(q, k) = w_vᵀ tanh(W_q q + W_k k)\n"), stdout);
        printf("W_q q  (%zu, %zu)\n", Nq, h);
        term_matrix(stdout, r->qh + b * Nq * h, Nq, h, 4, 6);
        printf("W_k k  (%zu, %zu)\n", Nk, h);
        term_matrix(stdout, r->kh + b * Nk * h, Nk, h, 4, 6);
        printf(_("scores: w_vᵀ tanh(W_q q + W_k k) for every query and key  (%zu, %zu)\n"), Nq, Nk);
    } else if (r->kind == KIND_GENERAL) {
        fputs(_("\nStep 1. Scores: a(q, k) = qᵀ W k\n"), stdout);
        printf(_("W(q) = qᵀ W: each query as a key-sized vector  (%zu, %zu)\n"), Nq, r->Dk);
        term_matrix(stdout, r->qw + b * Nq * r->Dk, Nq, r->Dk, 4, 6);
        printf(_("scores: W(q)·k for every query and key, one matrix product  (%zu, %zu)\n"), Nq,
               Nk);
    } else if (r->kind == KIND_SUM) {
        printf(_("\nStep 1. Scores: a(q, k) = Σᵢ (qᵢ + kᵢ) = Σq + Σk  (%zu, %zu)\n"), Nq, Nk);
        explain_sums(r, b);
    } else {
        printf(_("\nStep 1. Scores: a(q, k) = q·k / sqrt(%zu) = q·k / %.4f  (%zu, %zu)\n"), r->Dq,
               sqrt((double)r->Dq), Nq, Nk);
    }
    term_matrix(stdout, r->scores + b * nn, Nq, Nk, 4, 6);
    printf(_("\nStep 2. Masked: keys at k >= valid_len get -1e6  (%zu, %zu)\n"), Nq, Nk);
    term_matrix(stdout, r->masked + b * nn, Nq, Nk, 4, 6);
    printf(_("\nStep 3. Attention weights: softmax over keys, each row sums to 1  (%zu, %zu)\n"), Nq,
           Nk);
    term_matrix(stdout, r->weights + b * nn, Nq, Nk, 4, 6);
    printf(_("\nStep 4. Output: the weighted sum of the values, weights · values  (%zu, %zu)\n"), Nq,
           r->Dv);
    term_matrix(stdout, r->output + b * Nq * r->Dv, Nq, r->Dv, 4, 6);
}

/* --masked-softmax: the section's two calls, on X drawn as torch.rand. */
int score_print_masked_softmax(const struct score_args *a)
{
    static const long lens1[2] = {2, 3}, lens2[4] = {1, 3, 2, 4};
    const mha_masks masks[2] = {{lens1, 0, 0, 0}, {lens2, 1, 0, 0}};
    static const char *const calls[2] = {"torch.tensor([2, 3])",
                                         "torch.tensor([[1, 3], [2, 4]])"};
    float X[2 * 2 * 4];
    rng g;
    rng_seed(&g, (unsigned long long)a->seed);
    printf(_("masked_softmax(X, valid_lens): keys at k >= valid_len get -1e6, then a softmax\n"
           "over the keys; X is torch.rand(2, 2, 4) drawn from attn's --seed %ld (the\n"
           "book's draw differs, so do the numbers; the zeros fall where the book's do)\n"),
           a->seed);
    for (size_t c = 0; c < 2; c++) {
        for (size_t i = 0; i < 16; i++)
            X[i] = (float)rng_uniform(&g);
        printf("\nmasked_softmax(torch.rand(2, 2, 4), %s)\n", calls[c]);
        score_masked_softmax(X, 2, 2, 4, &masks[c]);
        term_tensor3(stdout, X, (size_t[]){2, 2, 4}, 4, NULL);
    }
    return EXIT_OK;
}

/* The keys a query's mask keeps: n of Nk (a length 0 masks all and one
 * above Nk none: then every key is alike, n = Nk). */
static size_t kept_keys(const score_run *r, size_t b, size_t q)
{
    const long len = !r->lens ? (long)r->Nk
                     : r->vl_ndim == 2 ? r->lens[b * r->Nq + q]
                                       : r->lens[b];
    return len <= 0 || (size_t)len > r->Nk ? r->Nk : (size_t)len;
}

/* How far a run is from equal scores: the widest spread of one query's
 * scores over the keys it keeps, and the largest |w − 1/n| of its weights. */
static void gap_from_uniform(const score_run *r, double *spread, double *gap)
{
    *spread = *gap = 0.0;
    for (size_t b = 0; b < r->B; b++)
        for (size_t q = 0; q < r->Nq; q++) {
            const size_t n = kept_keys(r, b, q), row = (b * r->Nq + q) * r->Nk;
            const float *s = r->scores + row, *w = r->weights + row; /* (Nk,) each */
            double lo = s[0], hi = s[0];
            for (size_t k = 0; k < n; k++) {
                lo = s[k] < lo ? s[k] : lo;
                hi = s[k] > hi ? s[k] : hi;
            }
            *spread = hi - lo > *spread ? hi - lo : *spread;
            for (size_t k = 0; k < r->Nk; k++) {
                const double d = fabs((double)w[k] - (k < n ? 1.0 / (double)n : 0.0));
                *gap = d > *gap ? d : *gap;
            }
        }
}

/* The largest |a − b| between two runs' weights (the same B, Nq, Nk). */
static double weights_gap(const score_run *x, const score_run *y)
{
    double worst = 0.0;
    for (size_t i = 0; i < x->B * x->Nq * x->Nk; i++) {
        const double d = fabs((double)x->weights[i] - y->weights[i]);
        worst = d > worst ? d : worst;
    }
    return worst;
}

/* --keys random: what the keys of ones hid, in numbers. */
static void print_keys_random(const score_run *runs, size_t n)
{
    fputs(_("\n--keys random: the keys differ, so do their scores, and the weights are no\n"
           "longer 1/valid_len (with the book's ones every key scores the same):\n"
           "                       score spread  largest |w - 1/valid_len|\n"), stdout);
    for (size_t i = 0; i < n; i++) {
        double spread, gap;
        gap_from_uniform(&runs[i], &spread, &gap);
        printf("  %-20s %12.4f %26.4f\n", score_modules[runs[i].kind], spread, gap);
    }
    fputs(_("(score spread: the largest minus the smallest score of a query over the keys\n"
           "it keeps, the widest of any query)\n"), stdout);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            printf(_("%s and %s weigh the same keys differently:\n"
                   "largest |difference| %.4f\n"), score_modules[runs[i].kind],
                   score_modules[runs[j].kind], weights_gap(&runs[i], &runs[j]));
}

/* The sum score: each query of an example against the first one with the
 * same keys kept (its own valid length, or the example's): the largest
 * |difference| of their weights and of their outputs; *pairs counted.
 * first (Nk + 1,): scratch, the first query keeping n keys. */
static void sum_rows_gap(const score_run *r, size_t *first, double *dw, double *dout,
                         size_t *pairs)
{
    *dw = *dout = 0.0;
    *pairs = 0;
    for (size_t b = 0; b < r->B; b++) {
        for (size_t n = 0; n <= r->Nk; n++)
            first[n] = SIZE_MAX;
        for (size_t q = 0; q < r->Nq; q++) {
            const size_t n = kept_keys(r, b, q);
            if (first[n] == SIZE_MAX) {
                first[n] = q;
                continue;
            }
            const size_t p = first[n];
            const float *wq = r->weights + (b * r->Nq + q) * r->Nk;
            const float *wp = r->weights + (b * r->Nq + p) * r->Nk;
            const float *oq = r->output + (b * r->Nq + q) * r->Dv;
            const float *op = r->output + (b * r->Nq + p) * r->Dv;
            for (size_t k = 0; k < r->Nk; k++)
                *dw = fmax(*dw, fabs((double)wq[k] - wp[k]));
            for (size_t c = 0; c < r->Dv; c++)
                *dout = fmax(*dout, fabs((double)oq[c] - op[c]));
            ++*pairs;
        }
    }
}

/* The sum score's lesson, checked on its numbers. */
static void print_sum_check(const score_run *r)
{
    double dw, dout;
    size_t pairs, *first = malloc((r->Nk + 1) * sizeof *first); /* Nk + 1 fits: Nk was allocated */
    if (!first) {
        fputs(_("\n(the sum score's check: out of memory)\n"), stdout);
        return;
    }
    sum_rows_gap(r, first, &dw, &dout, &pairs);
    free(first);
    fputs(_("\nThe sum score is Σq + Σk: a query adds the same Σq to every key's score,\n"
           "and the softmax over the keys takes it away (softmax(x + c) = softmax(x)).\n"
           "Every query of an example gets the same weights, and the same output.\n"), stdout);
    if (!pairs) {
        fputs(_("Checked: nothing to compare, one query per example (--queries N for "
               "more).\n"), stdout);
        return;
    }
    printf(i18n_plural("Checked on %zu query, each against the first of its example with the\n"
                       "same valid length: largest |weight difference| %.3g, |output difference|\n"
                       "%.3g: float32 rounding (each score Σq + Σk is rounded once).\n",
                       "Checked on %zu queries, each against the first of its example with the\n"
                       "same valid length: largest |weight difference| %.3g, |output difference|\n"
                       "%.3g: float32 rounding (each score Σq + Σk is rounded once).\n",
                       pairs),
           pairs, dw, dout);
}

void score_print_runs(const score_run *runs, size_t n, const struct score_args *a)
{
    for (size_t i = 0; i < n; i++) {
        printf(i ? "\n\n" : "");
        print_module(&runs[i], a);
        for (size_t b = 0; a->explain && b < runs[i].B; b++)
            explain_example(&runs[i], b);
        printf("\n");
        print_result(&runs[i], a);
        if (runs[i].kind == KIND_SUM)
            print_sum_check(&runs[i]);
    }
    if (a->keys_random)
        print_keys_random(runs, n);
}


/* ---- output files ------------------------------------------------------ */
/* The lengths as key: (B,) or (B, Nq), or null; layout that of the outer
 * array of (B, Nq). */
static void write_lens(json_writer *jw, const char *key, const score_run *r, json_layout layout)
{
    if (!r->lens) {
        json_null(jw, key);
        return;
    }
    json_array_begin(jw, key, r->vl_ndim == 2 ? layout : JSON_INLINE);
    for (size_t b = 0; b < r->B; b++) {
        if (r->vl_ndim == 1) {
            json_int(jw, NULL, r->lens[b]);
            continue;
        }
        json_array_begin(jw, NULL, JSON_INLINE);
        for (size_t q = 0; q < r->Nq; q++)
            json_int(jw, NULL, r->lens[b * r->Nq + q]);
        json_end(jw);
    }
    json_end(jw);
}

static void write_run(json_writer *jw, const score_run *r,
                      const struct score_explain_buffers *explain)
{
    const size_t qk[3] = {r->B, r->Nq, r->Nk}, out[3] = {r->B, r->Nq, r->Dv};
    json_object_begin(jw, NULL, JSON_BLOCK);
    json_string(jw, "score", score_names[r->kind]);
    json_tensor(jw, "queries", r->queries.data, 3, r->queries.shape);
    json_tensor(jw, "keys", r->keys.data, 3, r->keys.shape);
    json_tensor(jw, "values", r->values.data, 3, r->values.shape);
    write_lens(jw, "valid_lens", r, JSON_BLOCK);
    json_tensor(jw, "scores", r->scores, 3, qk);
    json_tensor(jw, "attention_weights", r->weights, 3, qk);
    json_tensor(jw, "output", r->output, 3, out);
    if (r->kind == KIND_ADDITIVE) {
        json_object_begin(jw, "state_dict", JSON_BLOCK);
        json_tensor(jw, "W_q.weight", r->m.W_q.weight.data, 2, r->m.W_q.weight.shape);
        json_tensor(jw, "W_k.weight", r->m.W_k.weight.data, 2, r->m.W_k.weight.shape);
        json_tensor(jw, "w_v.weight", r->m.w_v.weight.data, 2, r->m.w_v.weight.shape);
        json_end(jw);
    } else if (r->kind == KIND_GENERAL) {
        json_object_begin(jw, "state_dict", JSON_BLOCK);
        json_tensor(jw, "W.weight", r->g.W.weight.data, 2, r->g.W.weight.shape);
        json_end(jw);
    }
    if (explain)
        score_explain_member(jw, r, score_names[r->kind], explain);
    json_end(jw);
}

static void write_members(json_writer *jw, const void *arg)
{
    const struct score_out *o = arg;
    json_string(jw, "command", "score");
    json_array_begin(jw, "results", JSON_BLOCK);
    for (size_t i = 0; i < o->nruns; i++)
        write_run(jw, &o->runs[i], o->explain);
    json_end(jw);
}

static int write_json(FILE *f, const void *arg)
{
    return json_document(f, 0, write_members, arg);
}

int score_out_json(const struct score_out *o, FILE *rep)
{
    return output_json(o->args->json, write_json, o, rep, "scores, weights and outputs as JSON");
}

/* --html: the attention page (page/attention.js) with a row of panels per
 * scoring function and a panel per example (the page's columns, its
 * "heads"), each panel masked by its example's lengths. */
static void write_page_row(json_writer *jw, const score_run *r)
{
    char title[128], f[64];
    formula(f, sizeof f, r);
    snprintf(title, sizeof title, "%s: %s", score_modules[r->kind], f);
    json_object_begin(jw, NULL, JSON_INLINE);
    json_string(jw, "name", score_names[r->kind]);
    json_string(jw, "title", title);
    page_tokens(jw, "query_tokens", NULL, r->Nq);
    page_tokens(jw, "key_tokens", NULL, r->Nk);
    json_null(jw, "valid_lens");
    write_lens(jw, "head_valid_lens", r, JSON_INLINE);
    json_end(jw);
}

/* The page member; whole 0 (a large page's preview, page_out.h) keeps
 * only the weights' shape: they are in the data's page, after the script. */
static void write_page_object(json_writer *jw, const struct score_out *o, int whole)
{
    const score_run *r = &o->runs[0]; /* every run has its B, Nq, Nk */
    const size_t shape[4] = {o->nruns, r->B, r->Nq, r->Nk};
    json_object_begin(jw, "page", JSON_BLOCK);
    page_head(jw, "attention", "attn score", o->args->argc, o->args->argv, o->args->cmap);
    if (whole) {
        json_tensor_base64(jw, "weights", o->page_weights, 4, shape);
    } else {
        json_object_begin(jw, "weights", JSON_INLINE);
        json_string(jw, "dtype", "float32");
        json_array_begin(jw, "shape", JSON_INLINE);
        for (size_t i = 0; i < 4; i++)
            json_uint(jw, NULL, shape[i]);
        json_end(jw);
        json_string(jw, "omitted", "in the data's page");
        json_end(jw);
    }
    json_bool(jw, "causal", 0);
    json_string(jw, "xlabel", "Keys");
    json_string(jw, "ylabel", "Queries");
    json_string(jw, "column", "example");
    json_array_begin(jw, "titles", JSON_INLINE);
    for (size_t b = 0; b < r->B; b++) {
        char name[32];
        snprintf(name, sizeof name, _("example %zu"), b);
        json_string(jw, NULL, name);
    }
    json_end(jw);
    json_array_begin(jw, "rows", JSON_BLOCK);
    for (size_t i = 0; i < o->nruns; i++)
        write_page_row(jw, &o->runs[i]);
    json_end(jw);
    json_end(jw);
}

static void write_preview_page(json_writer *jw, const void *arg)
{
    write_page_object(jw, arg, 0);
}

static void write_page_data(json_writer *jw, const void *arg)
{
    write_members(jw, arg);
    write_page_object(jw, arg, 1);
}

/* The page: every run's weights one after the other as the page draws
 * them, (nruns, B, Nq, Nk). */
int score_out_page(const struct score_out *o, FILE *rep)
{
    const score_run *r = &o->runs[0];
    const size_t each = r->B * r->Nq * r->Nk, total = each * o->nruns; /* allocated: fits */
    const size_t shape[4] = {o->nruns, r->B, r->Nq, r->Nk};
    struct score_out po = *o;
    char what[128];
    float *w = malloc((total > 0 ? total : 1) * sizeof *w);
    if (!w) {
        cli_error("--html %s: out of memory", o->args->html);
        return EXIT_RUNTIME;
    }
    for (size_t i = 0; i < o->nruns; i++)
        memcpy(w + i * each, o->runs[i].weights, each * sizeof *w);
    po.page_weights = w;
    po.explain = NULL; /* the page's data: the results alone */
    const page_weights pw = {w, 4, shape, write_preview_page};
    char fns[64], exs[64];
    snprintf(fns, sizeof fns, i18n_plural("%zu scoring function", "%zu scoring functions",
                                          o->nruns), o->nruns);
    snprintf(exs, sizeof exs, i18n_plural("%zu example", "%zu examples", r->B), r->B);
    /* TRANSLATORS: "2 scoring functions", "× 2 examples" */
    snprintf(what, sizeof what, _("a page of the attention weights, %s × %s"), fns, exs);
    const int status = output_page_weights(o->args->html, "attn score", write_page_data, &po,
                                           &pw, rep, what);
    free(w);
    return status;
}

/* The weights as d2l draws them: each run's (B·Nq, Nk), side by side. */
static int figure_png(const void *ctx, text_font *font, FILE *rep)
{
    const struct score_out *o = ctx;
    const struct score_args *a = o->args;
    heat_panel panels[NKINDS];
    heat_figure fig;
    memset(panels, 0, sizeof panels);
    memset(&fig, 0, sizeof fig);
    for (size_t i = 0; i < o->nruns; i++) {
        panels[i].data = o->runs[i].weights;
        panels[i].rows = o->runs[i].B * o->runs[i].Nq;
        panels[i].cols = o->runs[i].Nk;
        panels[i].title = score_modules[o->runs[i].kind];
    }
    fig.panels = panels;
    fig.grid_rows = 1;
    fig.grid_cols = o->nruns;
    fig.xlabel = "Keys";
    fig.ylabel = "Queries";
    fig.cmap = a->cmap;
    fig.vmin = NAN;
    fig.vmax = NAN;
    fig.font = font;
    return output_heatmap(a->png, &fig, rep, "the attention weights (Keys, Queries)");
}

/* ---- the command ----------------------------------------------------- */

int score_out_png(const struct score_out *o, FILE *rep)
{
    return output_figures(o->args->font, o->args->png, figure_png, NULL, NULL, o, rep);
}
