/* test_vit.c — nn/vision/vit.h, d2l.ai 11.8's Vision Transformer, against
 * PyTorch (tests/ref/vit/vit_ref.json, written by scripts/gen_vit_ref.py
 * from d2l's ViT with dropout 0): the logits, the loss, every parameter's
 * gradient (by the reference loops and by the fast path), and two SGD
 * steps; the fast path against the reference at the default sizes, with
 * and without dropout; GELU against known values; the rollout against
 * the product of whole matrices; dropout drawn the same way in the
 * forward and backward passes.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "json_in.h"
#include "layers.h"
#include "optim.h"
#include "rng.h"
#include "vit.h"

static size_t cfg_num(const cJSON *cfg, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cfg, key);
    CHECK(cJSON_IsNumber(v));
    return cJSON_IsNumber(v) ? (size_t)v->valuedouble : 0;
}

/* out (n,) ← the JSON array a of n numbers */
static void read_floats(float *out, const cJSON *a, size_t n)
{
    CHECK(cJSON_IsArray(a) && (size_t)cJSON_GetArraySize(a) == n);
    size_t i = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, a)
    {
        if (i < n)
            out[i] = (float)v->valuedouble;
        i++;
    }
}

/* every got[i] within atol + rtol·|want| of the array a; the worst
 * difference printed */
static void compare(const char *what, const double *got, const cJSON *a, size_t n, double atol,
                    double rtol)
{
    CHECK(cJSON_IsArray(a) && (size_t)cJSON_GetArraySize(a) == n);
    double worst = 0;
    size_t i = 0, bad = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, a)
    {
        if (i >= n)
            break;
        double diff = fabs(got[i] - v->valuedouble);
        if (diff > worst)
            worst = diff;
        if (!(diff <= atol + rtol * fabs(v->valuedouble))) {
            if (bad < 3)
                fprintf(stderr, "  %s[%zu] = %.9g, want %.9g\n", what, i, got[i],
                        v->valuedouble);
            bad++;
        }
        i++;
    }
    check_count++;
    if (bad) {
        check_failed++;
        fprintf(stderr, "%s: %zu of %zu differ (worst %.3g)\n", what, bad, n, worst);
    }
}

/* The batch's mean cross-entropy and, when grads is not NULL, its
 * gradients (zeroed first). */
static double batch_loss_drop(vit_model *m, vit_work *w, const float *images,
                              const int *labels, size_t B, double *logits_out, double *grads,
                              double p, unsigned long long seed)
{
    const size_t Q = m->cfg.classes, img = m->cfg.channels * m->cfg.img * m->cfg.img;
    float logits[16];
    double dlogits[16], loss = 0;
    char err[256];
    if (grads)
        memset(grads, 0, m->total * sizeof(double));
    for (size_t b = 0; b < B; b++) {
        vit_drop drop = {p, seed ? vit_drop_seed(seed, 1, b) : 0};
        CHECK(vit_forward(w, logits, m, images + b * img, &drop, err, sizeof err) == 0);
        if (logits_out)
            for (size_t q = 0; q < Q; q++)
                logits_out[b * Q + q] = logits[q];
        loss += crossentropy_forward(logits, labels + b, 1, Q, NULL, NULL);
        if (grads) {
            crossentropy_backward(dlogits, logits, labels + b, 1, Q, 1.0 / (double)B);
            CHECK(vit_backward(w, grads, dlogits, m, images + b * img, &drop, err, sizeof err) ==
                  0);
        }
    }
    return loss / (double)B;
}

static double batch_loss(vit_model *m, vit_work *w, const float *images, const int *labels,
                         size_t B, double *logits_out, double *grads)
{
    return batch_loss_drop(m, w, images, labels, B, logits_out, grads, 0.0, 0);
}

/* With dropout 0.3 (every site: the embedding, the attention weights,
 * after GELU, after dense2), the backward pass drops what the forward
 * pass dropped: its gradients against central differences of the loss
 * (h = 1e-2 on float32 weights: within 2e-3 relative) for 24 weights
 * spread over every parameter; and the same seed gives the same logits,
 * another seed others. */
