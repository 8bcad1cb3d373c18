/* Tests of the shm driver, through its ops table only (plus the ring internals
 * where a test must forge a malformed record).
 *
 * Each test forks N-1 children; the parent and the children play the ranks of one
 * node. This file is their bootstrap: every child has a pipe up to the parent and
 * one down from it, over which address blobs are gathered and fences are made.
 * A rank's checks count failures; a child's exit status carries them to the parent.
 * alarm() bounds every test; children die with the parent (PR_SET_PDEATHSIG). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "drivers/driver.h"
#include "drivers/shm/shm_int.h"
#include "drivers/shm/shm_ring.h"
#include "weft/weft.h"

#define OPS  (&weft__driver_shm_ops)
#define MAXP 8
#define BLOB (WEFT_ADDR_MAX + 8)

typedef struct ctx ctx_t;
struct ctx {
    int idx, n;      /* node index and node size */
    int ranks[MAXP]; /* job rank of each node index */
    int jobsize;
    char job[64];
    int up_w, down_r;             /* child's ends */
    int up_r[MAXP], down_w[MAXP]; /* parent's ends */
    pid_t pids[MAXP];
    int dead[MAXP];
    int self_connect; /* setup also opens a track to this rank itself */
    weft_driver_t *d;
    weft_track_t *t[MAXP];
    weft_track_caps_t caps[MAXP];
};

/* What the upcalls saw, per source node index. */
static struct {
    uint64_t got[MAXP];
    int lost[MAXP];
    int lost_status[MAXP];
    uint64_t got_at_lost[MAXP];
    uint64_t lost_ns[MAXP];
    long bad;
    int (*on_packet)(ctx_t *c, int src, const void *buf, size_t len);
    size_t (*size_of)(int src, int dst, uint64_t seq);
    uint64_t t_first, t_last, mark_from, mark_to; /* throughput marks (receiver) */
    uint8_t mbox[MAXP][SHM_MAX_PACKET];
    size_t mbox_len[MAXP];
} G;

static int fails;
static const char *cur_test;
static pid_t child_pids[MAXP];
static int nchild;

#define CHECK(c, cond, ...)                                                                        \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "  %s [idx %d] %s:%d: check failed: %s: ", cur_test, (c)->idx,         \
                    __FILE__, __LINE__, #cond);                                                    \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            fails++;                                                                               \
        }                                                                                          \
    } while (0)

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The loops below make and check the test's data a byte or a word at a time:
 * hundreds of megabytes per run. Each rank is one thread, and the bytes are its
 * own buffers or a packet the driver hands it, so ThreadSanitizer has nothing to
 * find there; instrumented, every access was a call into it (three quarters of
 * the run's time), and the test took forty times as long as in a release build,
 * past its timeout on a loaded machine. The driver stays instrumented. pat and
 * mix carry the attribute too: a compiler inlines a function only into one with
 * the same sanitizer attributes. */
#if defined(__SANITIZE_THREAD__)
#define DATA_LOOP __attribute__((no_sanitize("thread")))
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DATA_LOOP __attribute__((no_sanitize("thread")))
#endif
#endif
#ifndef DATA_LOOP
#define DATA_LOOP
#endif

DATA_LOOP static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

DATA_LOOP static inline uint8_t pat(int src, uint64_t seq, size_t i)
{
    return (uint8_t)(src * 131 + seq * 7 + i * 13 + (i >> 8));
}

DATA_LOOP static void fill_stream(uint8_t *buf, int src, uint64_t seq, size_t len)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = pat(src, seq, i);
}

/* The index of the first byte of buf that is not pat(src, seq, ...), or len. */
DATA_LOOP static size_t stream_mismatch(const uint8_t *buf, int src, uint64_t seq, size_t len)
{
    size_t i = 0;
    while (i < len && buf[i] == pat(src, seq, i))
        i++;
    return i;
}

DATA_LOOP static void fill_words(uint32_t *buf, size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (uint32_t)mix(i);
}

DATA_LOOP static size_t words_wrong(const uint32_t *buf, size_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += buf[i] != (uint32_t)mix(i);
    return bad;
}

/* Bytes of buf (len of them) that differ from fill_words' data read from offset off. */
DATA_LOOP static size_t bytes_wrong_at(const uint8_t *buf, size_t len, uint64_t off)
{
    size_t bad = 0;
    for (size_t i = 0; i < len; i++) {
        size_t o = off + i;
        uint32_t w = (uint32_t)mix(o / 4);
        bad += buf[i] != (uint8_t)(w >> (8 * (o % 4)));
    }
    return bad;
}

/* ---- Bootstrap over pipes ---------------------------------------------------------- */

