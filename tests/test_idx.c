/* test_idx.c — io/images/idx.h, the IDX reader, on small files written here (plain
 * and gzip'd with libdeflate), every bad input SPEC.md §16 names, and the
 * real Fashion-MNIST files of Debian's dataset-fashion-mnist when present;
 * resize.h's resize against torch's antialiased bilinear interpolate and
 * Pillow's 8-bit resize (tests/ref/resize, scripts/gen_resize_ref.py), and
 * picture.h's reader on PNG files written here and a committed JPEG.
 */
#include <cjson/cJSON.h>
#include <libdeflate.h>
#include <math.h>
#include <stb_image_write.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "idx.h"
#include "picture.h"
#include "resize.h"

static char dir[] = "/tmp/attn_idx_XXXXXX";

static void write_file(const char *name, const unsigned char *data, size_t len, char *path,
                       size_t pathlen)
{
    snprintf(path, pathlen, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) {
        CHECK(fwrite(data, 1, len, f) == len);
        fclose(f);
    }
}

/* data gzip'd by libdeflate into path */
static void write_gz(const char *name, const unsigned char *data, size_t len, char *path,
                     size_t pathlen)
{
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(6);
    size_t cap = libdeflate_gzip_compress_bound(c, len);
    unsigned char *out = malloc(cap);
    size_t n = libdeflate_gzip_compress(c, data, len, out, cap);
    CHECK(n > 0);
    write_file(name, out, n, path, pathlen);
    free(out);
    libdeflate_free_compressor(c);
}

/* An images file of n images of r × c pixels, pixel i = (7·i + 3) mod 256,
 * and a labels file of n labels, label i = i mod 10. */
static size_t make_images(unsigned char *buf, size_t n, size_t r, size_t c)
{
    unsigned char head[16] = {0, 0, 8, 3, 0, 0, 0, (unsigned char)n, 0, 0, 0, (unsigned char)r,
                              0, 0, 0, (unsigned char)c};
    memcpy(buf, head, 16);
    for (size_t i = 0; i < n * r * c; i++)
        buf[16 + i] = (unsigned char)((7 * i + 3) % 256);
    return 16 + n * r * c;
}

static size_t make_labels(unsigned char *buf, size_t n)
{
    unsigned char head[8] = {0, 0, 8, 1, 0, 0, 0, (unsigned char)n};
    memcpy(buf, head, 8);
    for (size_t i = 0; i < n; i++)
        buf[8 + i] = (unsigned char)(i % 10);
    return 8 + n;
}

/* The read fails and its message holds both want1 and want2. */
static void expect_images_error(const char *path, const char *want1, const char *want2)
{
    unsigned char *px = NULL;
    size_t n, r, c;
    char err[512] = "";
    CHECK(idx_read_images(path, &px, &n, &r, &c, err, sizeof err) == -1);
    CHECK(px == NULL);
    CHECK(strstr(err, want1) != NULL);
    CHECK(strstr(err, want2) != NULL);
    if (!strstr(err, want1) || !strstr(err, want2))
        fprintf(stderr, "  message: %s\n", err);
}

static void expect_labels_error(const char *path, const char *want1, const char *want2)
{
    unsigned char *lb = NULL;
    size_t n;
    char err[512] = "";
    CHECK(idx_read_labels(path, &lb, &n, err, sizeof err) == -1);
    CHECK(lb == NULL);
    CHECK(strstr(err, want1) != NULL);
    CHECK(strstr(err, want2) != NULL);
    if (!strstr(err, want1) || !strstr(err, want2))
        fprintf(stderr, "  message: %s\n", err);
}

