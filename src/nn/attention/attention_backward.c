/* attention_backward.c — the chain rule through mha_forward, step by step
 * in reverse (see attention_backward.h; the dimensions of attention.h).
 * Everything is computed in double from the float32 tensors the forward
 * pass kept. */
#include "attention_backward.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "fmath.h"
#include "i18n.h"

static double *alloc_doubles(size_t a, size_t b, int *failed)
{
    size_t n, bytes;
    double *p;
    if (size_mul(a, b, &n) || size_mul(n, sizeof(double), &bytes) ||
        (p = calloc(bytes ? bytes : 1, 1)) == NULL) {
        *failed = 1;
        return NULL;
    }
    return p;
}

/* One side of additive scoring's projection, in double: for each of the
 * rows of X (rows, H), its head's columns x (p,) from col,
 *   y[r] (A,) = W · x,  W (A, p);  dy[r] zeroed. */
static void additive_rows(double *y, double *dy, const float *X, const float *W, size_t rows,
                          size_t H, size_t col, size_t A, size_t p)
{
    for (size_t r = 0; r < rows; r++) {
        const float *x = X + r * H + col; /* (p,) */
        for (size_t a = 0; a < A; a++) {
            double s = 0.0;
            for (size_t c = 0; c < p; c++)
                s += (double)W[a * p + c] * x[c];
            y[r * A + a] = s;
            dy[r * A + a] = 0.0;
        }
    }
}

/* Additive scoring, head h (columns col … col+p−1) of example b:
 *   qa (Nq, A) = Q_h · a_W_qᵀ,  ka (Nk, A) = K_h · a_W_kᵀ
 * recomputed in double from the forward trace; dqa, dka zeroed. */
static void additive_project(double *qa, double *ka, double *dqa, double *dka,
                             const mha_trace *trace, const mha_params *m, size_t b, size_t col,
                             size_t Nq, size_t Nk, size_t A)
{
    const size_t H = m->num_hiddens, p = H / m->num_heads;
    additive_rows(qa, dqa, trace->Q + b * Nq * H, m->a_W_q.weight.data, Nq, H, col, A, p);
    additive_rows(ka, dka, trace->K + b * Nk * H, m->a_W_k.weight.data, Nk, H, col, A, p);
}

/* score = Σ_a w_v[a] · tanh(qa[a] + ka[a]), d score = ds:
 *   t_a = tanh(qa[a] + ka[a]),  dw_v[a] += ds t_a,
 *   dz_a = ds w_v[a] (1 − t_a²),  dqa[a] += dz_a,  dka[a] += dz_a     (A,) */
static void additive_score_backward(double *dqa, double *dka, double *dw_v, const double *qa,
                                    const double *ka, double ds, const mha_params *m, size_t A)
{
    const float *w_v = m->a_w_v.weight.data; /* (1, A) */
    for (size_t a = 0; a < A; a++) {
        const double t = fm_tanh(qa[a] + ka[a]);
        const double dz = ds * w_v[a] * (1.0 - t * t);
        dw_v[a] += ds * t;
        dqa[a] += dz;
        dka[a] += dz;
    }
}

/* additive_rows backward: y = W · x for each row,
 *   dW (A, p) += dyᵀ · X_h,  dX_h (rows, p) += dy · W. */
static void additive_rows_backward(double *dX, double *dW, const double *dy, const float *X,
                                   const float *W, size_t rows, size_t H, size_t col, size_t A,
                                   size_t p)
{
    for (size_t r = 0; r < rows; r++) {
        const float *x = X + r * H + col; /* (p,) */
        double *dx = dX + r * H + col;    /* (p,) */
        for (size_t a = 0; a < A; a++) {
            const double d = dy[r * A + a];
            for (size_t c = 0; c < p; c++) {
                dW[a * p + c] += d * x[c];
                dx[c] += d * W[a * p + c];
            }
        }
    }
}

/* qa = Q_h · a_W_qᵀ:  da_W_q (A, p) += dqaᵀ · Q_h,  dQ_h (Nq, p) += dqa · a_W_q;
 * and the same for ka and K_h. */
