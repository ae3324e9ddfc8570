/* lstm.c — PyTorch's nn.LSTM as naive loops in double (see lstm.h for the
 * cell's equations and the dimensions B, T, I, d, L). As gru.c: the
 * backward pass runs the steps in reverse, and within a step the layers
 * from the top; each cell's backward undoes its forward line by line.
 *
 * Every product of sizes (L·Tmax·Bmax·d, …) is checked once in
 * lstm_stack_alloc; the passes index inside those buffers. */
#include "lstm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "fmath.h"
#include "i18n.h"

int lstm_layer_alloc(lstm_layer *g, size_t in, size_t d, char *err, size_t errlen)
{
    return rnn_layer_alloc(g, 4, in, d, "an LSTM", err, errlen);
}

/* ---- one cell ------------------------------------------------------------- */

void lstm_cell_forward(double *h_out, double *c_out, lstm_trace tr, const lstm_layer *g,
                       const double *x, const double *h, const double *c, size_t B)
{
    const size_t d = g->w_hh.shape[1], I = g->w_ih.shape[1];
    for (size_t b = 0; b < B; b++) {
        const double *xb = x + b * I, *hb = h + b * d;
        for (size_t j = 0; j < d; j++) {
            /* a[q] = W_i{q} x + b_i{q} + W_h{q} h + b_h{q}, q = i, f, g, o */
            double a[4];
            for (size_t q = 0; q < 4; q++) {
                double si, sh;
                rnn_row_forward(&si, &sh, g, q * d + j, xb, hb);
                a[q] = si + sh;
            }
            const size_t o = b * d + j;
            tr.i[o] = rnn_sigmoid(a[0]);
            tr.f[o] = rnn_sigmoid(a[1]);
            tr.g[o] = fm_tanh(a[2]);
            tr.o[o] = rnn_sigmoid(a[3]);
            /* c' = f c + i g; h' = o tanh(c') */
            c_out[o] = tr.f[o] * c[o] + tr.i[o] * tr.g[o];
            tr.tc[o] = fm_tanh(c_out[o]);
            h_out[o] = tr.o[o] * tr.tc[o];
        }
    }
}

void lstm_cell_backward(double *dx, double *dh, double *dc, const lstm_grads *gr,
                        const double *dh_out, const double *dc_out, lstm_trace tr,
                        const lstm_layer *g, const double *x, const double *h, const double *c,
                        size_t B)
{
    const size_t d = g->w_hh.shape[1], I = g->w_ih.shape[1];
    for (size_t b = 0; b < B; b++) {
        const double *xb = x + b * I, *hb = h + b * d;
        double *dhb = dh + b * d;
        memset(dhb, 0, d * sizeof *dhb);
        for (size_t j = 0; j < d; j++) {
            const size_t o = b * d + j;
            const double gi = tr.i[o], gf = tr.f[o], gg = tr.g[o], go = tr.o[o], tc = tr.tc[o];
            /* h' = o tanh(c'): d o, and d c' gathers h's share with dc_out */
            const double dgo = dh_out[o] * tc;
            const double dct = dc_out[o] + dh_out[o] * go * (1.0 - tc * tc);
            /* c' = f c + i g: d i, d f, d g and d c */
            const double dgi = dct * gg, dgf = dct * c[o], dgg = dct * gi;
            dc[o] = dct * gf;
            /* the pre-activations' gradients (σ' = s(1 − s), tanh' = 1 − t²),
             * the same for the input's and the state's halves */
            const double da[4] = {dgi * gi * (1.0 - gi), dgf * gf * (1.0 - gf),
                                  dgg * (1.0 - gg * gg), dgo * go * (1.0 - go)};
            /* through the gates' affine maps: the weights' gradients, dx, dh */
            for (size_t q = 0; q < 4; q++)
                rnn_row_backward(gr, dx ? dx + b * I : NULL, dhb, g, q * d + j, da[q], da[q], xb,
                                 hb);
        }
    }
}

/* ---- a stack of layers through time --------------------------------------- */

int lstm_stack_alloc(lstm_stack *s, size_t L, size_t Bmax, size_t Tmax, size_t I, size_t d,
                     char *err, size_t errlen)
{
    double **const cells[] = {&s->c, &s->i, &s->f, &s->g, &s->o, &s->tc};
    memset(s, 0, sizeof *s);
    if (rnn_steps_alloc(&s->st, cells, 6, L, Bmax, Tmax, I, d, "an LSTM", err, errlen)) {
        lstm_stack_free(s);
        return -1;
    }
    /* the cells' start (L, Bmax, d) and scratch (Bmax, d): products
     * rnn_steps_alloc checked */
    if (!(s->c0 = rnn_zeros(L * Bmax * d)) || !(s->dctmp = rnn_zeros(Bmax * d))) {
        lstm_stack_free(s);
        snprintf(err, errlen, _("out of memory for an LSTM of %zu layers over %zu steps"), L, Tmax);
        return -1;
    }
    return 0;
}

