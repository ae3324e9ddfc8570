/* depth.c — `attn selfattn --depth N` (see depth.h and
 * src/nn/attention/collapse.h). */
#include "depth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "collapse.h"
#include "json_writer.h"
#include "output.h"
#include "render.h"
#include "term.h"
#include "checked.h"
#include "i18n.h"

/* The run: every depth's measures and the last depth's tokens. */
struct depth_run {
    const problem *pr;
    const depth_opts *o;
    size_t D;          /* depths 0 … D */
    double *spread;    /* (D + 1, COLLAPSE_KINDS) the mean over the examples */
    double *residual;  /* (D + 1, COLLAPSE_KINDS) */
    float *X[COLLAPSE_KINDS]; /* (B, N, H) each kind's tokens at the current depth */
    float *next;       /* (B, N, H) one layer's output */
    double *mean;      /* (H,) collapse_measure's scratch */
};

static const char *const kind_titles[COLLAPSE_KINDS] = {
    N_("attention"), N_("+ residual"), N_("+ residual, LayerNorm")};

static void run_free(struct depth_run *r)
{
    FREE_EACH(r->spread, r->residual, r->X[0], r->X[1], r->X[2], r->next, r->mean);
}

/* Depth d's measures of each kind: the mean over the examples. */
static void measure(struct depth_run *r, size_t d)
{
    const problem *pr = r->pr;
    const size_t N = pr->Nq, H = pr->params.num_hiddens;
    for (int k = 0; k < COLLAPSE_KINDS; k++) {
        double s_sum = 0.0, r_sum = 0.0, s, res;
        for (size_t b = 0; b < pr->B; b++) {
            collapse_measure(r->X[k] + b * N * H, N, H, r->mean, &s, &res);
            s_sum += s;
            r_sum += res;
        }
        r->spread[d * COLLAPSE_KINDS + k] = s_sum / (double)pr->B;
        r->residual[d * COLLAPSE_KINDS + k] = r_sum / (double)pr->B;
    }
}

/* The layers: depth 0 is X, then each kind's layer applied D times. 0, or
 * -1 after the error. */
static int run_layers(struct depth_run *r)
{
    const problem *pr = r->pr;
    const size_t n = pr->B * pr->Nq * pr->params.num_hiddens;
    const mha_masks mask = {NULL, 0, r->o->causal, 0};
    char err[256];
    for (int k = 0; k < COLLAPSE_KINDS; k++)
        memcpy(r->X[k], pr->queries.data, n * sizeof(float));
    measure(r, 0);
    for (size_t d = 1; d <= r->D; d++) {
        for (int k = 0; k < COLLAPSE_KINDS; k++) {
            if (collapse_layer(r->next, r->X[k], pr->B, pr->Nq, &pr->params, &mask,
                               (enum collapse_kind)k, err, sizeof err)) {
                cli_error("%s", err);
                return -1;
            }
            float *t = r->X[k]; /* the output becomes the next layer's input */
            r->X[k] = r->next;
            r->next = t;
        }
        measure(r, d);
    }
    return 0;
}

/* ---- for a person --------------------------------------------------------- */

static void print_header(const struct depth_run *r)
{
    const problem *pr = r->pr;
    const size_t H = pr->params.num_hiddens, NH = pr->params.num_heads;
    char times[48], examples[48];
    printf(_("One self-attention layer applied %s, the same weights each time:\n"
           "X (%zu, %zu, %zu) %s%s, num_hiddens %zu = %zu heads × %zu%s\n"),
           cli_count(times, sizeof times, "%zu time", "%zu times", r->D), pr->B, pr->Nq, H,
           _(r->o->inputs), r->o->posenc ? " + P" : "", H, NH, H / NH,
           r->o->causal ? _(", causal") : "");
    printf(_("  attention               X ← MHA(X)  (%s scoring)\n"
           "  + residual              X ← X + MHA(X)\n"
           "  + residual, LayerNorm   X ← LayerNorm(X + MHA(X))  (d2l's AddNorm)\n"
           "spread: the tokens' mean distance from their mean x̄, (1/N) Σ_i |x_i − x̄|\n"
           "rank-1: |X − 1·x̄ᵀ|_F / |X|_F, X's relative distance from the matrix whose\n"
           "every row is x̄ (0: one vector repeated); each the mean over %s\n\n"),
           pr->params.score == SCORE_DOT ? _("scaled dot-product") : _("additive"),
           cli_count(examples, sizeof examples, "the %zu example", "the %zu examples", pr->B));
}

/* A row of the table every depth up to 12, then fewer: about 24 rows. */
static int shown_depth(size_t d, size_t D)
{
    const size_t step = D <= 24 ? 1 : (D + 11) / 12;
    return d <= 12 || d == D || d % step == 0;
}

