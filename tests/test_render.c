/* test_render.c — tests of src/render: colormap lookups against values
 * taken from matplotlib, heatmap cells checked pixel by pixel in PNG files
 * written by png_write_atomic and decoded again with stb_image, pooling,
 * sizing, line plots, text (with font files, and the font looked up for
 * CJK labels: from $ATTN_FONT_SEARCH, pinned to the CJK font that
 * scripts/setup.sh installs, and from fontconfig with configurations made
 * here), and png_write_atomic's failure behaviour. No result depends on
 * the fonts installed: without the set-up's CJK font the test fails and
 * says so.
 *
 * Usage: test_render [TMPDIR]. Files go to a fresh directory made with
 * mkdtemp under TMPDIR (default /tmp), which is removed at the end.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stb_image.h>

#include "canvas.h"
#include "check.h"
#include "font_file.h"
#include "font_find.h"
#include "render.h"
#include "text.h"

static char tmpdir[4096];       /* this run's directory */

/* tmpdir/name into buf. */
static const char *tmp_path(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", tmpdir, name);
    return buf;
}

/* Number of entries in dir (without . and ..), -1 when unreadable. */
static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

/* Remove dir with its files and its subdirectories' files (one level of
 * nesting is all this test creates). */
static void remove_tree(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char p[8192];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode) && depth < 2)
            remove_tree(p, depth + 1);
        else
            unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

static int same_rgb(attn_rgb a, attn_rgb b)
{
    return a.r == b.r && a.g == b.g && a.b == b.b;
}

#define CHECK_RGB(got, R, G, B)                                             \
    do {                                                                   \
        attn_rgb want_ = {R, G, B};                                        \
        attn_rgb got_ = (got);                                             \
        CHECK_INT(got_.r, want_.r);                                        \
        CHECK_INT(got_.g, want_.g);                                        \
        CHECK_INT(got_.b, want_.b);                                        \
    } while (0)

/* ---- colormaps --------------------------------------------------------- */

static void test_cmap(void)
{
    const attn_cmap *blues = cmap_find("Blues"), *reds = cmap_find("Reds");
    const attn_cmap *viridis = cmap_find("viridis"), *gray = cmap_find("gray");
    CHECK(blues && reds && viridis && gray);
    if (!(blues && reds && viridis && gray))
        return;
    CHECK(cmap_find("blues") == NULL);      /* names are case-sensitive */
    CHECK(cmap_find("jet") == NULL);
    CHECK(cmap_find(NULL) == NULL);
    CHECK(strcmp(cmap_name(viridis), "viridis") == 0);
    CHECK(strcmp(cmap_names(), "Reds, Blues, viridis, gray") == 0);

    /* From matplotlib 3.6.3: colormaps[name](t)[:3] * 255, rounded. */
    CHECK_RGB(cmap_color(blues, 0.0), 247, 251, 255);
    CHECK_RGB(cmap_color(blues, 1.0), 8, 48, 107);
    CHECK_RGB(cmap_color(blues, 0.3), 183, 212, 234);
    CHECK_RGB(cmap_color(viridis, 0.5), 33, 145, 140);
    CHECK_RGB(cmap_color(viridis, 0.0), 68, 1, 84);
    CHECK_RGB(cmap_color(viridis, 1.0), 253, 231, 37);
    CHECK_RGB(cmap_color(viridis, 100.5 / 256), 42, 118, 142);
    CHECK_RGB(cmap_color(reds, 0.25), 252, 187, 161);
    CHECK_RGB(cmap_color(reds, 0.999), 103, 0, 13);
    CHECK_RGB(cmap_color(gray, 0.5), 128, 128, 128);

    /* Lookup rule: index floor(t * 256), clamped; NaN is entry 0. */
    for (int i = 0; i < 256; i++) {
        attn_rgb g = cmap_color(gray, (i + 0.5) / 256.0);
        CHECK_INT(g.r, i);                    /* gray entry i is i */
        g = cmap_color(gray, i / 256.0);      /* the entry's left edge */
        CHECK_INT(g.r, i);
    }
    CHECK_INT(cmap_color(gray, 128.0 / 256.0 - 1e-12).r, 127);
    CHECK(same_rgb(cmap_color(reds, NAN), cmap_color(reds, 0.0)));
    CHECK(same_rgb(cmap_color(reds, -3.0), cmap_color(reds, 0.0)));
    CHECK(same_rgb(cmap_color(reds, 7.0), cmap_color(reds, 1.0)));
    CHECK(same_rgb(cmap_color(reds, INFINITY), cmap_color(reds, 1.0)));
    CHECK(same_rgb(cmap_color(reds, -INFINITY), cmap_color(reds, 0.0)));
}

/* ---- text and ticks ---------------------------------------------------- */

static void test_utf8(void)
{
    /* Each case: input, the code points expected, then how many. */
    struct {
        const char *s;
        uint32_t cps[4];
        int n;
    } cases[] = {
        {"a\xC3\xA9", {'a', 0xE9}, 2},
        {"\xE2\x82\xAC\xF0\x9F\x98\x80", {0x20AC, 0x1F600}, 2},
        {"\xFFz", {0xFFFD, 'z'}, 2},                 /* invalid byte */
        {"\x80\xBF", {0xFFFD, 0xFFFD}, 2},           /* stray continuations */
        {"\xC3", {0xFFFD}, 1},                       /* truncated at the end */
        /* one U+FFFD per byte of a malformed sequence (base/utf8.h) */
        {"\xE2\x82z", {0xFFFD, 0xFFFD, 'z'}, 3},     /* truncated before z */
        {"\xC0\xAF", {0xFFFD, 0xFFFD}, 2},           /* overlong '/' */
        {"\xE0\x80\x80", {0xFFFD, 0xFFFD, 0xFFFD}, 3}, /* overlong NUL */
        {"\xED\xA0\x80", {0xFFFD, 0xFFFD, 0xFFFD}, 3}, /* surrogate */
        {"\xF4\x90\x80\x80", {0xFFFD, 0xFFFD, 0xFFFD, 0xFFFD}, 4}, /* above U+10FFFF */
        {"\xEF\xBF\xBD", {0xFFFD}, 1},               /* U+FFFD itself */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const char *s = cases[k].s;
        for (int i = 0; i < cases[k].n; i++)
            CHECK_INT(text_utf8_next(&s), cases[k].cps[i]);
        CHECK_INT(text_utf8_next(&s), 0);
        CHECK(*s == '\0');
    }
}

/* Bounding box of the non-white pixels of img. */
static void ink_box(const attn_image *img, int *x0, int *y0, int *x1, int *y1)
{
    *x0 = img->w, *y0 = img->h, *x1 = -1, *y1 = -1;
    for (int y = 0; y < img->h; y++)
        for (int x = 0; x < img->w; x++) {
            const unsigned char *p = img->rgb + ((size_t)y * img->w + x) * 3;
            if (p[0] != 255 || p[1] != 255 || p[2] != 255) {
                *x0 = x < *x0 ? x : *x0;
                *y0 = y < *y0 ? y : *y0;
                *x1 = x > *x1 ? x : *x1;
                *y1 = y > *y1 ? y : *y1;
            }
        }
}

static void test_text(void)
{
    char err[256] = "";
    text_font *font;
    CHECK_INT(text_font_open(&font, err, sizeof err), 0);
    if (font == NULL)
        return;
    CHECK_NEAR(text_width(font, 14, ""), 0.0, 0, 0);
    CHECK(text_width(font, 14, "ab") > text_width(font, 14, "a"));
    CHECK(text_width(font, 28, "ab") > 1.9 * text_width(font, 14, "ab"));
    CHECK(text_ascent(font, 14) > text_cap_height(font, 14));
    CHECK(text_cap_height(font, 14) > 7.0);

    /* Horizontal text: wider than tall, starting at the anchor. */
    attn_image img;
    CHECK_INT(image_alloc(&img, 200, 200, err, sizeof err), 0);
    if (img.rgb == NULL) {
        text_font_close(font);
        return;
    }
    attn_rgb black = {0, 0, 0};
    text_draw(&img, font, 14, "Row (position)", 20, 100, TEXT_LEFT, TEXT_BASELINE,
              TEXT_HORIZONTAL, black);
    int x0, y0, x1, y1;
    ink_box(&img, &x0, &y0, &x1, &y1);
    CHECK(x1 - x0 > 3 * (y1 - y0));
    CHECK(x0 >= 20 && x0 <= 23);
    CHECK(y1 >= 100 && y1 <= 104);         /* parentheses dip below */

    /* Rotated text reads upwards from the anchor: tall and narrow, above
     * y = 150, right of x = 100 with TEXT_TOP. */
    memset(img.rgb, 255, (size_t)img.w * img.h * 3);
    text_draw(&img, font, 14, "Row (position)", 100, 150, TEXT_LEFT, TEXT_TOP, TEXT_UP, black);
    ink_box(&img, &x0, &y0, &x1, &y1);
    CHECK(y1 - y0 > 3 * (x1 - x0));
    CHECK(y1 <= 150 && y1 >= 146);
    CHECK(x0 >= 100);

    /* Malformed UTF-8, control characters and characters DejaVu lacks are
     * drawn as something (U+FFFD, the CJK fallback's glyph or the
     * missing-glyph box), never a crash. */
    memset(img.rgb, 255, (size_t)img.w * img.h * 3);
    text_draw(&img, font, 14, "\xFF\xC3 \x01\xE6\xB3\xA8", 10, 50, TEXT_LEFT, TEXT_BASELINE,
              TEXT_HORIZONTAL, black);
    ink_box(&img, &x0, &y0, &x1, &y1);
    CHECK(x1 > x0 && x1 - x0 > 30);
    CHECK(!text_font_failed(font));
    image_free(&img);
    text_font_close(font);
}

/* ---- font files and the CJK fallback ----------------------------------- */

