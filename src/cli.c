/* cli.c — errors, number parsing, memory limit and atomic output files
 * shared by every attn command (see cli.h). */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

int size_mul(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a)
        return -1;
    *out = a * b;
    return 0;
}

int size_add(size_t a, size_t b, size_t *out)
{
    if (b > SIZE_MAX - a)
        return -1;
    *out = a + b;
    return 0;
}

void cli_format_bytes(char *buf, size_t buflen, double bytes)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    size_t u = 0;
    while (bytes >= 1024.0 && u + 1 < sizeof unit / sizeof unit[0]) {
        bytes /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, buflen, "%.0f B", bytes);
    else
        snprintf(buf, buflen, "%.3g %s", bytes, unit[u]);
}

int cli_check_mem(const char *what, size_t bytes, int overflow, size_t max_mem, const char *hint)
{
    char need[32], have[32];
    if (!overflow && bytes <= max_mem)
        return 0;
    cli_format_bytes(have, sizeof have, (double)max_mem);
    if (overflow) {
        cli_error("%s needs more memory than this machine can address, more than "
                  "--max-mem %s%s%s", what, have, hint ? "; " : "", hint ? hint : "");
    } else {
        cli_format_bytes(need, sizeof need, (double)bytes);
        cli_error("%s needs about %s, more than --max-mem %s%s%s", what, need, have,
                  hint ? "; " : "", hint ? hint : "");
    }
    return -1;
}

/* ---- atomic output files --------------------------------------------- */

static char *dup_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* A well mixed 64-bit number (SplitMix64's finaliser). */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* Create a new file "<path>.XXXXXX" (the name written to tmp, which has
 * room for strlen(path) + 8 bytes) with O_EXCL and mode 0666, so that the
 * umask applies as for any new file. Returns the descriptor, or -1 with
 * errno set. */
static int create_temp(const char *path, char *tmp)
{
    static const char alphabet[] =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    static uint64_t counter;
    size_t plen = strlen(path);
    uint64_t seed = (uint64_t)getpid() << 32 ^ (uint64_t)time(NULL) ^
                    (uint64_t)clock() << 16 ^ (uint64_t)(uintptr_t)tmp;
    int attempt, i, fd;
    for (attempt = 0; attempt < 100; attempt++) {
        /* six random characters after the path and a dot */
        uint64_t bits = mix64(seed + ++counter * 0x9e3779b97f4a7c15u);
        memcpy(tmp, path, plen);
        tmp[plen] = '.';
        for (i = 0; i < 6; i++, bits /= 62)
            tmp[plen + 1 + (size_t)i] = alphabet[bits % 62];
        tmp[plen + 7] = '\0';
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

int atomic_open(atomic_file *af, const char *path, char *err, size_t errlen)
{
    struct stat st;
    size_t n;
    int fd;

    af->f = NULL;
    af->tmp_path = NULL;
    af->path = NULL;
    if (strcmp(path, "-") == 0) {
        af->f = stdout;
        return 0;
    }
    if (path[0] == '\0') {
        snprintf(err, errlen, "an empty file name");
        return -1;
    }
    /* a directory cannot be replaced by a file: say so before writing */
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: cannot write: Is a directory", path);
        return -1;
    }
    /* a device or a pipe (/dev/null, /dev/full, a FIFO) is written in place:
     * renaming over it would replace the device with a file */
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        af->f = fopen(path, "wb");
        if (!af->f) {
            snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
            return -1;
        }
        af->path = dup_string(path);
        if (!af->path) {
            fclose(af->f);
            af->f = NULL;
            snprintf(err, errlen, "%s: cannot write: out of memory", path);
            return -1;
        }
        return 0; /* tmp_path NULL: atomic_commit closes it in place */
    }
    if (size_add(strlen(path), 8, &n) != 0 || (af->tmp_path = malloc(n)) == NULL ||
        (af->path = dup_string(path)) == NULL) {
        snprintf(err, errlen, "%s: cannot create: out of memory", path);
        goto fail;
    }
    /* PATH.XXXXXX in the same folder, so that rename() replaces atomically */
    fd = create_temp(path, af->tmp_path);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
        goto fail;
    }
    af->f = fdopen(fd, "wb");
    if (!af->f) {
        snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
        close(fd);
        unlink(af->tmp_path);
        goto fail;
    }
    return 0;
fail:
    free(af->tmp_path);
    free(af->path);
    af->tmp_path = NULL;
    af->path = NULL;
    return -1;
}

int atomic_commit(atomic_file *af, char *err, size_t errlen)
{
    int e = 0;

    if (af->tmp_path == NULL && af->f == stdout) { /* main checks it at exit */
        af->f = NULL;
        return 0;
    }
    if (af->tmp_path == NULL) { /* a device or a pipe, written in place */
        errno = 0;
        e = fflush(af->f) != 0 || ferror(af->f) ? (errno ? errno : EIO) : 0;
        if (fclose(af->f) != 0 && e == 0)
            e = errno ? errno : EIO;
        af->f = NULL;
        if (e != 0)
            snprintf(err, errlen, "%s: cannot write: %s", af->path, strerror(e));
        free(af->path);
        af->path = NULL;
        return e ? -1 : 0;
    }
    /* flush, sync and close, each checked: a full disk shows up in one */
    errno = 0;
    if (ferror(af->f))
        e = errno ? errno : EIO;
    else if (fflush(af->f) != 0 || fsync(fileno(af->f)) != 0)
        e = errno ? errno : EIO;
    if (fclose(af->f) != 0 && e == 0)
        e = errno ? errno : EIO;
    af->f = NULL;
    if (e == 0 && rename(af->tmp_path, af->path) != 0)
        e = errno;
    if (e != 0) {
        snprintf(err, errlen, "%s: cannot write: %s", af->path, strerror(e));
        atomic_abort(af);
        return -1;
    }
    free(af->tmp_path);
    free(af->path);
    af->tmp_path = NULL;
    af->path = NULL;
    return 0;
}

void atomic_abort(atomic_file *af)
{
    if (af->tmp_path) {
        if (af->f)
            fclose(af->f);
        unlink(af->tmp_path);
    } else if (af->f && af->f != stdout) {
        fclose(af->f); /* a device or a pipe */
    }
    free(af->tmp_path);
    free(af->path);
    af->f = NULL;
    af->tmp_path = NULL;
    af->path = NULL;
}
