/* selfattn.c — `attn multihead` and `attn selfattn` (SPEC.md §4, §5):
 * d2l's multi-head attention on JSON or seeded inputs, shown as the shape
 * line, the weights of every head, every intermediate step (--explain), the
 * module print-out (--describe), a heatmap grid (--png) and JSON (--json).
 * The two commands share everything but a few options; `self` tells them
 * apart. Dimensions as in attention.h. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attention.h"
#include "attention_fast.h"
#include "cli.h"
#include "commands.h"
#include "attention_demos.h"
#include "depth.h"
#include "explain_json.h"
#include "explain_shapes.h"
#include "json_writer.h"
#include "model_input.h"
#include "options.h"
#include "output.h"
#include "page_out.h"
#include "posenc.h"
#include "problem.h"
#include "render.h"
#include "selfattn.h"
#include "term.h"
#include "checked.h"
#include "clock.h"
#include "complexity.h"

#define MAX_SIZE OPT_SIZE_MAX /* any one dimension: larger sizes meet --max-mem */
#define SHOW_PANELS 10       /* heads printed in the default view */

struct attention_args {
    problem_opts po;
    const char *input, *png, *json, *font, *html;
    const attn_cmap *cmap;
    int color;                     /* term_color_mode */
    int score;                     /* --score: the index in score_names */
    long seed;                     /* --seed, copied to po.seed */
    double dropout;
    int train, causal, explain, describe, posenc, stream, naive, time;
    long window;                   /* --window R (odd), 0: every key */
    int explain_shapes;            /* multihead --explain-shapes (explain_shapes.c) */
    long depth;                    /* selfattn --depth N (depth.c), 0: not given */
    const char *plot;              /* its --plot FILE */
    long threads, block, repeat;
    opt_lens lens;                 /* --valid-lens, copied to po */
    /* the demos (attention_demos.c) */
    int permute, scale_sweep, fill_default;
    const char *permutation;
    long dims_from, dims_to, samples;
    /* the command line, for the page */
    int argc;
    char **argv;
};

/* Whether paths a and b name the same file (the same path, or the same
 * device and inode when both exist). */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (strcmp(a, b) == 0)
        return 1;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

static int parse_dims(void *args, const char *s)
{
    struct attention_args *a = args;
    return demo_parse_dims(s, &a->dims_from, &a->dims_to);
}

/* ---- options --------------------------------------------------------- */

static const char *const fill_names[] = {"ones", "random", NULL};
static const char *const score_names[] = {"dot", "additive", NULL}; /* score_kind's order */

#define OPT_ARGS struct attention_args
#define SIZE_OPTION(l, m, a, h) OPT_INT(0, l, m, a, 1, MAX_SIZE, h)

/* The options of both commands: the first three rows, then those after
 * each command's own (which follow --queries in the help). */
#define ATTN_OPTIONS_HEAD(queries_help)                                                   \
    OPT_FILE('i', "input", input, "inputs (and optionally weights) as JSON, - for stdin"), \
    SIZE_OPTION("batch", po.batch, "B", "examples (default 2)"),                          \
    SIZE_OPTION("queries", po.queries, "N", queries_help)
#define ATTN_OPTIONS_TAIL                                                                  \
    SIZE_OPTION("hiddens", po.hiddens, "H", "num_hiddens (default 100)"),                  \
    SIZE_OPTION("heads", po.heads, "NH", "num_heads, must divide H (default 5)"),          \
    OPT_VALID_LENS(lens, "3,2 (one per example) or 1,2,3,4;2,2,2,2 (per query),\n"          \
                         "or none (default 3,2, the chapter's, unless --batch\n"            \
                         "or --input is given)"),                                           \
    OPT_CHOICE(0, "fill", po.fill_random, "ones|random", fill_names,                       \
               "inputs: ones (the chapter's) or standard normal"),                          \
    OPT_SEED(seed, "random weights and inputs (default 0)"),                                \
    OPT_CHOICE(0, "score", score, "dot|additive", score_names,                             \
               "scaled dot-product (default) or d2l's additive scoring"),                   \
    SIZE_OPTION("score-hiddens", po.score_hiddens, "A",                                     \
                "hidden size of additive scoring (default H/NH)"),                          \
    OPT_FLAG(0, "bias", po.bias, "random weights with biases (d2l's bias=True)"),          \
    OPT_FLAG(0, "causal", causal, "also mask keys after each query's position"),           \
    OPT_INT(0, "window", window, "R", 1, MAX_SIZE,                                          \
            "restricted attention: query i sees the R keys j\n"                             \
            "with |i - j| <= (R - 1)/2 (R odd); with --causal\n"                             \
            "the R keys ending at i"),                                                      \
    OPT_REAL(0, "dropout", dropout, "P", 0.0, 1.0,                                          \
             "reported as d2l's Dropout(p=P) (default 0.5); no\n"                           \
             "effect in eval mode, as after model.eval()"),                                 \
    OPT_FLAG(0, "train", train, "apply the dropout (seeded) to the weights"),              \
    OPT_FLAG(0, "explain", explain,                                                         \
             "print every step: Q, K, V per head, QKᵀ, scaled,\n"                           \
             "masked, softmax, weights·V, concat, output"),                                 \
    OPT_FLAG(0, "describe", describe, "print the module as PyTorch prints it, and stop"),  \
    OPT_PNG(png, "attention weights: rows = examples, columns = heads"),                   \
    OPT_HTML(html, "one offline page to explore the weights: hover a\n"                    \
                   "cell, enlarge a panel, the head view"),                               \
    OPT_CMAP(cmap, "colormap: %s (default Reds)"),                                         \
    OPT_FONT(font),                                                                         \
    OPT_JSON(json, "output, attention_weights, valid_lens, state_dict;\n"                  \
                   "- for stdout"),                                                         \
    OPT_COLOR(color),                                                                       \
    OPT_MAX_MEM(po.max_mem),                                                                \
    OPT_FLAG(0, "stream", stream,                                                           \
             "never store the weights: an online softmax over\n"                            \
             "blocks of keys, memory O(n·d) (FlashAttention's\n"                            \
             "trick); the JSON's attention_weights is null;\n"                              \
             "with --explain, the online softmax step by step"),                            \
    OPT_INT(0, "block", block, "N", 1, 64, "keys per block for --stream --explain (default 2)"), \
    OPT_FLAG(0, "naive", naive,                                                             \
             "run the reference loops of src/nn/attention/attention.c\n"                              \
             "(sums in double) instead of the fast tiled ones"),                            \
    OPT_THREADS(threads),                                                                   \
    OPT_FLAG(0, "time", time, "print the forward pass's time and GFLOP/s on stderr"),      \
    OPT_INT(0, "repeat", repeat, "N", 1, 100,                                               \
            "run the forward pass N times (--time: the median of\n"                         \
            "all but the first, a warm-up) (default 1)"),                                   \
    OPT_HELP(),                                                                             \
    OPT_END()

const struct opt multihead_options[] = {
    ATTN_OPTIONS_HEAD("number of queries (default 4)"),
    SIZE_OPTION("kv", po.kv, "NK", "number of key-value pairs (default 6)"),
    SIZE_OPTION("query-size", po.query_size, "DQ", "width of the random queries (default H)"),
    SIZE_OPTION("key-size", po.key_size, "DK", "width of the random keys (default H)"),
    SIZE_OPTION("value-size", po.value_size, "DV", "width of the random values (default H)"),
    OPT_FLAG(0, "explain-shapes", explain_shapes,
             "transpose_qkv and transpose_output on labelled\n"
             "entries, valid_lens through repeat_interleave, and\n"
             "the heads put back checked against --explain's\n"
             "(below; default B 2, N 3, H 4, 2 heads, random)"),
    ATTN_OPTIONS_TAIL,
};

const struct opt selfattn_options[] = {
    ATTN_OPTIONS_HEAD("sequence length (tokens per example) (default 4)"),
    OPT_TEXT(0, "tokens", po.tokens, "TEXT",
             "label the positions and embed each token from its\n"
             "text (the same word, the same vector in every\n"
             "sentence); sentences separated by | form a batch,\n"
             "padded, with their lengths as valid_lens; a\n"
             "sentence with no space, all Chinese or Japanese,\n"
             "is its characters (我爱北京: 4 tokens)"),
    OPT_FLAG(0, "posenc", posenc, "add the sinusoidal positional encoding to X"),
    OPT_FLAG(0, "no-proj", po.no_proj, "identity projections: Q = K = V = X, W_o = I"),
    OPT_FLAG(0, "permute", permute, "demo: order blindness (below)"),
    OPT_TEXT(0, "permutation", permutation, "LIST",
             "π for --permute, e.g. 3,0,2,1: row i of π·X is row\n"
             "LIST[i] of X (default: random from --seed, never\n"
             "the identity)"),
    OPT_FLAG(0, "scale-sweep", scale_sweep, "demo: why the scores are divided by √d (below)"),
    OPT_CALLBACK(0, "dims", "FROM:TO", parse_dims,
                 "d for --scale-sweep, powers of two (default 1:1024)"),
    OPT_INT(0, "samples", samples, "N", 2, 100000000L,
            "q, k pairs per d for --scale-sweep (default 10000)"),
    SIZE_OPTION("kv", po.kv, "N", "keys per softmax row of --scale-sweep (default 16)"),
    OPT_INT(0, "depth", depth, "N", 1, DEPTH_MAX,
            "demo: the same layer applied N times, alone, with a\n"
            "residual, with residual and LayerNorm (below)"),
    OPT_FILE(0, "plot", plot, "--depth's rank-1 residual against the depth"),
    ATTN_OPTIONS_TAIL,
};

