/* test_page.c — the page writer of --html (src/render/page.h): the
 * escaping of the data element, read back with cJSON; the page's frame
 * (doctype, policy, one style, two scripts, the title escaped); the
 * embedded scripts and styles, which must not close their own elements;
 * the same bytes for the same data; the translation page's data
 * (translate_page.h) from plain arrays, cut to the sentence's sizes; a
 * large page's preview (page_preview_make) and its place in the page. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

/* the module's text in the page (scripts/embed_wasm.py): empty without one */
extern const unsigned long attn_wasm_module_b64_len;
#include "page.h"
#include "page_out.h"
#include "translate_page.h"

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
                       "'none'; script-src 'unsafe-inline' 'wasm-unsafe-eval'; worker-src blob: data:; "
                       "style-src 'unsafe-inline';") != NULL);
    CHECK(strstr(page, "<title>a &lt;title&gt; &amp; &quot;more&quot;</title>") != NULL);
    /* the data, the script, and attn's module when it was built (meson.build) */
    CHECK_INT(count(page, "<script"), attn_wasm_module_b64_len > 0 ? 3 : 2);
    CHECK((strstr(page, "<script type=\"application/octet-stream\" id=\"attn-module\" "
                        "data-encoding=\"gzip base64\">") != NULL) == (attn_wasm_module_b64_len > 0));
    CHECK_INT(count(page, "</script>"), attn_wasm_module_b64_len > 0 ? 3 : 2);
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
        CHECK(strncmp(j, "// wasi.js", 10) == 0);  /* the first file first */
        CHECK(strstr(j, "innerHTML") == NULL && strstr(j, "outerHTML") == NULL &&
              strstr(j, "insertAdjacentHTML") == NULL && strstr(j, "document.write") == NULL &&
              strstr(j, "eval(") == NULL); /* user text as text only */
    }
    free(j);
    free(c);
}

/* A page carries the scripts of the kinds its data names, and no others:
 * a string that looks like the member does not count. */
