/* Driver conformance: one suite, run against every driver built, through the
 * ops table only (never a driver's internals).
 *
 *   conf_driver <driver> [exit|kill]
 *
 * self runs alone, in-process (a rank talking to itself). Other drivers run
 * under weftrun with 2 ranks: init with real parameters (rank, size, job id,
 * job secret, node ranks from the bootstrap), addresses exchanged through the
 * real bootstrap key-value store, connect, connected after a job-wide fence.
 * Then, rank 0 sending to rank 1 (self: to itself):
 *  1. packets of 1 to 64 iovec entries (at most the track's max_iov), 0 bytes
 *     to max_packet bytes, delivered whole and in order; sends that answer
 *     WEFT_INPROGRESS get send_done exactly once each, in send order;
 *  2. back-pressure: with the receiver not polling, a stream of max_packet
 *     sends meets WEFT_EAGAIN (drivers with finite buffers), and goes on once
 *     the receiver polls; nothing is lost or duplicated;
 *  3. expose / rget (and rput where the track has WEFT_DRV_CAP_RPUT): offsets,
 *     lengths, scattered local iovecs; ranges past the region fail without
 *     touching memory;
 *  4. peer_lost: rank 1 leaves without a word (exit, or SIGKILL with "kill");
 *     rank 0 sees peer_lost once within 10 s, then send fails with
 *     WEFT_EPEERDEAD;
 *  5. disconnect and fini leave no file descriptor open (ASan builds also
 *     check that no memory leaks);
 *  6. the doorbell (wait_fd): silent when nothing is to do, ringing for an
 *     arrival and for room to send (see test_doorbell).
 * Rank 0 prints "conformance <driver>: all passed" when every check passed. */
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "boot/boot.h"
#include "drivers/driver.h"
#include "weft/weft.h"

static int fails;
static int me = -1;
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "[rank %d] %s:%d: check failed: %s: ", me, __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            fails++;                                                                               \
        }                                                                                          \
    } while (0)
#define MUST(call)                                                                                 \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != WEFT_OK) {                                                                      \
            fprintf(stderr, "[rank %d] %s:%d: %s: %s\n", me, __FILE__, __LINE__, #call,            \
                    weft_strerror(rc_));                                                           \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static const weft_driver_ops_t *ops;
static weft_driver_t *drv;
static weft_track_t *track;
static weft_track_caps_t caps;

/* What the upcalls saw. */
#define FIFO 4096
typedef struct rec {
    struct rec *next;
    size_t len;
    uint8_t data[];
} rec_t;
static struct {
    rec_t *head, **tail;
    long npackets;
    long send_done, send_done_bad_order, send_done_errors;
    uintptr_t fifo[FIFO]; /* cookies of sends in flight, oldest first */
    long fifo_head, fifo_tail;
    long rget_done, rget_errors;
    int lost, lost_status;
} U = {.tail = &U.head};

static int up_packet(void *owner, void *peer, const void *buf, size_t len)
{
    rec_t *r = malloc(sizeof *r + len);
    if (!r)
        return WEFT_ENOMEM;
    r->next = NULL;
    r->len = len;
    if (len)
        memcpy(r->data, buf, len);
    *U.tail = r;
    U.tail = &r->next;
    U.npackets++;
    return WEFT_OK;
}

static void up_send_done(void *owner, void *peer, void *cookie, int status)
{
    if (U.fifo_head == U.fifo_tail || U.fifo[U.fifo_head % FIFO] != (uintptr_t)cookie)
        U.send_done_bad_order++;
    else
        U.fifo_head++;
    U.send_done++;
    if (status != WEFT_OK)
        U.send_done_errors++;
}

static void up_rget_done(void *owner, void *peer, void *cookie, int status)
{
    *(int *)cookie = status;
    U.rget_done++;
    if (status != WEFT_OK)
        U.rget_errors++;
}

static void up_peer_lost(void *owner, void *peer, int status)
{
    U.lost++;
    U.lost_status = status;
}

static rec_t *next_packet(double limit_s);

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint8_t pattern(uint64_t key, size_t i)
{
    uint64_t x = key * 0x9E3779B97F4A7C15ull + i;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    return (uint8_t)(x >> 32);
}

