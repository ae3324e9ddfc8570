/* train_translate_run.c — one run of `attn train` on a translation model
 * (train_translate.h): the pairs, the vocabularies and the arrays, the
 * model (--load or new), the probe, the loop with the history and the
 * probe's cross-attention at a few steps, and the figures after the last
 * step. The maths and the data are below (src/nn/translation/seq2seq_train.h,
 * seq2seq.h, seq2seq_data.h, seq2seq_task.h; src/io/s2s_corpus.h).
 */
#include "train_translate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checked.h"
#include "cli.h"
#include "clock.h"
#include "s2s_corpus.h"
#include "s2s_model_file.h"
#include "seq2seq_task.h"
#include "encoder_task.h"
#include "train_loop.h"
#include "i18n.h"

/* ---- the data ---------------------------------------------------------------- */

/* The pairs: the grammar's (2,000 training and 200 held-out sentences from
 * --seed) or --data's. */
static int load_pairs(translation_run *r)
{
    const struct train_args *a = r->a;
    char err[1024];
    if (!a->data) {
        if (translate_task_make(&r->corpus, (unsigned long long)a->seed, TRANSLATION_TRAIN_PAIRS,
                                TRANSLATION_HELDOUT_PAIRS, err, sizeof err)) {
            cli_error("%s", err);
            return EXIT_RUNTIME;
        }
        r->builtin = 1;
        return EXIT_OK;
    }
    if (s2s_corpus_load(&r->corpus, a->data,
                      a->max_examples < 0 ? S2S_MAX_EXAMPLES : (size_t)a->max_examples, err,
                      sizeof err)) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

/* The vocabularies (the model's with --load, else built from the training
 * pairs as d2l's Vocab) and the arrays of both sets. */
static int build_arrays(translation_run *r)
{
    const struct train_args *a = r->a;
    const size_t min_freq = a->min_freq < 0 ? 2 : (size_t)a->min_freq;
    char err[1024];
    if (!r->has_loaded &&
        (s2s_vocab_build(&r->src_v, &r->corpus.train, S2S_SRC, min_freq, err,
                             sizeof err) ||
         s2s_vocab_build(&r->tgt_v, &r->corpus.train, S2S_TGT, min_freq, err,
                             sizeof err))) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    if (s2s_arrays_build(&r->train, &r->corpus.train, &r->src_v, &r->tgt_v, r->T, err,
                             sizeof err) ||
        (r->corpus.heldout.n &&
         s2s_arrays_build(&r->held, &r->corpus.heldout, &r->src_v, &r->tgt_v, r->T, err,
                              sizeof err))) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    if (r->train.n_cut + r->held.n_cut > 0)
        fprintf(stderr,
                _("attn train: note: %zu sentences longer than --num-steps %zu were cut "
                "(their <eos> dropped), as d2l's truncate_pad does\n"),
                r->train.n_cut + r->held.n_cut, r->T);
    return EXIT_OK;
}

/* ---- the model and the probe ---------------------------------------------------- */

static int load_model(translation_run *r)
{
    const struct train_args *a = r->a;
    char err[1024], **src = NULL, **tgt = NULL;
    size_t T;
    int rc;
    if (!a->load)
        return EXIT_OK;
    if (s2s_model_load(a->load, &r->loaded, &src, &tgt, &T, a->dropout, err, sizeof err)) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    r->has_loaded = 1;
    r->T = T;
    rc = s2s_vocab_from_list(&r->src_v, (const char *const *)src, r->loaded.cfg.src_vocab,
                                 "$.src_vocab", err, sizeof err) ||
         s2s_vocab_from_list(&r->tgt_v, (const char *const *)tgt, r->loaded.cfg.tgt_vocab,
                                 "$.tgt_vocab", err, sizeof err);
    train_strings_free(src, r->loaded.cfg.src_vocab);
    train_strings_free(tgt, r->loaded.cfg.tgt_vocab);
    if (rc) {
        cli_error("%s: %s", a->load, err);
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

/* The label of entry t of an id row: the word, "<eos>" or "<pad>". */
static const char *id_label(const s2s_vocab *v, int id)
{
    return (size_t)id < v->n ? v->tokens[id] : v->tokens[S2S_UNK];
}

static int choose_probe(translation_run *r)
{
    const size_t T = r->T;
    const s2s_arrays *set = r->held.n ? &r->held : &r->train;
    r->probe_set = set;
    r->probe_pairs = r->held.n ? &r->corpus.heldout : &r->corpus.train;
    r->probe = 0;
    r->src_len = (size_t)set->src_valid[0];
    r->tgt_len = (size_t)set->tgt_valid[0];
    for (size_t t = 0; t < T; t++) {
        r->src_labels[t] = id_label(&r->src_v, set->src[t]);
        r->tgt_labels[t] = id_label(&r->tgt_v, set->tgt[t]);
    }
    return EXIT_OK;
}

/* Room for one (L, NH, T, T) attention. */
static float *attention_alloc(const translation_run *r, int cross)
{
    const s2s_config *c = &r->tr.model.cfg;
    const size_t L = cross ? s2s_cross_blocks(c) : c->layers;
    return calloc(L * c->heads * r->T * r->T, sizeof(float));
}

static int snapshot(translation_run *r, size_t i)
{
    const s2s_arrays *s = r->probe_set;
    char err[512];
    if (!(r->snap_cross[i] = attention_alloc(r, 1))) {
        cli_error("out of memory for the probe's attention");
        return EXIT_RUNTIME;
    }
    if (s2s_trainer_attention(&r->tr, s->src, s->src_valid[0], s->dec_in, NULL, NULL,
                              r->snap_cross[i], err, sizeof err)) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

int translation_run_final_attention(translation_run *r)
{
    const s2s_arrays *s = r->probe_set;
    const int selfs = r->tr.model.cfg.arch->has_self; /* Bahdanau's: none */
    char err[512];
    if ((selfs && (!(r->final_enc = attention_alloc(r, 0)) ||
                   !(r->final_self = attention_alloc(r, 0)))) ||
        !(r->final_cross = attention_alloc(r, 1))) {
        cli_error("out of memory for the probe's attention");
        return EXIT_RUNTIME;
    }
    if (s2s_trainer_attention(&r->tr, s->src, s->src_valid[0], s->dec_in, r->final_enc,
                              r->final_self, r->final_cross, err, sizeof err)) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

/* ---- the loop ------------------------------------------------------------------ */

static int hist_add(translation_run *r, const translation_hist *h)
{
    void *hist = r->hist;
    if (train_hist_room(&hist, r->nhist, &r->hist_cap, sizeof *r->hist))
        return EXIT_RUNTIME;
    r->hist = hist;
    r->hist[r->nhist++] = *h;
    return EXIT_OK;
}

/* The held-out figures of the current weights: BLEU and the exact share
 * (NaN without held-out pairs), and the alignment (NaN but for the
 * grammar's pairs). */
static int heldout_now(translation_run *r, double *bleu, double *exact, double *align)
{
    char err[512];
    *bleu = *exact = *align = NAN;
    if (r->held.n == 0)
        return EXIT_OK;
    if (s2s_trainer_bleu(&r->tr, &r->held, &r->corpus.heldout, &r->tgt_v, bleu, exact, NULL,
                         NULL, err, sizeof err) ||
        (r->corpus.heldout.align &&
         s2s_trainer_alignment(&r->tr, &r->held, &r->corpus.heldout,
                               s2s_cross_blocks(&r->tr.model.cfg) - 1, align, err,
                               sizeof err))) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

/* Step s (train_loop.h), logged with the held-out figures of the weights
 * it starts from; the last held-out BLEU on the bar. */
static int one_step(train_loop *lp, long s, int logged)
{
    translation_run *r = lp->run;
    translation_hist h = {0, 0, 0, NAN, NAN, NAN, 0.0};
    train_stats st;
    char err[512];
    double e0 = now_seconds();
    (void)s;
    h.seconds = e0 - lp->t0 - r->eval_seconds; /* the training time of the weights evaluated */
    if (logged && heldout_now(r, &h.bleu, &h.exact, &h.alignment))
        return EXIT_RUNTIME;
    r->eval_seconds += now_seconds() - e0;
    if (s2s_trainer_step(&r->tr, &st, err, sizeof err)) {
        if (lp->bar)
            fputs("\r\033[K", stderr);
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    h.step = r->tr.step;
    h.loss = st.loss;
    h.accuracy = st.accuracy;
    if (logged) {
        r->last_bleu = h.bleu;
        if (hist_add(r, &h))
            return EXIT_RUNTIME;
    }
    lp->loss = st.loss;
    if (!isnan(r->last_bleu))
        snprintf(lp->bar_text, sizeof lp->bar_text, _("  BLEU %.3f"), r->last_bleu);
    if (!isnan(h.bleu))
        snprintf(lp->line_text, sizeof lp->line_text, _(", held-out BLEU %.3f"), h.bleu);
    return EXIT_OK;
}

/* The steps whose probe attention --png and --html keep: 0, a quarter, a
 * half, three quarters of the way and the last (fewer when steps is small). */
static void choose_snapshots(translation_run *r, long steps)
{
    r->nsnap = 0;
    for (int i = 0; i < TRANSLATION_NSNAP; i++) {
        long s = steps * i / (TRANSLATION_NSNAP - 1);
        if (r->nsnap == 0 || s != r->snap_step[r->nsnap - 1])
            r->snap_step[r->nsnap++] = s;
    }
}

static int loop_snapshot(train_loop *lp, size_t i) { return snapshot(lp->run, i); }

/* --html: the logged steps, their time counted as evaluation */
static int loop_record(train_loop *lp, long s)
{
    translation_run *r = lp->run;
    double e0 = now_seconds();
    if (r->page && translation_run_page_record(r, s))
        return EXIT_RUNTIME;
    r->eval_seconds += now_seconds() - e0;
    return EXIT_OK;
}

static int train_loop_steps(translation_run *r, long steps)
{
    train_loop lp = {.steps = steps, .every = r->a->log_every, .bar = isatty(fileno(stderr)),
                     .snap_steps = r->snap_step, .nsnap = r->nsnap, .run = r,
                     .snapshot = loop_snapshot, .record = loop_record, .step = one_step};
    int status;
    r->last_bleu = NAN;
    if ((status = train_loop_run(&lp)) != EXIT_OK)
        return status;
    r->seconds = lp.seconds;
    r->train_seconds = r->seconds - r->eval_seconds;
    return EXIT_OK;
}

/* ---- the run ---------------------------------------------------------------------- */

/* The model's configuration and the trainer's options from the options. */
static void make_config(translation_run *r, s2s_config *cfg, s2s_train_opts *o)
{
    const struct train_args *a = r->a;
    memset(cfg, 0, sizeof *cfg);
    cfg->src_vocab = r->src_v.n;
    cfg->tgt_vocab = r->tgt_v.n;
    cfg->hiddens = (size_t)a->hiddens;
    cfg->heads = (size_t)a->heads;
    cfg->layers = a->layers < 0 ? 2 : (size_t)a->layers;
    cfg->ffn = a->ffn > 0 ? (size_t)a->ffn : 64;
    cfg->bias = a->bias;
    cfg->dropout = a->dropout;
    /* the Transformer scores by dot products unless --score additive
     * (SPEC §16: every head of its three attentions) */
    cfg->score = a->score_given ? a->score : S2S_SCORE_DOT;
    if (a->arch == ARCH_BAHDANAU) { /* one GRU layer a side by default, as d2l's figure */
        cfg->arch = s2s_arch_find("bahdanau");
        cfg->heads = 1;
        cfg->layers = a->layers < 0 ? 1 : (size_t)a->layers;
        cfg->ffn = 0;
        cfg->bias = 0;
        cfg->rnn = a->rnn;
        cfg->score = a->score;
    }
    memset(o, 0, sizeof *o);
    o->optimizer = (optim_kind)a->optimizer;
    o->lr = a->lr > 0 ? a->lr : 0.005;
    o->clip = a->clip;
    o->batch_size = (size_t)a->batch_size;
    o->seed = (unsigned long long)a->seed;
    o->threads = (int)a->threads;
    o->reference = a->reference_loops;
}

/* --max-mem, before the trainer allocates: its chunks of TRAIN_CHUNK
 * pairs, each the fast path's activations for num_steps positions a side
 * (num_steps² in the attention weights: a --load of num_steps 100000 is
 * refused here), their gradients (4 bytes a parameter), and the model's
 * parameters, gradients and Adam's moments (32 bytes a parameter, with
 * params ≈ (Vs + 2·Vt)·d + L·(12·d + 4·H + 16)·d). */
static int check_memory(const translation_run *r, const s2s_config *cfg)
{
    const s2s_config *c = r->has_loaded ? &r->loaded.cfg : cfg;
    const size_t n = r->train.n, bs = (size_t)r->a->batch_size;
    const size_t B = bs == 0 || bs >= n ? n : bs, chunks = ceil_div(B, TRAIN_CHUNK);
    size_t cache = 0, bytes = 0, params = 0, a = 0, b = 0;
    char what[128];
    int over = s2s_fast_cache_bytes(c, TRAIN_CHUNK, r->T, &cache) ||
               size_mul(12, c->hiddens, &a) || size_mul(4, c->ffn, &b) || size_add(a, b, &a) ||
               size_add(a, 16, &a) || size_mul(a, c->hiddens, &a) ||
               size_mul(a, c->layers, &a) || size_add(c->src_vocab, c->tgt_vocab, &b) ||
               size_add(b, c->tgt_vocab, &b) || size_mul(b, c->hiddens, &b) ||
               size_add(a, b, &params);
    over = over || size_mul(params, 4, &a) || size_add(cache, a, &cache) ||
           size_mul(chunks, cache, &bytes) || size_mul(params, 32, &a) ||
           size_add(bytes, a, &bytes);
    snprintf(what, sizeof what, _("training on batches of %zu pairs of num_steps %zu"), B, r->T);
    return cli_check_mem(what, bytes, over, r->a->max_mem, NULL) ? EXIT_RUNTIME : EXIT_OK;
}

/* The run before the loop: the pairs, the model (--load), the arrays, the
 * trainer, the probe. */
static int prepare(translation_run *r)
{
    char err[1024];
    s2s_config cfg;
    s2s_train_opts o;
    int status;
    if ((status = load_pairs(r)) != EXIT_OK || (status = load_model(r)) != EXIT_OK)
        return status;
    if (!r->has_loaded)
        r->T = r->a->num_steps >= 0 ? (size_t)r->a->num_steps : r->a->data ? 10 : 12;
    if ((status = build_arrays(r)) != EXIT_OK)
        return status;
    make_config(r, &cfg, &o);
    if ((status = check_memory(r, &cfg)) != EXIT_OK)
        return status;
    if (s2s_trainer_init(&r->tr, &r->train, &cfg, &o, r->has_loaded ? &r->loaded : NULL, err,
                         sizeof err)) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    r->tr_ready = 1;
    /* the built-in task's pairs: the model file names their seed */
    r->tr.model.has_seed = r->builtin;
    r->tr.model.seed = r->builtin ? (unsigned long)r->a->seed : 0;
    if ((status = choose_probe(r)) != EXIT_OK)
        return status;
    return translation_run_page_open(r);
}

/* The figures after the last step: on the training set (teacher-forced),
 * and the held-out translations. */
static int finish(translation_run *r)
{
    char err[512];
    r->final_bleu = r->final_exact = r->final_align = r->final_align_first = NAN;
    if (s2s_trainer_evaluate(&r->tr, &r->train, &r->final_train, err, sizeof err)) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    if (r->held.n == 0)
        return EXIT_OK;
    if (!(r->pred = calloc(r->held.n * r->T, sizeof *r->pred)) ||
        !(r->n_pred = calloc(r->held.n, sizeof *r->n_pred))) {
        cli_error("out of memory for the translations");
        return EXIT_RUNTIME;
    }
    if (s2s_trainer_bleu(&r->tr, &r->held, &r->corpus.heldout, &r->tgt_v, &r->final_bleu,
                         &r->final_exact, r->pred, r->n_pred, err, sizeof err)) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    if (r->corpus.heldout.align &&
        (s2s_trainer_alignment(&r->tr, &r->held, &r->corpus.heldout,
                               s2s_cross_blocks(&r->tr.model.cfg) - 1, &r->final_align, err,
                               sizeof err) ||
         s2s_trainer_alignment(&r->tr, &r->held, &r->corpus.heldout, 0, &r->final_align_first,
                               err, sizeof err))) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

void translation_run_free(translation_run *r)
{
    translation_run_page_free(r);
    if (r->tr_ready)
        s2s_trainer_free(&r->tr);
    if (r->has_loaded)
        s2s_free(&r->loaded);
    s2s_arrays_free(&r->train);
    s2s_arrays_free(&r->held);
    s2s_vocab_free(&r->src_v);
    s2s_vocab_free(&r->tgt_v);
    s2s_corpus_free(&r->corpus);
    for (size_t i = 0; i < TRANSLATION_NSNAP; i++)
        free(r->snap_cross[i]);
    free(r->final_cross);
    free(r->final_enc);
    free(r->final_self);
    free(r->hist);
    free(r->pred);
    free(r->n_pred);
}

int translation_run_train(translation_run *r, const struct train_args *a, int argc, char **argv)
{
    int status;
    r->a = a;
    r->argc = argc;
    r->argv = argv;
    r->steps = a->steps < 0 ? 600 : a->steps;
    if ((status = prepare(r)) != EXIT_OK)
        return status;
    choose_snapshots(r, r->steps);
    if ((status = train_loop_steps(r, r->steps)) != EXIT_OK)
        return status;
    return finish(r);
}
