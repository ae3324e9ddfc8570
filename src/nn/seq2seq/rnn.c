/* rnn.c — what gru.c and lstm.c share (see rnn.h): the parameters, their
 * start, one gate row's affine maps forward and backward, and a stack's
 * sizes and buffers. */
#include "rnn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "fmath.h"
#include "i18n.h"

int rnn_layer_alloc(rnn_layer *g, size_t G, size_t in, size_t d, const char *what, char *err,
                    size_t errlen)
{
    size_t w_ih[2], w_hh[2], b[1];
    memset(g, 0, sizeof *g);
    if (size_mul(G, d, &w_ih[0])) {
        snprintf(err, errlen, _("%s of %zu hidden units is too large"), what, d);
        return -1;
    }
    w_ih[1] = in;
    w_hh[0] = w_ih[0];
    w_hh[1] = d;
    b[0] = w_ih[0];
    return tensor_alloc(&g->w_ih, 2, w_ih, err, errlen) ||
           tensor_alloc(&g->w_hh, 2, w_hh, err, errlen) ||
           tensor_alloc(&g->b_ih, 1, b, err, errlen) || tensor_alloc(&g->b_hh, 1, b, err, errlen);
}

void rnn_layer_free(rnn_layer *g)
{
    tensor_free(&g->w_ih);
    tensor_free(&g->w_hh);
    tensor_free(&g->b_ih);
    tensor_free(&g->b_hh);
}

void rnn_layer_init(rnn_layer *g, rng *r)
{
    const double k = 1.0 / sqrt((double)g->w_hh.shape[1]);
    tensor *ts[] = {&g->w_ih, &g->w_hh, &g->b_ih, &g->b_hh};
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < ts[i]->size; j++)
            ts[i]->data[j] = (float)((2.0 * rng_uniform(r) - 1.0) * k);
}

double rnn_sigmoid(double x)
{
    return 1.0 / (1.0 + fm_exp(-x));
}

void rnn_row_forward(double *gi, double *gh, const rnn_layer *g, size_t row, const double *xb,
                     const double *hb)
{
    const size_t d = g->w_hh.shape[1], I = g->w_ih.shape[1];
    const float *Wi = g->w_ih.data, *Wh = g->w_hh.data;
    /* gi = W_i[row] x + b_i[row] */
    double si = g->b_ih.data[row], sh = g->b_hh.data[row];
    for (size_t k = 0; k < I; k++)
        si += (double)Wi[row * I + k] * xb[k];
    /* gh = W_h[row] h + b_h[row] */
    for (size_t k = 0; k < d; k++)
        sh += (double)Wh[row * d + k] * hb[k];
    *gi = si;
    *gh = sh;
}

void rnn_row_backward(const rnn_grads *gr, double *dxb, double *dhb, const rnn_layer *g,
                      size_t row, double dgi, double dgh, const double *xb, const double *hb)
{
    const size_t d = g->w_hh.shape[1], I = g->w_ih.shape[1];
    const float *Wi = g->w_ih.data, *Wh = g->w_hh.data;
    gr->b_ih[row] += dgi;
    gr->b_hh[row] += dgh;
    /* gi = W_i x + b_i: d W_i += dgi xᵀ, d x += W_iᵀ dgi */
    for (size_t k = 0; k < I; k++) {
        gr->w_ih[row * I + k] += dgi * xb[k];
        if (dxb)
            dxb[k] += (double)Wi[row * I + k] * dgi;
    }
    /* gh = W_h h + b_h: d W_h += dgh hᵀ, d h += W_hᵀ dgh */
    for (size_t k = 0; k < d; k++) {
        gr->w_hh[row * d + k] += dgh * hb[k];
        dhb[k] += (double)Wh[row * d + k] * dgh;
    }
}

double *rnn_zeros(size_t n)
{
    return calloc(n ? n : 1, sizeof(double));
}

int rnn_steps_alloc(rnn_steps *s, double **const *more, size_t k, size_t L, size_t Bmax,
                    size_t Tmax, size_t I, size_t d, const char *what, char *err, size_t errlen)
{
    size_t LB, LTB, cells, LBd, wide;
    int failed = 0;
    /* cells (L, Tmax, Bmax, d), a start (L, Bmax, d), a scratch (Bmax, max(I, d)) */
    if (size_mul(L, Bmax, &LB) || size_mul(LB, Tmax, &LTB) || size_mul(LTB, d, &cells) ||
        size_mul(LB, d, &LBd) || size_mul(Bmax, I > d ? I : d, &wide)) {
        snprintf(err, errlen, _("%s of %zu layers over %zu steps of %zu rows is too large"), what,
                 L, Tmax, Bmax);
        return -1;
    }
    for (size_t i = 0; i < k; i++)
        if (!(*more[i] = rnn_zeros(cells)))
            failed = 1;
    if (failed || !(s->h = rnn_zeros(cells)) || !(s->h0 = rnn_zeros(LBd)) ||
        !(s->dtmp = rnn_zeros(wide))) {
        snprintf(err, errlen, _("out of memory for %s of %zu layers over %zu steps"), what, L, Tmax);
        return -1;
    }
    s->L = L;
    s->Bmax = Bmax;
    s->Tmax = Tmax;
    s->I = I;
    s->d = d;
    return 0;
}

void rnn_steps_free(rnn_steps *s)
{
    FREE_EACH(s->h, s->h0, s->dtmp);
    memset(s, 0, sizeof *s);
}

double *rnn_steps_at(const rnn_steps *s, double *a, size_t l, size_t t)
{
    return a + ((l * s->Tmax + t) * s->B) * s->d;
}

const double *rnn_steps_state(const rnn_steps *s, size_t l, size_t t)
{
    if (t == (size_t)-1)
        return s->h0 + l * s->B * s->d;
    return rnn_steps_at(s, s->h, l, t);
}

void rnn_steps_start(rnn_steps *s, const double *h0, size_t B)
{
    s->B = B;
    rnn_copy_or_zero(s->h0, h0, s->L * B * s->d);
}

void rnn_copy_or_zero(double *dst, const double *src, size_t n)
{
    if (src)
        memcpy(dst, src, n * sizeof *dst);
    else
        memset(dst, 0, n * sizeof *dst);
}

void rnn_add(double *dst, const double *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] += src[i];
}