static int writen(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

static int readn(int fd, void *p, size_t n)
{
    char *c = p;
    while (n) {
        ssize_t r = read(fd, c, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        c += r;
        n -= (size_t)r;
    }
    return 0;
}

/* Every live rank contributes BLOB bytes; all receive n * BLOB (dead ranks' zeroed). */
static int allgather(ctx_t *c, const void *mine, void *all)
{
    char *a = all;
    if (c->idx != 0) {
        if (writen(c->up_w, mine, BLOB) || readn(c->down_r, all, (size_t)c->n * BLOB))
            return -1;
        return 0;
    }
    memcpy(a, mine, BLOB);
    for (int i = 1; i < c->n; i++) {
        if (c->dead[i])
            memset(a + (size_t)i * BLOB, 0, BLOB);
        else if (readn(c->up_r[i], a + (size_t)i * BLOB, BLOB))
            return -1;
    }
    for (int i = 1; i < c->n; i++)
        if (!c->dead[i] && writen(c->down_w[i], all, (size_t)c->n * BLOB))
            return -1;
    return 0;
}

static int fence(ctx_t *c)
{
    char mine[BLOB] = {0}, all[MAXP * BLOB];
    return allgather(c, mine, all);
}

/* ---- Upcalls ----------------------------------------------------------------------- */

static int check_stream(ctx_t *c, int src, const void *buf, size_t len)
{
    uint64_t seq = G.got[src];
    size_t want = G.size_of(src, c->idx, seq);
    const uint8_t *b = buf;
    if (len != want) {
        if (G.bad++ < 5)
            fprintf(stderr, "  %s [idx %d] from %d seq %llu: length %zu, expected %zu\n", cur_test,
                    c->idx, src, (unsigned long long)seq, len, want);
        return 0;
    }
    size_t i = stream_mismatch(b, src, seq, len);
    if (i < len && G.bad++ < 5)
        fprintf(stderr, "  %s [idx %d] from %d seq %llu: byte %zu is %u, expected %u\n", cur_test,
                c->idx, src, (unsigned long long)seq, i, b[i], pat(src, seq, i));
    return 0;
}

static int mailbox(ctx_t *c, int src, const void *buf, size_t len)
{
    (void)c;
    memcpy(G.mbox[src], buf, len);
    G.mbox_len[src] = len;
    return 0;
}

static int up_packet(void *owner, void *peer_cookie, const void *buf, size_t len)
{
    ctx_t *c = owner;
    int src = (int)(intptr_t)peer_cookie - 1;
    if (src < 0 || src >= c->n) {
        G.bad++;
        return 0;
    }
    uint64_t seq = G.got[src];
    if (seq == G.mark_from)
        G.t_first = now_ns();
    int rc = G.on_packet ? G.on_packet(c, src, buf, len) : check_stream(c, src, buf, len);
    G.got[src]++;
    if (seq == G.mark_to)
        G.t_last = now_ns();
    return rc;
}

static void up_send_done(void *owner, void *peer_cookie, void *send_cookie, int status)
{
    (void)owner, (void)peer_cookie, (void)send_cookie, (void)status;
    G.bad++; /* shm sends are synchronous: never called */
}

static void up_rget_done(void *owner, void *peer_cookie, void *op_cookie, int status)
{
    (void)owner, (void)peer_cookie, (void)op_cookie, (void)status;
    G.bad++;
}

static void up_lost(void *owner, void *peer_cookie, int status)
{
    int src = (int)(intptr_t)peer_cookie - 1;
    (void)owner;
    if (src < 0 || src >= MAXP)
        return;
    if (!G.lost[src]) {
        G.got_at_lost[src] = G.got[src];
        G.lost_status[src] = status;
        G.lost_ns[src] = now_ns();
    }
    G.lost[src]++;
}

/* ---- Helpers ------------------------------------------------------------------------ */

static void dev_shm_path(char *out, size_t n, const char *job, int rank)
{
    snprintf(out, n, "/dev/shm/weft-%s-%d", job, rank);
}

/* Entries of /dev/shm whose name starts with weft-<job>-. */
static int leftovers(const char *job)
{
    char prefix[96];
    snprintf(prefix, sizeof prefix, "weft-%s-", job);
    DIR *dir = opendir("/dev/shm");
    if (!dir)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dir)))
        if (!strncmp(e->d_name, prefix, strlen(prefix)))
            n++;
    closedir(dir);
    return n;
}

static int poll_once(ctx_t *c)
{
    static unsigned idle;
    int n = OPS->poll(c->d);
    if (n < 0)
        return n;
    if (n == 0 && (++idle & 63) == 0)
        sched_yield(); /* more ranks than cores here, often */
    return n;
}

/* Send, polling while the ring is full. Counts EAGAINs in *eagain if given. */
static int send_retry(ctx_t *c, int dst, const struct iovec *iov, int cnt, uint64_t *eagain)
{
    for (;;) {
        int rc = OPS->send(c->t[dst], iov, cnt, NULL);
        if (rc != WEFT_EAGAIN)
            return rc;
        if (eagain)
            (*eagain)++;
        poll_once(c);
    }
}

static uint8_t sendbuf[SHM_MAX_PACKET];

/* Send the seq-th packet of the stream to dst, gathered from `pieces` iov entries. */
static int send_stream(ctx_t *c, int dst, uint64_t seq, int pieces, uint64_t *eagain)
{
    size_t len = G.size_of(c->idx, dst, seq);
    fill_stream(sendbuf, c->idx, seq, len);
    struct iovec iov[SHM_MAX_IOV];
    if (pieces <= 1) {
        iov[0] = (struct iovec){sendbuf, len};
        return send_retry(c, dst, iov, 1, eagain);
    }
    size_t at = 0;
    for (int k = 0; k < pieces; k++) {
        size_t l =
            (k == pieces - 1) ? len - at : (size_t)(mix(seq * 64 + (uint64_t)k) % (len - at + 1));
        iov[k] = (struct iovec){l ? sendbuf + at : NULL, l};
        at += l;
    }
    return send_retry(c, dst, iov, pieces, eagain);
}

static int wait_got(ctx_t *c, int src, uint64_t count, double seconds)
{
    uint64_t deadline = now_ns() + (uint64_t)(seconds * 1e9);
    while (G.got[src] < count) {
        if (poll_once(c) < 0 || now_ns() > deadline)
            return -1;
    }
    return 0;
}

static int setup(ctx_t *c)
{
    weft_driver_params_t p = {
        .rank = c->ranks[c->idx],
        .size = c->jobsize,
        .job_id = c->job,
        .node_ranks = c->ranks,
        .node_size = c->n,
        .node_index = c->idx,
    };
    weft_driver_upcalls_t up = {
        .owner = c,
        .packet = up_packet,
        .send_done = up_send_done,
        .rget_done = up_rget_done,
        .peer_lost = up_lost,
    };
    int rc = OPS->init(&p, &up, &c->d);
    CHECK(c, rc == WEFT_OK, "init: %s", weft_status_name(rc));
    if (rc)
        return -1;
    char blob[BLOB] = {0}, all[MAXP * BLOB];
    size_t len = WEFT_ADDR_MAX;
    rc = OPS->address(c->d, blob + 8, &len);
    CHECK(c, rc == WEFT_OK && len > 0 && len <= WEFT_ADDR_MAX, "address: %s", weft_status_name(rc));
    memcpy(blob, &len, sizeof len);
    if (allgather(c, blob, all))
        return -1;
    for (int i = 0; i < c->n; i++) {
        if (i == c->idx && !c->self_connect)
            continue;
        size_t l;
        memcpy(&l, all + (size_t)i * BLOB, sizeof l);
        rc = OPS->connect(c->d, c->ranks[i], all + (size_t)i * BLOB + 8, l,
                          (void *)(intptr_t)(i + 1), &c->t[i], &c->caps[i]);
        CHECK(c, rc == WEFT_OK, "connect to %d: %s", i, weft_status_name(rc));
        if (rc)
            return -1;
    }
    /* Our segment exists, private, until connected(); then it is gone. */
    char path[128];
    struct stat st;
    dev_shm_path(path, sizeof path, c->job, c->ranks[c->idx]);
    rc = stat(path, &st);
    CHECK(c, rc == 0 && (st.st_mode & 0777) == 0600, "%s before connected: rc %d mode %o", path, rc,
          rc == 0 ? (unsigned)(st.st_mode & 0777) : 0u);
    if (fence(c))
        return -1;
    rc = OPS->connected(c->d);
    CHECK(c, rc == WEFT_OK, "connected: %s", weft_status_name(rc));
    CHECK(c, stat(path, &st) != 0 && errno == ENOENT, "%s still there after connected", path);
    char name[128];
    snprintf(name, sizeof name, "/weft-%s-%d", c->job, c->ranks[c->idx]);
    int fd = shm_open(name, O_RDWR, 0);
    CHECK(c, fd < 0 && errno == ENOENT, "shm_open(%s) after connected did not fail", name);
    if (fd >= 0)
        close(fd);
    return 0;
}