static void additive_project_backward(double *dQ, double *dK, const mha_additive_grads *g,
                                      const double *dqa, const double *dka, const mha_trace *trace,
                                      const mha_params *m, size_t b, size_t col, size_t Nq,
                                      size_t Nk, size_t A)
{
    const size_t H = m->num_hiddens, p = H / m->num_heads;
    additive_rows_backward(dQ + b * Nq * H, g->da_W_q, dqa, trace->Q + b * Nq * H,
                           m->a_W_q.weight.data, Nq, H, col, A, p);
    additive_rows_backward(dK + b * Nk * H, g->da_W_k, dka, trace->K + b * Nk * H,
                           m->a_W_k.weight.data, Nk, H, col, A, p);
}

int mha_backward(double *dqueries, double *dkeys, double *dvalues, const mha_grads *g,
                 const double *dout, const float *weights, const mha_trace *trace,
                 const float *queries, const float *keys, const float *values, size_t B, size_t Nq,
                 size_t Nk, const mha_params *m, const mha_masks *mask, const mha_dropout *drop,
                 char *err, size_t errlen)
{
    if (m->score != SCORE_DOT) {
        snprintf(err, errlen, "%s", _("the backward pass covers dot-product scoring only"));
        return -1;
    }
    return mha_backward_additive(dqueries, dkeys, dvalues, g, NULL, dout, weights, trace, queries,
                                 keys, values, B, Nq, Nk, m, mask, drop, err, errlen);
}

