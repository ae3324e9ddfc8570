/* train_vit.c — `attn train --task vit` (SPEC.md §16): d2l.ai 11.8's
 * Vision Transformer trained on Fashion-MNIST in batches of 128, 10
 * epochs as d2l (by default with Adam at lr 0.001, where d2l's SGD at lr
 * 0.1 stops short of 0.85; --optimizer sgd --lr 0.1 is d2l's), each
 * epoch's training loss, validation loss and
 * accuracy printed; --json (the history, the accuracy, the confusion
 * matrix), --save and --load (d2l's state_dict names).
 *
 * A batch is cut into chunks of VIT_CHUNK images, each chunk run on a
 * thread with its own buffers and gradients, the chunks' gradients summed
 * in order: the same bits for any number of threads. Each image runs the
 * fast path (nn/vision/vit_fast.c), which test_vit holds to the
 * reference loops.
 */
#include "train_vit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "chunks.h"
#include "cli.h"
#include "clock.h"
#include "cores.h"
#include "idx.h"
#include "json_writer.h"
#include "layers.h"
#include "optim.h"
#include "output.h"
#include "page_out.h"
#include "render.h"
#include "rng.h"
#include "vit.h"
#include "vit_model_file.h"
#include "vit_show.h"
#include "i18n.h"

#define VIT_CHUNK 16
#define VIT_MAX_EPOCHS 1000
/* --html: the test images the page lets one pick */
#define VIT_PAGE_IMAGES 24

/* The options --task vit reads; any other is refused. */
static const char *const vit_options[] = {
    "task",       "data",      "hiddens",    "heads", "layers", "ffn",     "dropout",
    "batch-size", "lr",        "optimizer",  "seed",  "threads", "json",   "save",   "png",
    "load",       "epochs",    "train-size", "test-size", "patch", "max-mem", "color",
    "font",       "confusion-png", "plot", "img-size", "html", NULL};

/* The options only --task vit reads. */
static const char *const vit_only[] = {"epochs", "train-size", "test-size", "patch", "img-size",
                                       "confusion-png", NULL};

int train_vit_only(const struct train_args *a, const opt_given *g)
{
    if (a->task == TRAIN_TASK_VIT)
        return EXIT_OK;
    for (size_t i = 0; vit_only[i]; i++)
        if (opt_is_given(g, vit_only[i])) {
            cli_error("--%s is for --task vit", vit_only[i]);
            return EXIT_USAGE;
        }
    return EXIT_OK;
}

static int vit_check_options(const opt_given *g)
{
    for (size_t i = 0; g->opts[i].long_name; i++) {
        const char *name = g->opts[i].long_name;
        int ok = 0;
        for (size_t k = 0; vit_options[k] && !ok; k++)
            ok = strcmp(vit_options[k], name) == 0;
        if (!ok && opt_is_given(g, name)) {
            cli_error("--%s is not for --task vit", name);
            return EXIT_USAGE;
        }
    }
    return EXIT_OK;
}

/* d2l 11.8 at two cores' sizes where the options say nothing. */
static void vit_defaults(struct train_args *a, const opt_given *g)
{
    if (!opt_is_given(g, "hiddens"))
        a->hiddens = 64;
    if (!opt_is_given(g, "heads"))
        a->heads = 4;
    if (!opt_is_given(g, "layers"))
        a->layers = 2;
    if (!opt_is_given(g, "ffn"))
        a->ffn = 128;
    if (!opt_is_given(g, "dropout"))
        a->dropout = 0.1;
    if (!opt_is_given(g, "batch-size"))
        a->batch_size = 128;
    /* d2l's Classifier trains with SGD at lr 0.1: at these sizes 10 epochs
     * reach 0.847 on the test set; Adam at 0.001 passes 0.85 by epoch 5 */
    if (!opt_is_given(g, "lr"))
        a->lr = 0.001;
    if (!opt_is_given(g, "optimizer"))
        a->optimizer = OPTIM_ADAM;
    if (a->epochs < 0)
        a->epochs = 10;
    if (a->patch < 0)
        a->patch = 7;
}

/* ---- the data -------------------------------------------------------------- */

typedef struct vit_data {
    idx_set train, test;
} vit_data;

