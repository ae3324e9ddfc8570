/* train.c — the training loop (see train.h). */
#include "train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"

#ifdef _OPENMP
#include <omp.h>
#endif

void train_opts_default(train_opts *o, train_kind kind)
{
    memset(o, 0, sizeof *o);
    o->hiddens = 32;
    o->heads = 4;
    o->posenc = 1;
    o->optimizer = OPTIM_ADAM;
    o->lr = 1e-2;
    o->batch_size = 64;
    o->seed = 0;
    o->steps = kind == TASK_REVERSE ? 400 : kind == TASK_PREVIOUS ? 300 : 200;
}

/* The threads of the chunk loops: --threads, or by default every core when
 * a step is large enough (about 2e7 multiply-adds) to pay for waking them,
 * else one: a default task's step (B 64, n 8, d 32) is a few million and
 * runs fastest on one core, the more so on a machine that is busy. */
static int train_threads(const trainer *tr)
{
#ifdef _OPENMP
    const double work = (double)tr->B * (double)tr->T * (double)tr->model.cfg.hiddens *
                        (12.0 * (double)tr->model.cfg.hiddens + 6.0 * (double)tr->T +
                         3.0 * (double)tr->model.cfg.classes);
    if (tr->opts.threads > 0)
        return tr->opts.threads;
    return work < 2e7 ? 1 : omp_get_max_threads();
#else
    (void)tr;
    return 1;
#endif
}

static int is_data(const train_task *t)
{
    return t->kind == TASK_APPLE || t->kind == TASK_DATA;
}

int trainer_init(trainer *tr, train_task *task, const train_opts *opts, const tmodel *model,
                 char *err, size_t errlen)
{
    tmodel_config cfg = {0};
    size_t i, bytes;
    memset(tr, 0, sizeof *tr);
    tr->task = task;
    tr->opts = *opts;
    if (!(opts->lr > 0.0) || !isfinite(opts->lr)) {
        snprintf(err, errlen, "the learning rate %g is not a positive number", opts->lr);
        return -1;
    }
    cfg.vocab = task->V;
    cfg.classes = task->C;
    cfg.hiddens = opts->hiddens;
    cfg.heads = opts->heads;
    cfg.posenc = opts->posenc;
    cfg.addnorm = opts->addnorm;
    cfg.bias = opts->bias;
    cfg.causal = opts->causal;
    cfg.dropout = opts->dropout;
    if (model) {
        const tmodel_config *mc = &model->cfg;
        if (mc->vocab != cfg.vocab || mc->classes != cfg.classes || mc->hiddens != cfg.hiddens ||
            mc->heads != cfg.heads || mc->addnorm != cfg.addnorm || mc->bias != cfg.bias ||
            mc->posenc != cfg.posenc) {
            snprintf(err, errlen, "the model (vocabulary %zu, classes %zu, hiddens %zu, heads "
                     "%zu, posenc %d, addnorm %d, bias %d) does not fit the options (%zu, %zu, "
                     "%zu, %zu, %d, %d, %d)", mc->vocab, mc->classes, mc->hiddens, mc->heads,
                     mc->posenc, mc->addnorm, mc->bias, cfg.vocab, cfg.classes, cfg.hiddens,
                     cfg.heads, cfg.posenc, cfg.addnorm, cfg.bias);
            return -1;
        }
    }
    if (tmodel_alloc(&tr->model, &cfg, err, errlen))
        return -1;
    if (model)
        tmodel_copy_params(&tr->model, model);
    else
        tmodel_init(&tr->model, opts->seed);
    if (optim_init(&tr->opt, opts->optimizer, opts->lr, tr->model.total, err, errlen))
        goto fail;

    /* the batch: B sequences of T positions */
    if (is_data(task)) {
        tr->T = task->train.T;
        tr->B = opts->batch_size == 0 || opts->batch_size >= task->train.n ? task->train.n
                                                                           : opts->batch_size;
        if (!(tr->order = malloc((task->train.n ? task->train.n : 1) * sizeof *tr->order)))
            goto oom;
        for (i = 0; i < task->train.n; i++)
            tr->order[i] = i;
        tr->cursor = task->train.n; /* shuffle before the first batch */
    } else {
        tr->T = task->length;
        tr->B = opts->batch_size ? opts->batch_size : 64;
    }
    if (tr->B == 0) {
        snprintf(err, errlen, "no training sequences");
        goto fail;
    }
    if (train_set_alloc(&tr->batch, tr->B, tr->T, err, errlen))
        goto fail;
    rng_seed(&tr->data_rng, opts->seed ^ 0x6261746368657321ULL); /* "batches!" */

    /* chunks, each with its cache and gradient buffer */
    tr->nchunks = (tr->B + TRAIN_CHUNK - 1) / TRAIN_CHUNK;
    if (size_mul(tr->nchunks, tr->model.total, &bytes) ||
        size_mul(bytes, sizeof(double), &bytes))
        goto oom;
    tr->cache = calloc(tr->nchunks, sizeof *tr->cache);
    tr->fcache = calloc(tr->nchunks, sizeof *tr->fcache);
    tr->chunk_grads = malloc(bytes ? bytes : 1);
    tr->chunk_gradsf = malloc(bytes / 2 ? bytes / 2 : 1);
    tr->grads = calloc(tr->model.total ? tr->model.total : 1, sizeof *tr->grads);
    tr->chunk_loss = calloc(tr->nchunks, sizeof *tr->chunk_loss);
    tr->chunk_count = calloc(tr->nchunks, sizeof *tr->chunk_count);
    tr->chunk_correct = calloc(tr->nchunks, sizeof *tr->chunk_correct);
    if (!tr->cache || !tr->fcache || !tr->chunk_grads || !tr->chunk_gradsf || !tr->grads || !tr->chunk_loss || !tr->chunk_count ||
        !tr->chunk_correct)
        goto oom;
    for (i = 0; i < tr->nchunks; i++) {
        /* evaluation sets may be longer than the training batches */
        size_t Tmax = tr->T;
        if (task->heldout.T > Tmax)
            Tmax = task->heldout.T;
        if (task->eval.T > Tmax)
            Tmax = task->eval.T;
        if (tcache_alloc(&tr->cache[i], &tr->model, TRAIN_CHUNK, Tmax, err, errlen))
            goto fail;
        if (tfast_cache_alloc(&tr->fcache[i], &tr->model, TRAIN_CHUNK, Tmax))
            goto oom;
    }
    if (tfast_weights_alloc(&tr->fw, &tr->model))
        goto oom;
    return 0;
oom:
    snprintf(err, errlen, "out of memory for the training buffers");
fail:
    trainer_free(tr);
    return -1;
}

