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

int cmd_posenc(int argc, char **argv);
void usage_posenc(FILE *f);
extern const struct opt posenc_options[];
extern const struct opt_rule posenc_rules[];

int cmd_multihead(int argc, char **argv);
void usage_multihead(FILE *f);
extern const struct opt multihead_options[];
extern const struct opt_rule multihead_rules[];

int cmd_selfattn(int argc, char **argv);
void usage_selfattn(FILE *f);
extern const struct opt selfattn_options[];
extern const struct opt_rule selfattn_rules[];

int cmd_complexity(int argc, char **argv);
void usage_complexity(FILE *f);
extern const struct opt complexity_options[];
extern const struct opt_rule complexity_rules[];

int cmd_train(int argc, char **argv);
void usage_train(FILE *f);
extern const struct opt train_options[];
extern const struct opt_rule train_rules[];

int cmd_translate(int argc, char **argv);
void usage_translate(FILE *f);
extern const struct opt translate_options[];
extern const struct opt_rule translate_rules[];

/* The tour runs the other commands, which it finds by name with find
 * (commands.c passes command_find: the table lists the tour, so the tour
 * is given the table's lookup rather than reading the table). */
typedef const struct command *command_finder(const char *name);
int tour_main(int argc, char **argv, command_finder *find);
void usage_tour(FILE *f);
extern const struct opt tour_options[];
extern const struct opt_rule tour_rules[];

#endif