/* The CJK font scripts/setup.sh installs (Debian's fonts-wqy-microhei):
 * every lookup in this test finds this file or nothing (main pins
 * $ATTN_FONT_SEARCH to it and fontconfig to a configuration without
 * fonts). */
#define WQY "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"

/* "苹果" (apple) and a character no font has (plane 16 private use). */
#define APPLE_ZH "\xE8\x8B\xB9\xE6\x9E\x9C"
#define NO_FONT_HAS "\xF4\x8F\xBF\xBD"

/* WQY when it loads and has 苹果; else NULL, after saying what is
 * missing (the checks that need it then fail). */
static const char *cjk_font_path(void)
{
    text_font *font;
    char err[256];
    if (text_font_open(&font, err, sizeof err) < 0)
        return NULL;
    int ok = text_font_add_file(font, WQY, err, sizeof err) == 0 &&
             text_font_has_all(font, APPLE_ZH);
    text_font_close(font);
    if (ok)
        return WQY;
    fprintf(stderr, "test_render: %s (Debian fonts-wqy-microhei, which scripts/setup.sh "
            "installs) is missing or lacks 苹果: the CJK checks fail\n", WQY);
    return NULL;
}

/* The fonts every check sees unless it says otherwise: no $ATTN_FONT and
 * $ATTN_FONT_SEARCH naming the set-up's CJK font only (main also points
 * fontconfig at a configuration without fonts). */
static void pin_fonts(void)
{
    unsetenv("ATTN_FONT");
    setenv("ATTN_FONT_SEARCH", WQY, 1);
}

/* The whole file at path in a new buffer (*len bytes); NULL on failure. */
static unsigned char *read_whole(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    unsigned char *data = NULL;
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0)
        data = malloc((size_t)size);
    if (data != NULL && fread(data, 1, (size_t)size, f) != (size_t)size) {
        free(data);
        data = NULL;
    }
    fclose(f);
    *len = data != NULL ? (size_t)size : 0;
    return data;
}

/* Write data[len] to path; 0 on success. */
static int write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return -1;
    size_t n = len > 0 ? fwrite(data, 1, len, f) : 0;
    int bad = n != len;
    bad |= fclose(f) != 0;
    return bad ? -1 : 0;
}

/* err is exactly "PATH: " followed by tail. */
static int is_path_error(const char *err, const char *path, const char *tail)
{
    size_t n = strlen(path);
    return strncmp(err, path, n) == 0 && strncmp(err + n, ": ", 2) == 0 &&
           strcmp(err + n + 2, tail) == 0;
}

/* Offset in the TrueType data of the directory record of tag, 0 when
 * absent (a plain font: the offset table at 0). */
static size_t table_record(const unsigned char *font, const char *tag)
{
    unsigned n = (unsigned)font[4] << 8 | font[5];
    for (unsigned i = 0; i < n; i++)
        if (memcmp(font + 12 + 16 * (size_t)i, tag, 4) == 0)
            return 12 + 16 * (size_t)i;
    return 0;
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put16(unsigned char *p, unsigned v)
{
    p[0] = (unsigned char)(v >> 8);
    p[1] = (unsigned char)v;
}

static void put32(unsigned char *p, uint32_t v)
{
    put16(p, (unsigned)(v >> 16));
    put16(p + 2, (unsigned)(v & 0xFFFF));
}

/* Write data[len], a font broken as `what` says, to path: then
 * text_font_add_file must reject it with "PATH: not a TrueType font". */
static void check_broken_font(text_font *font, const char *path, const unsigned char *data,
                              size_t len, const char *what)
{
    char err[8448] = "";
    if (write_file(path, data, len) < 0) {
        CHECK(!"cannot write a test font");
        return;
    }
    int rc = text_font_add_file(font, path, err, sizeof err);
    if (rc == 0 || !is_path_error(err, path, "not a TrueType font"))
        fprintf(stderr, "broken font (%s): rc %d, \"%s\"\n", what, rc, err);
    CHECK_INT(rc, -1);
    CHECK(is_path_error(err, path, "not a TrueType font"));
}

static void test_font_files(void)
{
    /* Paths under tmpdir (up to 4095 bytes) and messages that name them. */
    char err[8448] = "", path[8192], junk[8192], empty[8192], copy[8192], bad[8192];
    text_font *font;
    unsetenv("ATTN_FONT");
    CHECK_INT(text_font_open(&font, err, sizeof err), 0);
    if (font == NULL)
        return;

    /* Missing file, directory: "cannot read", naming the path. */
    tmp_path(path, sizeof path, "no-such-font.ttf");
    CHECK_INT(text_font_add_file(font, path, err, sizeof err), -1);
    CHECK(is_path_error(err, path, "cannot read: No such file or directory"));
    CHECK_INT(text_font_add_file(font, tmpdir, err, sizeof err), -1);
    CHECK(is_path_error(err, tmpdir, "cannot read: Is a directory"));

    /* Junk, an empty file, a bare collection header: not a font. */
    tmp_path(junk, sizeof junk, "junk.ttf");
    static const char text[] = "This is not a font, just some text long enough to parse.\n";
    CHECK_INT(write_file(junk, text, sizeof text - 1), 0);
    CHECK_INT(text_font_add_file(font, junk, err, sizeof err), -1);
    CHECK(is_path_error(err, junk, "not a TrueType font"));
    tmp_path(empty, sizeof empty, "empty.ttf");
    CHECK_INT(write_file(empty, "", 0), 0);
    CHECK_INT(text_font_add_file(font, empty, err, sizeof err), -1);
    CHECK(is_path_error(err, empty, "not a TrueType font"));
    tmp_path(bad, sizeof bad, "broken.ttf");
    /* "ttcf", version 1, one font at offset 1000 (past the end) */
    static const unsigned char ttc[16] = {'t', 't', 'c', 'f', 0, 1, 0, 0, 0, 0, 0, 1,
                                          0, 0, 0x03, 0xE8};
    check_broken_font(font, bad, ttc, sizeof ttc, "collection offset past the end");
    check_broken_font(font, bad, ttc, 12, "collection header cut short");

    /* DejaVu copied to a file loads; broken copies are rejected. */
    const unsigned char *dv = attn_font_dejavu_sans;
    size_t dvlen = (size_t)attn_font_dejavu_sans_len;
    tmp_path(copy, sizeof copy, "dejavu-copy.ttf");
    CHECK_INT(write_file(copy, dv, dvlen), 0);
    unsigned char *mod = malloc(dvlen);
    CHECK(mod != NULL);
    if (mod != NULL) {
        size_t cuts[] = {11, 12, 16, 100, 1000, dvlen / 2};
        for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++)
            check_broken_font(font, bad, dv, cuts[i], "truncated");
        /* A table that claims to reach past the end of the file. */
        size_t glyf = table_record(dv, "glyf"), maxp = table_record(dv, "maxp");
        size_t hhea = table_record(dv, "hhea"), cmap = table_record(dv, "cmap");
        CHECK(glyf != 0 && maxp != 0 && hhea != 0 && cmap != 0);
        if (glyf != 0 && maxp != 0 && hhea != 0 && cmap != 0) {
            memcpy(mod, dv, dvlen);
            put32(mod + glyf + 12, 0xFFFFFF00u);
            check_broken_font(font, bad, mod, dvlen, "glyf length");
            /* More glyphs than loca and hmtx describe. */
            memcpy(mod, dv, dvlen);
            put16(mod + get32(dv + maxp + 8) + 4, 0xFFFF);
            check_broken_font(font, bad, mod, dvlen, "glyph count");
            /* No horizontal metrics at all. */
            memcpy(mod, dv, dvlen);
            put16(mod + get32(dv + hhea + 8) + 34, 0);
            check_broken_font(font, bad, mod, dvlen, "numberOfHMetrics");
            /* Every character map's subtable offset far out of cmap. */
            memcpy(mod, dv, dvlen);
            size_t cm = get32(dv + cmap + 8);
            unsigned nsub = (unsigned)dv[cm + 2] << 8 | dv[cm + 3];
            for (unsigned k = 0; k < nsub; k++)
                put32(mod + cm + 4 + 8 * k + 4, 0x00FFFFF0u);
            check_broken_font(font, bad, mod, dvlen, "cmap subtable offset");
        }
        /* The file cut by one byte must not crash (it may still load). */
        if (write_file(bad, dv, dvlen - 1) == 0) {
            text_font *f2;
            if (text_font_open(&f2, err, sizeof err) == 0) {
                (void)text_font_add_file(f2, bad, err, sizeof err);
                CHECK(text_width(f2, 14, "Ab" NO_FONT_HAS) > 0.0);
                text_font_close(f2);
            }
        }
        free(mod);
    }
    /* After all those failures the font is unchanged and still works. */
    CHECK(text_width(font, 14, "Ab") > 10.0);
    CHECK_INT(text_font_has_all(font, "Row (position) \xE2\x88\x92" "1.0"), 1);
    CHECK_INT(text_font_has_all(font, ""), 1);
    CHECK_INT(text_font_has_all(font, "a" NO_FONT_HAS), 0);
    CHECK_INT(text_font_add_file(font, copy, err, sizeof err), 0);
    text_font_close(font);

    /* At most four faces: DejaVu and three files. */
    CHECK_INT(text_font_open(&font, err, sizeof err), 0);
    if (font != NULL) {
        for (int i = 0; i < 3; i++)
            CHECK_INT(text_font_add_file(font, copy, err, sizeof err), 0);
        CHECK_INT(text_font_add_file(font, copy, err, sizeof err), -1);
        CHECK(strstr(err, "too many font faces") != NULL);
        CHECK_INT(text_font_has_all(font, "Ab"), 1);
        text_font_close(font);
    }
}

/* Rewrite every TrueType outline (of at least 16 bytes) in the font file
 * data[len] (first font of a collection) as a composite glyph made of
 * itself: stb_truetype, left alone, recurses until the stack overflows.
 * Returns how many glyphs were rewritten; 0 for CFF fonts. */
