/* collapse.c — the same self-attention layer applied again and again,
 * and the two measures of how alike its tokens have become (see
 * collapse.h). */
#include "collapse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "layers.h"
#include "i18n.h"

const char *const collapse_names[COLLAPSE_KINDS] = {"attention", "residual", "addnorm"};

void collapse_measure(const float *X, size_t N, size_t H, double *mean, double *spread,
                      double *residual)
{
    double dist = 0.0, off = 0.0, all = 0.0;
    /* x̄ (H,): the mean token */
    for (size_t j = 0; j < H; j++) {
        mean[j] = 0.0;
        for (size_t i = 0; i < N; i++)
            mean[j] += X[i * H + j];
        mean[j] /= (double)N;
    }
    for (size_t i = 0; i < N; i++) {
        /* |x_i − x̄|², and its part of |X − 1·x̄ᵀ|_F² and of |X|_F² */
        double d2 = 0.0;
        for (size_t j = 0; j < H; j++) {
            const double d = X[i * H + j] - mean[j];
            d2 += d * d;
            all += (double)X[i * H + j] * X[i * H + j];
        }
        off += d2;
        dist += sqrt(d2);
    }
    *spread = dist / (double)N;                /* the mean distance from the mean token */
    *residual = all > 0 ? sqrt(off / all) : 0.0; /* |X − 1·x̄ᵀ|_F / |X|_F */
}

int collapse_layer(float *out, const float *X, size_t B, size_t N, const mha_params *m,
                   const mha_masks *mask, enum collapse_kind kind, char *err, size_t errlen)
{
    const size_t H = m->num_hiddens, n = B * N * H;
    const mha_masks none = {NULL, 0, 0, 0};
    float *att = float_alloc(n + 1);                               /* (B, N, H) MHA(X) */
    float *w = float_alloc(B * m->num_heads * N * N + 1);          /* the weights */
    double *sum = malloc((n + 1) * sizeof *sum);                   /* (B, N, H) X + MHA(X) */
    double *stats = malloc((2 * B * N + 1) * sizeof *stats);       /* LayerNorm's mean, rstd */
    float *ones = float_alloc(H + 1), *zeros = float_alloc(H + 1); /* its weight and bias */
    int status = -1;
    if (!att || !w || !sum || !stats || !ones || !zeros) {
        snprintf(err, errlen, "%s", _("out of memory for a layer of --depth"));
        goto done;
    }
    /* the attention, queries = keys = values = X, eval mode */
    if (mha_forward(att, w, NULL, X, X, X, B, N, N, m, mask ? mask : &none, NULL, err, errlen))
        goto done;
    if (kind == COLLAPSE_ATTENTION) {
        memcpy(out, att, n * sizeof *out);
    } else {
        /* the residual connection: X + MHA(X) */
        residual_forward(sum, X, att, n);
        if (kind == COLLAPSE_RESIDUAL) {
            for (size_t i = 0; i < n; i++)
                out[i] = f32_saturate(sum[i]);
        } else {
            /* add & norm: LayerNorm over each token's H channels */
            for (size_t j = 0; j < H; j++) {
                ones[j] = 1.0f;
                zeros[j] = 0.0f;
            }
            layernorm_forward(out, stats, stats + B * N, sum, ones, zeros, B * N, H);
        }
    }
    status = 0;
done:
    FREE_EACH(att, w, sum, stats, ones, zeros);
    return status;
}
