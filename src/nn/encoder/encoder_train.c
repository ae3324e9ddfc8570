/* encoder_train.c — the training loop (see encoder_train.h). */
#include "encoder_train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention_fast.h"
#include "checked.h"
#include "chunks.h"
#include "i18n.h"

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
    o->layers = 1;
    if (kind == TASK_INDUCTION) {
        /* two causal layers: a previous-token head below, an induction head above */
        o->layers = 2;
        o->causal = 1;
        /* measured on ten seeds: the loss falls off its plateau between steps
         * 240 and 490; at 800 the worst held-out accuracy is 98% */
        o->steps = 800;
        o->lr = 5e-3;
    }
}

/* The threads of the chunk loops: --threads, or by default the cores free
 * now (cores_threads) when a step is large enough (about 2e6
 * multiply-adds) to pay for waking them, else one. A default task's step
 * (B 64, n 8, d 32: about 7.6e6) runs 1.4-1.9 times as fast on two idle
 * cores as on one; on a busy machine the step runs on the cores other work
 * leaves free, asked again as the run goes on. */
static int train_threads(const trainer *tr)
{
#ifdef _OPENMP
    const tmodel_config *mc = &tr->model.cfg;
    const double work = (double)tr->B * (double)tr->T * (double)mc->hiddens *
                        ((12.0 * (double)mc->hiddens + 6.0 * (double)tr->T +
                          6.0 * (double)mc->ffn) * (double)mc->layers +
                         3.0 * (double)mc->classes);
    return train_choose_threads(tr->opts.threads, work);
#else
    (void)tr;
    return 1;
#endif
}

int train_choose_threads(int threads, double work)
{
    if (threads > 0)
        return threads;
    return work < 2e6 ? 1 : cores_threads();
}

static int is_data(const train_task *t)
{
    return t->kind == TASK_APPLE || t->kind == TASK_DATA;
}

static int out_of_memory(char *err, size_t errlen)
{
    snprintf(err, errlen, "%s", _("out of memory for the training buffers"));
    return -1;
}

size_t train_task_longest(const train_task *task)
{
    size_t T = is_data(task) ? task->train.T : task->length;
    if (task->heldout.T > T)
        T = task->heldout.T;
    if (task->eval.T > T)
        T = task->eval.T;
    return T;
}

/* The model's shape: the task's vocabulary and classes, the options' rest. */
static tmodel_config model_config(const train_task *task, const train_opts *opts)
{
    tmodel_config cfg = {0};
    cfg.vocab = task->V;
    cfg.classes = task->C;
    cfg.hiddens = opts->hiddens;
    cfg.heads = opts->heads;
    cfg.posenc = opts->posenc;
    cfg.learned = opts->learned;
    if (opts->learned)
        cfg.max_len = opts->max_len ? opts->max_len : train_task_longest(task);
    cfg.addnorm = opts->addnorm;
    cfg.bias = opts->bias;
    cfg.causal = opts->causal;
    cfg.window = opts->window;
    cfg.dropout = opts->dropout;
    cfg.layers = opts->layers ? opts->layers : 1;
    cfg.ffn = opts->ffn;
    if (tmodel_is_stack(&cfg))
        cfg.addnorm = 1;
    return cfg;
}

/* A model to start from must have the shape the options ask for. */
static int check_model_fits(const tmodel *model, const tmodel_config *cfg, char *err, size_t errlen)
{
    const tmodel_config *mc = &model->cfg;
    if (mc->layers != cfg->layers || mc->ffn != cfg->ffn) {
        snprintf(err, errlen,
                 _("the model (layers %zu, ffn_num_hiddens %zu) does not fit the options "
                   "(--layers %zu, --ffn %zu)"),
                 mc->layers, mc->ffn, cfg->layers, cfg->ffn);
        return -1;
    }
    if (mc->vocab != cfg->vocab || mc->classes != cfg->classes || mc->hiddens != cfg->hiddens ||
        mc->heads != cfg->heads || mc->addnorm != cfg->addnorm || mc->bias != cfg->bias ||
        mc->posenc != cfg->posenc || mc->learned != cfg->learned ||
        mc->max_len != cfg->max_len) {
        snprintf(err, errlen,
                 _("the model (vocabulary %zu, classes %zu, hiddens %zu, heads "
                 "%zu, posenc %d, learned P %zu, addnorm %d, bias %d) does not fit the options "
                 "(%zu, %zu, %zu, %zu, %d, %zu, %d, %d)"),
                 mc->vocab, mc->classes, mc->hiddens, mc->heads, mc->posenc, mc->max_len,
                 mc->addnorm, mc->bias, cfg->vocab, cfg->classes, cfg->hiddens, cfg->heads,
                 cfg->posenc, cfg->max_len, cfg->addnorm, cfg->bias);
        return -1;
    }
    return 0;
}

