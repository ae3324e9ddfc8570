/* translate.c — `attn translate --input MODEL "SENTENCE"` (SPEC.md
 * §11): a saved translation model (attn train --task translate --save, or
 * --data of sentence pairs) translates one sentence by greedy decoding,
 * d2l's predict_seq2seq, and shows where each word it wrote looked: the
 * cross-attention of every decoder block and head, and with --all the
 * encoder's and the decoder's self-attention.
 *
 * The run fills a translate_view (translate_cmd.h), which every view
 * reads: the printout, --png, --json, and the page of --html.
 * Dimensions as there: L blocks, NH heads, T num_steps, S source entries
 * read, R rows written.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "checked.h"
#include "cli.h"
#include "commands.h"
#include "json_writer.h"
#include "s2s_corpus.h"
#include "options.h"
#include "output.h"
#include "page_out.h"
#include "render.h"
#include "s2s_model_file.h"
#include "seq2seq_data.h"
#include "seq2seq_fast.h"
#include "term.h"
#include "transformer.h"
#include "encoder_task.h"
#include "translate_cmd.h"
#include "translate_explain.h"
#include "translate_heads.h"
#include "translate_page.h"
#include "i18n.h"

/* How a typed sentence is read: lower case, punctuation apart, words. */
#define SENTENCE_FLAGS (S2S_SENTENCE_LOWER | S2S_SENTENCE_PUNCT | S2S_SENTENCE_WORDS)

struct translate_args {
    const char *input, *reference, *png, *json, *html, *font;
    const char *prune_heads, *data;
    const attn_cmap *cmap;
    int color, all, head_importance, explain;
    size_t max_mem;
};

#define OPT_ARGS struct translate_args
const struct opt translate_options[] = {
    OPT_FILE('i', "input", input,
             "the model: attn train --task translate --save FILE\n"
             "(or --data of pairs); - for stdin"),
    OPT_TEXT('r', "reference", reference, "TEXT",
             "a reference translation: adds d2l's BLEU (k = 2)"),
    OPT_FLAG(0, "all", all,
             "also the encoder's self-attention and the decoder's\n"
             "masked self-attention"),
    OPT_FLAG(0, "explain", explain,
             "--json's \"explain\": every weight's path (q, k, q·k,\n"
             "÷√p, the mask, the row's max and Σexp, the head's\n"
             "output; additive scores: W_q q, W_k k, tanh, w_v)\n"
             "for each attention shown"),
    OPT_FLAG(0, "head-importance", head_importance,
             "each head of each attention switched off in turn:\n"
             "the BLEU and the loss it costs on held-out pairs\n"
             "(no SENTENCE)"),
    OPT_TEXT(0, "prune-heads", prune_heads, "LIST",
             "the model without these heads, e.g.\n"
             "enc1.3,dec2.1,cross2.4: held-out BLEU, loss and the\n"
             "time a sentence beside the full model's"),
    OPT_FILE(0, "data", data,
             "the pairs --head-importance and --prune-heads\n"
             "measure (JSON pairs: their held-out ones; default:\n"
             "the model's task's, drawn from its seed)"),
    OPT_PNG(png, "the cross-attention, rows = blocks, columns = heads\n"
                 "(--all: the self-attentions below it;\n"
                 "--head-importance: the BLEU and loss each head costs)"),
    OPT_HTML(html, "one offline page to explore the attention"),
    OPT_JSON(json, "the tokens, the translation, BLEU and every\n"
                   "attention (or what --head-importance and\n"
                   "--prune-heads measure); - for stdout"),
    OPT_CMAP(cmap, "colormap: %s (default Reds)"),
    OPT_FONT(font),
    OPT_COLOR(color),
    OPT_MAX_MEM(max_mem),
    OPT_HELP(),
    OPT_END()};

const struct opt_rule translate_rules[] = {
    OPT_CONFLICTS("head-importance", "prune-heads",
                  "--head-importance and --prune-heads: give one (--head-importance "
                  "switches each head off alone, --prune-heads the heads of its list together)"),
    OPT_CONFLICTS("head-importance", "reference all html explain",
                  "--%s is for a sentence's translation; --head-importance measures held-out "
                  "pairs"),
    OPT_CONFLICTS("prune-heads", "reference all html png explain",
                  "--%s is not for --prune-heads (it prints and --json writes the full and the "
                  "pruned model's scores)"),
    OPT_RULES_END()};

