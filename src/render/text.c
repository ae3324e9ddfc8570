/* text.c — UTF-8 text rendered with stb_truetype and alpha-blended onto
 * RGB images, horizontal or rotated 90° counter-clockwise.
 *
 * Coordinates: glyphs are laid out in the text's own upright frame (u along
 * the baseline, v downwards); for horizontal text u = x and v = y, for
 * rotated text u = -y and v = x. The baseline sits on a whole pixel (crisp
 * horizontal strokes) and glyphs are placed at fractional u with
 * stb_truetype's sub-pixel shift (even spacing).
 *
 * Faces: the embedded DejaVu Sans first, then faces from font files
 * (text_font_add_file, and the font looked up for characters that no face
 * has, below). Every face is scaled to the same em size and drawn on the
 * same baseline; line metrics are always DejaVu's. Font files are checked
 * before use (font_file.c); fonts are found with fontconfig (font_find.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stb_truetype.h>

#include "canvas.h"
#include "font_file.h"
#include "font_find.h"
#include "text.h"
#include "utf8.h"

/* Faces tried in order for each character: DejaVu, room for files. */
#define TEXT_MAX_FACES 4

/* The characters of one string looked up at once, and how many that no
 * font has are remembered (so that they are not looked up again). */
#define TEXT_MAX_WANTED 64
#define TEXT_MAX_ABSENT 64

struct text_font {
    font_face faces[TEXT_MAX_FACES];
    int nfaces;
    int ascent, descent;  /* faces[0]'s, font units; descent is negative */
    int cap;              /* height of 'H' in faces[0], font units */
    uint32_t absent[TEXT_MAX_ABSENT];  /* looked up, found in no font */
    int nabsent;
    int lookups_over;     /* absent is full: no more lookups */
    unsigned char *buf;   /* (bufcap,) scratch for one glyph's coverage */
    size_t bufcap;
    int failed;           /* a glyph buffer could not be allocated */
};

/* ---- fonts ------------------------------------------------------------- */

int text_font_open(text_font **out, char *err, size_t errlen)
{
    *out = NULL;
    text_font *font = calloc(1, sizeof *font);
    if (font == NULL)
        return render_error(err, errlen, "out of memory for the font");
    font_face *face = &font->faces[0];
    if (font_face_init(face, attn_font_dejavu_sans, attn_font_dejavu_sans_len, 0) < 0) {
        free(font);
        return render_error(err, errlen, "DejaVu Sans: not a TrueType font");
    }
    font->nfaces = 1;
    /* Line metrics and cap height come from DejaVu alone. */
    int line_gap;
    stbtt_GetFontVMetrics(&face->info, &font->ascent, &font->descent, &line_gap);
    int x0, y0, x1, y1;
    if (stbtt_GetCodepointBox(&face->info, 'H', &x0, &y0, &x1, &y1))
        font->cap = y1;
    else
        font->cap = (int)(0.7 * font->ascent);
    *out = font;
    return 0;
}

void text_font_close(text_font *font)
{
    if (font == NULL)
        return;
    for (int i = 0; i < font->nfaces; i++)
        font_face_free(&font->faces[i]);
    free(font->buf);
    free(font);
}

int text_font_failed(const text_font *font)
{
    return font->failed;
}

