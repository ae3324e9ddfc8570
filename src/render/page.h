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
 * A large page (an attention page whose weights are more than a few MB;
 * the caller decides: page_out.h's PAGE_PREVIEW_ABOVE) also carries a
 * preview, what its first screen draws, and its data comes last, so that
 * the script runs, and the page is drawn, before the browser has read the
 * data:
 *
 *     … <style>page.css</style>
 *     <script type="application/json" id="attn-preview">PREVIEW</script>
 *     <script>the page's JavaScript</script>
 *     <script type="application/json" id="attn-data">DATA</script>
 *
 * PREVIEW is JSON, escaped as DATA is: {"page": the data's "page" member,
 * "preview": {"shape": the weights' shape, "grid": [gq, gk], "vmin",
 * "vmax", "index": base64 of page_preview's entries}}. Every other page
 * is written as above, byte for byte.
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

/* The same with a preview (preview, plen bytes of JSON) before the
 * script and the data after it; page_write's page when preview is NULL. */
void page_write_previewed(FILE *f, const char *title, const char *preview, size_t plen,
                          const char *data, size_t len);

/* The preview of attention weights w (P, Nq, Nk), P panels of Nq queries
 * × Nk keys, row-major: each panel as a grid of gq × gk blocks (gq =
 * min(Nq, g), gk = min(Nk, g); g = PAGE_PREVIEW_GRID, halved while the P
 * grids hold more than PAGE_PREVIEW_CELLS blocks), block (i, j) the
 * queries ⌊i·Nq/gq⌋ … ⌊(i+1)·Nq/gq⌋ − 1 and likewise the keys: whole
 * cells, as matplotlib's image downsampled by area. Each block is the
 * colour-map entry (0 … 255, the page's rule in heatmap.js) of the mean of
 * its cells on the scale vmin … vmax, the least and greatest weight as the
 * page finds them (a NaN skipped). */
#define PAGE_PREVIEW_GRID 128
#define PAGE_PREVIEW_CELLS ((size_t)1 << 18)
typedef struct page_preview {
    size_t panels, Nq, Nk;  /* the weights (panels, Nq, Nk) */
    size_t gq, gk;          /* each panel's grid */
    float vmin, vmax;       /* every weight's least and greatest */
    unsigned char *index;   /* (panels, gq, gk) entries; malloc'd */
} page_preview;

/* 0, or -1 (an empty panel, a size that overflows, out of memory: then
 * pv->index is NULL). Free with page_preview_free. */
int page_preview_make(page_preview *pv, const float *w, size_t P, size_t Nq, size_t Nk);
void page_preview_free(page_preview *pv);

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