/* What cannot be given together, in the order the checks are made. */
#define ATTN_RULES_TAIL                                                                    \
    OPT_CONFLICTS("describe", "html",                                                      \
                  "--describe prints the module and stops; --%s would have nothing to show"), \
    OPT_CONFLICTS("stream", "png html naive",                                                   \
                  "--stream never stores the attention weights, which --%s needs"),        \
    OPT_NEEDS("block", "stream explain", "--block sets the key blocks of --stream --explain"), \
    OPT_RULES_END()
#define RANDOM_ONLY_MESSAGE N_("--%s makes random inputs and cannot be used with --input")

const struct opt_rule multihead_rules[] = {
    OPT_CONFLICTS("explain-shapes",
                  "explain describe stream block naive train dropout time repeat png html cmap font "
                  "threads",
                  "--%s cannot be used with --explain-shapes, which walks the heads' layout "
                  "in eval mode (it takes the sizes, --input, --valid-lens, --causal, "
                  "--fill, --seed, --bias, --json, --max-mem, --color)"),
    OPT_CONFLICTS("input", "batch queries kv fill query-size key-size value-size",
                  RANDOM_ONLY_MESSAGE),
    ATTN_RULES_TAIL,
};

/* The demos (attention_demos.c): one at a time, each with the options it
 * uses; then what both commands refuse. */
const struct opt_rule selfattn_rules[] = {
    OPT_CONFLICTS("permute", "scale-sweep depth",
                  "--permute and --%s are two different demos; give one"),
    OPT_CONFLICTS("scale-sweep",
                  "input batch queries hiddens heads valid-lens fill score score-hiddens bias "
                  "causal dropout train explain describe cmap stream block naive threads time "
                  "repeat tokens posenc no-proj permutation depth plot",
                  "--%s cannot be used with --scale-sweep, which draws its own q and k (it "
                  "takes --dims, --samples, --kv, --seed, --png, --json, --html, --font, "
                  "--max-mem)"),
    OPT_CONFLICTS("permute", "causal dropout train explain describe stream block time repeat",
                  "--%s cannot be used with --permute, which compares two plain eval-mode "
                  "runs of the layer"),
    OPT_NEEDS("dims samples", "scale-sweep", "--%s is for --scale-sweep"),
    OPT_NEEDS("kv", "scale-sweep",
              "--kv is for --scale-sweep (in self-attention the keys are the queries: "
              "--queries)"),
    OPT_NEEDS("permutation", "permute", "--permutation is for --permute"),
    OPT_CONFLICTS("depth",
                  "explain describe stream block naive train dropout time repeat png html "
                  "valid-lens cmap color threads",
                  "--%s cannot be used with --depth, which applies one eval-mode layer again "
                  "and again (it takes --input, --tokens, the sizes, --fill, --seed, --score, "
                  "--bias, --causal, --posenc, --no-proj, --plot, --json, --font, --max-mem)"),
    OPT_NEEDS("plot", "depth", "--plot draws what --depth measures; give --depth N"),
    /* --tokens with --input: only for a model of attn train (run) */
    OPT_CONFLICTS("input", "batch queries kv fill", RANDOM_ONLY_MESSAGE),
    OPT_CONFLICTS("tokens", "fill", "--fill and --tokens both choose the inputs; give one"),
    OPT_CONFLICTS("no-proj", "bias score",
                  "--no-proj uses identity projections without bias or additive scoring"),
    ATTN_RULES_TAIL,
};

void usage_multihead(FILE *f)
{
    fputs(_("usage: attn multihead [--input FILE] [OPTIONS]\n"
          "\n"
          "d2l's MultiHeadAttention(key_size, query_size, value_size, num_hiddens,\n"
          "num_heads, dropout) in eval mode:\n"
          "    Q = queries·W_qᵀ   K = keys·W_kᵀ   V = values·W_vᵀ\n"
          "    head_i = softmax(Q_i K_iᵀ / sqrt(H/NH), masked by valid_lens) · V_i\n"
          "    output = concat(head_1, …, head_NH) · W_oᵀ\n"
          "Without --input the chapter's cell: 2 examples, 4 queries, 6 key-value\n"
          "pairs of ones, 100 hiddens, 5 heads, valid_lens 3,2, weights drawn like\n"
          "nn.Linear's default initialisation from --seed.\n"
          "\n"), f);
    opt_usage(f, multihead_options);
    fputs(_("\n"
          "JSON input: {\"queries\": (B, Nq, Dq), \"keys\": (B, Nk, Dk), \"values\":\n"
          "(B, Nk, Dv), \"valid_lens\": (B,) or (B, Nq), \"num_heads\": NH,\n"
          "\"state_dict\": d2l's keys W_q.weight … W_o.weight, optional *.bias and\n"
          "attention.* (additive), \"query_tokens\", \"key_tokens\"}; a 2-D array means\n"
          "batch 1; keys and values default to queries.\n"
          "\n"
          "How the heads become a batch (--explain-shapes). d2l computes every head in\n"
          "one DotProductAttention: transpose_qkv reshapes W_q(X) (B, N, H) to (B, N,\n"
          "h, H/h), permutes it (0, 2, 1, 3) and reshapes it to (B·h, N, H/h), so\n"
          "that slice b·h + j is example b's head j; transpose_output undoes it. attn\n"
          "walks it on labelled entries (b1 t2 h1 c0..1: example 1, token 2, head 1,\n"
          "its columns 0 and 1): every step's shape, what each slice holds, what a\n"
          "reshape without the permute would mix, valid_lens through\n"
          "repeat_interleave(h) beside repeat(h) (tile), which would give slice b·h + j\n"
          "another example's length; then it computes the heads that way and checks\n"
          "they equal --explain's per-head outputs (the same bits). Default B 2, N 3\n"
          "(queries and keys), H 4, 2 heads, random inputs, valid_lens 3,2; --json:\n"
          "the index maps (transpose_qkv's entries as flat indices into (B, N, H)).\n"
          "\n"
          "Examples:\n"
          "  attn multihead                     # the chapter's cell: torch.Size([2, 4, 100])\n"
          "  attn multihead --describe          # the module print-out\n"
          "  attn multihead --png heads.png\n"
          "  attn multihead --html heads.html   # hover, enlarge, the head view\n"
          "  attn multihead --explain --batch 1 --queries 2 --kv 3 --hiddens 4 --heads 2\n"
          "  attn multihead --explain-shapes     # transpose_qkv on labelled entries\n"
          "  attn multihead --input data/chapter_multihead.json --json out.json\n"), f);
}

static void usage_selfattn_demos(FILE *f);

void usage_selfattn(FILE *f)
{
    fputs(_("usage: attn selfattn [--input FILE] [--tokens TEXT] [OPTIONS]\n"
          "\n"
          "Self-attention: multi-head attention with queries = keys = values = X.\n"
          "Q, K and V come from the same X through different projections W_q, W_k,\n"
          "W_v (Q ≠ K ≠ V in general); --no-proj shows the simplified Q = K = V = X.\n"
          "Without --input the chapter's cell: X of ones (2, 4, 100), 5 heads,\n"
          "valid_lens 3,2.\n"
          "\n"), f);
    opt_usage(f, selfattn_options);
    fputs(_("\n"
          "JSON input: {\"X\": (B, N, D), \"valid_lens\", \"num_heads\", \"state_dict\",\n"
          "\"tokens\"} as for multihead. A model saved by attn train --save is read\n"
          "too: --tokens then gives the sentences it runs on (X = embedding·√d + P),\n"
          "and the heads show the trained attention.\n"
          "\n"
          "Context (--tokens). An embedding says what a word is, not what it means\n"
          "here. With --tokens \"苹果 很 好吃|苹果 发布 了 新的 产品\" the same token gets\n"
          "the same input vector in both sentences (a padded batch, valid_lens their\n"
          "lengths); self-attention mixes in what surrounds it, and attn prints the\n"
          "cosine similarity of its two outputs beside that of its inputs (1). --png\n"
          "draws a row of heads per sentence, labelled with its tokens.\n"
          "\n"
          "Order blindness (--permute). Without positional encoding self-attention\n"
          "cannot tell the order of its tokens: permuting the rows of X by π only\n"
          "permutes the result, f(π·X) = π·f(X), and the weights, A(π·X) = π·A(X)·πᵀ.\n"
          "attn runs the layer on X and on π·X with the same weights and prints π and\n"
          "the largest differences (float32 rounding, about 1e-7). With --posenc the\n"
          "encoding is added by position after permuting (the tokens move, the\n"
          "positions stay), and the differences are clearly not zero: the order is\n"
          "visible. X is --fill random unless --input, --tokens or --fill say otherwise\n"
          "(rows of ones are all alike), and valid_lens none (padding would not move\n"
          "with the tokens). --png: π·A(X)·πᵀ, A(π·X) and |difference| for example 0,\n"
          "head 1, on one colour scale from 0; --json: \"permutation\", \"posenc\",\n"
          "\"max_output_diff\", \"max_weight_diff\" and both runs.\n"
          "\n"
          "Why divide by √d (--scale-sweep). For q and k of d independent standard\n"
          "normal components, q·k adds d products of variance 1: var(q·k) = d, and a\n"
          "softmax over such scores turns one-hot as d grows, its gradient vanishing;\n"
          "var(q·k/√d) = 1 whatever d. For each d attn draws --samples queries and\n"
          "keys (--seed) and prints both variances and, over --kv keys per row, the\n"
          "softmax's mean largest weight (1/n uniform … 1 one-hot) and mean entropy\n"
          "(log n … 0 nats), with and without 1/√d. --png: the largest weight and the\n"
          "variance against log₂ d; --json: every column.\n"
          "\n"), f);
    usage_selfattn_demos(f);
}

