/* pool_out.c — what `attn pool` writes (pool_cmd.h): --json (SPEC.md
 * §13's document), --png (the fits as d2l draws them), --weights-png (the
 * weights as d2l's show_heatmaps draws them), --plot (parametric's loss
 * against the epoch), --html (the page, SPEC §10: --json's document and
 * what the page draws by).
 * Legend: n training points, m test inputs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "cli.h"
#include "json_writer.h"
#include "output.h"
#include "page_out.h"
#include "pool_cmd.h"
#include "render.h"

const char *const pool_method_names[] = {"average", "nonparametric", "parametric", "additive",
                                         NULL};

/* ---- --json ------------------------------------------------------------ */

void pool_json_numbers(json_writer *jw, const char *key, const double *v, size_t n)
{
    json_array_begin(jw, key, JSON_INLINE);
    for (size_t i = 0; i < n; i++) {
        if (isnan(v[i]))
            json_null(jw, NULL);
        else
            json_number(jw, NULL, v[i]);
    }
    json_end(jw);
}

void pool_json_number(json_writer *jw, const char *key, double v)
{
    if (isnan(v))
        json_null(jw, key);
    else
        json_number(jw, key, v);
}

/* key: {"W_k.weight": (h, 1), "W_q.weight": (h, 1), "w_v.weight": (1, h)},
 * nn.Linear's layout, in the order of d2l's AdditiveAttention's state_dict */
static void write_state_dict(json_writer *jw, const char *key, const pool_additive *p)
{
    json_object_begin(jw, key, JSON_BLOCK);
    json_array_begin(jw, "W_k.weight", JSON_INLINE);
    for (size_t u = 0; u < p->h; u++)
        pool_json_numbers(jw, NULL, p->W_k + u, 1);
    json_end(jw);
    json_array_begin(jw, "W_q.weight", JSON_INLINE);
    for (size_t u = 0; u < p->h; u++)
        pool_json_numbers(jw, NULL, p->W_q + u, 1);
    json_end(jw);
    json_array_begin(jw, "w_v.weight", JSON_INLINE);
    pool_json_numbers(jw, NULL, p->w_v, p->h);
    json_end(jw);
    json_end(jw);
}

void pool_json_method(json_writer *jw, const pool_result *r)
{
    json_string(jw, "method", pool_method_names[r->method]);
    if (r->method == POOL_AVERAGE || r->method == POOL_ADDITIVE)
        json_null(jw, "kernel");
    else
        json_string(jw, "kernel", pool_kernel_names[r->kernel]);
    pool_json_number(jw, "sigma", r->sigma);
}

static void write_result(json_writer *jw, const pool_result *r, const pool_data *d)
{
    json_object_begin(jw, NULL, JSON_BLOCK);
    pool_json_method(jw, r);
    pool_json_numbers(jw, "y_hat", r->yhat, d->m);
    json_array_begin(jw, "attention_weights", JSON_BLOCK);
    for (size_t j = 0; j < d->m; j++)
        pool_json_numbers(jw, NULL, r->att + j * d->n, d->n);
    json_end(jw);
    pool_json_number(jw, "mse", r->mse);
    pool_json_number(jw, "mean_max_weight", r->peak);
    /* a kernel that is 0 beyond σ: how many test inputs no training point
     * reaches (mse and mean_max_weight are over the others) */
    if (r->method == POOL_NONPARAMETRIC &&
        (r->kernel == POOL_BOXCAR || r->kernel == POOL_EPANECHIKOV))
        json_number(jw, "unreached", (double)r->unreached);
    if (r->method >= POOL_PARAMETRIC && r->keep_self)
        json_bool(jw, "keep_self", 1);
    if (r->method == POOL_ADDITIVE) {
        json_number(jw, "score_hiddens", (double)r->add.h);
        write_state_dict(jw, "state_dict_init", &r->add_init);
        write_state_dict(jw, "state_dict", &r->add);
        pool_json_numbers(jw, "losses", r->losses, r->epochs);
    }
    if (r->method == POOL_PARAMETRIC) {
        json_number(jw, "w_init", r->w_init);
        json_number(jw, "w", r->w);
        pool_json_number(jw, "sigma_w", r->w != 0.0 ? 1.0 / fabs(r->w) : NAN);
        pool_json_numbers(jw, "losses", r->losses, r->epochs);
    }
    json_end(jw);
}

