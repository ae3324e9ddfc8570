/* fuzz_translate.c — libFuzzer harness for `attn translate` (SPEC.md §11;
 * src/cmd/translate/translate.c) and the translation model files it and `attn
 * train --load` read (src/io/s2s_model_file.c). No training: every run
 * is a few decoding steps of a tiny model.
 *
 * Bytes that start with '{' (after white space) are a model file:
 *   1. s2s_model_from_json; what loads is written back (s2s_model_write)
 *      and read again, and must come back with the same configuration,
 *      vocabularies, num_steps and every parameter bit for bit;
 *   2. `attn translate --input FILE [--all] "SENTENCE"` in-process, the
 *      sentence of the file's own source words and one it lacks, --json -
 *      for odd sizes (else the printout, in colour), --max-mem 1M (a
 *      num_steps of 100000 is refused up front, not decoded);
 *   3. `attn train --load FILE --data PAIRS --steps 0`: the pairs of its
 *      own words, evaluated without a step (the command's --load and
 *      --data of pairs); then `attn translate --input FILE --prune-heads
 *      enc1.1,cross1.2 --data PAIRS` on them (d2l 10.5's exercise).
 * Other bytes are a typed sentence, up to a NUL; after a tab, a
 * reference; after a second tab, a --prune-heads LIST: read against a fixed tiny model made at start-up by attn
 * train --steps 0 (its sentence → tokens → ids path checked directly:
 * ids inside the vocabulary, the valid length the entries that are not
 * <pad>, cut exactly when the words and <eos> do not fit), then `attn
 * translate` on it with --all and --reference, --json - or the printout;
 * with a LIST, `attn translate --input MODEL --prune-heads LIST --data
 * PAIRS [SENTENCE]` (the pairs it was trained on) instead.
 * Every exit status must be 0, 1 or 2.
 *
 * The corpus: tests/fuzz/corpus/translate/ (tests/fuzz/make_corpus.py:
 * models attn train saves, broken ones, sentences).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "attention_fast.h"
#include "cli.h"
#include "commands.h"
#include "fuzz.h"
#include "s2s_corpus.h"
#include "s2s_model_file.h"
#include "seq2seq_data.h"
#include "encoder_task.h"

#define FUZZ_SENTENCE_MAX 2048

static const char fuzz_pairs[] =
    "{\"pairs\": [[\"the big red dog sees a cat .\", \"le grand chien rouge voit un chat .\"],"
    " [\"Tom sees the small apple !\", \"Tom voit la petite pomme !\"]]}\n";

static const char *model_path;  /* the fixed model (a fuzz_file slot) */
static const char *pairs_path;  /* its pairs (fuzz_pairs, fuzz_file slot 1) */
static s2s_vocab model_src; /* its source vocabulary */

static void fuzz_status(int status)
{
    fflush(stdout);
    clearerr(stdout);
    if (status < 0 || status > 2)
        abort(); /* SPEC.md §2: exit status 0, 1 or 2 */
}

/* The fixed model: attn train --data fuzz_pairs --steps 0, in a
 * temporary folder, then kept in fuzz_file slot 3. */
static void make_model(void)
{
    char dir[] = "/tmp/attn-fuzz-translate-XXXXXX", data[64], model[64], err[512], **sv, **tv;
    char *bytes;
    size_t size = 0, T;
    s2s_model m;
    FILE *f;
    if (!mkdtemp(dir))
        abort();
    snprintf(data, sizeof data, "%s/pairs.json", dir);
    snprintf(model, sizeof model, "%s/m.json", dir);
    char *argv[] = {"train", "--data", data, "--min-freq", "1", "--steps", "0", "--hiddens", "4",
                    "--heads", "2", "--layers", "1", "--ffn", "4", "--num-steps", "6",
                    "--threads", "1", "--save", model, NULL};
    cli_set_command("train");
    if (!(f = fopen(data, "w")) || fputs(fuzz_pairs, f) < 0 || fclose(f) != 0 ||
        cmd_train((int)(sizeof argv / sizeof argv[0]) - 1, argv) != 0 ||
        !(bytes = fuzz_read(model, &size)) || !(model_path = fuzz_file(3, bytes, size)) ||
        !(pairs_path = fuzz_file(1, fuzz_pairs, sizeof fuzz_pairs - 1)) ||
        s2s_model_load(model_path, &m, &sv, &tv, &T, 0.0, err, sizeof err) ||
        s2s_vocab_from_list(&model_src, (const char *const *)sv, m.cfg.src_vocab, "$", err,
                                sizeof err)) {
        fprintf(stderr, "fuzz_translate: the model: attn train --save %s failed\n", model);
        abort();
    }
    train_strings_free(sv, m.cfg.src_vocab);
    train_strings_free(tv, m.cfg.tgt_vocab);
    s2s_free(&m);
    free(bytes);
    unlink(data);
    unlink(model);
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet();
    cores_set_threads(1);
    make_model();
    return 0;
}

