/* test_render.c — tests of src/render: colormap lookups against values
 * taken from matplotlib, heatmap cells checked pixel by pixel in PNG files
 * written by png_write_atomic and decoded again with stb_image, pooling,
 * sizing, line plots, text, and png_write_atomic's failure behaviour.
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
        {"\xE2\x82z", {0xFFFD, 'z'}, 2},             /* truncated before z */
        {"\xC0\xAF", {0xFFFD}, 1},                   /* overlong '/' */
        {"\xE0\x80\x80", {0xFFFD}, 1},               /* overlong NUL */
        {"\xED\xA0\x80", {0xFFFD}, 1},               /* surrogate */
        {"\xF4\x90\x80\x80", {0xFFFD}, 1},           /* above U+10FFFF */
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
     * drawn as something (U+FFFD, the missing-glyph box), never a crash. */
    memset(img.rgb, 255, (size_t)img.w * img.h * 3);
    text_draw(&img, font, 14, "\xFF\xC3 \x01\xE6\xB3\xA8", 10, 50, TEXT_LEFT, TEXT_BASELINE,
              TEXT_HORIZONTAL, black);
    ink_box(&img, &x0, &y0, &x1, &y1);
    CHECK(x1 > x0 && x1 - x0 > 30);
    CHECK(!text_font_failed(font));
    image_free(&img);
    text_font_close(font);
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
    heat_panel panel = {m, 7, 3, "7 x 3"};
    heat_figure fig = {&panel, 1, 1, "Keys", "Queries", NULL, NULL,
                       cmap_find("viridis"), NAN, NAN, "value"};
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
    heat_panel panel = {P, 60, 32, NULL};
    heat_figure fig = {&panel, 1, 1, "Column (encoding dimension)", "Row (position)",
                       NULL, NULL, cmap_find("Blues"), NAN, NAN, NULL};
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
    heat_panel panels[4] = {{m[0], 4, 6, "Head 1"}, {m[1], 4, 6, "Head 2"},
                            {m[2], 4, 6, "Head 3"}, {m[3], 4, 6, "Head 4"}};
    heat_figure fig = {panels, 2, 2, "Key positions", "Query positions", NULL, NULL,
                       cmap_find("Reds"), NAN, NAN, NULL};
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
        heads[p] = (heat_panel){a[p], 4, 6, titles[p]};
    }
    const char *keys[] = {"The", "cat", "sat", "on", "the", "mat"};
    const char *queries[] = {"Die", "Katze", "sa\xC3\x9F", "<eos>"};
    heat_figure fig2 = {heads, 2, 5, "Key positions", "Query positions", keys, queries,
                        cmap_find("Reds"), NAN, NAN, "weight"};
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
    heat_panel panel = {m, rows, cols, "pooled"};
    heat_figure fig = {&panel, 1, 1, "Column", "Row", NULL, NULL, cmap_find("Blues"),
                       NAN, NAN, NULL};
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
    heat_panel big = {P, n, d, NULL};
    heat_figure fig2 = {&big, 1, 1, "Column (encoding dimension)", "Row (position)",
                        NULL, NULL, cmap_find("Blues"), NAN, NAN, NULL};
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
    heat_panel panel = {m, 2, 3, NULL};
    heat_figure fig = {&panel, 1, 1, NULL, NULL, NULL, NULL, cmap_find("gray"), NAN, NAN, NULL};
    heat_layout L;
    int w = 0, h = 0;
    check_heatmap(&fig, "constant.png", &L, &w, &h);
    CHECK_NEAR(L.vmin, 2.0, 0, 0);
    CHECK_NEAR(L.vmax, 2.0, 0, 0);

    /* Bad input fails with a message and no image. */
    attn_image img;
    char err[256] = "";
    heat_panel none = {NULL, 2, 3, NULL};
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
    heat_panel two[2] = {{m, 2, 3, NULL}, {m2, 2, 2, NULL}};
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
    plot_figure fig = {s, 2, "Constant", "x", "y", 0, 0, 0, 0};
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
    plot_figure lf = {&ls, 1, NULL, "n", "seconds", 1, 1, 640, 320};
    CHECK_INT(plot_draw(&img, &lf, err, sizeof err), 0);
    CHECK_INT(img.w, 640);
    CHECK_INT(img.h, 320);
    image_free(&img);

    /* Bad input. */
    plot_series nodata = {NULL, NULL, 3, NULL};
    plot_figure bad = {&nodata, 1, NULL, NULL, NULL, 0, 0, 0, 0};
    err[0] = '\0';
    CHECK_INT(plot_draw(&img, &bad, err, sizeof err), -1);
    CHECK(err[0] != '\0');
    CHECK(img.rgb == NULL);
    plot_figure tiny = {s, 1, NULL, NULL, NULL, 0, 0, 10, 10};
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

int main(int argc, char **argv)
{
    const char *base = argc > 1 ? argv[1] : "/tmp";
    snprintf(tmpdir, sizeof tmpdir, "%s/test_render.XXXXXX", base);
    if (mkdtemp(tmpdir) == NULL) {
        fprintf(stderr, "test_render: cannot create a directory under %s: %s\n", base,
                strerror(errno));
        return 1;
    }
    test_cmap();
    test_utf8();
    test_text();
    test_ticks();
    test_heatmap_small();
    test_heatmap_posenc();
    test_heatmap_shared_scale();
    test_heatmap_pooled();
    test_heatmap_degenerate();
    test_plot();
    test_png();
    remove_tree(tmpdir, 0);
    return check_summary("test_render");
}
