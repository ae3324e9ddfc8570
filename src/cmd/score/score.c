/* score.c — `attn score` (SPEC.md §13): d2l §10.3, attention scoring
 * functions. The masked softmax on the section's two calls
 * (--masked-softmax), then AdditiveAttention and DotProductAttention on
 * the section's cells or on JSON inputs: each output printed as PyTorch
 * prints it, the weights as numbers and a heatmap (Keys, Queries), every
 * step (--explain), a figure (--png), a page (--html) and JSON (--json).
 * This file: the options, the runs computed; score_input.c reads the
 * inputs, score_out.c shows the results (score_cmd.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "cli.h"
#include "commands.h"
#include "json_in.h"
#include "options.h"
#include "output.h"
#include "page_out.h"
#include "score_cmd.h"
#include "score_explain.h"
#include "term.h"

#define MAX_HIDDENS 100000L
#define MAX_QUERIES 100000L

static const char *const keys_names[] = {"ones", "random", NULL};

/* ---- options --------------------------------------------------------- */

#define OPT_ARGS struct score_args

const struct opt score_options[] = {
    OPT_FLAG(0, "masked-softmax", masked_softmax,
             "the section's two masked_softmax calls on a random\n"
             "(2, 2, 4) X, and stop"),
    OPT_CHOICE(0, "score", score, "S", score_names,
               "one scoring function: additive, dot, general or sum\n"
               "(default additive and dot, additive first)"),
    OPT_INT(0, "score-hiddens", hiddens, "H", 1, MAX_HIDDENS,
            "num_hiddens of AdditiveAttention (default 8)"),
    OPT_CHOICE(0, "keys", keys_random, "ones|random", keys_names,
               "the cells' keys: the book's ones (every key scores\n"
               "the same) or normal(0, 1) from --seed, the same for\n"
               "every scoring function (default ones)"),
    OPT_INT(0, "queries", queries, "N", 1, MAX_QUERIES,
            "the cells' queries per example (default 1, the book's)"),
    OPT_VALID_LENS(lens, "1,3 (one per example), 1;3 (one per query: a row\n"
                         "per example) or none (default: the section's 2,6,\n"
                         "or the --input file's valid_lens)"),
    OPT_FILE('i', "input", input,
             "queries, keys, values, valid_lens and state_dict as\n"
             "JSON, - for stdin (default: the section's cells)"),
    OPT_SEED(seed, "random queries, keys (--keys random), X and weights\n"
                   "(default 0)"),
    OPT_FLAG(0, "explain", explain,
             "print every step: the scores, the mask, the weights,\n"
             "the weighted sum"),
    OPT_PNG(png, "the attention weights, one panel per scoring function"),
    OPT_HTML(html, "a page of the weights: a row per scoring function,\n"
                   "a panel per example; hover a cell, change the\n"
                   "inputs"),
    OPT_CMAP(cmap, "colormap: %s (default Reds)"),
    OPT_FONT(font),
    OPT_JSON(json, "scores, attention_weights, output, state_dict; - for\n"
                   "stdout"),
    OPT_COLOR(color),
    OPT_MAX_MEM(max_mem),
    OPT_HELP(),
    OPT_END()
};

const struct opt_rule score_rules[] = {
    OPT_CONFLICTS("masked-softmax",
                  "score score-hiddens keys queries valid-lens input explain png html json",
                  "--%s cannot be used with --masked-softmax, which prints the section's "
                  "two masked_softmax calls and stops"),
    OPT_CONFLICTS("input", "keys queries",
                  "--%s shapes the section's cells and cannot be used with --input, whose "
                  "file gives the inputs"),
    OPT_RULES_END()
};

