/* canvas.c — images, pixel drawing, antialiased lines and axis ticks. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canvas.h"
#include "fmath.h"
#include "i18n.h"

int render_error(char *err, size_t errlen, const char *fmt, ...)
{
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, _(fmt), ap); /* xgettext takes fmt: po/meson.build */
        va_end(ap);
    }
    return -1;
}

int render_size_mul(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > (size_t)-1 / a)
        return -1;
    *out = a * b;
    return 0;
}

/* ---- images ------------------------------------------------------------ */

int image_alloc(attn_image *img, int w, int h, char *err, size_t errlen)
{
    img->w = img->h = 0;
    img->rgb = NULL;
    if (w <= 0 || h <= 0)
        return render_error(err, errlen, "invalid image size %d x %d", w, h);
    if (w > CANVAS_MAX_SIDE || h > CANVAS_MAX_SIDE)
        return render_error(err, errlen, "image too large: %d x %d pixels (at most %d a side)",
                            w, h, CANVAS_MAX_SIDE);
    size_t npix, nbytes;
    if (render_size_mul((size_t)w, (size_t)h, &npix) < 0 || render_size_mul(npix, 3, &nbytes) < 0)
        return render_error(err, errlen, "out of memory for a %d x %d image", w, h);
    /* (h, w, 3) bytes, white */
    unsigned char *p = malloc(nbytes);
    if (p == NULL)
        return render_error(err, errlen, "out of memory for a %d x %d image", w, h);
    memset(p, 255, nbytes);
    img->w = w;
    img->h = h;
    img->rgb = p;
    return 0;
}

int image_stack(attn_image *out, const attn_image *top, const attn_image *bottom, char *err,
                size_t errlen)
{
    int w = top->w > bottom->w ? top->w : bottom->w;
    if (image_alloc(out, w, top->h + bottom->h, err, errlen))
        return -1;
    for (int y = 0; y < top->h; y++)
        memcpy(out->rgb + (size_t)y * (size_t)w * 3, top->rgb + (size_t)y * (size_t)top->w * 3,
               (size_t)top->w * 3);
    for (int y = 0; y < bottom->h; y++)
        memcpy(out->rgb + (size_t)(top->h + y) * (size_t)w * 3,
               bottom->rgb + (size_t)y * (size_t)bottom->w * 3, (size_t)bottom->w * 3);
    return 0;
}

int image_beside(attn_image *out, const attn_image *left, const attn_image *right, char *err,
                 size_t errlen)
{
    int h = left->h > right->h ? left->h : right->h, w;
    if (left->w > INT_MAX - right->w) {
        if (err)
            snprintf(err, errlen, _("an image of %d + %d pixels is too wide"), left->w, right->w);
        return -1;
    }
    w = left->w + right->w;
    if (image_alloc(out, w, h, err, errlen))
        return -1;
    for (int y = 0; y < left->h; y++)
        memcpy(out->rgb + (size_t)y * (size_t)w * 3, left->rgb + (size_t)y * (size_t)left->w * 3,
               (size_t)left->w * 3);
    for (int y = 0; y < right->h; y++)
        memcpy(out->rgb + ((size_t)y * (size_t)w + (size_t)left->w) * 3,
               right->rgb + (size_t)y * (size_t)right->w * 3, (size_t)right->w * 3);
    return 0;
}

void image_free(attn_image *img)
{
    if (img == NULL)
        return;
    free(img->rgb);
    img->rgb = NULL;
    img->w = img->h = 0;
}

/* ---- pixels ------------------------------------------------------------ */

/* Byte offset of pixel (x, y), which must be inside the image. */
static size_t pixel_offset(const attn_image *img, long x, long y)
{
    return ((size_t)y * (size_t)img->w + (size_t)x) * 3;
}

static int inside(const attn_image *img, long x, long y)
{
    return x >= 0 && y >= 0 && x < img->w && y < img->h;
}

void canvas_put(attn_image *img, long x, long y, attn_rgb c)
{
    if (!inside(img, x, y))
        return;
    unsigned char *p = img->rgb + pixel_offset(img, x, y);
    p[0] = c.r;
    p[1] = c.g;
    p[2] = c.b;
}

/* (dst * (255 - a) + src * a) / 255, rounded. */
static unsigned char mix(unsigned dst, unsigned src, unsigned a)
{
    return (unsigned char)((dst * (255 - a) + src * a + 127) / 255);
}

void canvas_blend(attn_image *img, long x, long y, attn_rgb c, unsigned a)
{
    if (a == 0 || !inside(img, x, y))
        return;
    if (a > 255)
        a = 255;
    unsigned char *p = img->rgb + pixel_offset(img, x, y);
    p[0] = mix(p[0], c.r, a);
    p[1] = mix(p[1], c.g, a);
    p[2] = mix(p[2], c.b, a);
}

