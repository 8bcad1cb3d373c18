/* raw_cacheline: the floor under any shared-memory transport on this machine.
 *
 * Two processes (fork) share one 64-byte cache line (mmap MAP_SHARED|MAP_ANONYMOUS)
 * and bounce it: the parent writes {payload, flag = i} and spins until the child
 * answers with flag = -i; the child spins on the flag and answers. Half the
 * round-trip time is the one-way latency of handing a cache line to another core,
 * which weft's shm ring cannot beat. Prints the median of 11 runs of N round trips
 * (after a warm-up), with min and max.
 *
 *   gcc -O2 bench/raw_cacheline.c -o raw_cacheline && ./raw_cacheline [N [cpuA cpuB]]
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
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RUNS 11

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ __volatile__("yield" ::: "memory")
#else
#define cpu_relax() ((void)0)
#endif

struct line {
    _Alignas(64) _Atomic int64_t flag; /* > 0: ping i; < 0: pong -i; INT64_MIN: quit */
    int64_t payload[7];
};

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

static void child(struct line *l)
{
    int64_t expect = 1;
    for (;;) {
        int64_t f;
        while ((f = atomic_load_explicit(&l->flag, memory_order_acquire)) != expect) {
            if (f == INT64_MIN)
                _exit(0);
            cpu_relax();
        }
        l->payload[0] = l->payload[0] + 1;
        atomic_store_explicit(&l->flag, -expect, memory_order_release);
        expect++;
    }
}

static double run(struct line *l, int64_t *next, long n)
{
    uint64_t t0 = now_ns();
    for (long i = 0; i < n; i++) {
        int64_t v = (*next)++;
        l->payload[0] = v;
        atomic_store_explicit(&l->flag, v, memory_order_release);
        while (atomic_load_explicit(&l->flag, memory_order_acquire) != -v)
            cpu_relax();
    }
    return (double)(now_ns() - t0) / 1e3 / (double)n / 2.0; /* one way, us */
}

int main(int argc, char **argv)
{
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
    struct line *l = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (l == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    atomic_store(&l->flag, 0);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        if (cpus[1] >= 0)
            pin(cpus[1]);
        child(l);
    }
    if (cpus[0] >= 0)
        pin(cpus[0]);
    int64_t next = 1;
    run(l, &next, n / 10 > 10000 ? n / 10 : 10000); /* warm-up */
    double r[RUNS];
    for (int i = 0; i < RUNS; i++)
        r[i] = run(l, &next, n);
    atomic_store(&l->flag, INT64_MIN);
    waitpid(pid, NULL, 0);
    qsort(r, RUNS, sizeof r[0], cmp);
    printf("raw_cacheline one-way: median %.3f us (min %.3f, max %.3f; %d runs of %ld round trips",
           r[RUNS / 2], r[0], r[RUNS - 1], RUNS, n);
    if (cpus[0] >= 0)
        printf(", cpus %d,%d", cpus[0], cpus[1]);
    printf(")\n");
    return 0;
}
