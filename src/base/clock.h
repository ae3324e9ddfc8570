/* clock.h — seconds for timing: wall-clock (monotonic) and the process's
 * CPU time, which a busy machine does not inflate. Differences of two
 * readings are what matter; the origin is arbitrary. */
#ifndef ATTN_CLOCK_H
#define ATTN_CLOCK_H

/* Seconds on the monotonic wall clock. */
double now_seconds(void);

/* Seconds of CPU time used by this process, all threads. */
double cpu_seconds(void);

#endif
