/* fuzz_options.c — libFuzzer harness for every command's options and the
 * runs they ask for.
 *
 * The input is words separated by newlines or NUL bytes (at most
 * FUZZ_MAX_WORDS words of at most FUZZ_MAX_WORD bytes; longer ones are
 * cut). When the first word names a command of commands.c's table (so a
 * new command is fuzzed as soon as it is in the table) it is the command;
 * otherwise the first byte picks one and every word is an option. The
 * command runs in-process, as main() runs it, with standard input and
 * output on /dev/null, in a private temporary folder (entered for the run
 * only) holding small inputs: in.json (multihead), x.json (selfattn),
 * d.json (train --data) and m.json (a model saved by attn train from
 * d.json, for train --load and selfattn --input). Whatever the run writes
 * there is removed afterwards and the inputs are restored. A sanitizer
 * report, a crash or a leak is a finding; the exit status must be 0, 1
 * or 2 (SPEC.md §2).
 *
 * So that every run stays safe and takes milliseconds:
 *   - '/' in a word becomes '_': files are written only in the folder;
 *   - words starting with "--m" (--max-mem and its abbreviations,
 *     complexity's --measure and --measure-dim) are dropped, with the
 *     value after a --max-mem without '=', and "--max-mem 2M" (train:
 *     8M, which its default task needs) is appended to a command that has
 *     --max-mem: large sizes are refused up front;
 *   - the values of the options in fuzz_clamps (train's --steps,
 *     --hiddens, --length, --vocab, --batch-size; --threads) are cut to a
 *     small maximum, and train gets "--steps 2" and "--hiddens 4" when
 *     the input gives none;
 *   - inputs asking for timing loops (--repeat, --time, --sweep, --reps,
 *     --clock) are skipped: slow on purpose, not a bug; and so are tour
 *     inputs that would run the whole tour or its slow steps (1 cross,
 *     5 scaling, 6 complexity, 12 learned, 13 circuits; any word with a
 *     1 in it, then): they run the other commands with fixed options,
 *     fuzzed here directly; and cells inputs with --out (or a short
 *     flag word with an o), which run the figures' commands, two of them
 *     trainings.
 *
 * The dictionary (build-fuzz/dicts/options.dict) is made from the option
 * tables by tests/fuzz/make_dict.py when scripts/fuzz runs: `attn
 * --list-commands` and `attn CMD --list-options`.
 */
#include <fcntl.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attention_fast.h"
#include "cli.h"
#include "commands.h"
#include "fuzz.h"

#define FUZZ_MAX_WORDS 32
#define FUZZ_MAX_WORD 200

/* the input's words, the command and what is appended */
#define FUZZ_ROOM (FUZZ_MAX_WORDS + 16)

typedef struct fuzz_argv {
    int argc;
    char *argv[FUZZ_ROOM + 1];
    char words[FUZZ_ROOM][FUZZ_MAX_WORD + 1];
} fuzz_argv;

/* An option whose value is cut to max: its long name, and the shortest
 * abbreviation getopt_long takes for it (no other long name of the
 * command starts so); dflt, when not NULL, is appended as its value when
 * the input does not give it (and gives no --load, which brings its own
 * sizes). attn train's default run (d 32, 400 steps, 500 held-out and 500
 * evaluation sequences) takes seconds under the sanitizers; d 4 and 2
 * steps take a tenth. */
static const struct fuzz_clamp {
    const char *command; /* NULL: every command */
    const char *name;    /* "--steps" */
    size_t abbrev;       /* strlen("--st") */
    long max;
    const char *dflt;
} fuzz_clamps[] = {
    {"train", "--steps", 4, 2, "2"},
    {"train", "--hiddens", 4, 8, "4"},
    {"train", "--length", 4, 8, NULL},
    {"train", "--vocab", 3, 16, NULL},
    {"train", "--batch-size", 4, 64, NULL},
    {NULL, "--threads", 4, 2, NULL},
};
#define FUZZ_NCLAMPS (sizeof fuzz_clamps / sizeof fuzz_clamps[0])

/* The inputs in the working folder. */
static const char fuzz_in_json[] =
    "{\"queries\": [[[1,2,3,4],[0.5,-1,2,0]]], \"keys\": [[[1,0,0,1],[0,1,1,0],[2,2,2,2]]],\n"
    " \"values\": [[[1,2],[3,4],[5,6]]], \"valid_lens\": [2], \"num_heads\": 2,\n"
    " \"query_tokens\": [\"a\", \"b\"], \"key_tokens\": [\"x\", \"y\", \"z\"]}\n";
static const char fuzz_x_json[] =
    "{\"X\": [[[1,0,1,0],[0,1,0,1],[1,1,0,0]]], \"valid_lens\": [[1,2,3]], \"num_heads\": 2,\n"
    " \"tokens\": [\"the\", \"cat\", \"sat\"]}\n";
