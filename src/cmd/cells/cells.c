/* cells.c — `attn cells [SECTION]`: every cell of the attention chapter's
 * PyTorch notebook that prints something, in the book's order (SPEC.md
 * §15): a header naming it, its output as PyTorch prints it (computed by
 * attn's modules, cells_compute.h), and the attn command that shows more.
 *
 * The zh edition (zh.d2l.ai chapter 10, 10.1 … 10.7) by default;
 * --edition en: d2l.ai chapter 11, whose cells check shapes with
 * d2l.check_shape and print nothing: there the checked shape is printed
 * under a header that says so.
 */
#include <stdlib.h>
#include <string.h>

#include "cells_compute.h"
#include "cli.h"
#include "commands.h"
#include "json_writer.h"
#include "options.h"
#include "output.h"
#include "run_line.h"
#include "term.h"

/* What a cell's output is. */
enum cell_kind {
    CELL_BOOK,    /* the book's bytes: determined by the cell's code */
    CELL_SEEDED,  /* random numbers: attn's, drawn from --seed */
    CELL_RUN,     /* printed by the notebook's training run: not reproduced */
    CELL_CHECK,   /* en: d2l.check_shape, which prints nothing */
    CELL_FIGURE   /* a figure and nothing printed */
};

struct cell {
    const char *section;
    enum cell_kind kind;
    const char *name;    /* the expression, as the cell writes it */
    cells_fn *compute;   /* NULL for a run or a figure */
    const char *text;    /* a figure's, or a run's, words in place of output */
    const char *command; /* "attn …" that shows more, or NULL */
};

struct section {
    const char *number;
    const char *title;
    const char *figures[3]; /* --out: runs whose @NAME is a figure in DIR */
};

static const struct section zh_sections[] = {
    {"10.1", "注意力提示 (attention cues)", {"heatmap --eye 10 --png @10.1-eye.png"}},
    {"10.2", "注意力汇聚：Nadaraya-Watson 核回归 (attention pooling)",
     {"pool --png @10.2-pool-fits.png --weights-png @10.2-pool-weights.png"}},
    {"10.3", "注意力评分函数 (attention scoring functions)",
     {"score --png @10.3-score-weights.png"}},
    {"10.4", "Bahdanau 注意力 (Bahdanau attention)",
     {"train --task translate --arch bahdanau --steps 200 --png @10.4-bahdanau.png"}},
    {"10.5", "多头注意力 (multi-head attention)", {"multihead --png @10.5-multihead.png"}},
    {"10.6", "自注意力和位置编码 (self-attention and positional encoding)",
     {"selfattn --png @10.6-selfattn.png",
      "posenc --dim 32 --steps 60 --plot @10.6-posenc-columns.png --cols 6-9",
      "posenc --dim 32 --steps 60 --png @10.6-posenc-heatmap.png"}},
    {"10.7", "Transformer",
     {"train --task translate --steps 150 --png @10.7-transformer.png"}},
};

static const struct section en_sections[] = {
    {"11.1", "Queries, Keys, and Values", {"heatmap --eye 10 --png @11.1-eye.png"}},
    {"11.2", "Attention Pooling by Similarity",
     {"pool --edition en --png @11.2-pool-fits.png --weights-png @11.2-pool-weights.png"}},
    {"11.3", "Attention Scoring Functions", {"score --png @11.3-score-weights.png"}},
    {"11.4", "The Bahdanau Attention Mechanism",
     {"train --task translate --arch bahdanau --steps 200 --png @11.4-bahdanau.png"}},
    {"11.5", "Multi-Head Attention", {"multihead --png @11.5-multihead.png"}},
    {"11.6", "Self-Attention and Positional Encoding",
     {"selfattn --png @11.6-selfattn.png",
      "posenc --dim 32 --steps 60 --plot @11.6-posenc-columns.png --cols 6-9",
      "posenc --dim 32 --steps 60 --png @11.6-posenc-heatmap.png"}},
    {"11.7", "The Transformer Architecture",
     {"train --task translate --steps 150 --png @11.7-transformer.png"}},
    {"11.8", "Transformers for Vision",
     {"train --task vit --train-size 2000 --test-size 200 --epochs 2 --png @11.8-vit.png"}},
};

#define TRAIN_TEXT N_("the notebook's training run on fra-eng prints its loss and speed")
#define TRANSLATE_TEXT N_("the notebook's trained model translates its four sentences")