static void fill(uint8_t *p, size_t len, uint64_t key)
{
    for (size_t i = 0; i < len; i++)
        p[i] = pattern(key, i);
}

static long verify(const uint8_t *p, size_t len, uint64_t key, size_t from)
{
    for (size_t i = 0; i < len; i++)
        if (p[i] != pattern(key, from + i))
            return (long)i;
    return -1;
}

static int count_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

/* Plan of test 1: packet k has size_of(k) bytes in iov_of(k) entries. */
#define NPKT 300
static size_t size_of(int k)
{
    if (k % 50 == 0)
        return 0;
    if (k % 50 == 1)
        return caps.max_packet;
    return (size_t)pattern((uint64_t)k, 7) * (size_t)(1 + k % 97) % (caps.max_packet + 1);
}
static int iov_of(int k)
{
    int max = caps.max_iov < 64 ? caps.max_iov : 64;
    return 1 + k % max;
}

/* Send one packet, polling through back-pressure. A send that answers
 * WEFT_INPROGRESS joins the FIFO that send_done must follow. Returns the first
 * answer other than WEFT_EAGAIN. */
static long eagains;
static int send_one(const struct iovec *iov, int n, uintptr_t cookie)
{
    double end = now_s() + 20;
    for (;;) {
        int rc = ops->send(track, iov, n, (void *)cookie);
        if (rc == WEFT_INPROGRESS)
            U.fifo[U.fifo_tail++ % FIFO] = cookie;
        if (rc != WEFT_EAGAIN)
            return rc;
        eagains++;
        ops->poll(drv);
        if (now_s() > end)
            return WEFT_ETIMEDOUT;
    }
}

/* Poll until every send in flight is done; false on time-out. */
static bool drain_sends(void)
{
    double end = now_s() + 20;
    while (U.fifo_head != U.fifo_tail && now_s() < end)
        ops->poll(drv);
    return U.fifo_head == U.fifo_tail;
}

/* Build packet k of test 1 (its bytes in buf) as iov entries. */
static int build(int k, uint8_t *buf, struct iovec *iov)
{
    size_t len = size_of(k);
    int n = iov_of(k);
    fill(buf, len, (uint64_t)k);
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        size_t part = i == n - 1 ? len - off : (len - off) / (size_t)(n - i) / (size_t)(1 + i % 3);
        iov[i].iov_base = buf + off;
        iov[i].iov_len = part;
        off += part;
    }
    return n;
}

static rec_t *next_packet(double limit_s)
{
    double end = now_s() + limit_s;
    while (!U.head && now_s() < end && !U.lost)
        ops->poll(drv);
    rec_t *r = U.head;
    if (r) {
        U.head = r->next;
        if (!U.head)
            U.tail = &U.head;
    }
    return r;
}

/* Tiny control messages between the ranks go through the driver itself. */
static void ctrl_send(const void *buf, size_t len)
{
    struct iovec v = {(void *)buf, len};
    int rc = send_one(&v, 1, 0);
    CHECK(rc == WEFT_OK || rc == WEFT_INPROGRESS, "control send: %s", weft_strerror(rc));
    CHECK(drain_sends(), "a control send never completed");
}

static void test_packets(bool sender, bool receiver)
{
    static uint8_t *bufs[NPKT];
    struct iovec iov[NPKT][64];
    if (sender) {
        long inprogress = 0;
        for (int k = 0; k < NPKT; k++) {
            bufs[k] = malloc(caps.max_packet + 1);
            int n = build(k, bufs[k], iov[k]);
            int rc = send_one(iov[k], n, (uintptr_t)k);
            CHECK(rc == WEFT_OK || rc == WEFT_INPROGRESS, "send %d: %s", k, weft_strerror(rc));
            inprogress += rc == WEFT_INPROGRESS;
        }
        CHECK(drain_sends(), "%ld sends still in flight", U.fifo_tail - U.fifo_head);
        CHECK(U.send_done_bad_order == 0, "send_done out of order or unknown %ld times",
              U.send_done_bad_order);
        CHECK(U.send_done_errors == 0, "send_done with an error %ld times", U.send_done_errors);
        printf("conformance %s: %d packets sent, %ld completed later by send_done\n", ops->name,
               NPKT, inprogress);
    }
    if (receiver) {
        for (int k = 0; k < NPKT; k++) {
            rec_t *r = next_packet(20);
            CHECK(r != NULL, "packet %d never came", k);
            if (!r)
                break;
            size_t len = size_of(k);
            CHECK(r->len == len, "packet %d: %zu bytes, expected %zu", k, r->len, len);
            if (r->len == len) {
                long bad = verify(r->data, len, (uint64_t)k, 0);
                CHECK(bad < 0, "packet %d: wrong byte at %ld", k, bad);
            }
            free(r);
        }
    }
    if (sender)
        for (int k = 0; k < NPKT; k++)
            free(bufs[k]);
}

