/* fuzz_lm_text.c — libFuzzer harness for the text reader of `attn train
 * --task lm` (SPEC.md §16; src/io/lm_text.c).
 *
 * The bytes are read by lm_text_from_bytes and, from a file, lm_text_read,
 * and checked against lm_text.h's promises and against a decoding of
 * their own (ref_decode below: a strict UTF-8 decoder written from RFC
 * 3629's byte ranges, independent of base/utf8.c):
 *
 *   - the reader accepts exactly the well-formed texts without a NUL, and
 *     refuses the others with no buffer left and the message "f: invalid
 *     UTF-8 at byte offset K", K the first byte that does not start a
 *     well-formed character;
 *   - what loads is that decoding, its vocab strictly increasing and
 *     exactly the characters used, every id < V with vocab[ids[i]] ==
 *     text[i]; the file gives the same as the bytes;
 *   - for L = 0, 1, 2, 5, 32 (those ≤ n), lm_task_build refuses with a
 *     message and no buffer exactly when the text is empty, L is 0 or the
 *     held-out part (the last ⌊n/10⌋) has fewer than L + 1 characters; else its
 *     vocabulary is "<pad>" and the characters in UTF-8, the training
 *     windows start at 0, stride, 2·stride, … over the training text with
 *     tokens ids + 1 and targets the next character's id, the held-out
 *     cover predicts each held-out character from the second exactly once
 *     and the training cover (task->eval, at most LM_MAX_EVAL_WINDOWS
 *     windows) none twice; lm_task_bytes counts at least the windows'
 *     tokens and targets; lm_cover keeps the first max_windows windows;
 *     the unigram baseline over the held-out targets is in [1, ntrain + V].
 *
 * The harness's max length (tests/fuzz/harnesses) keeps each input at a
 * few hundred thousand window positions at most.
 *
 * The corpus: tests/fuzz/corpus/lm_text/ (tests/fuzz/make_corpus.py: short
 * texts in English, Chinese, Japanese and emoji, a BOM, CRLF, and invalid
 * UTF-8 of each kind: stray continuation bytes, overlong forms,
 * surrogates, above U+10FFFF, truncated sequences, 0xF8…0xFF, a NUL).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encoder_lm.h"
#include "fuzz.h"
#include "lm_text.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

#define FAIL(what)                                                                          \
    do {                                                                                    \
        fprintf(stderr, "fuzz_lm_text: %s (line %d)\n", what, __LINE__);                    \
        abort();                                                                            \
    } while (0)

/* The code points of b[0 … len) into out (room for len), RFC 3629:
 *   UTF8-1 = %x01-7F (a NUL is refused: not text)
 *   UTF8-2 = %xC2-DF UTF8-tail
 *   UTF8-3 = %xE0 %xA0-BF UTF8-tail / %xE1-EC 2( UTF8-tail ) /
 *            %xED %x80-9F UTF8-tail / %xEE-EF 2( UTF8-tail )
 *   UTF8-4 = %xF0 %x90-BF 2( UTF8-tail ) / %xF1-F3 3( UTF8-tail ) /
 *            %xF4 %x80-8F 2( UTF8-tail )
 * The count, or -1 with *bad the offset of the first byte that does not
 * start one of these. */
static long ref_decode(const unsigned char *b, size_t len, uint32_t *out, size_t *bad)
{
    size_t i = 0, n = 0;
    while (i < len) {
        const unsigned c = b[i];
        unsigned lo = 0x80, hi = 0xBF; /* the second byte's range */
        size_t tail;
        uint32_t cp;
        if (c == 0x00) {
            *bad = i;
            return -1;
        }
        if (c <= 0x7F) {
            out[n++] = c;
            i++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) {
            tail = 1;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            tail = 2;
            cp = c & 0x0F;
            if (c == 0xE0)
                lo = 0xA0;
            else if (c == 0xED)
                hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            tail = 3;
            cp = c & 0x07;
            if (c == 0xF0)
                lo = 0x90;
            else if (c == 0xF4)
                hi = 0x8F;
        } else { /* 0x80…0xC1, 0xF5…0xFF */
            *bad = i;
            return -1;
        }
        if (len - i - 1 < tail || b[i + 1] < lo || b[i + 1] > hi) {
            *bad = i;
            return -1;
        }
        for (size_t k = 1; k <= tail; k++) {
            if (b[i + k] < 0x80 || b[i + k] > 0xBF) {
                *bad = i;
                return -1;
            }
            cp = (cp << 6) | (b[i + k] & 0x3Fu);
        }
        out[n++] = cp;
        i += tail + 1;
    }
    return (long)n;
}