static int vit_load_data(vit_data *d, const struct train_args *a)
{
    char err[1400];
    if (idx_load_fashion(&d->train, &d->test, a->data ? a->data : IDX_FASHION_DIR, a->data != NULL,
                         (size_t)a->train_size, (size_t)a->test_size, err, sizeof err) != 0) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    if (a->img_size > 0 && (idx_resize(&d->train, (size_t)a->img_size, err, sizeof err) != 0 ||
                            idx_resize(&d->test, (size_t)a->img_size, err, sizeof err) != 0)) {
        cli_error("--img-size: %s", err);
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

/* ---- a batch, chunk by chunk ------------------------------------------------ */

typedef struct vit_batch {
    const vit_model *m;
    const idx_set *set;
    const size_t *idx;    /* (n,) the batch's images */
    size_t n;
    int train;            /* 1: dropout on, gradients wanted */
    vit_drop drop;        /* p and the run's seed */
    long step;
    vit_work **work;      /* (nchunks,) */
    double **grads;       /* (nchunks,) each (m->total,), training only */
    float **image;        /* (nchunks,) each (S·S,) */
    float *logits;        /* (n, Q) */
    double *loss;         /* (nchunks,) */
    const vit_fast *fast; /* the fast path's weights (vit_fast.c) */
} vit_batch;

static int vit_chunk(void *ctx, size_t c, char *err, size_t errlen)
{
    vit_batch *b = ctx;
    (void)err; /* the fast path cannot fail: its buffers are allocated */
    (void)errlen;
    const size_t Q = b->m->cfg.classes, lo = c * VIT_CHUNK;
    const size_t hi = lo + VIT_CHUNK < b->n ? lo + VIT_CHUNK : b->n;
    double dlogits[IDX_CLASSES];
    b->loss[c] = 0;
    if (b->train)
        memset(b->grads[c], 0, b->m->total * sizeof(double));
    for (size_t i = lo; i < hi; i++) {
        const size_t id = b->idx[i];
        int label = b->set->labels[id];
        float *logits = b->logits + i * Q;
        vit_drop drop = {b->drop.p, b->train ? vit_drop_seed(b->drop.seed, (unsigned long long)b->step, id) : 0};
        idx_pixels(b->image[c], b->set, id);
        vit_forward_fast(b->work[c], logits, b->m, b->fast, b->image[c], &drop);
        b->loss[c] += crossentropy_forward(logits, &label, 1, Q, NULL, NULL);
        if (b->train) {
            /* the batch's mean loss: each image's gradient 1/n of its own */
            crossentropy_backward(dlogits, logits, &label, 1, Q, 1.0 / (double)b->n);
            vit_backward_fast(b->work[c], b->grads[c], dlogits, b->m, &drop);
        }
    }
    return 0;
}

/* The buffers of batches of up to B images. */
typedef struct vit_bufs {
    size_t nchunks;
    vit_work **work;
    double **grads, *sum, *loss;
    float **image, *logits;
    vit_fast *fast;
} vit_bufs;

static void vit_bufs_free(vit_bufs *u)
{
    for (size_t c = 0; c < u->nchunks; c++) {
        if (u->work)
            vit_work_free(u->work[c]);
        if (u->grads)
            free(u->grads[c]);
        if (u->image)
            free(u->image[c]);
    }
    free(u->work);
    free(u->grads);
    free(u->image);
    free(u->sum);
    free(u->loss);
    free(u->logits);
    vit_fast_free(u->fast);
    memset(u, 0, sizeof *u);
}

static int vit_bufs_alloc(vit_bufs *u, const vit_model *m, size_t B)
{
    const size_t S2 = m->cfg.img * m->cfg.img;
    memset(u, 0, sizeof *u);
    u->nchunks = ceil_div(B, VIT_CHUNK);
    u->work = calloc(u->nchunks, sizeof *u->work);
    u->grads = calloc(u->nchunks, sizeof *u->grads);
    u->image = calloc(u->nchunks, sizeof *u->image);
    u->sum = calloc(m->total, sizeof(double));
    u->loss = calloc(u->nchunks, sizeof(double));
    u->logits = float_alloc(B * m->cfg.classes);
    u->fast = vit_fast_alloc(m);
    int bad = !u->work || !u->grads || !u->image || !u->sum || !u->loss || !u->logits || !u->fast;
    for (size_t c = 0; c < u->nchunks && !bad; c++) {
        u->work[c] = vit_work_alloc(m);
        u->grads[c] = calloc(m->total, sizeof(double));
        u->image[c] = float_alloc(S2);
        bad = !u->work[c] || !u->grads[c] || !u->image[c];
    }
    if (bad) {
        vit_bufs_free(u);
        cli_error("out of memory for the batches' buffers");
        return -1;
    }
    return 0;
}

/* The n images idx through the model on nth threads: their logits in
 * u->logits, and the summed loss; training: gradients summed into u->sum
 * (chunk after chunk, the same bits for any threads). */
static int vit_run_batch(vit_bufs *u, const vit_model *m, const idx_set *set,
                         const size_t *idx, size_t n, int train, const vit_drop *drop,
                         long step, int nth, double *loss)
{
    char err[256];
    vit_batch b = {m, set, idx, n, train, *drop, step, u->work, u->grads, u->image,
                   u->logits, u->loss, u->fast};
    vit_fast_prepare(u->fast, m); /* the weights of this step */
    const size_t nch = ceil_div(n, VIT_CHUNK);
    if (chunks_run(vit_chunk, &b, nch, nth, err, sizeof err) != 0) {
        cli_error("%s", err);
        return -1;
    }
    *loss = 0;
    for (size_t c = 0; c < nch; c++)
        *loss += u->loss[c];
    if (train) {
        memcpy(u->sum, u->grads[0], m->total * sizeof(double));
        for (size_t c = 1; c < nch; c++)
            for (size_t k = 0; k < m->total; k++)
                u->sum[k] += u->grads[c][k];
    }
    return 0;
}

/* ---- the run ------------------------------------------------------------------ */

typedef struct vit_epoch {
    double train_loss, val_loss, val_acc, seconds;
} vit_epoch;

typedef struct vit_run {
    const struct train_args *a;
    int argc;              /* the command line, for --html's page */
    char **argv;
    vit_data data;
    vit_model m;
    vit_bufs u;
    optim o;
    int nth;
    long step;
    vit_epoch *hist;       /* (epochs,) */
    size_t nhist;
    long confusion[IDX_CLASSES][IDX_CLASSES]; /* [true][predicted], the last evaluation */
    double accuracy, val_loss;
    size_t *order;         /* (train n,) */
} vit_run;

/* The test set through the model: loss, accuracy and confusion matrix. */
static int vit_evaluate(vit_run *r)
{
    const idx_set *t = &r->data.test;
    const size_t B = (size_t)r->a->batch_size, Q = r->m.cfg.classes;
    size_t *idx = malloc(B * sizeof(size_t)), correct = 0;
    double total = 0;
    vit_drop none = {0, 0};
    if (!idx) {
        cli_error("out of memory for the evaluation");
        return -1;
    }
    memset(r->confusion, 0, sizeof r->confusion);
    for (size_t lo = 0; lo < t->n; lo += B) {
        size_t n = t->n - lo < B ? t->n - lo : B;
        double loss;
        for (size_t i = 0; i < n; i++)
            idx[i] = lo + i;
        if (vit_run_batch(&r->u, &r->m, t, idx, n, 0, &none, 0, r->nth, &loss) != 0) {
            free(idx);
            return -1;
        }
        total += loss;
        for (size_t i = 0; i < n; i++) {
            const float *lg = r->u.logits + i * Q;
            size_t best = 0;
            for (size_t q = 1; q < Q; q++)
                if (lg[q] > lg[best])
                    best = q;
            r->confusion[t->labels[lo + i]][best]++;
            correct += best == t->labels[lo + i];
        }
    }
    free(idx);
    r->val_loss = t->n ? total / (double)t->n : 0;
    r->accuracy = t->n ? (double)correct / (double)t->n : 0;
    return 0;
}

/* One epoch: the training set shuffled (seeded by the seed and the
 * epoch), batch after batch, an SGD (or Adam) step each. */
static int vit_epoch_run(vit_run *r, long epoch, double *train_loss)
{
    const idx_set *s = &r->data.train;
    const size_t B = (size_t)r->a->batch_size;
    vit_drop drop = {r->a->dropout, (unsigned long long)r->a->seed * 2 + 1};
    rng g;
    double sum = 0;
    size_t batches = 0;
    rng_seed(&g, (unsigned long long)r->a->seed ^ ((unsigned long long)epoch << 32));
    for (size_t i = 0; i < s->n; i++)
        r->order[i] = i;
    rng_shuffle(&g, r->order, s->n);
    for (size_t lo = 0; lo < s->n; lo += B) {
        size_t n = s->n - lo < B ? s->n - lo : B;
        double loss;
        r->step++;
        if (vit_run_batch(&r->u, &r->m, s, r->order + lo, n, 1, &drop, r->step, r->nth,
                          &loss) != 0)
            return -1;
        optim_step_params(&r->o, r->m.params, r->m.nparams, r->u.sum);
        sum += loss / (double)n;
        batches++;
    }
    *train_loss = batches ? sum / (double)batches : 0;
    return 0;
}

static void vit_run_free(vit_run *r)
{
    idx_set_free(&r->data.train);
    idx_set_free(&r->data.test);
    vit_bufs_free(&r->u);
    optim_free(&r->o);
    vit_free(&r->m);
    free(r->hist);
    free(r->order);
}

/* The model: --load's, or d2l's start from the seed at the options' sizes. */
static int vit_model_ready(vit_run *r)
{
    const struct train_args *a = r->a;
    char err[1200], why[160];
    if (a->load) {
        if (vit_model_load(a->load, &r->m, err, sizeof err) != 0) {
            cli_error("%s", err);
            return EXIT_RUNTIME;
        }
        if (r->m.cfg.img != r->data.train.rows && a->img_size > 0) {
            cli_error("%s: a model of %zu × %zu images, --img-size %ld", a->load, r->m.cfg.img,
                      r->m.cfg.img, a->img_size);
            return EXIT_USAGE;
        }
        /* the data resized as the model's were when it was trained */
        if (idx_resize(&r->data.train, r->m.cfg.img, err, sizeof err) != 0 ||
            idx_resize(&r->data.test, r->m.cfg.img, err, sizeof err) != 0) {
            cli_error("%s: %s", a->load, err);
            return EXIT_RUNTIME;
        }
        return EXIT_OK;
    }
    vit_config c = {1, r->data.train.rows, (size_t)a->patch, (size_t)a->hiddens,
                    (size_t)a->ffn, (size_t)a->heads, (size_t)a->layers, IDX_CLASSES,
                    a->dropout};
    if (vit_config_check(&c, why, sizeof why)) {
        cli_error("--task vit: %s", why);
        return EXIT_USAGE;
    }
    if (vit_init(&r->m, &c, (unsigned long long)a->seed, err, sizeof err) != 0) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

static int vit_prepare(vit_run *r, struct train_args *a)
{
    char err[256];
    int status;
    if ((status = vit_load_data(&r->data, a)) != EXIT_OK ||
        (status = vit_model_ready(r)) != EXIT_OK)
        return status;
    r->m.cfg.dropout = a->dropout;
    /* --batch-size 0: the whole training set a step (at least one image) */
    if (a->batch_size == 0)
        a->batch_size = r->data.train.n ? (long)r->data.train.n : 1;
    /* the memory: per chunk a forward pass's buffers and a gradient of
     * every parameter, and the run's order of the images (the data are
     * read already) */
    size_t B = (size_t)a->batch_size, nch = ceil_div(B, VIT_CHUNK), per = 0, bytes = 0;
    size_t T = r->m.T, d = r->m.cfg.hiddens, F = r->m.cfg.ffn, L = r->m.cfg.layers;
    int over = size_mul(T, 16 * d + 4 * F + 2 * r->m.cfg.heads * T, &per) ||
               size_mul(per, 8 * L, &per) || size_add(per, r->m.total * 8, &per) ||
               size_mul(per, nch, &bytes) ||
               size_add(bytes, r->data.train.n * sizeof(size_t), &bytes);
    if (cli_check_mem("the batches' buffers", bytes, over, a->max_mem, NULL) != 0)
        return EXIT_RUNTIME;
    if (vit_bufs_alloc(&r->u, &r->m, B) != 0 ||
        optim_init(&r->o, (optim_kind)a->optimizer, a->lr, r->m.total, err, sizeof err) != 0)
        return EXIT_RUNTIME;
    r->hist = calloc((size_t)a->epochs + 1, sizeof *r->hist);
    r->order = calloc(r->data.train.n + 1, sizeof(size_t));
    if (!r->hist || !r->order) {
        cli_error("out of memory for the run");
        return EXIT_RUNTIME;
    }
    r->nth = a->threads > 0 ? (int)a->threads : cores_threads();
    return EXIT_OK;
}

static int vit_train(vit_run *r, FILE *out)
{
    const struct train_args *a = r->a;
    fprintf(out, _("attn train: vit, %zu × %zu images in %zu patches of %zu × %zu, d %zu, MLP %zu, "
            "%zu heads, %zu blocks, dropout %g, %s lr %g, batch %ld; %zu training images, "
            "%zu test\n"),
            r->m.cfg.img, r->m.cfg.img, r->m.P, r->m.cfg.patch, r->m.cfg.patch, r->m.cfg.hiddens,
            r->m.cfg.ffn, r->m.cfg.heads, r->m.cfg.layers, a->dropout,
            a->optimizer == OPTIM_SGD ? "SGD" : "Adam", a->lr, a->batch_size, r->data.train.n,
            r->data.test.n);
    fprintf(out, "%-6s %11s %9s %8s\n", "epoch", "train loss", "val loss", "val acc");
    for (long e = 1; e <= a->epochs; e++) {
        vit_epoch *h = &r->hist[r->nhist];
        double t0 = now_seconds();
        if (vit_epoch_run(r, e, &h->train_loss) != 0 || vit_evaluate(r) != 0)
            return EXIT_RUNTIME;
        h->val_loss = r->val_loss;
        h->val_acc = r->accuracy;
        h->seconds = now_seconds() - t0;
        r->nhist++;
        fprintf(out, "%-6ld %11.4f %9.4f %8.4f   (%.1f s)\n", e, h->train_loss, h->val_loss,
                h->val_acc, h->seconds);
        fflush(out);
    }
    if (a->epochs == 0) {
        if (vit_evaluate(r) != 0)
            return EXIT_RUNTIME;
        fprintf(out, "%-6s %11s %9.4f %8.4f\n", "-", "-", r->val_loss, r->accuracy);
    }
    return EXIT_OK;
}

/* ---- the outputs ---------------------------------------------------------------- */

static int vit_write_json(FILE *f, const void *ctx)
{
    const vit_run *r = ctx;
    const vit_model *m = &r->m;
    json_writer jw;
    json_writer_init(&jw, f);
    json_object_begin(&jw, NULL, JSON_BLOCK);
    json_string(&jw, "command", "train");
    json_string(&jw, "task", "vit");
    json_object_begin(&jw, "config", JSON_INLINE);
    json_uint(&jw, "img_size", m->cfg.img);
    json_uint(&jw, "patch_size", m->cfg.patch);
    json_uint(&jw, "num_hiddens", m->cfg.hiddens);
    json_uint(&jw, "mlp_num_hiddens", m->cfg.ffn);
    json_uint(&jw, "num_heads", m->cfg.heads);
    json_uint(&jw, "num_blks", m->cfg.layers);
    json_number(&jw, "dropout", r->a->dropout);
    json_number(&jw, "lr", r->a->lr);
    json_int(&jw, "batch_size", r->a->batch_size);
    json_string(&jw, "optimizer", r->a->optimizer == OPTIM_SGD ? "sgd" : "adam");
    json_int(&jw, "seed", r->a->seed);
    json_end(&jw);
    json_uint(&jw, "train_size", r->data.train.n);
    json_uint(&jw, "test_size", r->data.test.n);
    json_uint(&jw, "parameters", m->total);
    json_array_begin(&jw, "history", JSON_BLOCK);
    for (size_t e = 0; e < r->nhist; e++) {
        json_object_begin(&jw, NULL, JSON_INLINE);
        json_uint(&jw, "epoch", e + 1);
        json_number(&jw, "train_loss", r->hist[e].train_loss);
        json_number(&jw, "val_loss", r->hist[e].val_loss);
        json_number(&jw, "val_acc", r->hist[e].val_acc);
        json_end(&jw);
    }
    json_end(&jw);
    json_number(&jw, "accuracy", r->accuracy);
    json_number(&jw, "val_loss", r->val_loss);
    json_array_begin(&jw, "labels", JSON_INLINE);
    for (size_t q = 0; q < IDX_CLASSES; q++)
        json_string(&jw, NULL, idx_fashion_labels[q]);
    json_end(&jw);
    json_array_begin(&jw, "confusion", JSON_BLOCK);
    for (size_t t = 0; t < IDX_CLASSES; t++) {
        json_array_begin(&jw, NULL, JSON_INLINE);
        for (size_t p = 0; p < IDX_CLASSES; p++)
            json_int(&jw, NULL, r->confusion[t][p]);
        json_end(&jw);
    }
    json_end(&jw);
    json_end(&jw);
    return json_writer_finish(&jw);
}

/* --plot: d2l's Trainer board, the epochs' training loss, test loss and
 * test accuracy against the epoch (d2l's legend: train_loss, val_loss,
 * val_acc); train_vit refuses it with --epochs 0. */
static int vit_plot(const vit_run *r, FILE *rep)
{
    const size_t n = r->nhist;
    text_font *font = NULL;
    if (output_font_open(r->a->font, &font) != EXIT_OK)
        return EXIT_RUNTIME;
    double *v = malloc(4 * n * sizeof(double)); /* (4, n): epoch, the three curves */
    char err[512] = "out of memory", title[96];
    attn_image img = {0, 0, NULL};
    int status = EXIT_RUNTIME;
    if (v != NULL) {
        double *x = v, *tl = v + n, *vl = v + 2 * n, *va = v + 3 * n;
        for (size_t e = 0; e < n; e++) {
            x[e] = (double)(e + 1);
            tl[e] = r->hist[e].train_loss;
            vl[e] = r->hist[e].val_loss;
            va[e] = r->hist[e].val_acc;
        }
        const plot_series s[3] = {{x, tl, n, "train_loss"}, {x, vl, n, "val_loss"},
                                  {x, va, n, "val_acc"}};
        snprintf(title, sizeof title, _("ViT on Fashion-MNIST: test accuracy %.4f after %zu epochs"),
                 r->hist[n - 1].val_acc, n);
        plot_figure fig;
        memset(&fig, 0, sizeof fig);
        fig.series = s;
        fig.nseries = 3;
        fig.title = title;
        fig.xlabel = "epoch";
        fig.font = font;
        if (plot_draw(&img, &fig, err, sizeof err) == 0)
            status = output_png(r->a->plot, &img, rep, "the epochs' losses and accuracy");
    }
    if (status != EXIT_OK && !img.rgb)
        cli_error("%s: %s", r->a->plot, err);
    image_free(&img);
    free(v);
    output_font_close(font);
    return status;
}

/* --confusion-png: row t the shares of true class t's test images
 * predicted as each class (a row of no images: zeros). */
static int vit_confusion_png(const vit_run *r, FILE *rep)
{
    float share[IDX_CLASSES * IDX_CLASSES];
    char title[64];
    for (size_t t = 0; t < IDX_CLASSES; t++) {
        long n = 0;
        for (size_t p = 0; p < IDX_CLASSES; p++)
            n += r->confusion[t][p];
        for (size_t p = 0; p < IDX_CLASSES; p++)
            share[t * IDX_CLASSES + p] = n ? (float)((double)r->confusion[t][p] / (double)n) : 0;
    }
    snprintf(title, sizeof title, _("%zu test images, accuracy %.4f"), r->data.test.n, r->accuracy);
    heat_panel panel = {share, IDX_CLASSES, IDX_CLASSES, title, NULL, NULL};
    heat_figure fig;
    memset(&fig, 0, sizeof fig);
    fig.panels = &panel;
    fig.grid_rows = fig.grid_cols = 1;
    fig.xlabel = _("predicted");
    fig.ylabel = _("true");
    fig.xticklabels = idx_fashion_labels;
    fig.yticklabels = idx_fashion_labels;
    fig.cmap = cmap_find("Blues");
    fig.vmin = 0;
    fig.vmax = 1;
    fig.colorbar_label = _("share of the true class");
    return output_heatmap(r->a->confusion_png, &fig, rep, "the confusion matrix");
}

/* --html's "page": the trained model (its tensors base64 float32, as
 * vit_model_load reads them: the page's module runs `attn vit --input -
 * --pixels …` with it on standard input), and the first test images, (n,
 * S, S) grey bytes in base64 with their true labels, to pick from; the
 * --json document before it holds the history and the accuracy. */
static int vit_page_object(FILE *f, const void *ctx)
{
    const vit_run *r = ctx;
    const idx_set *t = &r->data.test;
    const size_t n = t->n < VIT_PAGE_IMAGES ? t->n : VIT_PAGE_IMAGES;
    const size_t S = r->m.cfg.img;
    json_writer jw;
    json_writer_init(&jw, f);
    jw.base64_from = PAGE_BASE64_FROM;
    json_object_begin(&jw, NULL, JSON_BLOCK);
    page_head(&jw, "vit", "attn train --task vit", r->argc, r->argv, cmap_find("Reds"));
    json_uint(&jw, "img_size", S);
    json_uint(&jw, "patch_size", r->m.cfg.patch);
    json_uint(&jw, "num_heads", r->m.cfg.heads);
    json_uint(&jw, "num_blks", r->m.cfg.layers);
    json_object_begin(&jw, "images", JSON_BLOCK);
    json_uint(&jw, "count", n);
    json_array_begin(&jw, "labels", JSON_INLINE); /* (n,) the true classes */
    for (size_t i = 0; i < n; i++)
        json_uint(&jw, NULL, t->labels[i]);
    json_end(&jw);
    json_base64(&jw, "pixels", t->pixels, n * S * S); /* (n, S, S) bytes, row by row */
    json_end(&jw);
    vit_model_json(&jw, "model", &r->m, idx_fashion_labels);
    json_end(&jw);
    return json_writer_finish(&jw);
}

static int vit_outputs(const vit_run *r, FILE *rep)
{
    const struct train_args *a = r->a;
    char err[1200];
    if (a->save) {
        if (vit_model_save(a->save, &r->m, idx_fashion_labels, err, sizeof err) != 0) {
            cli_error("%s", err);
            return EXIT_RUNTIME;
        }
        fprintf(rep, _("wrote %s: the model (d2l's state_dict names)\n"), a->save);
    }
    if (a->png && vit_png_set(a->png, a->font, &r->m, &r->data.test, 8, rep) != EXIT_OK)
        return EXIT_RUNTIME;
    if (a->confusion_png && vit_confusion_png(r, rep) != EXIT_OK)
        return EXIT_RUNTIME;
    if (a->plot) {
        int status = vit_plot(r, rep);
        if (status != EXIT_OK)
            return status;
    }
    if (a->json) {
        int status = output_json(a->json, vit_write_json, r, rep,
                                 "the history and the confusion matrix");
        if (status != EXIT_OK)
            return status;
    }
    if (a->html) {
        char what[128];
        snprintf(what, sizeof what, "%s", _("a page: pick a test image, every head's <cls> "
                                            "attention over it, recomputed"));
        return output_page_docs(a->html, "attn train", vit_write_json, r, vit_page_object, r,
                                rep, what);
    }
    return EXIT_OK;
}

int train_vit(struct train_args *a, const opt_given *g, int argc, char **argv)
{
    vit_run r;
    int status;
    if ((status = vit_check_options(g)) != EXIT_OK)
        return status;
    vit_defaults(a, g);
    if (a->plot && a->epochs == 0) {
        cli_error("--plot draws the epochs: --epochs 0 trains none");
        return EXIT_USAGE;
    }
    if (a->load && (opt_is_given(g, "hiddens") || opt_is_given(g, "heads") ||
                    opt_is_given(g, "layers") || opt_is_given(g, "ffn") ||
                    opt_is_given(g, "patch"))) {
        cli_error("--hiddens, --heads, --layers, --ffn and --patch are read from the model "
                  "file of --load");
        return EXIT_USAGE;
    }
    {
        const char *paths[5] = {a->json, a->save, a->png, a->confusion_png, a->plot},
                   *names[5] = {"--json", "--save", "--png", "--confusion-png", "--plot"};
        if ((status = output_check_files(paths, names, 5)) != EXIT_OK ||
            (status = output_page_check(a->html)) != EXIT_OK)
            return status;
    }
    memset(&r, 0, sizeof r);
    r.a = a;
    r.argc = argc;
    r.argv = argv;
    FILE *rep = output_report_stream(a->json);
    if ((status = vit_prepare(&r, a)) == EXIT_OK && (status = vit_train(&r, rep)) == EXIT_OK)
        status = vit_outputs(&r, rep);
    vit_run_free(&r);
    return status;
}
