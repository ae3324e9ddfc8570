/* layers.c — nn.Linear, residual, LayerNorm, ReLU, embedding and
 * cross-entropy, forward and backward (layers.h). */
#include "layers.h"

#include <math.h>
#include <string.h>

#include "fmath.h"

void linear_free(linear *l)
{
    tensor_free(&l->weight);
    tensor_free(&l->bias);
}

void linear_forward(float *y, const float *x, size_t n, const linear *l)
{
    const size_t out = l->weight.shape[0], in = l->weight.shape[1];
    for (size_t r = 0; r < n; r++) {
        const float *x_r = x + r * in; /* (in,) one input row */
        for (size_t o = 0; o < out; o++) {
            const float *w_o = l->weight.data + o * in; /* (in,) row o of weight */
            double sum = l->bias.data ? l->bias.data[o] : 0.0;
            for (size_t i = 0; i < in; i++)
                sum += (double)x_r[i] * w_o[i];
            y[r * out + o] = f32_saturate(sum);
        }
    }
}

void linear_backward(double *dx, double *dweight, double *dbias, const double *dy,
                     const float *x, size_t n, const linear *l)
{
    size_t out = l->weight.shape[0], in = l->weight.shape[1];
    for (size_t r = 0; r < n; r++) {
        const double *dyr = dy + r * out; /* (out,) this row's output gradient */
        const float *xr = x + r * in;     /* (in,) this row's input */
        for (size_t o = 0; o < out; o++) {
            const double g = dyr[o];
            const float *w = l->weight.data + o * in; /* (in,) row o of weight */
            double *dw = dweight + o * in;            /* (in,) row o of dweight */
            if (g == 0.0)
                continue;
            /* dweight[o][i] += dy[r][o] · x[r][i] */
            for (size_t i = 0; i < in; i++)
                dw[i] += g * xr[i];
            /* dbias[o] += dy[r][o] */
            if (dbias)
                dbias[o] += g;
            /* dx[r][i] += dy[r][o] · weight[o][i] */
            if (dx)
                for (size_t i = 0; i < in; i++)
                    dx[r * in + i] += g * w[i];
        }
    }
}

void residual_forward(double *out, const float *inp1, const float *inp2, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = (double)inp1[i] + inp2[i];
}

void residual_backward(double *dinp1, double *dinp2, const double *dout, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        dinp1[i] += dout[i];
        dinp2[i] += dout[i];
    }
}

void layernorm_forward(float *out, double *mean, double *rstd, const double *inp,
                       const float *weight, const float *bias, size_t N, size_t C)
{
    for (size_t r = 0; r < N; r++) {
        const double *x = inp + r * C; /* (C,) this row */
        double m = 0.0, var = 0.0;
        /* the mean over the channels */
        for (size_t i = 0; i < C; i++)
            m += x[i];
        m /= (double)C;
        /* the variance, biased (divided by C), as LayerNorm */
        for (size_t i = 0; i < C; i++) {
            double z = x[i] - m;
            var += z * z;
        }
        var /= (double)C;
        double s = 1.0 / sqrt(var + LAYERNORM_EPS);
        mean[r] = m;
        rstd[r] = s;
        /* normalise, then scale and shift */
        for (size_t i = 0; i < C; i++)
            out[r * C + i] = (float)((x[i] - m) * s * weight[i] + bias[i]);
    }
}

void layernorm_backward(double *dinp, double *dweight, double *dbias, const double *dout,
                        const double *inp, const float *weight, const double *mean,
                        const double *rstd, size_t N, size_t C)
{
    for (size_t r = 0; r < N; r++) {
        const double *x = inp + r * C, *dn = dout + r * C; /* (C,) */
        double mean_dxh = 0.0, mean_dxh_xh = 0.0;
        /* dweight += dout · x̂, dbias += dout, and the two means of dx̂ */
        for (size_t i = 0; i < C; i++) {
            double xh = (x[i] - mean[r]) * rstd[r];
            double dxh = dn[i] * weight[i];
            dweight[i] += dn[i] * xh;
            dbias[i] += dn[i];
            mean_dxh += dxh;
            mean_dxh_xh += dxh * xh;
        }
        mean_dxh /= (double)C;
        mean_dxh_xh /= (double)C;
        /* dinp = rstd (dx̂ − mean(dx̂) − x̂ mean(dx̂ x̂)) */
        for (size_t i = 0; i < C; i++) {
            double xh = (x[i] - mean[r]) * rstd[r];
            double dxh = dn[i] * weight[i];
            dinp[r * C + i] += rstd[r] * (dxh - mean_dxh - xh * mean_dxh_xh);
        }
    }
}

