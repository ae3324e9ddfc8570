/* cli.c — errors, number parsing and the memory limit
 * shared by every attn command (see cli.h). */
#include "cli.h"

#include "checked.h"
#include "i18n.h"

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

const char *cli_count(char *buf, size_t size, const char *one, const char *many, size_t n)
{
    snprintf(buf, size, i18n_plural(one, many, n), n);
    return buf;
}

void cli_put_word(FILE *f, const char *w)
{
    if (w[0] != '\0' && strcspn(w, " \t\n\"'\\$`|&;<>()*?[]#~!{}") == strlen(w)) {
        fputs(w, f);
        return;
    }
    fputc('\'', f);
    for (; *w; w++) {
        if (*w == '\'')
            fputs("'\\''", f);
        else
            fputc(*w, f);
    }
    fputc('\'', f);
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout); /* keep the order of normal output and the error */
    if (command_name)
        fprintf(stderr, "attn %s: ", command_name);
    else
        fputs("attn: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, _(fmt), ap); /* xgettext takes fmt (po/meson.build) */
    va_end(ap);
    fputc('\n', stderr);
}

/* ---- numbers --------------------------------------------------------- */

int cli_parse_long(const char *opt, const char *s, long min, long max, long *out)
{
    char *end = NULL;

    errno = 0;
    long v = strtol(s, &end, 10);
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

    errno = 0;
    double v = strtod(s, &end);
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
