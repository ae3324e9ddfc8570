/* train_lm.c — `attn train --task lm` (SPEC.md §16): a character-level
 * decoder-only Transformer — attn train's encoder stack with the causal
 * mask — trained to predict the next character of a UTF-8 text, measured
 * against the unigram baseline, and sampled from. --no-causal trains the
 * same model without the mask; --compare-causal trains both.
 *
 * The text, its vocabulary and windows are io/lm_text.h's; the trainer is
 * the encoder tasks' (nn/encoder/encoder_train.h: a per-position
 * classification over the characters); the baseline and the generation
 * are nn/encoder/encoder_lm.h's. This file reads the options, runs the
 * loop, and prints and writes what came out: --png, each model's heads
 * over the probe (the held-out text's first characters) after training,
 * and --html, train_page.h's page of that attention at every logged step.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checked.h"
#include "cli.h"
#include "encoder_lm.h"
#include "encoder_train.h"
#include "fmath.h"
#include "json_writer.h"
#include "lm_text.h"
#include "output.h"
#include "render.h"
#include "train_page.h"
#include "train_cmd.h"
#include "train_loop.h"
#include "utf8.h"
#include "i18n.h"

/* The default text: the GPL, version 3, on every Debian machine (base-files). */
#define LM_DEFAULT_TEXT "/usr/share/common-licenses/GPL-3"

/* The probe's most characters: --png's and --html's panels stay readable. */
#define LM_PROBE_MAX 32

typedef struct lm_hist {
    long step;
    double loss, accuracy; /* the step's batch, before its update */
} lm_hist;

/* One trained model and what it shows. */
typedef struct lm_run {
    const struct train_args *a;
    int causal;
    train_opts opts;
    trainer tr;
    int tr_ready;
    lm_hist *hist;
    size_t nhist, hist_cap;
    train_stats train, heldout; /* after training: the training text's cover, the held-out's */
    int *sample;                /* (a->sample,) characters */
    float *att;                 /* the probe's (L, NH, T, T) after training */
    double next;                /* the most weight a head puts on key i + 1 (lm_next_weight) */
    size_t next_layer, next_head;
} lm_run;

/* What --png and --html show: the held-out text's first T characters, as
 * tokens and as labels (white space made visible). */
typedef struct lm_probe {
    int tokens[LM_PROBE_MAX];
    char text[LM_PROBE_MAX][8];
    const char *labels[LM_PROBE_MAX];
    size_t T;
} lm_probe;

/* What both runs share: the text and the task. */
typedef struct lm_ctx {
    const struct train_args *a;
    const char *path;
    lm_text text;
    train_task task;
    double unigram; /* the baseline's held-out perplexity */
    lm_run run[2];
    size_t nrun;
    lm_probe probe;
} lm_ctx;

/* ---- the options --------------------------------------------------------- */

/* Options that mean nothing to a language model: exit 2. */
static int lm_refused(const opt_given *g)
{
    static const char *const refused[] = {"vocab",          "plot",           "save",
                                          "load",           "compare-posenc", "compare-layers",
                                          "explain",        "pos-png",        NULL};
    for (size_t i = 0; refused[i]; i++)
        if (opt_is_given(g, refused[i])) {
            cli_error("--%s is not for --task lm", refused[i]);
            return EXIT_USAGE;
        }
    if (opt_is_given(g, "compare-causal") &&
        (opt_is_given(g, "causal") || opt_is_given(g, "no-causal"))) {
        cli_error("--compare-causal trains with and without the mask; --%s cannot be used "
                  "with it", opt_is_given(g, "causal") ? "causal" : "no-causal");
        return EXIT_USAGE;
    }
    return train_not_translation(g);
}

/* The task's defaults where the options left them: context 32, two
 * blocks with an FFN of 64, 1000 steps, lr 5e-3. */
