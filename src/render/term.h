/* term.h — matrices for a person at a terminal: a colour heatmap (24-bit
 * colour, upper half blocks, two matrix rows per text line) with a numeric
 * legend, or aligned numbers in PyTorch's print style.
 *
 * Matrices are (rows, cols) row-major float arrays. Nothing here allocates
 * memory that outlives a call; write errors are left in the stream's error
 * flag for the caller (main) to notice.
 */
#ifndef ATTN_TERM_H
#define ATTN_TERM_H

#include <stdio.h>
#include <stddef.h>

#include "render.h"

typedef enum term_color_mode {
    TERM_COLOR_AUTO,
    TERM_COLOR_ALWAYS,
    TERM_COLOR_NEVER
} term_color_mode;

/* "auto" | "always" | "never" → mode; -1 when s is none of them. */
int term_parse_color(const char *s, term_color_mode *mode);

/* Whether to print colour on f: always → yes, never → no; auto → yes when f
 * is a terminal, NO_COLOR is unset or empty, and TERM is not "dumb". */
int term_use_color(term_color_mode mode, FILE *f);

/* Terminal columns of UTF-8 text s as attn prints it: 2 for East Asian
 * wide characters (CJK, Hangul, full-width forms), 0 for combining
 * diacritics, 1 for everything else (an unsafe or malformed code point
 * is printed as one replacement character). */
size_t term_text_columns(const char *s);

/* text on f in lines of at most width columns, each of its lines broken
 * at spaces, or between Chinese characters, which have no spaces between
 * words; every line ends with '\n'. */
void term_put_wrapped(FILE *f, const char *text, size_t width);

/* s on f in a field of width terminal columns (term_text_columns): after
 * the padding spaces when right is nonzero, else before them. A table's
 * words in any language line up, where printf's %-20s counts bytes. */
void term_put_field(FILE *f, const char *s, int width, int right);

/* A table's header line: `first` blank columns (the rows' names), then
 * the n names, each after a space and right-aligned in `width` columns
 * (term_put_field), then a newline. */
void term_put_columns(FILE *f, int first, const char *const *names, size_t n, int width);

/* Text columns of the terminal behind f: $COLUMNS if it is a number, else
 * the window size, else 80. */
int term_width(FILE *f);

typedef struct term_heatmap_opts {
    const attn_cmap *cmap;
    double vmin, vmax;                /* NaN: min / max of the matrix */
    int max_width;                    /* text columns available (0: term_width) */
    int max_lines;                    /* text lines for the matrix (0: 32) */
    const char *const *row_labels;    /* optional, one per row */
    const char *const *col_labels;    /* optional, one per column */
} term_heatmap_opts;

/* Print m as a colour heatmap: one character per column, two rows per line
 * (U+2580 with the top row as foreground, the bottom row as background).
 * When the matrix is larger than the space, blocks of entries are averaged
 * (and the legend says so). Row indices on the left, a column ruler on top,
 * and below a legend: a colour bar with the numbers at its ends and middle. */
void term_heatmap(FILE *f, const float *m, size_t rows, size_t cols,
                  const term_heatmap_opts *opts);

/* A small matrix as a labelled table, e.g. attention weights between two
 * sentences:
 *
 *             the   big   red   dog <eos>
 *        le  0.98  0.01  0.01  0.00  0.00
 *     grand  0.01  0.97  0.00  0.02  0.00
 *
 * each column right-aligned under its label, each row after its label
 * (right-aligned); labels are cut to TERM_TABLE_LABEL columns ("…"),
 * unsafe characters shown as '?', CJK counted two columns wide. With
 * color, each number sits on its cell's colour (cmap, NULL: Reds, on the
 * scale vmin … vmax), in black or white, whichever reads better: a
 * heatmap that keeps its numbers. Returns 0, or -1 without printing
 * anything when the table is wider than max_width columns (0:
 * term_width(f)) or a label list is missing: the caller shows the matrix
 * another way (term_heatmap, term_matrix). */
#define TERM_TABLE_LABEL 12
typedef struct term_table_opts {
    const char *const *row_labels;    /* (rows,) */
    const char *const *col_labels;    /* (cols,) */
    int color;
    const attn_cmap *cmap;
    double vmin, vmax;
    int precision;                    /* decimals, 0 … 9 */
    int max_width;
} term_table_opts;
int term_table(FILE *f, const float *m, size_t rows, size_t cols, const term_table_opts *o);

/* Print m as aligned numbers, as torch prints a 2-D tensor: "[[a, b, ...],"
 * with a fixed number of decimals (precision), and when rows or cols exceed
 * 2·edgeitems + 1 only the first and last edgeitems of that axis, with
 * "..." between. */
void term_matrix(FILE *f, const float *m, size_t rows, size_t cols,
                 int precision, size_t edgeitems);

/* Print t (n0, n1, n2) as PyTorch prints a 3-D tensor, and a newline:
 *   tensor([[[0.4881, 0.5119, 0.0000, 0.0000],
 *            [0.4542, 0.5458, 0.0000, 0.0000]],
 *
 *           [[0.3711, 0.3269, 0.3019, 0.0000],
 *            [0.3130, 0.4098, 0.2772, 0.0000]]])
 * torch_str.h's printer with precision decimals (PyTorch's default 4),
 * whole numbers too (its decimals option: as the book prints them);
 * suffix, when not NULL, goes after the last bracket ("grad_fn=<…>"). */
void term_tensor3(FILE *f, const float *t, const size_t shape[3], int precision,
                  const char *suffix);

#endif
