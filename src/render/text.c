/* text.c — UTF-8 text rendered with stb_truetype and alpha-blended onto
 * RGB images, horizontal or rotated 90° counter-clockwise.
 *
 * Coordinates: glyphs are laid out in the text's own upright frame (u along
 * the baseline, v downwards); for horizontal text u = x and v = y, for
 * rotated text u = -y and v = x. The baseline sits on a whole pixel (crisp
 * horizontal strokes) and glyphs are placed at fractional u with
 * stb_truetype's sub-pixel shift (even spacing).
 */
#include <math.h>
#include <stdlib.h>

#include <stb_truetype.h>

#include "canvas.h"
#include "text.h"

/* Faces tried in order for each character; room for a CJK fallback. */
#define TEXT_MAX_FACES 4

typedef struct text_face {
    stbtt_fontinfo info;
    int ascent, descent;  /* font units; descent is negative */
    int cap;              /* height of 'H' in font units */
} text_face;

struct text_font {
    text_face faces[TEXT_MAX_FACES];
    int nfaces;
    unsigned char *buf;   /* (bufcap,) scratch for one glyph's coverage */
    size_t bufcap;
    int failed;           /* a glyph buffer could not be allocated */
};

/* Add the TrueType font in data[len] as the next face. */
static int add_face(text_font *font, const unsigned char *data, unsigned long len,
                    const char *name, char *err, size_t errlen)
{
    if (font->nfaces >= TEXT_MAX_FACES)
        return render_error(err, errlen, "%s: too many font faces", name);
    if (len < 12)
        return render_error(err, errlen, "%s: font data is too short", name);
    int offset = stbtt_GetFontOffsetForIndex(data, 0);
    text_face *face = &font->faces[font->nfaces];
    if (offset < 0 || !stbtt_InitFont(&face->info, data, offset))
        return render_error(err, errlen, "%s: not a TrueType font", name);
    int line_gap;
    stbtt_GetFontVMetrics(&face->info, &face->ascent, &face->descent, &line_gap);
    int x0, y0, x1, y1;
    if (stbtt_GetCodepointBox(&face->info, 'H', &x0, &y0, &x1, &y1))
        face->cap = y1;
    else
        face->cap = (int)(0.7 * face->ascent);
    font->nfaces++;
    return 0;
}

int text_font_open(text_font **out, char *err, size_t errlen)
{
    *out = NULL;
    text_font *font = calloc(1, sizeof *font);
    if (font == NULL)
        return render_error(err, errlen, "out of memory for the font");
    if (add_face(font, attn_font_dejavu_sans, attn_font_dejavu_sans_len,
                 "DejaVu Sans", err, errlen) < 0) {
        free(font);
        return -1;
    }
    *out = font;
    return 0;
}

void text_font_close(text_font *font)
{
    if (font == NULL)
        return;
    free(font->buf);
    free(font);
}

int text_font_failed(const text_font *font)
{
    return font->failed;
}

/* Pixels per font unit of the primary face at em size px. */
static double primary_scale(const text_font *font, double px)
{
    return stbtt_ScaleForMappingEmToPixels(&font->faces[0].info, (float)px);
}

double text_ascent(const text_font *font, double px)
{
    return font->faces[0].ascent * primary_scale(font, px);
}

double text_descent(const text_font *font, double px)
{
    return -font->faces[0].descent * primary_scale(font, px);
}

double text_cap_height(const text_font *font, double px)
{
    return font->faces[0].cap * primary_scale(font, px);
}

double text_line_height(const text_font *font, double px)
{
    return text_ascent(font, px) + text_descent(font, px);
}

uint32_t text_utf8_next(const char **s)
{
    const unsigned char *p = (const unsigned char *)*s;
    unsigned lead = p[0];
    if (lead == 0)
        return 0;
    if (lead < 0x80) {
        *s += 1;
        return lead;
    }
    /* Sequence length and the smallest value it may encode. */
    int n;
    uint32_t cp, min;
    if (lead >= 0xC0 && lead <= 0xDF) {
        n = 1, cp = lead & 0x1F, min = 0x80;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        n = 2, cp = lead & 0x0F, min = 0x800;
    } else if (lead >= 0xF0 && lead <= 0xF7) {
        n = 3, cp = lead & 0x07, min = 0x10000;
    } else {
        *s += 1;                /* continuation byte or 0xF8..0xFF */
        return 0xFFFD;
    }
    /* Continuation bytes; a NUL is not one, so we stop at the end. */
    for (int i = 1; i <= n; i++) {
        if ((p[i] & 0xC0) != 0x80) {
            *s += i;            /* truncated: skip what we have read */
            return 0xFFFD;
        }
        cp = (cp << 6) | (p[i] & 0x3Fu);
    }
    *s += n + 1;
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0xFFFD;
    return cp;
}

/* The character actually drawn for cp: tabs as spaces, other control
 * characters as U+FFFD. */
static uint32_t displayed(uint32_t cp)
{
    if (cp == '\t')
        return ' ';
    if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0))
        return 0xFFFD;
    return cp;
}

/* The face and glyph that draw cp: the first face that has it, else the
 * primary face's missing-glyph box (glyph 0). */
static void find_glyph(const text_font *font, uint32_t cp, int *face, int *glyph)
{
    for (int i = 0; i < font->nfaces; i++) {
        int g = stbtt_FindGlyphIndex(&font->faces[i].info, (int)cp);
        if (g != 0) {
            *face = i;
            *glyph = g;
            return;
        }
    }
    *face = 0;
    *glyph = 0;
}