static const struct cell zh_cells[] = {
    {"10.1", CELL_FIGURE, "show_heatmaps(attention_weights, xlabel='Keys', ylabel='Queries')",
     NULL, N_("a figure: torch.eye(10) as a 10 × 10 heatmap, a weight of 1 where a query meets "
           "its own key"), "attn heatmap --eye 10"},
    {"10.2", CELL_BOOK, "n_test", cells_n_test, NULL, "attn pool"},
    {"10.2", CELL_BOOK, "torch.bmm(X, Y).shape", cells_bmm_shape, NULL, NULL},
    {"10.2", CELL_BOOK, "torch.bmm(weights.unsqueeze(1), values.unsqueeze(-1))",
     cells_bmm_weights, NULL, NULL},
    {"10.2", CELL_SEEDED, "print(f'epoch {epoch + 1}, loss {float(l.sum()):.6f}')",
     cells_pool_epochs, NULL, "attn pool --method parametric"},
    {"10.3", CELL_SEEDED, "masked_softmax(torch.rand(2, 2, 4), torch.tensor([2, 3]))",
     cells_masked_softmax_lens, NULL, "attn score --masked-softmax"},
    {"10.3", CELL_SEEDED, "masked_softmax(torch.rand(2, 2, 4), d2l.tensor([[1, 3], [2, 4]]))",
     cells_masked_softmax_lens2d, NULL, "attn score --masked-softmax"},
    /* the means of the values: whole in attn (sums in double, rounded
     * once), an ulp off in the notebook's float32 bmm (12.000001), which
     * prints 2.0000: printed with decimals, as the book's (torch_str.h) */
    {"10.3", CELL_BOOK, "attention(queries, keys, values, valid_lens)  # AdditiveAttention",
     cells_additive, NULL, "attn score --explain"},
    {"10.3", CELL_BOOK, "attention(queries, keys, values, valid_lens)  # DotProductAttention",
     cells_dot, NULL, "attn score --explain"},
    {"10.4", CELL_BOOK,
     "output.shape, len(state), state[0].shape, len(state[1]), state[1][0].shape",
     cells_bahdanau_shapes, NULL, NULL},
    {"10.4", CELL_RUN, "d2l.train_seq2seq(net, train_iter, lr, num_epochs, tgt_vocab, device)",
     NULL, TRAIN_TEXT, "attn train --task translate --arch bahdanau"},
    {"10.4", CELL_RUN, "print(f'{eng} => {translation}, ', f'bleu {…:.3f}')", NULL,
     TRANSLATE_TEXT, "attn train --task translate --arch bahdanau --save m.json; "
                     "attn translate --input m.json \"SENTENCE\""},
    {"10.5", CELL_BOOK, "attention.eval()  # MultiHeadAttention(100, 100, 100, 100, 5, 0.5)",
     cells_mha_module, NULL, "attn multihead --describe"},
    {"10.5", CELL_BOOK, "attention(X, Y, Y, valid_lens).shape", cells_mha_cross_shape, NULL,
     "attn multihead"},
    {"10.6", CELL_BOOK, "attention.eval()  # MultiHeadAttention(100, 100, 100, 100, 5, 0.5)",
     cells_mha_module, NULL, "attn multihead --describe"},
    {"10.6", CELL_BOOK, "attention(X, X, X, valid_lens).shape", cells_mha_self_shape, NULL,
     "attn selfattn"},
    {"10.6", CELL_BOOK, "print(f'{i}的二进制是：{i:>03b}')", cells_binary_zh, NULL,
     "attn posenc --binary 8"},
    {"10.7", CELL_SEEDED, "ffn(d2l.ones((2, 3, 4)))[0]", cells_ffn, NULL, NULL},
    {"10.7", CELL_BOOK, "layer norm vs batch norm", cells_ln_bn, NULL, NULL},
    {"10.7", CELL_BOOK, "add_norm(d2l.ones((2, 3, 4)), d2l.ones((2, 3, 4))).shape",
     cells_add_norm, NULL, NULL},
    {"10.7", CELL_BOOK, "encoder_blk(X, valid_lens).shape", cells_encoder_block, NULL,
     "attn train --task reverse --layers 2 --ffn 32"},
    {"10.7", CELL_BOOK, "encoder(d2l.ones((2, 100), dtype=torch.long), valid_lens).shape",
     cells_encoder, NULL, NULL},
    {"10.7", CELL_BOOK, "decoder_blk(X, state)[0].shape", cells_decoder_block, NULL, NULL},
    {"10.7", CELL_RUN, "d2l.train_seq2seq(net, train_iter, lr, num_epochs, tgt_vocab, device)",
     NULL, TRAIN_TEXT, "attn train --task translate"},
    {"10.7", CELL_RUN, "print(f'{eng} => {translation}, ', f'bleu {…:.3f}')", NULL,
     TRANSLATE_TEXT, "attn train --task translate --save m.json; "
                     "attn translate --input m.json \"SENTENCE\""},
    {"10.7", CELL_BOOK, "enc_attention_weights.shape", cells_enc_weights_shape, NULL,
     "attn translate --input m.json \"SENTENCE\" --all"},
    {"10.7", CELL_RUN, "dec_self_attention_weights.shape, dec_inter_attention_weights.shape",
     NULL, N_("the decoder's weights have a row per step the trained model decoded"),
     "attn translate --input m.json \"SENTENCE\" --all"},
};

