/* translate_heads.c — `attn translate --head-importance` and
 * `--prune-heads LIST` (see translate_heads.h): each head of a Transformer
 * switched off in turn, or the heads of a list all at once, and what it
 * costs on held-out pairs: BLEU, the loss, the time a sentence.
 *
 * Dimensions: K = 3 kinds of attention (S2S_HEADS_ENC, _DEC, _CROSS), L
 * blocks a side, NH heads, N pairs measured, T num_steps. A mask is
 * (K, L, NH), 1 on and 0 off (seq2seq.h's s2s_set_heads).
 */
#include "translate_heads.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "cli.h"
#include "clock.h"
#include "encoder_task.h"
#include "json_writer.h"
#include "output.h"
#include "page_out.h"
#include "s2s_corpus.h"
#include "s2s_model_file.h"
#include "seq2seq_data.h"
#include "seq2seq_fast.h"
#include "seq2seq_task.h"
#include "seq2seq_train.h"
#include "transformer.h"
#include "i18n.h"

#define KINDS S2S_HEAD_KINDS
#define TIMING_REPEATS 5 /* --prune-heads: the median of 5 passes over the pairs */

/* Each kind's name in a head's name, and what the output calls it. */
static const char *const kind_name[KINDS] = {"enc", "dec", "cross"};
static const char *const kind_label[KINDS] = {"encoder self-attention",
                                              "decoder self-attention (masked)",
                                              "cross-attention"};

/* One measure of a model on the pairs. */
typedef struct measure {
    double bleu, exact, loss;
    double words; /* the words a translation has, the mean */
    double ms;    /* --prune-heads: milliseconds a sentence, the median */
} measure;

typedef struct heads_run {
    const translate_heads_args *a;
    s2s_model model;
    int has_model;
    s2s_vocab src_v, tgt_v;
    size_t T, L, NH, n_heads; /* n_heads = K·L·NH */
    s2s_corpus corpus;
    const s2s_pairs *pairs; /* the pairs measured */
    s2s_arrays held;
    s2s_trainer tr;
    int tr_ready;
    unsigned char *on;     /* (K, L, NH) the mask */
    unsigned char *pruned; /* (K, L, NH) --prune-heads: 1 for the heads listed */
    size_t n_pruned;
    measure full, cut;     /* the full model, and --prune-heads' */
    double *d_bleu, *d_loss; /* (K, L, NH) --head-importance: head off − full */
    size_t *n_pred;          /* (N,) the words of each translation */
    /* --prune-heads with a sentence: its source row, both translations */
    int *src, *out_full, *out_cut;
    size_t n_full, n_cut;
    long src_len;
    char **typed;
    size_t n_typed;
    int reference_loops; /* the fast path cannot run the model: its reference loops do */
} heads_run;

static void run_free(heads_run *r)
{
    if (r->tr_ready)
        s2s_trainer_free(&r->tr);
    if (r->has_model)
        s2s_free(&r->model);
    s2s_vocab_free(&r->src_v);
    s2s_vocab_free(&r->tgt_v);
    s2s_corpus_free(&r->corpus);
    s2s_arrays_free(&r->held);
    FREE_EACH(r->on, r->pruned, r->d_bleu, r->d_loss, r->n_pred, r->src, r->out_full, r->out_cut,
              r->typed);
}

/* ---- --prune-heads LIST ---------------------------------------------------- */

/* A count of 1 … 999999 at *p (digits only), advancing *p; 0 when none. */
static long read_count(const char **p)
{
    long n = 0;
    size_t digits = 0;
    if (**p == '0') /* no leading zero: enc01.1 is no name of attn's */
        return 0;
    while (**p >= '0' && **p <= '9' && digits < 7) {
        n = n * 10 + (**p - '0');
        (*p)++;
        digits++;
    }
    return digits == 0 || digits == 7 || (**p >= '0' && **p <= '9') ? 0 : n;
}

/* One head's name s[0 … len): KIND BLOCK.HEAD. 0, or -1 when malformed. */
static int parse_head(const char *s, size_t len, int *kind, long *block, long *head)
{
    char name[64];
    const char *p;
    if (len == 0 || len >= sizeof name)
        return -1;
    memcpy(name, s, len);
    name[len] = '\0';
    for (*kind = 0; *kind < KINDS; (*kind)++) {
        size_t n = strlen(kind_name[*kind]);
        if (strncmp(name, kind_name[*kind], n) == 0 && name[n] >= '0' && name[n] <= '9')
            break;
    }
    if (*kind == KINDS)
        return -1;
    p = name + strlen(kind_name[*kind]);
    if (!(*block = read_count(&p)) || *p++ != '.' || !(*head = read_count(&p)) || *p)
        return -1;
    return 0;
}