void canvas_fill(attn_image *img, long x0, long y0, long x1, long y1, attn_rgb c)
{
    /* Clip to the image. */
    if (x0 < 0)
        x0 = 0;
    if (y0 < 0)
        y0 = 0;
    if (x1 > img->w)
        x1 = img->w;
    if (y1 > img->h)
        y1 = img->h;
    for (long y = y0; y < y1; y++) {
        unsigned char *p = img->rgb + pixel_offset(img, x0, y);
        for (long x = x0; x < x1; x++, p += 3) {
            p[0] = c.r;
            p[1] = c.g;
            p[2] = c.b;
        }
    }
}

void canvas_frame(attn_image *img, long x0, long y0, long x1, long y1, attn_rgb c)
{
    canvas_fill(img, x0 - 1, y0 - 1, x1 + 1, y0, c);   /* top */
    canvas_fill(img, x0 - 1, y1, x1 + 1, y1 + 1, c);   /* bottom */
    canvas_fill(img, x0 - 1, y0, x0, y1, c);           /* left */
    canvas_fill(img, x1, y0, x1 + 1, y1, c);           /* right */
}

/* ---- antialiased lines ----------------------------------------------- */

int canvas_mask_init(canvas_mask *m, int x0, int y0, int w, int h,
                     char *err, size_t errlen)
{
    m->x0 = x0;
    m->y0 = y0;
    m->w = w > 0 ? w : 0;
    m->h = h > 0 ? h : 0;
    m->cov = NULL;
    size_t n;
    if (render_size_mul((size_t)m->w, (size_t)m->h, &n) < 0 ||
        render_size_mul(n, sizeof(float), &n) < 0)
        return render_error(err, errlen, "out of memory for a line mask");
    /* (h, w) floats, at least one so that calloc never returns NULL for 0 */
    m->cov = calloc(n ? n : 1, 1);
    if (m->cov == NULL)
        return render_error(err, errlen, "out of memory for a line mask");
    return 0;
}

void canvas_mask_free(canvas_mask *m)
{
    free(m->cov);
    m->cov = NULL;
}

void canvas_mask_clear(canvas_mask *m)
{
    memset(m->cov, 0, (size_t)m->w * (size_t)m->h * sizeof(float));
}

static double clamp01(double v)
{
    return v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v;
}

/* Add the stroke from (ax, ay) to (bx, by) of half width hw. An end with a
 * round cap is a half disc (used where the stroke continues into the next
 * segment); otherwise the stroke is cut square at the end. Coverage of a
 * pixel is estimated from the distance of its centre to the stroke's
 * edge, a one-pixel-wide box filter. */
static void mask_segment(canvas_mask *m, double ax, double ay, double bx, double by,
                         double hw, int round_a, int round_b)
{
    double dx = bx - ax, dy = by - ay;
    double len = sqrt(dx * dx + dy * dy);
    if (!(len > 1e-9) && !(round_a || round_b))
        return;
    double ex = len > 1e-9 ? dx / len : 1.0, ey = len > 1e-9 ? dy / len : 0.0;
    /* Bounding box in mask pixels, clipped before converting to int. */
    double r = hw + 1.0;
    double fx0 = fmin(ax, bx) - r - m->x0, fx1 = fmax(ax, bx) + r - m->x0;
    double fy0 = fmin(ay, by) - r - m->y0, fy1 = fmax(ay, by) + r - m->y0;
    if (!(fx1 >= 0 && fy1 >= 0 && fx0 < m->w && fy0 < m->h))
        return;             /* also when a coordinate is NaN */
    int i0 = fx0 < 0 ? 0 : (int)fx0, i1 = fx1 >= m->w ? m->w - 1 : (int)fx1;
    int j0 = fy0 < 0 ? 0 : (int)fy0, j1 = fy1 >= m->h ? m->h - 1 : (int)fy1;
    for (int j = j0; j <= j1; j++) {
        double py = m->y0 + j + 0.5 - ay;
        float *row = m->cov + (size_t)j * (size_t)m->w;
        for (int i = i0; i <= i1; i++) {
            double px = m->x0 + i + 0.5 - ax;
            double along = px * ex + py * ey;         /* from a towards b */
            double cov;
            if (along < 0.0 && round_a) {
                cov = clamp01(hw + 0.5 - sqrt(px * px + py * py));
            } else if (along > len && round_b) {
                double qx = px - dx, qy = py - dy;
                cov = clamp01(hw + 0.5 - sqrt(qx * qx + qy * qy));
            } else {
                double perp = fabs(px * ey - py * ex);
                cov = clamp01(hw + 0.5 - perp);
                if (!round_a)
                    cov *= clamp01(along + 0.5);
                if (!round_b)
                    cov *= clamp01(len - along + 0.5);
            }
            if (cov > row[i])
                row[i] = (float)cov;
        }
    }
}

