/* test_pool.c — attn pool's maths (src/nn/attention/pool.c): each kernel
 * against the formula by hand, the gradient against finite differences,
 * and the section's runs against PyTorch float64 (the files of tests/ref/pool/,
 * written by scripts/gen_pool_ref.py): the nonparametric predictions and
 * weights, the training step by step (w, the loss and autograd's dL/dw at
 * each epoch), the learned w, the test predictions and weights, to 1e-5;
 * --method additive's training against autograd (the loss, every
 * parameter and its gradient at each epoch), its test predictions and
 * weights, and its gradient against central differences.
 * argv[1]: the folder of the reference files. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "checked.h"
#include "pool.h"
#include "pool_input.h"
#include "rng.h"

#define TOL 1e-5

static double max_diff; /* the largest difference from PyTorch seen */

static void near(double got, double want, const char *what, size_t i)
{
    double d = fabs(got - want);
    max_diff = d > max_diff ? d : max_diff;
    check_count++;
    if (!(d <= TOL + TOL * fabs(want))) {
        check_failed++;
        fprintf(stderr, "%s[%zu] = %.12g, PyTorch %.12g (diff %.3g)\n", what, i, got, want, d);
    }
}

/* The kernels and a normalisation on three points, by hand. */
static void test_by_hand(void)
{
    const double x[3] = {0.0, 1.0, 3.0}, y[3] = {1.0, 2.0, 4.0}, q[2] = {0.5, 2.0};
    double yhat[2], att[6];
    CHECK_NEAR(pool_kernel_value(POOL_GAUSSIAN, 0.5), exp(-0.125), 1e-15, 0);
    CHECK_NEAR(pool_kernel_value(POOL_BOXCAR, 0.999), 1.0, 0, 0);
    CHECK_NEAR(pool_kernel_value(POOL_BOXCAR, -1.0), 0.0, 0, 0);
    CHECK_NEAR(pool_kernel_value(POOL_CONSTANT, 42.0), 1.0, 0, 0);
    CHECK_NEAR(pool_kernel_value(POOL_EPANECHIKOV, -0.25), 0.75, 1e-15, 0);
    CHECK_NEAR(pool_kernel_value(POOL_EPANECHIKOV, 1.5), 0.0, 0, 0);
    /* q = 0.5, σ = 1: boxcar and Epanechikov reach 0 and 1 equally */
    CHECK_INT(pool_nonparametric(yhat, att, q, x, y, POOL_BOXCAR, 1.0, 1, 3), 0);
    CHECK_NEAR(yhat[0], 1.5, 1e-15, 0);
    CHECK_NEAR(att[2], 0.0, 0, 0);
    pool_nonparametric(yhat, att, q, x, y, POOL_EPANECHIKOV, 1.0, 1, 3);
    CHECK_NEAR(yhat[0], 1.5, 1e-15, 0);
    pool_nonparametric(yhat, att, q, x, y, POOL_CONSTANT, 1.0, 1, 3);
    CHECK_NEAR(yhat[0], 7.0 / 3.0, 1e-15, 0);
    /* Gaussian: exp(-u²/2) / Σ */
    double k0 = exp(-0.125), k1 = exp(-0.125), k2 = exp(-3.125), s = k0 + k1 + k2;
    pool_nonparametric(yhat, att, q, x, y, POOL_GAUSSIAN, 1.0, 1, 3);
    CHECK_NEAR(att[2], k2 / s, 1e-15, 0);
    CHECK_NEAR(yhat[0], (k0 * 1 + k1 * 2 + k2 * 4) / s, 1e-15, 0);
    /* q = 2, boxcar σ = 0.1: no point within reach, a row of zeros */
    CHECK_INT(pool_nonparametric(yhat, att, q, x, y, POOL_BOXCAR, 0.1, 2, 3), 2);
    CHECK(isnan(yhat[1]) && att[3] == 0.0 && att[4] == 0.0 && att[5] == 0.0);
    /* a tiny σ: the Gaussian as a softmax still gives weights */
    pool_nonparametric(yhat, att, q, x, y, POOL_GAUSSIAN, 1e-8, 2, 3);
    CHECK(!isnan(yhat[0]) && !isnan(yhat[1]));
    CHECK_NEAR(att[0] + att[1] + att[2], 1.0, 1e-15, 0);
    pool_average(yhat, att, y, 2, 3);
    CHECK_NEAR(yhat[1], 7.0 / 3.0, 1e-15, 0);
    CHECK_NEAR(att[4], 1.0 / 3.0, 1e-15, 0);
    CHECK_NEAR(pool_mean_max_weight(att, 2, 3), 1.0 / 3.0, 1e-15, 0);
}

