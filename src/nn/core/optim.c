/* optim.c — Adam, SGD and gradient clipping (see optim.h). */
#include "optim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmath.h"
#include "lanes.h"
#include "i18n.h"

int optim_init(optim *o, optim_kind kind, double lr, size_t total, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->lr = lr;
    o->beta1 = 0.9;
    o->beta2 = 0.999;
    o->eps = 1e-8;
    o->total = total;
    if (kind == OPTIM_ADAM) {
        o->m = calloc(total ? total : 1, sizeof *o->m);
        o->v = calloc(total ? total : 1, sizeof *o->v);
        if (!o->m || !o->v) {
            optim_free(o);
            snprintf(err, errlen, "%s", _("out of memory for Adam's moments"));
            return -1;
        }
    }
    return 0;
}

void optim_free(optim *o)
{
    free(o->m);
    free(o->v);
    o->m = o->v = NULL;
}

/* One parameter's update, with the bias corrections bc1 and bc2 */
static void step_param(const optim *o, const tparam *param, const double *grads,
                       double bc1, double bc2)
{
    float *w = param->t->data;
    const size_t size = param->t->size, off = param->offset;
    size_t i = 0;
    if (o->kind == OPTIM_ADAM) /* eight at a time, each lane the loop below */
        for (; i + 8 <= size; i += 8) {
            const f64x8 g = v8d_load(grads + off + i), b1 = v8d_splat(o->beta1),
                        b2 = v8d_splat(o->beta2);
            const f64x8 m = b1 * v8d_load(o->m + off + i) + (1.0 - b1) * g;
            const f64x8 v = b2 * v8d_load(o->v + off + i) + (1.0 - b2) * g * g;
            const f64x8 wd = __builtin_convertvector(v8_load(w + i), f64x8);
            const f64x8 u = v8d_splat(o->lr) * (m / bc1) / (v8d_sqrt(v / bc2) + o->eps);
            v8d_store(o->m + off + i, m);
            v8d_store(o->v + off + i, v);
            v8_store(w + i, __builtin_convertvector(wd - u, f32x8));
        }
    for (; i < size; i++) {
        const double g = grads[off + i];
        if (o->kind == OPTIM_SGD) {
            w[i] = (float)(w[i] - o->lr * g);
            continue;
        }
        double *m = o->m + off + i, *v = o->v + off + i;
        *m = o->beta1 * *m + (1.0 - o->beta1) * g;
        *v = o->beta2 * *v + (1.0 - o->beta2) * g * g;
        /* w −= lr · m̂ / (sqrt(v̂) + eps) */
        w[i] = (float)(w[i] - o->lr * (*m / bc1) / (sqrt(*v / bc2) + o->eps));
    }
}

void optim_step_threads(optim *o, const tparam *params, size_t n, const double *grads,
                        int threads)
{
    double bc1 = 1.0, bc2 = 1.0;
    o->t++;
    if (o->kind == OPTIM_ADAM) {
        /* bias corrections 1 − β^t */
        bc1 = 1.0 - fm_pow(o->beta1, (double)o->t);
        bc2 = 1.0 - fm_pow(o->beta2, (double)o->t);
    }
    (void)threads;
    /* each parameter on its own: any thread, the same bits */
#pragma omp parallel for schedule(dynamic) num_threads(threads) if (threads > 1)
    for (size_t p = 0; p < n; p++)
        step_param(o, &params[p], grads, bc1, bc2);
}

void optim_step_params(optim *o, const tparam *params, size_t n, const double *grads)
{
    optim_step_threads(o, params, n, grads, 1);
}

double optim_clip(double *grads, size_t total, double theta)
{
    double sum = 0.0, norm, factor;
    /* Σ g², one running sum in array order */
    for (size_t i = 0; i < total; i++)
        sum += grads[i] * grads[i];
    norm = sqrt(sum);
    if (!(theta > 0.0 && norm > theta))
        return norm;
    /* g *= θ / norm */
    factor = theta / norm;
    for (size_t i = 0; i < total; i++)
        grads[i] *= factor;
    return norm;
}
