/* heatmap.c — grids of heatmaps sharing one colour scale (d2l's
 * show_heatmaps): square cells, ticks at nice steps, titles, axis labels,
 * one colorbar on the right.
 *
 * Figure layout (pixels), for grid_rows × grid_cols panels:
 *
 *   margin
 *   [title]          [title]                        |
 *   ylabel ticks [panel]     [panel]    gap  colorbar ticks label
 *   ...                                             |
 *                xticks      xticks
 *                xlabel      xlabel
 *   margin
 *
 * Every panel sits in a slot as wide as the widest of panel, title and x
 * label, so long texts never collide; panels are placed alike in their
 * slots, so panel p's first cell is at (panel_x0 + (p % grid_cols) *
 * panel_dx, panel_y0 + (p / grid_cols) * panel_dy).
 *
 * Cell colours: a cell shows the mean v of its pool × pool block of
 * entries (sum in double: the block's column sums, added left to right,
 * divided by the number of entries; the last block of a row or column may
 * be smaller) and
 * is painted cmap_color(cmap, (v - vmin) / (vmax - vmin)), or t = 0.5 when
 * vmax == vmin. Without pooling v is the entry itself. Without a cmap the
 * figure uses Reds (d2l's default). The colour scale, when not given, is
 * the min / max of the finite entries of all panels (NaN entries are
 * painted like t = NaN, i.e. the colormap's entry 0).
 *
 * Tick labels are checked before anything is measured: an axis with a
 * label that the font cannot draw (text_font_has_all, after the font
 * lookup) loses its labels and is laid out and drawn with numbers, the
 * same figure as without labels; heat_layout reports it.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canvas.h"
#include "checked.h"
#include "text.h"

#define HEAT_MAX_SIDE 1000      /* most cells on a panel side (pooled) and
                                 * most pixels on a panel side */
#define HEAT_MAX_GRID 1000      /* most panels along a grid side */
#define HEAT_MIN_WIDTH 400      /* small figures are scaled up to this */
#define HEAT_PREF_SIDE 240      /* preferred longest panel side, pixels */
#define HEAT_PREF_GRID 800      /* preferred width of all panels together */
#define HEAT_LEVEL_GRID 1200    /* widest panels together for level x tokens */
#define HEAT_MAX_TICKS 8        /* most numbered ticks along a panel side */
#define HEAT_MAX_TOKEN_TICKS 64 /* most token ticks: every word, where they fit */
#define HEAT_MAX_LABEL 24       /* token labels are cut to this many chars */

#define FS_TICK 13.0            /* em sizes in pixels */
#define FS_LABEL 14.0
#define FS_TITLE 14.0

#define MARGIN 12               /* around the figure */
#define TICK_LEN 5              /* tick marks, outside the frame */
#define TICK_PAD 3              /* from a tick mark to its label */
#define LABEL_PAD 6             /* from tick labels to the axis label */
#define TITLE_PAD 6             /* from a title to its panel */
#define GAP_X 24                /* least space between panels */
#define GAP_Y 14
#define CBAR_GAP 24             /* from the panels to the colorbar */
#define CBAR_W 18               /* colorbar width */
#define CBAR_MIN_H 120          /* least colorbar height */

static const attn_rgb INK = {0, 0, 0};

/* One axis of the panels: x (columns) or y (rows). */
typedef struct heat_axis {
    size_t n;                   /* entries along it in the largest panel */
    const char *const *labels;  /* (n,) tokens of every panel, or NULL */
    const char *const *const *row_labels; /* (grid_rows,) of (n,): tokens per
                                 * row of panels, or NULL (then labels) */
    double tok_w;               /* widest (cut) token, pixels */
    /* Chosen by layout(): */
    size_t step;                /* index step between ticks */
    int rotated;                /* x tokens drawn reading upwards */
    double band;                /* extent of the tick labels away from the
                                 * panel (width for y, height for x) */
} heat_axis;

