/* train.c — `attn train` (SPEC.md §9): a one-layer self-attention
 * model trained on a task, its attention shown as it forms.
 *
 * The maths and the data are below (src/nn/encoder/encoder_train.h, src/io/train_data.h,
 * src/io/model_file.h); this file reads the options, runs the loop, keeps
 * the history and the probe's attention at a few steps, and prints and
 * draws them: a progress bar (or plain lines), the final figures, the
 * probe's heads in the terminal, the 苹果 measurements, and the --png,
 * --plot, --json and --save files.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic_file.h"
#include "checked.h"
#include "cli.h"
#include "train_cmd.h"
#include "clock.h"
#include "commands.h"
#include "json_writer.h"
#include "train_explain.h"
#include "model_file.h"
#include "options.h"
#include "output.h"
#include "render.h"
#include "term.h"
#include "encoder_train.h"
#include "train_data.h"
#include "train_loop.h"
#include "train_page.h"
#include "train_posemb.h"
#include "train_vit.h"
#include "i18n.h"

#define NSNAP 5              /* probe snapshots in --png: step 0 … final */
#define MAX_PROBES 2         /* apple: a fruit and a company sentence */

static const char *const task_names[] = {"reverse", "previous", "apple", "induction",
                                         "translate", "lm", "vit", NULL}; /* train_kind, then translate, lm, vit */
static const char *const optimizer_names[] = {"adam", "sgd", NULL};            /* optim_kind */
static const char *const arch_names[] = {"transformer", "bahdanau", NULL};                 /* train_arch */
static const char *const pos_names[] = {"sinusoid", "learned", "none", NULL};  /* train_pos */
static const char *const rnn_names[] = {"gru", "lstm", NULL};          /* S2S_RNN_GRU, _LSTM */
static const char *const score_names[] = {"additive", "dot", NULL};    /* S2S_SCORE_* */

/* --lr: a finite number > 0. */
static int parse_lr(void *dest, const char *value)
{
    char *end;
    errno = 0;
    double v = strtod(value, &end);
    if (end == value || *end != '\0' || errno == ERANGE || !isfinite(v) || !(v > 0.0)) {
        cli_error("--lr: expected a positive number, got '%s'", value);
        return -1;
    }
    *(double *)dest = v;
    return 0;
}

#define OPT_ARGS struct train_args
const struct opt train_options[] = {
    OPT_CHOICE(0, "task", task, "TASK", task_names,
               "reverse, previous, apple, induction, translate,\n"
               "lm (a character language model) or\n"
               "vit (d2l.ai 11.8's Vision Transformer on\n"
               "Fashion-MNIST) (default reverse)"),
    OPT_FILE(0, "data", data, "your own task as JSON instead, or sentence pairs\n"
                              "(d2l's fra.txt or JSON; formats below);\n"
                              "lm: any UTF-8 text (default\n"
                              "/usr/share/common-licenses/GPL-3); vit: a\n"
                              "folder of Fashion-MNIST's four IDX files (default\n"
                              "/usr/share/datasets/fashion-mnist)"),
    OPT_INT(0, "epochs", epochs, "N", 0, 1000,
            "vit: passes over the training images (default\n10, as d2l)"),
    OPT_INT(0, "train-size", train_size, "N", 0, 100000000L,
            "vit: the first N training images (0: all, 60,000)"),
    OPT_INT(0, "test-size", test_size, "N", 0, 100000000L,
            "vit: the first N test images (0: all, 10,000)"),
    OPT_INT(0, "img-size", img_size, "S", 1, 1024,
            "vit: the images resized to S × S as d2l's Resize\n(bilinear; default: as read, 28)"),
    OPT_INT(0, "patch", patch, "P", 1, 4096,
            "vit: patches of P × P pixels, P dividing the\nimage's side (default 7: 16 patches)"),
    OPT_INT(0, "length", length, "N", 2, TRAIN_MAX_LEN,
            "sequence length of reverse, previous, induction\n(default 8; induction 20); lm: the context\n(default 32)"),
    OPT_INT(0, "vocab", vocab, "N", 2, 1000,
            "tokens of reverse, previous (digits), induction\n(letters) (default 10; induction 32)"),
    OPT_INT(0, "layers", layers, "N", 1, TMODEL_MAX_LAYERS,
            "stack N of d2l's Transformer encoder blocks; with\n"
            "N ≥ 2 AddNorm is on: its residual carries each\n"
            "token's identity up to the next layer (default 1;\ninduction 2)"),
    OPT_INT(0, "ffn", ffn, "H", 0, 4096,
            "d2l's PositionWiseFFN in every block, H hidden\n"
            "units, then AddNorm (default 0: attention only;\nvit: the MLP's, 128)"),
    OPT_INT(0, "hiddens", hiddens, "D", 1, 4096, "num_hiddens d (default 32; vit 64)"),
    OPT_INT(0, "heads", heads, "NH", 1, 4096, "num_heads, must divide D (default 4)"),
    OPT_FLAG(0, "posenc", posenc, "add the positional encoding P to X (the default)"),
    OPT_SET(0, "no-posenc", posenc, 0, "no P: the model cannot tell the order"),
    OPT_CHOICE(0, "pos-embedding", pos_embedding, "KIND", pos_names,
               "what is added to embedding·√d: sinusoid (the\n"
               "chapter's P, as --posenc), learned (d2l.ai 11.8's\n"
               "pos_embedding (1, max_len, d), normal(0, 1) at the\n"
               "start, trained; max_len the task's longest\n"
               "sequence) or none (as --no-posenc) (default\n"
               "sinusoid; not for translate)"),
    OPT_FILE(0, "pos-png", pos_png, "a learned P drawn: P, and P·Pᵀ beside the\n"
                                    "sinusoid's P·Pᵀ (PNG)"),
    OPT_FLAG(0, "addnorm", addnorm, "Y = LayerNorm(X + Y), d2l's AddNorm"),
    OPT_FLAG(0, "causal", causal, "a query sees no key after its position\n(default for induction)"),
    OPT_SET(0, "no-causal", causal, 0, "every query sees every key (induction; lm: the\nmodel reading the future)"),
    OPT_INT(0, "window", window, "R", 1, 1000000L,
            "restricted attention: query i sees the R keys j\n"
            "with |i - j| <= (R - 1)/2 (R odd); with --causal\n"
            "the R keys ending at i (the reference loops)"),
    OPT_FLAG(0, "bias", bias, "biases on W_q, W_k, W_v, W_o"),
    OPT_REAL(0, "dropout", dropout, "P", 0.0, 0.99,
             "dropout on the attention weights, training only\n"
             "(default 0; vit: emb_dropout and blk_dropout\nboth, 0.1)"),
    OPT_INT(0, "steps", steps, "N", 0, 10000000L,
            "training steps (default 400 reverse, 300 previous,\n200 apple and --data, 800 induction)"),
    OPT_INT(0, "batch-size", batch_size, "B", 0, 1000000L,
            "sequences per step; 0: the whole training set\n(default 64; vit: images, 128)"),
    {.type = OPTION_CALLBACK, .long_name = "lr", .argh = "LR",
     .offset = OPT_MEMBER_(lr, double),
     .help = N_("learning rate (default 0.01; induction 0.005;\nvit 0.001)"),
     .callback = parse_lr},
    OPT_CHOICE(0, "optimizer", optimizer, "NAME", optimizer_names,
               "adam (PyTorch's defaults) or sgd (default adam;\nalso for vit, where d2l's Classifier has SGD at\nlr 0.1: it stops below 0.85 in 10 epochs)"),
    OPT_SEED(seed, "initial weights, batches and dropout (default 0)"),
    OPT_THREADS(threads),
    OPT_INT(0, "log-every", log_every, "N", 1, 10000000L,
            "a history entry every N steps, and a line on\n"
            "stderr when it is not a terminal (default 20)"),
    OPT_PNG(png, "the probe's attention as it forms: rows = steps,\n"
                 "columns = heads (stacks: layer × head; apple:\n"
                 "苹果's row before and after; vit: 8 test images\n"
                 "with <cls>'s attention over the patches per head\n"
                 "of the last block and rolled out over the blocks;\n"
                 "lm: rows = layers, the held-out text's first\n"
                 "characters after training, each head's weight on\n"
                 "the next one)"),
    OPT_FILE(0, "plot", plot, "loss and accuracy against the step (PNG); vit:\n"
             "against the epoch, as d2l's board draws them"),
    OPT_FILE(0, "confusion-png", confusion_png,
             "vit: the test set's confusion matrix, each true\n"
             "class's row as shares of its images (PNG)"),
    OPT_HTML(html, "a page: a step slider over every logged step moving\n"
                   "the probe's heads and the curves' cursor together;\n"
                   "vit: pick a test image, each head's <cls>\n"
                   "attention over it and the prediction, recomputed;\n"
                   "lm: the causal triangle forming, and the samples"),
    OPT_JSON(json, "the history and the final figures; - for stdout"),
    OPT_FLAG(0, "explain", explain,
             "with --json (or --html): every cell's path (q, k,\n"
             "q·k, ÷√p, mask, row max, Σexp, weight, v, output)\n"
             "of the probe's heads at each step the page keeps\n"
             "(the \"explain\" member; not for translate)"),
    OPT_FILE(0, "save", save, "the trained model as JSON (selfattn --input reads it)"),
    OPT_FILE(0, "load", load, "a saved model to evaluate (--steps 0) or train on"),
    OPT_FLAG(0, "compare-posenc", compare_posenc,
             "train twice, same seed, with and without P, and\n"
             "compare the accuracies; with --pos-embedding\n"
             "learned three times: sinusoid, learned, none"),
    OPT_FLAG(0, "compare-layers", compare_layers,
             "train 1 layer and --layers N, same seed and data,\n"
             "and compare them (--png: the N layers' figure);\n"
             "translate: d2l's 2 blocks a side against N, and\n"
             "compare BLEU, time, steps to BLEU 0.95, parameters"),
    OPT_FLAG(0, "compare-arch", compare_arch,
             "translate: train the Transformer and Bahdanau's\n"
             "Seq2Seq on the same pairs, seed and steps, and\n"
             "compare BLEU, alignment, time and sequential steps"),
    OPT_CHOICE(0, "arch", arch, "NAME", arch_names,
               "translate: the encoder–decoder: transformer (d2l's\n"
               "Transformer, the default) or bahdanau (d2l's GRU\n"
               "Seq2Seq with Bahdanau attention)"),
    OPT_CHOICE(0, "rnn", rnn, "NAME", rnn_names,
               "translate, --arch bahdanau: the recurrent layers\n"
               "a side: gru (nn.GRU, the default) or lstm\n"
               "(nn.LSTM; the query is the last layer's h)"),
    OPT_CHOICE(0, "score", score, "NAME", score_names,
               "translate, --arch bahdanau: the attention's score:\n"
               "additive (W_q, W_k, w_v; the default) or dot\n"
               "(q·k/√d, no parameters); the Transformer: every\n"
               "head's, dot (the default) or additive\n"
               "(w_v·tanh(W_q q + W_k k), A = p; reference loops)"),
    OPT_FLAG(0, "compare-rnn", compare_rnn,
             "translate: train Bahdanau's model with a GRU and\n"
             "with an LSTM, same pairs, seed and steps, and\n"
             "compare BLEU, steps and seconds to BLEU 0.95"),
    OPT_FLAG(0, "compare-score", compare_score,
             "translate: train Bahdanau's model with the\n"
             "additive and the dot-product score, and compare\n"
             "them as --compare-rnn does; with --arch\n"
             "transformer, the Transformer with dot and with\n"
             "additive heads (parameters counted too)"),
    OPT_INT(0, "num-steps", num_steps, "T", 1, TRAIN_MAX_NUM_STEPS,
            "translate: sentences cut or padded to T entries\n"
            "with their <eos> (default 12; d2l's 10 for --data)"),
    OPT_INT(0, "max-examples", max_examples, "N", 0, 100000000L,
            "translate, fra.txt: lines 0 … N read (0: all;\ndefault 600, as d2l)"),
    OPT_INT(0, "min-freq", min_freq, "N", 0, 1000000L,
            "translate: words seen fewer times read <unk>\n(default 2, as d2l)"),
    OPT_REAL(0, "clip", clip, "X", 0.0, 1e30,
             "translate: gradients clipped to global norm X,\nd2l's grad_clipping (default 1; 0: off)"),
    OPT_INT(0, "sample", sample, "N", 0, 1000000L,
            "lm: characters generated after training\n(default 200; 0: none)"),
    OPT_REAL(0, "temperature", temperature, "T", 0.0, 1e6,
             "lm: the sampling's, above 0 (default 1;\nlower: likelier characters)"),
    OPT_FLAG(0, "compare-causal", compare_causal,
             "lm: train with the causal mask and without\n(the model reading the future), side by side"),
    OPT_COLOR(color),
    OPT_FONT(font),
    OPT_MAX_MEM(max_mem),
    OPT_HELP(),
    OPT_END(),
};

