/* tour.c — `attn tour`: the attention chapters in order (SPEC.md §8).
 *
 * The tour is a list of steps. Each step has a heading, the formula and
 * what to look for, and one or more runs of attn's own commands, each
 * shown as the command line a learner can type again. Figures go into
 * the folder --out; each run names the files it wrote. Nothing here
 * computes: every number comes from the commands themselves, so the tour
 * shows exactly what they show.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "json_writer.h"
#include "options.h"
#include "output.h"
#include "page_out.h"
#include "run_line.h"
#include "term.h"
#include "checked.h"
#include "os.h"

/* A run is one attn command line, written as the learner would type it:
 * words separated by single spaces, "double quotes" around a word that
 * holds spaces, and @NAME for a figure file NAME inside the tour's folder. */
#define MAX_RUNS 3
#define MAX_WORDS 32
#define NSTEPS_MAX 20   /* room in the --html record; NSTEPS is checked against it */

struct tour_step {
    const char *name;    /* for --step */
    const char *title;
    const char *where;   /* the place in d2l */
    const char *text;    /* formula and what to look for */
    const char *runs[MAX_RUNS];
    unsigned views;      /* --html: the runs (bit r for run r) shown as a view */
    unsigned pictures;   /* --html: the runs whose figure (the run's first @NAME)
                            the page shows as a picture, for a command without a page */
};

