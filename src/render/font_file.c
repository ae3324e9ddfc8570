/* font_file.c — font files made safe for stb_truetype (font_file.h).
 *
 * stb_truetype trusts its input completely (it follows every offset it
 * reads), so a file is checked before stb_truetype sees it and each of its
 * glyphs before it is used:
 *   - check_font: the collection header and the face's offset (a .ttc),
 *     the table directory and every table lie inside the file, the fields
 *     stbtt_InitFont reads at fixed offsets exist, and the CFF structures
 *     it finds by offset lie inside the CFF table (check_cff);
 *   - check_face: the character map stb_truetype picked, the horizontal
 *     metrics and the glyph locations (loca) stay inside their tables;
 *   - font_face_glyph: a glyph index from the character map is below the
 *     glyph count and its TrueType outline can be read within its bounds
 *     (outline_ok); otherwise the character counts as missing.
 * What is left unchecked is the inside of one CFF charstring, which
 * stb_truetype reads through buffers bounded by its INDEX (a corrupt one
 * can still trip one of stb_truetype's asserts in debug builds). Kerning
 * is only applied within the embedded face (text.c), so the kern and GPOS
 * tables of files are never read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stb_truetype.h>

#include "font_file.h"
#include "canvas.h"

/* ---- checking font data ---------------------------------------------- */

static uint32_t be16(const unsigned char *p)
{
    return (uint32_t)p[0] << 8 | (uint32_t)p[1];
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* Where a table lies in the file; off == 0 when the font has none (as for
 * stb_truetype, which takes offset 0 to mean "absent"). */
typedef struct font_table {
    uint64_t off, len;
} font_table;

/* The table tagged tag of the font whose offset table starts at
 * data + start: the first record with that tag, as stb_truetype picks it.
 * The directory must have been checked to lie inside the data. */
static font_table find_table(const unsigned char *data, uint64_t start, const char *tag)
{
    font_table t = {0, 0};
    uint32_t n = be16(data + start + 4);
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *rec = data + start + 12 + 16 * (uint64_t)i;
        if (memcmp(rec, tag, 4) == 0) {
            t.off = be32(rec + 8);
            t.len = t.off == 0 ? 0 : be32(rec + 12);
            break;
        }
    }
    return t;
}

/* ---- CFF outlines -----------------------------------------------------
 *
 * stb_truetype reads the CFF table through a buffer it sizes at 512 MiB,
 * whatever the table's length: every INDEX, DICT, Private DICT, Subrs and
 * FDSelect it locates by offset is checked here to lie inside the table,
 * with the fields it would assert on valid. The charstrings themselves
 * are then read through buffers bounded by their INDEX. */

/* A CFF INDEX: count, offset size, (count + 1) offsets (1-based, from the
 * byte before the data), the data; at and end bound it in the table. */
typedef struct cff_index {
    uint64_t at, end, count;
    unsigned offsize;
} cff_index;