/* "sigma_auto": {"grid": [σ…], "kernels": [{"kernel", "loo_mse": [one per
 * width, null where a training point is unreached], "unreached", "sigma"}]} */
static void write_auto(json_writer *jw, const pool_run *run)
{
    double grid[POOL_SIGMA_GRID_N], loo[POOL_SIGMA_GRID_N], un[POOL_SIGMA_GRID_N];
    for (size_t i = 0; i < POOL_SIGMA_GRID_N; i++)
        grid[i] = pool_sigma_grid(i);
    json_object_begin(jw, "sigma_auto", JSON_BLOCK);
    pool_json_numbers(jw, "grid", grid, POOL_SIGMA_GRID_N);
    json_array_begin(jw, "kernels", JSON_BLOCK);
    for (size_t k = 0; k < run->nautos; k++) {
        const pool_sigma_auto *au = &run->autos[k];
        for (size_t i = 0; i < POOL_SIGMA_GRID_N; i++) {
            loo[i] = au->unreached[i] ? NAN : au->loo[i];
            un[i] = (double)au->unreached[i];
        }
        json_object_begin(jw, NULL, JSON_BLOCK);
        json_string(jw, "kernel", pool_kernel_names[au->kernel]);
        pool_json_numbers(jw, "loo_mse", loo, POOL_SIGMA_GRID_N);
        pool_json_numbers(jw, "unreached", un, POOL_SIGMA_GRID_N);
        json_number(jw, "sigma", grid[au->best]);
        json_end(jw);
    }
    json_end(jw);
    json_end(jw);
}

static void write_members(json_writer *jw, const void *arg)
{
    const pool_run *run = arg;
    const pool_data *d = &run->d;
    json_string(jw, "command", "pool");
    pool_json_numbers(jw, "x_train", d->x_train, d->n);
    pool_json_numbers(jw, "y_train", d->y_train, d->n);
    pool_json_numbers(jw, "x_test", d->x_test, d->m);
    if (d->y_truth)
        pool_json_numbers(jw, "y_truth", d->y_truth, d->m);
    if (run->nautos)
        write_auto(jw, run);
    json_array_begin(jw, "results", JSON_BLOCK);
    for (size_t i = 0; i < run->nr; i++)
        write_result(jw, &run->r[i], d);
    json_end(jw);
}

static int write_json(FILE *f, const void *arg)
{
    return json_document(f, 0, write_members, arg);
}

int pool_out_json(const pool_run *run, FILE *rep)
{
    return output_json(run->a->json, write_json, run, rep, "the data and every result");
}

/* A panel's title: "average", "gaussian, σ = 1", "parametric, w = 13.3". */
void pool_result_title(const pool_result *r, char *buf, size_t len)
{
    if (r->method == POOL_NONPARAMETRIC)
        snprintf(buf, len, "%s, σ = %g", pool_kernel_names[r->kernel], r->sigma);
    else if (r->method == POOL_PARAMETRIC)
        snprintf(buf, len, "parametric%s, w = %.3g", r->keep_self ? " (keep-self)" : "", r->w);
    else if (r->method == POOL_ADDITIVE)
        snprintf(buf, len, "additive%s, h = %zu", r->keep_self ? " (keep-self)" : "", r->add.h);
    else
        snprintf(buf, len, "average");
}

/* ---- --html ------------------------------------------------------------ */

/* The data's "page": {"kind": "pool", "title", "command", "cmap", "names"
 * (each result's, as the figures' titles), "xlim" and "ylim" (d2l's, on
 * its data; else null), "xlabel" and "ylabel" of the heatmaps}. */
