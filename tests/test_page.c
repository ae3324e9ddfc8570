/* test_page.c — the page writer of --html (src/render/page.h): the
 * escaping of the data element, read back with cJSON; the page's frame
 * (doctype, policy, one style, two scripts, the title escaped); the
 * embedded scripts and styles, which must not close their own elements;
 * the same bytes for the same data. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "page.h"
#include "page_out.h"

/* The text of the data element of page (a copy; the caller frees). */
static char *data_element(const char *page)
{
    static const char open[] = "<script type=\"application/json\" id=\"attn-data\">";
    const char *a = strstr(page, open), *b;
    char *out;
    if (!a)
        return NULL;
    a += sizeof open - 1;
    if (!(b = strstr(a, "</script>")) || !(out = malloc((size_t)(b - a) + 1)))
        return NULL;
    memcpy(out, a, (size_t)(b - a));
    out[b - a] = '\0';
    return out;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

/* Tokens a user could give: each must come back the same and leave no
 * '<', '>', '&', U+2028 or U+2029 in the element. */
static void check_tokens(void)
{
    static const char *const tokens[] = {
        "</script><img src=x onerror=alert(1)>", "\"><svg onload=alert(2)>", "<!-- comment -->",
        "</SCRIPT >", "a & b && c", "line\xe2\x80\xa8sep\xe2\x80\xa9para", "苹果", "\\u003c",
        "<", ">", "&amp;", "]]>", "\xe2\x80", /* a cut U+2028: bytes, left alone */
    };
    const size_t n = sizeof tokens / sizeof tokens[0];
    char *json = NULL, *page = NULL, *elem;
    size_t jlen = 0, plen = 0;
    FILE *f = open_memstream(&json, &jlen);
    cJSON *doc, *arr;
    CHECK(f != NULL);
    if (!f)
        return;
    /* the JSON as json_writer writes strings: UTF-8 as is, " and \ escaped */
    fputs("{\"tokens\": [", f);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ", \"" : "\"", f);
        for (const char *p = tokens[i]; *p; p++) {
            if (*p == '"' || *p == '\\')
                fputc('\\', f);
            fputc(*p, f);
        }
        fputc('"', f);
    }
    fputs("]}\n", f);
    fclose(f);

    CHECK_INT(page_build("a <title> & \"more\"", json, jlen, &page, &plen), 0);
    CHECK(page != NULL && strlen(page) == plen);
    if (!page) {
        free(json);
        return;
    }
    elem = data_element(page);
    CHECK(elem != NULL);
    if (elem) {
        CHECK(strpbrk(elem, "<>&") == NULL);
        CHECK(strstr(elem, "\xe2\x80\xa8") == NULL && strstr(elem, "\xe2\x80\xa9") == NULL);
        CHECK(strstr(elem, "\\u003c/script\\u003e") != NULL);
        CHECK(strstr(elem, "\\u2028") != NULL && strstr(elem, "\\u2029") != NULL);
        /* parses back to the same strings */
        doc = cJSON_Parse(elem);
        arr = cJSON_GetObjectItemCaseSensitive(doc, "tokens");
        CHECK_INT(cJSON_GetArraySize(arr), (long long)n);
        for (size_t i = 0; i < n && arr; i++) {
            const cJSON *t = cJSON_GetArrayItem(arr, (int)i);
            CHECK(cJSON_IsString(t) && strcmp(t->valuestring, tokens[i]) == 0);
            if (!cJSON_IsString(t) || strcmp(t->valuestring, tokens[i]) != 0)
                fprintf(stderr, "token %zu came back as %s\n", i,
                        cJSON_IsString(t) ? t->valuestring : "(not a string)");
        }
        cJSON_Delete(doc);
    }
    /* the frame */
    CHECK(strncmp(page, "<!DOCTYPE html>\n<html lang=\"en\">\n", 33) == 0);
    CHECK(strstr(page, "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
                       "'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline';") != NULL);
    CHECK(strstr(page, "<title>a &lt;title&gt; &amp; &quot;more&quot;</title>") != NULL);
    CHECK_INT(count(page, "<script"), 2);
    CHECK_INT(count(page, "</script>"), 2);
    CHECK_INT(count(page, "<style>"), 1);
    CHECK_INT(count(page, "<!--"), 0);
    /* the same data, the same bytes */
    {
        char *again = NULL;
        size_t alen = 0;
        CHECK_INT(page_build("a <title> & \"more\"", json, jlen, &again, &alen), 0);
        CHECK(again && alen == plen && memcmp(again, page, plen) == 0);
        free(again);
    }
    free(elem);
    free(page);
    free(json);
}

/* The scripts and styles compiled in: whole files, and nothing in them
 * that would end their element or start a comment in the page. */
static void check_sources(void)
{
    size_t jl, cl;
    const char *js = page_script(&jl), *css = page_style(&cl);
    char *j = malloc(jl + 1), *c = malloc(cl + 1);
    CHECK(j && c);
    if (j && c) {
        memcpy(j, js, jl);
        j[jl] = '\0';
        memcpy(c, css, cl);
        c[cl] = '\0';
        CHECK(jl > 1000 && strlen(j) == jl); /* no NUL inside */
        CHECK(strstr(j, "</script") == NULL && strstr(j, "</SCRIPT") == NULL);
        CHECK(strstr(j, "<!--") == NULL);
        CHECK(strstr(c, "</style") == NULL && strstr(c, "<!--") == NULL);
        CHECK(strncmp(j, "// common.js", 12) == 0);  /* the first file first */
        CHECK(strstr(j, "innerHTML") == NULL && strstr(j, "outerHTML") == NULL &&
              strstr(j, "insertAdjacentHTML") == NULL && strstr(j, "document.write") == NULL &&
              strstr(j, "eval(") == NULL); /* user text as text only */
    }
    free(j);
    free(c);
}

/* page_for_tokens, the harness's entry: the tokens come back whole from
 * the data element of the page it makes. */
static void check_for_tokens(void)
{
    static const char *const tokens[] = {"</script>", "<!--", "\xe2\x80\xa8", "\"'&", "x"};
    char *page = NULL, *elem;
    size_t len = 0;
    cJSON *doc, *rows, *q;
    CHECK_INT(page_for_tokens("t", tokens, 5, &page, &len), 0);
    CHECK_INT(page_for_tokens("t", tokens, 0, &page, &len), -1);
    elem = page ? data_element(page) : NULL;
    CHECK(elem && strpbrk(elem, "<>&") == NULL);
    doc = elem ? cJSON_Parse(elem) : NULL;
    rows = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "page"), "rows");
    q = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(rows, 0), "query_tokens");
    CHECK_INT(cJSON_GetArraySize(q), 5);
    for (int i = 0; i < 5 && q; i++)
        CHECK(cJSON_IsString(cJSON_GetArrayItem(q, i)) &&
              strcmp(cJSON_GetArrayItem(q, i)->valuestring, tokens[i]) == 0);
    cJSON_Delete(doc);
    free(elem);
    free(page);
}

int main(void)
{
    check_tokens();
    check_for_tokens();
    check_sources();
    return check_summary("test_page");
}
