/* test_term.c — terminal output: option parsing, colour and width
 * detection, torch-style numbers, and the colour heatmap (escapes, layout,
 * pooling, labels, legend), all written to memory streams and checked.
 */
#define _XOPEN_SOURCE 700 /* posix_openpt & co. for the pseudo-terminal checks */

#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "check.h"
#include "render.h"
#include "term.h"

#define CHECK_STR(got, want)                                               \
    do {                                                                   \
        const char *check_gs_ = (got), *check_ws_ = (want);                \
        check_count++;                                                     \
        if (!check_gs_ || strcmp(check_gs_, check_ws_) != 0) {            \
            check_failed++;                                                \
            fprintf(stderr, "%s:%d: %s =\n%s\nwant\n%s\n", __FILE__,       \
                    __LINE__, #got, check_gs_ ? check_gs_ : "(null)",      \
                    check_ws_);                                            \
        }                                                                  \
    } while (0)

#define CHECK_HAS(hay, needle)                                             \
    do {                                                                   \
        check_count++;                                                     \
        if (!(hay) || !strstr((hay), (needle))) {                          \
            check_failed++;                                                \
            fprintf(stderr, "%s:%d: output does not contain \"%s\"\n",    \
                    __FILE__, __LINE__, #needle);                          \
        }                                                                  \
    } while (0)

/* ---- helpers ------------------------------------------------------------ */

/* A memory stream's text (malloc'ed, NUL-terminated), or NULL. */
typedef struct capture {
    FILE *f;
    char *buf;
    size_t len;
} capture;

static FILE *cap_open(capture *c)
{
    c->buf = NULL;
    c->len = 0;
    c->f = open_memstream(&c->buf, &c->len);
    return c->f;
}

static char *cap_close(capture *c)
{
    if (c->f)
        fclose(c->f);
    c->f = NULL;
    return c->buf;
}

static char *heatmap_text(const float *m, size_t rows, size_t cols,
                          const term_heatmap_opts *o)
{
    capture c;
    if (!cap_open(&c))
        return NULL;
    term_heatmap(c.f, m, rows, cols, o);
    return cap_close(&c);
}

static char *matrix_text(const float *m, size_t rows, size_t cols, int precision,
                         size_t edgeitems)
{
    capture c;
    if (!cap_open(&c))
        return NULL;
    term_matrix(c.f, m, rows, cols, precision, edgeitems);
    return cap_close(&c);
}

static int wide_cp(unsigned long cp)
{
    return (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF) ||
           (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) ||
           (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF60) ||
           (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x20000 && cp <= 0x3FFFD);
}

/* Display columns of s[0..n): CSI escape sequences take none, CJK wide
 * characters two, other code points one (the output has no combining
 * marks). */
static size_t display_width(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    size_t w = 0;
    while (p < end) {
        if (p[0] == 0x1b && p + 1 < end && p[1] == '[') {
            p += 2;
            while (p < end && !(*p >= 0x40 && *p <= 0x7E))
                p++;
            if (p < end)
                p++;
            continue;
        }
        unsigned long cp = *p;
        int len = 1;
        if (*p >= 0xF0) {
            cp = *p & 0x07u;
            len = 4;
        } else if (*p >= 0xE0) {
            cp = *p & 0x0Fu;
            len = 3;
        } else if (*p >= 0xC0) {
            cp = *p & 0x1Fu;
            len = 2;
        }
        for (int i = 1; i < len && p + i < end; i++)
            cp = (cp << 6) | (p[i] & 0x3Fu);
        p += len;
        w += wide_cp(cp) ? 2 : 1;
    }
    return w;
}

/* Line k (0-based) of text, copied into buf (without '\n'); NULL when
 * text has fewer lines. */
static const char *line_of(const char *text, size_t k, char *buf, size_t bufsize)
{
    const char *p = text;
    if (!p)
        return NULL;
    for (size_t i = 0; i < k; i++) {
        p = strchr(p, '\n');
        if (!p)
            return NULL;
        p++;
    }
    if (*p == '\0')
        return NULL;
    size_t n = strcspn(p, "\n");
    if (n >= bufsize)
        n = bufsize - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
}

static size_t count_lines(const char *text)
{
    size_t n = 0;
    for (const char *p = text; p && *p; p++)
        n += *p == '\n';
    return n;
}

#define HALF "\xE2\x96\x80"

/* Append the escape for colour c (38 foreground / 48 background). */
static void add_sgr(char *buf, size_t size, int which, attn_rgb c)
{
    size_t n = strlen(buf);
    snprintf(buf + n, size - n, "\x1b[%d;2;%u;%u;%um", which, (unsigned)c.r,
             (unsigned)c.g, (unsigned)c.b);
}

/* The expected map line: gutter text, then per cell the foreground (and
 * background when bot is not NULL) escape where the colour changes, U+2580,
 * and the reset. Values are mapped with t = (v - vmin) / (vmax - vmin). */
static void expected_line(char *buf, size_t size, const char *gutter,
                          const attn_cmap *cm, const double *top, const double *bot,
                          size_t n, double vmin, double vmax)
{
    attn_rgb pf = {0, 0, 0}, pb = {0, 0, 0};
    snprintf(buf, size, "%s", gutter);
    for (size_t j = 0; j < n; j++) {
        attn_rgb fg = cmap_color(cm, (top[j] - vmin) / (vmax - vmin));
        if (j == 0 || memcmp(&fg, &pf, sizeof fg) != 0)
            add_sgr(buf, size, 38, fg);
        pf = fg;
        if (bot) {
            attn_rgb bg = cmap_color(cm, (bot[j] - vmin) / (vmax - vmin));
            if (j == 0 || memcmp(&bg, &pb, sizeof bg) != 0)
                add_sgr(buf, size, 48, bg);
            pb = bg;
        }
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, HALF);
    }
    size_t len = strlen(buf);
    snprintf(buf + len, size - len, "\x1b[0m");
}