void usage_translate(FILE *f)
{
    fputs(_("usage: attn translate --input MODEL [OPTIONS] \"SENTENCE\"\n"
          "       attn translate --input MODEL --head-importance [--data FILE]\n"
          "       attn translate --input MODEL --prune-heads LIST [\"SENTENCE\"]\n"
          "\n"
          "Translates SENTENCE with a model saved by attn train --task translate\n"
          "--save MODEL (or --data of sentence pairs): d2l's predict_seq2seq, greedy\n"
          "decoding from <bos>, each step's most likely word fed back, until <eos>\n"
          "or num_steps words. Prints d2l's line \"source => translation\" and the\n"
          "cross-attention of every decoder block and head: for each word written\n"
          "(rows; the last, <eos>, is the step that stopped) the weights on the\n"
          "source words read (columns, with their <eos>). In the decoder, Q comes\n"
          "from the French written so far, K and V from the encoder's English.\n"
          "A Bahdanau model (--arch bahdanau) has one attention: at step t′ its\n"
          "query is the decoder's previous state s(t′−1), its keys and values\n"
          "the encoder's states.\n"
          "\n"
          "The sentence is read as the model's data was: lower case (but a word the\n"
          "model knows only as typed, e.g. \"Tom\" of JSON pairs), a space before\n"
          ", . ! ?, words split at spaces (several operands are joined by spaces);\n"
          "a word the model never saw is read as <unk>, and a note says which.\n"
          "\n"
          "d2l 10.5's exercise, for a Transformer: --head-importance switches each head\n"
          "of each attention off in turn (enc1.3: the encoder's self-attention, block\n"
          "1, head 3; dec: the decoder's masked self-attention; cross: the\n"
          "cross-attention), its output zeros before W_o, and prints the BLEU and the\n"
          "loss it costs on held-out pairs: the task's, drawn again from the seed the\n"
          "model file names, or --data FILE's. --prune-heads LIST runs the model\n"
          "without the heads of LIST: BLEU, loss and the time a sentence beside the\n"
          "full model's.\n"
          "\n"),
          f);
    fputs(_("A Transformer trained with --score additive (every head scores\n"
          "w_v·tanh(W_q q + W_k k), d2l 10.7's exercise) is read too: the fast path\n"
          "scores by dot products, so it runs on the reference loops, as attn train\n"
          "trains it, and every option above works; --explain shows each block's\n"
          "W_q q, W_k k, the tanh and w_v.\n"
          "\n"),
          f);
    opt_usage(f, translate_options);
    fputs(_("\n"
          "Each block and head is a table of weights, each number on its colour on a\n"
          "colour terminal (a heatmap where the table is too wide). --json has\n"
          "\"source\", \"unknown\", \"translation\", \"target\" (the rows: the\n"
          "translation and <eos>), \"reference\", \"bleu\" and \"cross_attention\"\n"
          "(blocks, heads, target, source); --all adds \"encoder_attention\"\n"
          "(blocks, heads, source, source), \"decoder_attention\" (blocks, heads,\n"
          "target, target) and \"decoder_input\" (its columns: <bos>, then the words).\n"
          "\n"
          "Examples:\n"
          "  attn train --task translate --save model.json\n"
          "  attn translate --input model.json \"the big red dog sees a cat.\"\n"
          "  attn translate -i model.json --reference \"le grand chien rouge voit un chat .\" \\\n"
          "      \"the big red dog sees a cat .\"\n"
          "  attn translate -i model.json --png cross.png \"a small green apple likes the boy .\"\n"
          "  attn translate -i model.json --all --png all.png --json out.json \\\n"
          "      \"a cat sees the dog.\"\n"
          "  attn translate -i model.json --head-importance --png heads.png\n"
          "  attn translate -i model.json --prune-heads cross2.1,dec1.3 \"a cat sees the dog.\"\n"),
          f);
}

/* ---- the run ---------------------------------------------------------------- */

typedef struct xlate {
    const struct translate_args *a;
    translate_view v; /* what the views read: pointers into the below */
    char *sentence;   /* the operands joined */
    s2s_model model;
    int has_model;
    s2s_vocab src_v, tgt_v;
    size_t T;
    char **typed, **ref;       /* s2s_sentence_tokens' blocks */
    char **cased, **ref_cased; /* the same tokens in the case typed */
    size_t n_typed, n_ref;
    const char **unknown;      /* (T,) */
    int *src;                  /* (T,) ids + <eos>, padded */
    int *out;                  /* (T,) the translation's ids */
    int *dec_in;               /* (T,) <bos> + the translation: --all's forward pass */
    const char **src_lab;      /* (T,) */
    const char **tgt_lab;      /* (T,) the rows' words */
    const char **dec_lab;      /* (T,) <bos> + the words */
    float *cross_full;         /* (L, NH, T, T) greedy decoding's */
    float *cross, *enc, *self; /* the views' (see translate_view) */
    /* the fast path, or (ref) the reference loops where it cannot run the
     * model (a Transformer's additive scores): greedy decoding by
     * s2s_greedy, --all's and --explain's forward pass in rc */
    int reference_loops;
    s2s_fast_weights fw;
    s2s_fast_cache fc;
    s2s_cache rc;
    int fw_ready, fc_ready, rc_ready;
    translate_explain ex; /* --explain: its scratch (ex.buf) */
} xlate;

static void xlate_free(xlate *x)
{
    translate_explain_free(&x->ex);
    if (x->fc_ready)
        s2s_fast_cache_free(&x->fc);
    if (x->rc_ready)
        s2s_cache_free(&x->rc);
    if (x->fw_ready)
        s2s_fast_weights_free(&x->fw);
    if (x->has_model)
        s2s_free(&x->model);
    s2s_vocab_free(&x->src_v);
    s2s_vocab_free(&x->tgt_v);
    free(x->sentence);
    free(x->typed);
    free(x->cased);
    free(x->ref_cased);
    free(x->ref);
    free(x->unknown);
    free(x->src);
    free(x->out);
    free(x->dec_in);
    free(x->src_lab);
    free(x->tgt_lab);
    free(x->dec_lab);
    free(x->cross_full);
    free(x->cross);
    free(x->enc);
    free(x->self);
}

/* The operands argv[first … argc) joined by single spaces: the sentence. */
static int join_operands(xlate *x, int argc, char **argv, int first)
{
    size_t len = 1;
    for (int i = first; i < argc; i++)
        if (size_add(len, strlen(argv[i]) + 1, &len)) {
            cli_error("the sentence is too long");
            return EXIT_USAGE;
        }
    if (!(x->sentence = malloc(len))) {
        cli_error("out of memory for the sentence");
        return EXIT_RUNTIME;
    }
    len = 0;
    for (int i = first; i < argc; i++) {
        size_t n = strlen(argv[i]);
        if (i > first)
            x->sentence[len++] = ' ';
        memcpy(x->sentence + len, argv[i], n);
        len += n;
    }
    x->sentence[len] = '\0';
    return EXIT_OK;
}

