/* weft_pingpong: point-to-point latency and bandwidth between ranks 0 and 1 over
 * the native weft API, 1 B .. 64 MiB in powers of two.
 *
 *   weftrun -n 2 weft_pingpong [--pin] [--quick] [--runs R] [--min S] [--max S] [--step K]
 * [--window W] [--floor]
 *
 * latency_us    half the round-trip time of a blocking ping-pong (isend + wait,
 *               irecv + wait on each side), as in OSU osu_latency.
 * bandwidth_MBps streaming bandwidth, as in OSU osu_bw: rank 0 starts a window of
 *               W (default 16) isends of the same buffer, rank 1 W irecvs into one
 *               buffer, then rank 1 answers with a 4-byte ack; bytes = W * size per
 *               window. MB = 10^6 bytes.
 * pingpong_MBps size / latency, the bandwidth a strict ping-pong sees.
 * floor_us      with --floor, for sizes up to 56 B: the same two processes, over
 *               shared memory, hand one 64-byte cache line back and forth in a
 *               page they share (as bench/raw_cacheline does); over tcp
 *               (WEFT_DRIVERS=tcp, both ranks on one host), ping-pong 8 bytes
 *               over a plain loopback socket of their own (TCP_NODELAY,
 *               non-blocking, busy-polling, as bench/raw_tcp does). One-way; a
 *               floor run follows each latency run, so both see the same cores,
 *               clock and neighbours.
 * ring_floor_us over shm also the floor of a ring of one-line records per
 *               direction (cacheline.h): where any shm queue starts.
 * floor_ratio   the median over the runs of latency / floor of each pair: the
 *               measure of how close a message comes to the hardware, which a
 *               floor timed apart cannot give where the machine's core-to-core
 *               time or clock changes from minute to minute (a shared VM);
 * ring_floor_ratio the same against the ring floor.
 *
 * Each value is the median of R runs (default 7, 5 with --quick); each run is a
 * number of iterations scaled with the size, after a warm-up run. A zero-byte
 * handshake on its own communicator separates the runs. The plain-MPI twin is
 * mpi_pingpong.c: keep the two measuring the same thing. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench_common.h"
#include "bench_weft.h"
#include "cacheline.h"
#include "sock_all.h"
#include "weft/weft.h"

#define COMM_DATA 0u
#define COMM_CTRL 1u
#define TAG_PING  1u
#define TAG_ACK   2u

static weft_ctx_t *ctx;
static int rank, peer;

/* One-way latency in us over iters round trips. */
static double run_latency(char *sbuf, char *rbuf, size_t len, long iters)
{
    bench_handshake(ctx, peer, COMM_CTRL);
    double t0 = bench_now_us();
    for (long i = 0; i < iters; i++) {
        if (rank == 0) {
            bench_send_wait(ctx, peer, COMM_DATA, TAG_PING, sbuf, len);
            bench_recv_wait(ctx, peer, COMM_DATA, TAG_PING, rbuf, len);
        } else {
            bench_recv_wait(ctx, peer, COMM_DATA, TAG_PING, rbuf, len);
            bench_send_wait(ctx, peer, COMM_DATA, TAG_PING, sbuf, len);
        }
    }
    return (bench_now_us() - t0) / (double)iters / 2.0;
}

/* --floor over shm: cache lines in pages both ranks map (cacheline.h). */
static bench_line_t *floor_line;
static int64_t floor_next = 1; /* the next message's number, the same on both ranks */
static int floor_fd = -1;      /* or the floor's socket, over tcp */

/* Rank `from` hands n bytes at v to the other rank. */
static void floor_tell(int from, void *v, size_t n)
{
    if (rank == from)
        bench_send_wait(ctx, peer, COMM_CTRL, TAG_ACK, v, n);
    else
        bench_recv_wait(ctx, peer, COMM_CTRL, TAG_ACK, v, n);
}