/* The help's last part: --depth, the examples. */
static void usage_selfattn_demos(FILE *f)
{
    fputs(_("Stacking (--depth N). The same layer (the same weights) applied N times,\n"
          "three ways: attention alone X ← MHA(X), with a residual X ← X + MHA(X), and\n"
          "with the residual and LayerNorm X ← LayerNorm(X + MHA(X)) (d2l's AddNorm,\n"
          "weight 1, bias 0). At every depth, the mean over the examples of the spread,\n"
          "the tokens' mean distance from their mean x̄, (1/N) Σ_i |x_i − x̄|, and the\n"
          "rank-1 residual |X − 1·x̄ᵀ|_F / |X|_F, X's relative distance from the matrix\n"
          "whose every row is x̄: 0 when the tokens are one vector. Attention alone\n"
          "averages the tokens at every layer and they collapse within a few. X is\n"
          "--fill random unless --input, --tokens or --fill say otherwise, valid_lens\n"
          "none (padding would count among the tokens), N at most 1000. --plot: the\n"
          "rank-1 residual against the depth; --json: every depth's measures, X, the\n"
          "state_dict and the last outputs.\n"
          "\n"
          "Examples:\n"
          "  attn selfattn                      # the chapter's cell: torch.Size([2, 4, 100])\n"
          "  attn selfattn --tokens \"苹果 很 好吃|苹果 发布 了 新的 产品\" --hiddens 16 --heads 2 \\\n"
          "      --png apple.png          # one word, two contexts, two outputs\n"
          "  attn selfattn --input data/apple_company.json --png apple.png\n"
          "  attn selfattn --tokens \"苹果 很 好吃|苹果 发布 了 新的 产品\" --hiddens 16 --heads 2 \\\n"
          "      --html apple.html          # the same, to explore in a browser\n"
          "  attn selfattn --input model.json --tokens \"苹果 发布 了 新的 产品\" --png f.png\n"
          "      # a model of attn train --save: the trained attention\n"
          "  attn selfattn --stream --explain --batch 1 --queries 5 --hiddens 4 --heads 1 \\\n"
          "      --fill random --valid-lens none      # the online softmax, block by block\n"
          "  attn selfattn --batch 1 --queries 4096 --hiddens 512 --heads 8 --fill random \\\n"
          "      --valid-lens none --stream --time    # a long sequence in O(n·d) memory\n"
          "  attn selfattn --permute --tokens \"我 爱 吃 苹果\" --hiddens 16 --heads 2 \\\n"
          "      --png permute.png          # order blindness; add --posenc to compare\n"
          "  attn selfattn --scale-sweep --png sweep.png   # why / √d, for d = 1 … 1024\n"
          "  attn selfattn --depth 8 --plot depth.png      # stacking: the tokens collapse\n"), f);
}

/* The demos' defaults, and the checks of --scale-sweep's values. */
static int demo_defaults(struct attention_args *a, const opt_given *g)
{
    if (a->scale_sweep) {
        if (!opt_is_given(g, "dims")) {
            a->dims_from = 1;
            a->dims_to = 1024;
        }
        a->samples = opt_is_given(g, "samples") ? a->samples : 10000;
        a->po.kv = opt_is_given(g, "kv") ? a->po.kv : 16;
        if (a->po.kv < 2) {
            cli_error("--kv: a softmax over one key is always 1; --scale-sweep needs 2 or "
                      "more keys");
            return EXIT_USAGE;
        }
        if (a->po.kv > a->samples) {
            cli_error("--kv %ld needs at least as many --samples, got %ld: each softmax row "
                      "takes --kv different keys from the samples", a->po.kv, a->samples);
            return EXIT_USAGE;
        }
    }
    if (a->depth) {
        /* rows of ones are one vector already; padding would count as tokens */
        if (!a->input && !a->po.tokens && !opt_is_given(g, "fill"))
            a->po.fill_random = 1;
        if (!a->po.tokens)
            a->po.no_valid_lens = 1;
    }
    if (a->permute) {
        /* rows of ones are all alike, and permuting them changes nothing */
        a->fill_default = !a->input && !a->po.tokens && !opt_is_given(g, "fill");
        if (a->fill_default)
            a->po.fill_random = 1;
        /* no padding: it would not move with the tokens */
        if (!a->po.tokens && !opt_is_given(g, "valid-lens"))
            a->po.no_valid_lens = 1;
    }
    return EXIT_OK;
}

/* --explain-shapes' sizes: B 2, N 3 queries and keys, H 4, 2 heads, random
 * inputs (rows of ones would hide a wrong layout), unless given; d2l's
 * dot-product scoring only. */
static int shapes_defaults(struct attention_args *a, const opt_given *g)
{
    if (a->po.score == SCORE_ADDITIVE) {
        cli_error("--explain-shapes follows d2l's DotProductAttention; --score additive "
                  "splits the heads the same way, but is not walked");
        return EXIT_USAGE;
    }
    if (a->input)
        return EXIT_OK;
    a->po.queries = opt_is_given(g, "queries") ? a->po.queries : 3;
    a->po.kv = opt_is_given(g, "kv") ? a->po.kv : a->po.queries;
    a->po.hiddens = opt_is_given(g, "hiddens") ? a->po.hiddens : 4;
    a->po.heads = opt_is_given(g, "heads") ? a->po.heads : 2;
    if (!opt_is_given(g, "fill"))
        a->po.fill_random = 1;
    return EXIT_OK;
}

/* The input file is never written: an output naming it is refused. */
static int input_kept(const struct attention_args *a)
{
    const char *outs[3] = {a->json, a->png, a->html}, *names[3] = {"json", "png", "html"};
    if (!a->input || strcmp(a->input, "-") == 0)
        return EXIT_OK;
    for (size_t i = 0; i < 3; i++)
        if (outs[i] && strcmp(outs[i], "-") != 0 && same_file(a->input, outs[i])) {
            cli_error("--%s %s is the --input file, which attn never overwrites", names[i],
                      outs[i]);
            return EXIT_USAGE;
        }
    return EXIT_OK;
}

static int parse_args(int argc, char **argv, int self, struct attention_args *a, int *help)
{
    opt_given g;
    int status;

    memset(a, 0, sizeof *a);
    *help = 0;
    a->po.self = self;
    a->po.max_mem = CLI_DEFAULT_MAX_MEM;
    a->cmap = cmap_find("Reds");
    a->color = TERM_COLOR_AUTO;
    a->dropout = 0.5;
    a->repeat = 1;
    a->argc = argc;
    a->argv = argv;
    status = opt_parse(self ? selfattn_options : multihead_options,
                       self ? selfattn_rules : multihead_rules, argc, argv, a, &g);
    if (status == OPT_HELP_ASKED)
        *help = 1;
    if (status != EXIT_OK)
        return status == OPT_HELP_ASKED ? EXIT_OK : status;
    a->po.seed = (unsigned long long)a->seed;
    a->po.score = a->score ? SCORE_ADDITIVE : SCORE_DOT;
    a->po.score_given = opt_is_given(&g, "score");
    a->po.no_valid_lens = a->lens.none;
    if (a->lens.ndim) {
        a->po.valid_lens = a->lens.v;
        a->po.vl_ndim = a->lens.ndim;
        a->po.vl_shape[0] = a->lens.shape[0];
        a->po.vl_shape[1] = a->lens.shape[1];
    }
    if (self && demo_defaults(a, &g) != EXIT_OK)
        return EXIT_USAGE;
    if (a->explain_shapes && shapes_defaults(a, &g) != EXIT_OK)
        return EXIT_USAGE;
    if (a->stream && a->po.score == SCORE_ADDITIVE) {
        cli_error("--stream computes dot-product scores only");
        return EXIT_USAGE;
    }
    if (a->window && a->window % 2 == 0) {
        cli_error("--window %ld: give an odd R (the R positions centred on the query)",
                  a->window);
        return EXIT_USAGE;
    }
    if (a->window) {
        /* the first three are selfattn's, the fourth multihead's */
        static const char *const not_with[] = {"depth", "permute", "scale-sweep",
                                               "explain-shapes", "explain", "stream",
                                               "describe", "html", NULL};
        for (size_t i = self ? 0 : 3; not_with[i]; i++)
            if ((self && i == 3) || !opt_is_given(&g, not_with[i]))
                continue;
            else {
                cli_error("--%s cannot be used with --window (the restricted attention "
                          "runs the layer's forward pass: its output, weights, --png, "
                          "--json)", not_with[i]);
                return EXIT_USAGE;
            }
    }
    if (opt_is_given(&g, "score-hiddens") && a->po.score != SCORE_ADDITIVE) {
        cli_error("--score-hiddens is for --score additive");
        return EXIT_USAGE;
    }
    return input_kept(a);
}

/* ---- what a learner sees --------------------------------------------- */

/* A float as Python's repr prints it in a module (0.5, 0.0, 0.25). */
static void py_float(char *buf, size_t n, double v)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    if (!strpbrk(buf, ".en"))
        snprintf(buf + strlen(buf), n - strlen(buf), ".0");
}

static void print_linear(FILE *f, const char *indent, const char *name, const linear *l)
{
    fprintf(f, "%s(%s): Linear(in_features=%zu, out_features=%zu, bias=%s)\n", indent, name,
            l->weight.shape[1], l->weight.shape[0], l->bias.data ? "True" : "False");
}

void selfattn_describe(FILE *f, const mha_params *m, double dropout)
{
    char p[40];
    py_float(p, sizeof p, dropout);
    fprintf(f, "MultiHeadAttention(\n");
    if (m->score == SCORE_DOT) {
        fprintf(f, "  (attention): DotProductAttention(\n"
                   "    (dropout): Dropout(p=%s, inplace=False)\n"
                   "  )\n", p);
    } else {
        fprintf(f, "  (attention): AdditiveAttention(\n");
        print_linear(f, "    ", "W_k", &m->a_W_k);
        print_linear(f, "    ", "W_q", &m->a_W_q);
        print_linear(f, "    ", "w_v", &m->a_w_v);
        fprintf(f, "    (dropout): Dropout(p=%s, inplace=False)\n  )\n", p);
    }
    print_linear(f, "  ", "W_q", &m->W_q);
    print_linear(f, "  ", "W_k", &m->W_k);
    print_linear(f, "  ", "W_v", &m->W_v);
    print_linear(f, "  ", "W_o", &m->W_o);
    fprintf(f, ")");
}

