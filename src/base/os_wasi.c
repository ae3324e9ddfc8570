/* os_wasi.c — os.h for the WebAssembly module of the pages (WASI): no
 * terminal (the page reads what the module prints), plain malloc, no
 * process id, and standard output cannot be redirected (attn tour --html,
 * which needs it, writes files, which the module does not). */
#include "os.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

int os_term_columns(FILE *f)
{
    (void)f;
    return 0;
}

void *os_alloc_large(size_t bytes)
{
    return malloc(bytes ? bytes : 1);
}

uint64_t os_unique_seed(void)
{
    struct timespec ts = {0, 0};
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)time(NULL) ^ (uint64_t)ts.tv_nsec << 16;
}

FILE *os_stdout_to_temp(int *saved)
{
    (void)saved;
    errno = ENOTSUP;
    return NULL;
}

void os_stdout_restore(int saved)
{
    (void)saved;
}
