/* os.h — what attn asks of the operating system beyond ISO C and the
 * POSIX calls that WASI also has: a terminal's width, large buffers, a
 * seed for temporary names, and standard output redirected for a while.
 *
 * Two implementations, one per build: os_posix.c for the attn binary
 * (Linux, any POSIX system) and os_wasi.c for the WebAssembly module that
 * every --html page carries (SPEC.md §14), which has no terminal, no
 * processes and no descriptors to duplicate. The build picks the file;
 * no code elsewhere asks which one it has.
 */
#ifndef ATTN_OS_H
#define ATTN_OS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The columns of the terminal that f writes to, or 0 when f is not a
 * terminal or its width is unknown. */
int os_term_columns(FILE *f);

/* bytes (≥ 1) of uninitialised memory for a large buffer, freed with
 * free(); NULL when out of memory. Where the kernel offers them, buffers
 * of 4 MiB or more are asked for in 2 MiB pages (fewer page faults). */
void *os_alloc_large(size_t bytes);

/* 64 bits that differ between two processes started at the same moment
 * (the process id, the clocks): a seed for temporary file names. */
uint64_t os_unique_seed(void);

/* Standard output sent to a new temporary file until
 * os_stdout_restore(saved): the file (read it back, then fclose) and
 * *saved set, or NULL with errno set (ENOTSUP where there is no way). */
FILE *os_stdout_to_temp(int *saved);
void os_stdout_restore(int saved);

#endif