/* The UTF-8 of cp (a valid code point), written here again. */
static void ref_encode(uint32_t cp, char out[5])
{
    unsigned char *o = (unsigned char *)out;
    size_t n;
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        n = 1;
    } else if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | (cp >> 6));
        n = 2;
    } else if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | (cp >> 12));
        n = 3;
    } else {
        o[0] = (unsigned char)(0xF0 | (cp >> 18));
        n = 4;
    }
    for (size_t k = 1; k < n; k++)
        o[k] = (unsigned char)(0x80 | ((cp >> (6 * (n - 1 - k))) & 0x3F));
    out[n] = '\0';
}

static int empty_text(const lm_text *t)
{
    return !t->text && !t->vocab && !t->ids && t->n == 0 && t->V == 0;
}

static int empty_set(const train_set *s)
{
    return !s->tokens && !s->lens && !s->targets && s->n == 0;
}

/* A loaded text against the reference decoding ref (n,). */
static void check_text(const lm_text *t, const uint32_t *ref, size_t n)
{
    if (t->n != n)
        FAIL("the character count differs from the decoding");
    if (n > 0 && (!t->text || !t->vocab || !t->ids))
        FAIL("a text without its arrays");
    if (n > 0 && memcmp(t->text, ref, n * sizeof *ref) != 0)
        FAIL("the characters differ from the decoding");
    if ((n == 0) != (t->V == 0) || t->V > n)
        FAIL("vocabulary size");
    for (size_t v = 1; v < t->V; v++)
        if (t->vocab[v - 1] >= t->vocab[v])
            FAIL("vocab not strictly increasing");
    unsigned char *used = calloc(t->V ? t->V : 1, 1);
    if (!used)
        FAIL("out of memory");
    for (size_t i = 0; i < n; i++) {
        if (t->ids[i] < 0 || (size_t)t->ids[i] >= t->V)
            FAIL("an id outside the vocabulary");
        if (t->vocab[t->ids[i]] != t->text[i])
            FAIL("vocab[ids[i]] != text[i]");
        used[t->ids[i]] = 1;
    }
    for (size_t v = 0; v < t->V; v++)
        if (!used[v])
            FAIL("a vocabulary entry no character has");
    free(used);
}

/* The reader's refusal: no buffer, "f: invalid UTF-8 at byte offset K". */
static void check_refused(const lm_text *t, const char *err, const char *name, size_t bad)
{
    char want[160];
    if (!empty_text(t))
        FAIL("a refused text keeps a buffer");
    snprintf(want, sizeof want, "%s: invalid UTF-8 at byte offset %zu", name, bad);
    if (strcmp(err, want) != 0) {
        fprintf(stderr, "fuzz_lm_text: got \"%s\", want \"%s\"\n", err, want);
        FAIL("the refusal's message");
    }
}

/* Window w of s reads ids[start …] (tokens ids + 1) and, at positions
 * from `from` on, targets the next id (earlier ones −1); counts the
 * predicted positions (start + t + 1) in hits (n,) when hits is given. */
static void check_window(const train_set *s, size_t w, const int *ids, size_t n, size_t start,
                         size_t from, unsigned *hits)
{
    const size_t L = s->T;
    if (start + L + 1 > n)
        FAIL("a window past the text");
    if (s->lens[w] != (long)L)
        FAIL("a window's length");
    for (size_t t = 0; t < L; t++) {
        const int tok = s->tokens[w * L + t], tgt = s->targets[w * L + t];
        if (tok != ids[start + t] + 1)
            FAIL("a token is not the character's id + 1");
        if (t < from) {
            if (tgt != -1)
                FAIL("a target kept where an earlier window predicted");
        } else {
            if (tgt != ids[start + t + 1])
                FAIL("a target is not the next character's id");
            if (hits)
                hits[start + t + 1]++;
        }
    }
}

/* s is lm_cover's cover of ids (n,) with windows of L, at most max. */
static void check_cover(const train_set *s, const int *ids, size_t n, size_t L, size_t max)
{
    const size_t full = (n - 1) / L, rest = (n - 1) % L;
    size_t nw = full + (rest > 0);
    unsigned *hits;
    if (nw > max)
        nw = max;
    if (s->n != nw || s->T != L)
        FAIL("the cover's window count");
    if (!(hits = calloc(n, sizeof *hits)))
        FAIL("out of memory");
    for (size_t w = 0; w < nw; w++) {
        if (w < full)
            check_window(s, w, ids, n, w * L, 0, hits);
        else
            check_window(s, w, ids, n, n - 1 - L, L - rest, hits);
    }
    if (hits[0] != 0)
        FAIL("the cover predicts the first character");
    for (size_t i = 1; i < n; i++) {
        if (hits[i] > 1)
            FAIL("the cover predicts a character twice");
        if (hits[i] == 0 && nw == full + (rest > 0))
            FAIL("the cover misses a character");
    }
    free(hits);
}

