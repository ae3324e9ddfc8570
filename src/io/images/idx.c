/* idx.c — idx.h: the IDX files of Fashion-MNIST, read whole into memory
 * (inflated first when gzip'd) and checked field by field. */
#include "idx.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "gunzip.h"
#include "i18n.h"
#include "resize.h"

const char *const idx_fashion_labels[IDX_CLASSES] = {
    "t-shirt", "trouser", "pullover", "dress", "coat",
    "sandal",  "shirt",   "sneaker",  "bag",   "ankle boot"};

void idx_set_free(idx_set *s)
{
    free(s->pixels);
    free(s->labels);
    s->pixels = NULL;
    s->labels = NULL;
    s->n = s->rows = s->cols = 0;
}

/* The big-endian uint32 at data[at]. */
static size_t be32(const unsigned char *data, size_t at)
{
    return (size_t)data[at] << 24 | (size_t)data[at + 1] << 16 | (size_t)data[at + 2] << 8 |
           (size_t)data[at + 3];
}

/* The header of an IDX file of `dims` dimensions and type 08 (unsigned
 * bytes): its sizes into dim[], and the count of data bytes it announces
 * checked against the bytes that follow it. */
static int idx_header(const unsigned char *data, size_t len, const char *name, int dims,
                      const char *what, size_t *dim, char *err, size_t errlen)
{
    size_t head = 4 + 4 * (size_t)dims;
    if (len < 4) {
        snprintf(err, errlen, _("%s: truncated: %zu bytes, an IDX header needs %zu"), name, len,
                 head);
        return -1;
    }
    if (data[0] != 0 || data[1] != 0 || data[2] != 8 || data[3] != (unsigned char)dims) {
        snprintf(err, errlen,
                 _("%s: byte 0: magic %02x %02x %02x %02x is not %s file's (00 00 08 %02x)"), name,
                 data[0], data[1], data[2], data[3], what, (unsigned)dims);
        return -1;
    }
    if (len < head) {
        snprintf(err, errlen, _("%s: truncated: %zu bytes, an IDX header needs %zu"), name, len,
                 head);
        return -1;
    }
    size_t total = 1;
    for (int i = 0; i < dims; i++) {
        dim[i] = be32(data, 4 + 4 * (size_t)i);
        if (size_mul(total, dim[i], &total) != 0) {
            snprintf(err, errlen, _("%s: byte %zu: the sizes' product overflows"), name,
                     4 + 4 * (size_t)i);
            return -1;
        }
    }
    if (len - head < total) {
        snprintf(err, errlen, _("%s: truncated: the header (byte 4) announces %zu data bytes, the "
                 "file holds %zu"), name, total, len - head);
        return -1;
    }
    if (len - head > total) {
        snprintf(err, errlen, _("%s: byte %zu: %zu bytes after the %zu data bytes the header "
                 "announces"), name, head + total, len - head - total, total);
        return -1;
    }
    return 0;
}

int idx_parse_images(const unsigned char *data, size_t len, const char *name,
                     unsigned char **pixels, size_t *n, size_t *rows, size_t *cols, char *err,
                     size_t errlen)
{
    size_t dim[3];
    *pixels = NULL;
    if (idx_header(data, len, name, 3, "an image", dim, err, errlen) != 0)
        return -1;
    if (dim[1] == 0 || dim[2] == 0) {
        snprintf(err, errlen, _("%s: byte 8: images of %zu × %zu pixels"), name, dim[1], dim[2]);
        return -1;
    }
    size_t bytes = len - 16;
    *pixels = malloc(bytes ? bytes : 1);
    if (*pixels == NULL) {
        snprintf(err, errlen, _("out of memory reading %s"), name);
        return -1;
    }
    memcpy(*pixels, data + 16, bytes);
    *n = dim[0];
    *rows = dim[1];
    *cols = dim[2];
    return 0;
}

int idx_parse_labels(const unsigned char *data, size_t len, const char *name,
                     unsigned char **labels, size_t *n, char *err, size_t errlen)
{
    size_t dim[1];
    *labels = NULL;
    if (idx_header(data, len, name, 1, "a label", dim, err, errlen) != 0)
        return -1;
    for (size_t i = 0; i < dim[0]; i++)
        if (data[8 + i] >= IDX_CLASSES) {
            snprintf(err, errlen, _("%s: byte %zu: label %u of item %zu is not a class (0 … %d)"),
                     name, 8 + i, (unsigned)data[8 + i], i, IDX_CLASSES - 1);
            return -1;
        }
    *labels = malloc(dim[0] ? dim[0] : 1);
    if (*labels == NULL) {
        snprintf(err, errlen, _("out of memory reading %s"), name);
        return -1;
    }
    memcpy(*labels, data + 8, dim[0]);
    *n = dim[0];
    return 0;
}

/* The bytes of the file at path, inflated when it is gzip'd (gzip's magic,
 * or a name ending in .gz: then it must be a gzip file). */
static int idx_slurp(const char *path, unsigned char **out, size_t *out_len, char *err,
                     size_t errlen)
{
    *out = NULL;
    *out_len = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    unsigned char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            size_t ncap = cap ? cap : 65536;
            if (cap && size_mul(cap, 2, &ncap) != 0)
                ncap = 0;
            unsigned char *nb = ncap ? realloc(buf, ncap) : NULL;
            if (nb == NULL) {
                free(buf);
                fclose(f);
                snprintf(err, errlen, _("out of memory reading %s"), path);
                return -1;
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        snprintf(err, errlen, _("%s: read error"), path);
        return -1;
    }
    size_t plen = strlen(path);
    int gz_name = plen >= 3 && strcmp(path + plen - 3, ".gz") == 0;
    int gz_magic = len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b;
    if (gz_name || gz_magic) {
        int rc = gunzip_buffer(out, out_len, buf, len, path, err, errlen);
        free(buf);
        return rc;
    }
    *out = buf;
    *out_len = len;
    return 0;
}