static const struct tour_step steps[] = {
    {"cues", N_("Attention cues: queries, keys and values"), N_("zh 10.1"),
     N_("Of everything in view, attention picks what to look at. The chapter names\n"
        "the parts: the query (what the attender wants, the volitional cue), the\n"
        "keys (what each thing offers, the nonvolitional cues) and the values (what\n"
        "each thing holds). Attention pooling turns a query and the keys into\n"
        "weights over the values:\n"
        "    output = Σ_i α(q, k_i) v_i,   α ≥ 0,  Σ_i α(q, k_i) = 1\n"
        "The section's first figure is the simplest pooling there is: each query\n"
        "attends to the key of its own index and to nothing else, the identity, a\n"
        "weight of 1 on the diagonal (d2l's show_heatmaps of torch.eye(10)).\n"),
     {"heatmap --eye 10 --png @01-heatmap-eye.png", NULL, NULL}, 1, 0},

    {"pooling", N_("Attention pooling: Nadaraya–Watson regression"), N_("zh 10.2"),
     N_("Regression as attention: 50 noisy samples of f(x) = 2 sin(x) + x^0.8 are\n"
        "the keys (their x) and the values (their y); each test input is a query.\n"
        "    average:        ŷ = (1/n) Σ_i y_i\n"
        "    nonparametric:  ŷ = Σ_i softmax(−(x − x_i)²/2) y_i\n"
        "    parametric:     ŷ = Σ_i softmax(−((x − x_i) w)²/2) y_i,  w learned\n"
        "Each is a weighted average of the values, the weights its attention. The\n"
        "parametric w, trained 5 epochs by SGD on each point's distance to the\n"
        "others, narrows the Gaussian: the weights' heatmap sharpens onto the\n"
        "diagonal, and the fit follows the points (and their noise).\n"),
     {"pool --png @02-pool-fits.png --weights-png @02-pool-weights.png", NULL, NULL}, 1, 0},

    {"scoring", N_("Attention scoring functions"), N_("zh 10.3"),
     N_("A score a(q, k_i) says how well key i fits the query; a softmax over the\n"
        "keys that are there gives the weights (masked_softmax: a key past the\n"
        "valid length scores −1e6, a weight of 0); the output is their weighted\n"
        "sum of the values.\n"
        "    additive:     a(q, k) = w_vᵀ tanh(W_q q + W_k k)\n"
        "    dot product:  a(q, k) = qᵀk / √d\n"
        "In the section's cells every key is ones, so every key scores the same:\n"
        "the weights are equal over the valid keys, 1/2 for a length of 2 and 1/6\n"
        "for 6, and the outputs are the values' means, [2, 3, 4, 5] and\n"
        "[10, 11, 12, 13].\n"),
     {"score --masked-softmax", "score --png @03-score-weights.png", NULL}, 2, 0},

    {"scaling", N_("Why scores are divided by √d"), N_("zh 10.3.3"),
     N_("If the d components of q and k are independent with mean 0 and variance\n"
        "1, then q·k = Σ_j q_j k_j has variance d. Unscaled, scores spread out as d\n"
        "grows and the softmax puts almost all weight on one key, where its\n"
        "gradients vanish; q·k/√d has variance 1 for every d.\n"),
     {"selfattn --scale-sweep --png @04-scale-sweep.png", NULL, NULL}, 1, 0},

    {"bahdanau", N_("Bahdanau attention"), N_("zh 10.4"),
     N_("Seq2Seq squeezes the whole source into the encoder's last state.\n"
        "Bahdanau's decoder looks back at every encoder state instead, at each\n"
        "step t′ of its output:\n"
        "    c_t′ = Σ_t α(s_t′−1, h_t) h_t,   α: additive attention\n"
        "the query its previous state s_t′−1, the keys and values the encoder's\n"
        "states h_t. Below, a GRU encoder–decoder with that attention learns\n"
        "attn's English → French grammar in 200 steps, about a second: each\n"
        "French word's row settles on the English word it translates.\n"),
     {"train --task translate --arch bahdanau --steps 200 --png @05-train-bahdanau.png", NULL,
      NULL}, 1, 0},

    {"multihead", N_("Multi-head attention"), N_("zh 10.5"),
     N_("Each head i projects queries, keys and values into its own subspace of\n"
        "p = num_hiddens / h columns and attends there with scaled dot products:\n"
        "    head_i = softmax(Q_i K_iᵀ / √p) V_i,  Q_i = Q W_i^(q), K_i = K W_i^(k), V_i = V W_i^(v)\n"
        "    output = concat(head_1, …, head_h) W_oᵀ\n"
        "The chapter's cell: num_hiddens 100 in 5 heads of 20; queries (2, 4, 100),\n"
        "keys = values (2, 6, 100), all ones; valid_lens [3, 2], so example 0\n"
        "attends to its first 3 keys and example 1 to its first 2. How d2l computes\n"
        "the heads at once: transpose_qkv makes each (example, head) a slice of one\n"
        "batch, and valid_lens follows by repeat_interleave, not repeat.\n"),
     {"multihead --describe", "multihead --png @06-multihead-weights.png",
      "multihead --explain-shapes"}, 2, 0},

    {"selfattn", N_("Self-attention"), N_("zh 10.6.1"),
     N_("Queries, keys and values all come from one sequence X = x_1, …, x_n:\n"
        "    y_i = f(x_i, (x_1, x_1), …, (x_n, x_n)) ∈ ℝ^d\n"
        "The output has the input's shape: every token gets a new representation\n"
        "computed from the whole sequence at once. The chapter's cell: X of ones\n"
        "(2, 4, 100), 5 heads, valid_lens [3, 2].\n"),
     {"selfattn --png @07-selfattn-weights.png", NULL, NULL}, 1, 0},

    {"context", N_("苹果 in context"), N_("zh 10.6.1, the notes' example"),
     N_("An embedding says what a word is, not what it means in this sentence.\n"
        "苹果 gets the same input vector in both sentences below; self-attention\n"
        "mixes in what surrounds it, so its outputs differ: compare the cosine\n"
        "similarity of the inputs (1) and of the outputs. The weights are random\n"
        "(untrained): the point is that context changes the result at all.\n"),
     {"selfattn --tokens \"苹果 很 好吃|苹果 发布 了 新的 产品\" --hiddens 16 --heads 2"
      " --png @08-apple-context.png", NULL, NULL}, 1, 0},

    {"complexity", N_("Comparing CNNs, RNNs and self-attention"), N_("zh 10.6.2"),
     N_("Three layers that map n tokens of d channels to n tokens of d channels:\n"
        "    convolution (kernel k)  O(k·n·d²)  O(1) sequential  path O(n/k)\n"
        "    recurrent               O(n·d²)    O(n) sequential  path O(n)\n"
        "    self-attention          O(n²·d)    O(1) sequential  path O(1)\n"
        "Self-attention links every pair of positions in one step and runs in\n"
        "parallel, but its cost grows with n². Below: the table for n = 100,\n"
        "d = 512, path lengths measured through real layers, and real layers\n"
        "timed for growing n with the growth exponent fitted.\n"),
     {"complexity --measure --sweep 64:2048 --measure-dim 32 --reps 3"
      " --png @09-complexity-loglog.png", NULL, NULL}, 1, 0},

    {"order", N_("Self-attention does not see order"), N_("zh 10.6.3"),
     N_("Permute the tokens and the outputs are permuted the same way:\n"
        "    f(πX) = π f(X),   A(πX) = π A(X) πᵀ\n"
        "so nothing in self-attention depends on where a token stands. Adding the\n"
        "positional encoding to X by position breaks this: order becomes visible.\n"),
     {"selfattn --permute --png @10-permute.png",
      "selfattn --permute --posenc --png @10-permute-posenc.png", NULL}, 0, 0},

    {"posenc", N_("Positional encoding"), N_("zh 10.6.3"),
     N_("The input becomes X + P, with P ∈ ℝ^(n×d):\n"
        "    P[i, 2j]   = sin(i / 10000^(2j/d))\n"
        "    P[i, 2j+1] = cos(i / 10000^(2j/d))\n"
        "Columns 6 and 7 oscillate faster than columns 8 and 9, and 6 and 7 (like 8\n"
        "and 9) are offset because sine and cosine alternate. In the heatmap the\n"
        "frequency falls from left to right.\n"),
     {"posenc --dim 32 --steps 60 --plot @11-posenc-columns.png --cols 6-9",
      "posenc --dim 32 --steps 60 --png @11-posenc-heatmap.png", NULL}, 1, 0},

    {"binary", N_("Absolute positional information"), N_("zh 10.6.3.1"),
     N_("In binary the lowest bit alternates with every number, the next with\n"
        "every two, the third with every four: higher bits alternate at lower\n"
        "frequencies, as P's columns do from left to right, only continuously\n"
        "(and floats are more economical than bits).\n"),
     {"posenc --binary 8", NULL, NULL}, 0, 0},

    {"relative", N_("Relative positional information"), N_("zh 10.6.3.2"),
     N_("With ω_j = 1/10000^(2j/d), one 2×2 rotation that does not depend on i\n"
        "maps position i to position i+δ:\n"
        "    [ cos δω_j   sin δω_j ] [ P[i, 2j]   ]   [ P[i+δ, 2j]   ]\n"
        "    [−sin δω_j   cos δω_j ] [ P[i, 2j+1] ] = [ P[i+δ, 2j+1] ]\n"
        "The check applies it to every row and every pair. P·Pᵀ, the similarity\n"
        "of two positions, depends only on the offset between them.\n"),
     {"posenc --dim 32 --steps 60 --check-relative 1:10",
      "posenc --dim 32 --steps 60 --similarity @13-posenc-similarity.png", NULL}, 1, 0},

    {"rope", N_("Layouts, and the rotation at work: RoPE"), N_("after zh 10.6.3.2, beyond the chapter"),
     N_("Sines first and cosines after (concatenated) is the same encoding with\n"
        "its columns reordered; the rotation still holds, pairing column j with\n"
        "column j + d/2. Rotary position embedding (RoPE) uses the rotation\n"
        "itself: each query and key is rotated by the angles of its position, so\n"
        "the score ⟨R_m q, R_n k⟩ = ⟨q, R_(n−m) k⟩ depends only on the offset n − m.\n"),
     {"posenc --dim 32 --steps 60 --layout concat --check-relative 1:10"
      " --png @14-posenc-concat.png",
      "posenc --dim 32 --steps 60 --rope --check-relative 1:10 --png @14-rope-scores.png",
      NULL}, 1, 0},

    {"learned", N_("Attention that learns"), N_("zh 10.6's layer, trained"),
     N_("The self-attention weights of the steps before were random. attn train\n"
        "trains the same layer on a task, X = embedding(tokens)·√d + P,\n"
        "Y = MultiHeadAttention(X, X, X), a linear head, Adam, and draws the\n"
        "attention of one example as it forms.\n"
        "Reversing 8 digits needs position: with P the heads learn the anti-\n"
        "diagonal; without P they cannot tell the positions apart and stay near a\n"
        "third right. In the 苹果 sentences, 苹果's row learns to sit on the cue\n"
        "words (吃, 甜 … or 发布, 产品 …) that tell the fruit from the company.\n"),
     {"train --task reverse --png @15-train-reverse.png",
      "train --task reverse --no-posenc --png @15-train-reverse-no-posenc.png",
      "train --task apple --png @15-train-apple.png"}, 7, 0},

    {"circuits", N_("Two layers: an induction head"), N_("zh 10.7.4, the encoder stacked"),
     N_("d2l's Transformer encoder stacks blocks, each X = LayerNorm(X + Attention(X))\n"
        "(then the FFN), so that a head in layer 2 reads what a head in layer 1 wrote.\n"
        "In … A B … A the next token is B: a layer-1 head copies each token's\n"
        "predecessor into its position (the sub-diagonal), and a layer-2 head\n"
        "finds the earlier copy of the current token by it and reads the token\n"
        "after (an offset diagonal in the second half of the probe). One layer\n"
        "sees only tokens and positions and, as the copy's offset varies, cannot.\n"),
     {"train --task induction --compare-layers --png @16-train-induction.png", NULL}, 1, 0},

    {"cross", N_("Cross-attention that translates"), N_("zh 10.7.5, the decoder; the notes' opening"),
     N_("The notes begin with attention's classic use, in Seq2Seq: the decoder,\n"
        "about to write a French word, looks across the whole English sentence\n"
        "for the positions most worth attending to.\n"
        "    Q ← decoder (its state at the word it is writing)\n"
        "    K = V ← encoder (its output at every source word)\n"
        "    output = softmax(QKᵀ / √d) V\n"
        "The queries come from one sequence and the keys and values from another:\n"
        "cross-attention. Below, d2l's Transformer (2 blocks a side, d 32, 4 heads)\n"
        "learns attn's English → French grammar in 150 steps, a second or two.\n"
        "Watch each French word's row of the last block's cross-attention settle on\n"
        "the English word it translates, and cross over where the colour follows\n"
        "the noun (la petite pomme verte). The notes start here and ask: must\n"
        "attention join two sequences at all? No: the self-attention of the steps\n"
        "before is one sequence attending to itself.\n"),
     {"train --task translate --steps 150 --png @17-train-translate.png", NULL, NULL}, 1, 0},

    {"vit", N_("Attention over images: the Vision Transformer"),
     N_("zh 10.7's exercise 6; d2l.ai 11.8"),
     N_("10.7's sixth exercise asks for a Transformer that classifies images without\n"
        "a CNN: d2l.ai 11.8's Vision Transformer. A 28 × 28 picture of Fashion-MNIST\n"
        "is cut into 16 patches of 7 × 7, each projected to d = 64 (a convolution\n"
        "whose stride is its kernel), and a learned <cls> token goes in front. With\n"
        "a learned position embedding the 17 tokens run through pre-norm blocks\n"
        "    X ← X + MultiHeadAttention(LayerNorm(X)),  X ← X + MLP(LayerNorm(X))\n"
        "and the <cls> token's output alone is classified: only attention carries\n"
        "what a patch holds to it. Below, 3 epochs on the first 10,000 images.\n"
        "The figure lays each head's <cls> attention over the image: the heads\n"
        "look at edges and gaps (between the trousers' legs), one patch each.\n"
        "The default run, attn train --task vit, reaches 0.864 on the test set.\n"),
     {"train --task vit --train-size 10000 --test-size 1000 --epochs 3 --png @18-train-vit.png",
      NULL, NULL},
     1, 0},
};

