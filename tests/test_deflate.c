/* test_deflate.c — tests of src/render/deflate.c, attn's zlib compressor.
 *
 * Every stream is decoded twice and compared with its input byte for
 * byte: by stb_image's zlib decoder (the code that reads attn's PNGs back
 * in test_render.c), and by a small decoder below that also checks what a
 * lenient decoder would let through: block types, symbols that do not
 * exist, match distances over 32 KiB, the zlib header and the Adler-32
 * trailer (against a byte-by-byte reference). Inputs: empty, tiny, 1 MB
 * all equal, 1 MB random, RGB runs, text, sizes around the 258-byte match
 * and 32 KiB / 64 KiB window and block limits, matches exactly 32768 bytes
 * back, and a PNG written by png_write_atomic and read back with stb_image.
 *
 * Usage: test_deflate [TMPDIR] (the PNG goes to a fresh directory there,
 * default /tmp, removed at the end).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <stb_image.h>

#include "check.h"
#include "deflate.h"
#include "render.h"

/* ---- helpers ------------------------------------------------------------ */

/* xorshift64*: reproducible pseudo-random bytes. */
static uint64_t rng_state = 0x9E3779B97F4A7C15u;

static uint32_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 0x2545F4914F6CDD1Du) >> 32);
}

static void fill_random(unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(rnd() >> 24);
}

static unsigned char *xmalloc(size_t n)
{
    unsigned char *p = malloc(n > 0 ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "test_deflate: out of memory\n");
        exit(1);
    }
    return p;
}

/* Adler-32 the slow, obvious way (RFC 1950 8.2), to check deflate.c's. */
static uint32_t adler32_reference(const unsigned char *p, size_t n)
{
    uint32_t a = 1, b = 0;
    for (size_t i = 0; i < n; i++) {
        a = (a + p[i]) % 65521;
        b = (b + a) % 65521;
    }
    return b << 16 | a;
}

/* ---- an independent, strict decoder ------------------------------------- */

/* What the decoder saw in a stream. */
typedef struct stream_stats {
    size_t fixed_blocks, stored_blocks, other_blocks;
    size_t literals, matches;
    unsigned max_dist;
} stream_stats;

typedef struct bit_reader {
    const unsigned char *p;
    size_t len, pos;    /* bytes, and the next byte to read */
    unsigned bit;       /* next bit of p[pos], 0 = least significant */
    int overrun;        /* read past the end */
} bit_reader;

static unsigned get_bit(bit_reader *r)
{
    if (r->pos >= r->len) {
        r->overrun = 1;
        return 0;
    }
    unsigned b = r->p[r->pos] >> r->bit & 1;
    if (++r->bit == 8) {
        r->bit = 0;
        r->pos++;
    }
    return b;
}

/* n bits as a number, first bit least significant (extra bits, LEN). */
static unsigned get_bits(bit_reader *r, unsigned n)
{
    unsigned v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= get_bit(r) << i;
    return v;
}

/* A fixed-code literal/length symbol (RFC 1951 3.2.6), read one bit at a
 * time, first bit most significant. 286 and 287 are returned as they are,
 * for the caller to reject. */
static unsigned get_fixed_symbol(bit_reader *r)
{
    unsigned c = 0;
    for (int i = 0; i < 7; i++)
        c = c << 1 | get_bit(r);
    if (c <= 0x17)
        return 256 + c;                         /* 7 bits: 256 - 279 */
    c = c << 1 | get_bit(r);
    if (c >= 0x30 && c <= 0xBF)
        return c - 0x30;                        /* 8 bits: 0 - 143 */
    if (c >= 0xC0 && c <= 0xC7)
        return 280 + (c - 0xC0);                /* 8 bits: 280 - 287 */
    c = c << 1 | get_bit(r);
    return 144 + (c - 0x190);                   /* 9 bits: 144 - 255 */
}

/* Decode the zlib stream z[0 .. zlen) into out[0 .. cap), which must come
 * out exactly cap bytes long, checking everything on the way. 0 when all
 * is well, else -1 with the reason on stderr. */