/* A sentence as tokens (what names it in messages: "the sentence",
 * "--reference"), in lower case (*tok) and as typed (*cased: the same
 * number, lower case never moves a space): exit 2 when it is empty or not
 * UTF-8. */
static int read_tokens(const char *s, const char *what, char ***tok, char ***cased, size_t *n)
{
    char err[256];
    size_t nc = 0;
    if (!(*tok = s2s_sentence_tokens(s, SENTENCE_FLAGS, n, err, sizeof err)) ||
        !(*cased =
              s2s_sentence_tokens(s, SENTENCE_FLAGS & ~S2S_SENTENCE_LOWER, &nc, err, sizeof err))) {
        cli_error("%s: %s", what, err);
        return strncmp(err, "out of memory", 13) == 0 ? EXIT_RUNTIME : EXIT_USAGE;
    }
    if (*n == 0) {
        cli_error("%s is empty", what);
        return EXIT_USAGE;
    }
    if (nc != *n) {
        cli_error("%s: internal error: %zu tokens in lower case, %zu as typed", what, *n, nc);
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

/* A token that vocabulary v has only as typed, not in lower case ("Tom"
 * of a model trained on JSON pairs, which are read as written), is read
 * as typed. */
static void choose_case(const s2s_vocab *v, char **tok, char *const *cased, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s2s_vocab_find(v, tok[i]) < 0 && s2s_vocab_find(v, cased[i]) >= 0)
            tok[i] = cased[i];
}

/* --png, --json and --html can be created: before any work. */
static int check_outputs(const struct translate_args *a)
{
    const char *paths[] = {a->png, a->json}, *names[] = {"--png", "--json"};
    int status;
    if ((status = output_page_check(a->html)) != EXIT_OK)
        return status;
    return output_check_files(paths, names, 2);
}

/* The model and its vocabularies. */
static int load_model(xlate *x)
{
    char err[1024], **src = NULL, **tgt = NULL;
    int rc;
    if (s2s_model_load(x->a->input, &x->model, &src, &tgt, &x->T, 0.0, err, sizeof err)) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    x->has_model = 1;
    rc = s2s_vocab_from_list(&x->src_v, (const char *const *)src, x->model.cfg.src_vocab,
                                 "$.src_vocab", err, sizeof err) ||
         s2s_vocab_from_list(&x->tgt_v, (const char *const *)tgt, x->model.cfg.tgt_vocab,
                                 "$.tgt_vocab", err, sizeof err);
    train_strings_free(src, x->model.cfg.src_vocab);
    train_strings_free(tgt, x->model.cfg.tgt_vocab);
    if (rc) {
        cli_error("%s: %s", x->a->input, err);
        return EXIT_RUNTIME;
    }
    x->reference_loops = !s2s_fast_supports(&x->model.cfg); /* the Transformer's additive scores */
    return EXIT_OK;
}

/* The activations of one sentence of T positions a side: the fast
 * path's (s2s_fast_cache_bytes), or on the reference loops greedy
 * decoding's cache (1 pair of T and T positions, tfm_cache_bytes) and,
 * with --all or --explain, the forward pass's beside it, and the
 * decoder's input. 0, or -1 on overflow. */
static int cache_bytes(const xlate *x, size_t *bytes)
{
    const s2s_config *c = &x->model.cfg;
    const size_t T = x->T;
    size_t one = 0, dec_in = 0;
    if (!x->reference_loops)
        return s2s_fast_cache_bytes(c, 1, T, bytes);
    return tfm_cache_bytes(c, 1, T, T, &one) ||
                   size_mul(one, x->a->all || x->a->explain ? 2 : 1, bytes) ||
                   size_mul(T, sizeof(int), &dec_in) || size_add(*bytes, dec_in, bytes)
               ? -1
               : 0;
}

/* What the run allocates against --max-mem: the activations for one
 * sentence (cache_bytes), on the fast path its transposed weights (about
 * the model's size), and the views' attention weights: greedy decoding's
 * and the cropped cross-attention, and with --all both self-attentions,
 * (L, NH, T, T) floats each. */
static int check_memory(const xlate *x)
{
    const s2s_config *c = &x->model.cfg;
    const size_t T = x->T;
    size_t cache = 0, att = 0, n = 0, bytes = 0;
    const size_t ex = x->a->explain ? translate_explain_bytes(c, T) : 0;
    char what[160];
    int over = cache_bytes(x, &cache) || ex == SIZE_MAX ||
               size_add(cache, ex, &cache) ||
               size_mul(c->layers, c->heads, &att) ||
               size_mul(att, T, &att) || size_mul(att, T, &att) ||
               size_mul(att, x->a->all ? 4 : 2, &n) ||
               size_add(n, x->reference_loops ? 0 : x->model.total, &n) ||
               size_mul(n, sizeof(float), &bytes) || size_add(bytes, cache, &bytes);
    char blocks[32], heads[32];
    cli_count(blocks, sizeof blocks, "%zu block", "%zu blocks", c->layers);
    cli_count(heads, sizeof heads, "%zu head", "%zu heads", c->heads);
    snprintf(what, sizeof what, _("translating with %s (num_steps %zu, %s, %s)"), x->a->input, T,
             blocks, heads);
    return cli_check_mem(what, bytes, over, x->a->max_mem, NULL) ? EXIT_RUNTIME : EXIT_OK;
}

/* The fast path's transposed weights and activations for one sentence. */
static int alloc_fast(xlate *x)
{
    if (s2s_fast_weights_alloc(&x->fw, &x->model) != 0) {
        cli_error("out of memory for the model's weights");
        return EXIT_RUNTIME;
    }
    x->fw_ready = 1;
    if (s2s_fast_cache_alloc(&x->fc, &x->model, 1, x->T) != 0) {
        cli_error("out of memory for the decoder's activations");
        return EXIT_RUNTIME;
    }
    x->fc_ready = 1;
    s2s_fast_weights_update(&x->fw, &x->model);
    return EXIT_OK;
}

/* The reference loops: the cache of --all's and --explain's forward pass
 * (greedy decoding, s2s_greedy, takes its own). */
static int alloc_reference(xlate *x)
{
    char err[256];
    if (!x->a->all && !x->a->explain)
        return EXIT_OK;
    if (s2s_cache_alloc(&x->rc, &x->model, 1, x->T, x->T, err, sizeof err)) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    x->rc_ready = 1;
    return EXIT_OK;
}

/* The views' arrays: the source row, the labels, the attention. */
static int alloc_run(xlate *x)
{
    const size_t T = x->T, LH = x->model.cfg.layers * x->model.cfg.heads;
    size_t n;
    int status;
    if (x->a->all && !x->model.cfg.arch->has_self) {
        cli_error("--all: %s is Bahdanau's model, which has no self-attention (its one "
                  "attention is the cross-attention shown without --all)",
                  x->a->input);
        return EXIT_USAGE;
    }
    if (size_mul(LH, T, &n) || size_mul(n, T, &n) || !(x->src = calloc(T, sizeof *x->src)) ||
        !(x->out = calloc(T, sizeof *x->out)) || !(x->dec_in = calloc(T, sizeof *x->dec_in)) ||
        !(x->src_lab = calloc(T, sizeof *x->src_lab)) ||
        !(x->tgt_lab = calloc(T, sizeof *x->tgt_lab)) ||
        !(x->dec_lab = calloc(T, sizeof *x->dec_lab)) ||
        !(x->unknown = calloc(T, sizeof *x->unknown)) || !(x->cross_full = float_alloc(n)) ||
        !(x->cross = float_alloc(n)) ||
        (x->a->all && (!(x->enc = float_alloc(n)) || !(x->self = float_alloc(n))))) {
        cli_error("out of memory for the translation");
        return EXIT_RUNTIME;
    }
    if ((status = x->reference_loops ? alloc_reference(x) : alloc_fast(x)) != EXIT_OK)
        return status;
    if (x->a->explain) {
        x->ex.fc = x->reference_loops ? NULL : &x->fc;
        x->ex.rc = x->reference_loops ? &x->rc : NULL;
        x->ex.m = &x->model;
        x->ex.T = T;
        x->ex.all = x->a->all;
        if (translate_explain_alloc(&x->ex) != 0) {
            cli_error("out of memory for --explain");
            return EXIT_RUNTIME;
        }
    }
    return EXIT_OK;
}

/* The source row (T,) and its valid length S; the words read (the first
 * T) that the vocabulary lacks, each once. */
static int encode_source(xlate *x)
{
    translate_view *v = &x->v;
    const size_t T = x->T, n_read = x->n_typed < T ? x->n_typed : T;
    size_t n_unk = 0;
    v->S = (size_t)s2s_vocab_encode(x->src, &x->src_v, (const char *const *)x->typed, x->n_typed, T,
                                  &v->cut);
    for (size_t i = 0; i < n_read; i++) {
        int seen = 0;
        if (s2s_vocab_find(&x->src_v, x->typed[i]) >= 0)
            continue;
        for (size_t k = 0; k < n_unk; k++)
            seen |= strcmp(x->unknown[k], x->typed[i]) == 0;
        if (!seen)
            x->unknown[n_unk++] = x->typed[i];
    }
    v->unknown = x->unknown;
    v->n_unknown = n_unk;
    if (v->S == 0) {
        cli_error("the sentence reads as nothing but <pad>: the encoder has nothing to read");
        return EXIT_USAGE;
    }
    for (size_t s = 0; s < v->S; s++)
        x->src_lab[s] = x->src_v.tokens[x->src[s]];
    v->source = x->src_lab;
    return EXIT_OK;
}

/* Text typed by the user (UTF-8, checked) on f, its control characters
 * (C0, DEL, C1: an ESC would start an escape sequence) shown as '?'. */
static void put_text(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F) { /* U+0080 … U+009F */
            fputc('?', f);
            p++;
        } else {
            fputc(*p < 0x20 || *p == 0x7F ? '?' : *p, f);
        }
    }
}

