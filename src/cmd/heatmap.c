/* heatmap.c — `attn heatmap`: d2l's show_heatmaps (§10.1) for any matrices
 * (SPEC.md §13): numbers of rank 2, 3 or 4 from a JSON file, or a tensor
 * inside one of attn's own --json files (--path), or torch.eye(N) (--eye),
 * or a seeded N × N standard normal matrix (--random, §15), each row
 * softmaxed with --softmax, drawn as a grid of panels on one colour scale
 * — to a PNG, a page, JSON, or the terminal.
 * Legend: R rows of panels, C columns of panels, Q queries (each panel's
 * rows), K keys (its columns). Every input is seen as d2l's (R, C, Q, K):
 * (Q, K) is (1, 1, Q, K) and (C, Q, K) is (1, C, Q, K). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "cli.h"
#include "commands.h"
#include "json_in.h"
#include "json_writer.h"
#include "options.h"
#include "output.h"
#include "page_out.h"
#include "attention.h"
#include "render.h"
#include "rng.h"
#include "tensor.h"
#include "term.h"

#define MAX_EYE 1000000L     /* larger sizes meet --max-mem long before */
#define MAX_TITLES 1024      /* --titles: at most this many columns named */
#define PRINT_ALL_ABOVE 1000 /* as torch: a matrix of more entries is cut */

struct heatmap_args {
    const char *input;             /* FILE, "-" for stdin; NULL with --eye */
    const char *path;              /* --path: the tensor in the file */
    long eye;                      /* --eye N; 0: not given */
    long random;                   /* --random N; 0: not given */
    long seed;                     /* --seed, for --random */
    int softmax;                   /* --softmax: each row softmaxed */
    const char *xlabel, *ylabel;
    const char *titles;            /* --titles A,B,…: split by split_titles */
    const char *png, *json, *html;
    const char *font;
    const attn_cmap *cmap;
    int color;                     /* term_color_mode */
    size_t max_mem;
    int argc;                      /* the command line, for the page */
    char **argv;
};

#define OPT_ARGS struct heatmap_args
const struct opt heatmap_options[] = {
    OPT_INT(0, "eye", eye, "N", 1, MAX_EYE,
            "draw torch.eye(N).reshape((1, 1, N, N)), the\n"
            "section's first cell, instead of a FILE"),
    OPT_INT(0, "random", random, "N", 1, MAX_EYE,
            "draw an N × N standard normal matrix from --seed\n"
            "instead of a FILE (d2l 10.1's exercise)"),
    OPT_SEED(seed, "--random's numbers (default 0)"),
    OPT_FLAG(0, "softmax", softmax,
             "softmax over each row (the last axis, keys) of\n"
             "what is drawn: every row then sums to 1"),
    OPT_TEXT(0, "path", path, "PATH",
             "the tensor inside the JSON, e.g.\n"
             "$.attention_weights or $.cross_attention[1]\n"
             "(members and indices; default $, the whole file)"),
    OPT_TEXT(0, "xlabel", xlabel, "TEXT", "under the bottom row of panels (default Keys)"),
    OPT_TEXT(0, "ylabel", ylabel, "TEXT", "left of the first column (default Queries)"),
    OPT_TEXT(0, "titles", titles, "A,B,…", "one title a column of panels, over each panel"),
    OPT_PNG(png, "the grid of heatmaps, one colour bar"),
    OPT_JSON(json, "{\"command\",\"shape\",\"xlabel\",\"ylabel\",\"titles\",\n"
                   "\"attention_weights\"} (R, C, Q, K); - is stdout"),
    OPT_HTML(html, "a page of the panels: hover a cell for its value"),
    OPT_CMAP(cmap, "colormap: %s (default Reds)"),
    OPT_FONT(font),
    OPT_COLOR(color),
    OPT_MAX_MEM(max_mem),
    OPT_HELP(),
    OPT_END(),
};

