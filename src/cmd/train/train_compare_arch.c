/* train_compare_arch.c — `attn train --task translate --compare-arch` (and
 * --data PAIRS --compare-arch): d2l's Transformer and d2l's Seq2Seq with
 * Bahdanau attention trained on the same pairs with the same --seed,
 * --steps, --batch-size and --lr, each with its own defaults (the
 * Transformer: 2 blocks, 4 heads, FFN 64; Bahdanau: 1 GRU layer), side
 * by side: held-out BLEU, the exact share, the alignment, the step and
 * the training seconds at which held-out BLEU first reached 0.95, the
 * time per step, and the sequential steps each needs per sentence (the
 * chapter's CNN/RNN/self-attention table, on a model that translates).
 *
 * --compare-rnn and --compare-score (SPEC §15, zh 10.4's exercises) run
 * the same comparison on Bahdanau's model against itself: a GRU against
 * an LSTM, or the additive score against the scaled dot product, the
 * rest of the configuration as given; the table keeps the figures that
 * differ (BLEU, exact, alignment, the step and seconds to BLEU 0.95, the
 * time a step).
 *
 * --compare-layers (SPEC §16, zh 10.7's first exercise) trains d2l's
 * Transformer with its 2 blocks a side and with --layers N, the rest as
 * given; the table keeps the same figures and adds the parameters.
 * --arch transformer --compare-score (SPEC §16, 10.7's second exercise)
 * trains the Transformer with dot-product scores and with every head of
 * its three attentions scored additively, the same table.
 *
 * Each run is train_translate_run.c's (train_translate.h):
 * translation_run_train. --json writes both runs' figures; --html a page
 * with both alignments of the probe sentence on one step slider.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "output.h"
#include "page_out.h"
#include "train_translate.h"
#include "i18n.h"
#include "term.h"

#define CMP_BLEU 0.95 /* the held-out BLEU whose first step and seconds are read */
#define CMP_D2L_BLOCKS 2 /* --compare-layers: d2l's Transformer's blocks a side */

/* What is compared: two architectures, or Bahdanau's model with its two
 * recurrent layers or its two scores. */
typedef struct cmp_kind {
    const char *option;     /* "compare-arch": messages, the page's title */
    const char *json_key;   /* "compare_arch": --json's flag */
    const char *label[2];   /* the columns, the runs' names */
    const char *training[2]; /* stderr: "training the …" */
} cmp_kind;

enum { CMP_ARCH, CMP_RNN, CMP_SCORE, CMP_LAYERS, CMP_TFM_SCORE };
static const cmp_kind kinds[5] = {
    {"compare-arch", "compare_arch", {"transformer", "bahdanau"},
     {"Transformer", N_("Seq2Seq with Bahdanau attention")}},
    {"compare-rnn", "compare_rnn", {"gru", "lstm"},
     {N_("Seq2Seq with Bahdanau attention and GRUs"), N_("Seq2Seq with Bahdanau attention and LSTMs")}},
    {"compare-score", "compare_score", {"additive", "dot"},
     {N_("Seq2Seq with additive attention"), N_("Seq2Seq with dot-product attention")}},
    /* the labels and the runs' names are the blocks': struct cmp's */
    {"compare-layers", "compare_layers", {NULL, NULL}, {NULL, NULL}},
    {"compare-score", "compare_score", {"dot", "additive"},
     {N_("Transformer with dot-product scores"), N_("Transformer with additive scores")}},
};

/* One run's figures for the table. */
typedef struct cmp_figs {
    double bleu, exact, align;  /* held-out, after the last step (NaN: none) */
    long reach_step;            /* first logged step with held-out BLEU ≥ 0.95, or -1 */
    double reach_seconds;       /* its training seconds */
    double ms_step;             /* training milliseconds a step (evaluation left out) */
    size_t L, T;                /* blocks or GRU layers a side; num_steps */
    size_t seq_train;           /* sequential steps a teacher-forced pair: 2·L or 2·T */
    size_t seq_greedy;          /* greedy steps a sentence (one word each): T at most */
    size_t seq_word;            /* sequential layers a greedy step: L blocks or L GRU layers */
    size_t params;              /* the model's parameters, every tensor */
} cmp_figs;