/* Whether both ranks say yes: rank 0 learns rank 1's word, answers with both. */
static int floor_agree(int ok)
{
    int other = ok;
    floor_tell(1, &other, sizeof other);
    int both = ok && other;
    floor_tell(0, &both, sizeof both);
    return both;
}

/* Over tcp: a loopback connection of our own. Rank 0 listens and names its
 * port; rank 1 connects (it fails where the ranks are on two hosts, and the
 * floor is then not measured). */
static int floor_connect(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), lfd = -1;
    uint32_t port = 0;
    if (rank == 0) {
        lfd = fd;
        fd = -1;
        if (lfd >= 0 && bind(lfd, (struct sockaddr *)&a, sizeof a) == 0 && listen(lfd, 1) == 0 &&
            getsockname(lfd, (struct sockaddr *)&a, &alen) == 0)
            port = ntohs(a.sin_port);
    }
    floor_tell(0, &port, sizeof port);
    if (rank == 1) {
        a.sin_port = htons((uint16_t)port);
        if (fd >= 0 && (!port || connect(fd, (struct sockaddr *)&a, sizeof a) != 0)) {
            close(fd);
            fd = -1;
        }
    }
    /* Rank 1 is connected (or has failed) before rank 0 accepts: the
     * connection waits in the backlog, and accept never blocks for nothing. */
    int ok = floor_agree(rank == 0 ? port != 0 : fd >= 0);
    if (rank == 0 && lfd >= 0) {
        if (ok)
            fd = accept(lfd, NULL, NULL);
        close(lfd);
    }
    int one = 1;
    ok = floor_agree(fd >= 0 && setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) == 0);
    if (!ok) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    floor_fd = fd;
    return 0;
}

/* Map the shared page: rank 0 makes it and names it to rank 1, then unlinks
 * it once rank 1 has it mapped (nothing stays in /dev/shm). */
static int floor_map(void)
{
    char name[64];
    unsigned long long id = 0;
    int fd = -1;
    if (rank == 0) {
        id = (unsigned long long)getpid();
        snprintf(name, sizeof name, "/weft-bench-floor-%llu", id);
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd >= 0 && ftruncate(fd, BENCH_LINES_BYTES) != 0) {
            close(fd);
            fd = -1;
        }
        if (fd < 0)
            id = 0; /* tells rank 1 there is no page */
    }
    floor_tell(0, &id, sizeof id);
    if (rank == 1) {
        snprintf(name, sizeof name, "/weft-bench-floor-%llu", id);
        if (id)
            fd = shm_open(name, O_RDWR, 0);
    }
    void *p = fd >= 0 ? mmap(NULL, BENCH_LINES_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                      : MAP_FAILED;
    if (fd >= 0)
        close(fd);
    int ok = p != MAP_FAILED;
    /* Both answer: rank 0 unlinks, and both use the page only if both have it. */
    int both = floor_agree(ok);
    if (rank == 0 && id)
        shm_unlink(name);
    if (!both) {
        if (ok)
            munmap(p, BENCH_LINES_BYTES);
        return -1;
    }
    floor_line = p;
    return 0;
}

/* One-way time in us of iters messages through the floor: the socket over
 * tcp, else shared lines in pattern p. */
static double run_floor(long iters, enum bench_pattern p)
{
    bench_handshake(ctx, peer, COMM_CTRL);
    double t0 = bench_now_us();
    if (floor_fd >= 0) {
        char b[8] = {0};
        for (long i = 0; i < iters; i++)
            if (bench_sock_all(floor_fd, rank == 0, b, sizeof b) ||
                bench_sock_all(floor_fd, rank != 0, b, sizeof b)) {
                fprintf(stderr, "weft_pingpong: --floor: the socket failed: %s\n",
                        errno ? strerror(errno) : "peer closed");
                exit(1);
            }
    } else {
        for (long i = 0; i < iters; i++)
            bench_line_step(floor_line, p, rank, floor_next++);
    }
    return (bench_now_us() - t0) / (double)iters / 2.0;
}

