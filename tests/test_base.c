/* test_base.c — the base layer: the UTF-8 decoder (base/utf8.h) on valid
 * characters of each length and every kind of malformed input, consumed
 * one byte at a time without reading past the NUL; float_alloc's overflow
 * check; the --max-mem sentence in its four forms; the free cores counting
 * two spinning processes. */
#define _POSIX_C_SOURCE 200809L /* fork, kill, nanosleep */
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "checked.h"
#include "cores.h"
#include "utf8.h"

#define X UTF8_INVALID

static void test_float_alloc(void)
{
    float *p = float_alloc(3);
    CHECK(p != NULL);
    if (p) {
        p[0] = p[2] = 1.5f; /* (3,) writable: ASan checks the size */
        CHECK(p[0] + p[2] == 3.0f);
    }
    free(p);
    p = float_alloc(0); /* one float, never NULL */
    CHECK(p != NULL);
    free(p);
    CHECK(float_alloc(SIZE_MAX / sizeof(float) + 1) == NULL); /* count × 4 overflows */
    CHECK(float_alloc(SIZE_MAX) == NULL);
}

static void test_mem_limit(void)
{
    char buf[256];
    format_mem_limit(buf, sizeof buf, "--steps 100000 --dim 100000", 0,
                     (size_t)100000 * 100000 * 4, 0, (size_t)4 << 30, NULL);
    CHECK(strcmp(buf, "--steps 100000 --dim 100000 needs about 37.3 GiB, more than "
                      "--max-mem 4 GiB") == 0);
    format_mem_limit(buf, sizeof buf, "batch 8", 0, 0, 1, 1024, "--stream helps");
    CHECK(strcmp(buf, "batch 8 needs more memory than this machine can address, more than "
                      "--max-mem 1 KiB; --stream helps") == 0);
    format_mem_limit(buf, sizeof buf, "the inputs and weights", 1, 173056, 0, 1024, NULL);
    CHECK(strcmp(buf, "the inputs and weights need about 169 KiB, more than --max-mem 1 KiB") ==
          0);
    format_mem_limit(buf, sizeof buf, "the inputs and weights", 1, 5, 1, (size_t)4 << 30, NULL);
    CHECK(strcmp(buf, "the inputs and weights need more than this machine can address, more "
                      "than --max-mem 4 GiB") == 0);
}

static void test_utf8(void)
{
    /* Each case: input, the code points expected, how many, and the bytes
     * each one consumed. */
    static const struct {
        const char *s;
        uint32_t cps[5];
        int step[5];
        int n;
    } cases[] = {
        {"", {0}, {0}, 0},
        {"a\x7F", {'a', 0x7F}, {1, 1}, 2},
        {"\xC2\x80\xDF\xBF", {0x80, 0x7FF}, {2, 2}, 2},               /* 2 bytes */
        {"\xE0\xA0\x80\xEF\xBF\xBF", {0x800, 0xFFFF}, {3, 3}, 2},     /* 3 bytes */
        {"\xE8\x8B\xB9\xE6\x9E\x9C", {0x82F9, 0x679C}, {3, 3}, 2},    /* 苹果 */
        {"\xF0\x90\x80\x80\xF4\x8F\xBF\xBF", {0x10000, 0x10FFFF}, {4, 4}, 2},
        {"\xEF\xBF\xBD", {0xFFFD}, {3}, 1},                           /* U+FFFD is valid */
        {"\xED\x9F\xBF\xEE\x80\x80", {0xD7FF, 0xE000}, {3, 3}, 2},    /* around surrogates */
        {"\x80\xBFz", {X, X, 'z'}, {1, 1, 1}, 3},                     /* stray continuations */
        {"\xF8\x88\x80\x80\x80", {X, X, X, X, X}, {1, 1, 1, 1, 1}, 5}, /* 5-byte form */
        {"\xFF\xFE", {X, X}, {1, 1}, 2},
        {"\xC3", {X}, {1}, 1},                                        /* truncated at the end */
        {"\xE2\x82", {X, X}, {1, 1}, 2},
        {"\xE2\x82z", {X, X, 'z'}, {1, 1, 1}, 3},                     /* truncated before z */
        {"\xF0\x9F\x98z", {X, X, X, 'z'}, {1, 1, 1, 1}, 4},
        {"\xC3\x28", {X, '('}, {1, 1}, 2},                            /* lead, then ASCII */
        {"\xC0\xAF", {X, X}, {1, 1}, 2},                              /* overlong '/' */
        {"\xC1\xBF", {X, X}, {1, 1}, 2},
        {"\xE0\x80\x80", {X, X, X}, {1, 1, 1}, 3},                    /* overlong NUL */
        {"\xE0\x9F\xBF", {X, X, X}, {1, 1, 1}, 3},                    /* overlong U+07FF */
        {"\xF0\x8F\xBF\xBF", {X, X, X, X}, {1, 1, 1, 1}, 4},          /* overlong U+FFFF */
        {"\xED\xA0\x80", {X, X, X}, {1, 1, 1}, 3},                    /* surrogate D800 */
        {"\xED\xBF\xBF", {X, X, X}, {1, 1, 1}, 3},                    /* surrogate DFFF */
        {"\xF4\x90\x80\x80", {X, X, X, X}, {1, 1, 1, 1}, 4},          /* above U+10FFFF */
        {"\xF7\xBF\xBF\xBF", {X, X, X, X}, {1, 1, 1, 1}, 4},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const char *s = cases[k].s;
        for (int i = 0; i < cases[k].n; i++) {
            const char *before = s;
            CHECK_INT(utf8_next(&s), cases[k].cps[i]);
            CHECK_INT(s - before, cases[k].step[i]);
        }
        /* the end: 0, and the NUL is not consumed */
        const char *end = s;
        CHECK_INT(utf8_next(&s), 0);
        CHECK(s == end && *s == '\0');
        CHECK_INT(s - cases[k].s, (long long)strlen(cases[k].s));
    }
    /* A NUL inside a sequence ends it: nothing past the NUL is read. */
    static const char cut[] = {(char)0xE2, (char)0x82, 0, (char)0xAC, 0};
    const char *s = cut;
    CHECK_INT(utf8_next(&s), X);
    CHECK_INT(utf8_next(&s), X);
    CHECK(s == cut + 2);
    CHECK_INT(utf8_next(&s), 0);
    CHECK(s == cut + 2);
}

