/* text.h — antialiased text for figures: UTF-8 strings drawn with
 * stb_truetype in DejaVu Sans (embedded at build time), horizontally or
 * rotated 90° counter-clockwise, alpha-blended onto an attn_image.
 *
 * A text_font is a list of faces tried in order for each character:
 * DejaVu Sans, then faces appended from font files. DejaVu covers Latin,
 * Greek and Cyrillic, so those never need a lookup. The first time a
 * string to measure or draw (or text_font_has_all) holds characters that
 * no face has, the font looks up one font file for all of them and
 * appends it: $ATTN_FONT when set and not empty, then, when
 * $ATTN_FONT_SEARCH is set, the files it lists (colon-separated, like
 * PATH; set and empty: none, which is how the tests make a machine
 * without CJK fonts), else the installed fonts fontconfig finds for those
 * characters (font_find.h). The first file that has them all is taken,
 * else the one that has the most; files that are missing or broken are
 * skipped silently, and characters that no file has are not looked up
 * again. A character that no face has is drawn as the first face's
 * "missing glyph" box (text_font_has_all tells the caller beforehand, so
 * that it can draw something else). Glyphs of every face are scaled to
 * the same em size and share the baseline; the line metrics (ascent,
 * descent, cap height) are always DejaVu's.
 *
 * Sizes are em sizes in pixels (as a CSS font-size). Drawing never fails
 * half-way: if a glyph buffer cannot be allocated, the glyph is skipped and
 * the font remembers the failure (text_font_failed), like a stream's error
 * flag, for the caller to report once at the end.
 */
#ifndef ATTN_TEXT_H
#define ATTN_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "render.h"

/* The embedded DejaVu Sans (scripts/embed_file.py, see meson.build). */
extern const unsigned char attn_font_dejavu_sans[];
extern const unsigned long attn_font_dejavu_sans_len;

/* text_font itself is declared in render.h, for the figures. */

typedef enum text_halign {
    TEXT_LEFT,      /* the anchor is where the text starts */
    TEXT_CENTER,
    TEXT_RIGHT      /* the anchor is where the text ends */
} text_halign;

typedef enum text_valign {
    TEXT_BASELINE,
    TEXT_TOP,       /* the font's ascent line at the anchor */
    TEXT_MIDDLE,    /* halfway up the capitals / digits */
    TEXT_BOTTOM     /* the font's descent line at the anchor */
} text_valign;

typedef enum text_dir {
    TEXT_HORIZONTAL,
    TEXT_UP         /* rotated 90° counter-clockwise: reads bottom to top,
                     * the tops of the letters point left */
} text_dir;

/* Open the default font (DejaVu Sans). -1 with a message on failure. */
int text_font_open(text_font **out, char *err, size_t errlen);
void text_font_close(text_font *font);
/* Nonzero once a glyph could not be drawn for lack of memory. */
int text_font_failed(const text_font *font);

/* Append the font in the file at path (.ttf, .otf, or the first font of a
 * .ttc collection; at most 64 MiB) as the next face. The file is read
 * whole and checked before use; the font keeps the bytes until closed.
 * -1 with "PATH: cannot read: REASON" or "PATH: not a TrueType font" (or
 * "PATH: too many font faces ...") on failure, the font unchanged. */
int text_font_add_file(text_font *font, const char *path, char *err, size_t errlen);

/* 1 when every character of the UTF-8 string can be drawn with a real
 * glyph of some face (after the lookup above has been tried), 0 when
 * some would be a missing-glyph box. Characters are taken as they are
 * drawn: malformed sequences and control characters as U+FFFD, tabs as
 * spaces. */
int text_font_has_all(text_font *font, const char *utf8);

/* Vertical metrics at em size px, in pixels, all >= 0: ascent above the
 * baseline, descent below it, and the height of capitals and digits. */
double text_ascent(const text_font *font, double px);
double text_descent(const text_font *font, double px);
double text_cap_height(const text_font *font, double px);
/* ascent + descent: the height of one line of text. */
double text_line_height(const text_font *font, double px);

/* Advance width of s at em size px, in pixels. Not const: may look up
 * and append a face for characters no face has (see above). */
double text_width(text_font *font, double px, const char *s);

/* Draw s so that the point given by (halign, valign) of its box lands on
 * (x, y). For TEXT_UP the alignments are in the text's own frame: TEXT_LEFT
 * puts the start of the text at y (it extends upwards), TEXT_TOP puts the
 * ascent line at x (the text extends to the right of it). */
void text_draw(attn_image *img, text_font *font, double px, const char *s,
               double x, double y, text_halign halign, text_valign valign,
               text_dir dir, attn_rgb color);

/* s as text_draw shows it, for messages: valid UTF-8 without control
 * characters (tabs as spaces; other controls and malformed sequences as
 * U+FFFD), into buf[len] (len >= 1), cut at a whole character when it
 * does not fit. */
void text_printable(const char *s, char *buf, size_t len);

/* The next character of the UTF-8 string at *s, advancing *s; 0 at the
 * end (the NUL is not consumed). utf8_next (base/utf8.h) with U+FFFD for
 * each malformed byte: a stray continuation byte, an invalid lead byte, a
 * truncated sequence, an overlong form, a surrogate or a value above
 * U+10FFFF each give one U+FFFD per byte. Never reads past the
 * terminating NUL. */
uint32_t text_utf8_next(const char **s);

#endif
