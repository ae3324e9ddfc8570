/* test_lm.c — attn train --task lm's pieces (SPEC.md §16): UTF-8 written
 * back (base/utf8.h), the text, its vocabulary and windows
 * (io/lm_text.h), the unigram baseline by hand, and sampling: its
 * distribution, its seed, and at a very low temperature the greedy
 * decoding (nn/encoder/encoder_lm.h). */
#include <string.h>

#include "check.h"
#include "encoder_lm.h"
#include "fmath.h"
#include "lm_text.h"
#include "utf8.h"

static void test_utf8_write(void)
{
    char out[5];
    CHECK_INT(utf8_write(0x41, out), 1);
    CHECK(strcmp(out, "A") == 0);
    CHECK_INT(utf8_write(0xE9, out), 2); /* é */
    CHECK(strcmp(out, "\xC3\xA9") == 0);
    CHECK_INT(utf8_write(0x82F9, out), 3); /* 苹 */
    CHECK(strcmp(out, "\xE8\x8B\xB9") == 0);
    CHECK_INT(utf8_write(0x1F600, out), 4);
    CHECK(strcmp(out, "\xF0\x9F\x98\x80") == 0);
    CHECK_INT(utf8_write(0xD800, out), 0); /* a surrogate */
    CHECK(out[0] == '\0');
    CHECK_INT(utf8_write(0x110000, out), 0);
    /* every code point written reads back */
    for (uint32_t cp = 1; cp < 0x110000; cp += 97) {
        const char *s = out;
        if (utf8_write(cp, out) == 0)
            continue;
        if (utf8_next(&s) != cp || *s != '\0') {
            CHECK(!"round trip");
            break;
        }
    }
}

static void test_text(void)
{
    lm_text t;
    char err[256];
    /* "b苹a\nab": sorted code points \n a b 苹 */
    static const char text[] = "b\xE8\x8B\xB9" "a\nab";
    CHECK_INT(lm_text_from_bytes(&t, text, sizeof text - 1, "t.txt", err, sizeof err), 0);
    CHECK_INT(t.n, 6);
    CHECK_INT(t.V, 4);
    CHECK_INT(t.vocab[0], '\n');
    CHECK_INT(t.vocab[1], 'a');
    CHECK_INT(t.vocab[2], 'b');
    CHECK_INT(t.vocab[3], 0x82F9);
    static const int ids[] = {2, 3, 1, 0, 1, 2};
    for (size_t i = 0; i < 6; i++)
        CHECK_INT(t.ids[i], ids[i]);
    lm_text_free(&t);

    /* the byte offset of the first byte that is not UTF-8 */
    CHECK_INT(lm_text_from_bytes(&t, "ab\xFF" "cd", 5, "t.txt", err, sizeof err), -1);
    CHECK(strcmp(err, "t.txt: invalid UTF-8 at byte offset 2") == 0);
    CHECK_INT(lm_text_from_bytes(&t, "a\xC3\xA9\xC3", 4, "t.txt", err, sizeof err), -1);
    CHECK(strcmp(err, "t.txt: invalid UTF-8 at byte offset 3") == 0); /* truncated */
    CHECK_INT(lm_text_from_bytes(&t, "a\0b", 3, "t.txt", err, sizeof err), -1);
    CHECK(strcmp(err, "t.txt: invalid UTF-8 at byte offset 1") == 0); /* a NUL */
    CHECK_INT(lm_text_from_bytes(&t, "\xED\xA0\x80", 3, "t.txt", err, sizeof err), -1);
    CHECK(strcmp(err, "t.txt: invalid UTF-8 at byte offset 0") == 0); /* a surrogate */
    CHECK_INT(lm_text_from_bytes(&t, "", 0, "t.txt", err, sizeof err), 0);
    CHECK_INT(t.n, 0);
    lm_text_free(&t);
}

/* The cover of 8 characters by windows of 3: 0…2 → 1…3, 3…5 → 4…6, then
 * 4…6 predicting only 7; every character from the second once. */