/* "enc1.3" into buf. */
static void head_name(char *buf, size_t len, int kind, size_t l, size_t h)
{
    snprintf(buf, len, "%s%zu.%zu", kind_name[kind], l + 1, h + 1);
}

/* The list against the model's sizes: r->pruned, r->n_pruned; exit 2 with
 * the entry named when one is malformed, absent from the model or given
 * twice. */
static int parse_prune(heads_run *r)
{
    const char *s = r->a->prune, *end;
    int kind;
    long block, head;
    for (;; s = end + 1) {
        size_t len;
        end = strchr(s, ',');
        len = end ? (size_t)(end - s) : strlen(s);
        if (parse_head(s, len, &kind, &block, &head)) {
            cli_error("--prune-heads: '%.*s' is not a head: expected KIND BLOCK.HEAD, e.g. "
                      "enc1.3 (kinds enc, dec, cross; blocks and heads from 1), a comma "
                      "between heads",
                      (int)(len > 40 ? 40 : len), s);
            return EXIT_USAGE;
        }
        if ((size_t)block > r->L || (size_t)head > r->NH) {
            char blocks[32], heads[32];
            cli_count(blocks, sizeof blocks, "%zu block", "%zu blocks", r->L);
            cli_count(heads, sizeof heads, "%zu head", "%zu heads", r->NH);
            cli_error("--prune-heads: %.*s: %s has %s a side of %s (%s1.1 … %s%zu.%zu)",
                      (int)len, s, r->a->input, blocks, heads, kind_name[kind], kind_name[kind],
                      r->L, r->NH);
            return EXIT_USAGE;
        }
        unsigned char *at = &r->pruned[((size_t)kind * r->L + (size_t)block - 1) * r->NH +
                                       (size_t)head - 1];
        if (*at) {
            cli_error("--prune-heads: %.*s is given twice", (int)len, s);
            return EXIT_USAGE;
        }
        *at = 1;
        r->n_pruned++;
        if (!end)
            return EXIT_OK;
    }
}

/* ---- the model and the pairs ------------------------------------------------ */

static int load_model(heads_run *r)
{
    const translate_heads_args *a = r->a;
    char err[1024], **src = NULL, **tgt = NULL;
    int rc;
    if (s2s_model_load(a->input, &r->model, &src, &tgt, &r->T, 0.0, err, sizeof err)) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    r->has_model = 1;
    rc = s2s_vocab_from_list(&r->src_v, (const char *const *)src, r->model.cfg.src_vocab,
                             "$.src_vocab", err, sizeof err) ||
         s2s_vocab_from_list(&r->tgt_v, (const char *const *)tgt, r->model.cfg.tgt_vocab,
                             "$.tgt_vocab", err, sizeof err);
    train_strings_free(src, r->model.cfg.src_vocab);
    train_strings_free(tgt, r->model.cfg.tgt_vocab);
    if (rc) {
        cli_error("%s: %s", a->input, err);
        return EXIT_RUNTIME;
    }
    if (!r->model.cfg.arch->set_heads) {
        cli_error("%s: %s is %s: one attention with one head, no heads to %s", a->prune ?
                  "--prune-heads" : "--head-importance", a->input, r->model.cfg.arch->label,
                  a->prune ? _("prune") : _("switch off in turn"));
        return EXIT_USAGE;
    }
    r->L = r->model.cfg.layers;
    r->NH = r->model.cfg.heads;
    r->n_heads = KINDS * r->L * r->NH; /* ≤ 3 · 12 · d: small */
    /* a Transformer's additive scores: the trainer evaluates on the
     * reference loops (s2s_trainer_init), and so does time_sentences */
    r->reference_loops = !s2s_fast_supports(&r->model.cfg);
    return EXIT_OK;
}

/* The pairs measured: --data's held-out pairs (or all of them), or the
 * task's drawn again from the model's seed. */