/* The batch: B sequences of T positions, the order of a data set's
 * sequences, and the batches' random stream. */
static int batch_init(trainer *tr, char *err, size_t errlen)
{
    const train_task *task = tr->task;
    if (is_data(task)) {
        tr->T = task->train.T;
        tr->B = tr->opts.batch_size == 0 || tr->opts.batch_size >= task->train.n
                    ? task->train.n
                    : tr->opts.batch_size;
        if (!(tr->order = malloc((task->train.n ? task->train.n : 1) * sizeof *tr->order)))
            return out_of_memory(err, errlen);
        for (size_t i = 0; i < task->train.n; i++)
            tr->order[i] = i;
        tr->cursor = task->train.n; /* shuffle before the first batch */
    } else {
        tr->T = task->length;
        tr->B = tr->opts.batch_size ? tr->opts.batch_size : 64;
    }
    if (tr->B == 0) {
        snprintf(err, errlen, "%s", _("no training sequences"));
        return -1;
    }
    if (train_set_alloc(&tr->batch, tr->B, tr->T, err, errlen))
        return -1;
    rng_seed(&tr->data_rng, tr->opts.seed ^ 0x6261746368657321ULL); /* "batches!" */
    return 0;
}

/* The longest sequences the caches must hold: evaluation sets may be
 * longer than the training batches. */
static size_t longest_sequence(const trainer *tr)
{
    size_t Tmax = tr->T;
    if (tr->task->heldout.T > Tmax)
        Tmax = tr->task->heldout.T;
    if (tr->task->eval.T > Tmax)
        Tmax = tr->task->eval.T;
    return Tmax;
}

/* The chunks, each with its caches (reference and fast) and gradient
 * buffers (nchunks × total), and the fast path's transposed weights. */
static int chunks_alloc(trainer *tr, char *err, size_t errlen)
{
    const size_t Tmax = longest_sequence(tr);
    size_t bytes;
    tr->nchunks = (tr->B + TRAIN_CHUNK - 1) / TRAIN_CHUNK;
    if (size_mul(tr->nchunks, tr->model.total, &bytes) ||
        size_mul(bytes, sizeof(double), &bytes))
        return out_of_memory(err, errlen);
    tr->cache = calloc(tr->nchunks, sizeof *tr->cache);
    tr->fcache = calloc(tr->nchunks, sizeof *tr->fcache);
    tr->chunk_grads = malloc(bytes ? bytes : 1);
    tr->chunk_gradsf = malloc(bytes / 2 ? bytes / 2 : 1);
    tr->grads = calloc(tr->model.total ? tr->model.total : 1, sizeof *tr->grads);
    tr->chunk_loss = calloc(tr->nchunks, sizeof *tr->chunk_loss);
    tr->chunk_count = calloc(tr->nchunks, sizeof *tr->chunk_count);
    tr->chunk_correct = calloc(tr->nchunks, sizeof *tr->chunk_correct);
    tr->chunk_scores = calloc(tr->nchunks * 2 * tr->model.cfg.layers * tr->model.cfg.heads,
                              sizeof *tr->chunk_scores);
    tr->chunk_positions = calloc(tr->nchunks, sizeof *tr->chunk_positions);
    if (!tr->cache || !tr->fcache || !tr->chunk_grads || !tr->chunk_gradsf || !tr->grads ||
        !tr->chunk_loss || !tr->chunk_count || !tr->chunk_correct || !tr->chunk_scores ||
        !tr->chunk_positions)
        return out_of_memory(err, errlen);
    for (size_t i = 0; i < tr->nchunks; i++) {
        if (tcache_alloc(&tr->cache[i], &tr->model, TRAIN_CHUNK, Tmax, err, errlen))
            return -1;
        if (tfast_cache_alloc(&tr->fcache[i], &tr->model, TRAIN_CHUNK, Tmax))
            return out_of_memory(err, errlen);
    }
    if (tfast_weights_alloc(&tr->fw, &tr->model))
        return out_of_memory(err, errlen);
    return 0;
}

