/* posenc.c — `attn posenc`: the sinusoidal positional encoding of
 * d2l §10.6.3 in the chapter's interleaved layout or in sin and cos halves,
 * its figures (heatmap, columns plot, P·Pᵀ), the binary table and the
 * relative-position check (SPEC.md §6); and with --rope, rotary position
 * embedding: a query and a key turned by the chapter's 2×2 rotation, their
 * scores, and the check that the scores see only the offset.
 * Legend: N positions (--steps), D encoding dimensions (--dim). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "json_writer.h"
#include "options.h"
#include "output.h"
#include "page_out.h"
#include "posenc.h"
#include "render.h"
#include "tensor.h"
#include "term.h"
#include "checked.h"

#define MAX_DIM 1000000000L      /* larger sizes meet --max-mem */
#define MAX_STEPS OPT_SIZE_MAX
#define MAX_COLS 16
#define MAX_BINARY 65536L

struct posenc_args {
    long dim, steps;
    double base;
    int layout;                    /* posenc_layout: the index in layout_names */
    int rope;                      /* --rope: scores of a rotated query and key */
    long seed;
    const char *png, *plot, *similarity, *json, *html;
    const char *font;              /* --font FILE */
    size_t cols[MAX_COLS], ncols;
    long binary;                   /* 0: no table */
    int check;                     /* --check-relative given */
    long check_from, check_to;
    const attn_cmap *cmap;
    int numbers;
    int naive;
    int color;                     /* term_color_mode */
    size_t max_mem;
    int argc;                      /* the command line, for the page */
    char **argv;
};

/* --html: P's numbers at most (16 MiB of float32, about 22 MB of base64) */
#define PAGE_MAX_P ((size_t)1 << 22)
/* the offsets of the page's relative-position table, at most */
#define PAGE_MAX_CHECKS 64


/* "6-9" or "0,1,4-5" → column indices (checked against D later). */
static int parse_cols(void *args, const char *s)
{
    struct posenc_args *a = args;
    const char *p = s;
    a->ncols = 0;
    for (;;) {
        char *end;
        if (*p < '0' || *p > '9')
            goto bad;
        long lo = strtol(p, &end, 10);
        long hi = lo;
        p = end;
        if (*p == '-') {
            p++;
            if (*p < '0' || *p > '9')
                goto bad;
            hi = strtol(p, &end, 10);
            p = end;
        }
        if (lo > hi || hi >= MAX_DIM)
            goto bad;
        for (long c = lo; c <= hi; c++) {
            if (a->ncols == MAX_COLS) {
                cli_error("--cols: at most %d columns in one plot, got '%s'", MAX_COLS, s);
                return -1;
            }
            a->cols[a->ncols++] = (size_t)c;
        }
        if (*p == '\0')
            return 0;
        if (*p != ',')
            goto bad;
        p++;
    }
bad:
    cli_error("--cols: expected columns like 6-9 or 0,1,4-5, got '%s'", s);
    return -1;
}

/* "5" or "1:50" → an offset or a range of offsets. */
static int parse_check(void *args, const char *s)
{
    struct posenc_args *a = args;
    const char *colon = strchr(s, ':');
    if (!colon) {
        if (cli_parse_long("--check-relative", s, -MAX_STEPS, MAX_STEPS, &a->check_from))
            return -1;
        a->check_to = a->check_from;
        a->check = 1;
        return 0;
    }
    {
        char first[32];
        size_t n = (size_t)(colon - s);
        if (n == 0 || n >= sizeof first) {
            cli_error("--check-relative: expected an offset like 5 or a range like 1:50, "
                      "got '%s'", s);
            return -1;
        }
        memcpy(first, s, n);
        first[n] = '\0';
        if (cli_parse_long("--check-relative", first, -MAX_STEPS, MAX_STEPS, &a->check_from) ||
            cli_parse_long("--check-relative", colon + 1, -MAX_STEPS, MAX_STEPS, &a->check_to))
            return -1;
        if (a->check_from > a->check_to) {
            cli_error("--check-relative: the range %ld:%ld is empty (FROM > TO)",
                      a->check_from, a->check_to);
            return -1;
        }
    }
    a->check = 1;
    return 0;
}


/* the words of --layout, in the order of posenc_layout */
static const char *const layout_names[] = {"interleaved", "concat", NULL};