/* Stream max_packet packets at a receiver that does not poll at first. */
#define NFLOOD 2000
static void test_backpressure(bool sender, bool receiver, bool finite)
{
    if (sender) {
        /* A ring of buffers, so a send may be offered while earlier ones are in
         * flight; a buffer is rewritten only once its send is done. */
        enum { NBUF = 8 };
        uint8_t *bufs[NBUF];
        for (int i = 0; i < NBUF; i++) {
            bufs[i] = malloc(caps.max_packet);
            memset(bufs[i], 0x5A, caps.max_packet);
        }
        long before = eagains;
        for (int k = 0; k < NFLOOD; k++) {
            double end = now_s() + 20;
            while (U.fifo_head != U.fifo_tail && (long)U.fifo[U.fifo_head % FIFO] <= k - NBUF &&
                   now_s() < end)
                ops->poll(drv);
            uint8_t *buf = bufs[k % NBUF];
            memcpy(buf, &k, sizeof k); /* the packet's first bytes number it */
            struct iovec v = {buf, caps.max_packet};
            int rc = send_one(&v, 1, (uintptr_t)k);
            CHECK(rc == WEFT_OK || rc == WEFT_INPROGRESS, "flood %d: %s", k, weft_strerror(rc));
        }
        CHECK(drain_sends(), "flood sends never completed");
        CHECK(U.send_done_bad_order == 0, "send_done out of order or unknown %ld times",
              U.send_done_bad_order);
        if (finite)
            CHECK(eagains > before, "no back-pressure after %d packets of %zu bytes", NFLOOD,
                  caps.max_packet);
        printf("conformance %s: flood of %d packets met WEFT_EAGAIN %ld times\n", ops->name, NFLOOD,
               eagains - before);
        for (int i = 0; i < NBUF; i++)
            free(bufs[i]);
    }
    if (receiver) {
        if (sender == false)
            usleep(300000); /* let the sender hit a full track */
        for (int k = 0; k < NFLOOD; k++) {
            rec_t *r = next_packet(20);
            CHECK(r != NULL, "flood packet %d never came", k);
            if (!r)
                break;
            int got;
            memcpy(&got, r->data, sizeof got);
            CHECK(r->len == caps.max_packet && got == k, "flood packet %d: %zu bytes, number %d", k,
                  r->len, got);
            free(r);
        }
    }
}

/* The driver's answer to wait_fd (NULL: no doorbell). */
static int doorbell(void)
{
    return ops->wait_fd ? ops->wait_fd(drv) : WEFT_DRV_WAIT_POLL;
}