#define NSTEPS (sizeof steps / sizeof steps[0])

/* The section's exercises (练习) that a command answers, named after its
 * step: a command and what it shows, each one line of at most 80 columns
 * (docs/guide/exercises.md runs each, with what its numbers say). */
static const struct {
    const char *step; /* a step's name */
    const char *text;
} exercises[] = {
    {"cues",
     N_("  attn heatmap --random 10 --softmax      a random matrix, each row softmaxed\n")},
    {"pooling",
     N_("  attn pool --n-train 10,20,50,100,200    each method's error as n grows\n"
        "  attn pool --sigma auto                  the width by leave-one-out error\n"
        "  attn pool --method parametric,additive --lr 0.01 --epochs 300\n"
        "                                          a new parametric pooling: additive\n"
        "  attn pool --method parametric --keep-self --epochs 500\n"
        "                                          a point as its own key: memorising\n")},
    {"scoring",
     N_("  attn score --keys random                other keys: the two scores part\n"
        "  attn score --score general              qᵀWk: other lengths, one product\n"
        "  attn score --score sum --keys random --queries 3\n"
        "                                          Σ(q + k): the query cancels out\n")},
    {"bahdanau",
     N_("  attn train --task translate --arch bahdanau --compare-rnn     GRU, LSTM\n"
        "  attn train --task translate --arch bahdanau --compare-score   additive, dot\n")},
    {"multihead",
     N_("  attn translate --input MODEL --head-importance   what each head costs\n"
        "  attn translate --input MODEL --prune-heads LIST  the model without them\n"
        "  (MODEL: attn train --task translate --save MODEL)\n")},
    {"selfattn",
     N_("  attn selfattn --depth 8                 one layer stacked 8 deep: collapse\n")},
    {"posenc",
     N_("  attn train --task reverse --pos-embedding learned --compare-posenc\n"
        "                                          a learned P against the sinusoid\n")},
    {"vit",
     N_("  attn vit --input MODEL --index I        one image: probabilities, each head\n"
        "  attn vit --input MODEL --image FILE     a picture of your own\n"
        "  (MODEL: attn train --task vit --save MODEL)\n")},
};

