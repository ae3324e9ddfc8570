/* output.c — output files written atomically, with a report (output.h). */
#include "output.h"

#include <string.h>

#include "cli.h"
#include "text.h"
#include "atomic_file.h"

FILE *output_report_stream(const char *json_path)
{
    return json_path && strcmp(json_path, "-") == 0 ? stderr : stdout;
}

int output_json(const char *path, int (*write)(FILE *f, const void *ctx), const void *ctx,
                FILE *rep, const char *what)
{
    atomic_file af;
    char err[512];
    if (atomic_open(&af, path, err, sizeof err) != 0) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    if (write(af.f, ctx) != 0) {
        atomic_abort(&af);
        cli_error("%s: internal error: malformed JSON", path);
        return EXIT_RUNTIME;
    }
    if (atomic_commit(&af, err, sizeof err) != 0) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    if (strcmp(path, "-") != 0)
        fprintf(rep, _("wrote %s: %s\n"), path, _(what));
    return EXIT_OK;
}

int output_png(const char *path, const attn_image *img, FILE *rep, const char *what)
{
    char err[512];
    if (png_write_atomic(path, img, err, sizeof err) != 0) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    fprintf(rep, _("wrote %s: %s, %d×%d px\n"), path, _(what), img->w, img->h);
    return EXIT_OK;
}

int output_parse_cmap(const char *s, const attn_cmap **cmap)
{
    const attn_cmap *c = cmap_find(s);
    if (!c) {
        cli_error("--cmap: unknown colormap '%s' (known: %s)", s, cmap_names());
        return -1;
    }
    *cmap = c;
    return 0;
}

int output_parse_color(const char *s, term_color_mode *mode)
{
    if (term_parse_color(s, mode)) {
        cli_error("--color: expected auto, always or never, got '%s'", s);
        return -1;
    }
    return 0;
}

int output_font_open(const char *path, text_font **font)
{
    char err[4352];
    *font = NULL;
    if (path == NULL)
        return EXIT_OK;
    if (text_font_open(font, err, sizeof err) != 0) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    if (text_font_add_file(*font, path, err, sizeof err) != 0) {
        cli_error("--font: %s", err);
        text_font_close(*font);
        *font = NULL;
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

void output_font_close(text_font *font)
{
    text_font_close(font);
}

void output_font_note(const heat_layout *lay)
{
    static int noted; /* once per run */
    if (noted || lay->missing[0] == '\0')
        return;
    noted = 1;
    cli_error("note: no font found has the glyphs of '%s', so the positions are numbered "
              "(install fonts-wqy-microhei or pass --font FILE)", lay->missing);
}

int output_heatmap_draw(attn_image *img, const heat_figure *fig, char *err, size_t errlen)
{
    heat_layout lay;
    if (heatmap_draw(img, &lay, fig, err, errlen) != 0)
        return -1;
    output_font_note(&lay);
    return 0;
}

int output_heatmap(const char *path, const heat_figure *fig, FILE *rep, const char *what)
{
    attn_image img = {0, 0, NULL};
    char err[512];
    int status = EXIT_RUNTIME;
    if (output_heatmap_draw(&img, fig, err, sizeof err) != 0)
        cli_error("%s: %s", path, err);
    else
        status = output_png(path, &img, rep, what);
    image_free(&img);
    return status;
}

void output_weights(FILE *f, const float *m, size_t rows, size_t cols,
                    const output_weights_opts *o)
{
    if (o->color) {
        term_heatmap_opts h;
        memset(&h, 0, sizeof h);
        h.cmap = o->cmap;
        h.vmin = 0.0;
        h.vmax = 1.0;
        h.row_labels = o->row_labels;
        h.col_labels = o->col_labels;
        term_heatmap(f, m, rows, cols, &h);
        if (!o->numbers_too || rows > 12 || cols > 12)
            return;
    }
    if (o->col_name && o->col_labels) {
        fprintf(f, "%s:", o->col_name);
        for (size_t k = 0; k < cols; k++)
            fprintf(f, " %s", o->col_labels[k]);
        fprintf(f, "\n");
    }
    if (o->row_name && o->row_labels) {
        fprintf(f, "%s:", o->row_name);
        for (size_t k = 0; k < rows; k++)
            fprintf(f, " %s", o->row_labels[k]);
        fprintf(f, "\n");
    }
    term_matrix(f, m, rows, cols, 2, 6);
}

int output_check_files(const char *const *paths, const char *const *names, size_t n)
{
    char err[512];
    for (size_t i = 0; i < n; i++) {
        atomic_file af;
        if (!paths[i] || strcmp(paths[i], "-") == 0)
            continue;
        if (atomic_open(&af, paths[i], err, sizeof err)) {
            cli_error("%s %s", names[i], err);
            return EXIT_RUNTIME;
        }
        atomic_abort(&af);
    }
    return EXIT_OK;
}

int output_figures(const char *font_path, const char *png_path, output_figure_fn png,
                   const char *plot_path, output_figure_fn plot, const void *ctx, FILE *rep)
{
    text_font *font = NULL;
    int status = EXIT_OK;
    if ((png_path || plot_path) && (status = output_font_open(font_path, &font)) != EXIT_OK)
        return status;
    if (png_path)
        status = png(ctx, font, rep);
    if (status == EXIT_OK && plot_path)
        status = plot(ctx, font, rep);
    output_font_close(font);
    return status;
}