struct cmp {
    const cmp_kind *kind;
    int mode; /* CMP_ARCH, CMP_RNN, CMP_SCORE, CMP_LAYERS or CMP_TFM_SCORE */
    const char *label[2];    /* the columns: the kind's, or "2 blocks", "N blocks" */
    char blocks[2][32];      /* --compare-layers' labels */
    struct train_args args[2];
    translation_run run[2];
    cmp_figs figs[2];
    const struct train_args *a;
    int argc;
    char **argv;
};

static void figures(cmp_figs *f, const translation_run *r)
{
    const s2s_config *c = &r->tr.model.cfg;
    f->bleu = r->held.n ? r->final_bleu : NAN;
    f->exact = r->held.n ? r->final_exact : NAN;
    f->align = r->held.n ? r->final_align : NAN;
    f->reach_step = -1;
    f->reach_seconds = NAN;
    for (size_t i = 0; i < r->nhist; i++)
        if (!isnan(r->hist[i].bleu) && r->hist[i].bleu >= CMP_BLEU) {
            f->reach_step = r->hist[i].step;
            f->reach_seconds = r->hist[i].seconds;
            break;
        }
    f->ms_step = r->tr.step > 0 ? 1000.0 * r->train_seconds / (double)r->tr.step : NAN;
    f->L = c->layers;
    f->T = r->T;
    /* the Transformer: the encoder's L blocks, then the decoder's L, every
     * position at once; Bahdanau: T GRU steps through the source, then T
     * through the target (padding included, as d2l runs it), each through
     * its L layers */
    f->seq_train = c->arch->recurrent ? 2 * r->T : 2 * c->layers;
    f->seq_greedy = r->T;
    f->seq_word = c->layers;
    f->params = r->tr.model.total;
}

/* Train run k (0: the Transformer, a GRU, additive, 2 blocks; 1:
 * Bahdanau, an LSTM, dot, N blocks) to the end. */
static int run_one(struct cmp *c, int k)
{
    translation_run *r = &c->run[k];
    int status;
    c->args[k] = *c->a;
    if (c->mode == CMP_LAYERS) {
        c->args[k].arch = ARCH_TRANSFORMER;
        c->args[k].layers = k ? c->a->layers : CMP_D2L_BLOCKS;
        fprintf(stderr, _("attn train: --%s: training the Transformer with %ld blocks a side\n"),
                c->kind->option, c->args[k].layers);
    } else if (c->mode == CMP_TFM_SCORE) {
        c->args[k].arch = ARCH_TRANSFORMER;
        c->args[k].score_given = 1;
        c->args[k].score = k ? S2S_SCORE_ADDITIVE : S2S_SCORE_DOT;
        /* additive scores run the reference loops (the fast path scores by
         * dot products only): both runs do, so that a step is timed alike */
        c->args[k].reference_loops = 1;
        fprintf(stderr, _("attn train: --%s: training the %s\n"), c->kind->option,
                _(c->kind->training[k]));
    } else {
        c->args[k].arch = k || c->mode != CMP_ARCH ? ARCH_BAHDANAU : ARCH_TRANSFORMER;
        if (c->mode == CMP_RNN)
            c->args[k].rnn = k;
        if (c->mode == CMP_SCORE)
            c->args[k].score = k;
        fprintf(stderr, _("attn train: --%s: training the %s\n"), c->kind->option,
                _(c->kind->training[k]));
    }
    if ((status = translation_run_train(r, &c->args[k], c->argc, c->argv)) != EXIT_OK)
        return status;
    figures(&c->figs[k], r);
    return EXIT_OK;
}

/* ---- the table ------------------------------------------------------------- */

static void cell_number(char *buf, size_t n, double v, const char *fmt)
{
    if (isnan(v))
        snprintf(buf, n, "—");
    else
        snprintf(buf, n, fmt, v);
}