static void test_good(void)
{
    unsigned char img[16 + 3 * 2 * 3], lab[8 + 3];
    char ip[512], lp[512], gip[512], glp[512], err[512] = "";
    size_t ilen = make_images(img, 3, 2, 3), llen = make_labels(lab, 3);
    write_file("img", img, ilen, ip, sizeof ip);
    write_file("lab", lab, llen, lp, sizeof lp);
    write_gz("img.gz", img, ilen, gip, sizeof gip);
    write_gz("lab.gz", lab, llen, glp, sizeof glp);
    for (int gz = 0; gz < 2; gz++) {
        idx_set s;
        CHECK(idx_load_set(&s, gz ? gip : ip, gz ? glp : lp, 0, err, sizeof err) == 0);
        CHECK_INT(s.n, 3);
        CHECK_INT(s.rows, 2);
        CHECK_INT(s.cols, 3);
        /* image 2, row 1, column 2: flat 2·6 + 1·3 + 2 = 17, (7·17 + 3) mod 256 = 122 */
        CHECK_INT(s.pixels[17], 122);
        CHECK_INT(s.pixels[0], 3);
        CHECK_INT(s.labels[2], 2);
        idx_set_free(&s);
        /* the first 2 only */
        CHECK(idx_load_set(&s, gz ? gip : ip, gz ? glp : lp, 2, err, sizeof err) == 0);
        CHECK_INT(s.n, 2);
        idx_set_free(&s);
    }
    /* a gzip'd file found by its content under a plain name */
    char gp[512];
    write_gz("img_gz_content", img, ilen, gp, sizeof gp);
    unsigned char *px;
    size_t n, r, c;
    CHECK(idx_read_images(gp, &px, &n, &r, &c, err, sizeof err) == 0);
    CHECK_INT(n, 3);
    CHECK_INT(px[5], (7 * 5 + 3) % 256);
    free(px);
    /* idx_find: the plain name, else .gz */
    char found[600];
    CHECK(idx_find(found, sizeof found, dir, "img") == 0);
    CHECK(strcmp(found, ip) == 0);
    unlink(ip);
    CHECK(idx_find(found, sizeof found, dir, "img") == 0);
    CHECK(strcmp(found, gip) == 0);
    CHECK(idx_find(found, sizeof found, dir, "nothing") == -1);
    unlink(lp);
    unlink(gip);
    unlink(glp);
    unlink(gp);
}

static void test_bad(void)
{
    unsigned char img[16 + 3 * 2 * 3], lab[8 + 3];
    char p[512], p2[512], err[512] = "";
    size_t ilen = make_images(img, 3, 2, 3), llen = make_labels(lab, 3);

    /* wrong magic: a labels file read as images, and the other way */
    write_file("wrong_magic", lab, llen, p, sizeof p);
    expect_images_error(p, "wrong_magic: byte 0: magic 00 00 08 01", "(00 00 08 03)");
    write_file("wrong_magic2", img, ilen, p, sizeof p);
    expect_labels_error(p, "wrong_magic2: byte 0: magic 00 00 08 03", "(00 00 08 01)");
    unsigned char junk[20] = "GIF89a not an idx";
    write_file("junk", junk, sizeof junk, p, sizeof p);
    expect_images_error(p, "junk: byte 0: magic 47 49 46 38", "image file");

    /* truncated: one data byte short, and inside the header */
    write_file("short", img, ilen - 1, p, sizeof p);
    expect_images_error(p, "short: truncated", "announces 18 data bytes, the file holds 17");
    write_file("short_head", img, 10, p, sizeof p);
    expect_images_error(p, "short_head: truncated: 10 bytes", "needs 16");
    write_file("tiny", img, 2, p, sizeof p);
    expect_labels_error(p, "tiny: truncated: 2 bytes", "needs 8");
    /* a byte too many */
    unsigned char lab_long[8 + 4];
    memcpy(lab_long, lab, llen);
    lab_long[llen] = 0;
    write_file("long", lab_long, llen + 1, p, sizeof p);
    expect_labels_error(p, "long: byte 11: 1 bytes after", "3 data bytes");

    /* a label >= 10: item 1 holds 10, at byte 9 */
    unsigned char lab10[8 + 3];
    memcpy(lab10, lab, llen);
    lab10[9] = 10;
    write_file("label10", lab10, llen, p, sizeof p);
    expect_labels_error(p, "label10: byte 9: label 10 of item 1", "(0 … 9)");

    /* counts that disagree: 3 images, 2 labels */
    unsigned char lab2[8 + 2];
    size_t l2 = make_labels(lab2, 2);
    write_file("img3", img, ilen, p, sizeof p);
    write_file("lab2", lab2, l2, p2, sizeof p2);
    idx_set s;
    CHECK(idx_load_set(&s, p, p2, 0, err, sizeof err) == -1);
    CHECK(s.pixels == NULL && s.labels == NULL);
    CHECK(strstr(err, "lab2: byte 4: 2 labels, but") != NULL);
    CHECK(strstr(err, "img3 holds 3 images") != NULL);

    /* a gzip that is not one: a .gz name over plain bytes, and a gzip
     * stream cut short */
    write_file("plain.gz", img, ilen, p, sizeof p);
    expect_images_error(p, "plain.gz: not a gzip file", "byte 0");
    char gz[512];
    write_gz("cut.gz", img, ilen, gz, sizeof gz);
    size_t glen;
    char *gbytes = check_read_file(gz, &glen);
    CHECK(gbytes != NULL);
    if (gbytes) {
        write_file("cut.gz", (unsigned char *)gbytes, glen - 6, p, sizeof p);
        expect_images_error(p, "cut.gz: not a valid gzip file", "corrupt or truncated");
        free(gbytes);
    }
    /* a file that does not exist */
    snprintf(p, sizeof p, "%s/absent", dir);
    expect_images_error(p, "absent: ", "No such file");
}