/* ---- options, colour, width ----------------------------------------------- */

static void test_parse_color(void)
{
    term_color_mode mode = TERM_COLOR_NEVER;
    CHECK_INT(term_parse_color("auto", &mode), 0);
    CHECK_INT(mode, TERM_COLOR_AUTO);
    CHECK_INT(term_parse_color("always", &mode), 0);
    CHECK_INT(mode, TERM_COLOR_ALWAYS);
    CHECK_INT(term_parse_color("never", &mode), 0);
    CHECK_INT(mode, TERM_COLOR_NEVER);

    const char *bad[] = {"", "Always", "yes", "auto ", "nev", "alwaysx"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mode = TERM_COLOR_ALWAYS;
        CHECK_INT(term_parse_color(bad[i], &mode), -1);
        CHECK_INT(mode, TERM_COLOR_ALWAYS); /* untouched on failure */
    }
    CHECK_INT(term_parse_color(NULL, &mode), -1);
}

/* A pseudo-terminal's slave side as a FILE*, its size set to cols×rows
 * through the master; NULL when the system has none to give. */
static FILE *open_pty(int *master, unsigned short cols, unsigned short rows)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    if (m < 0)
        return NULL;
    const char *name;
    if (grantpt(m) != 0 || unlockpt(m) != 0 || !(name = ptsname(m))) {
        close(m);
        return NULL;
    }
    int s = open(name, O_RDWR | O_NOCTTY);
    if (s < 0) {
        close(m);
        return NULL;
    }
    struct winsize ws;
    memset(&ws, 0, sizeof ws);
    ws.ws_col = cols;
    ws.ws_row = rows;
    ioctl(m, TIOCSWINSZ, &ws);
    FILE *f = fdopen(s, "w");
    if (!f) {
        close(s);
        close(m);
        return NULL;
    }
    *master = m;
    return f;
}

