/* page_preview.c — the preview of a large attention page (see page.h):
 * every panel of weights reduced to a small grid of block means, as
 * colour-map entries on the page's one colour scale.
 *
 * Dimensions: P panels (the weights' leading dimensions: examples × heads),
 * Nq queries (a panel's rows), Nk keys (its columns); the grid gq × gk
 * blocks a panel. */
#include "page.h"

#include <math.h>
#include <stdlib.h>

#include "checked.h"

/* The first index of block i of g over n items: ⌊i·n / g⌋, written as
 * i·⌊n/g⌋ + ⌊i·(n mod g) / g⌋ so that nothing overflows (i < g ≤ 128). */
static size_t block_start(size_t i, size_t n, size_t g)
{
    return i * (n / g) + i * (n % g) / g;
}

/* The colour-map entry of v on the scale vmin … vmax: the rule of the
 * page's paintHeatmap (heatmap.js), span 1 when every weight is equal. */
static unsigned char entry_of(double v, double vmin, double vmax)
{
    const double span = vmax > vmin ? vmax - vmin : 1.0;
    const double t = (v - vmin) / span;
    if (!(t > 0))
        return 0;
    if (t >= 1)
        return 255;
    return (unsigned char)fmin(255.0, floor(t * 256.0));
}

int page_preview_make(page_preview *pv, const float *w, size_t P, size_t Nq, size_t Nk)
{
    size_t n, cells, g = PAGE_PREVIEW_GRID;
    float vmin = INFINITY, vmax = -INFINITY;
    pv->index = NULL;
    if (Nq == 0 || Nk == 0 || size_mul(P, Nq, &n) != 0 || size_mul(n, Nk, &n) != 0)
        return -1;
    /* the grid: PAGE_PREVIEW_GRID blocks a side, halved while every
     * panel's blocks together are more than PAGE_PREVIEW_CELLS */
    for (;;) {
        pv->gq = Nq < g ? Nq : g;
        pv->gk = Nk < g ? Nk : g;
        if (size_mul(P, pv->gq, &cells) != 0 || size_mul(cells, pv->gk, &cells) != 0)
            return -1;
        if (cells <= PAGE_PREVIEW_CELLS || g == 1)
            break;
        g /= 2;
    }
    pv->panels = P;
    pv->Nq = Nq;
    pv->Nk = Nk;
    if (!(pv->index = malloc(cells ? cells : 1)))
        return -1;

    /* the colour scale: the least and the greatest weight, in order, a NaN
     * never taken (the page's loop over the float32 weights) */
    for (size_t i = 0; i < n; i++) {
        if (w[i] < vmin)
            vmin = w[i];
        if (w[i] > vmax)
            vmax = w[i];
    }
    pv->vmin = vmin;
    pv->vmax = vmax;

    /* each block's mean, in double, its cells row by row; then its entry */
    for (size_t p = 0; p < P; p++) {
        const float *panel = w + p * Nq * Nk; /* (Nq, Nk) */
        unsigned char *out = pv->index + p * pv->gq * pv->gk; /* (gq, gk) */
        for (size_t bq = 0; bq < pv->gq; bq++) {
            const size_t q0 = block_start(bq, Nq, pv->gq), q1 = block_start(bq + 1, Nq, pv->gq);
            for (size_t bk = 0; bk < pv->gk; bk++) {
                const size_t k0 = block_start(bk, Nk, pv->gk), k1 = block_start(bk + 1, Nk, pv->gk);
                double sum = 0.0;
                for (size_t q = q0; q < q1; q++)
                    for (size_t k = k0; k < k1; k++)
                        sum += panel[q * Nk + k];
                out[bq * pv->gk + bk] =
                    entry_of(sum / (double)((q1 - q0) * (k1 - k0)), vmin, vmax);
            }
        }
    }
    return 0;
}

void page_preview_free(page_preview *pv)
{
    free(pv->index);
    pv->index = NULL;
}
