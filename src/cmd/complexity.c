/* complexity.c — `attn complexity`: d2l §11.6.2's comparison of a
 * convolutional layer, a recurrent layer and self-attention (SPEC.md §7),
 * with the Transformer paper's restricted self-attention and dilated
 * convolution: the table for given sizes with exact multiply-add counts,
 * the maximum path length measured by dependency propagation, where
 * self-attention becomes the costliest, and (--measure) the layers timed
 * over a sweep of n with the growth exponent fitted.
 * Legend as in complexity.h: n positions, d channels, k kernel size,
 * r neighbourhood size. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attention.h"
#include "cli.h"
#include "commands.h"
#include "complexity.h"
#include "json_writer.h"
#include "page_out.h"
#include "options.h"
#include "output.h"
#include "render.h"
#include "term.h"
#include "rng.h"
#include "checked.h"
#include "clock.h"

#define MAX_N 1000000L       /* positions; keeps every count below 2^64 */
#define MAX_D 65536L         /* channels in the table */
#define MAX_K 1000L          /* kernel size */
#define MAX_MEASURE_DIM 4096L
#define MAX_REPS 101L
#define MAX_SWEEP 24         /* points: doubling from 1 to 10^6 gives 21 */

struct cx_args {
    long n, d, k, r;
    int measure;
    long sweep_from, sweep_to;
    long mdim, reps, seed;
    int wall;           /* --clock wall: fit and plot wall-clock time */
    const char *png, *json, *font, *html;
    size_t max_mem;
    int argc;           /* the command line, for the page */
    char **argv;
};

/* --k and --r: 2 or more; 1 gets the reason rather than a range. */
static int parse_width(const char *opt, const char *s, const char *why, long max, long *out)
{
    if (strcmp(s, "1") == 0) {
        cli_error("%s 1: %s, so no stack of layers ever connects x_1 and x_n; use %s 2 or "
                  "more", opt, why, opt);
        return -1;
    }
    return cli_parse_long(opt, s, 2, max, out);
}

/* "64:4096" → FROM < TO. */
static int parse_sweep(void *args, const char *s)
{
    struct cx_args *a = args;
    const char *colon = strchr(s, ':');
    char first[32];
    size_t len = colon ? (size_t)(colon - s) : 0;
    if (!colon || len == 0 || len >= sizeof first || colon[1] == '\0') {
        cli_error("--sweep: expected FROM:TO like 64:4096, got '%s'", s);
        return -1;
    }
    memcpy(first, s, len);
    first[len] = '\0';
    if (cli_parse_long("--sweep", first, 1, MAX_N, &a->sweep_from) ||
        cli_parse_long("--sweep", colon + 1, 1, MAX_N, &a->sweep_to))
        return -1;
    if (a->sweep_from >= a->sweep_to) {
        cli_error("--sweep: FROM must be less than TO, got '%s'", s);
        return -1;
    }
    return 0;
}

static int parse_k(void *args, const char *s)
{
    return parse_width("--k", s, "a kernel of one position never connects two positions "
                       "(output t reads only input t)", MAX_K, &((struct cx_args *)args)->k);
}

static int parse_r(void *args, const char *s)
{
    return parse_width("--r", s, "a window of one position lets each query see only itself",
                       MAX_N, &((struct cx_args *)args)->r);
}

static const char *const clock_words[] = {"cpu", "wall", NULL};

