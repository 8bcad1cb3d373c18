/* mpi_mt: latency and message rate when several threads of a rank communicate
 * at once (MPI_THREAD_MULTIPLE), seed 000's "1 to N" and "N to N" benchmarks,
 * in plain MPI (built by bench/weft-bench against weft, Open MPI and MPICH).
 *
 *   mpirun -n 2 mpi_mt [--pin | --cores N] [--quick|--smoke] [--min T] [--max T] [--window W]
 *
 * For T = --min .. --max threads per rank (doubling; default 1 to 8), four
 * phases, every thread on its own tag:
 *
 *   mt_lat_NtoN   T threads on rank 0 each ping-pong 1 byte with their twin
 *                 thread on rank 1; latency_us = half a round trip, median
 *                 over the threads.
 *   mt_lat_1toN   one thread of rank 0 ping-pongs 1 byte with each of T threads
 *                 of rank 1 in turn; latency_us = half a round trip.
 *   mt_rate_NtoN  T sender threads on rank 0 each stream windows of W 8-byte
 *                 messages (default 64) to their twin on rank 1, which answers
 *                 each window with a zero-byte ack; rate_Mmsgs = all messages
 *                 over the slowest thread's time, in millions per second.
 *   mt_rate_1toN  one thread of rank 0 sends a window of W to each of T threads
 *                 of rank 1, then waits for their T acks.
 *
 * Every phase is bounded in time, not in iterations (about 20 ms with --smoke,
 * 50 ms with --quick, 250 ms otherwise): the initiating thread marks its last
 * message with a stop byte once its budget is spent, so the run ends in bounded
 * time even with 2 x 8 threads sharing 2 cores, however slowly an
 * implementation hands the cores between them. With --pin each rank and all its
 * threads stay on one core; with --cores N each rank gets a block of N CPUs of
 * its own (rank 0 the first N, rank 1 the next), so on a machine with cores
 * to spare the threads of a rank run in parallel: --cores 8 --max 8 on 16
 * cores measures thread scaling rather than turn-taking. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "bench_mpi.h"

#define MAX_THREADS 64
#define MAX_WINDOW  256
#define MSG         8
#define GO          'g'
#define STOP        's'
#define TAG_ACK     1000 /* acks of thread t use TAG_ACK + t, data tag t */

enum phase { LAT_NTON, LAT_1TON, RATE_NTON, RATE_1TON };
static const char *const phase_bench[] = {"mt_lat_NtoN", "mt_lat_1toN", "mt_rate_NtoN",
                                          "mt_rate_1toN"};

static MPI_Comm comm;
static int rank, peer, window;
static double budget_us;
static pthread_barrier_t start;

typedef struct worker {
    pthread_t thread;
    int id, threads;
    enum phase phase;
    long count; /* round trips (latency) or messages (rate) done */
    double us;  /* time this thread spent doing them */
} worker_t;

static void send_byte(int tag, char flag)
{
    MPI_Send(&flag, 1, MPI_CHAR, peer, tag, comm);
}

static char recv_byte(int tag)
{
    char flag = 0;
    MPI_Recv(&flag, 1, MPI_CHAR, peer, tag, comm, MPI_STATUS_IGNORE);
    return flag;
}

/* Rank 0's side of an N-to-N ping-pong: it decides when to stop. */
static void lat_initiator(worker_t *w)
{
    double t0 = bench_now_us();
    char flag = GO;
    while (flag == GO) {
        flag = bench_now_us() - t0 >= budget_us ? STOP : GO;
        send_byte(w->id, flag);
        recv_byte(w->id);
        w->count++;
    }
    w->us = bench_now_us() - t0;
}

/* Rank 1's side of any ping-pong: answer on its own tag until told to stop. */
static void lat_responder(worker_t *w)
{
    char flag = GO;
    while (flag == GO) {
        flag = recv_byte(w->id);
        send_byte(w->id, flag);
    }
}

/* One window of W 8-byte messages on tag `tag`, each carrying the flag. */
static void post_window(char *buf, int tag, MPI_Request *reqs)
{
    for (int i = 0; i < window; i++)
        MPI_Isend(buf, MSG, MPI_BYTE, peer, tag, comm, &reqs[i]);
}

static void rate_sender(worker_t *w)
{
    MPI_Request reqs[MAX_WINDOW];
    char buf[MSG] = {GO};
    double t0 = bench_now_us();
    while (buf[0] == GO) {
        buf[0] = bench_now_us() - t0 >= budget_us ? STOP : GO;
        post_window(buf, w->id, reqs);
        bench_waitall(window, reqs);
        MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_ACK + w->id, comm, MPI_STATUS_IGNORE);
        w->count += window;
    }
    w->us = bench_now_us() - t0;
}

static void rate_receiver(worker_t *w)
{
    MPI_Request reqs[MAX_WINDOW];
    static _Thread_local char slots[MAX_WINDOW][MSG];
    char flag = GO;
    while (flag == GO) {
        for (int i = 0; i < window; i++)
            MPI_Irecv(slots[i], MSG, MPI_BYTE, peer, w->id, comm, &reqs[i]);
        bench_waitall(window, reqs);
        flag = slots[0][0];
        MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_ACK + w->id, comm);
    }
}