static long make_outlines_recursive(unsigned char *data, size_t len)
{
    if (len < 16)
        return 0;
    size_t s = memcmp(data, "ttcf", 4) == 0 ? get32(data + 12) : 0;
    size_t loca = 0, glyf = 0, head = 0, maxp = 0;
    if (s + 12 > len)
        return 0;
    unsigned ntables = (unsigned)data[s + 4] << 8 | data[s + 5];
    if (s + 12 + 16 * (size_t)ntables > len)
        return 0;
    for (unsigned i = 0; i < ntables; i++) {
        const unsigned char *rec = data + s + 12 + 16 * (size_t)i;
        size_t off = get32(rec + 8);
        if (memcmp(rec, "loca", 4) == 0)
            loca = off;
        else if (memcmp(rec, "glyf", 4) == 0)
            glyf = off;
        else if (memcmp(rec, "head", 4) == 0)
            head = off;
        else if (memcmp(rec, "maxp", 4) == 0)
            maxp = off;
    }
    if (loca == 0 || glyf == 0 || head + 54 > len || maxp + 6 > len)
        return 0;
    int longloca = data[head + 51] != 0;
    unsigned nglyphs = (unsigned)data[maxp + 4] << 8 | data[maxp + 5];
    if (loca + (nglyphs + 1) * (size_t)(longloca ? 4 : 2) > len)
        return 0;
    long n = 0;
    for (unsigned g = 0; g < nglyphs; g++) {
        size_t a, b;
        if (longloca) {
            a = get32(data + loca + 4 * (size_t)g), b = get32(data + loca + 4 * (size_t)g + 4);
        } else {
            a = 2 * (size_t)(data[loca + 2 * g] << 8 | data[loca + 2 * g + 1]);
            b = 2 * (size_t)(data[loca + 2 * g + 2] << 8 | data[loca + 2 * g + 3]);
        }
        if (b < a + 16 || glyf + b > len)
            continue;
        unsigned char *p = data + glyf + a;
        put16(p, 0xFFFF);       /* numberOfContours -1: composite */
        put16(p + 10, 0x0002);  /* ARGS_ARE_XY_VALUES, byte offsets, last */
        put16(p + 12, g);       /* ... of glyph g itself */
        p[14] = p[15] = 0;
        n++;
    }
    return n;
}

/* Draw s at px 20 with its baseline at y = 100, starting at x = 20, and
 * return its ink box in *x0.. (x1 < 0 when nothing was drawn). */
static void draw_sample(text_font *font, const char *s, int *x0, int *y0, int *x1, int *y1)
{
    attn_image img;
    char err[256];
    *x1 = -1;
    if (image_alloc(&img, 200, 160, err, sizeof err) < 0)
        return;
    attn_rgb black = {0, 0, 0};
    text_draw(&img, font, 20, s, 20, 100, TEXT_LEFT, TEXT_BASELINE, TEXT_HORIZONTAL, black);
    ink_box(&img, x0, y0, x1, y1);
    image_free(&img);
}

static void test_cjk_fallback(void)
{
    char err[8448] = "", junk[8192], copy[8192];
    const char *cjk = cjk_font_path();
    CHECK(cjk != NULL);

    /* ATTN_FONT naming junk, a missing file, or a font without CJK: no
     * crash, and the search goes on to the system fonts. */
    tmp_path(junk, sizeof junk, "junk-for-env.ttf");
    tmp_path(copy, sizeof copy, "dejavu-for-env.ttf");
    CHECK_INT(write_file(junk, "\0\1\0\0 junk junk junk junk", 25), 0);
    CHECK_INT(write_file(copy, attn_font_dejavu_sans, (size_t)attn_font_dejavu_sans_len), 0);
    const char *envs[] = {junk, copy, "/nonexistent/font.ttf", ""};
    for (size_t i = 0; i < sizeof envs / sizeof envs[0]; i++) {
        text_font *font;
        setenv("ATTN_FONT", envs[i], 1);
        CHECK_INT(text_font_open(&font, err, sizeof err), 0);
        if (font == NULL)
            continue;
        CHECK_INT(text_font_has_all(font, APPLE_ZH), cjk != NULL);
        CHECK_INT(text_font_has_all(font, APPLE_ZH), cjk != NULL);  /* asked again */
        int x0, y0, x1, y1;
        draw_sample(font, APPLE_ZH, &x0, &y0, &x1, &y1);
        CHECK(x1 > x0);         /* glyphs or missing-glyph boxes */
        CHECK(!text_font_failed(font));
        text_font_close(font);
    }
    pin_fonts();
    if (cjk == NULL)
        return;

    /* With a CJK font: measured as two full-width ideographs (1 em each,
     * where DejaVu's boxes are narrower), drawn on DejaVu's baseline. */
    text_font *font;
    CHECK_INT(text_font_open(&font, err, sizeof err), 0);
    if (font == NULL)
        return;
    double asc = text_ascent(font, 20), desc = text_descent(font, 20);
    CHECK_INT(text_font_has_all(font, "Apple " APPLE_ZH), 1);
    CHECK_NEAR(text_width(font, 20, APPLE_ZH), 40.0, 2.0, 0);
    CHECK_NEAR(text_ascent(font, 20), asc, 0, 0);   /* line metrics: DejaVu's */
    CHECK_NEAR(text_descent(font, 20), desc, 0, 0);
    int x0, y0, x1, y1;
    draw_sample(font, APPLE_ZH, &x0, &y0, &x1, &y1);
    CHECK(x1 > x0 && y1 > y0);
    CHECK(x0 >= 20 && x1 <= 62);
    CHECK(y1 - y0 >= 14);                   /* about an em tall */
    CHECK(y0 >= 100 - asc - 1 && y1 <= 100 + desc + 1);
    CHECK(y1 >= 97);                        /* sits on the baseline */
    /* Latin and CJK in one string share the baseline: the ink of "H苹"
     * ends where "H"'s does, give or take the ideograph's descent. */
    int hx0, hy0, hx1, hy1;
    draw_sample(font, "H", &hx0, &hy0, &hx1, &hy1);
    draw_sample(font, "H" APPLE_ZH, &x0, &y0, &x1, &y1);
    CHECK(hy1 == 99);                       /* H's foot on row 99 */
    CHECK(y1 >= hy1 && y1 <= hy1 + 4);
    CHECK(x1 - x0 > 40);
    /* Rotated CJK text: tall and narrow. */
    attn_image img;
    if (image_alloc(&img, 120, 200, err, sizeof err) == 0) {
        attn_rgb black = {0, 0, 0};
        text_draw(&img, font, 20, APPLE_ZH, 50, 150, TEXT_LEFT, TEXT_TOP, TEXT_UP, black);
        ink_box(&img, &x0, &y0, &x1, &y1);
        CHECK(y1 - y0 > 32 && x1 - x0 < 24 && x0 >= 50 && y1 <= 150);
        image_free(&img);
    }
    CHECK(!text_font_failed(font));
    text_font_close(font);

    /* A character no font has, met first, does not spend the search: the
     * CJK font is appended all the same, once, for what comes later. */
    CHECK_INT(text_font_open(&font, err, sizeof err), 0);
    if (font != NULL) {
        CHECK_INT(text_font_has_all(font, NO_FONT_HAS), 0);
        CHECK_INT(text_font_has_all(font, APPLE_ZH NO_FONT_HAS), 0);
        CHECK_INT(text_font_has_all(font, APPLE_ZH), 1);
        /* DejaVu and the fallback: room for two more faces. */
        CHECK_INT(text_font_add_file(font, cjk, err, sizeof err), 0);
        CHECK_INT(text_font_add_file(font, cjk, err, sizeof err), 0);
        CHECK_INT(text_font_add_file(font, cjk, err, sizeof err), -1);
        text_font_close(font);
    }

    /* Outlines stb_truetype cannot read safely (here, glyphs made of
     * themselves) count as missing: with DejaVu and three such copies the
     * faces are full, so 苹果 is drawn as boxes, without a crash. */
    size_t size;
    unsigned char *data = read_whole(cjk, &size);
    if (data != NULL && make_outlines_recursive(data, size) > 1000 &&
        write_file(copy, data, size) == 0 && text_font_open(&font, err, sizeof err) == 0) {
        for (int i = 0; i < 3; i++)
            CHECK_INT(text_font_add_file(font, copy, err, sizeof err), 0);
        CHECK_INT(text_font_has_all(font, APPLE_ZH), 0);
        draw_sample(font, APPLE_ZH, &x0, &y0, &x1, &y1);
        CHECK(x1 > x0);                     /* DejaVu's boxes */
        CHECK_NEAR(text_width(font, 20, APPLE_ZH), 2 * text_width(font, 20, NO_FONT_HAS), 1e-9, 0);
        text_font_close(font);
    } else {
        CHECK(!"the CJK font has TrueType outlines to break");
    }
    free(data);
}

static void test_ticks(void)
{
    canvas_ticks t;
    char buf[32];
    /* The posenc colorbar: -1.0 -0.5 0.0 0.5 1.0. */
    canvas_ticks_linear(-1.0, 1.0, 9, 0, &t);
    CHECK_INT(t.n, 5);
    CHECK_INT(t.decimals, 1);
    for (int i = 0; i < t.n && i < 5; i++)
        CHECK_NEAR(t.v[i], -1.0 + 0.5 * i, 1e-12, 0);
    canvas_tick_label(t.v[0], t.decimals, buf, sizeof buf);
    CHECK(strcmp(buf, "\xE2\x88\x92" "1.0") == 0);   /* U+2212 minus */
    canvas_tick_label(t.v[2], t.decimals, buf, sizeof buf);
    CHECK(strcmp(buf, "0.0") == 0);
    /* Nice steps 1, 2, 5 x 10^k. */
    canvas_ticks_linear(0.003, 0.49, 5, 0, &t);
    CHECK_INT(t.n, 4);
    CHECK_NEAR(t.v[0], 0.1, 1e-12, 0);
    canvas_ticks_linear(0, 59, 7, 0, &t);
    CHECK_INT(t.n, 6);
    CHECK_NEAR(t.v[5], 50, 0, 0);
    CHECK_INT(t.decimals, 0);
    canvas_ticks_linear(3.0, 3.0, 5, 0, &t);
    CHECK_INT(t.n, 1);
    canvas_tick_label(t.v[0], t.decimals, buf, sizeof buf);
    CHECK(strcmp(buf, "3") == 0);
    canvas_tick_label(-1e-17, 1, buf, sizeof buf);
    CHECK(strcmp(buf, "0.0") == 0);                  /* never "-0.0" */
}