static int strict_inflate(const unsigned char *z, size_t zlen, unsigned char *out, size_t cap,
                          stream_stats *st)
{
    static const unsigned short len_base[29] = {3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19,
                                                23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115,
                                                131, 163, 195, 227, 258};
    static const unsigned char len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                                2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
    static const unsigned short dist_base[30] = {1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65,
                                                 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
                                                 2049, 3073, 4097, 6145, 8193, 12289, 16385,
                                                 24577};
    static const unsigned char dist_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6,
                                                 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12,
                                                 13, 13};
    memset(st, 0, sizeof *st);
    if (zlen < 6) {
        fprintf(stderr, "strict_inflate: %zu bytes, too short\n", zlen);
        return -1;
    }
    if (z[0] != 0x78 || (z[0] * 256 + z[1]) % 31 != 0 || (z[1] & 0x20) != 0) {
        fprintf(stderr, "strict_inflate: bad zlib header %02x %02x\n", z[0], z[1]);
        return -1;
    }
    bit_reader r = {z + 2, zlen - 6, 0, 0, 0};
    size_t n = 0;
    int final;
    do {
        final = (int)get_bit(&r);
        unsigned type = get_bits(&r, 2);
        if (type == 0) {
            st->stored_blocks++;
            if (r.bit != 0) {   /* skip to the byte boundary */
                r.bit = 0;
                r.pos++;
            }
            unsigned len = get_bits(&r, 16), nlen = get_bits(&r, 16);
            if (r.overrun || (len ^ 0xFFFF) != nlen || len > cap - n || len > r.len - r.pos) {
                fprintf(stderr, "strict_inflate: bad stored block\n");
                return -1;
            }
            memcpy(out + n, r.p + r.pos, len);
            r.pos += len;
            n += len;
        } else if (type == 1) {
            st->fixed_blocks++;
            for (;;) {
                unsigned sym = get_fixed_symbol(&r);
                if (r.overrun)
                    break;
                if (sym < 256) {
                    if (n >= cap) {
                        fprintf(stderr, "strict_inflate: output too long\n");
                        return -1;
                    }
                    out[n++] = (unsigned char)sym;
                    st->literals++;
                    continue;
                }
                if (sym == 256)
                    break;
                if (sym > 285) {
                    fprintf(stderr, "strict_inflate: length symbol %u\n", sym);
                    return -1;
                }
                unsigned len = len_base[sym - 257] + get_bits(&r, len_extra[sym - 257]);
                unsigned dc = get_bits(&r, 5);
                /* 5-bit distance codes are sent most significant bit first */
                unsigned rev = 0;
                for (int i = 0; i < 5; i++)
                    rev = rev << 1 | (dc >> i & 1);
                if (rev > 29) {
                    fprintf(stderr, "strict_inflate: distance code %u\n", rev);
                    return -1;
                }
                unsigned dist = dist_base[rev] + get_bits(&r, dist_extra[rev]);
                if (len > 258 || dist > 32768 || dist > n || len > cap - n) {
                    fprintf(stderr, "strict_inflate: match %u back %u at %zu\n", len, dist, n);
                    return -1;
                }
                for (unsigned i = 0; i < len; i++, n++)
                    out[n] = out[n - dist];
                st->matches++;
                if (dist > st->max_dist)
                    st->max_dist = dist;
            }
        } else {
            st->other_blocks++;
            fprintf(stderr, "strict_inflate: block type %u\n", type);
            return -1;
        }
        if (r.overrun) {
            fprintf(stderr, "strict_inflate: stream cut short\n");
            return -1;
        }
    } while (!final);
    /* the deflate data must end within the last byte before the trailer */
    size_t used = r.pos + (r.bit != 0);
    if (used != r.len || n != cap) {
        fprintf(stderr, "strict_inflate: %zu of %zu bytes used, %zu of %zu out\n", used, r.len,
                n, cap);
        return -1;
    }
    const unsigned char *t = z + zlen - 4;
    uint32_t adler = (uint32_t)t[0] << 24 | (uint32_t)t[1] << 16 | (uint32_t)t[2] << 8 | t[3];
    if (adler != adler32_reference(out, n)) {
        fprintf(stderr, "strict_inflate: Adler-32 %08x, want %08x\n", (unsigned)adler,
                (unsigned)adler32_reference(out, n));
        return -1;
    }
    return 0;
}

/* ---- round trips -------------------------------------------------------- */

/* Compress data[0 .. n), decode it both ways, compare, check the size
 * bounds. Returns the compressed size (0 on failure), *st what the strict
 * decoder saw. */
