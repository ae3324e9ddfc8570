/* picture_wasi.c — the pages' module in place of picture.c: a page has no
 * file of the learner's to read (the module is built without stb_image). */
#include "picture.h"

#include <stdio.h>

#include "i18n.h"

int picture_load_grey(const char *path, size_t S, int invert, float **out, size_t *w, size_t *h,
                      char *err, size_t errlen)
{
    (void)S, (void)invert, (void)w, (void)h;
    *out = NULL;
    snprintf(err, errlen, _("%s: a page reads no image file; run attn itself"), path);
    return -1;
}