#define OPT_ARGS struct cx_args
const struct opt complexity_options[] = {
    OPT_INT('n', "n", n, "N", 1, MAX_N, "sequence length (default 100)"),
    OPT_INT('d', "d", d, "D", 1, MAX_D, "channels = hidden units (default 512)"),
    OPT_CALLBACK('k', "k", "K", parse_k, "convolution kernel size, 2 or more (default 3)"),
    OPT_CALLBACK('r', "r", "R", parse_r,
                 "restricted self-attention window, 2 or more\n"
                 "(default 9)"),
    OPT_FLAG(0, "measure", measure, "time the layers over --sweep and fit exponents"),
    OPT_CALLBACK(0, "sweep", "FROM:TO", parse_sweep,
                 "sequence lengths for --measure (default 64:4096)"),
    OPT_INT(0, "measure-dim", mdim, "D", 1, MAX_MEASURE_DIM, "channels while measuring (default 64)"),
    OPT_INT(0, "reps", reps, "N", 1, MAX_REPS,
            "timed repetitions per layer and n, the median\n"
            "is kept (default 5)"),
    OPT_CHOICE(0, "clock", wall, "cpu|wall", clock_words, "the time shown and plotted (default cpu)"),
    OPT_SEED(seed, "random input and weights for --measure (default 0)"),
    OPT_PNG(png, "with --measure: time against n on log-log axes,\n"
                 "one line per layer, fitted slopes in the legend"),
    OPT_HTML(html, "a page: the table, the cost of each layer against n\n"
                   "on log-log axes, with --measure the times and fits"),
    OPT_FONT(font),
    OPT_JSON(json, "every figure: table, path lengths, crossovers and\n"
                   "measurements; - for stdout"),
    OPT_MAX_MEM(max_mem),
    OPT_HELP(),
    OPT_END(),
};

const struct opt_rule complexity_rules[] = {
    OPT_NEEDS("sweep measure-dim reps clock seed png", "measure",
              "--%s is for --measure, which is not given"),
    OPT_RULES_END(),
};

void usage_complexity(FILE *f)
{
    fputs(_("usage: attn complexity [--n N] [--d D] [--k K] [--r R] [OPTIONS]\n"
          "\n"
          "The chapter's comparison of layers that map n positions of d channels to\n"
          "n positions of d channels: a convolution (kernel k, same padding), a\n"
          "recurrent layer (tanh cell, d hidden units) and self-attention, with the\n"
          "Transformer paper's restricted self-attention (each query sees a window\n"
          "of r positions) and dilated convolution (dilation k^l in layer l). For\n"
          "each: the computational complexity as formula and as the exact count of\n"
          "multiply-adds these layers perform (1 multiply-add = 2 FLOPs), the\n"
          "sequential operations, and the maximum path length, measured by\n"
          "propagating dependencies through the layers: the steps until one output\n"
          "position depends on both x_1 and x_n (the chapter: x_1 and x_5 are in the\n"
          "receptive field of a 2-layer convolution with kernel 3). Then where\n"
          "self-attention becomes costlier than recurrence (n > d) and convolution\n"
          "(n > k·d). The chapter's sizes are symbolic; the defaults n = 100,\n"
          "d = 512, k = 3, r = 9 are one concrete choice.\n"
          "\n"
          "Counts: matrix products only (not biases, tanh, exp, the 1/sqrt(d) scale\n"
          "or softmax's division); a convolution skips its zero-padding taps. The\n"
          "self-attention layer is single-head with projections W_q, W_k, W_v and no\n"
          "W_o: its count includes the projections (3·n·d²) besides QKᵀ and A·V\n"
          "(2·n²·d, the chapter's O(n²·d)); both are shown.\n"
          "\n"
          "--measure runs real naive layers on random input (d = --measure-dim,\n"
          "default 64) for n = FROM, 2·FROM, 4·FROM, … and TO, times each as the\n"
          "median of --reps repetitions (taken in rounds over all layers and n), and\n"
          "fits the exponent of time in n by least squares on log time against log n\n"
          "over the upper half of the sweep (512 … 4096 by default), where fixed\n"
          "costs no longer dominate. It prints the fit beside the theory (1, 1, 2, 1)\n"
          "and beside the same fit on the exact counts. Time is the process's CPU\n"
          "time, which a busy machine does not inflate; --clock wall shows and\n"
          "plots wall-clock time instead (both are always fitted). The layers run\n"
          "on one core; the default sweep takes about 20 s.\n"
          "\n"),
          f);
    opt_usage(f, complexity_options);
    fputs(_("\n"
          "Examples:\n"
          "  attn complexity\n"
          "  attn complexity --n 5 --k 3\n"
          "  attn complexity --n 4096 --d 64 --json table.json\n"
          "  attn complexity --measure --png loglog.png\n"
          "  attn complexity --measure --html complexity.html\n"
          "  attn complexity --measure --sweep 128:2048 --measure-dim 32 --reps 3\n"),
          f);
}

/* ---- the table ------------------------------------------------------- */