/* utf8_is_cjk: Chinese and Japanese characters (Han, kana, CJK
 * punctuation, fullwidth forms), each block's ends; not the ideographic
 * space, Hangul, Latin, U+FFFD or a malformed byte. */
static void test_utf8_is_cjk(void)
{
    static const uint32_t yes[] = {0x6211 /* 我 */, 0x4E00, 0x9FFF, 0x3400, 0x4DBF, 0x3001 /* 、 */,
                                   0x3002 /* 。 */, 0x3042 /* あ */, 0x30AB /* カ */, 0x30FF,
                                   0xF900, 0xFF0C /* ， */, 0xFF01, 0xFF60, 0x20000, 0x3FFFD};
    static const uint32_t no[] = {'a', ' ', 0x3000 /* ideographic space */, 0x33FF, 0x4DC0,
                                  0xA000, 0xAC00 /* 가 */, 0xD7A3, 0xFF00, 0xFF61 /* ｡ */,
                                  0xFFFD, 0x3FFFE, UTF8_INVALID, 0};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        CHECK_INT(utf8_is_cjk(yes[i]), 1);
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        CHECK_INT(utf8_is_cjk(no[i]), 0);
}

/* cores_free: at least 1, at most `most`; two processes spinning are two
 * of the online CPUs taken (they are runnable the whole time, on a core
 * or waiting for one), whatever else the machine runs. */
static void test_cores_free(void)
{
    pid_t child[2];
    const struct timespec settle = {0, 100 * 1000 * 1000};
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    CHECK_INT(cores_free(0), 1);
    CHECK_INT(cores_free(1), 1);
    CHECK(cores_free(4) >= 1 && cores_free(4) <= 4);
    for (int i = 0; i < 2; i++) {
        child[i] = fork();
        if (child[i] == 0)
            for (volatile unsigned long spin = 0;; spin++)
                ;
        CHECK(child[i] > 0);
    }
    nanosleep(&settle, NULL);
    /* at most the online CPUs less the two (and at least 1) */
    CHECK(cores_free(1000) <= (online > 3 ? online - 2 : 1));
    CHECK(cores_free(2) >= 1 && cores_free(2) <= 2);
    if (online <= 3)
        CHECK_INT(cores_free(2), 1);
    for (int i = 0; i < 2; i++)
        if (child[i] > 0) {
            kill(child[i], SIGKILL);
            waitpid(child[i], NULL, 0);
        }
}

int main(void)
{
    test_cores_free();
    test_utf8();
    test_utf8_is_cjk();
    test_float_alloc();
    test_mem_limit();
    return check_summary("test_base");
}
