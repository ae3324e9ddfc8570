/* term.c — matrices for a person at a terminal (see term.h).
 *
 * term_heatmap draws with 24-bit colour SGR escapes and U+2580 UPPER HALF
 * BLOCK: the top matrix row of a text line is the character's foreground,
 * the bottom row its background, so one text line shows two matrix rows.
 * A half-block is about as wide as it is tall, so an unpooled map keeps
 * the matrix's proportions. Every map line ends with a reset; the last
 * line of an odd row count has no background escape (terminal default).
 * Without opts, or with opts->cmap NULL, the colormap is Reds (d2l's
 * show_heatmaps default).
 *
 * Layout, top to bottom:
 *   ruler    column indices every 10 cells (5 on maps of up to 20), each
 *            starting above its column; or the column labels, when every
 *            one is a single character (the last may be longer)
 *   map      a gutter, then one character per cell; the gutter holds the
 *            first matrix row of the line, or with row labels (and no row
 *            pooling) "top/bottom", the labels of the line's two rows,
 *            right-aligned, CJK counted two columns wide, control
 *            characters shown as '?'
 *   legend   "lo ███ mid ███ hi  name": a 30-character colour bar from
 *            vmin to vmax with the middle value between its halves, then
 *            "each cell (half a character): R×C entries averaged" when
 *            the map is pooled
 *
 * Fitting. When the matrix has more rows than 2·max_lines or more columns
 * than the width left of the gutter, blocks of entries are averaged into
 * one cell. The two axes get their own factor, each the smallest that
 * fits (a 10000×512 matrix in 80×32 becomes 64×74 cells of 157×7 entries,
 * not a 4-column strip); the ruler and the gutter give the real indices,
 * and the legend says how many entries each cell averages. NaN entries
 * are left out of a block's mean; a cell with nothing but NaN is drawn as
 * t = 0.
 *
 * No memory is allocated: every cell's mean is computed when the cell is
 * printed. The cells partition the matrix, so a whole map reads each entry
 * once, and huge matrices cost one pass.
 *
 * term_matrix follows torch/_tensor_str.py for 2-D tensors: fixed decimals,
 * one width for every shown number, ", " between numbers, " ..." standing
 * for the elided columns and a "...," line for the elided rows.
 */
#include "term.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "torch_str.h"
#include "utf8.h"
#include "checked.h"
#include "fmath.h"
#include "os.h"

/* ---- options and terminal queries ------------------------------------- */

int term_parse_color(const char *s, term_color_mode *mode)
{
    static const struct {
        const char *word;
        term_color_mode mode;
    } words[] = {
        {"auto", TERM_COLOR_AUTO},
        {"always", TERM_COLOR_ALWAYS},
        {"never", TERM_COLOR_NEVER},
    };

    if (!s)
        return -1;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        if (strcmp(s, words[i].word) == 0) {
            if (mode)
                *mode = words[i].mode;
            return 0;
        }
    }
    return -1;
}

int term_use_color(term_color_mode mode, FILE *f)
{
    /* An explicit choice wins over NO_COLOR (no-color.org: "user-level
     * configuration files and per-instance command-line arguments should
     * override"). */
    if (mode == TERM_COLOR_ALWAYS)
        return 1;
    if (mode != TERM_COLOR_AUTO)
        return 0;

    if (!f)
        return 0;
    int fd = fileno(f);
    if (fd < 0 || !isatty(fd))
        return 0;
    const char *no_color = getenv("NO_COLOR");
    if (no_color && no_color[0] != '\0')
        return 0;
    const char *term = getenv("TERM");
    if (term && strcmp(term, "dumb") == 0)
        return 0;
    return 1;
}

int term_width(FILE *f)
{
    const char *s = getenv("COLUMNS");
    if (s && s[0] != '\0') {
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (errno == 0 && end != s && *end == '\0' && v > 0 && v <= INT_MAX)
            return (int)v;
    }

    int columns = os_term_columns(f);
    return columns > 0 ? columns : 80;
}

/* ---- UTF-8 labels ------------------------------------------------------ */