void trainer_free(trainer *tr)
{
    size_t i;
    if (tr->cache)
        for (i = 0; i < tr->nchunks; i++)
            tcache_free(&tr->cache[i]);
    if (tr->fcache)
        for (i = 0; i < tr->nchunks; i++)
            tfast_cache_free(&tr->fcache[i]);
    free(tr->cache);
    free(tr->fcache);
    tfast_weights_free(&tr->fw);
    free(tr->chunk_grads);
    free(tr->chunk_gradsf);
    free(tr->grads);
    free(tr->chunk_loss);
    free(tr->chunk_count);
    free(tr->chunk_correct);
    free(tr->order);
    train_set_free(&tr->batch);
    optim_free(&tr->opt);
    tmodel_free(&tr->model);
    memset(tr, 0, sizeof *tr);
}

/* The next batch into tr->batch. */
static void next_batch(trainer *tr)
{
    train_task *task = tr->task;
    const size_t T = tr->T;
    size_t i;
    if (!is_data(task)) {
        for (i = 0; i < tr->B; i++)
            train_task_draw(task, &tr->batch, i, &tr->data_rng);
        return;
    }
    for (i = 0; i < tr->B; i++) {
        size_t src;
        if (tr->B == task->train.n) {
            src = i; /* the whole set, in file order */
        } else {
            if (tr->cursor == task->train.n) {
                /* a new epoch: Fisher–Yates shuffle */
                size_t j;
                for (j = task->train.n - 1; j > 0; j--) {
                    size_t k = (size_t)(rng_next(&tr->data_rng) % (j + 1)), tmp = tr->order[j];
                    tr->order[j] = tr->order[k];
                    tr->order[k] = tmp;
                }
                tr->cursor = 0;
            }
            src = tr->order[tr->cursor++];
        }
        memcpy(tr->batch.tokens + i * T, task->train.tokens + src * T, T * sizeof(int));
        memcpy(tr->batch.targets + i * T, task->train.targets + src * T, T * sizeof(int));
        tr->batch.lens[i] = task->train.lens[src];
    }
}