/* --sigma auto's grid and leave-one-out error on three points, by hand. */
static void test_loo(void)
{
    const double x[3] = {0.0, 1.0, 3.0}, y[3] = {1.0, 2.0, 4.0};
    double row[3];
    size_t un = 9;
    CHECK_NEAR(pool_sigma_grid(0), 0.01, 1e-17, 0);
    CHECK_NEAR(pool_sigma_grid(20), 1.0, 0, 0);
    CHECK_NEAR(pool_sigma_grid(30), 10.0, 1e-15, 0);
    CHECK_NEAR(pool_sigma_grid(5), sqrt(10.0) / 100.0, 1e-17, 0);
    /* boxcar σ = 1.5: x0 sees x1 only (ŷ 2), x1 sees x0 only (ŷ 1), x2 none */
    CHECK_NEAR(pool_loo_error(x, y, 3, POOL_BOXCAR, 1.5, row, &un), 1.0, 1e-15, 0);
    CHECK_INT(un, 1);
    /* Gaussian σ = 1: each point from the other two, exp(−d²/2) weights */
    double e = 0.0;
    for (int i = 0; i < 3; i++) {
        double num = 0.0, den = 0.0;
        for (int j = 0; j < 3; j++)
            if (j != i) {
                double k = exp(-(x[i] - x[j]) * (x[i] - x[j]) / 2.0);
                num += k * y[j];
                den += k;
            }
        e += (num / den - y[i]) * (num / den - y[i]) / 3.0;
    }
    CHECK_NEAR(pool_loo_error(x, y, 3, POOL_GAUSSIAN, 1.0, row, &un), e, 1e-14, 0);
    CHECK_INT(un, 0);
    /* constant: the mean of the other two, whatever σ */
    e = (pow(3.0 - 1.0, 2) + pow(2.5 - 2.0, 2) + pow(1.5 - 4.0, 2)) / 3.0;
    CHECK_NEAR(pool_loo_error(x, y, 3, POOL_CONSTANT, 0.01, row, &un), e, 1e-14, 0);
    /* Epanechikov σ = 0.5: no point within 0.5 of another */
    CHECK(isnan(pool_loo_error(x, y, 3, POOL_EPANECHIKOV, 0.5, row, &un)) && un == 3);
}

/* d loss / d w against central differences, leave one out. */
static void test_gradient(void)
{
    const double x[5] = {0.1, 0.7, 1.3, 2.2, 3.9}, y[5] = {1.0, 0.5, 2.5, 3.0, 1.5};
    double yhat[5], dy[5], att[25], w = 1.7, h = 1e-6;
    pool_param_forward(yhat, att, x, x, y, w, 5, 5, 1);
    for (size_t j = 0; j < 5; j++)
        CHECK_NEAR(att[j * 5 + j], 0.0, 0, 0); /* a point is not its own key */
    pool_loss(dy, yhat, y, 5);
    double dw = pool_param_backward(dy, att, yhat, x, x, y, w, 5, 5, 1);
    pool_param_forward(yhat, att, x, x, y, w + h, 5, 5, 1);
    double lp = pool_loss(dy, yhat, y, 5);
    pool_param_forward(yhat, att, x, x, y, w - h, 5, 5, 1);
    double lm = pool_loss(dy, yhat, y, 5);
    CHECK_NEAR(dw, (lp - lm) / (2 * h), 1e-6, 1e-6);
    /* --keep-self: each point its own key too */
    pool_param_forward(yhat, att, x, x, y, w, 5, 5, 0);
    CHECK(att[0] > 0.0 && att[24] > 0.0);
    pool_loss(dy, yhat, y, 5);
    dw = pool_param_backward(dy, att, yhat, x, x, y, w, 5, 5, 0);
    pool_param_forward(yhat, att, x, x, y, w + h, 5, 5, 0);
    lp = pool_loss(dy, yhat, y, 5);
    pool_param_forward(yhat, att, x, x, y, w - h, 5, 5, 0);
    lm = pool_loss(dy, yhat, y, 5);
    CHECK_NEAR(dw, (lp - lm) / (2 * h), 1e-6, 1e-6);
    /* and trained, the loss falls toward memorising as w grows */
    double w2 = 1.0, losses[200];
    pool_param_train(&w2, losses, 200, 0.5, x, y, 5, 1, yhat, dy, att);
    CHECK(w2 > 1.0 && losses[199] < losses[0] / 4);
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* The weight rows of ref (rows listed in $.rows) against att (m, n). */
static void compare_rows(const cJSON *ref, const cJSON *wref, const double *att, size_t n,
                         const char *what)
{
    const cJSON *row, *r = cJSON_GetObjectItemCaseSensitive(ref, "rows")->child;
    cJSON_ArrayForEach(row, wref)
    {
        size_t j = (size_t)r->valueint, i = 0;
        const cJSON *v;
        cJSON_ArrayForEach(v, row)
        {
            near(att[j * n + i], v->valuedouble, what, j * n + i);
            i++;
        }
        CHECK_INT(i, n);
        r = r->next;
    }
}

static void compare_yhat(const double *yhat, const cJSON *want, const char *what)
{
    size_t j = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, want)
    {
        if (cJSON_IsNull(v))
            CHECK(isnan(yhat[j]));
        else
            near(yhat[j], v->valuedouble, what, j);
        j++;
    }
}

