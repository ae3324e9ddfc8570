/* check.h — the few assertions attn's C tests use.
 *
 * Each failed check prints file:line and what differed, and is counted;
 * a test program ends with `return check_summary("name");`, which prints
 * "name: N checks, M failed" and returns 1 when any check failed, so the
 * exit status always tells the truth.
 */
#ifndef ATTN_CHECK_H
#define ATTN_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int check_count, check_failed;

#define CHECK(cond)                                                        \
    do {                                                                   \
        check_count++;                                                     \
        if (!(cond)) {                                                     \
            check_failed++;                                                \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,         \
                    __LINE__, #cond);                                      \
        }                                                                  \
    } while (0)

/* |got - want| <= atol + rtol * |want|, as llm.c's tests compare. */
#define CHECK_NEAR(got, want, atol, rtol)                                  \
    do {                                                                   \
        double check_g_ = (double)(got), check_w_ = (double)(want);        \
        check_count++;                                                     \
        if (!(fabs(check_g_ - check_w_) <= (atol) + (rtol) * fabs(check_w_))) { \
            check_failed++;                                                \
            fprintf(stderr, "%s:%d: %s = %.9g, want %.9g (diff %.3g)\n",   \
                    __FILE__, __LINE__, #got, check_g_, check_w_,          \
                    fabs(check_g_ - check_w_));                            \
        }                                                                  \
    } while (0)

#define CHECK_INT(got, want)                                               \
    do {                                                                   \
        long long check_g_ = (long long)(got), check_w_ = (long long)(want); \
        check_count++;                                                     \
        if (check_g_ != check_w_) {                                        \
            check_failed++;                                                \
            fprintf(stderr, "%s:%d: %s = %lld, want %lld\n", __FILE__,     \
                    __LINE__, #got, check_g_, check_w_);                   \
        }                                                                  \
    } while (0)

/* The whole file at path, NUL-terminated (*size, when not NULL, gets its
 * length without the NUL); NULL when it cannot be read. The caller frees. */
static inline char *check_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)n + 1)) != NULL) {
        if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        } else {
            buf[n] = '\0';
            if (size)
                *size = (size_t)n;
        }
    }
    fclose(f);
    return buf;
}

static inline int check_summary(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, check_count, check_failed);
    return check_failed ? 1 : 0;
}

#endif
