/* fuzz_heatmap.c — libFuzzer harness for attn heatmap's input: the JSON
 * tensor and --path.
 *
 * The input is a path and a JSON text: when it starts with '$', its first
 * line (at most 200 bytes) is --path and the rest the JSON; otherwise all
 * of it is the JSON, read without --path and once more with
 * --path $.attention_weights. Each is run in-process as main() would run
 * `attn heatmap FILE [--path P]`, printing the panels (on /dev/null) and
 * writing --json to standard output, and once with --softmax (each row
 * softmaxed); --max-mem keeps every run small. A
 * sanitizer report, a crash or a leak is a finding, and so is an exit
 * status other than 0, 1 or 2 (SPEC.md §2).
 *
 * tests/test_fuzz_regressions.c replays its corpus and regressions
 * (tests/fuzz/regressions/heatmap-*) through it in every meson test.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "fuzz.h"

#define PATH_MAX_BYTES 200

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet();
    cli_set_command("heatmap");
    return 0;
}

/* attn heatmap FILE [--path PATH] [--json -] [--softmax]: its status
 * checked. */
static void fuzz_run(const char *file, const char *path, int json, int softmax)
{
    char *argv[] = {"heatmap", (char *)file, "--max-mem", "64M", "--color", "always", NULL,
                    NULL, NULL, NULL, NULL, NULL};
    int argc = 6;
    if (softmax)
        argv[argc++] = "--softmax";
    if (path) {
        argv[argc++] = "--path";
        argv[argc++] = (char *)path;
    }
    if (json) {
        argv[argc++] = "--json";
        argv[argc++] = "-";
    }
    int status = cmd_heatmap(argc, argv);
    fflush(stdout);
    clearerr(stdout);
    if (status < 0 || status > 2)
        abort(); /* SPEC.md §2: exit status 0, 1 or 2 */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[PATH_MAX_BYTES + 1];
    const char *file;
    const uint8_t *nl;

    if (size > 0 && data[0] == '$' &&
        (nl = memchr(data, '\n', size < PATH_MAX_BYTES ? size : PATH_MAX_BYTES)) != NULL) {
        size_t n = (size_t)(nl - data);
        memcpy(path, data, n);
        path[n] = '\0';
        if (memchr(path, '\0', n))
            return -1; /* a NUL in an argument: not a command line */
        if ((file = fuzz_file(0, nl + 1, size - n - 1)) == NULL)
            return -1;
        fuzz_run(file, path, 0, 0);
        fuzz_run(file, path, 1, 0);
        fuzz_run(file, path, 1, 1);
        return 0;
    }
    if ((file = fuzz_file(0, data, size)) == NULL)
        return -1;
    fuzz_run(file, NULL, 0, 0);
    fuzz_run(file, NULL, 1, 0);
    fuzz_run(file, NULL, 1, 1);
    fuzz_run(file, "$.attention_weights", 1, 0);
    return 0;
}