static void test_use_color_and_width(void)
{
    FILE *file = tmpfile();
    CHECK(file != NULL);
    if (!file)
        return;

    unsetenv("NO_COLOR");
    setenv("TERM", "xterm-256color", 1);
    CHECK_INT(term_use_color(TERM_COLOR_ALWAYS, file), 1);
    CHECK_INT(term_use_color(TERM_COLOR_NEVER, file), 0);
    CHECK_INT(term_use_color(TERM_COLOR_AUTO, file), 0); /* not a tty */

    setenv("NO_COLOR", "1", 1);
    CHECK_INT(term_use_color(TERM_COLOR_ALWAYS, file), 1); /* explicit wins */
    CHECK_INT(term_use_color(TERM_COLOR_NEVER, file), 0);
    CHECK_INT(term_use_color(TERM_COLOR_AUTO, file), 0);
    unsetenv("NO_COLOR");

    setenv("COLUMNS", "123", 1);
    CHECK_INT(term_width(file), 123);
    const char *bad[] = {"abc", "0", "-5", "12x", "", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("COLUMNS", bad[i], 1);
        CHECK_INT(term_width(file), 80); /* a file has no window size */
    }
    unsetenv("COLUMNS");
    CHECK_INT(term_width(file), 80);
    fclose(file);

    /* On a real (pseudo-)terminal: auto follows NO_COLOR and TERM, and the
     * width comes from the window size. */
    int master = -1;
    FILE *tty = open_pty(&master, 100, 30);
    if (!tty) {
        fprintf(stderr, "test_term: no pseudo-terminal, tty checks skipped\n");
        return;
    }
    CHECK_INT(term_use_color(TERM_COLOR_AUTO, tty), 1);
    setenv("NO_COLOR", "", 1); /* empty: as if unset */
    CHECK_INT(term_use_color(TERM_COLOR_AUTO, tty), 1);
    setenv("NO_COLOR", "yes", 1);
    CHECK_INT(term_use_color(TERM_COLOR_AUTO, tty), 0);
    CHECK_INT(term_use_color(TERM_COLOR_ALWAYS, tty), 1);
    unsetenv("NO_COLOR");
    setenv("TERM", "dumb", 1);
    CHECK_INT(term_use_color(TERM_COLOR_AUTO, tty), 0);
    CHECK_INT(term_use_color(TERM_COLOR_ALWAYS, tty), 1);
    setenv("TERM", "xterm-256color", 1);
    CHECK_INT(term_use_color(TERM_COLOR_NEVER, tty), 0);

    CHECK_INT(term_width(tty), 100);
    setenv("COLUMNS", "123", 1);
    CHECK_INT(term_width(tty), 123);
    setenv("COLUMNS", "abc", 1);
    CHECK_INT(term_width(tty), 100);
    unsetenv("COLUMNS");
    fclose(tty);
    close(master);
}

/* ---- numbers --------------------------------------------------------------- */

static void test_matrix_small(void)
{
    const float m[] = {0.0f, 1.0f, 0.8415f, 0.5403f, 0.9093f, -0.4161f};
    char *s = matrix_text(m, 3, 2, 4, 3);
    CHECK_STR(s, "[[ 0.0000,  1.0000],\n"
                 " [ 0.8415,  0.5403],\n"
                 " [ 0.9093, -0.4161]]\n");
    free(s);

    /* No negative number: no sign column. */
    const float p[] = {0.5f, 1.0f, 2.0f, 13.25f};
    s = matrix_text(p, 2, 2, 2, 3);
    CHECK_STR(s, "[[ 0.50,  1.00],\n"
                 " [ 2.00, 13.25]]\n");
    free(s);
    s = matrix_text(p, 1, 3, 1, 3);
    CHECK_STR(s, "[[0.5, 1.0, 2.0]]\n");
    free(s);
    s = matrix_text(p, 1, 1, 0, 3);
    CHECK_STR(s, "[[0]]\n"); /* 0.5 rounds to even */
    free(s);

    /* Non-finite values print as torch prints them. */
    const float q[] = {NAN, INFINITY, -INFINITY, 1.0f};
    s = matrix_text(q, 2, 2, 2, 3);
    CHECK_STR(s, "[[ nan,  inf],\n"
                 " [-inf, 1.00]]\n");
    free(s);

    s = matrix_text(m, 0, 2, 4, 3);
    CHECK_STR(s, "[]\n");
    free(s);
    s = matrix_text(m, 3, 0, 4, 3);
    CHECK_STR(s, "[]\n");
    free(s);
}