static int teardown(ctx_t *c)
{
    int rc = fence(c);
    for (int i = 0; i < c->n; i++) {
        if (c->t[i])
            OPS->disconnect(c->t[i]);
        c->t[i] = NULL;
    }
    OPS->fini(c->d);
    c->d = NULL;
    CHECK(c, G.bad == 0, "%ld bad packets or unexpected upcalls", G.bad);
    return rc;
}

/* ---- Runner ------------------------------------------------------------------------- */

typedef int (*test_fn)(ctx_t *c);

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "test_shm_driver: TIMEOUT, killing the test's processes\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    for (int i = 0; i < nchild; i++)
        if (child_pids[i] > 0)
            kill(child_pids[i], SIGKILL);
    _exit(2);
}

static int passed, failed;
static int test_no;

/* Run fn on n ranks (node index 0 is this process). Children whose index is set
 * in killed_mask are expected to die of SIGKILL. */
static void run_test(const char *name, int n, const int *ranks, int jobsize, test_fn fn,
                     unsigned timeout_s, unsigned killed_mask)
{
    ctx_t c;
    memset(&c, 0, sizeof c);
    memset(&G, 0, sizeof G);
    G.mark_from = G.mark_to = UINT64_MAX;
    fails = 0;
    cur_test = name;
    c.n = n;
    c.jobsize = jobsize;
    for (int i = 0; i < n; i++)
        c.ranks[i] = ranks ? ranks[i] : i;
    snprintf(c.job, sizeof c.job, "t%d-%d", (int)getpid(), ++test_no);
    int up[MAXP][2], down[MAXP][2];
    for (int i = 1; i < n; i++) {
        if (pipe(up[i]) || pipe(down[i])) {
            perror("pipe");
            exit(1);
        }
    }
    fflush(NULL);
    nchild = 0;
    for (int i = 1; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            exit(1);
        }
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            signal(SIGALRM, SIG_DFL);
            alarm(timeout_s + 5);
            for (int j = 1; j < n; j++) {
                if (j != i) {
                    close(up[j][0]), close(up[j][1]), close(down[j][0]), close(down[j][1]);
                }
            }
            close(up[i][0]);
            close(down[i][1]);
            c.idx = i;
            c.up_w = up[i][1];
            c.down_r = down[i][0];
            int r = fn(&c);
            fflush(NULL);
            _exit(r || fails ? 1 : 0);
        }
        c.pids[i] = pid;
        child_pids[nchild++] = pid;
    }
    for (int i = 1; i < n; i++) {
        close(up[i][1]);
        close(down[i][0]);
        c.up_r[i] = up[i][0];
        c.down_w[i] = down[i][1];
    }
    c.idx = 0;
    c.pids[0] = getpid();
    alarm(timeout_s);
    uint64_t t0 = now_ns();
    int r = fn(&c);
    int bad = r || fails;
    for (int i = 1; i < n; i++) {
        int st;
        while (waitpid(c.pids[i], &st, 0) < 0 && errno == EINTR)
            ;
        int ok = (killed_mask >> i) & 1 ? (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
                                        : (WIFEXITED(st) && WEXITSTATUS(st) == 0);
        if (!ok) {
            fprintf(stderr, "  %s: rank index %d ended badly (status 0x%x)\n", name, i, st);
            bad = 1;
        }
        close(c.up_r[i]);
        close(c.down_w[i]);
    }
    alarm(0);
    nchild = 0;
    int left = leftovers(c.job);
    if (left) {
        fprintf(stderr, "  %s: %d segment(s) left in /dev/shm\n", name, left);
        bad = 1;
    }
    printf("%s - %s (%.2f s)\n", bad ? "FAIL" : "ok", name, (double)(now_ns() - t0) / 1e9);
    fflush(stdout);
    if (bad)
        failed++;
    else
        passed++;
}

/* ---- Tests -------------------------------------------------------------------------- */

/* Packet sizes 0..300, then every 997 bytes, then the largest ones. */
static size_t size_table[1024];
static size_t size_count;

static void build_size_table(size_t max)
{
    size_count = 0;
    for (size_t s = 0; s <= 300; s++)
        size_table[size_count++] = s;
    for (size_t s = 301; s < max - 1; s += 997)
        size_table[size_count++] = s;
    size_table[size_count++] = max - 1;
    size_table[size_count++] = max;
}

static size_t sizes_of_table(int src, int dst, uint64_t seq)
{
    (void)src, (void)dst;
    return size_table[seq % size_count];
}