static void lens_text(char *buf, size_t n, const problem *pr)
{
    size_t i, used = 0, count = pr->vl_ndim == 2 ? pr->B * pr->Nq : pr->B;
    if (!pr->valid_lens) {
        snprintf(buf, n, "None");
        return;
    }
    used += (size_t)snprintf(buf, n, "[");
    for (i = 0; i < count && used + 24 < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%s%ld", i ? ", " : "",
                                 pr->vl_ndim == 2 && i % pr->Nq == 0 ? (i ? "[" : "[") : "",
                                 pr->valid_lens[i]);
    if (pr->vl_ndim == 2)
        used += (size_t)snprintf(buf + used, n - used, "]");
    if (i < count)
        snprintf(buf + used, n - used, ", …]");
    else
        snprintf(buf + used, n - used, "]");
}

/* Mask text for one example: "valid_len 3", "valid_lens per query", "". */
static void example_mask(char *buf, size_t n, const problem *pr, size_t b, int causal)
{
    buf[0] = '\0';
    if (pr->valid_lens && pr->vl_ndim == 1)
        snprintf(buf, n, _(", valid_len %ld"), pr->valid_lens[b]);
    else if (pr->valid_lens)
        snprintf(buf, n, "%s", _(", valid_lens per query"));
    if (causal)
        snprintf(buf + strlen(buf), n - strlen(buf), ", causal");
}

/* One matrix for a person: numbers when small or without colour, a
 * heatmap with labels on a colour terminal. */
static void show_matrix(const float *m, size_t rows, size_t cols, char **row_labels,
                        char **col_labels, const attn_cmap *cmap, int color, double vmin,
                        double vmax)
{
    int small = rows <= 12 && cols <= 12;
    if (color) {
        term_heatmap_opts o;
        memset(&o, 0, sizeof o);
        o.cmap = cmap;
        o.vmin = vmin;
        o.vmax = vmax;
        o.row_labels = (const char *const *)row_labels;
        o.col_labels = (const char *const *)col_labels;
        term_heatmap(stdout, m, rows, cols, &o);
    }
    if (!color || small) {
        if (col_labels && cols <= 12) {
            fputs(_("keys:"), stdout);
            for (size_t k = 0; k < cols; k++)
                printf(" %s", col_labels[k]);
            printf("\n");
        }
        term_matrix(stdout, m, rows, cols, 4, 3);
    }
}

static const char *inputs_text(const struct attention_args *a)
{
    if (a->input)
        return N_("from the file"); /* English in --json, _() where printed */
    if (a->po.tokens)
        return N_("token embeddings");
    return a->po.fill_random ? N_("standard normal") : N_("ones");
}

static void print_header(const problem *pr, const struct attention_args *a)
{
    const mha_params *m = &pr->params;
    char q[64], k[64], v[64], lens[256], p[40];
    tensor_shape_str(q, sizeof q, 3, (size_t[]){pr->B, pr->Nq, pr->Dq});
    tensor_shape_str(k, sizeof k, 3, (size_t[]){pr->B, pr->Nk, pr->Dk});
    tensor_shape_str(v, sizeof v, 3, (size_t[]){pr->B, pr->Nk, pr->Dv});
    lens_text(lens, sizeof lens, pr);
    py_float(p, sizeof p, a->dropout);
    printf(_("MultiHeadAttention, %s mode: num_hiddens %zu = %zu heads × %zu, %s scoring%s\n"),
           a->train ? "train" : "eval", m->num_hiddens, m->num_heads,
           m->num_hiddens / m->num_heads,
           m->score == SCORE_DOT ? _("scaled dot-product") : _("additive"),
           a->po.no_proj ? _(", identity projections (--no-proj)") : "");
    if (pr->self)
        printf(_("X %s%s, valid_lens %s; inputs: %s\n"), q, a->posenc ? _(" + positional encoding") : "",
               lens, _(inputs_text(a)));
    else
        printf(_("queries %s, keys %s, values %s, valid_lens %s; inputs: %s\n"), q, k, v, lens,
               _(inputs_text(a)));
    if (a->window && a->causal)
        printf(_("window R = %ld, causal: query i sees keys i - %ld … i\n"), a->window,
               a->window - 1);
    else if (a->window)
        printf(_("window R = %ld: query i sees keys j with |i - j| <= %ld\n"), a->window,
               (a->window - 1) / 2);
    printf(_("dropout p=%s %s\n"), p, a->train ? _("applied to the weights (--train)")
                                            : _("has no effect in eval mode"));
    printf("attention(%s, valid_lens).shape\n",
           pr->self ? "X, X, X" : "queries, keys, values");
    printf("torch.Size([%zu, %zu, %zu])\n", pr->B, pr->Nq, m->num_hiddens);
}

/* The length of example b's sentence: its valid_len, or every position. */
static size_t sentence_len(const problem *pr, size_t b)
{
    if (pr->valid_lens && pr->vl_ndim == 1 && (size_t)pr->valid_lens[b] < pr->Nq)
        return (size_t)pr->valid_lens[b];
    return pr->Nq;
}

/* A token that appears in the first sentence and in another: the same
 * input vector, but a different output, because its context differs. One
 * such pair: the token, where it stands in sentence 1 (position t) and in
 * sentence b + 1 (position u), and the cosine similarity of its inputs
 * and of its outputs. */
struct same_token {
    const char *word;
    size_t t, b, u;
    double input, output;
};

/* Pair number i (0, 1, …) of the tokens of sentence 1 found again in a
 * later sentence (the first occurrence in each), in the order of sentence
 * 1's positions, then of the sentences; 0 when there is no pair i. */
static int same_token_at(const problem *pr, const float *out, size_t i, struct same_token *st)
{
    const size_t H = pr->params.num_hiddens, D = pr->Dq;
    size_t found = 0;
    for (size_t t = 0; t < sentence_len(pr, 0); t++) {
        const char *word = pr->query_tokens[t];
        for (size_t b = 1; b < pr->B; b++)
            for (size_t u = 0; u < sentence_len(pr, b); u++) {
                if (strcmp(pr->query_tokens[b * pr->Nq + u], word) != 0)
                    continue;
                if (found++ == i) {
                    const size_t other = b * pr->Nq + u;
                    *st = (struct same_token){word, t, b, u,
                        mha_cosine(pr->queries.data + t * D, pr->queries.data + other * D, D),
                        mha_cosine(out + t * H, out + other * H, H)};
                    return 1;
                }
                break; /* the first occurrence in each sentence */
            }
    }
    return 0;
}

static void print_same_tokens(const problem *pr, const float *out)
{
    struct same_token st;
    for (size_t i = 0; same_token_at(pr, out, i, &st); i++) {
        if (i == 0)
            fputs(_("\nThe same token in different sentences (cosine similarity):\n"), stdout);
        printf(_("  %s: input %.4f (the same embedding), output %.4f "
               "(sentence 1 position %zu, sentence %zu position %zu)\n"),
               st.word, st.input, st.output, st.t, st.b + 1, st.u);
    }
}

/* --json's "same_tokens" (a sentence per example, several sentences):
 * [{"token", "sentence", "position", "other_sentence", "other_position",
 * "input_cosine", "output_cosine"}], sentences from 1 as printed. */
static void write_same_tokens(json_writer *jw, const problem *pr, const float *out)
{
    struct same_token st;
    if (!pr->per_example || pr->B < 2 || !pr->query_tokens)
        return;
    json_array_begin(jw, "same_tokens", JSON_BLOCK);
    for (size_t i = 0; same_token_at(pr, out, i, &st); i++) {
        json_object_begin(jw, NULL, JSON_INLINE);
        json_string(jw, "token", st.word);
        json_uint(jw, "sentence", 1);
        json_uint(jw, "position", st.t);
        json_uint(jw, "other_sentence", st.b + 1);
        json_uint(jw, "other_position", st.u);
        json_number(jw, "input_cosine", st.input);
        json_number(jw, "output_cosine", st.output);
        json_end(jw);
    }
    json_end(jw);
}

static void print_view(const problem *pr, const struct attention_args *a, const float *out,
                       const float *weights)
{
    const size_t H = pr->params.num_hiddens, NH = pr->params.num_heads;
    int color = term_use_color(a->color, stdout);
    size_t shown = 0;
    char mask[96];

    print_header(pr, a);
    if (!weights)
        printf(_("\nAttention weights (batch %zu, heads %zu, queries %zu, keys %zu): not stored "
               "(--stream: an online softmax over blocks of keys)\n"), pr->B, NH, pr->Nq, pr->Nk);
    else
        printf(_("\nAttention weights (batch %zu, heads %zu, queries %zu, keys %zu): softmax over "
               "keys\n"), pr->B, NH, pr->Nq, pr->Nk);
    for (size_t b = 0; weights && b < pr->B && shown < SHOW_PANELS; b++) {
        char **qt = pr->query_tokens, **kt = pr->key_tokens;
        if (pr->per_example) { /* one sentence per example */
            qt = pr->query_tokens + b * pr->Nq;
            kt = qt;
        }
        example_mask(mask, sizeof mask, pr, b, a->causal);
        for (size_t h = 0; h < NH && shown < SHOW_PANELS; h++, shown++) {
            printf(_("\nexample %zu%s, head %zu:\n"), b, mask, h + 1);
            show_matrix(weights + (b * NH + h) * pr->Nq * pr->Nk, pr->Nq, pr->Nk, qt, kt,
                        a->cmap, color, 0.0, 1.0);
        }
    }
    if (pr->B * NH > shown)
        printf(_("\n(%zu more heads not shown: see --png or --json)\n"), pr->B * NH - shown);
    printf(_("\nOutput (%zu, %zu, %zu), example 0:\n"), pr->B, pr->Nq, H);
    term_matrix(stdout, out, pr->Nq, H, 4, 3);
    if (pr->per_example && pr->B > 1)
        print_same_tokens(pr, out);
}

