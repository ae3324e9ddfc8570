/* The implementations of the stb single-file libraries attn uses, compiled
 * in their own target with relaxed warnings (see meson.build). */

/* PNG data is compressed by attn's own zlib compressor (src/render/deflate.c,
 * in the core library): many times faster than stb's, about as small. The
 * prototype is repeated here because this target does not see src/render;
 * it must match deflate.h's. This library thus needs a symbol of the core
 * library, which needs this one: meson links static libraries as a group
 * (-Wl,--start-group … --end-group), which resolves such a cycle. */
unsigned char *render_zlib_compress(unsigned char *data, int data_len, int *out_len,
                                    int quality);
#define STBIW_ZLIB_COMPRESS render_zlib_compress
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>

#define STB_TRUETYPE_IMPLEMENTATION
#include <stb_truetype.h>

#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#include <stb_image.h>
