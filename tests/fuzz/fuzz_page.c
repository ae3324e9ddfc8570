/* fuzz_page.c — libFuzzer harness for the --html page writer (SPEC.md
 * §10; src/render/page.c, src/cmd/page_out.c).
 *
 * The bytes are a title and tokens, one a line (the first line the title,
 * each later one a token, at most 64, NUL bytes cut a line short). The
 * page is written as `attn multihead --html` writes it for those tokens,
 * and its escaping is checked:
 *   1. inside the data element <script type="application/json"
 *      id="attn-data"> … </script> there is no '<', '>' or '&' at all (so
 *      no "</script" and no "<!--"), and no raw U+2028 or U+2029;
 *   2. the element's text parses as JSON, and its tokens
 *      (page.rows[0].query_tokens and key_tokens) are the input's, byte
 *      for byte;
 *   3. the title's text is in the <title> element with no '<' or '>'
 *      of its own;
 *   4. the page holds exactly one data element and ends with </html>.
 * Then the same tokens make the page of a translation (translate_page.h:
 * the first half the source, the rest the target, the title the
 * reference), checked for 1 and 4, and for its words: page.source,
 * page.target, page.decoder_input (<bos> and the target but its last)
 * and page.sentence.reference come back byte for byte.
 * Any broken promise aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fuzz.h"
#include "page.h"
#include "page_out.h"
#include "translate_page.h"

#define MAX_TOKENS 64

static const char DATA_OPEN[] = "<script type=\"application/json\" id=\"attn-data\">";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

/* The n lines of text (len bytes) as strings, each cut at its first NUL:
 * a copy in lines[]; the count. */
static size_t split_lines(const uint8_t *data, size_t size, char **lines, size_t max)
{
    size_t n = 0, start = 0;
    for (size_t i = 0; i <= size && n < max; i++) {
        if (i == size || data[i] == '\n') {
            size_t len = i - start;
            const void *nul = memchr(data + start, '\0', len);
            if (nul)
                len = (size_t)((const uint8_t *)nul - (data + start));
            if (!(lines[n] = malloc(len + 1)))
                abort();
            memcpy(lines[n], data + start, len);
            lines[n][len] = '\0';
            n++;
            start = i + 1;
        }
    }
    return n;
}

/* The strings of array a are tokens[0 … n-1], byte for byte. */
static int same_tokens(const cJSON *a, char *const *tokens, size_t n)
{
    size_t i = 0;
    const cJSON *t;
    if (!cJSON_IsArray(a) || (size_t)cJSON_GetArraySize(a) != n)
        return 0;
    cJSON_ArrayForEach(t, a) {
        if (!cJSON_IsString(t) || strcmp(t->valuestring, tokens[i]) != 0)
            return 0;
        i++;
    }
    return 1;
}

/* 1 and 4: page holds one data element, with nothing in it that could
 * close it or open a comment, and ends with </html>; the element's text
 * as JSON (cJSON_Delete it). */
static cJSON *data_of(const char *page, size_t len)
{
    const char *open = strstr(page, DATA_OPEN), *text, *close;
    if (!open || strstr(open + 1, DATA_OPEN))
        abort(); /* 4: exactly one data element */
    text = open + strlen(DATA_OPEN);
    close = strstr(text, "</script>");
    if (!close)
        abort();
    /* 1: nothing in the element can close it or open a comment */
    for (const char *p = text; p < close; p++) {
        const unsigned char c = (unsigned char)*p;
        if (c == '<' || c == '>' || c == '&')
            abort();
        if (c == 0xE2 && p + 2 < close && (unsigned char)p[1] == 0x80 &&
            ((unsigned char)p[2] == 0xA8 || (unsigned char)p[2] == 0xA9))
            abort();
    }
    /* 4: the page is whole */
    if (len < 8 || strcmp(page + len - 8, "</html>\n") != 0)
        abort();
    cJSON *root = cJSON_ParseWithLength(text, (size_t)(close - text));
    if (!root)
        abort();
    return root;
}

/* Items first … first+n-1 of array a are the strings tokens[0 … n-1]. */
static int same_tokens_at(const cJSON *a, int first, char *const *tokens, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const cJSON *t = cJSON_GetArrayItem(a, first + (int)i);
        if (!cJSON_IsString(t) || strcmp(t->valuestring, tokens[i]) != 0)
            return 0;
    }
    return 1;
}