/* Code points a label must not send to the terminal: C0 and C1 controls
 * (ESC would start an escape sequence), DEL, and invisible format
 * characters that reorder or hide text (bidi overrides, zero-width
 * spaces, BOM). They are shown as '?'. */
static int cp_unsafe(unsigned long cp)
{
    return cp == UTF8_INVALID || cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) ||
           (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202E) ||
           (cp >= 0x2060 && cp <= 0x206F) || cp == 0xFEFF;
}

/* Display columns of a safe code point: 2 for East Asian wide characters
 * (a simple table, enough for CJK tokens), 0 for combining diacritics,
 * else 1. */
static int cp_width(unsigned long cp)
{
    if (cp >= 0x0300 && cp <= 0x036F)
        return 0;
    if ((cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF) ||
        (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) ||
        (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF60) ||
        (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x20000 && cp <= 0x3FFFD))
        return 2;
    return 1;
}

size_t term_text_columns(const char *s)
{
    size_t w = 0;
    while (*s) {
        unsigned long cp = utf8_next(&s);
        w += cp_unsafe(cp) ? 1 : (size_t)cp_width(cp);
    }
    return w;
}

/* Chinese punctuation that never starts a line: ，。、；：！？）」』》 */
static int closing_punct(unsigned long cp)
{
    static const unsigned long marks[] = {0xFF0C, 0x3002, 0x3001, 0xFF1B, 0xFF1A, 0xFF01,
                                          0xFF1F, 0xFF09, 0x300D, 0x300F, 0x300B, 0x201D};
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++)
        if (cp == marks[i])
            return 1;
    return 0;
}

/* One line of text (up to '\n' or the end) printed in lines of at most
 * width columns: broken at a space (dropped) or before a wide character
 * (Chinese has no spaces between its words), a run longer than a line
 * left whole. Returns the end of the line. */
static const char *put_wrapped_line(FILE *f, const char *p, size_t width)
{
    while (*p && *p != '\n') {
        const char *q = p, *cut = NULL, *next = NULL;
        size_t cols = 0;
        while (*q && *q != '\n') {
            const char *at = q;
            unsigned long cp = utf8_next(&q);
            int w = cp_unsafe(cp) ? 1 : cp_width(cp);
            if (cp == ' ') {
                if (cols <= width)
                    cut = at, next = q; /* the space is dropped */
            } else if (w == 2 && at > p && cols <= width && !closing_punct(cp)) {
                cut = at, next = at;   /* before a wide character */
            }
            cols += (size_t)w;
            if (cols > width && cut)
                break;
        }
        if (cols <= width || !cut)
            cut = next = q; /* the rest fits, or cannot be broken */
        fprintf(f, "%.*s\n", (int)(cut - p), p);
        p = next;
    }
    return p;
}

void term_put_wrapped(FILE *f, const char *text, size_t width)
{
    const char *p = text;
    while (*p) {
        const char *end = put_wrapped_line(f, p, width);
        if (end == p) /* an empty line */
            fputc('\n', f);
        p = *end ? end + 1 : end;
    }
}

void term_put_field(FILE *f, const char *s, int width, int right)
{
    const size_t w = term_text_columns(s);
    const int pad = w < (size_t)width ? width - (int)w : 0;
    if (right)
        fprintf(f, "%*s%s", pad, "", s);
    else
        fprintf(f, "%s%*s", s, pad, "");
}

void term_put_columns(FILE *f, int first, const char *const *names, size_t n, int width)
{
    term_put_field(f, "", first, 0);
    for (size_t k = 0; k < n; k++) {
        fputc(' ', f);
        term_put_field(f, names[k], width, 1);
    }
    fputc('\n', f);
}

/* Print label s in at most maxw columns (maxw >= 1): unsafe code points
 * become '?', and a label that is too wide is cut at a character boundary
 * and ends with "…". Returns the columns printed; with f NULL only
 * measures. */
