/* output.h — the output files every command writes, the same way: JSON
 * through a writer callback and PNG figures, each atomically, each
 * followed by a line "wrote PATH: what" on rep (stdout, or stderr when
 * stdout carries the JSON). Errors are printed as "attn CMD: …". */
#ifndef ATTN_OUTPUT_H
#define ATTN_OUTPUT_H

#include <stdio.h>

#include "render.h"
#include "term.h"

/* write(f, ctx) writes the document with a json_writer (json_writer.h)
 * and returns json_writer_finish's result; nonzero (a malformed document,
 * a bug) leaves no file and fails with "attn CMD: PATH: internal error:
 * malformed JSON". Returns EXIT_OK or EXIT_RUNTIME. */
int output_json(const char *path, int (*write)(FILE *f, const void *ctx), const void *ctx,
                FILE *rep, const char *what);

/* Returns EXIT_OK or EXIT_RUNTIME. */
int output_png(const char *path, const attn_image *img, FILE *rep, const char *what);

/* The values of --cmap and --color, the same for every command: 0, or -1
 * after printing the error (the caller exits with EXIT_USAGE). */
int output_parse_cmap(const char *s, const attn_cmap **cmap);
int output_parse_color(const char *s, term_color_mode *mode);

/* --font FILE, the same for every command that draws figures: *font is
 * DejaVu Sans with the file's face after it (text.h), for the command's
 * figures to share (heat_figure.font, plot_figure.font), or NULL when
 * path is NULL (each figure then opens its own). Returns EXIT_OK, or
 * EXIT_RUNTIME after "attn CMD: --font: PATH: cannot read: REASON" or
 * "attn CMD: --font: PATH: not a TrueType font". */
int output_font_open(const char *path, text_font **font);
/* Close what output_font_open opened (NULL is fine). */
void output_font_close(text_font *font);

/* A run's figures, --png and --plot, drawn with one --font face (opened
 * only when a figure is asked for, from font_path): png(ctx, font, rep)
 * when png_path is set, then plot(ctx, font, rep) when plot_path is (plot
 * may be NULL when plot_path is). EXIT_OK, or the first failure's status. */
typedef int (*output_figure_fn)(const void *ctx, text_font *font, FILE *rep);
int output_figures(const char *font_path, const char *png_path, output_figure_fn png,
                   const char *plot_path, output_figure_fn plot, const void *ctx, FILE *rep);

/* After heatmap_draw: when it numbered an axis because no font has every
 * character of a tick label (lay->missing), one line on stderr, printed at
 * most once per run whatever the number of figures:
 *   attn CMD: note: no font found has the glyphs of 'LABEL', so the
 *   positions are numbered (install fonts-wqy-microhei or pass --font FILE)
 * (one line). The exit status is not affected. */
void output_font_note(const heat_layout *lay);

/* heatmap_draw, then output_font_note: 0, or -1 with heatmap_draw's
 * message in err. */
int output_heatmap_draw(attn_image *img, const heat_figure *fig, char *err, size_t errlen);

/* A heatmap figure to the PNG file path (output_heatmap_draw, then
 * output_png): EXIT_OK, or EXIT_RUNTIME after "attn CMD: PATH: REASON". */
int output_heatmap(const char *path, const heat_figure *fig, FILE *rep, const char *what);

/* One attention matrix m (rows, cols) for a person on f, as attn train,
 * attn translate and their probes show one: a heatmap (term_heatmap,
 * colour scale 0 … 1, labelled) when color is set, followed by the numbers
 * when numbers_too is set and the matrix is at most 12 × 12; without
 * colour the numbers (term_matrix, 2 decimals), after a line naming the
 * columns ("keys: a b c") when col_name is given and one naming the rows
 * when row_name is. */
typedef struct output_weights_opts {
    const char *const *row_labels; /* (rows,) or NULL */
    const char *const *col_labels; /* (cols,) or NULL */
    const char *col_name;          /* "keys": the line above the numbers; NULL: none */
    const char *row_name;          /* "target": the next line; NULL: none */
    int color;                     /* term_use_color's answer */
    int numbers_too;               /* with colour, the numbers too when small */
    const attn_cmap *cmap;         /* NULL: term_heatmap's default */
} output_weights_opts;
void output_weights(FILE *f, const float *m, size_t rows, size_t cols,
                    const output_weights_opts *o);

/* Where reports go: stderr when --json writes to stdout, else stdout. */
FILE *output_report_stream(const char *json_path);

/* Whether every output file of a run can be created, checked before any
 * work (a long run never ends in "cannot create", and nothing is left
 * behind): paths[i] (NULL: not asked for; "-": standard output) for the
 * option names[i]. EXIT_OK, or EXIT_RUNTIME after "NAME PATH: …". */
int output_check_files(const char *const *paths, const char *const *names, size_t n);

#endif
