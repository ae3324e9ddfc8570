/* optim.h — torch.optim.Adam (its defaults) and plain SGD over a model's
 * parameters, and d2l's gradient clipping: float32 parameters, double
 * gradients (one flat array laid out parameter after parameter, as
 * params.h's lists say), state in double.
 *
 * Adam, step t = 1, 2, …, for every parameter w with gradient g:
 *   m = β1 m + (1 − β1) g          v = β2 v + (1 − β2) g²
 *   m̂ = m / (1 − β1^t)             v̂ = v / (1 − β2^t)
 *   w = w − lr · m̂ / (sqrt(v̂) + eps)       β1 0.9, β2 0.999, eps 1e-8
 * SGD: w = w − lr · g.
 *
 * Clipping (d2l's grad_clipping): norm = sqrt(Σ g²) over every gradient of
 * every parameter; if norm > θ, every g *= θ / norm.
 */
#ifndef ATTN_OPTIM_H
#define ATTN_OPTIM_H

#include <stddef.h>

#include "params.h"

typedef enum optim_kind { OPTIM_ADAM, OPTIM_SGD } optim_kind;

typedef struct optim {
    optim_kind kind;
    double lr;
    double beta1, beta2, eps;
    long t;      /* steps taken */
    double *m;   /* (total,) first moment, Adam only */
    double *v;   /* (total,) second moment */
    size_t total;
} optim;

/* 0, or -1 with "out of memory …" in err. */
int optim_init(optim *o, optim_kind kind, double lr, size_t total, char *err, size_t errlen);
void optim_free(optim *o);
/* One update of the n parameters of a list (params.h) from grads,
 * the flat array the list lays out (o->total gradients). */
void optim_step_params(optim *o, const tparam *params, size_t n, const double *grads);
/* The same on `threads` threads, the parameters shared out among them
 * (each parameter's arithmetic is its own: the same bits). */
void optim_step_threads(optim *o, const tparam *params, size_t n, const double *grads,
                        int threads);
/* d2l's grad_clipping on grads (total,): returns the global norm
 * sqrt(Σ g²), summed in array order (parameter after parameter, one
 * running sum: the same bits on every machine); when theta > 0 and the
 * norm exceeds it, every gradient is multiplied by theta / norm. */
double optim_clip(double *grads, size_t total, double theta);

#endif
