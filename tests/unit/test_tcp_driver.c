/* Tests of the tcp driver through its ops table: two instances in one process
 * (rank 0 and rank 1 of a two-rank job) joined over loopback, each polled by
 * the test.
 *
 * What is checked: a send the socket refuses whole (WEFT_EAGAIN: the engine
 * keeps its packet) arms the wait fd for room, so a thread asleep on it
 * wakes when the peer drains the socket, and not at the end of its sleep's
 * timeout; every packet sent arrives, in order. Many regions exposed at once
 * (a flood of rendezvous sends) each get a slot of their own, a slot freed and
 * taken again serves the new buffer, and rget reads what each names. */
#include <poll.h>
#include <pthread.h>

#include "../common/test_util.h"
#include "drivers/driver.h"

#define PKT 16

static struct {
    weft_driver_t *d[2];
    weft_track_t *t[2];
    uint64_t got[2];  /* packets received */
    uint64_t bad[2];  /* out of order */
    uint64_t lost[2]; /* peer_lost calls */
    uint64_t rgets;   /* rget_done calls */
    int pending;      /* rank 0's packets taken in part, not yet done */
} j;

static int on_packet(void *owner, void *peer_cookie, const void *buf, size_t len)
{
    (void)peer_cookie;
    int me = (int)(intptr_t)owner;
    uint64_t n = 0;
    if (len == PKT)
        memcpy(&n, buf, sizeof n);
    if (len != PKT || n != j.got[me])
        j.bad[me]++;
    j.got[me]++;
    return 0;
}

static void on_send_done(void *owner, void *peer_cookie, void *cookie, int status)
{
    (void)owner, (void)peer_cookie, (void)cookie, (void)status;
    j.pending--;
}

static void on_rget_done(void *owner, void *peer_cookie, void *cookie, int status)
{
    (void)owner, (void)peer_cookie, (void)cookie;
    if (status == WEFT_OK)
        j.rgets++;
}

static void on_lost(void *owner, void *peer_cookie, int status)
{
    (void)peer_cookie, (void)status;
    j.lost[(int)(intptr_t)owner]++;
}

static void *connect_one(void *d)
{
    return (void *)(intptr_t)weft__driver_tcp_ops.connected(d);
}

static void open_pair(void)
{
    static const uint8_t secret[WEFT_DRV_SECRET_LEN] = {7, 1, 7, 1};
    char job[64];
    snprintf(job, sizeof job, "unit-tcp-%d", (int)getpid());
    uint8_t blob[2][WEFT_ADDR_MAX];
    size_t len[2];
    for (int r = 0; r < 2; r++) {
        int rank = r;
        weft_driver_params_t p = {.rank = r,
                                  .size = 2,
                                  .job_id = job,
                                  .job_secret = secret,
                                  .node_ranks = &rank,
                                  .node_size = 1,
                                  .node_index = 0,
                                  .doorbell = true};
        weft_driver_upcalls_t up = {.owner = (void *)(intptr_t)r,
                                    .packet = on_packet,
                                    .send_done = on_send_done,
                                    .rget_done = on_rget_done,
                                    .peer_lost = on_lost};
        MUST(weft__driver_tcp_ops.init(&p, &up, &j.d[r]));
        len[r] = sizeof blob[r];
        MUST(weft__driver_tcp_ops.address(j.d[r], blob[r], &len[r]));
    }
    for (int r = 0; r < 2; r++) {
        weft_track_caps_t caps;
        MUST(weft__driver_tcp_ops.connect(j.d[r], 1 - r, blob[1 - r], len[1 - r], NULL, &j.t[r],
                                          &caps));
    }
    /* connected() waits for every peer, polling its own instance only: the
     * ranks wait side by side, as two processes would. */
    pthread_t th;
    CHECK(pthread_create(&th, NULL, connect_one, j.d[1]) == 0);
    int rc = weft__driver_tcp_ops.connected(j.d[0]);
    void *rc1;
    pthread_join(th, &rc1);
    MUST(rc);
    MUST((int)(intptr_t)rc1);
}

static void close_pair(void)
{
    for (int r = 0; r < 2; r++)
        weft__driver_tcp_ops.disconnect(j.t[r]);
    for (int r = 0; r < 2; r++)
        weft__driver_tcp_ops.fini(j.d[r]);
}

/* Rank 1 polls both ranks until it has every packet sent and rank 0 has none
 * left in part; false after 20 s. */
static bool drain(uint64_t sent)
{
    double end = test_now_s() + 20;
    while ((j.got[1] < sent || j.pending) && test_now_s() < end) {
        weft__driver_tcp_ops.poll(j.d[1]);
        weft__driver_tcp_ops.poll(j.d[0]);
    }
    return j.got[1] == sent && !j.pending;
}

/* Rank 0 sends small packets while rank 1 does not poll, until the socket
 * refuses one whole, with nothing queued: the case the driver must arm room
 * for itself. A packet the socket takes in part (it fills its last buffer
 * before it looks for room) is queued instead; it is let finish and the
 * filling starts again. Returns the last send's answer. */
