/* tensor.c — allocation and shapes of float32 tensors (see tensor.h). */
#include "tensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "os.h"
#include "i18n.h"

int tensor_bytes(size_t ndim, const size_t *shape, size_t *bytes)
{
    size_t n = sizeof(float);
    for (size_t i = 0; i < ndim; i++)
        if (size_mul(n, shape[i], &n) != 0)
            return -1;
    *bytes = n;
    return 0;
}

int tensor_alloc(tensor *t, size_t ndim, const size_t *shape, char *err, size_t errlen)
{
    size_t bytes;
    char s[96];

    memset(t, 0, sizeof *t);
    tensor_shape_str(s, sizeof s, ndim, shape);
    if (ndim > TENSOR_MAX_DIM || tensor_bytes(ndim, shape, &bytes) != 0) {
        snprintf(err, errlen, _("a tensor of shape %s is too large"), s);
        return -1;
    }
    /* calloc(0) may return NULL: keep one element so data is never NULL */
    t->data = calloc(bytes ? bytes / sizeof(float) : 1, sizeof(float));
    if (!t->data) {
        snprintf(err, errlen, _("out of memory for a tensor of shape %s"), s);
        return -1;
    }
    t->ndim = ndim;
    t->size = bytes / sizeof(float);
    for (size_t i = 0; i < ndim; i++)
        t->shape[i] = shape[i];
    return 0;
}

int tensor_alloc2(tensor *t, size_t r, size_t c, char *err, size_t errlen)
{
    size_t shape[2] = {r, c};
    return tensor_alloc(t, c ? 2 : 1, shape, err, errlen);
}

void tensor_free(tensor *t)
{
    free(t->data);
    memset(t, 0, sizeof *t);
}

void tensor_shape_str(char *buf, size_t buflen, size_t ndim, const size_t *shape)
{
    size_t used = 0;
    buf[0] = '\0';
    used += (size_t)snprintf(buf, buflen, "(");
    for (size_t i = 0; i < ndim && used < buflen; i++)
        used += (size_t)snprintf(buf + used, buflen - used, "%s%zu", i ? ", " : "", shape[i]);
    if (ndim == 1 && used < buflen)
        used += (size_t)snprintf(buf + used, buflen - used, ",");
    if (used < buflen)
        snprintf(buf + used, buflen - used, ")");
}

float *big_floats(size_t bytes)
{
    return os_alloc_large(bytes);
}