static void check_scripts_by_kind(void)
{
    static const struct {
        const char *data;
        int posenc, train, translate, tour;
    } cases[] = {
        {"{\"page\": {\"kind\": \"attention\"}}", 0, 0, 0, 0},
        {"{\"t\": \"\\\"kind\\\": \\\"posenc\\\"\", \"page\": {\"kind\": \"attention\"}}", 0, 0, 0, 0},
        {"{\"page\": {\"kind\": \"posenc\"}}", 1, 0, 0, 0},
        {"{\"page\": {\"kind\": \"translate\"}}", 0, 1, 1, 0},
        {"{\"page\": {\"kind\": \"tour\"}, \"v\": [{\"kind\": \"posenc\"}, {\"kind\": \"train\"}]}",
         1, 1, 0, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *page = NULL;
        size_t len = 0;
        CHECK_INT(page_build("t", cases[i].data, strlen(cases[i].data), &page, &len), 0);
        if (!page)
            continue;
        CHECK(strstr(page, "function attentionPage(") && strstr(page, "// main.js"));
        CHECK_INT(strstr(page, "function posencPage(") != NULL, cases[i].posenc);
        CHECK_INT(strstr(page, "function stepPlayer(") != NULL, cases[i].train);
        CHECK_INT(strstr(page, "function translatePage(") != NULL, cases[i].translate);
        CHECK_INT(strstr(page, "function tourPage(") != NULL, cases[i].tour);
        free(page);
    }
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

/* The float32 values of a page tensor {"dtype", "shape", "base64"}:
 * *n of them, malloc'd (NULL when it is not one). */
static float *tensor_values(const cJSON *t, size_t *n)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(t, "base64");
    unsigned char *bytes;
    size_t len, nb = 0;
    unsigned acc = 0, bits = 0;
    float *out;
    if (!cJSON_IsString(b))
        return NULL;
    len = strlen(b->valuestring);
    if (!(bytes = malloc(len + 1)))
        return NULL;
    for (const char *p = b->valuestring; *p && *p != '='; p++) {
        const char *at = strchr(abc, *p);
        acc = (acc << 6) | (unsigned)(at ? at - abc : 0);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            bytes[nb++] = (unsigned char)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    *n = nb / 4;
    if ((out = malloc(nb + 4)))
        memcpy(out, bytes, nb); /* little-endian, as the machines attn runs on */
    free(bytes);
    return out;
}

/* The shape of a page tensor as "1,2,3". */
static void shape_text(const cJSON *t, char *buf, size_t len)
{
    const cJSON *d;
    size_t at = 0;
    buf[0] = '\0';
    cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(t, "shape"))
        at += (size_t)snprintf(buf + at, at < len ? len - at : 0, at ? ",%d" : "%d", d->valueint);
}

static int tiny_json(FILE *f, const void *ctx)
{
    (void)ctx;
    return fputs("{\"command\": \"translate\", \"translation\": \"le &amp;\"}\n", f) < 0;
}

/* The strings of array a are want[0 … n-1]. */
static int same_strings(const cJSON *a, const char *const *want, size_t n)
{
    if (!cJSON_IsArray(a) || (size_t)cJSON_GetArraySize(a) != n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        const cJSON *t = cJSON_GetArrayItem(a, (int)i);
        if (!cJSON_IsString(t) || strcmp(t->valuestring, want[i]) != 0)
            return 0;
    }
    return 1;
}

/* The page of `attn translate --html` from plain arrays: --json's members
 * and "page", the tokens whole, the attention cut from (L, NH, T, T) to
 * the sentence's sizes, the escaping of the element around it. */
static void check_translate_page(void)
{
    static const char *const src[] = {"the", "</script><b>", "a\xe2\x80\xa8z", "<eos>"};
    static const char *const tgt[] = {"le", "&amp;", "<eos>"};
    static const char *const dec_in[] = {"<bos>", "le", "&amp;"};
    static char *argv[] = {"translate", "--html", "x.html"};
    float cross[2 * 5 * 5], self[2 * 5 * 5], *got;
    static const char model[] = "{\"src_vocab\": [\"</script>\"], \"k\": [1, 2.5]}";
    translate_page_view v = {1, 2, 8, 16, src, 4, tgt, 3, 5, cross, NULL, self, NULL,
                             "le &amp;", 0.5, NULL, NULL, 0, model, sizeof model - 1, 0, 0};
    char *data = NULL, *page = NULL, *elem, shape[64];
    size_t len = 0, plen = 0, n = 0;
    cJSON *doc, *pg, *st;
    int same = 1;
    for (int i = 0; i < 50; i++) { /* (1, 2, 5, 5): 100·h + 10·query + key */
        cross[i] = (float)(100 * (i / 25) + 10 * (i / 5 % 5) + i % 5);
        self[i] = -cross[i];
    }
    CHECK_INT(translate_page_data(&v, 3, argv, tiny_json, NULL, &data, &len), 0);
    doc = data ? cJSON_Parse(data) : NULL;
    pg = cJSON_GetObjectItemCaseSensitive(doc, "page");
    CHECK(doc && strcmp(cJSON_GetObjectItemCaseSensitive(doc, "translation")->valuestring,
                        "le &amp;") == 0);
    CHECK(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(pg, "kind")) &&
          strcmp(cJSON_GetObjectItemCaseSensitive(pg, "kind")->valuestring, "translate") == 0);
    CHECK(same_strings(cJSON_GetObjectItemCaseSensitive(pg, "source"), src, 4));
    CHECK(same_strings(cJSON_GetObjectItemCaseSensitive(pg, "target"), tgt, 3));
    CHECK(same_strings(cJSON_GetObjectItemCaseSensitive(pg, "decoder_input"), dec_in, 3));
    st = cJSON_GetObjectItemCaseSensitive(pg, "sentence");
    CHECK(st && strcmp(cJSON_GetObjectItemCaseSensitive(st, "source")->valuestring,
                       "the </script><b> a\xe2\x80\xa8z") == 0);
    CHECK(st && strcmp(cJSON_GetObjectItemCaseSensitive(st, "translation")->valuestring,
                       "le &amp;") == 0);
    CHECK(st && cJSON_GetObjectItemCaseSensitive(st, "bleu")->valuedouble == 0.5);
    CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(pg, "encoder")) &&
          cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(pg, "steps")));
    /* the model, as its file holds it, for the page's own attn */
    st = cJSON_GetObjectItemCaseSensitive(pg, "model_file");
    CHECK(st && cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(st, "k")) == 2 &&
          cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(st, "k"), 1)->valuedouble == 2.5 &&
          strcmp(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(st, "src_vocab"), 0)->valuestring,
                 "</script>") == 0);
    /* cross (1, L, NH, Tq, Ts): rows 0 … 2, columns 0 … 3 of each head */
    shape_text(cJSON_GetObjectItemCaseSensitive(pg, "cross"), shape, sizeof shape);
    CHECK(strcmp(shape, "1,1,2,3,4") == 0);
    got = tensor_values(cJSON_GetObjectItemCaseSensitive(pg, "cross"), &n);
    CHECK(got && n == 24);
    for (size_t i = 0; got && i < 24; i++)
        same &= got[i] == (float)(100 * (i / 12) + 10 * (i / 4 % 3) + i % 4);
    CHECK(same);
    free(got);
    got = tensor_values(cJSON_GetObjectItemCaseSensitive(pg, "decoder"), &n);
    CHECK(got && n == 18 && got[17] == -122.0f && got[4] == -11.0f);
    free(got);
    /* the page around it: the element escaped, the tokens read back */
    CHECK_INT(page_build("attn translate", data, len, &page, &plen), 0);
    elem = page ? data_element(page) : NULL;
    CHECK(elem && strpbrk(elem, "<>&") == NULL && !strstr(elem, "\xe2\x80\xa8"));
    cJSON_Delete(doc);
    doc = elem ? cJSON_Parse(elem) : NULL;
    CHECK(same_strings(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "page"),
                                                        "source"), src, 4));
    cJSON_Delete(doc);
    free(elem);
    free(page);
    free(data);
    /* sizes past T are refused */
    v.Tq = 6;
    CHECK_INT(translate_page_data(&v, 3, argv, NULL, NULL, &data, &len), -1);
}

