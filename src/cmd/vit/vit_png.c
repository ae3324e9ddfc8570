/* vit_png.c — the <cls> figure of `attn train --task vit --png FILE`
 * and `attn vit --png FILE`: images, each with the <cls> query's
 * attention over its patches laid over it, one column per head of the
 * last block, then the attention rollout over every block (Abnar &
 * Zuidema 2020), and the true (when known) and predicted labels above
 * each row. */
#include "vit_show.h"

#include <stdio.h>
#include <stdlib.h>

#include "canvas.h"
#include "cli.h"
#include "idx.h"
#include "output.h"
#include "render.h"
#include "text.h"
#include "vit.h"
#include "i18n.h"

#define VIT_PNG_CELL 112  /* an image's side on screen, at least (28 × 4) */
#define VIT_PNG_GAP 10
#define VIT_PNG_HEAD 26   /* the column titles */
#define VIT_PNG_CAPTION 22 /* a row's labels */
#define VIT_PNG_ALPHA 0.6 /* the attention's share of a pixel's colour */

typedef struct vit_png_ctx {
    const vit_model *m;
    const vit_picture *pics;
    size_t n; /* rows */
} vit_png_ctx;

/* Cell (x0, y0): the picture's pixels in grey, with the weights a (P,) of
 * its patches (scaled by their largest) laid over them in viridis; a
 * NULL: the image alone. */
/* Screen pixels per image pixel: 4 for Fashion-MNIST's 28, 1 from 112. */
static long vit_png_scale(const vit_model *m)
{
    return m->cfg.img >= VIT_PNG_CELL ? 1 : (long)(VIT_PNG_CELL / m->cfg.img);
}

static void vit_png_cell(attn_image *img, int x0, int y0, const vit_picture *pic,
                         const double *a, const vit_model *m)
{
    const size_t S = m->cfg.img, p = m->cfg.patch, side = S / p;
    const long z = vit_png_scale(m); /* screen pixels per image pixel */
    const attn_cmap *cmap = cmap_find("viridis");
    double top = 0;
    for (size_t k = 0; a && k < m->P; k++)
        if (a[k] > top)
            top = a[k];
    for (size_t y = 0; y < S; y++)
        for (size_t x = 0; x < S; x++) {
            double v = pic->pixels[y * S + x];
            double r = 255 * v, g = 255 * v, b = 255 * v;
            if (a) {
                attn_rgb c = cmap_color(cmap, top > 0 ? a[(y / p) * side + x / p] / top : 0);
                r = (1 - VIT_PNG_ALPHA) * r + VIT_PNG_ALPHA * c.r;
                g = (1 - VIT_PNG_ALPHA) * g + VIT_PNG_ALPHA * c.g;
                b = (1 - VIT_PNG_ALPHA) * b + VIT_PNG_ALPHA * c.b;
            }
            attn_rgb c = {(unsigned char)(r + 0.5), (unsigned char)(g + 0.5),
                          (unsigned char)(b + 0.5)};
            canvas_fill(img, x0 + (long)x * z, y0 + (long)y * z, x0 + (long)(x + 1) * z,
                        y0 + (long)(y + 1) * z, c);
        }
}

/* Row r: image r through the model, its cells and its caption. */
static int vit_png_row(attn_image *img, text_font *font, const vit_png_ctx *c, vit_work *w,
                       float *att, double *roll, double *a, size_t r, int y0, int cell)
{
    const vit_model *m = c->m;
    const vit_picture *pic = &c->pics[r];
    const size_t NH = m->cfg.heads, T = m->T, Q = m->cfg.classes;
    float logits[IDX_CLASSES];
    char err[256], caption[128];
    if (vit_forward(w, logits, m, pic->pixels, NULL, err, sizeof err) != 0) {
        cli_error("%s", err);
        return -1;
    }
    size_t best = 0;
    for (size_t q = 1; q < Q; q++)
        if (logits[q] > logits[best])
            best = q;
    if (pic->label >= 0)
        snprintf(caption, sizeof caption, _("true: %s   predicted: %s"),
                 idx_fashion_labels[pic->label], idx_fashion_labels[best]);
    else
        snprintf(caption, sizeof caption, _("predicted: %s"), idx_fashion_labels[best]);
    text_draw(img, font, 14, caption, VIT_PNG_GAP, y0 + VIT_PNG_CAPTION / 2, TEXT_LEFT,
              TEXT_MIDDLE, TEXT_HORIZONTAL, color_hex(0x222222));
    int yc = y0 + VIT_PNG_CAPTION;
    vit_png_cell(img, VIT_PNG_GAP, yc, pic, NULL, m);
    vit_cls_attention(att, w, m, m->cfg.layers - 1);
    for (size_t h = 0; h < NH; h++) {
        for (size_t k = 0; k < m->P; k++)
            a[k] = att[h * T + 1 + k]; /* the patches, not <cls> itself */
        vit_png_cell(img, VIT_PNG_GAP + (int)(h + 1) * (cell + VIT_PNG_GAP), yc, pic, a, m);
    }
    vit_rollout(roll, w, m);
    vit_png_cell(img, VIT_PNG_GAP + (int)(NH + 1) * (cell + VIT_PNG_GAP), yc, pic, roll + 1, m);
    return 0;
}

