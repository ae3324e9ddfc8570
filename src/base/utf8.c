/* utf8.c — the UTF-8 decoder (see utf8.h). */
#include "utf8.h"

uint32_t utf8_next(const char **s)
{
    static const uint32_t min_cp[4] = {0, 0x80, 0x800, 0x10000}; /* by continuation bytes */
    const unsigned char *p = (const unsigned char *)*s;
    uint32_t cp;
    int n; /* continuation bytes */

    if (p[0] == 0)
        return 0;
    if (p[0] < 0x80) {
        *s += 1;
        return p[0];
    }
    if (p[0] >= 0xC0 && p[0] <= 0xDF)
        n = 1, cp = p[0] & 0x1Fu;
    else if (p[0] >= 0xE0 && p[0] <= 0xEF)
        n = 2, cp = p[0] & 0x0Fu;
    else if (p[0] >= 0xF0 && p[0] <= 0xF7)
        n = 3, cp = p[0] & 0x07u;
    else
        goto bad; /* a continuation byte or 0xF8…0xFF */
    for (int i = 1; i <= n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            goto bad; /* truncated (a NUL stops here too) */
        cp = (cp << 6) | (p[i] & 0x3Fu);
    }
    if (cp < min_cp[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        goto bad; /* overlong, above U+10FFFF, a surrogate */
    *s += n + 1;
    return cp;
bad:
    *s += 1;
    return UTF8_INVALID;
}

int utf8_is_cjk(uint32_t cp)
{
    return (cp >= 0x3001 && cp <= 0x303F) ||   /* CJK punctuation: 、。「」 */
           (cp >= 0x3040 && cp <= 0x30FF) ||   /* hiragana, katakana */
           (cp >= 0x3400 && cp <= 0x4DBF) ||   /* Han, extension A */
           (cp >= 0x4E00 && cp <= 0x9FFF) ||   /* Han, the unified block */
           (cp >= 0xF900 && cp <= 0xFAFF) ||   /* Han, compatibility */
           (cp >= 0xFF01 && cp <= 0xFF60) ||   /* fullwidth forms: ，！？ */
           (cp >= 0x20000 && cp <= 0x3FFFD);   /* Han, extensions B and on */
}

int utf8_write(uint32_t cp, char out[5])
{
    unsigned char *o = (unsigned char *)out;
    int n;
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        out[0] = '\0';
        return 0;
    }
    if (cp < 0x80) { /* 0xxxxxxx */
        o[0] = (unsigned char)cp;
        n = 1;
    } else if (cp < 0x800) { /* 110xxxxx 10xxxxxx */
        o[0] = (unsigned char)(0xC0 | (cp >> 6));
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) { /* 1110xxxx 10xxxxxx 10xxxxxx */
        o[0] = (unsigned char)(0xE0 | (cp >> 12));
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 3;
    } else { /* 11110xxx and three 10xxxxxx */
        o[0] = (unsigned char)(0xF0 | (cp >> 18));
        o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
        o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[3] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    out[n] = '\0';
    return n;
}