static char *fuzz_m_json; /* made by LLVMFuzzerInitialize */

static int fuzz_starts(const char *w, const char *prefix)
{
    return strncmp(w, prefix, strlen(prefix)) == 0;
}

/* The clamp of word w (an option, "--st" or "--steps=5"), or NULL. */
static const struct fuzz_clamp *fuzz_clamp_of(const char *cmd, const char *w)
{
    size_t n = strcspn(w, "=");
    for (size_t i = 0; i < FUZZ_NCLAMPS; i++) {
        const struct fuzz_clamp *c = &fuzz_clamps[i];
        if ((!c->command || strcmp(c->command, cmd) == 0) && n >= c->abbrev &&
            n <= strlen(c->name) && strncmp(w, c->name, n) == 0)
            return c;
    }
    return NULL;
}

/* The value v cut to c->max into out (which may be v): a value with a
 * digit that is not digits alone up to max ("9999", "+9", " 9", "0x9",
 * "1e9") becomes max; one without a digit is left for the parser to
 * refuse. */
static void fuzz_clamp_value(const struct fuzz_clamp *c, const char *v, char *out)
{
    if (strpbrk(v, "0123456789") &&
        !(strspn(v, "0123456789") == strlen(v) && strtod(v, NULL) <= (double)c->max))
        snprintf(out, FUZZ_MAX_WORD + 1, "%ld", c->max);
}

/* Whether a tour input would run the whole tour or a slow step. */
static int fuzz_tour_slow(char raw[][FUZZ_MAX_WORD + 1], size_t n, size_t first)
{
    int picks = 0;
    for (size_t i = first; i < n; i++) {
        const char *w = raw[i];
        if (strstr(w, "1") || strstr(w, "5") || strstr(w, "6") || strstr(w, "cross") ||
            strstr(w, "scaling") || strstr(w, "complexity") || strstr(w, "learned") ||
            strstr(w, "circuits"))
            return 1;
        /* --step, --list, --help, and -s, -l, -h among short flags before
         * -o, whose value is the rest of the word (-okist: --out kist) */
        if (fuzz_starts(w, "--s") || fuzz_starts(w, "--l") || fuzz_starts(w, "--h"))
            picks = 1;
        if (w[0] == '-' && w[1] != '-')
            for (const char *c = w + 1; *c && *c != 'o'; c++)
                if (*c == 's' || *c == 'l' || *c == 'h')
                    picks = 1;
    }
    return !picks;
}

/* Whether a cells input would run the figures' commands (--out, -o). */
static int fuzz_cells_out(char raw[][FUZZ_MAX_WORD + 1], size_t n, size_t first)
{
    for (size_t i = first; i < n; i++)
        if (fuzz_starts(raw[i], "--o") || (raw[i][0] == '-' && raw[i][1] != '-' &&
                                           strchr(raw[i], 'o')))
            return 1;
    return 0;
}

static void fuzz_add(fuzz_argv *a, const char *w)
{
    if (a->argc >= FUZZ_ROOM)
        abort(); /* the harness's own mistake: more appended than FUZZ_ROOM holds */
    snprintf(a->words[a->argc], sizeof a->words[a->argc], "%s", w);
    a->argv[a->argc] = a->words[a->argc];
    a->argc++;
}

/* Build a->argv (argv[0] = the command). Returns the command, or NULL
 * when the input is to be skipped. */
