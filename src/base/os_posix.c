/* os_posix.c — os.h for the attn binary: Linux and other POSIX systems. */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include "os.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/ioctl.h> /* TIOCGWINSZ */
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

int os_term_columns(FILE *f)
{
    struct winsize ws;
    int fd = f ? fileno(f) : -1;
    if (fd >= 0 && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return (int)ws.ws_col;
    return 0;
}

void *os_alloc_large(size_t bytes)
{
#if defined(MADV_HUGEPAGE)
    /* Large buffers in 2 MiB pages where the kernel offers them: a 20 MB
     * matrix then costs ten page faults instead of five thousand. */
    const size_t huge = (size_t)2 << 20;
    if (bytes >= 2 * huge) {
        void *p = NULL;
        size_t rounded = (bytes + huge - 1) / huge * huge;
        if (posix_memalign(&p, huge, rounded) == 0) {
            (void)madvise(p, rounded, MADV_HUGEPAGE); /* a hint: failure is harmless */
            return p;
        }
    }
#endif
    return malloc(bytes ? bytes : 1);
}

uint64_t os_unique_seed(void)
{
    return (uint64_t)getpid() << 32 ^ (uint64_t)time(NULL) ^ (uint64_t)clock() << 16;
}

FILE *os_stdout_to_temp(int *saved)
{
    FILE *f = tmpfile();
    int fd = f ? dup(STDOUT_FILENO) : -1;
    if (fd < 0 || dup2(fileno(f), STDOUT_FILENO) < 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        if (f)
            fclose(f);
        errno = e;
        return NULL;
    }
    *saved = fd;
    return f;
}

void os_stdout_restore(int saved)
{
    dup2(saved, STDOUT_FILENO);
    close(saved);
}