static int vit_png_draw(const void *ctx, text_font *font, FILE *rep, const char *path)
{
    const vit_png_ctx *c = ctx;
    const vit_model *m = c->m;
    const size_t NH = m->cfg.heads, T = m->T;
    const int cell = (int)(m->cfg.img * (size_t)vit_png_scale(m)), cols = (int)NH + 2;
    const int W = VIT_PNG_GAP + cols * (cell + VIT_PNG_GAP);
    const int H = VIT_PNG_HEAD + (int)c->n * (VIT_PNG_CAPTION + cell + VIT_PNG_GAP);
    attn_image img = {0, 0, NULL};
    char err[256], title[32];
    vit_work *w = vit_work_alloc(m);
    float *att = malloc(NH * T * sizeof(float));
    double *roll = malloc(T * sizeof(double)), *a = malloc(T * sizeof(double));
    int status = EXIT_RUNTIME;
    text_font *own = NULL;
    if (font == NULL) { /* no --font: DejaVu Sans, built in */
        if (text_font_open(&own, err, sizeof err) != 0) {
            cli_error("%s", err);
            goto done;
        }
        font = own;
    }
    if (!w || !att || !roll || !a || image_alloc(&img, W, H, err, sizeof err) != 0) {
        cli_error("out of memory for --png");
        goto done;
    }
    for (int k = 0; k < cols; k++) {
        if (k == 0)
            snprintf(title, sizeof title, "%s", _("image"));
        else if (k <= (int)NH)
            snprintf(title, sizeof title, _("head %d"), k);
        else
            snprintf(title, sizeof title, "%s", _("rollout"));
        text_draw(&img, font, 14, title, VIT_PNG_GAP + k * (cell + VIT_PNG_GAP) + cell / 2.0,
                  VIT_PNG_HEAD / 2.0, TEXT_CENTER, TEXT_MIDDLE, TEXT_HORIZONTAL,
                  color_hex(0x222222));
    }
    for (size_t r = 0; r < c->n; r++)
        if (vit_png_row(&img, font, c, w, att, roll, a, r,
                        VIT_PNG_HEAD + (int)r * (VIT_PNG_CAPTION + cell + VIT_PNG_GAP), cell) != 0)
            goto done;
    status = output_png(path, &img, rep,
                        "the <cls> query's attention over the patches (last block's heads, "
                        "rollout)");
done:
    if (own)
        text_font_close(own);
    image_free(&img);
    vit_work_free(w);
    free(att);
    free(roll);
    free(a);
    return status;
}

static const char *vit_png_path;

static int vit_png_fn(const void *ctx, text_font *font, FILE *rep)
{
    return vit_png_draw(ctx, font, rep, vit_png_path);
}

int vit_png(const char *path, const char *font_path, const vit_model *m, const vit_picture *pics,
            size_t n, FILE *rep)
{
    vit_png_ctx c = {m, pics, n};
    vit_png_path = path;
    return output_figures(font_path, path, vit_png_fn, NULL, NULL, &c, rep);
}

int vit_png_set(const char *path, const char *font_path, const vit_model *m, const idx_set *set,
                size_t n, FILE *rep)
{
    const size_t S = m->cfg.img;
    size_t count = n < set->n ? n : set->n;
    if (count > VIT_PNG_MAX)
        count = VIT_PNG_MAX;
    if (set->rows != S || set->cols != S) {
        cli_error("--png: the images are %zu × %zu, the model's %zu × %zu", set->rows, set->cols,
                  S, S);
        return EXIT_RUNTIME;
    }
    vit_picture pics[VIT_PNG_MAX];
    float *pixels = count > 0 ? malloc(count * S * S * sizeof(float)) : NULL;
    if (count > 0 && !pixels) {
        cli_error("out of memory for --png");
        return EXIT_RUNTIME;
    }
    for (size_t i = 0; i < count; i++) {
        idx_pixels(pixels + i * S * S, set, i);
        pics[i].pixels = pixels + i * S * S;
        pics[i].label = set->labels[i];
    }
    int status = vit_png(path, font_path, m, pics, count, rep);
    free(pixels);
    return status;
}