static void print_table(const struct depth_run *r)
{
    term_put_field(stdout, _("depth"), 5, 0);
    for (int k = 0; k < COLLAPSE_KINDS; k++) {
        fputs("  ", stdout);
        term_put_field(stdout, _(kind_titles[k]), 20, 0);
    }
    printf("\n     ");
    for (int k = 0; k < COLLAPSE_KINDS; k++) {
        fputs("  ", stdout);
        term_put_field(stdout, _("spread"), 9, 1);
        fputs("  ", stdout);
        term_put_field(stdout, _("rank-1"), 9, 1);
    }
    printf("\n");
    for (size_t d = 0; d <= r->D; d++) {
        if (!shown_depth(d, r->D))
            continue;
        printf("%5zu", d);
        for (int k = 0; k < COLLAPSE_KINDS; k++)
            printf("  %9.3g  %9.3g", r->spread[d * COLLAPSE_KINDS + k],
                   r->residual[d * COLLAPSE_KINDS + k]);
        printf("\n");
    }
}

/* What kind k's numbers say: rank-1 r0 → rD, spread s0 → sD. */
static const char *verdict(double r0, double rD, double s0, double sD)
{
    if (rD <= r0 * 1e-2 && sD <= s0 * 1e-2)
        return _("the tokens collapse toward one vector");
    if (rD < r0 * 0.5 && sD >= s0)
        return _("a vector shared by all tokens grows; their differences do not shrink");
    if (rD < r0 * 0.5)
        return _("the tokens draw together");
    return _("the tokens stay apart");
}

/* What the numbers say, kind by kind. */
static void print_summary(const struct depth_run *r)
{
    const size_t last = r->D * COLLAPSE_KINDS;
    char layers[48];
    printf(_("\nAfter %s:\n"), cli_count(layers, sizeof layers, "%zu layer", "%zu layers", r->D));
    for (int k = 0; k < COLLAPSE_KINDS; k++) {
        const double r0 = r->residual[k], rD = r->residual[last + k];
        const double s0 = r->spread[k], sD = r->spread[last + k];
        fputs("  ", stdout);
        term_put_field(stdout, _(kind_titles[k]), 22, 0);
        printf(_(" rank-1 %.3g → %.3g, spread %.3g → %.3g:\n    %s\n"), r0, rD, s0, sD,
               verdict(r0, rD, s0, sD));
    }
}

/* ---- --plot ---------------------------------------------------------------- */

/* The rank-1 residual against the depth, a line per kind, into img; a
 * log scale when every value is above 0. 0, or -1 with err. */
static int draw_plot(attn_image *img, const struct depth_run *r, const double *x, double *y,
                     text_font *font, char *err, size_t errlen)
{
    const size_t n = r->D + 1;
    plot_series series[COLLAPSE_KINDS];
    plot_figure fig;
    int logy = 1;
    for (size_t d = 0; d < n; d++)
        for (int k = 0; k < COLLAPSE_KINDS; k++) {
            y[k * n + d] = r->residual[d * COLLAPSE_KINDS + k];
            logy &= y[k * n + d] > 0;
        }
    for (int k = 0; k < COLLAPSE_KINDS; k++)
        series[k] = (plot_series){x, y + k * n, n, _(kind_titles[k])};
    memset(&fig, 0, sizeof fig);
    fig.series = series;
    fig.nseries = COLLAPSE_KINDS;
    fig.title = _("one self-attention layer, applied again and again");
    fig.xlabel = _("depth (layers applied)");
    fig.ylabel = _("rank-1 residual");
    fig.logy = logy;
    fig.font = font;
    return plot_draw(img, &fig, err, errlen);
}

/* --plot FILE (an output_figure_fn). */
static int write_plot(const void *arg, text_font *font, FILE *rep)
{
    const struct depth_run *r = arg;
    const size_t n = r->D + 1;
    double *x = malloc(n * sizeof *x), *y = malloc(COLLAPSE_KINDS * n * sizeof *y);
    attn_image img = {0, 0, NULL};
    char err[512] = "out of memory", what[96];
    int status = EXIT_RUNTIME;
    if (x && y) {
        for (size_t d = 0; d < n; d++)
            x[d] = (double)d;
        snprintf(what, sizeof what, _("the rank-1 residual against the depth, 0 … %zu"), r->D);
        if (draw_plot(&img, r, x, y, font, err, sizeof err) == 0)
            status = output_png(r->o->plot, &img, rep, what);
    }
    if (status != EXIT_OK && !img.rgb)
        cli_error("%s: %s", r->o->plot, err);
    image_free(&img);
    free(x);
    free(y);
    return status;
}

/* ---- --json ------------------------------------------------------------------ */

