/* params.c — parameter lists and the starts of nn.Linear and LayerNorm
 * (params.h). */
#include "params.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void tparam_add(tparam *list, size_t *n, size_t *total, const char *prefix,
                const char *name, tensor *t)
{
    snprintf(list[*n].name, sizeof list[0].name, "%s%s", prefix, name);
    list[*n].t = t;
    list[*n].offset = *total;
    (*n)++;
    *total += t->size;
}

double *tparam_grad(const tparam *list, size_t n, double *grads, const tensor *t)
{
    if (!t->data)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (list[i].t == t)
            return grads + list[i].offset;
    return NULL;
}

float *tparam_gradf(const tparam *list, size_t n, float *grads, const tensor *t)
{
    if (!grads || !t->data)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (list[i].t == t)
            return grads + list[i].offset;
    return NULL;
}

tparam *tparam_find(tparam *list, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i].name, name) == 0)
            return &list[i];
    return NULL;
}

void tparam_copy(tparam *dst, const tparam *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        memcpy(dst[i].t->data, src[i].t->data, src[i].t->size * sizeof(float));
}

void tparam_uniform(tensor *t, size_t in, rng *r)
{
    const double bound = 1.0 / sqrt((double)in);
    for (size_t i = 0; i < t->size; i++)
        t->data[i] = (float)((2.0 * rng_uniform(r) - 1.0) * bound);
}

void tparam_layernorm(tensor *w, tensor *b)
{
    for (size_t i = 0; i < w->size; i++) {
        w->data[i] = 1.0f;
        b->data[i] = 0.0f;
    }
}
