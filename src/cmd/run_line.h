/* run_line.h — an attn command line written as text, run inside attn:
 * what `attn tour` and `attn cells --out` share to write their figures.
 *
 * A line is words separated by single spaces, "double quotes" around a
 * word that holds spaces, and @NAME for a figure file NAME inside the
 * folder DIR (--out), which run_line_folder makes first.
 */
#ifndef ATTN_RUN_LINE_H
#define ATTN_RUN_LINE_H

#include <stddef.h>

/* Split line into at most max words. Words point into buf, which the
 * caller provides with room for strlen(line) + 1 bytes. */
size_t run_line_split(const char *line, char *buf, char **words, size_t max);

/* DIR/NAME in new memory, or NULL when out of memory. */
char *run_line_path(const char *dir, const char *name);

/* mkdir -p DIR: every missing folder on the way is made. EXIT_OK, or
 * EXIT_RUNTIME after a message naming --out DIR. */
int run_line_folder(const char *dir);

/* argv[0 … nw-1]: the words, each @NAME as the path DIR/NAME inside --out
 * (new strings, kept in owned[0 … *nowned-1]; *first_name the first
 * NAME). EXIT_OK, or EXIT_RUNTIME after the message. */
int run_line_argv(char **words, size_t nw, const char *dir, char **argv, char **owned,
                  size_t *nowned, const char **first_name);

/* Run run(argc, argv) while standard output goes to a temporary file:
 * what it printed in *text (new memory, NUL-terminated, *len bytes) and
 * its exit status in *status. EXIT_OK, or EXIT_RUNTIME after a message
 * that starts with what (the option that asked: "--html"). */
int run_line_capture(int (*run)(int argc, char **argv), int argc, char **argv, const char *what,
                     char **text, size_t *len, int *status);

#endif