int mha_backward_additive(double *dqueries, double *dkeys, double *dvalues, const mha_grads *g,
                          const mha_additive_grads *ga, const double *dout, const float *weights,
                          const mha_trace *trace, const float *queries, const float *keys,
                          const float *values, size_t B, size_t Nq, size_t Nk, const mha_params *m,
                          const mha_masks *mask, const mha_dropout *drop, char *err, size_t errlen)
{
    const size_t H = m->num_hiddens, NH = m->num_heads, p = H / NH;
    const double scale = 1.0 / sqrt((double)p);
    const int dropping = drop && drop->p > 0;
    const double keep_scale = dropping && drop->p < 1.0 ? 1.0 / (1.0 - drop->p) : 0.0;
    int failed = 0, status = -1;
    size_t nq, nk;

    const size_t SA = m->score == SCORE_ADDITIVE ? m->a_W_q.weight.shape[0] : 0;
    if (SA && (!ga || !ga->da_W_q || !ga->da_W_k || !ga->da_w_v)) {
        snprintf(err, errlen, "%s", _("the additive score's backward pass needs its gradients"));
        return -1;
    }
    if (!trace || !trace->Q || !trace->K || !trace->V || !trace->concat) {
        snprintf(err, errlen, "%s", _("the backward pass needs the forward trace's Q, K, V and concat"));
        return -1;
    }
    if (size_mul(B, Nq, &nq) || size_mul(B, Nk, &nk)) {
        snprintf(err, errlen, "%s", _("the attention buffers are too large"));
        return -1;
    }
    double *dconcat = alloc_doubles(nq, H, &failed); /* (B, Nq, H) */
    double *dQ = alloc_doubles(nq, H, &failed);      /* (B, Nq, H) */
    double *dK = alloc_doubles(nk, H, &failed);      /* (B, Nk, H) */
    double *dV = alloc_doubles(nk, H, &failed);      /* (B, Nk, H) */
    double *dA = alloc_doubles(Nk, 1, &failed);      /* (Nk,) one query's d weights */
    /* additive scoring (SA hidden units), one (b, h) at a time:
     * qa = Q_h · a_W_qᵀ, ka = K_h · a_W_kᵀ and their gradients */
    double *qa = alloc_doubles(Nq, SA, &failed);  /* (Nq, A) */
    double *ka = alloc_doubles(Nk, SA, &failed);  /* (Nk, A) */
    double *dqa = alloc_doubles(Nq, SA, &failed); /* (Nq, A) */
    double *dka = alloc_doubles(Nk, SA, &failed); /* (Nk, A) */
    if (failed) {
        snprintf(err, errlen, "%s", _("out of memory for the attention gradients"));
        goto done;
    }

    /* 6. output = concat · W_oᵀ (+ b_o):
     *    dW_o (H, H) += doutᵀ · concat,  db_o (H,) += Σ dout,
     *    dconcat (B, Nq, H) = dout · W_o */
    linear_backward(dconcat, g->dW_o, g->db_o, dout, trace->concat, nq, &m->W_o);
    /*    a head switched off is a constant 0 in the concat: no gradient */
    for (size_t i = 0; m->heads_on && i < nq; i++)
        for (size_t h = 0; h < NH; h++)
            if (!m->heads_on[h])
                memset(dconcat + i * H + h * p, 0, p * sizeof *dconcat);

    for (size_t b = 0; b < B; b++) {
        for (size_t h = 0; h < NH; h++) {
            const size_t col = h * p; /* head h owns columns col … col+p−1 */
            if (SA)
                additive_project(qa, ka, dqa, dka, trace, m, b, col, Nq, Nk, SA);
            for (size_t q = 0; q < Nq; q++) {
                const size_t row = ((b * NH + h) * Nq + q) * Nk;     /* offset of (b, h, q, 0) */
                const float *A = weights + row;                      /* (Nk,) softmax weights */
                const double *dO = dconcat + (b * Nq + q) * H + col; /* (p,) d head output */
                double dot = 0.0;

                /* 5. head = Σ_k a_k V_h[k], a the weights after dropout:
                 *    da_k (Nk,) = dO · V_h[k],  dV_h[k] (p,) += a_k dO */
                for (size_t k = 0; k < Nk; k++) {
                    const float *v = trace->V + (b * Nk + k) * H + col; /* (p,) */
                    double *dv = dV + (b * Nk + k) * H + col;           /* (p,) */
                    double a = A[k], s = 0.0;
                    /* dropout: a = A · mask / (1 − p); the same mask backwards */
                    int keep = !dropping || mha_dropout_keep(drop, row + k);
                    if (dropping)
                        a = keep ? a * keep_scale : 0.0;
                    for (size_t c = 0; c < p; c++) {
                        s += dO[c] * v[c];
                        dv[c] += a * dO[c];
                    }
                    /* dA_k = da_k · mask / (1 − p) */
                    dA[k] = dropping ? (keep ? s * keep_scale : 0.0) : s;
                }

                /* 4. softmax backward over the keys:
                 *    dS_k = A_k (dA_k − Σ_j dA_j A_j)   (Nk,) */
                for (size_t k = 0; k < Nk; k++)
                    dot += dA[k] * A[k];
                for (size_t k = 0; k < Nk; k++) {
                    /* 3. masked keys hold the constant −1e6: no gradient */
                    double dS = mha_is_masked(mask, b, q, k, Nq) ? 0.0 : A[k] * (dA[k] - dot);
                    /* 2. dot: scaled = scores / sqrt(p), d scores = dS / sqrt(p);
                     *    additive: scores unscaled */
                    double ds = SA ? dS : dS * scale;
                    const float *qq = trace->Q + (b * Nq + q) * H + col; /* (p,) Q_h[q] */
                    const float *kk = trace->K + (b * Nk + k) * H + col; /* (p,) K_h[k] */
                    double *dq = dQ + (b * Nq + q) * H + col;            /* (p,) */
                    double *dk = dK + (b * Nk + k) * H + col;            /* (p,) */
                    if (ds == 0.0)
                        continue;
                    if (SA) {
                        additive_score_backward(dqa + q * SA, dka + k * SA, ga->da_w_v, qa + q * SA,
                                                ka + k * SA, ds, m, SA);
                        continue;
                    }
                    /* scores = Q_h[q] · K_h[k]: dQ_h[q] += ds K_h[k], dK_h[k] += ds Q_h[q] */
                    for (size_t c = 0; c < p; c++) {
                        dq[c] += ds * kk[c];
                        dk[c] += ds * qq[c];
                    }
                }
            }
            if (SA)
                additive_project_backward(dQ, dK, ga, dqa, dka, trace, m, b, col, Nq, Nk, SA);
        }
    }

    /* 1. Q = queries · W_qᵀ (+ b_q), K = keys · W_kᵀ, V = values · W_vᵀ:
     *    dW_q (H, Dq) += dQᵀ · queries, dqueries (B, Nq, Dq) += dQ · W_q,
     *    and the same for K and V */
    linear_backward(dqueries, g->dW_q, g->db_q, dQ, queries, nq, &m->W_q);
    linear_backward(dkeys, g->dW_k, g->db_k, dK, keys, nk, &m->W_k);
    linear_backward(dvalues, g->dW_v, g->db_v, dV, values, nk, &m->W_v);
    status = 0;
done:
    free(dconcat);
    free(dQ);
    free(dK);
    free(dV);
    free(dA);
    free(qa);
    free(ka);
    free(dqa);
    free(dka);
    return status;
}