/* The exercises of step s, or NULL. */
static const char *step_exercises(size_t s)
{
    for (size_t i = 0; i < sizeof exercises / sizeof exercises[0]; i++)
        if (strcmp(exercises[i].step, steps[s].name) == 0)
            return _(exercises[i].text);
    return NULL;
}

struct tour_args {
    const char *out;
    long step;              /* 0: every step; else 1 … NSTEPS */
    int list;
    const char *color;      /* passed on to the commands, as given */
    int color_mode;         /* term_color_mode */
    const char *font;       /* passed on to the commands; NULL: not given */
    int html;               /* --html: DIR/index.html as well */
    int argc;               /* the command line, for the page */
    char **argv;
    command_finder *find;   /* a step's command by its name */
};

/* --html: what each run printed and its view's data (a page's data
 * object, page_out.h), kept for DIR/index.html. */
struct run_record {
    char *command;          /* "attn …" as shown */
    char *output;           /* what it printed, without colour */
    char *view;             /* the data of its page, or NULL */
    size_t view_len;
    char *picture_name;     /* a step's pictures: the figure's NAME, */
    unsigned char *picture; /* and its PNG file's bytes (else both NULL) */
    size_t picture_len;
};

struct tour_record {
    struct run_record runs[NSTEPS_MAX][MAX_RUNS];
    int done[NSTEPS_MAX];
};