static size_t round_trip(const char *what, const unsigned char *data, size_t n,
                         stream_stats *st)
{
    stream_stats unused;
    if (st == NULL)
        st = &unused;
    memset(st, 0, sizeof *st);
    int zlen = -1;
    unsigned char *z = render_zlib_compress((unsigned char *)data, (int)n, &zlen, 8);
    CHECK(z != NULL);
    if (z == NULL) {
        fprintf(stderr, "  (%s, %zu bytes)\n", what, n);
        return 0;
    }
    size_t zl = (size_t)zlen;
    /* never beyond the allocation bound, nor beyond storing every block */
    CHECK(zl <= render_zlib_bound(n));
    CHECK(zl <= n + 5 * (n / 65535 + 1) + 6);

    int failed_before = check_failed;
    int out_len = -1;
    char *out = stbi_zlib_decode_malloc((const char *)z, zlen, &out_len);
    CHECK(out != NULL);
    CHECK_INT(out_len, (long long)n);
    CHECK(out != NULL && out_len == (int)n && memcmp(out, data, n) == 0);
    free(out);

    unsigned char *mine = xmalloc(n);
    CHECK_INT(strict_inflate(z, zl, mine, n, st), 0);
    CHECK(memcmp(mine, data, n) == 0);
    free(mine);

    if (check_failed != failed_before)
        fprintf(stderr, "  (%s, %zu bytes, %zu compressed)\n", what, n, zl);
    free(z);
    return zl;
}

/* ---- the tests ---------------------------------------------------------- */

static void test_header_and_adler(void)
{
    /* Empty input: header, one final fixed block with only end-of-block
     * (10 bits, 2 bytes), Adler-32 of nothing = 1. */
    int zlen = -1;
    unsigned char *z = render_zlib_compress(NULL, 0, &zlen, 8);
    CHECK(z != NULL);
    CHECK_INT(zlen, 8);
    if (z != NULL && zlen == 8) {
        CHECK_INT(z[0], 0x78);                   /* deflate, 32 KiB window */
        CHECK_INT((z[0] * 256 + z[1]) % 31, 0);  /* FCHECK */
        CHECK_INT(z[1] & 0x20, 0);               /* no preset dictionary */
        CHECK_INT(z[2], 0x03);                   /* BFINAL 1, BTYPE 01, code 0000000 */
        CHECK_INT(z[3], 0x00);
        CHECK(memcmp(z + 4, "\0\0\0\1", 4) == 0);
    }
    free(z);
    stream_stats st;
    unsigned char empty[1] = {0};
    round_trip("empty", empty, 0, &st);
    CHECK_INT(st.fixed_blocks, 1);

    /* Adler-32 of "Wikipedia" is 0x11E60398 (the example of Wikipedia's
     * article, also by hand: a = 920 = 0x398, b = 4582 = 0x11E6). */
    const char *wiki = "Wikipedia";
    z = render_zlib_compress((unsigned char *)wiki, (int)strlen(wiki), &zlen, 8);
    CHECK(z != NULL && zlen > 6);
    if (z != NULL && zlen > 6)
        CHECK(memcmp(z + zlen - 4, "\x11\xE6\x03\x98", 4) == 0);
    free(z);
    CHECK_INT(adler32_reference((const unsigned char *)wiki, strlen(wiki)), 0x11E60398);
    round_trip("Wikipedia", (const unsigned char *)wiki, strlen(wiki), NULL);

    /* deflate.c sums 32 bytes abreast and reduces mod 65521 every 5536
     * bytes: all-0xFF inputs are the largest sums, around those sizes */
    static const size_t sizes[] = {31, 32, 33, 5535, 5536, 5537, 5552, 5553, 11072, 11073,
                                   100000};
    unsigned char *ff = xmalloc(100000);
    memset(ff, 0xFF, 100000);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        round_trip("all 0xFF", ff, sizes[i], NULL);
    free(ff);

    /* arguments it refuses */
    zlen = 12345;
    CHECK(render_zlib_compress((unsigned char *)wiki, -1, &zlen, 8) == NULL);
    CHECK(render_zlib_compress((unsigned char *)wiki, 9, NULL, 8) == NULL);
    CHECK(render_zlib_compress(NULL, 9, &zlen, 8) == NULL);
    CHECK_INT(zlen, 12345);
    CHECK(render_zlib_bound(0) >= 8);
    CHECK(render_zlib_bound((size_t)-1) == 0);
    CHECK(render_zlib_bound((size_t)-1 / 9) == 0);
    CHECK(render_zlib_bound(1000000) >= 1000000 / 8 * 9);
}

