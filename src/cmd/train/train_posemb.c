/* train_posemb.c — the learned P looked at (see train_posemb.h). */
#include "train_posemb.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "cli.h"
#include "output.h"
#include "posenc.h"
#include "i18n.h"

/* G (n, n) = P · Pᵀ for P (n, d): the dot product of every two positions. */
static void gram(float *G, const float *P, size_t n, size_t d)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double s = 0.0;
            for (size_t k = 0; k < d; k++)
                s += (double)P[i * d + k] * P[j * d + k];
            G[i * n + j] = (float)s;
        }
}

/* The mean cosine of neighbouring positions (|i − j| = 1) into *near and of
 * the others (|i − j| ≥ 2) into *far, from G = P·Pᵀ (n, n). */
static void band(const float *G, size_t n, double *near, double *far)
{
    double sn = 0.0, sf = 0.0;
    size_t nn = 0, nf = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double c;
            if (i == j)
                continue;
            c = G[i * n + j] / sqrt((double)G[i * n + i] * G[j * n + j]);
            if (i + 1 == j || j + 1 == i) {
                sn += c;
                nn++;
            } else {
                sf += c;
                nf++;
            }
        }
    *near = nn ? sn / (double)nn : 0.0;
    *far = nf ? sf / (double)nf : 0.0;
}

/* The sinusoid of the model's size S (n, d), and both Gram matrices:
 * Gl of the learned P, Gs of S (n, n). NULL members when memory ran out. */
typedef struct grams {
    float *S, *Gl, *Gs;
} grams;

static int grams_make(grams *g, const tmodel *m)
{
    const size_t n = m->cfg.max_len, d = m->cfg.hiddens;
    size_t nd, nn;
    memset(g, 0, sizeof *g);
    if (size_mul(n, d, &nd) || size_mul(n, n, &nn) || !(g->S = malloc(nd * sizeof(float))) ||
        !(g->Gl = malloc(nn * sizeof(float))) || !(g->Gs = malloc(nn * sizeof(float))))
        return -1;
    posenc_fill(g->S, n, d, 10000.0);
    gram(g->Gl, m->pos_embedding.data, n, d);
    gram(g->Gs, g->S, n, d);
    return 0;
}

static void grams_free(grams *g)
{
    FREE_EACH(g->S, g->Gl, g->Gs);
}

/* ‖P − P₀‖ / ‖P₀‖ for P₀ the pos_embedding tmodel_init(seed) draws: NaN
 * when the model cannot be made again. */
static double moved(const tmodel *m, unsigned long long seed)
{
    tmodel start;
    char err[256];
    double num = 0.0, den = 0.0;
    if (tmodel_alloc(&start, &m->cfg, err, sizeof err))
        return NAN;
    tmodel_init(&start, seed);
    for (size_t i = 0; i < m->pos_embedding.size; i++) {
        const double p0 = start.pos_embedding.data[i], dp = m->pos_embedding.data[i] - p0;
        num += dp * dp;
        den += p0 * p0;
    }
    tmodel_free(&start);
    return den > 0.0 ? sqrt(num / den) : NAN;
}

int train_pos_band_of(train_pos_band *b, const tmodel *m, long long seed)
{
    grams g;
    if (grams_make(&g, m)) {
        grams_free(&g);
        return -1;
    }
    b->moved = seed >= 0 ? moved(m, (unsigned long long)seed) : NAN;
    band(g.Gl, m->cfg.max_len, &b->learned_near, &b->learned_far);
    band(g.Gs, m->cfg.max_len, &b->sinusoid_near, &b->sinusoid_far);
    grams_free(&g);
    return 0;
}

/* One panel drawn alone, with its own colour scale, into img. */
static int draw_one(attn_image *img, const heat_panel *p, const char *xlabel, const char *ylabel,
                    const char *bar, text_font *font, char *err, size_t errlen)
{
    heat_figure fig;
    memset(&fig, 0, sizeof fig);
    fig.panels = p;
    fig.grid_rows = fig.grid_cols = 1;
    fig.xlabel = xlabel;
    fig.ylabel = ylabel;
    fig.vmin = fig.vmax = NAN;
    fig.colorbar_label = bar;
    fig.font = font;
    return output_heatmap_draw(img, &fig, err, errlen);
}

int train_pos_png_write(const void *ctx, text_font *font, FILE *rep)
{
    const train_pos_png *pp = ctx;
    const tmodel *m = pp->m;
    const size_t n = m->cfg.max_len, d = m->cfg.hiddens;
    attn_image top = {0, 0, NULL}, left = {0, 0, NULL}, right = {0, 0, NULL},
               bottom = {0, 0, NULL}, all = {0, 0, NULL};
    heat_panel pl = {m->pos_embedding.data, n, d, "learned P = pos_embedding[0]", NULL, NULL};
    heat_panel gl = {NULL, n, n, "learned P·Pᵀ", NULL, NULL};
    heat_panel gs = {NULL, n, n, "sinusoid P·Pᵀ (the chapter's)", NULL, NULL};
    char err[512], what[160];
    int status = EXIT_RUNTIME;
    grams g;
    if (grams_make(&g, m)) {
        cli_error("%s: out of memory for P·Pᵀ (%zu × %zu)", pp->path, n, n);
        goto done;
    }
    gl.data = g.Gl;
    gs.data = g.Gs;
    /* P on top; under it the two P·Pᵀ side by side, each its own scale */
    if (draw_one(&top, &pl, "dimension", "position", "P", font, err, sizeof err) ||
        draw_one(&left, &gl, "position", "position", "dot product", font, err, sizeof err) ||
        draw_one(&right, &gs, "position", "position", "dot product", font, err, sizeof err) ||
        image_beside(&bottom, &left, &right, err, sizeof err) ||
        image_stack(&all, &top, &bottom, err, sizeof err)) {
        cli_error("%s: %s", pp->path, err);
        goto done;
    }
    snprintf(what, sizeof what, _("the learned P (%zu × %zu) and P·Pᵀ beside the sinusoid's"), n,
             d);
    status = output_png(pp->path, &all, rep, what);
done:
    grams_free(&g);
    image_free(&top);
    image_free(&left);
    image_free(&right);
    image_free(&bottom);
    image_free(&all);
    return status;
}