int idx_read_images(const char *path, unsigned char **pixels, size_t *n, size_t *rows,
                    size_t *cols, char *err, size_t errlen)
{
    unsigned char *data;
    size_t len;
    *pixels = NULL;
    if (idx_slurp(path, &data, &len, err, errlen) != 0)
        return -1;
    int rc = idx_parse_images(data, len, path, pixels, n, rows, cols, err, errlen);
    free(data);
    return rc;
}

int idx_read_labels(const char *path, unsigned char **labels, size_t *n, char *err,
                    size_t errlen)
{
    unsigned char *data;
    size_t len;
    *labels = NULL;
    if (idx_slurp(path, &data, &len, err, errlen) != 0)
        return -1;
    int rc = idx_parse_labels(data, len, path, labels, n, err, errlen);
    free(data);
    return rc;
}

int idx_load_set(idx_set *s, const char *images_path, const char *labels_path, size_t limit,
                 char *err, size_t errlen)
{
    size_t nl = 0;
    memset(s, 0, sizeof *s);
    if (idx_read_images(images_path, &s->pixels, &s->n, &s->rows, &s->cols, err, errlen) != 0 ||
        idx_read_labels(labels_path, &s->labels, &nl, err, errlen) != 0) {
        idx_set_free(s);
        return -1;
    }
    if (nl != s->n) {
        snprintf(err, errlen, _("%s: byte 4: %zu labels, but %s holds %zu images"), labels_path,
                 nl, images_path, s->n);
        idx_set_free(s);
        return -1;
    }
    if (limit > 0 && limit < s->n)
        s->n = limit;
    return 0;
}

int idx_find(char *path, size_t pathlen, const char *dir, const char *base)
{
    FILE *f;
    snprintf(path, pathlen, "%s/%s", dir, base);
    if ((f = fopen(path, "rb")) != NULL) {
        fclose(f);
        return 0;
    }
    snprintf(path, pathlen, "%s/%s.gz", dir, base);
    if ((f = fopen(path, "rb")) != NULL) {
        fclose(f);
        return 0;
    }
    return -1;
}

int idx_load_fashion(idx_set *train, idx_set *test, const char *dir, int given, size_t ntrain,
                     size_t ntest, char *err, size_t errlen)
{
    static const char *const bases[4] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                                         "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};
    char path[4][1100];
    for (int i = 0; i < 4; i++)
        if (idx_find(path[i], sizeof path[i], dir, bases[i]) != 0) {
            if (given)
                snprintf(err, errlen, _("%s: no %s (or .gz): --data names a folder with "
                                        "Fashion-MNIST's four IDX files"), dir, bases[i]);
            else
                snprintf(err, errlen, _("no Fashion-MNIST in %s: sudo apt-get install "
                                        "dataset-fashion-mnist (or --data DIR)"), dir);
            return -1;
        }
    if (train && idx_load_set(train, path[0], path[1], ntrain, err, errlen) != 0)
        return -1;
    if (idx_load_set(test, path[2], path[3], ntest, err, errlen) != 0) {
        if (train)
            idx_set_free(train);
        return -1;
    }
    if (!train) {
        if (test->rows == test->cols)
            return 0;
        snprintf(err, errlen, _("%s: test images of %zu × %zu: they must be squares"), dir,
                 test->rows, test->cols);
        idx_set_free(test);
        return -1;
    }
    if (train->rows != train->cols || test->rows != train->rows || test->cols != train->cols) {
        snprintf(err, errlen, _("%s: images of %zu × %zu and %zu × %zu: the training and test "
                                "images must be the same squares"), dir, train->rows, train->cols,
                 test->rows, test->cols);
        idx_set_free(train);
        idx_set_free(test);
        return -1;
    }
    return 0;
}

void idx_pixels(float *out, const idx_set *s, size_t i)
{
    const size_t n = s->rows * s->cols;
    const unsigned char *px = s->pixels + i * n;
    for (size_t k = 0; k < n; k++)
        out[k] = (float)px[k] / 255.0f;
}

int idx_resize(idx_set *s, size_t S, char *err, size_t errlen)
{
    const size_t n0 = s->rows * s->cols;
    size_t n1, bytes;
    if (S == s->rows && S == s->cols)
        return 0;
    if (size_mul(S, S, &n1) || size_mul(n1, s->n, &bytes)) {
        snprintf(err, errlen, _("images of %zu × %zu: too large"), S, S);
        return -1;
    }
    unsigned char *px = malloc(bytes > 0 ? bytes : 1);
    float *src = float_alloc(n0), *dst = float_alloc(n1);
    int rc = px && src && dst ? 0 : -1;
    for (size_t i = 0; i < s->n && rc == 0; i++) { /* as Resize does an 8-bit image */
        for (size_t k = 0; k < n0; k++)
            src[k] = s->pixels[i * n0 + k];
        rc = image_resize(dst, S, S, src, s->rows, s->cols, 1);
        for (size_t k = 0; k < n1 && rc == 0; k++)
            px[i * n1 + k] = (unsigned char)dst[k];
    }
    FREE_EACH(src, dst);
    if (rc != 0) {
        free(px);
        snprintf(err, errlen, _("out of memory for %zu images of %zu × %zu"), s->n, S, S);
        return -1;
    }
    free(s->pixels);
    s->pixels = px;
    s->rows = s->cols = S;
    return 0;
}
