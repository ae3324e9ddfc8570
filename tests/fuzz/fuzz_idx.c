/* fuzz_idx.c — libFuzzer harness for the IDX reader of `attn train --task
 * vit` (SPEC.md §16; src/io/images/idx.c, src/io/images/gunzip.c).
 *
 * The bytes are read as an images file, as a labels file, and, when they
 * inflate as gzip, the inflated bytes the same way; then through
 * idx_read_images from a file. What loads is checked against idx.h's promises: the
 * header's sizes multiply to the data's bytes exactly, every label < 10;
 * what does not load leaves no buffer.
 *
 * The corpus: tests/fuzz/corpus/idx/ (tests/fuzz/make_corpus.py: small
 * image and label files, plain and gzip'd, a wrong magic, truncated).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "gunzip.h"
#include "idx.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

static void parse_both(const unsigned char *data, size_t size)
{
    unsigned char *px = NULL, *lb = NULL;
    size_t n = 0, r = 0, c = 0;
    char err[512];
    if (idx_parse_images(data, size, "f", &px, &n, &r, &c, err, sizeof err) == 0) {
        if (px == NULL || r == 0 || c == 0 || size < 16 || n * r * c != size - 16)
            abort();
        free(px);
    } else if (px != NULL || err[0] == '\0') {
        abort();
    }
    if (idx_parse_labels(data, size, "f", &lb, &n, err, sizeof err) == 0) {
        if (lb == NULL || size < 8 || n != size - 8)
            abort();
        for (size_t i = 0; i < n; i++)
            if (lb[i] >= IDX_CLASSES)
                abort();
        free(lb);
    } else if (lb != NULL || err[0] == '\0') {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char *out = NULL, *px = NULL;
    size_t len = 0, n, r, c;
    char err[512];
    parse_both(data, size);
    if (gunzip_buffer(&out, &len, data, size, "f.gz", err, sizeof err) == 0) {
        parse_both(out, len);
        free(out);
    } else if (out != NULL) {
        abort();
    }
    /* from a file, inflated when it starts as gzip does */
    const char *path = fuzz_file(0, data, size);
    if (path != NULL) {
        if (idx_read_images(path, &px, &n, &r, &c, err, sizeof err) == 0)
            free(px);
        else if (px != NULL)
            abort();
    }
    return 0;
}