#define OPT_ARGS struct posenc_args
const struct opt posenc_options[] = {
    OPT_INT('d', "dim", dim, "D", 1, MAX_DIM, "encoding dimension, odd allowed (default 32)"),
    OPT_INT('n', "steps", steps, "N", 1, MAX_STEPS, "positions 0 … N-1 (default 60)"),
    OPT_REAL(0, "base", base, "B", 1e-300, 1e300, "the base of the frequencies (default 10000)"),
    OPT_CHOICE(0, "layout", layout, "L", layout_names,
               "interleaved (the chapter's: sin, cos, sin, …;\n"
               "default) or concat (sin half, then cos half)"),
    OPT_FLAG(0, "rope", rope,
             "rotary position embedding: a query and a key\n"
             "turned to every position, and their scores S\n"
             "(N × N), instead of P"),
    OPT_SEED(seed, "the query and key of --rope (default 0)"),
    OPT_PNG(png, "heatmap of P as in the chapter (rows = position);\n"
                 "with --rope of S (rows = query position)"),
    OPT_FILE(0, "plot", plot,
             "columns of P against position (the chapter's\n"
             "figure of columns 6-9)"),
    OPT_CALLBACK(0, "cols", "LIST", parse_cols,
                 "columns for --plot (and first in --html's plot):\n"
                 "6-9, or 0,1,4-5 (default 6-9, or the first four\n"
                 "when D < 10)"),
    OPT_INT(0, "binary", binary, "N", 1, MAX_BINARY, "the chapter's table of 0 … N-1 in binary"),
    OPT_CALLBACK(0, "check-relative", "DELTA | FROM:TO", parse_check,
                 "rotate each pair (P[i,2j], P[i,2j+1]) by the\n"
                 "2×2 matrix for offset DELTA and print the largest\n"
                 "difference from (P[i+DELTA,2j], P[i+DELTA,2j+1]);\n"
                 "with --rope, R(DELTA)·RoPE(x, i) against\n"
                 "RoPE(x, i+DELTA)"),
    OPT_FILE(0, "similarity", similarity,
             "heatmap of P·Pᵀ: it depends only on the offset\n"
             "(and not on the layout)"),
    OPT_JSON(json, "{\"command\",\"layout\",\"dim\",\"steps\",\"base\",\"P\"};\n"
                   "with --rope {\"command\",\"rope\",\"layout\",\"dim\",\n"
                   "\"steps\",\"base\",\"seed\",\"q\",\"k\",\"scores\",\n"
                   "\"max_offset_error\"}; - is stdout"),
    OPT_HTML(html, "a page to explore P: hover for the formula with its\n"
                   "numbers, the columns plot, P·Pᵀ, the rotation check"),
    OPT_CMAP(cmap, "colormap: %s (default Blues)"),
    OPT_FONT(font),
    OPT_FLAG(0, "numbers", numbers, "print P (or S) as numbers even on a colour terminal"),
    OPT_FLAG(0, "naive", naive,
             "compute every entry with sin and cos (the default\n"
             "rotates row i into row i+1, the chapter's\n"
             "relative-position matrix, with fresh sin/cos\n"
             "every 256 rows; the two agree to float32)"),
    OPT_COLOR(color),
    OPT_MAX_MEM(max_mem),
    OPT_HELP(),
    OPT_END(),
};

/* --rope shows a rotated query and key, not P: the outputs of P are refused */
const struct opt_rule posenc_rules[] = {
    OPT_CONFLICTS("rope", "plot cols binary similarity naive html",
                  "--%s is for the encoding P and cannot be used with --rope"),
    OPT_NEEDS("seed", "rope", "--seed draws the query and key of --rope, which is not given"),
    /* --cols without --plot or --html: check_values */
    OPT_RULES_END(),
};