static int t_sizes(ctx_t *c)
{
    if (setup(c))
        return -1;
    int peer = 1 - c->idx;
    weft_track_caps_t *k = &c->caps[peer];
    CHECK(c, k->max_packet == 64 * 1024, "max_packet %zu", k->max_packet);
    CHECK(c, k->max_iov >= 64, "max_iov %d", k->max_iov);
    CHECK(c, k->rdv_threshold == 32 * 1024, "rdv_threshold %zu", k->rdv_threshold);
    CHECK(c, k->latency_us > 0 && k->bandwidth_mbs > 0, "latency/bandwidth not set");
    build_size_table(k->max_packet);
    G.size_of = sizes_of_table;
    uint64_t total = size_count * 3; /* three laps: packets meet the ring's end everywhere */
    for (uint64_t seq = 0; seq < total; seq++) {
        int pieces = (seq % 3 == 0) ? 1 + (int)(seq % 64) : 1;
        int rc = send_stream(c, peer, seq, pieces, NULL);
        CHECK(c, rc == WEFT_OK, "send seq %llu: %s", (unsigned long long)seq, weft_status_name(rc));
        if (rc)
            break;
        poll_once(c);
    }
    CHECK(c, wait_got(c, peer, total, 20) == 0, "got %llu of %llu", (unsigned long long)G.got[peer],
          (unsigned long long)total);
    /* Limits. */
    struct iovec big = {sendbuf, k->max_packet + 1};
    int rc = OPS->send(c->t[peer], &big, 1, NULL);
    CHECK(c, rc == WEFT_EINVAL, "oversized packet: %s", weft_status_name(rc));
    struct iovec many[SHM_MAX_IOV + 1];
    for (int i = 0; i <= SHM_MAX_IOV; i++)
        many[i] = (struct iovec){sendbuf, 1};
    rc = OPS->send(c->t[peer], many, k->max_iov + 1, NULL);
    CHECK(c, rc == WEFT_EINVAL, "too many iov entries: %s", weft_status_name(rc));
    struct iovec two[2] = {{sendbuf, SIZE_MAX - 3}, {sendbuf, 10}};
    rc = OPS->send(c->t[peer], two, 2, NULL);
    CHECK(c, rc == WEFT_EINVAL, "iov lengths overflowing: %s", weft_status_name(rc));
    return teardown(c);
}

/* All-to-all: sizes from a hash of (src, dst, seq); now and then a large one. */
static size_t sizes_mixed(int src, int dst, uint64_t seq)
{
    uint64_t h = mix(((uint64_t)src << 48) ^ ((uint64_t)dst << 40) ^ seq);
    if (h % 97 == 0)
        return 20000 + (size_t)(h >> 20) % 45537;
    return (size_t)(h >> 8) % 2049;
}

#define A2A_COUNT 20000
static int t_alltoall(ctx_t *c)
{
    if (setup(c))
        return -1;
    G.size_of = sizes_mixed;
    for (uint64_t seq = 0; seq < A2A_COUNT; seq++) {
        for (int k = 1; k < c->n; k++) {
            int dst = (c->idx + k) % c->n;
            int rc = send_stream(c, dst, seq, 1 + (int)(seq % 4), NULL);
            if (rc) {
                CHECK(c, rc == WEFT_OK, "send to %d: %s", dst, weft_status_name(rc));
                return -1;
            }
        }
        poll_once(c);
    }
    for (int src = 0; src < c->n; src++)
        if (src != c->idx)
            CHECK(c, wait_got(c, src, A2A_COUNT, 30) == 0, "from %d: got %llu", src,
                  (unsigned long long)G.got[src]);
    return teardown(c);
}

/* Ring full: exactly ring/64 one-slot records fit; then a long stream of 8-byte
 * packets (throughput), then mixed sizes that make skip records. */
#define STREAM_FILL  4096u
#define STREAM_SMALL 2000000u
#define STREAM_MIXED 20000u
static size_t sizes_stream(int src, int dst, uint64_t seq)
{
    if (seq < STREAM_FILL)
        return 56;
    if (seq < STREAM_FILL + STREAM_SMALL)
        return 8;
    return sizes_mixed(src, dst, seq) % (64 * 1024 + 1);
}

static int t_stream(ctx_t *c)
{
    if (setup(c))
        return -1;
    G.size_of = sizes_stream;
    uint64_t total = STREAM_FILL + STREAM_SMALL + STREAM_MIXED;
    if (c->idx == 0) {
        uint64_t n = 0;
        int rc = WEFT_OK;
        /* Rank 1 is in the fence below, not polling: fill its ring. */
        for (n = 0; n < 2 * STREAM_FILL; n++) {
            size_t len = G.size_of(0, 1, n);
            fill_stream(sendbuf, 0, n, len);
            struct iovec iov = {sendbuf, len};
            rc = OPS->send(c->t[1], &iov, 1, NULL);
            if (rc != WEFT_OK)
                break;
        }
        CHECK(c, rc == WEFT_EAGAIN, "filling: %s", weft_status_name(rc));
        CHECK(c, n == STREAM_FILL, "%llu records fit, expected %u", (unsigned long long)n,
              STREAM_FILL);
        struct iovec one = {sendbuf, 1};
        rc = OPS->send(c->t[1], &one, 1, NULL);
        CHECK(c, rc == WEFT_EAGAIN, "send to a full ring: %s", weft_status_name(rc));
        fence(c);
        uint64_t eagain = 0;
        for (; n < total; n++) {
            rc = send_stream(c, 1, n, 1, &eagain);
            if (rc) {
                CHECK(c, rc == WEFT_OK, "stream send %llu: %s", (unsigned long long)n,
                      weft_status_name(rc));
                break;
            }
        }
        printf("  stream: %llu packets sent, %llu EAGAIN on the way\n", (unsigned long long)n,
               (unsigned long long)eagain);
    } else {
        fence(c);
        G.mark_from = STREAM_FILL;
        G.mark_to = STREAM_FILL + STREAM_SMALL - 1;
        CHECK(c, wait_got(c, 0, total, 60) == 0, "got %llu of %llu", (unsigned long long)G.got[0],
              (unsigned long long)total);
        if (G.t_last > G.t_first) {
            double s = (double)(G.t_last - G.t_first) / 1e9;
            printf("  ring throughput, 8-byte packets: %.1f Mpackets/s (%.0f ns each)\n",
                   STREAM_SMALL / s / 1e6, s * 1e9 / STREAM_SMALL);
        }
    }
    fflush(stdout);
    return teardown(c);
}

/* Ping-pong of 8-byte packets: one-way latency through the driver (reported). */
static size_t sizes_eight(int src, int dst, uint64_t seq)
{
    (void)src, (void)dst, (void)seq;
    return 8;
}

