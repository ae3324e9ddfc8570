/* fuzz_score.c — libFuzzer harness for `attn score --input` (SPEC.md §13;
 * src/cmd/score/): the bytes are the JSON file of queries, keys, values,
 * valid_lens and state_dict. Each input runs in-process four ways: additive
 * and dot with --json - (every number written), additive alone with
 * --explain (every step printed), dot alone with --score-hiddens refused or
 * accepted as the file decides, the exercise's general score (W.weight
 * from the file's state_dict or drawn) with --explain and --json -, and
 * the sum score (equal sizes, or refused) with --explain.
 * --max-mem 1M: a huge shape is refused up front. Every exit status must be
 * 0, 1 or 2.
 *
 * The corpus: tests/fuzz/corpus/score/ (the section's cells, a state_dict
 * of each kind, 2-D valid_lens, and broken files); the dictionary
 * tests/fuzz/score.dict.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "commands.h"
#include "fuzz.h"

static void fuzz_run(char **argv, int argc)
{
    cli_set_command("score");
    int status = cmd_score(argc, argv);
    fflush(stdout);
    clearerr(stdout);
    if (status < 0 || status > 2)
        abort(); /* SPEC.md §2: exit status 0, 1 or 2 */
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(0, data, size);
    if (!path)
        return -1;
    char *both[] = {"score", "--input", (char *)path, "--json", "-", "--max-mem", "1M", NULL};
    char *additive[] = {"score", "--input", (char *)path, "--score", "additive", "--explain",
                        "--max-mem", "1M", NULL};
    char *dot[] = {"score", "--input", (char *)path, "--score", "dot", "--seed", "7",
                   "--max-mem", "1M", NULL};
    char *general[] = {"score", "--input", (char *)path, "--score", "general", "--explain",
                       "--json", "-", "--max-mem", "1M", NULL};
    fuzz_run(both, 7);
    fuzz_run(additive, 8);
    fuzz_run(dot, 9);
    char *sum[] = {"score", "--input", (char *)path, "--score", "sum", "--explain", "--max-mem",
                   "1M", NULL};
    fuzz_run(general, 10);
    fuzz_run(sum, 8);
    return 0;
}
