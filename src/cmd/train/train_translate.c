/* train_translate.c — `attn train --task translate` and `attn train --data
 * PAIRS` (SPEC.md §11), the command: which runs are translation, the
 * options translation refuses, the outputs' paths checked up front, then
 * either --compare-arch, --compare-rnn, --compare-score or
 * --compare-layers (train_compare_arch.c) or one run
 * (train_translate_run.c) and what it shows (train_translate_view.c, and
 * --html's page, train_translate_page.c).
 */
#include "train_translate.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "json_in.h"
#include "s2s_corpus.h"
#include "output.h"
#include "page_out.h"
#include "seq2seq_task.h"
#include "i18n.h"

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
    static const char *const only[] = {"arch",         "num-steps",   "max-examples",
                                       "min-freq",     "clip",        "compare-arch",
                                       "rnn",          "score",       "compare-rnn",
                                       "compare-score", NULL};
    for (size_t i = 0; only[i]; i++)
        if (opt_is_given(g, only[i])) {
            cli_error("--%s is for translation (--task translate, or --data of sentence "
                      "pairs)", only[i]);
            return EXIT_USAGE;
        }
    return EXIT_OK;
}

/* The first option of table (n rows: its name, why) that was given:
 * EXIT_USAGE after "--NAME is not used WHERE: WHY"; else EXIT_OK. */
static int refuse_given(const opt_given *g, const char *const (*table)[2], size_t n,
                        const char *where)
{
    for (size_t i = 0; i < n; i++)
        if (opt_is_given(g, table[i][0])) {
            cli_error("--%s is not used %s: %s", table[i][0], where, table[i][1]);
            return EXIT_USAGE;
        }
    return EXIT_OK;
}

/* --rnn and --compare-rnn are Bahdanau's: with the Transformer (--arch
 * transformer, or no --arch) refused. --score is either model's (the
 * Transformer's: SPEC §16, every head scored additively); --compare-score
 * trains Bahdanau's model twice, or with --arch transformer the
 * Transformer. */
static int check_bahdanau_only(const struct train_args *a, const opt_given *g)
{
    static const char *const why[][2] = {
        {"rnn", "the Transformer has no recurrent layers"},
        {"compare-rnn", "it trains Bahdanau's model twice"}};
    const int compares = a->compare_rnn || a->compare_score;
    for (size_t i = 0; i < sizeof why / sizeof why[0]; i++) {
        if (!opt_is_given(g, why[i][0]) || a->arch == ARCH_BAHDANAU)
            continue;
        /* --compare-rnn and --compare-score choose Bahdanau themselves */
        if (opt_is_given(g, "arch") || (i < 1 && !compares)) {
            cli_error("--%s is for --arch bahdanau%s: %s", why[i][0],
                      opt_is_given(g, "arch") ? _(", not --arch transformer") : "", why[i][1]);
            return EXIT_USAGE;
        }
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
        {"pos-embedding", "the Transformer always adds the sinusoid P (a learned P is for "
                          "the encoder tasks)"},
        {"pos-png", "it draws the learned P of the encoder tasks"},
        {"addnorm", "every block of the Transformer has AddNorm"},
        {"causal", "the decoder is causal and the encoder is not, always"},
        {"no-causal", "the decoder is causal and the encoder is not, always"},
        {"compare-posenc", "it compares the encoder tasks with and without P"},
        {"window", "the Transformer's encoder sees every source word and its decoder every "
                   "earlier word"}};
    if (refuse_given(g, not_here, sizeof not_here / sizeof not_here[0], "by translation"))
        return EXIT_USAGE;
    if (check_bahdanau_only(a, g) != EXIT_OK)
        return EXIT_USAGE;
    if (a->compare_layers && (a->arch == ARCH_BAHDANAU || a->png || a->html)) {
        cli_error("--compare-layers trains the Transformer with 2 blocks and N and keeps "
                  "neither; --%s cannot be used with it",
                  a->arch == ARCH_BAHDANAU ? _("arch bahdanau") : a->png ? "png" : "html");
        return EXIT_USAGE;
    }
    if (a->compare_layers && (a->layers < 0 || a->layers == 2)) {
        cli_error("--compare-layers compares d2l's 2 blocks with --layers N: give N ≠ 2");
        return EXIT_USAGE;
    }
    if (a->arch == ARCH_BAHDANAU || a->compare_rnn ||
        (a->compare_score && !(a->arch_given && a->arch == ARCH_TRANSFORMER))) {
        static const char *const not_bahdanau[][2] = {
            {"heads", "Bahdanau's model has one attention (additive, one head)"},
            {"ffn", "Bahdanau's model has no FFN: its layers are GRUs"},
            {"bias", "Bahdanau's attention has no biases (W_q, W_k, w_v)"},
            {"dropout", "attn trains Bahdanau's model without dropout"}};
        if (refuse_given(g, not_bahdanau, sizeof not_bahdanau / sizeof not_bahdanau[0],
                         "with --arch bahdanau"))
            return EXIT_USAGE;
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

/* ---- the outputs' paths ------------------------------------------------------ */

/* Every output file can be created, before any work; --html as every
 * page's (output_page_check: "-" refused, but for the pages' own attn,
 * which takes the data on its descriptor). */
static int check_outputs(const struct train_args *a)
{
    const char *paths[] = {a->save, a->png, a->plot, a->json};
    const char *names[] = {"--save", "--png", "--plot", "--json"};
    int status = output_page_check(a->html);
    if (status != EXIT_OK)
        return status;
    return output_check_files(paths, names, sizeof paths / sizeof paths[0]);
}

/* ---- the command ------------------------------------------------------------- */

int train_translate(const struct train_args *a, const opt_given *g, int argc, char **argv)
{
    translation_run r;
    int status;
    if ((status = check_translate_args(a, g)) != EXIT_OK ||
        (status = check_outputs(a)) != EXIT_OK)
        return status;
    if (a->compare_arch || a->compare_rnn || a->compare_score || a->compare_layers)
        return train_compare_arch(a, argc, argv);
    memset(&r, 0, sizeof r);
    status = translation_run_train(&r, a, argc, argv);
    if (status == EXIT_OK && (status = translation_run_final_attention(&r)) == EXIT_OK)
        status = translation_run_outputs(&r);
    if (status == EXIT_OK && a->html)
        status = translation_run_page_write(&r, output_report_stream(a->json));
    translation_run_free(&r);
    return status;
}