static int t_pingpong(ctx_t *c)
{
    if (setup(c))
        return -1;
    G.size_of = sizes_eight;
    const uint64_t warm = 10000, iters = 100000;
    int peer = 1 - c->idx;
    /* Two spinning processes on one core hand over once per time slice: pin them
     * on two cores when we have them, as HPC ranks are. */
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) >= 2) {
        int k = 0;
        for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
            if (CPU_ISSET(cpu, &set) && k++ == c->idx) {
                cpu_set_t one;
                CPU_ZERO(&one);
                CPU_SET(cpu, &one);
                sched_setaffinity(0, sizeof one, &one);
                break;
            }
        }
    }
    uint64_t t0 = 0;
    for (uint64_t i = 0; i < warm + iters; i++) {
        if (i == warm)
            t0 = now_ns();
        if (c->idx == 0) {
            if (send_stream(c, 1, i, 1, NULL) != WEFT_OK)
                break;
            for (unsigned spin = 1; G.got[1] <= i; spin++)
                if (OPS->poll(c->d) == 0 && (spin & 4095) == 0)
                    sched_yield(); /* a loaded machine: let the other run */
        } else {
            for (unsigned spin = 1; G.got[0] <= i; spin++)
                if (OPS->poll(c->d) == 0 && (spin & 4095) == 0)
                    sched_yield();
            if (send_stream(c, 0, i, 1, NULL) != WEFT_OK)
                break;
        }
    }
    uint64_t t1 = now_ns();
    CHECK(c, G.got[peer] == warm + iters, "got %llu", (unsigned long long)G.got[peer]);
    if (c->idx == 0)
        printf("  driver ping-pong, 8-byte packets: %.3f us one-way\n",
               (double)(t1 - t0) / 1e3 / (double)iters / 2);
    fflush(stdout);
    return teardown(c);
}

/* CMA: 64 MiB with a pattern, read in one call and through 3000 iov entries. */
#define RGET_LEN (64u << 20)
static int t_rget(ctx_t *c)
{
    if (setup(c))
        return -1;
    G.on_packet = mailbox;
    int peer = 1 - c->idx;
    int cma = !!(c->caps[peer].flags & WEFT_DRV_CAP_RGET);
    if (c->idx == 0) {
        uint32_t *buf = malloc(RGET_LEN);
        fill_words(buf, RGET_LEN / 4);
        weft_rkey_t rkey;
        int rc = OPS->expose(c->d, buf, RGET_LEN, &rkey);
        CHECK(c, rc == WEFT_OK && rkey.len <= WEFT_RKEY_MAX, "expose: %s", weft_status_name(rc));
        struct iovec iov = {&rkey, sizeof rkey};
        CHECK(c, send_retry(c, 1, &iov, 1, NULL) == WEFT_OK, "send rkey");
        CHECK(c, wait_got(c, 1, 1, 60) == 0, "no word from rank 1");
        /* Rank 1 exposed a small buffer too: read it the other way. */
        weft_rkey_t theirs;
        memcpy(&theirs, G.mbox[1], sizeof theirs);
        char small[4096];
        struct iovec l = {small, sizeof small};
        rc = OPS->rget(c->t[1], &l, 1, &theirs, 0, sizeof small, NULL);
        if (cma) {
            CHECK(c, rc == WEFT_OK, "rget from child: %s", weft_status_name(rc));
            for (size_t i = 0; rc == WEFT_OK && i < sizeof small; i++)
                if (small[i] != (char)(i * 3)) {
                    CHECK(c, 0, "byte %zu from child wrong", i);
                    break;
                }
        } else {
            CHECK(c, rc == WEFT_EPERM, "rget without CMA: %s", weft_status_name(rc));
        }
        OPS->unexpose(c->d, &rkey);
        fence(c); /* rank 1 is done reading us */
        free(buf);
    } else {
        char small[4096];
        for (size_t i = 0; i < sizeof small; i++)
            small[i] = (char)(i * 3);
        weft_rkey_t mine;
        CHECK(c, OPS->expose(c->d, small, sizeof small, &mine) == WEFT_OK, "expose small");
        CHECK(c, wait_got(c, 0, 1, 60) == 0, "no rkey");
        weft_rkey_t rkey;
        memcpy(&rkey, G.mbox[0], sizeof rkey);
        uint32_t *dst = malloc(RGET_LEN);
        memset(dst, 0, RGET_LEN);
        struct iovec l = {dst, RGET_LEN};
        uint64_t best = UINT64_MAX;
        int rc = WEFT_OK;
        for (int rep = 0; rep < 3 && rc == WEFT_OK; rep++) {
            uint64_t t0 = now_ns();
            rc = OPS->rget(c->t[0], &l, 1, &rkey, 0, RGET_LEN, NULL);
            uint64_t t1 = now_ns();
            if (t1 - t0 < best)
                best = t1 - t0;
        }
        if (!cma) {
            printf("  CMA unavailable here: rget returns %s\n", weft_status_name(rc));
            CHECK(c, rc == WEFT_EPERM, "rget without CMA: %s", weft_status_name(rc));
        } else {
            CHECK(c, rc == WEFT_OK, "rget 64 MiB: %s", weft_status_name(rc));
            size_t badw = words_wrong(dst, RGET_LEN / 4);
            CHECK(c, badw == 0, "%zu words wrong", badw);
            printf("  rget 64 MiB in one call: %.2f GB/s (best of 3)\n",
                   RGET_LEN / ((double)best / 1e9) / 1e9);
            /* 3000 odd-sized local pieces (more than IOV_MAX), at an odd offset. */
            enum { NPIECE = 3000 };
            static struct iovec pieces[NPIECE];
            memset(dst, 0, RGET_LEN);
            size_t at = 0;
            for (int i = 0; i < NPIECE; i++) {
                size_t len = 1 + (size_t)(mix((uint64_t)i) % 5000);
                pieces[i] = (struct iovec){(char *)dst + at, len};
                at += len;
            }
            uint64_t off = 12345;
            rc = OPS->rget(c->t[0], pieces, NPIECE, &rkey, off, at, NULL);
            CHECK(c, rc == WEFT_OK, "rget into %d pieces: %s", NPIECE, weft_status_name(rc));
            size_t wrong = bytes_wrong_at((const uint8_t *)dst, at, off);
            CHECK(c, wrong == 0, "%zu bytes wrong through pieces", wrong);
            /* A zero-length get, and a partial one at the very end. */
            CHECK(c, OPS->rget(c->t[0], NULL, 0, &rkey, RGET_LEN, 0, NULL) == WEFT_OK, "len 0");
            CHECK(c, OPS->rget(c->t[0], &l, 1, &rkey, RGET_LEN - 10, 10, NULL) == WEFT_OK,
                  "last 10 bytes");
        }
        /* Bounds and tampering, whatever CMA's state. */
        int want = cma ? WEFT_EINVAL : WEFT_EPERM;
        rc = OPS->rget(c->t[0], &l, 1, &rkey, RGET_LEN - 10, 11, NULL);
        CHECK(c, rc == want, "one byte past the end: %s", weft_status_name(rc));
        rc = OPS->rget(c->t[0], &l, 1, &rkey, UINT64_MAX, 1, NULL);
        CHECK(c, rc == want, "offset 2^64-1: %s", weft_status_name(rc));
        rc = OPS->rget(c->t[0], &l, 1, &rkey, 8, SIZE_MAX - 4, NULL);
        CHECK(c, rc == want, "huge length: %s", weft_status_name(rc));
        struct iovec tiny = {dst, 16};
        rc = OPS->rget(c->t[0], &tiny, 1, &rkey, 0, 17, NULL);
        CHECK(c, rc == want, "local iov too small: %s", weft_status_name(rc));
        weft_rkey_t bad = rkey;
        bad.len = 7;
        rc = OPS->rget(c->t[0], &l, 1, &bad, 0, 16, NULL);
        CHECK(c, rc == want, "rkey of wrong length: %s", weft_status_name(rc));
        bad = rkey;
        shm_rkey_t k;
        memcpy(&k, bad.bytes, sizeof k);
        k.pid = getpid(); /* another process than the track's peer */
        memcpy(bad.bytes, &k, sizeof k);
        rc = OPS->rget(c->t[0], &l, 1, &bad, 0, 16, NULL);
        CHECK(c, rc == want, "rkey naming another pid: %s", weft_status_name(rc));
        memcpy(&k, rkey.bytes, sizeof k);
        k.len = UINT64_MAX; /* address + length wraps */
        memcpy(bad.bytes, &k, sizeof k);
        rc = OPS->rget(c->t[0], &l, 1, &bad, 0, 16, NULL);
        CHECK(c, rc == want, "rkey wrapping the address space: %s", weft_status_name(rc));
        struct iovec iov = {&mine, sizeof mine};
        CHECK(c, send_retry(c, 0, &iov, 1, NULL) == WEFT_OK, "send my rkey");
        free(dst);
        fence(c);
    }
    return teardown(c);
}