/* ---- heatmaps ---------------------------------------------------------- */

/* Write img to tmpdir/name, read it back with stb_image and compare the
 * size and every byte; returns the decoded (h, w, 3) pixels (free them),
 * or NULL. */
static unsigned char *png_roundtrip(const attn_image *img, const char *name)
{
    char path[8192], err[512] = "";
    tmp_path(path, sizeof path, name);
    int rc = png_write_atomic(path, img, err, sizeof err);
    CHECK_INT(rc, 0);
    if (rc != 0) {
        fprintf(stderr, "png_write_atomic: %s\n", err);
        return NULL;
    }
    int w = 0, h = 0, comp = 0;
    unsigned char *px = stbi_load(path, &w, &h, &comp, 3);
    CHECK(px != NULL);
    if (px == NULL)
        return NULL;
    CHECK_INT(w, img->w);
    CHECK_INT(h, img->h);
    CHECK_INT(comp, 3);
    if (w != img->w || h != img->h) {
        stbi_image_free(px);
        return NULL;
    }
    CHECK(memcmp(px, img->rgb, (size_t)w * h * 3) == 0);
    return px;
}

/* Pixel (x, y) of decoded (h, w, 3) pixels. */
static attn_rgb pixel_at(const unsigned char *px, int w, int x, int y)
{
    const unsigned char *p = px + ((size_t)y * w + x) * 3;
    attn_rgb c = {p[0], p[1], p[2]};
    return c;
}

/* Check the centre pixel of every pooled cell of panel p against the
 * colour of its block mean, computed here independently (double sum in
 * row-major order, as documented in heatmap.c). Returns the number of
 * mismatches. */
static int check_panel_cells(const unsigned char *px, int w, int h, const heat_layout *L,
                             const heat_figure *fig, size_t p)
{
    const heat_panel *hp = &fig->panels[p];
    size_t pool = L->pool;
    size_t pr = (hp->rows + pool - 1) / pool, pc = (hp->cols + pool - 1) / pool;
    int bad = 0;
    for (size_t r = 0; r < pr; r++)
        for (size_t c = 0; c < pc; c++) {
            /* The block mean. */
            double sum = 0.0;
            size_t n = 0;
            for (size_t i = r * pool; i < (r + 1) * pool && i < hp->rows; i++)
                for (size_t j = c * pool; j < (c + 1) * pool && j < hp->cols; j++, n++)
                    sum += hp->data[i * hp->cols + j];
            double v = sum / (double)n;
            double t = L->vmax > L->vmin ? (v - L->vmin) / (L->vmax - L->vmin) : 0.5;
            attn_rgb want = cmap_color(fig->cmap, t);
            /* The pixel at the cell's centre. */
            int x = L->panel_x0 + (int)(p % fig->grid_cols) * L->panel_dx +
                    (int)c * L->cell + L->cell / 2;
            int y = L->panel_y0 + (int)(p / fig->grid_cols) * L->panel_dy +
                    (int)r * L->cell + L->cell / 2;
            if (x < 0 || y < 0 || x >= w || y >= h) {
                bad++;
                continue;
            }
            if (!same_rgb(pixel_at(px, w, x, y), want)) {
                if (bad < 5)
                    fprintf(stderr, "panel %zu cell (%zu, %zu): pixel (%d, %d) is not "
                            "the cell colour\n", p, r, c, x, y);
                bad++;
            }
        }
    return bad;
}

/* Draw fig, round-trip it through a PNG and check every cell of every
 * panel; the layout is returned in *L. */
static void check_heatmap(const heat_figure *fig, const char *name, heat_layout *L,
                          int *width, int *height)
{
    attn_image img;
    char err[512] = "";
    int rc = heatmap_draw(&img, L, fig, err, sizeof err);
    CHECK_INT(rc, 0);
    if (rc != 0) {
        fprintf(stderr, "%s: %s\n", name, err);
        return;
    }
    *width = img.w;
    *height = img.h;
    unsigned char *px = png_roundtrip(&img, name);
    if (px) {
        for (size_t p = 0; p < fig->grid_rows * fig->grid_cols; p++)
            CHECK_INT(check_panel_cells(px, img.w, img.h, L, fig, p), 0);
        stbi_image_free(px);
    }
    image_free(&img);
}

static void posenc(float *P, size_t n, size_t d)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < d / 2; j++) {
            double a = (double)i / pow(10000.0, 2.0 * (double)j / (double)d);
            P[i * d + 2 * j] = (float)sin(a);
            P[i * d + 2 * j + 1] = (float)cos(a);
        }
}

static void test_heatmap_small(void)
{
    /* 7 x 3, not square; scaled up to at least 400 pixels wide. */
    float m[21];
    for (int i = 0; i < 21; i++)
        m[i] = (float)((i * 5) % 21) - 3.5f;
    heat_panel panel = {m, 7, 3, "7 x 3", NULL, NULL};
    heat_figure fig = {&panel, 1, 1, "Keys", "Queries", NULL, NULL, NULL, NULL,
                       cmap_find("viridis"), NAN, NAN, "value", NULL, NULL};
    heat_layout L;
    int w = 0, h = 0;
    check_heatmap(&fig, "small.png", &L, &w, &h);
    CHECK(w >= 400);
    CHECK_INT(L.pool, 1);
    CHECK(L.cell > 1);
    CHECK_NEAR(L.vmin, -3.5, 0, 0);
    CHECK_NEAR(L.vmax, 16.5, 0, 0);
}

static void test_heatmap_posenc(void)
{
    /* The chapter's figure: 60 positions x 32 encoding dimensions. */
    static float P[60 * 32];
    posenc(P, 60, 32);
    heat_panel panel = {P, 60, 32, NULL, NULL, NULL};
    heat_figure fig = {&panel, 1, 1, "Column (encoding dimension)", "Row (position)",
                       NULL, NULL, NULL, NULL, cmap_find("Blues"), NAN, NAN, NULL, NULL, NULL};
    heat_layout L;
    int w = 0, h = 0;
    check_heatmap(&fig, "posenc.png", &L, &w, &h);
    CHECK(w >= 400);
    CHECK_INT(L.pool, 1);
    CHECK(60 * L.cell <= 1000);
}

static void test_heatmap_shared_scale(void)
{
    /* 2 x 2 panels of 4 x 6 with different ranges: one scale for all. */
    static float m[4][24];
    const float base[4] = {0.0f, 10.0f, -5.0f, 100.0f};
    const float span[4] = {1.0f, 10.0f, 10.0f, 1.0f};
    for (int p = 0; p < 4; p++)
        for (int i = 0; i < 24; i++)
            m[p][i] = base[p] + span[p] * (float)((i * 7) % 24) / 23.0f;
    heat_panel panels[4] = {{m[0], 4, 6, "Head 1", NULL, NULL}, {m[1], 4, 6, "Head 2", NULL, NULL},
                            {m[2], 4, 6, "Head 3", NULL, NULL}, {m[3], 4, 6, "Head 4", NULL, NULL}};
    heat_figure fig = {panels, 2, 2, "Key positions", "Query positions", NULL, NULL, NULL, NULL,
                       cmap_find("Reds"), NAN, NAN, NULL, NULL, NULL};
    heat_layout L;
    int w = 0, h = 0;
    check_heatmap(&fig, "grid.png", &L, &w, &h);
    CHECK_NEAR(L.vmin, -5.0, 0, 0);
    CHECK_NEAR(L.vmax, 101.0, 0, 0);
    CHECK(L.panel_dx >= 6 * L.cell);
    CHECK(L.panel_dy >= 4 * L.cell);

    /* A given scale: values outside it take the end colours. */
    fig.vmin = 0.0;
    fig.vmax = 20.0;
    check_heatmap(&fig, "grid_scale.png", &L, &w, &h);
    CHECK_NEAR(L.vmin, 0.0, 0, 0);
    CHECK_NEAR(L.vmax, 20.0, 0, 0);

    /* 2 x 5 heads with token labels. */
    static float a[10][24];
    static char titles[10][16];
    heat_panel heads[10];
    for (int p = 0; p < 10; p++) {
        for (int i = 0; i < 24; i++)
            a[p][i] = (float)((p * 3 + i * 5) % 11) / 10.0f;
        snprintf(titles[p], sizeof titles[p], "Head %d", p % 5 + 1);
        heads[p] = (heat_panel){a[p], 4, 6, titles[p], NULL, NULL};
    }
    const char *keys[] = {"The", "cat", "sat", "on", "the", "mat"};
    const char *queries[] = {"Die", "Katze", "sa\xC3\x9F", "<eos>"};
    heat_figure fig2 = {heads, 2, 5, "Key positions", "Query positions", keys, queries, NULL, NULL,
                        cmap_find("Reds"), NAN, NAN, "weight", NULL, NULL};
    check_heatmap(&fig2, "heads.png", &L, &w, &h);
}