static const struct cell en_cells[] = {
    {"11.1", CELL_FIGURE, "show_heatmaps(attention_weights, xlabel='Keys', ylabel='Queries')",
     NULL, N_("a figure: torch.eye(10) as a 10 × 10 heatmap"), "attn heatmap --eye 10"},
    {"11.2", CELL_FIGURE, "plot(x_train, y_train, x_val, y_val, kernels, names)", NULL,
     N_("figures: each kernel's fit and its attention weights"), "attn pool --edition en"},
    {"11.3", CELL_SEEDED, "masked_softmax(torch.rand(2, 2, 4), torch.tensor([2, 3]))",
     cells_masked_softmax_lens, NULL, "attn score --masked-softmax"},
    {"11.3", CELL_SEEDED, "masked_softmax(torch.rand(2, 2, 4), d2l.tensor([[1, 3], [2, 4]]))",
     cells_masked_softmax_lens2d, NULL, "attn score --masked-softmax"},
    {"11.3", CELL_CHECK, "d2l.check_shape(torch.bmm(Q, K), (2, 3, 6))", cells_en_bmm_shape,
     NULL, NULL},
    {"11.3", CELL_CHECK, "d2l.check_shape(attention(queries, keys, values, valid_lens), "
                         "(2, 1, 4))  # DotProductAttention", cells_en_dot_shape, NULL,
     "attn score --explain"},
    {"11.3", CELL_CHECK, "d2l.check_shape(attention(queries, keys, values, valid_lens), "
                         "(2, 1, 4))  # AdditiveAttention", cells_en_additive_shape, NULL,
     "attn score --explain"},
    {"11.4", CELL_CHECK, "d2l.check_shape(output, (batch_size, num_steps, vocab_size))",
     cells_en_bahdanau_output, NULL, NULL},
    {"11.4", CELL_CHECK, "d2l.check_shape(state[0], (batch_size, num_steps, num_hiddens))",
     cells_en_bahdanau_enc, NULL, NULL},
    {"11.4", CELL_CHECK, "d2l.check_shape(state[1][0], (batch_size, num_hiddens))",
     cells_en_bahdanau_hidden, NULL, NULL},
    {"11.4", CELL_FIGURE, "trainer.fit(model, data)", NULL,
     N_("the notebook's training run draws its loss"), "attn train --task translate --arch bahdanau"},
    {"11.4", CELL_RUN, "print(f'{en} => {translation}, bleu,' f'{…:.3f}')", NULL,
     TRANSLATE_TEXT, "attn train --task translate --arch bahdanau --save m.json; "
                     "attn translate --input m.json \"SENTENCE\""},
    {"11.5", CELL_CHECK, "d2l.check_shape(attention(X, Y, Y, valid_lens), "
                         "(batch_size, num_queries, num_hiddens))",
     cells_mha_cross_shape, NULL, "attn multihead"},
    {"11.6", CELL_CHECK, "d2l.check_shape(attention(X, X, X, valid_lens), "
                         "(batch_size, num_queries, num_hiddens))",
     cells_mha_self_shape, NULL, "attn selfattn"},
    {"11.6", CELL_BOOK, "print(f'{i} in binary is {i:>03b}')", cells_binary_en, NULL,
     "attn posenc --binary 8"},
    {"11.7", CELL_SEEDED, "ffn(d2l.ones((2, 3, 4)))[0]", cells_ffn, NULL, NULL},
    {"11.7", CELL_BOOK, "layer norm vs batch norm", cells_ln_bn, NULL, NULL},
    {"11.7", CELL_CHECK, "d2l.check_shape(add_norm(d2l.ones((2, 3, 4)), d2l.ones((2, 3, 4))), "
                         "(2, 3, 4))", cells_add_norm, NULL, NULL},
    {"11.7", CELL_CHECK, "d2l.check_shape(encoder_blk(X, valid_lens), X.shape)",
     cells_encoder_block, NULL, NULL},
    {"11.7", CELL_CHECK, "d2l.check_shape(encoder(d2l.ones((2, 100), dtype=torch.long), "
                         "valid_lens), (2, 100, 24))", cells_encoder, NULL, NULL},
    {"11.7", CELL_CHECK, "d2l.check_shape(decoder_blk(X, state)[0], X.shape)",
     cells_decoder_block, NULL, NULL},
    {"11.7", CELL_FIGURE, "trainer.fit(model, data)", NULL,
     N_("the notebook's training run draws its loss"), "attn train --task translate"},
    {"11.7", CELL_RUN, "print(f'{en} => {translation}, bleu,' f'{…:.3f}')", NULL,
     TRANSLATE_TEXT, "attn train --task translate --save m.json; "
                     "attn translate --input m.json \"SENTENCE\""},
    {"11.7", CELL_CHECK, "d2l.check_shape(enc_attention_weights, "
                         "(num_blks, num_heads, data.num_steps, data.num_steps))",
     cells_enc_weights_shape, NULL, NULL},
    {"11.7", CELL_CHECK, "d2l.check_shape(dec_self_attention_weights, "
                         "(num_blks, num_heads, data.num_steps, data.num_steps))",
     cells_en_dec_self_shape, NULL, NULL},
    {"11.7", CELL_CHECK, "d2l.check_shape(dec_inter_attention_weights, "
                         "(num_blks, num_heads, data.num_steps, data.num_steps))",
     cells_en_cross_shape, NULL, "attn translate --input m.json \"SENTENCE\" --all"},
    {"11.8", CELL_CHECK, "d2l.check_shape(patch_emb(X), (batch_size, "
                         "(img_size//patch_size)**2, num_hiddens))",
     cells_en_patch_embedding, NULL, NULL},
    {"11.8", CELL_CHECK, "d2l.check_shape(encoder_blk(X), X.shape)", cells_en_vit_block, NULL,
     NULL},
    {"11.8", CELL_FIGURE, "trainer.fit(model, data)", NULL,
     N_("the notebook's training run draws its loss and accuracy"),
     "attn train --task vit --plot board.png"},
};