/* One row: its name in the reader's language, 30 columns, then each
 * cell after a space, 10 columns (wider cells push on: "not reached"),
 * counted by display width ("—" and "≥" one column, 中文 two). */
static void row(const char *name, const char *x, const char *y)
{
    term_put_field(stdout, _(name), 30, 0);
    fputc(' ', stdout);
    term_put_field(stdout, x, 10, 1);
    fputc(' ', stdout);
    term_put_field(stdout, y, 10, 1);
    fputc('\n', stdout);
}

/* --compare-rnn, --compare-score, --compare-layers: what both runs
 * share, and the note. */
static void print_same(const struct cmp *c)
{
    const s2s_config *m = &c->run[0].tr.model.cfg;
    if (c->mode == CMP_LAYERS)
        printf(_("\nBoth: d2l's Transformer, d %zu, %zu heads, FFN %zu, num_steps %zu.\n"),
               m->hiddens, m->heads, m->ffn, c->figs[0].T);
    else if (c->mode == CMP_TFM_SCORE)
        printf(i18n_plural("\nBoth: d2l's Transformer, %zu block a side, d %zu, %zu heads, FFN %zu, "
                           "num_steps %zu;\nadditive: every head of the three attentions scored "
                           "w_v·tanh(W_q q + W_k k)\n(A = p); both trained by the reference loops "
                           "(timed alike).\n",
                           "\nBoth: d2l's Transformer, %zu blocks a side, d %zu, %zu heads, FFN %zu, "
                           "num_steps %zu;\nadditive: every head of the three attentions scored "
                           "w_v·tanh(W_q q + W_k k)\n(A = p); both trained by the reference loops "
                           "(timed alike).\n",
                           m->layers),
               m->layers, m->hiddens, m->heads, m->ffn, c->figs[0].T);
    else
        printf(i18n_plural("\nBoth: Bahdanau's model, %zu layer a side, d %zu, num_steps %zu, %s.\n",
                           "\nBoth: Bahdanau's model, %zu layers a side, d %zu, num_steps %zu, %s.\n",
                           m->layers),
           m->layers, m->hiddens, c->figs[0].T,
           c->mode == CMP_RNN ? (m->score == S2S_SCORE_DOT ? _("the dot-product score")
                                                          : _("the additive score"))
                              : (m->rnn == S2S_RNN_LSTM ? "LSTMs" : "GRUs"));
    fputs(_("seconds: training only (the held-out figures left out); BLEU ≥ 0.95 at the\n"
           "first logged step that reached it.\n"), stdout);
}