const struct opt_rule heatmap_rules[] = {
    OPT_CONFLICTS("eye", "path", "--eye draws the identity: --%s is for a FILE"),
    OPT_CONFLICTS("eye", "random", "--eye and --random draw two different matrices; give one"),
    OPT_CONFLICTS("random", "path", "--random draws a random matrix: --%s is for a FILE"),
    OPT_NEEDS("seed", "random", "--seed draws --random's numbers; give --random N"),
    OPT_RULES_END(),
};

void usage_heatmap(FILE *f)
{
    fputs(
        _("usage: attn heatmap FILE [--path PATH] [OPTIONS]\n"
        "       attn heatmap --eye N [OPTIONS]\n"
        "       attn heatmap --random N [--seed S] [--softmax] [OPTIONS]\n"
        "\n"
        "d2l's show_heatmaps (§10.1) for any matrices. FILE (- for stdin) holds\n"
        "nested arrays of numbers, as PyTorch's tensor.tolist() writes them, of\n"
        "rank 2, 3 or 4: (queries, keys), (columns, queries, keys) or d2l's\n"
        "(rows, columns, queries, keys). --path names the tensor inside a larger\n"
        "JSON, such as attn's own --json files: $.attention_weights of selfattn\n"
        "and multihead (examples × heads), $.cross_attention[1] of an array.\n"
        "\n"
        "As show_heatmaps draws them: a grid of rows × columns panels of the same\n"
        "size (the figure grows with the grid), one colour scale from the least to\n"
        "the greatest number and one colour bar, --xlabel under the bottom row,\n"
        "--ylabel left of the first column, --titles over the columns. Without an\n"
        "output option the panels are printed: colour heatmaps on a terminal,\n"
        "aligned numbers otherwise.\n"
        "\n"
        "--random N draws d2l 10.1's exercise: an N × N matrix of standard normal\n"
        "numbers (attn's own seeded generator, --seed), and with --softmax each row\n"
        "softmaxed, softmax(x)_k = e^(x_k) / Σ_j e^(x_j): weights that are positive\n"
        "and sum to 1 along each row, as attention weights do; the largest |sum − 1|\n"
        "is printed. --softmax softmaxes the rows (the last axis) of any input the\n"
        "same way: a FILE's matrices, --eye's identity.\n"
        "\n"
        "Weights in a notebook, shown by attn:\n"
        "    import json; json.dump(w.tolist(), open('w.json', 'w'))\n"
        "    $ attn heatmap w.json --png w.png\n"
        "\n"),
        f);
    opt_usage(f, heatmap_options);
    fputc('\n', f);
    fputs(
        _("Examples:\n"
        "  attn heatmap --eye 10 --png eye.png\n"
        "  attn heatmap --random 10 --softmax --png softmax.png\n"
        "  attn heatmap data/heatmap_heads.json --titles 'Head 1,Head 2' --png heads.png\n"
        "  attn selfattn --json run.json && attn heatmap run.json --path '$.attention_weights'\n"
        "  attn heatmap w.json --cmap viridis --html w.html\n"
        "  attn heatmap --eye 4 --color never\n"),
        f);
}

/* ---- the matrices ------------------------------------------------------ */

/* What is drawn: the numbers as d2l's (R, C, Q, K), the shape as given,
 * where they came from, and the titles of the columns. */
typedef struct heat_input {
    tensor t;                      /* as read: rank 2, 3 or 4 */
    size_t R, C, Q, K;
    char source[96];               /* "w.json", "torch.eye(10)" */
    char **titles;                 /* (C,) into titles_buf, or NULL */
    char *titles_buf;
    float vmin, vmax;
    double sum_err;                /* --softmax: the largest |row sum − 1| */
} heat_input;

static void input_free(heat_input *in)
{
    tensor_free(&in->t);
    free(in->titles);
    free(in->titles_buf);
}

/* The arrays at node along their first entries, checked before the
 * numbers are read: a rank of 1 or of 5 and more, or an empty array on the
 * way, is refused with where it is (a ragged array, a non-number: by
 * json_get_tensor after). */