void usage_score(FILE *f)
{
    fputs(_("usage: attn score [--masked-softmax] [--score additive|dot|general|sum]\n"
          "                  [--keys ones|random] [--queries N] [--valid-lens LIST]\n"
          "                  [--input FILE] [OPTIONS]\n"
          "\n"
          "d2l §10.3, attention scoring functions: a score a(q, k) for every key, a\n"
          "softmax over the keys that are there (masked_softmax: keys at positions\n"
          ">= valid_len get -1e6), and the weighted sum of the values:\n"
          "    additive  a(q, k) = w_vᵀ tanh(W_q q + W_k k)   (AdditiveAttention)\n"
          "    dot       a(q, k) = q·k / sqrt(d)              (DotProductAttention)\n"
          "    general   a(q, k) = qᵀ W k, W (q, k)           (the exercise's; W.weight\n"
          "              (k, q) as nn.Linear(q, k, bias=False) applied to q, then · k)\n"
          "Without --input the section's cells: queries normal(0, 1) of shape\n"
          "(2, 1, 20) for additive and general, (2, 1, 2) for dot and sum, keys ones\n"
          "(2, 10, 2), values arange(40) (2, 10, 4), valid_lens [2, 6]; weights drawn\n"
          "like nn.Linear's default initialisation from --seed. With the book's keys\n"
          "of ones every key scores the same and the weights are 1/valid_len\n"
          "whatever the scoring; --keys random draws them normal(0, 1), and each\n"
          "scoring weighs them its own way.\n"
          "\n"), f);
    opt_usage(f, score_options);
    fputs(_("\n"
          "JSON input: {\"queries\": (B, Nq, Dq), \"keys\": (B, Nk, Dk), \"values\":\n"
          "(B, Nk, Dv), \"valid_lens\": (B,) or (B, Nq) (optional), \"state_dict\":\n"
          "{\"W_q.weight\": (h, Dq), \"W_k.weight\": (h, Dk), \"w_v.weight\": (1, h)}\n"
          "(additive) and/or {\"W.weight\": (Dk, Dq)} (general) (optional: without it\n"
          "the weights are drawn from --seed)}.\n"
          "\n"
          "Examples:\n"
          "  attn score                      # both cells: [[ 2.0000, ...]], [[10.0000, ...]]\n"
          "  attn score --masked-softmax     # masked_softmax(X, [2, 3]) and per query\n"
          "  attn score --score dot --explain\n"
          "  attn score --png weights.png    # 0.5 twice, 1/6 six times\n"
          "  attn score --valid-lens 1,3     # 1 for the first key, 1/3 for three\n"
          "  attn score --keys random        # the two scorings' weights now differ\n"
          "  attn score --score general --keys random  # qᵀ W k: 20 against 2\n"
          "  attn score --score sum --keys random --queries 3  # three equal rows\n"
          "  attn score --html score.html    # both functions, a panel per example\n"
          "  attn score --input data/score_additive.json --json out.json\n"), f);
}

/* ---- the computation --------------------------------------------------- */

/* A run's buffers, their bytes added to *bytes first (for --max-mem). */
static int run_alloc(score_run *r, size_t *bytes, int dry)
{
    const size_t dw = r->kind == KIND_GENERAL ? r->Dk : 0; /* W(q)'s size */
    size_t nqk, nout, nqh = 0, nkh = 0, nqw = 0, total = 0;
    int bad = size_mul(r->B * r->Nq, r->Nk, &nqk) || size_mul(r->B * r->Nq, r->Dv, &nout) ||
              size_mul(r->B * r->Nq, r->h, &nqh) || size_mul(r->B * r->Nk, r->h, &nkh) ||
              size_mul(r->B * r->Nq, dw, &nqw) || size_add(nqk, nqk, &total) ||
              size_add(total, nqk, &total) || size_add(total, nout, &total) ||
              size_add(total, nqh, &total) || size_add(total, nkh, &total) ||
              size_add(total, nqw, &total) || size_mul(total, sizeof(float), &total) ||
              size_add(*bytes, total, bytes);
    if (bad || dry)
        return bad ? -1 : 0;
    r->scores = float_alloc(nqk ? nqk : 1);
    r->masked = float_alloc(nqk ? nqk : 1);
    r->weights = float_alloc(nqk ? nqk : 1);
    r->output = float_alloc(nout ? nout : 1);
    r->qh = r->h ? float_alloc(nqh ? nqh : 1) : NULL;
    r->kh = r->h ? float_alloc(nkh ? nkh : 1) : NULL;
    r->qw = dw ? float_alloc(nqw ? nqw : 1) : NULL;
    return !r->scores || !r->masked || !r->weights || !r->output ||
                   (r->h && (!r->qh || !r->kh)) || (dw && !r->qw)
               ? -1
               : 0;
}

