/* colormap.c — looking colours up in matplotlib's 256-entry tables. */
#include <math.h>
#include <string.h>

#include "colormap.h"

const attn_cmap *cmap_find(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < ATTN_CMAP_COUNT; i++)
        if (strcmp(attn_cmap_table[i].name, name) == 0)
            return &attn_cmap_table[i];
    return NULL;
}

const char *cmap_names(void)
{
    return "Reds, Blues, viridis, gray";
}

const char *cmap_name(const attn_cmap *cmap)
{
    return cmap ? cmap->name : NULL;
}

/* matplotlib's Colormap.__call__ for a float x and N = 256: x * N is
 * truncated to an index, x == 1 maps to N - 1, below 0 to the "under"
 * colour (entry 0), above 1 to "over" (entry N - 1). We return entry 0 for
 * NaN, where matplotlib would give its transparent "bad" colour. */
attn_rgb cmap_color(const attn_cmap *cmap, double t)
{
    attn_rgb c = {0, 0, 0};
    if (cmap == NULL)
        return c;
    int i;
    if (!(t > 0.0))             /* t <= 0 or NaN */
        i = 0;
    else if (t >= 1.0)
        i = 255;
    else {
        i = (int)floor(t * 256.0);
        if (i > 255)
            i = 255;
    }
    c.r = cmap->lut[i][0];
    c.g = cmap->lut[i][1];
    c.b = cmap->lut[i][2];
    return c;
}