static void test_dropout(vit_model *m, vit_work *w, const float *images, const int *labels,
                         size_t B)
{
    const double p = 0.3;
    const unsigned long long seed = 77;
    double *g = calloc(m->total, sizeof(double)), l1[8 * 16], l2[8 * 16];
    CHECK(g != NULL);
    if (!g)
        return;
    batch_loss_drop(m, w, images, labels, B, l1, g, p, seed);
    batch_loss_drop(m, w, images, labels, B, l2, NULL, p, seed);
    CHECK(memcmp(l1, l2, B * m->cfg.classes * sizeof(double)) == 0);
    batch_loss_drop(m, w, images, labels, B, l2, NULL, p, seed + 1);
    CHECK(memcmp(l1, l2, B * m->cfg.classes * sizeof(double)) != 0);
    batch_loss_drop(m, w, images, labels, B, l2, NULL, 0.0, 0);
    CHECK(memcmp(l1, l2, B * m->cfg.classes * sizeof(double)) != 0);
    for (size_t k = 0; k < 24; k++) {
        size_t pi = k % m->nparams, idx = (k * 7919) % m->params[pi].t->size;
        float *x = &m->params[pi].t->data[idx], x0 = *x;
        const double h = 1e-2;
        *x = (float)(x0 + h);
        double lp = batch_loss_drop(m, w, images, labels, B, NULL, NULL, p, seed);
        *x = (float)(x0 - h);
        double lm = batch_loss_drop(m, w, images, labels, B, NULL, NULL, p, seed);
        double hh = ((double)(float)(x0 + h) - (double)(float)(x0 - h)) / 2;
        *x = x0;
        double fd = (lp - lm) / (2 * hh), an = g[m->params[pi].offset + idx];
        if (!(fabs(fd - an) <= 2e-4 + 2e-3 * fabs(an)))
            fprintf(stderr, "  %s[%zu]: backward %.9g, differences %.9g\n", m->params[pi].name,
                    idx, an, fd);
        CHECK_NEAR(fd, an, 2e-4, 2e-3);
    }
    free(g);
}

/* GELU's exact form: x·Φ(x), values from Python's math.erf; its
 * derivative against central differences. */
static void test_gelu(void)
{
    CHECK_NEAR(vit_gelu(1.0), 0.8413447460685429, 0, 1e-14);
    CHECK_NEAR(vit_gelu(-0.5), -0.15426876936299344, 0, 1e-14);
    CHECK_NEAR(vit_gelu(2.0), 1.9544997361036416, 0, 1e-14);
    CHECK_NEAR(vit_gelu(-3.0), -0.00404969409489031, 0, 1e-12);
    CHECK(vit_gelu(0.0) == 0.0);
    CHECK_NEAR(vit_gelu_grad(0.0), 0.5, 0, 1e-15);
    for (double x = -4; x <= 4; x += 0.37) {
        double h = 1e-5, fd = (vit_gelu(x + h) - vit_gelu(x - h)) / (2 * h);
        CHECK_NEAR(vit_gelu_grad(x), fd, 1e-9, 1e-8);
    }
}

/* vit_config_check's refusals */
static void test_config(void)
{
    char buf[160];
    vit_config c = {1, 28, 7, 64, 128, 4, 2, 10, 0.1};
    CHECK(vit_config_check(&c, buf, sizeof buf) == NULL);
    c.patch = 5;
    CHECK(vit_config_check(&c, buf, sizeof buf) != NULL &&
          strcmp(buf, "the patch 5 does not divide the image side 28") == 0);
    c.patch = 7;
    c.heads = 3;
    CHECK(vit_config_check(&c, buf, sizeof buf) != NULL &&
          strcmp(buf, "the 3 heads do not divide the width 64") == 0);
    c.heads = 4;
    c.dropout = 1.0;
    CHECK(vit_config_check(&c, buf, sizeof buf) != NULL);
    vit_model m;
    char err[160];
    c.dropout = 0.1;
    CHECK(vit_init(&m, &c, 3, err, sizeof err) == 0);
    /* d2l's sizes at these options: 16 patches, 17 tokens, and the count
     * of parameters PyTorch reports for d2l's ViT(28, 7, 64, 128, 4, 2, …):
     * <cls> 64 + pos 17·64 + conv 64·49 + 64 + 2 blocks × (LN 2·64, 4·64²,
     * LN 2·64, 128·64 + 128, 64·128 + 64) + head 2·64 + 10·64 + 10 = 71,562 */
    CHECK_INT(m.P, 16);
    CHECK_INT(m.T, 17);
    CHECK_INT(m.total, 71562);
    CHECK(m.pos.data[0] != 0 && m.cls.data[0] == 0);
    vit_free(&m);
}

