/* fuzz.h — what the harnesses of tests/fuzz share.
 *
 * A harness is one file, fuzz_NAME.c, listed by one line in
 * tests/fuzz/harnesses. It defines libFuzzer's two entry points:
 *
 *   LLVMFuzzerInitialize  once, before the first input (set-up; may be
 *                         empty but must exist: the replay driver calls it)
 *   LLVMFuzzerTestOneInput  one input; 0, or -1 for an input it skips
 *                         (libFuzzer then keeps it out of the corpus)
 *
 * and checks what it can beyond the sanitizers (an exit status out of
 * 0-2, a wrong round trip) with abort(). The same file is linked two
 * ways: with libFuzzer in build-fuzz/ (tests/fuzz/meson.build, clang), and
 * with tests/test_fuzz_regressions.c in every build, which replays the
 * harness's seed corpus and its saved regressions through it in each
 * `meson test`.
 *
 * Header-only: static inline functions for each includer.
 */
#ifndef ATTN_FUZZ_H
#define ATTN_FUZZ_H

#include <fcntl.h>
#include <string.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_FILES 4

/* A file holding data[size], as a path that works wherever a file name
 * does ("/proc/self/fd/N"): a temporary file unlinked at once, so that
 * nothing is left behind however the process ends (libFuzzer leaves with
 * _Exit). slot (0 … FUZZ_FILES-1) picks one of the files, rewritten on
 * each call. NULL when the file cannot be made. */
static inline const char *fuzz_file(int slot, const void *data, size_t size)
{
    static int fd[FUZZ_FILES] = {-1, -1, -1, -1};
    static char path[FUZZ_FILES][32];
    if (slot < 0 || slot >= FUZZ_FILES)
        return NULL;
    if (fd[slot] < 0) {
        char name[] = "/tmp/attn-fuzz-XXXXXX";
        fd[slot] = mkstemp(name);
        if (fd[slot] < 0)
            return NULL;
        unlink(name);
        snprintf(path[slot], sizeof path[slot], "/proc/self/fd/%d", fd[slot]);
    }
    if (ftruncate(fd[slot], 0) != 0 ||
        (size > 0 && pwrite(fd[slot], data, size, 0) != (ssize_t)size))
        return NULL;
    return path[slot];
}

/* Standard input and output on /dev/null, for harnesses that run a
 * command in-process. The commands' error lines still go to stderr
 * (scripts/fuzz silences them with -close_fd_mask=3; libFuzzer keeps a
 * copy of stderr for its own and the sanitizers' reports). */
static inline void fuzz_quiet(void)
{
    int fd = open("/dev/null", O_RDWR);
    if (fd < 0) {
        perror("fuzz: /dev/null");
        abort();
    }
    dup2(fd, 0);
    dup2(fd, 1);
    close(fd);
    setenv("NO_COLOR", "1", 0);
}

/* The whole file at path, NUL-terminated, *size its length in bytes
 * (size may be NULL); NULL when it cannot be read. The caller frees. */
static inline char *fuzz_read(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n = 0;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = calloc(1, (size_t)n + 1)) != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf && size)
        *size = (size_t)n;
    fclose(f);
    return buf;
}

/* A small training set of token targets over the words a, b, c, with a
 * held-out part (SPEC.md §9's --data). */
static const char fuzz_d_json[] =
    "{\"sequences\": [[\"a\", \"b\", \"c\"], [\"c\", \"b\", \"a\"], [\"b\", \"c\"]],\n"
    " \"targets\": [[\"c\", \"b\", \"a\"], [\"a\", \"b\", \"c\"], [\"c\", null]],\n"
    " \"heldout\": {\"sequences\": [[\"a\", \"c\"]], \"targets\": [[\"c\", \"a\"]]}}\n";

/* The model file attn train saves after one step on fuzz_d_json (d 4, 2
 * heads, with biases and AddNorm), made in a temporary folder by the
 * command itself, so that it has whatever a saved model has today. The
 * caller frees; aborts when attn train fails. */
static inline char *fuzz_saved_model(int (*train)(int, char **))
{
    char dir[] = "/tmp/attn-fuzz-model-XXXXXX", data[64], model[64], *bytes;
    FILE *f;
    if (!mkdtemp(dir))
        abort();
    snprintf(data, sizeof data, "%s/d.json", dir);
    snprintf(model, sizeof model, "%s/m.json", dir);
    char *argv[] = {"train", "--data", data, "--hiddens", "4", "--heads", "2", "--steps", "1",
                    "--bias", "--addnorm", "--threads", "1", "--save", model, NULL};
    if (!(f = fopen(data, "w")) || fputs(fuzz_d_json, f) < 0 || fclose(f) != 0 ||
        train((int)(sizeof argv / sizeof argv[0]) - 1, argv) != 0 ||
        !(bytes = fuzz_read(model, NULL))) {
        fprintf(stderr, "fuzz: attn train --save %s failed\n", model);
        abort();
    }
    unlink(data);
    unlink(model);
    rmdir(dir);
    return bytes;
}

#endif