/* ---- a model file ------------------------------------------------------------ */

static int same_strings(char **a, char **b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(a[i], b[i]) != 0)
            return 0;
    return 1;
}

static void free_model(s2s_model *m, char **sv, char **tv)
{
    train_strings_free(sv, m->cfg.src_vocab);
    train_strings_free(tv, m->cfg.tgt_vocab);
    s2s_free(m);
}

/* 1. read, write back, read again: the same model. */
static void fuzz_round_trip(const cJSON *root)
{
    s2s_model m, m2;
    char **sv, **tv, **sv2, **tv2, err[1024], *text = NULL;
    size_t T, T2, len = 0;
    cJSON *again;
    FILE *f;
    if (s2s_model_from_json(root, &m, &sv, &tv, &T, 0.0, err, sizeof err))
        return;
    if (!(f = open_memstream(&text, &len)))
        abort();
    if (s2s_model_write(f, &m, (const char *const *)sv, (const char *const *)tv, T))
        abort(); /* the writer refused what the reader accepted */
    if (fclose(f) != 0 || !(again = cJSON_ParseWithLength(text, len)))
        abort();
    if (s2s_model_from_json(again, &m2, &sv2, &tv2, &T2, 0.0, err, sizeof err)) {
        fprintf(stderr, "fuzz_translate: a model written back does not read: %s\n", err);
        abort();
    }
    if (T2 != T || memcmp(&m.cfg, &m2.cfg, sizeof m.cfg) != 0 || m.nparams != m2.nparams ||
        !same_strings(sv, sv2, m.cfg.src_vocab) || !same_strings(tv, tv2, m.cfg.tgt_vocab))
        abort();
    for (size_t i = 0; i < m.nparams; i++) {
        const tensor *a = m.param[i].t, *b = m2.param[i].t;
        if (strcmp(m.param[i].name, m2.param[i].name) != 0 || a->size != b->size ||
            memcmp(a->data, b->data, a->size * sizeof(float)) != 0)
            abort(); /* a parameter changed on the way: a silent wrong answer */
    }
    free_model(&m, sv, tv);
    free_model(&m2, sv2, tv2);
    cJSON_Delete(again);
    free(text);
}

/* The i-th string of the array at key (wrapping; "a" when there is none). */
static const char *word(const cJSON *root, const char *key, int i)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, key), *s;
    int n = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
    s = n > 0 ? cJSON_GetArrayItem(a, i % n) : NULL;
    return cJSON_IsString(s) ? s->valuestring : "a";
}

/* 2. attn translate --input path [--all] [--json -] "w4 w5 zebra w6" */
static void fuzz_translate_file(const char *path, const cJSON *root, int odd)
{
    char sentence[512];
    char *argv[] = {"translate", "--input", (char *)path, "--max-mem", "1M", "--all",
                    odd ? "--json" : "--color", odd ? "-" : "always", sentence, NULL};
    snprintf(sentence, sizeof sentence, "%.100s %.100s zebra %.100s", word(root, "src_vocab", 4),
             word(root, "src_vocab", 5), word(root, "src_vocab", 6));
    cli_set_command("translate");
    fuzz_status(cmd_translate((int)(sizeof argv / sizeof argv[0]) - 1, argv));
}

