/* train_translate.c — `attn train --task translate` and `attn train --data
 * PAIRS` (SPEC.md §11): an encoder–decoder learns to translate, and its
 * cross-attention is shown forming.
 *
 * The maths and the data are below (src/nn/seq2seq/seq2seq_train.h, seq2seq.h,
 * seq2seq_data.h, seq2seq_task.h; src/io/s2s_corpus.h); this file reads
 * the pairs, runs the loop, keeps the history and the probe's
 * cross-attention at a few steps, and prints and draws them (the figures
 * and the pages are in translate_view.c).
 */
#include "train_translate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic_file.h"
#include "checked.h"
#include "cli.h"
#include "clock.h"
#include "commands.h"
#include "json_in.h"
#include "s2s_corpus.h"
#include "output.h"
#include "seq2seq_task.h"

#include <cjson/cJSON.h>

/* ---- which runs are translation ------------------------------------------ */

int train_is_translation(const struct train_args *a)
{
    char err[256];
    cJSON *root;
    int pairs;
    if (a->task == TRAIN_TASK_TRANSLATE)
        return 1;
    if (!a->data || strcmp(a->data, "-") == 0)
        return 0; /* standard input is read once: JSON sequences unless --task translate */
    FILE *f = fopen(a->data, "rb");
    if (!f)
        return 0; /* the sequences' reader reports it */
    int c, tab = 0;
    while ((c = fgetc(f)) == ' ' || c == '\t' || c == '\r' || c == '\n')
        tab |= c == '\t';
    fclose(f);
    if (c == EOF)
        return tab; /* blank: fra.txt's lines when a tab was seen, else JSON's emptiness */
    if (c != '{')
        return 1; /* text: d2l's fra.txt */
    root = json_read_file(a->data, S2S_MAX_FILE_BYTES, err, sizeof err);
    pairs = root && s2s_corpus_is_pairs(root);
    cJSON_Delete(root);
    return pairs;
}

int train_not_translation(const opt_given *g)
{
    static const char *const only[] = {"arch", "num-steps", "max-examples", "min-freq", "clip",
                                       "compare-arch", NULL};
    for (size_t i = 0; only[i]; i++)
        if (opt_is_given(g, only[i])) {
            cli_error("--%s is for translation (--task translate, or --data of sentence "
                      "pairs)", only[i]);
            return EXIT_USAGE;
        }
    return EXIT_OK;
}