static size_t put_label(FILE *f, const char *s, size_t maxw)
{
    size_t total = term_text_columns(s);
    size_t room = total <= maxw ? maxw : maxw - 1; /* keep 1 for "…" */
    const char *p = s;
    size_t w = 0;

    while (*p) {
        const char *start = p;
        unsigned long cp = utf8_next(&p);
        int unsafe = cp_unsafe(cp);
        size_t cw = unsafe ? 1 : (size_t)cp_width(cp);
        if (w + cw > room)
            break;
        if (f && unsafe)
            fputc('?', f);
        else if (f)
            fwrite(start, 1, (size_t)(p - start), f);
        w += cw;
    }
    if (total > maxw) {
        if (f)
            fputs("\xE2\x80\xA6", f); /* U+2026 HORIZONTAL ELLIPSIS */
        w++;
    }
    return w;
}

static void put_spaces(FILE *f, size_t n)
{
    for (; n > 0; n--)
        fputc(' ', f);
}

/* Decimal digits of v. */
static size_t count_digits(size_t v)
{
    size_t n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

/* ---- heatmap ------------------------------------------------------------ */

#define HALF_BLOCK "\xE2\x96\x80" /* U+2580 UPPER HALF BLOCK */
#define FULL_BLOCK "\xE2\x96\x88" /* U+2588 FULL BLOCK */
#define SGR_RESET "\x1b[0m"

#define DEFAULT_MAX_LINES 32
#define LEGEND_BAR 30          /* colour bar characters, both halves */
#define RULER_STEP 10          /* a column index every RULER_STEP cells, */
#define RULER_STEP_SMALL 5     /* or every 5 for maps up to 20 columns */
#define COL_LABEL_MAX 16       /* columns the last column's label may take */

/* Where everything goes; computed once by heat_fit. */
typedef struct heat_geom {
    size_t rows, cols;  /* the matrix */
    size_t pr, pc;      /* entries per cell along rows / columns (≥ 1) */
    size_t prn, pcn;    /* cells: ceil(rows / pr), ceil(cols / pc) */
    size_t nlines;      /* text lines of the map: ceil(prn / 2) */
    size_t width;       /* text columns available in total */
    size_t avail;       /* columns available right of the gutter (≥ 1) */
    size_t gutter;      /* columns of the row indices / labels, before the
                           one space that separates them from the map */
    size_t labcap;      /* columns one row label may take */
    int row_labels;     /* gutter shows labels (else indices) */
} heat_geom;

/* The half-open range of matrix indices covered by cell k along an axis
 * of n entries, p entries per cell. */
static void cell_range(size_t k, size_t p, size_t n, size_t *lo, size_t *hi)
{
    *lo = k * p; /* k < ceil(n / p), so k·p < n: no overflow */
    *hi = (n - *lo > p) ? *lo + p : n;
}

/* Row labels shown for text line k: the top row's, then "/" and the
 * bottom row's when the line has one. Returns the gutter text's width. */
static size_t gutter_label_width(const heat_geom *g, const char *const *labels,
                                 size_t k)
{
    size_t top = 2 * k, w;
    w = put_label(NULL, labels[top] ? labels[top] : "", g->labcap);
    if (top + 1 < g->rows)
        w += 1 + put_label(NULL, labels[top + 1] ? labels[top + 1] : "",
                           g->labcap);
    return w;
}

/* Decide pooling factors, gutter and widths. */
static void heat_fit(heat_geom *g, size_t rows, size_t cols,
                     const term_heatmap_opts *o, FILE *f)
{
    size_t max_lines = o->max_lines > 0 ? (size_t)o->max_lines : DEFAULT_MAX_LINES;
    int w = o->max_width > 0 ? o->max_width : term_width(f);

    memset(g, 0, sizeof *g);
    g->rows = rows;
    g->cols = cols;
    g->width = w > 0 ? (size_t)w : 80;

    /* Rows first: 2 per line. max_lines ≤ INT_MAX, so 2·max_lines fits. */
    g->pr = ceil_div(rows, 2 * max_lines);
    g->prn = ceil_div(rows, g->pr);
    g->nlines = ceil_div(g->prn, 2);

    /* Gutter: row labels when given and every row has its own cell,
     * else the first matrix row of each line. */
    g->row_labels = o->row_labels != NULL && g->pr == 1;
    if (g->row_labels) {
        /* Labels take at most a third of the width, half each for the
         * top and bottom row's label. */
        size_t third = g->width / 3;
        g->labcap = third > 6 ? (third - 2) / 2 : 2;
        for (size_t k = 0; k < g->nlines; k++) {
            size_t lw = gutter_label_width(g, o->row_labels, k);
            if (lw > g->gutter)
                g->gutter = lw;
        }
    } else {
        g->gutter = count_digits(2 * (g->nlines - 1) * g->pr);
    }

    /* The map starts one space right of the gutter. */
    g->avail = g->width > g->gutter + 1 ? g->width - g->gutter - 1 : 1;
    g->pc = ceil_div(cols, g->avail);
    g->pcn = ceil_div(cols, g->pc);
}

/* Minimum and maximum of the finite entries; 0, 0 when there are none. */
static void data_range(const float *m, size_t n, double *lo, double *hi)
{
    double a = INFINITY, b = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        double v = m[i];
        if (isfinite(v)) {
            if (v < a)
                a = v;
            if (v > b)
                b = v;
        }
    }
    if (a > b)
        a = b = 0.0;
    *lo = a;
    *hi = b;
}