static void test_tiny(void)
{
    unsigned char b[64];
    /* every single byte: 8- and 9-bit literal codes */
    for (unsigned v = 0; v < 256; v++) {
        b[0] = (unsigned char)v;
        round_trip("1 byte", b, 1, NULL);
    }
    /* lengths 0 … 64: runs, period 3, random */
    for (size_t n = 0; n <= sizeof b; n++) {
        memset(b, 'a', n);
        round_trip("run", b, n, NULL);
        for (size_t i = 0; i < n; i++)
            b[i] = (unsigned char)("abc"[i % 3]);
        round_trip("abc", b, n, NULL);
        fill_random(b, n);
        round_trip("random", b, n, NULL);
    }
}

static void test_large(void)
{
    const size_t n = 1 << 20;
    unsigned char *d = xmalloc(n);
    stream_stats st;

    /* all equal: 258-byte matches 1 byte back, 13 bits each */
    memset(d, 0, n);
    size_t zl = round_trip("1 MB of zeros", d, n, &st);
    CHECK(zl > 0 && zl < n / 100);
    CHECK_INT(st.stored_blocks, 0);
    memset(d, 0xFF, n);
    CHECK(round_trip("1 MB of 0xFF", d, n, NULL) < n / 100);

    /* random: nothing to gain, so every block is stored, 5 bytes a block
     * (16 full blocks: a short last block would take the fixed codes,
     * 9 bits a byte at worst being less than 5 bytes of block header) */
    const size_t rn = 16 * 65535;
    fill_random(d, rn);
    zl = round_trip("1 MB random", d, rn, &st);
    CHECK_INT(zl, rn + 5 * 16 + 6);
    CHECK_INT(st.fixed_blocks, 0);
    CHECK_INT(st.stored_blocks, 16);

    /* RGB runs: random colours, each for 1 … 600 pixels (the rows of a
     * heatmap without the PNG filter) */
    for (size_t i = 0; i < n;) {
        unsigned char rgb[3] = {(unsigned char)rnd(), (unsigned char)rnd(),
                                (unsigned char)rnd()};
        size_t run = 1 + rnd() % 600;
        for (size_t k = 0; k < 3 * run && i < n; k++, i++)
            d[i] = rgb[k % 3];
    }
    zl = round_trip("RGB runs", d, n, &st);
    CHECK(zl > 0 && zl < n / 20);

    /* period 3 throughout */
    for (size_t i = 0; i < n; i++)
        d[i] = (unsigned char)(i % 3 * 70 + 20);
    CHECK(round_trip("period 3", d, n, NULL) < n / 100);

    /* text: random words from a small vocabulary */
    static const char *words[] = {"attention", "query", "key", "value", "softmax",
                                  "the", "of", "a", "positional", "encoding",
                                  "weights", "scaled", "dot", "product", "heads",
                                  "and", "is", "to", "sequence", "model"};
    size_t len = 0;
    while (len < n - 16) {
        const char *w = words[rnd() % (sizeof words / sizeof words[0])];
        size_t wl = strlen(w);
        memcpy(d + len, w, wl);
        len += wl;
        d[len++] = rnd() % 12 == 0 ? '\n' : ' ';
    }
    zl = round_trip("text", d, len, &st);
    CHECK(zl > 0 && zl < len / 2);

    /* blocks of each kind in turn: random, zeros, random, "abc"…, where a
     * stored block follows a fixed one that ended in the middle of a byte */
    fill_random(d, n);
    memset(d + 100000, 0, 100000);
    for (size_t i = 300000; i < 350001; i++)
        d[i] = (unsigned char)("abc"[i % 3]);
    zl = round_trip("mixed", d, 350001, &st);
    CHECK(st.stored_blocks >= 2);
    CHECK(st.fixed_blocks >= 2);
    free(d);
}