static void write_members(json_writer *jw, const void *arg)
{
    const struct depth_run *r = arg;
    const problem *pr = r->pr;
    const size_t shape[3] = {pr->B, pr->Nq, pr->params.num_hiddens};
    /* the input and weights (a valid input in turn), the last depth's
     * output of attention alone as "output" */
    problem_write_members(jw, pr, "selfattn", r->X[COLLAPSE_ATTENTION], NULL);
    json_tensor(jw, "output_residual", r->X[COLLAPSE_RESIDUAL], 3, shape);
    json_tensor(jw, "output_addnorm", r->X[COLLAPSE_ADDNORM], 3, shape);
    json_uint(jw, "depth", r->D);
    json_bool(jw, "causal", r->o->causal);
    json_string(jw, "spread", "(1/N) sum_i |x_i - mean|, the mean over the examples");
    json_string(jw, "rank1_residual",
                "|X - 1 mean^T|_F / |X|_F, the mean over the examples");
    json_array_begin(jw, "depths", JSON_BLOCK);
    for (size_t d = 0; d <= r->D; d++) {
        json_object_begin(jw, NULL, JSON_INLINE);
        json_uint(jw, "depth", d);
        for (int k = 0; k < COLLAPSE_KINDS; k++) {
            json_object_begin(jw, collapse_names[k], JSON_INLINE);
            json_number(jw, "spread", r->spread[d * COLLAPSE_KINDS + k]);
            json_number(jw, "rank1_residual", r->residual[d * COLLAPSE_KINDS + k]);
            json_end(jw);
        }
        json_end(jw);
    }
    json_end(jw);
}

static int write_json(FILE *f, const void *arg)
{
    return json_document(f, 0, write_members, arg);
}

/* ---- the command ----------------------------------------------------------- */

/* What the run cannot take: lengths (padding would count among the
 * tokens), X narrower or wider than num_hiddens (the output is the next
 * layer's input). 0, or -1 after the error. */
static int depth_check(const problem *pr)
{
    if (pr->valid_lens) {
        cli_error("--depth measures every token, and valid_lens would leave padding among "
                  "them: give sentences of one length or no valid_lens");
        return -1;
    }
    if (pr->Dq != pr->params.num_hiddens) {
        cli_error("--depth feeds each layer's output (width num_hiddens %zu) to the next, "
                  "but X has width %zu", pr->params.num_hiddens, pr->Dq);
        return -1;
    }
    return 0;
}

/* --max-mem: one layer's forward pass and its sums, and the tokens of the
 * three kinds. 0, or -1 after the sentence. */
static int depth_mem(const problem *pr, const depth_opts *o)
{
    const size_t H = pr->params.num_hiddens;
    size_t run, n, tokens, measures, total;
    char what[160];
    int overflow = problem_run_bytes(pr, 1, 0, &run) || size_mul(pr->B, pr->Nq, &n) ||
                   size_mul(n, H, &n) || size_mul(n, 4 * 5 + 8, &tokens) ||
                   size_mul(o->depth + 1, 16 * COLLAPSE_KINDS, &measures) ||
                   size_add(run, tokens, &total) || size_add(total, measures, &total);
    snprintf(what, sizeof what, _("%zu layers of batch %zu × %zu heads × %zu tokens"), o->depth,
             pr->B, pr->params.num_heads, pr->Nq);
    return cli_check_mem(what, overflow ? SIZE_MAX : total, overflow, o->max_mem, NULL) ? -1 : 0;
}

int depth_command(const problem *pr, const depth_opts *o)
{
    const size_t n = pr->B * pr->Nq * pr->params.num_hiddens;
    struct depth_run r;
    int status = EXIT_RUNTIME;
    if (depth_check(pr) || depth_mem(pr, o))
        return EXIT_RUNTIME;
    memset(&r, 0, sizeof r);
    r.pr = pr;
    r.o = o;
    r.D = o->depth;
    r.spread = malloc((r.D + 1) * COLLAPSE_KINDS * sizeof *r.spread);
    r.residual = malloc((r.D + 1) * COLLAPSE_KINDS * sizeof *r.residual);
    for (int k = 0; k < COLLAPSE_KINDS; k++)
        r.X[k] = float_alloc(n + 1);
    r.next = float_alloc(n + 1);
    r.mean = malloc((pr->params.num_hiddens + 1) * sizeof *r.mean);
    if (!r.spread || !r.residual || !r.X[0] || !r.X[1] || !r.X[2] || !r.next || !r.mean)
        cli_error("out of memory for --depth");
    else if (run_layers(&r) == 0) {
        FILE *rep = output_report_stream(o->json);
        if (!(o->json && strcmp(o->json, "-") == 0)) {
            print_header(&r);
            print_table(&r);
            print_summary(&r);
        }
        status = EXIT_OK;
        if (o->json)
            status = output_json(o->json, write_json, &r, rep,
                                 "every depth's measures and the last outputs as JSON");
        if (status == EXIT_OK && o->plot) {
            if (!o->json)
                fputc('\n', rep);
            status = output_figures(o->font, NULL, NULL, o->plot, write_plot, &r, rep);
        }
    }
    run_free(&r);
    return status;
}
