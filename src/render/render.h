/* render.h — figures for attn: heatmap grids and line plots drawn into an
 * RGB buffer, text in DejaVu Sans (embedded at build time), matplotlib's
 * colormaps, and PNG files written atomically.
 *
 * Image memory layout: rgb[(y * w + x) * 3 + c], row 0 at the top, x to the
 * right, c = 0 red, 1 green, 2 blue, 8 bits each. image_alloc allocates,
 * image_free releases; an attn_image owns its buffer.
 *
 * Return convention: functions returning int give 0 on success and -1 on
 * failure, after writing a one-line reason (no trailing newline, no
 * program name) into err[errlen] when err is not NULL.
 */
#ifndef ATTN_RENDER_H
#define ATTN_RENDER_H

#include <stddef.h>

typedef struct attn_rgb {
    unsigned char r, g, b;
} attn_rgb;

typedef struct attn_image {
    int w, h;
    unsigned char *rgb; /* (h, w, 3) */
} attn_image;

/* A white w×h image. Fails (ENOMEM-like message) when the size overflows or
 * allocation fails. */
int image_alloc(attn_image *img, int w, int h, char *err, size_t errlen);
void image_free(attn_image *img);
/* top over bottom in a new image out (white where the narrower one ends):
 * 0, or -1 with the reason in err. */
int image_stack(attn_image *out, const attn_image *top, const attn_image *bottom, char *err,
                size_t errlen);
/* left beside right in a new image out (white where the shorter one ends):
 * 0, or -1 with the reason in err. */
int image_beside(attn_image *out, const attn_image *left, const attn_image *right, char *err,
                 size_t errlen);

/* ---- fonts ----------------------------------------------------------- */

/* The fonts text is drawn in (text.h): DejaVu Sans, faces from files, and
 * a CJK face found on the system when a character needs one. A figure
 * opens its own unless given one (heat_figure.font, plot_figure.font): a
 * command opens it once, with the face of its --font FILE added, and
 * shares it between its figures. */
typedef struct text_font text_font;

/* ---- colormaps ------------------------------------------------------- */

typedef struct attn_cmap attn_cmap;

/* "Reds", "Blues", "viridis", "gray" (matplotlib's 256-entry tables).
 * NULL when the name is unknown. */
const attn_cmap *cmap_find(const char *name);
/* "Reds, Blues, viridis, gray": for help texts and error messages. */
const char *cmap_names(void);
const char *cmap_name(const attn_cmap *cmap);
/* The colour of t in [0, 1] (clamped; NaN gives entry 0), looked up the way
 * matplotlib does for N = 256: index = floor(t * 256), 256 → 255. */
attn_rgb cmap_color(const attn_cmap *cmap, double t);

/* ---- heatmap grids (d2l's show_heatmaps, done better) ---------------- */

typedef struct heat_panel {
    const float *data;  /* (rows, cols), row-major; row 0 drawn at the top */
    size_t rows, cols;
    const char *title;  /* e.g. "Head 1"; NULL for none */
    /* Instead of data (which is then NULL): rows made on demand, for a
     * matrix too large to be worth storing. row(row_ctx, i, out) writes
     * row i, cols floats, into out; the heatmap asks for rows 0 … rows−1
     * in order, twice (for the colour scale, then for the cells). */
    void (*row)(void *row_ctx, size_t i, float *out);
    void *row_ctx;
} heat_panel;