static const struct command *fuzz_split(const uint8_t *data, size_t size, fuzz_argv *a)
{
    static char raw[FUZZ_MAX_WORDS][FUZZ_MAX_WORD + 1];
    size_t nraw = 0, len = 0, i, first = 0;
    const struct command *cmd = NULL;
    const struct fuzz_clamp *clamp = NULL;
    int skip_value = 0, load = 0;
    unsigned char given[FUZZ_NCLAMPS] = {0};

    if (size == 0)
        return NULL;
    /* words */
    for (i = 0; i <= size && nraw < FUZZ_MAX_WORDS; i++) {
        if (i == size || data[i] == '\n' || data[i] == '\0') {
            if (i == size && len == 0 && nraw > 0)
                break; /* a trailing newline */
            raw[nraw][len] = '\0';
            nraw++;
            len = 0;
        } else if (len < FUZZ_MAX_WORD) {
            raw[nraw][len++] = data[i] == '/' ? '_' : (char)data[i];
        }
    }
    if ((cmd = command_find(raw[0])) != NULL)
        first = 1;
    else
        cmd = &attn_commands[data[0] % attn_ncommands];
    if (strcmp(cmd->name, "tour") == 0 && fuzz_tour_slow(raw, nraw, first))
        return NULL;
    if (strcmp(cmd->name, "cells") == 0 && fuzz_cells_out(raw, nraw, first))
        return NULL;

    a->argc = 0;
    fuzz_add(a, cmd->name);
    for (i = first; i < nraw; i++) {
        char *w = raw[i];
        if (clamp) { /* the value of the option before */
            fuzz_clamp_value(clamp, w, w);
            clamp = NULL;
        } else if (skip_value) {
            skip_value = 0;
            continue;
        } else if (fuzz_starts(w, "--rep") || fuzz_starts(w, "--ti") ||
                   fuzz_starts(w, "--sw") || fuzz_starts(w, "--cl") ||
                   (opt_find(cmd->options, "repeat") && fuzz_starts(w, "--r"))) {
            return NULL;
        } else if (fuzz_starts(w, "--m")) {
            /* --max-mem VALUE: drop the value too (complexity's --measure
             * takes none; --measure-dim VALUE leaves its value, refused
             * as an unexpected argument) */
            skip_value = fuzz_starts("--max-mem", w) && strlen(w) >= 4;
            continue;
        } else if ((clamp = fuzz_clamp_of(cmd->name, w)) != NULL) {
            given[clamp - fuzz_clamps] = 1;
            if (strchr(w, '=')) {
                fuzz_clamp_value(clamp, strchr(w, '=') + 1, strchr(w, '=') + 1);
                clamp = NULL;
            }
        }
        load |= fuzz_starts(w, "--loa");
        fuzz_add(a, w);
    }
    for (i = 0; i < FUZZ_NCLAMPS; i++)
        if (fuzz_clamps[i].dflt && !given[i] && !load &&
            (!fuzz_clamps[i].command || strcmp(fuzz_clamps[i].command, cmd->name) == 0)) {
            fuzz_add(a, fuzz_clamps[i].name);
            fuzz_add(a, fuzz_clamps[i].dflt);
        }
    if (opt_find(cmd->options, "max-mem")) {
        fuzz_add(a, "--max-mem");
        fuzz_add(a, strcmp(cmd->name, "train") == 0 ? "8M" : "2M");
    }
    a->argv[a->argc] = NULL;
    return cmd;
}

static char fuzz_dir[64];
static int fuzz_home = -1; /* libFuzzer's working folder: its paths are relative to it */

static void fuzz_write(const char *name, const char *text)
{
    FILE *f = fopen(name, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* Remove what the folder dir holds, folders too (depth at most 4). */
static void fuzz_rm(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[1024];
    struct stat st;
    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && depth < 4) {
            fuzz_rm(path, depth + 1);
            rmdir(path);
        } else {
            unlink(path);
        }
    }
    closedir(d);
}

/* Remove everything in the working folder (files, and the folders tour
 * --out makes), then restore the inputs, which a run may have changed. */
static void fuzz_clean(int restore)
{
    fuzz_rm(".", 0);
    if (!restore)
        return;
    fuzz_write("in.json", fuzz_in_json);
    fuzz_write("x.json", fuzz_x_json);
    fuzz_write("d.json", fuzz_d_json);
    if (fuzz_m_json)
        fuzz_write("m.json", fuzz_m_json);
}

static void fuzz_remove_dir(void)
{
    if (chdir(fuzz_dir) == 0) {
        fuzz_clean(0);
        if (fchdir(fuzz_home) == 0)
            rmdir(fuzz_dir);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    snprintf(fuzz_dir, sizeof fuzz_dir, "/tmp/attn-fuzz-options-XXXXXX");
    fuzz_home = open(".", O_RDONLY | O_DIRECTORY);
    if (fuzz_home < 0 || !mkdtemp(fuzz_dir) || chdir(fuzz_dir) != 0) {
        perror("fuzz_options: temporary folder");
        abort();
    }
    atexit(fuzz_remove_dir);
    fuzz_quiet();
    cores_set_threads(1);
    cli_set_command("train");
    fuzz_m_json = fuzz_saved_model(cmd_train);
    fuzz_clean(1);
    if (fchdir(fuzz_home) != 0)
        abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static fuzz_argv a;
    const struct command *cmd = fuzz_split(data, size, &a);
    int status;

    if (!cmd)
        return -1; /* not added to the corpus */
    if (chdir(fuzz_dir) != 0)
        abort();
    cli_set_command(cmd->name);
    status = cmd->run(a.argc, a.argv);
    fflush(stdout);
    clearerr(stdout);
    clearerr(stdin);
    if (status < 0 || status > 2)
        abort(); /* SPEC.md §2: exit status 0, 1 or 2 */
    fuzz_clean(1);
    if (fchdir(fuzz_home) != 0)
        abort();
    return 0;
}