/* Rank 0's single thread in the 1-to-N phases: it visits the T threads of rank
 * 1 in turn. */
static void one_to_n(worker_t *w)
{
    static MPI_Request reqs[MAX_THREADS * MAX_WINDOW + MAX_THREADS];
    char buf[MSG] = {GO};
    double t0 = bench_now_us();
    while (buf[0] == GO) {
        buf[0] = bench_now_us() - t0 >= budget_us ? STOP : GO;
        if (w->phase == LAT_1TON) {
            for (int t = 0; t < w->threads; t++) {
                send_byte(t, buf[0]);
                recv_byte(t);
            }
            w->count += w->threads;
        } else {
            int n = 0;
            for (int t = 0; t < w->threads; t++)
                MPI_Irecv(NULL, 0, MPI_BYTE, peer, TAG_ACK + t, comm, &reqs[n++]);
            for (int t = 0; t < w->threads; t++, n += window)
                post_window(buf, t, &reqs[n]);
            bench_waitall(n, reqs);
            w->count += (long)w->threads * window;
        }
    }
    w->us = bench_now_us() - t0;
}

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    pthread_barrier_wait(&start);
    int lat = w->phase == LAT_NTON || w->phase == LAT_1TON;
    if (rank == 1)
        lat ? lat_responder(w) : rate_receiver(w);
    else if (w->phase == LAT_NTON)
        lat_initiator(w);
    else if (w->phase == RATE_NTON)
        rate_sender(w);
    else
        one_to_n(w);
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Run one phase with T threads on each side (one on rank 0 for 1-to-N) and
 * print its result from rank 0. */
static void run_phase(enum phase ph, int threads, worker_t *ws)
{
    int n = rank == 0 && (ph == LAT_1TON || ph == RATE_1TON) ? 1 : threads;
    pthread_barrier_init(&start, NULL, (unsigned)n + 1);
    for (int i = 0; i < n; i++) {
        ws[i] = (worker_t){.id = i, .threads = threads, .phase = ph};
        if (pthread_create(&ws[i].thread, NULL, worker_main, &ws[i]) != 0) {
            fprintf(stderr, "mpi_mt: pthread_create failed\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    pthread_barrier_wait(&start);
    for (int i = 0; i < n; i++)
        pthread_join(ws[i].thread, NULL);
    pthread_barrier_destroy(&start);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0)
        return;
    double value, per[MAX_THREADS], slowest = 0.0;
    long total = 0;
    for (int i = 0; i < n; i++) {
        per[i] = ws[i].us / (double)ws[i].count / 2.0;
        total += ws[i].count;
        if (ws[i].us > slowest)
            slowest = ws[i].us;
    }
    if (ph == LAT_NTON) {
        qsort(per, (size_t)n, sizeof per[0], cmp_double);
        value = n % 2 ? per[n / 2] : 0.5 * (per[n / 2 - 1] + per[n / 2]);
    } else if (ph == LAT_1TON) {
        value = per[0];
    } else {
        value = (double)total / slowest;
    }
    printf("# %-13s %2d threads: %10.3f %s (%ld %s)\n", phase_bench[ph], threads, value,
           ph <= LAT_1TON ? "us" : "Mmsg/s", total, ph <= LAT_1TON ? "round trips" : "messages");
    bench_csv(phase_bench[ph], threads, ph <= LAT_1TON ? "latency_us" : "rate_Mmsgs", value);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    bench_opts_t o = {.runs = 1, .min = 1, .max = 8, .window = 64};
    if (bench_parse_opts(argc, argv, &o,
                         "[--pin | --cores N] [--quick|--smoke] [--min T] [--max T] [--window W]"))
        MPI_Abort(MPI_COMM_WORLD, 2);
    if (o.max > MAX_THREADS || o.window > MAX_WINDOW) {
        fprintf(stderr, "mpi_mt: at most %d threads and a window of %d\n", MAX_THREADS, MAX_WINDOW);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm ctrl;
    int cpu = bench_mpi_setup("mpi_mt", &o, &rank, &peer, &comm, &ctrl);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            fprintf(stderr, "mpi_mt: MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    window = o.window;
    budget_us = o.smoke ? 2e4 : o.quick ? 5e4 : 2.5e5;
    if (rank == 0) {
        char lib[256];
        bench_mpi_library(lib, sizeof lib);
        printf("# mpi_mt (%s): MPI_THREAD_MULTIPLE; CPUs per rank %d, 0: unbound (rank 0 from cpu "
               "%d); window %d; "
               "%.0f ms per phase\n",
               lib, o.pin, cpu, window, budget_us / 1e3);
        fflush(stdout);
    }
    static worker_t ws[MAX_THREADS];
    for (int t = (int)o.min; t <= (int)o.max; t *= 2)
        for (int ph = LAT_NTON; ph <= RATE_1TON; ph++)
            run_phase((enum phase)ph, t, ws);
    MPI_Comm_free(&comm);
    MPI_Comm_free(&ctrl);
    MPI_Finalize();
    return 0;
}