/* Whether fd turns readable within ms. */
static bool rings(int fd, int ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

/* One sleep of a progress thread, as the driver answers before it: false
 * when the doorbell it gave stayed silent for 2 s; true at once when it
 * says that work waits (BUSY). */
static bool doorbell_sleep(void)
{
    int fd = doorbell();
    return fd == WEFT_DRV_WAIT_BUSY || (fd >= 0 && rings(fd, 2000));
}

/* The doorbell once everything is handled: asked again while the driver
 * says that work waits (a keepalive), polling between. */
static int doorbell_quiet(void)
{
    int fd = doorbell();
    for (int i = 0; i < 100 && fd == WEFT_DRV_WAIT_BUSY; i++) {
        ops->poll(drv);
        fd = doorbell();
    }
    return fd;
}

/* Take n packets, whatever they hold (what names the burst in a failure). */
static void drain_burst(int n, const char *what)
{
    for (int k = 0; k < n; k++) {
        rec_t *r = next_packet(20);
        CHECK(r != NULL, "%s packet %d never came", what, k);
        free(r);
        if (!r)
            break;
    }
}

/* 6. The doorbell (wait_fd). self: POLL while a packet to itself waits, IDLE
 * otherwise. A driver with a file descriptor: silent once everything is
 * handled; readable for an arrival before any poll; and a sender whose
 * packets wait for room (WEFT_INPROGRESS) finds them all done by sleeping on
 * it, polling only when it rings. Drivers without one say so. */
static void test_doorbell(bool alone, weft_boot_t *boot)
{
    if (alone) {
        CHECK(doorbell() == WEFT_DRV_WAIT_IDLE, "self idle: wait_fd %d", doorbell());
        uint8_t b[16] = {1};
        struct iovec v = {b, sizeof b};
        CHECK(send_one(&v, 1, 0) == WEFT_OK, "self send");
        CHECK(doorbell() == WEFT_DRV_WAIT_POLL, "self with a packet: wait_fd %d", doorbell());
        free(next_packet(5));
        CHECK(doorbell() == WEFT_DRV_WAIT_IDLE, "self drained: wait_fd %d", doorbell());
        return;
    }
    int fd = doorbell_quiet();
    CHECK(fd != WEFT_DRV_WAIT_IDLE, "a driver with a connected peer says IDLE");
    if (fd < 0) {
        printf("conformance %s: no doorbell (wait_fd %d)\n", ops->name, fd);
        return;
    }
    /* Quiet: both sides have handled everything. */
    for (double end = now_s() + 0.2; now_s() < end;)
        ops->poll(drv);
    MUST(weft__boot_fence(boot));
    fd = doorbell_quiet();
    CHECK(fd >= 0 && !rings(fd, 0), "the doorbell rings with nothing to do (wait_fd %d)", fd);
    MUST(weft__boot_fence(boot));
    /* An arrival rings it before any poll. */
    uint8_t b[64] = {7};
    if (me == 0) {
        ctrl_send(b, sizeof b);
    } else {
        CHECK(rings(fd, 10000), "an arrival did not ring the doorbell within 10 s");
        rec_t *r = next_packet(10);
        CHECK(r && r->len == sizeof b && r->data[0] == 7, "doorbell packet");
        free(r);
    }
    MUST(weft__boot_fence(boot));
    /* Room to send rings it: rank 0 offers a burst larger than the track
     * buffers, then sleeps on the doorbell, polling only when it rings. */
    enum { NBURST = 256 };
    if (me == 0) {
        uint8_t *buf = calloc(1, caps.max_packet);
        struct iovec p = {buf, caps.max_packet};
        int sent = 0, silent = 0, full = 0;
        long head0 = U.fifo_head;
        for (double end = now_s() + 20; sent < NBURST && now_s() < end;) {
            int rc = ops->send(track, &p, 1, (void *)(uintptr_t)sent);
            if (rc == WEFT_INPROGRESS)
                U.fifo[U.fifo_tail++ % FIFO] = (uintptr_t)sent;
            if (rc == WEFT_OK || rc == WEFT_INPROGRESS) {
                sent++;
                continue;
            }
            CHECK(rc == WEFT_EAGAIN, "burst send: %s", weft_strerror(rc));
            if (rc != WEFT_EAGAIN)
                break;
            full++;
            if (!doorbell_sleep())
                silent++;
            ops->poll(drv);
        }
        for (double end = now_s() + 20; U.fifo_head != U.fifo_tail && now_s() < end;) {
            if (!doorbell_sleep())
                silent++;
            ops->poll(drv);
        }
        CHECK(sent == NBURST && U.fifo_head == U.fifo_tail, "burst: %d sent, %ld in flight", sent,
              U.fifo_tail - U.fifo_head);
        CHECK(silent == 0, "%d sleeps on the doorbell ended silent with sends waiting", silent);
        printf("conformance %s: doorbell rang for arrivals and room (%d sends found the track "
               "full, %ld waited for send_done)\n",
               ops->name, full, U.fifo_head - head0);
        free(buf);
    } else {
        drain_burst(NBURST, "burst");
    }
    MUST(weft__boot_fence(boot));
    /* Room rings a doorbell armed before the track filled, as when a thread
     * sleeps on it while another one sends: rank 0 arms it, then sends until
     * the track is full; rank 1 starts draining 100 ms later. */
    if (me == 0) {
        fd = doorbell_quiet();
        uint8_t *buf = calloc(1, caps.max_packet);
        struct iovec p = {buf, caps.max_packet};
        int sent = 0, rc = WEFT_OK;
        while (sent < NBURST && (rc = ops->send(track, &p, 1, (void *)(uintptr_t)sent)) >= 0) {
            if (rc == WEFT_INPROGRESS)
                U.fifo[U.fifo_tail++ % FIFO] = (uintptr_t)sent;
            sent++;
        }
        CHECK(rc >= 0 || rc == WEFT_EAGAIN, "burst send: %s", weft_strerror(rc));
        if (rc == WEFT_EAGAIN)
            CHECK(fd >= 0 && rings(fd, 5000),
                  "room did not ring a doorbell armed before the track filled (%d sent)", sent);
        for (double end = now_s() + 20; sent < NBURST && now_s() < end;) {
            rc = ops->send(track, &p, 1, (void *)(uintptr_t)sent);
            if (rc == WEFT_INPROGRESS)
                U.fifo[U.fifo_tail++ % FIFO] = (uintptr_t)sent;
            if (rc >= 0)
                sent++;
            else
                ops->poll(drv);
        }
        for (double end = now_s() + 20; U.fifo_head != U.fifo_tail && now_s() < end;)
            ops->poll(drv);
        CHECK(sent == NBURST && U.fifo_head == U.fifo_tail, "second burst: %d sent", sent);
        free(buf);
    } else {
        usleep(100000);
        drain_burst(NBURST, "second burst");
    }
    MUST(weft__boot_fence(boot));
}

/* Wait for an rget/rput answered WEFT_INPROGRESS. */
static int finish(int rc, volatile int *status)
{
    if (rc != WEFT_INPROGRESS)
        return rc;
    double end = now_s() + 20;
    while (*status == WEFT_INPROGRESS && now_s() < end)
        ops->poll(drv);
    return *status;
}

#define REGION (1u << 20)
static void test_rma(bool reader, bool owner)
{
    if (!ops->expose || !(caps.flags & (WEFT_DRV_CAP_RGET | WEFT_DRV_CAP_RPUT))) {
        printf("conformance %s: no rget/rput on this track; skipping those checks\n", ops->name);
        return;
    }
    static uint8_t region[REGION + 64], local[REGION + 64];
    weft_rkey_t key;
    if (owner) {
        fill(region, REGION, 99);
        memset(region + REGION, 0xEE, 64);
        MUST(ops->expose(drv, region, REGION, &key));
        if (!reader)
            ctrl_send(&key, sizeof key);
    }
    if (reader) {
        if (!owner) {
            rec_t *r = next_packet(20);
            CHECK(r && r->len == sizeof key, "no rkey came");
            if (!r)
                return;
            memcpy(&key, r->data, sizeof key);
            free(r);
        }
        if (caps.flags & WEFT_DRV_CAP_RGET) {
            static const struct {
                uint64_t off;
                size_t len;
                int pieces;
            } cases[] = {{0, REGION, 1}, {1, 100, 1}, {4095, 70000, 3},  {REGION - 1, 1, 1},
                         {12345, 0, 1},  {0, 8, 2},   {65536, 300000, 7}};
            for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                memset(local, 0, sizeof local);
                struct iovec v[8];
                size_t len = cases[i].len, off = 0;
                int n = cases[i].pieces;
                for (int j = 0; j < n; j++) {
                    size_t part = j == n - 1 ? len - off : len / (size_t)n;
                    v[j].iov_base = local + off + (size_t)j; /* gaps between pieces */
                    v[j].iov_len = part;
                    off += part;
                }
                volatile int st = WEFT_INPROGRESS;
                int rc = ops->rget(track, v, n, &key, cases[i].off, len, (void *)&st);
                if (rc == WEFT_EPERM) {
                    printf("conformance %s: rget not permitted here; skipping\n", ops->name);
                    break;
                }
                rc = finish(rc, &st);
                CHECK(rc == WEFT_OK, "rget %zu (off %llu len %zu): %s", i,
                      (unsigned long long)cases[i].off, len, weft_strerror(rc));
                for (int j = 0; j < n && rc == WEFT_OK; j++) {
                    size_t from =
                        (size_t)cases[i].off + ((uint8_t *)v[j].iov_base - local) - (size_t)j;
                    long bad = verify(v[j].iov_base, v[j].iov_len, 99, from);
                    CHECK(bad < 0, "rget %zu piece %d: wrong byte at %ld", i, j, bad);
                }
            }
            /* Past the end: refused, nothing read. */
            memset(local, 0, sizeof local);
            struct iovec v = {local, 64};
            volatile int st = WEFT_INPROGRESS;
            int rc = ops->rget(track, &v, 1, &key, REGION - 32, 64, (void *)&st);
            CHECK(rc < 0 && rc != WEFT_EPEERDEAD, "rget past the region: %s", weft_strerror(rc));
            rc = ops->rget(track, &v, 1, &key, (uint64_t)1 << 62, 1, (void *)&st);
            CHECK(rc < 0 && rc != WEFT_EPEERDEAD, "rget far past the region: %s",
                  weft_strerror(rc));
            CHECK(local[0] == 0, "a refused rget wrote memory");
        }
        if ((caps.flags & WEFT_DRV_CAP_RPUT) && ops->rput) {
            fill(local, 5000, 1234);
            struct iovec v[2] = {{local, 1000}, {local + 1000, 4000}};
            volatile int st = WEFT_INPROGRESS;
            int rc = finish(ops->rput(track, v, 2, &key, 7000, 5000, (void *)&st), &st);
            CHECK(rc == WEFT_OK || rc == WEFT_EPERM, "rput: %s", weft_strerror(rc));
            struct iovec w = {local, 64};
            rc = ops->rput(track, &w, 1, &key, REGION - 32, 64, (void *)&st);
            CHECK(rc < 0 && rc != WEFT_EPEERDEAD, "rput past the region: %s", weft_strerror(rc));
        }
        if (!owner)
            ctrl_send("done", 4);
    }
    if (owner) {
        if (!reader) {
            /* Serve the reader (tcp answers GETs from poll) until it is done. */
            rec_t *r = next_packet(60);
            CHECK(r && r->len == 4 && !memcmp(r->data, "done", 4), "reader never finished");
            free(r);
        }
        if (caps.flags & WEFT_DRV_CAP_RPUT) {
            long bad = verify(region + 7000, 5000, 1234, 0);
            CHECK(bad < 0 || !ops->rput, "rput data: wrong byte at %ld", bad);
        }
        long bad = verify(region, 7000, 99, 0);
        CHECK(bad < 0, "region before the rput changed at %ld", bad);
        for (int i = 0; i < 64; i++)
            CHECK(region[REGION + i] == 0xEE, "byte %d past the region changed", i);
        ops->unexpose(drv, &key);
    }
}