/* Streaming bandwidth in MB/s over iters windows. */
static double run_bandwidth(char *sbuf, char *rbuf, size_t len, long iters, int window,
                            weft_request_t **reqs)
{
    char ack[4] = {0};
    bench_handshake(ctx, peer, COMM_CTRL);
    double t0 = bench_now_us();
    for (long i = 0; i < iters; i++) {
        if (rank == 0) {
            for (int w = 0; w < window; w++)
                CHECK(weft_sr_isend(ctx, peer, COMM_DATA, TAG_PING, sbuf, len, &reqs[w]));
            CHECK(weft_sr_waitall(ctx, window, reqs, NULL));
            bench_recv_wait(ctx, peer, COMM_DATA, TAG_ACK, ack, sizeof ack);
        } else {
            for (int w = 0; w < window; w++)
                CHECK(weft_sr_irecv(ctx, peer, COMM_DATA, TAG_PING, rbuf, len, &reqs[w]));
            CHECK(weft_sr_waitall(ctx, window, reqs, NULL));
            bench_send_wait(ctx, peer, COMM_DATA, TAG_ACK, ack, sizeof ack);
        }
    }
    double us = bench_now_us() - t0;
    return (double)len * (double)window * (double)iters / us; /* bytes/us = MB/s */
}

/* Iterations per run: enough round trips for small sizes, about a fixed
 * number of bytes for large ones. */
static long iters_for(size_t len, long max_iters, double budget_bytes, long min_iters)
{
    double n = budget_bytes / (double)len;
    if (n > (double)max_iters)
        return max_iters;
    return n < (double)min_iters ? min_iters : (long)n;
}