/* 3. attn train --load path --data PAIRS --steps 0, the pairs of its words */
static void fuzz_train_load(const char *path, const cJSON *root)
{
    char text[1024];
    const char *data;
    char *argv[] = {"train", "--load", (char *)path, "--data", NULL, "--steps", "0",
                    "--threads", "1", "--max-mem", "16M", NULL};
    cJSON *d = cJSON_CreateObject(), *pairs = cJSON_AddArrayToObject(d, "pairs"), *p;
    char *json;
    snprintf(text, sizeof text, "%.100s %.100s", word(root, "src_vocab", 4),
             word(root, "src_vocab", 5));
    if (!d || !pairs || !(p = cJSON_CreateArray()))
        abort();
    cJSON_AddItemToArray(pairs, p);
    cJSON_AddItemToArray(p, cJSON_CreateString(text));
    snprintf(text, sizeof text, "%.100s", word(root, "tgt_vocab", 4));
    cJSON_AddItemToArray(p, cJSON_CreateString(text));
    if (!(json = cJSON_PrintUnformatted(d)) || !(data = fuzz_file(2, json, strlen(json))))
        abort();
    argv[4] = (char *)data;
    cli_set_command("train");
    fuzz_status(cmd_train((int)(sizeof argv / sizeof argv[0]) - 1, argv));
    {
        char *prune[] = {"translate", "--input", (char *)path, "--prune-heads", "enc1.1,cross1.2",
                         "--data", (char *)data, "--max-mem", "16M", NULL};
        cli_set_command("translate");
        fuzz_status(cmd_translate((int)(sizeof prune / sizeof prune[0]) - 1, prune));
    }
    cJSON_free(json);
    cJSON_Delete(d);
}

static void fuzz_model_file(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(0, data, size);
    cJSON *root = cJSON_ParseWithLength((const char *)data, size);
    if (!path) {
        cJSON_Delete(root);
        return;
    }
    if (root)
        fuzz_round_trip(root);
    fuzz_translate_file(path, root, (int)(size & 1));
    fuzz_train_load(path, root);
    cJSON_Delete(root);
}

/* ---- a typed sentence ---------------------------------------------------------- */

/* What attn translate reads of s: its tokens' ids (T,) in the fixed
 * model's vocabulary, for a few num_steps. */
static void fuzz_ids(const char *s)
{
    char err[256], **tok;
    size_t n;
    int row[12], cut;
    if (!(tok = s2s_sentence_tokens(s, S2S_SENTENCE_LOWER | S2S_SENTENCE_PUNCT |
                                           S2S_SENTENCE_WORDS, &n, err, sizeof err)))
        return;
    for (size_t T = 1; T <= 12; T += 5) {
        long pads = 0, valid = s2s_vocab_encode(row, &model_src, (const char *const *)tok, n, T,
                                              &cut);
        for (size_t j = 0; j < T; j++) {
            if (row[j] < 0 || (size_t)row[j] >= model_src.n)
                abort();
            pads += row[j] == S2S_PAD;
        }
        if (valid != (long)T - pads || cut != (n >= T))
            abort();
    }
    free(tok);
}

/* attn translate --input MODEL --prune-heads list --data PAIRS [-- s] */
static void fuzz_prune_list(const char *s, const char *list)
{
    char *argv[] = {"translate", "--input", (char *)model_path, "--prune-heads", (char *)list,
                    "--data", (char *)pairs_path, "--json", "-", "--", (char *)s, NULL};
    cli_set_command("translate");
    fuzz_status(cmd_translate(s[0] ? 11 : 9, argv));
}

static void fuzz_sentence(const uint8_t *data, size_t size, int odd)
{
    char s[FUZZ_SENTENCE_MAX + 1], *ref, *list;
    size_t n = 0;
    while (n < size && n < FUZZ_SENTENCE_MAX && data[n] != 0) {
        s[n] = (char)data[n];
        n++;
    }
    s[n] = '\0';
    if ((ref = strchr(s, '\t')) != NULL)
        *ref++ = '\0';
    if (ref && (list = strchr(ref, '\t')) != NULL) {
        *list++ = '\0';
        fuzz_prune_list(s, list);
        return;
    }
    fuzz_ids(s);
    char *argv[] = {"translate", "--input", (char *)model_path, "--all",
                    odd ? "--json" : "--color", odd ? "-" : "always", "--", s, NULL, NULL, NULL};
    int argc = 8;
    if (ref) { /* --reference before the "--" */
        argv[8] = argv[6];
        argv[9] = argv[7];
        argv[6] = "--reference";
        argv[7] = ref;
        argc = 10;
    }
    cli_set_command("translate");
    fuzz_status(cmd_translate(argc, argv));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t i = 0;
    while (i < size && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n'))
        i++;
    if (i < size && data[i] == '{')
        fuzz_model_file(data, size);
    else
        fuzz_sentence(data, size, (int)(size & 1));
    return 0;
}