/* Everything the drawing needs, worked out before allocating the image. */
typedef struct heat_ctx {
    const heat_figure *fig;
    text_font *font;
    int own_font;               /* opened here (fig->font was NULL) */
    int x_numbered, y_numbered; /* labels given, numbers drawn */
    char missing[sizeof ((heat_layout *)0)->missing]; /* the first label not drawable */
    size_t npanels;
    size_t pool;                /* entries per cell side */
    size_t prows, pcols;        /* pooled size of the largest panel */
    double vmin, vmax;
    float *rowbuf;              /* (widest panel's cols,) for made-on-demand rows */
    double *colsum;             /* (widest panel's cols,) column sums while pooling */
    heat_axis x, y;
    int any_title;
    double title_w;             /* widest title */
    int any_row_title;          /* fig->row_titles has text */
    double row_title_w;         /* widest row title */
    double xlabel_w, ylabel_w;  /* lengths of the axis labels */
    double cbar_title_w;        /* length of the colorbar label */
    /* Chosen by layout(): */
    int cell;
    int ylabel_per_row;         /* y label beside every row, else once */
    long slot_w, gap_x;         /* panel slot width, space between slots */
    long panel_x0, panel_y0, dx, dy;
    long pw, ph;                /* largest panel, pixels */
    long cbar_x, cbar_y0, cbar_y1;
    canvas_ticks cticks;        /* colorbar ticks */
    double cbar_label_w;        /* widest colorbar tick label */
    long width, height;
} heat_ctx;

/* ---- measuring ------------------------------------------------------- */

/* label cut to HEAT_MAX_LABEL characters (an ellipsis marks the cut), into
 * buf[len] with len >= 4 * HEAT_MAX_LABEL + 4. */
static void cut_label(const char *label, char *buf, size_t len)
{
    const char *s = label ? label : "";
    size_t used = 0;
    for (int count = 0; *s; count++) {
        const char *start = s;
        text_utf8_next(&s);
        size_t n = (size_t)(s - start);
        if (count == HEAT_MAX_LABEL - 1 && *s) {
            memcpy(buf + used, "\xE2\x80\xA6", 3);  /* U+2026 … */
            used += 3;
            break;
        }
        if (used + n + 1 > len)
            break;
        memcpy(buf + used, start, n);
        used += n;
    }
    buf[used] = '\0';
}

/* The tokens of an axis for the panels of grid row gr, or NULL. */
static const char *const *axis_labels(const heat_axis *a, size_t gr)
{
    return a->row_labels ? a->row_labels[gr] : a->labels;
}

/* The text of the tick label at index i of an axis, in grid row gr. */
static void tick_text(const heat_axis *a, size_t gr, size_t i, char *buf, size_t len)
{
    const char *const *labels = axis_labels(a, gr);
    if (labels)
        cut_label(labels[i], buf, len);
    else
        snprintf(buf, len, "%zu", i);
}

/* The smallest nice index step (1, 2, 5 × 10^k) putting ticks at least
 * min_gap pixels apart and at most max_ticks on an axis of n entries
 * drawn px_per pixels each. */
static size_t index_step(size_t n, double px_per, double min_gap, size_t max_ticks)
{
    static const size_t mant[] = {1, 2, 5};
    for (size_t p10 = 1;; p10 *= 10) {
        for (size_t i = 0; i < 3; i++) {
            size_t s = mant[i] * p10;
            if (s >= n)
                return s;       /* only the tick at 0 */
            if ((double)s * px_per >= min_gap && (n - 1) / s + 1 <= max_ticks)
                return s;
        }
    }
}

/* Tick steps and label bands of both axes for a cell size. */
static void layout_axes(heat_ctx *c)
{
    double px_per = (double)c->cell / (double)c->pool;
    double tick_h = text_line_height(c->font, FS_TICK);
    char buf[128];

    /* y: labels horizontal, right-aligned, a line apart at least. */
    heat_axis *y = &c->y;
    if (y->labels || y->row_labels) {
        y->step = index_step(y->n, px_per, tick_h, HEAT_MAX_TOKEN_TICKS);
        y->band = y->tok_w;
    } else {
        y->step = index_step(y->n, px_per, tick_h + 6, HEAT_MAX_TICKS);
        snprintf(buf, sizeof buf, "%zu", (y->n - 1) / y->step * y->step);
        y->band = text_width(c->font, FS_TICK, buf);
    }

    /* x: numbers horizontal; tokens horizontal when they fit side by
     * side, else rotated to read upwards, a line apart. */
    heat_axis *x = &c->x;
    x->rotated = 0;
    if (x->labels || x->row_labels) {
        size_t flat = index_step(x->n, px_per, x->tok_w + 8, HEAT_MAX_TOKEN_TICKS);
        size_t up = index_step(x->n, px_per, tick_h + 2, HEAT_MAX_TOKEN_TICKS);
        if (flat <= up) {
            x->step = flat;
            x->band = tick_h;
        } else {
            x->step = up;
            x->rotated = 1;
            x->band = x->tok_w;
        }
    } else {
        snprintf(buf, sizeof buf, "%zu", x->n - 1);
        double w = text_width(c->font, FS_TICK, buf);
        x->step = index_step(x->n, px_per, fmax(w + 14, 48), HEAT_MAX_TICKS);
        x->band = tick_h;
    }
}