int text_font_add_file(text_font *font, const char *path, char *err, size_t errlen)
{
    if (font->nfaces >= TEXT_MAX_FACES)
        return render_error(err, errlen, "%s: too many font faces (at most %d)", path,
                            TEXT_MAX_FACES);
    if (font_face_load(&font->faces[font->nfaces], path, 0, err, errlen) < 0)
        return -1;
    font->nfaces++;
    return 0;
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

/* The first face that has cp and its glyph there; 0 when no face has it. */
static int lookup_glyph(const text_font *font, uint32_t cp, int *face, int *glyph)
{
    for (int i = 0; i < font->nfaces; i++) {
        int g = font_face_glyph(&font->faces[i], cp);
        if (g != 0) {
            *face = i;
            *glyph = g;
            return 1;
        }
    }
    return 0;
}

/* ---- looking up a font for missing characters ---------------------------
 *
 * The first time a string holds characters that no face has, one lookup
 * for all of them: $ATTN_FONT when set and not empty, then the files that
 * $ATTN_FONT_SEARCH lists (colon-separated; set and empty: none), or,
 * without $ATTN_FONT_SEARCH, the installed fonts fontconfig finds
 * (font_find.h). Each candidate is read and checked (font_file.h) and its
 * glyphs counted; the first that has every character is appended as a
 * face, else the one with the most (the lookup stops at a full one).
 * Characters still missing then are remembered as found in no font and
 * never looked up again, so a run does a few lookups at most. Unreadable
 * or broken files are skipped silently: without a face, characters are
 * drawn as boxes. */

/* The best candidate so far for the characters cps[n]. */
typedef struct font_pick {
    const uint32_t *cps;
    size_t n;
    font_face best;
    size_t best_has;      /* how many of cps best has; 0: no best yet */
} font_pick;

/* A candidate, face index of the file at path: kept when it has more of
 * the characters than the best so far. Nonzero (stop) once one has all. */
static int pick_try(const char *path, int index, void *ctx)
{
    font_pick *p = ctx;
    font_face face;
    if (path == NULL || path[0] == '\0' || font_face_load(&face, path, index, NULL, 0) < 0)
        return 0;
    size_t has = 0;
    for (size_t i = 0; i < p->n; i++)
        has += font_face_glyph(&face, p->cps[i]) != 0;
    if (has > p->best_has) {
        if (p->best_has > 0)
            font_face_free(&p->best);
        p->best = face;
        p->best_has = has;
    } else {
        font_face_free(&face);
    }
    return p->best_has == p->n;
}

/* Offer each entry of the colon-separated list to pick_try, in order. */
static void pick_from_list(font_pick *p, const char *list)
{
    char path[4096];
    for (const char *at = list; *at != '\0';) {
        size_t n = strcspn(at, ":");
        if (n > 0 && n < sizeof path) {
            memcpy(path, at, n);
            path[n] = '\0';
            if (pick_try(path, 0, p))
                return;
        }
        at += n;
        if (*at == ':')
            at++;
    }
}

static int is_absent(const text_font *font, uint32_t cp)
{
    for (int i = 0; i < font->nabsent; i++)
        if (font->absent[i] == cp)
            return 1;
    return 0;
}

/* The lookup above for the characters of s that no face has and that
 * were not looked up in vain before. */
static void lookup_missing(text_font *font, const char *s)
{
    uint32_t want[TEXT_MAX_WANTED];     /* (n,) distinct missing characters */
    size_t n = 0;
    if (s == NULL || font->lookups_over || font->nfaces >= TEXT_MAX_FACES)
        return;
    for (uint32_t cp; (cp = text_utf8_next(&s)) != 0 && n < TEXT_MAX_WANTED;) {
        int face, glyph;
        uint32_t d = displayed(cp);
        if (lookup_glyph(font, d, &face, &glyph) || is_absent(font, d))
            continue;
        size_t k = 0;
        while (k < n && want[k] != d)
            k++;
        if (k == n)
            want[n++] = d;
    }
    if (n == 0)
        return;
    font_pick pick;
    memset(&pick, 0, sizeof pick);
    pick.cps = want;
    pick.n = n;
    const char *env = getenv("ATTN_FONT");
    const char *search = getenv("ATTN_FONT_SEARCH");
    if (env == NULL || !pick_try(env, 0, &pick)) {
        if (search != NULL)
            pick_from_list(&pick, search);
        else
            font_find(want, n, pick_try, &pick);
    }
    if (pick.best_has > 0)
        font->faces[font->nfaces++] = pick.best;
    for (size_t i = 0; i < n; i++) {
        int face, glyph;
        if (lookup_glyph(font, want[i], &face, &glyph))
            continue;
        if (font->nabsent == TEXT_MAX_ABSENT) {
            font->lookups_over = 1;
            break;
        }
        font->absent[font->nabsent++] = want[i];
    }
}

/* Pixels per font unit of the primary face at em size px. */
static double primary_scale(const text_font *font, double px)
{
    return stbtt_ScaleForMappingEmToPixels(&font->faces[0].info, (float)px);
}

double text_ascent(const text_font *font, double px)
{
    return font->ascent * primary_scale(font, px);
}

double text_descent(const text_font *font, double px)
{
    return -font->descent * primary_scale(font, px);
}

double text_cap_height(const text_font *font, double px)
{
    return font->cap * primary_scale(font, px);
}

double text_line_height(const text_font *font, double px)
{
    return text_ascent(font, px) + text_descent(font, px);
}

uint32_t text_utf8_next(const char **s)
{
    uint32_t cp = utf8_next(s);
    return cp == UTF8_INVALID ? 0xFFFD : cp;
}

/* cp (displayed, so valid and not a control character) as UTF-8 into
 * out[4]; the number of bytes. */
static size_t utf8_encode(uint32_t cp, char *out)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

void text_printable(const char *s, char *buf, size_t len)
{
    size_t used = 0;
    for (uint32_t cp; s != NULL && (cp = text_utf8_next(&s)) != 0;) {
        char enc[4];
        size_t n = utf8_encode(displayed(cp), enc);
        if (used + n + 1 > len)
            break;
        memcpy(buf + used, enc, n);
        used += n;
    }
    buf[used] = '\0';
}

/* The face and glyph that draw cp: the first face that has it, else the
 * primary face's missing-glyph box (glyph 0). 0 when the box is drawn.
 * The lookup for missing characters has run for the string before
 * (lookup_missing). */
static int find_glyph(const text_font *font, uint32_t cp, int *face, int *glyph)
{
    if (lookup_glyph(font, cp, face, glyph))
        return 1;
    *face = 0;
    *glyph = 0;
    return 0;
}

/* Advance of one glyph plus the kerning against the previous glyph, in
 * pixels. Only pairs within the embedded face are kerned: its tables are
 * known good, a file's kern / GPOS tables are not checked (see the top). */
static double glyph_advance(const text_font *font, int face, int glyph,
                            int prev_face, int prev_glyph, double px)
{
    const stbtt_fontinfo *info = &font->faces[face].info;
    double scale = stbtt_ScaleForMappingEmToPixels(info, (float)px);
    int advance, lsb;
    stbtt_GetGlyphHMetrics(info, glyph, &advance, &lsb);
    double adv = advance * scale;
    if (face == 0 && prev_face == 0 && prev_glyph >= 0)
        adv += stbtt_GetGlyphKernAdvance(info, prev_glyph, glyph) * scale;
    return adv;
}

/* Kerning is applied before a glyph, so this is the pen movement before
 * drawing glyph (face, glyph): only the kerning part. */
static double glyph_kern(const text_font *font, int face, int glyph,
                         int prev_face, int prev_glyph, double px)
{
    if (face != 0 || prev_face != 0 || prev_glyph < 0)
        return 0.0;
    const stbtt_fontinfo *info = &font->faces[face].info;
    double scale = stbtt_ScaleForMappingEmToPixels(info, (float)px);
    return stbtt_GetGlyphKernAdvance(info, prev_glyph, glyph) * scale;
}

double text_width(text_font *font, double px, const char *s)
{
    double w = 0.0;
    int prev_face = -1, prev_glyph = -1;
    if (s == NULL)
        return 0.0;
    lookup_missing(font, s);
    for (uint32_t cp; (cp = text_utf8_next(&s)) != 0;) {
        int face, glyph;
        find_glyph(font, displayed(cp), &face, &glyph);
        w += glyph_advance(font, face, glyph, prev_face, prev_glyph, px);
        prev_face = face;
        prev_glyph = glyph;
    }
    return w;
}

int text_font_has_all(text_font *font, const char *utf8)
{
    if (utf8 == NULL)
        return 1;
    lookup_missing(font, utf8);
    for (uint32_t cp; (cp = text_utf8_next(&utf8)) != 0;) {
        int face, glyph;
        if (!find_glyph(font, displayed(cp), &face, &glyph))
            return 0;
    }
    return 1;
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

/* ATTN_FIGURE_TEXT=FILE: every text a figure draws appended to FILE, a
 * line each, so that a test can read what a PNG says (the language check
 * of tests/cli/i18n_poison.py). Unset, nothing is written. */
static void log_figure_text(const char *s)
{
    const char *path = getenv("ATTN_FIGURE_TEXT");
    if (path == NULL || *path == '\0')
        return;
    FILE *f = fopen(path, "a");
    if (f == NULL)
        return;
    fprintf(f, "%s\n", s);
    fclose(f);
}

void text_draw(attn_image *img, text_font *font, double px, const char *s,
               double x, double y, text_halign halign, text_valign valign,
               text_dir dir, attn_rgb color)
{
    if (s == NULL || *s == '\0')
        return;
    log_figure_text(s);
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