static void test_matrix_elided(void)
{
    float m[100];
    for (int i = 0; i < 100; i++)
        m[i] = (float)i;

    char *s = matrix_text(m, 10, 10, 1, 3);
    CHECK_STR(s, "[[ 0.0,  1.0,  2.0,  ...,  7.0,  8.0,  9.0],\n"
                 " [10.0, 11.0, 12.0,  ..., 17.0, 18.0, 19.0],\n"
                 " [20.0, 21.0, 22.0,  ..., 27.0, 28.0, 29.0],\n"
                 " ...,\n"
                 " [70.0, 71.0, 72.0,  ..., 77.0, 78.0, 79.0],\n"
                 " [80.0, 81.0, 82.0,  ..., 87.0, 88.0, 89.0],\n"
                 " [90.0, 91.0, 92.0,  ..., 97.0, 98.0, 99.0]]\n");
    char line[256];
    CHECK_STR(line_of(s, 3, line, sizeof line), " ...,");
    CHECK(s && strncmp(s, "[[ 0.0,", 7) == 0);
    CHECK(s && strlen(s) > 7 && strcmp(s + strlen(s) - 7, "99.0]]\n") == 0);
    CHECK_INT(count_lines(s), 7);
    free(s);

    /* 7 = 2·3 + 1: nothing is left out. */
    s = matrix_text(m, 7, 7, 0, 3);
    CHECK(s && !strstr(s, "..."));
    CHECK_INT(count_lines(s), 7);
    free(s);

    /* Only rows elided; only columns elided. */
    s = matrix_text(m, 10, 2, 0, 1);
    CHECK_STR(s, "[[ 0,  1],\n"
                 " ...,\n"
                 " [18, 19]]\n");
    free(s);
    s = matrix_text(m, 1, 10, 0, 2);
    CHECK_STR(s, "[[0, 1,  ..., 8, 9]]\n");
    free(s);

    /* edgeitems 0: only the dots. */
    s = matrix_text(m, 10, 10, 1, 0);
    CHECK_STR(s, "[...]\n");
    free(s);
}

/* ---- heatmap --------------------------------------------------------------- */

static term_heatmap_opts opts_for(const char *cmap, int width, int lines)
{
    term_heatmap_opts o;
    memset(&o, 0, sizeof o);
    o.cmap = cmap_find(cmap);
    o.vmin = o.vmax = NAN;
    o.max_width = width;
    o.max_lines = lines;
    return o;
}

static void test_heatmap_small(void)
{
    /* 4×3, values 0..11 row-major; the scale is the data's, 0..11. */
    float m[12];
    for (int i = 0; i < 12; i++)
        m[i] = (float)i;
    term_heatmap_opts o = opts_for("Reds", 40, 10);
    CHECK(o.cmap != NULL);
    if (!o.cmap)
        return;
    char *s = heatmap_text(m, 4, 3, &o);
    char line[4096], want[4096];

    CHECK_INT(count_lines(s), 4); /* ruler, 2 map lines, legend */
    CHECK_STR(line_of(s, 0, line, sizeof line), "  0");
    const double r0[] = {0, 1, 2}, r1[] = {3, 4, 5}, r2[] = {6, 7, 8}, r3[] = {9, 10, 11};
    expected_line(want, sizeof want, "0 ", o.cmap, r0, r1, 3, 0, 11);
    CHECK_STR(line_of(s, 1, line, sizeof line), want);
    expected_line(want, sizeof want, "2 ", o.cmap, r2, r3, 3, 0, 11);
    CHECK_STR(line_of(s, 2, line, sizeof line), want);

    /* The colours of known entries, as cmap_color gives them. */
    attn_rgb c00 = cmap_color(o.cmap, 0.0), c32 = cmap_color(o.cmap, 1.0);
    attn_rgb c11 = cmap_color(o.cmap, 4.0 / 11.0);
    want[0] = '\0';
    add_sgr(want, sizeof want, 38, c00);
    CHECK_HAS(s, want);
    want[0] = '\0';
    add_sgr(want, sizeof want, 48, c32);
    strcat(want, HALF "\x1b[0m\n");
    CHECK_HAS(s, want); /* the last entry is the last cell's background */
    want[0] = '\0';
    add_sgr(want, sizeof want, 48, c11);
    CHECK_HAS(s, want);

    /* Legend: the scale's ends and middle around the bar, the cmap's name. */
    const char *leg = line_of(s, 3, line, sizeof line);
    CHECK(leg && strncmp(leg, "0.0 ", 4) == 0);
    CHECK_HAS(leg, " 5.5 ");
    CHECK_HAS(leg, " 11.0  Reds");
    CHECK_HAS(leg, "\xE2\x96\x88"); /* the bar */
    want[0] = '\0';
    add_sgr(want, sizeof want, 38, c32);
    CHECK_HAS(leg, want); /* the bar's right end is the top colour */
    CHECK(s && !strstr(s, "averaged"));
    free(s);

    /* Given scale: -1..1 with two decimals. */
    const float n[] = {-1.0f, 0.0f, 0.5f, 1.0f};
    o.vmin = -1.0;
    o.vmax = 1.0;
    s = heatmap_text(n, 2, 2, &o);
    leg = line_of(s, 2, line, sizeof line);
    CHECK(leg && strncmp(leg, "-1.00 ", 6) == 0);
    CHECK_HAS(leg, " 0.00 ");
    CHECK_HAS(leg, " 1.00  Reds");
    const double n0[] = {-1, 0}, n1[] = {0.5, 1};
    expected_line(want, sizeof want, "0 ", o.cmap, n0, n1, 2, -1, 1);
    CHECK_STR(line_of(s, 1, line, sizeof line), want);
    free(s);
}