static void check_page(const char *page, size_t len, const char *title, char *const *tokens,
                       size_t n)
{
    const char *open = strstr(page, DATA_OPEN);
    cJSON *root = data_of(page, len);
    /* 2: it parses back to the same tokens */
    const cJSON *pg = cJSON_GetObjectItemCaseSensitive(root, "page");
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(pg, "rows");
    const cJSON *row = cJSON_GetArrayItem(rows, 0);
    if (!same_tokens(cJSON_GetObjectItemCaseSensitive(row, "query_tokens"), tokens, n) ||
        !same_tokens(cJSON_GetObjectItemCaseSensitive(row, "key_tokens"), tokens, n))
        abort();
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(pg, "title");
    if (!cJSON_IsString(t) || strcmp(t->valuestring, title) != 0)
        abort();
    cJSON_Delete(root);
    /* 3: the <title> element holds no markup of the title's own */
    const char *t0 = strstr(page, "<title>"), *t1 = t0 ? strstr(t0, "</title>") : NULL;
    if (!t0 || !t1 || t1 > open)
        abort();
    for (const char *p = t0 + strlen("<title>"); p < t1; p++)
        if (*p == '<' || *p == '>')
            abort();
}

/* The translation page of tokens[0 … ns) (source) and tokens[ns … n)
 * (target), reference the title: escaped, its words whole. */
static void check_translate(const char *title, char *const *tokens, size_t n)
{
    const size_t ns = (n + 1) / 2, nt = n - ns;
    float *w = malloc(n * n * sizeof *w);
    char *data = NULL, *page = NULL;
    size_t dlen = 0, plen = 0;
    if (!w)
        abort();
    for (size_t i = 0; i < n * n; i++)
        w[i] = 0.5f; /* cross (1, 1, nt, ns) and decoder (1, 1, nt, nt): within n × n */
    const translate_page_view v = {.layers = 1, .heads = 1, .hiddens = 2, .ffn = 2,
                                   .source = (const char *const *)tokens, .Ts = ns,
                                   .target = (const char *const *)tokens + ns, .Tq = nt,
                                   .cross = w, .decoder = w, .reference = title, .bleu = 0.5};
    if (translate_page_data(&v, 0, NULL, NULL, NULL, &data, &dlen) != 0 ||
        page_build("attn translate", data, dlen, &page, &plen) != 0)
        abort();
    cJSON *root = data_of(page, plen);
    const cJSON *pg = cJSON_GetObjectItemCaseSensitive(root, "page");
    const cJSON *dec = cJSON_GetObjectItemCaseSensitive(pg, "decoder_input");
    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(pg, "sentence"), "reference");
    if (!same_tokens(cJSON_GetObjectItemCaseSensitive(pg, "source"), tokens, ns) ||
        !same_tokens(cJSON_GetObjectItemCaseSensitive(pg, "target"), tokens + ns, nt) ||
        !cJSON_IsArray(dec) || (size_t)cJSON_GetArraySize(dec) != nt ||
        strcmp(cJSON_GetArrayItem(dec, 0)->valuestring, "<bos>") != 0 ||
        (nt > 1 && !same_tokens_at(dec, 1, tokens + ns, nt - 1)) || !cJSON_IsString(ref) ||
        strcmp(ref->valuestring, title) != 0)
        abort();
    cJSON_Delete(root);
    free(page);
    free(data);
    free(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *lines[MAX_TOKENS + 1];
    size_t n = split_lines(data, size, lines, MAX_TOKENS + 1);
    char *page = NULL;
    size_t len = 0;
    int rc = -1;
    if (n >= 2) {
        if (page_for_tokens(lines[0], (const char *const *)(lines + 1), n - 1, &page, &len) != 0)
            abort(); /* 1 … 64 tokens: always a page */
        check_page(page, len, lines[0], lines + 1, n - 1);
        free(page);
        if (n >= 3)
            check_translate(lines[0], lines + 1, n - 1);
        rc = 0;
    }
    for (size_t i = 0; i < n; i++)
        free(lines[i]);
    return rc;
}