/* Mean of the entries of cell (br, bc), NaN entries left out; NaN when
 * the cell has nothing else. */
static double cell_mean(const float *m, const heat_geom *g, size_t br, size_t bc)
{
    size_t r0, r1, c0, c1, n = 0;
    double sum = 0.0;

    cell_range(br, g->pr, g->rows, &r0, &r1);
    cell_range(bc, g->pc, g->cols, &c0, &c1);
    for (size_t i = r0; i < r1; i++) {
        const float *row = m + i * g->cols; /* i·cols < rows·cols, checked */
        for (size_t j = c0; j < c1; j++) {
            if (!isnan(row[j])) {
                sum += row[j];
                n++;
            }
        }
    }
    return n ? sum / (double)n : NAN;
}

/* The colour of value v on the scale [vmin, vmax]. */
static attn_rgb value_color(const attn_cmap *cmap, double v, double vmin, double vmax)
{
    double t;
    if (isnan(v))
        t = 0.0;
    else if (vmax == vmin)
        t = 0.5;
    else
        t = (v - vmin) / (vmax - vmin);
    if (isnan(t) || t < 0.0) /* NaN: e.g. an infinite vmin */
        t = 0.0;
    else if (t > 1.0)
        t = 1.0;
    return cmap_color(cmap, t);
}

static int rgb_equal(attn_rgb a, attn_rgb b)
{
    return a.r == b.r && a.g == b.g && a.b == b.b;
}

/* 38 → foreground, 48 → background. */
static void put_sgr_rgb(FILE *f, int which, attn_rgb c)
{
    fprintf(f, "\x1b[%d;2;%u;%u;%um", which, (unsigned)c.r, (unsigned)c.g,
            (unsigned)c.b);
}

/* Column labels go on the ruler only when every one sits right above its
 * own column: all are at most one character wide (character-level tokens),
 * except the last, which may run on to the right. Longer labels on
 * one-character columns could only be shown thinned out, which reads as
 * if they labelled the columns after them; the index ruler is used then. */
static size_t col_label_room(const heat_geom *g, size_t c)
{
    size_t room = g->avail - c; /* c < pcn ≤ avail */
    if (c + 1 < g->pcn)
        return 1;
    return room < COL_LABEL_MAX ? room : COL_LABEL_MAX;
}

static int col_labels_fit(const heat_geom *g, const char *const *labels)
{
    for (size_t c = 0; c < g->pcn; c++)
        if (term_text_columns(labels[c] ? labels[c] : "") > col_label_room(g, c))
            return 0;
    return 1;
}

static void put_label_ruler(FILE *f, const heat_geom *g, const char *const *labels)
{
    put_spaces(f, g->gutter + 1);
    for (size_t c = 0; c < g->pcn; c++) {
        const char *text = labels[c] ? labels[c] : "";
        if (put_label(NULL, text, 1) == 0)
            fputc(' ', f); /* empty label (or only combining marks) */
        else
            put_label(f, text, col_label_room(g, c));
    }
    fputc('\n', f);
}