static void check_task(const lm_text *t, size_t L)
{
    const size_t n = t->n, ntrain = lm_train_chars(n), nheld = n - ntrain;
    train_task task;
    char err[512] = "";
    char buf[5];
    size_t bytes = 0;
    const int rc = lm_task_build(&task, t, L, "f", err, sizeof err);
    if (ntrain != n - n / 10 || nheld > ntrain)
        FAIL("lm_train_chars");
    if (n == 0 || L == 0 || nheld < L + 1) {
        if (rc != -1)
            FAIL("a text too short for L accepted");
        if (err[0] == '\0' || !empty_set(&task.train) || !empty_set(&task.heldout) ||
            !empty_set(&task.eval) || task.vocab || task.classes)
            FAIL("a refused task without a message or with a buffer");
        return;
    }
    if (rc != 0) {
        fprintf(stderr, "fuzz_lm_text: n %zu, L %zu: %s\n", n, L, err);
        FAIL("a long enough text refused");
    }
    /* the vocabulary: <pad>, then the characters */
    if (task.kind != TASK_DATA || task.label_at != -1 || task.length != L ||
        task.V != t->V + 1 || task.C != t->V || strcmp(task.vocab[0], "<pad>") != 0)
        FAIL("the task's header");
    for (size_t v = 0; v < t->V; v++) {
        ref_encode(t->vocab[v], buf);
        if (strcmp(task.vocab[v + 1], buf) != 0 || strcmp(task.classes[v], buf) != 0)
            FAIL("a vocabulary entry is not its character's UTF-8");
    }
    /* the training windows: every start, or spaced */
    {
        const size_t starts = ntrain - L;
        const size_t stride = (starts + LM_MAX_WINDOWS - 1) / LM_MAX_WINDOWS;
        const size_t nw = (starts + stride - 1) / stride;
        if (task.train.n != nw || task.train.T != L || nw > LM_MAX_WINDOWS)
            FAIL("the training windows' count");
        for (size_t w = 0; w < nw; w++)
            check_window(&task.train, w, t->ids, ntrain, w * stride, 0, NULL);
    }
    check_cover(&task.heldout, t->ids + ntrain, nheld, L, (size_t)-1);
    check_cover(&task.eval, t->ids, ntrain, L, LM_MAX_EVAL_WINDOWS);
    /* lm_task_bytes: at least the tokens and targets it holds */
    if (lm_task_bytes(n, L, &bytes) != 0 ||
        bytes < (task.train.n + task.heldout.n + task.eval.n) * L * 2 * sizeof(int))
        FAIL("lm_task_bytes counts fewer bytes than the windows hold");
    /* the unigram baseline on the held-out targets */
    {
        const double ppl = lm_unigram_perplexity(t->ids, ntrain, task.heldout.targets,
                                                 task.heldout.n * L, t->V);
        if (!(ppl >= 1.0 - 1e-9 && ppl <= (double)(ntrain + t->V) * (1.0 + 1e-9)))
            FAIL("the unigram perplexity outside [1, ntrain + V]");
    }
    train_task_free(&task);
    /* a cover cut short keeps its first windows */
    for (size_t max = 1; max <= 3; max++) {
        train_set s;
        if (lm_cover(&s, t->ids, n, L, max, err, sizeof err) != 0)
            FAIL("lm_cover refused");
        check_cover(&s, t->ids, n, L, max);
        train_set_free(&s);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const size_t lengths[] = {0, 1, 2, 5, 32};
    uint32_t *ref = malloc((size ? size : 1) * sizeof *ref);
    size_t bad = 0;
    lm_text t, f;
    char err[512] = "";
    long n;
    if (!ref)
        FAIL("out of memory");
    n = ref_decode(data, size, ref, &bad);
    if (lm_text_from_bytes(&t, (const char *)data, size, "f", err, sizeof err) == 0) {
        if (n < 0) {
            fprintf(stderr, "fuzz_lm_text: byte %zu is not UTF-8\n", bad);
            FAIL("malformed UTF-8 accepted");
        }
        check_text(&t, ref, (size_t)n);
    } else {
        if (n >= 0)
            FAIL("well-formed UTF-8 refused");
        check_refused(&t, err, "f", bad);
    }
    /* the same from a file */
    const char *path = fuzz_file(0, data, size);
    if (path) {
        err[0] = '\0';
        if (lm_text_read(&f, path, err, sizeof err) == 0) {
            if (n < 0)
                FAIL("malformed UTF-8 accepted from a file");
            check_text(&f, ref, (size_t)n);
            lm_text_free(&f);
        } else {
            if (n >= 0)
                FAIL("well-formed UTF-8 refused from a file");
            check_refused(&f, err, path, bad);
        }
    }
    if (n >= 0) {
        for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++)
            if (lengths[k] <= 1 || lengths[k] <= (size_t)n)
                check_task(&t, lengths[k]);
        lm_text_free(&t);
    }
    free(ref);
    return 0;
}
