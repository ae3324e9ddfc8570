/* cores.h — how many cores are free for this process right now: the
 * threads default (--threads not given) follows it, so that on a machine
 * busy with other work attn runs on the cores it can have rather than
 * waiting at every step for a thread the system has not scheduled. */
#ifndef ATTN_CORES_H
#define ATTN_CORES_H

/* Of `most` cores (the CPUs this process may run on), how many no other
 * process's runnable task occupies at this moment: the online CPUs less
 * the tasks the kernel counts as runnable (/proc/loadavg's fourth field),
 * not counting this process's own threads that are runnable
 * (/proc/self/task/ * /stat: state R); at least 1, at most `most`.
 * `most` when /proc cannot tell (not Linux, /proc not mounted). A
 * snapshot: ask again for a later decision. */
int cores_free(int most);

/* Threads for the parallel loops: cores_set_threads(n) fixes them at n
 * (--threads N); n <= 0 leaves the default. cores_threads() is the
 * number for the work about to start: the fixed one, or by default the
 * cores free at this moment (cores_free of the cores OpenMP would use,
 * OMP_NUM_THREADS included), read again every 20 ms; 1 without OpenMP.
 * attn's results are the same bits for any number, so the count may
 * change from one step to the next; on a machine busy with other work a
 * step then runs on the cores it can have, instead of waiting at every
 * barrier for a thread the system has not scheduled. */
void cores_set_threads(int n);
int cores_threads(void);

#endif
