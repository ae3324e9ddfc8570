/* rnn.h — what nn.GRU (gru.h) and nn.LSTM (lstm.h) share as naive loops
 * in double: a layer's four parameters and their gradients, its start,
 * one gate row's two affine maps and their backward pass, and what a
 * stack keeps through time whatever its cell (rnn_steps). The gates'
 * formulas, the cells and the stacks' passes stay in gru.c and lstm.c.
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

/* What a stack of L layers through time keeps whatever its cell: its
 * sizes, each layer's state h after each step, the start, a scratch. */
typedef struct rnn_steps {
    size_t L, Bmax, Tmax, I, d; /* allocated for */
    size_t B;                   /* the rows of the steps run */
    double *h;                  /* (L, Tmax, B, d) each layer's state after each step */
    double *h0;                 /* (L, B, d) the states before step 0 */
    double *dtmp;               /* (B, max(I, d)) scratch */
} rnn_steps;

/* s's buffers and k more (L, Tmax, Bmax, d) ones, *more[i] (the cell's
 * gates), zeroed, every size product checked: 0, or -1 with the reason
 * in err naming what ("a GRU", "an LSTM"); the caller frees what was
 * made (rnn_steps_free and its own). s must start zeroed. */
int rnn_steps_alloc(rnn_steps *s, double **const *more, size_t k, size_t L, size_t Bmax,
                    size_t Tmax, size_t I, size_t d, const char *what, char *err, size_t errlen);
void rnn_steps_free(rnn_steps *s);
/* Layer l's slice of a (L, Tmax, B, d) buffer at step t. */
double *rnn_steps_at(const rnn_steps *s, double *a, size_t l, size_t t);
/* Layer l's state after step t (B, d); t = (size_t)-1: the start's. */
const double *rnn_steps_state(const rnn_steps *s, size_t l, size_t t);
/* Start B rows from h0 (L, B, d), or from zeros (h0 NULL). */
void rnn_steps_start(rnn_steps *s, const double *h0, size_t B);

/* n zeroed doubles (at least one), or NULL. */
double *rnn_zeros(size_t n);
/* dst (n,) = src, or zeros if src is NULL. */
void rnn_copy_or_zero(double *dst, const double *src, size_t n);
/* dst (n,) += src. */
void rnn_add(double *dst, const double *src, size_t n);

#endif
