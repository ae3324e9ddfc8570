/* lstm.h — PyTorch's nn.LSTM as naive loops in double (SPEC.md §15, the
 * recurrent network of --arch bahdanau --rnn lstm): one cell's forward
 * and backward pass, and a stack of L layers run step by step through
 * time, forward and then backward with the steps in reverse. The same
 * shape as gru.h, with a second state: the cell c beside the hidden h.
 *
 * Dimensions: B rows (sentences), T steps, I a layer's input width (the
 * first layer's is the input's, the others' d), d the hidden state's.
 * Sequences are time-major, (T, B, ·), as nn.LSTM's default layout.
 *
 * One cell, PyTorch's gates i, f, g, o in that order:
 *   i  = σ(W_ii x + b_ii + W_hi h + b_hi)                         (B, d)
 *   f  = σ(W_if x + b_if + W_hf h + b_hf)                         (B, d)
 *   g  = tanh(W_ig x + b_ig + W_hg h + b_hg)                      (B, d)
 *   o  = σ(W_io x + b_io + W_ho h + b_ho)                         (B, d)
 *   c' = f ⊙ c + i ⊙ g                                            (B, d)
 *   h' = o ⊙ tanh(c')                                             (B, d)
 * weight_ih_l{k} (4d, I) holds the rows [W_ii; W_if; W_ig; W_io],
 * weight_hh_l{k} (4d, d) [W_hi; W_hf; W_hg; W_ho], bias_ih_l{k} and
 * bias_hh_l{k} (4d,) likewise. Layer l > 0 reads layer l − 1's h of the
 * same step.
 */
#ifndef ATTN_LSTM_H
#define ATTN_LSTM_H

#include <stddef.h>

#include "rnn.h"

/* One layer's parameters (rnn.h), nn.LSTM's names for layer k:
 * w_ih (4d, I) weight_ih_l{k}, w_hh (4d, d) weight_hh_l{k}, b_ih and
 * b_hh (4d,) bias_ih_l{k}, bias_hh_l{k}; rnn_layer_free frees them and
 * rnn_layer_init draws nn.LSTM's start. */
typedef rnn_layer lstm_layer;
/* A layer's gradients (each the size of its tensor), added to. */
typedef rnn_grads lstm_grads;

/* 0, or -1 with the reason in err (rnn_layer_free frees what was made). */
int lstm_layer_alloc(lstm_layer *g, size_t in, size_t d, char *err, size_t errlen);

/* What one cell's forward pass keeps for its backward pass. */
typedef struct lstm_trace {
    double *i, *f, *g, *o; /* (B, d) each: the gates */
    double *tc;            /* (B, d) tanh(c') */
} lstm_trace;

/* One cell: x (B, I), (h, c) (B, d) each → (h_out, c_out), the gates
 * into tr. */
void lstm_cell_forward(double *h_out, double *c_out, lstm_trace tr, const lstm_layer *g,
                       const double *x, const double *h, const double *c, size_t B);
/* Its backward pass: from dh_out, dc_out (B, d) = d loss / d h_out,
 * c_out, the gradients gr +=, dx (B, I) += d loss / d x (dx may be NULL),
 * and dh, dc (B, d) = d loss / d h, c (overwritten). */
void lstm_cell_backward(double *dx, double *dh, double *dc, const lstm_grads *gr,
                        const double *dh_out, const double *dc_out, lstm_trace tr,
                        const lstm_layer *g, const double *x, const double *h, const double *c,
                        size_t B);

/* A stack of L layers over up to Tmax steps of up to Bmax rows. */
typedef struct lstm_stack {
    rnn_steps st;               /* the sizes, the states h after each step, h0, a scratch */
    double *c;                  /* (L, Tmax, B, d) each layer's cell after each step */
    double *i, *f, *g, *o, *tc; /* (L, Tmax, B, d) the gates and tanh(c') */
    double *c0;                 /* (L, B, d) the cells before step 0 */
    double *dctmp;              /* (B, d) scratch */
} lstm_stack;

/* 0, or -1 with the reason in err (nothing to free then). */
int lstm_stack_alloc(lstm_stack *s, size_t L, size_t Bmax, size_t Tmax, size_t I, size_t d,
                     char *err, size_t errlen);
void lstm_stack_free(lstm_stack *s);

/* Start B rows from h0 and c0 (L, B, d) each, or from zeros (NULL). */
void lstm_stack_start(lstm_stack *s, const double *h0, const double *c0, size_t B);
/* Step t (0, 1, … in order) of every layer: x (B, I) the first layer's
 * input; the states of step t − 1 (or the start) are the cells'. */
void lstm_stack_step(lstm_stack *s, const lstm_layer *layers, size_t t, const double *x);
/* Layer l's h (or c) after step t (B, d); t = (size_t)-1: the start's. */
const double *lstm_stack_state(const lstm_stack *s, size_t l, size_t t);
const double *lstm_stack_cell(const lstm_stack *s, size_t l, size_t t);

/* Step t's backward pass, the steps taken in reverse (t = T − 1 … 0):
 * dh and dc (L, B, d) hold on entry d loss / d every layer's h and c
 * after step t, on return d loss / d those before it; the layers run from
 * the top, layer l's input gradient added into layer l − 1's dh. x (B, I)
 * step t's input, dx (B, I) += its gradient (or NULL); grads (L,). */
void lstm_stack_step_backward(lstm_stack *s, const lstm_layer *layers, const lstm_grads *grads,
                              size_t t, double *dh, double *dc, const double *x, double *dx);

/* The whole sequence: x (T, B, I) → out (T, B, d) the last layer's h
 * (lstm_stack_state), from h0, c0 (L, B, d) or zeros. */
void lstm_stack_forward(lstm_stack *s, const lstm_layer *layers, const double *x,
                        const double *h0, const double *c0, size_t B, size_t T);
/* Its backward pass: dout (T, B, d) d loss / d the last layer's h (or
 * NULL), dhT and dcT (L, B, d) d loss / d the final states (or NULL);
 * grads +=, dx (T, B, I) += (or NULL); dh and dc (L, B, d) end as d loss /
 * d h0 and c0. */
void lstm_stack_backward(lstm_stack *s, const lstm_layer *layers, const lstm_grads *grads,
                         const double *x, const double *dout, const double *dhT,
                         const double *dcT, double *dx, double *dh, double *dc, size_t T);

#endif
