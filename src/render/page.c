/* page.c — the HTML page of --html (see page.h). */
#include "page.h"

#include "i18n.h"

#include <stdlib.h>
#include <string.h>

/* scripts/embed_file.py's arrays of src/render/page/ (meson.build) */
extern const unsigned char attn_page_js[];
extern const unsigned long attn_page_js_len;
extern const unsigned long attn_page_js_nparts;
extern const unsigned long attn_page_js_parts[]; /* (nparts + 1,) each file's start, the end */
extern const char *const attn_page_js_names[];   /* (nparts,) */
extern const unsigned char attn_page_css[];
extern const unsigned long attn_page_css_len;
/* scripts/embed_wasm.py's text of build/attn.wasm (meson.build): empty
 * when attn was built without a WebAssembly toolchain */
extern const char attn_wasm_module_b64[];
extern const unsigned long attn_wasm_module_b64_len;

const char *page_script(size_t *len)
{
    *len = (size_t)attn_page_js_len;
    return (const char *)attn_page_js;
}

const char *page_style(size_t *len)
{
    *len = (size_t)attn_page_css_len;
    return (const char *)attn_page_css;
}

/* The scripts of the views only some pages show: a page carries one when
 * its data names one of its kinds ("kind": "posenc" — the tour's data
 * names the kinds of all its views too). Every other file (common.js,
 * the heatmaps, charts and attention views, main.js) is in every page. */
static const struct {
    const char *file;
    const char *kinds[3];
} page_only[] = {
    {"posenc.js", {"posenc", NULL, NULL}},
    {"complexity.js", {"complexity", NULL, NULL}},
    {"scale_sweep.js", {"scale_sweep", NULL, NULL}},
    {"pool.js", {"pool", NULL, NULL}},
    {"train.js", {"train", "translate", "compare_arch"}}, /* the step slider is train.js's */
    {"translate.js", {"translate", NULL, NULL}},
    {"compare_arch.js", {"compare_arch", NULL, NULL}},
    {"tour.js", {"tour", NULL, NULL}},
    {"vit.js", {"vit", NULL, NULL}},
};

/* Whether data (len bytes) holds the member "kind": "KIND". A string
 * value holds no unescaped quote, so only a member can match. */
static int names_kind(const char *data, size_t len, const char *kind)
{
    char needle[64];
    const int n = snprintf(needle, sizeof needle, "\"kind\": \"%s\"", kind);
    if (n <= 0 || (size_t)n >= sizeof needle)
        return 0;
    for (const char *p = data, *end = data + len; (size_t)(end - p) >= (size_t)n; p++) {
        if (!(p = memchr(p, '"', (size_t)(end - p))) || (size_t)(end - p) < (size_t)n)
            return 0;
        if (memcmp(p, needle, (size_t)n) == 0)
            return 1;
    }
    return 0;
}

/* Whether script file i is needed by a page of data. */
static int script_needed(size_t i, const char *data, size_t len)
{
    for (size_t k = 0; k < sizeof page_only / sizeof page_only[0]; k++) {
        if (strcmp(attn_page_js_names[i], page_only[k].file) != 0)
            continue;
        for (size_t j = 0; j < 3 && page_only[k].kinds[j]; j++)
            if (names_kind(data, len, page_only[k].kinds[j]))
                return 1;
        return 0;
    }
    return 1;
}

/* Text in an element or attribute: &, <, >, " and ' as references. */
static void write_html_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*s, f);
        }
    }
}

void page_write_data(FILE *f, const char *data, size_t len)
{
    const unsigned char *p = (const unsigned char *)data;
    for (size_t i = 0; i < len; i++) {
        if (p[i] == '<')
            fputs("\\u003c", f);
        else if (p[i] == '>')
            fputs("\\u003e", f);
        else if (p[i] == '&')
            fputs("\\u0026", f);
        else if (p[i] == 0xE2 && i + 2 < len && p[i + 1] == 0x80 &&
                 (p[i + 2] == 0xA8 || p[i + 2] == 0xA9)) {
            /* U+2028 LINE SEPARATOR and U+2029 PARAGRAPH SEPARATOR, E2 80 A8/A9
             * in UTF-8 */
            fputs(p[i + 2] == 0xA8 ? "\\u2028" : "\\u2029", f);
            i += 2;
        } else
            fputc(p[i], f);
    }
}

/* The page's scripts: those its data needs, in meson.build's order. */
static void write_scripts(FILE *f, const char *data, size_t len)
{
    fputs("<script>\n", f);
    for (size_t i = 0; i < (size_t)attn_page_js_nparts; i++)
        if (script_needed(i, data, len))
            fwrite(attn_page_js + attn_page_js_parts[i], 1,
                   (size_t)(attn_page_js_parts[i + 1] - attn_page_js_parts[i]), f);
    fputs("</script>\n", f);
}

void page_write(FILE *f, const char *title, const char *data, size_t len)
{
    page_write_previewed(f, title, NULL, 0, data, len);
}

void page_write_previewed(FILE *f, const char *title, const char *preview, size_t plen,
                          const char *data, size_t len)
{
    size_t css_len;
    const char *css = page_style(&css_len);
    /* the language it is written in, which the page starts in (common.js) */
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"%s\">\n",
            strcmp(i18n_language(), "zh") == 0 ? "zh-CN" : "en");
    fputs("<head>\n"
          "<meta charset=\"utf-8\">\n"
          /* nothing from outside the file: no script, style, font, image,
           * frame or connection but the inline ones */
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "script-src 'unsafe-inline' 'wasm-unsafe-eval'; worker-src blob: data:; "
          "style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta name=\"generator\" content=\"attn\">\n"
          "<title>", f);
    write_html_text(f, title);
    fputs("</title>\n<style>\n", f);
    fwrite(css, 1, css_len, f);
    fputs("</style>\n"
          "</head>\n"
          "<body>\n"
          "<noscript>This page draws its views with JavaScript, which is off.</noscript>\n"
          "<main id=\"attn-root\"></main>\n", f);
    if (preview) { /* what the first screen needs, the script, the data */
        fputs("<script type=\"application/json\" id=\"attn-preview\">", f);
        page_write_data(f, preview, plen);
        fputs("</script>\n", f);
        write_scripts(f, data, len);
        fputs("<script type=\"application/json\" id=\"attn-data\">", f);
        page_write_data(f, data, len);
        fputs("</script>\n", f);
    } else { /* the data, then the script */
        fputs("<script type=\"application/json\" id=\"attn-data\">", f);
        page_write_data(f, data, len);
        fputs("</script>\n", f);
        write_scripts(f, data, len);
    }
    /* attn itself, last: the views are drawn before the parser reads it */
    if (attn_wasm_module_b64_len > 0) {
        fputs("<script type=\"application/octet-stream\" id=\"attn-module\" "
              "data-encoding=\"gzip base64\">", f);
        fwrite(attn_wasm_module_b64, 1, (size_t)attn_wasm_module_b64_len, f);
        fputs("</script>\n", f);
    }
    fputs("</body>\n</html>\n", f);
}

int page_build(const char *title, const char *data, size_t len, char **out, size_t *outlen)
{
    FILE *f = open_memstream(out, outlen);
    if (!f)
        return -1;
    page_write(f, title, data, len);
    if (ferror(f)) {
        fclose(f);
        free(*out);
        *out = NULL;
        return -1;
    }
    return fclose(f) == 0 ? 0 : -1;
}