/* Debian's dataset-fashion-mnist, when installed: the test set's sizes,
 * its first labels (ankle boot, pullover, trouser, trouser) and the sum of
 * its first image's pixels (computed with Python's gzip module). */
static void test_real(void)
{
    const char *d = "/usr/share/datasets/fashion-mnist";
    char ip[600], lp[600], err[512] = "";
    if (idx_find(ip, sizeof ip, d, "t10k-images-idx3-ubyte") != 0 ||
        idx_find(lp, sizeof lp, d, "t10k-labels-idx1-ubyte") != 0) {
        printf("idx: %s absent, the real files not read\n", d);
        return;
    }
    idx_set s;
    CHECK(idx_load_set(&s, ip, lp, 0, err, sizeof err) == 0);
    CHECK_INT(s.n, 10000);
    CHECK_INT(s.rows, 28);
    CHECK_INT(s.cols, 28);
    if (s.labels) {
        CHECK_INT(s.labels[0], 9);
        CHECK_INT(s.labels[1], 2);
        CHECK_INT(s.labels[2], 1);
        CHECK_INT(s.labels[4], 6);
        long sum = 0;
        for (size_t i = 0; i < 784; i++)
            sum += s.pixels[i];
        CHECK_INT(sum, 33456);
        CHECK_INT(s.pixels[14 * 28 + 14], 110);
    }
    idx_set_free(&s);
}

/* Every case of the reference: the float resize within 1e-3 (of 0 … 255: float32 rounding in torch)
 * of torch's, the 8-bit one within 1 of Pillow's (its fixed-point
 * weights round otherwise now and then) and equal on most pixels; and
 * idx_resize, the 8-bit path, on a set of two such images. */