static int load_pairs(heads_run *r)
{
    const translate_heads_args *a = r->a;
    char err[1024];
    if (a->data) {
        if (s2s_corpus_load(&r->corpus, a->data, S2S_MAX_EXAMPLES, err, sizeof err)) {
            cli_error("%s", err);
            return EXIT_RUNTIME;
        }
        r->pairs = r->corpus.heldout.n ? &r->corpus.heldout : &r->corpus.train;
        return EXIT_OK;
    }
    if (!r->model.has_seed) {
        cli_error("%s names no seed of the built-in task's pairs (it learned --data pairs, or "
                  "was saved before attn wrote \"seed\"): give --data FILE, the pairs to "
                  "measure on",
                  a->input);
        return EXIT_USAGE;
    }
    if (translate_task_make(&r->corpus, r->model.seed, TRANSLATE_TRAIN_PAIRS,
                            TRANSLATE_HELDOUT_PAIRS, err, sizeof err)) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    r->pairs = &r->corpus.heldout;
    return EXIT_OK;
}

/* The reference loops' caches (a model the fast path does not run): the
 * trainer's, a chunk of TRAIN_CHUNK pairs each, the chunks' gradients
 * (double), and greedy decoding's cache of one pair in each chunk that
 * translates at once (s2s_trainer_bleu). 0, or -1 on overflow. */
static int reference_bytes(const heads_run *r, size_t *bytes)
{
    const size_t B = r->pairs->n < 64 ? r->pairs->n : 64;
    const size_t chunks = (B + TRAIN_CHUNK - 1) / TRAIN_CHUNK;
    size_t chunk = 0, one = 0, grads = 0;
    return tfm_cache_bytes(&r->model.cfg, TRAIN_CHUNK, r->T, r->T, &chunk) ||
                   tfm_cache_bytes(&r->model.cfg, 1, r->T, r->T, &one) ||
                   size_mul(r->model.total, sizeof(double), &grads) ||
                   size_add(chunk, one, &chunk) || size_add(chunk, grads, &chunk) ||
                   size_mul(chunk, chunks ? chunks : 1, bytes)
               ? -1
               : 0;
}

/* --max-mem: the trainer's caches (a batch of 64 pairs, as attn train
 * evaluates; on the reference loops reference_bytes), its copy of the
 * model, gradients and Adam's moments (about 6 copies of the parameters,
 * in double: 12 floats each), and the pairs' arrays. */
static int check_memory(const heads_run *r)
{
    const s2s_config *c = &r->model.cfg;
    size_t cache = 0, n = 0, bytes = 0, arrays = 0;
    char what[160];
    int over = (r->reference_loops ? reference_bytes(r, &cache)
                                   : s2s_fast_cache_bytes(c, 64, r->T, &cache)) ||
               size_mul(r->model.total, 12 * sizeof(float), &n) ||
               size_mul(r->pairs->n, r->T, &arrays) || size_mul(arrays, 5 * sizeof(long), &arrays) ||
               size_add(n, cache, &bytes) || size_add(bytes, arrays, &bytes);
    snprintf(what, sizeof what, _("measuring the heads of %s on %zu pairs"), r->a->input,
             r->pairs->n);
    return cli_check_mem(what, bytes, over, r->a->max_mem, NULL) ? EXIT_RUNTIME : EXIT_OK;
}