/* The notes on stderr: the words read as <unk>, a sentence cut. */
static void say_notes(const xlate *x)
{
    const translate_view *v = &x->v;
    if (v->n_unknown == 1) {
        fprintf(stderr, _("attn %s: note: \""), cli_command());
        put_text(stderr, v->unknown[0]);
        fputs(_("\" is not in the model's source vocabulary: read as <unk>\n"), stderr);
    }
    if (v->n_unknown > 1) {
        fprintf(stderr,
                _("attn %s: note: %zu words are not in the model's source vocabulary, "
                "read as <unk>:"),
                cli_command(), v->n_unknown);
        for (size_t i = 0; i < v->n_unknown; i++) {
            fputs(i ? ", \"" : " \"", stderr);
            put_text(stderr, v->unknown[i]);
            fputc('"', stderr);
        }
        fputc('\n', stderr);
    }
    if (v->cut)
        cli_error("note: the sentence has %zu words, more than num_steps %zu holds with its "
                  "<eos>: cut to %zu entries, as d2l's truncate_pad does",
                  x->n_typed, x->T, x->T);
}

/* m (L, NH, rows, cols) = the top-left rows × cols of each (L·NH) matrix
 * of full (L, NH, Tr, Tc). */
static void crop(float *m, const float *full, size_t LH, size_t Tr, size_t Tc, size_t rows,
                 size_t cols)
{
    for (size_t k = 0; k < LH; k++)
        for (size_t i = 0; i < rows; i++)
            memcpy(m + (k * rows + i) * cols, full + (k * Tr + i) * Tc, cols * sizeof *m);
}