const struct opt_rule train_rules[] = {
    OPT_CONFLICTS("posenc", "no-posenc", "--posenc and --no-posenc: give one"),
    OPT_CONFLICTS("causal", "no-causal", "--causal and --no-causal: give one"),
    OPT_CONFLICTS("data", "vocab", "--%s is for the built-in tasks; --data brings its own"),
    OPT_CONFLICTS("load", "hiddens heads posenc no-posenc pos-embedding addnorm bias layers ffn "
                          "arch rnn score",
                  "--%s is read from the model file of --load"),
    OPT_CONFLICTS("window", "load save html explain compare-posenc compare-layers",
                  "--%s cannot be used with --window (a windowed model is trained and "
                  "shown, not saved or compared)"),
    OPT_CONFLICTS("compare-posenc", "posenc no-posenc load save png plot json compare-layers explain",
                  "--compare-posenc trains with and without P and keeps neither; --%s cannot "
                  "be used with it"),
    OPT_CONFLICTS("compare-layers", "load save plot pos-png explain",
                  "--compare-layers trains 1 layer and N and keeps neither; --%s cannot be "
                  "used with it"),
    OPT_CONFLICTS("compare-arch",
                  "load save arch heads layers ffn bias dropout png plot compare-posenc "
                  "compare-layers",
                  "--compare-arch trains both architectures with their own defaults and "
                  "keeps neither; --%s cannot be used with it"),
    OPT_CONFLICTS("compare-rnn",
                  "load save rnn heads ffn bias dropout png plot compare-posenc compare-layers "
                  "compare-arch compare-score",
                  "--compare-rnn trains Bahdanau's model with a GRU and with an LSTM and keeps "
                  "neither; --%s cannot be used with it"),
    OPT_CONFLICTS("compare-score",
                  "load save score heads ffn bias dropout png plot compare-posenc "
                  "compare-layers compare-arch",
                  "--compare-score trains Bahdanau's model with both scores and keeps "
                  "neither; --%s cannot be used with it"),
    OPT_RULES_END(),
};

/* The help: what attn train does, before its options. */
static const char usage_before_options[] = /* xgettext:no-c-format */ N_(
    "usage: attn train [--task reverse|previous|apple|induction|translate|lm |\n"
    "                   --data FILE] [OPTIONS]\n"
    "\n"
    "Trains a self-attention model, in d2l's names, and shows its attention\n"
    "forming:\n"
    "    X = embedding(tokens)·√d + P       (P unless --no-posenc; a learned P:\n"
    "                                        --pos-embedding learned)\n"
    "    Y = MultiHeadAttention(X, X, X, valid_lens)   (LayerNorm(X + Y): --addnorm)\n"
    "    logits = head(Y); loss = mean cross-entropy where there is a target\n"
    "With --layers N, a stack of d2l's TransformerEncoderBlock, each\n"
    "    X = LayerNorm(X + MultiHeadAttention(X, X, X, valid_lens))\n"
    "    X = LayerNorm(X + FFN(X))           (with --ffn H: dense2(ReLU(dense1(X))))\n"
    "and the head reads the last block's X.\n"
    "Adam with PyTorch's defaults, batches of 64, d 32, 4 heads.\n"
    "\n"
    "Tasks: reverse (the target at i is the token at n−1−i: the attention\n"
    "learns the anti-diagonal; without P it cannot), previous (the token at\n"
    "i−1: the sub-diagonal), apple (is 苹果 the fruit or the company? read\n"
    "from 苹果's output: its attention learns to sit on the cue words),\n"
    "induction (distinct letters: a filler, a segment A, then A again; at\n"
    "each position of the second copy the target is the next token: in\n"
    "… A B … A, B. Two layers learn it, one cannot: a layer-1 head copies\n"
    "each token's predecessor into its position, a layer-2 head finds the\n"
    "earlier copy of the current token by it and reads the token after),\n"
    "translate (English → French from attn's own grammar: d2l's Transformer\n"
    "encoder–decoder, 2 blocks a side, FFN 64, learns it; its decoder's\n"
    "cross-attention, queries from the decoder and keys and values from\n"
    "the encoder, aligns each French word with the English it translates;\n"
    "held-out BLEU as d2l computes it, greedy decoding, 600 steps; with\n"
    "--arch bahdanau, d2l's GRU Seq2Seq whose attention's query is the\n"
    "decoder's previous state s(t′−1), 1 GRU layer a side; --rnn lstm\n"
    "puts nn.LSTM in its place, --score dot the scaled dot product q·k/√d),\n"
    "lm (a character-level language model: the stack with the causal mask,\n"
    "2 blocks, FFN 64, trained to predict the next character of a UTF-8\n"
    "text, --data or the GPL; the last 10% held out; the held-out loss and\n"
    "perplexity against the unigram baseline's, then --sample characters\n"
    "drawn from it; --no-causal: the same model reading the future,\n"
    "--compare-causal: both, and how much weight each puts on the next\n"
    "character, the one it predicts).\n"
    "\n");

/* The help after the options: what it shows, --data, examples. */
static const char usage_after_options[] = /* xgettext:no-c-format */ N_(
    "\n"
    "Shows a progress bar on stderr (plain lines when it is not a terminal),\n"
    "then the final loss, training and held-out accuracy, and a probe's\n"
    "attention; for apple also 苹果's weight on the cue words and the cosine\n"
    "similarity of its vectors within and across senses, before and after;\n"
    "for induction each layer's and head's previous-token and induction\n"
    "scores on the held-out set, the circuit's two heads, and the steps\n"
    "where the loss fell fastest (--png: a fixed probe, columns = layer ×\n"
    "head; --plot adds the best scores). Stacks are saved under d2l's\n"
    "TransformerEncoder names (blks.block0.attention.W_q.weight, …).\n"
    "--threads: by default the cores other work leaves free (one for tiny\n"
    "steps); the results are the same with any number of threads.\n"
    "\n"
    "--data FILE (tokens are strings; held-out part optional):\n"
    "  {\"sequences\": [[\"苹果\", \"很\", \"甜\"], …], \"labels\": [\"fruit\", …],\n"
    "   \"label_at\": \"苹果\", \"heldout\": {\"sequences\": […], \"labels\": […]}}\n"
    "  {\"sequences\": [[\"3\", \"1\", \"4\"], …], \"targets\": [[\"4\", \"1\", \"3\"], …]}\n"
    "  (null in targets: no target at that position)\n"
    "--data FILE of sentence pairs trains a translation model instead:\n"
    "  d2l's fra.txt (English<TAB>French a line, read as d2l's\n"
    "  preprocess_nmt and tokenize_nmt, --max-examples 600, --min-freq 2)\n"
    "  or {\"pairs\": [[\"the red car\", \"la voiture rouge\"], …],\n"
    "      \"heldout\": {\"pairs\": […]}}\n"
    "\n"
    "Examples:\n"
    "  attn train                          # reverse: the anti-diagonal\n"
    "  attn train --task reverse --compare-posenc   # with and without P\n"
    "  attn train --task previous --compare-posenc --pos-embedding learned \\\n"
    "      --pos-png p.png               # sinusoid, learned and no P; P·Pᵀ drawn\n"
    "  attn train --task apple --png apple.png --plot curves.png\n"
    "  attn train --task reverse --html reverse.html   # scrub through the steps\n"
    "  attn train --task apple --save model.json\n"
    "  attn selfattn --input model.json --tokens \"苹果 发布 了 新的 产品\" --png f.png\n"
    "  attn train --task apple --load model.json --steps 0   # evaluate only\n"
    "  attn train --task induction --png induction.png   # 2 layers, causal\n"
    "  attn train --task induction --compare-layers       # 1 layer against 2\n"
    "  attn train --task translate --png cross.png       # cross-attention forming\n"
    "  attn train --data fra.txt --save fra-model.json   # d2l's Tatoeba pairs\n"
    "  attn train --task translate --compare-arch   # Transformer against Bahdanau\n"
    "  attn train --task translate --compare-rnn    # Bahdanau: GRU against LSTM\n"
    "  attn train --task translate --compare-score  # additive against dot product\n"
    "  attn train --task lm --sample 300 --temperature 0.8   # the GPL's characters\n"
    "  attn train --task lm --compare-causal   # why an encoder cannot generate\n");

