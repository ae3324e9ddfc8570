/* checked.c — size arithmetic that reports overflow, and byte counts for
 * messages (see checked.h). */
#include "checked.h"

#include <stdint.h>
#include <stdio.h>

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