/* ---- --explain --------------------------------------------------------- */

/* Rows q of a (N, H) batch slice, columns col … col+p−1, as a (N, p) matrix. */
static void print_head_slice(const float *X, size_t N, size_t H, size_t col, size_t p,
                             float *tmp)
{
    for (size_t r = 0; r < N; r++)
        memcpy(tmp + r * p, X + r * H + col, p * sizeof(float));
    term_matrix(stdout, tmp, N, p, 4, 3);
}

static void print_explain(const problem *pr, const struct attention_args *a, const mha_trace *t,
                          const float *out, const float *weights, float *tmp)
{
    const mha_params *m = &pr->params;
    const size_t H = m->num_hiddens, NH = m->num_heads, p = H / NH, B = pr->B;
    const size_t Nq = pr->Nq, Nk = pr->Nk;
    char mask[96];

    print_header(pr, a);
    for (size_t b = 0; b < B; b++) {
        const size_t nn = Nq * Nk;
        example_mask(mask, sizeof mask, pr, b, a->causal);
        printf(_("\n=== example %zu%s ===\n"), b, mask);
        printf(_("\nStep 1. Project: Q = queries·W_qᵀ%s  (%zu, %zu)\n"), m->W_q.bias.data ? " + b_q" : "",
               Nq, H);
        term_matrix(stdout, t->Q + b * Nq * H, Nq, H, 4, 3);
        printf(_("K = keys·W_kᵀ%s  (%zu, %zu)\n"), m->W_k.bias.data ? " + b_k" : "", Nk, H);
        term_matrix(stdout, t->K + b * Nk * H, Nk, H, 4, 3);
        printf(_("V = values·W_vᵀ%s  (%zu, %zu)\n"), m->W_v.bias.data ? " + b_v" : "", Nk, H);
        term_matrix(stdout, t->V + b * Nk * H, Nk, H, 4, 3);
        for (size_t h = 0; h < NH; h++) {
            const size_t w0 = (b * NH + h) * nn, col = h * p;
            printf(_("\n--- head %zu: columns %zu … %zu of Q, K, V (p = %zu / %zu = %zu) ---\n"),
                   h + 1, col, col + p - 1, H, NH, p);
            printf(_("\nStep 2. Split into heads: Q_%zu  (%zu, %zu)\n"), h + 1, Nq, p);
            print_head_slice(t->Q + b * Nq * H, Nq, H, col, p, tmp);
            printf(_("K_%zu  (%zu, %zu)\n"), h + 1, Nk, p);
            print_head_slice(t->K + b * Nk * H, Nk, H, col, p, tmp);
            printf(_("V_%zu  (%zu, %zu)\n"), h + 1, Nk, p);
            print_head_slice(t->V + b * Nk * H, Nk, H, col, p, tmp);
            if (m->score == SCORE_DOT) {
                printf(_("\nStep 3. Scores: Q_%zu K_%zuᵀ  (%zu, %zu)\n"), h + 1, h + 1, Nq, Nk);
                term_matrix(stdout, t->scores + w0, Nq, Nk, 4, 3);
                printf(_("\nStep 4. Scaled: Q_%zu K_%zuᵀ / sqrt(%zu) = / %.4f  (%zu, %zu)\n"), h + 1,
                       h + 1, p, sqrt((double)p), Nq, Nk);
                term_matrix(stdout, t->scaled + w0, Nq, Nk, 4, 3);
            } else {
                printf(_("\nStep 3-4. Additive scores: w_v · tanh(W_q' q + W_k' k)  (%zu, %zu)\n"),
                       Nq, Nk);
                term_matrix(stdout, t->scores + w0, Nq, Nk, 4, 3);
            }
            printf(_("\nStep 5. Masked: keys %s get -1e6  (%zu, %zu)\n"),
                   pr->valid_lens ? (a->causal ? _("at k >= valid_len or k > q") : _("at k >= valid_len"))
                                  : (a->causal ? _("at k > q") : _("(none masked)")),
                   Nq, Nk);
            term_matrix(stdout, t->masked + w0, Nq, Nk, 4, 3);
            printf(_("\nStep 6. Attention weights: softmax over keys, each row sums to 1  (%zu, %zu)\n"),
                   Nq, Nk);
            term_matrix(stdout, weights + w0, Nq, Nk, 4, 3);
            printf(_("\nStep 7. Head output: weights · V_%zu  (%zu, %zu)%s\n"), h + 1, Nq, p,
                   a->train ? _(" (with dropout on the weights)") : "");
            print_head_slice(t->concat + b * Nq * H, Nq, H, col, p, tmp);
        }
        printf(_("\nStep 8. Concatenate the heads: concat(head_1 … head_%zu)  (%zu, %zu)\n"), NH, Nq,
               H);
        term_matrix(stdout, t->concat + b * Nq * H, Nq, H, 4, 3);
        printf(_("\nStep 9. Output: concat · W_oᵀ%s  (%zu, %zu)\n"), m->W_o.bias.data ? " + b_o" : "",
               Nq, H);
        term_matrix(stdout, out + b * Nq * H, Nq, H, 4, 3);
    }
}

/* One query's online softmax (mha_online_row), block by block. */
static void print_online_row(const mha_online *r, size_t Nk, double diff)
{
    for (size_t j = 0; j < r->nblocks; j++) {
        const size_t k0 = j * r->block, n = k0 + r->block < Nk ? r->block : Nk - k0;
        printf(_("  keys %zu-%zu: scores ["), k0, k0 + n - 1);
        for (size_t k = k0; k < k0 + n; k++)
            printf(k > k0 ? ", %.4g" : "%.4g", r->scores[k]);
        printf(_("]  block max %.4g  m %.4g -> %.4g  rescale e^(m_old - m) = %.4g  "
               "l = %.4g·%.4g + %.4g = %.4g\n"),
               r->block_max[j], r->m[j], r->m[j + 1], r->rescale[j], r->l[j], r->rescale[j],
               r->block_sum[j], r->l[j + 1]);
    }
    fputs(_("  head output acc / l = ["), stdout);
    for (size_t c = 0; c < r->p && c < 8; c++)
        printf(c ? ", %.4f" : "%.4f", r->out[c]);
    printf(_("%s]; softmax(all scores)·V differs by %.2g\n"), r->p > 8 ? ", …" : "", diff);
}

/* --stream --explain: the online softmax of every query, block by block
 * (mha_online_row in attention.c), each head output against the stored
 * weights · V. */
static void print_stream_explain(const problem *pr, const struct attention_args *a,
                                 const mha_trace *t, const float *out, const float *weights)
{
    const size_t H = pr->params.num_hiddens, NH = pr->params.num_heads, p = H / NH;
    const size_t Nq = pr->Nq, Nk = pr->Nk, blk = a->block ? (size_t)a->block : 2;
    const mha_masks mask = {pr->valid_lens, pr->vl_ndim == 2, a->causal, 0};
    double worst = 0.0;
    mha_online rec;

    if (mha_online_alloc(&rec, Nk, p, blk)) {
        cli_error("out of memory for --explain");
        return;
    }
    print_header(pr, a);
    printf(_("\nOnline softmax (--stream): keys in blocks of %zu; m = running maximum, "
           "l = running sum of e^(s - m), acc = running sum of e^(s - m)·v\n"), blk);
    for (size_t b = 0; b < pr->B; b++)
        for (size_t h = 0; h < NH; h++)
            for (size_t q = 0; q < Nq; q++) {
                const float *q_h = t->Q + (b * Nq + q) * H + h * p;      /* (p,) */
                const float *K_h = t->K + b * Nk * H + h * p;            /* (Nk, p), rows H apart */
                const float *V_h = t->V + b * Nk * H + h * p;            /* (Nk, p), rows H apart */
                const float *w = weights + ((b * NH + h) * Nq + q) * Nk; /* (Nk,) */
                printf(_("\nexample %zu, head %zu, query %zu:\n"), b, h + 1, q);
                mha_online_row(&rec, q_h, K_h, V_h, H, Nk, &mask, b, q, Nq);
                double diff = mha_online_diff(&rec, w, V_h, H, Nk);
                print_online_row(&rec, Nk, diff);
                worst = diff > worst ? diff : worst;
            }
    printf(_("\nLargest difference between the streamed and the stored computation: %.2g\n"),
           worst);
    printf(_("Output (%zu, %zu, %zu), example 0:\n"), pr->B, Nq, H);
    term_matrix(stdout, out, Nq, H, 4, 3);
    mha_online_free(&rec);
}

/* ---- files ----------------------------------------------------------- */

struct json_ctx {
    const problem *pr;
    const char *command;
    const float *out, *weights;
    const mha_trace *trace; /* --explain: the "explain" member from it; else NULL */
    int causal;
    const explain_buffers *eb; /* with trace: the member's scratch */
};

/* The document's members, and with --explain every cell's path. */
static void write_json_members(json_writer *jw, const void *arg)
{
    const struct json_ctx *c = arg;
    problem_write_members(jw, c->pr, c->command, c->out, c->weights);
    write_same_tokens(jw, c->pr, c->out);
    if (c->trace)
        explain_json_member(jw, c->pr, c->trace, c->causal, c->eb);
}

static int write_json(FILE *f, const void *arg)
{
    return json_document(f, 0, write_json_members, arg);
}

/* A row of the grid, a panel per head: NH matrices (rows, cols) one after
 * the other from w, titled "Head h". */
static void head_panels(heat_panel *pn, char (*titles)[32], const float *w, size_t NH,
                        size_t rows, size_t cols)
{
    for (size_t h = 0; h < NH; h++) {
        snprintf(titles[h], sizeof titles[0], _("Head %zu"), h + 1);
        pn[h].data = w + h * rows * cols;
        pn[h].rows = rows;
        pn[h].cols = cols;
        pn[h].title = titles[h];
    }
}