/* translate_page_write: the file and its report line. */
static void check_translate_write(void)
{
    static const char *const src[] = {"a", "<eos>"}, *const tgt[] = {"b", "<eos>"};
    const float cross[4] = {1, 0, 0.5f, 0.5f}; /* dense (1, 1, 2, 2) */
    translate_page_view v = {1, 1, 4, 4, src, 2, tgt, 2, 0, cross, NULL, NULL, NULL, NULL, 0.0, NULL,
                             NULL, 0, NULL, 0, 0, 0};
    char dir[] = "/tmp/attn-test-page-XXXXXX", path[64], *rep = NULL, want[192];
    size_t rlen = 0;
    FILE *f;
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/t.html", dir);
    f = open_memstream(&rep, &rlen);
    CHECK_INT(translate_page_write(path, &v, 0, NULL, NULL, NULL, f), 0);
    fclose(f);
    snprintf(want, sizeof want, "wrote %s: a page of the translation's attention, 1 block × 1 head, ",
             path);
    CHECK(rep && strncmp(rep, want, strlen(want)) == 0);
    CHECK(access(path, R_OK) == 0);
    free(rep);
    remove(path);
    rmdir(dir);
}

/* A large page's preview (page.h): the blocks' entries against plain
 * loops over non-square panels of unequal blocks (300 = 128 blocks of 2
 * or 3 queries), the scale's ends with a NaN among the weights, the grid
 * halved for many panels, and the page's order: preview, script, data. */
