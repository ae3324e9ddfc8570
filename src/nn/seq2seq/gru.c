/* gru.c — PyTorch's nn.GRU as naive loops in double (see gru.h for the
 * cell's equations and the dimensions B, T, I, d, L). The backward pass
 * runs the steps in reverse, and within a step the layers from the top,
 * as llm.c runs its layers: each cell's backward undoes exactly its
 * forward, in the reverse order of its lines.
 *
 * Every product of sizes (L·Tmax·Bmax·d, …) is checked once in
 * gru_stack_alloc; the passes index inside those buffers. */
#include "gru.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "fmath.h"

int gru_layer_alloc(gru_layer *g, size_t in, size_t d, char *err, size_t errlen)
{
    return rnn_layer_alloc(g, 3, in, d, "a GRU", err, errlen);
}

/* ---- one cell ------------------------------------------------------------- */

void gru_cell_forward(double *h_out, gru_trace tr, const gru_layer *g, const double *x,
                      const double *h, size_t B)
{
    const size_t d = g->w_hh.shape[1], I = g->w_ih.shape[1];
    for (size_t b = 0; b < B; b++) {
        const double *xb = x + b * I, *hb = h + b * d;
        for (size_t j = 0; j < d; j++) {
            /* gi[g] = W_i{g} x + b_i{g}, gh[g] = W_h{g} h + b_h{g}, g = r, z, n */
            double gi[3], gh[3];
            for (size_t q = 0; q < 3; q++)
                rnn_row_forward(&gi[q], &gh[q], g, q * d + j, xb, hb);
            const size_t o = b * d + j;
            tr.r[o] = rnn_sigmoid(gi[0] + gh[0]);
            tr.z[o] = rnn_sigmoid(gi[1] + gh[1]);
            tr.hn[o] = gh[2];
            tr.n[o] = fm_tanh(gi[2] + tr.r[o] * gh[2]);
            h_out[o] = (1.0 - tr.z[o]) * tr.n[o] + tr.z[o] * hb[j];
        }
    }
}

void gru_cell_backward(double *dx, double *dh, const gru_grads *gr, const double *dh_out,
                       gru_trace tr, const gru_layer *g, const double *x, const double *h,
                       size_t B)
{
    const size_t d = g->w_hh.shape[1], I = g->w_ih.shape[1];
    for (size_t b = 0; b < B; b++) {
        const double *xb = x + b * I, *hb = h + b * d;
        double *dhb = dh + b * d;
        /* h' = (1 − z) n + z h: its direct share of d h */
        for (size_t j = 0; j < d; j++)
            dhb[j] = dh_out[b * d + j] * tr.z[b * d + j];
        for (size_t j = 0; j < d; j++) {
            const size_t o = b * d + j;
            const double r = tr.r[o], z = tr.z[o], n = tr.n[o], dy = dh_out[o];
            /* n = tanh(gi_n + r ⊙ hn): d of its argument */
            const double dn = dy * (1.0 - z) * (1.0 - n * n);
            /* d gi (r, z, n) and d gh (r, z, n): the pre-activations' gradients */
            const double dr = dn * tr.hn[o] * r * (1.0 - r);
            const double dz = dy * (hb[j] - n) * z * (1.0 - z);
            const double dgi[3] = {dr, dz, dn}, dgh[3] = {dr, dz, dn * r};
            /* through the gates' affine maps: the weights' gradients, dx, dh */
            for (size_t q = 0; q < 3; q++)
                rnn_row_backward(gr, dx ? dx + b * I : NULL, dhb, g, q * d + j, dgi[q], dgh[q],
                                 xb, hb);
        }
    }
}

/* ---- a stack of layers through time --------------------------------------- */