/* --png's figure of attention weights: panels in rows × NH (a column per
 * head), keys across, queries down, in --cmap, each panel on its own scale,
 * in font (NULL: the default one); fig's tick labels and row titles are
 * the caller's. */
static int weights_png(heat_figure *fig, const heat_panel *panels, size_t rows, size_t NH,
                       const struct attention_args *a, text_font *font, FILE *rep, const char *what)
{
    fig->panels = panels;
    fig->grid_rows = rows;
    fig->grid_cols = NH;
    fig->xlabel = "Key positions";
    fig->ylabel = "Query positions";
    fig->cmap = a->cmap;
    fig->vmin = NAN;
    fig->vmax = NAN;
    fig->font = font;
    return output_heatmap(a->png, fig, rep, what);
}

/* The weights as a grid of heatmaps, in font (NULL: the default one);
 * token labels no font can draw give numbered positions and a note. */
static int write_png(const problem *pr, const struct attention_args *a, const float *weights,
                     text_font *font, FILE *rep)
{
    const size_t NH = pr->params.num_heads, n = pr->B * NH;
    heat_panel *panels = calloc(n, sizeof *panels);
    char (*titles)[32] = calloc(n, sizeof *titles);
    const char *const **rows = NULL; /* (B,): example b's tokens (Nq,) */
    heat_figure fig;
    char what[128];
    int status = EXIT_RUNTIME;

    if (!panels || !titles) {
        cli_error("%s: out of memory", a->png);
        goto done;
    }
    for (size_t b = 0; b < pr->B; b++)
        head_panels(&panels[b * NH], &titles[b * NH], weights + b * NH * pr->Nq * pr->Nk, NH,
                    pr->Nq, pr->Nk);
    memset(&fig, 0, sizeof fig);
    /* token labels: shared by all panels (one sentence, or cross-attention),
     * or a sentence per example, labelling its row of panels (self-attention:
     * the keys are the queries) */
    if (!pr->per_example) {
        fig.xticklabels = (const char *const *)pr->key_tokens;
        fig.yticklabels = (const char *const *)pr->query_tokens;
    } else if (pr->query_tokens) {
        rows = calloc(pr->B, sizeof *rows);
        if (!rows) {
            cli_error("%s: out of memory", a->png);
            goto done;
        }
        for (size_t b = 0; b < pr->B; b++)
            rows[b] = (const char *const *)pr->query_tokens + b * pr->Nq;
        fig.row_xticklabels = rows;
        fig.row_yticklabels = rows;
    }
    char ex[48], hd[48];
    snprintf(what, sizeof what, _("attention weights, %s × %s"),
             cli_count(ex, sizeof ex, "%zu example", "%zu examples", pr->B),
             cli_count(hd, sizeof hd, "%zu head", "%zu heads", NH));
    status = weights_png(&fig, panels, pr->B, NH, a, font, rep, what);
done:
    free(panels);
    free(titles);
    free(rows);
    return status;
}

/* --html: the --json members, then "page": the grid as --png lays it out
 * (rows = examples, columns = heads), each row's tokens and valid length,
 * the colour map (page_out.h, the page's scripts in src/render/page/). */
struct page_ctx {
    const problem *pr;
    const struct attention_args *a;
    const char *command;
    const float *out, *weights;
};

/* The "page" member alone (a large page's preview carries it too). */
static void write_page_member(json_writer *jw, const void *arg)
{
    const struct page_ctx *c = arg;
    const problem *pr = c->pr;
    const size_t Nq = pr->Nq, Nk = pr->Nk;
    const char *const *qt = (const char *const *)pr->query_tokens;
    const char *const *kt = (const char *const *)(pr->key_tokens ? pr->key_tokens
                                                  : pr->self ? pr->query_tokens : NULL);
    char title[64];
    json_object_begin(jw, "page", JSON_BLOCK);
    snprintf(title, sizeof title, "attn %s", c->command);
    page_head(jw, "attention", title, c->a->argc, c->a->argv, c->a->cmap);
    json_string(jw, "weights", "attention_weights");
    json_bool(jw, "causal", c->a->causal);
    json_string(jw, "xlabel", "Key positions");
    json_string(jw, "ylabel", "Query positions");
    json_array_begin(jw, "rows", JSON_BLOCK);
    for (size_t b = 0; b < pr->B; b++) {
        char name[48];
        snprintf(name, sizeof name, _("example %zu"), b);
        json_object_begin(jw, NULL, JSON_INLINE);
        json_string(jw, "name", name);
        page_tokens(jw, "query_tokens", qt && pr->per_example ? qt + b * Nq : qt, Nq);
        page_tokens(jw, "key_tokens", kt && pr->per_example ? kt + b * Nk : kt, Nk);
        if (!pr->valid_lens) {
            json_null(jw, "valid_lens");
        } else if (pr->vl_ndim == 2) {
            json_array_begin(jw, "valid_lens", JSON_INLINE);
            for (size_t q = 0; q < Nq; q++)
                json_int(jw, NULL, pr->valid_lens[b * Nq + q]);
            json_end(jw);
        } else {
            json_int(jw, "valid_lens", pr->valid_lens[b]);
        }
        json_end(jw);
    }
    json_end(jw);
    json_end(jw);
}

static void write_page_data(json_writer *jw, const void *arg)
{
    const struct page_ctx *c = arg;
    problem_write_members(jw, c->pr, c->command, c->out, c->weights);
    write_same_tokens(jw, c->pr, c->out);
    write_page_member(jw, arg);
}

static int write_page(const problem *pr, const struct attention_args *a, const char *command,
                      const float *out, const float *weights, FILE *rep)
{
    const struct page_ctx ctx = {pr, a, command, out, weights};
    const size_t shape[4] = {pr->B, pr->params.num_heads, pr->Nq, pr->Nk}; /* the weights' */
    const page_weights pw = {weights, 4, shape, write_page_member};
    char what[128], title[64];
    snprintf(title, sizeof title, "attn %s", command);
    char ex[48], hd[48];
    snprintf(what, sizeof what, _("a page of the attention weights, %s × %s"),
             cli_count(ex, sizeof ex, "%zu example", "%zu examples", pr->B),
             cli_count(hd, sizeof hd, "%zu head", "%zu heads", pr->params.num_heads));
    return output_page_weights(a->html, title, write_page_data, &ctx, weights ? &pw : NULL, rep,
                               what);
}

/* ---- the command ----------------------------------------------------- */

/* --scale-sweep: why divide by √d (attention_demos.c), q and k of its own. */
static int run_scale_sweep(const struct attention_args *a)
{
    const demo_sweep_opts so = {.d_from = (size_t)a->dims_from,
                                .d_to = (size_t)a->dims_to,
                                .samples = (size_t)a->samples,
                                .keys = (size_t)a->po.kv,
                                .seed = a->po.seed,
                                .png = a->png,
                                .json = a->json,
                                .html = a->html,
                                .font = a->font,
                                .max_mem = a->po.max_mem,
                                .argc = a->argc,
                                .argv = a->argv};
    return demo_sweep_command(&so);
}

/* --permute: order blindness (attention_demos.c), which adds P after
 * permuting. */
static int run_permute(const problem *pr, const struct attention_args *a)
{
    const demo_permute_opts dpo = {.permutation = a->permutation,
                                   .seed = a->po.seed,
                                   .posenc = a->posenc,
                                   .naive = a->naive,
                                   .inputs = inputs_text(a),
                                   .fill_default = a->fill_default,
                                   .lens_origin = a->po.valid_lens ? _("from --valid-lens")
                                                  : a->input
                                                      ? _("from the file's valid_lens")
                                                      : _("the length of a shorter --tokens sentence"),
                                   .png = a->png,
                                   .json = a->json,
                                   .html = a->html,
                                   .cmap = a->cmap,
                                   .font = a->font,
                                   .max_mem = a->po.max_mem,
                                   .argc = a->argc,
                                   .argv = a->argv};
    cores_set_threads((int)a->threads);
    return demo_permute_command(pr, &dpo);
}

/* --depth: the same layer again and again (depth.c). */
static int run_depth(const problem *pr, const struct attention_args *a)
{
    const depth_opts o = {.depth = (size_t)a->depth,
                          .causal = a->causal,
                          .posenc = a->posenc,
                          .inputs = inputs_text(a),
                          .plot = a->plot,
                          .json = a->json,
                          .font = a->font,
                          .max_mem = a->po.max_mem};
    if (a->plot && output_check_files((const char *const[]){a->plot},
                                      (const char *const[]){"plot"}, 1) != EXIT_OK)
        return EXIT_RUNTIME;
    return depth_command(pr, &o);
}

/* --explain-shapes: the heads' layout (explain_shapes.c), dot scoring only. */
static int run_explain_shapes(const problem *pr, const struct attention_args *a)
{
    const shapes_opts so = {a->causal, a->json, a->po.max_mem};
    if (pr->params.score != SCORE_DOT) {
        cli_error("%s holds additive scoring weights; --explain-shapes follows d2l's "
                  "DotProductAttention", a->input);
        return EXIT_USAGE;
    }
    return shapes_explain_command(pr, &so);
}

/* The inputs and weights: a model saved by attn train (selfattn, run on
 * the sentences of --tokens), --input's, or drawn. 0 or an exit status. */
static int load_problem(problem *pr, const struct attention_args *a, int self)
{
    char err[768];
    int usage, failed;
    if (a->input && self && model_input_is_model(a->input, a->po.max_mem / 8)) {
        failed = model_input_load(pr, a->input, a->po.tokens, err, sizeof err, &usage);
    } else if (a->input && a->po.tokens) {
        cli_error("--tokens makes random inputs and cannot be used with --input (except "
                  "a model saved by attn train)");
        return EXIT_USAGE;
    } else {
        failed = a->input ? problem_load(pr, a->input, &a->po, err, sizeof err, &usage)
                          : problem_random(pr, &a->po, err, sizeof err, &usage);
    }
    if (failed) {
        cli_error("%s", err);
        return usage ? EXIT_USAGE : EXIT_RUNTIME;
    }
    return EXIT_OK;
}

