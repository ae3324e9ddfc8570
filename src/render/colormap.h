/* colormap.h — the layout of attn_cmap, shared by colormap.c and the
 * generated table in colormap_data.c (scripts/gen_colormaps.py). */
#ifndef ATTN_COLORMAP_H
#define ATTN_COLORMAP_H

#include "render.h"

/* Number of tables in attn_cmap_table (Reds, Blues, viridis, gray). */
#define ATTN_CMAP_COUNT 4

struct attn_cmap {
    const char *name;          /* matplotlib's name, e.g. "Blues" */
    unsigned char lut[256][3]; /* (256, 3) RGB, entry i = cmap(i) */
};

extern const attn_cmap attn_cmap_table[ATTN_CMAP_COUNT];

#endif
