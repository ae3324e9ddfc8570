/* params.h — a model's parameters as a list in state_dict order: each
 * tensor under its PyTorch key, and where its gradient starts in one flat
 * array of gradients laid out in that order (as PyTorch's named_parameters
 * and a flattened .grad). Every model (encoder.h's, seq2seq.h's) lists its
 * tensors here; the optimizers (optim.h) and the model files read the
 * list; and the two starts every nn.Linear and LayerNorm get. */
#ifndef ATTN_PARAMS_H
#define ATTN_PARAMS_H

#include <stddef.h>

#include "rng.h"
#include "tensor.h"

typedef struct tparam {
    char name[64];    /* the state_dict key: "embedding.weight", "W_q.bias", … */
    tensor *t;
    size_t offset;    /* where its gradient starts in the flat array */
} tparam;

/* Append the parameter t under the key prefix + name to a list of *n
 * parameters: its gradient starts at *total, which grows by t's size. */
void tparam_add(tparam *list, size_t *n, size_t *total, const char *prefix,
                const char *name, tensor *t);
/* The gradient of t in the flat array grads laid out by the list; NULL
 * when t is absent (no data) or not in the list. */
double *tparam_grad(const tparam *list, size_t n, double *grads, const tensor *t);
/* The same in the fast paths' float gradients (grads NULL: NULL). */
float *tparam_gradf(const tparam *list, size_t n, float *grads, const tensor *t);
/* The parameter of the list with this state_dict name, or NULL. */
tparam *tparam_find(tparam *list, size_t n, const char *name);
/* Copy every tensor of src's list into dst's (the same model's shapes). */
void tparam_copy(tparam *dst, const tparam *src, size_t n);
/* nn.Linear's default: uniform in ±1/sqrt(in) (weight and bias alike). */
void tparam_uniform(tensor *t, size_t in, rng *r);
/* LayerNorm's start: weight 1, bias 0. */
void tparam_layernorm(tensor *w, tensor *b);

#endif
