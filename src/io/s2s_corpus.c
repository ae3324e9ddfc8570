/* s2s_corpus.c — sentence pairs from d2l's fra.txt or from JSON (see
 * s2s_corpus.h for both forms and where attn's reading differs from d2l's). */
#include "s2s_corpus.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "checked.h"
#include "json_in.h"
#include "i18n.h"

/* ---- preprocess_nmt --------------------------------------------------------- */

unsigned long s2s_lower(unsigned long c, unsigned long *second)
{
    *second = 0;
    if ((c >= 'A' && c <= 'Z') || (c >= 0xC0 && c <= 0xDE && c != 0xD7))
        return c + 0x20; /* ASCII and Latin-1: À … Þ but × */
    if (c == 0x130) {
        *second = 0x307; /* İ → i + COMBINING DOT ABOVE */
        return 'i';
    }
    if (c == 0x178)
        return 0xFF; /* Ÿ → ÿ */
    /* Latin Extended-A: upper case at even code points, lower case after
     * it, except 0x139 … 0x148 and 0x179 … 0x17E (odd ones upper); ı ĸ ŉ ſ
     * (0x131, 0x138, 0x149, 0x17F) have no pair */
    if ((c >= 0x100 && c <= 0x137 && c % 2 == 0 && c != 0x130) ||
        (c >= 0x139 && c <= 0x148 && c % 2 == 1) ||
        (c >= 0x14A && c <= 0x177 && c % 2 == 0) || (c >= 0x179 && c <= 0x17E && c % 2 == 1))
        return c + 1;
    return c;
}

/* The code point at s[0 … n) (n ≥ 1) in UTF-8, *used its bytes; −1 when
 * the bytes there are not one well-formed character (overlong forms,
 * surrogates and values above U+10FFFF included). */
static long utf8_at(const unsigned char *s, size_t n, size_t *used)
{
    unsigned long c;
    size_t k;
    if (s[0] < 0x80) {
        *used = 1;
        return s[0];
    }
    if (s[0] >= 0xC2 && s[0] <= 0xDF)
        k = 2, c = s[0] & 0x1Fu;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF)
        k = 3, c = s[0] & 0x0Fu;
    else if (s[0] >= 0xF0 && s[0] <= 0xF4)
        k = 4, c = s[0] & 0x07u;
    else
        return -1;
    if (n < k)
        return -1;
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return -1;
        c = (c << 6) | (s[i] & 0x3Fu);
    }
    if ((k == 3 && c < 0x800) || (k == 4 && c < 0x10000) || c > 0x10FFFF ||
        (c >= 0xD800 && c <= 0xDFFF))
        return -1;
    *used = k;
    return (long)c;
}

