/* tensor.h — a float32 tensor of up to four dimensions, row-major (the
 * last index fastest), as PyTorch stores a contiguous tensor. A tensor owns
 * its data: tensor_alloc allocates (zeroed), tensor_free releases. An
 * absent optional tensor has data == NULL and ndim == 0.
 */
#ifndef ATTN_TENSOR_H
#define ATTN_TENSOR_H

#include <float.h>
#include <stddef.h>

#define TENSOR_MAX_DIM 4

typedef struct tensor {
    float *data;
    size_t ndim;
    size_t shape[TENSOR_MAX_DIM];
    size_t size; /* shape[0] × … × shape[ndim-1] elements */
} tensor;

/* A zeroed tensor of the given shape. 0, or -1 with "out of memory ..." or
 * "... too large" in err (the element count is overflow-checked). */
int tensor_alloc(tensor *t, size_t ndim, const size_t *shape, char *err, size_t errlen);
/* A zeroed matrix (r, c), or a vector (r,) when c is 0: tensor_alloc's
 * shapes of a model's weights and biases. */
int tensor_alloc2(tensor *t, size_t r, size_t c, char *err, size_t errlen);
void tensor_free(tensor *t);

/* Bytes of a tensor of this shape; -1 when the count overflows size_t. */
int tensor_bytes(size_t ndim, const size_t *shape, size_t *bytes);

/* Memory for a large float buffer (released with free): in huge pages
 * where the system offers them, else plain malloc. NULL when out of memory. */
float *big_floats(size_t bytes);

/* "(2, 4, 100)" */
void tensor_shape_str(char *buf, size_t buflen, size_t ndim, const size_t *shape);

/* A double rounded to float32, saturated to ±FLT_MAX where the float would
 * be ±inf: inputs near float32's limits give huge but finite projections
 * and scores, and a non-finite score never reaches a softmax (inf − inf is
 * NaN). Every sum of the reference loops ends here; the fast loops use it
 * for the rows they redo in double. */
static inline float f32_saturate(double x)
{
    return x > FLT_MAX ? FLT_MAX : x < -FLT_MAX ? -FLT_MAX : (float)x;
}

#endif
