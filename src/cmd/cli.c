/* cli.c — errors, number parsing and the memory limit
 * shared by every attn command (see cli.h). */
#include "cli.h"

#include "checked.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *command_name = NULL;

void cli_set_command(const char *name) { command_name = name; }

const char *cli_command(void) { return command_name; }

void cli_error(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout); /* keep the order of normal output and the error */
    if (command_name)
        fprintf(stderr, "attn %s: ", command_name);
    else
        fputs("attn: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* ---- options --------------------------------------------------------- */

const char *cli_option_name(const struct option *longopts, int val)
{
    const struct option *o;
    for (o = longopts; o->name; o++)
        if (o->val == val)
            return o->name;
    return "?";
}

int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts,
               unsigned char *seen, size_t nseen, int *first)
{
    int opt;
    if (*first) {
        opterr = 0; /* the messages are ours */
        optind = 0; /* 0: glibc starts afresh, as for a new argv */
        *first = 0;
    }
    opt = getopt_long(argc, argv, shortopts, longopts, NULL);
    if (opt == -1) {
        if (optind < argc) {
            cli_error("unexpected argument '%s' (see attn %s --help)", argv[optind],
                      cli_command());
            return CLI_OPT_ERROR;
        }
        return -1;
    }
    if (opt == '?') {
        /* a long option given a value it does not take ("--naive=1"): glibc
         * has moved past that word, and optopt is the option's value */
        const char *word = optind >= 1 && optind <= argc ? argv[optind - 1] : "";
        const char *eq = strchr(word, '=');
        if (strncmp(word, "--", 2) == 0 && eq && optopt != 0) {
            size_t len = (size_t)(eq - word - 2);
            for (const struct option *o = longopts; o->name; o++)
                if (o->val == optopt && o->has_arg == no_argument &&
                    strncmp(o->name, word + 2, len) == 0) {
                    cli_error("option '--%s' takes no value, got '%s'", o->name, word);
                    return CLI_OPT_ERROR;
                }
        }
        /* otherwise optopt is 0 for an unknown long option and the
         * character for an unknown short one */
        if (optopt > 0 && optopt < 256)
            cli_error("unknown option '-%c' (see attn %s --help)", optopt, cli_command());
        else
            cli_error("unknown option '%s' (see attn %s --help)", word, cli_command());
        return CLI_OPT_ERROR;
    }
    if (opt == ':') {
        cli_error("option '%s' needs a value", argv[optind - 1]);
        return CLI_OPT_ERROR;
    }
    if (opt >= 0 && (size_t)opt < nseen) {
        if (seen[opt]) {
            cli_error("option '--%s' given twice", cli_option_name(longopts, opt));
            return CLI_OPT_ERROR;
        }
        seen[opt] = 1;
    }
    return opt;
}

/* ---- numbers --------------------------------------------------------- */

int cli_parse_long(const char *opt, const char *s, long min, long max, long *out)
{
    char *end = NULL;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno == ERANGE || v < min || v > max ||
        /* strtol skips leading blanks: a value must not start with one */
        (*s != '-' && *s != '+' && (*s < '0' || *s > '9'))) {
        cli_error("%s: expected an integer from %ld to %ld, got '%s'", opt, min,
                  max, s);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_parse_double(const char *opt, const char *s, double min, double max,
                     double *out)
{
    char *end = NULL;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v) || v < min ||
        v > max || (*s != '-' && *s != '+' && *s != '.' && (*s < '0' || *s > '9'))) {
        cli_error("%s: expected a number from %g to %g, got '%s'", opt, min, max, s);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_parse_bytes(const char *opt, const char *s, size_t *out)
{
    char *end = NULL;
    unsigned long long v;
    unsigned shift = 0;

    errno = 0;
    if (*s < '0' || *s > '9')
        goto bad;
    v = strtoull(s, &end, 10);
    if (end == s || errno == ERANGE)
        goto bad;
    switch (*end) {
    case '\0': break;
    case 'K': case 'k': shift = 10; end++; break;
    case 'M': case 'm': shift = 20; end++; break;
    case 'G': case 'g': shift = 30; end++; break;
    case 'T': case 't': shift = 40; end++; break;
    default: goto bad;
    }
    if (*end == 'i' && shift)
        end++; /* accept "4Gi" */
    if (*end == 'B' && shift)
        end++; /* and "4GB", "4GiB" */
    if (*end != '\0' || v == 0 || v > (SIZE_MAX >> shift))
        goto bad;
    *out = (size_t)v << shift;
    return 0;
bad:
    cli_error("%s: expected a positive size in bytes with an optional suffix K, M, "
              "G or T, got '%s'", opt, s);
    return -1;
}

int cli_check_mem(const char *what, size_t bytes, int overflow, size_t max_mem, const char *hint)
{
    char msg[1024];
    if (!overflow && bytes <= max_mem)
        return 0;
    format_mem_limit(msg, sizeof msg, what, 0, bytes, overflow, max_mem, hint);
    cli_error("%s", msg);
    return -1;
}
