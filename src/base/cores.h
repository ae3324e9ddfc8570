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

#endif