void relu_forward(float *out, const float *inp, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
}

void relu_backward(double *dinp, const double *dout, const float *inp, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (inp[i] > 0.0f)
            dinp[i] += dout[i];
}

void embedding_forward(float *out, const float *table, const int *tokens, const float *P,
                       size_t N, size_t T, size_t C, double scale)
{
    for (size_t n = 0; n < N; n++)
        for (size_t t = 0; t < T; t++) {
            const float *e = table + (size_t)tokens[n * T + t] * C; /* (C,) the token's row */
            float *x = out + (n * T + t) * C;                      /* (C,) */
            for (size_t i = 0; i < C; i++)
                x[i] = (float)(e[i] * scale + (P ? P[t * C + i] : 0.0));
        }
}

void embedding_backward(double *dtable, const double *dout, const int *tokens, size_t n,
                        size_t C, double scale)
{
    for (size_t r = 0; r < n; r++) {
        double *de = dtable + (size_t)tokens[r] * C; /* (C,) the token's row */
        for (size_t i = 0; i < C; i++)
            de[i] += dout[r * C + i] * scale;
    }
}

double crossentropy_forward(const float *logits, const int *targets, size_t N, size_t C,
                            size_t *count, size_t *correct)
{
    size_t n = 0, right = 0;
    double loss = 0.0;
    for (size_t r = 0; r < N; r++) {
        const float *z = logits + r * C; /* (C,) this row's logits */
        double max, sum = 0.0;
        size_t arg = 0;
        if (targets[r] < 0)
            continue;
        /* the largest logit (for numerical stability) and its index */
        max = z[0];
        for (size_t k = 1; k < C; k++)
            if (z[k] > max) {
                max = z[k];
                arg = k;
            }
        /* Σ e^(z − max) */
        for (size_t k = 0; k < C; k++)
            sum += fm_exp((double)z[k] - max);
        /* −log softmax(z)[target] = max + log Σ e^(z − max) − z[target] */
        loss += max + fm_log(sum) - z[targets[r]];
        n++;
        right += arg == (size_t)targets[r];
    }
    if (count)
        *count = n;
    if (correct)
        *correct = right;
    return loss;
}

void crossentropy_backward(double *dlogits, const float *logits, const int *targets, size_t N,
                           size_t C, double scale)
{
    for (size_t r = 0; r < N; r++) {
        const float *z = logits + r * C; /* (C,) */
        double *dz = dlogits + r * C;    /* (C,) */
        double max, sum = 0.0;
        if (targets[r] < 0) {
            memset(dz, 0, C * sizeof *dz);
            continue;
        }
        max = z[0];
        for (size_t k = 1; k < C; k++)
            if (z[k] > max)
                max = z[k];
        /* e^(z − max) and their sum */
        for (size_t k = 0; k < C; k++)
            sum += (dz[k] = fm_exp((double)z[k] - max));
        /* (softmax − one-hot) · scale */
        for (size_t k = 0; k < C; k++)
            dz[k] = (dz[k] / sum - (k == (size_t)targets[r])) * scale;
    }
}

void batchnorm_forward(float *out, const float *inp, size_t N, size_t C)
{
    for (size_t c = 0; c < C; c++) {
        /* the channel's mean and biased variance over the batch */
        double mean = 0, var = 0;
        for (size_t r = 0; r < N; r++)
            mean += inp[r * C + c];
        mean /= (double)N;
        for (size_t r = 0; r < N; r++)
            var += (inp[r * C + c] - mean) * (inp[r * C + c] - mean);
        var /= (double)N;
        /* normalised */
        double rstd = 1.0 / sqrt(var + LAYERNORM_EPS);
        for (size_t r = 0; r < N; r++)
            out[r * C + c] = (float)((inp[r * C + c] - mean) * rstd);
    }
}