static void test_heatmap_pooled(void)
{
    /* 3000 x 40: pool 3, blocks averaged, the last column block has one
     * column only. */
    size_t rows = 3000, cols = 40;
    float *m = malloc(rows * cols * sizeof *m);
    CHECK(m != NULL);
    if (m == NULL)
        return;
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++)
            m[r * cols + c] = (float)(sin((double)r * 0.013) * cos((double)c * 0.7) +
                                      (double)r / 3000.0);
    heat_panel panel = {m, rows, cols, "pooled", NULL, NULL};
    heat_figure fig = {&panel, 1, 1, "Column", "Row", NULL, NULL, NULL, NULL, cmap_find("Blues"),
                       NAN, NAN, NULL, NULL, NULL};
    heat_layout L;
    int w = 0, h = 0;
    check_heatmap(&fig, "pooled.png", &L, &w, &h);
    CHECK_INT(L.pool, 3);
    CHECK(1000 * (size_t)L.cell <= 1000 + 50);      /* panel side about 1000 */
    CHECK(L.cell >= 1);
    free(m);

    /* 10000 x 512 (the CLI's largest case) renders, pooled. */
    size_t n = 10000, d = 512;
    float *P = malloc(n * d * sizeof *P);
    CHECK(P != NULL);
    if (P == NULL)
        return;
    posenc(P, n, d);
    heat_panel big = {P, n, d, NULL, NULL, NULL};
    heat_figure fig2 = {&big, 1, 1, "Column (encoding dimension)", "Row (position)",
                        NULL, NULL, NULL, NULL, cmap_find("Blues"), NAN, NAN, NULL, NULL, NULL};
    attn_image img;
    char err[256] = "";
    CHECK_INT(heatmap_draw(&img, &L, &fig2, err, sizeof err), 0);
    CHECK_INT(L.pool, 10);
    CHECK((n + L.pool - 1) / L.pool * (size_t)L.cell <= 1000);
    image_free(&img);
    free(P);
}

static void test_heatmap_degenerate(void)
{
    /* vmin == vmax: every cell is the middle colour, no division by 0. */
    float m[6] = {2, 2, 2, 2, 2, 2};
    heat_panel panel = {m, 2, 3, NULL, NULL, NULL};
    heat_figure fig = {&panel, 1, 1, NULL, NULL, NULL, NULL, NULL, NULL, cmap_find("gray"), NAN, NAN, NULL,
                       NULL, NULL};
    heat_layout L;
    int w = 0, h = 0;
    check_heatmap(&fig, "constant.png", &L, &w, &h);
    CHECK_NEAR(L.vmin, 2.0, 0, 0);
    CHECK_NEAR(L.vmax, 2.0, 0, 0);

    /* Bad input fails with a message and no image. */
    attn_image img;
    char err[256] = "";
    heat_panel none = {NULL, 2, 3, NULL, NULL, NULL};
    heat_figure bad = fig;
    bad.panels = &none;
    CHECK_INT(heatmap_draw(&img, NULL, &bad, err, sizeof err), -1);
    CHECK(err[0] != '\0');
    CHECK(img.rgb == NULL);
    bad = fig;
    bad.grid_cols = 0;
    err[0] = '\0';
    CHECK_INT(heatmap_draw(&img, NULL, &bad, err, sizeof err), -1);
    CHECK(err[0] != '\0');
    bad = fig;
    bad.vmin = 1.0;
    bad.vmax = 0.0;
    err[0] = '\0';
    CHECK_INT(heatmap_draw(&img, NULL, &bad, err, sizeof err), -1);
    CHECK(strstr(err, "vmin") != NULL);
    /* Tick labels need panels of one shape. */
    float m2[4] = {0, 1, 2, 3};
    heat_panel two[2] = {{m, 2, 3, NULL, NULL, NULL}, {m2, 2, 2, NULL, NULL, NULL}};
    const char *xl[] = {"a", "b", "c"};
    bad = fig;
    bad.panels = two;
    bad.grid_cols = 2;
    bad.xticklabels = xl;
    err[0] = '\0';
    CHECK_INT(heatmap_draw(&img, NULL, &bad, err, sizeof err), -1);
    CHECK(err[0] != '\0');
}

/* ---- line plots -------------------------------------------------------- */

/* Number of pixels of img exactly of colour c, and their row range. */
static long count_color(const attn_image *img, attn_rgb c, int *ymin, int *ymax)
{
    long n = 0;
    *ymin = img->h;
    *ymax = -1;
    for (int y = 0; y < img->h; y++)
        for (int x = 0; x < img->w; x++) {
            const unsigned char *p = img->rgb + ((size_t)y * img->w + x) * 3;
            if (p[0] == c.r && p[1] == c.g && p[2] == c.b) {
                n++;
                *ymin = y < *ymin ? y : *ymin;
                *ymax = y > *ymax ? y : *ymax;
            }
        }
    return n;
}

static void test_plot(void)
{
    /* Two constant series: solid blue, dashed magenta. */
    double x[10], y1[10], y2[10];
    for (int i = 0; i < 10; i++) {
        x[i] = i;
        y1[i] = 0.5;
        y2[i] = -0.25;
    }
    plot_series s[2] = {{x, y1, 10, "half"}, {x, y2, 10, NULL}};
    plot_figure fig = {s, 2, "Constant", "x", "y", 0, 0, 0, 0, NULL, 0, {0, 0}, {0, 0}, NULL};
    attn_image img;
    char err[256] = "";
    int rc = plot_draw(&img, &fig, err, sizeof err);
    CHECK_INT(rc, 0);
    if (rc != 0) {
        fprintf(stderr, "plot_draw: %s\n", err);
        return;
    }
    CHECK(img.w >= 800 && img.h >= 300);   /* d2l's figsize (6, 2.5) look */
    int ymin, ymax;
    attn_rgb blue = {0x1f, 0x77, 0xb4}, magenta = {0xbf, 0x00, 0xbf};
    /* The line (and the legend's sample) are in exact series colour. */
    CHECK(count_color(&img, blue, &ymin, &ymax) > 300);
    CHECK(count_color(&img, magenta, &ymin, &ymax) > 150);
    CHECK(ymax - ymin <= 2);               /* one horizontal line */
    unsigned char *px = png_roundtrip(&img, "plot.png");
    stbi_image_free(px);
    image_free(&img);

    /* Log axes skip values <= 0; a given size is used. */
    double lx[5] = {1, 10, 100, 1000, 10000}, ly[5] = {1e-3, 0, 1e-1, 1, 10};
    plot_series ls = {lx, ly, 5, "t"};
    plot_figure lf = {&ls, 1, NULL, "n", "seconds", 1, 1, 640, 320, NULL, 0, {0, 0}, {0, 0}, NULL};
    CHECK_INT(plot_draw(&img, &lf, err, sizeof err), 0);
    CHECK_INT(img.w, 640);
    CHECK_INT(img.h, 320);
    image_free(&img);

    /* Bad input. */
    plot_series nodata = {NULL, NULL, 3, NULL};
    plot_figure bad = {&nodata, 1, NULL, NULL, NULL, 0, 0, 0, 0, NULL, 0, {0, 0}, {0, 0}, NULL};
    err[0] = '\0';
    CHECK_INT(plot_draw(&img, &bad, err, sizeof err), -1);
    CHECK(err[0] != '\0');
    CHECK(img.rgb == NULL);
    plot_figure tiny = {s, 1, NULL, NULL, NULL, 0, 0, 10, 10, NULL, 0, {0, 0}, {0, 0}, NULL};
    CHECK_INT(plot_draw(&img, &tiny, err, sizeof err), -1);
}

/* ---- PNG files ----------------------------------------------------------- */

static void test_png(void)
{
    char path[8192], err[8192];
    attn_image img;
    CHECK_INT(image_alloc(&img, 5, 4, err, sizeof err), 0);
    if (img.rgb == NULL)
        return;
    img.rgb[0] = 10;        /* pixel (0, 0) red = 10 */
    int before = count_entries(tmpdir);

    /* A missing folder: fails, names the path and the reason, leaves
     * nothing behind. */
    tmp_path(path, sizeof path, "missing/x.png");
    err[0] = '\0';
    CHECK_INT(png_write_atomic(path, &img, err, sizeof err), -1);
    CHECK(strstr(err, path) != NULL);
    CHECK(strstr(err, strerror(ENOENT)) != NULL);
    struct stat st;
    CHECK(stat(path, &st) != 0);
    CHECK_INT(count_entries(tmpdir), before);

    /* The path is a directory: fails, the directory and its contents stay,
     * no temporary file is left. */
    char dir[4200], keep[4300];
    tmp_path(dir, sizeof dir, "adir");
    CHECK_INT(mkdir(dir, 0777), 0);
    snprintf(keep, sizeof keep, "%s/keep.txt", dir);
    FILE *f = fopen(keep, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("keep", f);
        fclose(f);
    }
    before = count_entries(tmpdir);
    err[0] = '\0';
    CHECK_INT(png_write_atomic(dir, &img, err, sizeof err), -1);
    CHECK(strstr(err, dir) != NULL);
    CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode));
    CHECK(stat(keep, &st) == 0 && st.st_size == 4);
    CHECK_INT(count_entries(tmpdir), before);
    CHECK_INT(count_entries(dir), 1);
    /* ... also written as "adir/" */
    char slash[4300];
    snprintf(slash, sizeof slash, "%s/", dir);
    CHECK_INT(png_write_atomic(slash, &img, err, sizeof err), -1);
    CHECK_INT(count_entries(dir), 1);

    /* A successful overwrite replaces the content, with the mode of a
     * newly created file (0666 & ~umask). */
    tmp_path(path, sizeof path, "over.png");
    f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("old content", f);
        fclose(f);
    }
    chmod(path, 0600);
    before = count_entries(tmpdir);
    err[0] = '\0';
    CHECK_INT(png_write_atomic(path, &img, err, sizeof err), 0);
    CHECK_INT(count_entries(tmpdir), before);
    int w = 0, h = 0, comp = 0;
    unsigned char *px = stbi_load(path, &w, &h, &comp, 3);
    CHECK(px != NULL);
    CHECK_INT(w, 5);
    CHECK_INT(h, 4);
    if (px) {
        CHECK_INT(px[0], 10);
        CHECK_INT(px[1], 255);
        stbi_image_free(px);
    }
    mode_t mask = umask(022);
    umask(mask);
    CHECK(stat(path, &st) == 0);
    CHECK_INT(st.st_mode & 0777, 0666 & ~mask);

    /* Invalid arguments. */
    attn_image empty = {0, 0, NULL};
    CHECK_INT(png_write_atomic(path, &empty, err, sizeof err), -1);
    CHECK_INT(png_write_atomic("", &img, err, sizeof err), -1);
    image_free(&img);

    /* image_alloc refuses absurd sizes. */
    err[0] = '\0';
    CHECK_INT(image_alloc(&img, 1 << 30, 1 << 30, err, sizeof err), -1);
    CHECK(err[0] != '\0' && img.rgb == NULL);
    CHECK_INT(image_alloc(&img, 0, 5, err, sizeof err), -1);
}

