/* gru.h — PyTorch's nn.GRU as naive loops in double (SPEC.md §11, the
 * recurrent network of --arch bahdanau): one cell's forward and backward
 * pass, and a stack of L layers run step by step through time, forward
 * and then backward with the steps in reverse.
 *
 * Dimensions: B rows (sentences), T steps, I a layer's input width (the
 * first layer's is the input's, the others' d), d the hidden state's.
 * Sequences are time-major, (T, B, ·), as nn.GRU's default layout.
 *
 * One cell, PyTorch's gates r, z, n in that order:
 *   r  = σ(W_ir x + b_ir + W_hr h + b_hr)                         (B, d)
 *   z  = σ(W_iz x + b_iz + W_hz h + b_hz)                         (B, d)
 *   hn = W_hn h + b_hn                                            (B, d)
 *   n  = tanh(W_in x + b_in + r ⊙ hn)                             (B, d)
 *   h' = (1 − z) ⊙ n + z ⊙ h                                      (B, d)
 * weight_ih_l{k} (3d, I) holds the rows [W_ir; W_iz; W_in],
 * weight_hh_l{k} (3d, d) [W_hr; W_hz; W_hn], bias_ih_l{k} and
 * bias_hh_l{k} (3d,) likewise. Layer l > 0 reads layer l − 1's state of
 * the same step.
 */
#ifndef ATTN_GRU_H
#define ATTN_GRU_H

#include <stddef.h>

#include "rnn.h"

/* One layer's parameters (rnn.h), nn.GRU's names for layer k:
 * w_ih (3d, I) weight_ih_l{k}, w_hh (3d, d) weight_hh_l{k}, b_ih and
 * b_hh (3d,) bias_ih_l{k}, bias_hh_l{k}; rnn_layer_free frees them and
 * rnn_layer_init draws nn.GRU's start. */
typedef rnn_layer gru_layer;
/* A layer's gradients (each the size of its tensor), added to. */
typedef rnn_grads gru_grads;

/* 0, or -1 with the reason in err (rnn_layer_free frees what was made). */
int gru_layer_alloc(gru_layer *g, size_t in, size_t d, char *err, size_t errlen);

/* What one cell's forward pass keeps for its backward pass. */
typedef struct gru_trace {
    double *r, *z, *n, *hn; /* (B, d) each */
} gru_trace;

/* One cell: x (B, I), h (B, d) → h_out (B, d), the gates into tr. */
void gru_cell_forward(double *h_out, gru_trace tr, const gru_layer *g, const double *x,
                      const double *h, size_t B);
/* Its backward pass: from dh_out (B, d) = d loss / d h_out, the
 * gradients g +=, dx (B, I) += d loss / d x (dx may be NULL), and dh
 * (B, d) = d loss / d h (overwritten). */
void gru_cell_backward(double *dx, double *dh, const gru_grads *gr, const double *dh_out,
                       gru_trace tr, const gru_layer *g, const double *x, const double *h,
                       size_t B);

/* A stack of L layers over up to Tmax steps of up to Bmax rows. */
typedef struct gru_stack {
    rnn_steps st;           /* the sizes, the states h after each step, h0, a scratch */
    double *r, *z, *n, *hn; /* (L, Tmax, B, d) the gates */
} gru_stack;

/* 0, or -1 with the reason in err (nothing to free then). */
int gru_stack_alloc(gru_stack *s, size_t L, size_t Bmax, size_t Tmax, size_t I, size_t d,
                    char *err, size_t errlen);
void gru_stack_free(gru_stack *s);

/* Start B rows from h0 (L, B, d), or from zeros (h0 NULL). */
void gru_stack_start(gru_stack *s, const double *h0, size_t B);
/* Step t (0, 1, … in order) of every layer: x (B, I) the first layer's
 * input; the states of step t − 1 (or the start) are the cells' h.
 * The last layer's new state is gru_stack_state(s, L − 1, t). */
void gru_stack_step(gru_stack *s, const gru_layer *layers, size_t t, const double *x);
/* Layer l's state after step t (B, d); t = (size_t)-1: the start's. */
const double *gru_stack_state(const gru_stack *s, size_t l, size_t t);

/* Step t's backward pass, the steps taken in reverse (t = T − 1 … 0):
 * dh (L, B, d) holds on entry d loss / d every layer's state after step
 * t, on return d loss / d the states before it (after step t − 1, or the
 * start's: d loss / d h0 once t = 0); the layers run from the top, layer
 * l's input gradient added into layer l − 1's. x (B, I) step t's input,
 * dx (B, I) += its gradient (or NULL); grads (L,) each layer's. */
void gru_stack_step_backward(gru_stack *s, const gru_layer *layers, const gru_grads *grads,
                             size_t t, double *dh, const double *x, double *dx);

/* The whole sequence: x (T, B, I) → out (T, B, d) the last layer's
 * states (gru_stack_state), from h0 (L, B, d) or zeros. */
void gru_stack_forward(gru_stack *s, const gru_layer *layers, const double *x, const double *h0,
                       size_t B, size_t T);
/* Its backward pass: dout (T, B, d) d loss / d the last layer's states
 * (or NULL), dhT (L, B, d) d loss / d the final states (or NULL); grads
 * +=, dx (T, B, I) += (or NULL), dh0 (L, B, d) = d loss / d h0 (or NULL).
 * dh (L, B, d) scratch. */
void gru_stack_backward(gru_stack *s, const gru_layer *layers, const gru_grads *grads,
                        const double *x, const double *dout, const double *dhT, double *dx,
                        double *dh0, double *dh, size_t T);

#endif