/* c in UTF-8 at out; the bytes written. */
static size_t utf8_put(char *out, unsigned long c)
{
    unsigned char *o = (unsigned char *)out;
    if (c < 0x80) {
        o[0] = (unsigned char)c;
        return 1;
    }
    if (c < 0x800) {
        o[0] = (unsigned char)(0xC0 | (c >> 6));
        o[1] = (unsigned char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        o[0] = (unsigned char)(0xE0 | (c >> 12));
        o[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (c & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | (c >> 18));
    o[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (c & 0x3F));
    return 4;
}

/* line[0 … len) into out (room for 2·len + 1 bytes), with flags
 * S2S_SENTENCE_LOWER and S2S_SENTENCE_PUNCT (see s2s_preprocess_line);
 * prev: the character before the line (0: none). 0, or the offset + 1 of
 * a byte that is not UTF-8 or is a NUL. */
static size_t transform(const char *line, size_t len, unsigned long prev, int flags, char *out,
                        size_t *out_len)
{
    const unsigned char *s = (const unsigned char *)line;
    size_t i = 0, o = 0;
    while (i < len) {
        size_t used;
        long c = s[i] ? utf8_at(s + i, len - i, &used) : -1;
        unsigned long lc = (unsigned long)c, second = 0;
        if (c < 0)
            return i + 1;
        /* U+202F and U+00A0 become spaces, then lower case */
        if ((flags & S2S_SENTENCE_PUNCT) && (c == 0x202F || c == 0xA0))
            lc = ' ';
        else if (flags & S2S_SENTENCE_LOWER)
            lc = s2s_lower((unsigned long)c, &second);
        /* a space before , . ! ? when the previous character is not one */
        if ((flags & S2S_SENTENCE_PUNCT) && (lc == ',' || lc == '.' || lc == '!' || lc == '?') &&
            prev && prev != ' ')
            out[o++] = ' ';
        o += utf8_put(out + o, lc);
        prev = lc;
        if (second) {
            o += utf8_put(out + o, second);
            prev = second;
        }
        i += used;
    }
    out[o] = '\0';
    *out_len = o;
    return 0;
}

size_t s2s_preprocess_line(const char *line, size_t len, int first, char *out,
                           size_t *out_len)
{
    return transform(line, len, first ? 0 : '\n', S2S_SENTENCE_LOWER | S2S_SENTENCE_PUNCT, out,
                     out_len);
}

char **s2s_sentence_tokens(const char *sentence, int flags, size_t *n, char *err, size_t errlen)
{
    size_t len = strlen(sentence), cap, k = 1, out_len, bad, j = 0;
    char **tok, *text;
    /* one block: at most len + 1 token pointers, then the text (2·len + 1) */
    if (size_add(len, 1, &cap) || size_mul(cap, sizeof *tok, &cap) ||
        size_add(cap, len, &cap) || size_add(cap, len + 1, &cap) || !(tok = malloc(cap))) {
        snprintf(err, errlen, _("out of memory for a sentence of %zu bytes"), len);
        return NULL;
    }
    text = (char *)(tok + len + 1);
    if ((bad = transform(sentence, len, 0, flags, text, &out_len)) != 0) {
        snprintf(err, errlen, _("byte %zu: not valid UTF-8"), bad);
        free(tok);
        return NULL;
    }
    tok[0] = text;
    for (size_t i = 0; i < out_len; i++)
        if (text[i] == ' ') {
            text[i] = '\0';
            tok[k++] = text + i + 1;
        }
    /* runs of spaces: keep the tokens that are not empty */
    for (size_t i = 0; i < k; i++)
        if (!(flags & S2S_SENTENCE_WORDS) || tok[i][0] != '\0')
            tok[j++] = tok[i];
    *n = j;
    return tok;
}

/* ---- tokenize_nmt -------------------------------------------------------------- */

/* Where a fra.txt reading is: its messages' file name, a scratch line. */
typedef struct fra_reader {
    const char *name;
    char *err;
    size_t errlen;
    char *buf;  /* a preprocessed line */
    size_t cap;
    s2s_builder b;
} fra_reader;

/* *buf with room for need bytes (*cap of them now). 0 or -1. */
static int grow_buffer(char **buf, size_t *cap, size_t need)
{
    char *nb;
    if (need <= *cap)
        return 0;
    if (!(nb = realloc(*buf, need)))
        return -1;
    *buf = nb;
    *cap = need;
    return 0;
}

/* Whether the line holds nothing but spaces, tabs and '\r'. */
static int blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return 0;
    return 1;
}

/* Whether s[0 … n) has a character other than a space (a token that is
 * not empty). */
static int has_word(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ')
            return 1;
    return 0;
}

static int fra_fail(fra_reader *rd, size_t lineno, const char *what)
{
    snprintf(rd->err, rd->errlen, _("%s: line %zu: %s"), rd->name, lineno, what);
    return -1;
}

/* The preprocessed line's source and target into the pairs. lineno counts
 * from 1 for messages. */
static int fra_pair(fra_reader *rd, const char *t, size_t n, size_t lineno)
{
    const char *tab = memchr(t, '\t', n), *end;
    size_t ns, nt;
    if (!tab)
        return fra_fail(rd, lineno, "no tab between the source and the target");
    /* a third field, and any after it, is dropped */
    end = memchr(tab + 1, '\t', n - (size_t)(tab + 1 - t));
    if (!end)
        end = t + n;
    if (!has_word(t, (size_t)(tab - t)))
        return fra_fail(rd, lineno, "the source (before the tab) is empty");
    if (!has_word(tab + 1, (size_t)(end - tab - 1)))
        return fra_fail(rd, lineno, "the target (after the tab) is empty");
    if (s2s_builder_split_d2l(&rd->b, S2S_SRC, t, (size_t)(tab - t), &ns) ||
        s2s_builder_split_d2l(&rd->b, S2S_TGT, tab + 1, (size_t)(end - tab - 1), &nt) ||
        s2s_builder_pair(&rd->b, NULL)) {
        snprintf(rd->err, rd->errlen, _("%s: out of memory at line %zu"), rd->name, lineno);
        return -1;
    }
    return 0;
}

/* One line (line[0 … n), from offset `at` of the file) preprocessed and
 * read. */
static int fra_line(fra_reader *rd, const char *line, size_t n, size_t at, size_t lineno)
{
    size_t need, len, bad;
    if (blank(line, n))
        return 0; /* an empty line (the last one, after the final '\n') */
    if (size_mul(n, 2, &need) || size_add(need, 1, &need) ||
        grow_buffer(&rd->buf, &rd->cap, need)) {
        snprintf(rd->err, rd->errlen, _("%s: out of memory at line %zu"), rd->name, lineno);
        return -1;
    }
    if ((bad = s2s_preprocess_line(line, n, at == 0, rd->buf, &len)) != 0) {
        snprintf(rd->err, rd->errlen, _("%s: line %zu, byte %zu: %s"), rd->name, lineno, bad,
                 line[bad - 1] ? _("not valid UTF-8") : _("a NUL byte"));
        return -1;
    }
    return fra_pair(rd, rd->buf, len, lineno);
}

int s2s_corpus_read_fra(s2s_corpus *c, const char *text, size_t len, const char *name,
                      size_t max_examples, char *err, size_t errlen)
{
    fra_reader rd;
    size_t at = 0, lineno = 0;
    memset(c, 0, sizeof *c);
    memset(&rd, 0, sizeof rd);
    rd.name = name;
    rd.err = err;
    rd.errlen = errlen;
    s2s_builder_init(&rd.b);
    /* lines 0 … max_examples of text.split('\n') (every line for 0) */
    while (at <= len && (max_examples == 0 || lineno <= max_examples)) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
        if (fra_line(&rd, text + at, n, at, lineno + 1))
            goto fail;
        at += n + 1;
        lineno++;
    }
    free(rd.buf);
    rd.buf = NULL;
    if (rd.b.n == 0) {
        snprintf(err, errlen, _("%s: no sentence pairs (expected lines of English<TAB>French)"),
                 name);
        goto fail;
    }
    if (s2s_builder_finish(&rd.b, &c->train)) {
        snprintf(err, errlen, _("%s: out of memory"), name);
        return -1;
    }
    return 0;
fail:
    free(rd.buf);
    s2s_builder_free(&rd.b);
    return -1;
}

/* ---- the JSON form ----------------------------------------------------------------- */

/* An array of [source, target] string pairs at node (path names it) into
 * b; `need` 1 when it must not be empty. */
static int json_pairs(s2s_builder *b, const cJSON *node, const char *path, int need,
                      const char *name, char *err, size_t errlen)
{
    const cJSON *pair;
    size_t i = 0;
    if (!node) {
        snprintf(err, errlen, _("%s: %s: missing (an array of [source, target] pairs)"), name, path);
        return -1;
    }
    if (!cJSON_IsArray(node)) {
        snprintf(err, errlen, _("%s: %s: expected an array of [source, target] pairs, got %s"),
                 name, path, json_type_name(node));
        return -1;
    }
    if (need && !node->child) {
        snprintf(err, errlen, _("%s: %s: empty: expected at least one pair"), name, path);
        return -1;
    }
    cJSON_ArrayForEach(pair, node)
    {
        int n = cJSON_IsArray(pair) ? cJSON_GetArraySize(pair) : -1;
        const cJSON *side = pair->child;
        if (n != 2) {
            char got[48];
            if (n < 0)
                snprintf(got, sizeof got, "%s", json_type_name(pair)); /* a JSON word */
            else
                snprintf(got, sizeof got,
                         i18n_plural("%d entry", "%d entries", (unsigned long)n), n);
            snprintf(err, errlen, _("%s: %s[%zu]: expected a pair [source, target], got %s"), name,
                     path, i, got);
            return -1;
        }
        for (int s = 0; s < 2; s++, side = side->next) {
            size_t ntok;
            if (!cJSON_IsString(side)) {
                snprintf(err, errlen, _("%s: %s[%zu][%d]: expected a string (a sentence), got %s"),
                         name, path, i, s, json_type_name(side));
                return -1;
            }
            if (s2s_builder_split_words(b, s, side->valuestring, strlen(side->valuestring),
                                            &ntok)) {
                snprintf(err, errlen, _("%s: out of memory at %s[%zu]"), name, path, i);
                return -1;
            }
            if (ntok == 0) {
                snprintf(err, errlen, _("%s: %s[%zu][%d]: an empty sentence"), name, path, i, s);
                return -1;
            }
        }
        if (s2s_builder_pair(b, NULL)) {
            snprintf(err, errlen, _("%s: out of memory at %s[%zu]"), name, path, i);
            return -1;
        }
        i++;
    }
    return 0;
}

/* The keys of obj (at path) must be among known (listed in `list`). */
static int json_keys(const cJSON *obj, const char *path, const char *const *known,
                     const char *list, const char *name, char *err, size_t errlen)
{
    const cJSON *k;
    cJSON_ArrayForEach(k, obj)
    {
        const char *const *w = known;
        while (*w && strcmp(*w, k->string) != 0)
            w++;
        if (!*w) {
            snprintf(err, errlen, _("%s: %s.%.64s: unknown key (known: %s)"), name, path, k->string,
                     list);
            return -1;
        }
    }
    return 0;
}

/* The pairs of the object obj at path into *p. */
static int json_part(s2s_pairs *p, const cJSON *obj, const char *path, int need,
                     const char *name, char *err, size_t errlen)
{
    char pp[64];
    s2s_builder b;
    snprintf(pp, sizeof pp, "%s.pairs", path);
    s2s_builder_init(&b);
    if (json_pairs(&b, cJSON_GetObjectItemCaseSensitive(obj, "pairs"), pp, need, name, err,
                   errlen)) {
        s2s_builder_free(&b);
        return -1;
    }
    if (s2s_builder_finish(&b, p)) {
        snprintf(err, errlen, _("%s: out of memory"), name);
        return -1;
    }
    return 0;
}

int s2s_corpus_is_pairs(const cJSON *root)
{
    return cJSON_IsObject(root) && cJSON_GetObjectItemCaseSensitive(root, "pairs") != NULL;
}

int s2s_corpus_from_json(s2s_corpus *c, const cJSON *root, const char *name, char *err,
                       size_t errlen)
{
    static const char *const top[] = {"pairs", "heldout", NULL}, *const part[] = {"pairs", NULL};
    const cJSON *ho;
    memset(c, 0, sizeof *c);
    if (!cJSON_IsObject(root)) {
        snprintf(err, errlen, _("%s: $: expected an object with \"pairs\", got %s"), name,
                 json_type_name(root));
        return -1;
    }
    if (json_keys(root, "$", top, "pairs, heldout", name, err, errlen) ||
        json_part(&c->train, root, "$", 1, name, err, errlen))
        return -1;
    ho = cJSON_GetObjectItemCaseSensitive(root, "heldout");
    if (ho && !cJSON_IsNull(ho)) {
        if (!cJSON_IsObject(ho)) {
            snprintf(err, errlen, _("%s: $.heldout: expected an object with \"pairs\", got %s"),
                     name, json_type_name(ho));
            goto fail;
        }
        if (json_keys(ho, "$.heldout", part, "pairs", name, err, errlen) ||
            json_part(&c->heldout, ho, "$.heldout", 0, name, err, errlen))
            goto fail;
    }
    return 0;
fail:
    s2s_corpus_free(c);
    return -1;
}

/* ---- files --------------------------------------------------------------------------- */

s2s_corpus_kind s2s_corpus_format(const char *bytes, size_t len)
{
    size_t i = 0;
    while (i < len && (bytes[i] == ' ' || bytes[i] == '\t' || bytes[i] == '\r' ||
                       bytes[i] == '\n'))
        i++;
    return i < len && bytes[i] == '{' ? S2S_CORPUS_JSON : S2S_CORPUS_TEXT;
}

/* The whole file at path ("-": stdin), NUL-terminated, *len bytes; NULL
 * with the message in err. */
static char *read_file(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    struct stat st;
    char *buf = NULL;
    size_t cap = 0, n = 0;
    if (!f) {
        snprintf(err, errlen, _("%s: cannot open: %s"), path, strerror(errno));
        return NULL;
    }
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, _("%s: cannot read: Is a directory"), path);
        goto fail;
    }
    for (;;) {
        size_t got;
        if (n > S2S_MAX_FILE_BYTES) {
            snprintf(err, errlen, _("%s: larger than 256 MiB, the most attn reads"), path);
            goto fail;
        }
        if (n + 1 >= cap) {
            if (grow_buffer(&buf, &cap, cap ? 2 * cap : 1 << 16)) {
                snprintf(err, errlen, _("%s: out of memory"), path);
                goto fail;
            }
        }
        got = fread(buf + n, 1, cap - 1 - n, f);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        snprintf(err, errlen, _("%s: cannot read: %s"), path, strerror(errno ? errno : EIO));
        goto fail;
    }
    if (f != stdin)
        fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
fail:
    if (f != stdin)
        fclose(f);
    free(buf);
    return NULL;
}

int s2s_corpus_load(s2s_corpus *c, const char *path, size_t max_examples, char *err,
                  size_t errlen)
{
    size_t len;
    char *text = read_file(path, &len, err, errlen);
    int rc;
    memset(c, 0, sizeof *c);
    if (!text)
        return -1;
    if (s2s_corpus_format(text, len) == S2S_CORPUS_JSON) {
        cJSON *root = json_parse(path, text, len, err, errlen);
        rc = root ? s2s_corpus_from_json(c, root, path, err, errlen) : -1;
        cJSON_Delete(root);
    } else {
        rc = s2s_corpus_read_fra(c, text, len, path, max_examples, err, errlen);
    }
    free(text);
    return rc;
}