void usage_train(FILE *f)
{
    fputs(_(usage_before_options), f);
    opt_usage(f, train_options);
    fputs(_(usage_after_options), f);
}

/* ---- a run: the task, the trainer, what is kept for the outputs -------- */

typedef struct hist_entry {
    long step;
    double loss, train_accuracy, heldout_accuracy; /* heldout: NaN without */
    double *scores; /* induction: (2, L, NH) previous-token, induction; else NULL */
} hist_entry;

typedef struct probe {
    int tokens[TRAIN_MAX_LEN];
    size_t len, at;      /* at: the 苹果 position (apple), else 0 */
    const char *name;    /* "fruit", "company", or NULL */
    const char *labels[TRAIN_MAX_LEN];
} probe;

typedef struct snapshot {
    long step;
    double loss;         /* on the final's set, with these weights */
    float *weights[MAX_PROBES]; /* (L, NH, len, len) per probe */
} snapshot;

typedef struct run {
    const struct train_args *a;
    train_task task;
    int task_ready;
    tmodel loaded;       /* --load */
    int has_loaded;
    char **lvocab, **lclasses;
    size_t lV, lC;
    train_opts opts;
    trainer tr;
    int tr_ready;
    hist_entry *hist;
    size_t nhist, hist_cap;
    probe probes[MAX_PROBES];
    size_t nprobes;
    long snap_steps[NSNAP];
    snapshot snaps[NSNAP];
    size_t nsnap;
    int apple;           /* the 苹果 measurements apply */
    long *cues;          /* (ncues,) vocabulary ids of the cue words */
    size_t ncues;
    train_apple apple_before, apple_after;
    const train_set *apple_set;
    train_final final;
    double seconds;
    const char *task_name;
    int induction;       /* the induction measures apply */
    double *losses;      /* (steps,) every step's loss: where it fell fastest */
    double *final_scores; /* (2, L, NH) on the held-out set after training */
    long formed_from, formed_to; /* the fastest fall; 0 when unknown */
    train_explain *ex;   /* --explain's paths, or NULL */
} run;

static void run_free(run *r)
{
    if (r->tr_ready)
        trainer_free(&r->tr);
    if (r->task_ready)
        train_task_free(&r->task);
    if (r->has_loaded)
        tmodel_free(&r->loaded);
    train_strings_free(r->lvocab, r->lV);
    train_strings_free(r->lclasses, r->lC);
    for (size_t i = 0; i < NSNAP; i++)
        for (size_t p = 0; p < MAX_PROBES; p++)
            free(r->snaps[i].weights[p]);
    for (size_t i = 0; i < r->nhist; i++)
        free(r->hist[i].scores);
    free(r->hist);
    free(r->cues);
    free(r->losses);
    free(r->final_scores);
    train_explain_free(r->ex);
}

/* ---- checks before anything runs --------------------------------------- */