static void test_torch(const char *path)
{
    char err[256];
    cJSON *root = json_read_file(path, (size_t)1 << 24, err, sizeof err);
    CHECK(root != NULL);
    if (!root) {
        fprintf(stderr, "%s\n", err);
        return;
    }
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(root, "config");
    vit_config cfg = {cfg_num(c, "channels"), cfg_num(c, "img"), cfg_num(c, "patch"),
                      cfg_num(c, "hiddens"),  cfg_num(c, "ffn"), cfg_num(c, "heads"),
                      cfg_num(c, "layers"),   cfg_num(c, "classes"), 0.0};
    const size_t B = cfg_num(c, "batch"), Q = cfg.classes;
    vit_model m;
    CHECK(vit_init(&m, &cfg, 1, err, sizeof err) == 0);
    /* the same names in the same order as PyTorch's named_parameters */
    const cJSON *order = cJSON_GetObjectItemCaseSensitive(root, "order");
    CHECK((size_t)cJSON_GetArraySize(order) == m.nparams);
    for (size_t i = 0; i < m.nparams; i++) {
        const cJSON *name = cJSON_GetArrayItem(order, (int)i);
        CHECK(cJSON_IsString(name) && strcmp(name->valuestring, m.params[i].name) == 0);
    }
    /* PyTorch's weights, and its shapes */
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(root, "params");
    const cJSON *shapes = cJSON_GetObjectItemCaseSensitive(root, "shapes");
    for (size_t i = 0; i < m.nparams; i++) {
        tensor *t = m.params[i].t;
        const cJSON *sh = cJSON_GetObjectItemCaseSensitive(shapes, m.params[i].name);
        CHECK((size_t)cJSON_GetArraySize(sh) == t->ndim);
        for (size_t k = 0; k < t->ndim; k++)
            CHECK_INT(cJSON_GetArrayItem(sh, (int)k)->valueint, t->shape[k]);
        read_floats(t->data, cJSON_GetObjectItemCaseSensitive(params, m.params[i].name), t->size);
    }
    size_t img = cfg.channels * cfg.img * cfg.img;
    float *images = malloc(B * img * sizeof(float));
    int labels[8];
    double *grads = calloc(m.total, sizeof(double)), logits[8 * 16];
    vit_work *w = vit_work_alloc(&m);
    CHECK(images && grads && w && B <= 8 && Q <= 16);
    if (!images || !grads || !w || B > 8 || Q > 16)
        goto done;
    read_floats(images, cJSON_GetObjectItemCaseSensitive(root, "images"), B * img);
    for (size_t b = 0; b < B; b++)
        labels[b] = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "labels"), (int)b)
                        ->valueint;

    /* the logits, the loss and every gradient */
    double loss = batch_loss(&m, w, images, labels, B, logits, grads);
    compare("logits", logits, cJSON_GetObjectItemCaseSensitive(root, "logits"), B * Q, 2e-6,
            1e-5);
    CHECK_NEAR(loss, cJSON_GetObjectItemCaseSensitive(root, "loss")->valuedouble, 1e-6, 1e-6);
    const cJSON *rg = cJSON_GetObjectItemCaseSensitive(root, "grads");
    for (size_t i = 0; i < m.nparams; i++)
        compare(m.params[i].name, grads + m.params[i].offset,
                cJSON_GetObjectItemCaseSensitive(rg, m.params[i].name), m.params[i].t->size,
                1e-6, 1e-4);

    /* the fast path on the same batch: PyTorch's logits and gradients too */
    {
        vit_fast *f = vit_fast_alloc(&m);
        vit_work *wf = vit_work_alloc(&m);
        double *gf = calloc(m.total, sizeof(double)), lf_all[8 * 16], dl[16];
        CHECK(f && wf && gf);
        if (f && wf && gf) {
            vit_fast_prepare(f, &m);
            for (size_t b = 0; b < B; b++) {
                float lf[16];
                vit_forward_fast(wf, lf, &m, f, images + b * img, NULL);
                for (size_t q = 0; q < Q; q++)
                    lf_all[b * Q + q] = lf[q];
                crossentropy_backward(dl, lf, labels + b, 1, Q, 1.0 / (double)B);
                vit_backward_fast(wf, gf, dl, &m, NULL);
            }
            compare("fast path: logits", lf_all, cJSON_GetObjectItemCaseSensitive(root, "logits"),
                    B * Q, 2e-6, 1e-5);
            for (size_t i = 0; i < m.nparams; i++)
                compare(m.params[i].name, gf + m.params[i].offset,
                        cJSON_GetObjectItemCaseSensitive(rg, m.params[i].name),
                        m.params[i].t->size, 1e-6, 1e-4);
        }
        vit_fast_free(f);
        vit_work_free(wf);
        free(gf);
    }

    /* two SGD steps (lr 0.1) on the same batch: the loss between them and
     * the weights after them */
    optim o;
    CHECK(optim_init(&o, OPTIM_SGD, 0.1, m.total, err, sizeof err) == 0);
    optim_step_params(&o, m.params, m.nparams, grads);
    loss = batch_loss(&m, w, images, labels, B, NULL, grads);
    const cJSON *sl = cJSON_GetObjectItemCaseSensitive(root, "step_losses");
    CHECK_NEAR(loss, cJSON_GetArrayItem(sl, 0)->valuedouble, 1e-6, 1e-6);
    optim_step_params(&o, m.params, m.nparams, grads);
    optim_free(&o);
    const cJSON *after = cJSON_GetObjectItemCaseSensitive(root, "params_after");
    for (size_t i = 0; i < m.nparams; i++) {
        tensor *t = m.params[i].t;
        double *got = malloc(t->size * sizeof(double));
        CHECK(got != NULL);
        if (!got)
            break;
        for (size_t k = 0; k < t->size; k++)
            got[k] = t->data[k];
        compare(m.params[i].name, got, cJSON_GetObjectItemCaseSensitive(after, m.params[i].name),
                t->size, 2e-6, 1e-5);
        free(got);
    }

    /* dropout: the backward pass drops what the forward pass dropped */
    test_dropout(&m, w, images, labels, B);

    /* the rollout against the whole product of matrices, R = Ã_L · … · Ã_1,
     * from the weights of a forward pass of image 0 */
    {
        const size_t T = m.T, NH = cfg.heads;
        double *R = calloc(T * T, sizeof(double)), *Rn = calloc(T * T, sizeof(double)),
               *At = calloc(T * T, sizeof(double)), *roll = calloc(T, sizeof(double));
        float *cls = malloc(NH * T * sizeof(float)), lg[16];
        CHECK(R && Rn && At && roll && cls);
        if (R && Rn && At && roll && cls) {
            CHECK(vit_forward(w, lg, &m, images, NULL, err, sizeof err) == 0);
            for (size_t i = 0; i < T; i++)
                R[i * T + i] = 1.0;
            for (size_t l = 0; l < cfg.layers; l++) {
                const float *W = vit_attention_weights(w, l); /* (NH, T, T) */
                for (size_t i = 0; i < T; i++) {
                    double s = 0;
                    for (size_t j = 0; j < T; j++) {
                        double a = 0;
                        for (size_t h = 0; h < NH; h++)
                            a += W[(h * T + i) * T + j];
                        At[i * T + j] = (a / (double)NH + (i == j ? 1.0 : 0.0)) / 2.0;
                        s += At[i * T + j];
                    }
                    for (size_t j = 0; j < T; j++)
                        At[i * T + j] /= s;
                }
                /* R ← Ã_l · R */
                for (size_t i = 0; i < T; i++)
                    for (size_t j = 0; j < T; j++) {
                        double v = 0;
                        for (size_t k = 0; k < T; k++)
                            v += At[i * T + k] * R[k * T + j];
                        Rn[i * T + j] = v;
                    }
                memcpy(R, Rn, T * T * sizeof(double));
            }
            vit_rollout(roll, w, &m);
            double sum = 0;
            for (size_t j = 0; j < T; j++) {
                CHECK_NEAR(roll[j], R[j], 1e-12, 1e-12);
                sum += roll[j];
            }
            CHECK_NEAR(sum, 1.0, 1e-12, 0);
            /* the <cls> row of the last block's heads */
            vit_cls_attention(cls, w, &m, cfg.layers - 1);
            const float *W = vit_attention_weights(w, cfg.layers - 1);
            for (size_t h = 0; h < NH; h++)
                for (size_t j = 0; j < T; j++)
                    CHECK(cls[h * T + j] == W[h * T * T + j]);
        }
        free(R);
        free(Rn);
        free(At);
        free(roll);
        free(cls);
    }