/* Pixel offset of the centre of entry i along an axis, from the panel's
 * first cell. */
static double index_pos(const heat_ctx *c, size_t i)
{
    return ((double)i + 0.5) * c->cell / (double)c->pool;
}

/* How far horizontal x tick labels reach left of the panel (*left) and
 * right of it (*right), in pixels (0 when they stay inside). */
static void x_overhang(const heat_ctx *c, double *left, double *right)
{
    char buf[128];
    *left = *right = 0.0;
    if (c->x.rotated)
        return;
    size_t sets = c->x.row_labels ? c->fig->grid_rows : 1;
    for (size_t gr = 0; gr < sets; gr++)
        for (size_t i = 0; i < c->x.n; i += c->x.step) {
            tick_text(&c->x, gr, i, buf, sizeof buf);
            double half = text_width(c->font, FS_TICK, buf) / 2.0;
            double pos = index_pos(c, i);
            *left = fmax(*left, half - pos);
            *right = fmax(*right, pos + half - (double)c->pw);
        }
}

/* Place everything for cell size c->cell; sets the figure size. */
/* The colorbar's ticks, about 60 pixels apart on its cbar_h pixels (at
 * least two when the scale has a range), and the width of their labels. */
static void colorbar_ticks(heat_ctx *c, long cbar_h)
{
    int max_ticks = (int)(cbar_h / 60) + 1;
    max_ticks = max_ticks < 2 ? 2 : max_ticks > 9 ? 9 : max_ticks;
    do
        canvas_ticks_linear(c->vmin, c->vmax, max_ticks++, 0, &c->cticks);
    while (c->cticks.n < 2 && c->vmax > c->vmin && max_ticks <= 9);
    c->cbar_label_w = 0.0;
    for (int i = 0; i < c->cticks.n; i++) {
        char buf[64];
        canvas_tick_label(c->cticks.v[i], c->cticks.decimals, buf, sizeof buf);
        c->cbar_label_w = fmax(c->cbar_label_w, text_width(c->font, FS_TICK, buf));
    }
}

/* Horizontally: y label and y tick labels, then the slots (a panel in
 * each, centred). *or_: how far the x tick labels reach right of a panel;
 * returns where the slots end. */
static long layout_columns(heat_ctx *c, double label_h, double *or_)
{
    const heat_figure *fig = c->fig;
    double ol;
    x_overhang(c, &ol, or_);
    double left = TICK_LEN + TICK_PAD + c->y.band;
    if (fig->ylabel && *fig->ylabel)
        left += LABEL_PAD + label_h;
    left = fmax(left, ol);
    double slot = fmax((double)c->pw, c->title_w);
    if (fig->xlabel)
        slot = fmax(slot, c->xlabel_w);
    c->slot_w = (long)ceil(slot);
    long off = (c->slot_w - c->pw) / 2;        /* panel within its slot */
    c->gap_x = (long)ceil(fmax(GAP_X, ol + *or_ + 8));
    long slot0 = MARGIN + (long)fmax(0.0, ceil(left) - (double)off);
    c->panel_x0 = slot0 + off;
    c->dx = c->slot_w + c->gap_x;
    long gc = (long)fig->grid_cols;
    return slot0 + gc * c->slot_w + (gc - 1) * c->gap_x;
}

