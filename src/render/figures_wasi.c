/* figures_wasi.c — the figures and the page in the WebAssembly module
 * (SPEC.md §14), which has neither: the page that carries the module
 * draws with its canvas, and the module writes no files. Its build takes
 * this file in place of heatmap.c, plot.c, png.c, text.c, font_file.c,
 * font_find.c and page.c, so that no PNG encoder, no font and no page
 * (with a module inside) are in it. What asks for them fails as attn
 * fails for any file it cannot write: with a message, before any work
 * where the command checks its outputs first (--png and --html paths are
 * refused when the module cannot create them). */
#include <stdio.h>

#include "page.h"
#include "render.h"
#include "text.h"

#define NO_FIGURES "figures are drawn by the page, not by its WebAssembly module"

int heatmap_draw(attn_image *img, heat_layout *layout, const heat_figure *fig, char *err,
                 size_t errlen)
{
    (void)img, (void)layout, (void)fig;
    snprintf(err, errlen, NO_FIGURES);
    return -1;
}

int plot_draw(attn_image *img, const plot_figure *fig, char *err, size_t errlen)
{
    (void)img, (void)fig;
    snprintf(err, errlen, NO_FIGURES);
    return -1;
}

int png_write_atomic(const char *path, const attn_image *img, char *err, size_t errlen)
{
    (void)path, (void)img;
    snprintf(err, errlen, NO_FIGURES);
    return -1;
}

int text_font_open(text_font **out, char *err, size_t errlen)
{
    *out = NULL;
    snprintf(err, errlen, NO_FIGURES);
    return -1;
}

void text_font_close(text_font *font)
{
    (void)font;
}

/* Never reached: no font opens in the module (above), so no figure that
 * draws text is drawn (vit_png.c's). */
void text_draw(attn_image *img, text_font *font, double px, const char *s, double x, double y,
               text_halign halign, text_valign valign, text_dir dir, attn_rgb color)
{
    (void)img, (void)font, (void)px, (void)s, (void)x, (void)y, (void)halign, (void)valign,
        (void)dir, (void)color;
}

int text_font_add_file(text_font *font, const char *path, char *err, size_t errlen)
{
    (void)font, (void)path;
    snprintf(err, errlen, NO_FIGURES);
    return -1;
}

/* A page is never written by the module: output_page_check refuses every
 * --html path first (the module creates no file, and "-" is refused
 * everywhere). */
int page_build(const char *title, const char *data, size_t len, char **out, size_t *outlen)
{
    (void)title, (void)data, (void)len;
    *out = NULL;
    *outlen = 0;
    return -1;
}

void page_write_previewed(FILE *f, const char *title, const char *preview, size_t plen,
                          const char *data, size_t len)
{
    (void)title, (void)preview, (void)plen, (void)data, (void)len;
    fputs(NO_FIGURES "\n", f);
}
