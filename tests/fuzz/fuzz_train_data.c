/* fuzz_train_data.c — libFuzzer harness for attn train's training data
 * (--data FILE, SPEC.md §9; src/io/train_data.c).
 *
 * The bytes are a --data file, loaded three ways:
 *   1. train_data_load with the vocabulary built from the data;
 *   2. train_data_load with the fixed vocabulary and classes of a saved
 *      model (<pad> a b c, as --load gives them): a token or a target
 *      outside them must be refused;
 *   3. when (1) loads and the set is small, `attn train --data FILE
 *      --steps 1 --hiddens 4 --heads 2` in-process, and with --load of
 *      that saved model: the batches, the held-out evaluation, the probes
 *      and the printing of a real run. The exit status must be 0, 1 or 2.
 * What loads is checked against the format's promises: vocabulary entry
 * 0 is "<pad>", the lengths within 1 … T, every token id inside the
 * vocabulary and <pad> exactly after the length, every target a class or
 * none (−1).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention_fast.h"
#include "cli.h"
#include "commands.h"
#include "fuzz.h"
#include "train_data.h"

static char *fuzz_model;          /* the saved model's bytes */
static const char *fuzz_model_path;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet();
    cores_set_threads(1);
    cli_set_command("train");
    fuzz_model = fuzz_saved_model(cmd_train);
    fuzz_model_path = fuzz_file(1, fuzz_model, strlen(fuzz_model));
    if (!fuzz_model_path)
        abort();
    return 0;
}

/* The promises of train_data.h for a loaded task. */
static void fuzz_check_set(const train_task *t, const train_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        if (s->lens[i] < 1 || (size_t)s->lens[i] > s->T)
            abort();
        for (size_t j = 0; j < s->T; j++) {
            int tok = s->tokens[i * s->T + j], y = s->targets[i * s->T + j];
            if (tok < 0 || (size_t)tok >= t->V || (j >= (size_t)s->lens[i] && tok != 0) ||
                (j < (size_t)s->lens[i] && tok == 0))
                abort(); /* a token id, <pad> exactly after the length */
            if (y < -1 || (y >= 0 && (size_t)y >= t->C))
                abort();
        }
    }
}

static void fuzz_check(const train_task *t)
{
    if (t->V < 2 || strcmp(t->vocab[0], "<pad>") != 0 || t->C < 1 || t->train.n < 1)
        abort();
    fuzz_check_set(t, &t->train);
    fuzz_check_set(t, &t->heldout);
}

/* attn train --data data --steps 1 …, with --load of the saved model (its
 * d and heads) or with --hiddens 4 --heads 2. */
static void fuzz_train(const char *data, int load)
{
    char *argv[20];
    int argc = 0, status;
    argv[argc++] = "train";
    argv[argc++] = "--data";
    argv[argc++] = (char *)data;
    argv[argc++] = "--steps";
    argv[argc++] = "1";
    argv[argc++] = "--threads";
    argv[argc++] = "1";
    argv[argc++] = "--max-mem";
    argv[argc++] = "16M";
    argv[argc++] = "--log-every";
    argv[argc++] = "1";
    if (load) {
        argv[argc++] = "--load";
        argv[argc++] = (char *)fuzz_model_path;
    } else {
        argv[argc++] = "--hiddens";
        argv[argc++] = "4";
        argv[argc++] = "--heads";
        argv[argc++] = "2";
    }
    argv[argc] = NULL;
    cli_set_command("train");
    status = cmd_train(argc, argv);
    fflush(stdout);
    clearerr(stdout);
    if (status < 0 || status > 2)
        abort(); /* SPEC.md §2: exit status 0, 1 or 2 */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const vocab[] = {"<pad>", "a", "b", "c"};
    char err[1024];
    train_task task;
    const char *path = fuzz_file(0, data, size);
    int small = 0;

    if (!path)
        return 0;
    memset(&task, 0, sizeof task);
    if (train_data_load(&task, path, NULL, 0, NULL, 0, err, sizeof err) == 0) {
        fuzz_check(&task);
        small = task.train.n * task.train.T <= 4096 && task.heldout.n * task.heldout.T <= 4096;
        train_task_free(&task);
    }
    memset(&task, 0, sizeof task);
    if (train_data_load(&task, path, vocab, 4, vocab, 4, err, sizeof err) == 0) {
        fuzz_check(&task);
        if (task.V != 4 || task.C != 4)
            abort(); /* the model's vocabulary, unchanged */
        train_task_free(&task);
    }
    if (small) {
        fuzz_train(path, 0);
        fuzz_train(path, 1);
    }
    return 0;
}