/* The n-byte big-endian number at p (an INDEX offset). */
static uint64_t cff_number(const unsigned char *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

/* The INDEX at t + at, which must lie inside t[len]. */
static int cff_read_index(const unsigned char *t, uint64_t len, uint64_t at, cff_index *ix)
{
    if (at + 2 > len)
        return -1;
    ix->at = at;
    ix->count = be16(t + at);
    ix->offsize = 0;
    ix->end = at + 2;
    if (ix->count == 0)
        return 0;
    if (at + 3 > len)
        return -1;
    ix->offsize = t[at + 2];
    if (ix->offsize < 1 || ix->offsize > 4)
        return -1;
    uint64_t data = at + 3 + (ix->count + 1) * ix->offsize;  /* offset 1 */
    if (data > len)
        return -1;
    uint64_t last = cff_number(t + at + 3 + ix->count * ix->offsize, ix->offsize);
    if (last < 1 || data + last - 1 > len)
        return -1;
    ix->end = data + last - 1;
    return 0;
}

/* Entry i (< count) of a checked INDEX: [*a, *b) in the table. */
static int cff_entry(const unsigned char *t, const cff_index *ix, uint64_t i,
                     uint64_t *a, uint64_t *b)
{
    const unsigned char *offs = t + ix->at + 3;
    uint64_t base = ix->at + 2 + (ix->count + 1) * ix->offsize;
    uint64_t s = cff_number(offs + i * ix->offsize, ix->offsize);
    uint64_t e = cff_number(offs + (i + 1) * ix->offsize, ix->offsize);
    if (s > e || base + e > ix->end)
        return -1;
    *a = base + s;
    *b = base + e;
    return 0;
}

/* The first n integer operands (as stb_truetype's uint32) of operator
 * key in the DICT t[a..b), into out (left alone when key is absent or
 * has fewer). -1 when the DICT has an operand stb_truetype asserts on
 * (bytes 31 and 255 anywhere, a real number where key wants integers). */
static int cff_dict_ints(const unsigned char *t, uint64_t a, uint64_t b, unsigned key,
                         int n, uint32_t *out)
{
    uint64_t at = a;
    int found = 0;
    while (at < b) {
        uint64_t start = at;
        int reals = 0;
        /* Operands: integers (1, 2, 3 or 5 bytes) and reals (nibbles up
         * to one of 0xF). */
        while (at < b && t[at] >= 28) {
            unsigned b0 = t[at];
            if (b0 == 31 || b0 == 255)
                return -1;
            if (b0 == 30) {
                reals = 1;
                for (at++; at < b;) {
                    unsigned v = t[at++];
                    if ((v & 0xF) == 0xF || (v >> 4) == 0xF)
                        break;
                }
            } else {
                at += b0 == 28 ? 3 : b0 == 29 ? 5 : b0 >= 247 ? 2 : 1;
            }
        }
        uint64_t end = at < b ? at : b;
        unsigned op = at < b ? t[at++] : 0;
        if (op == 12)
            op = 0x100 | (at < b ? t[at++] : 0);
        if (op != key || found)
            continue;
        /* The operator's integers, as stb_truetype decodes them. */
        found = 1;
        if (reals)
            return -1;
        for (int i = 0; i < n && start < end; i++) {
            unsigned b0 = t[start];
            uint64_t need = b0 == 28 ? 3 : b0 == 29 ? 5 : b0 >= 247 ? 2 : 1;
            if (start + need > end)
                return -1;
            const unsigned char *p = t + start;
            if (b0 <= 246 && b0 >= 32)
                out[i] = (uint32_t)((int32_t)b0 - 139);
            else if (b0 >= 247 && b0 <= 250)
                out[i] = (uint32_t)((int32_t)(b0 - 247) * 256 + p[1] + 108);
            else if (b0 >= 251)
                out[i] = (uint32_t)(-(int32_t)(b0 - 251) * 256 - p[1] - 108);
            else if (b0 == 28)
                out[i] = be16(p + 1);
            else
                out[i] = be32(p + 1);
            start += need;
        }
    }
    return 0;
}

/* The Private DICT named by the font DICT t[a..b) and its Subrs INDEX,
 * as stbtt__get_subrs finds them, inside the table t[len]. */
static int cff_check_private(const unsigned char *t, uint64_t len, uint64_t a, uint64_t b)
{
    uint32_t loc[2] = {0, 0};   /* size, offset */
    if (cff_dict_ints(t, a, b, 18, 2, loc) < 0)
        return -1;
    if (loc[0] == 0 || loc[1] == 0)
        return 0;
    if ((uint64_t)loc[1] + loc[0] > len)
        return -1;
    uint32_t subrs = 0;
    if (cff_dict_ints(t, loc[1], (uint64_t)loc[1] + loc[0], 19, 1, &subrs) < 0)
        return -1;
    if (subrs == 0)
        return 0;
    cff_index ix;
    return cff_read_index(t, len, (uint32_t)(loc[1] + subrs), &ix);
}

/* The CFF table t[len] of a font with nglyphs glyphs: header, the Name,
 * Top DICT, String and Global Subr INDEXes, the Top DICT's CharStrings
 * (one per glyph at least), Private DICT and Subrs, and for CID fonts the
 * FDArray's DICTs and an FDSelect that gives every glyph one of them. */
static int check_cff(const unsigned char *t, uint64_t len, uint64_t nglyphs)
{
    cff_index name, top, strings, gsubrs, chars;
    uint64_t a, b;
    if (len < 4 || cff_read_index(t, len, t[2], &name) < 0 ||
        cff_read_index(t, len, name.end, &top) < 0 || top.count < 1 ||
        cff_read_index(t, len, top.end, &strings) < 0 ||
        cff_read_index(t, len, strings.end, &gsubrs) < 0 ||
        cff_entry(t, &top, 0, &a, &b) < 0)
        return -1;
    uint32_t charstrings = 0, cstype = 2, fdarray = 0, fdselect = 0;
    if (cff_dict_ints(t, a, b, 17, 1, &charstrings) < 0 ||
        cff_dict_ints(t, a, b, 0x100 | 6, 1, &cstype) < 0 ||
        cff_dict_ints(t, a, b, 0x100 | 36, 1, &fdarray) < 0 ||
        cff_dict_ints(t, a, b, 0x100 | 37, 1, &fdselect) < 0 ||
        cff_check_private(t, len, a, b) < 0)
        return -1;
    if (cstype != 2 || charstrings == 0 ||
        cff_read_index(t, len, charstrings, &chars) < 0 || chars.count < nglyphs)
        return -1;
    if (fdarray == 0)
        return 0;
    /* CID-keyed: each glyph's Subrs come from its font DICT. */
    cff_index fds;
    if (fdselect == 0 || cff_read_index(t, len, fdarray, &fds) < 0 || fds.count == 0)
        return -1;
    for (uint64_t i = 0; i < fds.count; i++)
        if (cff_entry(t, &fds, i, &a, &b) < 0 || cff_check_private(t, len, a, b) < 0)
            return -1;
    uint64_t at = fdselect;
    if (at >= len)
        return -1;
    if (t[at] == 0) {           /* format 0: one font DICT number per glyph */
        if (at + 1 + nglyphs > len)
            return -1;
        for (uint64_t g = 0; g < nglyphs; g++)
            if (t[at + 1 + g] >= fds.count)
                return -1;
        return 0;
    }
    /* Format 3: ranges (first glyph, font DICT) from glyph 0 up, then the
     * sentinel; they must cover every glyph. */
    if (t[at] != 3 || at + 5 > len)
        return -1;
    uint64_t nranges = be16(t + at + 1);
    if (nranges == 0 || at + 5 + 3 * nranges > len || be16(t + at + 3) != 0)
        return -1;
    uint64_t first = 0;
    for (uint64_t i = 0; i < nranges; i++) {
        const unsigned char *r = t + at + 3 + 3 * i;     /* first, fd, next first */
        uint64_t next = be16(r + 3);
        if (r[2] >= fds.count || next <= first)
            return -1;
        first = next;
    }
    return first >= nglyphs ? 0 : -1;
}

/* What stbtt_InitFont reads of data[len] without checking: the collection
 * header, the offset table and table directory, every table's extent, and
 * the fixed-offset fields of head, hhea, maxp and cmap. Sets *start to the
 * offset of face index (0 for a plain font). 0 when all is in bounds,
 * else -1. */
static int check_font(const unsigned char *data, size_t len, int index, int *start)
{
    /* A plain font starts with its 12-byte offset table; a collection
     * ("ttcf") with tag, version, count and then each font's offset.
     * stb_truetype reads 32-bit fields by shifting bytes as int, which is
     * undefined from 0x80000000 on: such collection fields are rejected
     * (the offsets below are bounded by the file size, under 2^26). */
    if (len < 12 || index < 0 || index > 0xFFFF)
        return -1;
    if (memcmp(data, "ttcf", 4) == 0) {
        uint64_t at = 12 + 4 * (uint64_t)index;     /* the face's offset */
        if (len < 16 || at + 4 > len || data[4] >= 0x80 || data[8] >= 0x80 ||
            data[at] >= 0x80)
            return -1;
    }
    int off = stbtt_GetFontOffsetForIndex(data, index);
    if (off < 0 || (uint64_t)off + 12 > len)
        return -1;
    uint64_t s = (uint64_t)off;
    uint32_t ntables = be16(data + s + 4);
    if (s + 12 + 16 * (uint64_t)ntables > len)
        return -1;
    for (uint32_t i = 0; i < ntables; i++) {
        const unsigned char *rec = data + s + 12 + 16 * (uint64_t)i;
        if ((uint64_t)be32(rec + 8) + be32(rec + 12) > len)
            return -1;
    }
    /* Required tables, as long as the fields read at fixed offsets need
     * (head: indexToLocFormat at 50; hhea: numberOfHMetrics at 34; maxp:
     * numGlyphs at 4; cmap: version, count, then 8-byte records). */
    font_table head = find_table(data, s, "head"), hhea = find_table(data, s, "hhea");
    font_table maxp = find_table(data, s, "maxp"), cmap = find_table(data, s, "cmap");
    font_table hmtx = find_table(data, s, "hmtx");
    if (head.len < 54 || hhea.len < 36 || maxp.len < 6 || cmap.len < 4 || hmtx.len < 4)
        return -1;
    /* cmap's encoding records: (platform, encoding, subtable offset);
     * every offset inside cmap (stb_truetype reads them as above). */
    uint32_t nmaps = be16(data + cmap.off + 2);
    if (4 + 8 * (uint64_t)nmaps > cmap.len)
        return -1;
    for (uint32_t i = 0; i < nmaps; i++)
        if ((uint64_t)be32(data + cmap.off + 4 + 8 * (uint64_t)i + 4) + 2 > cmap.len)
            return -1;
    /* Outlines: TrueType (glyf + loca, checked by check_face) or CFF. */
    font_table glyf = find_table(data, s, "glyf"), loca = find_table(data, s, "loca");
    font_table cff = find_table(data, s, "CFF ");
    if (glyf.off != 0 ? loca.off == 0
                      : cff.off == 0 || check_cff(data + cff.off, cff.len, be16(data + maxp.off + 4)) < 0)
        return -1;
    *start = off;
    return 0;
}

/* The character map stb_truetype picked (info->index_map, inside cmap)
 * can be searched without reading outside cmap: its header and arrays fit,
 * format 4's binary-search parameters stay within its segments and its
 * glyph-array offsets within the table. Formats stb_truetype does not
 * handle (it asserts on them) are rejected. */
static int check_cmap(const unsigned char *data, uint64_t map, font_table cmap)
{
    uint64_t end = cmap.off + cmap.len;
    if (map < cmap.off || map + 2 > end)
        return -1;
    const unsigned char *p = data + map;
    uint64_t room = end - map;
    switch (be16(p)) {
    case 0:                     /* bytes: length, language, 256 glyph ids */
        return room >= 6 && be16(p + 2) <= room ? 0 : -1;
    case 6:                     /* trimmed: first code, count, glyph ids */
        return room >= 10 && 10 + 2 * (uint64_t)be16(p + 8) <= room ? 0 : -1;
    case 12:
    case 13: {                  /* groups of (start, end, glyph), 12 bytes */
        if (room < 16 || 16 + 12 * (uint64_t)be32(p + 12) > room)
            return -1;
        /* Each read as a 32-bit int shift: below 2^31 (see check_font). */
        uint64_t ngroups = be32(p + 12);
        for (uint64_t i = 0; i < 3 * ngroups; i++)
            if (p[16 + 4 * i] >= 0x80)
                return -1;
        return 0;
    }
    case 4:
        break;
    default:
        return -1;
    }
    /* Format 4: segCountX2, searchRange, entrySelector, rangeShift, then
     * endCode[seg], a pad, startCode[seg], idDelta[seg], idRangeOffset[seg]. */
    if (room < 14)
        return -1;
    uint64_t seg = be16(p + 6) / 2, range = be16(p + 8) / 2;
    uint64_t selector = be16(p + 10), shift = be16(p + 12) / 2;
    if (seg == 0 || 16 + 8 * seg > room)
        return -1;
    /* The search reads endCode[shift + sum of range >> k, k = 1..selector],
     * which stays below shift + max(range, 1). */
    if (selector > 16 || shift + (range > 0 ? range : 1) > seg)
        return -1;
    for (uint64_t i = 0; i < seg; i++) {
        uint64_t last = be16(p + 14 + 2 * i), first = be16(p + 16 + 2 * seg + 2 * i);
        uint64_t ro_at = map + 16 + 6 * seg + 2 * i;  /* idRangeOffset[i] */
        uint64_t ro = be16(data + ro_at);
        /* A nonzero idRangeOffset points (from itself) at the glyph ids of
         * first..last. */
        if (ro != 0 && first <= last && ro_at + ro + 2 * (last - first) + 2 > end)
            return -1;
    }
    return 0;
}

/* After stbtt_InitFont: the character map, the glyph count, the
 * horizontal metrics of every glyph and (TrueType outlines) the glyph
 * locations lie inside their tables; sets face->glyf_len. 0 when all is
 * well, else -1. */
static int check_face(font_face *face)
{
    const stbtt_fontinfo *info = &face->info;
    const unsigned char *data = info->data;
    uint64_t s = (uint64_t)info->fontstart;
    font_table cmap = find_table(data, s, "cmap"), hmtx = find_table(data, s, "hmtx");
    if (check_cmap(data, (uint64_t)info->index_map, cmap) < 0)
        return -1;
    uint64_t nglyphs = (uint64_t)info->numGlyphs;
    if (nglyphs == 0)
        return -1;
    /* hmtx: numberOfHMetrics (advance, lsb) pairs, then an lsb for each
     * further glyph; at least one pair (glyphs past the pairs take the
     * last pair's advance). */
    uint64_t nlong = be16(data + info->hhea + 34);
    uint64_t need = nlong >= nglyphs ? 4 * nglyphs : 4 * nlong + 2 * (nglyphs - nlong);
    if (nlong == 0 || need > hmtx.len)
        return -1;
    if (info->cff.size != 0)
        return 0;               /* CFF outlines: no loca */
    /* loca: nglyphs + 1 ascending offsets into glyf (16-bit halves or
     * 32-bit bytes); a glyph that is not empty has at least its 10-byte
     * header (contour count and bounding box). */
    font_table glyf = find_table(data, s, "glyf"), loca = find_table(data, s, "loca");
    int format = info->indexToLocFormat;
    if (format != 0 && format != 1)
        return -1;
    uint64_t entry = format == 0 ? 2 : 4;
    if ((nglyphs + 1) * entry > loca.len)
        return -1;
    uint64_t prev = 0;
    for (uint64_t g = 0; g <= nglyphs; g++) {
        const unsigned char *e = data + loca.off + g * entry;
        uint64_t at = format == 0 ? 2 * (uint64_t)be16(e) : be32(e);
        if (at > glyf.len || at < prev || (g > 0 && at != prev && at - prev < 10))
            return -1;
        prev = at;
    }
    face->glyf_len = (uint32_t)glyf.len;
    return 0;
}

int font_face_init(font_face *face, const unsigned char *data, size_t len, int index)
{
    int start;
    if (len > FONT_MAX_FILE_BYTES || check_font(data, len, index, &start) < 0)
        return -1;
    memset(face, 0, sizeof *face);
    if (!stbtt_InitFont(&face->info, data, start) || check_face(face) < 0)
        return -1;
    return 0;
}

/* ---- reading font files ---------------------------------------------- */

/* The whole of the regular file at path into a new buffer *out (*outlen
 * bytes, at most FONT_MAX_FILE_BYTES). Files shorter than a font's offset
 * table are "not a TrueType font". */
static int read_font_file(const char *path, unsigned char **out, size_t *outlen,
                          char *err, size_t errlen)
{
    *out = NULL;
    *outlen = 0;
    /* O_NONBLOCK: a FIFO must not hang us; it is then rejected below. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return render_error(err, errlen, "%s: cannot read: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return render_error(err, errlen, "%s: cannot read: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return render_error(err, errlen, "%s: cannot read: %s", path,
                            S_ISDIR(st.st_mode) ? strerror(EISDIR) : "not a regular file");
    }
    if (st.st_size > (off_t)FONT_MAX_FILE_BYTES) {
        close(fd);
        return render_error(err, errlen, "%s: cannot read: larger than %zu MiB", path,
                            FONT_MAX_FILE_BYTES >> 20);
    }
    if (st.st_size < 12) {
        close(fd);
        return render_error(err, errlen, "%s: not a TrueType font", path);
    }
    size_t size = (size_t)st.st_size;
    unsigned char *data = malloc(size);
    if (data == NULL) {
        close(fd);
        return render_error(err, errlen, "%s: cannot read: out of memory for %zu bytes",
                            path, size);
    }
    size_t got = 0;
    while (got < size) {
        ssize_t n = read(fd, data + got, size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            /* An error, or the file shrank while we read it. */
            const char *why = n < 0 ? strerror(errno) : "file changed while reading";
            render_error(err, errlen, "%s: cannot read: %s", path, why);
            free(data);
            close(fd);
            return -1;
        }
        got += (size_t)n;
    }
    close(fd);
    *out = data;
    *outlen = size;
    return 0;
}