/* The memory of the run, refused up front. 0 or an exit status. */
static int check_run_mem(const problem *pr, const struct attention_args *a, int keep_weights)
{
    size_t bytes, total;
    char what[256];
    if (problem_run_bytes(pr, keep_weights, a->explain, &bytes) ||
        size_add(bytes, pr->queries.size * 4, &total) ||
        (a->explain && a->json && size_add(total, explain_json_bytes(pr), &total)))
        total = SIZE_MAX;
    snprintf(what, sizeof what, _("batch %zu × %zu heads × %zu queries × %zu keys"), pr->B,
             pr->params.num_heads, pr->Nq, pr->Nk);
    if (cli_check_mem(what, total, total == SIZE_MAX, a->po.max_mem,
                      keep_weights && pr->params.score == SCORE_DOT && !a->explain
                          ? _("--stream computes without storing the attention weights")
                          : NULL))
        return EXIT_RUNTIME;
    return EXIT_OK;
}

/* The run's tensors: the output, the weights unless streaming, and with
 * --explain every intermediate (mha_trace) and a (max(Nq, Nk), H) scratch
 * for printing head slices. */
struct run_buffers {
    tensor out;     /* (B, Nq, H) */
    tensor weights; /* (B, NH, Nq, Nk), or none */
    tensor tr[7];   /* --explain: Q, K, V, scores, scaled, masked, concat */
    float *tmp;
    mha_trace trace;
};

static void run_buffers_free(struct run_buffers *rb)
{
    tensor_free(&rb->out);
    tensor_free(&rb->weights);
    for (size_t i = 0; i < 7; i++)
        tensor_free(&rb->tr[i]);
    free(rb->tmp);
}

/* 0, or -1 after printing the error. */
static int run_buffers_alloc(struct run_buffers *rb, const problem *pr, int keep_weights,
                             int explain)
{
    const size_t H = pr->params.num_hiddens, NH = pr->params.num_heads;
    size_t oshape[3] = {pr->B, pr->Nq, H}, wshape[4] = {pr->B, NH, pr->Nq, pr->Nk};
    size_t ks[3] = {pr->B, pr->Nk, H};
    float **slot[7] = {&rb->trace.Q,      &rb->trace.K,      &rb->trace.V,     &rb->trace.scores,
                       &rb->trace.scaled, &rb->trace.masked, &rb->trace.concat};
    char err[768];
    memset(rb, 0, sizeof *rb);
    if (tensor_alloc(&rb->out, 3, oshape, err, sizeof err) ||
        (keep_weights && tensor_alloc(&rb->weights, 4, wshape, err, sizeof err))) {
        cli_error("%s", err);
        return -1;
    }
    for (size_t i = 0; explain && i < 7; i++) {
        if (i == 1 || i == 2 ? tensor_alloc(&rb->tr[i], 3, ks, err, sizeof err)
            : i < 6 && i > 2 ? tensor_alloc(&rb->tr[i], 4, wshape, err, sizeof err)
                             : tensor_alloc(&rb->tr[i], 3, oshape, err, sizeof err)) {
            cli_error("%s", err);
            return -1;
        }
        *slot[i] = rb->tr[i].data;
    }
    if (explain &&
        (rb->tmp = float_alloc((pr->Nq > pr->Nk ? pr->Nq : pr->Nk) * H)) == NULL) {
        cli_error("out of memory for --explain");
        return -1;
    }
    return 0;
}

/* The forward pass, --repeat times (the first one only with --time
 * --repeat N > 1 is a warm-up: threads started, memory touched); with
 * --time, the median of the runs after it on stderr. 0 or an exit status. */
static int forward_timed(struct run_buffers *rb, const problem *pr, const struct attention_args *a,
                         int use_fast, int keep_weights)
{
    const mha_masks mask = {pr->valid_lens, pr->vl_ndim == 2, a->causal, (size_t)a->window};
    const mha_dropout drop = {a->train ? a->dropout : 0.0, a->po.seed ^ 0xd50d50d50dULL};
    const float *K = problem_keys(pr), *V = problem_values(pr);
    double times[100];
    char err[768];
    for (size_t rep_i = 0; rep_i < (size_t)a->repeat; rep_i++) {
        double t0 = now_seconds();
        if (use_fast
                ? mha_forward_fast(rb->out.data, rb->weights.data, pr->queries.data, K, V, pr->B,
                                   pr->Nq, pr->Nk, &pr->params, &mask, &drop, err, sizeof err)
                : mha_forward(rb->out.data, rb->weights.data, a->explain ? &rb->trace : NULL,
                              pr->queries.data, K, V, pr->B, pr->Nq, pr->Nk, &pr->params, &mask,
                              &drop, err, sizeof err)) {
            cli_error("%s", err);
            return EXIT_RUNTIME;
        }
        times[rep_i] = now_seconds() - t0;
    }
    if (a->time) {
        const size_t first = a->repeat > 1 ? 1 : 0, n = (size_t)a->repeat - first;
        const int threads =
            use_fast ? mha_fast_threads(pr->B, pr->Nq, pr->Nk, pr->params.num_hiddens) : 1;
        const double secs = median_sort(times + first, n);
        const double flops = 2.0 * mha_forward_macs(pr->B, pr->Nq, pr->Nk, pr->Dq, pr->Dk, pr->Dv,
                                                    pr->params.num_hiddens);
        char th[48];
        fprintf(stderr, _("forward pass: %.1f ms, %.3g GFLOP, %.1f GFLOP/s (%s, %s%s)\n"),
                secs * 1e3, flops * 1e-9, flops * 1e-9 / (secs > 0 ? secs : 1e-9),
                use_fast ? (keep_weights ? _("fast loops") : _("fast loops, streaming"))
                         : _("reference loops"),
                cli_count(th, sizeof th, "%zu thread", "%zu threads", (size_t)threads),
                n > 1 ? _(", median of the runs after a warm-up") : "");
    }
    return EXIT_OK;
}

/* The results: for a person (unless the JSON is what is asked for), then
 * the files written, each named. */
static int write_results(const problem *pr, const struct attention_args *a, struct run_buffers *rb,
                         const char *command, text_font *font)
{
    const float *out = rb->out.data, *weights = rb->weights.data;
    FILE *rep = output_report_stream(a->json);
    int status = EXIT_OK;
    /* --explain's text on stdout, unless stdout is the JSON (--json -):
     * then the JSON's "explain" member holds its numbers alone */
    if (a->explain && rep == stdout && a->stream)
        print_stream_explain(pr, a, &rb->trace, out, weights);
    else if (a->explain && rep == stdout)
        print_explain(pr, a, &rb->trace, out, weights, rb->tmp);
    else if (!a->json)
        print_view(pr, a, out, weights);
    if (a->json) {
        explain_buffers eb;
        struct json_ctx ctx = {pr, command, out, weights, a->explain ? &rb->trace : NULL,
                               a->causal, &eb};
        if (a->explain && explain_json_alloc(&eb, pr)) {
            cli_error("out of memory for --explain --json's explain member");
            return EXIT_RUNTIME;
        }
        status =
            output_json(a->json, write_json, &ctx, rep, "output and attention weights as JSON");
        if (a->explain)
            explain_json_free(&eb);
        if (status != EXIT_OK)
            return status;
    }
    if (a->png) {
        if (!a->json && !a->explain)
            fputc('\n', rep);
        status = write_png(pr, a, weights, font, rep);
    }
    if (status == EXIT_OK && a->html) {
        if (!a->png && !a->json && !a->explain)
            fputc('\n', rep);
        status = write_page(pr, a, command, out, weights, rep);
    }
    return status;
}

/* ---- a stack saved by attn train: every block's heads ------------------ */

/* For a person: each block's heads (rows = blocks), up to SHOW_PANELS. */
static void print_stack(const problem *pr, const struct attention_args *a)
{
    const size_t NH = pr->params.num_heads, N = pr->Nq, L = pr->layers;
    const size_t per = pr->B * NH * N * N;
    int color = term_use_color(a->color, stdout);
    size_t shown = 0;
    printf(_("A stack of %zu Transformer encoder blocks (attn train --layers), num_hiddens %zu, "
           "num_heads %zu\n"), L, pr->params.num_hiddens, NH);
    printf(_("\nAttention weights (blocks %zu, batch %zu, heads %zu, queries %zu, keys %zu): "
           "softmax over keys\n"), L, pr->B, NH, N, N);
    for (size_t l = 0; l < L; l++)
        for (size_t b = 0; b < pr->B; b++) {
            char **qt = pr->query_tokens + (pr->per_example ? b * N : 0);
            for (size_t h = 0; h < NH && shown < SHOW_PANELS; h++, shown++) {
                printf(_("\nblock %zu, example %zu, head %zu:\n"), l + 1, b, h + 1);
                show_matrix(pr->stack_weights + l * per + (b * NH + h) * N * N, N, N, qt, qt,
                            a->cmap, color, 0.0, 1.0);
            }
        }
    if (L * pr->B * NH > shown)
        printf(_("\n(%zu more heads not shown: see --png or --json)\n"), L * pr->B * NH - shown);
    printf(_("\nOutput of the last block (%zu, %zu, %zu), example 0:\n"), pr->B, N,
           pr->params.num_hiddens);
    term_matrix(stdout, pr->stack_output, N, pr->params.num_hiddens, 4, 3);
}