/* The first matrix column of every step-th cell (RULER_STEP, or
 * RULER_STEP_SMALL on narrow maps), starting right above it; a number
 * that would touch the previous one or run past the available width is
 * left out. */
static void put_index_ruler(FILE *f, const heat_geom *g)
{
    size_t written = 0; /* columns printed right of the gutter */
    size_t step = g->pcn <= 2 * RULER_STEP ? RULER_STEP_SMALL : RULER_STEP;

    put_spaces(f, g->gutter + 1);
    for (size_t c = 0; c < g->pcn; c += step) {
        char num[32];
        size_t tw = (size_t)snprintf(num, sizeof num, "%zu", c * g->pc);
        if ((c > 0 && c <= written) || tw > g->avail - c)
            continue;
        put_spaces(f, c - written);
        fputs(num, f);
        written = c + tw;
    }
    fputc('\n', f);
}

/* The gutter of text line k, right-aligned, and the space after it. */
static void put_gutter(FILE *f, const heat_geom *g, const char *const *labels,
                       size_t k)
{
    if (g->row_labels) {
        size_t top = 2 * k;
        put_spaces(f, g->gutter - gutter_label_width(g, labels, k));
        put_label(f, labels[top] ? labels[top] : "", g->labcap);
        if (top + 1 < g->rows) {
            fputc('/', f);
            put_label(f, labels[top + 1] ? labels[top + 1] : "", g->labcap);
        }
    } else {
        fprintf(f, "%*zu", (int)g->gutter, 2 * k * g->pr);
    }
    fputc(' ', f);
}

/* One text line of the map: cells of rows 2k (foreground) and 2k + 1
 * (background, when there is one). An escape is written only when the
 * colour differs from the cell to the left. */
static void put_map_line(FILE *f, const float *m, const heat_geom *g,
                         const attn_cmap *cmap, double vmin, double vmax, size_t k)
{
    size_t top = 2 * k, bot = 2 * k + 1;
    int has_bot = bot < g->prn;
    attn_rgb fg = {0, 0, 0}, bg = {0, 0, 0};

    for (size_t c = 0; c < g->pcn; c++) {
        attn_rgb t = value_color(cmap, cell_mean(m, g, top, c), vmin, vmax);
        if (c == 0 || !rgb_equal(t, fg))
            put_sgr_rgb(f, 38, t);
        fg = t;
        if (has_bot) {
            attn_rgb b = value_color(cmap, cell_mean(m, g, bot, c), vmin, vmax);
            if (c == 0 || !rgb_equal(b, bg))
                put_sgr_rgb(f, 48, b);
            bg = b;
        }
        fputs(HALF_BLOCK, f);
    }
    fputs(SGR_RESET "\n", f);
}

/* A legend number: decimals chosen from the scale's range so that the
 * three numbers differ (2 for a range from 1 to 10, one more per decade
 * below, none from 100 up); %.4g for very small ranges and huge values,
 * %g for infinities. "-0.00" is printed as "0.00". */
static void fmt_legend(char *buf, size_t n, double v, double range)
{
    double a = fabs(range);
    int d = 2;

    if (!isfinite(v) || !isfinite(a)) {
        snprintf(buf, n, "%g", v);
        return;
    }
    if (a == 0.0)
        a = fabs(v);
    if (a > 0.0) {
        double e = floor(fm_log10(a));
        d = e >= 2.0 ? 0 : (int)(2.0 - e);
    }
    if (d > 6 || fabs(v) >= 1e7) {
        snprintf(buf, n, "%.4g", v);
        return;
    }
    snprintf(buf, n, "%.*f", d, v);
    if (buf[0] == '-' && strspn(buf + 1, "0.") == strlen(buf + 1))
        memmove(buf, buf + 1, strlen(buf));
}