static int check_rank(const cJSON *node, const char *where, const char *file)
{
    char p[256];
    size_t rank = 0;
    snprintf(p, sizeof p, "%s", where);
    while (cJSON_IsArray(node)) {
        if (++rank > 4) {
            cli_error("%s: %s: expected numbers of rank 2, 3 or 4 ((queries, keys), "
                      "(columns, queries, keys) or (rows, columns, queries, keys)), got rank "
                      "5 or more", file, where);
            return EXIT_RUNTIME;
        }
        if (!node->child) {
            cli_error("%s: %s: an empty array: every axis needs at least one entry", file, p);
            return EXIT_RUNTIME;
        }
        node = node->child;
        if (strlen(p) + 4 < sizeof p)
            strcat(p, "[0]");
    }
    if (rank == 1) {
        cli_error("%s: %s: expected numbers of rank 2, 3 or 4 ((queries, keys), (columns, "
                  "queries, keys) or (rows, columns, queries, keys)), got rank 1", file, where);
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

/* The tensor at node (named where in messages) of rank 2, 3 or 4. */
static int read_tensor(const cJSON *node, const char *where, const char *file, tensor *t)
{
    char err[512];
    if (check_rank(node, where, file) != EXIT_OK)
        return EXIT_RUNTIME;
    if (json_get_tensor(node, where, 2, 4, t, err, sizeof err) != 0) {
        cli_error("%s: %s", file, err);
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

/* FILE (and --path) read into in->t. */
static int load_file(const struct heatmap_args *a, heat_input *in)
{
    char err[512];
    const char *where = a->path ? a->path : "$";
    const char *file = strcmp(a->input, "-") == 0 ? "stdin" : a->input;
    const cJSON *node;
    int status;
    cJSON *root = json_read_file(a->input, a->max_mem / 8, err, sizeof err);
    if (!root) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    node = a->path ? json_at_path(root, a->path, err, sizeof err) : root;
    if (!node) {
        cli_error("%s: %s", file, err);
        cJSON_Delete(root);
        return EXIT_RUNTIME;
    }
    status = read_tensor(node, where, file, &in->t);
    cJSON_Delete(root);
    snprintf(in->source, sizeof in->source, "%.60s%s%.30s", file, a->path ? " " : "",
             a->path ? a->path : "");
    return status;
}

/* --eye N: the identity, (1, 1, N, N). */
static int load_eye(const struct heatmap_args *a, heat_input *in)
{
    const size_t N = (size_t)a->eye;
    size_t bytes;
    char err[256], what[64];
    int overflow = size_mul(N, N, &bytes) || size_mul(bytes, 2 * sizeof(float), &bytes);
    snprintf(what, sizeof what, "--eye %ld", a->eye);
    if (cli_check_mem(what, bytes, overflow, a->max_mem, NULL))
        return EXIT_RUNTIME;
    if (tensor_alloc(&in->t, 4, (size_t[]){1, 1, N, N}, err, sizeof err) != 0) {
        cli_error("--eye %ld: %s", a->eye, err);
        return EXIT_RUNTIME;
    }
    for (size_t i = 0; i < N; i++)
        in->t.data[i * N + i] = 1.0f; /* eye[i][i] = 1 */
    snprintf(in->source, sizeof in->source, "torch.eye(%zu)", N);
    return EXIT_OK;
}

/* --random N: (1, 1, N, N) standard normal numbers from --seed. */
static int load_random(const struct heatmap_args *a, heat_input *in)
{
    const size_t N = (size_t)a->random;
    size_t bytes;
    char err[256], what[64];
    rng r;
    int overflow = size_mul(N, N, &bytes) || size_mul(bytes, 2 * sizeof(float), &bytes);
    snprintf(what, sizeof what, "--random %ld", a->random);
    if (cli_check_mem(what, bytes, overflow, a->max_mem, NULL))
        return EXIT_RUNTIME;
    if (tensor_alloc(&in->t, 4, (size_t[]){1, 1, N, N}, err, sizeof err) != 0) {
        cli_error("--random %ld: %s", a->random, err);
        return EXIT_RUNTIME;
    }
    rng_seed(&r, (unsigned long long)a->seed);
    for (size_t i = 0; i < N * N; i++) /* row by row, as torch.randn fills one */
        in->t.data[i] = (float)rng_normal(&r);
    snprintf(in->source, sizeof in->source, _("normal(0, 1) of %zu × %zu, --seed %ld"), N, N,
             a->seed);
    return EXIT_OK;
}

/* --softmax: every row of every panel (the last axis) softmaxed; the
 * largest |Σ_k w_k − 1| over the rows, summed in double, into *err_sum. */
static void softmax_rows(heat_input *in, double *err_sum)
{
    const size_t rows = in->R * in->C * in->Q, K = in->K;
    *err_sum = 0.0;
    for (size_t i = 0; i < rows; i++) {
        float *x = in->t.data + i * K; /* (K,) one row */
        double sum = 0.0;
        softmax_row(x, K);
        for (size_t k = 0; k < K; k++)
            sum += x[k];
        *err_sum = fabs(sum - 1.0) > *err_sum ? fabs(sum - 1.0) : *err_sum;
    }
}

/* --titles A,B,… split at the commas: one per column of panels. */
static int split_titles(const struct heatmap_args *a, heat_input *in)
{
    size_t n = 1, len = strlen(a->titles), i = 0;
    for (const char *p = a->titles; *p; p++)
        n += *p == ',';
    if (n != in->C) {
        if (n == 1) /* n != C: never one title for one column */
            cli_error("--titles: %zu title for %zu columns of panels", n, in->C);
        else if (in->C == 1)
            cli_error("--titles: %zu titles for %zu column of panels", n, in->C);
        else
            cli_error("--titles: %zu titles for %zu columns of panels", n, in->C);
        return EXIT_USAGE;
    }
    in->titles_buf = malloc(len + 1);
    in->titles = malloc(n * sizeof *in->titles);
    if (!in->titles_buf || !in->titles) {
        cli_error("out of memory for --titles");
        return EXIT_RUNTIME;
    }
    memcpy(in->titles_buf, a->titles, len + 1);
    in->titles[i++] = in->titles_buf;
    for (char *p = in->titles_buf; *p; p++)
        if (*p == ',') {
            *p = '\0';
            in->titles[i++] = p + 1;
        }
    return EXIT_OK;
}

/* The input, seen as (R, C, Q, K), its range, its titles. */
static int load_input(const struct heatmap_args *a, heat_input *in)
{
    const tensor *t;
    int status = a->eye ? load_eye(a, in) : a->random ? load_random(a, in) : load_file(a, in);
    if (status != EXIT_OK)
        return status;
    t = &in->t;
    in->R = t->ndim == 4 ? t->shape[0] : 1;
    in->C = t->ndim >= 3 ? t->shape[t->ndim - 3] : 1;
    in->Q = t->shape[t->ndim - 2];
    in->K = t->shape[t->ndim - 1];
    if (a->softmax)
        softmax_rows(in, &in->sum_err);
    in->vmin = in->vmax = t->data[0];
    for (size_t i = 1; i < t->size; i++) {
        in->vmin = fminf(in->vmin, t->data[i]);
        in->vmax = fmaxf(in->vmax, t->data[i]);
    }
    if (a->titles && in->C > MAX_TITLES) {
        cli_error("--titles: at most %d columns of panels are named, got %zu", MAX_TITLES,
                  in->C);
        return EXIT_USAGE;
    }
    return a->titles ? split_titles(a, in) : EXIT_OK;
}

/* The panel of row r, column c: (Q, K). */
static const float *panel_data(const heat_input *in, size_t r, size_t c)
{
    return in->t.data + (r * in->C + c) * in->Q * in->K;
}

/* ---- outputs ----------------------------------------------------------- */

/* --png: show_heatmaps's grid, one colour bar. */
static int write_png(const struct heatmap_args *a, const heat_input *in, text_font *font,
                     FILE *rep)
{
    heat_figure fig;
    heat_panel *panels;
    size_t n = in->R * in->C; /* ≤ the numbers read: no overflow */
    char what[160];
    int status;

    if ((panels = calloc(n, sizeof *panels)) == NULL) {
        cli_error("%s: out of memory for %zu panels", a->png, n);
        return EXIT_RUNTIME;
    }
    for (size_t r = 0; r < in->R; r++)
        for (size_t c = 0; c < in->C; c++) {
            heat_panel *p = &panels[r * in->C + c];
            p->data = panel_data(in, r, c);
            p->rows = in->Q;
            p->cols = in->K;
            p->title = in->titles ? in->titles[c] : NULL;
        }
    memset(&fig, 0, sizeof fig);
    fig.panels = panels;
    fig.grid_rows = in->R;
    fig.grid_cols = in->C;
    fig.xlabel = a->xlabel;
    fig.ylabel = a->ylabel;
    fig.cmap = a->cmap;
    fig.vmin = NAN;   /* the least and greatest of all panels */
    fig.vmax = NAN;
    fig.font = font;
    snprintf(what, sizeof what,
             i18n_plural("%zu × %zu heatmap of %zu × %zu", "%zu × %zu heatmaps of %zu × %zu",
                         in->R * in->C), in->R, in->C, in->Q, in->K);
    status = output_heatmap(a->png, &fig, rep, what);
    free(panels);
    return status;
}

/* --json's members: the command, the shape as read, the labels, the titles
 * and the numbers as d2l's (R, C, Q, K). */
struct doc_ctx {
    const struct heatmap_args *a;
    const heat_input *in;
};

static void write_members(json_writer *jw, const void *arg)
{
    const struct doc_ctx *c = arg;
    const heat_input *in = c->in;
    json_string(jw, "command", "heatmap");
    json_array_begin(jw, "shape", JSON_INLINE);
    for (size_t i = 0; i < in->t.ndim; i++)
        json_uint(jw, NULL, in->t.shape[i]);
    json_end(jw);
    json_string(jw, "xlabel", c->a->xlabel);
    json_string(jw, "ylabel", c->a->ylabel);
    if (in->titles) {
        json_array_begin(jw, "titles", JSON_INLINE);
        for (size_t i = 0; i < in->C; i++)
            json_string(jw, NULL, in->titles[i]);
        json_end(jw);
    } else {
        json_null(jw, "titles");
    }
    if (c->a->softmax) { /* the rows softmaxed, and how near 1 their sums are */
        json_bool(jw, "softmax", 1);
        json_number(jw, "row_sum_error", in->sum_err);
    }
    if (c->a->random)
        json_int(jw, "seed", c->a->seed);
    json_tensor(jw, "attention_weights", in->t.data, 4,
                (size_t[]){in->R, in->C, in->Q, in->K});
}

static int write_doc(FILE *f, const void *arg)
{
    json_writer jw;
    json_writer_init(&jw, f);
    json_object_begin(&jw, NULL, JSON_BLOCK);
    write_members(&jw, arg);
    json_end(&jw);
    return json_writer_finish(&jw);
}

/* --html: the attention page's grid (rows of panels as its rows, columns
 * as its heads, named by --titles when given), hover for a cell's value. */
static void write_page_member(json_writer *jw, const void *arg)
{
    const struct doc_ctx *c = arg;
    json_object_begin(jw, "page", JSON_BLOCK);
    page_head(jw, "attention", "attn heatmap", c->a->argc, c->a->argv, c->a->cmap);
    json_string(jw, "weights", "attention_weights");
    json_bool(jw, "causal", 0);
    json_string(jw, "xlabel", c->a->xlabel);
    json_string(jw, "ylabel", c->a->ylabel);
    if (c->in->titles) { /* --titles: the page's columns are its heads */
        json_array_begin(jw, "titles", JSON_INLINE);
        for (size_t h = 0; h < c->in->C; h++)
            json_string(jw, NULL, c->in->titles[h]);
        json_end(jw);
    }
    json_array_begin(jw, "rows", JSON_BLOCK);
    for (size_t r = 0; r < c->in->R; r++) {
        char name[48];
        snprintf(name, sizeof name, "row %zu", r);
        json_object_begin(jw, NULL, JSON_INLINE);
        json_string(jw, "name", name);
        page_tokens(jw, "query_tokens", NULL, c->in->Q);
        page_tokens(jw, "key_tokens", NULL, c->in->K);
        json_null(jw, "valid_lens");
        json_end(jw);
    }
    json_end(jw);
    json_end(jw);
}

static void write_page_data(json_writer *jw, const void *arg)
{
    write_members(jw, arg);
    write_page_member(jw, arg);
}

static int write_page(const struct heatmap_args *a, const heat_input *in, FILE *rep)
{
    const struct doc_ctx ctx = {a, in};
    const size_t shape[4] = {in->R, in->C, in->Q, in->K};
    const page_weights pw = {in->t.data, 4, shape, write_page_member};
    char what[160];
    snprintf(what, sizeof what,
             i18n_plural("a page of %zu × %zu heatmap of %zu × %zu",
                         "a page of %zu × %zu heatmaps of %zu × %zu", in->R * in->C),
             in->R, in->C, in->Q, in->K);
    return output_page_weights(a->html, "attn heatmap", write_page_data, &ctx, &pw, rep, what);
}

/* ---- the terminal ------------------------------------------------------ */

/* "torch.Size([1, 1, 10, 10])" for the shape as read. */
static void size_text(char *buf, size_t n, const tensor *t)
{
    size_t used = (size_t)snprintf(buf, n, "torch.Size([");
    for (size_t i = 0; i < t->ndim && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%zu", i ? ", " : "", t->shape[i]);
    if (used < n)
        snprintf(buf + used, n - used, "])");
}

/* --softmax's check: every row sums to 1. */
static void print_softmax_check(FILE *f, const heat_input *in)
{
    const size_t rows = in->R * in->C * in->Q;
    fprintf(f, i18n_plural("softmax over each row: %zu row of %zu, each sums to 1 (largest |sum − 1| "
                           "%.3g)\n",
                           "softmax over each row: %zu rows of %zu, each sums to 1 (largest |sum − 1| "
                           "%.3g)\n", rows), rows, in->K, in->sum_err);
}

/* Every panel for a person: a colour heatmap on one scale (and the
 * numbers when the panel is small), or the numbers as torch prints them. */
static void print_panels(const struct heatmap_args *a, const heat_input *in)
{
    const int color = term_use_color((term_color_mode)a->color, stdout);
    const size_t edge = in->Q * in->K <= PRINT_ALL_ABOVE ? PRINT_ALL_ABOVE : 3;
    char size[96];
    size_text(size, sizeof size, &in->t);
    printf("%s: %s\n", in->source, size);
    printf(i18n_plural("%zu × %zu panel of %zu %s × %zu %s, one colour scale from %.4g to %.4g\n",
                       "%zu × %zu panels of %zu %s × %zu %s, one colour scale from %.4g to %.4g\n",
                       in->R * in->C),
           in->R, in->C, in->Q, a->ylabel, in->K, a->xlabel, (double)in->vmin, (double)in->vmax);
    if (a->softmax)
        print_softmax_check(stdout, in);
    for (size_t r = 0; r < in->R; r++)
        for (size_t c = 0; c < in->C; c++) {
            const float *m = panel_data(in, r, c);
            if (in->R * in->C > 1 || in->titles)
                printf(_("\nrow %zu, column %zu%s%s%s:\n"), r, c, in->titles ? " (" : "",
                       in->titles ? in->titles[c] : "", in->titles ? ")" : "");
            if (color) {
                term_heatmap_opts o;
                memset(&o, 0, sizeof o);
                o.cmap = a->cmap;
                o.vmin = in->vmin;
                o.vmax = in->vmax;
                term_heatmap(stdout, m, in->Q, in->K, &o);
            }
            if (!color || (in->Q <= 12 && in->K <= 12))
                term_matrix(stdout, m, in->Q, in->K, 4, edge);
        }
}

/* The files asked for, each named on rep; or the panels printed. */
static int outputs(const struct heatmap_args *a, const heat_input *in)
{
    FILE *rep = output_report_stream(a->json);
    const struct doc_ctx ctx = {a, in};
    text_font *font = NULL;
    char what[160];
    int status = EXIT_OK;
    if (!a->json && !a->png && !a->html) {
        print_panels(a, in);
        return EXIT_OK;
    }
    if (a->softmax) /* the check, beside the files */
        print_softmax_check(rep, in);
    if (a->json) {
        snprintf(what, sizeof what, _("%zu × %zu matrices of %zu × %zu as JSON"), in->R, in->C,
                 in->Q, in->K);
        status = output_json(a->json, write_doc, &ctx, rep, what);
    }
    if (status == EXIT_OK && a->png && (status = output_font_open(a->font, &font)) == EXIT_OK)
        status = write_png(a, in, font, rep);
    if (status == EXIT_OK && a->html)
        status = write_page(a, in, rep);
    output_font_close(font);
    return status;
}

/* ---- the command ------------------------------------------------------- */

/* Options and the one FILE (or --eye): EXIT_OK, OPT_HELP_ASKED, or the
 * exit status after the message. */
static int parse_args(int argc, char **argv, struct heatmap_args *a)
{
    char err[512];
    int first = argc;
    a->xlabel = "Keys";
    a->ylabel = "Queries";
    a->cmap = cmap_find("Reds");
    a->color = TERM_COLOR_AUTO;
    a->max_mem = CLI_DEFAULT_MAX_MEM;
    a->argc = argc;
    a->argv = argv;
    int status = opt_parse_operands(heatmap_options, heatmap_rules, argc, argv, a, NULL, &first);
    if (status != EXIT_OK)
        return status;
    if (argc - first > 1) {
        cli_error("expected one FILE, got %d (see attn heatmap --help)", argc - first);
        return EXIT_USAGE;
    }
    a->input = first < argc ? argv[first] : NULL;
    if (a->eye && a->input) {
        cli_error("--eye draws the identity and takes no FILE, got '%s'", a->input);
        return EXIT_USAGE;
    }
    if (a->random && a->input) {
        cli_error("--random draws a random matrix and takes no FILE, got '%s'", a->input);
        return EXIT_USAGE;
    }
    if (!a->eye && !a->random && !a->input) {
        cli_error("expected a JSON FILE (- for stdin), --eye N or --random N (see attn "
                  "heatmap --help)");
        return EXIT_USAGE;
    }
    if (a->path && json_path_check(a->path, err, sizeof err) != 0) {
        cli_error("--path: %s", err);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

int cmd_heatmap(int argc, char **argv)
{
    struct heatmap_args a;
    heat_input in;
    int status;

    memset(&a, 0, sizeof a);
    memset(&in, 0, sizeof in);
    status = parse_args(argc, argv, &a);
    if (status == OPT_HELP_ASKED) {
        usage_heatmap(stdout);
        return EXIT_OK;
    }
    if (status != EXIT_OK)
        return status;
    {
        const char *const files[] = {a.json, a.png};
        const char *const names[] = {"--json", "--png"};
        status = output_check_files(files, names, 2);
    }
    if (status == EXIT_OK)
        status = output_page_check(a.html);
    if (status == EXIT_OK)
        status = load_input(&a, &in);
    if (status == EXIT_OK)
        status = outputs(&a, &in);
    input_free(&in);
    return status;
}