void canvas_mask_polyline(canvas_mask *m, const double *x, const double *y,
                          size_t n, double width, const double *dash,
                          size_t ndash)
{
    double hw = width / 2.0;
    /* Dash state: element k of the pattern, length left in it, pen down? */
    size_t k = 0;
    double left = ndash ? dash[0] : INFINITY;
    int on = 1;
    /* Whether the previous segment ended with the pen down (a joint). */
    int joined = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        double dx = x[i + 1] - x[i], dy = y[i + 1] - y[i];
        double len = sqrt(dx * dx + dy * dy);
        int last = i + 2 == n;
        if (!(len > 0.0)) {
            continue;           /* repeated point (or NaN: caller splits) */
        }
        /* Walk the segment through the dash pattern. */
        double t = 0.0;
        while (t < len) {
            double step = fmin(left, len - t);
            if (on) {
                double t1 = t + step;
                int cont_a = t == 0.0 && joined;
                int cont_b = t1 >= len && left > step && !last;
                mask_segment(m, x[i] + dx * t / len, y[i] + dy * t / len,
                             x[i] + dx * t1 / len, y[i] + dy * t1 / len, hw,
                             cont_a, cont_b);
            }
            t += step;
            left -= step;
            if (left <= 1e-12 && ndash) {
                /* Next element of the pattern. */
                k = (k + 1) % ndash;
                left = dash[k];
                on = !on;
            }
        }
        joined = on;
    }
}

void canvas_mask_paint(const canvas_mask *m, attn_image *img, attn_rgb c)
{
    for (int j = 0; j < m->h; j++) {
        const float *row = m->cov + (size_t)j * (size_t)m->w;
        for (int i = 0; i < m->w; i++)
            if (row[i] > 0.0f)
                canvas_blend(img, (long)m->x0 + i, (long)m->y0 + j, c,
                             (unsigned)lround(row[i] * 255.0));
    }
}

/* ---- numeric ticks --------------------------------------------------- */

void canvas_ticks_linear(double lo, double hi, int max_ticks, int allow_25, canvas_ticks *t)
{
    static const double mant[] = {1.0, 2.0, 2.5, 5.0};
    t->n = 0;
    t->decimals = 0;
    if (max_ticks < 2)
        max_ticks = 2;
    if (max_ticks > CANVAS_TICKS_MAX)
        max_ticks = CANVAS_TICKS_MAX;
    if (!isfinite(lo) || !isfinite(hi) || hi < lo || !isfinite(hi - lo))
        return;
    if (!(hi > lo)) {
        /* One value: the fewest decimals showing it to 4 digits. */
        t->v[0] = lo;
        t->n = 1;
        int e = lo != 0.0 ? (int)floor(fm_log10(fabs(lo))) : 0;
        int most = e >= 3 ? 0 : 3 - e;
        for (t->decimals = 0; t->decimals < most; t->decimals++) {
            double p = fm_pow(10.0, t->decimals);
            if (fabs(round(lo * p) / p - lo) <= 5e-5 * fabs(lo))
                break;
        }
        return;
    }
    /* Try steps from below (hi - lo) / max_ticks upwards. */
    int e = (int)floor(fm_log10((hi - lo) / max_ticks)) - 1;
    for (;; e++) {
        double p10 = fm_pow(10.0, e);
        for (size_t i = 0; i < sizeof mant / sizeof mant[0]; i++) {
            if (mant[i] == 2.5 && !allow_25)
                continue;
            double step = mant[i] * p10;
            double eps = 1e-9 * (hi - lo);
            double k0 = ceil((lo - eps) / step), k1 = floor((hi + eps) / step);
            if (k1 - k0 + 1 > max_ticks)
                continue;
            /* Found: the ticks k * step, and the decimals that show it. */
            for (double k = k0; k <= k1 && t->n < CANVAS_TICKS_MAX; k++) {
                double v = k * step;
                t->v[t->n++] = fabs(v) < eps ? 0.0 : v;
            }
            int d = -e + (mant[i] == 2.5 ? 1 : 0);
            t->decimals = d > 0 ? d : 0;
            return;
        }
    }
}

void canvas_tick_label(double v, int decimals, char *buf, size_t len)
{
    if (v == 0.0)
        v = 0.0;                /* no "-0" */
    double a = fabs(v);
    if (a >= 1e6 || decimals > 6) {
        snprintf(buf, len, "%.3g", v);
        return;                 /* (ASCII, with its exponent) */
    }
    snprintf(buf, len, "%.*f", decimals, v);
    /* A tiny negative value can still round to "-0.0": drop the sign. */
    if (buf[0] == '-' && strspn(buf + 1, "0.") == strlen(buf + 1))
        memmove(buf, buf + 1, strlen(buf));
    /* A typographic minus sign (U+2212), as matplotlib draws it. */
    size_t n = strlen(buf);
    if (buf[0] == '-' && n + 3 <= len) {
        memmove(buf + 3, buf + 1, n);
        memcpy(buf, "\xE2\x88\x92", 3);
    }
}