/* The table and the measurements are complexity.c's (cx_table_build,
 * cx_measure); this file prints them. */
enum {
    CONV = CX_CONV,
    RNN = CX_RNN,
    ATTN = CX_ATTN,
    RESTRICTED = CX_RESTRICTED,
    DILATED = CX_DILATED,
    NLAYERS = CX_NLAYERS
};
#define NMEASURED CX_NMEASURED
_Static_assert(MAX_SWEEP <= CX_MAX_SWEEP && MAX_REPS <= CX_MAX_REPS,
               "--sweep and --reps within what cx_measure holds");

/* "13 layers" / "1 layer" / "99 steps" */
/* "50 layers" or "99 steps": a row's measured path in the reader's
 * language (row->unit, "layers" or "steps", is JSON's word). */
static const char *path_count(const cx_row *row)
{
    static char buf[4][48];
    static int next;
    char *b = buf[next++ % 4];
    if (strcmp(row->unit, "steps") == 0)
        return cli_count(b, sizeof buf[0], "%zu step", "%zu steps", row->path_measured);
    return cli_count(b, sizeof buf[0], "%zu layer", "%zu layers", row->path_measured);
}

/* cx_table_build for the options; 0 or an exit status, the error printed. */
static int build_table(cx_table *t, const struct cx_args *a)
{
    cx_layer layer = CX_CONV;
    int status = cx_table_build(t, (size_t)a->n, (size_t)a->d, (size_t)a->k, (size_t)a->r, &layer);
    if (status == PATH_NOMEM) {
        cli_error("out of memory for the path propagation (--n %zu)", t->n);
        return EXIT_RUNTIME;
    }
    if (status != 0) {
        /* unreachable: --k and --r below 2 are refused up front */
        cli_error("internal error: the dependencies of layer %d stopped spreading", (int)layer);
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

/* ---- printing -------------------------------------------------------- */

/* 78118912 → "78,118,912" */
static const char *grouped(cx_count v)
{
    static char buf[8][32];
    static int next;
    char digits[32], *b = buf[next++ % 8];
    size_t o = 0;
    snprintf(digits, sizeof digits, "%llu", v);
    size_t len = strlen(digits);
    for (size_t i = 0; i < len; i++) {
        if (i && (len - i) % 3 == 0)
            b[o++] = ',';
        b[o++] = digits[i];
    }
    b[o] = '\0';
    return b;
}

/* s, then spaces up to width characters (UTF-8 counted as one each), at
 * least one. */
static void put_padded(FILE *f, const char *s, int width)
{
    int chars = (int)term_text_columns(s); /* 中文 takes two columns a character */
    fputs(s, f);
    if (chars >= width)
        fputc(' ', f); /* too long for the column: at least keep it apart */
    for (; chars < width; chars++)
        fputc(' ', f);
}

/* The table's notes: how the multiply-adds are counted, and the n from
 * which self-attention is costlier than recurrence and convolution. */
static void print_counts(FILE *out, const cx_table *t)
{
    fputs(_("\nMultiply-adds as these layers perform them (1 multiply-add = 2 FLOPs):\n"), out);
    fprintf(out, _("  convolution     d²·(taps inside the sequence) = %zu²·%s = %s\n"), t->d,
            grouped(t->conv_taps), grouped(t->rows[CONV].macs));
    fprintf(out, _("                  (k·n·d² = %s would count the taps on the zero padding)\n"),
            grouped(t->conv_full));
    fprintf(out, _("  recurrent       n·(d·d + d·d) = %s  (W_xh·x_t and W_hh·h_{t−1} each step)\n"),
            grouped(t->rows[RNN].macs));
    fprintf(out, _("  self-attention  n²·d + n²·d = %s  (QKᵀ and A·V: the chapter's O(n²·d))\n"),
            grouped(t->attn_core));
    fprintf(out, _("                  + 3·n·d² = %s  (projections W_q, W_k, W_v) = %s\n"),
            grouped(t->attn_proj), grouped(t->rows[ATTN].macs));
    fprintf(out, _("  restricted      2·d·(keys in the windows) = 2·%zu·%s = %s\n"), t->d,
            grouped(t->attn_keys), grouped(t->restricted_core));
    fprintf(out, _("                  + 3·n·d² = %s  (projections) = %s\n"), grouped(t->attn_proj),
            grouped(t->rows[RESTRICTED].macs));
    fprintf(out, _("  dilated conv    layer 0 as the convolution; layer l reads taps %zu^l apart,\n"
                 "                  so fewer of them fall inside the sequence\n"), t->k);

    fputs(_("\nWhere self-attention becomes costlier (the first n from which it stays so):\n"), out);
    fprintf(out, _("  than recurrence:   by the O() formulas, n²·d > n·d² for %s: n >= %zu\n"),
            t->than_rnn.rule, t->than_rnn.big_o_n);
    fprintf(out, _("                     by exact counts, QKᵀ and A·V only: n >= %zu; with the "
                 "projections: n >= %zu%s\n"), t->than_rnn.core_n, t->than_rnn.proj_n,
            t->than_rnn.proj_n == 1 ? _(" (always)") : "");
    fprintf(out, _("  than convolution:  by the O() formulas, n²·d > k·n·d² for %s: n >= %zu\n"),
            t->than_conv.rule, t->than_conv.big_o_n);
    fprintf(out, _("                     by exact counts, QKᵀ and A·V only: n >= %zu; with the "
                 "projections: n >= %zu%s\n"), t->than_conv.core_n, t->than_conv.proj_n,
            t->than_conv.proj_n == 1 ? _(" (always)") : "");
}

static void print_table(FILE *out, const cx_table *t)
{
    static const int order[NLAYERS] = {CONV, RNN, ATTN, RESTRICTED, DILATED};
    char buf[64];

    fprintf(out, _("CNN vs RNN vs self-attention for n = %zu positions, d = %zu channels, "
                 "kernel k = %zu, window r = %zu\n\n"), t->n, t->d, t->k, t->r);
    put_padded(out, "", 32);
    put_padded(out, _("computational complexity"), 27);
    put_padded(out, _("sequential ops"), 19);
    fprintf(out, "%s\n", _("maximum path length"));
    put_padded(out, _("layer"), 32);
    put_padded(out, _("formula"), 11);
    term_put_field(out, _("multiply-adds"), 13, 1);
    fputs("   ", out);
    put_padded(out, _("formula"), 8);
    term_put_field(out, _("number"), 8, 1);
    fputs("   ", out);
    put_padded(out, _("formula"), 12);
    fprintf(out, "%s\n", _("measured"));
    for (size_t i = 0; i < NLAYERS; i++) {
        const cx_row *row = &t->rows[order[i]];
        put_padded(out, row->label, 32);
        put_padded(out, row->complexity, 11);
        fprintf(out, "%13s   ", grouped(row->macs));
        put_padded(out, row->sequential, 8);
        fprintf(out, "%8zu   ", row->sequential_n);
        put_padded(out, row->path, 12);
        fprintf(out, "%s\n", path_count(row));
    }

    print_counts(out, t);

    fprintf(out, _("\nMaximum path length, measured by propagating dependencies through the "
                 "layers:\nthe steps until one output position depends on both x_1 and x_%zu\n"),
            t->n);
    fputs("  ", out);
    put_padded(out, _("layer"), 30);
    put_padded(out, _("measured"), 12);
    put_padded(out, _("formula"), 22);
    put_padded(out, _("O() value"), 20);
    fprintf(out, "%s\n", _("multiply-adds of that stack"));
    for (size_t i = 0; i < NLAYERS; i++) {
        const cx_row *row = &t->rows[order[i]];
        fputs("  ", out);
        put_padded(out, row->label, 30);
        put_padded(out, path_count(row), 12);
        if (order[i] == ATTN)
            snprintf(buf, sizeof buf, "%zu", row->path_formula);
        else
            snprintf(buf, sizeof buf, "%s = %zu", row->path_exact, row->path_formula);
        put_padded(out, buf, 22);
        snprintf(buf, sizeof buf, "%s = %.3g", row->path, row->path_big_o);
        put_padded(out, buf, 20);
        fprintf(out, "%.3g%s\n", row->stack_macs, order[i] == RNN ? _(" (one layer)") : "");
    }
}

/* ---- measuring ------------------------------------------------------- */

static const double theory_slope[NMEASURED] = {1.0, 1.0, 2.0, 1.0};

enum { CPU = CX_CPU, WALL = CX_WALL };
static const char *const clock_names[2] = {"cpu", "wall"};

/* A progress bar on stderr: "measuring  42% [########          ] self-attention n = 2048" */
static void progress(void *ctx, double done, double total, cx_layer layer, size_t n)
{
    const int width = 24;
    int filled = total > 0 ? (int)(width * done / total) : width;
    *(int *)ctx = 1; /* shown */
    fprintf(stderr, "\rmeasuring %3d%% [", total > 0 ? (int)(100.0 * done / total) : 100);
    for (int i = 0; i < width; i++)
        fputc(i < filled ? '#' : ' ', stderr);
    fprintf(stderr, "] %-14s n = %-8zu", cx_layer_label((cx_layer)layer), n);
    fflush(stderr);
}

/* cx_measure for the options, with a progress bar on a terminal; 0 or an
 * exit status, the error printed. */
static int measure(cx_measurement *me, const struct cx_args *a)
{
    char err[256];
    int shown = 0;
    int status = cx_measure(me, (size_t)a->mdim, (size_t)a->k, (size_t)a->r, (size_t)a->reps,
                            a->wall ? WALL : CPU, (unsigned long long)a->seed,
                            isatty(STDERR_FILENO) ? progress : NULL, &shown, err, sizeof err);
    if (status != 0) {
        if (shown)
            fputc('\n', stderr);
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    if (shown)
        fprintf(stderr, "\r%*s\r", 72, "");
    return EXIT_OK;
}

/* 0.000123 → "123 µs" */
static const char *seconds_text(double s)
{
    static char buf[8][24];
    static int next;
    char *b = buf[next++ % 8];
    if (s < 1e-3)
        snprintf(b, sizeof buf[0], "%.3g µs", s * 1e6);
    else if (s < 1.0)
        snprintf(b, sizeof buf[0], _("%.3g ms"), s * 1e3);
    else
        snprintf(b, sizeof buf[0], "%.3g s", s);
    return b;
}

/* "restricted, r = 9" or the layer's name */
static const char *measured_label(const cx_measurement *me, int layer)
{
    static char buf[40];
    if (layer != RESTRICTED)
        return cx_layer_label((cx_layer)layer);
    snprintf(buf, sizeof buf, _("restricted, r = %zu"), me->r);
    return buf;
}

static void print_measurement(FILE *out, const cx_measurement *me)
{
    static const char *const complexity[NMEASURED] = {"O(k·n·d²)", "O(n·d²)", "O(n²·d)",
                                                      "O(r·n·d)"};

    fprintf(out, _("\nMeasured: %s time of one forward pass on random input, d = %zu, k = %zu, "
                 "r = %zu,\nmedian of %zu repetitions\n"), me->clock == CPU ? "CPU" : _("wall-clock"),
            me->d, me->k, me->r, me->reps);
    fprintf(out, "%9s", "n");
    for (int layer = 0; layer < NMEASURED; layer++) {
        fputs("  ", out);
        term_put_field(out, measured_label(me, layer), 18, 1);
    }
    fputc('\n', out);
    for (size_t i = 0; i < me->m; i++) {
        fprintf(out, "%9zu", me->n[i]);
        for (int layer = 0; layer < NMEASURED; layer++)
            fprintf(out, "  %18s", seconds_text(me->seconds[me->clock][layer][i]));
        fputc('\n', out);
    }
    fprintf(out, _("\nGrowth exponent in n: least-squares slope of log time against log n "
                 "over n = %zu … %zu\n"), me->n[me->fit_from], me->n[me->m - 1]);
    fputs("  ", out);
    term_put_field(out, _("layer"), 22, 0);
    term_put_field(out, _("CPU time"), 10, 1);
    term_put_field(out, _("wall time"), 11, 1);
    term_put_field(out, _("exact counts"), 14, 1);
    term_put_field(out, _("theory"), 8, 1);
    fputc('\n', out);
    for (int layer = 0; layer < NMEASURED; layer++) {
        fputs("  ", out);
        term_put_field(out, measured_label(me, layer), 22, 0);
        fprintf(out, "%10.2f%11.2f%14.2f%8.0f   %s\n",
                me->slope[CPU][layer], me->slope[WALL][layer], me->count_slope[layer],
                theory_slope[layer], complexity[layer]);
    }
    fputs(_("(exact counts: the same fit on the multiply-adds, which self-attention's "
                 "3·n·d²\nprojections pull below 2; wall time also counts waiting for a core "
                 "on a busy machine)\n"), out);
    fprintf(out, _("measuring took %.1f s\n"), me->total_seconds);
}

/* ---- the figure ------------------------------------------------------ */

static int png_file(const char *path, const cx_measurement *me, text_font *font, FILE *rep)
{
    char labels[NMEASURED][96], title[160], err[512];
    double x[MAX_SWEEP];
    plot_series series[NMEASURED];
    plot_figure fig;
    attn_image img = {0, 0, NULL};

    for (size_t i = 0; i < me->m; i++)
        x[i] = (double)me->n[i];
    for (int layer = 0; layer < NMEASURED; layer++) {
        if (layer == RESTRICTED)
            snprintf(labels[layer], sizeof labels[layer],
                     _("restricted self-attention, r = %zu: slope %.2f (theory 1)"), me->r,
                     me->slope[me->clock][layer]);
        else
            snprintf(labels[layer], sizeof labels[layer], _("%s: slope %.2f (theory %.0f)"),
                     cx_layer_label((cx_layer)layer), me->slope[me->clock][layer],
                     theory_slope[layer]);
        series[layer].x = x;
        series[layer].y = me->seconds[me->clock][layer];
        series[layer].n = me->m;
        series[layer].label = labels[layer];
    }
    snprintf(title, sizeof title,
             _("Time of one layer against n, log-log (d = %zu, k = %zu; slopes fitted on "
             "n = %zu … %zu)"), me->d, me->k, me->n[me->fit_from], me->n[me->m - 1]);
    memset(&fig, 0, sizeof fig);
    fig.series = series;
    fig.nseries = NMEASURED;
    fig.title = title;
    fig.xlabel = _("sequence length n");
    fig.ylabel = me->clock == CPU ? _("CPU seconds per pass") : _("seconds per pass");
    fig.logx = 1;
    fig.logy = 1;
    fig.width = 900;
    fig.height = 600;
    fig.font = font;
    if (plot_draw(&img, &fig, err, sizeof err) != 0) {
        cli_error("%s: %s", path, err);
        return EXIT_RUNTIME;
    }
    int status = output_png(path, &img, rep, "time against n, log-log, 4 layers");
    image_free(&img);
    return status;
}

/* ---- JSON ------------------------------------------------------------ */

struct json_ctx {
    const cx_table *t;
    const cx_measurement *me; /* NULL without --measure */
};

/* Where self-attention starts to cost more than another layer. */
static void write_crossover(json_writer *jw, const char *key, const cx_crossover *c)
{
    json_object_begin(jw, key, JSON_INLINE);
    json_string(jw, "rule", c->rule);
    json_uint(jw, "big_o_n", c->big_o_n);
    json_uint(jw, "exact_without_projections_n", c->core_n);
    json_uint(jw, "exact_with_projections_n", c->proj_n);
    json_end(jw);
}

/* One row of the table: its formulas, their values and the counts. */
static void write_layer(json_writer *jw, const cx_table *t, int layer)
{
    const cx_row *row = &t->rows[layer];
    json_object_begin(jw, NULL, JSON_BLOCK);
    json_string(jw, "layer", row->key);
    json_string(jw, "name", row->name);
    json_string(jw, "complexity", row->complexity);
    json_number_exact(jw, "complexity_value", row->big_o);
    json_uint(jw, "multiply_adds", row->macs);
    if (layer == ATTN || layer == RESTRICTED) {
        json_uint(jw, "multiply_adds_without_projections",
                  layer == ATTN ? t->attn_core : t->restricted_core);
        json_uint(jw, "projection_multiply_adds", t->attn_proj);
    }
    if (layer == CONV)
        json_uint(jw, "multiply_adds_with_padding", t->conv_full);
    json_string(jw, "sequential_operations", row->sequential);
    json_uint(jw, "sequential_operations_value", row->sequential_n);
    json_string(jw, "max_path_length", row->path);
    json_number_exact(jw, "max_path_length_value", row->path_big_o);
    json_string(jw, "path_formula", row->path_exact);
    json_uint(jw, "path_formula_value", row->path_formula);
    json_uint(jw, "path_measured", row->path_measured);
    json_string(jw, "path_unit", row->unit);
    json_number_exact(jw, "stack_multiply_adds", row->stack_macs);
    json_end(jw);
}

/* One measured layer: its times by each clock, counts and fitted slopes. */
static void write_measured(json_writer *jw, const cx_measurement *me, const char *key,
                           int layer)
{
    json_object_begin(jw, NULL, JSON_ALIGNED);
    json_string(jw, "layer", key);
    /* "seconds" by the clock chosen with --clock, then both */
    for (int ck = -1; ck < 2; ck++) {
        char name[32];
        snprintf(name, sizeof name, "%s%sseconds", ck < 0 ? "" : clock_names[ck],
                 ck < 0 ? "" : "_");
        json_array_begin(jw, name, JSON_INLINE);
        for (size_t i = 0; i < me->m; i++)
            json_number_exact(jw, NULL, me->seconds[ck < 0 ? me->clock : ck][layer][i]);
        json_end(jw);
    }
    json_array_begin(jw, "multiply_adds", JSON_INLINE);
    for (size_t i = 0; i < me->m; i++)
        json_uint(jw, NULL, me->macs[layer][i]);
    json_end(jw);
    json_number_exact(jw, "slope", me->slope[me->clock][layer]);
    json_relayout(jw, JSON_INLINE);
    json_number_exact(jw, "cpu_slope", me->slope[CPU][layer]);
    json_number_exact(jw, "wall_slope", me->slope[WALL][layer]);
    json_number_exact(jw, "count_slope", me->count_slope[layer]);
    json_number_exact(jw, "theory", theory_slope[layer]);
    json_end(jw);
}

static void write_measurement(json_writer *jw, const cx_table *t,
                              const cx_measurement *me)
{
    if (!me) {
        json_null(jw, "measure");
        return;
    }
    json_object_begin(jw, "measure", JSON_BLOCK);
    json_uint(jw, "d", me->d);
    json_uint(jw, "k", me->k);
    json_uint(jw, "r", me->r);
    json_uint(jw, "reps", me->reps);
    json_string(jw, "clock", clock_names[me->clock]);
    json_array_begin(jw, "n", JSON_INLINE);
    for (size_t i = 0; i < me->m; i++)
        json_uint(jw, NULL, me->n[i]);
    json_end(jw);
    json_array_begin(jw, "fit_n", JSON_INLINE);
    for (size_t i = me->fit_from; i < me->m; i++)
        json_uint(jw, NULL, me->n[i]);
    json_end(jw);
    json_array_begin(jw, "layers", JSON_BLOCK);
    for (int j = 0; j < NMEASURED; j++)
        write_measured(jw, me, t->rows[j].key, j);
    json_end(jw);
    json_number_exact(jw, "total_seconds", me->total_seconds);
    json_end(jw);
}

/* The members of --json's object (the page's data begins with them). */
static void write_members(json_writer *jw, const void *arg)
{
    const struct json_ctx *c = arg;
    static const int order[NLAYERS] = {CONV, RNN, ATTN, RESTRICTED, DILATED};
    const cx_table *t = c->t;
    json_string(jw, "command", "complexity");
    json_uint(jw, "n", t->n);
    json_uint(jw, "d", t->d);
    json_uint(jw, "k", t->k);
    json_uint(jw, "r", t->r);
    json_array_begin(jw, "layers", JSON_BLOCK);
    for (int i = 0; i < NLAYERS; i++)
        write_layer(jw, t, order[i]);
    json_end(jw);
    json_object_begin(jw, "self_attention_costlier", JSON_BLOCK);
    write_crossover(jw, "than_recurrent", &t->than_rnn);
    write_crossover(jw, "than_convolution", &t->than_conv);
    json_end(jw);
    write_measurement(jw, t, c->me);
}

static int write_json(FILE *f, const void *arg)
{
    return json_document(f, 0, write_members, arg);
}

/* --html: --json's members and "page" (the page draws the table, the
 * formulas' cost against n and the measurements from them). */
struct page_ctx {
    struct json_ctx c;
    const struct cx_args *a;
};

static void write_page_data(json_writer *jw, const void *arg)
{
    const struct page_ctx *p = arg;
    write_members(jw, &p->c);
    json_object_begin(jw, "page", JSON_INLINE);
    page_head(jw, "complexity", "attn complexity", p->a->argc, p->a->argv, NULL);
    json_end(jw);
}

/* ---- the command ----------------------------------------------------- */

/* The defaults, then argv: EXIT_OK, OPT_HELP_ASKED, or EXIT_USAGE after
 * printing the error. */
static int parse_args(int argc, char **argv, struct cx_args *a)
{
    memset(a, 0, sizeof *a);
    a->n = 100;
    a->d = 512;
    a->k = 3;
    a->r = 9;
    a->sweep_from = 64;
    a->sweep_to = 4096;
    a->mdim = 64;
    a->reps = 5;
    a->max_mem = CLI_DEFAULT_MAX_MEM;
    a->argc = argc;
    a->argv = argv;
    return opt_parse(complexity_options, complexity_rules, argc, argv, a, NULL);
}

/* Memory, up front: three (n,) sets for the dilated path, and with
 * --measure every buffer of the layers at the largest n (*me: the
 * measurement, allocated here with its sweep's points). */
static int check_memory(const struct cx_args *a, cx_measurement **me)
{
    size_t total = 0, part;
    char what[160];
    int overflow = size_mul((size_t)a->n, 3, &total);
    snprintf(what, sizeof what, "--n %ld", a->n);
    if (a->measure) {
        if (!(*me = calloc(1, sizeof **me))) {
            cli_error("out of memory");
            return EXIT_RUNTIME;
        }
        cx_sweep_points(*me, (size_t)a->sweep_from, (size_t)a->sweep_to);
        overflow = overflow ||
                   cx_measure_bytes((size_t)a->sweep_to, (size_t)a->mdim, (size_t)a->k, &part) ||
                   size_add(total, part, &total);
        snprintf(what, sizeof what, _("--measure --sweep %ld:%ld --measure-dim %ld"), a->sweep_from,
                 a->sweep_to, a->mdim);
    }
    if (cli_check_mem(what, total, overflow, a->max_mem, NULL)) {
        free(*me);
        *me = NULL;
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

int cmd_complexity(int argc, char **argv)
{
    struct cx_args a;
    cx_table t;
    cx_measurement *me = NULL;
    FILE *rep;
    text_font *font = NULL; /* --font's, for the figure */

    int status = parse_args(argc, argv, &a);
    if (status == OPT_HELP_ASKED) {
        usage_complexity(stdout);
        return EXIT_OK;
    }
    if (status != EXIT_OK)
        return status;
    if ((status = output_page_check(a.html)) != EXIT_OK) /* before any work */
        return status;

    if ((status = check_memory(&a, &me)) != EXIT_OK)
        return status;
    /* --font, read and checked before measuring */
    if (output_font_open(a.font, &font) != EXIT_OK) {
        free(me);
        return EXIT_RUNTIME;
    }

    status = build_table(&t, &a);
    if (status == EXIT_OK && me)
        status = measure(me, &a);
    if (status != EXIT_OK)
        goto done;

    rep = output_report_stream(a.json);
    if (rep == stdout) {
        print_table(stdout, &t);
        if (me)
            print_measurement(stdout, me);
    }
    if (a.json) {
        struct json_ctx ctx = {&t, me};
        status = output_json(a.json, write_json, &ctx, rep,
                             me ? "table, path lengths, crossovers and measurements"
                                : "table, path lengths and crossovers");
        if (status != EXIT_OK)
            goto done;
    }
    if (a.png)
        status = png_file(a.png, me, font, rep);
    if (status == EXIT_OK && a.html) {
        struct page_ctx pc = {{&t, me}, &a};
        status = output_page(a.html, "attn complexity", write_page_data, &pc, rep,
                             me ? "a page of the table, the costs and the measurements"
                                : "a page of the table and the costs");
    }
done:
    free(me);
    output_font_close(font);
    return status;
}