int trainer_init(trainer *tr, train_task *task, const train_opts *opts, const tmodel *model,
                 char *err, size_t errlen)
{
    const tmodel_config cfg = model_config(task, opts);
    memset(tr, 0, sizeof *tr);
    tr->task = task;
    tr->opts = *opts;
    if (!(opts->lr > 0.0) || !isfinite(opts->lr)) {
        snprintf(err, errlen, _("the learning rate %g is not a positive number"), opts->lr);
        return -1;
    }
    if (cfg.learned && train_task_longest(task) > cfg.max_len) {
        snprintf(err, errlen, _("sequences of %zu positions, but pos_embedding holds %zu (max_len)"),
                 train_task_longest(task), cfg.max_len);
        return -1;
    }
    if (model && check_model_fits(model, &cfg, err, errlen))
        return -1;
    if (tmodel_alloc(&tr->model, &cfg, err, errlen))
        return -1;
    if (model)
        tmodel_copy_params(&tr->model, model);
    else
        tmodel_init(&tr->model, opts->seed);
    if (optim_init(&tr->opt, opts->optimizer, opts->lr, tr->model.total, err, errlen) ||
        batch_init(tr, err, errlen) || chunks_alloc(tr, err, errlen)) {
        trainer_free(tr);
        return -1;
    }
    return 0;
}

