/* deflate.c — a small, fast zlib/DEFLATE compressor (RFC 1950, RFC 1951).
 *
 * What a PNG writer hands us: filtered scanlines, long runs of zero bytes
 * (flat colour after the Sub or Up filter) and rows that repeat the row
 * above. Such data compresses well with the simplest DEFLATE there is:
 *
 *   - LZ77, greedy: at each position, look up the last earlier position
 *     whose next 4 bytes hashed to the same bucket (a table with a single
 *     position per bucket, no chains), check that those 4 bytes really are
 *     equal, extend the match as far as it goes (at most 258 bytes, at most
 *     32 KiB back) and take it. No lazy matching, no search for a longer
 *     match: speed over ratio.
 *   - The fixed Huffman codes of RFC 1951 3.2.6 (BTYPE = 01), so there are
 *     no code tables to count, build or send.
 *   - Blocks of at most 65535 input bytes; a block that comes out larger
 *     than its bytes stored as they are (BTYPE = 00) is rewritten stored,
 *     so incompressible data grows by 5 bytes per block at most.
 *   - The zlib wrapper: a 2-byte header and the Adler-32 of the input.
 *
 * The output buffer is allocated once, for the worst case (9 bits per input
 * byte while a fixed-code block is being tried), so the inner loop writes
 * without checking for room; render_zlib_bound explains the arithmetic.
 */
#include "deflate.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum {
    WINDOW_SIZE = 32768,    /* the farthest back a match may start (RFC 1951 2) */
    MIN_MATCH = 3,          /* the shortest match DEFLATE can code... */
    HASH_MATCH = 4,         /* ...but we find matches by hashing 4 bytes */
    MAX_MATCH = 258,        /* the longest match DEFLATE can code */
    HASH_BITS = 14,         /* 16384 buckets (more hardly helps) */
    BLOCK_SIZE = 65535,     /* input bytes per block: all a stored block holds */
    END_OF_BLOCK = 256,     /* literal/length symbol 256 ends a block */
};

/* ---- writing bits ------------------------------------------------------- */

/* DEFLATE packs its bits into bytes starting from the least significant
 * bit. Pending bits wait in a 64-bit accumulator, the oldest in the lowest
 * bits, and go out four whole bytes at a time. */
typedef struct bit_writer {
    unsigned char *out;     /* the output buffer, big enough by construction */
    size_t pos;             /* bytes written to out */
    uint64_t acc;           /* pending bits */
    unsigned count;         /* how many: < 32 between calls */
} bit_writer;

/* Append the n low bits of value (n <= 32, no higher bits set), first
 * bit first. */
static inline void put_bits(bit_writer *w, uint32_t value, unsigned n)
{
    w->acc |= (uint64_t)value << w->count;
    w->count += n;
    if (w->count >= 32) {
        unsigned char *p = w->out + w->pos;
        p[0] = (unsigned char)w->acc;
        p[1] = (unsigned char)(w->acc >> 8);
        p[2] = (unsigned char)(w->acc >> 16);
        p[3] = (unsigned char)(w->acc >> 24);
        w->pos += 4;
        w->acc >>= 32;
        w->count -= 32;
    }
}

/* Write out the pending bits, padding the last byte with zero bits: the
 * stream is then at a byte boundary. */
static void align_to_byte(bit_writer *w)
{
    while (w->count > 0) {
        w->out[w->pos++] = (unsigned char)w->acc;
        w->acc >>= 8;
        w->count = w->count > 8 ? w->count - 8 : 0;
    }
    w->acc = 0;
}

/* ---- the fixed Huffman codes (RFC 1951 3.2.5 and 3.2.6) ------------------ */

/* A code ready for put_bits: its bits in the order they are written and
 * their number. */
typedef struct code {
    uint16_t bits;
    uint8_t len;
} code;

/* Huffman codes are defined most significant bit first, but put_bits sends
 * the least significant bit first: reverse the n low bits of c. */
static unsigned reverse_bits(unsigned c, unsigned n)
{
    unsigned r = 0;
    for (unsigned i = 0; i < n; i++, c >>= 1)
        r = r << 1 | (c & 1);
    return r;
}

/* The fixed code of literal/length symbol s (0 … 287), RFC 1951 3.2.6:
 *     0 - 143   8 bits  00110000 …  10111111
 *   144 - 255   9 bits 110010000 … 111111111
 *   256 - 279   7 bits   0000000 …   0010111
 *   280 - 287   8 bits  11000000 …  11000111 */
static code fixed_code(unsigned s)
{
    unsigned c, n;
    if (s <= 143) {
        c = 0x30 + s;
        n = 8;
    } else if (s <= 255) {
        c = 0x190 + (s - 144);
        n = 9;
    } else if (s <= 279) {
        c = s - 256;
        n = 7;
    } else {
        c = 0xC0 + (s - 280);
        n = 8;
    }
    code k = {(uint16_t)reverse_bits(c, n), (uint8_t)n};
    return k;
}

