/* font_find.c — fonts for given characters, found with fontconfig (see
 * font_find.h).
 *
 * The steps, as fontconfig's documentation describes a font match:
 *   1. a private configuration with the installed fonts
 *      (FcInitLoadConfigAndFonts: the same files and caches fc-match uses);
 *   2. a pattern asking for the characters (FC_CHARSET), completed with the
 *      configuration's substitutions and the defaults;
 *   3. FcFontSort: every font, the best match first, with a charset each
 *      (untrimmed: a font whose characters an earlier one already has
 *      stays, in case the earlier file turns out unusable);
 *   4. coverage checked here on each font's charset, full first.
 */
#include <string.h>

#include <fontconfig/fontconfig.h>

#include "font_find.h"

/* Whether font f of the sorted set is one stb_truetype can draw: a face
 * of a TrueType or CFF (OpenType) file, not a named instance of a
 * variable font (index above 0xFFFF: the same file's default face is
 * offered on its own). Sets *path and *index. */
static int usable(FcPattern *f, const char **path, int *index)
{
    FcChar8 *file, *format;
    int idx = 0;
    if (FcPatternGetString(f, FC_FILE, 0, &file) != FcResultMatch)
        return 0;
    if (FcPatternGetString(f, FC_FONTFORMAT, 0, &format) != FcResultMatch ||
        (strcmp((const char *)format, "TrueType") != 0 &&
         strcmp((const char *)format, "CFF") != 0))
        return 0;
    if (FcPatternGetInteger(f, FC_INDEX, 0, &idx) != FcResultMatch)
        idx = 0;
    if (idx < 0 || idx > 0xFFFF)
        return 0;
    *path = (const char *)file;
    *index = idx;
    return 1;
}

/* How many of cps[n] the charset of font f has. */
static size_t covered(FcPattern *f, const uint32_t *cps, size_t n)
{
    FcCharSet *cs;
    size_t k = 0;
    if (FcPatternGetCharSet(f, FC_CHARSET, 0, &cs) != FcResultMatch)
        return 0;
    for (size_t i = 0; i < n; i++)
        k += FcCharSetHasChar(cs, cps[i]) ? 1 : 0;
    return k;
}

/* Offer the usable fonts of set, in its order, whose charset has all of
 * cps[n] (full) or some but not all (!full); stop when try accepts one or
 * after *left offers. 1 when try accepted one. */
static int offer(FcFontSet *set, const uint32_t *cps, size_t n, int full,
                 font_find_try try, void *ctx, int *left, int *offered)
{
    for (int i = 0; i < set->nfont && *left > 0; i++) {
        const char *path;
        int index;
        size_t k = covered(set->fonts[i], cps, n);
        if ((full ? k != n : k == 0 || k == n) || !usable(set->fonts[i], &path, &index))
            continue;
        --*left;
        ++*offered;
        if (try(path, index, ctx))
            return 1;
    }
    return 0;
}

int font_find(const uint32_t *cps, size_t n, font_find_try try, void *ctx)
{
    if (n == 0)
        return 0;
    FcConfig *config = FcInitLoadConfigAndFonts();
    if (config == NULL)
        return -1;
    int offered = -1;
    FcPattern *pat = FcPatternCreate();
    FcCharSet *want = FcCharSetCreate();
    if (pat != NULL && want != NULL) {
        int ok = 1;
        for (size_t i = 0; i < n && ok; i++)
            ok = FcCharSetAddChar(want, cps[i]);
        /* the pattern takes its own reference to the charset */
        if (ok && FcPatternAddCharSet(pat, FC_CHARSET, want) &&
            FcConfigSubstitute(config, pat, FcMatchPattern)) {
            FcDefaultSubstitute(pat);
            FcResult res;
            FcFontSet *set = FcFontSort(config, pat, FcFalse, NULL, &res);
            if (set != NULL) {
                int left = FONT_FIND_MAX_OFFERS;
                offered = 0;
                if (!offer(set, cps, n, 1, try, ctx, &left, &offered))
                    offer(set, cps, n, 0, try, ctx, &left, &offered);
                FcFontSetDestroy(set);
            }
        }
    }
    if (want != NULL)
        FcCharSetDestroy(want);
    if (pat != NULL)
        FcPatternDestroy(pat);
    FcConfigDestroy(config);
    /* fontconfig's own caches and tables: freed, so that a run leaves
     * nothing behind (valgrind, LeakSanitizer). attn uses fontconfig
     * nowhere else, so nothing of it is in use here. */
    FcFini();
    return offered;
}
