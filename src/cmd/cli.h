/* cli.h — what every attn command shares: the error line, exit codes,
 * number parsing with range checks and the memory limit. (Checked size
 * arithmetic is base/checked.h; atomic output files base/atomic_file.h.)
 *
 * Errors are one line on stderr, "attn CMD: what is wrong and where", and
 * the exit status says what kind: 0 success, 1 a run-time or data error,
 * 2 a usage error (SPEC.md §2).
 */
#ifndef ATTN_CLI_H
#define ATTN_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "i18n.h" /* _() and N_(): every command's sentences (SPEC.md §17) */

enum {
    EXIT_OK = 0,
    EXIT_RUNTIME = 1, /* unreadable input, unwritable output, memory limit */
    EXIT_USAGE = 2    /* unknown command or option, bad or out-of-range value */
};

/* The name used in messages ("posenc"); set by main before a command runs. */
void cli_set_command(const char *name);
const char *cli_command(void);

/* "attn CMD: <formatted message>\n" on stderr. */
void cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* buf: "n thing" in the language in force, from English's one and many
 * forms, each with one %zu for n ("%zu head", "%zu heads"). Returns buf,
 * to build a sentence that counts two things. */
const char *cli_count(char *buf, size_t size, const char *one, const char *many, size_t n);

/* A word of a command line on f so that a shell reads it back: as it is
 * when it holds nothing a shell would read otherwise, else in single
 * quotes (each ' as '\''). The tour's commands and the pages' "command". */
void cli_put_word(FILE *f, const char *w);

/* Numbers from option values, each refusing trailing text, empty strings,
 * overflow and values outside [min, max] with a message naming the option,
 * e.g. "attn posenc: --dim: expected an integer from 1 to 1000000, got
 * 'abc'". They return 0, or -1 after printing the message (the caller
 * exits with EXIT_USAGE). */
int cli_parse_long(const char *opt, const char *s, long min, long max, long *out);
int cli_parse_double(const char *opt, const char *s, double min, double max,
                     double *out);
/* Bytes with an optional suffix K, M, G or T (powers of 1024), e.g. "4G". */
int cli_parse_bytes(const char *opt, const char *s, size_t *out);

/* The default --max-mem: 4 GiB; 2 GiB where size_t has 32 bits (the
 * pages' WebAssembly module, SPEC.md §14, whose memory ends at 4 GiB). */
#if SIZE_MAX > 0xFFFFFFFFu
#define CLI_DEFAULT_MAX_MEM ((size_t)4 << 30)
#define CLI_DEFAULT_MAX_MEM_TEXT "4G" /* as --help says it */
#else
#define CLI_DEFAULT_MAX_MEM ((size_t)2 << 30)
#define CLI_DEFAULT_MAX_MEM_TEXT "2G"
#endif

/* Refuse a run whose buffers would need more than max_mem bytes (what says
 * what the estimate covers; hint, when not NULL, is appended after "; ").
 * Returns 0, or -1 after printing format_mem_limit's sentence (checked.h),
 * e.g. "attn posenc: --steps 100000 --dim 100000 needs about 37.3 GiB,
 * more than --max-mem 4 GiB". overflow != 0 means the estimate itself
 * overflowed. */
int cli_check_mem(const char *what, size_t bytes, int overflow, size_t max_mem,
                  const char *hint);

#endif