static void layout(heat_ctx *c)
{
    const heat_figure *fig = c->fig;
    double label_h = text_line_height(c->font, FS_LABEL);
    double title_h = text_line_height(c->font, FS_TITLE);
    double or_;
    c->pw = (long)c->pcols * c->cell;
    c->ph = (long)c->prows * c->cell;
    layout_axes(c);
    long slots_end = layout_columns(c, label_h, &or_);
    long gc = (long)fig->grid_cols, gr = (long)fig->grid_rows;

    /* Vertically: titles above every panel, then the panel rows, each
     * with its own x tick labels under it when the rows have their own. */
    long title_band = c->any_title ? (long)ceil(title_h) + TITLE_PAD : 0;
    if (c->any_row_title) /* row titles above the panel titles */
        title_band += (long)ceil(title_h) + TITLE_PAD;
    long xtick_band = c->x.row_labels ? TICK_LEN + TICK_PAD + (long)ceil(c->x.band) : 0;
    c->dy = c->ph + GAP_Y + title_band + xtick_band;
    long grid_h = (gr - 1) * c->dy + c->ph;

    /* The rotated y label goes beside each panel row, or once beside the
     * whole grid when it is longer than a row; it and the colorbar label
     * may still be longer than the panels are high: how far they reach
     * above the panels (and as far below). */
    c->ylabel_per_row = gr == 1 || c->ylabel_w + 8 <= (double)c->dy;
    long cbar_h = grid_h > CBAR_MIN_H ? grid_h : CBAR_MIN_H;
    double reach = fmax((c->ylabel_w - (c->ylabel_per_row ? c->ph : grid_h)) / 2.0,
                        (c->cbar_title_w - grid_h) / 2.0);
    if (cbar_h > grid_h)        /* with room for its end labels */
        reach = fmax(reach, (double)(cbar_h - grid_h) / 2.0 + text_cap_height(c->font, FS_TICK));
    reach = fmax(reach, 0.0);
    c->panel_y0 = MARGIN + (long)ceil(fmax((double)title_band, reach));
    long panels_end = c->panel_y0 + grid_h;

    /* Colorbar right of the last panel, as tall as the panel rows (at
     * least CBAR_MIN_H), centred on them; ticks about 60 pixels apart,
     * at least two when the scale has a range. */
    c->cbar_x = c->panel_x0 + (gc - 1) * c->dx + c->pw + (long)ceil(or_) + CBAR_GAP;
    c->cbar_y0 = c->panel_y0 + grid_h / 2 - cbar_h / 2;
    c->cbar_y1 = c->cbar_y0 + cbar_h;
    colorbar_ticks(c, cbar_h);
    double right = c->cbar_x + CBAR_W + TICK_LEN + TICK_PAD + c->cbar_label_w;
    if (fig->colorbar_label && *fig->colorbar_label)
        right += LABEL_PAD + label_h;

    /* Figure size. */
    c->width = (long)ceil(fmax(right, (double)slots_end)) + MARGIN;
    c->width = (long)fmax((double)c->width, ceil((double)c->panel_x0 + c->row_title_w) + MARGIN);
    double bottom = (double)panels_end + TICK_LEN + TICK_PAD + c->x.band;
    if (fig->xlabel && *fig->xlabel)
        bottom += LABEL_PAD + label_h;
    bottom = fmax(bottom, (double)panels_end + reach);
    c->height = (long)ceil(bottom) + MARGIN;
}

/* ---- checking and measuring the input -------------------------------- */

/* Row i of panel hp: a pointer into its data, or made by its row
 * function into buf. */
static const float *panel_row(const heat_panel *hp, size_t i, float *buf)
{
    if (hp->data)
        return hp->data + i * hp->cols;
    hp->row(hp->row_ctx, i, buf);
    return buf;
}

/* 1 when the font can draw every one of labels (n,) as it is shown (cut;
 * NULL labels: nothing to draw), else 0, and the first label that cannot
 * be drawn is kept, printable, in c->missing. */
static int drawable_labels(heat_ctx *c, const char *const *labels, size_t n)
{
    char buf[128];
    for (size_t i = 0; labels && i < n; i++) {
        cut_label(labels[i], buf, sizeof buf);
        if (!text_font_has_all(c->font, buf)) {
            if (c->missing[0] == '\0')
                text_printable(buf, c->missing, sizeof c->missing);
            return 0;
        }
    }
    return 1;
}

/* An axis's tokens — shared by every panel, or one set per row of panels —
 * when the font draws them all; else numbers, and *numbered is set. The
 * widest token (as shown) goes to a->tok_w. */
static void axis_tokens(heat_ctx *c, heat_axis *a, const char *const *labels,
                        const char *const *const *row_labels, size_t n, int *numbered)
{
    size_t sets = row_labels ? c->fig->grid_rows : 1;
    char buf[128];
    a->labels = row_labels ? NULL : labels;
    a->row_labels = row_labels;
    a->tok_w = 0.0;
    *numbered = 0;
    if (!labels && !row_labels)
        return;
    for (size_t gr = 0; gr < sets; gr++)
        if (!drawable_labels(c, axis_labels(a, gr), n)) {
            a->labels = NULL;
            a->row_labels = NULL;
            *numbered = 1;
            return;
        }
    for (size_t gr = 0; gr < sets; gr++) {
        const char *const *set = axis_labels(a, gr);
        for (size_t i = 0; set && i < n; i++) {
            cut_label(set[i], buf, sizeof buf);
            a->tok_w = fmax(a->tok_w, text_width(c->font, FS_TICK, buf));
        }
    }
}

/* Validate the figure and fill c's sizes, scale, pool and text widths. */
/* The grid and every panel's shape checked; *rows and *cols the largest
 * panel's along each axis. */