/* The section's forward pass: scores, masked_softmax, bmm with the values. */
static void run_forward(score_run *r)
{
    const mha_masks mask = {r->lens, r->vl_ndim == 2, 0, 0};
    const size_t n = r->B * r->Nq * r->Nk;
    /* 1. scores (B, Nq, Nk) */
    if (r->kind == KIND_ADDITIVE)
        score_additive_scores(r->scores, r->qh, r->kh, r->queries.data, r->keys.data, r->B,
                              r->Nq, r->Nk, &r->m);
    else if (r->kind == KIND_GENERAL)
        score_general_scores(r->scores, r->qw, r->queries.data, r->keys.data, r->B, r->Nq, r->Nk,
                             &r->g);
    else if (r->kind == KIND_SUM)
        score_sum(r->scores, r->queries.data, r->keys.data, r->B, r->Nq, r->Nk, r->Dq);
    else
        score_dot(r->scores, r->queries.data, r->keys.data, r->B, r->Nq, r->Nk, r->Dq);
    /* 2. the mask, kept for --explain; 3. the softmax over the keys */
    memcpy(r->masked, r->scores, n * sizeof(float));
    score_mask(r->masked, r->B, r->Nq, r->Nk, &mask);
    memcpy(r->weights, r->masked, n * sizeof(float));
    score_masked_softmax(r->weights, r->B, r->Nq, r->Nk, &mask);
    /* 4. the weighted sum of the values */
    score_weighted_sum(r->output, r->weights, r->values.data, r->B, r->Nq, r->Nk, r->Dv);
}

/* ---- the command ----------------------------------------------------- */

