/* rnn.h — what nn.GRU (gru.h) and nn.LSTM (lstm.h) share as naive loops
 * in double: a layer's four parameters and their gradients, its start,
 * one gate row's two affine maps and their backward pass, and the size
 * checks and buffers of a stack through time. The gates' formulas stay
 * in gru.c and lstm.c.
 *
 * G is the number of gates (3 for the GRU, 4 for the LSTM), d the hidden
 * width, I the layer's input width, B rows.
 */
#ifndef ATTN_RNN_H
#define ATTN_RNN_H

#include <stddef.h>

#include "rng.h"
#include "tensor.h"

/* One layer's parameters, PyTorch's names for layer k; the G gates'
 * rows stacked in PyTorch's order. */
typedef struct rnn_layer {
    tensor w_ih; /* (G·d, I) weight_ih_l{k} */
    tensor w_hh; /* (G·d, d) weight_hh_l{k} */
    tensor b_ih; /* (G·d,)   bias_ih_l{k} */
    tensor b_hh; /* (G·d,)   bias_hh_l{k} */
} rnn_layer;

/* A layer's gradients (each the size of its tensor), added to. */
typedef struct rnn_grads {
    double *w_ih, *w_hh, *b_ih, *b_hh;
} rnn_grads;

/* A layer of G gates: 0, or -1 with the reason in err naming what ("a
 * GRU", "an LSTM"); rnn_layer_free frees what was made. */
int rnn_layer_alloc(rnn_layer *g, size_t G, size_t in, size_t d, const char *what, char *err,
                    size_t errlen);
void rnn_layer_free(rnn_layer *g);
/* PyTorch's start: every weight and bias uniform in ±1/sqrt(d), drawn in
 * the order weight_ih, weight_hh, bias_ih, bias_hh. */
void rnn_layer_init(rnn_layer *g, rng *r);

/* σ(x) = 1 / (1 + e^−x). */
double rnn_sigmoid(double x);

/* Gate row `row` (q·d + j) on one input row xb (I,) and state hb (d,):
 * *gi = W_i[row] · x + b_i[row], *gh = W_h[row] · h + b_h[row]. */
void rnn_row_forward(double *gi, double *gh, const rnn_layer *g, size_t row, const double *xb,
                     const double *hb);
/* Its backward pass from dgi, dgh = d loss / d *gi, *gh: the gradients
 * gr +=, dxb (I,) += d loss / d x (dxb may be NULL), dhb (d,) += d loss
 * / d h. */
void rnn_row_backward(const rnn_grads *gr, double *dxb, double *dhb, const rnn_layer *g,
                      size_t row, double dgi, double dgh, const double *xb, const double *hb);

/* A stack's sizes, checked: cells = L·Tmax·Bmax·d (a buffer over every
 * layer and step), LBd = L·Bmax·d (a state of every layer), Bw =
 * Bmax·max(I, d) (a step's scratch), Bd = Bmax·d. 0, or -1 on overflow. */
int rnn_stack_sizes(size_t L, size_t Bmax, size_t Tmax, size_t I, size_t d, size_t *cells,
                    size_t *LBd, size_t *Bw, size_t *Bd);
/* *ptrs[i] = n zeroed doubles (at least one) for each of the k; 0, or -1
 * if any failed (the caller frees what was made). */
int rnn_calloc_each(double **const *ptrs, size_t k, size_t n);
/* dst (n,) = src, or zeros if src is NULL. */
void rnn_copy_or_zero(double *dst, const double *src, size_t n);

#endif