static void check_preview(void)
{
    enum { P = 2, NQ = 300, NK = 5 };
    float *w = malloc(sizeof(float) * P * NQ * NK); /* (P, NQ, NK) */
    page_preview pv;
    char *page = NULL, *plain = NULL;
    size_t len = 0, plen = 0;
    int bad = 0;
    if (!w)
        return;
    for (size_t i = 0; i < (size_t)P * NQ * NK; i++)
        w[i] = (float)((i * 7919) % 1000) / 1000.0f;
    w[17] = NAN;
    w[600] = -0.5f;
    w[2999] = 2.0f;
    CHECK_INT(page_preview_make(&pv, w, P, NQ, NK), 0);
    CHECK(pv.vmin == -0.5f && pv.vmax == 2.0f);
    CHECK_INT(pv.gq, 128);
    CHECK_INT(pv.gk, NK); /* fewer keys than the grid: one a block */
    for (size_t p = 0; p < P && pv.index; p++)
        for (size_t i = 0; i < pv.gq; i++)
            for (size_t j = 0; j < pv.gk; j++) {
                const size_t q0 = i * NQ / pv.gq, q1 = (i + 1) * NQ / pv.gq;
                double sum = 0.0, t;
                int want;
                for (size_t q = q0; q < q1; q++)
                    sum += w[(p * NQ + q) * NK + j];
                t = (sum / (double)(q1 - q0) + 0.5) / 2.5; /* (mean − vmin) / span */
                want = !(t > 0) ? 0 : t >= 1 ? 255 : (int)floor(t * 256);
                bad += pv.index[(p * pv.gq + i) * pv.gk + j] != want;
            }
    CHECK_INT(bad, 0);
    page_preview_free(&pv);
    CHECK(pv.index == NULL);
    /* 64 panels of 128 × 128 blocks are 2^20: halved to 64 × 64 */
    {
        float *many = calloc((size_t)64 * 256 * 256, sizeof(float));
        if (many) {
            CHECK_INT(page_preview_make(&pv, many, 64, 256, 256), 0);
            CHECK(pv.gq == 64 && pv.gk == 64 && pv.index && pv.index[0] == 0);
            page_preview_free(&pv);
            free(many);
        }
    }
    CHECK_INT(page_preview_make(&pv, w, P, 0, NK), -1);
    free(w);

    /* the order; and without a preview, page_write's bytes */
    {
        FILE *f = open_memstream(&page, &len), *g = open_memstream(&plain, &plen);
        const char data[] = "{\"page\": {\"kind\": \"attention\"}}";
        const char preview[] = "{\"preview\": \"<b>\"}";
        if (!f || !g)
            return;
        page_write_previewed(f, "t", preview, strlen(preview), data, strlen(data));
        page_write(g, "t", data, strlen(data));
        fclose(f);
        fclose(g);
        {
            const char *a = strstr(page, "id=\"attn-preview\">{\"preview\": \"\\u003cb\\u003e\"}</script>");
            const char *b = strstr(page, "<script>\n");
            const char *c = strstr(page, "id=\"attn-data\">");
            CHECK(a && b && c && a < b && b < c);
            CHECK_INT(count(page, "<script"), attn_wasm_module_b64_len > 0 ? 4 : 3);
        }
        CHECK(strstr(plain, "id=\"attn-preview\"") == NULL);
        free(page);
        page = NULL;
        f = open_memstream(&page, &len);
        if (f) {
            page_write_previewed(f, "t", NULL, 0, data, strlen(data));
            fclose(f);
            CHECK(len == plen && memcmp(page, plain, len) == 0);
        }
        free(page);
        free(plain);
    }
}


int main(void)
{
    check_preview();
    check_translate_page();
    check_translate_write();
    check_scripts_by_kind();
    check_tokens();
    check_for_tokens();
    check_sources();
    return check_summary("test_page");
}
