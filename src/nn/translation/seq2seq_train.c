/* seq2seq_train.c — the encoder–decoder's training loop and evaluation
 * (see seq2seq_train.h). */
#include "seq2seq_train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "checked.h"
#include "chunks.h"
#include "i18n.h"

/* An allocation of a·b elements of size bytes, checked; *failed set. */
static void *alloc_n(size_t a, size_t b, size_t size, int *failed)
{
    size_t n;
    void *p;
    if (size_mul(a, b, &n) || size_mul(n, size, &n) || (p = calloc(n ? n : 1, 1)) == NULL) {
        *failed = 1;
        return NULL;
    }
    return p;
}

/* The threads of a step's chunks (train_choose_threads, from the
 * multiply-adds of a step). */
static int s2s_threads(const s2s_trainer *tr)
{
#ifdef _OPENMP
    const s2s_config *c = &tr->model.cfg;
    const double work = (double)tr->B * (double)tr->T * (double)c->hiddens * (double)c->layers *
                        (30.0 * (double)c->hiddens + 12.0 * (double)tr->T + 12.0 * (double)c->ffn);
    return train_choose_threads(tr->opts.threads, work);
#else
    (void)tr;
    return 1;
#endif
}

/* The caches and gradient buffers of nchunks chunks of TRAIN_CHUNK pairs. */
static int alloc_chunks(s2s_trainer *tr, char *err, size_t errlen)
{
    const size_t total = tr->model.total, n = tr->nchunks;
    int failed = 0;
    tr->chunk_loss = alloc_n(n, 1, sizeof *tr->chunk_loss, &failed);
    tr->chunk_count = alloc_n(n, 1, sizeof *tr->chunk_count, &failed);
    tr->chunk_correct = alloc_n(n, 1, sizeof *tr->chunk_correct, &failed);
    tr->grads = alloc_n(total, 1, sizeof *tr->grads, &failed);
    if (tr->opts.reference) {
        tr->cache = alloc_n(n, 1, sizeof *tr->cache, &failed);
        tr->chunk_grads = alloc_n(n, total, sizeof *tr->chunk_grads, &failed);
        for (size_t c = 0; !failed && c < n; c++)
            if (s2s_cache_alloc(&tr->cache[c], &tr->model, TRAIN_CHUNK, tr->T, tr->T, err,
                                errlen))
                return -1;
    } else {
        tr->fcache = alloc_n(n, 1, sizeof *tr->fcache, &failed);
        tr->chunk_gradsf = alloc_n(n, total, sizeof *tr->chunk_gradsf, &failed);
        for (size_t c = 0; !failed && c < n; c++)
            failed = s2s_fast_cache_alloc(&tr->fcache[c], &tr->model, TRAIN_CHUNK, tr->T) != 0;
        failed = failed || s2s_fast_weights_alloc(&tr->fw, &tr->model) != 0;
    }
    if (failed) {
        snprintf(err, errlen, "%s", _("out of memory for the training buffers"));
        return -1;
    }
    return 0;
}

