/* commands.h — attn's commands: their table (commands.c), which main.c
 * dispatches from and the tour is given, and their entry points. Each entry
 * point takes the command's own argv (argv[0] is the command name), parses
 * its options, and returns the process's exit status (cli.h). Each also
 * prints its usage. */
#ifndef ATTN_COMMANDS_H
#define ATTN_COMMANDS_H

#include <stddef.h>
#include <stdio.h>

#include "options.h"

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    void (*usage)(FILE *f);
    const char *summary;
    const struct opt *options;     /* for --list-options and the tour */
    const struct opt_rule *rules;  /* checked by opt_parse; NULL: none */
};

/* Every command, in the order of `attn --help`. */
extern const struct command attn_commands[];
extern const size_t attn_ncommands;

/* The command called name, or NULL. */
const struct command *command_find(const char *name);

/* A command's four names: its entry point cmd_NAME, its usage usage_NAME,
 * its options NAME_options and their rules NAME_rules. */
#define COMMAND_DECLARE(name)                   \
    int cmd_##name(int argc, char **argv);      \
    void usage_##name(FILE *f);                 \
    extern const struct opt name##_options[];   \
    extern const struct opt_rule name##_rules[]

COMMAND_DECLARE(heatmap);
COMMAND_DECLARE(pool);
COMMAND_DECLARE(score);
COMMAND_DECLARE(posenc);
COMMAND_DECLARE(multihead);
COMMAND_DECLARE(selfattn);
COMMAND_DECLARE(complexity);
COMMAND_DECLARE(train);
COMMAND_DECLARE(translate);
COMMAND_DECLARE(vit);

/* The tour runs the other commands, which it finds by name with find
 * (commands.c passes command_find: the table lists the tour, so the tour
 * is given the table's lookup rather than reading the table). */
typedef const struct command *command_finder(const char *name);
int tour_main(int argc, char **argv, command_finder *find);
void usage_tour(FILE *f);
extern const struct opt tour_options[];
extern const struct opt_rule tour_rules[];

/* `attn cells` (cmd/cells/cells.c), given the lookup as the tour is: it
 * runs `multihead --describe` and, with --out, the figures' commands. */
int cells_main(int argc, char **argv, command_finder *find);
void usage_cells(FILE *f);
extern const struct opt cells_options[];
extern const struct opt_rule cells_rules[];

#endif