/* The options of the encoder-only tasks, refused here, each with why. */
static int check_translate_args(const struct train_args *a, const opt_given *g)
{
    static const char *const not_here[][2] = {
        {"length", "the grammar's sentences are 6 to 10 words; --num-steps sets the padding"},
        {"vocab", "the vocabularies are the sentences' words (--min-freq)"},
        {"posenc", "the Transformer always adds P"},
        {"no-posenc", "the Transformer always adds P"},
        {"addnorm", "every block of the Transformer has AddNorm"},
        {"causal", "the decoder is causal and the encoder is not, always"},
        {"no-causal", "the decoder is causal and the encoder is not, always"},
        {"compare-posenc", "it compares the encoder tasks with and without P"},
        {"compare-layers", "it compares the encoder tasks' stacks"}};
    for (size_t i = 0; i < sizeof not_here / sizeof not_here[0]; i++)
        if (opt_is_given(g, not_here[i][0])) {
            cli_error("--%s is not used by translation: %s", not_here[i][0], not_here[i][1]);
            return EXIT_USAGE;
        }
    if (a->arch == ARCH_BAHDANAU) {
        static const char *const not_bahdanau[][2] = {
            {"heads", "Bahdanau's model has one attention (additive, one head)"},
            {"ffn", "Bahdanau's model has no FFN: its layers are GRUs"},
            {"bias", "Bahdanau's attention has no biases (W_q, W_k, w_v)"},
            {"dropout", "attn trains Bahdanau's model without dropout"}};
        for (size_t i = 0; i < sizeof not_bahdanau / sizeof not_bahdanau[0]; i++)
            if (opt_is_given(g, not_bahdanau[i][0])) {
                cli_error("--%s is not used with --arch bahdanau: %s", not_bahdanau[i][0],
                          not_bahdanau[i][1]);
                return EXIT_USAGE;
            }
    }
    if (opt_is_given(g, "ffn") && a->ffn == 0) {
        cli_error("--ffn 0: d2l's Transformer has a PositionWiseFFN in every block; give "
                  "--ffn H ≥ 1 (default 64)");
        return EXIT_USAGE;
    }
    if (!a->load && a->arch == ARCH_TRANSFORMER && a->hiddens % a->heads != 0) {
        cli_error("--hiddens %ld is not divisible by --heads %ld", a->hiddens, a->heads);
        return EXIT_USAGE;
    }
    if (!a->data && a->num_steps >= 0 && a->num_steps < TRANSLATE_MAX_WORDS + 1) {
        cli_error("--num-steps %ld is too small: the grammar's longest sentence has %d words, "
                  "%d with its <eos>",
                  a->num_steps, TRANSLATE_MAX_WORDS, TRANSLATE_MAX_WORDS + 1);
        return EXIT_USAGE;
    }
    if (a->num_steps >= 0 && a->num_steps < 2) {
        cli_error("--num-steps %ld leaves no room for a word and its <eos>: give 2 or more",
                  a->num_steps);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* ---- the data ---------------------------------------------------------------- */

/* The pairs: the grammar's (2,000 training and 200 held-out sentences from
 * --seed) or --data's. */
static int load_pairs(xrun *r)
{
    const struct train_args *a = r->a;
    char err[1024];
    if (!a->data) {
        if (translate_task_make(&r->corpus, (unsigned long long)a->seed, XRUN_TRAIN_PAIRS,
                                XRUN_HELDOUT_PAIRS, err, sizeof err)) {
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
static int build_arrays(xrun *r)
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
                "attn train: note: %zu sentences longer than --num-steps %zu were cut "
                "(their <eos> dropped), as d2l's truncate_pad does\n",
                r->train.n_cut + r->held.n_cut, r->T);
    return EXIT_OK;
}

/* ---- the loop ------------------------------------------------------------------ */

static int hist_add(xrun *r, const xhist *h)
{
    if (r->nhist == r->hist_cap) {
        size_t cap = r->hist_cap ? 2 * r->hist_cap : 64;
        xhist *n = realloc(r->hist, cap * sizeof *n);
        if (!n) {
            cli_error("out of memory for the history");
            return EXIT_RUNTIME;
        }
        r->hist = n;
        r->hist_cap = cap;
    }
    r->hist[r->nhist++] = *h;
    return EXIT_OK;
}

/* The held-out figures of the current weights: BLEU and the exact share
 * (NaN without held-out pairs), and the alignment (NaN but for the
 * grammar's pairs). */
static int heldout_now(xrun *r, double *bleu, double *exact, double *align)
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

/* "step 120/600 [####........] loss 0.5321  BLEU 0.412  850 steps/s  0.3 s left" */
static void progress_bar(long s, long steps, double loss, double bleu, double elapsed)
{
    char bar[21];
    int fill = steps ? (int)(20 * s / steps) : 20;
    double rate = elapsed > 0 ? (double)s / elapsed : 0.0;
    for (int i = 0; i < 20; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[20] = '\0';
    fprintf(stderr, "\r\033[Kstep %ld/%ld [%s] loss %.4f", s, steps, bar, loss);
    if (!isnan(bleu))
        fprintf(stderr, "  BLEU %.3f", bleu);
    fprintf(stderr, "  %.0f steps/s  %.1f s left", rate,
            rate > 0 ? (double)(steps - s) / rate : 0.0);
    fflush(stderr);
}

/* One step, logged when it is the first, the last or a multiple of
 * --log-every: the held-out figures of the weights it starts from. */
static int one_step(xrun *r, long s, long steps, int bar, double t0, double *last_bar)
{
    const long every = r->a->log_every;
    const int logged = s == 1 || s == steps || s % every == 0;
    xhist h = {0, 0, 0, NAN, NAN, NAN, 0.0};
    train_stats st;
    char err[512];
    double e0 = now_seconds();
    h.seconds = e0 - t0 - r->eval_seconds; /* the training time of the weights evaluated */
    if (logged && heldout_now(r, &h.bleu, &h.exact, &h.alignment))
        return EXIT_RUNTIME;
    r->eval_seconds += now_seconds() - e0;
    if (s2s_trainer_step(&r->tr, &st, err, sizeof err)) {
        if (bar)
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
    if (bar && (s == steps || now_seconds() - *last_bar > 0.1)) {
        *last_bar = now_seconds();
        progress_bar(s, steps, st.loss, r->last_bleu, *last_bar - t0);
    } else if (!bar && logged && s % every == 0) {
        fprintf(stderr, "step %ld/%ld: loss %.4f", s, steps, st.loss);
        if (!isnan(h.bleu))
            fprintf(stderr, ", held-out BLEU %.3f", h.bleu);
        fputc('\n', stderr);
    }
    return EXIT_OK;
}

/* The steps whose probe attention --png and --html keep: 0, a quarter, a
 * half, three quarters of the way and the last (fewer when steps is small). */
void xrun_choose_snapshots(xrun *r, long steps)
{
    r->nsnap = 0;
    for (int i = 0; i < XRUN_NSNAP; i++) {
        long s = steps * i / (XRUN_NSNAP - 1);
        if (r->nsnap == 0 || s != r->snap_step[r->nsnap - 1])
            r->snap_step[r->nsnap++] = s;
    }
}

int xrun_train_loop(xrun *r, long steps)
{
    const int bar = isatty(fileno(stderr));
    double t0 = now_seconds(), last_bar = 0.0;
    size_t next = 0;
    r->last_bleu = NAN;
    for (long s = 0;; s++) {
        if (next < r->nsnap && r->snap_step[next] == s && xrun_snapshot(r, next++))
            return EXIT_RUNTIME;
        double e0 = now_seconds();
        if (r->page && xpage_record(r, s)) /* --html: the logged steps */
            return EXIT_RUNTIME;
        r->eval_seconds += now_seconds() - e0;
        if (s == steps)
            break;
        if (one_step(r, s + 1, steps, bar, t0, &last_bar))
            return EXIT_RUNTIME;
    }
    r->seconds = now_seconds() - t0;
    r->train_seconds = r->seconds - r->eval_seconds;
    if (bar)
        fputs("\r\033[K", stderr);
    return EXIT_OK;
}

/* ---- the run ---------------------------------------------------------------------- */

/* The model's configuration and the trainer's options from the options. */
static void make_config(xrun *r, s2s_config *cfg, s2s_train_opts *o)
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
    if (a->arch == ARCH_BAHDANAU) { /* one GRU layer a side by default, as d2l's figure */
        cfg->arch = s2s_arch_find("bahdanau");
        cfg->heads = 1;
        cfg->layers = a->layers < 0 ? 1 : (size_t)a->layers;
        cfg->ffn = 0;
        cfg->bias = 0;
    }
    memset(o, 0, sizeof *o);
    o->optimizer = (optim_kind)a->optimizer;
    o->lr = a->lr > 0 ? a->lr : 0.005;
    o->clip = a->clip;
    o->batch_size = (size_t)a->batch_size;
    o->seed = (unsigned long long)a->seed;
    o->threads = (int)a->threads;
}

/* --max-mem, before the trainer allocates: its chunks of TRAIN_CHUNK
 * pairs, each the fast path's activations for num_steps positions a side
 * (num_steps² in the attention weights: a --load of num_steps 100000 is
 * refused here), their gradients (4 bytes a parameter), and the model's
 * parameters, gradients and Adam's moments (32 bytes a parameter, with
 * params ≈ (Vs + 2·Vt)·d + L·(12·d + 4·H + 16)·d). */
static int check_memory(const xrun *r, const s2s_config *cfg)
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
    snprintf(what, sizeof what, "training on batches of %zu pairs of num_steps %zu", B, r->T);
    return cli_check_mem(what, bytes, over, r->a->max_mem, NULL) ? EXIT_RUNTIME : EXIT_OK;
}

/* The run before the loop: the pairs, the model (--load), the arrays, the
 * trainer, the probe. */
int xrun_prepare(xrun *r)
{
    char err[1024];
    s2s_config cfg;
    s2s_train_opts o;
    int status;
    if ((status = load_pairs(r)) != EXIT_OK || (status = xrun_load_model(r)) != EXIT_OK)
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
    if ((status = xrun_choose_probe(r)) != EXIT_OK)
        return status;
    return xpage_open(r);
}

/* The figures after the last step: on the training set (teacher-forced),
 * and the held-out translations. */
int xrun_finish(xrun *r)
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

void xrun_free(xrun *r)
{
    xpage_free(r);
    if (r->tr_ready)
        s2s_trainer_free(&r->tr);
    if (r->has_loaded)
        s2s_free(&r->loaded);
    s2s_arrays_free(&r->train);
    s2s_arrays_free(&r->held);
    s2s_vocab_free(&r->src_v);
    s2s_vocab_free(&r->tgt_v);
    s2s_corpus_free(&r->corpus);
    for (size_t i = 0; i < XRUN_NSNAP; i++)
        free(r->snap_cross[i]);
    free(r->final_cross);
    free(r->final_enc);
    free(r->final_self);
    free(r->hist);
    free(r->pred);
    free(r->n_pred);
}

int train_translate(const struct train_args *a, const opt_given *g, int argc, char **argv)
{
    xrun r;
    int status;
    if ((status = check_translate_args(a, g)) != EXIT_OK ||
        (status = xrun_check_outputs(a)) != EXIT_OK)
        return status;
    if (a->compare_arch)
        return train_compare_arch(a, argc, argv);
    memset(&r, 0, sizeof r);
    r.a = a;
    r.argc = argc;
    r.argv = argv;
    r.steps = a->steps < 0 ? 600 : a->steps;
    if ((status = xrun_prepare(&r)) == EXIT_OK) {
        xrun_choose_snapshots(&r, r.steps);
        status = xrun_train_loop(&r, r.steps);
    }
    if (status == EXIT_OK)
        status = xrun_finish(&r);
    if (status == EXIT_OK && (status = xrun_final_attention(&r)) == EXIT_OK)
        status = xrun_outputs(&r);
    xrun_free(&r);
    return status;
}