static void test_heatmap_odd_nan_flat(void)
{
    term_heatmap_opts o = opts_for("Blues", 40, 10);
    char line[4096], want[4096];
    if (!o.cmap)
        return;

    /* 3 rows: the second map line has only top halves, on the default
     * background. */
    const float m[] = {0, 1, 2, 3, 4, 5};
    char *s = heatmap_text(m, 3, 2, &o);
    CHECK_INT(count_lines(s), 4);
    const double r2[] = {4, 5};
    expected_line(want, sizeof want, "2 ", o.cmap, r2, NULL, 2, 0, 5);
    CHECK_STR(line_of(s, 2, line, sizeof line), want);
    CHECK(!strstr(line, "\x1b[48;"));
    free(s);

    /* NaN entries: drawn as t = 0, left out of the scale. */
    const float q[] = {NAN, 1, 2, 3};
    s = heatmap_text(q, 2, 2, &o);
    const double q0[] = {1, 1}, q1[] = {2, 3}; /* NaN looks like the minimum */
    expected_line(want, sizeof want, "0 ", o.cmap, q0, q1, 2, 1, 3);
    CHECK_STR(line_of(s, 1, line, sizeof line), want);
    CHECK(s && !strstr(s, "nan"));
    free(s);

    /* All NaN, or a constant matrix: no crash, constant colour t = 0.5. */
    const float allnan[] = {NAN, NAN, NAN, NAN};
    s = heatmap_text(allnan, 2, 2, &o);
    CHECK_INT(count_lines(s), 3);
    free(s);
    const float flat[] = {7, 7, 7, 7};
    s = heatmap_text(flat, 2, 2, &o);
    attn_rgb mid = cmap_color(o.cmap, 0.5);
    snprintf(want, sizeof want, "0 ");
    add_sgr(want, sizeof want, 38, mid);
    add_sgr(want, sizeof want, 48, mid);
    strcat(want, HALF HALF "\x1b[0m");
    CHECK_STR(line_of(s, 1, line, sizeof line), want);
    free(s);

    /* Empty matrices: one short note, no colour. */
    s = heatmap_text(m, 0, 5, &o);
    CHECK_INT(count_lines(s), 1);
    CHECK(s && !strchr(s, 0x1b));
    free(s);
    s = heatmap_text(m, 5, 0, &o);
    CHECK_INT(count_lines(s), 1);
    free(s);

    /* No options: Reds, the data's scale, 32 lines, the terminal's width. */
    setenv("COLUMNS", "60", 1);
    s = heatmap_text(m, 3, 2, NULL);
    CHECK_HAS(s, "Reds");
    CHECK_INT(count_lines(s), 4);
    free(s);
    unsetenv("COLUMNS");
}

/* Every line of s at most width display columns; returns the number of
 * map lines (those with a half block). */
static size_t check_fits(const char *s, size_t width)
{
    size_t maplines = 0;
    int all_fit = 1;
    for (const char *p = s; p && *p;) {
        size_t n = strcspn(p, "\n");
        size_t w = display_width(p, n);
        if (w > width) {
            all_fit = 0;
            fprintf(stderr, "line of %zu columns: %.*s\n", w, (int)n, p);
        }
        for (const char *q = p; q + 2 < p + n; q++)
            if (memcmp(q, HALF, 3) == 0) {
                maplines++;
                break;
            }
        p += n + (p[n] == '\n');
    }
    CHECK(all_fit);
    return maplines;
}