void usage_posenc(FILE *f)
{
    fputs(
        _("usage: attn posenc [--dim D] [--steps N] [--base B] [OPTIONS]\n"
        "\n"
        "The sinusoidal positional encoding P (N positions × D dimensions) of\n"
        "d2l's PositionalEncoding:\n"
        "    P[i, 2j]   = sin(i / B^(2j/D))\n"
        "    P[i, 2j+1] = cos(i / B^(2j/D))\n"
        "Without an output option it prints P: a colour heatmap on a terminal,\n"
        "aligned numbers otherwise.\n"
        "\n"
        "Layouts. The chapter interleaves sin and cos columns (--layout\n"
        "interleaved, the default). --layout concat keeps the same frequencies in\n"
        "two halves, the h = ceil(D/2) sin columns first, then the cos columns:\n"
        "    P[i, j]   = sin(i / B^(2j/D))     j < h\n"
        "    P[i, h+j] = cos(i / B^(2j/D))     j < D-h\n"
        "Only the columns move: every output follows the layout, --check-relative\n"
        "rotates the pair (P[i,j], P[i,h+j]), and P·Pᵀ is the same in both layouts\n"
        "(a dot product does not depend on the order of the columns).\n"
        "\n"
        "RoPE. Rotary position embedding (--rope; RoFormer, GPT-NeoX, LLaMA) adds\n"
        "nothing to the input: it turns a query or key x at position m pair by\n"
        "pair by the angles m·ω_j, ω_j = 1/B^(2j/D), with the chapter's 2×2\n"
        "rotation. Turning by m and then by n-m is turning by n, and rotations keep\n"
        "dot products, so the score RoPE(q, m)·RoPE(k, n) = q·RoPE(k, n-m) depends\n"
        "only on the offset n-m: the relative position that the chapter's rotation\n"
        "shows in P is what attention sees. attn draws a unit query q and key k\n"
        "(--seed), computes the scores S[m, n] for m, n < N in float32, and prints\n"
        "how far S is from a function of n-m; --check-relative checks\n"
        "RoPE(x, i+δ) = R(δ)·RoPE(x, i). The pairs are (x[2j], x[2j+1]) with\n"
        "--layout interleaved (RoFormer) and (x[j], x[j+D/2]) with concat (the\n"
        "rotate-half form of GPT-NeoX and LLaMA). D must be even. --png draws S,\n"
        "--json writes q, k and S; --plot, --cols, --binary, --similarity and\n"
        "--naive are for P and not taken with --rope.\n"
        "\n"),
        f);
    opt_usage(f, posenc_options);
    fputc('\n', f);
    fputs(
        _("Examples:\n"
        "  attn posenc --dim 32 --steps 60 --png out.png\n"
        "  attn posenc --dim 32 --steps 60 --html posenc.html\n"
        "  attn posenc --plot cols.png --cols 6-9\n"
        "  attn posenc --binary 8\n"
        "  attn posenc --steps 100 --check-relative 1:50\n"
        "  attn posenc --layout concat --dim 32 --steps 60 --png concat.png\n"
        "  attn posenc --layout concat --steps 100 --check-relative 1:50\n"
        "  attn posenc --rope --steps 100 --check-relative 1:50\n"
        "  attn posenc --rope --layout concat --png rope.png --seed 3\n"),
        f);
}


/* Parse argv into a; EXIT_OK, OPT_HELP_ASKED, or an exit status after
 * printing the error. */