int main(int argc, char **argv)
{
    alarm(120);
    if (argc < 2) {
        fprintf(stderr, "usage: conf_driver <driver> [exit|kill]\n");
        return 2;
    }
    const char *leave = argc > 2 ? argv[2] : "exit";
    static const weft_driver_ops_t *const all[] = {&weft__driver_self_ops, &weft__driver_shm_ops,
                                                   &weft__driver_tcp_ops,
#ifdef WEFT_HAVE_OFI
                                                   &weft__driver_ofi_ops
#endif
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (!strcmp(all[i]->name, argv[1]))
            ops = all[i];
    if (!ops) {
        fprintf(stderr, "conf_driver: no driver %s in this build\n", argv[1]);
        return 77;
    }
    bool alone = ops == &weft__driver_self_ops;
    int fds_before = count_fds();
    weft_boot_t *boot;
    MUST(weft__boot_init(&boot));
    me = weft__boot_rank(boot);
    int size = weft__boot_size(boot);
    if (alone ? size != 1 : size != 2) {
        printf("conf_driver %s: needs %s; skipped\n", ops->name, alone ? "1 rank" : "2 ranks");
        weft__boot_fini(boot);
        return 77;
    }
    int peer = alone ? me : 1 - me;
    int node_ranks[2] = {0, 1};
    weft_driver_params_t params = {.rank = me,
                                   .size = size,
                                   .job_id = weft__boot_job_id(boot),
                                   .job_secret = weft__boot_secret(boot),
                                   .node_ranks = node_ranks,
                                   .node_size = size,
                                   .node_index = me,
                                   .doorbell = true};
    weft_driver_upcalls_t up = {.owner = &U,
                                .packet = up_packet,
                                .send_done = up_send_done,
                                .rget_done = up_rget_done,
                                .peer_lost = up_peer_lost};
    int irc = ops->init(&params, &up, &drv);
    if (irc == WEFT_EUNSUPPORTED) {
        /* ofi: the provider asked for (WEFT_OFI_PROVIDER) does not run here. */
        printf("conf_driver %s: not available here (%s); skipped\n", ops->name,
               getenv("WEFT_OFI_PROVIDER") ? getenv("WEFT_OFI_PROVIDER") : "");
        weft__boot_fini(boot);
        return 77;
    }
    MUST(irc);
    uint8_t blob[WEFT_ADDR_MAX];
    size_t len = sizeof blob;
    char key[64];
    MUST(ops->address(drv, blob, &len));
    snprintf(key, sizeof key, "conf.%s.%d", ops->name, me);
    MUST(weft__boot_put(boot, key, blob, len));
    MUST(weft__boot_fence(boot));
    len = sizeof blob;
    snprintf(key, sizeof key, "conf.%s.%d", ops->name, peer);
    MUST(weft__boot_get(boot, key, blob, &len));
    MUST(ops->connect(drv, peer, blob, len, &U, &track, &caps));
    CHECK(caps.max_packet >= 4096 && caps.max_iov >= 1, "caps: max_packet %zu max_iov %d",
          caps.max_packet, caps.max_iov);
    MUST(weft__boot_fence(boot));
    MUST(ops->connected(drv));

    bool sender = me == 0, receiver = alone || me == 1;
    /* 1 and 2, one way then the other (self: both roles in turn). */
    test_packets(sender, receiver);
    if (!alone)
        test_packets(!sender, !receiver);
    /* ofi holds a packet in flight (WEFT_INPROGRESS) until the provider has
     * taken it, so a sender that waits for its sends, as this one does with
     * 8 buffers, meets the provider's back-pressure as send_done coming late,
     * not as WEFT_EAGAIN (that needs all WEFT_OFI_TX_DEPTH buffers in flight). */
    bool finite = !alone && strcmp(ops->name, "ofi") != 0;
    test_backpressure(sender, receiver && !alone, finite);
    if (alone)
        test_backpressure(false, true, false);
    /* 3: rank 1 owns the region, rank 0 reads (self: both). */
    test_rma(sender, receiver);
    test_doorbell(alone, boot);

    if (!alone) {
        /* 4: rank 1 leaves without a word. */
        MUST(weft__boot_fence(boot));
        if (me == 1) {
            fflush(stdout);
            if (!strcmp(leave, "kill"))
                raise(SIGKILL);
            _exit(fails ? 1 : 0);
        }
        double t0 = now_s();
        while (!U.lost && now_s() - t0 < 10)
            ops->poll(drv);
        CHECK(U.lost == 1, "peer_lost %d times within 10 s", U.lost);
        CHECK(U.lost_status < 0, "peer_lost status %d", U.lost_status);
        for (int i = 0; i < 100; i++)
            ops->poll(drv);
        CHECK(U.lost == 1, "peer_lost %d times", U.lost);
        uint8_t b[8] = {0};
        struct iovec v = {b, sizeof b};
        int rc = ops->send(track, &v, 1, NULL);
        CHECK(rc == WEFT_EPEERDEAD, "send to a lost peer: %s", weft_strerror(rc));
        printf("conformance %s: peer_lost after %.3f s\n", ops->name, now_s() - t0);
    }
    /* 5 */
    ops->disconnect(track);
    ops->fini(drv);
    while (U.head) {
        rec_t *r = U.head;
        U.head = r->next;
        free(r);
    }
    weft__boot_fini(boot);
    int fds_after = count_fds();
    CHECK(fds_after == fds_before, "%d file descriptors before, %d after", fds_before, fds_after);
    if (fails == 0)
        printf("conformance %s: all passed\n", ops->name);
    else
        printf("conformance %s: %d checks failed\n", ops->name, fails);
    return fails ? 1 : 0;
}