enum edition { EDITION_ZH, EDITION_EN };
static const char *const edition_names[] = {"zh", "en", NULL};

struct cells_args {
    int edition;
    const char *out;
    const char *json;
    long seed;
    const char *section; /* NULL: every section */
    command_finder *find;
};

#define OPT_ARGS struct cells_args
const struct opt cells_options[] = {
    OPT_CHOICE(0, "edition", edition, "E", edition_names,
               "zh: zh.d2l.ai's sections 10.1 … 10.7 (default);\n"
               "en: d2l.ai's 11.1 … 11.8"),
    OPT_DIR('o', "out", out, "also write the section's figures into DIR\n(made when missing)"),
    OPT_JSON(json, "every cell's section, name, output and command"),
    OPT_SEED(seed, "the seed of the random cells (default 0)"),
    OPT_HELP(),
    OPT_END(),
};

const struct opt_rule cells_rules[] = {
    OPT_RULES_END(),
};

void usage_cells(FILE *f)
{
    fputs(_(
        "usage: attn cells [SECTION] [--edition zh|en] [--out DIR] [--json FILE]\n"
        "\n"
        "Every cell of the attention chapter's PyTorch notebook that prints\n"
        "something, in the book's order: a header naming the cell, its output as\n"
        "PyTorch prints it, computed by attn's own modules at the book's sizes, and\n"
        "the attn command that shows more ('$ attn …'). Cells of random numbers\n"
        "print attn's (from --seed) and say so; the training runs' output is the\n"
        "notebook's own. SECTION: 10.1 … 10.7, or with --edition en 11.1 … 11.8\n"
        "(d2l.ai checks shapes with d2l.check_shape, which prints nothing: there\n"
        "the checked shape is printed). No SECTION: every section in order.\n"
        "\n"), f);
    opt_usage(f, cells_options);
    fputs(_(
        "\n"
        "Examples:\n"
        "  attn cells 10.2                   # 10.2's cells\n"
        "  attn cells 11.7 --edition en      # d2l.ai's Transformer\n"
        "  attn cells 10.6 --out figs        # and its figures in figs/\n"), f);
}

