/* deflate.h — a small, fast zlib compressor for the PNG writer.
 *
 * stb_image_write compresses a PNG's filtered scanlines with the zlib
 * function named by STBIW_ZLIB_COMPRESS; src/third_party/stb_impl.c names
 * render_zlib_compress, which trades a little size for a lot of speed
 * against stb's own compressor (see deflate.c for how).
 */
#ifndef ATTN_DEFLATE_H
#define ATTN_DEFLATE_H

#include <stddef.h>

/* The zlib stream (RFC 1950) of data[0 .. data_len), in a buffer from
 * malloc (the caller frees it), its length in *out_len. NULL when
 * data_len < 0, data is NULL with data_len > 0, out_len is NULL, the
 * output would not fit in an int, or memory runs out. quality (stb's
 * compression level) is ignored: there is one speed/size trade-off.
 *
 * The signature is STBIW_ZLIB_COMPRESS's, which has no const. */
unsigned char *render_zlib_compress(unsigned char *data, int data_len, int *out_len,
                                    int quality);

/* The most bytes render_zlib_compress can produce for len input bytes
 * (the buffer it allocates), or 0 when that does not fit in size_t. Any
 * stream it returns is also at most len + 5 * ceil(len / 65535) + 6
 * bytes, since a block that does not compress is stored as it is. */
size_t render_zlib_bound(size_t len);

#endif
