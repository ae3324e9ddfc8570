/* canvas.h — what heatmap.c, plot.c and text.c share: error messages,
 * overflow-checked sizes, pixel drawing (filled rectangles, alpha blending,
 * antialiased dashed polylines through a coverage mask) and tick positions
 * and labels for numeric axes.
 *
 * Pixel coordinates: pixel (x, y) covers [x, x + 1) × [y, y + 1), so its
 * centre is (x + 0.5, y + 0.5). Everything drawn is clipped to the image.
 */
#ifndef ATTN_CANVAS_H
#define ATTN_CANVAS_H

#include <stddef.h>

#include "render.h"

#if defined(__GNUC__)
#define RENDER_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define RENDER_PRINTF(f, a)
#endif

/* Format a one-line message into err[errlen] (when err is not NULL) and
 * return -1, so that failures read `return render_error(err, errlen, ...)`. */
int render_error(char *err, size_t errlen, const char *fmt, ...) RENDER_PRINTF(3, 4);

/* *out = a * b; -1 when that overflows size_t. */
int render_size_mul(size_t a, size_t b, size_t *out);

/* Largest image side we draw (keeps w * 3 within int for the PNG writer
 * and figures to a sane size). */
#define CANVAS_MAX_SIDE 32768

/* ---- pixels ------------------------------------------------------------ */

/* The colour 0xRRGGBB, as in "#1f77b4". */
static inline attn_rgb color_hex(unsigned long hex)
{
    attn_rgb c = {(unsigned char)(hex >> 16 & 0xFF), (unsigned char)(hex >> 8 & 0xFF),
                  (unsigned char)(hex & 0xFF)};
    return c;
}

/* Set pixel (x, y) to c. */
void canvas_put(attn_image *img, long x, long y, attn_rgb c);
/* Blend c over pixel (x, y) with opacity a in 0..255. */
void canvas_blend(attn_image *img, long x, long y, attn_rgb c, unsigned a);
/* Fill [x0, x1) × [y0, y1) with c. */
void canvas_fill(attn_image *img, long x0, long y0, long x1, long y1, attn_rgb c);
/* A 1-pixel outline just outside [x0, x1) × [y0, y1). */
void canvas_frame(attn_image *img, long x0, long y0, long x1, long y1, attn_rgb c);

/* ---- antialiased lines ----------------------------------------------- */

/* Coverage (0..1) of one colour's lines over the image rectangle
 * [x0, x0 + w) × [y0, y0 + h): lines are first drawn into the mask taking
 * the maximum coverage per pixel, then the mask is blended onto the image
 * once, so joints and crossings of one series are not darkened twice. */
typedef struct canvas_mask {
    int x0, y0, w, h;
    float *cov;         /* (h, w) coverage of pixel (x0 + i, y0 + j) */
} canvas_mask;

int canvas_mask_init(canvas_mask *m, int x0, int y0, int w, int h,
                     char *err, size_t errlen);
void canvas_mask_free(canvas_mask *m);
void canvas_mask_clear(canvas_mask *m);

/* Add the polyline through (x[i], y[i]), i < n (pixel coordinates), of the
 * given width. dash[ndash] alternates on and off lengths in pixels
 * (ndash even, 0 for a solid line). Joints inside a stroke are round, the
 * ends of strokes and dashes are cut square. */
void canvas_mask_polyline(canvas_mask *m, const double *x, const double *y,
                          size_t n, double width, const double *dash,
                          size_t ndash);

/* Blend c onto img with the mask's coverage as opacity. */
void canvas_mask_paint(const canvas_mask *m, attn_image *img, attn_rgb c);

/* ---- numeric ticks --------------------------------------------------- */

#define CANVAS_TICKS_MAX 32

typedef struct canvas_ticks {
    double v[CANVAS_TICKS_MAX];  /* (n,) increasing tick values */
    int n;
    int decimals;         /* digits after the point for all labels */
} canvas_ticks;

/* The multiples of a nice step (1, 2, 2.5, 5 × 10^k; 2.5 only when
 * allow_25) lying in [lo, hi]: the smallest such step giving at most
 * max_ticks ticks, as matplotlib's MaxNLocator chooses. lo == hi gives the
 * one tick lo. */
void canvas_ticks_linear(double lo, double hi, int max_ticks, int allow_25, canvas_ticks *t);

/* v as a tick label with the given decimals ("0.5", "−1.0", "20"), in
 * UTF-8 with matplotlib's minus sign U+2212; never "-0"; very large or
 * small magnitudes in ASCII %g style ("1.5e+07"). */
void canvas_tick_label(double v, int decimals, char *buf, size_t len);

#endif