static enum pool_kernel kernel_of(const char *name)
{
    for (int k = 0; k < POOL_NKERNELS; k++)
        if (strcmp(pool_kernel_names[k], name) == 0)
            return (enum pool_kernel)k;
    return POOL_NKERNELS;
}

/* The section's training, epoch by epoch, against PyTorch's steps. */
static void compare_training(const cJSON *ref, const pool_data *d, double *att, double *yhat)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(ref, "parametric"), *step;
    size_t n = d->n, e = 0;
    double w = num(ref, "w_init"), lr = num(ref, "lr"), dy[4096];
    if (n > 4096)
        return;
    cJSON_ArrayForEach(step, cJSON_GetObjectItemCaseSensitive(p, "steps"))
    {
        near(w, num(step, "w"), "w", e);
        pool_param_forward(yhat, att, d->x_train, d->x_train, d->y_train, w, n, n, 1);
        near(pool_loss(dy, yhat, d->y_train, n), num(step, "loss"), "loss", e);
        double dw = pool_param_backward(dy, att, yhat, d->x_train, d->x_train, d->y_train, w,
                                        n, n, 1);
        near(dw, num(step, "dw"), "dw", e);
        w -= lr * dw;
        e++;
    }
    /* the same through pool_param_train */
    double w2 = num(ref, "w_init"), losses[64];
    CHECK((size_t)num(ref, "epochs") == e && e <= 64);
    pool_param_train(&w2, losses, e, lr, d->x_train, d->y_train, n, 0, yhat, dy, att);
    CHECK(w2 == w);
    near(w, num(p, "w"), "learned w", 0);
    pool_param_forward(yhat, att, d->x_test, d->x_train, d->y_train, w, d->m, n, 0);
    compare_yhat(yhat, cJSON_GetObjectItemCaseSensitive(p, "y_hat"), "parametric y_hat");
    compare_rows(ref, cJSON_GetObjectItemCaseSensitive(p, "weights"), att, n,
                 "parametric weights");
}

/* The reference file dir/name.json, its data in d; NULL (a failed
 * check) when it cannot be read. */
static cJSON *read_ref(const char *dir, const char *name, pool_data *d)
{
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    char *text = check_read_file(path, NULL);
    cJSON *ref = text ? cJSON_Parse(text) : NULL;
    free(text);
    CHECK(ref != NULL);
    if (!ref || pool_input_from_json(d, ref, path, err, sizeof err) < 0) {
        fprintf(stderr, "%s: cannot read\n", path);
        check_failed++;
        cJSON_Delete(ref);
        return NULL;
    }
    return ref;
}