/* --step: a number 1 … NSTEPS or a step's name. */
static int parse_step(void *args, const char *s)
{
    long *step = &((struct tour_args *)args)->step;
    for (size_t i = 0; i < NSTEPS; i++)
        if (strcmp(steps[i].name, s) == 0) {
            *step = (long)i + 1;
            return 0;
        }
    if (s[0] >= '0' && s[0] <= '9')
        return cli_parse_long("--step", s, 1, (long)NSTEPS, step);
    cli_error("--step: expected a number from 1 to %zu or a step name (see attn tour "
              "--list), got '%s'", NSTEPS, s);
    return -1;
}

#define OPT_ARGS struct tour_args
const struct opt tour_options[] = {
    OPT_DIR('o', "out", out,
            "folder for the figures, made when missing\n"
            "(default attn-tour)"),
    OPT_CALLBACK('s', "step", "N|NAME", parse_step, "run one step only, by number or name"),
    OPT_FLAG('l', "list", list, "list the steps and their figures, run nothing"),
    OPT_FLAG(0, "html", html,
             "also write DIR/index.html: every step with its\n"
             "formula, commands, output and views, to read and\n"
             "explore offline in a browser"),
    OPT_COLOR(color_mode),
    OPT_FONT(font),
    OPT_HELP(),
    OPT_END(),
};

const struct opt_rule tour_rules[] = {
    OPT_CONFLICTS("list", "step out font html", "--list runs nothing; --%s has no effect with it"),
    OPT_RULES_END(),
};

void usage_tour(FILE *f)
{
    fputs(_("usage: attn tour [--out DIR] [--step N|NAME] [--list]\n"
            "\n"
            "The attention chapters in order, one step at a time: a heading, the\n"
            "formula and what to look for, then attn's own commands run as you could\n"
            "type them (each shown after '$'), printing the chapter's numbers. Every\n"
            "figure is written into DIR and named where it is written.\n"
            "\n"
            "Steps:\n"),
          f);
    for (size_t s = 0; s < NSTEPS; s++)
        fprintf(f, "  %2zu  %-11s %s\n", s + 1, steps[s].name, _(steps[s].title));
    fputc('\n', f);
    opt_usage(f, tour_options);
    fputs(_("\n"
            "Examples:\n"
            "  attn tour --out figs               # the whole chapter, figures in figs/\n"
            "  attn tour --step posenc            # only the positional encoding\n"
            "  attn tour --out figs --html        # and figs/index.html to explore\n"
            "  attn tour --list\n"),
          f);
}

/* Step s's title and its place in the book, "Title (zh 10.1)", into buf;
 * where the place's translation is the section's own title and holds the
 * step's ("注意力评分函数" in "10.3 注意力评分函数"), the place alone. */
static const char *step_label(char *buf, size_t size, const struct tour_step *s)
{
    const char *title = _(s->title), *where = _(s->where);
    if (strstr(where, title))
        snprintf(buf, size, "%s", where);
    else
        /* TRANSLATORS: a step's title and its place in the book */
        snprintf(buf, size, _("%s (%s)"), title, where);
    return buf;
}