int s2s_trainer_init(s2s_trainer *tr, const s2s_arrays *data, const s2s_config *cfg,
                     const s2s_train_opts *opts, const s2s_model *model, char *err,
                     size_t errlen)
{
    int failed = 0;
    memset(tr, 0, sizeof *tr);
    tr->opts = *opts;
    /* a model the fast path does not run (the Transformer's additive
     * scores) trains with the reference loops */
    if (!s2s_fast_supports(model ? &model->cfg : cfg))
        tr->opts.reference = 1;
    tr->data = data;
    tr->T = data->T;
    tr->B = opts->batch_size == 0 || opts->batch_size >= data->n ? data->n : opts->batch_size;
    if (tr->B == 0) {
        snprintf(err, errlen, "%s", _("no sentence pairs to train on"));
        return -1;
    }
    if (s2s_alloc(&tr->model, model ? &model->cfg : cfg, err, errlen))
        return -1;
    if (model)
        s2s_copy_params(&tr->model, model);
    else
        s2s_init(&tr->model, opts->seed);
    if (optim_init(&tr->opt, opts->optimizer, opts->lr, tr->model.total, err, errlen)) {
        s2s_trainer_free(tr);
        return -1;
    }
    tr->src = alloc_n(tr->B, tr->T, sizeof(int), &failed);
    tr->dec_in = alloc_n(tr->B, tr->T, sizeof(int), &failed);
    tr->tgt = alloc_n(tr->B, tr->T, sizeof(int), &failed);
    tr->src_lens = alloc_n(tr->B, 1, sizeof(long), &failed);
    tr->order = alloc_n(data->n, 1, sizeof(size_t), &failed);
    if (failed) {
        s2s_trainer_free(tr);
        snprintf(err, errlen, "%s", _("out of memory for the batches"));
        return -1;
    }
    for (size_t i = 0; i < data->n; i++)
        tr->order[i] = i;
    tr->cursor = data->n; /* shuffle before the first batch */
    rng_seed(&tr->data_rng, opts->seed ^ 0x6261746368657321ULL); /* "batches!" */
    tr->nchunks = ceil_div(tr->B, TRAIN_CHUNK);
    if (alloc_chunks(tr, err, errlen)) {
        s2s_trainer_free(tr);
        return -1;
    }
    return 0;
}

void s2s_trainer_free(s2s_trainer *tr)
{
    for (size_t c = 0; c < tr->nchunks; c++) {
        if (tr->cache)
            s2s_cache_free(&tr->cache[c]);
        if (tr->fcache)
            s2s_fast_cache_free(&tr->fcache[c]);
    }
    FREE_EACH(tr->cache, tr->fcache, tr->chunk_grads, tr->chunk_gradsf, tr->grads, tr->chunk_loss,
              tr->chunk_count, tr->chunk_correct, tr->src, tr->dec_in, tr->tgt, tr->src_lens,
              tr->order);
    s2s_fast_weights_free(&tr->fw);
    optim_free(&tr->opt);
    s2s_free(&tr->model);
    memset(tr, 0, sizeof *tr);
}

/* Pair i of set into row r of a batch: its source, decoder input, and its
 * target with −1 from its valid length on (d2l's sequence_mask). */
static void copy_pair(int *src, int *dec_in, int *tgt, long *src_lens, size_t r,
                      const s2s_arrays *set, size_t i)
{
    const size_t T = set->T;
    memcpy(src + r * T, set->src + i * T, T * sizeof *src);
    memcpy(dec_in + r * T, set->dec_in + i * T, T * sizeof *dec_in);
    for (size_t t = 0; t < T; t++)
        tgt[r * T + t] = (long)t < set->tgt_valid[i] ? set->tgt[i * T + t] : -1;
    src_lens[r] = set->src_valid[i];
}

/* The next batch: every pair in order, or the next B of this epoch's
 * shuffled order (Fisher–Yates, a new order each epoch). */
static void next_batch(s2s_trainer *tr)
{
    const s2s_arrays *d = tr->data;
    for (size_t r = 0; r < tr->B; r++) {
        size_t i = r;
        if (tr->B != d->n) {
            if (tr->cursor == d->n) { /* a new epoch, a new order */
                rng_shuffle(&tr->data_rng, tr->order, d->n);
                tr->cursor = 0;
            }
            i = tr->order[tr->cursor++];
        }
        copy_pair(tr->src, tr->dec_in, tr->tgt, tr->src_lens, r, d, i);
    }
}

/* Chunk c's forward (and with grads, backward) pass on rows b0 … b0+nb−1
 * of (src, dec_in, tgt): its loss, count and correct count into the chunk
 * arrays. 0, or -1 with the reason in e. */
