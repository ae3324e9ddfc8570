/* atomic_file.c — output files written whole or not at all (see
 * atomic_file.h). */
#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "checked.h"
#include "os.h"
#include "i18n.h"

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
    uint64_t seed = os_unique_seed() ^ (uint64_t)(uintptr_t)tmp;
    for (int attempt = 0; attempt < 100; attempt++) {
        /* six random characters after the path and a dot */
        uint64_t bits = mix64(seed + ++counter * 0x9e3779b97f4a7c15u);
        memcpy(tmp, path, plen);
        tmp[plen] = '.';
        for (int i = 0; i < 6; i++, bits /= 62)
            tmp[plen + 1 + (size_t)i] = alphabet[bits % 62];
        tmp[plen + 7] = '\0';
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
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
        snprintf(err, errlen, "%s", _("an empty file name"));
        return -1;
    }
    /* a directory cannot be replaced by a file: say so before writing */
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, _("%s: cannot write: Is a directory"), path);
        return -1;
    }
    /* a device or a pipe (/dev/null, /dev/full, a FIFO) is written in place:
     * renaming over it would replace the device with a file */
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        af->f = fopen(path, "wb");
        if (!af->f) {
            snprintf(err, errlen, _("%s: cannot write: %s"), path, strerror(errno));
            return -1;
        }
        af->path = dup_string(path);
        if (!af->path) {
            fclose(af->f);
            af->f = NULL;
            snprintf(err, errlen, _("%s: cannot write: out of memory"), path);
            return -1;
        }
        return 0; /* tmp_path NULL: atomic_commit closes it in place */
    }
    if (size_add(strlen(path), 8, &n) != 0 || (af->tmp_path = malloc(n)) == NULL ||
        (af->path = dup_string(path)) == NULL) {
        snprintf(err, errlen, _("%s: cannot create: out of memory"), path);
        goto fail;
    }
    /* PATH.XXXXXX in the same folder, so that rename() replaces atomically */
    fd = create_temp(path, af->tmp_path);
    if (fd < 0) {
        snprintf(err, errlen, _("%s: cannot create: %s"), path, strerror(errno));
        goto fail;
    }
    af->f = fdopen(fd, "wb");
    if (!af->f) {
        snprintf(err, errlen, _("%s: cannot create: %s"), path, strerror(errno));
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
            snprintf(err, errlen, _("%s: cannot write: %s"), af->path, strerror(e));
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
        snprintf(err, errlen, _("%s: cannot write: %s"), af->path, strerror(e));
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