int font_face_load(font_face *face, const char *path, int index, char *err, size_t errlen)
{
    unsigned char *data;
    size_t len;
    if (read_font_file(path, &data, &len, err, errlen) < 0)
        return -1;
    if (font_face_init(face, data, len, index) < 0) {
        free(data);
        return render_error(err, errlen, "%s: not a TrueType font", path);
    }
    face->data = data;
    return 0;
}

void font_face_free(font_face *face)
{
    free(face->data);
    face->data = NULL;
}

/* Limits for composite glyphs: nesting depth (fonts declare a few at
 * most) and glyphs visited per outline, against cycles and blow-ups. */
#define FONT_MAX_GLYPH_DEPTH 8
#define FONT_MAX_GLYPH_PARTS 256

/* Byte range [*start, *end) of glyph's TrueType outline in the file; empty
 * when the glyph has none. The glyph index and loca are checked. */
static void glyph_extent(const font_face *face, int glyph, uint64_t *start, uint64_t *end)
{
    const stbtt_fontinfo *info = &face->info;
    const unsigned char *e;
    uint64_t a, b;
    if (info->indexToLocFormat == 0) {
        e = info->data + info->loca + 2 * (uint64_t)glyph;
        a = 2 * (uint64_t)be16(e), b = 2 * (uint64_t)be16(e + 2);
    } else {
        e = info->data + info->loca + 4 * (uint64_t)glyph;
        a = be32(e), b = be32(e + 4);
    }
    *start = (uint64_t)info->glyf + a;
    *end = (uint64_t)info->glyf + b;
}