/* A panel whose rows come from a function draws the same image as the
 * same matrix stored (here pooled: 3000 × 40). */
static void ramp_row(void *ctx, size_t i, float *out)
{
    size_t cols = *(const size_t *)ctx;
    for (size_t j = 0; j < cols; j++)
        out[j] = (float)sin(0.01 * (double)i + 0.3 * (double)j);
}

static void test_heatmap_rows(void)
{
    size_t rows = 3000, cols = 40;
    float *m = malloc(rows * cols * sizeof *m);
    CHECK(m != NULL);
    if (!m)
        return;
    for (size_t i = 0; i < rows; i++)
        ramp_row(&cols, i, m + i * cols);
    heat_panel stored = {m, rows, cols, "stored", NULL, NULL};
    heat_panel made = {NULL, rows, cols, "stored", ramp_row, &cols};
    heat_figure fig = {&stored, 1, 1, "x", "y", NULL, NULL, NULL, NULL, cmap_find("Blues"), NAN, NAN, NULL,
                       NULL, NULL};
    attn_image a = {0, 0, NULL}, b = {0, 0, NULL};
    char err[256];
    CHECK(heatmap_draw(&a, NULL, &fig, err, sizeof err) == 0);
    fig.panels = &made;
    CHECK(heatmap_draw(&b, NULL, &fig, err, sizeof err) == 0);
    CHECK(a.rgb && b.rgb && a.w == b.w && a.h == b.h &&
          memcmp(a.rgb, b.rgb, (size_t)a.w * (size_t)a.h * 3) == 0);
    /* neither data nor a row function, or both: refused */
    heat_panel both = {m, rows, cols, NULL, ramp_row, &cols};
    attn_image c = {0, 0, NULL};
    fig.panels = &both;
    CHECK(heatmap_draw(&c, NULL, &fig, err, sizeof err) == -1);
    image_free(&a);
    image_free(&b);
    free(m);
}

/* ---- token labels no font can draw ------------------------------------- */

/* Whether a and b are the same picture, pixel for pixel. */
static int same_image(const attn_image *a, const attn_image *b)
{
    return a->rgb != NULL && b->rgb != NULL && a->w == b->w && a->h == b->h &&
           memcmp(a->rgb, b->rgb, (size_t)a->w * (size_t)a->h * 3) == 0;
}

/* Draw fig into *img with its layout in *L; 0 on success. */
static int draw_heat(const heat_figure *fig, attn_image *img, heat_layout *L)
{
    char err[256] = "";
    memset(L, 0xAB, sizeof *L);         /* every field must be written */
    int rc = heatmap_draw(img, L, fig, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "heatmap_draw: %s\n", err);
    return rc;
}

/* Dark pixels (any channel below 128) in rows y0 … y1−1, columns x0 … x1−1. */
static int ink_in(const attn_image *img, int x0, int y0, int x1, int y1)
{
    int n = 0;
    for (int y = y0 < 0 ? 0 : y0; y < y1 && y < img->h; y++)
        for (int x = x0 < 0 ? 0 : x0; x < x1 && x < img->w; x++) {
            const unsigned char *p = img->rgb + 3 * ((size_t)y * (size_t)img->w + (size_t)x);
            n += p[0] < 128 || p[1] < 128 || p[2] < 128;
        }
    return n;
}

static void test_heatmap_row_titles(void)
{
    /* 2 × 2 panels titled "Head 1", "Head 2"; rows titled by a step, as
     * attn train draws the attention forming. */
    float m[4][6];
    for (int p = 0; p < 4; p++)
        for (int i = 0; i < 6; i++)
            m[p][i] = (float)((p + 1) * i % 7) / 6.0f;
    heat_panel panels[4] = {{m[0], 2, 3, "Head 1", NULL, NULL}, {m[1], 2, 3, "Head 2", NULL, NULL},
                            {m[2], 2, 3, "Head 1", NULL, NULL}, {m[3], 2, 3, "Head 2", NULL, NULL}};
    static const char *const titles[] = {"step 0 · loss 2.30", "step 100 · loss 0.05"};
    static const char *const empty[] = {"", NULL};
    static const char *const longer[] = {"a row title much longer than the two panels of its row "
                                         "are wide together, and longer than the whole figure "
                                         "with its colorbar would be without it", NULL};
    heat_figure fig = {panels, 2, 2, "Keys", "Queries", NULL, NULL, NULL, NULL,
                       cmap_find("Reds"), 0.0, 1.0, NULL, NULL, NULL};
    attn_image plain = {0, 0, NULL}, titled = {0, 0, NULL}, none = {0, 0, NULL},
               wide = {0, 0, NULL};
    heat_layout L0, L1, Ln, Lw;
    text_font *font = NULL;
    char err[256];
    CHECK_INT(text_font_open(&font, err, sizeof err), 0);
    int band = (int)ceil(text_line_height(font, 14.0)) + 6; /* FS_TITLE + TITLE_PAD */

    CHECK_INT(draw_heat(&fig, &plain, &L0), 0);
    fig.row_titles = titles;
    CHECK_INT(draw_heat(&fig, &titled, &L1), 0);
    /* one more title line above each row: the rows move down by a band each */
    CHECK_INT(L1.panel_y0, L0.panel_y0 + band);
    CHECK_INT(L1.panel_dy, L0.panel_dy + band);
    CHECK_INT(titled.h, plain.h + 2 * band);
    CHECK_INT(titled.w, plain.w);
    /* the row title's ink: in the band above the panel titles, from the
     * first panel's left edge; none there in the figure without */
    for (int r = 0; r < 2; r++) {
        int top = L1.panel_y0 + r * L1.panel_dy - 2 * band;
        CHECK(ink_in(&titled, L1.panel_x0, top, L1.panel_x0 + 60, top + band) > 40);
    }
    CHECK_INT(ink_in(&plain, L0.panel_x0, L0.panel_y0 - 2 * band, L0.panel_x0 + 60,
                     L0.panel_y0 - band), 0);
    /* "" titles are none: the same figure as without */
    fig.row_titles = empty;
    CHECK_INT(draw_heat(&fig, &none, &Ln), 0);
    CHECK(same_image(&none, &plain));
    /* a title longer than its row widens the figure to hold it */
    fig.row_titles = longer;
    CHECK_INT(draw_heat(&fig, &wide, &Lw), 0);
    CHECK(wide.w >= Lw.panel_x0 + (int)text_width(font, 14.0, longer[0]));
    CHECK(wide.w > plain.w);
    text_font_close(font);
    image_free(&plain);
    image_free(&titled);
    image_free(&none);
    image_free(&wide);
}

static void test_heatmap_row_labels(void)
{
    /* Two examples, one panel each (2 × 1 grid), 3 × 3 weights: a sentence
     * per row of panels, "A B C" above and "X Y Z" below. */
    static const char *const abc[] = {"A", "B", "C"}, *const xyz[] = {"X", "Y", "Z"};
    static const char *const *const rows[] = {abc, xyz};
    float m[2][9];
    for (int i = 0; i < 9; i++) {
        m[0][i] = (float)i / 8.0f;
        m[1][i] = (float)(8 - i) / 8.0f;
    }
    heat_panel panels[2] = {{m[0], 3, 3, "Head 1", NULL, NULL}, {m[1], 3, 3, "Head 1", NULL, NULL}};
    heat_figure fig = {panels, 2, 1, "Key positions", "Query positions", abc, abc, NULL, NULL,
                       cmap_find("Reds"), NAN, NAN, NULL, NULL, NULL};
    attn_image shared = {0, 0, NULL}, per_row = {0, 0, NULL}, numbered = {0, 0, NULL};
    heat_layout Ls, Lr, Ln;

    /* shared labels: x tick labels under the bottom row only */
    CHECK_INT(draw_heat(&fig, &shared, &Ls), 0);
    int ph = 3 * Ls.cell;
    /* where tick labels go under the top panel: below the tick marks and
     * above the next row's titles */
    int under0 = Ls.panel_y0 + ph + 2, band = 13;
    CHECK_INT(ink_in(&shared, Ls.panel_x0, under0 + 6, Ls.panel_x0 + ph, under0 + band), 0);

    /* a sentence per row: x tick labels under each row, rows further apart */
    fig.xticklabels = fig.yticklabels = NULL;
    fig.row_xticklabels = fig.row_yticklabels = rows;
    CHECK_INT(draw_heat(&fig, &per_row, &Lr), 0);
    CHECK(Lr.x_numbered == 0 && Lr.y_numbered == 0 && Lr.missing[0] == '\0');
    CHECK(Lr.cell == Ls.cell && Lr.panel_dy > Ls.panel_dy);
    under0 = Lr.panel_y0 + ph + 2;
    CHECK(ink_in(&per_row, Lr.panel_x0, under0 + 6, Lr.panel_x0 + ph, under0 + band) > 10);
    CHECK(!same_image(&shared, &per_row));

    /* one row no font can draw: both axes numbered, as without labels */
    static const char *const zh[] = {APPLE_ZH, "B", "C"};
    static const char *const *const rows_zh[] = {abc, zh};
    setenv("ATTN_FONT", "/nonexistent/font.ttf", 1);
    setenv("ATTN_FONT_SEARCH", "", 1);
    fig.row_xticklabels = fig.row_yticklabels = rows_zh;
    image_free(&per_row);
    CHECK_INT(draw_heat(&fig, &per_row, &Lr), 0);
    CHECK(Lr.x_numbered == 1 && Lr.y_numbered == 1 && strcmp(Lr.missing, APPLE_ZH) == 0);
    fig.row_xticklabels = fig.row_yticklabels = NULL;
    CHECK_INT(draw_heat(&fig, &numbered, &Ln), 0);
    CHECK(same_image(&per_row, &numbered));
    pin_fonts();

    /* tick labels need panels of one shape */
    heat_panel uneven[2] = {{m[0], 3, 3, NULL, NULL, NULL}, {m[1], 2, 3, NULL, NULL, NULL}};
    fig.panels = uneven;
    fig.row_xticklabels = rows;
    char err[256] = "";
    attn_image bad = {0, 0, NULL};
    CHECK_INT(heatmap_draw(&bad, NULL, &fig, err, sizeof err), -1);
    CHECK(strstr(err, "one shape") != NULL);
    image_free(&shared);
    image_free(&per_row);
    image_free(&numbered);
}