/* Everything a block needs to code a literal or a match quickly. Built
 * for each call (a few thousand instructions), so nothing is shared
 * between threads. */
typedef struct tables {
    code literal[256];              /* byte b: the code of symbol b */
    code length[MAX_MATCH + 1];     /* length 3 … 258: symbol code, then extra bits
                                       (0 … 2 unused) */
    uint8_t dist_bits[30];          /* distance symbol c: its 5-bit code, reversed */
    uint16_t dist_base[30];         /* distance code c covers dist_base[c] … */
    uint8_t dist_extra[30];         /* …with this many extra bits */
    uint8_t dist_symbol_small[256]; /* the code of distance d, indexed by d - 1 < 256 */
} tables;

static void tables_init(tables *t)
{
    for (unsigned b = 0; b < 256; b++)
        t->literal[b] = fixed_code(b);

    /* Lengths: symbols 257 … 284 each cover a range of lengths starting at
     * 3, the first 8 one length each, then 4 symbols each with 1, 2, 3, 4
     * and 5 extra bits (the offset into the range, sent as a plain number
     * after the symbol's code). Length 258 has a symbol of its own, 285,
     * without extra bits (symbol 284's range stops at 257). */
    unsigned length = MIN_MATCH;
    for (unsigned i = 0; i < 28; i++) {
        unsigned extra = i < 8 ? 0 : i / 4 - 1;
        code sym = fixed_code(257 + i);
        for (unsigned k = 0; k < (1u << extra) && length < MAX_MATCH; k++, length++) {
            code c = {(uint16_t)(sym.bits | k << sym.len), (uint8_t)(sym.len + extra)};
            t->length[length] = c;
        }
    }
    t->length[MAX_MATCH] = fixed_code(285);

    /* Distances: codes 0 … 29 cover ranges starting at 1, codes 0 - 3 one
     * distance each, then 2 codes each with 1, 2, … 13 extra bits. */
    unsigned base = 1;
    for (unsigned c = 0; c < 30; c++) {
        unsigned extra = c < 4 ? 0 : c / 2 - 1;
        t->dist_bits[c] = (uint8_t)reverse_bits(c, 5);
        t->dist_base[c] = (uint16_t)base;
        t->dist_extra[c] = (uint8_t)extra;
        for (unsigned d = base; d < base + (1u << extra) && d <= 256; d++)
            t->dist_symbol_small[d - 1] = (uint8_t)c;
        base += 1u << extra;
    }
}

/* The distance code of distance d (1 … 32768). Below 257 a table lookup;
 * above, d - 1 has at least 9 significant bits, and its code depends on
 * the position of its top bit and on the bit below it only, which
 * (d - 1) >> 7 has 7 positions lower: 2 codes per bit position, so the
 * code of (d - 1) >> 7 plus 14. */
static inline unsigned dist_symbol(const tables *t, unsigned d)
{
    unsigned x = d - 1;
    return x < 256 ? t->dist_symbol_small[x] : t->dist_symbol_small[x >> 7] + 14u;
}

/* ---- finding matches ---------------------------------------------------- */

/* Multi-byte loads through memcpy: no unaligned or type-punned access. */
static inline uint32_t load32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline uint64_t load64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* The bucket of 4 bytes: Knuth's multiplicative hash, the top HASH_BITS
 * bits of their product with a large odd constant (2^32 / golden ratio).
 * The byte order of the load changes which bucket, never the output's
 * correctness. */
static inline uint32_t hash4(uint32_t four_bytes)
{
    return (four_bytes * 2654435761u) >> (32 - HASH_BITS);
}

/* How many leading bytes of a and b are equal, at most max: 8 at a time,
 * then one at a time. a may overlap b (a match longer than its distance
 * repeats itself, which is how DEFLATE codes runs). */
static inline size_t common_length(const unsigned char *a, const unsigned char *b, size_t max)
{
    size_t n = 0;
    while (n + 8 <= max && load64(a + n) == load64(b + n))
        n += 8;
    while (n < max && a[n] == b[n])
        n++;
    return n;
}

/* ---- blocks ------------------------------------------------------------- */

/* Code data[start .. end) as one fixed-Huffman block, the last one when
 * final. head[] maps hash buckets to the last position seen there; it and
 * the matches may reach back before start (up to WINDOW_SIZE), since the
 * window is over the whole stream, not the block. */
