/* cmd_complexity.c — `attn complexity`: d2l §11.6.2's comparison of a
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
#include <time.h>
#include <unistd.h>

#include "attention.h"
#include "cli.h"
#include "commands.h"
#include "complexity.h"
#include "json_out.h"
#include "options.h"
#include "output.h"
#include "render.h"
#include "rng.h"
#include "checked.h"

#define MAX_N 1000000L       /* positions; keeps every count below 2^64 */
#define MAX_D 65536L         /* channels in the table */
#define MAX_K 1000L          /* kernel size */
#define MAX_MEASURE_DIM 4096L
#define MAX_REPS 101L
#define MAX_SWEEP 24         /* points: doubling from 1 to 10^6 gives 21 */
#define TIMED_SECONDS 0.01   /* one timed repetition runs the layer at least this long */
#define MAX_ITERS 100000L    /* … but never more often than this */

struct cx_args {
    long n, d, k, r;
    int measure;
    long sweep_from, sweep_to;
    long mdim, reps, seed;
    int wall;           /* --clock wall: fit and plot wall-clock time */
    const char *png, *json, *font;
    size_t max_mem;
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
    fputs("usage: attn complexity [--n N] [--d D] [--k K] [--r R] [OPTIONS]\n"
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
          "\n",
          f);
    opt_usage(f, complexity_options);
    fputs("\n"
          "Examples:\n"
          "  attn complexity\n"
          "  attn complexity --n 5 --k 3\n"
          "  attn complexity --n 4096 --d 64 --json table.json\n"
          "  attn complexity --measure --png loglog.png\n"
          "  attn complexity --measure --sweep 128:2048 --measure-dim 32 --reps 3\n",
          f);
}

/* ---- the table ------------------------------------------------------- */

enum { CONV, RNN, ATTN, RESTRICTED, DILATED, NLAYERS };
#define NMEASURED 4 /* CONV, RNN, ATTN, RESTRICTED are timed */

/* One row of the chapter's table. */
struct row {
    const char *key;        /* JSON name */
    char name[48];          /* "convolution, k = 3" */
    const char *complexity; /* "O(k·n·d²)" */
    double big_o;           /* the formula's value: k·n·d² */
    cx_count macs;          /* multiply-adds as implemented (layer 0 for DILATED) */
    const char *sequential; /* "O(1)" */
    size_t sequential_n;    /* the steps one layer must take in order */
    const char *path;       /* "O(n/k)" */
    double path_big_o;      /* n/k */
    char path_exact[40];    /* "⌈(n−1)/(k−1)⌉" */
    size_t path_formula;    /* its value */
    size_t path_measured;   /* by dependency propagation */
    const char *unit;       /* "layers" or "steps" */
    double stack_macs;      /* multiply-adds of the stack that connects x_1 and x_n */
};

/* Where self-attention becomes costlier than one other layer: the first n
 * from which it stays costlier. */
struct crossover {
    const char *rule;       /* "n > d" */
    size_t big_o_n;         /* from the O() formulas */
    size_t core_n;          /* exact counts, QKᵀ and A·V only */
    size_t proj_n;          /* exact counts with W_q, W_k, W_v */
};

struct table {
    size_t n, d, k, r;
    struct row rows[NLAYERS];
    cx_count attn_core, attn_proj;       /* self-attention's two parts */
    cx_count restricted_core;
    cx_count conv_full;                  /* k·n·d², padding taps included */
    struct crossover than_rnn, than_conv;
};

/* ⌈a/b⌉ for b > 0 */
static size_t ceil_div(size_t a, size_t b)
{
    return a / b + (a % b != 0);
}

/* ⌈log_k n⌉: the fewest L with k^L >= n. */
static size_t ceil_log(size_t n, size_t k)
{
    size_t L = 0, power = 1;
    while (power < n) {
        power = power > n / k ? n : power * k;
        L++;
    }
    return L;
}

/* The smallest n0 with attention (QKᵀ and A·V, plus W_q, W_k, W_v when
 * with_proj) costlier than the other layer for every n >= n0, knowing it
 * is for every n >= bound: walk down from bound to the last n where it is
 * not. The counts of complexity.c, each divided by d (all are multiples of
 * d), so that they fit in 64 bits far beyond --n's limit:
 *   attention 2·n² (+ 3·n·d)   recurrent 2·n·d   convolution d·taps(n) */
static size_t first_costlier(int layer, int with_proj, size_t bound, const struct table *t)
{
    const cx_count d = t->d;
    size_t n;
    for (n = bound; n > 1; n--) {
        cx_count m = n - 1;
        cx_count attn = 2 * m * m + (with_proj ? 3 * m * d : 0);
        cx_count other = layer == RNN ? 2 * m * d : d * conv_taps((size_t)m, t->k, 1);
        if (attn <= other)
            return n;
    }
    return 1;
}

/* "13 layers" / "1 layer" / "99 steps" */
static const char *plural(size_t v, const char *unit)
{
    static char buf[4][24];
    static int next;
    char *b = buf[next++ % 4];
    size_t len = strlen(unit);
    if (v == 1 && len > 1 && unit[len - 1] == 's')
        snprintf(b, sizeof buf[0], "%zu %.*s", v, (int)(len - 1), unit);
    else
        snprintf(b, sizeof buf[0], "%zu %s", v, unit);
    return b;
}