static void lm_defaults(struct train_args *a, const opt_given *g)
{
    if (a->length < 0)
        a->length = 32;
    if (a->layers < 0)
        a->layers = 2;
    if (!opt_is_given(g, "ffn"))
        a->ffn = 64;
    if (a->steps < 0)
        a->steps = 1000;
    if (a->lr == 0.0)
        a->lr = 5e-3;
}

static void lm_opts(lm_run *r, const struct train_args *a)
{
    train_opts *o = &r->opts;
    train_opts_default(o, TASK_DATA);
    o->hiddens = (size_t)a->hiddens;
    o->heads = (size_t)a->heads;
    o->posenc = a->pos_embedding == POS_SINUSOID;
    o->learned = a->pos_embedding == POS_LEARNED;
    o->addnorm = a->addnorm;
    o->bias = a->bias;
    o->causal = r->causal;
    o->layers = (size_t)a->layers;
    o->ffn = (size_t)a->ffn;
    o->dropout = a->dropout;
    o->optimizer = (optim_kind)a->optimizer;
    o->lr = a->lr;
    o->batch_size = (size_t)a->batch_size;
    o->seed = (unsigned long long)a->seed;
    o->threads = (int)a->threads;
}

/* ---- a run ------------------------------------------------------------- */

static int lm_step(train_loop *lp, long s, int logged)
{
    lm_run *r = lp->run;
    train_stats st;
    char err[512];
    if (trainer_step(&r->tr, &st, err, sizeof err)) {
        if (lp->bar)
            fputs("\r\033[K", stderr);
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    if (logged) {
        if (train_hist_room((void **)&r->hist, r->nhist, &r->hist_cap, sizeof *r->hist))
            return EXIT_RUNTIME;
        r->hist[r->nhist++] = (lm_hist){s, st.loss, st.accuracy};
    }
    lp->loss = st.loss;
    snprintf(lp->bar_text, sizeof lp->bar_text, _("  acc %.1f%%"), 100.0 * st.accuracy);
    snprintf(lp->line_text, sizeof lp->line_text, _(", accuracy %.1f%%"), 100.0 * st.accuracy);
    return EXIT_OK;
}

/* --html: the probe's attention at the logged steps (the history's last
 * entry, which lm_step has just added for a logged step s ≥ 1). */
static int lm_record(train_loop *lp, long s)
{
    lm_run *r = lp->run;
    const lm_hist *h = s > 0 && r->nhist > 0 ? &r->hist[r->nhist - 1] : NULL;
    train_page_stats st;
    if (h)
        st = (train_page_stats){h->step, h->loss, h->accuracy, NAN};
    return train_page_record(&r->tr, s, h ? &st : NULL) != EXIT_OK ? EXIT_RUNTIME : EXIT_OK;
}

/* The sample's prompt: the held-out text's first character, as a token. */
static int lm_prompt(const lm_ctx *c)
{
    return c->text.ids[lm_train_chars(c->text.n)] + 1;
}

/* A character as a tick label: white space made visible (␣ a space, ↵ a
 * line feed, ⇥ a tab, ␍ a carriage return), any other control character
 * as U+FFFD; out has room for one character and its NUL. */
static void lm_char_label(uint32_t cp, char out[8])
{
    uint32_t shown = cp == ' ' ? 0x2423 : cp == '\n' ? 0x21B5 : cp == '\t' ? 0x21E5
                   : cp == '\r' ? 0x240D : (cp < 0x20 || cp == 0x7F) ? 0xFFFD : cp;
    out[utf8_write(shown, out)] = '\0';
}

/* The probe: the held-out text's first min(L, LM_PROBE_MAX) characters
 * (lm_text.h: the held-out part has at least L + 1). */
static void lm_probe_set(lm_ctx *c)
{
    lm_probe *p = &c->probe;
    const size_t at = lm_train_chars(c->text.n);
    const size_t L = (size_t)c->a->length;
    p->T = L < LM_PROBE_MAX ? L : LM_PROBE_MAX;
    for (size_t i = 0; i < p->T; i++) {
        const int id = c->text.ids[at + i];
        p->tokens[i] = id + 1; /* lm_text.h: token c + 1 */
        lm_char_label(c->text.vocab[id], p->text[i]);
        p->labels[i] = p->text[i];
    }
}

/* The page's name of a run when two are compared, else NULL. */
static const char *lm_label(const lm_ctx *c, const lm_run *r)
{
    return c->nrun < 2 ? NULL : r->causal ? N_("causal") : N_("no mask");
}

/* The layers trainer_attention gives (the one-layer model: one). */
static size_t lm_layers(const lm_run *r)
{
    return r->tr.model.cfg.layers ? r->tr.model.cfg.layers : 1;
}

/* What a head reads the answer with: the mean over the probe's queries
 * i < T − 1 of its weight on key i + 1, the character query i is trained
 * to predict (the causal mask makes it 0). w (T, T). */
static double lm_head_next(const float *w, size_t T)
{
    double sum = 0;
    for (size_t i = 0; i + 1 < T; i++)
        sum += w[i * T + i + 1];
    return T > 1 ? sum / (double)(T - 1) : 0;
}

/* The most of it any head of a model has, and where. att (L, NH, T, T). */
static void lm_next_weight(lm_run *r, const float *att, size_t L, size_t NH, size_t T)
{
    r->next = 0;
    r->next_layer = r->next_head = 0;
    for (size_t l = 0; l < L; l++)
        for (size_t h = 0; h < NH; h++) {
            const double mean = lm_head_next(att + (l * NH + h) * T * T, T);
            if (mean > r->next) {
                r->next = mean;
                r->next_layer = l;
                r->next_head = h;
            }
        }
}

/* The probe's attention after training, (L, NH, T, T), and its weight on
 * the next character. */
static int lm_keep_attention(const lm_ctx *c, lm_run *r)
{
    const size_t T = c->probe.T;
    size_t n;
    char err[512];
    if (size_mul(lm_layers(r) * r->tr.model.cfg.heads, T * T, &n) ||
        !(r->att = malloc(n * sizeof *r->att))) {
        cli_error("out of memory for the probe's attention");
        return EXIT_RUNTIME;
    }
    if (trainer_attention(&r->tr, c->probe.tokens, T, r->att, err, sizeof err)) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    lm_next_weight(r, r->att, lm_layers(r), r->tr.model.cfg.heads, T);
    return EXIT_OK;
}

/* Train one model (causal or not), measure it, sample from it. */
static int lm_train_one(lm_ctx *c, lm_run *r)
{
    const struct train_args *a = c->a;
    char err[512];
    int prompt = lm_prompt(c);
    train_loop lp = {.steps = a->steps, .every = a->log_every, .bar = isatty(fileno(stderr)),
                     .run = r, .record = lm_record, .step = lm_step};
    lm_opts(r, a);
    if (trainer_init(&r->tr, &c->task, &r->opts, NULL, err, sizeof err)) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    r->tr_ready = 1;
    if (train_page_run(&r->tr, lm_label(c, r), a->steps, a->log_every) != EXIT_OK ||
        train_page_probe(c->probe.tokens, c->probe.T, 0, c->probe.labels, NULL) != EXIT_OK ||
        train_loop_run(&lp) != EXIT_OK || lm_keep_attention(c, r) != EXIT_OK)
        return EXIT_RUNTIME;
    if (trainer_evaluate(&r->tr, &c->task.eval, &r->train, err, sizeof err) ||
        trainer_evaluate(&r->tr, &c->task.heldout, &r->heldout, err, sizeof err)) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    if (a->sample > 0) {
        if (!(r->sample = malloc((size_t)a->sample * sizeof *r->sample))) {
            cli_error("out of memory for the sample");
            return EXIT_RUNTIME;
        }
        if (lm_generate(&r->tr.model, &prompt, 1, (size_t)a->length, (size_t)a->sample,
                        a->temperature, (unsigned long long)a->seed, r->sample, err,
                        sizeof err)) {
            cli_error("%s", err);
            return EXIT_RUNTIME;
        }
    }
    return EXIT_OK;
}

static void lm_run_free(lm_run *r)
{
    if (r->tr_ready)
        trainer_free(&r->tr);
    free(r->hist);
    free(r->sample);
    free(r->att);
    memset(r, 0, sizeof *r);
}

/* The text and the task; the baseline. */
static int lm_load(lm_ctx *c)
{
    const struct train_args *a = c->a;
    size_t ntrain, bytes;
    int over;
    char err[512];
    if (lm_text_read(&c->text, c->path, err, sizeof err)) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    over = lm_task_bytes(c->text.n, (size_t)a->length, &bytes);
    if (cli_check_mem("the text cut into windows", bytes, over, a->max_mem, NULL))
        return EXIT_RUNTIME;
    if (lm_task_build(&c->task, &c->text, (size_t)a->length, c->path, err, sizeof err)) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    /* the baseline on the targets the model is measured on: the held-out
     * text's characters from its second */
    ntrain = lm_train_chars(c->text.n);
    c->unigram = lm_unigram_perplexity(c->text.ids, ntrain, c->text.ids + ntrain + 1,
                                       c->text.n - ntrain - 1, c->text.V);
    lm_probe_set(c);
    return EXIT_OK;
}

/* ---- what it shows ------------------------------------------------------- */

/* Characters (n,) as UTF-8 on f. */
static void put_chars(FILE *f, const lm_text *t, const int *chars, size_t n)
{
    char buf[5];
    for (size_t i = 0; i < n; i++) {
        utf8_write(t->vocab[chars[i]], buf);
        fputs(buf, f);
    }
}

static void lm_print_header(const lm_ctx *c)
{
    const struct train_args *a = c->a;
    const size_t ntrain = lm_train_chars(c->text.n);
    static const char *const pos[] = {"sinusoidal P", "learned P", "no P"};
    printf(_("attn train --task lm: %s\n"), c->path);
    printf(_("%zu characters, %zu distinct; training the first %zu, held out the last %zu\n"),
           c->text.n, c->text.V, ntrain, c->text.n - ntrain);
    char blocks[32];
    cli_count(blocks, sizeof blocks, "%zu block", "%zu blocks", (size_t)a->layers);
    printf(_("model: %s (d %ld, %ld heads, ffn %ld), %s, context %ld; %ld steps, "
           "batch %ld, seed %ld\n\n"),
           blocks, a->hiddens, a->heads, a->ffn,
           pos[a->pos_embedding], a->length, a->steps, a->batch_size, a->seed);
}

static void lm_print_table(const lm_ctx *c)
{
    term_put_field(stdout, "", 28, 0);
    for (size_t k = 0; k < c->nrun; k++) {
        fputc(' ', stdout);
        term_put_field(stdout, c->run[k].causal ? _("causal") : _("no mask"), 12, 1);
    }
    printf("\n");
    term_put_field(stdout, _("training loss"), 28, 0);
    for (size_t k = 0; k < c->nrun; k++)
        printf(" %12.4f", c->run[k].train.loss);
    printf("\n");
    term_put_field(stdout, _("training accuracy"), 28, 0);
    for (size_t k = 0; k < c->nrun; k++)
        printf(" %11.1f%%", 100.0 * c->run[k].train.accuracy);
    printf("\n");
    term_put_field(stdout, _("held-out loss"), 28, 0);
    for (size_t k = 0; k < c->nrun; k++)
        printf(" %12.4f", c->run[k].heldout.loss);
    printf("\n");
    term_put_field(stdout, _("held-out accuracy"), 28, 0);
    for (size_t k = 0; k < c->nrun; k++)
        printf(" %11.1f%%", 100.0 * c->run[k].heldout.accuracy);
    printf("\n");
    term_put_field(stdout, _("held-out perplexity"), 28, 0);
    for (size_t k = 0; k < c->nrun; k++)
        printf(" %12.2f", fm_exp(c->run[k].heldout.loss));
    printf("\n");
    term_put_field(stdout, _("unigram perplexity"), 28, 0);
    printf(_(" %12.2f   (add-one counts of the training text)\n"), c->unigram);
    term_put_field(stdout, _("weight on the next character"), 28, 0);
    for (size_t k = 0; k < c->nrun; k++)
        printf(" %12.4f", c->run[k].next);
    printf(_("   (the head that reads it most, over the held-out text's first %zu)\n"), c->probe.T);
}

static void lm_print_samples(const lm_ctx *c)
{
    const struct train_args *a = c->a;
    const int prompt = lm_prompt(c) - 1;
    if (a->sample == 0)
        return;
    for (size_t k = 0; k < c->nrun; k++) {
        printf(_("\n%s sample: %ld characters after the held-out text's first, temperature %g, "
               "seed %ld\n"),
               c->run[k].causal ? _("causal") : _("no-mask"), a->sample, a->temperature, a->seed);
        printf("----\n");
        put_chars(stdout, &c->text, &prompt, 1);
        put_chars(stdout, &c->text, c->run[k].sample, (size_t)a->sample);
        printf("\n----\n");
    }
}

/* The why of --compare-causal, one line. */
static const char lm_why[] = N_(
    "Without the mask each position sees the next character and learns to copy it; at "
    "generation time the future is not there, so the no-mask model cannot generate.\n");

/* ---- --json ------------------------------------------------------------ */

/* The characters (n,) as one UTF-8 string (malloc'd), or NULL. */
static char *chars_string(const lm_text *t, const int *first, const int *chars, size_t n)
{
    size_t bytes;
    char *s, *p;
    if (size_mul(n + 1, 4, &bytes) || size_add(bytes, 1, &bytes) || !(s = malloc(bytes)))
        return NULL;
    p = s;
    if (first)
        p += utf8_write(t->vocab[*first], p);
    for (size_t i = 0; i < n; i++)
        p += utf8_write(t->vocab[chars[i]], p);
    *p = '\0';
    return s;
}

static int lm_json_run(json_writer *jw, const lm_ctx *c, const lm_run *r)
{
    const struct train_args *a = c->a;
    const int prompt = lm_prompt(c) - 1;
    int rc = json_bool(jw, "causal", r->causal) || json_int(jw, "steps", r->tr.step) ||
             json_array_begin(jw, "history", JSON_BLOCK);
    for (size_t i = 0; i < r->nhist && !rc; i++)
        rc = json_object_begin(jw, NULL, JSON_INLINE) || json_int(jw, "step", r->hist[i].step) ||
             json_number(jw, "loss", r->hist[i].loss) ||
             json_number(jw, "train_accuracy", r->hist[i].accuracy) || json_end(jw);
    rc = rc || json_end(jw) || json_object_begin(jw, "final", JSON_BLOCK) ||
         json_number(jw, "loss", r->train.loss) ||
         json_number(jw, "train_accuracy", r->train.accuracy) ||
         json_number(jw, "heldout_loss", r->heldout.loss) ||
         json_number(jw, "heldout_accuracy", r->heldout.accuracy) ||
         json_number(jw, "perplexity", fm_exp(r->heldout.loss)) ||
         json_object_begin(jw, "next_weight", JSON_INLINE) || json_number(jw, "weight", r->next);
    if (r->next > 0) /* the head that reads it most; none when none does */
        rc = rc || json_uint(jw, "layer", r->next_layer + 1) ||
             json_uint(jw, "head", r->next_head + 1);
    else
        rc = rc || json_null(jw, "layer") || json_null(jw, "head");
    rc = rc || json_end(jw) || json_end(jw);
    if (!rc && a->sample > 0) {
        char *p = chars_string(&c->text, NULL, &prompt, 1);
        char *s = chars_string(&c->text, NULL, r->sample, (size_t)a->sample);
        rc = !p || !s || json_object_begin(jw, "sample", JSON_BLOCK) ||
             json_string(jw, "prompt", p) || json_number(jw, "temperature", a->temperature) ||
             json_int(jw, "seed", a->seed) || json_string(jw, "text", s) || json_end(jw);
        free(p);
        free(s);
    }
    return rc;
}

/* The members of every document: the text, its split and the baseline. */
static int lm_json_head(json_writer *jw, const lm_ctx *c)
{
    const size_t ntrain = lm_train_chars(c->text.n);
    return json_string(jw, "command", "train") || json_string(jw, "task", "lm") ||
           json_string(jw, "data", c->path) || json_uint(jw, "characters", c->text.n) ||
           json_uint(jw, "vocab_size", c->text.V) || json_uint(jw, "train_characters", ntrain) ||
           json_uint(jw, "heldout_characters", c->text.n - ntrain) ||
           json_int(jw, "length", c->a->length) ||
           json_number(jw, "unigram_perplexity", c->unigram);
}

static int lm_json(FILE *f, const void *ctx)
{
    const lm_ctx *c = ctx;
    json_writer jw;
    int rc;
    json_writer_init(&jw, f);
    rc = json_object_begin(&jw, NULL, JSON_BLOCK) || lm_json_head(&jw, c);
    if (c->nrun == 1) {
        rc = rc || lm_json_run(&jw, c, &c->run[0]);
    } else {
        rc = rc || json_array_begin(&jw, "runs", JSON_BLOCK);
        for (size_t k = 0; k < c->nrun && !rc; k++)
            rc = json_object_begin(&jw, NULL, JSON_BLOCK) || lm_json_run(&jw, c, &c->run[k]) ||
                 json_end(&jw);
        rc = rc || json_end(&jw) || json_string(&jw, "why", lm_why);
    }
    rc = rc || json_end(&jw);
    (void)rc;
    return json_writer_finish(&jw);
}

/* One run's document, as --json writes it for a run alone: the page's
 * data (train_page.h), each run's when two are compared. */
typedef struct lm_doc {
    const lm_ctx *c;
    size_t k;
} lm_doc;

static int lm_json_one(FILE *f, const void *ctx)
{
    const lm_doc *d = ctx;
    json_writer jw;
    json_writer_init(&jw, f);
    int rc = json_object_begin(&jw, NULL, JSON_BLOCK) || lm_json_head(&jw, d->c) ||
             lm_json_run(&jw, d->c, &d->c->run[d->k]) || json_end(&jw);
    (void)rc;
    return json_writer_finish(&jw);
}

/* ---- --png and --html ---------------------------------------------------- */

typedef char lm_title[160];

/* --png: rows = each run's layers, columns = heads, the probe's
 * attention after training; the causal run's upper triangle is 0. */
static int lm_write_png(const void *ctx, text_font *font, FILE *rep)
{
    const lm_ctx *c = ctx;
    const size_t L = lm_layers(&c->run[0]), NH = c->run[0].tr.model.cfg.heads, T = c->probe.T;
    const size_t rows = c->nrun * L;
    heat_panel *panels = calloc(rows * NH, sizeof *panels);
    lm_title *titles = calloc(rows * NH, sizeof *titles), *row_text = calloc(rows, sizeof *row_text);
    const char **row_titles = calloc(rows, sizeof *row_titles);
    heat_figure fig = {0};
    char what[160];
    int status = EXIT_RUNTIME;
    if (!panels || !titles || !row_text || !row_titles) {
        cli_error("%s: out of memory", c->a->png);
        goto done;
    }
    for (size_t k = 0; k < c->nrun; k++)
        for (size_t l = 0; l < L; l++) {
            const lm_run *r = &c->run[k];
            const size_t gr = k * L + l;
            snprintf(row_text[gr], sizeof row_text[0], _("%s, layer %zu · held-out perplexity %.2f"),
                     r->causal ? _("causal") : _("no mask"), l + 1, fm_exp(r->heldout.loss));
            row_titles[gr] = row_text[gr];
            for (size_t h = 0; h < NH; h++) {
                heat_panel *pn = &panels[gr * NH + h];
                pn->data = r->att + (l * NH + h) * T * T; /* (T, T) */
                snprintf(titles[gr * NH + h], sizeof titles[0], _("head %zu · on i+1: %.2f"), h + 1,
                         lm_head_next(pn->data, T));
                pn->rows = pn->cols = T;
                pn->title = titles[gr * NH + h];
            }
        }
    fig.panels = panels;
    fig.grid_rows = rows;
    fig.grid_cols = NH;
    fig.row_titles = row_titles;
    fig.xlabel = "Keys";
    fig.ylabel = "Queries";
    fig.xticklabels = c->probe.labels;
    fig.yticklabels = c->probe.labels;
    fig.vmin = 0;
    fig.vmax = 1;
    fig.colorbar_label = _("attention weight");
    fig.font = font;
    snprintf(what, sizeof what, _("the attention over the held-out text's first %zu characters, "
                                  "%zu rows × %zu heads"), T, rows, NH);
    status = output_heatmap(c->a->png, &fig, rep, what);
done:
    free(panels);
    free(titles);
    free(row_text);
    free(row_titles);
    return status;
}

/* What the runs write: --json, --png, --html. */
static int lm_outputs(const lm_ctx *c, FILE *rep)
{
    const struct train_args *a = c->a;
    const lm_doc docs[2] = {{c, 0}, {c, 1}};
    const void *ctxs[2] = {&docs[0], &docs[1]};
    int status = EXIT_OK;
    if (a->json)
        status = output_json(a->json, lm_json, c, rep, "the history, figures and samples");
    if (status == EXIT_OK && a->png)
        status = output_figures(a->font, a->png, lm_write_png, NULL, NULL, c, rep);
    if (status == EXIT_OK && a->html)
        status = train_page_write(lm_json_one, ctxs, c->nrun, "compare_causal", rep);
    return status;
}

/* ---- the command ------------------------------------------------------- */

int train_lm(struct train_args *a, const opt_given *g, int argc, char **argv)
{
    lm_ctx c;
    int status;
    if ((status = lm_refused(g)) != EXIT_OK)
        return status;
    if (opt_is_given(g, "temperature") && !(a->temperature > 0.0)) {
        cli_error("--temperature: expected a number above 0, got %g", a->temperature);
        return EXIT_USAGE;
    }
    lm_defaults(a, g);
    if ((status = output_check_files((const char *const[]){a->json, a->png},
                                     (const char *const[]){"--json", "--png"}, 2)) != EXIT_OK ||
        (status = train_page_open(a->html, argc, argv)) != EXIT_OK)
        return status;
    memset(&c, 0, sizeof c);
    c.a = a;
    c.path = a->data ? a->data : LM_DEFAULT_TEXT;
    c.nrun = a->compare_causal ? 2 : 1;
    c.run[0].causal = a->causal != 0;
    c.run[1].causal = 0;
    status = lm_load(&c);
    for (size_t k = 0; k < c.nrun && status == EXIT_OK; k++)
        status = lm_train_one(&c, &c.run[k]);
    if (status == EXIT_OK) {
        FILE *rep = output_report_stream(a->json);
        if (rep == stdout) {
            lm_print_header(&c);
            lm_print_table(&c);
            lm_print_samples(&c);
            if (c.nrun == 2)
                printf("\n%s", _(lm_why));
        }
        status = lm_outputs(&c, rep);
    }
    for (size_t k = 0; k < 2; k++)
        lm_run_free(&c.run[k]);
    train_task_free(&c.task);
    lm_text_free(&c.text);
    train_page_close();
    return status;
}