/* The edition's tables. */
struct edition_tables {
    const struct section *sections;
    size_t nsections;
    const struct cell *cells;
    size_t ncells;
};

static struct edition_tables tables_of(int edition)
{
    struct edition_tables t;
    if (edition == EDITION_EN) {
        t.sections = en_sections, t.nsections = sizeof en_sections / sizeof en_sections[0];
        t.cells = en_cells, t.ncells = sizeof en_cells / sizeof en_cells[0];
    } else {
        t.sections = zh_sections, t.nsections = sizeof zh_sections / sizeof zh_sections[0];
        t.cells = zh_cells, t.ncells = sizeof zh_cells / sizeof zh_cells[0];
    }
    return t;
}

/* The header's words after the name, by kind. */
static void put_header(FILE *f, const struct cell *c, long seed)
{
    fprintf(f, "[%s] %s", c->section, c->name);
    if (c->kind == CELL_SEEDED)
        fprintf(f, _("  (random: attn's numbers from seed %ld; the notebook's will differ)"), seed);
    else if (c->kind == CELL_CHECK)
        fputs(_("  (the book checks this shape and prints nothing)"), f);
    else if (c->kind == CELL_RUN)
        fputs(_("  (printed by the notebook's own run)"), f);
    else if (c->kind == CELL_FIGURE)
        fputs(_("  (a figure; nothing printed)"), f);
    fputc('\n', f);
}

/* A cell's output in new memory (*text), computed or its words.
 * EXIT_OK, or EXIT_RUNTIME after the message. */
static int cell_output(const struct cell *c, const struct cells_args *a, char **text)
{
    size_t len = 0;
    char err[512] = "";
    FILE *f = open_memstream(text, &len);
    if (!f) {
        cli_error("out of memory");
        return EXIT_RUNTIME;
    }
    int rc = c->compute ? c->compute(f, (unsigned long long)a->seed, err, sizeof err) : 0;
    if (!c->compute && c->text)
        fputs(c->text, f);
    if (fclose(f) != 0 || rc != 0) {
        cli_error("[%s] %s: %s", c->section, c->name, rc ? err : "out of memory");
        free(*text);
        *text = NULL;
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

/* --out: the section's figures, each run shown after '$'. */
static int write_figures(const struct section *s, const struct cells_args *a)
{
    for (size_t r = 0; r < 3 && s->figures[r]; r++) {
        char buf[256], *words[32], *argv[33], *owned[32];
        size_t nowned = 0, nw;
        const char *first = NULL;
        const struct command *cmd;
        int status = EXIT_RUNTIME;
        if (strlen(s->figures[r]) >= sizeof buf)
            return EXIT_RUNTIME;
        nw = run_line_split(s->figures[r], buf, words, 32);
        cmd = nw ? a->find(words[0]) : NULL;
        if (cmd && run_line_argv(words, nw, a->out, argv, owned, &nowned, &first) == EXIT_OK) {
            argv[nw] = NULL;
            fputs("$ attn", stdout);
            for (size_t i = 0; i < nw; i++) {
                fputc(' ', stdout);
                cli_put_word(stdout, argv[i]);
            }
            fputc('\n', stdout);
            fflush(stdout);
            status = cmd->run((int)nw, argv);
            fflush(stdout);
        }
        for (size_t i = 0; i < nowned; i++)
            free(owned[i]);
        if (status != EXIT_OK)
            return status;
    }
    return EXIT_OK;
}

/* The cells' outputs, kept for --json. */
struct cells_run {
    const struct cells_args *a;
    struct edition_tables t;
    char **outputs; /* (ncells,) NULL where not run */
};

static int write_json(FILE *f, const void *arg)
{
    const struct cells_run *run = arg;
    json_writer jw;
    json_writer_init(&jw, f);
    json_object_begin(&jw, NULL, JSON_BLOCK);
    json_string(&jw, "command", "cells");
    json_array_begin(&jw, "cells", JSON_BLOCK);
    for (size_t i = 0; i < run->t.ncells; i++) {
        const struct cell *c = &run->t.cells[i];
        if (!run->outputs[i])
            continue;
        json_object_begin(&jw, NULL, JSON_BLOCK);
        json_string(&jw, "section", c->section);
        json_string(&jw, "name", c->name);
        json_string(&jw, "output", run->outputs[i]);
        if (c->command)
            json_string(&jw, "command", c->command);
        else
            json_null(&jw, "command");
        json_end(&jw);
    }
    json_end(&jw);
    json_end(&jw);
    return json_writer_finish(&jw);
}

/* One section: its title, its cells (kept in run->outputs), and with --out
 * its figures. Printed to o, or nowhere when o is NULL (--json -). */
static int run_section(const struct section *s, struct cells_run *run, int first, FILE *o)
{
    const struct cells_args *a = run->a;
    int status;
    char head[256];
    snprintf(head, sizeof head, "%s %s", s->number, s->title);
    if (o) {
        fprintf(o, "%s%s\n", first ? "" : "\n", head);
        for (size_t i = term_text_columns(head); i > 0; i--)
            fputs("─", o);
        fputc('\n', o);
    }
    for (size_t i = 0; i < run->t.ncells; i++) {
        const struct cell *c = &run->t.cells[i];
        if (strcmp(c->section, s->number) != 0)
            continue;
        if ((status = cell_output(c, a, &run->outputs[i])) != EXIT_OK)
            return status;
        if (!o)
            continue;
        fputc('\n', o);
        put_header(o, c, a->seed);
        /* a figure's or a run's words in the reader's language; the
           book's printouts and --json as they are */
        if ((c->kind == CELL_FIGURE || c->kind == CELL_RUN) && c->text)
            fprintf(o, "%s\n", _(c->text));
        else if (run->outputs[i][0])
            fprintf(o, "%s\n", run->outputs[i]);
        if (c->command)
            fprintf(o, "$ %s\n", c->command);
    }
    if (a->out) {
        fputc('\n', stdout);
        return write_figures(s, a);
    }
    return EXIT_OK;
}

/* The sections' numbers, "10.1, 10.2, …", for the message. */
static void section_list(char *buf, size_t len, const struct edition_tables *t)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < t->nsections && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
                                 t->sections[i].number);
}