/* The option values that the table alone cannot check: exit 2. */
static int check_args(const struct train_args *a, const opt_given *g)
{
    if (a->task == TASK_APPLE && (opt_is_given(g, "length") || opt_is_given(g, "vocab"))) {
        cli_error("--%s is for reverse, previous and induction; apple's sentences are its "
                  "corpus's",
                  opt_is_given(g, "length") ? "length" : "vocab");
        return EXIT_USAGE;
    }
    if (!a->data && a->task == TASK_INDUCTION) {
        if (a->length < TRAIN_INDUCTION_MIN_LEN) {
            cli_error("--length %ld is too short for induction: two copies of a segment of at "
                      "least 2 tokens need --length %d or more", a->length,
                      TRAIN_INDUCTION_MIN_LEN);
            return EXIT_USAGE;
        }
        if (a->vocab < a->length) {
            cli_error("--vocab %ld is smaller than --length %ld: an induction sequence holds "
                      "distinct tokens", a->vocab, a->length);
            return EXIT_USAGE;
        }
        if (a->vocab > TRAIN_INDUCTION_MAX_VOCAB) {
            cli_error("--vocab %ld: induction names at most %d tokens", a->vocab,
                      TRAIN_INDUCTION_MAX_VOCAB);
            return EXIT_USAGE;
        }
    }
    if (a->window && a->window % 2 == 0) {
        cli_error("--window %ld: give an odd R (the R positions centred on the query)",
                  a->window);
        return EXIT_USAGE;
    }
    if (a->compare_layers && a->json) { /* (translation's --compare-layers writes both runs) */
        cli_error("--compare-layers trains 1 layer and N and keeps neither; --json cannot be "
                  "used with it");
        return EXIT_USAGE;
    }
    if (a->compare_layers && a->layers < 2) {
        cli_error("--compare-layers compares 1 layer with --layers N: give N ≥ 2");
        return EXIT_USAGE;
    }
    if (!a->load && a->hiddens % a->heads != 0) {
        cli_error("--hiddens %ld is not divisible by --heads %ld", a->hiddens, a->heads);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* Every output file can be created: checked before training, so that a
 * long run never ends in "cannot create" (nothing is left behind). */
static int check_outputs(const struct train_args *a)
{
    const char *paths[] = {a->save, a->png, a->plot, a->json, a->pos_png};
    const char *names[] = {"--save", "--png", "--plot", "--json", "--pos-png"};
    return output_check_files(paths, names, sizeof paths / sizeof paths[0]);
}

/* ---- the task and the model ---------------------------------------------- */

static int load_task(run *r)
{
    const struct train_args *a = r->a;
    const char *const *v, *const *c;
    char err[1024];
    int rc;
    if (a->load && model_file_load(a->load, &r->loaded, &r->lvocab, &r->lV, &r->lclasses,
                                   &r->lC, a->causal, a->dropout, err, sizeof err)) {
        cli_error("--load %s", err);
        return EXIT_RUNTIME;
    }
    r->has_loaded = a->load != NULL;
    v = (const char *const *)r->lvocab;
    c = (const char *const *)r->lclasses;
    r->task_name = a->data ? "data" : task_names[a->task];
    if (a->data)
        rc = train_data_load(&r->task, a->data, v, r->lV, c, r->lC, err, sizeof err);
    else
        rc = train_task_by_name(&r->task, r->task_name, (size_t)a->length, (size_t)a->vocab,
                                (unsigned long long)a->seed, v, r->lV, c, r->lC, err,
                                sizeof err);
    if (rc) {
        if (a->load && !a->data)
            cli_error("--load %s: %s", a->load, err);
        else
            cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    r->task_ready = 1;
    return EXIT_OK;
}

/* The training options from the command's, or the loaded model's. */
static void make_opts(run *r, train_pos pos)
{
    const struct train_args *a = r->a;
    train_opts_default(&r->opts, r->task.kind);
    r->opts.hiddens = (size_t)a->hiddens;
    r->opts.heads = (size_t)a->heads;
    r->opts.posenc = pos == POS_SINUSOID;
    r->opts.learned = pos == POS_LEARNED;
    r->opts.addnorm = a->addnorm;
    r->opts.bias = a->bias;
    r->opts.causal = a->causal;
    r->opts.window = (size_t)a->window;
    if (a->window) /* the fast path has no window: the reference loops */
        r->opts.reference = 1;
    r->opts.layers = (size_t)a->layers;
    r->opts.ffn = (size_t)a->ffn;
    r->opts.dropout = a->dropout;
    r->opts.optimizer = (optim_kind)a->optimizer;
    r->opts.lr = a->lr;
    r->opts.batch_size = (size_t)a->batch_size;
    r->opts.seed = (unsigned long long)a->seed;
    r->opts.threads = (int)a->threads;
    if (r->has_loaded) {
        const tmodel_config *mc = &r->loaded.cfg;
        r->opts.hiddens = mc->hiddens;
        r->opts.heads = mc->heads;
        r->opts.posenc = mc->posenc;
        r->opts.learned = mc->learned;
        r->opts.max_len = mc->max_len;
        r->opts.addnorm = mc->addnorm;
        r->opts.bias = mc->bias;
        r->opts.layers = mc->layers;
        r->opts.ffn = mc->ffn;
        r->opts.causal = mc->causal;
    }
}

/* About the bytes the trainer allocates: parameters, Adam's moments and
 * the gradient, per chunk a gradient buffer and the forward caches. */
static int check_memory(const run *r)
{
    const train_task *t = &r->task;
    size_t d = r->opts.hiddens, NH = r->opts.heads, C = t->C, V = t->V;
    size_t T = t->kind == TASK_APPLE || t->kind == TASK_DATA ? t->train.T : t->length;
    size_t B = r->opts.batch_size ? r->opts.batch_size : 64, chunks;
    size_t L = r->opts.layers ? r->opts.layers : 1, H = r->opts.ffn;
    size_t params = 0, per = 0, total = 0, a = 0, b = 0;
    int over;
    if (t->heldout.T > T)
        T = t->heldout.T;
    if ((t->kind == TASK_APPLE || t->kind == TASK_DATA) && (B == 0 || B > t->train.n))
        B = t->train.n;
    chunks = (B + TRAIN_CHUNK - 1) / TRAIN_CHUNK;
    /* every step checked; the first overflow stops the count (|| skips the
     * rest) and the run is refused as too large */
    /* params = (V + C)·d + L·(4·d + 2·H + 8)·d + C, and a learned P's T·d */
    over = size_mul(4, d, &a) || size_mul(2, H, &b) || size_add(a, b, &a) ||
           size_add(a, 8, &a) || size_mul(a, d, &a) || size_mul(a, L, &a) ||
           size_add(V, C, &b) || size_mul(b, d, &b) || size_add(a, b, &params) ||
           size_add(params, C, &params) ||
           (r->opts.learned && (size_mul(T, d, &b) || size_add(params, b, &params)));
    /* per chunk: its caches, about ((12·d + 2·NH·T + 3·H)·L + 3·C)·T numbers
     * for each of its TRAIN_CHUNK examples (counted as 8 bytes), and its
     * gradients (double and float: 12 bytes a parameter) */
    over = over || size_mul(12, d, &a) || size_mul(NH, T, &b) || size_mul(b, 2, &b) ||
           size_add(a, b, &a) || size_mul(3, H, &b) || size_add(a, b, &a) ||
           size_mul(a, L, &a) || size_mul(3, C, &b) || size_add(a, b, &a) ||
           size_mul(a, T, &per) || size_mul(per, TRAIN_CHUNK * 8, &per) ||
           size_mul(params, 12, &a) || size_add(per, a, &per);
    /* every chunk's, and 32 bytes a parameter */
    over = over || size_mul(per, chunks, &total) || size_mul(params, 32, &a) ||
           size_add(total, a, &total);
    return cli_check_mem("the training", total, over, r->a->max_mem, NULL) ? EXIT_RUNTIME
                                                                            : EXIT_OK;
}

/* ---- the probes ------------------------------------------------------------ */

/* The probe of tokens (len,): their labels, and at = the first label_at
 * token (0 for token targets). */
static void probe_set(probe *p, const train_task *t, const int *tokens, size_t len,
                      const char *name)
{
    int found = 0;
    p->len = len;
    p->at = 0;
    p->name = name;
    for (size_t k = 0; k < len; k++) {
        p->tokens[k] = tokens[k];
        p->labels[k] = t->vocab[tokens[k]];
        if (t->label_at >= 0 && !found && tokens[k] == t->label_at) {
            p->at = k;
            found = 1;
        }
    }
}

/* The notes' sentence for a sense, when every word is in the vocabulary. */
static int probe_from_text(probe *p, const train_task *t, const char *text, const char *name)
{
    char buf[256];
    char *save = NULL;
    int ids[TRAIN_MAX_LEN];
    size_t n = 0;
    snprintf(buf, sizeof buf, "%s", text);
    for (char *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        long id = train_task_token(t, w);
        if (id < 0 || n == TRAIN_MAX_LEN)
            return -1;
        ids[n++] = (int)id;
    }
    probe_set(p, t, ids, n, name);
    return 0;
}

/* Apple: 苹果 as fruit and as company (sentences of one length, so that
 * the figure's rows share their shape); else the core's probe, the first
 * held-out sequence. */
static int choose_probes(run *r)
{
    const train_task *t = &r->task;
    const int *tokens;
    size_t len;
    if (t->kind == TASK_APPLE && probe_from_text(&r->probes[0], t, "我 吃 了 一个 苹果", "fruit") == 0 &&
        probe_from_text(&r->probes[1], t, "苹果 发布 了 新的 产品", "company") == 0) {
        r->nprobes = 2;
        return EXIT_OK;
    }
    if (t->kind == TASK_INDUCTION) {
        /* a fixed probe: the first n/2 letters, then the same again (a
         * filler letter first when n is odd) */
        int ids[TRAIN_MAX_LEN];
        const size_t n = t->length, half = n / 2, f = n - 2 * half;
        for (size_t k = 0; k < f; k++)
            ids[k] = (int)(half + 1 + k);
        for (size_t k = 0; k < half; k++)
            ids[f + k] = ids[f + half + k] = (int)(1 + k);
        probe_set(&r->probes[0], t, ids, n, NULL);
        r->nprobes = 1;
        return EXIT_OK;
    }
    if (train_task_probe(t, -1, &tokens, &len)) {
        cli_error("no sequence to show the attention of");
        return EXIT_RUNTIME;
    }
    probe_set(&r->probes[0], t, tokens, len, NULL);
    r->nprobes = 1;
    return EXIT_OK;
}

/* Steps of the snapshots: 0, S/8, S/4, S/2, S (apple: 0 and S). */
static void choose_snapshots(run *r, long steps)
{
    long want[NSNAP] = {0, steps / 8, steps / 4, steps / 2, steps};
    r->nsnap = 0;
    for (size_t i = 0; i < NSNAP; i++) {
        if (r->nprobes == 2 && i > 0 && i < NSNAP - 1)
            continue;
        if (r->nsnap && want[i] <= r->snap_steps[r->nsnap - 1])
            continue;
        r->snap_steps[r->nsnap++] = want[i];
    }
}

/* The probes' attention now, for snapshot i. */
static int take_snapshot(run *r, size_t i)
{
    const size_t NH = r->tr.model.cfg.layers * r->tr.model.cfg.heads; /* L·NH heads */
    snapshot *s = &r->snaps[i];
    train_final f;
    char err[512];
    if (trainer_final(&r->tr, &f, err, sizeof err))
        goto fail;
    s->step = r->tr.step;
    s->loss = f.train.loss;
    for (size_t p = 0; p < r->nprobes; p++) {
        size_t n = r->probes[p].len;
        s->weights[p] = malloc(NH * n * n * sizeof(float));
        if (!s->weights[p]) {
            snprintf(err, sizeof err, "%s", _("out of memory for the probe's attention"));
            goto fail;
        }
        if (trainer_attention(&r->tr, r->probes[p].tokens, n, s->weights[p], err, sizeof err))
            goto fail;
    }
    return EXIT_OK;
fail:
    cli_error("%s", err);
    return EXIT_RUNTIME;
}

/* The 苹果 measurements: for the apple task, or labelled --data whose
 * vocabulary has the corpus's cue words. */
static int measure_apple(run *r, train_apple *out)
{
    char err[512];
    if (trainer_apple(&r->tr, r->apple_set, r->cues, r->ncues, out, err, sizeof err)) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

/* ---- the loop ---------------------------------------------------------------- */

static int hist_add(run *r, long step, const train_stats *st, double heldout, double *scores)
{
    void *hist = r->hist;
    if (train_hist_room(&hist, r->nhist, &r->hist_cap, sizeof *r->hist))
        return EXIT_RUNTIME;
    r->hist = hist;
    r->hist[r->nhist++] = (hist_entry){step, st->loss, st->accuracy, heldout, scores};
    return EXIT_OK;
}

/* Held-out accuracy with the current weights, NaN without held-out data;
 * for induction also the scores (2, L, NH) into a new *scores. */
static int heldout_now(run *r, double *acc, double **scores)
{
    const size_t LH = r->tr.model.cfg.layers * r->tr.model.cfg.heads;
    train_stats st;
    char err[512];
    *acc = NAN;
    *scores = NULL;
    if (r->task.heldout.n == 0)
        return EXIT_OK;
    if (r->induction && !(*scores = malloc(2 * LH * sizeof **scores))) {
        cli_error("out of memory for the scores");
        return EXIT_RUNTIME;
    }
    if (trainer_evaluate_scores(&r->tr, &r->task.heldout, &st, *scores,
                                *scores ? *scores + LH : NULL, err, sizeof err)) {
        free(*scores);
        *scores = NULL;
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    *acc = st.accuracy;
    return EXIT_OK;
}

/* Step s (train_loop.h), logged with the held-out accuracy of the
 * weights it starts from; the accuracy after the loss. */
static int one_step(train_loop *lp, long s, int logged)
{
    run *r = lp->run;
    double held = NAN, *scores = NULL;
    train_stats st;
    char err[512];
    if (logged && heldout_now(r, &held, &scores))
        return EXIT_RUNTIME;
    if (trainer_step(&r->tr, &st, err, sizeof err)) {
        free(scores);
        if (lp->bar)
            fputs("\r\033[K", stderr);
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    if (r->losses)
        r->losses[s - 1] = st.loss;
    if (logged && hist_add(r, r->tr.step, &st, held, scores)) {
        free(scores);
        return EXIT_RUNTIME;
    }
    lp->loss = st.loss;
    snprintf(lp->bar_text, sizeof lp->bar_text, _("  acc %.1f%%"), 100.0 * st.accuracy);
    if (isnan(held))
        snprintf(lp->line_text, sizeof lp->line_text, _(", accuracy %.1f%%"), 100.0 * st.accuracy);
    else
        snprintf(lp->line_text, sizeof lp->line_text, _(", accuracy %.1f%%, held-out %.1f%%"),
                 100.0 * st.accuracy, 100.0 * held);
    return EXIT_OK;
}

static int loop_snapshot(train_loop *lp, size_t i) { return take_snapshot(lp->run, i); }

/* --html: the logged steps, with their figures (the history's last entry,
 * which one_step has just added for a logged step s ≥ 1) */
static int loop_record(train_loop *lp, long s)
{
    run *r = lp->run;
    const hist_entry *h = s > 0 && r->nhist > 0 ? &r->hist[r->nhist - 1] : NULL;
    train_page_stats st;
    if (train_explain_record(r->ex, &r->tr, s) != EXIT_OK)
        return EXIT_RUNTIME;
    if (h)
        st = (train_page_stats){h->step, h->loss, h->train_accuracy, h->heldout_accuracy};
    return train_page_record(&r->tr, s, h ? &st : NULL) != EXIT_OK ? EXIT_RUNTIME : EXIT_OK;
}

/* Train for steps, with the snapshots and the 苹果 measurements. */
static int train_loop_steps(run *r, long steps, int show)
{
    train_loop lp = {.steps = steps, .every = r->a->log_every,
                     .bar = show && isatty(fileno(stderr)), .snap_steps = r->snap_steps,
                     .nsnap = r->nsnap, .run = r, .snapshot = loop_snapshot,
                     .record = loop_record, .step = one_step};
    int status = train_loop_run(&lp);
    if (status == EXIT_OK)
        r->seconds = lp.seconds;
    return status;
}

/* Task, trainer, and training with P or without. show: the progress. */
/* The page's name for this run when two are compared (in buf), else NULL. */
static const char *run_label(const run *r, train_pos pos, char *buf, size_t len)
{
    if (r->a->compare_posenc && r->a->pos_embedding == POS_LEARNED)
        return pos == POS_SINUSOID  ? N_("sinusoid P")
               : pos == POS_LEARNED ? N_("learned P")
                                    : N_("no P");
    if (r->a->compare_posenc)
        return pos == POS_SINUSOID ? N_("with P") : N_("without P");
    if (!r->a->compare_layers)
        return NULL;
    cli_count(buf, len, "%zu layer", "%zu layers", (size_t)r->a->layers);
    return buf;
}

/* A labelled task (apple, or --data with label_at): the cue words the
 * vocabulary has, and the set the 苹果 measurements read. */
static int find_cues(run *r)
{
    size_t room = 1;
    for (const char *const *c = train_apple_cues; *c; c++)
        room++;
    if (!(r->cues = malloc(room * sizeof *r->cues))) {
        cli_error("out of memory for the cue words");
        return EXIT_RUNTIME;
    }
    train_data_cue_ids(&r->task, r->cues, &r->ncues);
    r->apple = r->ncues > 0;
    r->apple_set = r->task.heldout.n ? &r->task.heldout : &r->task.train;
    return EXIT_OK;
}

/* Induction after the last step: the heads' held-out scores, and the
 * steps where the loss fell fastest (0, 0 when none). */
static int induction_after(run *r)
{
    const size_t LH = r->tr.model.cfg.layers * r->tr.model.cfg.heads;
    train_stats st;
    char err[512];
    if (!(r->final_scores = malloc(2 * LH * sizeof *r->final_scores))) {
        cli_error("out of memory for the scores");
        return EXIT_RUNTIME;
    }
    if (trainer_evaluate_scores(&r->tr, &r->task.heldout, &st, r->final_scores,
                                r->final_scores + LH, err, sizeof err)) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    if (!r->losses ||
        train_fastest_fall(r->losses, (size_t)r->tr.step, &r->formed_from, &r->formed_to))
        r->formed_from = r->formed_to = 0;
    return EXIT_OK;
}

/* --explain: its recorder over the run's probes. */
static int begin_explain(run *r)
{
    train_explain_probe pr[MAX_PROBES];
    for (size_t p = 0; p < r->nprobes; p++)
        pr[p] = (train_explain_probe){r->probes[p].tokens, r->probes[p].labels, r->probes[p].len,
                                      r->probes[p].name};
    return train_explain_begin(&r->ex, &r->tr, pr, r->nprobes, r->a->steps, r->a->log_every);
}

static int train_run(run *r, train_pos pos, int show)
{
    char err[512], label[32];
    int status;
    if ((status = load_task(r)) != EXIT_OK)
        return status;
    make_opts(r, pos);
    if ((status = check_memory(r)) != EXIT_OK)
        return status;
    if (trainer_init(&r->tr, &r->task, &r->opts, r->has_loaded ? &r->loaded : NULL, err,
                     sizeof err)) {
        if (r->has_loaded)
            cli_error("--load %s: %s", r->a->load, err);
        else
            cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    r->tr_ready = 1;
    if ((status = choose_probes(r)) != EXIT_OK ||
        (status = train_page_run(&r->tr, run_label(r, pos, label, sizeof label), r->a->steps,
                                 r->a->log_every)) != EXIT_OK)
        return status;
    for (size_t p = 0; p < r->nprobes; p++)
        if ((status = train_page_probe(r->probes[p].tokens, r->probes[p].len, r->probes[p].at,
                                       r->probes[p].labels, r->probes[p].name)) != EXIT_OK)
            return status;
    if (r->a->explain && (status = begin_explain(r)) != EXIT_OK)
        return status;
    choose_snapshots(r, r->a->steps);
    if (r->task.label_at >= 0 && find_cues(r) != EXIT_OK)
        return EXIT_RUNTIME;
    if (r->apple && measure_apple(r, &r->apple_before))
        return EXIT_RUNTIME;
    r->induction = r->task.kind == TASK_INDUCTION;
    if (r->induction && r->a->steps > 0 &&
        !(r->losses = calloc((size_t)r->a->steps, sizeof *r->losses))) {
        cli_error("out of memory for the losses");
        return EXIT_RUNTIME;
    }
    if ((status = train_loop_steps(r, r->a->steps, show)) != EXIT_OK)
        return status;
    if (trainer_final(&r->tr, &r->final, err, sizeof err)) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    if (r->induction && induction_after(r) != EXIT_OK)
        return EXIT_RUNTIME;
    if (r->apple && measure_apple(r, &r->apple_after))
        return EXIT_RUNTIME;
    return EXIT_OK;
}

/* ---- what is printed ------------------------------------------------------- */

static void print_percent(double v)
{
    printf("%.1f%%", 100.0 * v);
}

static void print_summary(const run *r)
{
    const tmodel_config *mc = &r->tr.model.cfg;
    char layers[64] = "", count[32];
    if (tmodel_is_stack(mc))
        snprintf(layers, sizeof layers, "%s%s, ",
                 cli_count(count, sizeof count, "%zu layer", "%zu layers", mc->layers),
                 mc->ffn ? "" : _(" (attention only)"));
    if (mc->ffn)
        snprintf(layers + strlen(layers), sizeof layers - strlen(layers), "FFN %zu, ", mc->ffn);
    char pos[64];
    if (mc->learned)
        snprintf(pos, sizeof pos, _("with a learned P (max_len %zu)"), mc->max_len);
    else
        snprintf(pos, sizeof pos, "%s", mc->posenc ? "with P" : "without P");
    char window[40] = "";
    if (mc->window)
        snprintf(window, sizeof window, _(", window %zu"), mc->window);
    printf(_("attn train: %s, %ld steps in %.2f s, %sd %zu, %zu heads, %s%s%s%s%s\n"),
           r->task_name, r->tr.step, r->seconds, layers, mc->hiddens, mc->heads, pos,
           mc->addnorm ? ", AddNorm" : "", mc->causal ? ", causal" : "", window,
           r->a->load ? ", from --load" : "");
    printf(_("final loss %.4f, training accuracy "), r->final.train.loss);
    print_percent(r->final.train.accuracy);
    if (r->final.has_heldout) {
        fputs(_(", held-out accuracy "), stdout);
        print_percent(r->final.heldout.accuracy);
    }
    printf("\n");
}

/* One matrix for a person, as selfattn shows one: a heatmap on a colour
 * terminal, and the numbers under the key tokens when it is small or
 * without colour. */
static void show_weights(const float *m, size_t rows, size_t cols, const char *const *rlab,
                         const char *const *clab, int color)
{
    const output_weights_opts o = {rlab, clab, _("keys"), NULL, color, 1, NULL};
    output_weights(stdout, m, rows, cols, &o);
}

/* The probe's attention after training, head by head (apple: 苹果's row
 * of every head, for each sentence). */
static void print_probes(const run *r)
{
    const snapshot *last = &r->snaps[r->nsnap - 1];
    const size_t NH = r->tr.model.cfg.heads, L = r->tr.model.cfg.layers, LH = L * NH;
    int color = term_use_color((term_color_mode)r->a->color, stdout);
    for (size_t p = 0; p < r->nprobes; p++) {
        const probe *pr = &r->probes[p];
        const size_t n = pr->len;
        if (pr->name) {
            static const char *heads[] = {"head 1", "head 2", "head 3", "head 4", "head 5",
                                          "head 6", "head 7", "head 8"};
            float row[8 * TRAIN_MAX_LEN];
            size_t shown = NH < 8 ? NH : 8;
            printf(_("\n%s's attention in the %s sentence after step %ld (rows: heads):\n"),
                   pr->labels[pr->at], pr->name, last->step);
            for (size_t h = 0; h < shown; h++)
                memcpy(row + h * n, last->weights[p] + (h * n + pr->at) * n, n * sizeof(float));
            show_weights(row, shown, n, heads, pr->labels, color);
            continue;
        }
        printf(_("\nattention of the probe after step %ld (rows: queries, columns: keys):\n"),
               last->step);
        for (size_t h = 0; h < LH && h < 8; h++) {
            if (L > 1)
                printf(_("\nlayer %zu head %zu:\n"), h / NH + 1, h % NH + 1);
            else
                printf(_("\nhead %zu:\n"), h + 1);
            show_weights(last->weights[p] + h * n * n, n, n, pr->labels, pr->labels, color);
        }
        if (LH > 8)
            printf(_("\n(%zu more heads not shown: see --png)\n"), LH - 8);
    }
}

/* The best induction score of a layer above the first (the circuit's
 * second head), over heads; scores (2, L, NH). *layer, *head: where. */
static double best_induction(const double *scores, size_t L, size_t NH, size_t *layer,
                             size_t *head)
{
    double best = 0.0;
    *layer = *head = 0;
    for (size_t l = L > 1 ? 1 : 0; l < L; l++)
        for (size_t h = 0; h < NH; h++)
            if (scores[(L + l) * NH + h] > best) {
                best = scores[(L + l) * NH + h];
                *layer = l;
                *head = h;
            }
    return best;
}

/* The two heads of the circuit (the best previous-token head below the
 * top, the best induction head above the first layer) and where the loss
 * fell fastest. */
static void print_circuit(const run *r)
{
    const size_t L = r->tr.model.cfg.layers, NH = r->tr.model.cfg.heads;
    const double *sc = r->final_scores;
    size_t bl, bh, pl = 0, ph = 0;
    double best = best_induction(sc, L, NH, &bl, &bh), bp = -1.0;
    for (size_t l = 0; l + 1 < L; l++)
        for (size_t h = 0; h < NH; h++)
            if (sc[l * NH + h] > bp) {
                bp = sc[l * NH + h];
                pl = l;
                ph = h;
            }
    if (L > 1)
        printf(_("the circuit: layer %zu head %zu copies the previous token (%.2f), layer %zu head "
               "%zu finds the earlier copy (%.2f)\n"), pl + 1, ph + 1, bp, bl + 1, bh + 1, best);
    if (r->formed_to > 0 && L > 1)
        printf(_("the induction head formed between steps %ld and %ld (where the loss fell "
               "fastest)\n"), r->formed_from, r->formed_to);
    else if (r->formed_to > 0)
        printf(_("the loss fell fastest between steps %ld and %ld; one layer forms no induction "
               "head\n"), r->formed_from, r->formed_to);
}

/* The induction measures: each head's scores, the circuit, and where the
 * loss fell fastest. */
static void print_induction(const run *r)
{
    const size_t L = r->tr.model.cfg.layers, NH = r->tr.model.cfg.heads;
    const double *sc = r->final_scores;
    fputs(_("\nattention of each head at the second copy's positions (held-out, mean weight):\n"), stdout);
    term_put_field(stdout, "", 16, 0);
    fputc(' ', stdout);
    term_put_field(stdout, _("previous token"), 15, 1);
    fputc(' ', stdout);
    term_put_field(stdout, _("induction"), 10, 1);
    fputc('\n', stdout);
    for (size_t l = 0; l < L; l++)
        for (size_t h = 0; h < NH; h++) {
            char name[64];
            snprintf(name, sizeof name, _("layer %zu head %zu"), l + 1, h + 1);
            printf("%-16s %15.2f %10.2f\n", name, sc[l * NH + h], sc[(L + l) * NH + h]);
        }
    fputs(_("previous token: the weight on position i−1; induction: on the position just\n"
           "after the earlier copy of the token at i (in … A B … A, on B).\n"), stdout);
    print_circuit(r);
}

/* A learned P: how far training moved it, and whether nearby positions
 * came out alike, as the sinusoid's are (a band on P·Pᵀ's diagonal). */
static void print_band(const run *r)
{
    const tmodel *m = &r->tr.model;
    train_pos_band b;
    if (train_pos_band_of(&b, m, r->has_loaded ? -1 : (long long)r->a->seed)) {
        fputs(_("\n(out of memory for the learned P's cosines)\n"), stdout);
        return;
    }
    printf(_("\nlearned P (max_len %zu)"), m->cfg.max_len);
    if (!isnan(b.moved))
        printf(_(": moved %.0f%% from its start (‖P − P₀‖ / ‖P₀‖)"), 100.0 * b.moved);
    printf(_("\nmean cosine of positions |i−j| = 1 apart / further apart:\n"
           "  learned P  %5.2f / %5.2f\n  sinusoid   %5.2f / %5.2f   (a band on P·Pᵀ's "
           "diagonal)\n"), b.learned_near, b.learned_far, b.sinusoid_near, b.sinusoid_far);
}

static void print_apple(const run *r)
{
    const train_apple *b = &r->apple_before, *f = &r->apple_after;
    const char *word = r->task.vocab[r->task.label_at];
    printf(_("\n%s on the %s sentences (%zu): accuracy "), word,
           r->apple_set == &r->task.heldout ? "held-out" : "training", r->apple_set->n);
    print_percent(f->accuracy);
    printf(_("\nweight %s puts on the cue words (mean over heads and sentences): %.2f before, "
           "%.2f after\n"), word, b->cue_weight, f->cue_weight);
    printf(_("cosine similarity of %s's vectors, within a sense / across senses:\n"
           "  before (its input, embedding·√d + P): %6.2f / %6.2f\n"
           "  after (its output, what the head reads): %4.2f / %6.2f\n"),
           word, b->cos_within_input, b->cos_across_input, f->cos_within, f->cos_across);
}

/* ---- the files ---------------------------------------------------------------- */

/* "scores": {"previous_token": [[…heads] …layers], "induction": […]} from
 * scores (2, L, NH). */
static void write_scores(json_writer *jw, const double *scores, size_t L, size_t NH)
{
    static const char *const names[2] = {"previous_token", "induction"};
    json_object_begin(jw, "scores", JSON_INLINE);
    for (size_t k = 0; k < 2; k++) {
        json_array_begin(jw, names[k], JSON_INLINE);
        for (size_t l = 0; l < L; l++) {
            json_array_begin(jw, NULL, JSON_INLINE);
            for (size_t h = 0; h < NH; h++)
                json_number(jw, NULL, scores[(k * L + l) * NH + h]);
            json_end(jw);
        }
        json_end(jw);
    }
    json_end(jw);
}

static int write_json(FILE *f, const void *ctx)
{
    const run *r = ctx;
    json_writer jw;
    json_writer_init(&jw, f);
    json_object_begin(&jw, NULL, JSON_BLOCK);
    json_string(&jw, "command", "train");
    json_string(&jw, "task", r->task_name);
    json_int(&jw, "steps", r->tr.step);
    json_array_begin(&jw, "history", JSON_BLOCK);
    for (size_t i = 0; i < r->nhist; i++) { /* one line per logged step */
        const hist_entry *h = &r->hist[i];
        json_object_begin(&jw, NULL, JSON_INLINE);
        json_int(&jw, "step", h->step);
        json_number_exact(&jw, "loss", h->loss);
        json_number_exact(&jw, "train_accuracy", h->train_accuracy);
        json_number_exact(&jw, "heldout_accuracy", h->heldout_accuracy); /* NaN: null */
        if (h->scores)
            write_scores(&jw, h->scores, r->tr.model.cfg.layers, r->tr.model.cfg.heads);
        json_end(&jw);
    }
    json_end(&jw);
    json_object_begin(&jw, "final", JSON_INLINE);
    json_number_exact(&jw, "loss", r->final.train.loss);
    json_number_exact(&jw, "train_accuracy", r->final.train.accuracy);
    if (r->final.has_heldout)
        json_number_exact(&jw, "heldout_accuracy", r->final.heldout.accuracy);
    else
        json_null(&jw, "heldout_accuracy");
    if (r->final_scores) {
        write_scores(&jw, r->final_scores, r->tr.model.cfg.layers, r->tr.model.cfg.heads);
        if (r->formed_to > 0) {
            json_object_begin(&jw, "formed", JSON_INLINE);
            json_int(&jw, "from_step", r->formed_from);
            json_int(&jw, "to_step", r->formed_to);
            json_end(&jw);
        } else {
            json_null(&jw, "formed");
        }
    }
    json_end(&jw);
    if (r->ex)
        train_explain_member(&jw, r->ex);
    json_end(&jw);
    return json_writer_finish(&jw);
}

/* Panel titles, (rows, cols) of them. */
typedef char panel_title[160];

/* A row of --png's panels, a column per head of every layer (L · nh,
 * titled "layer l head h", or "head h" for one layer): head h's weights
 * (len, len) at w + h·len·len, their first rows rows. */
static void head_row(heat_panel *pn, panel_title *titles, const float *w, size_t L, size_t nh,
                     size_t len, size_t rows)
{
    for (size_t h = 0; h < L * nh; h++) {
        if (L > 1)
            snprintf(titles[h], sizeof titles[0], _("layer %zu head %zu"), h / nh + 1, h % nh + 1);
        else
            snprintf(titles[h], sizeof titles[0], _("head %zu"), h + 1);
        pn[h].data = w + h * len * len;
        pn[h].rows = rows;
        pn[h].cols = len;
        pn[h].title = titles[h];
    }
}

/* --png: rows = snapshots, columns = heads, the probe's whole attention;
 * apple: for each sentence 苹果's row before and after, columns = heads. */
static void png_panels(const run *r, heat_panel *panels, panel_title *titles,
                       panel_title *row_titles, const char *const **rowx,
                       const char *const **rowy, size_t *grid_rows)
{
    const size_t L = r->tr.model.cfg.layers, NH = L * r->tr.model.cfg.heads; /* columns */
    const size_t nh = r->tr.model.cfg.heads;
    /* the snapshot's loss is final's (SPEC §9), on the evaluation set after
     * that step's update; the log's is the batch's, before it: say which */
    const char *set = r->a->data ? _("training set") : _("evaluation set");
    size_t gr = 0;
    if (r->nprobes == 1) {
        const probe *pr = &r->probes[0];
        for (size_t s = 0; s < r->nsnap; s++, gr++) {
            snprintf(row_titles[gr], sizeof row_titles[0],
                     _("step %ld · loss %.4f on the %s"), r->snaps[s].step, r->snaps[s].loss,
                     set);
            head_row(&panels[gr * NH], &titles[gr * NH], r->snaps[s].weights[0], L, nh, pr->len,
                     pr->len);
        }
        *grid_rows = gr;
        return;
    }
    for (size_t p = 0; p < r->nprobes; p++) {
        const probe *pr = &r->probes[p];
        const size_t sn[2] = {0, r->nsnap - 1};
        for (size_t k = 0; k < 2; k++, gr++) {
            const snapshot *sp = &r->snaps[sn[k]];
            rowx[gr] = pr->labels;
            rowy[gr] = pr->labels + pr->at;
            snprintf(row_titles[gr], sizeof row_titles[0],
                     _("%s: %s's row %s, step %ld · loss %.4f on the %s"),
                     pr->name, pr->labels[pr->at], k ? _("after") : _("before"), sp->step, sp->loss,
                     set);
            head_row(&panels[gr * NH], &titles[gr * NH], sp->weights[p] + pr->at * pr->len, L,
                     nh, pr->len, 1);
        }
    }
    *grid_rows = gr;
}

static int write_png(const void *ctx, text_font *font, FILE *rep)
{
    const run *r = ctx;
    const size_t L = r->tr.model.cfg.layers, NH = L * r->tr.model.cfg.heads; /* columns */
    const size_t cells = (NSNAP + 2 * MAX_PROBES) * NH;
    heat_panel *panels = calloc(cells, sizeof *panels);
    panel_title *titles = calloc(cells, sizeof *titles);
    panel_title row_titles[NSNAP + 2 * MAX_PROBES];
    const char *row_title_ptrs[NSNAP + 2 * MAX_PROBES];
    const char *const *rowx[2 * MAX_PROBES], *const *rowy[2 * MAX_PROBES];
    heat_figure fig;
    char what[160];
    int status = EXIT_RUNTIME;
    if (!panels || !titles) {
        cli_error("%s: out of memory", r->a->png);
        goto done;
    }
    memset(&fig, 0, sizeof fig);
    png_panels(r, panels, titles, row_titles, rowx, rowy, &fig.grid_rows);
    for (size_t i = 0; i < fig.grid_rows; i++)
        row_title_ptrs[i] = row_titles[i];
    fig.row_titles = row_title_ptrs;
    fig.panels = panels;
    fig.grid_cols = NH;
    fig.xlabel = "Keys";
    fig.ylabel = r->nprobes == 1 ? "Queries" : NULL;
    if (r->nprobes == 1) {
        fig.xticklabels = r->probes[0].labels;
        fig.yticklabels = r->probes[0].labels;
    } else {
        fig.row_xticklabels = rowx;
        fig.row_yticklabels = rowy;
    }
    fig.vmin = NAN;
    fig.vmax = NAN;
    fig.colorbar_label = _("attention weight");
    fig.font = font;
    if (r->nprobes == 1 && L > 1)
        snprintf(what, sizeof what, _("the probe's attention at %zu steps × %zu layers × %zu heads"),
                 r->nsnap, L, NH / L);
    else if (r->nprobes == 1)
        snprintf(what, sizeof what, _("the probe's attention at %zu steps × %zu heads"), r->nsnap,
                 NH);
    else
        snprintf(what, sizeof what, _("%s's attention before and after, %zu sentences × %zu heads"),
                 r->task.vocab[r->task.label_at], r->nprobes, NH);
    status = output_heatmap(r->a->png, &fig, rep, what);
done:
    free(panels);
    free(titles);
    return status;
}


/* --plot: the loss, then the accuracies, against the step; for induction
 * also the best induction score (a head above layer 1) and the best
 * previous-token score (a head below the top), so that the phase change
 * shows as the curves moving together. */
/* --plot's six columns x (6, n) from the history: the step, the loss,
 * training and held-out accuracy, and (with scores) the best induction and
 * previous-token scores. */
static void plot_columns(const run *r, double *x, int scores)
{
    const size_t n = r->nhist, L = r->tr.model.cfg.layers, NH = r->tr.model.cfg.heads;
    double *loss = x + n, *tacc = x + 2 * n, *hacc = x + 3 * n, *ind = x + 4 * n,
           *prev = x + 5 * n;
    for (size_t i = 0; i < n; i++) {
        x[i] = (double)r->hist[i].step;
        loss[i] = r->hist[i].loss;
        tacc[i] = r->hist[i].train_accuracy;
        hacc[i] = r->hist[i].heldout_accuracy;
        if (scores) {
            size_t bl, bh;
            const double *sc = r->hist[i].scores;
            ind[i] = best_induction(sc, L, NH, &bl, &bh);
            prev[i] = 0.0;
            for (size_t l = 0; l + 1 < L || (L == 1 && l == 0); l++)
                for (size_t h = 0; h < NH; h++)
                    prev[i] = sc[l * NH + h] > prev[i] ? sc[l * NH + h] : prev[i];
        }
    }
}

static int write_plot(const void *ctx, text_font *font, FILE *rep)
{
    const run *r = ctx;
    const size_t n = r->nhist, L = r->tr.model.cfg.layers;
    double *x = malloc((n ? n : 1) * 6 * sizeof *x), *loss = x + n, *tacc = x + 2 * n,
           *hacc = x + 3 * n, *ind = x + 4 * n, *prev = x + 5 * n;
    plot_series ls = {0}, as[2], ss[2];
    plot_figure f1, f2, f3;
    attn_image i1 = {0, 0, NULL}, i2 = {0, 0, NULL}, i3 = {0, 0, NULL}, i12 = {0, 0, NULL},
               img = {0, 0, NULL};
    const int scores = r->induction && n && r->hist[0].scores;
    char err[512];
    int status = EXIT_RUNTIME;
    if (!x) {
        cli_error("%s: out of memory", r->a->plot);
        return EXIT_RUNTIME;
    }
    plot_columns(r, x, scores);
    ls = (plot_series){x, loss, n, _("training loss (the batch's)")};
    as[0] = (plot_series){x, tacc, n, _("training accuracy (the batch's)")};
    as[1] = (plot_series){x, hacc, n, _("held-out accuracy")};
    ss[0] = (plot_series){x, ind, n, L > 1 ? _("best induction score (layer ≥ 2)")
                                           : _("best induction score")};
    ss[1] = (plot_series){x, prev, n, L > 1 ? _("best previous-token score (below the top)")
                                            : _("best previous-token score")};
    memset(&f1, 0, sizeof f1);
    f1.series = &ls;
    f1.nseries = 1;
    f1.title = r->task_name;
    f1.xlabel = _("step");
    f1.ylabel = "loss";
    f1.font = font;
    f2 = f1;
    f2.series = as;
    f2.nseries = r->task.heldout.n ? 2 : 1;
    f2.title = NULL;
    f2.ylabel = _("accuracy");
    f3 = f2;
    f3.series = ss;
    f3.nseries = 2;
    f3.ylabel = _("mean attention weight");
    if (plot_draw(&i1, &f1, err, sizeof err) || plot_draw(&i2, &f2, err, sizeof err) ||
        image_stack(scores ? &i12 : &img, &i1, &i2, err, sizeof err) ||
        (scores && (plot_draw(&i3, &f3, err, sizeof err) ||
                    image_stack(&img, &i12, &i3, err, sizeof err)))) {
        cli_error("%s: %s", r->a->plot, err);
        goto done;
    }
    status = output_png(r->a->plot, &img, rep,
                        scores ? "loss, accuracy and the heads' scores against the step"
                               : "loss and accuracy against the step");
done:
    image_free(&i1);
    image_free(&i2);
    image_free(&i3);
    image_free(&i12);
    image_free(&img);
    free(x);
    return status;
}

/* --pos-png: the learned P of m and P·Pᵀ beside the sinusoid's. */
static int pos_png(const struct train_args *a, const tmodel *m, FILE *rep)
{
    const train_pos_png pp = {a->pos_png, m};
    if (!m->cfg.learned) { /* a model of --load without one */
        cli_error("--pos-png: the model of --load %s has no learned P (pos_embedding)", a->load);
        return EXIT_RUNTIME;
    }
    return output_figures(a->font, a->pos_png, train_pos_png_write, NULL, NULL, &pp, rep);
}

static int write_outputs(const run *r, FILE *rep)
{
    const struct train_args *a = r->a;
    char err[1024];
    int status;
    if (a->save) {
        if (model_file_save(a->save, &r->tr.model, (const char *const *)r->task.vocab,
                            (const char *const *)r->task.classes, err, sizeof err)) {
            cli_error("%s", err);
            return EXIT_RUNTIME;
        }
        fprintf(rep, _("wrote %s: the model (attn selfattn --input %s --tokens … draws its "
                "attention)\n"), a->save, a->save);
    }
    status = output_figures(a->font, a->png, write_png, a->plot, write_plot, r, rep);
    if (status == EXIT_OK && a->pos_png)
        status = pos_png(a, &r->tr.model, rep);
    if (status == EXIT_OK && a->json)
        status = output_json(a->json, write_json, r, rep, "the history and the final figures");
    if (status == EXIT_OK && a->html)
        status = train_page_write(write_json, (const void *[]){r}, 1, NULL, rep);
    return status;
}

/* ---- the command ------------------------------------------------------------ */

/* n runs side by side, their names' column w wide: the final loss, the
 * training and (when there is one) the held-out accuracy. */
static void print_compared(const run *r, size_t n, int w)
{
    term_put_field(stdout, _("final loss"), w, 0);
    for (size_t k = 0; k < n; k++)
        printf(" %10.4f", r[k].final.train.loss);
    printf("\n");
    term_put_field(stdout, _("training accuracy"), w, 0);
    for (size_t k = 0; k < n; k++)
        printf(" %9.1f%%", 100.0 * r[k].final.train.accuracy);
    printf("\n");
    if (!r[0].final.has_heldout)
        return;
    term_put_field(stdout, _("held-out accuracy"), w, 0);
    for (size_t k = 0; k < n; k++)
        printf(" %9.1f%%", 100.0 * r[k].final.heldout.accuracy);
    printf("\n");
}

/* A comparison's end: when it went well (status EXIT_OK), its page
 * (--html) of the n runs, kind naming it; then the runs freed. */
static int compare_end(run *r, size_t n, const struct train_args *a, int status,
                       const char *kind)
{
    const void *ctxs[3] = {&r[0], &r[1], n > 2 ? &r[2] : NULL};
    if (status == EXIT_OK && a->html)
        status = train_page_write(write_json, ctxs, n, kind, stdout);
    for (size_t k = 0; k < n; k++)
        run_free(&r[k]);
    return status;
}

/* The first logged step whose held-out accuracy (measured on the weights
 * it starts from, as the history logs it) reached level; 0 when none. */
static long step_reaching(const run *r, double level)
{
    for (size_t i = 0; i < r->nhist; i++)
        if (r->hist[i].heldout_accuracy >= level)
            return r->hist[i].step;
    return 0;
}

/* --compare-posenc --pos-embedding learned: the table of three runs. */
static void print_three(const run r[3], const struct train_args *a)
{
    printf(_("attn train: %s, %ld steps, seed %ld, the same batches and weights with each P\n"),
           r[0].task_name, r[0].tr.step, a->seed);
    term_put_columns(stdout, 24, (const char *const[]){_("sinusoid"), _("learned"), _("none")}, 3, 10);
    print_compared(r, 3, 24);
    if (r[0].final.has_heldout) {
        /* xgettext:no-c-format */
        term_put_field(stdout, _("held-out ≥ 99% at step"), 24, 0);
        for (int k = 0; k < 3; k++) {
            long s = step_reaching(&r[k], 0.99);
            if (s)
                printf(" %10ld", s);
            else
                fputc(' ', stdout), term_put_field(stdout, _("never"), 10, 1);
        }
        printf("\n");
    }
    term_put_field(stdout, _("time"), 24, 0);
    printf(" %9.2fs %9.2fs %9.2fs\n", r[0].seconds, r[1].seconds, r[2].seconds);
    printf(_("(at step: the first logged step, every %ld, whose held-out accuracy reached 99%%)\n"
           "Without P self-attention does not see the order: f(π·X) = π·f(X). The learned P\n"
           "starts as random vectors, one per position, and is trained with the rest.\n"),
           a->log_every);
    print_band(&r[1]);
}

/* --compare-posenc: the same task, seed and steps with P and without
 * (with --pos-embedding learned: sinusoid, learned and none). */
static int compare_posenc(const struct train_args *a)
{
    static const train_pos two[2] = {POS_SINUSOID, POS_NONE},
                           three[3] = {POS_SINUSOID, POS_LEARNED, POS_NONE};
    const size_t n = a->pos_embedding == POS_LEARNED ? 3 : 2;
    run r[3];
    int status = EXIT_OK;
    memset(r, 0, sizeof r);
    for (size_t k = 0; k < n && status == EXIT_OK; k++) {
        r[k].a = a;
        status = train_run(&r[k], n == 3 ? three[k] : two[k], 1);
    }
    if (status == EXIT_OK && n == 3) {
        print_three(r, a);
        if (a->pos_png) {
            printf("\n");
            status = pos_png(a, &r[1].tr.model, stdout);
        }
    } else if (status == EXIT_OK) {
        printf(_("attn train: %s, %ld steps, seed %ld, the same batches with and without P\n"),
               r[0].task_name, r[0].tr.step, a->seed);
        term_put_columns(stdout, 20, (const char *const[]){_("with P"), _("without P")}, 2, 10);
        print_compared(r, 2, 20);
        term_put_field(stdout, _("time"), 20, 0);
        printf(" %9.2fs %9.2fs\n", r[0].seconds, r[1].seconds);
        fputs(_("Without P self-attention does not see the order: f(π·X) = π·f(X).\n"), stdout);
    }
    return compare_end(r, n, a, status, "compare_posenc");
}

/* What the task decides when the options do not: induction's length,
 * vocabulary, layers and causal mask, every task's steps and learning
 * rate. */
static void task_defaults(struct train_args *a)
{
    const int ind = !a->data && a->task == TASK_INDUCTION;
    train_opts o;
    train_opts_default(&o, a->data ? TASK_DATA : (train_kind)a->task);
    if (a->length < 0)
        a->length = ind ? 20 : 8;
    if (a->vocab < 0)
        a->vocab = ind ? 32 : 10;
    if (a->layers < 0)
        a->layers = (long)o.layers;
    if (a->causal < 0)
        a->causal = o.causal;
    if (a->steps < 0)
        a->steps = o.steps;
    if (a->lr == 0.0)
        a->lr = o.lr;
}

/* --compare-layers: the same task, seed and batches with one layer and
 * with --layers N. */
static int compare_layers(const struct train_args *a)
{
    struct train_args one = *a;
    run r[2];
    int status = EXIT_OK;
    one.layers = 1;
    one.ffn = 0;
    memset(r, 0, sizeof r);
    r[0].a = &one;
    r[1].a = a;
    for (int k = 0; k < 2 && status == EXIT_OK; k++)
        status = train_run(&r[k], (train_pos)a->pos_embedding, 1);
    if (status == EXIT_OK) {
        char h1[32], h2[32];
        snprintf(h1, sizeof h1, "%s", _("1 layer"));
        snprintf(h2, sizeof h2, _("%ld layers"), a->layers);
        printf(_("attn train: %s, %ld steps, seed %ld, the same batches with 1 layer and %ld\n"),
               r[0].task_name, r[0].tr.step, a->seed, a->layers);
        term_put_columns(stdout, 22, (const char *const[]){h1, h2}, 2, 10);
        print_compared(r, 2, 22);
        if (r[0].induction) {
            size_t l, h;
            term_put_field(stdout, _("best induction score"), 22, 0);
            printf(" %10.2f %10.2f\n",
                   best_induction(r[0].final_scores, 1, r[0].tr.model.cfg.heads, &l, &h),
                   best_induction(r[1].final_scores, r[1].tr.model.cfg.layers,
                                  r[1].tr.model.cfg.heads, &l, &h));
        }
        term_put_field(stdout, _("time"), 22, 0);
        printf(" %9.2fs %9.2fs\n", r[0].seconds, r[1].seconds);
        fputs(_("A head in layer 2 reads what a head in layer 1 wrote into each position;\n"
               "one layer sees only the tokens themselves and their positions.\n"), stdout);
        if (r[1].induction)
            print_circuit(&r[1]);
        if (a->png) {
            printf("\n");
            status = output_figures(a->font, a->png, write_png, NULL, NULL, &r[1], stdout);
        }
    }
    return compare_end(r, 2, a, status, "compare_layers");
}

/* --pos-embedding, or what --posenc / --no-posenc say (sinusoid, none):
 * into a->pos_embedding; a combination that disagrees is refused (exit
 * 2), and so are --compare-posenc with a P it already runs and --pos-png
 * without a learned P. */
static int resolve_pos(struct train_args *a, const opt_given *g)
{
    const int given = opt_is_given(g, "pos-embedding");
    const char *name = pos_names[a->pos_embedding];
    if (given && opt_is_given(g, "posenc") && a->pos_embedding != POS_SINUSOID) {
        cli_error("--posenc and --pos-embedding %s: give one (--posenc is --pos-embedding "
                  "sinusoid)", name);
        return EXIT_USAGE;
    }
    if (given && opt_is_given(g, "no-posenc") && a->pos_embedding != POS_NONE) {
        cli_error("--no-posenc and --pos-embedding %s: give one (--no-posenc is --pos-embedding "
                  "none)", name);
        return EXIT_USAGE;
    }
    if (!given)
        a->pos_embedding = a->posenc ? POS_SINUSOID : POS_NONE;
    if (given && a->compare_posenc && a->pos_embedding != POS_LEARNED) {
        cli_error("--compare-posenc already trains with the sinusoid and with none; "
                  "--pos-embedding learned adds the learned P as a third");
        return EXIT_USAGE;
    }
    if (a->pos_png && !a->load && a->pos_embedding != POS_LEARNED) {
        cli_error("--pos-png draws a learned P: give --pos-embedding learned");
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* The options only --task lm reads, and --length with --data (lm's
 * context): exit 2 for the other tasks; so are --task with --data (but
 * translate) and --explain for a translation. */
static int train_not_lm(const struct train_args *a, const opt_given *g)
{
    if (a->data && opt_is_given(g, "length")) {
        cli_error("--length is for the built-in tasks; --data brings its own");
        return EXIT_USAGE;
    }
    static const char *const only[] = {"sample", "temperature", "compare-causal", NULL};
    for (size_t i = 0; only[i]; i++)
        if (opt_is_given(g, only[i])) {
            cli_error("--%s is for --task lm", only[i]);
            return EXIT_USAGE;
        }
    if (a->data && opt_is_given(g, "task") && a->task != TRAIN_TASK_TRANSLATE) {
        cli_error("--task is for the built-in tasks; --data brings its own");
        return EXIT_USAGE;
    }
    if (train_is_translation(a) && a->explain) {
        cli_error("--explain is for the encoder's tasks (reverse, previous, apple, induction, "
                  "--data); a translation has no paths yet");
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

static void train_defaults(struct train_args *a)
{
    memset(a, 0, sizeof *a);
    a->task = TASK_REVERSE;
    a->optimizer = OPTIM_ADAM;
    a->color = TERM_COLOR_AUTO;
    a->posenc = 1;
    a->causal = -1;
    a->length = -1;
    a->vocab = -1;
    a->layers = -1;
    a->hiddens = 32;
    a->heads = 4;
    a->steps = -1;
    a->batch_size = 64;
    a->lr = 0.0; /* the task's */
    a->log_every = 20;
    a->max_mem = CLI_DEFAULT_MAX_MEM;
    a->arch = ARCH_TRANSFORMER;
    a->num_steps = -1;
    a->max_examples = -1;
    a->min_freq = -1;
    a->clip = 1.0;
    a->sample = 200;
    a->temperature = 1.0;
    a->epochs = -1;
    a->patch = -1;
}

int cmd_train(int argc, char **argv)
{
    struct train_args a;
    opt_given g;
    run r;
    train_defaults(&a);
    int status = opt_parse(train_options, train_rules, argc, argv, &a, &g);
    if (status == OPT_HELP_ASKED) {
        usage_train(stdout);
        return EXIT_OK;
    }
    if (status != EXIT_OK)
        return status;
    if ((status = train_vit_only(&a, &g)) != EXIT_OK)
        return status;
    if (a.task == TRAIN_TASK_VIT)
        return train_vit(&a, &g, argc, argv);
    if (a.task == TRAIN_TASK_LM) /* --length is its context, with --data too */
        return (status = resolve_pos(&a, &g)) != EXIT_OK ? status : train_lm(&a, &g, argc, argv);
    if ((status = train_not_lm(&a, &g)) != EXIT_OK)
        return status;
    if (train_is_translation(&a)) {
        a.score_given = opt_is_given(&g, "score");
        a.arch_given = opt_is_given(&g, "arch");
        return train_translate(&a, &g, argc, argv);
    }
    if (a.explain && !a.json && !a.html) {
        cli_error("--explain adds the paths to --json's document: give --json FILE (- for "
                  "stdout), or --html FILE");
        return EXIT_USAGE;
    }
    if ((status = train_not_translation(&g)) != EXIT_OK)
        return status;
    task_defaults(&a);
    if ((status = resolve_pos(&a, &g)) != EXIT_OK || (status = check_args(&a, &g)) != EXIT_OK || (status = check_outputs(&a)) != EXIT_OK ||
        (status = train_page_open(a.html, argc, argv)) != EXIT_OK)
        return status;
    if (a.compare_posenc || a.compare_layers) {
        status = a.compare_posenc ? compare_posenc(&a) : compare_layers(&a);
        train_page_close();
        return status;
    }
    memset(&r, 0, sizeof r);
    r.a = &a;
    status = train_run(&r, (train_pos)a.pos_embedding, 1);
    if (status == EXIT_OK) {
        FILE *rep = output_report_stream(a.json);
        if (rep == stdout) { /* with --json -, stdout is the JSON's */
            print_summary(&r);
            print_probes(&r);
            if (r.apple)
                print_apple(&r);
            if (r.induction)
                print_induction(&r);
            if (r.tr.model.cfg.learned)
                print_band(&r);
            printf("\n");
        }
        status = write_outputs(&r, rep);
    }
    run_free(&r);
    train_page_close();
    return status;
}