/* Colour bar segment: characters i0..i1-1 of n along the scale. */
static void put_bar(FILE *f, const attn_cmap *cmap, size_t i0, size_t i1, size_t n)
{
    for (size_t i = i0; i < i1; i++) {
        double t = n > 1 ? (double)i / (double)(n - 1) : 0.5;
        put_sgr_rgb(f, 38, cmap_color(cmap, t));
        fputs(FULL_BLOCK, f);
    }
    fputs(SGR_RESET, f);
}

/* "lo ███ mid ███ hi  name", then the pooling note when cells average
 * blocks. The bar shrinks (and the name goes) when the width is short. */
static void put_legend(FILE *f, const heat_geom *g, const attn_cmap *cmap,
                       double vmin, double vmax)
{
    char lo[48], mid[48], hi[48];
    const char *name = cmap_name(cmap);
    double range = vmax - vmin;

    fmt_legend(lo, sizeof lo, vmin, range);
    fmt_legend(mid, sizeof mid, vmin + range / 2.0, range);
    fmt_legend(hi, sizeof hi, vmax, range);
    if (!name)
        name = "";

    /* Fixed part: three numbers and four single spaces around the bars. */
    size_t fixed = strlen(lo) + strlen(mid) + strlen(hi) + 4;
    size_t with_name = fixed + 2 + strlen(name);
    size_t half = LEGEND_BAR / 2;
    int show_name = 1;
    if (with_name + 2 * half > g->width) {
        size_t room = g->width > with_name ? g->width - with_name : 0;
        if (room / 2 >= 4) {
            half = room / 2;
        } else {
            show_name = 0;
            room = g->width > fixed ? g->width - fixed : 0;
            half = room / 2 >= 1 ? (room / 2 < half ? room / 2 : half) : 1;
        }
    }

    fprintf(f, "%s ", lo);
    put_bar(f, cmap, 0, half, 2 * half);
    fprintf(f, " %s ", mid);
    put_bar(f, cmap, half, 2 * half, 2 * half);
    fprintf(f, " %s", hi);
    if (show_name && name[0])
        fprintf(f, "  %s", name);
    fputc('\n', f);

    if (g->pr > 1 || g->pc > 1) {
        char note[160];
        snprintf(note, sizeof note,
                 "each cell (half a character): %zu\xC3\x97%zu entries averaged",
                 g->pr, g->pc);
        if (term_text_columns(note) > g->width)
            snprintf(note, sizeof note, "cells: %zu\xC3\x97%zu entries averaged",
                     g->pr, g->pc);
        fprintf(f, "%s\n", note);
    }
}

void term_heatmap(FILE *f, const float *m, size_t rows, size_t cols,
                  const term_heatmap_opts *opts)
{
    term_heatmap_opts o;
    heat_geom g;

    if (!f)
        return;
    if (rows == 0 || cols == 0 || !m) {
        fprintf(f, "(empty matrix: %zu\xC3\x97%zu)\n", rows, cols);
        return;
    }
    if (rows > SIZE_MAX / cols) {
        fprintf(f, "(matrix too large: %zu\xC3\x97%zu)\n", rows, cols);
        return;
    }

    if (opts) {
        o = *opts;
    } else {
        memset(&o, 0, sizeof o);
        o.vmin = o.vmax = NAN;
    }
    if (!o.cmap)
        o.cmap = cmap_find("Reds"); /* d2l's show_heatmaps default */
    if (!o.cmap) {
        fputs("(no colormap)\n", f);
        return;
    }

    /* The colour scale: given ends, or the data's. */
    double vmin = o.vmin;
    double vmax = o.vmax;
    if (isnan(vmin) || isnan(vmax)) {
        double lo, hi;
        data_range(m, rows * cols, &lo, &hi);
        if (isnan(vmin))
            vmin = lo;
        if (isnan(vmax))
            vmax = hi;
    }

    heat_fit(&g, rows, cols, &o, f);

    /* Ruler: column labels when each column has its own cell and the
     * labels fit above their columns, else column indices. */
    if (o.col_labels && g.pc == 1 && col_labels_fit(&g, o.col_labels))
        put_label_ruler(f, &g, o.col_labels);
    else
        put_index_ruler(f, &g);

    for (size_t k = 0; k < g.nlines; k++) {
        put_gutter(f, &g, o.row_labels, k);
        put_map_line(f, m, &g, o.cmap, vmin, vmax, k);
    }

    put_legend(f, &g, o.cmap, vmin, vmax);
}

