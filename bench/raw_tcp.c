/* raw_tcp: the floor under any TCP transport on this machine.
 *
 * Two processes (fork), pinned one per CPU, joined by one loopback TCP
 * connection (TCP_NODELAY, non-blocking, busy-polling recv/send as weft's tcp
 * driver does):
 *  - latency: 8-byte ping-pong, half the round trip; median of 11 runs of N
 *    round trips (after a warm-up), with min and max;
 *  - bandwidth: the parent streams 4 MiB messages (a window of 16, then a
 *    4-byte ack, as weft_pingpong and osu_bw do); median of 11 runs.
 *
 *   raw_tcp [N [cpuA cpuB]]
 *
 * Output lines: "latency 8 B: median X us (min Y, max Z)" and
 * "bandwidth 4 MiB: median X MB/s (min Y, max Z)". */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sock_all.h"

#define RUNS   11
#define BIG    (4u << 20)
#define WINDOW 16

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
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
        perror("raw_tcp: sched_setaffinity");
}

static void die(const char *what)
{
    perror(what);
    exit(1);
}

/* All of buf, busy-polling (sock_all.h); the run ends on a failure. */
static void send_all(int fd, const void *buf, size_t len)
{
    if (bench_sock_all(fd, true, (void *)buf, len))
        die("raw_tcp: send");
}

static void recv_all(int fd, void *buf, size_t len)
{
    if (bench_sock_all(fd, false, buf, len)) {
        if (!errno) {
            fprintf(stderr, "raw_tcp: peer closed\n");
            exit(1);
        }
        die("raw_tcp: recv");
    }
}

static void report(const char *what, double *v, const char *unit)
{
    qsort(v, RUNS, sizeof *v, cmp);
    printf("%s: median %.3f %s (min %.3f, max %.3f)\n", what, v[RUNS / 2], unit, v[0], v[RUNS - 1]);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    int cpu_a = argc > 3 ? atoi(argv[2]) : -1, cpu_b = argc > 3 ? atoi(argv[3]) : -1;
    if (cpu_a < 0) {
        cpu_set_t set;
        sched_getaffinity(0, sizeof set, &set);
        for (int c = 0, k = 0; c < CPU_SETSIZE && k < 2; c++)
            if (CPU_ISSET(c, &set)) {
                if (k++ == 0)
                    cpu_a = c;
                else
                    cpu_b = c;
            }
    }
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sa;
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sl) || listen(lfd, 1) ||
        getsockname(lfd, (struct sockaddr *)&sa, &sl))
        die("raw_tcp: listen");
    char *buf = malloc(BIG);
    if (!buf)
        die("raw_tcp: malloc");
    memset(buf, 1, BIG);
    int one = 1;
    pid_t child = fork();
    if (child < 0)
        die("raw_tcp: fork");
    if (child == 0) {
        if (cpu_b >= 0)
            pin(cpu_b);
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sl))
            die("raw_tcp: connect");
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        char b8[8];
        for (int r = 0; r <= RUNS; r++)
            for (long i = 0; i < n; i++) {
                recv_all(fd, b8, 8);
                send_all(fd, b8, 8);
            }
        long iters = 20;
        for (int r = 0; r <= RUNS; r++)
            for (long i = 0; i < iters; i++) {
                for (int w = 0; w < WINDOW; w++)
                    recv_all(fd, buf, BIG);
                send_all(fd, b8, 4);
            }
        _exit(0);
    }
    if (cpu_a >= 0)
        pin(cpu_a);
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0)
        die("raw_tcp: accept");
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    char b8[8] = "pingpong";
    double lat[RUNS], bw[RUNS];
    for (int r = -1; r < RUNS; r++) { /* run -1 warms up */
        double t0 = now_us();
        for (long i = 0; i < n; i++) {
            send_all(fd, b8, 8);
            recv_all(fd, b8, 8);
        }
        if (r >= 0)
            lat[r] = (now_us() - t0) / (double)n / 2.0;
    }
    long iters = 20;
    for (int r = -1; r < RUNS; r++) {
        double t0 = now_us();
        for (long i = 0; i < iters; i++) {
            for (int w = 0; w < WINDOW; w++)
                send_all(fd, buf, BIG);
            recv_all(fd, b8, 4);
        }
        if (r >= 0)
            bw[r] = (double)BIG * WINDOW * (double)iters / (now_us() - t0);
    }
    int st;
    waitpid(child, &st, 0);
    printf("# raw_tcp: loopback, TCP_NODELAY, busy-polling; cpus %d and %d; %ld round trips per "
           "run\n",
           cpu_a, cpu_b, n);
    report("latency 8 B", lat, "us");
    report("bandwidth 4 MiB", bw, "MB/s");
    return 0;
}
