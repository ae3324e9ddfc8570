/* main.c — attn's dispatch.
 *
 * The table of commands (src/cmd/commands.c) names every command with its
 * entry point, usage, summary and options; `attn --help`, `attn help CMD`,
 * the command list, `attn --list-commands`, `attn CMD --list-options` and
 * "unknown command" all come from it. A command's return value is the exit status; before
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

static void usage(FILE *f)
{
    fputs("usage: attn COMMAND [OPTIONS]\n"
          "       attn help COMMAND | attn COMMAND --help | attn --version\n"
          "\n"
          "A companion to the attention chapters of Dive into Deep Learning:\n"
          "the numbers the chapter's PyTorch code prints, the figures it draws,\n"
          "and what it only describes in words.\n"
          "\n"
          "Commands:\n",
          f);
    for (size_t i = 0; i < attn_ncommands; i++)
        fprintf(f, "  %-11s %s\n", attn_commands[i].name, attn_commands[i].summary);
    fputs("\n"
          "Example:\n"
          "  attn posenc --dim 32 --steps 60 --png out.png\n"
          "\n"
          "Exit status: 0 success, 1 a run-time or data error, 2 a usage error.\n",
          f);
}

/* `attn help [COMMAND]`: argc and argv are main's. */
static int help(int argc, char **argv)
{
    const struct command *c;
    if (argc == 2) {
        usage(stdout);
        return EXIT_OK;
    }
    if (argc > 3) {
        cli_error("help takes one command name, got %d", argc - 2);
        return EXIT_USAGE;
    }
    c = command_find(argv[2]);
    if (!c) {
        cli_error("unknown command '%s' (see attn --help)", argv[2]);
        return EXIT_USAGE;
    }
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

    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        usage(stdout);
        return check_stdout(EXIT_OK);
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) {
        printf("attn %s\n", ATTN_VERSION);
        return check_stdout(EXIT_OK);
    }
    if (strcmp(name, "help") == 0)
        return check_stdout(help(argc, argv));
    if (strcmp(name, "--list-commands") == 0 && argc == 2) {
        /* for the completion: the commands, one a line */
        for (size_t i = 0; i < attn_ncommands; i++)
            printf("%s\n", attn_commands[i].name);
        return check_stdout(EXIT_OK);
    }
    if (name[0] == '-') {
        cli_error("unknown option '%s' (see attn --help)", name);
        return EXIT_USAGE;
    }
    c = command_find(name);
    if (!c) {
        cli_error("unknown command '%s' (see attn --help)", name);
        return EXIT_USAGE;
    }
    cli_set_command(c->name);
    /* for the completion: the command's options, one a line */
    if (argc == 3 && strcmp(argv[2], "--list-options") == 0 && c->options) {
        opt_list(stdout, c->options);
        return check_stdout(EXIT_OK);
    }
    return check_stdout(c->run(argc - 1, argv + 1));
}