int main(int argc, char **argv)
{
    bench_opts_t o = {.runs = 7, .min = 1, .max = 64u << 20, .window = 16};
    if (bench_parse_opts(
            argc, argv, &o,
            "[--pin] [--quick|--smoke] [--runs R] [--min S] [--max S] [--step K] [--window W]"))
        return 2;
    if (o.quick && o.runs == 7)
        o.runs = o.smoke ? 1 : 5;
    CHECK(weft_init(NULL, &ctx));
    rank = weft_rank(ctx);
    if (weft_size(ctx) != 2) {
        if (rank == 0)
            fprintf(stderr, "weft_pingpong: needs exactly 2 ranks (weftrun -n 2)\n");
        weft_finalize(ctx);
        return 2;
    }
    peer = 1 - rank;
    int cpu = bench_pin_opts(rank, &o);
    char *sbuf = malloc(o.max), *rbuf = malloc(o.max);
    weft_request_t **reqs = calloc((size_t)o.window, sizeof *reqs);
    double *lat = malloc(sizeof(double) * (size_t)o.runs);
    double *bw = malloc(sizeof(double) * (size_t)o.runs);
    double *fl = malloc(sizeof(double) * (size_t)o.runs);
    double *ratio = malloc(sizeof(double) * (size_t)o.runs);
    double *rfl = malloc(sizeof(double) * (size_t)o.runs);
    double *rratio = malloc(sizeof(double) * (size_t)o.runs);
    if (!sbuf || !rbuf || !reqs || !lat || !bw || !fl || !ratio || !rfl || !rratio) {
        fprintf(stderr, "weft_pingpong: out of memory\n");
        return 1;
    }
    if (o.floor) {
        /* The floor of the driver between the two ranks. */
        weft_gate_counters_t gc = {.field_mask = WEFT_GATE_COUNTERS_V1};
        CHECK(weft_counters_gate(ctx, peer, &gc));
        bool tcp = !strcmp(gc.driver, "tcp");
        if (!tcp && strcmp(gc.driver, "shm")) {
            if (rank == 0)
                fprintf(stderr, "weft_pingpong: --floor: no floor for driver %s\n", gc.driver);
            o.floor = 0;
        } else if ((tcp ? floor_connect() : floor_map()) != 0) {
            if (rank == 0)
                fprintf(stderr, "weft_pingpong: --floor: no %s floor here: not measured\n",
                        gc.driver);
            o.floor = 0;
        }
    }
    memset(sbuf, 'a', o.max);
    memset(rbuf, 'b', o.max);
    long lat_max = o.smoke ? 200 : o.quick ? 5000 : 20000;
    long bw_max = o.smoke ? 4 : o.quick ? 500 : 2000;
    double lat_bytes = o.smoke ? 1e6 : o.quick ? 16e6 : 128e6;
    double bw_bytes = o.smoke ? 4e6 : o.quick ? 64e6 : 512e6;
    if (rank == 0) {
        printf("# weft_pingpong: ranks pinned %s (rank 0 cpu %d); %d runs per size, median; "
               "bandwidth = streaming window of %d\n",
               o.pin ? "yes" : "no", cpu, o.runs, o.window);
        printf("%-10s %12s %15s %14s\n", "size", "latency_us", "bandwidth_MBps", "pingpong_MBps");
        fflush(stdout);
    }
    for (size_t len = o.min; len <= o.max; len = bench_next(len, &o)) {
        long li = iters_for(len, lat_max, lat_bytes, 4);
        long bi = iters_for((size_t)o.window * len, bw_max, bw_bytes, 2);
        /* The floor is one 64-byte line: it stands for messages that fit in one. */
        bool floor = o.floor && len <= 56;
        /* Over shm, also the floor of a ring of one-line records. */
        bool ring = floor && floor_line;
        run_latency(sbuf, rbuf, len, li / 10 + 1); /* warm-up */
        if (floor)
            run_floor(li / 10 + 1, BENCH_LINE);
        if (ring)
            run_floor(li / 10 + 1, BENCH_RING);
        for (int r = 0; r < o.runs; r++) {
            lat[r] = run_latency(sbuf, rbuf, len, li);
            if (floor) {
                fl[r] = run_floor(li, BENCH_LINE);
                ratio[r] = lat[r] / fl[r];
            }
            if (ring) {
                rfl[r] = run_floor(li, BENCH_RING);
                rratio[r] = lat[r] / rfl[r];
            }
        }
        run_bandwidth(sbuf, rbuf, len, 1, o.window, reqs); /* warm-up */
        for (int r = 0; r < o.runs; r++)
            bw[r] = run_bandwidth(sbuf, rbuf, len, bi, o.window, reqs);
        if (rank == 0) {
            double l = bench_median(lat, o.runs), b = bench_median(bw, o.runs);
            printf("%-10zu %12.3f %15.1f %14.1f\n", len, l, b, (double)len / l);
            bench_csv("latency", (double)len, "latency_us", l);
            bench_csv("bandwidth", (double)len, "bandwidth_MBps", b);
            if (floor) {
                double f = bench_median(fl, o.runs), q = bench_median(ratio, o.runs);
                printf("# %zu B: floor %.3f us one-way in the same launch; latency / floor %.2f "
                       "(median of %d pairs)\n",
                       len, f, q, o.runs);
                bench_csv("latency", (double)len, "floor_us", f);
                bench_csv("latency", (double)len, "floor_ratio", q);
            }
            if (ring) {
                double f = bench_median(rfl, o.runs), q = bench_median(rratio, o.runs);
                printf("# %zu B: ring floor %.3f us one-way; latency / ring floor %.2f\n", len, f,
                       q);
                bench_csv("latency", (double)len, "ring_floor_us", f);
                bench_csv("latency", (double)len, "ring_floor_ratio", q);
            }
        }
    }
    free(sbuf);
    free(rbuf);
    free(reqs);
    free(lat);
    free(bw);
    free(fl);
    free(ratio);
    free(rfl);
    free(rratio);
    if (floor_line)
        munmap(floor_line, BENCH_LINES_BYTES);
    if (floor_fd >= 0)
        close(floor_fd);
    CHECK(weft_finalize(ctx));
    return 0;
}
