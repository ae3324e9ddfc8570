/* train_loop.c — the training loop of attn train (see train_loop.h). */
#include "train_loop.h"

#include "i18n.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "checked.h"
#include "cli.h"
#include "clock.h"

/* The bar after step s: "step s/steps [####....] loss L<text>  R steps/s  S s left". */
static void progress_bar(const train_loop *lp, long s, double elapsed)
{
    char bar[21];
    int fill = lp->steps ? (int)(20 * s / lp->steps) : 20;
    double rate = elapsed > 0 ? (double)s / elapsed : 0.0;
    for (int i = 0; i < 20; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[20] = '\0';
    fprintf(stderr, "\r\033[Kstep %ld/%ld [%s] loss %.4f%s  %.0f steps/s  %.1f s left", s,
            lp->steps, bar, lp->loss, lp->bar_text, rate,
            rate > 0 ? (double)(lp->steps - s) / rate : 0.0);
    fflush(stderr);
}

/* Step s and its progress. */
static int one_step(train_loop *lp, long s, double *last_bar)
{
    const int logged = s == 1 || s == lp->steps || s % lp->every == 0;
    int status;
    lp->bar_text[0] = lp->line_text[0] = '\0';
    if ((status = lp->step(lp, s, logged)) != 0)
        return status;
    if (lp->bar && (s == lp->steps || now_seconds() - *last_bar > 0.1)) {
        *last_bar = now_seconds();
        progress_bar(lp, s, *last_bar - lp->t0);
    } else if (!lp->bar && logged && s % lp->every == 0) {
        fprintf(stderr, _("step %ld/%ld: loss %.4f%s\n"), s, lp->steps, lp->loss, lp->line_text);
    }
    return 0;
}

int train_loop_run(train_loop *lp)
{
    double last_bar = 0.0;
    size_t next = 0;
    int status;
    lp->t0 = now_seconds();
    for (long s = 0;; s++) {
        if (next < lp->nsnap && lp->snap_steps[next] == s &&
            (status = lp->snapshot(lp, next++)) != 0)
            return status;
        if ((status = lp->record(lp, s)) != 0)
            return status;
        if (s == lp->steps)
            break;
        if ((status = one_step(lp, s + 1, &last_bar)) != 0)
            return status;
    }
    lp->seconds = now_seconds() - lp->t0;
    if (lp->bar)
        fputs("\r\033[K", stderr);
    return 0;
}

int train_hist_room(void **hist, size_t n, size_t *cap, size_t size)
{
    size_t c = *cap ? 2 * *cap : 64, bytes;
    void *h;
    if (n < *cap)
        return 0;
    if (size_mul(c, size, &bytes) || !(h = realloc(*hist, bytes))) {
        cli_error("out of memory for the history");
        return EXIT_RUNTIME;
    }
    *hist = h;
    *cap = c;
    return 0;
}
