/* raw_cacheline: the floor under any shared-memory transport on this machine.
 *
 * Two processes (fork) share one 64-byte cache line (mmap MAP_SHARED|MAP_ANONYMOUS)
 * and bounce it: the parent writes {payload, flag = i} and spins until the child
 * answers with flag = -i; the child spins on the flag and answers. Half the
 * round-trip time is the one-way latency of handing a cache line to another core,
 * which weft's shm ring cannot beat. Prints the median of 11 runs of N round trips
 * (after a warm-up), with min and max.
 *
 * With --rings, two more patterns follow, each with a fresh pair of processes:
 * one line per direction, each written by one side only; and a ring of 64
 * one-line slots per direction, where message i takes slot i mod 64
 * (bench/cacheline.h). The last is the floor of a queue of one-line records,
 * weft's shm rings included, before any software.
 *
 *   gcc -O2 bench/raw_cacheline.c -o raw_cacheline && ./raw_cacheline [--rings] [N [cpuA cpuB]]
 *
 * The two processes are pinned, by default on the first two CPUs this process may
 * use (as HPC ranks are pinned): two unpinned spinners that land on one core hand
 * over once per time slice, and the result measures the scheduler, not the cache. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cacheline.h"

#define RUNS 11

static const char *const pattern_name[] = {"one-way", "one line per direction, one-way",
                                           "ring of 64 one-line slots per direction, one-way"};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void pin(int cpu)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0)
        perror("sched_setaffinity");
}

static void child(bench_line_t *base, enum bench_pattern p)
{
    for (int64_t v = 1; bench_line_step(base, p, 1, v) == 0; v++)
        ;
    _exit(0);
}

static double run(bench_line_t *base, enum bench_pattern p, int64_t *next, long n)
{
    uint64_t t0 = now_ns();
    for (long i = 0; i < n; i++)
        bench_line_step(base, p, 0, (*next)++);
    return (double)(now_ns() - t0) / 1e3 / (double)n / 2.0; /* one way, us */
}

/* RUNS runs of n round trips in pattern p; prints the median. */
static int measure(enum bench_pattern p, long n, const int cpus[2])
{
    bench_line_t *base =
        mmap(NULL, BENCH_LINES_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        if (cpus[1] >= 0)
            pin(cpus[1]);
        child(base, p);
    }
    if (cpus[0] >= 0)
        pin(cpus[0]);
    int64_t next = 1;
    run(base, p, &next, n / 10 > 10000 ? n / 10 : 10000); /* warm-up */
    double r[RUNS];
    for (int i = 0; i < RUNS; i++)
        r[i] = run(base, p, &next, n);
    /* The child waits on the line of the next message: the quit goes there. */
    atomic_store(&bench_line_of(base, p, 0, next)->flag, INT64_MIN);
    waitpid(pid, NULL, 0);
    munmap(base, BENCH_LINES_BYTES);
    qsort(r, RUNS, sizeof r[0], cmp);
    printf("raw_cacheline %s: median %.3f us (min %.3f, max %.3f; %d runs of %ld round trips",
           pattern_name[p], r[RUNS / 2], r[0], r[RUNS - 1], RUNS, n);
    if (cpus[0] >= 0)
        printf(", cpus %d,%d", cpus[0], cpus[1]);
    printf(")\n");
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    int rings = argc > 1 && !strcmp(argv[1], "--rings");
    if (rings) {
        argv++;
        argc--;
    }
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    if (n <= 0)
        n = 1000000;
    int cpus[2] = {-1, -1};
    if (argc > 3) {
        cpus[0] = atoi(argv[2]);
        cpus[1] = atoi(argv[3]);
    } else {
        cpu_set_t set;
        int k = 0;
        if (sched_getaffinity(0, sizeof set, &set) == 0)
            for (int c = 0; c < CPU_SETSIZE && k < 2; c++)
                if (CPU_ISSET(c, &set))
                    cpus[k++] = c;
        if (k < 2)
            cpus[0] = cpus[1] = -1; /* one CPU: leave it to the scheduler */
    }
    int rc = measure(BENCH_LINE, n, cpus);
    if (!rc && rings)
        rc = measure(BENCH_PAIR, n, cpus) || measure(BENCH_RING, n, cpus);
    return rc;
}