void trainer_free(trainer *tr)
{
    if (tr->cache)
        for (size_t i = 0; i < tr->nchunks; i++)
            tcache_free(&tr->cache[i]);
    if (tr->fcache)
        for (size_t i = 0; i < tr->nchunks; i++)
            tfast_cache_free(&tr->fcache[i]);
    FREE_EACH(tr->cache, tr->fcache, tr->chunk_grads, tr->chunk_gradsf, tr->grads, tr->chunk_loss,
              tr->chunk_count, tr->chunk_correct, tr->chunk_scores, tr->chunk_positions, tr->order);
    tfast_weights_free(&tr->fw);
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
    if (!is_data(task)) {
        for (size_t i = 0; i < tr->B; i++)
            train_task_draw(task, &tr->batch, i, &tr->data_rng);
        return;
    }
    for (size_t i = 0; i < tr->B; i++) {
        size_t src;
        if (tr->B == task->train.n) {
            src = i; /* the whole set, in file order */
        } else {
            if (tr->cursor == task->train.n) { /* a new epoch, a new order */
                rng_shuffle(&tr->data_rng, tr->order, task->train.n);
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

/* The batch's number of targets: the mean loss divides by it. */
static size_t batch_targets(const trainer *tr)
{
    size_t count = 0;
    for (size_t i = 0; i < tr->B * tr->T; i++)
        count += tr->batch.targets[i] >= 0;
    return count;
}

/* Forward and backward of the batch, chunk by chunk in parallel, each into
 * its own gradient buffer: chunk_gradsf (the fast path, encoder_fast.c) or
 * chunk_grads (the reference), with the loss and counts of each chunk.
 * The gradients are of the mean loss over the batch's count targets. */
/* One step's chunks: what chunk_step reads besides the trainer. */
typedef struct step_chunks {
    trainer *tr;
    size_t count;                 /* the batch's targets: the loss is their mean */
    unsigned long long step_seed; /* the step's dropout */
} step_chunks;

/* Chunk c of the batch, forward and backward, into its own buffers. */
static int chunk_step(void *ctx, size_t c, char *e, size_t elen)
{
    const step_chunks *s = ctx;
    trainer *tr = s->tr;
    const size_t total = tr->model.total, B = tr->B, T = tr->T;
    const size_t b0 = c * TRAIN_CHUNK, nb = B - b0 < TRAIN_CHUNK ? B - b0 : TRAIN_CHUNK;
    const int *tok = tr->batch.tokens + b0 * T, *tgt = tr->batch.targets + b0 * T;
    const long *lens = tr->batch.lens + b0;
    double *g = tr->chunk_grads + c * total;
    mha_dropout drop = chunk_dropout(tr, s->step_seed, b0);
    if (!tr->opts.reference) {
        float *gf = tr->chunk_gradsf + c * total;
        memset(gf, 0, total * sizeof *gf);
        tr->chunk_loss[c] = tfast_step(gf, &tr->fcache[c], &tr->model, &tr->fw, tok, lens, tgt, nb,
                                       T, 1.0 / (double)s->count, &drop, &tr->chunk_count[c],
                                       &tr->chunk_correct[c]);
        return 0;
    }
    memset(g, 0, total * sizeof *g);
    if (tmodel_forward(&tr->model, &tr->cache[c], tok, lens, nb, T, &drop, e, elen))
        return -1;
    tr->chunk_loss[c] = tmodel_loss(&tr->cache[c], &tr->model, tgt, &tr->chunk_count[c],
                                    &tr->chunk_correct[c]);
    return tmodel_backward(g, &tr->cache[c], &tr->model, tok, lens, tgt, 1.0 / (double)s->count,
                           &drop, e, elen);
}

static int chunks_forward_backward(trainer *tr, size_t count, unsigned long long step_seed,
                                   char *err, size_t errlen)
{
    step_chunks s = {tr, count, step_seed};
    return chunks_run(chunk_step, &s, tr->nchunks, train_threads(tr), err, errlen);
}

#define SUM_BLOCK 4096 /* gradients a block of train_sum_grads */

void train_sum_grads(double *sum, const double *grads, const float *gradsf, size_t nchunks,
                     size_t total, int nth)
{
    const size_t nblocks = (total + SUM_BLOCK - 1) / SUM_BLOCK;
    (void)nth;
#pragma omp parallel for schedule(static) num_threads(nth) if (nth > 1)
    for (size_t k = 0; k < nblocks; k++) { /* elements lo … hi−1 */
        const size_t lo = k * SUM_BLOCK, hi = total - lo < SUM_BLOCK ? total : lo + SUM_BLOCK;
        memset(sum + lo, 0, (hi - lo) * sizeof *sum);
        for (size_t c = 0; c < nchunks; c++) {
            if (grads) {
                const double *g = grads + c * total;
                for (size_t i = lo; i < hi; i++)
                    sum[i] += g[i];
            } else {
                const float *restrict g = gradsf + c * total;
                for (size_t i = lo; i < hi; i++)
                    sum[i] += g[i];
            }
        }
    }
}

/* tr->grads (total,) = the chunks' gradients added in chunk order; the
 * summed loss returned, the correct count in *correct. */
static double sum_chunks(trainer *tr, size_t *correct)
{
    double loss = 0.0;
    train_sum_grads(tr->grads, tr->opts.reference ? tr->chunk_grads : NULL, tr->chunk_gradsf,
                    tr->nchunks, tr->model.total, 1);
    *correct = 0;
    for (size_t c = 0; c < tr->nchunks; c++) {
        loss += tr->chunk_loss[c];
        *correct += tr->chunk_correct[c];
    }
    return loss;
}

unsigned long long train_step_seed(unsigned long long seed, long step)
{
    rng sr;
    rng_seed(&sr, seed ^ ((unsigned long long)step * 0xd1b54a32d192ed03ULL));
    return rng_next(&sr);
}

int train_step_stats(train_stats *stats, double *mean, double sum, size_t correct, size_t count,
                     long step, char *err, size_t errlen)
{
    const double loss = sum / (double)count;
    if (!isfinite(loss)) {
        snprintf(err, errlen, _("step %ld: the loss became %s; try a smaller --lr"), step + 1,
                 isnan(loss) ? "nan" : "infinite");
        return -1;
    }
    if (stats) {
        stats->loss = loss;
        stats->accuracy = (double)correct / (double)count;
        stats->count = count;
    }
    *mean = loss;
    return 0;
}

int trainer_step(trainer *tr, train_stats *stats, char *err, size_t errlen)
{
    size_t count, correct;
    double loss, sum;

    next_batch(tr);
    count = batch_targets(tr);
    if (count == 0) {
        snprintf(err, errlen, _("step %ld: the batch has no targets"), tr->step + 1);
        return -1;
    }
    if (!tr->opts.reference)
        tfast_weights_update(&tr->fw, &tr->model);
    if (chunks_forward_backward(tr, count, train_step_seed(tr->opts.seed, tr->step), err,
                                errlen))
        return -1;
    sum = sum_chunks(tr, &correct);
    if (train_step_stats(stats, &loss, sum, correct, count, tr->step, err, errlen))
        return -1;
    optim_step_params(&tr->opt, tr->model.param, tr->model.nparams, tr->grads);
    tr->step++;
    return 0;
}

/* The induction measures' sums of one chunk of nb sequences (tok, tgt
 * (nb, T)), A[l] (nb, NH, T, T) the weights of block l: into sums (2·L·NH:
 * prev then ind), the number of positions returned. */
static size_t chunk_scores(double *sums, const float *const *A, size_t L, size_t NH,
                           const int *tok, const int *tgt, size_t nb, size_t T)
{
    double *prev = sums, *ind = sums + L * NH;
    size_t n = 0;
    memset(sums, 0, 2 * L * NH * sizeof *sums);
    for (size_t b = 0; b < nb; b++)
        for (size_t i = 1; i < T; i++) {
            size_t j;
            if (tgt[b * T + i] < 0)
                continue;
            /* the earlier copy of the token at i */
            for (j = 0; j < i && tok[b * T + j] != tok[b * T + i]; j++)
                ;
            if (j == i)
                continue;
            for (size_t l = 0; l < L; l++)
                for (size_t h = 0; h < NH; h++) {
                    const float *row = A[l] + ((b * NH + h) * T + i) * T; /* (T,) query i */
                    prev[l * NH + h] += row[i - 1];
                    ind[l * NH + h] += row[j + 1];
                }
            n++;
        }
    return n;
}

int trainer_evaluate(trainer *tr, const train_set *s, train_stats *stats, char *err,
                     size_t errlen)
{
    return trainer_evaluate_scores(tr, s, stats, NULL, NULL, err, errlen);
}

/* Evaluation chunk c of s into the trainer's slot k (c − the first chunk
 * of its group): its loss and counts, and with scores its induction
 * measures' sums. 0, or -1 with the reason in e. */
static int evaluate_chunk(trainer *tr, const train_set *s, size_t c, size_t k, int scores,
                          char *e, size_t elen)
{
    const size_t L = tr->model.cfg.layers, NH = tr->model.cfg.heads;
    const size_t b0 = c * TRAIN_CHUNK, nb = s->n - b0 < TRAIN_CHUNK ? s->n - b0 : TRAIN_CHUNK;
    const int *tok = s->tokens + b0 * s->T, *tgt = s->targets + b0 * s->T;
    const float *A[TMODEL_MAX_LAYERS]; /* (nb, NH, T, T) each block's weights */
    if (!tr->opts.reference) {
        tr->chunk_loss[k] = tfast_step(NULL, &tr->fcache[k], &tr->model, &tr->fw, tok,
                                       s->lens + b0, tgt, nb, s->T, 1.0, NULL,
                                       &tr->chunk_count[k], &tr->chunk_correct[k]);
        for (size_t l = 0; l < L; l++)
            A[l] = tr->fcache[k].blk[l].A;
    } else {
        if (tmodel_forward(&tr->model, &tr->cache[k], tok, s->lens + b0, nb, s->T, NULL, e,
                           elen))
            return -1;
        tr->chunk_loss[k] = tmodel_loss(&tr->cache[k], &tr->model, tgt, &tr->chunk_count[k],
                                        &tr->chunk_correct[k]);
        for (size_t l = 0; l < L; l++)
            A[l] = tr->cache[k].blk[l].A;
    }
    if (scores)
        tr->chunk_positions[k] = chunk_scores(tr->chunk_scores + k * 2 * L * NH, A, L, NH, tok,
                                              tgt, nb, s->T);
    return 0;
}

/* A group of the evaluation's chunks: chunk c is the set's chunk base + c,
 * in the trainer's cache c. */
typedef struct eval_chunks {
    trainer *tr;
    const train_set *s;
    size_t base;
    int scores;
} eval_chunks;

static int eval_chunk(void *ctx, size_t c, char *e, size_t elen)
{
    const eval_chunks *ec = ctx;
    return evaluate_chunk(ec->tr, ec->s, ec->base + c, c, ec->scores, e, elen);
}

int trainer_evaluate_scores(trainer *tr, const train_set *s, train_stats *stats, double *prev,
                            double *ind, char *err, size_t errlen)
{
    const size_t nc = (s->n + TRAIN_CHUNK - 1) / TRAIN_CHUNK;
    const size_t LH = tr->model.cfg.layers * tr->model.cfg.heads;
    size_t count = 0, correct = 0, positions = 0;
    double loss = 0.0;
    const int nth = train_threads(tr);
    if (s->T > tr->cache[0].Tmax) {
        snprintf(err, errlen, _("sequences of %zu tokens are longer than the %zu the trainer was "
                 "made for"), s->T, tr->cache[0].Tmax);
        return -1;
    }
    if (prev)
        for (size_t i = 0; i < LH; i++)
            prev[i] = ind[i] = 0.0;
    if (!tr->opts.reference)
        tfast_weights_update(&tr->fw, &tr->model);
    /* the trainer's caches, nchunks at a time, summed in chunk order */
    for (size_t base = 0; base < nc; base += tr->nchunks) {
        size_t end = base + tr->nchunks < nc ? base + tr->nchunks : nc;
        eval_chunks ec = {tr, s, base, prev != NULL};
        if (chunks_run(eval_chunk, &ec, end - base, nth, err, errlen))
            return -1;
        for (size_t k = 0; k < end - base; k++) {
            loss += tr->chunk_loss[k];
            count += tr->chunk_count[k];
            correct += tr->chunk_correct[k];
            if (prev) {
                const double *cs = tr->chunk_scores + k * 2 * LH;
                for (size_t i = 0; i < LH; i++) {
                    prev[i] += cs[i];
                    ind[i] += cs[LH + i];
                }
                positions += tr->chunk_positions[k];
            }
        }
    }
    if (prev && positions)
        for (size_t i = 0; i < LH; i++) {
            prev[i] /= (double)positions;
            ind[i] /= (double)positions;
        }
    stats->count = count;
    stats->loss = count ? loss / (double)count : 0.0;
    stats->accuracy = count ? (double)correct / (double)count : 0.0;
    return 0;
}

int train_fastest_fall(const double *loss, size_t n, long *from, long *to)
{
    size_t w = n / 20 ? n / 20 : 1, best = 0;
    double best_drop = -INFINITY, *sum;
    if (n < 2 || !(sum = malloc((n + 1) * sizeof *sum)))
        return -1;
    /* sum[i] = loss[0] + … + loss[i−1] */
    sum[0] = 0.0;
    for (size_t i = 0; i < n; i++)
        sum[i + 1] = sum[i] + loss[i];
    if (2 * w > n)
        w = n / 2;
    for (size_t i = w; i + w <= n; i++) {
        /* the mean of the w steps before i less the mean of the w from i */
        double drop = (sum[i] - sum[i - w] - (sum[i + w] - sum[i])) / (double)w;
        if (drop > best_drop) {
            best_drop = drop;
            best = i;
        }
    }
    free(sum);
    /* index i is step i + 1 */
    *from = (long)(best + 1 > w / 2 ? best + 1 - w / 2 : 1);
    *to = (long)(best + 1 + w / 2 < n ? best + 1 + w / 2 : n);
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
    long vl = (long)len;
    if (len == 0 || len > c->Tmax) {
        snprintf(err, errlen, _("a probe of %zu tokens (at most %zu)"), len, c->Tmax);
        return -1;
    }
    if (tmodel_forward(&tr->model, c, tokens, &vl, 1, len, NULL, err, errlen))
        return -1;
    /* (L, NH, len, len): block l's (1, NH, len, len) after block l−1's */
    for (size_t l = 0; l < tr->model.cfg.layers; l++)
        memcpy(weights + l * tr->model.cfg.heads * len * len, c->blk[l].A,
               tr->model.cfg.heads * len * len * sizeof(float));
    return 0;
}

/* What trainer_apple keeps of each sentence, at its labelled position. */
typedef struct apple_rows {
    float *feat, *inp; /* (n, d) 苹果's output and input */
    int *cls;          /* (n,) its class */
} apple_rows;

static void apple_rows_free(apple_rows *r)
{
    free(r->feat);
    free(r->inp);
    free(r->cls);
}

static int apple_rows_alloc(apple_rows *r, size_t n, size_t d)
{
    size_t bytes;
    memset(r, 0, sizeof *r);
    if (size_mul(n, d, &bytes) || size_mul(bytes, sizeof(float), &bytes) ||
        !(r->feat = malloc(bytes)) || !(r->inp = malloc(bytes)) ||
        !(r->cls = malloc(n * sizeof *r->cls))) {
        apple_rows_free(r);
        return -1;
    }
    return 0;
}

/* cue += the attention of row `at` on the cue keys, averaged over heads;
 * A (NH, T, T) the weights of one sentence. */
static void add_cue_weight(double *cue, const float *A, const int *tok, size_t NH, size_t T,
                           size_t at, const long *cues, size_t ncues)
{
    size_t j;
    for (size_t h = 0; h < NH; h++) {
        const float *row = A + (h * T + at) * T; /* (T,) */
        for (size_t k = 0; k < T; k++) {
            for (j = 0; j < ncues; j++)
                if (tok[k] == cues[j])
                    break;
            if (j < ncues)
                *cue += row[k] / (double)NH;
        }
    }
}

/* Sentence i of s through the model: its attention on the cue keys added
 * to *cue, 苹果's output and input and its class kept in row i of r.
 * Returns 1 when the model predicts the class, 0 when not, -1 on error. */
static int apple_measure(trainer *tr, const train_set *s, size_t i, const long *cues, size_t ncues,
                         apple_rows *r, double *cue, char *err, size_t errlen)
{
    const size_t d = tr->model.cfg.hiddens, C = tr->model.cfg.classes, T = s->T;
    const int *tok = s->tokens + i * T, *tgt = s->targets + i * T;
    tcache *c = &tr->cache[0];
    size_t at = T, best = 0;
    for (size_t k = 0; k < T; k++)
        if (tgt[k] >= 0) {
            at = k; /* the labelled position: the first label_at token */
            break;
        }
    if (at == T) {
        snprintf(err, errlen, _("sentence %zu has no label"), i + 1);
        return -1;
    }
    if (tmodel_forward(&tr->model, c, tok, s->lens + i, 1, T, NULL, err, errlen))
        return -1;
    add_cue_weight(cue, c->blk[0].A, tok, tr->model.cfg.heads, T, at, cues, ncues);
    memcpy(r->feat + i * d, tcache_features(c, &tr->model) + at * d, d * sizeof(float));
    memcpy(r->inp + i * d, c->X + at * d, d * sizeof(float));
    r->cls[i] = tgt[at];
    for (size_t k = 1; k < C; k++)
        if (c->logits[at * C + k] > c->logits[at * C + best])
            best = k;
    return best == (size_t)r->cls[i];
}

/* The mean cosine over pairs of the n rows, within and across classes, of
 * 苹果's output and of its input. */
static void apple_cosines(train_apple *out, const apple_rows *r, size_t n, size_t d)
{
    double sw = 0.0, sa = 0.0, swi = 0.0, sai = 0.0;
    size_t nw = 0, na = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            double cf = mha_cosine(r->feat + i * d, r->feat + j * d, d);
            double ci = mha_cosine(r->inp + i * d, r->inp + j * d, d);
            if (r->cls[i] == r->cls[j]) {
                sw += cf;
                swi += ci;
                nw++;
            } else {
                sa += cf;
                sai += ci;
                na++;
            }
        }
    out->cos_within = nw ? sw / (double)nw : 0.0;
    out->cos_across = na ? sa / (double)na : 0.0;
    out->cos_within_input = nw ? swi / (double)nw : 0.0;
    out->cos_across_input = na ? sai / (double)na : 0.0;
}

int trainer_apple(trainer *tr, const train_set *s, const long *cues, size_t ncues, train_apple *out,
                  char *err, size_t errlen)
{
    apple_rows r;
    size_t correct = 0;
    double cue = 0.0;
    memset(out, 0, sizeof *out);
    if (s->n == 0) {
        snprintf(err, errlen, "%s", _("no sentences to measure"));
        return -1;
    }
    if (apple_rows_alloc(&r, s->n, tr->model.cfg.hiddens)) {
        snprintf(err, errlen, "%s", _("out of memory for the 苹果 measurements"));
        return -1;
    }
    for (size_t i = 0; i < s->n; i++) {
        int right = apple_measure(tr, s, i, cues, ncues, &r, &cue, err, errlen);
        if (right < 0) {
            apple_rows_free(&r);
            return -1;
        }
        correct += (size_t)right;
    }
    out->accuracy = (double)correct / (double)s->n;
    out->cue_weight = cue / (double)s->n;
    apple_cosines(out, &r, s->n, tr->model.cfg.hiddens);
    apple_rows_free(&r);
    return 0;
}