static void fixed_block(bit_writer *w, const tables *t, uint32_t *head,
                        const unsigned char *data, size_t start, size_t end, int final)
{
    put_bits(w, final ? 1u : 0u, 1);    /* BFINAL */
    put_bits(w, 1, 2);                  /* BTYPE = 01: fixed Huffman codes */

    size_t i = start;
    /* positions with 4 bytes left in the block: look for a match */
    while (end - i >= HASH_MATCH) {
        uint32_t four = load32(data + i);
        uint32_t h = hash4(four);
        /* head[] starts all zero: a bucket not yet used points at position
         * 0, a candidate like any other, and the checks below reject it
         * unless data there really matches */
        size_t cand = head[h];
        head[h] = (uint32_t)i;
        if (cand < i && i - cand <= WINDOW_SIZE && load32(data + cand) == four) {
            size_t max = end - i < MAX_MATCH ? end - i : MAX_MATCH;
            size_t len = HASH_MATCH + common_length(data + cand + HASH_MATCH,
                                                    data + i + HASH_MATCH,
                                                    max - HASH_MATCH);
            unsigned dist = (unsigned)(i - cand);
            unsigned dc = dist_symbol(t, dist);
            /* length code and extra bits (<= 8 + 5), distance code (5 bits,
             * all codes 5 bits long, reversed) and extra bits (<= 13):
             * at most 31 bits, one put_bits */
            code lc = t->length[len];
            uint32_t bits = lc.bits;
            unsigned nbits = lc.len;
            bits |= (uint32_t)t->dist_bits[dc] << nbits;
            nbits += 5;
            bits |= (uint32_t)(dist - t->dist_base[dc]) << nbits;
            nbits += t->dist_extra[dc];
            put_bits(w, bits, nbits);
            i += len;
            /* Remember the match's last 3 positions too (not every one:
             * that would be slower): the rest of a run of equal bytes, or
             * of equal RGB pixels, then finds a match 1 to 3 bytes back,
             * whose distance codes have no extra bits. */
            for (size_t k = i - 3; k < i && end - k >= HASH_MATCH; k++)
                head[hash4(load32(data + k))] = (uint32_t)k;
        } else {
            code c = t->literal[data[i]];
            put_bits(w, c.bits, c.len);
            i++;
        }
    }
    /* the last bytes, too few to start a match */
    for (; i < end; i++) {
        code c = t->literal[data[i]];
        put_bits(w, c.bits, c.len);
    }
    code eob = fixed_code(END_OF_BLOCK);
    put_bits(w, eob.bits, eob.len);
}

/* data[start .. end) as a stored block (BTYPE = 00): byte-aligned LEN and
 * its complement NLEN, 2 bytes each, least significant first, then the
 * bytes themselves. end - start <= 65535. */
static void stored_block(bit_writer *w, const unsigned char *data, size_t start, size_t end,
                         int final)
{
    size_t len = end - start;
    put_bits(w, final ? 1u : 0u, 1);    /* BFINAL */
    put_bits(w, 0, 2);                  /* BTYPE = 00: stored */
    align_to_byte(w);
    unsigned char *p = w->out + w->pos;
    p[0] = (unsigned char)(len & 0xFF);
    p[1] = (unsigned char)(len >> 8);
    p[2] = (unsigned char)(~len & 0xFF);
    p[3] = (unsigned char)((~len >> 8) & 0xFF);
    if (len > 0)
        memcpy(p + 4, data + start, len);
    w->pos += 4 + len;
}

/* ---- zlib --------------------------------------------------------------- */

/* Adler-32 (RFC 1950 8.2): a = 1 + the sum of the bytes, b = the sum of
 * the successive values of a, both mod 65521.
 *
 * Byte by byte that is a += p[i], b += a: a chain of dependent additions,
 * a few instructions a byte. Over N bytes it amounts to
 *   a += sum p[i],   b += N a + sum (N - i) p[i],
 * which we compute 32 bytes abreast, in a form compilers turn into SIMD
 * additions (about 1 instruction a byte): with i = 32 j + k (group j,
 * column k),
 *   col[k] = sum over j of p[32 j + k]                (the column sums)
 *   run[k] = sum over m of (col[k] after group m)     (their running sums)
 *   sum (N - i) p[i] = 32 sum run[k] - sum k col[k].
 * Unsigned arithmetic wraps, so only the end result must fit in 32 bits:
 * b < 65521 + N 65520 + 255 N (N + 1) / 2 < 2^32 holds up to N = 5552,
 * whence chunks of 5536 = 32 * 173 bytes, each followed by the slow
 * modulo. */