static void test_heatmap_level_tokens(void)
{
    /* Five keys whose widest token does not fit a default cell: the cells
     * widen so that the tokens read level (the figure grows), unless the
     * panels would pass 1200 px side by side (forty keys). */
    static const char *const toks[] = {"<pad>", "<pad>", "<pad>", "<pad>", "<pad>"};
    static const char *const *const rows[] = {toks};
    float m[40 * 40];
    for (int i = 0; i < 40 * 40; i++)
        m[i] = (float)(i % 7) / 7.0f;
    heat_panel five[2] = {{m, 5, 5, "Head 1", NULL, NULL}, {m, 5, 5, "Head 2", NULL, NULL}};
    heat_figure fig = {five, 1, 2, "Key positions", "Query positions", NULL, NULL, NULL, NULL,
                       cmap_find("Reds"), NAN, NAN, NULL, NULL, NULL};
    attn_image a = {0, 0, NULL}, b = {0, 0, NULL};
    heat_layout La, Lb;
    CHECK_INT(draw_heat(&fig, &a, &La), 0);
    fig.xticklabels = toks;
    CHECK_INT(draw_heat(&fig, &b, &Lb), 0);
    CHECK(Lb.cell > La.cell);
    CHECK(Lb.cell * 5 * 2 <= 1200);
    image_free(&b);
    fig.xticklabels = NULL;             /* the same through per-row tokens */
    fig.row_xticklabels = rows;
    CHECK_INT(draw_heat(&fig, &b, &Lb), 0);
    CHECK(Lb.cell > La.cell);
    image_free(&a);
    image_free(&b);

    static const char *long_toks[40];
    for (int i = 0; i < 40; i++)
        long_toks[i] = "a-rather-long-token";
    heat_panel forty = {m, 40, 40, NULL, NULL, NULL};
    heat_figure wide = {&forty, 1, 1, "Key positions", "Query positions", NULL, NULL, NULL, NULL,
                        cmap_find("Reds"), NAN, NAN, NULL, NULL, NULL};
    CHECK_INT(draw_heat(&wide, &a, &La), 0);
    wide.xticklabels = long_toks;
    CHECK_INT(draw_heat(&wide, &b, &Lb), 0);
    CHECK_INT(Lb.cell, La.cell);          /* turned upwards instead */
    CHECK(b.h > a.h);
    image_free(&a);
    image_free(&b);
}

static void test_label_fallback(void)
{
    /* 苹果 发布 了 新的 产品: five tokens DejaVu Sans has no glyph for. */
    static const char *const zh[] = {APPLE_ZH, "\xE5\x8F\x91\xE5\xB8\x83", "\xE4\xBA\x86",
                                     "\xE6\x96\xB0\xE7\x9A\x84", "\xE4\xBA\xA7\xE5\x93\x81"};
    static const char *const en[] = {"apple", "launches", "a", "new", "product"};
    float m[5 * 5];                     /* (5 queries, 5 keys) */
    for (int i = 0; i < 25; i++)
        m[i] = (float)((i * 7) % 25) / 25.0f;
    heat_panel panel = {m, 5, 5, "Head 1", NULL, NULL};
    const heat_figure plain = {&panel, 1, 1, "Key positions", "Query positions", NULL, NULL, NULL, NULL,
                               cmap_find("Reds"), NAN, NAN, NULL, NULL, NULL};
    char dejavu[8192], search[8300];
    tmp_path(dejavu, sizeof dejavu, "dejavu-only.ttf");
    CHECK_INT(write_file(dejavu, attn_font_dejavu_sans, (size_t)attn_font_dejavu_sans_len), 0);

    /* No CJK font reachable: $ATTN_FONT missing or without CJK, and a
     * system search that finds nothing (empty, or files without CJK).
     * The labelled figure is then the numbered one, pixel for pixel. */
    snprintf(search, sizeof search, "/nonexistent/a.ttc::%s", dejavu);
    const char *envs[][2] = {{"/nonexistent/font.ttf", ""}, {dejavu, ""}, {"", search}};
    for (size_t k = 0; k < sizeof envs / sizeof envs[0]; k++) {
        setenv("ATTN_FONT", envs[k][0], 1);
        setenv("ATTN_FONT_SEARCH", envs[k][1], 1);
        attn_image a = {0, 0, NULL}, b = {0, 0, NULL};
        heat_layout La, Lb;
        heat_figure fig = plain;
        CHECK_INT(draw_heat(&fig, &a, &La), 0);
        CHECK(La.x_numbered == 0 && La.y_numbered == 0 && La.missing[0] == '\0');
        fig.xticklabels = zh;
        fig.yticklabels = zh;
        CHECK_INT(draw_heat(&fig, &b, &Lb), 0);
        CHECK(Lb.x_numbered == 1 && Lb.y_numbered == 1);
        CHECK(strcmp(Lb.missing, APPLE_ZH) == 0);
        CHECK(same_image(&a, &b));
        CHECK(La.cell == Lb.cell && La.panel_x0 == Lb.panel_x0 && La.panel_y0 == Lb.panel_y0);
        image_free(&a);
        image_free(&b);
    }

    /* Each axis on its own: Latin keys keep their labels, the queries are
     * numbered and named by their first label DejaVu cannot draw. */
    attn_image num = {0, 0, NULL}, mixed = {0, 0, NULL}, latin = {0, 0, NULL};
    heat_layout L;
    heat_figure fig = plain;
    CHECK_INT(draw_heat(&fig, &num, &L), 0);
    fig.xticklabels = en;
    CHECK_INT(draw_heat(&fig, &latin, &L), 0);
    CHECK(L.x_numbered == 0 && L.y_numbered == 0 && L.missing[0] == '\0');
    static const char *const some_zh[] = {"a", "b", "\xE4\xBA\x86", APPLE_ZH, "c"};
    fig.yticklabels = some_zh;
    CHECK_INT(draw_heat(&fig, &mixed, &L), 0);
    CHECK(L.x_numbered == 0 && L.y_numbered == 1);
    CHECK(strcmp(L.missing, "\xE4\xBA\x86") == 0);
    CHECK(same_image(&mixed, &latin));
    CHECK(!same_image(&mixed, &num));
    image_free(&num);
    image_free(&mixed);
    image_free(&latin);

    /* The reported label is safe to print: control characters and bad
     * UTF-8 become U+FFFD, and it is cut as the tick label would be. */
    static const char *const nasty[] = {"\x1B[31m" APPLE_ZH "\n\xFF", "x", "y", "z", "w"};
    fig = plain;
    fig.xticklabels = nasty;
    CHECK_INT(draw_heat(&fig, &num, &L), 0);
    CHECK(L.x_numbered == 1 && L.y_numbered == 0);
    CHECK(strcmp(L.missing, "\xEF\xBF\xBD[31m" APPLE_ZH "\xEF\xBF\xBD\xEF\xBF\xBD") == 0);
    image_free(&num);
    char longest[40 * 3 + 1] = "";
    for (int i = 0; i < 40; i++)
        strcat(longest, "\xE4\xBA\x86");            /* 了 × 40 */
    const char *const long_labels[] = {longest, "x", "y", "z", "w"};
    fig.xticklabels = long_labels;
    CHECK_INT(draw_heat(&fig, &num, &L), 0);
    CHECK_INT(strlen(L.missing), 23 * 3 + 3);       /* 23 characters, then … */
    CHECK(strcmp(L.missing + 23 * 3, "\xE2\x80\xA6") == 0);
    image_free(&num);
    /* Control characters alone are drawn (as U+FFFD): not a reason to
     * number the axis. */
    static const char *const controls[] = {"\x01", "\t", "a\x7F", "b", "c"};
    fig.xticklabels = controls;
    CHECK_INT(draw_heat(&fig, &num, &L), 0);
    CHECK(L.x_numbered == 0 && L.missing[0] == '\0');
    image_free(&num);
    char printable[6];
    text_printable(APPLE_ZH "x", printable, sizeof printable);
    CHECK(strcmp(printable, "\xE8\x8B\xB9") == 0);     /* 苹: cut at a whole character */
    text_printable(NULL, printable, sizeof printable);
    CHECK(printable[0] == '\0');

    /* A caller's font serves several figures and is not closed by them
     * (ASan would see a double free or a use after free). */
    char err[4352] = "";
    text_font *font = NULL;
    CHECK_INT(text_font_open(&font, err, sizeof err), 0);
    if (font != NULL) {
        fig = plain;
        fig.font = font;
        fig.xticklabels = en;
        for (int i = 0; i < 2; i++) {
            CHECK_INT(draw_heat(&fig, &num, &L), 0);
            image_free(&num);
        }
        double x[3] = {1, 2, 3}, y[3] = {1, 4, 9};
        plot_series ps = {x, y, 3, "squares"};
        plot_figure pf = {&ps, 1, "Title", "x", "y", 0, 0, 0, 0, font, 0, {0, 0}, {0, 0}, NULL};
        CHECK_INT(plot_draw(&num, &pf, err, sizeof err), 0);
        image_free(&num);
        CHECK(text_width(font, 14, "still open") > 10.0);
        text_font_close(font);
    }

    /* With a CJK font, given or found, the labels are drawn. */
    const char *cjk = cjk_font_path();
    CHECK(cjk != NULL);
    if (cjk != NULL) {
        attn_image given = {0, 0, NULL}, found = {0, 0, NULL};
        fig = plain;
        CHECK_INT(draw_heat(&fig, &num, &L), 0);
        fig.xticklabels = zh;
        fig.yticklabels = zh;
        /* given: the search still finds nothing */
        setenv("ATTN_FONT", "", 1);
        setenv("ATTN_FONT_SEARCH", "", 1);
        CHECK_INT(text_font_open(&font, err, sizeof err), 0);
        if (font != NULL && text_font_add_file(font, cjk, err, sizeof err) == 0) {
            fig.font = font;
            CHECK_INT(draw_heat(&fig, &given, &L), 0);
            CHECK(L.x_numbered == 0 && L.y_numbered == 0 && L.missing[0] == '\0');
            CHECK(!same_image(&given, &num));
        } else {
            CHECK(!"the CJK font loads");
        }
        text_font_close(font);
        /* found: the search list names it after a missing file */
        snprintf(search, sizeof search, "/nonexistent/a.ttc:%s", cjk);
        setenv("ATTN_FONT_SEARCH", search, 1);
        fig.font = NULL;
        CHECK_INT(draw_heat(&fig, &found, &L), 0);
        CHECK(L.x_numbered == 0 && L.y_numbered == 0 && L.missing[0] == '\0');
        CHECK(same_image(&found, &given));
        image_free(&num);
        image_free(&given);
        image_free(&found);
    }
    pin_fonts();
}