/* Propagate dependencies for one layer type; 0 or an exit status. */
static int measured_path(int layer, const struct table *t, size_t *steps)
{
    int status;
    switch (layer) {
    case CONV: status = path_conv(t->n, t->k, steps); break;
    case RNN: status = path_rnn(t->n, steps); break;
    case ATTN: status = path_attention(t->n, steps); break;
    case RESTRICTED: status = path_restricted(t->n, t->r, steps); break;
    default: status = path_dilated(t->n, t->k, steps); break;
    }
    if (status == PATH_NOMEM) {
        cli_error("out of memory for the path propagation (--n %zu)", t->n);
        return EXIT_RUNTIME;
    }
    if (status != 0) {
        /* unreachable: --k and --r below 2 are refused up front */
        cli_error("internal error: the dependencies of layer %d stopped spreading", layer);
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

static int build_table(struct table *t, const struct cx_args *a)
{
    const size_t n = (size_t)a->n, d = (size_t)a->d, k = (size_t)a->k, r = (size_t)a->r;
    const double nd = (double)n, dd = (double)d, kd = (double)k;
    struct row *row;
    size_t l, layers;
    int status;

    memset(t, 0, sizeof *t);
    t->n = n;
    t->d = d;
    t->k = k;
    t->r = r;
    t->attn_core = attn_core_macs(n, d, 0);
    t->attn_proj = attn_proj_macs(n, d);
    t->restricted_core = attn_core_macs(n, d, r);
    t->conv_full = (cx_count)k * n * d * d;

    row = &t->rows[CONV];
    row->key = "convolution";
    snprintf(row->name, sizeof row->name, "convolution, k = %zu", k);
    row->complexity = "O(k·n·d²)";
    row->big_o = kd * nd * dd * dd;
    row->macs = conv_macs(n, d, k, 1);
    row->sequential = "O(1)";
    row->sequential_n = 1;
    row->path = "O(n/k)";
    row->path_big_o = nd / kd;
    snprintf(row->path_exact, sizeof row->path_exact, "⌈(n−1)/(k−1)⌉");
    row->path_formula = ceil_div(n - 1, k - 1);
    row->unit = "layers";

    row = &t->rows[RNN];
    row->key = "recurrent";
    snprintf(row->name, sizeof row->name, "recurrent (tanh)");
    row->complexity = "O(n·d²)";
    row->big_o = nd * dd * dd;
    row->macs = rnn_macs(n, d);
    row->sequential = "O(n)";
    row->sequential_n = n;
    row->path = "O(n)";
    row->path_big_o = nd;
    snprintf(row->path_exact, sizeof row->path_exact, "n−1");
    row->path_formula = n - 1;
    row->unit = "steps";

    row = &t->rows[ATTN];
    row->key = "self_attention";
    snprintf(row->name, sizeof row->name, "self-attention");
    row->complexity = "O(n²·d)";
    row->big_o = nd * nd * dd;
    row->macs = t->attn_core + t->attn_proj;
    row->sequential = "O(1)";
    row->sequential_n = 1;
    row->path = "O(1)";
    row->path_big_o = 1.0;
    snprintf(row->path_exact, sizeof row->path_exact, "1");
    row->path_formula = n > 1 ? 1 : 0;
    row->unit = "layers";

    row = &t->rows[RESTRICTED];
    row->key = "restricted_self_attention";
    snprintf(row->name, sizeof row->name, "restricted attn, r = %zu", r);
    row->complexity = "O(r·n·d)";
    row->big_o = (double)r * nd * dd;
    row->macs = t->restricted_core + t->attn_proj;
    row->sequential = "O(1)";
    row->sequential_n = 1;
    row->path = "O(n/r)";
    row->path_big_o = nd / (double)r;
    snprintf(row->path_exact, sizeof row->path_exact, "⌈(n−1)/(r−1)⌉");
    row->path_formula = ceil_div(n - 1, r - 1);
    row->unit = "layers";

    row = &t->rows[DILATED];
    row->key = "dilated_convolution";
    snprintf(row->name, sizeof row->name, "dilated conv, k = %zu", k);
    row->complexity = "O(k·n·d²)";
    row->big_o = kd * nd * dd * dd;
    row->macs = conv_macs(n, d, k, 1); /* layer 0: dilation 1 */
    row->sequential = "O(1)";
    row->sequential_n = 1;
    row->path = "O(log_k n)";
    row->path_big_o = n > 1 ? log(nd) / log(kd) : 0.0;
    snprintf(row->path_exact, sizeof row->path_exact, "⌈log_%zu n⌉", k);
    row->path_formula = ceil_log(n, k);
    row->unit = "layers";

    /* the maximum path length, measured; and what the connecting stack costs */
    for (l = 0; l < NLAYERS; l++) {
        status = measured_path((int)l, t, &t->rows[l].path_measured);
        if (status != EXIT_OK)
            return status;
    }
    t->rows[CONV].stack_macs = (double)t->rows[CONV].path_measured * (double)t->rows[CONV].macs;
    t->rows[RNN].stack_macs = (double)t->rows[RNN].macs;    /* its steps are one layer's */
    t->rows[ATTN].stack_macs = n > 1 ? (double)t->rows[ATTN].macs : 0.0;
    t->rows[RESTRICTED].stack_macs =
        (double)t->rows[RESTRICTED].path_measured * (double)t->rows[RESTRICTED].macs;
    layers = t->rows[DILATED].path_measured;
    {
        size_t dil = 1;
        for (l = 0; l < layers; l++) {
            t->rows[DILATED].stack_macs += (double)conv_macs(n, d, k, dil);
            dil = dil > n / k ? n : dil * k; /* beyond n only the centre tap counts */
        }
    }
    if (n == 1)
        t->rows[RNN].stack_macs = 0.0;

    /* where self-attention becomes costlier: the chapter's O() rules, and
     * the exact counts (costlier for every n beyond d, resp. k·d/2) */
    t->than_rnn.rule = "n > d";
    t->than_rnn.big_o_n = d + 1;
    t->than_rnn.core_n = first_costlier(RNN, 0, d + 1, t);
    t->than_rnn.proj_n = first_costlier(RNN, 1, d + 1, t);
    t->than_conv.rule = "n > k·d";
    t->than_conv.big_o_n = k * d + 1;
    t->than_conv.core_n = first_costlier(CONV, 0, k * d / 2 + 1, t);
    t->than_conv.proj_n = first_costlier(CONV, 1, k * d / 2 + 1, t);
    return EXIT_OK;
}

/* ---- printing -------------------------------------------------------- */

/* 78118912 → "78,118,912" */
static const char *grouped(cx_count v)
{
    static char buf[8][32];
    static int next;
    char digits[32], *b = buf[next++ % 8];
    size_t len, i, o = 0;
    snprintf(digits, sizeof digits, "%llu", v);
    len = strlen(digits);
    for (i = 0; i < len; i++) {
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
    int chars = 0;
    const unsigned char *p;
    for (p = (const unsigned char *)s; *p; p++)
        if ((*p & 0xc0) != 0x80)
            chars++;
    fputs(s, f);
    if (chars >= width)
        fputc(' ', f); /* too long for the column: at least keep it apart */
    for (; chars < width; chars++)
        fputc(' ', f);
}

static void print_table(FILE *out, const struct table *t)
{
    static const int order[NLAYERS] = {CONV, RNN, ATTN, RESTRICTED, DILATED};
    size_t i;
    char buf[64];

    fprintf(out, "CNN vs RNN vs self-attention for n = %zu positions, d = %zu channels, "
                 "kernel k = %zu, window r = %zu\n\n", t->n, t->d, t->k, t->r);
    fprintf(out, "%-32s%-27s%-19s%s\n", "", "computational complexity", "sequential ops",
            "maximum path length");
    fprintf(out, "%-32s%-11s%13s   %-8s%8s   %-12s%s\n", "layer", "formula", "multiply-adds",
            "formula", "number", "formula", "measured");
    for (i = 0; i < NLAYERS; i++) {
        const struct row *row = &t->rows[order[i]];
        put_padded(out, row->name, 32);
        put_padded(out, row->complexity, 11);
        fprintf(out, "%13s   ", grouped(row->macs));
        put_padded(out, row->sequential, 8);
        fprintf(out, "%8zu   ", row->sequential_n);
        put_padded(out, row->path, 12);
        fprintf(out, "%s\n", plural(row->path_measured, row->unit));
    }

    fprintf(out, "\nMultiply-adds as these layers perform them (1 multiply-add = 2 FLOPs):\n");
    fprintf(out, "  convolution     d²·(taps inside the sequence) = %zu²·%s = %s\n", t->d,
            grouped(conv_taps(t->n, t->k, 1)), grouped(t->rows[CONV].macs));
    fprintf(out, "                  (k·n·d² = %s would count the taps on the zero padding)\n",
            grouped(t->conv_full));
    fprintf(out, "  recurrent       n·(d·d + d·d) = %s  (W_xh·x_t and W_hh·h_{t−1} each step)\n",
            grouped(t->rows[RNN].macs));
    fprintf(out, "  self-attention  n²·d + n²·d = %s  (QKᵀ and A·V: the chapter's O(n²·d))\n",
            grouped(t->attn_core));
    fprintf(out, "                  + 3·n·d² = %s  (projections W_q, W_k, W_v) = %s\n",
            grouped(t->attn_proj), grouped(t->rows[ATTN].macs));
    fprintf(out, "  restricted      2·d·(keys in the windows) = 2·%zu·%s = %s\n", t->d,
            grouped(attn_keys(t->n, t->r)), grouped(t->restricted_core));
    fprintf(out, "                  + 3·n·d² = %s  (projections) = %s\n", grouped(t->attn_proj),
            grouped(t->rows[RESTRICTED].macs));
    fprintf(out, "  dilated conv    layer 0 as the convolution; layer l reads taps %zu^l apart,\n"
                 "                  so fewer of them fall inside the sequence\n", t->k);

    fprintf(out, "\nWhere self-attention becomes costlier (the first n from which it stays so):\n");
    fprintf(out, "  than recurrence:   by the O() formulas, n²·d > n·d² for %s: n >= %zu\n",
            t->than_rnn.rule, t->than_rnn.big_o_n);
    fprintf(out, "                     by exact counts, QKᵀ and A·V only: n >= %zu; with the "
                 "projections: n >= %zu%s\n", t->than_rnn.core_n, t->than_rnn.proj_n,
            t->than_rnn.proj_n == 1 ? " (always)" : "");
    fprintf(out, "  than convolution:  by the O() formulas, n²·d > k·n·d² for %s: n >= %zu\n",
            t->than_conv.rule, t->than_conv.big_o_n);
    fprintf(out, "                     by exact counts, QKᵀ and A·V only: n >= %zu; with the "
                 "projections: n >= %zu%s\n", t->than_conv.core_n, t->than_conv.proj_n,
            t->than_conv.proj_n == 1 ? " (always)" : "");

    fprintf(out, "\nMaximum path length, measured by propagating dependencies through the "
                 "layers:\nthe steps until one output position depends on both x_1 and x_%zu\n",
            t->n);
    fprintf(out, "  %-30s%-12s%-22s%-20s%s\n", "layer", "measured", "formula", "O() value",
            "multiply-adds of that stack");
    for (i = 0; i < NLAYERS; i++) {
        const struct row *row = &t->rows[order[i]];
        fputs("  ", out);
        put_padded(out, row->name, 30);
        put_padded(out, plural(row->path_measured, row->unit), 12);
        if (order[i] == ATTN)
            snprintf(buf, sizeof buf, "%zu", row->path_formula);
        else
            snprintf(buf, sizeof buf, "%s = %zu", row->path_exact, row->path_formula);
        put_padded(out, buf, 22);
        snprintf(buf, sizeof buf, "%s = %.3g", row->path, row->path_big_o);
        put_padded(out, buf, 20);
        fprintf(out, "%.3g%s\n", row->stack_macs, order[i] == RNN ? " (one layer)" : "");
    }
}

/* ---- measuring ------------------------------------------------------- */

static const char *const measured_names[NMEASURED] = {"convolution", "recurrent",
                                                      "self-attention", "restricted"};
static const double theory_slope[NMEASURED] = {1.0, 1.0, 2.0, 1.0};

/* The two clocks: the CPU time of this process (CLOCK_PROCESS_CPUTIME_ID),
 * which leaves out the time the process waits while other programs have
 * the cores, and wall-clock time (CLOCK_MONOTONIC). */
enum { CPU = 0, WALL = 1 };
static const char *const clock_names[2] = {"cpu", "wall"};

struct measurement {
    size_t d, k, r, reps;
    size_t m;                               /* points in the sweep */
    size_t n[MAX_SWEEP];                    /* FROM, 2·FROM, …, TO */
    int clock;                              /* the one shown and plotted: CPU or WALL */
    /* median time of one forward pass, by each clock */
    double seconds[2][NMEASURED][MAX_SWEEP];
    cx_count macs[NMEASURED][MAX_SWEEP];    /* multiply-adds of that pass */
    size_t fit_from;                        /* first point of the fit */
    double slope[2][NMEASURED];             /* fitted on log time, by each clock */
    double count_slope[NMEASURED];          /* the same fit on log multiply-adds */
    double total_seconds;                   /* wall-clock time of the whole sweep */
};

/* The buffers for the largest n, and the layers' weights. */
struct bench {
    size_t N, d, k, r;
    float *X;       /* (N, d) random input */
    float *Y;       /* (N + 1, d) output; the RNN's h_0 … h_N */
    float *Q, *K, *V; /* (N, d) each */
    float *A;       /* (N, N) attention weights */
    float *conv_W;  /* (d, d, k) */
    float *conv_b;  /* (d,) */
    float *W_xh, *W_hh; /* (d, d) each */
    float *rnn_b;   /* (d,) */
    linear W_q, W_k, W_v; /* (d, d) each, no bias */
};

static void sweep_points(struct measurement *me, long from, long to)
{
    size_t n = (size_t)from;
    me->m = 0;
    while (n < (size_t)to && me->m < MAX_SWEEP - 1) {
        me->n[me->m++] = n;
        n *= 2;
    }
    me->n[me->m++] = (size_t)to;
}

/* Bytes of struct bench for the largest n; -1 on overflow. */
static int bench_bytes(size_t N, size_t d, size_t k, size_t *bytes)
{
    size_t floats = 0, part;
    if (size_mul(N, d, &part) || size_mul(part, 5, &part) || size_add(floats, part, &floats) ||
        size_add(floats, d, &floats) ||                                /* Y's extra row */
        size_mul(N, N, &part) || size_add(floats, part, &floats) ||    /* A */
        size_mul(d, d, &part) || size_mul(part, k + 5, &part) ||       /* conv, W_xh, W_hh, W_q,k,v */
        size_add(floats, part, &floats) || size_add(floats, 2 * d, &floats) ||
        size_mul(floats, sizeof(float), bytes))
        return -1;
    return 0;
}

static float *alloc_floats(size_t count, int *failed)
{
    float *p = count && !*failed ? malloc(count * sizeof(float)) : NULL;
    if (!p)
        *failed = 1;
    return p;
}

static void bench_free(struct bench *b)
{
    free(b->X);
    free(b->Y);
    free(b->Q);
    free(b->K);
    free(b->V);
    free(b->A);
    free(b->conv_W);
    free(b->conv_b);
    free(b->W_xh);
    free(b->W_hh);
    free(b->rnn_b);
    tensor_free(&b->W_q.weight);
    tensor_free(&b->W_k.weight);
    tensor_free(&b->W_v.weight);
}

/* uniform in ±bound, like PyTorch's default initialisation */
static void fill_uniform(float *w, size_t count, double bound, rng *g)
{
    size_t i;
    for (i = 0; i < count; i++)
        w[i] = (float)((2.0 * rng_uniform(g) - 1.0) * bound);
}

static int bench_init(struct bench *b, size_t N, size_t d, size_t k, size_t r,
                      unsigned long long seed)
{
    size_t shape[2] = {d, d}, i;
    char err[256];
    int failed = 0;
    rng g;

    memset(b, 0, sizeof *b);
    b->N = N;
    b->d = d;
    b->k = k;
    b->r = r;
    /* sizes were checked against --max-mem, so these products fit */
    b->X = alloc_floats(N * d, &failed);
    b->Y = alloc_floats((N + 1) * d, &failed);
    b->Q = alloc_floats(N * d, &failed);
    b->K = alloc_floats(N * d, &failed);
    b->V = alloc_floats(N * d, &failed);
    b->A = alloc_floats(N * N, &failed);
    b->conv_W = alloc_floats(d * d * k, &failed);
    b->conv_b = alloc_floats(d, &failed);
    b->W_xh = alloc_floats(d * d, &failed);
    b->W_hh = alloc_floats(d * d, &failed);
    b->rnn_b = alloc_floats(d, &failed);
    if (failed || tensor_alloc(&b->W_q.weight, 2, shape, err, sizeof err) ||
        tensor_alloc(&b->W_k.weight, 2, shape, err, sizeof err) ||
        tensor_alloc(&b->W_v.weight, 2, shape, err, sizeof err)) {
        bench_free(b);
        return -1;
    }
    rng_seed(&g, seed);
    /* input: standard normal */
    for (i = 0; i < N * d; i++)
        b->X[i] = (float)rng_normal(&g);
    /* weights: uniform in ±1/sqrt(fan_in) */
    fill_uniform(b->conv_W, d * d * k, 1.0 / sqrt((double)(d * k)), &g);
    fill_uniform(b->conv_b, d, 1.0 / sqrt((double)(d * k)), &g);
    fill_uniform(b->W_xh, d * d, 1.0 / sqrt((double)d), &g);
    fill_uniform(b->W_hh, d * d, 1.0 / sqrt((double)d), &g);
    fill_uniform(b->rnn_b, d, 1.0 / sqrt((double)d), &g);
    fill_uniform(b->W_q.weight.data, d * d, 1.0 / sqrt((double)d), &g);
    fill_uniform(b->W_k.weight.data, d * d, 1.0 / sqrt((double)d), &g);
    fill_uniform(b->W_v.weight.data, d * d, 1.0 / sqrt((double)d), &g);
    return 0;
}

/* One forward pass of a layer over the first n positions. */
static cx_count run_layer(struct bench *b, int layer, size_t n)
{
    switch (layer) {
    case CONV: return conv_forward(b->Y, b->X, b->conv_W, b->conv_b, n, b->d, b->k, 1);
    case RNN: return rnn_forward(b->Y, b->X, b->W_xh, b->W_hh, b->rnn_b, n, b->d);
    case ATTN:
        return attn_layer_forward(b->Y, b->A, b->Q, b->K, b->V, b->X, &b->W_q, &b->W_k,
                                  &b->W_v, n, b->d, 0);
    default:
        return attn_layer_forward(b->Y, b->A, b->Q, b->K, b->V, b->X, &b->W_q, &b->W_k,
                                  &b->W_v, n, b->d, b->r);
    }
}

/* The count the same pass must have made, from complexity.c's formulas. */
static cx_count layer_macs(int layer, size_t n, size_t d, size_t k, size_t r)
{
    switch (layer) {
    case CONV: return conv_macs(n, d, k, 1);
    case RNN: return rnn_macs(n, d);
    case ATTN: return attn_core_macs(n, d, 0) + attn_proj_macs(n, d);
    default: return attn_core_macs(n, d, r) + attn_proj_macs(n, d);
    }
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A progress bar on stderr: "measuring  42% [########          ] self-attention n = 2048" */
static void progress(double done, double total, const char *what, size_t n)
{
    const int width = 24;
    int filled = total > 0 ? (int)(width * done / total) : width, i;
    fprintf(stderr, "\rmeasuring %3d%% [", total > 0 ? (int)(100.0 * done / total) : 100);
    for (i = 0; i < width; i++)
        fputc(i < filled ? '#' : ' ', stderr);
    fprintf(stderr, "] %-14s n = %-8zu", what, n);
    fflush(stderr);
}

/* Passes of one layer at n that make a timed repetition last at least
 * TIMED_SECONDS, from one untimed pass (which also warms the buffers). */
static long calibrate(struct bench *b, int layer, size_t n, cx_count *macs)
{
    double start = now_seconds(), once;
    *macs = run_layer(b, layer, n);
    once = now_seconds() - start;
    if (once >= TIMED_SECONDS)
        return 1;
    if (once < TIMED_SECONDS / MAX_ITERS)
        return MAX_ITERS;
    return (long)ceil(TIMED_SECONDS / once);
}

/* The mean time of one pass over iters passes, by both clocks. */
static void time_passes(struct bench *b, int layer, size_t n, long iters, double *cpu,
                        double *wall)
{
    double wall0 = now_seconds(), cpu0 = cpu_seconds();
    long it;
    for (it = 0; it < iters; it++)
        run_layer(b, layer, n);
    *cpu = (cpu_seconds() - cpu0) / (double)iters;
    *wall = (now_seconds() - wall0) / (double)iters;
}

static int measure(struct measurement *me, const struct cx_args *a)
{
    struct bench b;
    double total_work = 0.0, done = 0.0, start = now_seconds();
    double (*samples)[NMEASURED][MAX_SWEEP][MAX_REPS] = NULL; /* (clock, layer, point, rep) */
    long iters[NMEASURED][MAX_SWEEP];              /* passes per timed repetition */
    int show = isatty(STDERR_FILENO), layer, c;
    size_t i, rep, nfit;

    me->clock = a->wall ? WALL : CPU;
    me->d = (size_t)a->mdim;
    me->k = (size_t)a->k;
    me->r = (size_t)a->r;
    me->reps = (size_t)a->reps;
    samples = malloc(2 * sizeof *samples);
    if (!samples || bench_init(&b, me->n[me->m - 1], me->d, me->k, me->r,
                               (unsigned long long)a->seed)) {
        free(samples);
        cli_error("out of memory for the --measure buffers");
        return EXIT_RUNTIME;
    }
    /* the progress bar moves with the multiply-adds, which time follows */
    for (i = 0; i < me->m; i++)
        for (layer = 0; layer < NMEASURED; layer++)
            total_work += (double)(me->reps + 1) *
                          ((double)layer_macs(layer, me->n[i], me->d, me->k, me->r) + 1e6);

    /* 1. one untimed pass per layer and n: the count, and the passes per repetition */
    for (i = 0; i < me->m; i++) {
        for (layer = 0; layer < NMEASURED; layer++) {
            size_t n = me->n[i];
            cx_count want = layer_macs(layer, n, me->d, me->k, me->r);
            if (show)
                progress(done, total_work, measured_names[layer], n);
            iters[layer][i] = calibrate(&b, layer, n, &me->macs[layer][i]);
            if (me->macs[layer][i] != want) {
                if (show)
                    fputc('\n', stderr);
                cli_error("internal error: the %s layer performed %llu multiply-adds at "
                          "n = %zu, its formula says %llu", measured_names[layer],
                          me->macs[layer][i], n, want);
                bench_free(&b);
                free(samples);
                return EXIT_RUNTIME;
            }
            done += (double)want + 1e6;
        }
    }
    /* 2. the timed repetitions, in rounds over every layer and n, so that a
     * burst of other work on the machine spoils one repetition of many
     * points rather than every repetition of one */
    for (rep = 0; rep < me->reps; rep++) {
        for (i = 0; i < me->m; i++) {
            for (layer = 0; layer < NMEASURED; layer++) {
                if (show)
                    progress(done, total_work, measured_names[layer], me->n[i]);
                time_passes(&b, layer, me->n[i], iters[layer][i], &samples[CPU][layer][i][rep],
                            &samples[WALL][layer][i][rep]);
                done += (double)me->macs[layer][i] + 1e6;
            }
        }
    }
    if (show)
        fprintf(stderr, "\r%*s\r", 72, "");
    bench_free(&b);
    /* 3. the median of the repetitions */
    for (c = 0; c < 2; c++)
        for (layer = 0; layer < NMEASURED; layer++)
            for (i = 0; i < me->m; i++)
                me->seconds[c][layer][i] = median_sort(samples[c][layer][i], me->reps);
    free(samples);
    me->total_seconds = now_seconds() - start;

    /* 4. the growth exponents, on the upper half of the sweep (at least two points) */
    nfit = (me->m + 1) / 2;
    if (nfit < 2)
        nfit = 2;
    me->fit_from = me->m - nfit;
    for (layer = 0; layer < NMEASURED; layer++) {
        double x[MAX_SWEEP], y[MAX_SWEEP];
        for (i = 0; i < nfit; i++) {
            x[i] = (double)me->n[me->fit_from + i];
            y[i] = (double)me->macs[layer][me->fit_from + i];
        }
        me->count_slope[layer] = fit_loglog_slope(x, y, nfit);
        for (c = 0; c < 2; c++)
            me->slope[c][layer] =
                fit_loglog_slope(x, me->seconds[c][layer] + me->fit_from, nfit);
    }
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
        snprintf(b, sizeof buf[0], "%.3g ms", s * 1e3);
    else
        snprintf(b, sizeof buf[0], "%.3g s", s);
    return b;
}

/* "restricted, r = 9" or the layer's name */
static const char *measured_label(const struct measurement *me, int layer)
{
    static char buf[40];
    if (layer != RESTRICTED)
        return measured_names[layer];
    snprintf(buf, sizeof buf, "restricted, r = %zu", me->r);
    return buf;
}

static void print_measurement(FILE *out, const struct measurement *me)
{
    static const char *const complexity[NMEASURED] = {"O(k·n·d²)", "O(n·d²)", "O(n²·d)",
                                                      "O(r·n·d)"};
    size_t i;
    int layer;

    fprintf(out, "\nMeasured: %s time of one forward pass on random input, d = %zu, k = %zu, "
                 "r = %zu,\nmedian of %zu repetitions\n", me->clock == CPU ? "CPU" : "wall-clock",
            me->d, me->k, me->r, me->reps);
    fprintf(out, "%9s", "n");
    for (layer = 0; layer < NMEASURED; layer++)
        fprintf(out, "  %18s", measured_label(me, layer));
    fputc('\n', out);
    for (i = 0; i < me->m; i++) {
        fprintf(out, "%9zu", me->n[i]);
        for (layer = 0; layer < NMEASURED; layer++)
            fprintf(out, "  %18s", seconds_text(me->seconds[me->clock][layer][i]));
        fputc('\n', out);
    }
    fprintf(out, "\nGrowth exponent in n: least-squares slope of log time against log n "
                 "over n = %zu … %zu\n", me->n[me->fit_from], me->n[me->m - 1]);
    fprintf(out, "  %-22s%10s%11s%14s%8s\n", "layer", "CPU time", "wall time", "exact counts",
            "theory");
    for (layer = 0; layer < NMEASURED; layer++)
        fprintf(out, "  %-22s%10.2f%11.2f%14.2f%8.0f   %s\n", measured_label(me, layer),
                me->slope[CPU][layer], me->slope[WALL][layer], me->count_slope[layer],
                theory_slope[layer], complexity[layer]);
    fprintf(out, "(exact counts: the same fit on the multiply-adds, which self-attention's "
                 "3·n·d²\nprojections pull below 2; wall time also counts waiting for a core "
                 "on a busy machine)\n");
    fprintf(out, "measuring took %.1f s\n", me->total_seconds);
}

/* ---- the figure ------------------------------------------------------ */

static int png_file(const char *path, const struct measurement *me, text_font *font,
                    FILE *rep)
{
    char labels[NMEASURED][96], title[160], err[512];
    double x[MAX_SWEEP];
    plot_series series[NMEASURED];
    plot_figure fig;
    attn_image img = {0, 0, NULL};
    size_t i;
    int layer, status;

    for (i = 0; i < me->m; i++)
        x[i] = (double)me->n[i];
    for (layer = 0; layer < NMEASURED; layer++) {
        if (layer == RESTRICTED)
            snprintf(labels[layer], sizeof labels[layer],
                     "restricted self-attention, r = %zu: slope %.2f (theory 1)", me->r,
                     me->slope[me->clock][layer]);
        else
            snprintf(labels[layer], sizeof labels[layer], "%s: slope %.2f (theory %.0f)",
                     measured_names[layer], me->slope[me->clock][layer], theory_slope[layer]);
        series[layer].x = x;
        series[layer].y = me->seconds[me->clock][layer];
        series[layer].n = me->m;
        series[layer].label = labels[layer];
    }
    snprintf(title, sizeof title,
             "Time of one layer against n, log-log (d = %zu, k = %zu; slopes fitted on "
             "n = %zu … %zu)", me->d, me->k, me->n[me->fit_from], me->n[me->m - 1]);
    memset(&fig, 0, sizeof fig);
    fig.series = series;
    fig.nseries = NMEASURED;
    fig.title = title;
    fig.xlabel = "sequence length n";
    fig.ylabel = me->clock == CPU ? "CPU seconds per pass" : "seconds per pass";
    fig.logx = 1;
    fig.logy = 1;
    fig.width = 900;
    fig.height = 600;
    fig.font = font;
    if (plot_draw(&img, &fig, err, sizeof err) != 0) {
        cli_error("%s: %s", path, err);
        return EXIT_RUNTIME;
    }
    status = output_png(path, &img, rep, "time against n, log-log, 4 layers");
    image_free(&img);
    return status;
}

/* ---- JSON ------------------------------------------------------------ */

struct json_ctx {
    const struct table *t;
    const struct measurement *me; /* NULL without --measure */
};

static void json_key_string(FILE *f, const char *indent, const char *key, const char *value)
{
    fprintf(f, "%s\"%s\": ", indent, key);
    json_write_string(f, value);
    fputs(",\n", f);
}

static void json_key_double(FILE *f, const char *indent, const char *key, double value,
                            const char *end)
{
    fprintf(f, "%s\"%s\": ", indent, key);
    if (isfinite(value))
        json_write_double(f, value);
    else
        fputs("null", f);
    fputs(end, f);
}

static void write_crossover(FILE *f, const char *key, const struct crossover *c,
                            const char *end)
{
    fprintf(f, "    \"%s\": {\"rule\": ", key);
    json_write_string(f, c->rule);
    fprintf(f, ", \"big_o_n\": %zu, \"exact_without_projections_n\": %zu, "
               "\"exact_with_projections_n\": %zu}%s", c->big_o_n, c->core_n, c->proj_n, end);
}

static void write_json(FILE *f, const void *arg)
{
    static const int order[NLAYERS] = {CONV, RNN, ATTN, RESTRICTED, DILATED};
    const struct json_ctx *c = arg;
    const struct table *t = c->t;
    const struct measurement *me = c->me;
    size_t i, j;

    fprintf(f, "{\n  \"command\": \"complexity\",\n  \"n\": %zu,\n  \"d\": %zu,\n"
               "  \"k\": %zu,\n  \"r\": %zu,\n  \"layers\": [\n", t->n, t->d, t->k, t->r);
    for (i = 0; i < NLAYERS; i++) {
        const struct row *row = &t->rows[order[i]];
        fputs("    {\n", f);
        json_key_string(f, "      ", "layer", row->key);
        json_key_string(f, "      ", "name", row->name);
        json_key_string(f, "      ", "complexity", row->complexity);
        json_key_double(f, "      ", "complexity_value", row->big_o, ",\n");
        fprintf(f, "      \"multiply_adds\": %llu,\n", row->macs);
        if (order[i] == ATTN || order[i] == RESTRICTED)
            fprintf(f, "      \"multiply_adds_without_projections\": %llu,\n"
                       "      \"projection_multiply_adds\": %llu,\n",
                    order[i] == ATTN ? t->attn_core : t->restricted_core, t->attn_proj);
        if (order[i] == CONV)
            fprintf(f, "      \"multiply_adds_with_padding\": %llu,\n", t->conv_full);
        json_key_string(f, "      ", "sequential_operations", row->sequential);
        fprintf(f, "      \"sequential_operations_value\": %zu,\n", row->sequential_n);
        json_key_string(f, "      ", "max_path_length", row->path);
        json_key_double(f, "      ", "max_path_length_value", row->path_big_o, ",\n");
        json_key_string(f, "      ", "path_formula", row->path_exact);
        fprintf(f, "      \"path_formula_value\": %zu,\n", row->path_formula);
        fprintf(f, "      \"path_measured\": %zu,\n", row->path_measured);
        json_key_string(f, "      ", "path_unit", row->unit);
        json_key_double(f, "      ", "stack_multiply_adds", row->stack_macs, "\n");
        fprintf(f, "    }%s\n", i + 1 < NLAYERS ? "," : "");
    }
    fputs("  ],\n  \"self_attention_costlier\": {\n", f);
    write_crossover(f, "than_recurrent", &t->than_rnn, ",\n");
    write_crossover(f, "than_convolution", &t->than_conv, "\n");
    fputs("  },\n  \"measure\": ", f);
    if (!me) {
        fputs("null\n}\n", f);
        return;
    }
    fprintf(f, "{\n    \"d\": %zu,\n    \"k\": %zu,\n    \"r\": %zu,\n    \"reps\": %zu,\n"
               "    \"clock\": \"%s\",\n    \"n\": [", me->d, me->k, me->r, me->reps,
            clock_names[me->clock]);
    for (i = 0; i < me->m; i++)
        fprintf(f, "%s%zu", i ? ", " : "", me->n[i]);
    fprintf(f, "],\n    \"fit_n\": [");
    for (i = me->fit_from; i < me->m; i++)
        fprintf(f, "%s%zu", i > me->fit_from ? ", " : "", me->n[i]);
    fputs("],\n    \"layers\": [\n", f);
    for (j = 0; j < NMEASURED; j++) {
        int ck;
        fputs("      {\"layer\": ", f);
        json_write_string(f, t->rows[j].key);
        fputs(",\n", f);
        /* "seconds" by the clock chosen with --clock, then both */
        for (ck = -1; ck < 2; ck++) {
            int clock = ck < 0 ? me->clock : ck;
            fprintf(f, "       \"%s%sseconds\": [", ck < 0 ? "" : clock_names[ck],
                    ck < 0 ? "" : "_");
            for (i = 0; i < me->m; i++) {
                if (i)
                    fputs(", ", f);
                json_write_double(f, me->seconds[clock][j][i]);
            }
            fputs("],\n", f);
        }
        fputs("       \"multiply_adds\": [", f);
        for (i = 0; i < me->m; i++)
            fprintf(f, "%s%llu", i ? ", " : "", me->macs[j][i]);
        fputs("],\n", f);
        json_key_double(f, "       ", "slope", me->slope[me->clock][j], ", ");
        json_key_double(f, "", "cpu_slope", me->slope[CPU][j], ", ");
        json_key_double(f, "", "wall_slope", me->slope[WALL][j], ", ");
        json_key_double(f, "", "count_slope", me->count_slope[j], ", ");
        json_key_double(f, "", "theory", theory_slope[j], "}");
        fprintf(f, "%s\n", j + 1 < NMEASURED ? "," : "");
    }
    fputs("    ],\n", f);
    json_key_double(f, "    ", "total_seconds", me->total_seconds, "\n");
    fputs("  }\n}\n", f);
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
    return opt_parse(complexity_options, complexity_rules, argc, argv, a, NULL);
}

int cmd_complexity(int argc, char **argv)
{
    struct cx_args a;
    struct table t;
    struct measurement *me = NULL;
    size_t total = 0, part;
    FILE *rep;
    text_font *font = NULL; /* --font's, for the figure */
    int status, overflow;
    char what[160];

    status = parse_args(argc, argv, &a);
    if (status == OPT_HELP_ASKED) {
        usage_complexity(stdout);
        return EXIT_OK;
    }
    if (status != EXIT_OK)
        return status;

    /* memory, up front: three (n,) sets for the dilated path, and with
     * --measure every buffer of the layers at the largest n */
    overflow = size_mul((size_t)a.n, 3, &total);
    snprintf(what, sizeof what, "--n %ld", a.n);
    if (a.measure) {
        me = calloc(1, sizeof *me);
        if (!me) {
            cli_error("out of memory");
            return EXIT_RUNTIME;
        }
        sweep_points(me, a.sweep_from, a.sweep_to);
        overflow = overflow || bench_bytes((size_t)a.sweep_to, (size_t)a.mdim, (size_t)a.k, &part) ||
                   size_add(total, part, &total);
        snprintf(what, sizeof what, "--measure --sweep %ld:%ld --measure-dim %ld", a.sweep_from,
                 a.sweep_to, a.mdim);
    }
    if (cli_check_mem(what, total, overflow, a.max_mem, NULL)) {
        free(me);
        return EXIT_RUNTIME;
    }
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
done:
    free(me);
    output_font_close(font);
    return status;
}