static int check_panels(heat_ctx *c, const heat_figure *fig, size_t *rows, size_t *cols,
                        char *err, size_t errlen)
{
    if (fig == NULL || fig->panels == NULL)
        return render_error(err, errlen, "heatmap: no panels");
    if (fig->grid_rows == 0 || fig->grid_cols == 0 ||
        fig->grid_rows > HEAT_MAX_GRID || fig->grid_cols > HEAT_MAX_GRID)
        return render_error(err, errlen, "heatmap: invalid grid %zu x %zu",
                            fig->grid_rows, fig->grid_cols);
    c->npanels = fig->grid_rows * fig->grid_cols;   /* <= 10^6 */
    *rows = *cols = 0;
    for (size_t p = 0; p < c->npanels; p++) {
        const heat_panel *hp = &fig->panels[p];
        size_t n;
        if ((hp->data == NULL) == (hp->row == NULL) || hp->rows == 0 || hp->cols == 0 ||
            render_size_mul(hp->rows, hp->cols, &n) < 0)
            return render_error(err, errlen, "heatmap: panel %zu has no data or an invalid shape",
                                p + 1);
        if ((fig->xticklabels || fig->yticklabels || fig->row_xticklabels ||
             fig->row_yticklabels) &&
            (hp->rows != fig->panels[0].rows || hp->cols != fig->panels[0].cols))
            return render_error(err, errlen,
                                "heatmap: tick labels need panels of one shape");
        *rows = *rows > hp->rows ? *rows : hp->rows;
        *cols = *cols > hp->cols ? *cols : hp->cols;
    }
    return 0;
}

/* The colour scale: given, or min / max of the finite entries. */
static int color_scale(heat_ctx *c, const heat_figure *fig, char *err, size_t errlen)
{
    float lo = INFINITY, hi = -INFINITY;
    for (size_t p = 0; p < c->npanels; p++) {
        const heat_panel *hp = &fig->panels[p];
        if (!isnan(fig->vmin) && !isnan(fig->vmax))
            break; /* both given: no need to look */
        for (size_t i = 0; i < hp->rows; i++) {
            const float *row = panel_row(hp, i, c->rowbuf);
            for (size_t j = 0; j < hp->cols; j++) {
                /* NaN fails every comparison; ±inf fails the range test */
                float v = row[j];
                if (v < lo && v >= -FLT_MAX)
                    lo = v;
                if (v > hi && v <= FLT_MAX)
                    hi = v;
            }
        }
    }
    if (lo > hi)
        lo = hi = 0.0;          /* no finite entry */
    c->vmin = isnan(fig->vmin) ? lo : fig->vmin;
    c->vmax = isnan(fig->vmax) ? hi : fig->vmax;
    if (!isfinite(c->vmin) || !isfinite(c->vmax) || !isfinite(c->vmax - c->vmin))
        return render_error(err, errlen, "heatmap: colour scale limits must be finite numbers");
    if (c->vmin > c->vmax)
        return render_error(err, errlen, "heatmap: vmin %g is greater than vmax %g",
                            c->vmin, c->vmax);
    return 0;
}

static int prepare(heat_ctx *c, const heat_figure *fig, char *err, size_t errlen)
{
    size_t rows = 0, cols = 0;
    if (check_panels(c, fig, &rows, &cols, err, errlen))
        return -1;

    /* A row buffer for panels whose rows are made on demand. */
    c->rowbuf = float_alloc(cols);
    c->colsum = malloc(cols * sizeof *c->colsum + 1);
    if (!c->rowbuf || !c->colsum)
        return render_error(err, errlen, "heatmap: out of memory");
    if (color_scale(c, fig, err, errlen))
        return -1;

    /* Pool so that no panel side has more than HEAT_MAX_SIDE cells. */
    size_t longest = rows > cols ? rows : cols;
    c->pool = (longest + HEAT_MAX_SIDE - 1) / HEAT_MAX_SIDE;
    c->prows = (rows + c->pool - 1) / c->pool;
    c->pcols = (cols + c->pool - 1) / c->pool;

    /* Axes and the widths of the texts that shape the layout. */
    c->x.n = cols;
    c->y.n = rows;
    axis_tokens(c, &c->x, fig->xticklabels, fig->row_xticklabels, cols, &c->x_numbered);
    axis_tokens(c, &c->y, fig->yticklabels, fig->row_yticklabels, rows, &c->y_numbered);
    c->any_title = 0;
    c->title_w = 0.0;
    for (size_t p = 0; p < c->npanels; p++) {
        const char *t = fig->panels[p].title;
        if (t && *t) {
            c->any_title = 1;
            c->title_w = fmax(c->title_w, text_width(c->font, FS_TITLE, t));
        }
    }
    c->any_row_title = 0;
    c->row_title_w = 0.0;
    for (size_t r = 0; fig->row_titles && r < fig->grid_rows; r++) {
        const char *t = fig->row_titles[r];
        if (t && *t) {
            c->any_row_title = 1;
            c->row_title_w = fmax(c->row_title_w, text_width(c->font, FS_TITLE, t));
        }
    }
    c->xlabel_w = text_width(c->font, FS_LABEL, fig->xlabel);
    c->ylabel_w = text_width(c->font, FS_LABEL, fig->ylabel);
    c->cbar_title_w = text_width(c->font, FS_LABEL, fig->colorbar_label);
    return 0;
}