static int t_cma_off(ctx_t *c)
{
    setenv("WEFT_SHM_CMA", "0", 1);
    int r = setup(c);
    unsetenv("WEFT_SHM_CMA");
    if (r)
        return -1;
    int peer = 1 - c->idx;
    CHECK(c, !(c->caps[peer].flags & WEFT_DRV_CAP_RGET), "RGET cap with WEFT_SHM_CMA=0");
    char buf[64];
    weft_rkey_t rkey;
    CHECK(c, OPS->expose(c->d, buf, sizeof buf, &rkey) == WEFT_OK, "expose");
    struct iovec l = {buf, sizeof buf};
    int rc = OPS->rget(c->t[peer], &l, 1, &rkey, 0, 8, NULL);
    CHECK(c, rc == WEFT_EPERM, "rget with CMA off: %s", weft_status_name(rc));
    return teardown(c);
}

/* A rank dies of SIGKILL right after sending: its packets arrive, then peer_lost,
 * within bounded time; sends and gets to it fail; the survivors go on. */
#define KILL_SENT 100
static int t_peer_killed(ctx_t *c)
{
    if (setup(c))
        return -1;
    G.size_of = sizes_mixed;
    if (c->idx == 2) {
        for (uint64_t s = 0; s < KILL_SENT; s++) {
            send_stream(c, 0, s, 1, NULL);
            send_stream(c, 1, s, 1, NULL);
        }
        kill(getpid(), SIGKILL);
        for (;;)
            pause();
    }
    uint64_t t0 = now_ns();
    while (!G.lost[2] && now_ns() - t0 < 5000000000ull)
        poll_once(c);
    c->dead[2] = 1;
    CHECK(c, G.lost[2] == 1, "peer_lost for the killed rank: %d calls", G.lost[2]);
    CHECK(c, G.got_at_lost[2] == KILL_SENT, "%llu of its packets before peer_lost",
          (unsigned long long)G.got_at_lost[2]);
    CHECK(c, G.lost_status[2] == WEFT_EPEERDEAD, "status %s", weft_status_name(G.lost_status[2]));
    double secs = (double)(G.lost_ns[2] - t0) / 1e9;
    CHECK(c, G.lost[2] && secs < 2.0, "detected after %.2f s", secs);
    if (c->idx == 0)
        printf("  killed peer detected after %.0f ms of polling\n", secs * 1e3);
    struct iovec iov = {sendbuf, 8};
    int rc = OPS->send(c->t[2], &iov, 1, NULL);
    CHECK(c, rc == WEFT_EPEERDEAD, "send to the dead: %s", weft_status_name(rc));
    weft_rkey_t rkey;
    OPS->expose(c->d, sendbuf, 64, &rkey);
    rc = OPS->rget(c->t[2], &iov, 1, &rkey, 0, 8, NULL);
    CHECK(c, rc == WEFT_EPEERDEAD, "rget from the dead: %s", weft_status_name(rc));
    t0 = now_ns();
    while (now_ns() - t0 < 400000000ull)
        poll_once(c);
    CHECK(c, G.lost[2] == 1, "peer_lost called %d times", G.lost[2]);
    /* The survivors still talk. */
    int peer = 1 - c->idx;
    for (uint64_t s = 0; s < 1000; s++) {
        rc = send_stream(c, peer, s, 1, NULL);
        if (rc) {
            CHECK(c, rc == WEFT_OK, "send to survivor: %s", weft_status_name(rc));
            break;
        }
    }
    CHECK(c, wait_got(c, peer, 1000, 20) == 0, "from survivor: %llu",
          (unsigned long long)G.got[peer]);
    return teardown(c);
}

/* Malformed records: rank 1 forges a huge length, rank 3 a length below the
 * header; rank 2's packet is refused by the upcall. Each is dropped as EPROTO,
 * once, after its good packets; rank 0 goes on with the others. */
static int reject_13(ctx_t *c, int src, const void *buf, size_t len)
{
    check_stream(c, src, buf, len);
    return len == 13 ? -1 : 0;
}

static size_t sizes_forge(int src, int dst, uint64_t seq)
{
    (void)dst;
    if (src == 2 && seq == 5)
        return 13;
    return 40 + seq;
}

