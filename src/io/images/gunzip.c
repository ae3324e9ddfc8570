/* gunzip.c — gunzip.h with libdeflate (Debian's libdeflate-dev), which
 * attn links already for its PNGs. */
#include "gunzip.h"

#include <libdeflate.h>
#include <stdio.h>
#include <stdlib.h>

#include "checked.h"
#include "i18n.h"

/* The most a file may inflate to: 1 GiB (Fashion-MNIST's largest file is
 * 47 MB), so that a small crafted file cannot ask for the machine. */
#define GUNZIP_MAX ((size_t)1 << 30)

/* The gzip member at in (len bytes left, at byte pos of the file) into
 * *buf from byte used, *buf doubled while it is too small: *in_used and
 * *got the bytes read and written. 0, or -1 with the message. */
static int gunzip_member(struct libdeflate_decompressor *d, unsigned char **buf, size_t *cap,
                         size_t used, const unsigned char *in, size_t len, size_t *in_used,
                         size_t *got, size_t pos, const char *name, char *err, size_t errlen)
{
    for (;;) {
        enum libdeflate_result r =
            libdeflate_gzip_decompress_ex(d, in, len, *buf + used, *cap - used, in_used, got);
        if (r == LIBDEFLATE_SUCCESS)
            return 0;
        if (r != LIBDEFLATE_INSUFFICIENT_SPACE) {
            snprintf(err, errlen,
                     _("%s: not a valid gzip file (the member at byte %zu is corrupt or truncated)"),
                     name, pos);
            return -1;
        }
        size_t ncap;
        unsigned char *nb = NULL;
        if (size_mul(*cap, 2, &ncap) != 0 || ncap > GUNZIP_MAX) {
            snprintf(err, errlen, _("%s: the gzip data inflate to more than %zu MiB"), name,
                     (size_t)GUNZIP_MAX >> 20);
            return -1;
        }
        nb = realloc(*buf, ncap);
        if (nb == NULL) {
            snprintf(err, errlen, _("out of memory reading %s"), name);
            return -1;
        }
        *buf = nb;
        *cap = ncap;
    }
}

int gunzip_buffer(unsigned char **out, size_t *out_len, const unsigned char *in, size_t len,
                  const char *name, char *err, size_t errlen)
{
    *out = NULL;
    *out_len = 0;
    if (len < 2 || in[0] != 0x1f || in[1] != 0x8b) {
        snprintf(err, errlen, _("%s: not a gzip file (byte 0: no gzip magic 1f 8b)"), name);
        return -1;
    }
    if (len < 18) {
        snprintf(err, errlen, _("%s: not a valid gzip file (truncated: %zu bytes)"), name, len);
        return -1;
    }
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    if (d == NULL) {
        snprintf(err, errlen, _("out of memory reading %s"), name);
        return -1;
    }
    /* The trailer's ISIZE is the size mod 2^32 of the last member only: a
     * first guess, doubled until the data fit. */
    size_t cap = (size_t)in[len - 4] | (size_t)in[len - 3] << 8 | (size_t)in[len - 2] << 16 |
                 (size_t)in[len - 1] << 24;
    if (cap < 1024)
        cap = 1024;
    if (cap > GUNZIP_MAX / 8)
        cap = GUNZIP_MAX / 8;
    unsigned char *buf = malloc(cap);
    if (buf == NULL) {
        libdeflate_free_decompressor(d);
        snprintf(err, errlen, _("out of memory reading %s"), name);
        return -1;
    }
    size_t used = 0, pos = 0;
    int rc = 0;
    while (pos < len && rc == 0) {
        size_t in_used = 0, got = 0;
        rc = gunzip_member(d, &buf, &cap, used, in + pos, len - pos, &in_used, &got, pos, name,
                           err, errlen);
        if (rc == 0) {
            pos += in_used;
            used += got;
            /* trailing zeros after the last member (some tools pad) end it */
            if (pos < len && in[pos] != 0x1f)
                break;
        }
    }
    libdeflate_free_decompressor(d);
    if (rc != 0) {
        free(buf);
        return -1;
    }
    *out = buf;
    *out_len = used;
    return 0;
}