static void print_table(const struct cmp *c)
{
    char x[2][9][48], layers[32];
    for (int k = 0; k < 2; k++) {
        const cmp_figs *f = &c->figs[k];
        cell_number(x[k][0], sizeof x[k][0], f->bleu, "%.3f");
        cell_number(x[k][1], sizeof x[k][1], 100.0 * f->exact, "%.1f%%");
        cell_number(x[k][2], sizeof x[k][2], f->align, "%.3f");
        if (f->reach_step < 0)
            snprintf(x[k][3], sizeof x[k][3], "%s", _("not reached"));
        else
            snprintf(x[k][3], sizeof x[k][3], "%ld (%.1f)", f->reach_step, f->reach_seconds);
        cell_number(x[k][4], sizeof x[k][4], f->ms_step, "%.2f");
        snprintf(x[k][5], sizeof x[k][5], "%zu", f->seq_train);
        snprintf(x[k][6], sizeof x[k][6], "%zu", f->seq_greedy);
        snprintf(x[k][7], sizeof x[k][7], "%zu", f->seq_word);
        snprintf(x[k][8], sizeof x[k][8], "%zu", f->params);
    }
    printf(_("attn train: --%s, %s, %ld steps each, seed %ld\n\n"), c->kind->option,
           c->a->data ? "data" : "translate", c->run[0].tr.step, c->a->seed);
    term_put_field(stdout, "", 30, 0); /* the runs' names: 11 columns each */
    term_put_field(stdout, c->label[0], 11, 1);
    term_put_field(stdout, c->label[1], 11, 1);
    fputc('\n', stdout);
    row(N_("held-out BLEU"), x[0][0], x[1][0]);
    row(N_("exact"), x[0][1], x[1][1]);
    row(N_("alignment"), x[0][2], x[1][2]);
    row(N_("BLEU ≥ 0.95 at step (s)"), x[0][3], x[1][3]);
    row(N_("ms per step"), x[0][4], x[1][4]);
    if (c->mode == CMP_LAYERS || c->mode == CMP_TFM_SCORE)
        row(N_("parameters"), x[0][8], x[1][8]);
    if (c->mode != CMP_ARCH) {
        print_same(c);
        return;
    }
    row(N_("sequential steps, training"), x[0][5], x[1][5]);
    row(N_("sequential steps, greedy"), x[0][6], x[1][6]);
    row(N_("layers a greedy step"), x[0][7], x[1][7]);
    printf(_("\nIn training (one pair, teacher-forced), the Transformer's %zu blocks a side "
           "(2·L)\neach see every position at once; Bahdanau's GRU takes the num_steps %zu\n"
           "positions a side one after the other (2·T), each through its %s.\n"),
           c->figs[0].L, c->figs[1].T,
           cli_count(layers, sizeof layers, "%zu layer", "%zu layers", c->figs[1].L));
    printf(_("In greedy translation both write one word a step (num_steps %zu at most); the\n"
           "Transformer recomputes its %zu decoder blocks over the prefix, Bahdanau takes one\n"
           "GRU step. seconds: training only (the held-out figures left out).\n"),
           c->figs[0].T, c->figs[0].L);
}

/* ---- --json ----------------------------------------------------------------- */

/* One run: "arch", "layers", "heads", "steps", "seconds", "history",
 * "final" {"bleu", "exact", "alignment", "bleu_095_step",
 * "bleu_095_seconds", "ms_per_step", "sequential_steps_training",
 * "sequential_steps_greedy", "layers_per_greedy_step"}. */
static void run_json(json_writer *jw, const struct cmp *c, int k)
{
    const translation_run *r = &c->run[k];
    const cmp_figs *f = &c->figs[k];
    const s2s_config *m = &r->tr.model.cfg;
    json_object_begin(jw, NULL, JSON_BLOCK);
    json_string(jw, "arch", m->arch->name);
    if (c->mode != CMP_ARCH) {
        json_string(jw, "label", c->label[k]);
        if (c->mode != CMP_LAYERS && c->mode != CMP_TFM_SCORE)
            json_string(jw, "rnn", s2s_rnn_names[m->rnn]);
        if (c->mode != CMP_LAYERS)
            json_string(jw, "score", s2s_score_names[m->score]);
    }
    json_uint(jw, "layers", r->tr.model.cfg.layers);
    json_uint(jw, "heads", r->tr.model.cfg.heads);
    json_int(jw, "steps", r->tr.step);
    json_number_exact(jw, "seconds", r->train_seconds);
    translation_run_json_history(jw, r, 1);
    if (f->reach_step < 0)
        json_null(jw, "bleu_095_step");
    else
        json_int(jw, "bleu_095_step", f->reach_step);
    json_number_exact(jw, "bleu_095_seconds", f->reach_seconds);
    json_number_exact(jw, "ms_per_step", f->ms_step);
    json_uint(jw, "sequential_steps_training", f->seq_train);
    json_uint(jw, "sequential_steps_greedy", f->seq_greedy);
    json_uint(jw, "layers_per_greedy_step", f->seq_word);
    if (c->mode == CMP_LAYERS || c->mode == CMP_TFM_SCORE)
        json_uint(jw, "parameters", f->params);
    json_end(jw);
    json_end(jw);
}