static void forge(weft_track_t *t, uint32_t length)
{
    shm_slot_t *s = &t->tx_slots[t->tx_head & t->tx_mask];
    atomic_store_explicit(&s->length, length, memory_order_relaxed);
    atomic_store_explicit(&s->flag, shm_ring_flag(t->tx_head), memory_order_release);
}

static int t_malformed(ctx_t *c)
{
    if (setup(c))
        return -1;
    G.size_of = sizes_forge;
    G.on_packet = reject_13;
    if (c->idx == 0) {
        uint64_t t0 = now_ns();
        while ((!G.lost[1] || !G.lost[2] || !G.lost[3]) && now_ns() - t0 < 10000000000ull)
            poll_once(c);
        for (int s = 1; s <= 3; s++) {
            CHECK(c, G.lost[s] == 1 && G.lost_status[s] == WEFT_EPROTO, "rank %d: lost %d, %s", s,
                  G.lost[s], weft_status_name(G.lost_status[s]));
            CHECK(c, G.got_at_lost[s] == (s == 2 ? 6u : 5u), "rank %d: %llu before the bad one", s,
                  (unsigned long long)G.got_at_lost[s]);
            struct iovec iov = {sendbuf, 8};
            int rc = OPS->send(c->t[s], &iov, 1, NULL);
            CHECK(c, rc == WEFT_EPEERDEAD, "send to a dropped peer: %s", weft_status_name(rc));
        }
    } else {
        for (uint64_t s = 0; s < 5; s++)
            send_stream(c, 0, s, 1, NULL);
        if (c->idx == 1)
            forge(c->t[0], 0x7fffff00u);
        else if (c->idx == 3)
            forge(c->t[0], 3);
        else
            send_stream(c, 0, 5, 1, NULL);
    }
    return teardown(c);
}

/* Garbage address blobs: every one refused with a status, none crashes. */
static int t_garbage(ctx_t *c)
{
    int ranks[2] = {0, 1};
    weft_driver_params_t p = {.rank = 0,
                              .size = 2,
                              .job_id = c->job,
                              .node_ranks = ranks,
                              .node_size = 2,
                              .node_index = 0};
    weft_driver_upcalls_t up = {.owner = c, .packet = up_packet, .peer_lost = up_lost};
    int rc0 = OPS->init(&p, &up, &c->d);
    CHECK(c, rc0 == WEFT_OK, "init: %s", weft_status_name(rc0));
    if (rc0)
        return -1;
    shm_addr_t good;
    size_t len = sizeof good;
    CHECK(c, OPS->address(c->d, &good, &len) == WEFT_OK && len == sizeof good, "address");
    size_t tiny = 4;
    CHECK(c, OPS->address(c->d, &good, &tiny) == WEFT_ENOBUFS, "address into 4 bytes");
    weft_track_t *t = NULL;
    weft_track_caps_t caps;
    int rc;
    uint8_t junk[WEFT_ADDR_MAX];
    for (int it = 0; it < 20000; it++) {
        size_t l = (it & 1) ? sizeof(shm_addr_t) : (size_t)(mix((uint64_t)it) % sizeof junk);
        for (size_t i = 0; i < sizeof junk; i++)
            junk[i] = (uint8_t)mix((uint64_t)it * 1000 + i);
        if (it % 3 == 0) /* a valid header with garbage after it */
            memcpy(junk, &good, 8);
        rc = OPS->connect(c->d, 1, junk, l, NULL, &t, &caps);
        if (rc == WEFT_OK) {
            CHECK(c, 0, "garbage blob %d accepted", it);
            OPS->disconnect(t);
        }
    }
    CHECK(c, OPS->connect(c->d, 1, NULL, 0, NULL, &t, &caps) < 0, "NULL blob");
    /* Edited copies of a real blob (ours, presented as rank 1's). */
    shm_addr_t a = good;
    a.rank = 1;
    a.node_index = 1;
    snprintf(a.name, sizeof a.name, "/weft-%s-1", c->job);
    rc = OPS->connect(c->d, 1, &a, sizeof a, NULL, &t, &caps);
    CHECK(c, rc == WEFT_EUNSUPPORTED, "blob of a missing segment: %s", weft_status_name(rc));
    shm_addr_t b = a;
    b.boot_hash ^= 1;
    rc = OPS->connect(c->d, 1, &b, sizeof b, NULL, &t, &caps);
    CHECK(c, rc == WEFT_EUNSUPPORTED, "blob of another host: %s", weft_status_name(rc));
    b = a;
    snprintf(b.name, sizeof b.name, "/../../etc/passwd");
    rc = OPS->connect(c->d, 1, &b, sizeof b, NULL, &t, &caps);
    CHECK(c, rc == WEFT_EPROTO, "path in the name: %s", weft_status_name(rc));
    b = a;
    memset(b.name, 'x', sizeof b.name);
    rc = OPS->connect(c->d, 1, &b, sizeof b, NULL, &t, &caps);
    CHECK(c, rc == WEFT_EPROTO, "unterminated name: %s", weft_status_name(rc));
    b = a;
    b.ring_bytes = 12345;
    rc = OPS->connect(c->d, 1, &b, sizeof b, NULL, &t, &caps);
    CHECK(c, rc == WEFT_EPROTO, "odd ring size: %s", weft_status_name(rc));
    b = a;
    b.pid = 0;
    rc = OPS->connect(c->d, 1, &b, sizeof b, NULL, &t, &caps);
    CHECK(c, rc == WEFT_EPROTO, "pid 0: %s", weft_status_name(rc));
    rc = OPS->connect(c->d, 1, &good, sizeof good, NULL, &t, &caps); /* rank 0's, as rank 1 */
    CHECK(c, rc == WEFT_EPROTO, "another rank's blob: %s", weft_status_name(rc));
    b = a;
    b.rank = 7;
    rc = OPS->connect(c->d, 7, &b, sizeof b, NULL, &t, &caps);
    CHECK(c, rc == WEFT_EUNSUPPORTED, "rank not on the node: %s", weft_status_name(rc));
    /* A segment under the right name, but not a weft segment. */
    int fd = shm_open(a.name, O_RDWR | O_CREAT | O_EXCL, 0600);
    CHECK(c, fd >= 0, "create a bogus segment");
    if (fd >= 0) {
        CHECK(c, ftruncate(fd, 4096) == 0, "ftruncate");
        rc = OPS->connect(c->d, 1, &a, sizeof a, NULL, &t, &caps);
        CHECK(c, rc == WEFT_EPROTO, "segment of the wrong size: %s", weft_status_name(rc));
        CHECK(c, ftruncate(fd, (off_t)shm_seg_size(2, a.ring_bytes)) == 0, "ftruncate");
        rc = OPS->connect(c->d, 1, &a, sizeof a, NULL, &t, &caps);
        CHECK(c, rc == WEFT_EPROTO, "segment without a header: %s", weft_status_name(rc));
        close(fd);
        shm_unlink(a.name);
    }
    OPS->fini(c->d); /* never connected(): fini unlinks */
    c->d = NULL;
    CHECK(c, leftovers(c->job) == 0, "segment left after fini");
    CHECK(c, G.bad == 0, "unexpected upcalls");
    return 0;
}