void lstm_stack_free(lstm_stack *s)
{
    rnn_steps_free(&s->st);
    FREE_EACH(s->c, s->i, s->f, s->g, s->o, s->tc, s->c0, s->dctmp);
    memset(s, 0, sizeof *s);
}

/* Layer l's buffer a (L, Tmax, B, d) at step t. */
static double *at(const lstm_stack *s, double *a, size_t l, size_t t)
{
    return rnn_steps_at(&s->st, a, l, t);
}

static lstm_trace trace_at(const lstm_stack *s, size_t l, size_t t)
{
    lstm_trace tr = {at(s, s->i, l, t), at(s, s->f, l, t), at(s, s->g, l, t), at(s, s->o, l, t),
                     at(s, s->tc, l, t)};
    return tr;
}

void lstm_stack_start(lstm_stack *s, const double *h0, const double *c0, size_t B)
{
    rnn_steps_start(&s->st, h0, B);
    rnn_copy_or_zero(s->c0, c0, s->st.L * B * s->st.d);
}

const double *lstm_stack_state(const lstm_stack *s, size_t l, size_t t)
{
    return rnn_steps_state(&s->st, l, t);
}

const double *lstm_stack_cell(const lstm_stack *s, size_t l, size_t t)
{
    if (t == (size_t)-1)
        return s->c0 + l * s->st.B * s->st.d;
    return at(s, s->c, l, t);
}

void lstm_stack_step(lstm_stack *s, const lstm_layer *layers, size_t t, const double *x)
{
    for (size_t l = 0; l < s->st.L; l++) {
        /* layer l: input x (l = 0) or layer l − 1's new h (B, ·) */
        const double *in = l == 0 ? x : lstm_stack_state(s, l - 1, t);
        const double *h = lstm_stack_state(s, l, t - 1); /* t − 1 = the start at t = 0 */
        const double *c = lstm_stack_cell(s, l, t - 1);
        lstm_cell_forward(at(s, s->st.h, l, t), at(s, s->c, l, t), trace_at(s, l, t),
                          &layers[l], in, h, c, s->st.B);
    }
}

void lstm_stack_step_backward(lstm_stack *s, const lstm_layer *layers, const lstm_grads *grads,
                              size_t t, double *dh, double *dc, const double *x, double *dx)
{
    const size_t Bd = s->st.B * s->st.d;
    for (size_t l = s->st.L; l-- > 0;) {
        const double *in = l == 0 ? x : lstm_stack_state(s, l - 1, t);
        const double *h = lstm_stack_state(s, l, t - 1), *c = lstm_stack_cell(s, l, t - 1);
        /* the layer's input gradient: into the step's dx (l = 0), or added
         * to layer l − 1's h gradient at this step */
        double *din = l == 0 ? dx : dh + (l - 1) * Bd;
        /* dh_l, dc_l: after step t on entry, before it on return */
        memcpy(s->st.dtmp, dh + l * Bd, Bd * sizeof *dh);
        memcpy(s->dctmp, dc + l * Bd, Bd * sizeof *dc);
        lstm_cell_backward(din, dh + l * Bd, dc + l * Bd, &grads[l], s->st.dtmp, s->dctmp,
                           trace_at(s, l, t), &layers[l], in, h, c, s->st.B);
    }
}

void lstm_stack_forward(lstm_stack *s, const lstm_layer *layers, const double *x,
                        const double *h0, const double *c0, size_t B, size_t T)
{
    lstm_stack_start(s, h0, c0, B);
    for (size_t t = 0; t < T; t++)
        lstm_stack_step(s, layers, t, x + t * B * s->st.I);
}

void lstm_stack_backward(lstm_stack *s, const lstm_layer *layers, const lstm_grads *grads,
                         const double *x, const double *dout, const double *dhT,
                         const double *dcT, double *dx, double *dh, double *dc, size_t T)
{
    const size_t B = s->st.B, Bd = B * s->st.d, L = s->st.L;
    rnn_copy_or_zero(dh, dhT, L * Bd);
    rnn_copy_or_zero(dc, dcT, L * Bd);
    for (size_t t = T; t-- > 0;) {
        /* the last layer's output at step t is its h: its gradient joins */
        if (dout)
            rnn_add(dh + (L - 1) * Bd, dout + t * Bd, Bd);
        lstm_stack_step_backward(s, layers, grads, t, dh, dc, x + t * B * s->st.I,
                                 dx ? dx + t * B * s->st.I : NULL);
    }
}