static int write_json(FILE *f, const void *ctx)
{
    const struct cmp *c = ctx;
    json_writer jw;
    json_writer_init(&jw, f);
    json_object_begin(&jw, NULL, JSON_BLOCK);
    json_string(&jw, "command", "train");
    json_string(&jw, "task", "translate");
    json_bool(&jw, c->kind->json_key, 1);
    json_int(&jw, "steps", c->run[0].tr.step);
    json_int(&jw, "seed", c->a->seed);
    json_number_exact(&jw, "bleu_threshold", CMP_BLEU);
    json_array_begin(&jw, "runs", JSON_BLOCK);
    for (int k = 0; k < 2; k++)
        run_json(&jw, c, k);
    json_end(&jw);
    json_end(&jw);
    return json_writer_finish(&jw);
}

/* ---- --html ----------------------------------------------------------------- */

/* The page: the probe's words, and each run's kept steps, its greedy
 * translation at each and its cross-attention (S, L, NH, Tq, Ts); the
 * page shows the Transformer's last block, heads averaged, and
 * Bahdanau's attention, on one slider. */
static int page_object(FILE *f, const void *ctx)
{
    const struct cmp *c = ctx;
    const translation_run *r0 = &c->run[0];
    json_writer jw;
    int bad = 0;
    json_writer_init(&jw, f);
    jw.base64_from = PAGE_BASE64_FROM;
    json_object_begin(&jw, NULL, JSON_BLOCK);
    char title[64];
    snprintf(title, sizeof title, _("attn train --%s"), c->kind->option);
    page_head(&jw, "compare_arch", title, c->argc, c->argv, cmap_find("Reds"));
    page_tokens(&jw, "source", r0->src_labels, r0->src_len);
    page_tokens(&jw, "target", r0->tgt_labels, r0->tgt_len);
    json_array_begin(&jw, "runs", JSON_BLOCK);
    for (int k = 0; k < 2 && !bad; k++) {
        const s2s_config *m = &c->run[k].tr.model.cfg;
        json_object_begin(&jw, NULL, JSON_BLOCK);
        json_string(&jw, "arch", m->arch->name);
        if (c->mode != CMP_ARCH)
            json_string(&jw, "label", c->label[k]);
        json_uint(&jw, "layers", s2s_cross_blocks(m));
        json_uint(&jw, "heads", m->heads);
        bad = translation_run_page_members(&jw, &c->run[k]) != 0;
        json_end(&jw);
    }
    json_end(&jw);
    json_end(&jw);
    return bad || json_writer_finish(&jw) ? -1 : 0;
}

static int write_page(const struct cmp *c, FILE *rep)
{
    return output_page_docs(c->a->html, "attn train", write_json, c, page_object, c, rep,
                            "a page of both models' alignment of the probe on one slider");
}

int train_compare_arch(const struct train_args *a, int argc, char **argv)
{
    struct cmp *c = calloc(1, sizeof *c);
    int status = EXIT_OK;
    if (!c) {
        cli_error("out of memory");
        return EXIT_RUNTIME;
    }
    c->a = a;
    c->mode = a->compare_layers  ? CMP_LAYERS
              : a->compare_rnn   ? CMP_RNN
              : a->compare_score ? (a->arch_given && a->arch == ARCH_TRANSFORMER ? CMP_TFM_SCORE
                                                                                : CMP_SCORE)
                                 : CMP_ARCH;
    c->kind = &kinds[c->mode];
    for (int k = 0; k < 2; k++) {
        c->label[k] = c->kind->label[k];
        if (c->mode == CMP_LAYERS) {
            snprintf(c->blocks[k], sizeof c->blocks[k], _("%ld blocks"),
                     k ? a->layers : (long)CMP_D2L_BLOCKS);
            c->label[k] = c->blocks[k];
        }
    }
    c->argc = argc;
    c->argv = argv;
    for (int k = 0; k < 2 && status == EXIT_OK; k++)
        status = run_one(c, k);
    if (status == EXIT_OK) {
        FILE *rep = output_report_stream(a->json);
        if (rep == stdout)
            print_table(c);
        if (a->json)
            status = output_json(a->json, write_json, c, rep, "both runs' figures");
        if (status == EXIT_OK && a->html)
            status = write_page(c, rep);
    }
    for (int k = 0; k < 2; k++)
        translation_run_free(&c->run[k]);
    free(c);
    return status;
}
