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
