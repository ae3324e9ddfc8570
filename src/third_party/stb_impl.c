/* The implementations of the stb single-file libraries attn uses, compiled
 * in their own target with relaxed warnings (see meson.build). This target
 * depends on libdeflate and on nothing of attn's own. */
#include <limits.h>
#include <stdlib.h>

#include <libdeflate.h>

/* PNG data is compressed by libdeflate (Debian's libdeflate-dev) instead of
 * stb_image_write's own zlib compressor, through its STBIW_ZLIB_COMPRESS
 * hook: many times faster, and smaller. The level was chosen by measuring
 * attn's figures (docs/performance.md, "PNG compression"): 6 is
 * libdeflate's default; higher levels took a few times longer for about 1%
 * smaller files. */
#ifndef ATTN_PNG_DEFLATE_LEVEL
#define ATTN_PNG_DEFLATE_LEVEL 6
#endif

/* stb_image_write's zlib hook: data[data_len] compressed into a new
 * zlib stream of *out_len bytes, freed by stb with free(); NULL on
 * failure (stb then fails the write). stb's quality (its own compressor's
 * level) is not used. */
static unsigned char *stb_libdeflate_zlib(unsigned char *data, int data_len, int *out_len,
                                          int quality)
{
    (void)quality;
    if (data == NULL || data_len < 0 || out_len == NULL)
        return NULL;
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(ATTN_PNG_DEFLATE_LEVEL);
    if (c == NULL)
        return NULL;
    size_t cap = libdeflate_zlib_compress_bound(c, (size_t)data_len);
    unsigned char *out = cap <= (size_t)INT_MAX ? malloc(cap) : NULL;
    size_t n = out != NULL ? libdeflate_zlib_compress(c, data, (size_t)data_len, out, cap) : 0;
    libdeflate_free_compressor(c);
    if (n == 0) {
        free(out);
        return NULL;
    }
    *out_len = (int)n;
    return out;
}

#define STBIW_ZLIB_COMPRESS stb_libdeflate_zlib
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>

#define STB_TRUETYPE_IMPLEMENTATION
#include <stb_truetype.h>

#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#include <stb_image.h>
