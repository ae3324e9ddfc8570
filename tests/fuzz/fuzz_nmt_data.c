/* fuzz_nmt_data.c — libFuzzer harness for the data of translation
 * (SPEC.md §11's --data of sentence pairs; src/io/s2s_corpus.c, and
 * src/nn/translation/seq2seq_data.c's vocabularies, arrays and BLEU on what it reads).
 *
 * The bytes are a --data file, read:
 *   1. as d2l's fra.txt, with max_examples 0 (every line) and 3 (lines
 *      0 … 3);
 *   2. as a file (s2s_corpus_load: JSON when it starts with '{', else
 *      fra.txt), max_examples 5;
 * and what loads is checked against s2s_corpus.h's promises: at least one
 * training pair, every sentence at least one token, a fra.txt token
 * without '\n' or '\t' and each side with a token that is not empty, a
 * JSON token without spaces and not empty, no alignment. Then both
 * vocabularies (min_freq 0 and 2) must start <unk> <pad> <bos> <eos> and
 * hold no token twice; the arrays for num_steps 1, 3 and 7 (of the
 * training and the held-out pairs) must hold ids inside the vocabulary,
 * valid lengths that count the entries that are not <pad>, and the
 * decoder's input <bos> then the target shifted by one; BLEU of each
 * short pair (target against source) must lie in [0, 1].
 * What loads as a file is then read by the command too: `attn train
 * --data FILE --steps 0` in-process (a tiny model, no step: the pairs,
 * vocabularies, arrays, evaluation, greedy translations and printout of
 * a translation run), whose exit status must be 0, 1 or 2.
 * Also: preprocess_nmt of the first line (its output at most twice its
 * length), BLEU of the bytes split at the first tab, and the bytes as a
 * typed sentence (s2s_sentence_tokens, every combination of flags).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention_fast.h"
#include "cli.h"
#include "commands.h"
#include "fuzz.h"
#include "s2s_corpus.h"
#include "seq2seq_data.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet();
    cores_set_threads(1);
    return 0;
}

/* attn train --data path --steps 0, in-process: the command's translation
 * run on the pairs, without a step. */
static void fuzz_train(const char *path)
{
    char *argv[] = {"train", "--data", (char *)path, "--steps", "0", "--hiddens", "4",
                    "--heads", "2", "--layers", "1", "--ffn", "4", "--num-steps", "6",
                    "--min-freq", "1", "--threads", "1", "--max-mem", "16M", NULL};
    int status;
    cli_set_command("train");
    status = cmd_train((int)(sizeof argv / sizeof argv[0]) - 1, argv);
    fflush(stdout);
    clearerr(stdout);
    if (status < 0 || status > 2)
        abort(); /* SPEC.md §2: exit status 0, 1 or 2 */
}

/* One side's tokens: text (fra.txt) or json rules. */
static void fuzz_check_side(const char *const *tok, size_t n, int json)
{
    int word = 0;
    if (n == 0)
        abort();
    for (size_t j = 0; j < n; j++) {
        if (json ? (tok[j][0] == '\0' || strchr(tok[j], ' ')) : strpbrk(tok[j], "\n\t") != NULL)
            abort();
        word |= tok[j][0] != '\0';
    }
    if (!word)
        abort(); /* an empty side is refused */
}

static void fuzz_check_pairs(const s2s_pairs *p, int json)
{
    if (p->n == 0)
        return; /* no pairs (a zeroed set: no arrays) */
    if (p->align || p->src_start[0] != 0 || p->tgt_start[0] != 0)
        abort();
    for (size_t i = 0; i < p->n; i++) {
        size_t ns, nt;
        const char *const *s = s2s_src(p, i, &ns), *const *t = s2s_tgt(p, i, &nt);
        fuzz_check_side(s, ns, json);
        fuzz_check_side(t, nt, json);
        if (ns <= 64 && nt <= 64) {
            double b = s2s_bleu(t, nt, s, ns, 2);
            if (!(b >= 0.0 && b <= 1.0))
                abort();
        }
    }
}

/* A vocabulary's promises: the reserved tokens first, none twice. */
static void fuzz_check_vocab(const s2s_vocab *v)
{
    static const char *const reserved[] = {"<unk>", "<pad>", "<bos>", "<eos>"};
    if (v->n < S2S_RESERVED)
        abort();
    for (size_t i = 0; i < v->n; i++)
        if ((i < S2S_RESERVED && strcmp(v->tokens[i], reserved[i]) != 0) ||
            s2s_vocab_find(v, v->tokens[i]) != (long)i)
            abort();
}

/* The arrays of p for num_steps T: ids inside the vocabularies, valid
 * lengths, teacher forcing's decoder input. */