/* A fontconfig configuration at path: fonts from dir only (NULL: none),
 * its cache beside it in tmpdir. */
static int write_fc_config(const char *path, const char *dir)
{
    char text[20000];
    int n = snprintf(text, sizeof text,
                     "<?xml version=\"1.0\"?>\n<fontconfig>\n%s%s%s"
                     "  <cachedir>%s/fc-cache</cachedir>\n</fontconfig>\n",
                     dir ? "  <dir>" : "", dir ? dir : "", dir ? "</dir>\n" : "", tmpdir);
    if (n < 0 || (size_t)n >= sizeof text)
        return -1;
    return write_file(path, text, (size_t)n);
}

/* What font_find offered: the paths and face indexes, in order. */
typedef struct offers {
    int n;
    char path[FONT_FIND_MAX_OFFERS][4096];
    int index[FONT_FIND_MAX_OFFERS];
    int accept;             /* accept the offer with this number (-1: none) */
} offers;

static int note_offer(const char *path, int index, void *ctx)
{
    offers *o = ctx;
    if (o->n < FONT_FIND_MAX_OFFERS) {
        snprintf(o->path[o->n], sizeof o->path[0], "%s", path);
        o->index[o->n] = index;
    }
    return o->n++ == o->accept;
}

/* Fonts found with fontconfig ($ATTN_FONT_SEARCH unset), in a
 * configuration that sees the set-up's CJK font only (a link to it in a
 * folder of tmpdir) and in one that sees none; collections read at the
 * face index fontconfig gives. */
static void test_fontconfig(void)
{
    char err[8448] = "", dir[8192], link[8300], fc_wqy[8192], fc_none[8192];
    const char *cjk = cjk_font_path();
    CHECK(cjk != NULL);
    if (cjk == NULL)
        return;
    tmp_path(dir, sizeof dir, "fc-fonts");
    snprintf(link, sizeof link, "%s/wqy-microhei.ttc", dir);
    tmp_path(fc_wqy, sizeof fc_wqy, "fc-wqy.conf");
    tmp_path(fc_none, sizeof fc_none, "fc-none.conf");
    CHECK_INT(mkdir(dir, 0700), 0);
    CHECK_INT(symlink(WQY, link), 0);
    CHECK_INT(write_fc_config(fc_wqy, dir), 0);

    /* the faces of a collection: WenQuanYi Micro Hei and its Mono, both
     * with 苹; there is no third */
    font_face face;
    for (int index = 0; index < 2; index++) {
        CHECK_INT(font_face_load(&face, WQY, index, err, sizeof err), 0);
        CHECK(font_face_glyph(&face, 0x82F9) > 0);      /* 苹 */
        CHECK_INT(font_face_glyph(&face, 0x10FFFD), 0);
        font_face_free(&face);
    }
    CHECK_INT(font_face_load(&face, WQY, 2, err, sizeof err), -1);
    CHECK(strcmp(err, WQY ": not a TrueType font") == 0);
    CHECK_INT(font_face_load(&face, WQY, -1, err, sizeof err), -1);

    /* fontconfig offers the file for 苹果, at a face of it, and nothing
     * for a character no font has; accepted, the search stops */
    const uint32_t apple[2] = {0x82F9, 0x679C}, none[1] = {0x10FFFD};
    setenv("FONTCONFIG_FILE", fc_wqy, 1);
    unsetenv("ATTN_FONT_SEARCH");
    offers o;
    memset(&o, 0, sizeof o);
    o.accept = -1;
    CHECK_INT(font_find(apple, 2, note_offer, &o), 2);      /* both faces */
    CHECK_INT(o.n, 2);
    for (int i = 0; i < o.n && i < 2; i++) {
        CHECK(strcmp(o.path[i], link) == 0);
        CHECK(o.index[i] == 0 || o.index[i] == 1);
    }
    CHECK(o.n < 2 || o.index[0] != o.index[1]);
    memset(&o, 0, sizeof o);
    o.accept = 0;
    CHECK_INT(font_find(apple, 2, note_offer, &o), 1);
    memset(&o, 0, sizeof o);
    o.accept = -1;
    CHECK_INT(font_find(none, 1, note_offer, &o), 0);
    CHECK_INT(font_find(apple, 0, note_offer, &o), 0);

    /* a text_font finds it by itself: 苹果 drawn as --font draws it */
    text_font *found, *given;
    CHECK_INT(text_font_open(&found, err, sizeof err), 0);
    CHECK_INT(text_font_open(&given, err, sizeof err), 0);
    if (found != NULL && given != NULL) {
        CHECK_INT(text_font_has_all(found, "Apple " APPLE_ZH), 1);
        CHECK_INT(text_font_add_file(given, WQY, err, sizeof err), 0);
        CHECK_NEAR(text_width(found, 20, APPLE_ZH), text_width(given, 20, APPLE_ZH), 1e-9, 0);
        int x0, y0, x1, y1, gx0, gy0, gx1, gy1;
        draw_sample(found, APPLE_ZH, &x0, &y0, &x1, &y1);
        draw_sample(given, APPLE_ZH, &gx0, &gy0, &gx1, &gy1);
        CHECK(x0 == gx0 && y0 == gy0 && x1 == gx1 && y1 == gy1 && x1 - x0 > 30);
    }
    text_font_close(found);
    text_font_close(given);

    /* a configuration without fonts: nothing offered, boxes drawn */
    setenv("FONTCONFIG_FILE", fc_none, 1);
    memset(&o, 0, sizeof o);
    o.accept = -1;
    CHECK_INT(font_find(apple, 2, note_offer, &o), 0);
    CHECK_INT(text_font_open(&found, err, sizeof err), 0);
    if (found != NULL) {
        CHECK_INT(text_font_has_all(found, APPLE_ZH), 0);
        CHECK_INT(text_font_has_all(found, "Apple"), 1);
        text_font_close(found);
    }
    /* $ATTN_FONT_SEARCH set overrides fontconfig, empty: nothing */
    setenv("FONTCONFIG_FILE", fc_wqy, 1);
    setenv("ATTN_FONT_SEARCH", "", 1);
    CHECK_INT(text_font_open(&found, err, sizeof err), 0);
    if (found != NULL) {
        CHECK_INT(text_font_has_all(found, APPLE_ZH), 0);
        text_font_close(found);
    }
    setenv("FONTCONFIG_FILE", fc_none, 1);
    pin_fonts();
}

int main(int argc, char **argv)
{
    /* An absolute folder: fontconfig reads a relative $FONTCONFIG_FILE
     * from its own folder, not ours. */
    char cwd[1024], absbase[2048];
    const char *base = argc > 1 ? argv[1] : "/tmp";
    if (base[0] != '/') {
        if (getcwd(cwd, sizeof cwd) == NULL) {
            fprintf(stderr, "test_render: cannot get the current folder: %s\n",
                    strerror(errno));
            return 1;
        }
        snprintf(absbase, sizeof absbase, "%s/%s", cwd, base);
        base = absbase;
    }
    snprintf(tmpdir, sizeof tmpdir, "%s/test_render.XXXXXX", base);
    if (mkdtemp(tmpdir) == NULL) {
        fprintf(stderr, "test_render: cannot create a directory under %s: %s\n", base,
                strerror(errno));
        return 1;
    }
    /* fontconfig sees no fonts unless a check says otherwise */
    char fc_none[8192];
    tmp_path(fc_none, sizeof fc_none, "fc-none.conf");
    if (write_fc_config(fc_none, NULL) < 0) {
        fprintf(stderr, "test_render: cannot write %s\n", fc_none);
        return 1;
    }
    setenv("FONTCONFIG_FILE", fc_none, 1);
    pin_fonts();
    test_cmap();
    test_utf8();
    test_text();
    test_font_files();
    test_cjk_fallback();
    test_fontconfig();
    test_ticks();
    test_heatmap_small();
    test_heatmap_rows();
    test_heatmap_posenc();
    test_heatmap_shared_scale();
    test_heatmap_pooled();
    test_heatmap_degenerate();
    test_label_fallback();
    test_heatmap_row_labels();
    test_heatmap_row_titles();
    test_heatmap_level_tokens();
    test_plot();
    test_png();
    remove_tree(tmpdir, 0);
    return check_summary("test_render");
}
