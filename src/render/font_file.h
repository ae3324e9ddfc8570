/* font_file.h — one face of a TrueType/OpenType font, checked so that
 * stb_truetype can read it safely (see font_file.c for what is checked).
 *
 * A font_face is made from bytes in memory (the embedded DejaVu Sans,
 * kept by the caller) or from a file (.ttf, .otf, or face INDEX of a .ttc
 * collection; at most FONT_MAX_FILE_BYTES), whose bytes it then owns
 * until font_face_free.
 */
#ifndef ATTN_FONT_FILE_H
#define ATTN_FONT_FILE_H

#include <stddef.h>
#include <stdint.h>

#include <stb_truetype.h>

/* Largest font file read (Noto Sans CJK's collections are ~20 MiB); also
 * keeps every offset within stb_truetype's int arithmetic. */
#define FONT_MAX_FILE_BYTES ((size_t)64 << 20)

typedef struct font_face {
    stbtt_fontinfo info;
    unsigned char *data;  /* the file's bytes, owned; NULL when not from a file */
    uint32_t glyf_len;    /* length of the glyf table (0 for CFF outlines) */
} font_face;

/* Make face from data[len], face index of a collection (0 for a plain
 * font). Takes no ownership: data must outlive the face. -1 when the data
 * is not a font that can safely be used. */
int font_face_init(font_face *face, const unsigned char *data, size_t len, int index);

/* Read and check face index of the font file at path; the face then owns
 * the file's bytes. -1 with "PATH: cannot read: REASON" or "PATH: not a
 * TrueType font" in err[errlen] (err may be NULL) on failure. */
int font_face_load(font_face *face, const char *path, int index, char *err, size_t errlen);

/* Free what font_face_load read (nothing for a face made from memory). */
void font_face_free(font_face *face);

/* The glyph index of cp in face, 0 when the face lacks it. For faces from
 * files, also 0 when the character map gives an index past the glyph count
 * or (TrueType outlines) the glyph's outline cannot be read within its
 * bounds: such a glyph is then drawn as missing, never read. */
int font_face_glyph(const font_face *face, uint32_t cp);

#endif
