/* checked.c — size arithmetic that reports overflow, float buffers, and
 * byte counts for messages (see checked.h). */
#include "checked.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

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

float *float_alloc(size_t count)
{
    size_t bytes;
    if (size_mul(count, sizeof(float), &bytes) != 0)
        return NULL;
    return malloc(bytes ? bytes : 1);
}

void free_each(void *const *ptrs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(ptrs[i]);
}

size_t ceil_div(size_t a, size_t b)
{
    return a / b + (a % b != 0);
}

void format_bytes(char *buf, size_t buflen, double bytes)
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

void format_mem_limit(char *buf, size_t buflen, const char *what, int plural, size_t bytes,
                      int overflow, size_t max_mem, const char *hint)
{
    char need[64], have[32];
    format_bytes(have, sizeof have, (double)max_mem);
    if (overflow)
        snprintf(need, sizeof need, "%s than this machine can address",
                 plural ? "more" : "more memory");
    else
        format_bytes(need, sizeof need, (double)bytes);
    snprintf(buf, buflen, "%s %s %s%s, more than --max-mem %s%s%s", what,
             plural ? "need" : "needs", overflow ? "" : "about ", need, have,
             hint ? "; " : "", hint ? hint : "");
}