static int fill(uint64_t *sent, uint8_t *pkt)
{
    int rc = WEFT_OK;
    for (int tries = 0; tries < 100; tries++) {
        do {
            memcpy(pkt, sent, sizeof *sent);
            struct iovec v = {.iov_base = pkt, .iov_len = PKT};
            rc = weft__driver_tcp_ops.send(j.t[0], &v, 1, NULL);
            if (rc == WEFT_OK || rc == WEFT_INPROGRESS)
                (*sent)++;
        } while (rc == WEFT_OK && *sent < 10000000);
        if (rc != WEFT_INPROGRESS)
            return rc;
        j.pending++;
        if (!drain(*sent))
            return WEFT_ETIMEDOUT;
    }
    return rc;
}

/* Then rank 1 drains, and rank 0's wait fd must turn readable (room to write)
 * well before a sleeper's timeout would matter, and quiet again once rank 0
 * has polled. */
static void test_full_socket_wakes(void)
{
    open_pair();
    uint8_t pkt[PKT] = {0};
    uint64_t sent = 0;
    CHECK(fill(&sent, pkt) == WEFT_EAGAIN);
    int fd = weft__driver_tcp_ops.wait_fd(j.d[0]);
    CHECK(fd >= 0);
    /* Nothing to wake rank 0 yet: no bytes come its way, no room yet. */
    weft__driver_tcp_ops.poll(j.d[0]);
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    CHECK(poll(&pf, 1, 0) == 0);
    double end = test_now_s() + 20;
    while (j.got[1] < sent && test_now_s() < end)
        weft__driver_tcp_ops.poll(j.d[1]);
    CHECK(j.got[1] == sent && j.bad[1] == 0);
    /* The socket has room now: the sleeper on rank 0's fd wakes. Without
     * room armed it would sleep the whole 5 s. */
    CHECK(poll(&pf, 1, 5000) == 1);
    weft__driver_tcp_ops.poll(j.d[0]);
    CHECK(poll(&pf, 1, 0) == 0); /* room disarmed: a sleeper would not spin */
    /* And the refused packet goes now. */
    struct iovec v = {.iov_base = pkt, .iov_len = PKT};
    CHECK(weft__driver_tcp_ops.send(j.t[0], &v, 1, NULL) == WEFT_OK);
    end = test_now_s() + 10;
    while (j.got[1] < sent + 1 && test_now_s() < end)
        weft__driver_tcp_ops.poll(j.d[1]);
    CHECK(j.got[1] == sent + 1 && j.bad[1] == 0 && j.lost[0] + j.lost[1] == 0);
    close_pair();
}

/* Rank 1 reads 8 bytes of rank 0's region rkey; true if it got want. */
static bool rget_is(const weft_rkey_t *rkey, uint64_t want)
{
    uint64_t got = ~want;
    struct iovec v = {.iov_base = &got, .iov_len = sizeof got};
    uint64_t before = j.rgets;
    int rc = weft__driver_tcp_ops.rget(j.t[1], &v, 1, rkey, 0, sizeof got, NULL);
    if (rc == WEFT_INPROGRESS) {
        double end = test_now_s() + 20;
        while (j.rgets == before && test_now_s() < end) {
            weft__driver_tcp_ops.poll(j.d[0]);
            weft__driver_tcp_ops.poll(j.d[1]);
        }
        rc = j.rgets > before ? WEFT_OK : WEFT_ETIMEDOUT;
    }
    return rc == WEFT_OK && got == want;
}

static void test_many_regions(void)
{
    enum { N = 20000 };
    open_pair();
    uint64_t *vals = malloc(sizeof *vals * N);
    weft_rkey_t *keys = malloc(sizeof *keys * N);
    CHECK(vals && keys);
    for (int i = 0; i < N; i++) {
        vals[i] = 0x5eed000000000000ull + (uint64_t)i;
        MUST(weft__driver_tcp_ops.expose(j.d[0], &vals[i], sizeof vals[i], &keys[i]));
    }
    /* Free every third slot, and take them again for new values. */
    for (int i = 0; i < N; i += 3)
        weft__driver_tcp_ops.unexpose(j.d[0], &keys[i]);
    for (int i = 0; i < N; i += 3) {
        vals[i] ^= 0xffff0000ull;
        MUST(weft__driver_tcp_ops.expose(j.d[0], &vals[i], sizeof vals[i], &keys[i]));
    }
    int right = 0, tried = 0;
    for (int i = 0; i < N; i += 97, tried++)
        right += rget_is(&keys[i], vals[i]);
    CHECK(right == tried);
    CHECK(rget_is(&keys[N - 1], vals[N - 1]));
    for (int i = 0; i < N; i++)
        weft__driver_tcp_ops.unexpose(j.d[0], &keys[i]);
    CHECK(j.lost[0] + j.lost[1] == 0);
    close_pair();
    free(vals);
    free(keys);
}

int main(void)
{
    test_watchdog(100);
    test_full_socket_wakes();
    test_many_regions();
    return test_summary("test_tcp_driver");
}