static int parse_args(int argc, char **argv, struct posenc_args *a)
{
    a->dim = 32;
    a->steps = 60;
    a->base = 10000.0;
    a->cmap = cmap_find("Blues");
    a->color = TERM_COLOR_AUTO;
    a->max_mem = CLI_DEFAULT_MAX_MEM;
    a->layout = POSENC_INTERLEAVED;
    a->argc = argc;
    a->argv = argv;
    int status = opt_parse(posenc_options, posenc_rules, argc, argv, a, NULL);
    if (status != EXIT_OK)
        return status;
    if (a->rope && a->dim % 2) {
        cli_error("--rope turns dimensions in pairs and needs an even --dim, got %ld", a->dim);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* ---- outputs --------------------------------------------------------- */

/* One matrix as a one-panel heatmap figure: panel has the data (or the
 * row function) and the shape; the title and labels are set here; font
 * is --font's (NULL: the default). */
static int heatmap_file(const char *path, heat_panel *panel, const char *title,
                        const char *xlabel, const char *ylabel, const attn_cmap *cmap,
                        double vmin, double vmax, text_font *font, FILE *rep,
                        const char *what)
{
    heat_figure fig;

    panel->title = title;
    memset(&fig, 0, sizeof fig);
    fig.panels = panel;
    fig.grid_rows = 1;
    fig.grid_cols = 1;
    fig.xlabel = xlabel;
    fig.ylabel = ylabel;
    fig.cmap = cmap;
    fig.vmin = vmin;
    fig.vmax = vmax;
    fig.font = font;
    return output_heatmap(path, &fig, rep, what);
}

/* Rows of P for a heatmap that does without storing P. */
static void posenc_row(void *ctx, size_t i, float *out)
{
    posenc_rows_get(ctx, i, out);
}

/* The chapter's line plot: chosen columns of P against position. */
static int plot_file(const struct posenc_args *a, const float *P, text_font *font, FILE *rep)
{
    size_t N = (size_t)a->steps, D = (size_t)a->dim;
    char labels[MAX_COLS][24], what[64], err[512];
    plot_series series[MAX_COLS];
    plot_figure fig;
    attn_image img = {0, 0, NULL};
    double *x = NULL, *y = NULL; /* x (N,), y (ncols, N) */
    size_t ybytes;
    int status = EXIT_RUNTIME;

    if (size_mul(N * a->ncols, sizeof *y, &ybytes) != 0 ||
        (x = malloc(N * sizeof *x)) == NULL || (y = malloc(ybytes)) == NULL) {
        cli_error("%s: out of memory for the plot", a->plot);
        goto done;
    }
    for (size_t i = 0; i < N; i++)
        x[i] = (double)i;
    for (size_t s = 0; s < a->ncols; s++) {
        for (size_t i = 0; i < N; i++)
            y[s * N + i] = P[i * D + a->cols[s]]; /* column cols[s] of P */
        snprintf(labels[s], sizeof labels[s], "Col %zu", a->cols[s]);
        series[s].x = x;
        series[s].y = y + s * N;
        series[s].n = N;
        series[s].label = labels[s];
    }
    memset(&fig, 0, sizeof fig);
    fig.series = series;
    fig.nseries = a->ncols;
    fig.xlabel = "Row (position)";
    fig.font = font;
    if (plot_draw(&img, &fig, err, sizeof err) != 0) {
        cli_error("%s: %s", a->plot, err);
        goto done;
    }
    snprintf(what, sizeof what,
             i18n_plural("%zu column of P against position", "%zu columns of P against position",
                         a->ncols), a->ncols);
    status = output_png(a->plot, &img, rep, what);
done:
    image_free(&img);
    free(x);
    free(y);
    return status;
}

/* The chapter's table: 0 … n−1 in binary, as many bits as n−1 needs. */
static void print_binary(FILE *out, long n)
{
    int bits = 1;
    while (bits < 62 && (1L << bits) <= n - 1)
        bits++;
    for (long i = 0; i < n; i++) {
        /* TRANSLATORS: the zh edition prints "0的二进制是：000" */
        fprintf(out, _("%ld in binary is "), i);
        for (int b = bits - 1; b >= 0; b--)
            fputc((i >> b) & 1 ? '1' : '0', out);
        fputc('\n', out);
    }
}

/* RoPE's pair of dimensions for frequency j, as text: "(x[2j], x[2j+1])"
 * interleaved, "(x[j], x[D/2+j])" concat (D/2 as a number). */
static const char *rope_pair(const struct posenc_args *a, char *buf, size_t len)
{
    if (a->layout == POSENC_CONCAT)
        snprintf(buf, len, "(x[j], x[%ld+j])", a->dim / 2);
    else
        snprintf(buf, len, "(x[2j], x[2j+1])");
    return buf;
}

/* --check-relative: for each offset δ, every pair of row i turned by
 * δ·ω_j against the same pair of row i+δ. X is P (N, D); with --rope, X is
 * RoPE(q, ·) and X2 RoPE(k, ·), both (N, D), and the worst of the two
 * counts. */
static void print_check(FILE *out, const struct posenc_args *a, const float *X,
                        const float *X2)
{
    size_t N = (size_t)a->steps, D = (size_t)a->dim, h = (D + 1) / 2;
    double worst = 0.0;
    long worst_delta = a->check_from;
    int single = a->check_from == a->check_to;

    if (a->rope) {
        fputs(_("Relative position: R(δ·ω_j) RoPE(x, i) = RoPE(x, i+δ) for x = q and "
                     "x = k\n"), out);
        char pair[48];
        fprintf(out, _("  (a turn by i, then by δ, is a turn by i+δ; pairs %s, "
                     "ω_j = 1/%g^(2j/%zu))\n"), rope_pair(a, pair, sizeof pair), a->base, D);
    } else if (a->layout == POSENC_CONCAT) {
        fprintf(out, _("Relative position: R(δ·ω_j) (P[i,j], P[i,h+j]) = "
                     "(P[i+δ,j], P[i+δ,h+j]),  h = %zu,  ω_j = 1/%g^(2j/%zu)\n"), h, a->base, D);
    } else {
        fprintf(out, _("Relative position: R(δ·ω_j) (P[i,2j], P[i,2j+1]) = "
                     "(P[i+δ,2j], P[i+δ,2j+1]),  ω_j = 1/%g^(2j/%zu)\n"), a->base, D);
    }
    if (D % 2)
        fprintf(out, _("(column %zu, a sin without its cos, is not part of a pair)\n"),
                posenc_sin_col(h - 1, D, a->layout));
    for (long delta = a->check_from; delta <= a->check_to; delta++) {
        size_t checked;
        double err;
        if (a->rope) {
            /* RoPE(q, ·) and RoPE(k, ·): the worse of the two */
            err = posenc_rope_check_relative(X, N, D, a->base, a->layout, delta, &checked);
            err = fmax(err, posenc_rope_check_relative(X2, N, D, a->base, a->layout, delta,
                                                       NULL));
        } else {
            err = posenc_check_relative(X, N, D, a->base, a->layout, delta, &checked);
        }
        fprintf(out, _("  δ = %-4ld %zu positions × %zu pairs   max |difference| = %.3g\n"),
                delta, checked / (D / 2), D / 2, err);
        if (err > worst) {
            worst = err;
            worst_delta = delta;
        }
    }
    if (!single)
        fprintf(out, _("worst over δ = %ld … %ld: %.3g (δ = %ld)\n"), a->check_from,
                a->check_to, worst, worst_delta);
}

/* --json: {"command","layout","dim","steps","base","P"} */
struct json_ctx {
    const struct posenc_args *a;
    const float *P;
};

static int write_json(FILE *f, const void *arg)
{
    const struct json_ctx *c = arg;
    size_t shape[2] = {(size_t)c->a->steps, (size_t)c->a->dim};
    json_writer jw;

    json_writer_init(&jw, f);
    json_object_begin(&jw, NULL, JSON_BLOCK);
    json_string(&jw, "command", "posenc");
    json_string(&jw, "layout", posenc_layout_name(c->a->layout));
    json_uint(&jw, "dim", shape[1]);
    json_uint(&jw, "steps", shape[0]);
    json_number_exact(&jw, "base", c->a->base);
    json_tensor(&jw, "P", c->P, 2, shape);
    json_end(&jw);
    return json_writer_finish(&jw);
}

/* A matrix for a person: a colour heatmap on a colour terminal, aligned
 * numbers otherwise. m is (rows, cols). */
static void print_matrix(const struct posenc_args *a, const float *m, size_t rows, size_t cols)
{
    if (!a->numbers && term_use_color(a->color, stdout)) {
        term_heatmap_opts o;
        memset(&o, 0, sizeof o);
        o.cmap = a->cmap;
        o.vmin = NAN;
        o.vmax = NAN;
        term_heatmap(stdout, m, rows, cols, &o);
    } else {
        term_matrix(stdout, m, rows, cols, 4, 3);
    }
}

/* The default view: the formula, the shape, and P itself. */
static void print_view(const struct posenc_args *a, const float *P)
{
    size_t N = (size_t)a->steps, D = (size_t)a->dim, h = (D + 1) / 2;
    printf(_("Positional encoding P: %zu positions × %zu dimensions, base %g"), N, D, a->base);
    if (a->layout == POSENC_CONCAT) {
        printf(_(", concat layout (h = %zu sin columns, then %zu cos columns)\n"), h, D - h);
        printf(_("  P[i, j]   = sin(i / %g^(2j/%zu))   j < %zu\n"), a->base, D, h);
        printf(_("  P[i, h+j] = cos(i / %g^(2j/%zu))   j < %zu\n"), a->base, D, D - h);
    } else {
        printf("\n");
        printf(_("  P[i, 2j]   = sin(i / %g^(2j/%zu))\n"), a->base, D);
        printf(_("  P[i, 2j+1] = cos(i / %g^(2j/%zu))\n"), a->base, D);
    }
    printf("P.shape: torch.Size([%zu, %zu])\n", N, D);
    print_matrix(a, P, N, D);
}

/* ---- --rope ---------------------------------------------------------- */

/* --rope --json: {"command","rope","layout","dim","steps","base","seed","q","k",
 * "scores","max_offset_error"} */
struct rope_json_ctx {
    const struct posenc_args *a;
    const float *q, *k, *S;
    double offset_error;
};

static int write_rope_json(FILE *f, const void *arg)
{
    const struct rope_json_ctx *c = arg;
    size_t N = (size_t)c->a->steps, D = (size_t)c->a->dim;
    json_writer jw;

    json_writer_init(&jw, f);
    json_object_begin(&jw, NULL, JSON_BLOCK);
    json_string(&jw, "command", "posenc");
    json_bool(&jw, "rope", 1);
    json_string(&jw, "layout", posenc_layout_name(c->a->layout));
    json_uint(&jw, "dim", D);
    json_uint(&jw, "steps", N);
    json_number_exact(&jw, "base", c->a->base);
    json_int(&jw, "seed", c->a->seed);
    json_tensor(&jw, "q", c->q, 1, (size_t[]){D});
    json_tensor(&jw, "k", c->k, 1, (size_t[]){D});
    json_tensor(&jw, "scores", c->S, 2, (size_t[]){N, N});
    json_number_exact(&jw, "max_offset_error", c->offset_error);
    json_end(&jw);
    return json_writer_finish(&jw);
}

/* What --rope computed, and the offset check, for a person. */
static void print_rope(FILE *out, const struct posenc_args *a, const float *S, double err)
{
    size_t N = (size_t)a->steps, D = (size_t)a->dim;
    fprintf(out, _("RoPE, rotary position embedding: %zu positions × %zu dimensions, base %g, "
                 "layout %s\n"), N, D, a->base, posenc_layout_name(a->layout));
    char pair[48];
    fprintf(out, _("  RoPE(x, m) turns each pair %s by the angle m·ω_j,  ω_j = 1/%g^(2j/%zu)\n"),
            rope_pair(a, pair, sizeof pair), a->base, D);
    fprintf(out, _("q, k: standard normal from --seed %ld, scaled to length 1\n"), a->seed);
    fprintf(out, "S[m, n] = RoPE(q, m) · RoPE(k, n) in float32: torch.Size([%zu, %zu])\n", N, N);
    fprintf(out, _("offset only: max |S[m, n] - q · RoPE(k, n-m)| = %.3g\n"), err);
    fputs(_("  (a turn by m, then by n-m, is a turn by n, and turns keep dot products)\n"), out);
    if (N >= 2)
        fprintf(out, _("  e.g. offset 1: S[0, 1] = %.6f, S[%zu, %zu] = %.6f\n"), S[1], N - 2,
                N - 1, S[(N - 2) * N + N - 1]);
}

/* --rope --png: the scores S (N, N) as a heatmap. */
static int rope_png(const struct posenc_args *a, float *S, text_font *font, FILE *rep)
{
    const size_t N = (size_t)a->steps;
    char title[96], what[160];
    heat_panel panel = {S, N, N, NULL, NULL, NULL};
    snprintf(title, sizeof title, _("RoPE scores: RoPE(q, m) · RoPE(k, n), %s pairs"),
             posenc_layout_name(a->layout));
    snprintf(what, sizeof what, _("heatmap of the RoPE scores S, %zu × %zu"), N, N);
    /* the colour scale is the scores' own range, within −1 … 1 */
    return heatmap_file(a->png, &panel, title, _("Key position n"), _("Query position m"), a->cmap, NAN,
                        NAN, font, rep, what);
}

/* --rope: a unit query q and key k turned to every position, the scores
 * S[m, n] = RoPE(q, m) · RoPE(k, n), and how far S is from a function of
 * the offset n − m. */
static int run_rope(const struct posenc_args *a)
{
    const size_t N = (size_t)a->steps, D = (size_t)a->dim;
    posenc_rope_demo r;
    size_t total = 0;
    FILE *rep;
    text_font *font = NULL; /* --font's, for the figure */
    int status = EXIT_RUNTIME, overflow;
    char what[160];

    /* memory: q and k, the turned rows, the scores, and the figures */
    overflow = posenc_rope_demo_bytes(N, D, &total) || size_add(total, (size_t)32 << 20, &total);
    snprintf(what, sizeof what, _("--steps %ld --dim %ld with --rope"), a->steps, a->dim);
    if (cli_check_mem(what, total, overflow, a->max_mem, NULL))
        return EXIT_RUNTIME;
    if (posenc_rope_demo_alloc(&r, N, D)) {
        cli_error("out of memory for --rope (scores %zu × %zu)", N, N);
        return EXIT_RUNTIME;
    }
    if (output_font_open(a->font, &font) != EXIT_OK)
        goto done;
    posenc_rope_demo_run(&r, a->base, a->layout, (unsigned long long)a->seed);

    rep = output_report_stream(a->json);
    print_rope(rep, a, r.S, r.offset_error);
    if (a->check)
        print_check(rep, a, r.Qr, r.Kr);
    status = EXIT_OK;
    if (a->json) {
        struct rope_json_ctx ctx = {a, r.q, r.k, r.S, r.offset_error};
        snprintf(what, sizeof what, _("RoPE's q, k and scores as JSON, %zu × %zu"), N, N);
        status = output_json(a->json, write_rope_json, &ctx, rep, what);
        if (status != EXIT_OK)
            goto done;
    }
    if (a->png) {
        status = rope_png(a, r.S, font, rep);
        if (status != EXIT_OK)
            goto done;
    }
    if (!a->json && !a->png && !a->check) {
        printf("q:\n");
        term_matrix(stdout, r.q, 1, D, 4, 3);
        printf("k:\n");
        term_matrix(stdout, r.k, 1, D, 4, 3);
        fputs(_("S (rows: query position m, columns: key position n):\n"), stdout);
        print_matrix(a, r.S, N, N);
    }
done:
    posenc_rope_demo_free(&r);
    output_font_close(font);
    return status;
}

/* The values that depend on each other: --cols against --dim (and the
 * chapter's columns 6-9 for --plot by default), --check-relative against
 * --dim and --steps. */
static int check_values(struct posenc_args *a)
{
    size_t D = (size_t)a->dim;
    if (a->ncols && !a->plot && !a->html) {
        cli_error("--cols chooses columns for --plot or --html, neither of which is given");
        return EXIT_USAGE;
    }
    if (a->plot && a->ncols == 0) {
        size_t first = D >= 10 ? 6 : 0;
        for (size_t c = first; c < D && c < first + 4; c++)
            a->cols[a->ncols++] = c;
    }
    for (size_t s = 0; s < a->ncols; s++)
        if (a->cols[s] >= D) {
            cli_error("--cols: column %zu does not exist for --dim %zu (columns 0 … %zu)",
                      a->cols[s], D, D - 1);
            return EXIT_USAGE;
        }
    if (a->check && D < 2) {
        cli_error("--check-relative: --dim %zu has no (sin, cos) column pair to rotate", D);
        return EXIT_USAGE;
    }
    if (a->check && (a->check_from <= -a->steps || a->check_to >= a->steps)) {
        cli_error("--check-relative: offsets must lie between %ld and %ld for --steps %ld",
                  1 - a->steps, a->steps - 1, a->steps);
        return EXIT_USAGE;
    }
    if (a->html && (size_t)a->steps > PAGE_MAX_P / (size_t)a->dim) {
        cli_error("--html: P of --steps %ld × --dim %ld is more numbers than a page holds "
                  "(%zu); --png draws it", a->steps, a->dim, PAGE_MAX_P);
        return EXIT_RUNTIME;
    }
    return output_page_check(a->html); /* before any work */
}

/* Whether P is stored: unless a heatmap is all that is asked for, when
 * its rows are made as the figure reads them. */
static int stores_P(const struct posenc_args *a)
{
    return a->json || a->plot || a->similarity || a->check || !a->png || a->naive || a->html;
}

/* Refuse a run over --max-mem: P, then P·Pᵀ and the figures (bounded by
 * ~1000 px panels). The estimate counts P even when it is not stored: the
 * work grows with it. */
static int check_memory(const struct posenc_args *a)
{
    size_t N = (size_t)a->steps, D = (size_t)a->dim, pbytes = 0, sbytes = 0, total = 0;
    char what[160];
    int overflow = size_mul(N, D, &pbytes) || size_mul(pbytes, sizeof(float), &pbytes);
    if (!overflow && a->similarity)
        overflow = size_mul(N, N, &sbytes) || size_mul(sbytes, sizeof(float), &sbytes);
    if (!overflow && a->plot)
        overflow = size_mul(N, (a->ncols + 1) * sizeof(double), &total);
    overflow = overflow || size_add(total, pbytes, &total) || size_add(total, sbytes, &total) ||
               size_add(total, (size_t)32 << 20, &total);
    snprintf(what, sizeof what, _("--steps %ld --dim %ld%s"), a->steps, a->dim,
             a->similarity ? _(" with --similarity") : "");
    return cli_check_mem(what, total, overflow, a->max_mem, NULL) ? EXIT_RUNTIME : EXIT_OK;
}

/* --png: the heatmap of P, from P or (P NULL) row by row. */
static int png_P(const struct posenc_args *a, const float *P, text_font *font, FILE *rep)
{
    size_t N = (size_t)a->steps, D = (size_t)a->dim;
    char title[96], what[160];
    heat_panel panel = {P, N, D, NULL, NULL, NULL};
    posenc_rows rows;
    int status;
    if (a->layout == POSENC_CONCAT) {
        snprintf(title, sizeof title, _("Positional encoding (%zu × %zu), sin half | cos half"), N,
                 D);
        snprintf(what, sizeof what, _("heatmap of P (concat layout), %zu × %zu"), N, D);
    } else {
        snprintf(title, sizeof title, _("Positional encoding (%zu × %zu)"), N, D);
        snprintf(what, sizeof what, _("heatmap of P, %zu × %zu"), N, D);
    }
    if (!P) {
        if (posenc_rows_init(&rows, D, a->base, a->layout) != 0) {
            cli_error("out of memory for the rows of P");
            return EXIT_RUNTIME;
        }
        panel.row = posenc_row;
        panel.row_ctx = &rows;
    }
    /* the colour scale is sin and cos's range, −1 … 1 */
    status = heatmap_file(a->png, &panel, title, "Column (encoding dimension)", "Row (position)",
                          a->cmap, -1.0, 1.0, font, rep, what);
    if (!P)
        posenc_rows_free(&rows);
    return status;
}

/* --similarity: the heatmap of P·Pᵀ. */
static int png_similarity(const struct posenc_args *a, const float *P, text_font *font,
                          FILE *rep)
{
    size_t N = (size_t)a->steps, D = (size_t)a->dim;
    float *S = malloc(N * N * sizeof *S); /* (N, N); the size passed check_memory */
    char what[160];
    int status;
    if (!S) {
        cli_error("out of memory for P·Pᵀ (%zu × %zu)", N, N);
        return EXIT_RUNTIME;
    }
    posenc_similarity(S, P, N, D);
    snprintf(what, sizeof what, _("heatmap of P·Pᵀ, %zu × %zu"), N, N);
    heat_panel spanel = {S, N, N, NULL, NULL, NULL};
    status = heatmap_file(a->similarity, &spanel, "P·Pᵀ (dot products of positions)",
                          "Position k", "Position i", a->cmap, NAN, NAN, font, rep, what);
    free(S);
    return status;
}

/* --html: --json's members, then "page": the columns of the plot, the
 * relative-position check for a few offsets (the page computes P·Pᵀ). */
struct page_ctx {
    const struct posenc_args *a;
    const float *P;
};

static void write_page_data(json_writer *jw, const void *arg)
{
    const struct page_ctx *c = arg;
    const struct posenc_args *a = c->a;
    const size_t N = (size_t)a->steps, D = (size_t)a->dim;
    long from = a->check ? a->check_from : 1, to = a->check ? a->check_to : (long)N - 1;
    json_string(jw, "command", "posenc");
    json_string(jw, "layout", posenc_layout_name(a->layout));
    json_uint(jw, "dim", D);
    json_uint(jw, "steps", N);
    json_number_exact(jw, "base", a->base);
    json_tensor_base64(jw, "P", c->P, 2, (size_t[]){N, D}); /* drawn: whole */
    json_object_begin(jw, "page", JSON_BLOCK);
    page_head(jw, "posenc", "attn posenc", a->argc, a->argv, a->cmap);
    /* the columns plotted first: --cols, else 6-9 (the first four when D < 10) */
    json_array_begin(jw, "cols", JSON_INLINE);
    if (a->ncols)
        for (size_t s = 0; s < a->ncols; s++)
            json_uint(jw, NULL, a->cols[s]);
    else
        for (size_t col = D >= 10 ? 6 : 0; col < D && col < (D >= 10 ? 10u : 4u); col++)
            json_uint(jw, NULL, col);
    json_end(jw);
    /* R(δ·ω_j) applied to every pair, against the row δ further on */
    if (to > from + PAGE_MAX_CHECKS - 1)
        to = from + PAGE_MAX_CHECKS - 1;
    if (!a->check && to > 10)
        to = 10;
    json_array_begin(jw, "check_relative", JSON_BLOCK);
    for (long delta = from; D >= 2 && delta <= to; delta++) {
        size_t checked;
        double err = posenc_check_relative(c->P, N, D, a->base, a->layout, delta, &checked);
        json_object_begin(jw, NULL, JSON_INLINE);
        json_int(jw, "delta", delta);
        json_uint(jw, "positions", checked / (D / 2));
        json_uint(jw, "pairs", D / 2);
        json_number(jw, "max_difference", err);
        json_end(jw);
    }
    json_end(jw);
    json_end(jw);
}

/* What is printed first, then the files written, each named. */
static int outputs(const struct posenc_args *a, const float *P, text_font *font)
{
    FILE *rep = output_report_stream(a->json);
    char what[160];
    int status = EXIT_OK;
    if (a->binary)
        print_binary(rep, a->binary);
    if (a->check)
        print_check(rep, a, P, NULL);
    if (a->json) {
        struct json_ctx ctx = {a, P};
        snprintf(what, sizeof what, _("P as JSON, %ld × %ld"), a->steps, a->dim);
        status = output_json(a->json, write_json, &ctx, rep, what);
    }
    if (status == EXIT_OK && a->png)
        status = png_P(a, stores_P(a) ? P : NULL, font, rep);
    if (status == EXIT_OK && a->plot)
        status = plot_file(a, P, font, rep);
    if (status == EXIT_OK && a->similarity)
        status = png_similarity(a, P, font, rep);
    if (status == EXIT_OK && a->html) {
        struct page_ctx ctx = {a, P};
        snprintf(what, sizeof what, _("a page of P, %ld × %ld"), a->steps, a->dim);
        status = output_page(a->html, "attn posenc", write_page_data, &ctx, rep, what);
    }
    if (!a->json && !a->png && !a->plot && !a->similarity && !a->binary && !a->check &&
        !a->html)
        print_view(a, P);
    return status;
}

int cmd_posenc(int argc, char **argv)
{
    struct posenc_args a;
    size_t N, D;
    float *P = NULL; /* (N, D), unless only a heatmap is asked for */
    text_font *font = NULL; /* --font's, for the figures */
    int status;

    memset(&a, 0, sizeof a);
    status = parse_args(argc, argv, &a);
    if (status == OPT_HELP_ASKED) {
        usage_posenc(stdout);
        return EXIT_OK;
    }
    if (status == EXIT_OK)
        status = check_values(&a);
    if (status != EXIT_OK)
        return status;
    if (a.rope)
        return run_rope(&a);
    if (check_memory(&a) != EXIT_OK)
        return EXIT_RUNTIME;

    N = (size_t)a.steps;
    D = (size_t)a.dim;
    if (stores_P(&a)) {
        P = big_floats(N * D * sizeof *P);
        if (!P) {
            cli_error("out of memory for P (%zu × %zu)", N, D);
            return EXIT_RUNTIME;
        }
        if (a.naive)
            posenc_fill_layout(P, N, D, a.base, a.layout); /* sin and cos of every angle */
        else
            posenc_fill_fast(P, N, D, a.base, a.layout);   /* row by row, by rotation */
    }
    /* --font, read and checked before the outputs */
    status = output_font_open(a.font, &font);
    if (status == EXIT_OK)
        status = outputs(&a, P, font);
    free(P);
    output_font_close(font);
    return status;
}