/* ---- numbers ------------------------------------------------------------ */

#define MATRIX_MAX_PRECISION 30
#define NUM_BUF 96 /* "-" + 39 digits of FLT_MAX + "." + 30 decimals + NUL */

/* Whether an axis of n ≥ 1 entries is summarised with e entries each end:
 * n > 2e + 1, written so that 2e cannot overflow. */
static int axis_elided(size_t n, size_t e)
{
    return e <= (n - 1) / 2 && n - 2 * e > 1;
}

/* The shown index after i (skipping the elided middle). */
static size_t axis_next(size_t i, size_t n, size_t e, int elided)
{
    i++;
    if (elided && i == e)
        i = n - e;
    return i;
}

/* Before entry i of an axis of n (not the first): sep, and where the
 * elided middle was, gap after it (numpy's "...," between the edges). */
static void axis_sep(FILE *f, size_t i, size_t n, size_t e, int elided, const char *sep,
                     const char *gap)
{
    if (i == 0)
        return;
    fputs(sep, f);
    if (elided && i == n - e)
        fputs(gap, f);
}

/* v with `precision` decimals; NaN as "nan" whatever its sign bit. */
static size_t fmt_number(char *buf, float v, int precision)
{
    int k;
    if (isnan(v))
        k = snprintf(buf, NUM_BUF, "nan");
    else
        k = snprintf(buf, NUM_BUF, "%.*f", precision, (double)v);
    if (k < 0) {
        buf[0] = '\0';
        return 0;
    }
    return (size_t)k < NUM_BUF ? (size_t)k : NUM_BUF - 1;
}

void term_matrix(FILE *f, const float *m, size_t rows, size_t cols,
                 int precision, size_t edgeitems)
{
    char buf[NUM_BUF];

    if (!f)
        return;
    if (rows == 0 || cols == 0 || !m) {
        fputs("[]\n", f);
        return;
    }
    if (rows > SIZE_MAX / cols) {
        fprintf(f, "(matrix too large: %zu\xC3\x97%zu)\n", rows, cols);
        return;
    }
    if (precision < 0)
        precision = 4;
    if (precision > MATRIX_MAX_PRECISION)
        precision = MATRIX_MAX_PRECISION;

    int relided = axis_elided(rows, edgeitems);
    int celided = axis_elided(cols, edgeitems);
    if (relided && edgeitems == 0) { /* nothing to show but the dots */
        fputs("[...]\n", f);
        return;
    }

    /* Pass 1: the widest shown number. */
    size_t width = 0;
    if (!(celided && edgeitems == 0)) {
        for (size_t i = 0; i < rows; i = axis_next(i, rows, edgeitems, relided))
            for (size_t j = 0; j < cols; j = axis_next(j, cols, edgeitems, celided)) {
                size_t len = fmt_number(buf, m[i * cols + j], precision);
                if (len > width)
                    width = len;
            }
    }

    /* Pass 2: print, right-aligned to that width. */
    fputc('[', f);
    for (size_t i = 0; i < rows; i = axis_next(i, rows, edgeitems, relided)) {
        axis_sep(f, i, rows, edgeitems, relided, ",\n ", "...,\n ");
        if (celided && edgeitems == 0) {
            fputs("[...]", f);
            continue;
        }
        fputc('[', f);
        for (size_t j = 0; j < cols; j = axis_next(j, cols, edgeitems, celided)) {
            axis_sep(f, j, cols, edgeitems, celided, ", ", " ..., ");
            size_t len = fmt_number(buf, m[i * cols + j], precision);
            put_spaces(f, width - len);
            fputs(buf, f);
        }
        fputc(']', f);
    }
    fputs("]\n", f);
}

/* ---- labelled tables ------------------------------------------------------ */

/* Black or white text on background c, whichever contrasts more (the
 * background's luma, ITU-R BT.709 weights). */
