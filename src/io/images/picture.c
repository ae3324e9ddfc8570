/* picture.c — picture.h's image reader. */
#include "picture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <stb_image.h>

#include "checked.h"
#include "i18n.h"
#include "resize.h"

#define PICTURE_MAX_SIDE 16384 /* a larger side is refused before decoding */

int picture_load_grey(const char *path, size_t S, int invert, float **out, size_t *w, size_t *h,
                      char *err, size_t errlen)
{
    int iw = 0, ih = 0, comp = 0;
    struct stat st;
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        snprintf(err, errlen, _("%s: cannot open: %s"), path, strerror(errno));
        return -1;
    }
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, _("%s: cannot read: Is a directory"), path);
        fclose(f);
        return -1;
    }
    if (!stbi_info_from_file(f, &iw, &ih, &comp)) {
        snprintf(err, errlen, _("%s: not an image attn reads (PNG or JPEG): %s"), path,
                 stbi_failure_reason());
        fclose(f);
        return -1;
    }
    if (iw < 1 || ih < 1 || iw > PICTURE_MAX_SIDE || ih > PICTURE_MAX_SIDE) {
        snprintf(err, errlen, _("%s: %d × %d pixels: each side must be 1 to %d"), path, iw, ih,
                 PICTURE_MAX_SIDE);
        fclose(f);
        return -1;
    }
    unsigned char *rgba = stbi_load_from_file(f, &iw, &ih, &comp, 4);
    fclose(f);
    if (rgba == NULL) {
        const char *why = stbi_failure_reason();
        snprintf(err, errlen, _("%s: cannot be decoded: %s"), path,
                 why && *why ? why : _("truncated or corrupt"));
        return -1;
    }
    const size_t n = (size_t)iw * (size_t)ih; /* ≤ 16384², no overflow */
    float *grey = float_alloc(n), *res = float_alloc(S * S);
    if (!grey || !res) {
        stbi_image_free(rgba);
        FREE_EACH(grey, res);
        snprintf(err, errlen, _("%s: out of memory for its %d × %d pixels"), path, iw, ih);
        return -1;
    }
    for (size_t k = 0; k < n; k++) { /* luma in [0, 1], inverted, over black */
        const unsigned char *px = rgba + 4 * k;
        double y = (0.299 * px[0] + 0.587 * px[1] + 0.114 * px[2]) / 255.0;
        grey[k] = (float)((invert ? 1 - y : y) * (px[3] / 255.0));
    }
    stbi_image_free(rgba);
    if (image_resize(res, S, S, grey, (size_t)ih, (size_t)iw, 0) != 0) {
        FREE_EACH(grey, res);
        snprintf(err, errlen, _("%s: out of memory for its %d × %d pixels"), path, iw, ih);
        return -1;
    }
    free(grey);
    *out = res;
    *w = (size_t)iw;
    *h = (size_t)ih;
    return 0;
}