/* The dropout of chunk c at this step: the stream of the whole batch,
 * entered at the chunk's first weight, so that the mask of weight
 * ((b·NH + h)·T + q)·T + k is the same however the batch is cut. */
static mha_dropout chunk_dropout(const trainer *tr, unsigned long long step_seed, size_t b0)
{
    mha_dropout d;
    const size_t per = tr->model.cfg.heads * tr->T * tr->T; /* weights per example */
    d.p = tr->model.cfg.dropout;
    d.seed = step_seed + (unsigned long long)(b0 * per) * 0x9e3779b97f4a7c15ULL;
    return d;
}

int trainer_step(trainer *tr, train_stats *stats, char *err, size_t errlen)
{
    const size_t total = tr->model.total, B = tr->B, T = tr->T;
    size_t count = 0, correct = 0, i, c;
    double loss = 0.0;
    int failed = 0;
    const int nth = train_threads(tr);
    char cerr[256] = "";
    rng sr;
    unsigned long long step_seed;

    next_batch(tr);
    /* the batch's number of targets: the mean divides by it */
    for (i = 0; i < B * T; i++)
        count += tr->batch.targets[i] >= 0;
    if (count == 0) {
        snprintf(err, errlen, "step %ld: the batch has no targets", tr->step + 1);
        return -1;
    }
    rng_seed(&sr, tr->opts.seed ^ ((unsigned long long)tr->step * 0xd1b54a32d192ed03ULL));
    step_seed = rng_next(&sr);

    if (!tr->opts.reference)
        tfast_weights_update(&tr->fw, &tr->model);
    /* forward and backward, chunk by chunk, each into its own buffer */
    (void)nth; /* (unused without OpenMP) */
#pragma omp parallel for schedule(static) num_threads(nth)
    for (c = 0; c < tr->nchunks; c++) {
        const size_t b0 = c * TRAIN_CHUNK, nb = B - b0 < TRAIN_CHUNK ? B - b0 : TRAIN_CHUNK;
        const int *tok = tr->batch.tokens + b0 * T, *tgt = tr->batch.targets + b0 * T;
        const long *lens = tr->batch.lens + b0;
        double *g = tr->chunk_grads + c * total;
        mha_dropout drop = chunk_dropout(tr, step_seed, b0);
        char e[256];
        if (!tr->opts.reference) {
            /* the fast path (train_fast.c) */
            float *gf = tr->chunk_gradsf + c * total;
            memset(gf, 0, total * sizeof *gf);
            tr->chunk_loss[c] = tfast_step(gf, &tr->fcache[c], &tr->model, &tr->fw, tok, lens, tgt,
                                           nb, T, 1.0 / (double)count, &drop,
                                           &tr->chunk_count[c], &tr->chunk_correct[c]);
            continue;
        }
        memset(g, 0, total * sizeof *g);
        if (tmodel_forward(&tr->model, &tr->cache[c], tok, lens, nb, T, &drop, e, sizeof e) ||
            (tr->chunk_loss[c] = tmodel_loss(&tr->cache[c], &tr->model, tgt,
                                             &tr->chunk_count[c], &tr->chunk_correct[c]),
             tmodel_backward(g, &tr->cache[c], &tr->model, tok, lens, tgt, 1.0 / (double)count,
                             &drop, e, sizeof e))) {
#pragma omp critical
            {
                failed = 1;
                snprintf(cerr, sizeof cerr, "%s", e);
            }
        }
    }
    if (failed) {
        snprintf(err, errlen, "%s", cerr);
        return -1;
    }

    /* add the chunks' gradients in chunk order */
    memset(tr->grads, 0, total * sizeof *tr->grads);
    correct = 0;
    for (c = 0; c < tr->nchunks; c++) {
        if (tr->opts.reference) {
            const double *g = tr->chunk_grads + c * total;
            for (i = 0; i < total; i++)
                tr->grads[i] += g[i];
        } else {
            const float *g = tr->chunk_gradsf + c * total;
            for (i = 0; i < total; i++)
                tr->grads[i] += g[i];
        }
        loss += tr->chunk_loss[c];
        correct += tr->chunk_correct[c];
    }
    loss /= (double)count;
    if (!isfinite(loss)) {
        snprintf(err, errlen, "step %ld: the loss became %s; try a smaller --lr", tr->step + 1,
                 isnan(loss) ? "nan" : "infinite");
        return -1;
    }
    if (stats) {
        stats->loss = loss;
        stats->accuracy = (double)correct / (double)count;
        stats->count = count;
    }
    optim_step(&tr->opt, &tr->model, tr->grads);
    tr->step++;
    return 0;
}