static uint32_t adler32(const unsigned char *p, size_t n)
{
    enum { CHUNK = 5536, ABREAST = 32 };
    uint32_t a = 1, b = 0;
    while (n > 0) {
        size_t chunk = n < CHUNK ? n : CHUNK;
        size_t groups = chunk / ABREAST;
        n -= chunk;
        if (groups > 0) {
            uint32_t col[ABREAST] = {0}, run[ABREAST] = {0};
            for (size_t j = 0; j < groups; j++, p += ABREAST) {
                for (unsigned k = 0; k < ABREAST; k++) {
                    col[k] += p[k];
                    run[k] += col[k];
                }
            }
            uint32_t sum = 0, runs = 0, weighted = 0;
            for (unsigned k = 0; k < ABREAST; k++) {
                sum += col[k];
                runs += run[k];
                weighted += k * col[k];
            }
            b += (uint32_t)(groups * ABREAST) * a + ABREAST * runs - weighted;
            a += sum;
        }
        /* the last bytes of the input, fewer than 32, one at a time */
        for (chunk %= ABREAST; chunk > 0; chunk--, p++) {
            a += *p;
            b += a;
        }
        a %= 65521;
        b %= 65521;
    }
    return b << 16 | a;
}

size_t render_zlib_bound(size_t len)
{
    /* While a block of n bytes is tried with the fixed codes it takes at
     * most 3 + 9 n + 7 bits: block header, 9 bits a byte at worst (a
     * literal takes 8 or 9 bits; a match of n >= 4 bytes at most
     * 8 + 5 + 5 + 13 = 31 <= 9 n bits, one of 3 bytes at most
     * 7 + 5 + 13 = 25 <= 27), end-of-block code. A block
     * that is kept takes no more than that, since it is rewritten stored
     * only when that is shorter. So: 2 bytes of zlib header, at most
     * 9 len + 10 blocks bits, 4 bytes of Adler-32. */
    size_t blocks = len / BLOCK_SIZE + 1;
    if (len > (SIZE_MAX - 64) / 9 || blocks > (SIZE_MAX - 64 - 9 * len) / 10)
        return 0;
    size_t bits = 9 * len + 10 * blocks;
    return 2 + (bits + 7) / 8 + 4;
}

unsigned char *render_zlib_compress(unsigned char *data, int data_len, int *out_len,
                                    int quality)
{
    (void)quality;  /* one trade-off for all: see the top of this file */
    if (data_len < 0 || (data == NULL && data_len > 0) || out_len == NULL)
        return NULL;
    size_t n = (size_t)data_len;
    size_t cap = render_zlib_bound(n);
    if (cap == 0)
        return NULL;
    unsigned char *out = malloc(cap);
    /* the most recent position of each bucket, all 0 at first */
    uint32_t *head = calloc((size_t)1 << HASH_BITS, sizeof *head);
    tables *t = malloc(sizeof *t);
    if (out == NULL || head == NULL || t == NULL) {
        free(out);
        free(head);
        free(t);
        return NULL;
    }
    tables_init(t);

    /* zlib header (RFC 1950 2.2): CMF = 0x78, deflate (CM = 8) with a
     * 32 KiB window (CINFO = 7); FLG = 0x01: FLEVEL 0 ("fastest"), no
     * preset dictionary, and FCHECK = 1 so that CMF * 256 + FLG = 30721
     * is a multiple of 31. */
    out[0] = 0x78;
    out[1] = 0x01;
    bit_writer w = {out, 2, 0, 0};

    /* Even empty input needs one block: a final fixed block with only the
     * end-of-block code, 10 bits. */
    size_t start = 0;
    do {
        size_t end = n - start > BLOCK_SIZE ? start + BLOCK_SIZE : n;
        int final = end == n;
        bit_writer before = w;
        fixed_block(&w, t, head, data, start, end, final);
        /* Stored would take 3 header bits, padding to the next byte, 4
         * bytes of LEN and NLEN, then the bytes: rewrite the block stored
         * when that is fewer bits than what the fixed codes took. */
        size_t fixed_bits = (w.pos - before.pos) * 8 + w.count - before.count;
        size_t stored_bits = 3 + (8 - (before.count + 3) % 8) % 8 + 32 + 8 * (end - start);
        if (stored_bits < fixed_bits) {
            w = before;
            stored_block(&w, data, start, end, final);
        }
        start = end;
    } while (start < n);
    align_to_byte(&w);

    /* zlib trailer: the Adler-32 of the uncompressed data, most significant
     * byte first (RFC 1950 2.2, 2.1). */
    uint32_t adler = adler32(data, n);
    out[w.pos++] = (unsigned char)(adler >> 24);
    out[w.pos++] = (unsigned char)(adler >> 16);
    out[w.pos++] = (unsigned char)(adler >> 8);
    out[w.pos++] = (unsigned char)adler;

    free(head);
    free(t);
    if (w.pos > INT_MAX) {
        free(out);
        return NULL;
    }
    /* give back what the worst case did not use; keep the buffer as it is
     * if realloc cannot */
    unsigned char *shrunk = realloc(out, w.pos);
    if (shrunk != NULL)
        out = shrunk;
    *out_len = (int)w.pos;
    return out;
}