/* --json: the last block's output and every block's weights. */
/* --json's members for a stack (its page writes the same). */
static void write_stack_members(json_writer *jw, const void *arg)
{
    const problem *pr = arg;
    size_t oshape[3] = {pr->B, pr->Nq, pr->params.num_hiddens};
    size_t wshape[5] = {pr->layers, pr->B, pr->params.num_heads, pr->Nq, pr->Nq};
    json_string(jw, "command", "selfattn");
    json_uint(jw, "num_layers", pr->layers);
    json_array_begin(jw, "shape", JSON_INLINE);
    for (size_t i = 0; i < 3; i++)
        json_uint(jw, NULL, oshape[i]);
    json_end(jw);
    json_tensor(jw, "output", pr->stack_output, 3, oshape);
    if (jw->base64_from) /* a page: the weights it draws, whole */
        json_tensor_base64(jw, "attention_weights", pr->stack_weights, 5, wshape);
    else
        json_tensor(jw, "attention_weights", pr->stack_weights, 5, wshape);
    json_array_begin(jw, "tokens", JSON_INLINE);
    for (size_t i = 0; i < pr->B * pr->Nq; i++)
        json_string(jw, NULL, pr->query_tokens[i]);
    json_end(jw);
}

static int write_stack_json(FILE *f, const void *arg)
{
    return json_document(f, 0, write_stack_members, arg);
}

/* --html for a stack: the grid's rows are the blocks (× examples), as
 * attention_weights (L, B, NH, N, N) is laid out. */
static void write_stack_page_data(json_writer *jw, const void *arg)
{
    const struct page_ctx *c = arg;
    const problem *pr = c->pr;
    const size_t N = pr->Nq;
    write_stack_members(jw, pr);
    json_object_begin(jw, "page", JSON_BLOCK);
    page_head(jw, "attention", "attn selfattn", c->a->argc, c->a->argv, c->a->cmap);
    json_string(jw, "weights", "attention_weights");
    json_bool(jw, "causal", pr->stack_causal);
    json_string(jw, "xlabel", "Key positions");
    json_string(jw, "ylabel", "Query positions");
    json_array_begin(jw, "rows", JSON_BLOCK);
    for (size_t l = 0; l < pr->layers; l++)
        for (size_t b = 0; b < pr->B; b++) {
            char name[64];
            const char *const *qt = (const char *const *)pr->query_tokens + b * N;
            if (pr->B == 1)
                snprintf(name, sizeof name, _("layer %zu"), l + 1);
            else
                snprintf(name, sizeof name, _("layer %zu example %zu"), l + 1, b);
            json_object_begin(jw, NULL, JSON_INLINE);
            json_string(jw, "name", name);
            page_tokens(jw, "query_tokens", qt, N);
            page_tokens(jw, "key_tokens", qt, N);
            if (pr->valid_lens && pr->vl_ndim == 1)
                json_int(jw, "valid_lens", pr->valid_lens[b]);
            else
                json_null(jw, "valid_lens");
            json_end(jw);
        }
    json_end(jw);
    json_end(jw);
}

static int write_stack_page(const problem *pr, const struct attention_args *a, FILE *rep)
{
    const struct page_ctx ctx = {pr, a, "selfattn", NULL, NULL};
    char what[128];
    char bl[48], hd[48];
    snprintf(what, sizeof what, _("a page of every block's attention, %s × %s"),
             cli_count(bl, sizeof bl, "%zu block", "%zu blocks", pr->layers),
             cli_count(hd, sizeof hd, "%zu head", "%zu heads", pr->params.num_heads));
    return output_page(a->html, "attn selfattn", write_stack_page_data, &ctx, rep, what);
}

/* --png: rows = blocks (× examples), columns = heads. */
static int write_stack_png(const problem *pr, const struct attention_args *a, text_font *font,
                           FILE *rep)
{
    const size_t NH = pr->params.num_heads, N = pr->Nq, rowsn = pr->layers * pr->B;
    heat_panel *panels = calloc(rowsn * NH, sizeof *panels);
    char (*titles)[32] = calloc(rowsn * NH, sizeof *titles);
    char (*rtitles)[64] = calloc(rowsn, sizeof *rtitles);
    const char **rt = calloc(rowsn, sizeof *rt);
    const char *const **rows = calloc(rowsn, sizeof *rows);
    heat_figure fig;
    char what[128];
    int status = EXIT_RUNTIME;
    if (!panels || !titles || !rtitles || !rt || !rows) {
        cli_error("%s: out of memory", a->png);
        goto done;
    }
    for (size_t r = 0; r < rowsn; r++) {
        const size_t l = r / pr->B, b = r % pr->B;
        if (pr->B > 1)
            snprintf(rtitles[r], sizeof rtitles[0], _("block %zu · example %zu"), l + 1, b);
        else
            snprintf(rtitles[r], sizeof rtitles[0], _("block %zu"), l + 1);
        rt[r] = rtitles[r];
        rows[r] = (const char *const *)pr->query_tokens + (pr->per_example ? b * N : 0);
        head_panels(&panels[r * NH], &titles[r * NH],
                    pr->stack_weights + (l * pr->B + b) * NH * N * N, NH, N, N);
    }
    memset(&fig, 0, sizeof fig);
    fig.row_titles = rt;
    fig.row_xticklabels = rows;
    fig.row_yticklabels = rows;
    char bl[48], hd[48];
    snprintf(what, sizeof what, _("attention weights, %s × %s"),
             cli_count(bl, sizeof bl, "%zu block", "%zu blocks", pr->layers),
             cli_count(hd, sizeof hd, "%zu head", "%zu heads", NH));
    status = weights_png(&fig, panels, rowsn, NH, a, font, rep, what);
done:
    free(panels);
    free(titles);
    free(rtitles);
    free(rt);
    free(rows);
    return status;
}

/* The stack's results, as write_results gives a single layer's. */
static int write_stack_results(const problem *pr, const struct attention_args *a, text_font *font)
{
    FILE *rep = output_report_stream(a->json);
    int status = EXIT_OK;
    if (!a->json)
        print_stack(pr, a);
    if (a->json &&
        (status = output_json(a->json, write_stack_json, pr, rep,
                              "every block's attention weights as JSON")) != EXIT_OK)
        return status;
    if (a->png) {
        if (!a->json)
            fputc('\n', rep);
        status = write_stack_png(pr, a, font, rep);
    }
    if (status == EXIT_OK && a->html) {
        if (!a->json && !a->png)
            fputc('\n', rep);
        status = write_stack_page(pr, a, rep);
    }
    return status;
}

/* A stack of attn train, run at load time block by block: its results;
 * the options of one attention layer refused. */
static int run_stack(const problem *pr, const struct attention_args *a)
{
    text_font *font = NULL; /* --font's, for the figure */
    int status;
    if (a->window) {
        cli_error("%s is a stack of %zu blocks: --window is for one attention layer",
                  a->input, pr->layers);
        return EXIT_USAGE;
    }
    if (a->explain || a->stream || a->describe || a->permute || a->posenc || a->time ||
        a->depth) {
        cli_error("%s is a stack of %zu blocks: --explain, --stream, --describe, "
                  "--permute, --posenc, --depth and --time are for one attention layer",
                  a->input, pr->layers);
        return EXIT_USAGE;
    }
    status = output_font_open(a->font, &font);
    if (status == EXIT_OK)
        status = write_stack_results(pr, a, font);
    output_font_close(font);
    return status;
}

static int run(int argc, char **argv, int self)
{
    struct attention_args a;
    struct run_buffers rb;
    problem pr;
    text_font *font = NULL; /* --font's, for the figure */
    int help;

    int status = parse_args(argc, argv, self, &a, &help);
    if (status != EXIT_OK)
        return status;
    if (help) {
        (self ? usage_selfattn : usage_multihead)(stdout);
        return EXIT_OK;
    }
    if (a.scale_sweep)
        return run_scale_sweep(&a);
    if ((status = output_page_check(a.html)) != EXIT_OK) /* before any work */
        return status;
    status = load_problem(&pr, &a, self);
    if (status != EXIT_OK)
        return status;
    if (pr.layers || a.explain_shapes) { /* a stack of attn train; the heads' layout */
        status = pr.layers ? run_stack(&pr, &a) : run_explain_shapes(&pr, &a);
        problem_free(&pr);
        return status;
    }
    if (a.describe || a.permute) {
        if (a.describe) {
            selfattn_describe(stdout, &pr.params, a.dropout);
            fputc('\n', stdout);
        }
        status = a.describe ? EXIT_OK : run_permute(&pr, &a);
        problem_free(&pr);
        return status;
    }
    if (a.posenc && posenc_add(pr.queries.data, pr.B, pr.Nq, pr.Dq)) { /* X + P */
        cli_error("out of memory for the positional encoding");
        status = EXIT_RUNTIME;
    }
    if (status != EXIT_OK || a.depth) { /* --depth runs on X + P */
        status = status == EXIT_OK ? run_depth(&pr, &a) : status;
        problem_free(&pr);
        return status;
    }

    /* which loops: the reference ones for --explain, --naive and additive
     * scoring, else the fast ones; the weights are stored unless --stream */
    int use_fast = !a.explain && !a.naive && pr.params.score == SCORE_DOT;
    int keep_weights = !a.stream || a.explain; /* --stream --explain compares with them */
    cores_set_threads((int)a.threads);
    /* memory, then --font, checked before the run */
    if (check_run_mem(&pr, &a, keep_weights) != EXIT_OK ||
        output_font_open(a.font, &font) != EXIT_OK) {
        problem_free(&pr);
        return EXIT_RUNTIME;
    }

    /* the run, then the results */
    status = EXIT_RUNTIME;
    if (run_buffers_alloc(&rb, &pr, keep_weights, a.explain) == 0)
        status = forward_timed(&rb, &pr, &a, use_fast, keep_weights);
    if (status == EXIT_OK)
        status = write_results(&pr, &a, &rb, self ? "selfattn" : "multihead", font);
    run_buffers_free(&rb);
    problem_free(&pr);
    output_font_close(font);
    return status;
}

int cmd_multihead(int argc, char **argv) { return run(argc, argv, 0); }

int cmd_selfattn(int argc, char **argv) { return run(argc, argv, 1); }
