/* chunks.c — a batch's chunks run in parallel (chunks.h). */
#include "chunks.h"

#include <stdio.h>

int chunks_run(chunk_fn *fn, void *ctx, size_t n, int nth, char *err, size_t errlen)
{
    int failed = 0;
    char cerr[256] = "";
    (void)nth; /* (unused without OpenMP) */
#pragma omp parallel for schedule(static) num_threads(nth)
    for (size_t c = 0; c < n; c++) {
        char e[256];
        if (fn(ctx, c, e, sizeof e)) {
#pragma omp critical
            {
                failed = 1;
                snprintf(cerr, sizeof cerr, "%s", e);
            }
        }
    }
    if (failed) {
        snprintf(err, errlen, "%s", cerr);
        return -1;
    }
    return 0;
}