/* One process, a track to itself: loopback through its own ring, with a ring size
 * that is not a power of two (rounded up); then init's own errors. */
static size_t sizes_self(int src, int dst, uint64_t seq)
{
    (void)src, (void)dst;
    return (size_t)(mix(seq) % (32 * 1024 + 1));
}

static int t_self_and_init(ctx_t *c)
{
    setenv("WEFT_SHM_RING", "100000", 1);
    c->self_connect = 1;
    int r = setup(c);
    unsetenv("WEFT_SHM_RING");
    if (r)
        return -1;
    char blob[WEFT_ADDR_MAX];
    size_t len = sizeof blob;
    OPS->address(c->d, blob, &len);
    int rc;
    CHECK(c, c->caps[0].max_packet == 32 * 1024, "max_packet %zu with a 128 KiB ring",
          c->caps[0].max_packet);
    weft_track_t *dup;
    weft_track_caps_t caps;
    rc = OPS->connect(c->d, 0, blob, len, NULL, &dup, &caps);
    CHECK(c, rc == WEFT_ESTATE, "second connect: %s", weft_status_name(rc));
    G.size_of = sizes_self;
    for (uint64_t s = 0; s < 20000; s++) {
        rc = send_stream(c, 0, s, 1 + (int)(s % 7), NULL);
        if (rc) {
            CHECK(c, rc == WEFT_OK, "send to self: %s", weft_status_name(rc));
            break;
        }
    }
    CHECK(c, wait_got(c, 0, 20000, 20) == 0, "got %llu", (unsigned long long)G.got[0]);
    struct iovec big = {sendbuf, 32 * 1024 + 1};
    CHECK(c, OPS->send(c->t[0], &big, 1, NULL) == WEFT_EINVAL, "oversized");

    /* init's errors. */
    weft_driver_upcalls_t up = {.owner = c, .packet = up_packet, .peer_lost = up_lost};
    int ranks[3] = {0, 4, 9};
    weft_driver_params_t p = {.rank = 4,
                              .size = 10,
                              .job_id = c->job,
                              .node_ranks = ranks,
                              .node_size = 3,
                              .node_index = 1};
    weft_driver_t *d2 = NULL;
    weft_driver_params_t q = p;
    q.node_index = 3;
    CHECK(c, OPS->init(&q, &up, &d2) == WEFT_EINVAL, "node_index out of range");
    q = p;
    q.rank = 5;
    CHECK(c, OPS->init(&q, &up, &d2) == WEFT_EINVAL, "rank not at node_index");
    q = p;
    int unsorted[3] = {9, 4, 0};
    q.node_ranks = unsorted;
    CHECK(c, OPS->init(&q, &up, &d2) == WEFT_EINVAL, "unsorted node ranks");
    q = p;
    q.job_id = NULL;
    CHECK(c, OPS->init(&q, &up, &d2) == WEFT_EINVAL, "no job id");
    weft_driver_upcalls_t noup = {0};
    CHECK(c, OPS->init(&p, &noup, &d2) == WEFT_EINVAL, "no upcalls");
    /* Same job and rank twice: the name is taken. */
    rc = OPS->init(&p, &up, &d2);
    CHECK(c, rc == WEFT_OK, "init as rank 4: %s", weft_status_name(rc));
    if (rc == WEFT_OK) {
        weft_driver_t *d3 = NULL;
        CHECK(c, OPS->init(&p, &up, &d3) == WEFT_ESYS, "duplicate segment name");
        OPS->fini(d2);
    }
    /* A job id that cannot be a file name still works. */
    q = p;
    char weird[200];
    snprintf(weird, sizeof weird, "a/b/%s/with spaces and a long tail ........................",
             c->job);
    q.job_id = weird;
    rc = OPS->init(&q, &up, &d2);
    CHECK(c, rc == WEFT_OK, "odd job id: %s", weft_status_name(rc));
    if (rc == WEFT_OK) {
        shm_addr_t a;
        memcpy(&a, &d2->addr, sizeof a);
        char path[160];
        snprintf(path, sizeof path, "/dev/shm%s", a.name);
        struct stat st;
        CHECK(c, stat(path, &st) == 0, "hashed name %s exists", path);
        OPS->fini(d2); /* never connected: fini unlinks */
        CHECK(c, stat(path, &st) != 0, "%s left after fini", path);
    }
    return teardown(c);
}

int main(int argc, char **argv)
{
    (void)argc, (void)argv;
    signal(SIGALRM, on_alarm);
    signal(SIGPIPE, SIG_IGN);
    setvbuf(stdout, NULL, _IOLBF, 0);
    static const int sparse[4] = {2, 5, 7, 11};
    run_test("sizes_both_ways", 2, NULL, 2, t_sizes, 60, 0);
    run_test("alltoall_4_ranks", 4, sparse, 12, t_alltoall, 60, 0);
    run_test("ring_full_and_stream", 2, NULL, 2, t_stream, 90, 0);
    run_test("pingpong", 2, NULL, 2, t_pingpong, 60, 0);
    run_test("rget_cma", 2, NULL, 2, t_rget, 60, 0);
    run_test("rget_cma_disabled", 2, NULL, 2, t_cma_off, 30, 0);
    run_test("peer_killed", 3, NULL, 3, t_peer_killed, 30, 1u << 2);
    run_test("malformed_records", 4, NULL, 4, t_malformed, 30, 0);
    run_test("garbage_addresses", 1, NULL, 2, t_garbage, 30, 0);
    run_test("self_and_init_errors", 1, NULL, 1, t_self_and_init, 30, 0);
    printf("test_shm_driver: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