/* The heading, underlined with as many '─' as it takes columns. */
static void print_heading(FILE *f, int bold, size_t number, const struct tour_step *s)
{
    char head[512], label[400];
    /* TRANSLATORS: the step's number, how many, and its label ("Title (zh
       10.1)", the place translated as the zh section's own title) */
    if (snprintf(head, sizeof head, _("Step %zu of %zu · %s"), number, NSTEPS,
                 step_label(label, sizeof label, s)) < 0)
        return;
    fprintf(f, "%s%s%s\n", bold ? "\033[1m" : "", head, bold ? "\033[0m" : "");
    for (size_t i = term_text_columns(head); i > 0; i--)
        fputs("─", f);
    fputc('\n', f);
}

/* The command line shown: the step's words (argv's first nw), and --font
 * (which changes what is drawn). */
static void print_command(FILE *f, char **argv, size_t nw, const struct tour_args *a)
{
    fputs("attn", f);
    for (size_t i = 0; i < nw; i++) {
        fputc(' ', f);
        cli_put_word(f, argv[i]);
    }
    if (a->font) {
        fputs(" --font ", f);
        cli_put_word(f, a->font);
    }
}

/* text (len bytes) without the terminal's colour sequences (ESC [ … m and
 * the like), in new memory with a NUL; NULL when out of memory. */
static char *without_colour(const char *text, size_t len)
{
    char *out = malloc(len + 1), *o = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\033' && i + 1 < len && text[i + 1] == '[') {
            for (i += 2; i < len && !(text[i] >= 0x40 && text[i] <= 0x7e); i++)
                ;
            continue;
        }
        *o++ = text[i];
    }
    *o = '\0';
    return out;
}

/* Run cmd with argv while its standard output goes to a temporary file;
 * then that output is printed as usual and kept in rec->output. */
static int run_captured(const struct command *cmd, int argc, char **argv, struct run_record *rec)
{
    int status;
    size_t n;
    char *text = NULL;
    if (run_line_capture(cmd->run, argc, argv, "--html", &text, &n, &status) != EXIT_OK)
        return EXIT_RUNTIME;
    fwrite(text, 1, n, stdout);
    fflush(stdout);
    rec->output = without_colour(text, n);
    free(text);
    if (!rec->output) {
        cli_error("out of memory");
        return EXIT_RUNTIME;
    }
    return status;
}

/* The largest figure the page shows as a picture (a tour figure is about
 * 100 KB). */
#define PICTURE_MAX_BYTES (8u << 20)

/* --html: the figure NAME, written at path, kept in rec as the page's
 * picture. EXIT_OK or EXIT_RUNTIME after a message. */
static int keep_picture(struct run_record *rec, const char *name, const char *path)
{
    FILE *f = fopen(path, "rb");
    long n;
    size_t len = strlen(name);
    if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        cli_error("--html: %s: cannot read the figure back: %s", path, strerror(errno));
        if (f)
            fclose(f);
        return EXIT_RUNTIME;
    }
    if ((unsigned long)n > PICTURE_MAX_BYTES) {
        fclose(f);
        cli_error("--html: %s: %ld bytes, more than a page shows as a picture (%u)", path, n,
                  PICTURE_MAX_BYTES);
        return EXIT_RUNTIME;
    }
    rec->picture = malloc((size_t)n + 1);
    rec->picture_name = malloc(len + 1);
    if (!rec->picture || !rec->picture_name) {
        fclose(f);
        cli_error("out of memory");
        return EXIT_RUNTIME;
    }
    memcpy(rec->picture_name, name, len + 1);
    rec->picture_len = fread(rec->picture, 1, (size_t)n, f);
    if (ferror(f) || rec->picture_len != (size_t)n) {
        fclose(f);
        cli_error("--html: %s: cannot read the figure back", path);
        return EXIT_RUNTIME;
    }
    fclose(f);
    return EXIT_OK;
}

/* A run with --html: its command line kept in rec, the command run with
 * its output captured (and with view its page's data), and with
 * picture_name the figure at path kept too. */
static int run_recorded(const struct command *cmd, char **argv, size_t argc, size_t nw,
                        const struct tour_args *a, struct run_record *rec, int view,
                        const char *picture_name, const char *path)
{
    size_t clen = 0;
    int status;
    FILE *cl = open_memstream(&rec->command, &clen);
    if (!cl) {
        cli_error("out of memory");
        return EXIT_RUNTIME;
    }
    print_command(cl, argv, nw, a);
    if (fclose(cl) != 0) {
        cli_error("out of memory");
        return EXIT_RUNTIME;
    }
    if (view)
        output_page_keep(&rec->view, &rec->view_len);
    status = run_captured(cmd, (int)argc, argv, rec);
    output_page_keep(NULL, NULL);
    if (status == EXIT_OK && picture_name)
        status = keep_picture(rec, picture_name, path);
    return status;
}