/* The cell size: the preferred panel size, grown until the figure is
 * HEAT_MIN_WIDTH wide or a panel side would pass HEAT_MAX_SIDE pixels. */
static void choose_cell(heat_ctx *c)
{
    size_t longest = c->prows > c->pcols ? c->prows : c->pcols;
    size_t max_cell = HEAT_MAX_SIDE / longest;
    size_t cell = HEAT_PREF_SIDE / longest;
    size_t grid_w = HEAT_PREF_GRID / (c->fig->grid_cols * c->pcols);
    cell = cell < grid_w ? cell : grid_w;
    cell = cell < 1 ? 1 : cell > max_cell ? max_cell : cell;
    for (;;) {
        c->cell = (int)cell;
        layout(c);
        if (c->width >= HEAT_MIN_WIDTH || cell + 1 > max_cell)
            break;
        cell++;
    }
    /* Tokens under the panels read best level (CJK above all): when they
     * would be turned upwards, widen the cells to the least size at which
     * they fit level, if the panels then stay within HEAT_LEVEL_GRID pixels
     * side by side; else keep the cells and turn the tokens. */
    if (c->x.rotated) {
        size_t wide = cell;
        while (c->x.rotated && wide + 1 <= max_cell &&
               (wide + 1) * c->fig->grid_cols * c->pcols <= HEAT_LEVEL_GRID) {
            c->cell = (int)++wide;
            layout(c);
        }
        if (c->x.rotated) {     /* no width within reach: as they were */
            c->cell = (int)cell;
            layout(c);
        }
    }
}

/* ---- drawing ----------------------------------------------------------- */

/* Paint the cells of panel hp with their first cell at (x0, y0). For a
 * pooled row of cells, the column sums of its pool rows are added first
 * (one pass over the rows, every column at once), then each cell's block
 * sums those of its columns; the mean is that sum over the block's size. */
static void draw_cells(attn_image *img, const heat_ctx *c, const heat_panel *hp,
                       long x0, long y0, double *sums)
{
    const attn_cmap *cmap = c->fig->cmap ? c->fig->cmap : cmap_find("Reds");
    const size_t pool = c->pool;
    size_t pr = (hp->rows + pool - 1) / pool;
    size_t pc = (hp->cols + pool - 1) / pool;
    double range = c->vmax - c->vmin;
    double *colsum = c->colsum; /* (cols,) */
    for (size_t r = 0; r < pr; r++) {
        size_t r0 = r * pool, r1 = r0 + pool < hp->rows ? r0 + pool : hp->rows;
        for (size_t j = 0; j < hp->cols; j++)
            colsum[j] = 0.0;
        for (size_t i = r0; i < r1; i++) {
            const float *row = panel_row(hp, i, c->rowbuf);
            for (size_t j = 0; j < hp->cols; j++)
                colsum[j] += row[j];
        }
        /* sums (pc,) of the blocks of this pooled row */
        for (size_t q = 0; q < pc; q++) {
            size_t c0 = q * pool, c1 = c0 + pool < hp->cols ? c0 + pool : hp->cols;
            double sum = 0.0;
            for (size_t j = c0; j < c1; j++)
                sum += colsum[j];
            sums[q] = sum;
        }
        for (size_t q = 0; q < pc; q++) {
            size_t c0 = q * pool, c1 = c0 + pool < hp->cols ? c0 + pool : hp->cols;
            double v = sums[q] / (double)((r1 - r0) * (c1 - c0)); /* the block's mean */
            double t = range > 0.0 ? (v - c->vmin) / range : 0.5;
            long x = x0 + (long)q * c->cell, y = y0 + (long)r * c->cell;
            canvas_fill(img, x, y, x + c->cell, y + c->cell, cmap_color(cmap, t));
        }
    }
}

/* Tick marks on the left and bottom edges of a panel in grid row gr;
 * their labels when the panel is in the left column (y) or bottom row (x;
 * every row when the rows have their own x labels). */
