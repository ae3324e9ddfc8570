/* page.c — the HTML page of --html (see page.h). */
#include "page.h"

#include <stdlib.h>
#include <string.h>

/* scripts/embed_file.py's arrays of src/render/page/ (meson.build) */
extern const unsigned char attn_page_js[];
extern const unsigned long attn_page_js_len;
extern const unsigned char attn_page_css[];
extern const unsigned long attn_page_css_len;

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

void page_write(FILE *f, const char *title, const char *data, size_t len)
{
    size_t js_len, css_len;
    const char *js = page_script(&js_len), *css = page_style(&css_len);
    fputs("<!DOCTYPE html>\n"
          "<html lang=\"en\">\n"
          "<head>\n"
          "<meta charset=\"utf-8\">\n"
          /* nothing from outside the file: no script, style, font, image,
           * frame or connection but the inline ones */
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; "
          "base-uri 'none'; form-action 'none'\">\n"
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
          "<main id=\"attn-root\"></main>\n"
          "<script type=\"application/json\" id=\"attn-data\">", f);
    page_write_data(f, data, len);
    fputs("</script>\n<script>\n", f);
    fwrite(js, 1, js_len, f);
    fputs("</script>\n</body>\n</html>\n", f);
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
