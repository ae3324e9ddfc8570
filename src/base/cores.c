/* cores.c — the cores free for this process now, and the threads a run
 * takes (see cores.h). */
#define _DEFAULT_SOURCE /* DT_DIR */
#include "cores.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "clock.h"

/* The runnable tasks of the whole system, this process's among them
 * ("0.52 0.58 0.59 3/412 8021": the 3), or -1. */
static int runnable_tasks(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    double l1, l5, l15;
    int running = -1, total;
    if (!f)
        return -1;
    if (fscanf(f, "%lf %lf %lf %d/%d", &l1, &l5, &l15, &running, &total) != 5)
        running = -1;
    fclose(f);
    return running;
}

/* This process's threads in state R (running or waiting for a core), or
 * -1. A thread's stat line is "TID (NAME) S …": the state follows the last
 * ')', since NAME may hold any character. */
static int own_runnable(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int n = 0;
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL) {
        char path[64], line[256];
        FILE *f;
        size_t len;
        const char *close;
        if (e->d_name[0] < '0' || e->d_name[0] > '9' ||
            snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name) >= (int)sizeof path)
            continue;
        f = fopen(path, "r");
        if (!f)
            continue; /* the thread has ended */
        len = fread(line, 1, sizeof line - 1, f);
        fclose(f);
        line[len] = '\0';
        close = strrchr(line, ')');
        if (close && close[1] == ' ' && close[2] == 'R')
            n++;
    }
    closedir(d);
    return n;
}

int cores_free(int most)
{
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    const int running = runnable_tasks(), own = own_runnable();
    long others, free_cores;
    if (most <= 1 || running < 0 || own < 0 || online < 1)
        return most < 1 ? 1 : most;
    /* the other tasks spread over every online CPU, not only ours */
    others = running > own ? running - own : 0;
    free_cores = online - others;
    return free_cores < 1 ? 1 : free_cores < most ? (int)free_cores : most;
}

static int fixed_threads; /* --threads N, or 0: as many cores as are free */

void cores_set_threads(int n)
{
    if (n > 0)
        fixed_threads = n;
}

int cores_threads(void)
{
#ifdef _OPENMP
    /* the last reading of the free cores and when it was taken (one
     * thread decides: the caller, outside any parallel region) */
    static int free_cores;
    static double read_at;
    const int most = omp_get_max_threads();
    double now;
    if (fixed_threads > 0)
        return fixed_threads;
    if (most <= 1)
        return most;
    now = now_seconds();
    if (free_cores == 0 || now - read_at > 0.02) {
        free_cores = cores_free(most);
        read_at = now;
    }
    return free_cores < most ? free_cores : most;
#else
    return 1;
#endif
}
