/* page.h — one self-contained HTML page (SPEC.md §10, `--html FILE`).
 *
 * A page is the data of a run (a JSON object, written by the caller with
 * io's json_writer) wrapped with the page's styles and scripts, which are
 * files in src/render/page/ compiled into attn (meson.build, as the font
 * is):
 *
 *     <!DOCTYPE html> … <meta http-equiv="Content-Security-Policy" …>
 *     <style>page.css</style>
 *     <script type="application/json" id="attn-data">DATA</script>
 *     <script>the page's JavaScript</script>
 *
 * The JavaScript is the files of src/render/page/ in meson.build's order,
 * less the views the page has none of: posenc.js, complexity.js, train.js,
 * translate.js and tour.js come only in a page whose data names their
 * kind ("kind": "posenc"; train.js also for "translate").
 *
 * The Content-Security-Policy forbids every load from outside the file
 * (default-src 'none'); only the inline style and script run. DATA is the
 * JSON as given, except that '<', '>', '&', U+2028 and U+2029 are written
 * \u003c, \u003e, \u0026, \u2028, \u2029: the element cannot be closed
 * (no "</script") or turned into a comment ("<!--") by any text in it,
 * and it parses back to the same value. Outside JSON strings these
 * characters never occur, so escaping every one of them is safe. The
 * scripts set user text with textContent only.
 *
 * Nothing here depends on time or place: the same data gives the same
 * bytes. For a harness: page_build takes the data and gives the page.
 */
#ifndef ATTN_PAGE_H
#define ATTN_PAGE_H

#include <stddef.h>
#include <stdio.h>

/* Write the page to f: title (UTF-8, HTML-escaped here) and len bytes of
 * JSON data. Write errors are the caller's to check (ferror, or
 * atomic_commit). */
void page_write(FILE *f, const char *title, const char *data, size_t len);

/* Only the data, escaped for the element as above. */
void page_write_data(FILE *f, const char *data, size_t len);

/* The page in new memory (*out, *outlen bytes, NUL after them; free it):
 * 0, or -1 when out of memory. */
int page_build(const char *title, const char *data, size_t len, char **out, size_t *outlen);

/* The embedded styles and scripts, every file (for the tests: e.g. that
 * no "</script" is in them). */
const char *page_script(size_t *len);
const char *page_style(size_t *len);

#endif
