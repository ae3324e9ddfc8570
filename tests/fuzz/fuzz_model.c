/* fuzz_model.c — libFuzzer harness for the model files of attn train
 * (--save, --load; SPEC.md §9; src/io/model_file.c) and of
 * `attn selfattn --input model.json` (src/io/model_input.c).
 *
 * The bytes are a model file:
 *   1. model_file_load; what loads is written back (model_file_write)
 *      and loaded again, and must come back with the same configuration,
 *      vocabulary, classes and every parameter bit for bit;
 *   2. `attn selfattn --input FILE --tokens "…"` in-process, on two
 *      sentences of the model's own words (the second shorter, so that
 *      the padding is masked), with --explain for odd sizes;
 *   3. `attn train --load FILE --data D --steps S` in-process, D a small
 *      training set of the model's words and classes (token targets when
 *      the classes are the vocabulary, else sequence labels), S 1, or 0
 *      (evaluate only) for odd sizes.
 * The exit status must be 0, 1 or 2. Files the loader refuses still run
 * (2) and (3): their error paths are the command's.
 *
 * The corpus: tests/fuzz/corpus/model/ (hand-written edge cases, and
 * files with the stacked models' keys of SPEC §9 "Stacks") and the models
 * tests/fuzz/make_dict.py has attn train save when scripts/fuzz runs,
 * whose keys also make the dictionary (build-fuzz/dicts/model.dict): a
 * configuration attn learns to save (--layers, --ffn) is fuzzed from then
 * on.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "attention_fast.h"
#include "cli.h"
#include "commands.h"
#include "fuzz.h"
#include "model_file.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet();
    cores_set_threads(1);
    return 0;
}

static void fuzz_status(int status)
{
    fflush(stdout);
    clearerr(stdout);
    if (status < 0 || status > 2)
        abort(); /* SPEC.md §2: exit status 0, 1 or 2 */
}

static int same_strings(char **a, char **b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(a[i], b[i]) != 0)
            return 0;
    return 1;
}

/* 1. load, write back, load again: the same model. 0 when it loaded. */
static int fuzz_round_trip(const char *path)
{
    tmodel m, m2;
    char **vocab, **classes, **vocab2, **classes2, err[1024], *text = NULL;
    size_t V, C, V2, C2, len = 0;
    FILE *f;
    const char *path2;

    if (model_file_load(path, &m, &vocab, &V, &classes, &C, 0, 0.0, err, sizeof err))
        return -1;
    if (!(f = open_memstream(&text, &len)))
        abort();
    if (model_file_write(f, &m, (const char *const *)vocab, (const char *const *)classes))
        abort(); /* the writer refused what the loader accepted */
    if (fclose(f) != 0 || !(path2 = fuzz_file(1, text, len)))
        abort();
    if (model_file_load(path2, &m2, &vocab2, &V2, &classes2, &C2, 0, 0.0, err, sizeof err)) {
        fprintf(stderr, "fuzz_model: a model written back does not load: %s\n", err);
        abort();
    }
    if (V2 != V || C2 != C || !same_strings(vocab, vocab2, V) ||
        !same_strings(classes, classes2, C) || m2.nparams != m.nparams ||
        memcmp(&m.cfg, &m2.cfg, sizeof m.cfg) != 0)
        abort();
    for (size_t i = 0; i < m.nparams; i++) {
        const tensor *a = m.param[i].t, *b = m2.param[i].t;
        if (strcmp(m.param[i].name, m2.param[i].name) != 0 || a->size != b->size ||
            memcmp(a->data, b->data, a->size * sizeof(float)) != 0)
            abort(); /* a parameter changed on the way: a silent wrong answer */
    }
    tmodel_free(&m);
    tmodel_free(&m2);
    train_strings_free(vocab, V);
    train_strings_free(classes, C);
    train_strings_free(vocab2, V2);
    train_strings_free(classes2, C2);
    free(text);
    return 0;
}

/* The model's vocabulary and classes as parsed JSON strings (NULL when
 * the file is not that far right). */
static const cJSON *strings_of(const cJSON *root, const char *key)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, key), *s;
    if (!cJSON_IsArray(a))
        return NULL;
    cJSON_ArrayForEach(s, a)
    {
        if (!cJSON_IsString(s))
            return NULL;
    }
    return a;
}

/* The i-th string of a (wrapping around; "a" when there is none). */
static const char *word(const cJSON *a, int i)
{
    int n = a ? cJSON_GetArraySize(a) : 0;
    return n > 0 ? cJSON_GetArrayItem(a, i % n)->valuestring : "a";
}

/* 2. attn selfattn --input path --tokens "w1 w2 w3|w1 w2" [--explain] */
static void fuzz_selfattn(const char *path, const cJSON *vocab, int explain)
{
    char tokens[512];
    char *argv[] = {"selfattn", "--input", (char *)path, "--tokens", tokens, "--explain", NULL};
    snprintf(tokens, sizeof tokens, "%.100s %.100s %.100s|%.100s %.100s", word(vocab, 1),
             word(vocab, 2), word(vocab, 3), word(vocab, 1), word(vocab, 2));
    cli_set_command("selfattn");
    fuzz_status(cmd_selfattn(explain ? 6 : 5, argv));
}

/* 3. attn train --load path --data D --steps S */
static void fuzz_train(const char *path, const cJSON *vocab, const cJSON *classes, int steps)
{
    cJSON *d = cJSON_CreateObject(), *seqs = cJSON_AddArrayToObject(d, "sequences");
    const char *w[3] = {word(vocab, 1), word(vocab, 2), word(vocab, 3)};
    int token_targets = classes && vocab && cJSON_Compare(classes, vocab, 1);
    char *text, *argv[] = {"train", "--load", (char *)path, "--data", NULL, "--steps",
                           steps ? "1" : "0", "--threads", "1", "--max-mem", "16M", NULL};
    const char *data;

    if (!d || !seqs)
        abort();
    cJSON_AddItemToArray(seqs, cJSON_CreateStringArray(w, 3));
    cJSON_AddItemToArray(seqs, cJSON_CreateStringArray(w + 1, 2));
    if (token_targets) { /* the targets: the sequences reversed */
        const char *t1[3] = {w[2], w[1], w[0]}, *t2[2] = {w[2], w[1]};
        cJSON *targets = cJSON_AddArrayToObject(d, "targets");
        cJSON_AddItemToArray(targets, cJSON_CreateStringArray(t1, 3));
        cJSON_AddItemToArray(targets, cJSON_CreateStringArray(t2, 2));
    } else { /* a label at w[1], in both sentences */
        const char *labels[2] = {word(classes, 0), word(classes, 1)};
        cJSON_AddItemToObject(d, "labels", cJSON_CreateStringArray(labels, 2));
        cJSON_AddStringToObject(d, "label_at", w[1]);
    }
    if (!(text = cJSON_PrintUnformatted(d)) || !(data = fuzz_file(2, text, strlen(text))))
        abort();
    argv[4] = (char *)data;
    cli_set_command("train");
    fuzz_status(cmd_train((int)(sizeof argv / sizeof argv[0]) - 1, argv));
    cJSON_free(text);
    cJSON_Delete(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(0, data, size);
    cJSON *root;
    const cJSON *vocab, *classes;

    if (!path)
        return 0;
    fuzz_round_trip(path);
    root = cJSON_ParseWithLength((const char *)data, size);
    vocab = strings_of(root, "vocab");
    classes = strings_of(root, "classes");
    fuzz_selfattn(path, vocab, (int)(size & 1));
    fuzz_train(path, vocab, classes, !(size & 1));
    cJSON_Delete(root);
    return 0;
}