static int parse_args(int argc, char **argv, struct score_args *a)
{
    opt_given g;
    int status;
    memset(a, 0, sizeof *a);
    a->cmap = cmap_find("Reds");
    a->color = TERM_COLOR_AUTO;
    a->max_mem = CLI_DEFAULT_MAX_MEM;
    a->queries = 1;
    a->argc = argc;
    a->argv = argv;
    status = opt_parse(score_options, score_rules, argc, argv, a, &g);
    if (status != EXIT_OK)
        return status;
    a->score_given = opt_is_given(&g, "score");
    a->hiddens_given = opt_is_given(&g, "score-hiddens");
    if (a->hiddens_given && a->score_given && a->score != KIND_ADDITIVE) {
        cli_error("--score-hiddens is for --score additive");
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* --valid-lens instead of the run's lengths, checked against its B and
 * Nq; "none": no lengths. EXIT_OK, or the exit status after the message. */
static int override_lens(score_run *r, const struct score_args *a)
{
    const opt_lens *l = &a->lens;
    const char *from = !a->input ? NULL : strcmp(a->input, "-") == 0 ? "stdin" : a->input;
    if (!l->ndim && !l->none)
        return EXIT_OK;
    free(r->lens);
    r->lens = NULL;
    r->vl_ndim = 0;
    if (l->none)
        return EXIT_OK;
    if (opt_lens_check(l, r->B, r->Nq, from))
        return EXIT_USAGE;
    const size_t n = l->shape[0] * l->shape[1];
    if (!(r->lens = malloc(n * sizeof *r->lens))) {
        cli_error("out of memory for --valid-lens");
        return EXIT_RUNTIME;
    }
    memcpy(r->lens, l->v, n * sizeof *r->lens);
    r->vl_ndim = l->ndim;
    return EXIT_OK;
}

/* The runs' inputs: the cells, or the file read once for every run; then
 * --valid-lens. */
static int load_runs(score_run *runs, size_t n, const struct score_args *a)
{
    char err[512];
    int usage = 0, status = 0;
    cJSON *root = NULL;
    if (a->input) {
        root = json_read_file(a->input, a->max_mem / 8, err, sizeof err);
        if (!root || score_check_members(root, err, sizeof err)) {
            cli_error("%s: %s", a->input, err);
            cJSON_Delete(root);
            return EXIT_RUNTIME;
        }
    }
    for (size_t i = 0; i < n && !status; i++) {
        const int kind = a->score_given ? a->score : (int)i;
        status = root ? score_run_from_json(&runs[i], kind, root, a, err, sizeof err, &usage)
                      : score_cell(&runs[i], kind, a, err, sizeof err);
    }
    cJSON_Delete(root);
    if (status) {
        if (usage || !a->input)
            cli_error("%s", err);
        else
            cli_error("%s: %s", a->input, err);
        return usage ? EXIT_USAGE : EXIT_RUNTIME;
    }
    for (size_t i = 0; i < n && status == EXIT_OK; i++)
        status = override_lens(&runs[i], a);
    return status;
}

/* Check the memory (with --explain --json, the explain members' scratch
 * too), allocate, compute. */
static int compute_runs(score_run *runs, size_t n, const struct score_args *a)
{
    size_t bytes = 0;
    int over = 0;
    for (size_t i = 0; i < n; i++)
        over |= run_alloc(&runs[i], &bytes, 1);
    if (a->explain && a->json)
        over |= size_add(bytes, score_explain_bytes(runs, n), &bytes);
    if (cli_check_mem(a->explain && a->json ? "the scores, weights, outputs and every cell's path"
                                            : "the scores, weights and outputs",
                      bytes, over, a->max_mem, NULL))
        return EXIT_RUNTIME;
    for (size_t i = 0; i < n; i++) {
        size_t unused = 0;
        if (run_alloc(&runs[i], &unused, 0)) {
            cli_error("out of memory for the scores and weights");
            return EXIT_RUNTIME;
        }
        run_forward(&runs[i]);
    }
    return EXIT_OK;
}

/* What the runs show: the text, --json (with --explain, every cell's
 * path), --png and --html. */
static int write_outputs(const score_run *runs, size_t n, const struct score_args *a)
{
    FILE *rep = output_report_stream(a->json);
    score_explain_buffers eb;
    struct score_out o = {runs, n, a, NULL, NULL};
    int status = EXIT_OK;
    if (a->explain && a->json) {
        if (score_explain_alloc(&eb, runs, n)) {
            cli_error("out of memory for --explain --json");
            return EXIT_RUNTIME;
        }
        o.explain = &eb;
    }
    if (!(a->json && strcmp(a->json, "-") == 0))
        score_print_runs(runs, n, a);
    if (a->json)
        status = score_out_json(&o, rep);
    if (status == EXIT_OK && a->png)
        status = score_out_png(&o, rep);
    if (status == EXIT_OK && a->html)
        status = score_out_page(&o, rep);
    if (o.explain)
        score_explain_free(&eb);
    return status;
}

int cmd_score(int argc, char **argv)
{
    struct score_args a;
    score_run runs[NKINDS];
    int status = parse_args(argc, argv, &a);
    if (status != EXIT_OK) /* --help: the usage, exit 0 */
        return status == OPT_HELP_ASKED ? (usage_score(stdout), EXIT_OK) : status;
    if (a.masked_softmax)
        return score_print_masked_softmax(&a);
    status = output_check_files((const char *const[]){a.json, a.png},
                                (const char *const[]){"--json", "--png"}, 2);
    if (status == EXIT_OK)
        status = output_page_check(a.html);
    if (status != EXIT_OK)
        return status;
    memset(runs, 0, sizeof runs);
    const size_t n = a.score_given ? 1 : 2; /* additive and dot by default */
    status = load_runs(runs, n, &a);
    if (status == EXIT_OK)
        status = compute_runs(runs, n, &a);
    if (status == EXIT_OK)
        status = write_outputs(runs, n, &a);
    for (size_t i = 0; i < n; i++)
        score_run_free(&runs[i]);
    return status;
}