static void test_heatmap_pooled(void)
{
    /* 4×4 into 1 line of 2 cells: 2×2 blocks averaged. */
    const float m[] = {0, 2, 4, 4,
                       2, 0, 4, 4,
                       8, 8, 1, 1,
                       8, 8, 1, 1};
    term_heatmap_opts o = opts_for("viridis", 4, 1);
    char line[4096], want[4096];
    if (!o.cmap)
        return;
    o.vmin = 0;
    o.vmax = 8;
    char *s = heatmap_text(m, 4, 4, &o);
    const double top[] = {1, 4}, bot[] = {8, 1};
    expected_line(want, sizeof want, "0 ", o.cmap, top, bot, 2, 0, 8);
    CHECK_STR(line_of(s, 1, line, sizeof line), want);
    CHECK_HAS(s, "2\xC3\x97" "2 entries averaged");
    free(s);

    /* A NaN entry is left out of its block's mean. */
    const float nanblk[] = {NAN, 4, 0, 2};
    o.vmax = 4;
    s = heatmap_text(nanblk, 4, 1, &o);
    const double ntop[] = {4}, nbot[] = {1};
    expected_line(want, sizeof want, "0 ", o.cmap, ntop, nbot, 1, 0, 4);
    CHECK_STR(line_of(s, 1, line, sizeof line), want);
    CHECK_HAS(s, "2\xC3\x97" "1 entries averaged");
    free(s);

    /* 1000×1000 in 80 columns and 20 lines. */
    size_t n = 1000;
    float *big = malloc(n * n * sizeof *big);
    CHECK(big != NULL);
    if (!big)
        return;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            big[i * n + j] = (float)((double)i - (double)j);
    o = opts_for("Reds", 80, 20);
    s = heatmap_text(big, n, n, &o);
    size_t maplines = check_fits(s, 80);
    CHECK(maplines >= 1 && maplines <= 20);
    CHECK_INT(maplines, 20); /* 1000 rows need all 40 half-lines */
    CHECK_HAS(s, "entries averaged");
    CHECK_HAS(s, "\n-999 "); /* the data's scale in the legend */
    CHECK_HAS(s, " 0 ");
    CHECK_HAS(s, " 999  Reds");
    free(s);
    free(big);

    /* 10000×512 (a long attention matrix): the default 32 lines, 80
     * columns. */
    size_t r = 10000, c = 512;
    big = malloc(r * c * sizeof *big);
    CHECK(big != NULL);
    if (!big)
        return;
    for (size_t i = 0; i < r * c; i++)
        big[i] = (float)(i % 7) / 7.0f;
    o = opts_for("Blues", 80, 0);
    s = heatmap_text(big, r, c, &o);
    CHECK_INT(check_fits(s, 80), 32);
    CHECK_HAS(s, "averaged");
    free(s);
    free(big);
}

