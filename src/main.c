/* main.c — attn's command table and dispatch.
 *
 * One table names every command with its entry point, usage and summary;
 * `attn --help`, `attn help CMD`, the command list and "unknown command"
 * all come from it. A command's return value is the exit status; before
 * exiting, standard output is flushed and checked, so that a full disk or
 * a closed pipe is reported instead of lost.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn_config.h"
#include "cli.h"
#include "commands.h"

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    void (*usage)(FILE *f);
    const char *summary;
};

static const struct command commands[] = {
    {"selfattn", cmd_selfattn, usage_selfattn,
     "self-attention on one sequence (queries = keys = values = X)"},
    {"multihead", cmd_multihead, usage_multihead,
     "multi-head attention, d2l's MultiHeadAttention, every step shown"},
    {"posenc", cmd_posenc, usage_posenc,
     "sinusoidal positional encoding: the matrix, its figures and checks"},
    {"complexity", cmd_complexity, usage_complexity,
     "CNN vs RNN vs self-attention: cost, sequential steps, path length"},
    {"tour", cmd_tour, usage_tour, "the chapter in order, every figure written to a folder"},
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

static const struct command *find_command(const char *name)
{
    size_t i;
    for (i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

static void usage(FILE *f)
{
    size_t i;
    fputs("usage: attn COMMAND [OPTIONS]\n"
          "       attn help COMMAND | attn COMMAND --help | attn --version\n"
          "\n"
          "A companion to the attention chapters of Dive into Deep Learning:\n"
          "the numbers the chapter's PyTorch code prints, the figures it draws,\n"
          "and what it only describes in words.\n"
          "\n"
          "Commands:\n",
          f);
    for (i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-11s %s\n", commands[i].name, commands[i].summary);
    fputs("\n"
          "Example:\n"
          "  attn posenc --dim 32 --steps 60 --png out.png\n"
          "\n"
          "Exit status: 0 success, 1 a run-time or data error, 2 a usage error.\n",
          f);
}

/* Usage of one command, to stdout. */
static int help_for(const struct command *c)
{
    c->usage(stdout);
    return EXIT_OK;
}

/* Flush standard output and report a write error (e.g. a full disk). */
static int check_stdout(int status)
{
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        int e = errno;
        cli_error("write error on standard output: %s",
                  e ? strerror(e) : "unknown error");
        return EXIT_RUNTIME;
    }
    return status;
}

int main(int argc, char **argv)
{
    const struct command *c;
    const char *name;

    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        usage(stdout);
        return check_stdout(EXIT_OK);
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) {
        printf("attn %s\n", ATTN_VERSION);
        return check_stdout(EXIT_OK);
    }
    if (strcmp(name, "help") == 0) {
        if (argc == 2) {
            usage(stdout);
            return check_stdout(EXIT_OK);
        }
        if (argc > 3) {
            cli_error("help takes one command name, got %d", argc - 2);
            return EXIT_USAGE;
        }
        c = find_command(argv[2]);
        if (!c) {
            cli_error("unknown command '%s' (see attn --help)", argv[2]);
            return EXIT_USAGE;
        }
        return check_stdout(help_for(c));
    }
    if (name[0] == '-') {
        cli_error("unknown option '%s' (see attn --help)", name);
        return EXIT_USAGE;
    }
    c = find_command(name);
    if (!c) {
        cli_error("unknown command '%s' (see attn --help)", name);
        return EXIT_USAGE;
    }
    cli_set_command(c->name);
    return check_stdout(c->run(argc - 1, argv + 1));
}