/* The arrays of the pairs, the trainer that evaluates them, the mask. */
static int prepare(heads_run *r)
{
    s2s_train_opts o = {0};
    char err[1024];
    o.optimizer = OPTIM_ADAM;
    o.lr = 1e-3;
    o.batch_size = 64; /* attn train's */
    if (s2s_arrays_build(&r->held, r->pairs, &r->src_v, &r->tgt_v, r->T, err, sizeof err) ||
        s2s_trainer_init(&r->tr, &r->held, &r->model.cfg, &o, &r->model, err, sizeof err)) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    r->tr_ready = 1;
    if (!(r->on = calloc(r->n_heads, 1)) ||
        !(r->d_bleu = calloc(r->n_heads, sizeof *r->d_bleu)) ||
        !(r->d_loss = calloc(r->n_heads, sizeof *r->d_loss)) ||
        !(r->n_pred = calloc(r->held.n ? r->held.n : 1, sizeof *r->n_pred))) {
        cli_error("out of memory for the heads");
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

/* ---- measuring ----------------------------------------------------------------- */

/* BLEU, the exact share and the loss of the trainer's model (its mask
 * set) on the pairs. */
static int measure_model(heads_run *r, measure *m)
{
    train_stats st;
    char err[512];
    if (s2s_trainer_evaluate(&r->tr, &r->held, &st, err, sizeof err) ||
        s2s_trainer_bleu(&r->tr, &r->held, r->pairs, &r->tgt_v, &m->bleu, &m->exact, NULL,
                         r->n_pred, err, sizeof err)) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    m->loss = st.loss;
    m->words = 0.0;
    for (size_t i = 0; i < r->held.n; i++)
        m->words += (double)r->n_pred[i];
    m->words /= (double)(r->held.n ? r->held.n : 1);
    m->ms = NAN;
    return EXIT_OK;
}

/* --head-importance: every head off in turn, the others on. */
static int importance(heads_run *r)
{
    int status;
    for (size_t i = 0; i < r->n_heads; i++) {
        measure m;
        memset(r->on, 1, r->n_heads);
        r->on[i] = 0;
        s2s_set_heads(&r->tr.model, r->on);
        if ((status = measure_model(r, &m)) != EXIT_OK)
            return status;
        r->d_bleu[i] = m.bleu - r->full.bleu;
        r->d_loss[i] = m.loss - r->full.loss;
    }
    s2s_set_heads(&r->tr.model, NULL);
    return EXIT_OK;
}

static int cmp_double(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The pairs translated one at a time, as attn translate runs one
 * sentence: greedy decoding on the fast path (fc), or on the reference
 * loops for a model the fast path does not run. */
static int translate_pairs(heads_run *r, s2s_fast_cache *fc, int *out)
{
    const size_t T = r->T;
    size_t n_out;
    char err[256];
    for (size_t i = 0; i < r->held.n; i++) {
        if (!r->reference_loops)
            s2s_fast_greedy(fc, &r->tr.model, &r->tr.fw, r->held.src + i * T,
                            r->held.src_valid[i], T, S2S_BOS, S2S_EOS, T, out, &n_out, NULL);
        else if (s2s_greedy(&r->tr.model, r->held.src + i * T, r->held.src_valid[i], T, S2S_BOS,
                            S2S_EOS, T, out, &n_out, NULL, err, sizeof err)) {
            cli_error("%s", err);
            return EXIT_RUNTIME;
        }
    }
    return EXIT_OK;
}

/* Milliseconds a sentence, full (mask NULL) and pruned, each the median of
 * TIMING_REPEATS passes translating the pairs one at a time
 * (translate_pairs), the two taken in turn within each pass. */
static int time_sentences(heads_run *r)
{
    s2s_fast_cache fc;
    double t[2][TIMING_REPEATS];
    const size_t T = r->T, N = r->held.n;
    int *out = calloc(T, sizeof *out), status = EXIT_OK;
    if (!out || (!r->reference_loops && s2s_fast_cache_alloc(&fc, &r->tr.model, 1, T) != 0)) {
        free(out);
        cli_error("out of memory for the decoder's activations");
        return EXIT_RUNTIME;
    }
    for (size_t k = 0; k < TIMING_REPEATS && status == EXIT_OK; k++)
        for (int w = 0; w < 2 && status == EXIT_OK; w++) {
            double t0;
            s2s_set_heads(&r->tr.model, w ? r->on : NULL);
            t0 = now_seconds();
            status = translate_pairs(r, &fc, out);
            t[w][k] = (now_seconds() - t0) * 1000.0 / (double)(N ? N : 1);
        }
    s2s_set_heads(&r->tr.model, NULL);
    if (!r->reference_loops)
        s2s_fast_cache_free(&fc);
    free(out);
    if (status != EXIT_OK)
        return status;
    for (int w = 0; w < 2; w++)
        qsort(t[w], TIMING_REPEATS, sizeof t[w][0], cmp_double);
    r->full.ms = t[0][TIMING_REPEATS / 2];
    r->cut.ms = t[1][TIMING_REPEATS / 2];
    return EXIT_OK;
}

/* --prune-heads with a sentence: its tokens (read as attn translate reads
 * them) and both translations. */
static int translate_sentence(heads_run *r)
{
    const int flags = S2S_SENTENCE_LOWER | S2S_SENTENCE_PUNCT | S2S_SENTENCE_WORDS;
    char err[256];
    const size_t T = r->T;
    if (!(r->typed = s2s_sentence_tokens(r->a->sentence, flags, &r->n_typed, err, sizeof err))) {
        cli_error("the sentence: %s", err);
        return strncmp(err, "out of memory", 13) == 0 ? EXIT_RUNTIME : EXIT_USAGE;
    }
    if (r->n_typed == 0) {
        cli_error("the sentence is empty");
        return EXIT_USAGE;
    }
    if (!(r->src = calloc(T, sizeof *r->src)) || !(r->out_full = calloc(T, sizeof *r->out_full)) ||
        !(r->out_cut = calloc(T, sizeof *r->out_cut))) {
        cli_error("out of memory for the sentence");
        return EXIT_RUNTIME;
    }
    r->src_len = s2s_vocab_encode(r->src, &r->src_v, (const char *const *)r->typed, r->n_typed, T,
                                  NULL);
    for (int w = 0; w < 2; w++) {
        s2s_set_heads(&r->tr.model, w ? r->on : NULL);
        if (s2s_trainer_translate(&r->tr, r->src, r->src_len, w ? r->out_cut : r->out_full,
                                  w ? &r->n_cut : &r->n_full, NULL, err, sizeof err)) {
            cli_error("%s", err);
            return EXIT_RUNTIME;
        }
    }
    s2s_set_heads(&r->tr.model, NULL);
    return EXIT_OK;
}

/* --prune-heads: the model without the heads listed. */
static int prune(heads_run *r)
{
    int status;
    for (size_t i = 0; i < r->n_heads; i++)
        r->on[i] = !r->pruned[i];
    s2s_set_heads(&r->tr.model, r->on);
    if ((status = measure_model(r, &r->cut)) != EXIT_OK)
        return status;
    s2s_set_heads(&r->tr.model, NULL);
    if ((status = time_sentences(r)) != EXIT_OK)
        return status;
    return r->a->sentence ? translate_sentence(r) : EXIT_OK;
}

/* ---- the printout ----------------------------------------------------------------- */

static void print_pairs_line(const heads_run *r)
{
    const translate_heads_args *a = r->a;
    char blocks[32], heads[32];
    cli_count(blocks, sizeof blocks, "%zu block", "%zu blocks", r->L);
    cli_count(heads, sizeof heads, "%zu head", "%zu heads", r->NH);
    printf(_("model %s: Transformer encoder–decoder, %s a side, d %zu, %s, num_steps %zu\n"),
           a->input, blocks, r->model.cfg.hiddens, heads, r->T);
    if (r->model.cfg.score == S2S_SCORE_ADDITIVE)
        fputs(_("additive scores: every head scores w_v·tanh(W_q q + W_k k) (measured on the "
                "reference loops)\n"), stdout);
    if (a->data)
        printf(_("pairs: %zu %s of %s\n"), r->pairs->n,
               r->pairs == &r->corpus.heldout ? _("held-out pairs") : "pairs (it has no held-out "
                                                                   "ones)",
               a->data);
    else
        printf(_("pairs: the %zu held-out pairs of the built-in task, seed %lu (as attn train "
               "drew them)\n"),
               r->pairs->n, r->model.seed);
}

/* One kind's table: a row of ΔBLEU and a row of Δloss per block. */
static void print_kind(const heads_run *r, int k)
{
    printf(_("\n%s (%s): each head switched off in turn\n%-17s"), kind_label[k], kind_name[k], "");
    for (size_t h = 0; h < r->NH; h++) {
        char head[32];
        snprintf(head, sizeof head, _("head %zu"), h + 1);
        printf("%10s", head);
    }
    for (size_t l = 0; l < r->L; l++) {
        const size_t at = ((size_t)k * r->L + l) * r->NH;
        printf(_("\n  block %-2zu ΔBLEU "), l + 1);
        for (size_t h = 0; h < r->NH; h++)
            printf("  %+8.5f", r->d_bleu[at + h]);
        fputs(_("\n           Δloss "), stdout);
        for (size_t h = 0; h < r->NH; h++)
            printf("  %+8.5f", r->d_loss[at + h]);
    }
    printf("\n");
}

/* The heads by the BLEU they cost (then the loss), most first. */
static void rank_heads(const heads_run *r, size_t *order)
{
    for (size_t i = 0; i < r->n_heads; i++)
        order[i] = i;
    for (size_t i = 1; i < r->n_heads; i++) /* insertion sort: stable, a few dozen heads */
        for (size_t j = i; j > 0; j--) {
            const size_t a = order[j - 1], b = order[j];
            const int after = r->d_bleu[b] < r->d_bleu[a] ||
                              (r->d_bleu[b] == r->d_bleu[a] && r->d_loss[b] > r->d_loss[a]);
            if (!after)
                break;
            order[j - 1] = b;
            order[j] = a;
        }
}

/* The summary: the heads that cost most, those that cost nothing. */
static void print_summary(const heads_run *r)
{
    size_t *order = calloc(r->n_heads, sizeof *order), free_heads = 0;
    char name[64];
    if (!order)
        return;
    rank_heads(r, order);
    fputs(_("\nthe heads that matter most (ΔBLEU, Δloss):"), stdout);
    for (size_t i = 0; i < r->n_heads && i < 5; i++) {
        const size_t at = order[i];
        head_name(name, sizeof name, (int)(at / (r->L * r->NH)), at / r->NH % r->L, at % r->NH);
        printf("%s %s (%+.4f, %+.4f)", i ? "," : "", name, r->d_bleu[at], r->d_loss[at]);
    }
    for (size_t i = 0; i < r->n_heads; i++)
        free_heads += r->d_bleu[i] >= 0.0;
    printf(_("\n%zu of the %zu heads cost no BLEU when switched off alone\n"), free_heads,
           r->n_heads);
    free(order);
}

static void print_tokens(const heads_run *r, const int *ids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        printf("%s%s", i ? " " : "", r->tgt_v.tokens[ids[i]]);
}

static void print_prune(const heads_run *r)
{
    printf(_("pruned: %zu of the %zu heads (%s)\n\n"), r->n_pruned, r->n_heads, r->a->prune);
    fputs(_("             BLEU    exact   loss     words   ms a sentence\n"), stdout);
    printf(_("full model   %.4f  %.3f   %.4f   %5.2f   %.3f\n"), r->full.bleu, r->full.exact,
           r->full.loss, r->full.words, r->full.ms);
    printf(_("pruned       %.4f  %.3f   %.4f   %5.2f   %.3f\n"), r->cut.bleu, r->cut.exact,
           r->cut.loss, r->cut.words, r->cut.ms);
    printf(_("difference  %+.4f %+.3f  %+.4f  %+5.2f  %+.3f\n"), r->cut.bleu - r->full.bleu,
           r->cut.exact - r->full.exact, r->cut.loss - r->full.loss, r->cut.words - r->full.words,
           r->cut.ms - r->full.ms);
    printf(_("(words: a translation's, the mean; time: the median of %d passes over the pairs, "
           "one sentence at a time)\n"),
           TIMING_REPEATS);
    if (!r->a->sentence)
        return;
    printf("\n");
    for (size_t i = 0; i < r->n_typed; i++)
        printf("%s%s", i ? " " : "", r->typed[i]);
    fputs(_(" =>\n  full model: "), stdout);
    print_tokens(r, r->out_full, r->n_full);
    fputs(_("\n  pruned:     "), stdout);
    print_tokens(r, r->out_cut, r->n_cut);
    printf("\n");
}

static void print_run(const heads_run *r)
{
    print_pairs_line(r);
    if (r->a->prune) {
        print_prune(r);
        return;
    }
    printf("the full model: BLEU %.4f, exact %.3f, loss %.4f\n", r->full.bleu, r->full.exact,
           r->full.loss);
    fputs(_("a head switched off: its output zeros before W_o; Δ = without it − the full "
           "model\n"), stdout);
    for (int k = 0; k < KINDS; k++)
        print_kind(r, k);
    print_summary(r);
}

/* ---- --png ---------------------------------------------------------------------- */

/* One figure: a panel per kind (blocks × heads) of v (K, L, NH) as
 * floats, scaled sign · v so that more red is a head that matters more. */
static int draw_figure(attn_image *img, const heads_run *r, const double *v, double sign,
                       const char *cbar, float *cells, char *err, size_t errlen)
{
    static const char *const titles[KINDS] = {"encoder self-attention", "decoder self-attention",
                                              "cross-attention"};
    char xt[64][24], yt[TMODEL_MAX_LAYERS][24];
    const char *xl[64], *yl[TMODEL_MAX_LAYERS];
    heat_panel panels[KINDS];
    heat_figure fig;
    double lo = 0.0, hi = 0.0;
    for (size_t i = 0; i < r->n_heads; i++) {
        cells[i] = (float)(sign * v[i]);
        lo = fmin(lo, cells[i]);
        hi = fmax(hi, cells[i]);
    }
    for (size_t h = 0; h < r->NH && h < 64; h++)
        snprintf(xt[h], sizeof xt[h], "%zu", h + 1), xl[h] = xt[h];
    for (size_t l = 0; l < r->L; l++)
        snprintf(yt[l], sizeof yt[l], "%zu", l + 1), yl[l] = yt[l];
    for (int k = 0; k < KINDS; k++)
        panels[k] = (heat_panel){cells + (size_t)k * r->L * r->NH, r->L, r->NH, titles[k], NULL,
                                 NULL};
    memset(&fig, 0, sizeof fig);
    fig.panels = panels;
    fig.grid_rows = 1;
    fig.grid_cols = KINDS;
    fig.xlabel = _("Head");
    fig.ylabel = _("Block");
    fig.xticklabels = r->NH <= 64 ? xl : NULL;
    fig.yticklabels = yl;
    fig.cmap = r->a->cmap;
    fig.vmin = lo;
    fig.vmax = hi > lo ? hi : lo + 1e-3;
    fig.colorbar_label = cbar;
    fig.font = NULL;
    return output_heatmap_draw(img, &fig, err, errlen);
}

/* --png: the BLEU each head costs, the loss it adds below. */
static int write_png(const heads_run *r, FILE *rep)
{
    attn_image top = {0, 0, NULL}, bottom = {0, 0, NULL}, all = {0, 0, NULL};
    float *cells = float_alloc(r->n_heads);
    char err[512], what[128];
    int status = EXIT_RUNTIME;
    text_font *font = NULL;
    if (!cells) {
        cli_error("%s: out of memory", r->a->png);
        return EXIT_RUNTIME;
    }
    if ((status = output_font_open(r->a->font, &font)) != EXIT_OK)
        goto done;
    status = EXIT_RUNTIME;
    if (draw_figure(&top, r, r->d_bleu, -1.0, "BLEU lost with the head off", cells, err,
                    sizeof err) ||
        draw_figure(&bottom, r, r->d_loss, 1.0, "loss added with the head off", cells, err,
                    sizeof err) ||
        image_stack(&all, &top, &bottom, err, sizeof err)) {
        cli_error("%s: %s", r->a->png, err);
        goto done;
    }
    {
        char blocks[32], heads[32];
        cli_count(blocks, sizeof blocks, "%zu block", "%zu blocks", r->L);
        cli_count(heads, sizeof heads, "%zu head", "%zu heads", r->NH);
        snprintf(what, sizeof what, _("the BLEU and the loss each head costs, %s × %s"), blocks,
                 heads);
    }
    status = output_png(r->a->png, &all, rep, what);
done:
    output_font_close(font);
    image_free(&top);
    image_free(&bottom);
    image_free(&all);
    free(cells);
    return status;
}

/* ---- --json ----------------------------------------------------------------------- */

static void json_measure(json_writer *jw, const char *key, const measure *m)
{
    json_object_begin(jw, key, JSON_INLINE);
    json_number_exact(jw, "bleu", m->bleu);
    json_number_exact(jw, "exact", m->exact);
    json_number_exact(jw, "loss", m->loss);
    json_number_exact(jw, "words_per_sentence", m->words);
    if (!isnan(m->ms))
        json_number(jw, "ms_per_sentence", m->ms);
    json_end(jw);
}

/* v (K, L, NH) as nested arrays. */
static void json_grid(json_writer *jw, const char *key, const heads_run *r, const double *v)
{
    json_array_begin(jw, key, JSON_BLOCK);
    for (size_t k = 0; k < KINDS; k++) {
        json_array_begin(jw, NULL, JSON_BLOCK);
        for (size_t l = 0; l < r->L; l++) {
            json_array_begin(jw, NULL, JSON_INLINE);
            for (size_t h = 0; h < r->NH; h++)
                json_number_exact(jw, NULL, v[(k * r->L + l) * r->NH + h]);
            json_end(jw);
        }
        json_end(jw);
    }
    json_end(jw);
}

static void json_ids(json_writer *jw, const char *key, const heads_run *r, const int *ids,
                     size_t n)
{
    json_array_begin(jw, key, JSON_INLINE);
    for (size_t i = 0; i < n; i++)
        json_string(jw, NULL, r->tgt_v.tokens[ids[i]]);
    json_end(jw);
}

static void json_prune(json_writer *jw, const heads_run *r)
{
    char name[64];
    json_array_begin(jw, "pruned_heads", JSON_INLINE);
    for (size_t i = 0; i < r->n_heads; i++)
        if (r->pruned[i]) {
            head_name(name, sizeof name, (int)(i / (r->L * r->NH)), i / r->NH % r->L,
                      i % r->NH);
            json_string(jw, NULL, name);
        }
    json_end(jw);
    json_measure(jw, "full", &r->full);
    json_measure(jw, "pruned", &r->cut);
    if (r->a->sentence) {
        page_tokens(jw, "sentence", (const char *const *)r->typed, r->n_typed);
        json_ids(jw, "translation_full", r, r->out_full, r->n_full);
        json_ids(jw, "translation", r, r->out_cut, r->n_cut);
    }
}

static void json_members(json_writer *jw, const void *ctx)
{
    const heads_run *r = ctx;
    json_string(jw, "command", "translate");
    json_object_begin(jw, "model", JSON_INLINE);
    json_string(jw, "file", r->a->input);
    json_string(jw, "arch", r->model.cfg.arch->name);
    json_uint(jw, "num_layers", r->L);
    json_uint(jw, "num_hiddens", r->model.cfg.hiddens);
    json_uint(jw, "num_heads", r->NH);
    if (r->model.cfg.score == S2S_SCORE_ADDITIVE) /* a Transformer's (none of Bahdanau's) */
        json_string(jw, "score", s2s_score_names[r->model.cfg.score]);
    json_uint(jw, "num_steps", r->T);
    json_end(jw);
    json_object_begin(jw, "pairs", JSON_INLINE);
    if (r->a->data) {
        json_string(jw, "data", r->a->data);
        json_bool(jw, "heldout", r->pairs == &r->corpus.heldout);
    } else {
        json_string(jw, "task", "translate");
        json_uint(jw, "seed", r->model.seed);
    }
    json_uint(jw, "n", r->pairs->n);
    json_end(jw);
    if (r->a->prune) {
        json_prune(jw, r);
        return;
    }
    json_measure(jw, "full", &r->full);
    json_array_begin(jw, "kinds", JSON_INLINE);
    for (int k = 0; k < KINDS; k++)
        json_string(jw, NULL, kind_name[k]);
    json_end(jw);
    json_grid(jw, "delta_bleu", r, r->d_bleu);
    json_grid(jw, "delta_loss", r, r->d_loss);
}

static int write_json(FILE *f, const void *ctx)
{
    return json_document(f, 0, json_members, ctx);
}

/* ---- the command ------------------------------------------------------------------- */

static int write_outputs(const heads_run *r)
{
    const translate_heads_args *a = r->a;
    FILE *rep = output_report_stream(a->json);
    int status = EXIT_OK;
    if (rep == stdout)
        print_run(r);
    if (a->png)
        status = write_png(r, rep);
    if (status == EXIT_OK && a->json)
        status = output_json(a->json, write_json, r, rep,
                             a->prune ? "the full and the pruned model's BLEU, loss and time"
                                      : "the BLEU and the loss each head costs");
    return status;
}

int translate_heads(const translate_heads_args *a)
{
    heads_run r;
    const char *paths[] = {a->png, a->json}, *names[] = {"--png", "--json"};
    int status;
    memset(&r, 0, sizeof r);
    r.a = a;
    if ((status = output_check_files(paths, names, 2)) == EXIT_OK &&
        (status = load_model(&r)) == EXIT_OK) {
        if (a->prune && !(r.pruned = calloc(r.n_heads, 1))) {
            cli_error("out of memory for the heads");
            status = EXIT_RUNTIME;
        } else if ((!a->prune || (status = parse_prune(&r)) == EXIT_OK) &&
                   (status = load_pairs(&r)) == EXIT_OK &&
                   (status = check_memory(&r)) == EXIT_OK &&
                   (status = prepare(&r)) == EXIT_OK &&
                   (status = measure_model(&r, &r.full)) == EXIT_OK &&
                   (status = a->prune ? prune(&r) : importance(&r)) == EXIT_OK) {
            status = write_outputs(&r);
        }
    }
    run_free(&r);
    return status;
}