typedef struct heat_figure {
    const heat_panel *panels;  /* (grid_rows, grid_cols), row-major */
    size_t grid_rows, grid_cols;
    const char *xlabel;        /* under each panel of the bottom row */
    const char *ylabel;        /* left of each panel of the left column */
    /* Optional tick labels, one per column / row of every panel (all panels
     * of a figure share their shape when labels are given). NULL: numbers.
     * These are the figure's only user text (tokens); when one of them has
     * a character that no face of the font has, even after the CJK search,
     * that axis is numbered instead (as if NULL) and heat_layout says so.
     * Titles and axis labels are drawn as given. */
    const char *const *xticklabels;
    const char *const *yticklabels;
    /* Or one set per row of panels (grid_rows pointers, each (n,) as above
     * or NULL for numbers): a batch of sentences, an example per row. Each
     * row of panels then has its own x tick labels under it. These take
     * the place of xticklabels / yticklabels when given. */
    const char *const *const *row_xticklabels;
    const char *const *const *row_yticklabels;
    const attn_cmap *cmap;
    double vmin, vmax;         /* colour scale; NaN: min / max over all panels */
    const char *colorbar_label; /* NULL for none */
    /* The font of every text: NULL for DejaVu Sans with the CJK search,
     * opened and closed by heatmap_draw; else the caller's, left open
     * (one that has failed for lack of memory fails the figure too). */
    text_font *font;
    /* Optional: a title for each row of panels (grid_rows strings, NULL or
     * "" for none), drawn above the row's panel titles, starting at its
     * first panel's left edge; e.g. "step 100 · loss 0.05" over heads. */
    const char *const *row_titles;
} heat_figure;

/* Where things landed, for tests and for callers that annotate. */
typedef struct heat_layout {
    int cell;        /* pixels per (pooled) cell side; cells are square */
    size_t pool;     /* pool × pool matrix entries averaged into one cell */
    double vmin, vmax;         /* the colour scale used */
    int panel_x0, panel_y0;    /* top-left pixel of panel 0's first cell */
    int panel_dx, panel_dy;    /* offset from one panel to the next column / row */
    /* Tick labels no font could draw: the axes numbered instead of
     * labelled, and the first such label as it would have been drawn
     * (cut to its shown length, control characters and malformed UTF-8
     * as U+FFFD: safe to print); "" when every label was drawn. */
    int x_numbered, y_numbered;
    char missing[112];
} heat_layout;

/* Draw the figure into a newly allocated image. All panels share one colour
 * scale and one colorbar. A panel never exceeds about 1000 px a side: when a
 * matrix has more entries than that, pool × pool blocks are averaged into
 * one cell. Small matrices are scaled up so the figure is at least about
 * 400 px wide. layout may be NULL. */
int heatmap_draw(attn_image *img, heat_layout *layout, const heat_figure *fig,
                 char *err, size_t errlen);

/* ---- line plots (d2l.plot) ------------------------------------------- */

typedef struct plot_series {
    const double *x, *y;  /* (n,) each */
    size_t n;
    const char *label;    /* legend text; NULL for none */
} plot_series;

typedef struct plot_figure {
    const plot_series *series;
    size_t nseries;
    const char *title;    /* NULL for none */
    const char *xlabel, *ylabel;
    int logx, logy;       /* logarithmic axes (values must be > 0) */
    int width, height;    /* pixels; 0 picks d2l's figsize (6, 2.5) look */
    text_font *font;      /* as heat_figure.font: NULL opens DejaVu Sans */
    /* Optional (zero: from the data): d2l.plot's xlim and ylim, the view
     * limits of linear axes when lim_set is 1. */
    int lim_set;
    double xlim[2], ylim[2];
    /* Optional, (nseries,): a series whose entry is 1 is drawn as circles
     * at its points (matplotlib's 'o' at alpha 0.5), without a line, in
     * matplotlib's second colour. NULL: every series a line. */
    const unsigned char *markers;
} plot_figure;

/* Axes with ticks and grid, one line per series in distinct colours and
 * dash styles (d2l's order: solid blue, dashed magenta, dash-dot green,
 * dotted red, then more), and a legend when any series has a label. */
int plot_draw(attn_image *img, const plot_figure *fig, char *err, size_t errlen);

/* ---- PNG ------------------------------------------------------------- */

/* Write img as PNG to path atomically: a temporary file in the same folder,
 * then rename. On failure no file is left behind and an existing file at
 * path is untouched; err names the path and the reason. */
int png_write_atomic(const char *path, const attn_image *img, char *err, size_t errlen);

#endif