static int chunk_pass(s2s_trainer *tr, size_t c, int grads, const int *src, const int *dec_in,
                      const int *tgt, const long *lens, size_t b0, size_t nb, double scale,
                      const mha_dropout *drop, char *e, size_t elen)
{
    const size_t T = tr->T, total = tr->model.total;
    const int *s = src + b0 * T, *di = dec_in + b0 * T, *tg = tgt + b0 * T;
    if (!tr->opts.reference) {
        float *g = grads ? tr->chunk_gradsf + c * total : NULL;
        if (g)
            memset(g, 0, total * sizeof *g);
        tr->chunk_loss[c] = s2s_fast_step(g, &tr->fcache[c], &tr->model, &tr->fw, s, lens + b0,
                                          di, tg, nb, T, T, scale, drop, b0,
                                          &tr->chunk_count[c], &tr->chunk_correct[c]);
        return 0;
    }
    s2s_cache *cache = &tr->cache[c];
    double *g = tr->chunk_grads + c * total;
    cache->example0 = b0;
    if (s2s_forward(&tr->model, cache, s, lens + b0, di, nb, T, T, drop, e, elen))
        return -1;
    tr->chunk_loss[c] =
        s2s_loss(cache, &tr->model, tg, &tr->chunk_count[c], &tr->chunk_correct[c]);
    if (!grads)
        return 0;
    memset(g, 0, total * sizeof *g);
    return s2s_backward(g, cache, &tr->model, s, lens + b0, di, tg, scale, drop, e, elen);
}

/* A batch of B rows cut into chunks: what batch_chunk reads. */
typedef struct batch_chunks {
    s2s_trainer *tr;
    int grads;
    const int *src, *dec_in, *tgt;
    const long *lens;
    size_t B;
    double scale;
    const mha_dropout *drop;
} batch_chunks;

static int batch_chunk(void *ctx, size_t c, char *e, size_t elen)
{
    const batch_chunks *b = ctx;
    const size_t b0 = c * TRAIN_CHUNK, nb = b->B - b0 < TRAIN_CHUNK ? b->B - b0 : TRAIN_CHUNK;
    return chunk_pass(b->tr, c, b->grads, b->src, b->dec_in, b->tgt, b->lens, b0, nb, b->scale,
                      b->drop, e, elen);
}

/* Every chunk of a batch of B rows, in parallel; 0 or -1 with err. */
static int batch_run(s2s_trainer *tr, int grads, const int *src, const int *dec_in,
                     const int *tgt, const long *lens, size_t B, double scale,
                     const mha_dropout *drop, char *err, size_t errlen)
{
    batch_chunks b = {tr, grads, src, dec_in, tgt, lens, B, scale, drop};
    return chunks_run(batch_chunk, &b, ceil_div(B, TRAIN_CHUNK), s2s_threads(tr), err, errlen);
}

/* tr->grads = the chunks' gradients added in chunk order (when grads);
 * the summed loss returned, the counts added into *count and *correct. */
static double sum_chunks(s2s_trainer *tr, size_t n, int grads, size_t *count, size_t *correct)
{
    double loss = 0.0;
    if (grads)
        train_sum_grads(tr->grads, tr->opts.reference ? tr->chunk_grads : NULL,
                        tr->chunk_gradsf, n, tr->model.total, s2s_threads(tr));
    for (size_t c = 0; c < n; c++) {
        loss += tr->chunk_loss[c];
        *count += tr->chunk_count[c];
        *correct += tr->chunk_correct[c];
    }
    return loss;
}

int s2s_trainer_step(s2s_trainer *tr, train_stats *stats, char *err, size_t errlen)
{
    size_t count = 0, correct = 0, targets = 0;
    double loss, sum;
    mha_dropout drop;

    next_batch(tr);
    for (size_t i = 0; i < tr->B * tr->T; i++)
        targets += tr->tgt[i] >= 0;
    if (targets == 0) {
        snprintf(err, errlen, _("step %ld: the batch has no targets"), tr->step + 1);
        return -1;
    }
    /* the step's dropout stream: one seed per step */
    drop.p = tr->model.cfg.dropout;
    drop.seed = train_step_seed(tr->opts.seed, tr->step);
    if (!tr->opts.reference)
        s2s_fast_weights_update(&tr->fw, &tr->model);
    if (batch_run(tr, 1, tr->src, tr->dec_in, tr->tgt, tr->src_lens, tr->B,
                  1.0 / (double)targets, &drop, err, errlen))
        return -1;
    sum = sum_chunks(tr, tr->nchunks, 1, &count, &correct);
    if (train_step_stats(stats, &loss, sum, correct, count, tr->step, err, errlen))
        return -1;
    tr->grad_norm = optim_clip(tr->grads, tr->model.total, tr->opts.clip);
    optim_step_threads(&tr->opt, tr->model.param, tr->model.nparams, tr->grads,
                       s2s_threads(tr));
    tr->step++;
    return 0;
}