/* One run: the command line shown, then the command itself. With rec
 * (--html) its output is kept, with view its page's data too, and with
 * picture the figure of its first @NAME. */
static int do_run(const char *run, const struct tour_args *a, struct run_record *rec, int view,
                  int picture, const char *index)
{
    size_t len = strlen(run), nw, argc = 0;
    char *buf = malloc(len + 1);
    char *words[MAX_WORDS];
    char *argv[MAX_WORDS + 7];
    char *owned[MAX_WORDS];    /* the DIR/NAME paths made here */
    const char *first_name = NULL; /* the first @NAME's NAME */
    size_t nowned = 0;
    int status = EXIT_RUNTIME;
    const struct command *cmd = NULL;

    if (!buf) {
        cli_error("out of memory");
        return EXIT_RUNTIME;
    }
    nw = run_line_split(run, buf, words, MAX_WORDS);
    if (nw > 0)
        cmd = a->find(words[0]);
    if (!cmd || strcmp(cmd->name, "tour") == 0) {
        cli_error("internal: the tour runs an unknown command '%s'", nw ? words[0] : "");
        goto done;
    }

    /* argv: the words, figures inside --out, then --color and --font as
     * given (the command line shown is the step's own), and --html when
     * the run's view is kept */
    if (run_line_argv(words, nw, a->out, argv, owned, &nowned, &first_name) != EXIT_OK)
        goto done;
    argc = nw;
    if (opt_find(cmd->options, "color")) {
        argv[argc++] = (char *)"--color";
        argv[argc++] = (char *)a->color;
    }
    if (a->font) {
        argv[argc++] = (char *)"--font";
        argv[argc++] = (char *)a->font;
    }
    view = view && rec && opt_find(cmd->options, "html");
    if (view) {
        argv[argc++] = (char *)"--html";
        argv[argc++] = (char *)index; /* not written: the page's data is kept */
    }
    argv[argc] = NULL;

    fputs("$ ", stdout);
    print_command(stdout, argv, nw, a);
    fputc('\n', stdout);
    fflush(stdout);
    if (!rec) {
        status = cmd->run((int)argc, argv);
        fflush(stdout);
        goto done;
    }
    status = run_recorded(cmd, argv, argc, nw, a, rec, view,
                          picture && first_name ? first_name : NULL, nowned ? owned[0] : NULL);
done:
    for (size_t i = 0; i < nowned; i++)
        free(owned[i]);
    free(buf);
    return status;
}

/* DIR/index.html: {"command": "tour", "steps": [{"name", "title",
 * "where", "text", "runs": [{"command", "output", "view", ["picture":
 * {"name", "type", "base64"}]}]}], "page"}. */
struct tour_page_ctx {
    const struct tour_args *a;
    const struct tour_record *rec;
};

static void write_tour_data(json_writer *jw, const void *arg)
{
    const struct tour_page_ctx *c = arg;
    json_string(jw, "command", "tour");
    json_array_begin(jw, "steps", JSON_BLOCK);
    for (size_t s = 0; s < NSTEPS; s++) {
        if (!c->rec->done[s])
            continue;
        json_object_begin(jw, NULL, JSON_BLOCK);
        json_uint(jw, "number", s + 1);
        json_string(jw, "name", steps[s].name);
        json_string(jw, "title", _(steps[s].title));
        json_string(jw, "where", _(steps[s].where));
        json_string(jw, "text", _(steps[s].text));
        if (step_exercises(s))
            json_string(jw, "exercises", step_exercises(s));
        else
            json_null(jw, "exercises");
        json_array_begin(jw, "runs", JSON_BLOCK);
        for (size_t r = 0; r < MAX_RUNS && steps[s].runs[r]; r++) {
            const struct run_record *rr = &c->rec->runs[s][r];
            json_object_begin(jw, NULL, JSON_BLOCK);
            json_string(jw, "command", rr->command ? rr->command : "");
            json_string(jw, "output", rr->output ? rr->output : "");
            if (rr->view)
                json_raw(jw, "view", rr->view, rr->view_len);
            else
                json_null(jw, "view");
            if (rr->picture) {
                json_object_begin(jw, "picture", JSON_INLINE);
                json_string(jw, "name", rr->picture_name);
                json_string(jw, "type", "image/png");
                json_base64(jw, "base64", rr->picture, rr->picture_len);
                json_end(jw);
            }
            json_end(jw);
        }
        json_end(jw);
        json_end(jw);
    }
    json_end(jw);
    json_object_begin(jw, "page", JSON_INLINE);
    page_head(jw, "tour", "attn tour", c->a->argc, c->a->argv, NULL);
    json_end(jw);
}