static void draw_ticks(attn_image *img, heat_ctx *c, const heat_panel *hp, size_t gr,
                       long x0, long y0, int label_y, int label_x)
{
    char buf[128];
    long ph = (long)((hp->rows + c->pool - 1) / c->pool) * c->cell;

    /* y ticks: marks left of the frame, labels right-aligned. */
    for (size_t i = 0; i < hp->rows; i += c->y.step) {
        long y = y0 + (long)floor(index_pos(c, i));
        canvas_fill(img, x0 - 1 - TICK_LEN, y, x0 - 1, y + 1, INK);
        if (!label_y)
            continue;
        tick_text(&c->y, gr, i, buf, sizeof buf);
        text_draw(img, c->font, FS_TICK, buf, (double)(x0 - 1 - TICK_LEN - TICK_PAD),
                  y + 0.5, TEXT_RIGHT, TEXT_MIDDLE, TEXT_HORIZONTAL, INK);
    }

    /* x ticks: marks under the frame, labels centred or reading upwards. */
    long yb = y0 + ph + 1;
    for (size_t i = 0; i < hp->cols; i += c->x.step) {
        long x = x0 + (long)floor(index_pos(c, i));
        canvas_fill(img, x, yb, x + 1, yb + TICK_LEN, INK);
        if (!label_x)
            continue;
        tick_text(&c->x, gr, i, buf, sizeof buf);
        if (c->x.rotated)
            text_draw(img, c->font, FS_TICK, buf, x + 0.5, (double)(yb + TICK_LEN + TICK_PAD),
                      TEXT_RIGHT, TEXT_MIDDLE, TEXT_UP, INK);
        else
            text_draw(img, c->font, FS_TICK, buf, x + 0.5, (double)(yb + TICK_LEN + TICK_PAD),
                      TEXT_CENTER, TEXT_TOP, TEXT_HORIZONTAL, INK);
    }
}

/* The panel at grid position (gr, gc): cells, frame, ticks, title, labels. */
static void draw_panel(attn_image *img, heat_ctx *c, size_t gr, size_t gc)
{
    const heat_figure *fig = c->fig;
    const heat_panel *hp = &fig->panels[gr * fig->grid_cols + gc];
    long x0 = c->panel_x0 + (long)gc * c->dx, y0 = c->panel_y0 + (long)gr * c->dy;
    long pw = (long)((hp->cols + c->pool - 1) / c->pool) * c->cell;
    long ph = (long)((hp->rows + c->pool - 1) / c->pool) * c->cell;
    int left = gc == 0, bottom = gr + 1 == fig->grid_rows;
    double sums[HEAT_MAX_SIDE]; /* one pooled row's block sums: pc <= HEAT_MAX_SIDE */

    /* Cells and a frame just outside them. */
    draw_cells(img, c, hp, x0, y0, sums);
    canvas_frame(img, x0, y0, x0 + pw, y0 + ph, INK);

    /* Ticks and tick labels. */
    draw_ticks(img, c, hp, gr, x0, y0, left, bottom || c->x.row_labels != NULL);

    /* The row's title above the panel titles, from the first panel's left. */
    const char *row_title = fig->row_titles ? fig->row_titles[gr] : NULL;
    if (left && row_title && *row_title)
        text_draw(img, c->font, FS_TITLE, row_title, (double)x0,
                  (double)(y0 - 1 - TITLE_PAD) -
                      (c->any_title ? ceil(text_line_height(c->font, FS_TITLE)) + TITLE_PAD : 0),
                  TEXT_LEFT, TEXT_BOTTOM, TEXT_HORIZONTAL, INK);

    /* Title centred above the panel. */
    if (hp->title && *hp->title)
        text_draw(img, c->font, FS_TITLE, hp->title, x0 + pw / 2.0,
                  (double)(y0 - 1 - TITLE_PAD), TEXT_CENTER, TEXT_BOTTOM,
                  TEXT_HORIZONTAL, INK);

    /* x label under the tick labels of the bottom row. */
    if (bottom && fig->xlabel && *fig->xlabel)
        text_draw(img, c->font, FS_LABEL, fig->xlabel, x0 + pw / 2.0,
                  y0 + ph + 1 + TICK_LEN + TICK_PAD + c->x.band + LABEL_PAD,
                  TEXT_CENTER, TEXT_TOP, TEXT_HORIZONTAL, INK);

    /* y label, reading upwards, left of the tick labels of the left
     * column: centred on each row, or once on the whole grid. */
    double grid_mid = c->panel_y0 + ((double)(fig->grid_rows - 1) * c->dy + c->ph) / 2.0;
    if (left && fig->ylabel && *fig->ylabel && (c->ylabel_per_row || gr == 0))
        text_draw(img, c->font, FS_LABEL, fig->ylabel,
                  x0 - 1 - TICK_LEN - TICK_PAD - c->y.band - LABEL_PAD,
                  c->ylabel_per_row ? y0 + c->ph / 2.0 : grid_mid, TEXT_CENTER,
                  TEXT_BOTTOM, TEXT_UP, INK);
}