int gru_stack_alloc(gru_stack *s, size_t L, size_t Bmax, size_t Tmax, size_t I, size_t d,
                    char *err, size_t errlen)
{
    double **const gates[] = {&s->r, &s->z, &s->n, &s->hn};
    memset(s, 0, sizeof *s);
    if (rnn_steps_alloc(&s->st, gates, 4, L, Bmax, Tmax, I, d, "a GRU", err, errlen)) {
        gru_stack_free(s);
        return -1;
    }
    return 0;
}

void gru_stack_free(gru_stack *s)
{
    rnn_steps_free(&s->st);
    FREE_EACH(s->r, s->z, s->n, s->hn);
    memset(s, 0, sizeof *s);
}

/* Layer l's buffer a (L, Tmax, B, d) at step t. */
static double *at(const gru_stack *s, double *a, size_t l, size_t t)
{
    return rnn_steps_at(&s->st, a, l, t);
}

static gru_trace trace_at(const gru_stack *s, size_t l, size_t t)
{
    gru_trace tr = {at(s, s->r, l, t), at(s, s->z, l, t), at(s, s->n, l, t), at(s, s->hn, l, t)};
    return tr;
}

void gru_stack_start(gru_stack *s, const double *h0, size_t B)
{
    rnn_steps_start(&s->st, h0, B);
}

const double *gru_stack_state(const gru_stack *s, size_t l, size_t t)
{
    return rnn_steps_state(&s->st, l, t);
}

void gru_stack_step(gru_stack *s, const gru_layer *layers, size_t t, const double *x)
{
    for (size_t l = 0; l < s->st.L; l++) {
        /* layer l: input x (l = 0) or layer l − 1's new state (B, ·) */
        const double *in = l == 0 ? x : gru_stack_state(s, l - 1, t);
        const double *h = gru_stack_state(s, l, t - 1); /* t − 1 = the start at t = 0 */
        gru_cell_forward(at(s, s->st.h, l, t), trace_at(s, l, t), &layers[l], in, h, s->st.B);
    }
}

void gru_stack_step_backward(gru_stack *s, const gru_layer *layers, const gru_grads *grads,
                             size_t t, double *dh, const double *x, double *dx)
{
    const size_t Bd = s->st.B * s->st.d;
    for (size_t l = s->st.L; l-- > 0;) {
        const double *in = l == 0 ? x : gru_stack_state(s, l - 1, t);
        const double *h = gru_stack_state(s, l, t - 1);
        /* the layer's input gradient: into the step's dx (l = 0), or added
         * to layer l − 1's state gradient at this step */
        double *din = l == 0 ? dx : dh + (l - 1) * Bd;
        /* dh_l: after step t on entry, before it on return (via dtmp) */
        memcpy(s->st.dtmp, dh + l * Bd, Bd * sizeof *dh);
        gru_cell_backward(din, dh + l * Bd, &grads[l], s->st.dtmp, trace_at(s, l, t),
                          &layers[l], in, h, s->st.B);
    }
}

void gru_stack_forward(gru_stack *s, const gru_layer *layers, const double *x, const double *h0,
                       size_t B, size_t T)
{
    gru_stack_start(s, h0, B);
    for (size_t t = 0; t < T; t++)
        gru_stack_step(s, layers, t, x + t * B * s->st.I);
}

void gru_stack_backward(gru_stack *s, const gru_layer *layers, const gru_grads *grads,
                        const double *x, const double *dout, const double *dhT, double *dx,
                        double *dh0, double *dh, size_t T)
{
    const size_t B = s->st.B, Bd = B * s->st.d, L = s->st.L;
    rnn_copy_or_zero(dh, dhT, L * Bd);
    for (size_t t = T; t-- > 0;) {
        /* the last layer's output at step t is its state: its gradient joins */
        if (dout)
            rnn_add(dh + (L - 1) * Bd, dout + t * Bd, Bd);
        gru_stack_step_backward(s, layers, grads, t, dh, x + t * B * s->st.I,
                                dx ? dx + t * B * s->st.I : NULL);
    }
    if (dh0)
        memcpy(dh0, dh, L * Bd * sizeof *dh);
}