/* Rows first … first+n−1 of set into the batch buffers (n ≤ B). */
static void load_rows(s2s_trainer *tr, const s2s_arrays *set, size_t first, size_t n)
{
    for (size_t r = 0; r < n; r++)
        copy_pair(tr->src, tr->dec_in, tr->tgt, tr->src_lens, r, set, first + r);
}

/* Rows first … first+n−1 of set forward through the model, chunk by
 * chunk, no gradients: their logits and attention in the caches. */
static int run_rows(s2s_trainer *tr, const s2s_arrays *set, size_t first, size_t n, char *err,
                    size_t errlen)
{
    load_rows(tr, set, first, n);
    return batch_run(tr, 0, tr->src, tr->dec_in, tr->tgt, tr->src_lens, n, 1.0, NULL, err,
                     errlen);
}

/* fn(tr, first, n, ctx) after rows first … first+n−1 of set ran forward
 * (run_rows), batch after batch over the whole set, with the fast path's
 * weights brought up to date first. 0, or -1 with err. */
typedef void batch_fn(s2s_trainer *tr, size_t first, size_t n, void *ctx);
static int each_batch(s2s_trainer *tr, const s2s_arrays *set, batch_fn *fn, void *ctx,
                      char *err, size_t errlen)
{
    if (!tr->opts.reference)
        s2s_fast_weights_update(&tr->fw, &tr->model);
    for (size_t first = 0; first < set->n; first += tr->B) {
        const size_t n = set->n - first < tr->B ? set->n - first : tr->B;
        if (run_rows(tr, set, first, n, err, errlen))
            return -1;
        fn(tr, first, n, ctx);
    }
    return 0;
}

/* The evaluation's sums over the batches. */
typedef struct eval_sums {
    double loss;
    size_t count, correct;
} eval_sums;

static void eval_batch(s2s_trainer *tr, size_t first, size_t n, void *ctx)
{
    eval_sums *e = ctx;
    (void)first;
    e->loss += sum_chunks(tr, ceil_div(n, TRAIN_CHUNK), 0, &e->count, &e->correct);
}

int s2s_trainer_evaluate(s2s_trainer *tr, const s2s_arrays *set, train_stats *stats,
                         char *err, size_t errlen)
{
    eval_sums e = {0.0, 0, 0};
    if (set->T != tr->T) {
        snprintf(err, errlen, "%s", _("the set's num_steps differs from the model's batches"));
        return -1;
    }
    if (each_batch(tr, set, eval_batch, &e, err, errlen))
        return -1;
    stats->loss = e.count ? e.loss / (double)e.count : 0.0;
    stats->accuracy = e.count ? (double)e.correct / (double)e.count : 0.0;
    stats->count = e.count;
    return 0;
}

int s2s_trainer_translate(s2s_trainer *tr, const int *src, long src_len, int *out,
                          size_t *n_out, float *cross, char *err, size_t errlen)
{
    if (tr->opts.reference)
        return s2s_greedy(&tr->model, src, src_len, tr->T, S2S_BOS, S2S_EOS, tr->T, out,
                          n_out, cross, err, errlen);
    s2s_fast_weights_update(&tr->fw, &tr->model);
    s2s_fast_greedy(&tr->fcache[0], &tr->model, &tr->fw, src, src_len, tr->T, S2S_BOS,
                    S2S_EOS, tr->T, out, n_out, cross);
    return 0;
}