static int write_page_object(FILE *f, const void *arg)
{
    const pool_run *run = arg;
    json_writer jw;
    char name[96];
    json_writer_init(&jw, f);
    json_object_begin(&jw, NULL, JSON_BLOCK);
    page_head(&jw, "pool", "attn pool", run->a->argc, run->a->argv, cmap_find("Reds"));
    json_array_begin(&jw, "names", JSON_INLINE);
    for (size_t i = 0; i < run->nr; i++) {
        pool_result_title(&run->r[i], name, sizeof name);
        json_string(&jw, NULL, name);
    }
    json_end(&jw);
    if (run->generated) { /* d2l's xlim=[0, 5], ylim=[-1, 5] */
        pool_json_numbers(&jw, "xlim", (const double[]){0.0, 5.0}, 2);
        pool_json_numbers(&jw, "ylim", (const double[]){-1.0, 5.0}, 2);
    } else {
        json_null(&jw, "xlim");
        json_null(&jw, "ylim");
    }
    json_string(&jw, "xlabel", run->generated ? "Sorted training inputs"
                                              : "Training inputs (in the file's order)");
    json_string(&jw, "ylabel", run->generated ? "Sorted testing inputs"
                                              : "Testing inputs (in the file's order)");
    json_end(&jw);
    return json_writer_finish(&jw);
}

int pool_out_page(const pool_run *run, FILE *rep)
{
    return output_page_docs(run->a->html, "attn pool", write_json, run, write_page_object, run,
                            rep, "a page of the fits and each test input's weights");
}

/* ---- figures ---------------------------------------------------------- */

/* Panel i of a figure into img: 0, or -1 with the reason in err. */
typedef int (*panel_fn)(attn_image *img, const void *ctx, size_t i, text_font *font, char *err,
                        size_t errlen);

/* The n panels draw(ctx, 0 … n-1) joined one after the other by join
 * (image_stack: a column, image_beside: a row), written to path as PNG
 * (what: its line in the report). EXIT_OK or EXIT_RUNTIME. */
static int panels_png(const char *path, const char *what, size_t n, panel_fn draw,
                      const void *ctx,
                      int (*join)(attn_image *, const attn_image *, const attn_image *, char *,
                                  size_t),
                      text_font *font, FILE *rep)
{
    attn_image all = {0, 0, NULL}, one = {0, 0, NULL}, both;
    char err[512];
    int status = EXIT_OK;
    for (size_t i = 0; i < n && status == EXIT_OK; i++) {
        if (draw(&one, ctx, i, font, err, sizeof err) < 0) {
            status = EXIT_RUNTIME;
        } else if (i == 0) {
            all = one;
            one.rgb = NULL;
        } else if (join(&both, &all, &one, err, sizeof err) < 0) {
            status = EXIT_RUNTIME;
        } else {
            image_free(&all);
            all = both;
        }
        image_free(&one);
    }
    if (status != EXIT_OK)
        cli_error("%s: %s", path, err);
    else
        status = output_png(path, &all, rep, what);
    image_free(&all);
    return status;
}

/* One fit, of the run's result i: Truth and Pred over the test inputs,
 * the training points as circles (d2l's plot_kernel_reg), into img. */
static int draw_fit(attn_image *img, const void *ctx, size_t i, text_font *font, char *err,
                    size_t errlen)
{
    const pool_run *run = ctx;
    const pool_result *r = &run->r[i];
    const pool_data *d = &run->d;
    static const unsigned char truth_marks[] = {0, 0, 1}, pred_marks[] = {0, 1};
    plot_series s[3] = {
        {d->x_test, d->y_truth, d->m, "Truth"},
        {d->x_test, r->yhat, d->m, "Pred"},
        {d->x_train, d->y_train, d->n, NULL},
    };
    char title[96];
    plot_figure fig;
    memset(&fig, 0, sizeof fig);
    pool_result_title(r, title, sizeof title);
    fig.series = d->y_truth ? s : s + 1;
    fig.nseries = d->y_truth ? 3 : 2;
    fig.markers = d->y_truth ? truth_marks : pred_marks;
    fig.title = title;
    fig.xlabel = "x";
    fig.ylabel = "y";
    fig.font = font;
    if (run->generated) { /* d2l's xlim=[0, 5], ylim=[-1, 5] */
        fig.lim_set = 1;
        fig.xlim[1] = 5.0;
        fig.ylim[0] = -1.0;
        fig.ylim[1] = 5.0;
    }
    return plot_draw(img, &fig, err, errlen);
}

/* --png: the fits, one under the other. */
static int fits_png(const void *arg, text_font *font, FILE *rep)
{
    const pool_run *run = arg;
    return panels_png(run->a->png, N_("the fits: Truth, Pred, the training points"), run->nr,
                      draw_fit, run, image_stack, font, rep);
}

/* --plot: the loss against the epoch of each trained result (parametric,
 * additive), one line each. */