static void test_resize(const char *path)
{
    char *text = check_read_file(path, NULL);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    free(text);
    CHECK(root != NULL);
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(root, "cases");
    int ncases = 0;
    for (const cJSON *c = cases ? cases->child : NULL; c; c = c->next, ncases++) {
        size_t sh = (size_t)cJSON_GetObjectItemCaseSensitive(c, "sh")->valueint;
        size_t sw = (size_t)cJSON_GetObjectItemCaseSensitive(c, "sw")->valueint;
        size_t dh = (size_t)cJSON_GetObjectItemCaseSensitive(c, "dh")->valueint;
        size_t dw = (size_t)cJSON_GetObjectItemCaseSensitive(c, "dw")->valueint;
        const cJSON *src = cJSON_GetObjectItemCaseSensitive(c, "src");
        const cJSON *tf = cJSON_GetObjectItemCaseSensitive(c, "torch");
        const cJSON *pil = cJSON_GetObjectItemCaseSensitive(c, "pil");
        float *in = malloc(sh * sw * sizeof *in), *out = malloc(dh * dw * sizeof *out);
        idx_set set = {malloc(2 * sh * sw), malloc(2), 2, sh, sw};
        CHECK((size_t)cJSON_GetArraySize(src) == sh * sw);
        CHECK((size_t)cJSON_GetArraySize(tf) == dh * dw && (size_t)cJSON_GetArraySize(pil) == dh * dw);
        size_t k = 0;
        for (const cJSON *v = src->child; v; v = v->next, k++) {
            in[k] = (float)v->valuedouble;
            set.pixels[k] = set.pixels[sh * sw + k] = (unsigned char)v->valueint;
        }
        set.labels[0] = set.labels[1] = 3;
        double worst = 0;
        CHECK(image_resize(out, dh, dw, in, sh, sw, 0) == 0);
        k = 0;
        for (const cJSON *v = tf->child; v; v = v->next, k++)
            worst = fmax(worst, fabs(out[k] - v->valuedouble));
        CHECK(worst < 1e-3);
        if (worst >= 1e-3)
            fprintf(stderr, "  resize %zux%zu -> %zux%zu: %g from torch\n", sh, sw, dh, dw, worst);
        char err[256];
        CHECK(idx_resize(&set, dh, err, sizeof err) == (dh == dw ? 0 : -1) || dh != dw);
        if (dh == dw) { /* idx_resize makes squares */
            size_t off = 0, same = 0;
            k = 0;
            for (const cJSON *v = pil->child; v; v = v->next, k++) {
                int d = (int)set.pixels[dh * dw + k] - v->valueint;
                off += d < -1 || d > 1;
                same += d == 0;
                CHECK(set.pixels[k] == set.pixels[dh * dw + k]);
            }
            CHECK(off == 0);
            CHECK(same * 10 >= 9 * dh * dw);
            CHECK(set.rows == dh && set.cols == dw && set.n == 2);
            if (off || same * 10 < 9 * dh * dw)
                fprintf(stderr, "  idx_resize %zu -> %zu: %zu pixels off by more than 1, %zu equal\n",
                        sh, dh, off, same);
        }
        idx_set_free(&set);
        free(in);
        free(out);
    }
    CHECK(ncases == 6);
    cJSON_Delete(root);
    /* by hand: 2 → 4 is bilinear on centres (torch's 0, 0.25, 0.75, 1 of
     * [0, 1]); 4 → 2 averages with weights 1, 3, 3, 1 */
    float up[4], down[2], row2[2] = {0, 1}, row4[4] = {0, 8, 16, 24};
    CHECK(image_resize(up, 1, 4, row2, 1, 2, 0) == 0);
    CHECK_NEAR(up[0], 0, 1e-7, 0);
    CHECK_NEAR(up[1], 0.25, 1e-7, 0);
    CHECK_NEAR(up[2], 0.75, 1e-7, 0);
    CHECK_NEAR(up[3], 1, 1e-7, 0);
    CHECK(image_resize(down, 1, 2, row4, 1, 4, 0) == 0);
    CHECK_NEAR(down[0], (0 * 3 + 8 * 3 + 16 * 1) / 7.0, 1e-5, 0); /* 0 is 1 + 3 weights: clipped */
    CHECK_NEAR(down[1], (8 * 1 + 16 * 3 + 24 * 3) / 7.0, 1e-5, 0);
}

/* picture_load_grey on a 2 × 2 RGBA PNG (no resize at S = 2): BT.601's
 * luma, the alpha over black, --invert before it; a 4 × 4 PNG to 2 × 2
 * (the average of each 2 × 2 block, by the weights 1, 3, 3, 1 twice);
 * a uniform JPEG within its rounding; an unreadable file. */
