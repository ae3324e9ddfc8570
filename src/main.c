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
#include "i18n.h"

static void usage(FILE *f)
{
    fputs(_("usage: attn COMMAND [OPTIONS]\n"
            "       attn help COMMAND | attn COMMAND --help | attn --version\n"
            "\n"
            "A companion to the attention chapters of Dive into Deep Learning:\n"
            "the numbers the chapter's PyTorch code prints, the figures it draws,\n"
            "and what it only describes in words.\n"
            "\n"
            "Commands:\n"),
          f);
    for (size_t i = 0; i < attn_ncommands; i++)
        fprintf(f, "  %-11s %s\n", attn_commands[i].name, _(attn_commands[i].summary));
    fputs(_("\n"
            "Example:\n"
            "  attn posenc --dim 32 --steps 60 --png out.png\n"
            "\n"
            "Language: LANGUAGE, LC_ALL, LC_MESSAGES or LANG, as for every GNU\n"
            "program (zh_CN.UTF-8: 中文); --lang zh|en before or after the command\n"
            "chooses for one run.\n"
            "\n"
            "Exit status: 0 success, 1 a run-time or data error, 2 a usage error.\n"),
          f);
}

/* --lang LANG (or --lang=LANG) anywhere before "--": taken out of argv
 * (argc updated), its value in *lang; 0, or -1 after the error. */
static int take_lang(int *argc, char **argv, const char **lang)
{
    int out = 1;
    *lang = NULL;
    for (int i = 1; i < *argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            while (i < *argc)
                argv[out++] = argv[i++];
            break;
        }
        if (strcmp(argv[i], "--lang") == 0 || strncmp(argv[i], "--lang=", 7) == 0) {
            if (*lang) {
                cli_error("option '--%s' given twice", "lang");
                return -1;
            }
            if (argv[i][6] == '=')
                *lang = argv[i] + 7;
            else if (i + 1 < *argc)
                *lang = argv[++i];
            else {
                cli_error("option '--%s' needs a value", "lang");
                return -1;
            }
            continue;
        }
        argv[out++] = argv[i];
    }
    *argc = out;
    argv[out] = NULL;
    return 0;
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
    const char *lang;

    if (take_lang(&argc, argv, &lang) != 0)
        return EXIT_USAGE;
    if (i18n_setup(lang) != 0) {
        i18n_setup(NULL);
        cli_error("--lang: expected zh or en, got '%s'", lang);
        return EXIT_USAGE;
    }
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