static int loss_png(const void *arg, text_font *font, FILE *rep)
{
    const pool_run *run = arg;
    plot_series s[8];
    char labels[8][96];
    size_t ns = 0, E = 0;
    for (size_t i = 0; i < run->nr; i++)
        if (run->r[i].losses && ns < 8) {
            E = run->r[i].epochs;
            pool_result_title(&run->r[i], labels[ns], sizeof labels[ns]);
            s[ns] = (plot_series){NULL, run->r[i].losses, E, labels[ns]};
            ns++;
        }
    double *x = calloc(E ? E : 1, sizeof *x);
    attn_image img = {0, 0, NULL};
    char err[512] = "out of memory";
    int status = EXIT_RUNTIME;
    if (x) {
        for (size_t e = 0; e < E; e++)
            x[e] = (double)(e + 1);
        for (size_t k = 0; k < ns; k++)
            s[k].x = x;
        if (ns == 1) /* the section's one line */
            s[0].label = _("loss (summed over the training points)");
        plot_figure fig;
        memset(&fig, 0, sizeof fig);
        fig.series = s;
        fig.nseries = ns;
        fig.title = ns == 1 && run->r[run->nr - 1].method == POOL_PARAMETRIC
                        ? _("parametric attention pooling: training")
                        : _("attention pooling: training (loss summed over the training points)");
        fig.xlabel = "epoch";
        fig.ylabel = "loss";
        fig.font = font;
        if (plot_draw(&img, &fig, err, sizeof err) == 0)
            status = output_png(run->a->plot, &img, rep, "the loss against the epoch");
    }
    if (status != EXIT_OK && !img.rgb)
        cli_error("%s: %s", run->a->plot, err);
    image_free(&img);
    free(x);
    return status;
}

/* --weights-png: every result's (m, n) weights, d2l's show_heatmaps with
 * 'Sorted training inputs' and 'Sorted testing inputs', on one scale. */
static int weights_png(const pool_run *run, text_font *font, FILE *rep)
{
    const pool_data *d = &run->d;
    size_t mn, all;
    int status = EXIT_RUNTIME;
    if (size_mul(d->m, d->n, &mn) || size_mul(mn, run->nr, &all)) {
        cli_error("%s: out of memory", run->a->weights_png);
        return EXIT_RUNTIME;
    }
    float *w = float_alloc(all);                          /* (nr, m, n) */
    heat_panel *p = calloc(run->nr, sizeof *p);
    char (*titles)[64] = calloc(run->nr, sizeof *titles);
    if (w && p && titles) {
        for (size_t k = 0; k < run->nr; k++) {
            for (size_t i = 0; i < mn; i++)
                w[k * mn + i] = (float)run->r[k].att[i];
            pool_result_title(&run->r[k], titles[k], sizeof titles[k]);
            p[k] = (heat_panel){.data = w + k * mn, .rows = d->m, .cols = d->n,
                                .title = titles[k]};
        }
        size_t cols = run->nr < 3 ? run->nr : 3;
        heat_figure fig = {.panels = p, .grid_rows = ceil_div(run->nr, cols),
                           .grid_cols = cols, .xlabel = "Sorted training inputs",
                           .ylabel = "Sorted testing inputs", .cmap = cmap_find("Reds"),
                           .vmin = NAN, .vmax = NAN, .font = font};
        if (fig.grid_rows * cols != run->nr) { /* rows of 3 that do not fill: one row */
            fig.grid_rows = 1;
            fig.grid_cols = run->nr;
        }
        status = output_heatmap(run->a->weights_png, &fig, rep,
                                    "the attention weights, one panel per result");
    } else {
        cli_error("%s: out of memory", run->a->weights_png);
    }
    FREE_EACH(w, p, titles);
    return status;
}

/* --sigma-png: --sigma auto's leave-one-out error against σ (log axis),
 * a line per kernel (gaps where a training point is unreached), the
 * chosen widths as circles. */
