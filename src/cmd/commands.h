/* commands.h — the entry points of attn's commands. Each takes the
 * command's own argv (argv[0] is the command name), parses its options, and
 * returns the process's exit status (cli.h). Each also prints its usage. */
#ifndef ATTN_COMMANDS_H
#define ATTN_COMMANDS_H

#include <stdio.h>

int cmd_posenc(int argc, char **argv);
void usage_posenc(FILE *f);

int cmd_multihead(int argc, char **argv);
void usage_multihead(FILE *f);

int cmd_selfattn(int argc, char **argv);
void usage_selfattn(FILE *f);

int cmd_complexity(int argc, char **argv);
void usage_complexity(FILE *f);

int cmd_tour(int argc, char **argv);
void usage_tour(FILE *f);

#endif
