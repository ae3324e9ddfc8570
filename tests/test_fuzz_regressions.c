/* test_fuzz_regressions.c — a fuzz harness (tests/fuzz/fuzz_NAME.c)
 * without libFuzzer: its seed corpus and the inputs the fuzzers found
 * problems with, replayed in every build by meson test.
 *
 * usage: test_fuzz_NAME REGRESSIONS NAME [CORPUS]
 *
 * Linked with one harness (tests/meson.build, one program per line of
 * tests/fuzz/harnesses): calls its LLVMFuzzerInitialize once, then
 * LLVMFuzzerTestOneInput on every file REGRESSIONS/NAME-* and every file
 * of CORPUS (when there is one), in name order. A harness checks what it promises with
 * abort(), and build-asan's sanitizers stop at their first report
 * (-fno-sanitize-recover=all), so a signal or a non-zero exit fails the
 * test; the file being replayed is the last one named on stderr.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz/fuzz.h"

static int by_name(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Replay the files of dir whose names start with prefix; their number,
 * or -1 when dir cannot be read. A harness without seeds has no corpus
 * folder (git keeps no empty one): 0 when missing is 1. */
static long replay_dir(const char *dir, const char *prefix, int missing, FILE *log)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL, path[4096];
    size_t n = 0, cap = 0, i;
    if (!d) {
        fprintf(log, "cannot read %s\n", dir);
        return missing ? 0 : -1;
    }
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        if (n == cap) {
            char **nn = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *nn);
            if (!nn)
                abort();
            names = nn;
        }
        if (!(names[n++] = strdup(e->d_name)))
            abort();
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof names[0], by_name);
    for (i = 0; i < n; i++) {
        size_t size = 0;
        char *data;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        fprintf(log, "%s\n", path);
        fflush(log);
        if (!(data = fuzz_read(path, &size))) {
            fprintf(log, "cannot read %s\n", path);
            abort();
        }
        LLVMFuzzerTestOneInput((const uint8_t *)data, size);
        free(data);
        free(names[i]);
    }
    free(names);
    return (long)n;
}

int main(int argc, char **argv)
{
    char prefix[256];
    long nreg, ncorpus = 0;
    FILE *log = stderr;

    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: test_fuzz_NAME REGRESSIONS NAME [CORPUS]\n");
        return 2;
    }
    /* No font is looked up, whatever the machine has: what is checked
     * (no crash, exit 0-2) must not depend on the fonts installed. */
    unsetenv("ATTN_FONT");
    setenv("ATTN_FONT_SEARCH", "", 1);
    setenv("OMP_NUM_THREADS", "1", 1);
    LLVMFuzzerInitialize(&argc, &argv);
    snprintf(prefix, sizeof prefix, "%s-", argv[2]);
    nreg = replay_dir(argv[1], prefix, 0, log);
    if (argc == 4)
        ncorpus = replay_dir(argv[3], "", 1, log);
    if (nreg < 0 || ncorpus < 0)
        return 1;
    fprintf(log, "fuzz_%s: %ld regressions and %ld corpus inputs replayed\n", argv[2], nreg,
            ncorpus);
    return 0;
}