int trainer_evaluate(trainer *tr, const train_set *s, train_stats *stats, char *err,
                     size_t errlen)
{
    const size_t nc = (s->n + TRAIN_CHUNK - 1) / TRAIN_CHUNK;
    size_t count = 0, correct = 0, base, c;
    double loss = 0.0;
    const int nth = train_threads(tr);
    (void)nth; /* (unused without OpenMP) */
    if (s->T > tr->cache[0].Tmax) {
        snprintf(err, errlen, "sequences of %zu tokens are longer than the %zu the trainer was "
                 "made for", s->T, tr->cache[0].Tmax);
        return -1;
    }
    if (!tr->opts.reference)
        tfast_weights_update(&tr->fw, &tr->model);
    /* the trainer's caches, nchunks at a time, summed in chunk order */
    for (base = 0; base < nc; base += tr->nchunks) {
        size_t end = base + tr->nchunks < nc ? base + tr->nchunks : nc;
        int failed = 0;
        char cerr[256] = "";
#pragma omp parallel for schedule(static) num_threads(nth)
        for (c = base; c < end; c++) {
            const size_t b0 = c * TRAIN_CHUNK;
            const size_t nb = s->n - b0 < TRAIN_CHUNK ? s->n - b0 : TRAIN_CHUNK;
            tcache *cache = &tr->cache[c - base];
            char e[256];
            if (!tr->opts.reference) {
                tr->chunk_loss[c - base] =
                    tfast_step(NULL, &tr->fcache[c - base], &tr->model, &tr->fw,
                               s->tokens + b0 * s->T, s->lens + b0, s->targets + b0 * s->T, nb,
                               s->T, 1.0, NULL, &tr->chunk_count[c - base],
                               &tr->chunk_correct[c - base]);
                continue;
            }
            if (tmodel_forward(&tr->model, cache, s->tokens + b0 * s->T, s->lens + b0, nb, s->T,
                               NULL, e, sizeof e)) {
#pragma omp critical
                {
                    failed = 1;
                    snprintf(cerr, sizeof cerr, "%s", e);
                }
                continue;
            }
            tr->chunk_loss[c - base] = tmodel_loss(cache, &tr->model, s->targets + b0 * s->T,
                                                   &tr->chunk_count[c - base],
                                                   &tr->chunk_correct[c - base]);
        }
        if (failed) {
            snprintf(err, errlen, "%s", cerr);
            return -1;
        }
        for (c = base; c < end; c++) {
            loss += tr->chunk_loss[c - base];
            count += tr->chunk_count[c - base];
            correct += tr->chunk_correct[c - base];
        }
    }
    stats->count = count;
    stats->loss = count ? loss / (double)count : 0.0;
    stats->accuracy = count ? (double)correct / (double)count : 0.0;
    return 0;
}

int trainer_final(trainer *tr, train_final *f, char *err, size_t errlen)
{
    const train_set *s = is_data(tr->task) ? &tr->task->train : &tr->task->eval;
    memset(f, 0, sizeof *f);
    if (trainer_evaluate(tr, s, &f->train, err, errlen))
        return -1;
    f->has_heldout = tr->task->heldout.n > 0;
    if (f->has_heldout && trainer_evaluate(tr, &tr->task->heldout, &f->heldout, err, errlen))
        return -1;
    return 0;
}