static void test_cover(void)
{
    static const int ids[] = {10, 11, 12, 13, 14, 15, 16, 17};
    train_set s;
    char err[256];
    int seen[8] = {0};
    CHECK_INT(lm_cover(&s, ids, 8, 3, (size_t)-1, err, sizeof err), 0);
    CHECK_INT(s.n, 3);
    CHECK_INT(s.T, 3);
    static const int tok[] = {11, 12, 13, 14, 15, 16, 15, 16, 17};
    static const int tgt[] = {11, 12, 13, 14, 15, 16, -1, -1, 17};
    for (size_t i = 0; i < 9; i++) {
        CHECK_INT(s.tokens[i], tok[i]);
        CHECK_INT(s.targets[i], tgt[i]);
        if (s.targets[i] >= 0)
            seen[s.targets[i] - 10]++;
    }
    CHECK_INT(seen[0], 0);
    for (size_t i = 1; i < 8; i++)
        CHECK_INT(seen[i], 1);
    train_set_free(&s);
    /* (n − 1) a multiple of L: no extra window; a cap keeps the first */
    CHECK_INT(lm_cover(&s, ids, 7, 3, (size_t)-1, err, sizeof err), 0);
    CHECK_INT(s.n, 2);
    train_set_free(&s);
    CHECK_INT(lm_cover(&s, ids, 8, 3, 1, err, sizeof err), 0);
    CHECK_INT(s.n, 1);
    train_set_free(&s);
}

static void test_task(void)
{
    char buf[41], err[256];
    lm_text t;
    train_task task;
    for (size_t i = 0; i < 40; i++)
        buf[i] = (char)('a' + i % 5);
    buf[40] = '\0';
    CHECK_INT(lm_text_from_bytes(&t, buf, 40, "t.txt", err, sizeof err), 0);
    /* 36 train, 4 held out: L 3 fits (4 = L + 1), L 4 does not */
    CHECK_INT(lm_train_chars(40), 36);
    CHECK_INT(lm_task_build(&task, &t, 3, "t.txt", err, sizeof err), 0);
    CHECK_INT(task.V, 6);
    CHECK_INT(task.C, 5);
    CHECK(strcmp(task.vocab[0], "<pad>") == 0);
    CHECK(strcmp(task.vocab[1], "a") == 0 && strcmp(task.classes[0], "a") == 0);
    CHECK_INT(task.train.n, 33); /* every start 0 … 32 */
    CHECK_INT(task.heldout.n, 1);
    CHECK_INT(task.eval.n, 12); /* 35 targets: 11 whole windows and one more */
    {   /* the estimate covers what was cut: tokens and targets of every window */
        size_t est;
        CHECK_INT(lm_task_bytes(40, 3, &est), 0);
        CHECK(est >= (task.train.n + task.heldout.n + task.eval.n) * 3 * 2 * sizeof(int));
        CHECK_INT(lm_task_bytes((size_t)-1 / 2, 512, &est), -1); /* overflows */
    }
    CHECK_INT(task.train.tokens[5 * 3], 1 + 0); /* window 5 starts at "a" (5 % 5) */
    CHECK_INT(task.train.targets[5 * 3 + 2], 3); /* … and predicts "d" at its end */
    train_task_free(&task);
    CHECK_INT(lm_task_build(&task, &t, 4, "t.txt", err, sizeof err), -1);
    CHECK(strcmp(err, "t.txt: 40 characters: too short for --length 4 (the training and the "
                      "held-out part (the last 10%) each need 5)") == 0);
    /* --length 0 is refused, not divided by (fuzz_lm_text: lm_cover's (n − 1) / L) */
    memset(&task, 0xA5, sizeof task);
    CHECK_INT(lm_task_build(&task, &t, 0, "t.txt", err, sizeof err), -1);
    CHECK(strcmp(err, "t.txt: --length 0: a window needs at least one character") == 0);
    CHECK(task.vocab == NULL && task.train.tokens == NULL && task.heldout.tokens == NULL);
    lm_text_free(&t);
    CHECK_INT(lm_text_from_bytes(&t, "", 0, "e.txt", err, sizeof err), 0);
    CHECK_INT(lm_task_build(&task, &t, 3, "e.txt", err, sizeof err), -1);
    CHECK(strcmp(err, "e.txt: empty text") == 0);
    lm_text_free(&t);
}

