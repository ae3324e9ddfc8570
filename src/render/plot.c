/* plot.c — line plots in the style of d2l.plot (matplotlib defaults):
 * an axes box with outward ticks and a light grid, one antialiased line per
 * series, a legend placed where it hides the fewest data, linear or
 * logarithmic axes.
 *
 * Figure layout (pixels):
 *
 *   margin, title
 *   ylabel yticks +--------------------------+ margin
 *                 |  axes (lines, grid,      |
 *                 |        legend)           |
 *                 +--------------------------+
 *                   xticks
 *                   xlabel, margin
 *
 * Data limits get matplotlib's 5 % margins (in log10 units on log axes).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canvas.h"
#include "fmath.h"
#include "text.h"

#define PLOT_W 900              /* default size: d2l's figsize (6, 2.5) */
#define PLOT_H 375              /* at 150 dpi */
#define PLOT_MIN_W 120          /* smallest size accepted */
#define PLOT_MIN_H 90

#define FS_TICK 14.0            /* em sizes in pixels */
#define FS_LABEL 15.0
#define FS_TITLE 16.0
#define FS_LEGEND 14.0

#define MARGIN 12
#define TICK_LEN 6
#define TICK_MINOR 3
#define TICK_PAD 4
#define LABEL_PAD 6
#define TITLE_PAD 8
#define LINE_W 2.2              /* series line width */
#define LEGEND_PAD 8            /* inside the legend box */
#define LEGEND_INSET 8          /* from the axes to the legend box */
#define LEGEND_SAMPLE 34        /* length of a line sample */
#define LEGEND_TEXT_GAP 10      /* from the sample to the label */

#define LOG_MAX_TICKS 32        /* room for decades on a log axis */

static const attn_rgb INK = {0, 0, 0};

/* Series styles in d2l's order ('-', 'm--', 'g-.', 'r:'), then more of
 * matplotlib's tab10 colours cycling through the dash styles. */
typedef enum dash_style { SOLID, DASHED, DASHDOT, DOTTED } dash_style;
static const struct {
    unsigned long color;
    dash_style dash;
} STYLES[] = {
    {0x1f77b4, SOLID},   {0xbf00bf, DASHED}, {0x008000, DASHDOT},
    {0xff0000, DOTTED},  {0xff7f0e, SOLID},  {0x9467bd, DASHED},
    {0x8c564b, DASHDOT}, {0x17becf, DOTTED}, {0x7f7f7f, SOLID},
    {0xbcbd22, DASHED},
};
#define NSTYLES (sizeof STYLES / sizeof STYLES[0])

/* matplotlib's dash patterns (lines.*_pattern), in line widths. */
static const double DASH_DASHED[] = {3.7, 1.6};
static const double DASH_DASHDOT[] = {6.4, 1.6, 1.0, 1.6};
static const double DASH_DOTTED[] = {1.0, 1.65};

/* One axis: data limits, ticks and how values map to pixels. */
typedef struct plot_axis {
    int log;
    double lo, hi;              /* view limits (log10 of them when log) */
    long p0, len;               /* pixel start and length along the axis */
    int flip;                   /* y: larger values upwards */
    /* Ticks (values in data units). */
    double major[LOG_MAX_TICKS];
    int nmajor;
    int decimals;               /* linear labels */
    int pow10;                  /* labels are 10^k */
    double minor[LOG_MAX_TICKS * 8];
    int nminor;
} plot_axis;

typedef struct plot_ctx {
    const plot_figure *fig;
    text_font *font;
    int w, h;
    plot_axis x, y;
    long ax0, ay0, aw, ah;      /* axes rectangle [ax0, ax0 + aw) × ... */
} plot_ctx;

/* ---- data limits ------------------------------------------------------- */

/* Whether v can be drawn on an axis (finite, and positive on log axes). */
static int usable(double v, int log)
{
    return isfinite(v) && (!log || v > 0.0);
}

/* The view limits of one axis from the data (xs: x values, else y), with
 * matplotlib's 5 % margins; in log10 units on a log axis. */