static void fuzz_check_arrays(const s2s_pairs *p, const s2s_vocab *sv,
                              const s2s_vocab *tv, size_t T)
{
    s2s_arrays a;
    char err[256];
    if (s2s_arrays_build(&a, p, sv, tv, T, err, sizeof err))
        return; /* out of memory */
    for (size_t i = 0; i < a.n; i++) {
        const int *x = a.src + i * T, *y = a.tgt + i * T, *d = a.dec_in + i * T;
        long vs = 0, vt = 0;
        char *sentence;
        for (size_t j = 0; j < T; j++) {
            if (x[j] < 0 || (size_t)x[j] >= sv->n || y[j] < 0 || (size_t)y[j] >= tv->n ||
                d[j] != (j ? y[j - 1] : S2S_BOS))
                abort();
            vs += x[j] != S2S_PAD;
            vt += y[j] != S2S_PAD;
        }
        if (vs != a.src_valid[i] || vt != a.tgt_valid[i])
            abort();
        if ((sentence = s2s_ids_to_sentence(tv, y, T)) != NULL)
            free(sentence);
    }
    s2s_arrays_free(&a);
}

static void fuzz_check(const s2s_corpus *c, int json)
{
    if (c->train.n < 1)
        abort();
    fuzz_check_pairs(&c->train, json);
    fuzz_check_pairs(&c->heldout, json);
    for (size_t min_freq = 0; min_freq <= 2; min_freq += 2) {
        s2s_vocab sv, tv;
        char err[256];
        if (s2s_vocab_build(&sv, &c->train, S2S_SRC, min_freq, err, sizeof err))
            continue;
        if (s2s_vocab_build(&tv, &c->train, S2S_TGT, min_freq, err, sizeof err)) {
            s2s_vocab_free(&sv);
            continue;
        }
        fuzz_check_vocab(&sv);
        fuzz_check_vocab(&tv);
        for (size_t T = 1; T <= 7; T += 3) {
            fuzz_check_arrays(&c->train, &sv, &tv, T);
            fuzz_check_arrays(&c->heldout, &sv, &tv, T);
        }
        s2s_vocab_free(&sv);
        s2s_vocab_free(&tv);
    }
}

/* A typed sentence read with each combination of flags: at most one
 * token a byte, plus one; none empty with S2S_SENTENCE_WORDS. */
static void fuzz_sentence(const char *s)
{
    for (int flags = 0; flags < 8; flags++) {
        char err[128];
        size_t n;
        char **tok = s2s_sentence_tokens(s, flags, &n, err, sizeof err);
        if (!tok)
            continue;
        if (n > strlen(s) + 1 || (!(flags & S2S_SENTENCE_WORDS) && n == 0))
            abort();
        for (size_t i = 0; i < n; i++)
            if (strchr(tok[i], ' ') || ((flags & S2S_SENTENCE_WORDS) && tok[i][0] == '\0'))
                abort();
        free(tok);
    }
}

/* preprocess_nmt of the first line, and BLEU of the bytes split at the
 * first tab (as two sentences). */
static void fuzz_line(const char *text, size_t size)
{
    const char *nl = memchr(text, '\n', size);
    size_t n = nl ? (size_t)(nl - text) : size, len = 0;
    char *out = malloc(2 * n + 1), *tab;
    if (out && s2s_preprocess_line(text, n, 1, out, &len) == 0 &&
        (len > 2 * n || strlen(out) != len))
        abort();
    free(out);
    if (size <= 1024 && (out = malloc(size + 1)) != NULL) {
        double b;
        memcpy(out, text, size);
        out[size] = '\0';
        tab = strchr(out, '\t');
        if (tab)
            *tab++ = '\0';
        b = s2s_bleu_text(out, tab ? tab : out, 2);
        if (!(b == -1.0 || (b >= 0.0 && b <= 1.0)))
            abort();
        fuzz_sentence(out);
        free(out);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data, *path;
    char err[1024];
    s2s_corpus c;
    if (s2s_corpus_read_fra(&c, text, size, "f.txt", 0, err, sizeof err) == 0) {
        fuzz_check(&c, 0);
        s2s_corpus_free(&c);
    } else if (c.train.n || c.heldout.n || strncmp(err, "f.txt: ", 7) != 0) {
        abort(); /* a failure leaves nothing, and names the file */
    }
    if (s2s_corpus_read_fra(&c, text, size, "f.txt", 3, err, sizeof err) == 0) {
        fuzz_check(&c, 0);
        s2s_corpus_free(&c);
    }
    if ((path = fuzz_file(0, data, size)) != NULL &&
        s2s_corpus_load(&c, path, 5, err, sizeof err) == 0) {
        fuzz_check(&c, s2s_corpus_format(text, size) == S2S_CORPUS_JSON);
        s2s_corpus_free(&c);
        fuzz_train(path);
    }
    fuzz_line(text, size);
    return 0;
}