static int parse_args(int argc, char **argv, struct cells_args *a, struct edition_tables *t)
{
    int first = argc;
    int status = opt_parse_operands(cells_options, cells_rules, argc, argv, a, NULL, &first);
    if (status != EXIT_OK)
        return status;
    if (argc - first > 1) {
        cli_error("expected one SECTION, got %d (see attn cells --help)", argc - first);
        return EXIT_USAGE;
    }
    *t = tables_of(a->edition);
    a->section = first < argc ? argv[first] : NULL;
    if (a->section) {
        for (size_t i = 0; i < t->nsections; i++)
            if (strcmp(t->sections[i].number, a->section) == 0)
                return EXIT_OK;
        char list[128];
        section_list(list, sizeof list, t);
        cli_error("unknown section '%s' of the %s edition: the sections are %s", a->section,
                  edition_names[a->edition], list);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

int cells_main(int argc, char **argv, command_finder *find)
{
    struct cells_args a;
    struct cells_run run;
    int status;
    memset(&a, 0, sizeof a);
    a.find = find;
    status = parse_args(argc, argv, &a, &run.t);
    if (status == OPT_HELP_ASKED) {
        usage_cells(stdout);
        return EXIT_OK;
    }
    if (status != EXIT_OK)
        return status;
    if (a.json && a.out && strcmp(a.json, "-") == 0) {
        cli_error("--json -: the JSON goes to standard output, where --out's commands print "
                  "too; give --json FILE");
        return EXIT_USAGE;
    }
    if (a.json && (status = output_check_files((const char *const[]){a.json},
                                               (const char *const[]){"--json"}, 1)) != EXIT_OK)
        return status;
    if (a.out && (status = run_line_folder(a.out)) != EXIT_OK)
        return status;
    run.a = &a;
    if (!(run.outputs = calloc(run.t.ncells, sizeof *run.outputs))) {
        cli_error("out of memory");
        return EXIT_RUNTIME;
    }
    /* with --json -, standard output is the JSON's alone */
    FILE *o = a.json && strcmp(a.json, "-") == 0 ? NULL : stdout;
    for (size_t s = 0, shown = 0; s < run.t.nsections && status == EXIT_OK; s++)
        if (!a.section || strcmp(a.section, run.t.sections[s].number) == 0)
            status = run_section(&run.t.sections[s], &run, shown++ == 0, o);
    if (status == EXIT_OK && a.json) {
        if (o)
            fputc('\n', o);
        status = output_json(a.json, write_json, &run, stdout, "every cell's output");
    }
    for (size_t i = 0; i < run.t.ncells; i++)
        free(run.outputs[i]);
    free(run.outputs);
    return status;
}