static void test_ref(const char *dir, const char *name)
{
    pool_data d;
    cJSON *ref = read_ref(dir, name, &d);
    if (!ref)
        return;
    double *att = calloc(d.n * (d.m > d.n ? d.m : d.n), sizeof *att), *yhat = calloc(
        d.m > d.n ? d.m : d.n, sizeof *yhat);
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(ref, "results"))
    {
        const cJSON *kn = cJSON_GetObjectItemCaseSensitive(r, "kernel");
        pool_nonparametric(yhat, att, d.x_test, d.x_train, d.y_train, kernel_of(kn->valuestring),
                           num(r, "sigma"), d.m, d.n);
        compare_yhat(yhat, cJSON_GetObjectItemCaseSensitive(r, "y_hat"), kn->valuestring);
        compare_rows(ref, cJSON_GetObjectItemCaseSensitive(r, "weights"), att, d.n,
                     kn->valuestring);
    }
    const cJSON *avg = cJSON_GetObjectItemCaseSensitive(ref, "average");
    pool_average(yhat, att, d.y_train, d.m, d.n);
    near(yhat[0], num(avg, "y_hat"), "average y_hat", 0);
    near(att[d.n - 1], num(avg, "weight"), "average weight", 0);
    compare_training(ref, &d, att, yhat);
    printf("%s: max |attn - PyTorch float64| so far %.3g\n", name, max_diff);
    FREE_EACH(att, yhat);
    pool_data_free(&d);
    cJSON_Delete(ref);
}

/* A state_dict's (h, 1) or (1, h) tensor named key into v (h,). */
static void read_param(double *v, const cJSON *sd, const char *key, size_t h)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(sd, key), *e;
    size_t u = 0;
    if (cJSON_GetArraySize(t) == 1) /* (1, h) */
        t = t->child;
    cJSON_ArrayForEach(e, t)
    {
        if (u < h)
            v[u] = cJSON_IsArray(e) ? e->child->valuedouble : e->valuedouble;
        u++;
    }
    CHECK_INT(u, h);
}

/* Each parameter of p against the state_dict sd (or the gradients). */
static void compare_params(const pool_additive *p, const cJSON *sd, const char *what, size_t e)
{
    static const char *const names[] = {"W_k.weight", "W_q.weight", "w_v.weight"};
    const double *mine[] = {p->W_k, p->W_q, p->w_v};
    double ref[64];
    char label[96];
    for (size_t k = 0; k < 3 && p->h <= 64; k++) {
        read_param(ref, sd, names[k], p->h);
        snprintf(label, sizeof label, "%s %s (epoch %zu)", what, names[k], e + 1);
        for (size_t u = 0; u < p->h; u++)
            near(mine[k][u], ref[u], label, u);
    }
}

/* --method additive: the training step by step against autograd (the
 * loss, every parameter and its gradient), then the test inputs. */
static void test_additive(const char *dir, const char *name)
{
    pool_data d;
    pool_additive p = {0}, g = {0}, p2 = {0}, g2 = {0};
    cJSON *ref = read_ref(dir, name, &d), *step;
    if (!ref)
        return;
    size_t n = d.n, h = (size_t)num(ref, "score_hiddens"), e = 0;
    double lr = num(ref, "lr"), *att = calloc(n * (d.m > n ? d.m : n), sizeof *att);
    double *yhat = calloc(d.m > n ? d.m : n, sizeof *yhat), *dy = calloc(n, sizeof *dy);
    double losses[64];
    CHECK(pool_additive_alloc(&p, h) == 0 && pool_additive_alloc(&g, h) == 0 &&
          pool_additive_alloc(&p2, h) == 0 && pool_additive_alloc(&g2, h) == 0 && att && yhat &&
          dy);
    const cJSON *start = cJSON_GetObjectItemCaseSensitive(ref, "state_dict_init");
    read_param(p.W_k, start, "W_k.weight", h);
    read_param(p.W_q, start, "W_q.weight", h);
    read_param(p.w_v, start, "w_v.weight", h);
    pool_additive_copy(&p2, &p);
    cJSON_ArrayForEach(step, cJSON_GetObjectItemCaseSensitive(ref, "steps"))
    {
        compare_params(&p, cJSON_GetObjectItemCaseSensitive(step, "state_dict"), "additive", e);
        pool_additive_forward(yhat, att, d.x_train, d.x_train, d.y_train, &p, n, n, 1);
        for (size_t j = 0; j < n; j++)
            CHECK(att[j * n + j] == 0.0); /* a point is not its own key */
        near(pool_loss(dy, yhat, d.y_train, n), num(step, "loss"), "additive loss", e);
        pool_additive_backward(&g, dy, att, yhat, d.x_train, d.x_train, d.y_train, &p, n, n, 1);
        compare_params(&g, cJSON_GetObjectItemCaseSensitive(step, "grad"), "additive grad", e);
        for (size_t u = 0; u < h; u++) {
            p.W_q[u] -= lr * g.W_q[u];
            p.W_k[u] -= lr * g.W_k[u];
            p.w_v[u] -= lr * g.w_v[u];
        }
        e++;
    }
    CHECK((size_t)num(ref, "epochs") == e && e <= 64 && e > 0);
    compare_params(&p, cJSON_GetObjectItemCaseSensitive(ref, "state_dict"), "learned", e - 1);
    /* the same through pool_additive_train, to the bit */
    pool_additive_train(&p2, &g2, losses, e, lr, d.x_train, d.y_train, n, 0, yhat, dy, att);
    CHECK(memcmp(p2.W_q, p.W_q, h * sizeof *p.W_q) == 0 &&
          memcmp(p2.w_v, p.w_v, h * sizeof *p.w_v) == 0);
    pool_additive_forward(yhat, att, d.x_test, d.x_train, d.y_train, &p, d.m, n, 0);
    compare_yhat(yhat, cJSON_GetObjectItemCaseSensitive(ref, "y_hat"), "additive y_hat");
    compare_rows(ref, cJSON_GetObjectItemCaseSensitive(ref, "weights"), att, n,
                 "additive weights");
    printf("%s: max |attn - PyTorch float64| so far %.3g\n", name, max_diff);
    pool_additive_free(&p);
    pool_additive_free(&g);
    pool_additive_free(&p2);
    pool_additive_free(&g2);
    FREE_EACH(att, yhat, dy);
    pool_data_free(&d);
    cJSON_Delete(ref);
}