int trainer_attention(trainer *tr, const int *tokens, size_t len, float *weights, char *err,
                      size_t errlen)
{
    tcache *c = &tr->cache[0];
    long l = (long)len;
    if (len == 0 || len > c->Tmax) {
        snprintf(err, errlen, "a probe of %zu tokens (at most %zu)", len, c->Tmax);
        return -1;
    }
    if (tmodel_forward(&tr->model, c, tokens, &l, 1, len, NULL, err, errlen))
        return -1;
    /* (1, NH, len, len) */
    memcpy(weights, c->A, tr->model.cfg.heads * len * len * sizeof(float));
    return 0;
}

int trainer_apple(trainer *tr, const train_set *s, const long *cues, size_t ncues,
                  train_apple *out, char *err, size_t errlen)
{
    const size_t d = tr->model.cfg.hiddens, NH = tr->model.cfg.heads, T = s->T;
    float *feat = NULL, *inp = NULL; /* (n, d) 苹果's output and input */
    int *cls = NULL;                 /* (n,) its class */
    size_t i, j, h, k, nw = 0, na = 0, correct = 0;
    double cue = 0.0, sw = 0.0, sa = 0.0, swi = 0.0, sai = 0.0;
    size_t bytes;
    memset(out, 0, sizeof *out);
    if (s->n == 0) {
        snprintf(err, errlen, "no sentences to measure");
        return -1;
    }
    if (size_mul(s->n, d, &bytes) || size_mul(bytes, sizeof(float), &bytes) ||
        !(feat = malloc(bytes)) || !(inp = malloc(bytes)) ||
        !(cls = malloc(s->n * sizeof *cls))) {
        free(feat);
        free(inp);
        snprintf(err, errlen, "out of memory for the 苹果 measurements");
        return -1;
    }
    for (i = 0; i < s->n; i++) {
        const int *tok = s->tokens + i * T, *tgt = s->targets + i * T;
        tcache *c = &tr->cache[0];
        size_t at = T, C = tr->model.cfg.classes, best = 0;
        for (k = 0; k < T; k++)
            if (tgt[k] >= 0) {
                at = k; /* the labelled position: the first label_at token */
                break;
            }
        if (at == T) {
            snprintf(err, errlen, "sentence %zu has no label", i + 1);
            goto fail;
        }
        if (tmodel_forward(&tr->model, c, tok, s->lens + i, 1, T, NULL, err, errlen))
            goto fail;
        /* the attention of its row on the cue keys, averaged over heads */
        for (h = 0; h < NH; h++) {
            const float *row = c->A + (h * T + at) * T; /* (T,) */
            for (k = 0; k < T; k++) {
                for (j = 0; j < ncues; j++)
                    if (tok[k] == cues[j])
                        break;
                if (j < ncues)
                    cue += row[k] / (double)NH;
            }
        }
        memcpy(feat + i * d, tcache_features(c, &tr->model) + at * d, d * sizeof(float));
        memcpy(inp + i * d, c->X + at * d, d * sizeof(float));
        cls[i] = tgt[at];
        for (k = 1; k < C; k++)
            if (c->logits[at * C + k] > c->logits[at * C + best])
                best = k;
        correct += best == (size_t)cls[i];
    }
    /* mean cosine over pairs, within and across classes */
    for (i = 0; i < s->n; i++)
        for (j = i + 1; j < s->n; j++) {
            double cf = attn_cosine(feat + i * d, feat + j * d, d);
            double ci = attn_cosine(inp + i * d, inp + j * d, d);
            if (cls[i] == cls[j]) {
                sw += cf;
                swi += ci;
                nw++;
            } else {
                sa += cf;
                sai += ci;
                na++;
            }
        }
    out->accuracy = (double)correct / (double)s->n;
    out->cue_weight = cue / (double)s->n;
    out->cos_within = nw ? sw / (double)nw : 0.0;
    out->cos_across = na ? sa / (double)na : 0.0;
    out->cos_within_input = nw ? swi / (double)nw : 0.0;
    out->cos_across_input = na ? sai / (double)na : 0.0;
    free(feat);
    free(inp);
    free(cls);
    return 0;
fail:
    free(feat);
    free(inp);
    free(cls);
    return -1;
}