/* Greedy decoding: the translation, its rows' labels, the cross-attention. */
static int decode(xlate *x)
{
    translate_view *v = &x->v;
    const size_t LH = s2s_cross_blocks(&x->model.cfg) * x->model.cfg.heads, T = x->T;
    size_t n_out = 0;
    char err[256];
    if (!x->reference_loops)
        s2s_fast_greedy(&x->fc, &x->model, &x->fw, x->src, (long)v->S, T, S2S_BOS, S2S_EOS, T,
                        x->out, &n_out, x->cross_full);
    else if (s2s_greedy(&x->model, x->src, (long)v->S, T, S2S_BOS, S2S_EOS, T, x->out, &n_out,
                        x->cross_full, err, sizeof err)) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    v->n_translation = n_out;
    v->stopped_at_eos = n_out < T;
    v->R = n_out + (size_t)v->stopped_at_eos;
    for (size_t t = 0; t < v->R; t++) {
        /* the argmax of Vt logits: always a word of the vocabulary */
        x->tgt_lab[t] = t < n_out ? x->tgt_v.tokens[x->out[t]] : "<eos>";
        x->dec_lab[t] = t == 0 ? "<bos>" : x->tgt_lab[t - 1];
    }
    v->translation = x->tgt_lab;
    v->target = x->tgt_lab;
    crop(x->cross, x->cross_full, LH, T, T, v->R, v->S);
    v->cross = x->cross;
    return EXIT_OK;
}

/* With --all or --explain: the forward pass on <bos> + the translation
 * (R positions, teacher-forced on the model's own output); --all keeps
 * its encoder's (L, NH, S, S) and its decoder's (L, NH, R, R)
 * self-attention, --explain reads its every attention (translate_explain.h). */
static int self_attention(xlate *x)
{
    translate_view *v = &x->v;
    const size_t L = x->model.cfg.layers, NH = x->model.cfg.heads, T = x->T;
    const size_t S = v->S, R = v->R;
    const long src_len = (long)S;
    char err[256];
    x->dec_in[0] = S2S_BOS;
    for (size_t t = 1; t < R; t++)
        x->dec_in[t] = x->out[t - 1];
    if (!x->reference_loops)
        (void)s2s_fast_step(NULL, &x->fc, &x->model, &x->fw, x->src, &src_len, x->dec_in, NULL, 1,
                            T, R, 1.0, NULL, 0, NULL, NULL);
    else if (s2s_forward(&x->model, &x->rc, x->src, &src_len, x->dec_in, 1, T, R, NULL, err,
                         sizeof err)) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    if (x->a->explain) {
        x->ex.S = S;
        x->ex.R = R;
        v->explain = &x->ex;
    }
    if (!x->a->all)
        return EXIT_OK;
    for (size_t l = 0; l < L; l++) {
        /* (1, NH, T, T) and (1, NH, R, R) */
        const float *enc = x->reference_loops ? s2s_self(&x->rc, 0, l) : s2s_fast_self(&x->fc, 0, l);
        const float *self = x->reference_loops ? s2s_self(&x->rc, 1, l) : s2s_fast_self(&x->fc, 1, l);
        crop(x->enc + l * NH * S * S, enc, NH, T, T, S, S);
        memcpy(x->self + l * NH * R * R, self, NH * R * R * sizeof *x->self);
    }
    v->enc = x->enc;
    v->self = x->self;
    v->decoder_input = x->dec_lab;
    return EXIT_OK;
}

/* --reference: d2l's bleu(translation, reference, k=2) on tokens. */
static void score(xlate *x)
{
    translate_view *v = &x->v;
    v->bleu = NAN;
    if (!x->ref)
        return;
    v->reference = (const char *const *)x->ref;
    v->n_reference = x->n_ref;
    v->bleu = s2s_bleu(v->translation, v->n_translation, v->reference, v->n_reference, 2);
}

/* ---- the printout --------------------------------------------------------- */

/* The tokens joined by spaces on stdout. */
static void print_tokens(const char *const *tok, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i)
            putchar(' ');
        put_text(stdout, tok[i]);
    }
}

/* Every block × head of att (L, NH, rows, cols), each as a labelled
 * table of its weights (coloured on a colour terminal); one too wide for
 * the terminal as term_heatmap or term_matrix show it (output_weights). */
static void print_heads(const translate_view *v, const float *att, size_t rows, size_t cols,
                        const char *const *rlab, const char *const *clab, int color)
{
    const size_t L = att == v->cross ? v->blocks : v->cfg.layers, NH = v->cfg.heads;
    const term_table_opts t = {rlab, clab, color, v->cmap, 0.0, 1.0, 2, 0};
    const output_weights_opts w = {rlab, clab, _("columns"), _("rows"), color, 0, v->cmap};
    for (size_t l = 0; l < L; l++)
        for (size_t h = 0; h < NH; h++) {
            const float *m = att + (l * NH + h) * rows * cols;
            if (!v->cfg.arch->has_self)
                fputs(_("\nthe attention:\n"), stdout);
            else
                printf(_("\nblock %zu, head %zu:\n"), l + 1, h + 1);
            if (term_table(stdout, m, rows, cols, &t) != 0)
                output_weights(stdout, m, rows, cols, &w);
        }
}

