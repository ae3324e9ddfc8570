/* idx.h — the IDX files of MNIST and Fashion-MNIST (LeCun's format, the
 * four files d2l's FashionMNIST reads), gzip'd or not.
 *
 *   images: magic 00 00 08 03, n, rows, cols (big-endian uint32), then
 *           n·rows·cols bytes, row-major, 0 (white) … 255 (black ink)
 *   labels: magic 00 00 08 01, n, then n bytes, each a class < 10
 *
 * A file starting with gzip's magic (1f 8b), or named *.gz, is inflated
 * first. Errors are one line naming the file and the place:
 *     train-images-idx3-ubyte.gz: byte 0: magic 00 00 08 01 is not an image file's (00 00 08 03)
 */
#ifndef ATTN_IDX_H
#define ATTN_IDX_H

#include <stddef.h>

/* Fashion-MNIST's classes, as d2l's text_labels. */
#define IDX_CLASSES 10
extern const char *const idx_fashion_labels[IDX_CLASSES];

/* A set of images with their labels. */
typedef struct idx_set {
    unsigned char *pixels; /* (n, rows, cols) */
    unsigned char *labels; /* (n,), each < IDX_CLASSES */
    size_t n, rows, cols;
} idx_set;

void idx_set_free(idx_set *s);

/* The images file at path: *pixels (malloc'd, (n, rows, cols)). 0, or -1
 * with the message in err. */
int idx_read_images(const char *path, unsigned char **pixels, size_t *n, size_t *rows,
                    size_t *cols, char *err, size_t errlen);
/* The labels file at path: *labels (malloc'd, (n,)), each checked < 10. */
int idx_read_labels(const char *path, unsigned char **labels, size_t *n, char *err,
                    size_t errlen);

/* The same from bytes already in memory (name stands for the file in the
 * messages): what the fuzz harness and the tests call. */
int idx_parse_images(const unsigned char *data, size_t len, const char *name,
                     unsigned char **pixels, size_t *n, size_t *rows, size_t *cols, char *err,
                     size_t errlen);
int idx_parse_labels(const unsigned char *data, size_t len, const char *name,
                     unsigned char **labels, size_t *n, char *err, size_t errlen);

/* A set from an images file and a labels file whose counts must agree;
 * limit > 0 keeps the first `limit` of them (fewer when the files hold
 * fewer). 0, or -1 with the message. */
int idx_load_set(idx_set *s, const char *images_path, const char *labels_path, size_t limit,
                 char *err, size_t errlen);

/* The path of Fashion-MNIST's file `base` (e.g. "train-images-idx3-ubyte")
 * in dir: base when it exists, else base.gz. 0, or -1 when neither exists
 * (path then holds the .gz name). */
int idx_find(char *path, size_t pathlen, const char *dir, const char *base);

/* Where Debian's dataset-fashion-mnist puts the four files: the folder
 * read when --data is not given. */
#define IDX_FASHION_DIR "/usr/share/datasets/fashion-mnist"

/* Fashion-MNIST's training and test sets from the folder dir (the four
 * files by idx_find), the first ntrain and ntest images (0: all), the
 * images of both the same squares. given: dir came from the user (--data),
 * which the message for a missing file names; else it is the default
 * folder, and the message names the Debian package to install. train
 * NULL: the test set alone. 0, or -1 with the message in err (nothing
 * left allocated). */
int idx_load_fashion(idx_set *train, idx_set *test, const char *dir, int given, size_t ntrain,
                     size_t ntest, char *err, size_t errlen);

/* Each image of s resized to S × S as d2l's Resize does an 8-bit image
 * (resize.h, each pass rounded to 0 … 255): --img-size. 0, or -1 with the
 * message in err (s unchanged). */
int idx_resize(idx_set *s, size_t S, char *err, size_t errlen);

/* Image i of s as a model reads it: pixels / 255 (d2l's ToTensor), out
 * (rows·cols,). */
void idx_pixels(float *out, const idx_set *s, size_t i);

#endif