/* Train "aab", V 3 (a b c): p(a) = (2+1)/(3+3) = 1/2, p(c) = (0+1)/6 = 1/6;
 * over the targets c, a: exp(−(ln 1/6 + ln 1/2)/2) = √12. */
static void test_unigram(void)
{
    static const int train[] = {0, 0, 1};
    static const int targets[] = {2, -1, 0};
    CHECK_NEAR(lm_unigram_perplexity(train, 3, targets, 3, 3), 3.4641016151377544, 1e-12, 0);
    /* a target seen as often as any: uniform counts give V */
    static const int even[] = {0, 1, 2};
    CHECK_NEAR(lm_unigram_perplexity(even, 3, even, 3, 3), 3.0, 1e-12, 0);
}

static void test_pick(void)
{
    const float z[2] = {0.0f, (float)fm_log(3.0)}; /* softmax: 1/4, 3/4 */
    rng r;
    size_t ones = 0, n = 40000;
    rng_seed(&r, 7);
    for (size_t i = 0; i < n; i++)
        ones += lm_pick(z, 2, 1.0, &r);
    CHECK_NEAR((double)ones / (double)n, 0.75, 0.01, 0);
    /* temperature 2: ∝ 1, √3: 0.634 */
    ones = 0;
    for (size_t i = 0; i < n; i++)
        ones += lm_pick(z, 2, 2.0, &r);
    CHECK_NEAR((double)ones / (double)n, 1.7320508 / 2.7320508, 0.01, 0);
    /* a very low temperature: always the argmax */
    ones = 0;
    for (size_t i = 0; i < 1000; i++)
        ones += lm_pick(z, 2, 1e-9, &r);
    CHECK_INT(ones, 1000);
}

/* A small causal model with random weights: greedy decoding equals
 * sampling at a very low temperature; the same seed, the same text; its
 * first character is the argmax of the forward pass on the prompt. */
static void test_generate(void)
{
    tmodel m;
    tcache c;
    char err[256];
    tmodel_config cfg = {.vocab = 9, .classes = 8, .hiddens = 8, .heads = 2, .posenc = 1,
                         .causal = 1, .layers = 2, .ffn = 8};
    int prompt[2] = {3, 5}, greedy[60], cold[60], a[60], b[60];
    CHECK_INT(tmodel_alloc(&m, &cfg, err, sizeof err), 0);
    tmodel_init(&m, 11);
    CHECK_INT(lm_generate(&m, prompt, 2, 6, 60, 0.0, 1, greedy, err, sizeof err), 0);
    CHECK_INT(lm_generate(&m, prompt, 2, 6, 60, 1e-9, 1, cold, err, sizeof err), 0);
    CHECK(memcmp(greedy, cold, sizeof greedy) == 0);
    CHECK_INT(lm_generate(&m, prompt, 2, 6, 60, 1.0, 5, a, err, sizeof err), 0);
    CHECK_INT(lm_generate(&m, prompt, 2, 6, 60, 1.0, 5, b, err, sizeof err), 0);
    CHECK(memcmp(a, b, sizeof a) == 0);
    CHECK(memcmp(a, greedy, sizeof a) != 0); /* temperature 1 is not greedy */
    for (size_t i = 0; i < 60; i++)
        CHECK(greedy[i] >= 0 && greedy[i] < 8);
    CHECK_INT(tcache_alloc(&c, &m, 1, 6, err, sizeof err), 0);
    CHECK_INT(tmodel_forward(&m, &c, prompt, NULL, 1, 2, NULL, err, sizeof err), 0);
    CHECK_INT(lm_argmax(c.logits + 1 * 8, 8), greedy[0]);
    tcache_free(&c);
    tmodel_free(&m);
}

int main(void)
{
    test_utf8_write();
    test_text();
    test_cover();
    test_task();
    test_unigram();
    test_pick();
    test_generate();
    return check_summary("test_lm");
}