static void print_view(const translate_view *v, int color)
{
    const s2s_config *c = &v->cfg;
    char layers[48];
    if (c->arch->recurrent) {
        snprintf(layers, sizeof layers, i18n_plural("%zu %s layer", "%zu %s layers", c->layers),
                 c->layers, s2s_rnn_labels[c->rnn]);
        printf(_("model %s: Seq2Seq with Bahdanau attention, %s a side, d %zu%s, num_steps %zu\n"),
               v->model_path, layers, c->hiddens, s2s_score_notes[c->score], v->num_steps);
    } else {
        cli_count(layers, sizeof layers, "%zu block", "%zu blocks", c->layers);
        printf(_("model %s: Transformer encoder–decoder, %s a side, d %zu, %zu heads, FFN %zu, "
                 "num_steps %zu\n"),
               v->model_path, layers, c->hiddens, c->heads, c->ffn, v->num_steps);
        if (c->score == S2S_SCORE_ADDITIVE)
            fputs(_("additive scores: every head scores w_v·tanh(W_q q + W_k k) (translated by the "
                    "reference loops)\n"), stdout);
    }
    print_tokens(v->typed, v->n_typed);
    printf(" => ");
    print_tokens(v->translation, v->n_translation);
    if (!isnan(v->bleu))
        printf(", bleu %.3f", v->bleu); /* d2l's own line */
    if (c->arch->recurrent)
        printf(_("\n\nthe attention at each step t′ (the query s(t′−1), the decoder's state "
               "after the\nword before; keys and values the encoder's states); rows: the "
               "words written%s,\ncolumns: the source words read\n"),
               v->stopped_at_eos ? _("\n(<eos>: the step that stopped)") : "");
    else
        printf(_("\n\ncross-attention of every decoder block and head (queries from the "
               "decoder,\nkeys from the encoder); rows: the words written%s,\ncolumns: the "
               "source words read\n"),
               v->stopped_at_eos ? _(" (<eos>: the step that stopped)") : "");
    print_heads(v, v->cross, v->R, v->S, v->target, v->source, color);
    if (v->enc) {
        fputs(_("\nthe encoder's self-attention; rows and columns: the source words\n"), stdout);
        print_heads(v, v->enc, v->S, v->S, v->source, v->source, color);
        fputs(_("\nthe decoder's masked self-attention; rows: the words written, columns: the\n"
               "decoder's input (<bos>, then the words); row t sees positions 0 … t\n"), stdout);
        print_heads(v, v->self, v->R, v->R, v->target, v->decoder_input, color);
    }
}

/* ---- --png ------------------------------------------------------------------- */

/* One figure of the --png: what it shows, its labels. */
typedef struct grid_spec {
    const float *att; /* (L, NH, rows, cols) */
    size_t rows, cols;
    const char *const *rlab, *const *clab;
    const char *name; /* each row of panels: "NAME, block l" */
    const char *xlabel, *ylabel, *cbar;
} grid_spec;

/* The figure of g: rows of panels = blocks, columns = heads, one colour
 * scale 0 … 1 (d2l's show_heatmaps). */
static int draw_grid(attn_image *img, const translate_view *v, const grid_spec *g, text_font *font,
                     char *err, size_t errlen)
{
    const size_t L = g->att == v->cross ? v->blocks : v->cfg.layers, NH = v->cfg.heads,
                 cell = g->rows * g->cols;
    const int bahdanau = v->cfg.arch->recurrent;
    heat_panel *panels = calloc(L * NH, sizeof *panels);
    char(*titles)[32] = calloc(L * NH, sizeof *titles);
    char(*rt_buf)[96] = calloc(L, sizeof *rt_buf);
    const char **row_titles = calloc(L, sizeof *row_titles);
    heat_figure fig;
    int rc = -1;
    if (!panels || !titles || !rt_buf || !row_titles) {
        snprintf(err, errlen, "%s", _("out of memory"));
        goto done;
    }
    for (size_t l = 0; l < L; l++) {
        if (bahdanau)
            snprintf(rt_buf[l], sizeof rt_buf[l], _("%s (query: the previous state)"), g->name);
        else
            snprintf(rt_buf[l], sizeof rt_buf[l], _("%s, block %zu"), g->name, l + 1);
        row_titles[l] = rt_buf[l];
        for (size_t h = 0; h < NH; h++) {
            const size_t k = l * NH + h;
            if (bahdanau)
                snprintf(titles[k], sizeof titles[k], "%s", _("Bahdanau attention"));
            else
                snprintf(titles[k], sizeof titles[k], _("Head %zu"), h + 1);
            panels[k] = (heat_panel){g->att + k * cell, g->rows, g->cols, titles[k], NULL, NULL};
        }
    }
    memset(&fig, 0, sizeof fig);
    fig.panels = panels;
    fig.grid_rows = L;
    fig.grid_cols = NH;
    fig.row_titles = row_titles;
    fig.xlabel = g->xlabel;
    fig.ylabel = g->ylabel;
    fig.xticklabels = g->clab;
    fig.yticklabels = g->rlab;
    fig.cmap = v->cmap;
    fig.vmin = 0.0;
    fig.vmax = 1.0;
    fig.colorbar_label = g->cbar;
    fig.font = font;
    rc = output_heatmap_draw(img, &fig, err, errlen);
done:
    free(panels);
    free(titles);
    free(rt_buf);
    free(row_titles);
    return rc;
}

/* --png: the cross-attention; with --all the encoder's and the decoder's
 * self-attention stacked below it, each a figure of its own. */