static void test_heatmap_labels_and_ruler(void)
{
    float m[12];
    for (int i = 0; i < 12; i++)
        m[i] = (float)i / 11.0f;
    term_heatmap_opts o = opts_for("Reds", 60, 10);
    char line[4096];
    if (!o.cmap)
        return;

    /* CJK labels are two columns wide: both map lines start their map at
     * the same column; "top/bottom" labels per line. */
    const char *rows[] = {"\xE6\x88\x91\xE4\xBB\xAC", "a", "cat", "dog"};
    o.row_labels = rows;
    char *s = heatmap_text(m, 4, 3, &o);
    const char *l1 = line_of(s, 1, line, sizeof line);
    const char *want1 = " \xE6\x88\x91\xE4\xBB\xAC/a \x1b[";
    CHECK(l1 && strncmp(l1, want1, strlen(want1)) == 0);
    size_t w1 = l1 ? display_width(line, strcspn(line, "\x1b")) : 0;
    const char *l2 = line_of(s, 2, line, sizeof line);
    CHECK(l2 && strncmp(l2, "cat/dog \x1b[", 10) == 0);
    size_t w2 = l2 ? display_width(line, strcspn(line, "\x1b")) : 0;
    CHECK_INT(w1, 8);
    CHECK_INT(w2, 8);
    /* The ruler starts above the map. */
    CHECK_STR(line_of(s, 0, line, sizeof line), "        0");
    free(s);

    /* A label cannot smuggle in control sequences. */
    const char *evil[] = {"x\x1b]0;pwn\x07", "\xff\xfe", "ok", "\xC3\x28"};
    o.row_labels = evil;
    s = heatmap_text(m, 4, 3, &o);
    CHECK(s && !strstr(s, "\x1b]") && !strchr(s, '\x07') && !strstr(s, "\xff"));
    CHECK_HAS(s, "x?]0;pwn?/??");
    free(s);

    /* One-character column labels sit above their columns; longer ones
     * give way to the index ruler. */
    const char *chars[] = {"a", "b", "c"};
    const char *words[] = {"the", "cat", "sat"};
    o.row_labels = NULL;
    o.col_labels = chars;
    s = heatmap_text(m, 4, 3, &o);
    CHECK_STR(line_of(s, 0, line, sizeof line), "  abc");
    free(s);
    o.col_labels = words;
    s = heatmap_text(m, 4, 3, &o);
    CHECK_STR(line_of(s, 0, line, sizeof line), "  0");
    free(s);

    /* 100 columns in 200: an index every 10 columns, starting above it. */
    float *wide = calloc(2 * 100, sizeof *wide);
    CHECK(wide != NULL);
    if (!wide)
        return;
    o = opts_for("gray", 200, 10);
    s = heatmap_text(wide, 2, 100, &o);
    CHECK_STR(line_of(s, 0, line, sizeof line),
              "  0         10        20        30        40        50"
              "        60        70        80        90");
    free(s);

    /* Narrow: the legend shrinks, nothing crashes. */
    o = opts_for("gray", 12, 3);
    s = heatmap_text(wide, 2, 100, &o);
    CHECK(s && count_lines(s) >= 3);
    free(s);
    free(wide);
}

/* ---- labelled tables ------------------------------------------------------ */

static char *table_text(const float *m, size_t rows, size_t cols, const term_table_opts *o,
                        int *rc)
{
    capture c;
    if (!cap_open(&c))
        return NULL;
    *rc = term_table(c.f, m, rows, cols, o);
    return cap_close(&c);
}

/* Non-square (3 × 2): labels right-aligned over and before the numbers,
 * CJK labels two columns wide, long labels cut with "…", control
 * characters as '?'; colour cells on their cmap colour, dark ones in white;
 * a table wider than max_width refused with nothing printed. */
static void test_table(void)
{
    const float m[6] = {0.98f, 0.02f, 0.5f, 0.5f, 0.0f, 1.0f};
    const char *rows[] = {"le", "苹果", "a\x1b[31m"};
    const char *cols[] = {"the", "averyveryverylongword"};
    term_table_opts o = {rows, cols, 0, cmap_find("Reds"), 0.0, 1.0, 2, 80};
    int rc = -2;
    char *t = table_text(m, 3, 2, &o, &rc);
    CHECK_INT(rc, 0);
    CHECK_STR(t, "        the averyveryve\xE2\x80\xA6\n"
                 "    le 0.98         0.02\n"
                 "  苹果 0.50         0.50\n"
                 "a?[31m 0.00         1.00\n");
    free(t);
    o.color = 1;
    t = table_text(m, 3, 2, &o, &rc);
    CHECK_INT(rc, 0);
    /* 1.00 on Reds' darkest entry, in white; 0.00 on its lightest, in black */
    CHECK_HAS(t, "\x1b[48;2;103;0;13m\x1b[38;2;255;255;255m         1.00\x1b[0m\n");
    CHECK_HAS(t, "a?[31m\x1b[48;2;255;245;240m\x1b[38;2;0;0;0m 0.00\x1b[0m");
    free(t);
    o.max_width = 20;
    t = table_text(m, 3, 2, &o, &rc);
    CHECK_INT(rc, -1);
    CHECK_STR(t, "");
    free(t);
    o.max_width = 80;
    o.col_labels = NULL;
    t = table_text(m, 3, 2, &o, &rc);
    CHECK_INT(rc, -1);
    free(t);
}

int main(void)
{
    test_parse_color();
    test_use_color_and_width();
    test_matrix_small();
    test_matrix_elided();
    test_heatmap_small();
    test_heatmap_odd_nan_flat();
    test_heatmap_pooled();
    test_heatmap_labels_and_ruler();
    test_table();
    return check_summary("test_term");
}