done:
    vit_work_free(w);
    free(images);
    free(grads);
    vit_free(&m);
    cJSON_Delete(root);
}

/* rng_uniform_at, dropout's draw (inline in rng.h): the stream's own
 * numbers, position by position, and SplitMix64's known first output for
 * seed 0 (0xe220a8397b1dcdaf). */
static void test_uniform_at(void)
{
    rng r;
    rng_seed(&r, 12345);
    for (unsigned long long i = 0; i < 100; i++)
        CHECK(rng_uniform_at(12345, i) == rng_uniform(&r));
    CHECK(rng_uniform_at(0, 0) == (double)(0xe220a8397b1dcdafULL >> 11) * 0x1.0p-53);
}

/* rng_keep_mask (eight lanes of integers) against the scalar test
 * rng_uniform_at(seed, i) ≥ p, element by element: lengths around the
 * lanes' 8, p at 0, 1 and between, and p equal to a drawn u (kept: u ≥ p)
 * and the double just above it (dropped); the share kept near 1 − p. */
static void test_keep_mask(void)
{
    enum { N = 4000 };
    static unsigned char mask[N];
    const unsigned long long seed = 0x5eedULL;
    const double at5 = rng_uniform_at(seed, 5);
    const double ps[] = {0.0, 0.1, 0.3, 0.5, 0.9, 1.0 - 0x1.0p-53, 1.0, at5, nextafter(at5, 1.0)};
    const size_t ns[] = {0, 1, 7, 8, 9, 17, N};
    size_t wrong = 0;
    for (size_t a = 0; a < sizeof ps / sizeof *ps; a++)
        for (size_t b = 0; b < sizeof ns / sizeof *ns; b++) {
            rng_keep_mask(mask, seed + a, ns[b], ps[a]);
            for (size_t i = 0; i < ns[b]; i++)
                wrong += mask[i] != (rng_uniform_at(seed + a, i) >= ps[a]);
        }
    CHECK(wrong == 0);
    rng_keep_mask(mask, seed, 8, at5);
    CHECK(mask[5] == 1);
    rng_keep_mask(mask, seed, 8, nextafter(at5, 1.0));
    CHECK(mask[5] == 0);
    rng_keep_mask(mask, seed, N, 0.1);
    size_t kept = 0;
    for (size_t i = 0; i < N; i++)
        kept += mask[i];
    CHECK(kept > 3500 && kept < 3700); /* 3600 ± 3.2 standard deviations (19) */
}