/* Whether stb_truetype can read glyph's TrueType outline without leaving
 * it: what stbtt__GetGlyphShapeTT reads, walked with bounds. A simple
 * glyph: contour end points (strictly increasing), instructions, then
 * per point a flag byte (or a repeat count) and 0-2 bytes per coordinate;
 * stb_truetype reads one point past the end when the last contour is a
 * single off-curve point. A composite glyph: component records, each with
 * x/y offsets (stb_truetype cannot do "matching points") and a glyph that
 * must itself pass, nested and counted against the limits above. */
/* A simple glyph's outline, glyf (size bytes, contours > 0 of them): the
 * end points increasing, the flags and coordinates inside, and the last
 * contour not a lone off-curve point. */
static int simple_outline_ok(const unsigned char *glyf, uint64_t size, int contours)
{
    uint64_t nc = (uint64_t)contours;
    uint64_t at = 10 + 2 * nc + 2;          /* past endPts, instruction length */
    if (at > size)
        return 0;
    uint64_t last_start = 0, prev_end = 0;
    for (uint64_t i = 0; i < nc; i++) {
        uint64_t e = be16(glyf + 10 + 2 * i);
        if (i > 0 && e <= prev_end)
            return 0;
        if (i + 1 == nc)
            last_start = i > 0 ? prev_end + 1 : 0;
        prev_end = e;
    }
    uint64_t npoints = prev_end + 1;
    at += be16(glyf + 10 + 2 * nc);         /* the instructions */
    uint64_t coords = 0;
    unsigned flags = 0, repeat = 0;
    for (uint64_t i = 0; i < npoints; i++) {
        if (repeat == 0) {
            if (at >= size)
                return 0;
            flags = glyf[at++];
            if (flags & 8) {
                if (at >= size)
                    return 0;
                repeat = glyf[at++];
            }
        } else {
            repeat--;
        }
        /* x: 1 byte when short, else 2 unless "same"; y likewise */
        coords += (flags & 2) ? 1 : (flags & 16) ? 0 : 2;
        coords += (flags & 4) ? 1 : (flags & 32) ? 0 : 2;
        if (i == last_start && last_start + 1 == npoints && !(flags & 1))
            return 0;
    }
    return at + coords <= size;
}