static void test_picture(const char *jpg_path)
{
    char png[600], junk[600], err[700];
    const unsigned char rgba[16] = {255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255,
                                    200, 200, 200, 128};
    snprintf(png, sizeof png, "%s/p.png", dir);
    CHECK(stbi_write_png(png, 2, 2, 4, rgba, 8) != 0);
    float *g = NULL;
    size_t w = 0, h = 0;
    CHECK(picture_load_grey(png, 2, 0, &g, &w, &h, err, sizeof err) == 0);
    CHECK(w == 2 && h == 2);
    if (g) {
        CHECK_NEAR(g[0], 0.299, 1e-6, 0);
        CHECK_NEAR(g[1], 0.587, 1e-6, 0);
        CHECK_NEAR(g[2], 0.114, 1e-6, 0);
        CHECK_NEAR(g[3], 200 / 255.0 * 128 / 255.0, 1e-6, 0);
    }
    free(g);
    CHECK(picture_load_grey(png, 2, 1, &g, &w, &h, err, sizeof err) == 0);
    if (g) {
        CHECK_NEAR(g[0], 0.701, 1e-6, 0);
        CHECK_NEAR(g[3], 55 / 255.0 * 128 / 255.0, 1e-6, 0);
    }
    free(g);
    unsigned char grey16[16];
    for (int i = 0; i < 16; i++)
        grey16[i] = (unsigned char)(16 * i);
    CHECK(stbi_write_png(png, 4, 4, 1, grey16, 4) != 0);
    CHECK(picture_load_grey(png, 2, 0, &g, &w, &h, err, sizeof err) == 0);
    if (g) { /* the top-left block, by the weights (3, 3, 1) of 0, 16, 32 over rows 0, 1, 2 */
        double row0 = (0 * 3 + 16 * 3 + 32) / 7.0, row1 = row0 + 64, row2 = row0 + 128;
        CHECK_NEAR(g[0], (row0 * 3 + row1 * 3 + row2) / 7.0 / 255.0, 1e-6, 0);
    }
    free(g);
    /* tests/ref/resize/flat.jpg: 8 × 8 of (100, 100, 100), written by
     * Pillow at quality 95 (stb_image_write's JPEG encoder shifts a
     * negative int, which UBSan refuses, so the file is committed) */
    CHECK(picture_load_grey(jpg_path, 4, 0, &g, &w, &h, err, sizeof err) == 0);
    CHECK(w == 8 && h == 8);
    for (int i = 0; g && i < 16; i++)
        CHECK_NEAR(g[i], 100 / 255.0, 2.5 / 255.0, 0);
    free(g);
    snprintf(junk, sizeof junk, "%s/junk.png", dir);
    write_file("junk.png", (const unsigned char *)"not an image", 12, junk, sizeof junk);
    CHECK(picture_load_grey(junk, 4, 0, &g, &w, &h, err, sizeof err) == -1);
    CHECK(g == NULL && strstr(err, "junk.png: not an image attn reads (PNG or JPEG)") != NULL);
    unlink(png);
    unlink(junk);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_idx tests/ref/resize/resize_ref.json\n");
        return 2;
    }
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    test_good();
    test_bad();
    test_real();
    test_resize(argv[1]);
    char jpg[1100];
    snprintf(jpg, sizeof jpg, "%s", argv[1]);
    char *slash = strrchr(jpg, '/');
    snprintf(slash ? slash + 1 : jpg, sizeof jpg - (size_t)(slash ? slash + 1 - jpg : 0), "%s",
             "flat.jpg");
    test_picture(jpg);
    /* remove what test_bad wrote */
    const char *names[] = {"wrong_magic", "wrong_magic2", "junk", "short", "short_head", "tiny",
                           "long", "label10", "img3", "lab2", "plain.gz", "cut.gz"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char p[600];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
    return check_summary("idx");
}