static void data_limits(const plot_figure *fig, int xs, plot_axis *a)
{
    double lo = INFINITY, hi = -INFINITY;
    for (size_t s = 0; s < fig->nseries; s++) {
        const plot_series *ps = &fig->series[s];
        for (size_t i = 0; i < ps->n; i++) {
            if (!usable(ps->x[i], fig->logx) || !usable(ps->y[i], fig->logy))
                continue;
            double v = xs ? ps->x[i] : ps->y[i];
            v = a->log ? fm_log10(v) : v;
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
    }
    if (lo > hi) {
        lo = 0.0;               /* no data: [0, 1], or 1..10 on log axes */
        hi = 1.0;
    }
    if (hi - lo < 1e-12 * fmax(1.0, fabs(lo))) {
        double d = a->log ? 0.5 : (lo != 0.0 ? fabs(lo) * 0.1 : 1.0);
        lo -= d;
        hi += d;
    }
    double pad = 0.05 * (hi - lo);
    a->lo = lo - pad;
    a->hi = hi + pad;
}

/* Both axes' view limits: from the data, or the figure's xlim and ylim. */
static void view_limits(plot_ctx *c)
{
    const plot_figure *fig = c->fig;
    data_limits(fig, 1, &c->x);
    data_limits(fig, 0, &c->y);
    if (fig->lim_set && !fig->logx && !fig->logy) {
        c->x.lo = fig->xlim[0];
        c->x.hi = fig->xlim[1];
        c->y.lo = fig->ylim[0];
        c->y.hi = fig->ylim[1];
    }
}

/* ---- ticks ------------------------------------------------------------- */

/* Ticks of a linear axis for a given number of pixels per tick. */
static void ticks_lin(plot_axis *a, double px_per_tick)
{
    canvas_ticks t;
    int max = (int)(a->len / px_per_tick) + 1;
    canvas_ticks_linear(a->lo, a->hi, max < 3 ? 3 : max > 11 ? 11 : max, 1, &t);
    a->nmajor = t.n;
    for (int i = 0; i < t.n; i++)
        a->major[i] = t.v[i];
    a->decimals = t.decimals;
    a->pow10 = 0;
    a->nminor = 0;
}

/* Ticks of a log axis: powers of ten (every k-th decade when there are
 * many, minor ticks at the others), 2..9 × 10^k minor ticks between
 * single decades; when fewer than two powers of ten are in view, plain
 * linear ticks instead. */
static void ticks_log(plot_axis *a, double px_per_tick)
{
    double k0 = ceil(a->lo - 1e-9), k1 = floor(a->hi + 1e-9);
    a->nminor = 0;
    if (k1 - k0 < 1.0) {
        /* Linear ticks on the values, labelled plainly. */
        canvas_ticks t;
        int max = (int)(a->len / px_per_tick) + 1;
        canvas_ticks_linear(fm_pow(10.0, a->lo), fm_pow(10.0, a->hi), max < 3 ? 3 : max > 8 ? 8 : max,
                     0, &t);
        a->nmajor = t.n;
        for (int i = 0; i < t.n; i++)
            a->major[i] = t.v[i];
        a->decimals = t.decimals;
        a->pow10 = 0;
        return;
    }
    int max = (int)(a->len / px_per_tick) + 1;
    max = max < 2 ? 2 : max > LOG_MAX_TICKS ? LOG_MAX_TICKS : max;
    double every = 1.0;
    while ((k1 - k0) / every + 1 > max)
        every++;
    a->nmajor = 0;
    a->pow10 = 1;
    for (double k = k0; k <= k1 + 1e-9 && a->nmajor < LOG_MAX_TICKS; k += every)
        a->major[a->nmajor++] = fm_pow(10.0, k);
    if (every == 1.0) {
        for (double k = floor(a->lo); k <= a->hi; k++)
            for (int m = 2; m <= 9; m++) {
                double lv = k + fm_log10((double)m);
                if (lv >= a->lo && lv <= a->hi && a->nminor < LOG_MAX_TICKS * 8)
                    a->minor[a->nminor++] = fm_pow(10.0, lv);
            }
    } else {
        /* Unlabelled decades get minor ticks. */
        for (double k = k0; k <= k1 + 1e-9 && a->nminor < LOG_MAX_TICKS * 8; k++)
            if (fmod(k - k0, every) != 0.0)
                a->minor[a->nminor++] = fm_pow(10.0, k);
    }
}

static void axis_ticks(plot_axis *a, double px_per_tick)
{
    if (a->log)
        ticks_log(a, px_per_tick);
    else
        ticks_lin(a, px_per_tick);
}

/* Pixel coordinate of data value v along an axis. */
static double axis_pos(const plot_axis *a, double v)
{
    double f = ((a->log ? fm_log10(v) : v) - a->lo) / (a->hi - a->lo);
    return a->flip ? a->p0 + a->len - f * a->len : a->p0 + f * a->len;
}

/* ---- tick labels ------------------------------------------------------ */

/* Label text of major tick i: a number, or for 10^k the exponent k (the
 * caller draws "10" and the exponent raised). */
static void major_text(const plot_axis *a, int i, char *buf, size_t len)
{
    if (a->pow10) {
        long k = lround(fm_log10(a->major[i]));
        if (k < 0)
            snprintf(buf, len, "\xE2\x88\x92%ld", -k);  /* U+2212 minus */
        else
            snprintf(buf, len, "%ld", k);
    } else {
        canvas_tick_label(a->major[i], a->decimals, buf, len);
    }
}

#define FS_EXP (FS_TICK * 0.72)     /* exponent size of 10^k labels */

/* Width of the label of major tick i. */
static double major_width(const plot_ctx *c, const plot_axis *a, int i)
{
    char buf[64];
    major_text(a, i, buf, sizeof buf);
    if (a->pow10)
        return text_width(c->font, FS_TICK, "10") + text_width(c->font, FS_EXP, buf);
    return text_width(c->font, FS_TICK, buf);
}

/* Draw the label of major tick i with its box's left edge at x and its
 * capital-height middle at y. */
static void draw_major(attn_image *img, plot_ctx *c, const plot_axis *a, int i,
                       double x, double y)
{
    char buf[64];
    major_text(a, i, buf, sizeof buf);
    if (!a->pow10) {
        text_draw(img, c->font, FS_TICK, buf, x, y, TEXT_LEFT, TEXT_MIDDLE,
                  TEXT_HORIZONTAL, INK);
        return;
    }
    /* "10", then the exponent raised to the top of the digits. */
    double w10 = text_width(c->font, FS_TICK, "10");
    double cap = text_cap_height(c->font, FS_TICK);
    text_draw(img, c->font, FS_TICK, "10", x, y, TEXT_LEFT, TEXT_MIDDLE,
              TEXT_HORIZONTAL, INK);
    text_draw(img, c->font, FS_EXP, buf, x + w10 + 0.5, y - cap * 0.5 + cap * 0.2,
              TEXT_LEFT, TEXT_BASELINE, TEXT_HORIZONTAL, INK);
}

/* Height of x tick labels above their middle (10^k labels reach higher). */
static double major_rise(const plot_ctx *c, const plot_axis *a)
{
    double cap = text_cap_height(c->font, FS_TICK);
    if (a->pow10)
        return cap * 0.5 - cap * 0.2 + text_cap_height(c->font, FS_EXP) + 1.0;
    return text_ascent(c->font, FS_TICK) - cap * 0.5;
}

/* ---- layout ------------------------------------------------------------ */

/* Size the margins around the axes from the texts and ticks. */
static int layout(plot_ctx *c, char *err, size_t errlen)
{
    const plot_figure *fig = c->fig;
    double label_h = text_line_height(c->font, FS_LABEL);
    double title_h = text_line_height(c->font, FS_TITLE);
    double cap = text_cap_height(c->font, FS_TICK);

    /* Data limits; x ticks for a first guess of the axes width (whether
     * labels are powers of ten does not depend on it). */
    c->x.log = fig->logx;
    c->y.log = fig->logy;
    view_limits(c);
    c->x.len = c->w - 100;
    axis_ticks(&c->x, 5.0 * FS_TICK);

    /* Vertically: title, axes, tick labels, x label. */
    double top = MARGIN + cap / 2.0;
    if (fig->title && *fig->title)
        top = MARGIN + title_h + TITLE_PAD;
    double bottom = MARGIN + TICK_LEN + TICK_PAD + major_rise(c, &c->x) + cap / 2.0 +
                    text_descent(c->font, FS_TICK);
    if (fig->xlabel && *fig->xlabel)
        bottom += label_h + LABEL_PAD;
    c->ay0 = (long)ceil(top);
    c->ah = c->h - c->ay0 - (long)ceil(bottom);
    if (c->ah < 20)
        return render_error(err, errlen, "plot: figure too small (%d x %d pixels)", c->w, c->h);

    /* y ticks, and the left margin from their labels. */
    c->y.p0 = c->ay0;
    c->y.len = c->ah;
    c->y.flip = 1;
    axis_ticks(&c->y, 3.5 * FS_TICK);
    double yw = 0.0;
    for (int i = 0; i < c->y.nmajor; i++)
        yw = fmax(yw, major_width(c, &c->y, i));
    double left = MARGIN + yw + TICK_PAD + TICK_LEN;
    if (fig->ylabel && *fig->ylabel)
        left += label_h + LABEL_PAD;
    c->ax0 = (long)ceil(left);

    /* x ticks; widen the right margin if the last label would stick out. */
    long right = MARGIN;
    for (int pass = 0; pass < 2; pass++) {
        c->aw = c->w - c->ax0 - right;
        if (c->aw < 20)
            return render_error(err, errlen, "plot: figure too small (%d x %d pixels)",
                                c->w, c->h);
        c->x.p0 = c->ax0;
        c->x.len = c->aw;
        c->x.flip = 0;
        axis_ticks(&c->x, 5.0 * FS_TICK);
        if (c->x.nmajor == 0 || pass > 0)
            break;
        int last = c->x.nmajor - 1;
        double reach = axis_pos(&c->x, c->x.major[last]) + major_width(c, &c->x, last) / 2.0;
        long need = (long)ceil(reach - (double)(c->w - MARGIN));
        if (need <= 0)
            break;
        right += need;
    }
    return 0;
}

/* ---- drawing ----------------------------------------------------------- */

/* Grid lines at the major ticks, inside the axes. */
static void draw_grid(attn_image *img, const plot_ctx *c)
{
    attn_rgb grid = color_hex(0xdddddd);
    for (int i = 0; i < c->x.nmajor; i++) {
        long x = (long)floor(axis_pos(&c->x, c->x.major[i]));
        canvas_fill(img, x, c->ay0, x + 1, c->ay0 + c->ah, grid);
    }
    for (int i = 0; i < c->y.nmajor; i++) {
        long y = (long)floor(axis_pos(&c->y, c->y.major[i]));
        canvas_fill(img, c->ax0, y, c->ax0 + c->aw, y + 1, grid);
    }
}

/* The axes frame, outward ticks and their labels. */
static void draw_axes(attn_image *img, plot_ctx *c)
{
    long x0 = c->ax0, y0 = c->ay0, x1 = c->ax0 + c->aw, y1 = c->ay0 + c->ah;
    canvas_frame(img, x0, y0, x1, y1, INK);
    double cap = text_cap_height(c->font, FS_TICK);

    /* x: marks below the frame, labels centred under them. */
    for (int i = 0; i < c->x.nminor; i++) {
        long x = (long)floor(axis_pos(&c->x, c->x.minor[i]));
        canvas_fill(img, x, y1 + 1, x + 1, y1 + 1 + TICK_MINOR, INK);
    }
    double label_mid = y1 + 1 + TICK_LEN + TICK_PAD + major_rise(c, &c->x);
    for (int i = 0; i < c->x.nmajor; i++) {
        double px = axis_pos(&c->x, c->x.major[i]);
        long x = (long)floor(px);
        canvas_fill(img, x, y1 + 1, x + 1, y1 + 1 + TICK_LEN, INK);
        draw_major(img, c, &c->x, i, x + 0.5 - major_width(c, &c->x, i) / 2.0, label_mid);
    }

    /* y: marks left of the frame, labels right-aligned. */
    for (int i = 0; i < c->y.nminor; i++) {
        long y = (long)floor(axis_pos(&c->y, c->y.minor[i]));
        canvas_fill(img, x0 - 1 - TICK_MINOR, y, x0 - 1, y + 1, INK);
    }
    for (int i = 0; i < c->y.nmajor; i++) {
        long y = (long)floor(axis_pos(&c->y, c->y.major[i]));
        canvas_fill(img, x0 - 1 - TICK_LEN, y, x0 - 1, y + 1, INK);
        double w = major_width(c, &c->y, i);
        draw_major(img, c, &c->y, i, x0 - 1 - TICK_LEN - TICK_PAD - w, y + 0.5);
    }

    /* Axis labels and title. */
    const plot_figure *fig = c->fig;
    if (fig->xlabel && *fig->xlabel)
        text_draw(img, c->font, FS_LABEL, fig->xlabel, x0 + c->aw / 2.0,
                  label_mid + cap / 2.0 + text_descent(c->font, FS_TICK) + LABEL_PAD,
                  TEXT_CENTER, TEXT_TOP, TEXT_HORIZONTAL, INK);
    if (fig->ylabel && *fig->ylabel)
        text_draw(img, c->font, FS_LABEL, fig->ylabel, (double)MARGIN,
                  y0 + c->ah / 2.0, TEXT_CENTER, TEXT_TOP, TEXT_UP, INK);
    if (fig->title && *fig->title)
        text_draw(img, c->font, FS_TITLE, fig->title, x0 + c->aw / 2.0,
                  (double)(y0 - 1 - TITLE_PAD), TEXT_CENTER, TEXT_BOTTOM,
                  TEXT_HORIZONTAL, INK);
}

/* The dash pattern (pixels) of a style; returns its length. */
static size_t dash_pattern(dash_style d, double *out)
{
    const double *p = NULL;
    size_t n = 0;
    if (d == DASHED)
        p = DASH_DASHED, n = 2;
    else if (d == DASHDOT)
        p = DASH_DASHDOT, n = 4;
    else if (d == DOTTED)
        p = DASH_DOTTED, n = 2;
    for (size_t i = 0; i < n; i++)
        out[i] = p[i] * LINE_W;
    return n;
}

/* Pixel coordinates of series s into px, py (n each); NaN where a point
 * cannot be drawn. */
static void series_pixels(const plot_ctx *c, const plot_series *ps, double *px, double *py)
{
    for (size_t i = 0; i < ps->n; i++) {
        if (usable(ps->x[i], c->x.log) && usable(ps->y[i], c->y.log)) {
            px[i] = axis_pos(&c->x, ps->x[i]);
            py[i] = axis_pos(&c->y, ps->y[i]);
        } else {
            px[i] = py[i] = NAN;
        }
    }
}

/* Series s's points as circles of radius MARKER_R inside the axes,
 * antialiased by the distance to each pixel's centre, at alpha 0.5. */
#define MARKER_R 4.0
static void draw_markers(attn_image *img, const plot_ctx *c, const double *px,
                         const double *py, size_t n)
{
    const attn_rgb col = color_hex(0xff7f0e);
    for (size_t i = 0; i < n; i++) {
        if (isnan(px[i]))
            continue;
        for (long y = (long)floor(py[i] - MARKER_R - 1); y <= (long)ceil(py[i] + MARKER_R + 1); y++)
            for (long x = (long)floor(px[i] - MARKER_R - 1); x <= (long)ceil(px[i] + MARKER_R + 1);
                 x++) {
                if (x < c->ax0 || x >= c->ax0 + c->aw || y < c->ay0 || y >= c->ay0 + c->ah)
                    continue;
                double dx = (double)x + 0.5 - px[i], dy = (double)y + 0.5 - py[i];
                double cover = MARKER_R + 0.5 - sqrt(dx * dx + dy * dy);
                cover = cover < 0.0 ? 0.0 : cover > 1.0 ? 1.0 : cover;
                if (cover > 0.0)
                    canvas_blend(img, x, y, col, (unsigned)(cover * 128.0 + 0.5));
            }
    }
}

/* Every series as antialiased lines clipped to the axes, through a
 * coverage mask per series (or as circles: plot_figure.markers). */
static int draw_series(attn_image *img, plot_ctx *c, char *err, size_t errlen)
{
    const plot_figure *fig = c->fig;
    size_t nmax = 0;
    for (size_t s = 0; s < fig->nseries; s++)
        nmax = fig->series[s].n > nmax ? fig->series[s].n : nmax;
    size_t bytes;
    if (render_size_mul(nmax ? nmax : 1, 2 * sizeof(double), &bytes) < 0)
        return render_error(err, errlen, "plot: out of memory for %zu points", nmax);
    double *px = malloc(bytes);     /* (nmax,) x then (nmax,) y, pixels */
    if (px == NULL)
        return render_error(err, errlen, "plot: out of memory for %zu points", nmax);
    double *py = px + (nmax ? nmax : 1);
    canvas_mask mask;
    if (canvas_mask_init(&mask, (int)c->ax0, (int)c->ay0, (int)c->aw, (int)c->ah,
                         err, errlen) < 0) {
        free(px);
        return -1;
    }
    for (size_t s = 0; s < fig->nseries; s++) {
        const plot_series *ps = &fig->series[s];
        double dash[4];
        size_t ndash = dash_pattern(STYLES[s % NSTYLES].dash, dash);
        series_pixels(c, ps, px, py);
        if (fig->markers && fig->markers[s]) {
            draw_markers(img, c, px, py, ps->n);
            continue;
        }
        canvas_mask_clear(&mask);
        /* Each run of drawable points is one polyline. */
        for (size_t i = 0; i < ps->n;) {
            while (i < ps->n && isnan(px[i]))
                i++;
            size_t j = i;
            while (j < ps->n && !isnan(px[j]))
                j++;
            if (j - i >= 2)
                canvas_mask_polyline(&mask, px + i, py + i, j - i, LINE_W, dash, ndash);
            i = j;
        }
        canvas_mask_paint(&mask, img, color_hex(STYLES[s % NSTYLES].color));
    }
    canvas_mask_free(&mask);
    free(px);
    return 0;
}

/* How much of the data a box [x0, x1) × [y0, y1) would hide: points
 * sampled every 2 pixels along every line that fall inside it. */
static double box_badness(const plot_ctx *c, double x0, double y0, double x1, double y1)
{
    double bad = 0.0;
    for (size_t s = 0; s < c->fig->nseries; s++) {
        const plot_series *ps = &c->fig->series[s];
        double qx = NAN, qy = NAN;
        for (size_t i = 0; i < ps->n; i++) {
            if (!usable(ps->x[i], c->x.log) || !usable(ps->y[i], c->y.log)) {
                qx = qy = NAN;
                continue;
            }
            double rx = axis_pos(&c->x, ps->x[i]), ry = axis_pos(&c->y, ps->y[i]);
            double len = isnan(qx) ? 0.0 : sqrt((rx - qx) * (rx - qx) + (ry - qy) * (ry - qy));
            int steps = (int)fmin(ceil(len / 2.0), 10000.0);
            for (int k = 0; k <= steps; k++) {
                double f = steps ? (double)k / steps : 1.0;
                double sx = isnan(qx) ? rx : qx + (rx - qx) * f;
                double sy = isnan(qy) ? ry : qy + (ry - qy) * f;
                if (sx >= x0 && sx < x1 && sy >= y0 && sy < y1)
                    bad += 1.0;
            }
            qx = rx;
            qy = ry;
        }
    }
    return bad;
}

/* The legend: a box with a line sample and label per labelled series, at
 * the place (in matplotlib's order of preference) hiding the least data. */
static int draw_legend(attn_image *img, plot_ctx *c, char *err, size_t errlen)
{
    const plot_figure *fig = c->fig;
    size_t nlab = 0;
    double tw = 0.0;
    for (size_t s = 0; s < fig->nseries; s++)
        if (fig->series[s].label) {
            nlab++;
            tw = fmax(tw, text_width(c->font, FS_LEGEND, fig->series[s].label));
        }
    if (nlab == 0)
        return 0;

    /* Box size. */
    double row_h = text_line_height(c->font, FS_LEGEND) + 3.0;
    double bw = LEGEND_PAD * 2 + LEGEND_SAMPLE + LEGEND_TEXT_GAP + tw;
    double bh = LEGEND_PAD * 2 + row_h * (double)nlab - 3.0;

    /* Candidates: upper right, upper left, lower left, lower right,
     * (center) right, center left, lower center, upper center, center. */
    double l = c->ax0 + LEGEND_INSET, r = c->ax0 + c->aw - LEGEND_INSET - bw;
    double t = c->ay0 + LEGEND_INSET, b = c->ay0 + c->ah - LEGEND_INSET - bh;
    double mx = c->ax0 + (c->aw - bw) / 2.0, my = c->ay0 + (c->ah - bh) / 2.0;
    const double cand[][2] = {{r, t}, {l, t}, {l, b}, {r, b}, {r, my},
                              {l, my}, {mx, b}, {mx, t}, {mx, my}};
    double bx = r, by = t, best = INFINITY;
    for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++) {
        double bad = box_badness(c, cand[i][0], cand[i][1], cand[i][0] + bw, cand[i][1] + bh);
        if (bad < best) {
            best = bad;
            bx = cand[i][0];
            by = cand[i][1];
        }
    }

    /* Box: mostly opaque white, light grey border. */
    long x0 = (long)floor(bx), y0 = (long)floor(by);
    long x1 = x0 + (long)ceil(bw), y1 = y0 + (long)ceil(bh);
    for (long y = y0; y < y1; y++)
        for (long x = x0; x < x1; x++)
            canvas_blend(img, x, y, color_hex(0xffffff), 217);
    canvas_frame(img, x0, y0, x1, y1, color_hex(0xcccccc));

    /* Rows: a line sample in the series' style, then the label. */
    canvas_mask mask;
    if (canvas_mask_init(&mask, (int)x0, (int)y0, (int)(x1 - x0), (int)(y1 - y0),
                         err, errlen) < 0)
        return -1;
    double row = 0.0;
    for (size_t s = 0; s < fig->nseries; s++) {
        const plot_series *ps = &fig->series[s];
        if (!ps->label)
            continue;
        double cy = y0 + LEGEND_PAD + row * row_h + (row_h - 3.0) / 2.0;
        double sx[2] = {x0 + LEGEND_PAD, x0 + LEGEND_PAD + LEGEND_SAMPLE};
        double sy[2] = {floor(cy) + 0.5, floor(cy) + 0.5};
        double dash[4];
        size_t ndash = dash_pattern(STYLES[s % NSTYLES].dash, dash);
        canvas_mask_clear(&mask);
        canvas_mask_polyline(&mask, sx, sy, 2, LINE_W, dash, ndash);
        canvas_mask_paint(&mask, img, color_hex(STYLES[s % NSTYLES].color));
        text_draw(img, c->font, FS_LEGEND, ps->label,
                  x0 + LEGEND_PAD + LEGEND_SAMPLE + LEGEND_TEXT_GAP, floor(cy) + 0.5,
                  TEXT_LEFT, TEXT_MIDDLE, TEXT_HORIZONTAL, INK);
        row += 1.0;
    }
    canvas_mask_free(&mask);
    return 0;
}