static attn_rgb text_on(attn_rgb c)
{
    double y = 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b;
    return y < 128.0 ? (attn_rgb){255, 255, 255} : (attn_rgb){0, 0, 0};
}

/* The columns of each table column (its label's or its widest number's),
 * and the row labels' gutter. Returns the table's width. */
static size_t table_widths(size_t *w, size_t *gutter, const float *m, size_t rows, size_t cols,
                           const term_table_opts *o)
{
    char buf[NUM_BUF];
    size_t total;
    *gutter = 0;
    for (size_t i = 0; i < rows; i++) {
        size_t lw = put_label(NULL, o->row_labels[i] ? o->row_labels[i] : "", TERM_TABLE_LABEL);
        *gutter = lw > *gutter ? lw : *gutter;
    }
    total = *gutter;
    for (size_t j = 0; j < cols; j++) {
        w[j] = put_label(NULL, o->col_labels[j] ? o->col_labels[j] : "", TERM_TABLE_LABEL);
        for (size_t i = 0; i < rows; i++) {
            size_t len = fmt_number(buf, m[i * cols + j], o->precision);
            w[j] = len > w[j] ? len : w[j];
        }
        total += 1 + w[j];
    }
    return total;
}

/* Row i: its label, then each number (on its colour, with the space
 * before it, so that the cells touch). */
static void table_row(FILE *f, const float *m, size_t i, size_t cols, const size_t *w,
                      size_t gutter, const term_table_opts *o, const attn_cmap *cmap)
{
    char buf[NUM_BUF];
    const char *lab = o->row_labels[i] ? o->row_labels[i] : "";
    put_spaces(f, gutter - put_label(NULL, lab, TERM_TABLE_LABEL));
    put_label(f, lab, TERM_TABLE_LABEL);
    for (size_t j = 0; j < cols; j++) {
        const float v = m[i * cols + j];
        size_t len = fmt_number(buf, v, o->precision);
        if (o->color) {
            attn_rgb bg = value_color(cmap, (double)v, o->vmin, o->vmax);
            put_sgr_rgb(f, 48, bg);
            put_sgr_rgb(f, 38, text_on(bg));
        }
        put_spaces(f, 1 + w[j] - len);
        fputs(buf, f);
        if (o->color)
            fputs(SGR_RESET, f);
    }
    fputc('\n', f);
}

int term_table(FILE *f, const float *m, size_t rows, size_t cols, const term_table_opts *o)
{
    const attn_cmap *cmap = o->cmap ? o->cmap : cmap_find("Reds");
    int mw = o->max_width > 0 ? o->max_width : term_width(f);
    term_table_opts t = *o;
    size_t *w, gutter;
    if (!f || !m || !o->row_labels || !o->col_labels || rows == 0 || cols == 0 ||
        cols > SIZE_MAX / sizeof *w || !(w = malloc(cols * sizeof *w)))
        return -1;
    t.precision = o->precision < 0 ? 0 : o->precision > 9 ? 9 : o->precision;
    if (table_widths(w, &gutter, m, rows, cols, &t) > (size_t)(mw > 0 ? mw : 80)) {
        free(w);
        return -1;
    }
    put_spaces(f, gutter);
    for (size_t j = 0; j < cols; j++) {
        const char *lab = t.col_labels[j] ? t.col_labels[j] : "";
        put_spaces(f, 1 + w[j] - put_label(NULL, lab, TERM_TABLE_LABEL));
        put_label(f, lab, TERM_TABLE_LABEL);
    }
    fputc('\n', f);
    for (size_t i = 0; i < rows; i++)
        table_row(f, m, i, cols, w, gutter, &t, cmap);
    free(w);
    return 0;
}

void term_tensor3(FILE *f, const float *t, const size_t shape[3], int precision,
                  const char *suffix)
{
    const torch_str_opts o = {0, suffix, precision, 1};
    if (!f)
        return;
    if (!t || torch_str(f, t, shape, 3, &o) != 0)
        fputs("tensor([])", f);
    fputc('\n', f);
}
