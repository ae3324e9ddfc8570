/* checked.h — the small helpers every layer shares: size arithmetic that
 * reports overflow instead of wrapping, float buffers allocated with that
 * check and released together, and byte counts for messages. */
#ifndef ATTN_CHECKED_H
#define ATTN_CHECKED_H

#include <stddef.h>

/* Overflow-checked size arithmetic: 0 and *out set, or -1 on overflow. */
int size_mul(size_t a, size_t b, size_t *out);
int size_add(size_t a, size_t b, size_t *out);

/* Memory for count floats (uninitialised, released with free), the size
 * count × sizeof(float) checked: NULL when it overflows size_t or malloc
 * fails. A count of 0 still gives a valid pointer (to one float). */
float *float_alloc(size_t count);
/* free() each of the n pointers (NULL ones too, as free does): the
 * release of a record's buffers, FREE_EACH(r->a, r->b, …) with the count
 * counted. */
void free_each(void *const *ptrs, size_t n);
#define FREE_EACH(...)                                                                         \
    free_each((void *const[]){__VA_ARGS__}, sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *))
/* ⌈a / b⌉ for b ≥ 1, without overflow. */
size_t ceil_div(size_t a, size_t b);

/* "1.5 GiB", "512 B": for messages. */
void format_bytes(char *buf, size_t buflen, double bytes);

/* The one sentence for a run refused by --max-mem, into buf[buflen]:
 *   "WHAT needs about 37.3 GiB, more than --max-mem 4 GiB"
 *   "WHAT needs more memory than this machine can address, more than
 *    --max-mem 4 GiB"                        (overflow: the count overflowed)
 * and with plural (WHAT is "the inputs and weights")
 *   "WHAT need about 169 KiB, more than --max-mem 1 KiB"
 *   "WHAT need more than this machine can address, more than --max-mem 4 GiB"
 * hint, when not NULL, is appended after "; ". The caller prints it. */
void format_mem_limit(char *buf, size_t buflen, const char *what, int plural, size_t bytes,
                      int overflow, size_t max_mem, const char *hint);

#endif