static void test_limits(void)
{
    const size_t n = 3 * 65536 + 10;
    unsigned char *d = xmalloc(n);
    stream_stats st;

    /* runs of one byte around the longest match (258), between random
     * bytes, so that matches of 257, 258, 259 … bytes must be split */
    static const size_t runs[] = {1, 2, 3, 4, 5, 6, 10, 11, 256, 257, 258, 259, 260, 261,
                                  515, 516, 517, 518, 774, 775};
    size_t len = 0;
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        fill_random(d + len, 7);
        len += 7;
        memset(d + len, (int)i, runs[i]);
        len += runs[i];
        round_trip("runs", d, len, NULL);
    }

    /* sizes around the window (32 KiB) and block (65535) limits, of
     * half-compressible data: random with a repeat of the row 300 back */
    fill_random(d, n);
    for (size_t i = 300; i < n; i++)
        if (i / 1000 % 2 == 0)
            d[i] = d[i - 300];
    static const size_t sizes[] = {32767, 32768, 32769, 65534, 65535, 65536, 65537,
                                   131069, 131070, 131071, 131072, 3 * 65536 + 10};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        round_trip("window and block sizes", d, sizes[i], NULL);

    /* Random bytes followed by the same bytes again, 32768 back: the
     * farthest DEFLATE allows. The second copy must come out as matches. */
    fill_random(d, 32768);
    memcpy(d + 32768, d, 32768);
    size_t zl = round_trip("repeat 32768 back", d, 65536, &st);
    CHECK_INT(st.max_dist, 32768);
    CHECK(zl > 0 && zl < 32768 + 32768 / 4);

    /* 32769 back is too far: no match may use it (strict_inflate rejects
     * such a distance), so the second copy cannot compress */
    fill_random(d, 32769);
    memcpy(d + 32769, d, 32769);
    zl = round_trip("repeat 32769 back", d, 65538, &st);
    CHECK(st.max_dist <= 32768);
    CHECK(zl > 65538);

    /* a long run across the window and block limits */
    memset(d, 'x', n);
    round_trip("long run", d, n, NULL);
    free(d);
}

/* A figure-like image (flat cells, a gradient, a patch of noise) written by
 * png_write_atomic, whose IDAT goes through render_zlib_compress, then
 * read back with stb_image: the same pixels. */
static void test_png(const char *base)
{
    char dir[4096], path[4200], err[256];
    snprintf(dir, sizeof dir, "%s/test_deflate.XXXXXX", base);
    if (mkdtemp(dir) == NULL) {
        fprintf(stderr, "test_deflate: cannot create a directory under %s: %s\n", base,
                strerror(errno));
        CHECK(0);
        return;
    }
    snprintf(path, sizeof path, "%s/figure.png", dir);

    attn_image img;
    CHECK_INT(image_alloc(&img, 409, 573, err, sizeof err), 0);
    if (img.rgb == NULL)
        return;
    for (int y = 0; y < img.h; y++) {
        for (int x = 0; x < img.w; x++) {
            unsigned char *p = img.rgb + ((size_t)y * (size_t)img.w + (size_t)x) * 3;
            if (y < 400 && x < 320) {           /* 8×8 flat cells */
                int cell = (y / 50) * 8 + x / 40;
                p[0] = (unsigned char)(cell * 37);
                p[1] = (unsigned char)(cell * 11 + 40);
                p[2] = (unsigned char)(200 - cell);
            } else if (y < 400) {               /* a noisy strip */
                p[0] = (unsigned char)rnd();
                p[1] = (unsigned char)rnd();
                p[2] = (unsigned char)rnd();
            } else {                            /* a gradient */
                p[0] = p[1] = (unsigned char)(x * 255 / img.w);
                p[2] = (unsigned char)(y - 400);
            }
        }
    }
    err[0] = '\0';
    CHECK_INT(png_write_atomic(path, &img, err, sizeof err), 0);
    if (err[0] != '\0')
        fprintf(stderr, "png_write_atomic: %s\n", err);
    int w = 0, h = 0, comp = 0;
    unsigned char *px = stbi_load(path, &w, &h, &comp, 3);
    CHECK(px != NULL);
    CHECK_INT(w, img.w);
    CHECK_INT(h, img.h);
    CHECK_INT(comp, 3);
    if (px != NULL && w == img.w && h == img.h)
        CHECK(memcmp(px, img.rgb, (size_t)w * (size_t)h * 3) == 0);
    stbi_image_free(px);
    image_free(&img);
    unlink(path);
    CHECK_INT(rmdir(dir), 0);
}

int main(int argc, char **argv)
{
    test_header_and_adler();
    test_tiny();
    test_large();
    test_limits();
    test_png(argc > 1 ? argv[1] : "/tmp");
    return check_summary("test_deflate");
}
