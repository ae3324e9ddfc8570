/* resize.c — the antialiased bilinear resize of resize.h. */
#include "resize.h"

#include <math.h>
#include <stdlib.h>

#include "checked.h"

/* One side of n pixels resized to m: w (m, n) the weight of source pixel
 * j in output pixel i, nonzero only for j in [lo[i], hi[i]) (the loops
 * below read that span alone). */
static void side_weights(double *w, size_t *lo, size_t *hi, size_t m, size_t n)
{
    const double scale = (double)n / (double)m, s = scale > 1 ? scale : 1;
    for (size_t i = 0; i < m; i++) {
        const double c = ((double)i + 0.5) * scale;
        double sum = 0;
        lo[i] = n;
        hi[i] = 0;
        for (size_t j = 0; j < n; j++) {
            double t = fabs((double)j + 0.5 - c) / s;
            w[i * n + j] = t < 1 ? 1 - t : 0;
            sum += w[i * n + j];
            if (w[i * n + j] > 0) {
                lo[i] = lo[i] < j ? lo[i] : j;
                hi[i] = j + 1;
            }
        }
        for (size_t j = 0; j < n; j++)
            w[i * n + j] = sum > 0 ? w[i * n + j] / sum : 0;
    }
}

static float to8(double v)
{
    v = floor(v + 0.5);
    return (float)(v < 0 ? 0 : v > 255 ? 255 : v);
}

/* One pass along one axis: `lines` lines of the source, each n values
 * apart by step_in (a line starting line_in after the last), resized to m
 * values each (weights w (m, n), spans lo/hi), written step_out apart in
 * lines line_out apart. */
static void resize_pass(float *dst, const float *src, const double *w, const size_t *lo,
                        const size_t *hi, size_t m, size_t n, size_t lines, size_t line_in,
                        size_t step_in, size_t line_out, size_t step_out, int round8)
{
    for (size_t l = 0; l < lines; l++)
        for (size_t i = 0; i < m; i++) {
            double v = 0;
            for (size_t j = lo[i]; j < hi[i]; j++)
                v += w[i * n + j] * src[l * line_in + j * step_in];
            dst[l * line_out + i * step_out] = round8 ? to8(v) : (float)v;
        }
}

int image_resize(float *dst, size_t dh, size_t dw, const float *src, size_t sh, size_t sw,
                 int round8)
{
    size_t nwx, nwy, nmid, bx, by;
    if (size_mul(dw, sw, &nwx) || size_mul(dh, sh, &nwy) || size_mul(sh, dw, &nmid) ||
        size_mul(nwx, sizeof(double), &bx) || size_mul(nwy, sizeof(double), &by))
        return -1;
    double *wx = malloc(bx), *wy = malloc(by);
    size_t *span = calloc(2 * (dw + dh), sizeof *span); /* lo, hi of x; lo, hi of y */
    float *mid = float_alloc(nmid); /* (sh, dw): each row resized */
    if (!wx || !wy || !span || !mid) {
        FREE_EACH(wx, wy, span, mid);
        return -1;
    }
    size_t *xlo = span, *xhi = span + dw, *ylo = span + 2 * dw, *yhi = ylo + dh;
    side_weights(wx, xlo, xhi, dw, sw);
    side_weights(wy, ylo, yhi, dh, sh);
    /* along each row: (sh, sw) → (sh, dw) */
    resize_pass(mid, src, wx, xlo, xhi, dw, sw, sh, sw, 1, dw, 1, round8);
    /* down each column: (sh, dw) → (dh, dw) */
    resize_pass(dst, mid, wy, ylo, yhi, dh, sh, dw, 1, dw, 1, dw, round8);
    FREE_EACH(wx, wy, span, mid);
    return 0;
}
