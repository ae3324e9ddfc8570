/* font_find.h — installed fonts that have given characters, found with
 * fontconfig (the library Linux desktops use for this).
 *
 * font_find asks fontconfig for the fonts that cover the code points
 * cps[n] (an FcCharSet of them, FcFontSort: the closest match first) and
 * offers each that fontconfig says has all of them, then each that has
 * some, to try(path, index, ctx), index being the face of a collection
 * (.ttc), until try returns nonzero. Only TrueType and CFF (OpenType)
 * fonts are offered, as stb_truetype draws no other; at most
 * FONT_FIND_MAX_OFFERS of them. What try accepts is up to it (text.c
 * loads the file and checks each glyph itself).
 *
 * fontconfig reads its configuration as usual ($FONTCONFIG_FILE, else
 * /etc/fonts/fonts.conf) and is shut down again (FcFini) before
 * font_find returns: nothing of it stays allocated. Returns the number of
 * fonts offered, or -1 when fontconfig could not be started or ran out of
 * memory (nothing is offered then).
 */
#ifndef ATTN_FONT_FIND_H
#define ATTN_FONT_FIND_H

#include <stddef.h>
#include <stdint.h>

#define FONT_FIND_MAX_OFFERS 8

typedef int (*font_find_try)(const char *path, int index, void *ctx);

int font_find(const uint32_t *cps, size_t n, font_find_try try, void *ctx);

#endif