/* The fast path (vit_fast.c) against the reference loops, at the default
 * run's sizes (28 × 28 images, patches of 7, d 64, FFN 128, 4 heads, 2
 * blocks) on 6 random images, without dropout and with 0.3 at every site
 * (the same masks in both paths): the logits, the batch's loss and every
 * parameter's gradient, to float32's precision; the attention weights
 * that the figures read; and the sums in the same order for the same
 * input (two runs, the same bits). */
static void test_fast(void)
{
    const vit_config c = {1, 28, 7, 64, 128, 4, 2, 10, 0.3};
    const size_t B = 6, Q = 10, img = 28 * 28;
    vit_model m;
    char err[256];
    CHECK(vit_init(&m, &c, 5, err, sizeof err) == 0);
    vit_work *w = vit_work_alloc(&m), *wf = vit_work_alloc(&m);
    vit_fast *f = vit_fast_alloc(&m);
    float *images = malloc(B * img * sizeof(float));
    double *g = calloc(m.total, sizeof(double)), *gf = calloc(m.total, sizeof(double)),
           *g2 = calloc(m.total, sizeof(double));
    CHECK(w && wf && f && images && g && gf && g2);
    if (!(w && wf && f && images && g && gf && g2))
        goto done;
    for (size_t i = 0; i < B * img; i++) /* pixels in [0, 1] */
        images[i] = (float)((i * 2654435761u) % 1000) / 999.0f;
    vit_fast_prepare(f, &m);
    for (int dropped = 0; dropped < 2; dropped++) {
        double lossr = 0, lossf = 0, worst_logit = 0, worst_w = 0;
        memset(g, 0, m.total * sizeof(double));
        memset(gf, 0, m.total * sizeof(double));
        memset(g2, 0, m.total * sizeof(double));
        for (size_t b = 0; b < B; b++) {
            const int label = (int)(b * 3 % Q);
            vit_drop drop = {c.dropout, dropped ? vit_drop_seed(9, 1, b) : 0};
            float lr[16], lf[16], l2[16];
            double dl[16];
            CHECK(vit_forward(w, lr, &m, images + b * img, &drop, err, sizeof err) == 0);
            vit_forward_fast(wf, lf, &m, f, images + b * img, &drop);
            for (size_t q = 0; q < Q; q++) {
                worst_logit = fmax(worst_logit, fabs((double)lr[q] - lf[q]));
                CHECK_NEAR(lf[q], lr[q], 2e-5, 1e-4);
            }
            for (size_t l = 0; l < c.layers; l++) {
                const float *Wr = vit_attention_weights(w, l), *Wf = vit_attention_weights(wf, l);
                for (size_t i = 0; i < c.heads * m.T * m.T; i++)
                    worst_w = fmax(worst_w, fabs((double)Wr[i] - Wf[i]));
            }
            lossr += crossentropy_forward(lr, &label, 1, Q, NULL, NULL);
            lossf += crossentropy_forward(lf, &label, 1, Q, NULL, NULL);
            crossentropy_backward(dl, lr, &label, 1, Q, 1.0 / (double)B);
            CHECK(vit_backward(w, g, dl, &m, images + b * img, &drop, err, sizeof err) == 0);
            crossentropy_backward(dl, lf, &label, 1, Q, 1.0 / (double)B);
            vit_backward_fast(wf, gf, dl, &m, &drop);
            /* the same input again: the same bits */
            vit_forward_fast(wf, l2, &m, f, images + b * img, &drop);
            CHECK(memcmp(lf, l2, Q * sizeof(float)) == 0);
            vit_backward_fast(wf, g2, dl, &m, &drop);
        }
        CHECK_NEAR(lossf / (double)B, lossr / (double)B, 1e-6, 1e-5);
        CHECK(worst_w < 1e-5);
        double worst = 0, scale = 0;
        for (size_t i = 0; i < m.total; i++) {
            worst = fmax(worst, fabs(gf[i] - g[i]));
            scale = fmax(scale, fabs(g[i]));
            CHECK(g2[i] == gf[i]);
        }
        /* every gradient within 1e-4 of the largest (float32 sums of 17
         * rows, through two blocks) */
        CHECK(worst <= 1e-4 * scale);
        fprintf(stderr, "fast path%s: logits within %.2g, weights within %.2g, gradients within "
                "%.2g of the largest %.3g\n", dropped ? " (dropout 0.3)" : "", worst_logit,
                worst_w, worst, scale);
    }
done:
    vit_fast_free(f);
    vit_work_free(w);
    vit_work_free(wf);
    free(images);
    free(g);
    free(gf);
    free(g2);
    vit_free(&m);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_vit tests/ref/vit/vit_ref.json\n");
        return 2;
    }
    test_gelu();
    test_config();
    test_torch(argv[1]);
    test_uniform_at();
    test_keep_mask();
    test_fast();
    return check_summary("vit");
}