/* Chunk c of a set's greedy translations: pairs first … first+nb−1. */
static int translate_chunk(s2s_trainer *tr, size_t c, const s2s_arrays *set, size_t first,
                           size_t nb, int *out, size_t *n_out, char *e, size_t elen)
{
    const size_t T = tr->T;
    if (!tr->opts.reference) {
        (void)s2s_fast_greedy_batch(&tr->fcache[c], &tr->model, &tr->fw, set->src + first * T,
                                    set->src_valid + first, nb, T, S2S_BOS, S2S_EOS, T,
                                    out + first * T, n_out + first);
        return 0;
    }
    for (size_t i = first; i < first + nb; i++)
        if (s2s_greedy(&tr->model, set->src + i * T, set->src_valid[i], T, S2S_BOS,
                       S2S_EOS, T, out + i * T, n_out + i, NULL, e, elen))
            return -1;
    return 0;
}

/* A group of n pairs of a set from pair first, cut into chunks: chunk c
 * translates its pairs in the trainer's cache c. */
typedef struct set_chunks {
    s2s_trainer *tr;
    const s2s_arrays *set;
    size_t first, n;
    int *out;
    size_t *n_out;
} set_chunks;

static int set_chunk(void *ctx, size_t c, char *e, size_t elen)
{
    const set_chunks *sc = ctx;
    const size_t b0 = sc->first + c * TRAIN_CHUNK;
    const size_t nb = sc->first + sc->n - b0 < TRAIN_CHUNK ? sc->first + sc->n - b0 : TRAIN_CHUNK;
    return translate_chunk(sc->tr, c, sc->set, b0, nb, sc->out, sc->n_out, e, elen);
}

int s2s_trainer_translate_set(s2s_trainer *tr, const s2s_arrays *set, int *out,
                              size_t *n_out, char *err, size_t errlen)
{
    const size_t group = tr->nchunks * TRAIN_CHUNK;
    const int nth = s2s_threads(tr);
    if (set->T != tr->T) {
        snprintf(err, errlen, "%s", _("the set's num_steps differs from the model's batches"));
        return -1;
    }
    if (!tr->opts.reference)
        s2s_fast_weights_update(&tr->fw, &tr->model);
    for (size_t first = 0; first < set->n; first += group) {
        const size_t n = set->n - first < group ? set->n - first : group;
        set_chunks sc = {tr, set, first, n, out, n_out};
        if (chunks_run(set_chunk, &sc, ceil_div(n, TRAIN_CHUNK), nth, err, errlen))
            return -1;
    }
    return 0;
}

/* Whether two sentences are the same words. */
static int same_words(const char *const *a, size_t na, const char *const *b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t k = 0; k < na; k++)
        if (strcmp(a[k], b[k]) != 0)
            return 0;
    return 1;
}

int s2s_trainer_bleu(s2s_trainer *tr, const s2s_arrays *set, const s2s_pairs *pairs,
                     const s2s_vocab *tgt_vocab, double *bleu, double *exact, int *pred,
                     size_t *n_pred, char *err, size_t errlen)
{
    int failed = 0;
    int *out = pred ? pred : alloc_n(set->n, set->T, sizeof(int), &failed);
    size_t *n_out = n_pred ? n_pred : alloc_n(set->n, 1, sizeof(size_t), &failed);
    double sum = 0.0;
    size_t same = 0;
    if (!failed && s2s_trainer_translate_set(tr, set, out, n_out, err, errlen))
        failed = 2;
    for (size_t i = 0; !failed && i < set->n; i++) {
        size_t nl;
        const char *const *label = s2s_tgt(pairs, i, &nl);
        const char **words = alloc_n(n_out[i], 1, sizeof *words, &failed);
        if (failed)
            break;
        for (size_t k = 0; k < n_out[i]; k++) /* ids to tokens (<unk> outside) */
            words[k] = (size_t)out[i * set->T + k] < tgt_vocab->n
                           ? tgt_vocab->tokens[out[i * set->T + k]]
                           : tgt_vocab->tokens[S2S_UNK];
        sum += s2s_bleu(words, n_out[i], label, nl, 2);
        same += same_words(words, n_out[i], label, nl);
        free(words);
    }
    if (!pred)
        free(out);
    if (!n_pred)
        free(n_out);
    if (failed == 1)
        snprintf(err, errlen, "%s", _("out of memory for the translations"));
    if (failed)
        return -1;
    *bleu = set->n ? sum / (double)set->n : 0.0;
    *exact = set->n ? (double)same / (double)set->n : 0.0;
    return 0;
}