/* The additive gradient against central differences, keeping self too. */
static void test_additive_gradient(void)
{
    const double x[4] = {0.2, 0.9, 1.7, 3.1}, y[4] = {1.0, -0.5, 2.5, 0.7};
    double yhat[4], dy[4], att[16], h = 1e-6;
    pool_additive p = {0}, g = {0};
    rng r;
    rng_seed(&r, 5);
    CHECK(pool_additive_alloc(&p, 3) == 0 && pool_additive_alloc(&g, 3) == 0);
    pool_additive_init(&p, &r);
    for (int loo = 0; loo < 2; loo++) {
        pool_additive_forward(yhat, att, x, x, y, &p, 4, 4, loo);
        pool_loss(dy, yhat, y, 4);
        pool_additive_backward(&g, dy, att, yhat, x, x, y, &p, 4, 4, loo);
        double *params[] = {p.W_q, p.W_k, p.w_v}, *grads[] = {g.W_q, g.W_k, g.w_v};
        for (size_t k = 0; k < 3; k++)
            for (size_t u = 0; u < 3; u++) {
                double keep = params[k][u];
                params[k][u] = keep + h;
                pool_additive_forward(yhat, att, x, x, y, &p, 4, 4, loo);
                double lp = pool_loss(dy, yhat, y, 4);
                params[k][u] = keep - h;
                pool_additive_forward(yhat, att, x, x, y, &p, 4, 4, loo);
                double lm = pool_loss(dy, yhat, y, 4);
                params[k][u] = keep;
                CHECK_NEAR(grads[k][u], (lp - lm) / (2 * h), 1e-6, 1e-6);
            }
    }
    /* nn.Linear's start: W_k, W_q on ±1, w_v on ±1/√3, float32 values */
    for (size_t u = 0; u < 3; u++)
        CHECK(fabs(p.W_k[u]) < 1 && fabs(p.W_q[u]) < 1 && fabs(p.w_v[u]) < 1 / sqrt(3.0) &&
              p.w_v[u] == (float)p.w_v[u]);
    pool_additive_free(&p);
    pool_additive_free(&g);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_pool REF_DIR\n");
        return 2;
    }
    test_by_hand();
    test_loo();
    test_gradient();
    test_ref(argv[1], "zh_default");
    test_ref(argv[1], "en_seed3");
    test_ref(argv[1], "zh_n20_w2");
    test_additive_gradient();
    test_additive(argv[1], "additive_zh_h8");
    test_additive(argv[1], "additive_en_h3");
    test_additive(argv[1], "additive_zh_h5");
    return check_summary("pool");
}