/* The colorbar: the colormap from vmin (bottom) to vmax (top), a frame,
 * ticks with labels on the right, and its label. */
static void draw_colorbar(attn_image *img, heat_ctx *c)
{
    const attn_cmap *cmap = c->fig->cmap ? c->fig->cmap : cmap_find("Reds");
    long x0 = c->cbar_x, y0 = c->cbar_y0, y1 = c->cbar_y1, h = y1 - y0;

    /* Gradient: pixel row j shows t at its centre, t = 1 at the top. */
    for (long j = 0; j < h; j++) {
        double t = ((double)(h - j) - 0.5) / (double)h;
        canvas_fill(img, x0, y0 + j, x0 + CBAR_W, y0 + j + 1, cmap_color(cmap, t));
    }
    canvas_frame(img, x0, y0, x0 + CBAR_W, y1, INK);

    /* Ticks at the scale's values. */
    double range = c->vmax - c->vmin;
    for (int i = 0; i < c->cticks.n; i++) {
        double v = c->cticks.v[i];
        double f = range > 0.0 ? (v - c->vmin) / range : 0.5;
        long y = y1 - 1 - (long)floor(f * (double)(h - 1) + 0.5);
        canvas_fill(img, x0 + CBAR_W + 1, y, x0 + CBAR_W + 1 + TICK_LEN, y + 1, INK);
        char buf[64];
        canvas_tick_label(v, c->cticks.decimals, buf, sizeof buf);
        text_draw(img, c->font, FS_TICK, buf, (double)(x0 + CBAR_W + 1 + TICK_LEN + TICK_PAD),
                  y + 0.5, TEXT_LEFT, TEXT_MIDDLE, TEXT_HORIZONTAL, INK);
    }

    /* Label, reading upwards, right of the tick labels. */
    const char *label = c->fig->colorbar_label;
    if (label && *label)
        text_draw(img, c->font, FS_LABEL, label,
                  x0 + CBAR_W + 1 + TICK_LEN + TICK_PAD + c->cbar_label_w + LABEL_PAD,
                  (y0 + y1) / 2.0, TEXT_CENTER, TEXT_TOP, TEXT_UP, INK);
}

int heatmap_draw(attn_image *img, heat_layout *lay, const heat_figure *fig,
                 char *err, size_t errlen)
{
    heat_ctx c;
    memset(&c, 0, sizeof c);
    c.fig = fig;
    img->w = img->h = 0;
    img->rgb = NULL;
    if (fig != NULL && fig->font != NULL) {
        c.font = fig->font;
    } else {
        if (text_font_open(&c.font, err, errlen) < 0)
            return -1;
        c.own_font = 1;
    }
    int rc = -1;

    /* Check the input and lay the figure out. */
    if (prepare(&c, fig, err, errlen) < 0)
        goto done;
    choose_cell(&c);
    if (c.width > CANVAS_MAX_SIDE || c.height > CANVAS_MAX_SIDE) {
        render_error(err, errlen, "heatmap: figure too large (%ld x %ld pixels)",
                     c.width, c.height);
        goto done;
    }
    if (image_alloc(img, (int)c.width, (int)c.height, err, errlen) < 0)
        goto done;

    /* Panels, then the colorbar. */
    for (size_t gr = 0; gr < fig->grid_rows; gr++)
        for (size_t gc = 0; gc < fig->grid_cols; gc++)
            draw_panel(img, &c, gr, gc);
    draw_colorbar(img, &c);
    if (text_font_failed(c.font)) {
        image_free(img);
        render_error(err, errlen, "heatmap: out of memory for text");
        goto done;
    }

    /* Report where things went. */
    if (lay) {
        lay->cell = c.cell;
        lay->pool = c.pool;
        lay->vmin = c.vmin;
        lay->vmax = c.vmax;
        lay->panel_x0 = (int)c.panel_x0;
        lay->panel_y0 = (int)c.panel_y0;
        lay->panel_dx = (int)c.dx;
        lay->panel_dy = (int)c.dy;
        lay->x_numbered = c.x_numbered;
        lay->y_numbered = c.y_numbered;
        memcpy(lay->missing, c.missing, sizeof lay->missing);
    }
    rc = 0;
done:
    free(c.rowbuf);
    free(c.colsum);
    if (c.own_font)
        text_font_close(c.font);
    return rc;
}