static int write_png(const translate_view *v, const char *path, text_font *font, FILE *rep)
{
    const grid_spec g[3] = {
        {v->cross, v->R, v->S, v->target, v->source, "cross-attention", "Source words",
         "Target words", "cross-attention weight"},
        {v->enc, v->S, v->S, v->source, v->source, "encoder self-attention", "Source words (keys)",
         "Source words (queries)", "encoder self-attention weight"},
        {v->self, v->R, v->R, v->target, v->decoder_input, "decoder self-attention (masked)",
         "Decoder input (keys)", "Target words", "decoder self-attention weight"}};
    attn_image img[3] = {{0, 0, NULL}, {0, 0, NULL}, {0, 0, NULL}};
    attn_image top = {0, 0, NULL}, all = {0, 0, NULL};
    char err[512], what[160];
    int status = EXIT_RUNTIME;
    const int n = v->enc ? 3 : 1;
    for (int i = 0; i < n; i++)
        if (draw_grid(&img[i], v, &g[i], font, err, sizeof err))
            goto fail;
    if (n == 3 && (image_stack(&top, &img[0], &img[1], err, sizeof err) ||
                   image_stack(&all, &top, &img[2], err, sizeof err)))
        goto fail;
    if (!v->cfg.arch->has_self)
        snprintf(what, sizeof what, "%s", _("the attention of each step"));
    else
    {
        char blocks[32];
        cli_count(blocks, sizeof blocks, "%zu block", "%zu blocks", v->cfg.layers);
        snprintf(what, sizeof what, _("the cross-attention%s, %s × %zu heads"),
                 n == 3 ? _(" and both self-attentions") : "", blocks, v->cfg.heads);
    }
    status = output_png(path, n == 3 ? &all : &img[0], rep, what);
    goto done;
fail:
    cli_error("%s: %s", path, err);
done:
    for (int i = 0; i < 3; i++)
        image_free(&img[i]);
    image_free(&top);
    image_free(&all);
    return status;
}

/* ---- --json ------------------------------------------------------------------- */

/* key: (L, NH, rows, cols) as nested arrays. */
static void json_attention(json_writer *jw, const char *key, const translate_view *v,
                           const float *att, size_t rows, size_t cols)
{
    const size_t shape[4] = {att == v->cross ? v->blocks : v->cfg.layers, v->cfg.heads, rows,
                             cols};
    json_tensor(jw, key, att, 4, shape);
}

void translate_view_json(json_writer *jw, const void *view)
{
    const translate_view *v = view;
    const s2s_config *c = &v->cfg;
    json_string(jw, "command", "translate");
    json_object_begin(jw, "model", JSON_INLINE);
    json_string(jw, "file", v->model_path);
    json_string(jw, "arch", v->arch);
    json_uint(jw, "num_layers", c->layers);
    json_uint(jw, "num_hiddens", c->hiddens);
    json_uint(jw, "num_heads", c->heads);
    if (c->arch->has_ffn)
        json_uint(jw, "ffn_num_hiddens", c->ffn);
    if (!c->arch->recurrent && c->score == S2S_SCORE_ADDITIVE) /* a Transformer's */
        json_string(jw, "score", s2s_score_names[c->score]);
    json_uint(jw, "num_steps", v->num_steps);
    json_uint(jw, "src_vocab_size", c->src_vocab);
    json_uint(jw, "tgt_vocab_size", c->tgt_vocab);
    json_end(jw);
    json_string(jw, "sentence", v->sentence);
    page_tokens(jw, "source", v->source, v->S);
    page_tokens(jw, "unknown", v->unknown, v->n_unknown);
    page_tokens(jw, "translation", v->translation, v->n_translation);
    page_tokens(jw, "target", v->target, v->R);
    page_tokens(jw, "reference", v->reference, v->n_reference);
    json_number_exact(jw, "bleu", v->bleu); /* null without --reference */
    json_attention(jw, "cross_attention", v, v->cross, v->R, v->S);
    if (v->enc) {
        page_tokens(jw, "decoder_input", v->decoder_input, v->R);
        json_attention(jw, "encoder_attention", v, v->enc, v->S, v->S);
        json_attention(jw, "decoder_attention", v, v->self, v->R, v->R);
    }
    if (v->explain)
        translate_explain_json(jw, v->explain);
}

static int write_json(FILE *f, const void *ctx)
{
    return json_document(f, 0, translate_view_json, ctx);
}

/* ---- --html ------------------------------------------------------------------- */

/* --json's object, its tensors base64 as a page's. */
static int write_page_json(FILE *f, const void *ctx)
{
    return json_document(f, PAGE_BASE64_FROM, translate_view_json, ctx);
}

/* The page of translate_page.h: its data is --json's object plus "page";
 * v->enc and v->self (--all) give the encoder's and the decoder's
 * self-attention. */
static int write_page(const char *path, const xlate *x, FILE *rep)
{
    const translate_view *v = &x->v;
    char *reference = v->reference ? s2s_join(v->reference, v->n_reference) : NULL;
    char *model = NULL;
    size_t model_len = 0;
    FILE *mem = open_memstream(&model, &model_len);
    int bad = !mem;
    /* the model, for the page's own attn to translate other sentences */
    if (mem) {
        bad = s2s_model_write(mem, &x->model, (const char *const *)x->src_v.tokens,
                              (const char *const *)x->tgt_v.tokens, x->T) != 0;
        bad |= ferror(mem) != 0;
        bad |= fclose(mem) != 0;
    }
    const translate_page_view pv = {
        .layers = v->blocks, .heads = v->cfg.heads, .hiddens = v->cfg.hiddens,
        .arch = v->cfg.arch->name,
        .rnn_layers = v->cfg.arch->recurrent ? v->cfg.layers : 0,
        .rnn = v->cfg.rnn,
        .score = v->cfg.score,
        .ffn = v->cfg.ffn, .source = v->source, .Ts = v->S, .target = v->target, .Tq = v->R,
        .T = 0, .cross = v->cross, .encoder = v->enc, .decoder = v->self,
        .sentence = v->sentence, .reference = reference, .bleu = v->bleu, .cmap = v->cmap,
        .model_json = model, .model_len = model_len};
    int status;
    if ((v->reference && !reference) || bad) {
        free(reference);
        free(model);
        cli_error("--html %s: out of memory", path);
        return EXIT_RUNTIME;
    }
    status = translate_page_write(path, &pv, v->argc, v->argv, write_page_json, v, rep);
    free(reference);
    free(model);
    return status;
}

