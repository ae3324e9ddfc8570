/* clock.c — seconds for timing (see clock.h). */
#include "clock.h"

#include <time.h>

static double seconds_of(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double now_seconds(void)
{
    return seconds_of(CLOCK_MONOTONIC);
}

double cpu_seconds(void)
{
    return seconds_of(CLOCK_PROCESS_CPUTIME_ID);
}