/* The cross-attention (nb, NH, T, T) of decoder block l in chunk c's
 * cache after its forward pass. */
static const float *chunk_cross(const s2s_trainer *tr, size_t c, size_t l)
{
    return tr->opts.reference ? s2s_cross(&tr->cache[c], &tr->model, l)
                              : s2s_fast_cross(&tr->fcache[c], &tr->model, l);
}

/* The alignment's counts over the batches: of decoder block `block`'s
 * cross-attention against the pairs' alignments. */
typedef struct align_sums {
    const s2s_pairs *pairs;
    size_t block;
    size_t hits, counted;
} align_sums;

static void align_batch(s2s_trainer *tr, size_t first, size_t n, void *ctx)
{
    align_sums *a = ctx;
    const size_t T = tr->T, NH = tr->model.cfg.heads;
    /* each pair's rows: the target words (not <eos>) within T */
    for (size_t r = 0; r < n; r++) {
        const size_t c = r / TRAIN_CHUNK, b = r % TRAIN_CHUNK;
        size_t nl;
        (void)s2s_tgt(a->pairs, first + r, &nl);
        a->hits += s2s_alignment_hits(chunk_cross(tr, c, a->block) + b * NH * T * T, NH, T, T,
                                      s2s_align(a->pairs, first + r), nl < T ? nl : T,
                                      &a->counted);
    }
}

int s2s_trainer_alignment(s2s_trainer *tr, const s2s_arrays *set, const s2s_pairs *pairs,
                          size_t block, double *score, char *err, size_t errlen)
{
    align_sums a = {pairs, block, 0, 0};
    if (!pairs->align || block >= s2s_cross_blocks(&tr->model.cfg)) {
        snprintf(err, errlen, "%s", _("no alignment to score"));
        return -1;
    }
    if (each_batch(tr, set, align_batch, &a, err, errlen))
        return -1;
    *score = a.counted ? (double)a.hits / (double)a.counted : 0.0;
    return 0;
}

/* Copy one attention (L, NH, T, T) of a single pair out of cache 0
 * (the cross-attention: s2s_cross_blocks blocks). */
static void copy_attention(float *dst, const s2s_trainer *tr, int which)
{
    const size_t L = which == 2 ? s2s_cross_blocks(&tr->model.cfg) : tr->model.cfg.layers,
                 n = tr->model.cfg.heads * tr->T * tr->T;
    for (size_t l = 0; l < L; l++) {
        const float *src;
        if (which == 2)
            src = chunk_cross(tr, 0, l);
        else if (tr->opts.reference)
            src = s2s_self(&tr->cache[0], which, l);
        else
            src = s2s_fast_self(&tr->fcache[0], which, l);
        memcpy(dst + l * n, src, n * sizeof *dst);
    }
}

int s2s_trainer_attention(s2s_trainer *tr, const int *src, long src_len, const int *dec_in,
                          float *enc, float *self, float *cross, char *err, size_t errlen)
{
    const size_t T = tr->T;
    if (!tr->model.cfg.arch->has_self && (enc || self)) {
        snprintf(err, errlen, "%s", _("Bahdanau's model has no self-attention, only its one attention"));
        return -1;
    }
    if (tr->opts.reference) {
        if (s2s_forward(&tr->model, &tr->cache[0], src, &src_len, dec_in, 1, T, T, NULL, err,
                        errlen))
            return -1;
    } else {
        s2s_fast_weights_update(&tr->fw, &tr->model);
        (void)s2s_fast_step(NULL, &tr->fcache[0], &tr->model, &tr->fw, src, &src_len, dec_in,
                            NULL, 1, T, T, 1.0, NULL, 0, NULL, NULL);
    }
    if (enc)
        copy_attention(enc, tr, 0);
    if (self)
        copy_attention(self, tr, 1);
    if (cross)
        copy_attention(cross, tr, 2);
    return 0;
}