/* Check the figure's series. */
static int check_figure(const plot_figure *fig, char *err, size_t errlen)
{
    if (fig == NULL)
        return render_error(err, errlen, "plot: no figure");
    if (fig->nseries > 0 && fig->series == NULL)
        return render_error(err, errlen, "plot: no series");
    for (size_t s = 0; s < fig->nseries; s++)
        if (fig->series[s].n > 0 && (fig->series[s].x == NULL || fig->series[s].y == NULL))
            return render_error(err, errlen, "plot: series %zu has no data", s + 1);
    if (fig->width < 0 || fig->height < 0 ||
        (fig->width > 0 && (fig->width < PLOT_MIN_W || fig->width > CANVAS_MAX_SIDE)) ||
        (fig->height > 0 && (fig->height < PLOT_MIN_H || fig->height > CANVAS_MAX_SIDE)))
        return render_error(err, errlen, "plot: invalid size %d x %d (from %d x %d to %d a side)",
                            fig->width, fig->height, PLOT_MIN_W, PLOT_MIN_H, CANVAS_MAX_SIDE);
    return 0;
}

int plot_draw(attn_image *img, const plot_figure *fig, char *err, size_t errlen)
{
    img->w = img->h = 0;
    img->rgb = NULL;
    if (check_figure(fig, err, errlen) < 0)
        return -1;
    plot_ctx c;
    memset(&c, 0, sizeof c);
    c.fig = fig;
    c.w = fig->width ? fig->width : PLOT_W;
    c.h = fig->height ? fig->height : PLOT_H;
    if (fig->font != NULL) {
        c.font = fig->font;
    } else if (text_font_open(&c.font, err, errlen) < 0) {
        return -1;
    }
    int rc = -1;

    /* Lay out, then draw back to front: grid, lines, frame, legend. */
    if (layout(&c, err, errlen) < 0 || image_alloc(img, c.w, c.h, err, errlen) < 0)
        goto done;
    draw_grid(img, &c);
    if (draw_series(img, &c, err, errlen) < 0) {
        image_free(img);
        goto done;
    }
    draw_axes(img, &c);
    if (draw_legend(img, &c, err, errlen) < 0) {
        image_free(img);
        goto done;
    }
    if (text_font_failed(c.font)) {
        image_free(img);
        render_error(err, errlen, "plot: out of memory for text");
        goto done;
    }
    rc = 0;
done:
    if (fig->font == NULL)
        text_font_close(c.font);
    return rc;
}