/* Advance of one glyph plus the kerning against the previous glyph of the
 * same face, in pixels. */
static double glyph_advance(const text_font *font, int face, int glyph,
                            int prev_face, int prev_glyph, double px)
{
    const stbtt_fontinfo *info = &font->faces[face].info;
    double scale = stbtt_ScaleForMappingEmToPixels(info, (float)px);
    int advance, lsb;
    stbtt_GetGlyphHMetrics(info, glyph, &advance, &lsb);
    double adv = advance * scale;
    if (prev_face == face && prev_glyph >= 0)
        adv += stbtt_GetGlyphKernAdvance(info, prev_glyph, glyph) * scale;
    return adv;
}

/* Kerning is applied before a glyph, so this is the pen movement before
 * drawing glyph (face, glyph): only the kerning part. */
static double glyph_kern(const text_font *font, int face, int glyph,
                         int prev_face, int prev_glyph, double px)
{
    if (prev_face != face || prev_glyph < 0)
        return 0.0;
    const stbtt_fontinfo *info = &font->faces[face].info;
    double scale = stbtt_ScaleForMappingEmToPixels(info, (float)px);
    return stbtt_GetGlyphKernAdvance(info, prev_glyph, glyph) * scale;
}

double text_width(const text_font *font, double px, const char *s)
{
    double w = 0.0;
    int prev_face = -1, prev_glyph = -1;
    if (s == NULL)
        return 0.0;
    for (uint32_t cp; (cp = text_utf8_next(&s)) != 0;) {
        int face, glyph;
        find_glyph(font, displayed(cp), &face, &glyph);
        w += glyph_advance(font, face, glyph, prev_face, prev_glyph, px);
        prev_face = face;
        prev_glyph = glyph;
    }
    return w;
}

/* Draw one glyph with its pen at u (fractional) on baseline v (whole). */
static void draw_glyph(attn_image *img, text_font *font, int face, int glyph,
                       double px, double u, int v, text_dir dir, attn_rgb color)
{
    const stbtt_fontinfo *info = &font->faces[face].info;
    float scale = stbtt_ScaleForMappingEmToPixels(info, (float)px);
    double iu = floor(u);
    float shift = (float)(u - iu);
    int x0, y0, x1, y1;
    stbtt_GetGlyphBitmapBoxSubpixel(info, glyph, scale, scale, shift, 0.0f,
                                    &x0, &y0, &x1, &y1);
    int gw = x1 - x0, gh = y1 - y0;
    if (gw <= 0 || gh <= 0)
        return;                 /* a space */
    /* Grow the coverage scratch buffer, (gh, gw) bytes, when needed. */
    size_t need;
    if (render_size_mul((size_t)gw, (size_t)gh, &need) < 0) {
        font->failed = 1;
        return;
    }
    if (need > font->bufcap) {
        unsigned char *nb = realloc(font->buf, need);
        if (nb == NULL) {
            font->failed = 1;
            return;
        }
        font->buf = nb;
        font->bufcap = need;
    }
    /* Rasterise the upright glyph: buf[j * gw + i] is the coverage. */
    stbtt_MakeGlyphBitmapSubpixel(info, font->buf, gw, gh, gw, scale, scale,
                                  shift, 0.0f, glyph);
    /* Blend it: upright pixel (U, V) is image pixel (U, V) horizontally,
     * (V, -U - 1) rotated. */
    long u0 = (long)iu + x0, v0 = (long)v + y0;
    for (int j = 0; j < gh; j++) {
        for (int i = 0; i < gw; i++) {
            unsigned a = font->buf[(size_t)j * (size_t)gw + (size_t)i];
            if (a == 0)
                continue;
            long uu = u0 + i, vv = v0 + j;
            if (dir == TEXT_HORIZONTAL)
                canvas_blend(img, uu, vv, color, a);
            else
                canvas_blend(img, vv, -uu - 1, color, a);
        }
    }
}

void text_draw(attn_image *img, text_font *font, double px, const char *s,
               double x, double y, text_halign halign, text_valign valign,
               text_dir dir, attn_rgb color)
{
    if (s == NULL || *s == '\0')
        return;
    /* Start of the pen along the baseline. */
    double width = text_width(font, px, s);
    double u = dir == TEXT_HORIZONTAL ? x : -y;
    if (halign == TEXT_CENTER)
        u -= width / 2.0;
    else if (halign == TEXT_RIGHT)
        u -= width;
    /* Baseline across it, on a whole pixel. */
    double v = dir == TEXT_HORIZONTAL ? y : x;
    if (valign == TEXT_TOP)
        v += text_ascent(font, px);
    else if (valign == TEXT_MIDDLE)
        v += text_cap_height(font, px) / 2.0;
    else if (valign == TEXT_BOTTOM)
        v -= text_descent(font, px);
    int base = (int)lround(v);
    /* Glyph by glyph, kerning before each. */
    int prev_face = -1, prev_glyph = -1;
    for (uint32_t cp; (cp = text_utf8_next(&s)) != 0;) {
        int face, glyph;
        find_glyph(font, displayed(cp), &face, &glyph);
        u += glyph_kern(font, face, glyph, prev_face, prev_glyph, px);
        draw_glyph(img, font, face, glyph, px, u, base, dir, color);
        u += glyph_advance(font, face, glyph, -1, -1, px);
        prev_face = face;
        prev_glyph = glyph;
    }
}
