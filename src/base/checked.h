/* checked.h — the small helpers every layer shares: size arithmetic that
 * reports overflow instead of wrapping, and byte counts for messages. */
#ifndef ATTN_CHECKED_H
#define ATTN_CHECKED_H

#include <stddef.h>

/* Overflow-checked size arithmetic: 0 and *out set, or -1 on overflow. */
int size_mul(size_t a, size_t b, size_t *out);
int size_add(size_t a, size_t b, size_t *out);

/* ⌈a / b⌉ for b ≥ 1, without overflow. */
size_t ceil_div(size_t a, size_t b);

/* "1.5 GiB", "512 B": for messages. */
void format_bytes(char *buf, size_t buflen, double bytes);

#endif