/* ---- the command -------------------------------------------------------------- */

/* The printout (unless --json - has stdout), --png, --json, --html. */
static int write_outputs(const xlate *x)
{
    const struct translate_args *a = x->a;
    FILE *rep = output_report_stream(a->json);
    text_font *font = NULL;
    int status = EXIT_OK;
    if (rep == stdout)
        print_view(&x->v, term_use_color((term_color_mode)a->color, stdout));
    if (a->png) {
        if ((status = output_font_open(a->font, &font)) == EXIT_OK)
            status = write_png(&x->v, a->png, font, rep);
        output_font_close(font);
    }
    if (status == EXIT_OK && a->json)
        status = output_json(a->json, write_json, &x->v, rep,
                             x->v.enc ? "the translation and every attention"
                                      : "the translation and its cross-attention");
    if (status == EXIT_OK && a->html)
        status = write_page(a->html, x, rep);
    return status;
}

/* The sentence and --reference as tokens, the model, its memory. */
static int prepare(xlate *x)
{
    const struct translate_args *a = x->a;
    int status;
    if ((status = read_tokens(x->sentence, "the sentence", &x->typed, &x->cased, &x->n_typed)) !=
            EXIT_OK ||
        (a->reference && (status = read_tokens(a->reference, "--reference", &x->ref, &x->ref_cased,
                                               &x->n_ref)) != EXIT_OK) ||
        (status = check_outputs(a)) != EXIT_OK || (status = load_model(x)) != EXIT_OK ||
        (status = check_memory(x)) != EXIT_OK || (status = alloc_run(x)) != EXIT_OK)
        return status;
    choose_case(&x->src_v, x->typed, x->cased, x->n_typed);
    if (x->ref)
        choose_case(&x->tgt_v, x->ref, x->ref_cased, x->n_ref);
    return encode_source(x);
}

/* The view's fields that come from the model and the command line. */
static void view_init(xlate *x, int argc, char **argv)
{
    translate_view *v = &x->v;
    v->model_path = x->a->input;
    v->arch = x->model.cfg.arch->name;
    v->cfg = x->model.cfg;
    v->blocks = s2s_cross_blocks(&x->model.cfg);
    v->num_steps = x->T;
    v->sentence = x->sentence;
    v->typed = (const char *const *)x->typed;
    v->n_typed = x->n_typed;
    v->cmap = x->a->cmap;
    v->argc = argc;
    v->argv = argv;
}

/* --head-importance and --prune-heads (translate_heads.c): the sentence,
 * with --prune-heads only, is the operands joined. */
static int heads_command(const struct translate_args *a, int argc, char **argv, int first)
{
    translate_heads_args h;
    xlate x;
    int status;
    if (!a->head_importance && !a->prune_heads) {
        cli_error("--data gives the pairs --head-importance and --prune-heads measure; neither "
                  "is given (a sentence is translated without --data)");
        return EXIT_USAGE;
    }
    if (a->head_importance && first < argc) {
        cli_error("--head-importance measures the held-out pairs, not a sentence: give no "
                  "SENTENCE (without --head-importance, attn translate translates it)");
        return EXIT_USAGE;
    }
    memset(&x, 0, sizeof x);
    if (first < argc && (status = join_operands(&x, argc, argv, first)) != EXIT_OK)
        return status;
    h = (translate_heads_args){a->input, a->data, a->prune_heads, x.sentence, a->png,
                               a->json,  a->font, a->cmap,        a->max_mem};
    status = translate_heads(&h);
    free(x.sentence);
    return status;
}

int cmd_translate(int argc, char **argv)
{
    struct translate_args a;
    xlate x;
    int first = argc, status;
    memset(&a, 0, sizeof a);
    a.max_mem = CLI_DEFAULT_MAX_MEM;
    status = opt_parse_operands(translate_options, translate_rules, argc, argv, &a, NULL, &first);
    if (status == OPT_HELP_ASKED) {
        usage_translate(stdout);
        return EXIT_OK;
    }
    if (status != EXIT_OK)
        return status;
    if (!a.input) {
        cli_error("missing --input MODEL: a model saved by attn train --task translate --save");
        return EXIT_USAGE;
    }
    if (a.head_importance || a.prune_heads || a.data)
        return heads_command(&a, argc, argv, first);
    if (a.explain && !a.json && !a.html) { /* a page's data is --json's object: it has it too */
        cli_error("--explain writes every weight's path into --json's \"explain\" member: give "
                  "--json FILE (- for stdout)");
        return EXIT_USAGE;
    }
    if (first >= argc) {
        cli_error("missing the sentence: attn translate --input %s \"SENTENCE\"", a.input);
        return EXIT_USAGE;
    }
    memset(&x, 0, sizeof x);
    x.a = &a;
    if ((status = join_operands(&x, argc, argv, first)) == EXIT_OK &&
        (status = prepare(&x)) == EXIT_OK) {
        view_init(&x, argc, argv);
        say_notes(&x);
        if ((status = decode(&x)) == EXIT_OK &&
            (!(a.all || a.explain) || (status = self_attention(&x)) == EXIT_OK)) {
            score(&x);
            status = write_outputs(&x);
        }
    }
    xlate_free(&x);
    return status;
}