static int sigma_png(const pool_run *run, text_font *font, FILE *rep)
{
    double grid[POOL_SIGMA_GRID_N], loo[POOL_NKERNELS][POOL_SIGMA_GRID_N];
    double bx[POOL_NKERNELS], by[POOL_NKERNELS];
    plot_series s[POOL_NKERNELS + 1];
    unsigned char marks[POOL_NKERNELS + 1] = {0};
    attn_image img = {0, 0, NULL};
    char err[512];
    size_t K = run->nautos;
    for (size_t i = 0; i < POOL_SIGMA_GRID_N; i++)
        grid[i] = pool_sigma_grid(i);
    for (size_t k = 0; k < K; k++) {
        const pool_sigma_auto *au = &run->autos[k];
        for (size_t i = 0; i < POOL_SIGMA_GRID_N; i++)
            loo[k][i] = au->unreached[i] ? NAN : au->loo[i];
        bx[k] = grid[au->best];
        by[k] = au->loo[au->best];
        s[k] = (plot_series){grid, loo[k], POOL_SIGMA_GRID_N, pool_kernel_names[au->kernel]};
    }
    s[K] = (plot_series){bx, by, K, NULL};
    marks[K] = 1;
    plot_figure fig;
    memset(&fig, 0, sizeof fig);
    fig.series = s;
    fig.nseries = K + 1;
    fig.markers = marks;
    fig.title = _("leave-one-out error on the training points (circles: the widths chosen)");
    fig.xlabel = "σ";
    fig.ylabel = _("leave-one-out MSE");
    fig.logx = 1;
    fig.font = font;
    int status = EXIT_RUNTIME;
    if (plot_draw(&img, &fig, err, sizeof err) == 0)
        status = output_png(run->a->sigma_png, &img, rep,
                            "the leave-one-out error against σ");
    else
        cli_error("%s: %s", run->a->sigma_png, err);
    image_free(&img);
    return status;
}

/* The figures asked for, with one --font face. */
static int png_figures(const void *arg, text_font *font, FILE *rep)
{
    const pool_run *run = arg;
    int status = run->a->png ? fits_png(run, font, rep) : EXIT_OK;
    if (status == EXIT_OK && run->a->weights_png)
        status = weights_png(run, font, rep);
    if (status == EXIT_OK && run->a->sigma_png)
        status = sigma_png(run, font, rep);
    return status;
}

int pool_out_figures(const pool_run *run, FILE *rep)
{
    const struct pool_args *a = run->a;
    int status = EXIT_OK, pngs = a->png || a->weights_png || a->sigma_png;
    if (pngs || a->plot)
        status = output_figures(a->font, pngs ? "" : NULL, png_figures, a->plot, loss_png, run,
                                rep);
    return status;
}

/* ---- --kernels-png ------------------------------------------------------ */

#define KERNEL_POINTS 501 /* x = −2.5, −2.49, …, 2.5 */

/* The panel of kernel k: k(x) on [−2.5, 2.5], titled with its name, y on
 * [−0.05, 1.05] as every panel. */
static int kernel_panel(attn_image *img, const void *ctx, size_t k, text_font *font, char *err,
                        size_t errlen)
{
    (void)ctx;
    double x[KERNEL_POINTS], y[KERNEL_POINTS];
    for (size_t i = 0; i < KERNEL_POINTS; i++) {
        x[i] = -2.5 + 0.01 * (double)i;
        /* the Gaussian unnormalised, exp(−x²/2) */
        y[i] = pool_kernel_value((enum pool_kernel)k, x[i]);
    }
    plot_series s = {x, y, KERNEL_POINTS, NULL};
    plot_figure fig;
    memset(&fig, 0, sizeof fig);
    fig.series = &s;
    fig.nseries = 1;
    fig.title = pool_kernel_names[k];
    fig.xlabel = "x";
    fig.width = 330;
    fig.height = 300;
    fig.font = font;
    fig.lim_set = 1;
    fig.xlim[0] = -2.5;
    fig.xlim[1] = 2.5;
    fig.ylim[0] = -0.05;
    fig.ylim[1] = 1.05;
    return plot_draw(img, &fig, err, errlen);
}

/* The four kernels in a row, as d2l.ai 11.2's figure. */
static int kernels_png(const void *arg, text_font *font, FILE *rep)
{
    const struct pool_args *a = arg;
    return panels_png(a->kernels_png,
                      N_("the four kernels on [-2.5, 2.5], as d2l.ai 11.2 draws them"),
                      POOL_NKERNELS, kernel_panel, NULL, image_beside, font, rep);
}

int pool_out_kernels(const struct pool_args *a, FILE *rep)
{
    return output_figures(a->font, "", kernels_png, NULL, NULL, a, rep);
}