static void tour_record_free(struct tour_record *rec)
{
    if (!rec)
        return;
    for (size_t s = 0; s < NSTEPS_MAX; s++)
        for (size_t r = 0; r < MAX_RUNS; r++) {
            free(rec->runs[s][r].command);
            free(rec->runs[s][r].output);
            free(rec->runs[s][r].view);
            free(rec->runs[s][r].picture_name);
            free(rec->runs[s][r].picture);
        }
    free(rec);
}

/* --list: the steps, their commands and figures. */
static void list_steps(void)
{
    for (size_t s = 0; s < NSTEPS; s++) {
        char label[400];
        printf("%2zu  %-11s %s\n", s + 1, steps[s].name,
               step_label(label, sizeof label, &steps[s]));
        for (size_t r = 0; r < MAX_RUNS && steps[s].runs[r]; r++)
            printf("      attn %s\n", steps[s].runs[r]);
    }
    fputs(_("\nFigures are written as DIR/NAME for each @NAME (--out DIR, default attn-tour).\n"),
          stdout);
}

/* The steps asked for (--step's, or all): each one's heading, text and
 * runs; a failing command has said why in one line, and the tour stops.
 * With rec (--html), what each run printed and showed is kept. */
static int run_steps(const struct tour_args *a, struct tour_record *rec, const char *index)
{
    size_t first_step = a->step ? (size_t)a->step - 1 : 0;
    size_t last_step = a->step ? (size_t)a->step : NSTEPS;
    int bold = term_use_color(a->color_mode, stdout);
    for (size_t s = first_step; s < last_step; s++) {
        if (s > first_step)
            fputc('\n', stdout);
        print_heading(stdout, bold, s + 1, &steps[s]);
        fputs(_(steps[s].text), stdout);
        for (size_t r = 0; r < MAX_RUNS && steps[s].runs[r]; r++) {
            fputc('\n', stdout);
            int status = do_run(steps[s].runs[r], a, rec ? &rec->runs[s][r] : NULL,
                                (steps[s].views >> r) & 1, (steps[s].pictures >> r) & 1, index);
            if (status != EXIT_OK)
                return status;
        }
        if (step_exercises(s))
            printf(_("\nExercises (练习), each an experiment (docs/guide/exercises.md):\n%s"),
                   step_exercises(s));
        if (rec)
            rec->done[s] = 1;
    }
    return EXIT_OK;
}

int tour_main(int argc, char **argv, command_finder *find)
{
    struct tour_args a;
    struct tour_record *rec = NULL; /* --html */
    char *index = NULL;             /* DIR/index.html */

    memset(&a, 0, sizeof a);
    a.out = "attn-tour";
    a.color_mode = TERM_COLOR_AUTO;
    a.argc = argc;
    a.argv = argv;
    a.find = find;
    int status = opt_parse(tour_options, tour_rules, argc, argv, &a, NULL);
    if (status == OPT_HELP_ASKED) {
        usage_tour(stdout);
        return EXIT_OK;
    }
    if (status != EXIT_OK)
        return status;
    a.color = opt_color_names[a.color_mode];
    if (a.list) {
        list_steps();
        return EXIT_OK;
    }
    status = run_line_folder(a.out);
    if (status != EXIT_OK)
        return status;
    if (a.html) { /* the page can be written: checked before the first step */
        _Static_assert(NSTEPS <= NSTEPS_MAX, "NSTEPS_MAX holds every step");
        if (!(index = run_line_path(a.out, "index.html")) || !(rec = calloc(1, sizeof *rec))) {
            free(index);
            cli_error("out of memory");
            return EXIT_RUNTIME;
        }
        if ((status = output_page_check(index)) != EXIT_OK)
            goto done;
    }

    if ((status = run_steps(&a, rec, index)) != EXIT_OK)
        goto done;
    if (rec) {
        struct tour_page_ctx ctx = {&a, rec};
        fputc('\n', stdout);
        status = output_page(index, "attn tour", write_tour_data, &ctx, stdout,
                             _("every step with its output and views"));
        if (status != EXIT_OK)
            goto done;
    }
    if (!a.step)
        printf(_("\nThe tour is over: every figure above is in %s/%s.\n"), a.out,
               a.html ? _(", and the whole tour in index.html") : "");
done:
    tour_record_free(rec);
    free(index);
    return status;
}