static int outline_ok(const font_face *face, int glyph, int depth, int *parts)
{
    if (glyph < 0 || glyph >= face->info.numGlyphs || depth > FONT_MAX_GLYPH_DEPTH ||
        ++*parts > FONT_MAX_GLYPH_PARTS)
        return 0;
    uint64_t g, end;
    glyph_extent(face, glyph, &g, &end);
    if (g == end)
        return 1;               /* no outline (a space) */
    const unsigned char *d = face->info.data;
    uint64_t size = end - g;    /* >= 10: see check_face */
    int contours = (int16_t)be16(d + g);
    if (contours > 0)
        return simple_outline_ok(d + g, size, contours);
    if (contours == 0)
        return 1;
    /* Composite: flags, glyph, offsets (bytes or words), then a scale,
     * an x and y scale or a 2x2 matrix; bit 5 says more follow. */
    uint64_t at = 10;
    for (unsigned more = 1; more;) {
        if (at + 4 > size)
            return 0;
        unsigned flags = be16(d + g + at), part = be16(d + g + at + 2);
        if (!(flags & 2))
            return 0;
        at += 4 + ((flags & 1) ? 4 : 2);
        at += (flags & 8) ? 2 : (flags & 64) ? 4 : (flags & 128) ? 8 : 0;
        if (at > size || !outline_ok(face, (int)part, depth + 1, parts))
            return 0;
        more = flags & 32;
    }
    return 1;
}

int font_face_glyph(const font_face *face, uint32_t cp)
{
    int g = stbtt_FindGlyphIndex(&face->info, (int)cp);
    if (g <= 0 || g >= face->info.numGlyphs)
        return 0;
    int parts = 0;
    if (face->data != NULL && face->glyf_len != 0 && !outline_ok(face, g, 0, &parts))
        return 0;
    return g;
}
