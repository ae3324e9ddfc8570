/* fuzz_argv.h — the fuzz_options harness's input format, shared with
 * tests/test_fuzz_regressions.c, which replays saved inputs through the
 * attn binary.
 *
 * The input is words separated by newlines or NUL bytes (at most
 * FUZZ_MAX_WORDS words of at most FUZZ_MAX_WORD bytes; longer ones are
 * cut). When the first word names a command it is the command; otherwise
 * the first byte picks one and every word is an option. Then, so that a
 * run stays safe and short:
 *   - '/' in a word becomes '_': files are written only in the working
 *     folder (the harness runs in a private temporary one);
 *   - words starting with "--m" (--max-mem and its abbreviations, and
 *     complexity's --measure, --measure-dim) are dropped, with the value
 *     after a --max-mem without '=', and "--max-mem 2M" is appended, so
 *     that large sizes are refused up front;
 *   - inputs asking for timing loops (--repeat, --time, --sweep, --reps,
 *     --clock) are skipped: slow on purpose, not a bug.
 * Header-only: static functions for each includer.
 */
#ifndef ATTN_FUZZ_ARGV_H
#define ATTN_FUZZ_ARGV_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FUZZ_MAX_WORDS 32
#define FUZZ_MAX_WORD 200

typedef struct fuzz_argv {
    int argc;
    char *argv[FUZZ_MAX_WORDS + 4];
    char words[FUZZ_MAX_WORDS + 3][FUZZ_MAX_WORD + 1];
} fuzz_argv;

/* The inputs in the working folder: in.json (multihead), x.json (selfattn). */
static const char fuzz_in_json[] =
    "{\"queries\": [[[1,2,3,4],[0.5,-1,2,0]]], \"keys\": [[[1,0,0,1],[0,1,1,0],[2,2,2,2]]],\n"
    " \"values\": [[[1,2],[3,4],[5,6]]], \"valid_lens\": [2], \"num_heads\": 2,\n"
    " \"query_tokens\": [\"a\", \"b\"], \"key_tokens\": [\"x\", \"y\", \"z\"]}\n";
static const char fuzz_x_json[] =
    "{\"X\": [[[1,0,1,0],[0,1,0,1],[1,1,0,0]]], \"valid_lens\": [[1,2,3]], \"num_heads\": 2,\n"
    " \"tokens\": [\"the\", \"cat\", \"sat\"]}\n";

static const char *const fuzz_commands[] = {"posenc", "multihead", "selfattn", "complexity"};

static int fuzz_starts(const char *w, const char *prefix)
{
    return strncmp(w, prefix, strlen(prefix)) == 0;
}

/* Build a->argv (argv[0] = the command). Returns the command's index in
 * fuzz_commands, or -1 when the input is to be skipped. */
static int fuzz_split(const uint8_t *data, size_t size, fuzz_argv *a)
{
    char raw[FUZZ_MAX_WORDS][FUZZ_MAX_WORD + 1];
    size_t nraw = 0, len = 0, i;
    int cmd = -1, first = 0, skip_value = 0;

    if (size == 0)
        return -1;
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
    for (i = 0; i < 4; i++)
        if (nraw > 0 && strcmp(raw[0], fuzz_commands[i]) == 0) {
            cmd = (int)i;
            first = 1;
        }
    if (cmd < 0)
        cmd = data[0] % 4;

    a->argc = 0;
    strcpy(a->words[a->argc], fuzz_commands[cmd]);
    a->argv[a->argc] = a->words[a->argc];
    a->argc++;
    for (i = (size_t)first; i < nraw; i++) {
        const char *w = raw[i];
        if (skip_value) {
            skip_value = 0;
            continue;
        }
        if (fuzz_starts(w, "--rep") || fuzz_starts(w, "--ti") || fuzz_starts(w, "--sw") ||
            fuzz_starts(w, "--cl") || (cmd == 1 || cmd == 2 ? fuzz_starts(w, "--r") : 0))
            return -1;
        if (fuzz_starts(w, "--m")) {
            /* --max-mem VALUE: drop the value too (complexity's --measure
             * takes none; --measure-dim VALUE leaves its value, refused
             * as an unexpected argument) */
            skip_value = fuzz_starts("--max-mem", w) && strlen(w) >= 4;
            continue;
        }
        strcpy(a->words[a->argc], w);
        a->argv[a->argc] = a->words[a->argc];
        a->argc++;
    }
    strcpy(a->words[a->argc], "--max-mem");
    a->argv[a->argc] = a->words[a->argc];
    a->argc++;
    strcpy(a->words[a->argc], "2M");
    a->argv[a->argc] = a->words[a->argc];
    a->argc++;
    a->argv[a->argc] = NULL;
    return cmd;
}

#endif
