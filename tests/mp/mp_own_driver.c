/* A driver that lives in the program, not in weft: "udgram", datagrams over
 * AF_UNIX sockets in the abstract namespace, handed to weft_init through
 * WEFT_INIT_FIELD_DRIVERS. The engine chooses it by its description (it
 * reaches this node; WEFT_DRIVERS=udgram leaves shm out), with no edit of
 * the engine. Run on 2+ ranks of one node (it sets WEFT_DRIVERS=udgram
 * unless WEFT_DRIVERS is set):
 *
 *   weftrun -n 2 mp_own_driver
 *
 * 1. A driver without its operations is refused (WEFT_EINVAL).
 * 2. Messages of 0 B to 1 MiB between every pair, both ways: small ones
 *    eager, large ones by rendezvous (the driver has no rget, so the sender
 *    streams RDATA); every byte checked.
 * 3. Every packet went through this driver: its own counts are the
 *    engine's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../common/test_util.h"
#include "drivers/driver.h"

#define MAX_PACKET (16u << 10)
#define MAX_RANKS  64

struct weft_track {
    struct weft_driver *d;
    int peer;
    void *cookie;
    struct sockaddr_un to;
    socklen_t to_len;
};

struct weft_driver {
    int fd, rank;
    weft_driver_upcalls_t up;
    struct weft_track *tracks[MAX_RANKS];
    struct sockaddr_un me;
    socklen_t me_len;
    uint8_t buf[MAX_PACKET + 4];
};

static long sent_packets, got_packets;

static int ud_init(const weft_driver_params_t *p, const weft_driver_upcalls_t *up,
                   weft_driver_t **out)
{
    if (p->size > MAX_RANKS)
        return WEFT_EUNSUPPORTED;
    weft_driver_t *d = calloc(1, sizeof *d);
    if (!d)
        return WEFT_ENOMEM;
    d->rank = p->rank;
    d->up = *up;
    d->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    d->me.sun_family = AF_UNIX;
    /* Abstract: a leading NUL, nothing on disk to clean up. */
    int n = snprintf(d->me.sun_path + 1, sizeof d->me.sun_path - 1, "weft-udgram-%s-%d.%d",
                     p->job_id, p->rank, p->instance);
    d->me_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
    if (d->fd < 0 || bind(d->fd, (struct sockaddr *)&d->me, d->me_len) != 0) {
        if (d->fd >= 0)
            close(d->fd);
        free(d);
        return WEFT_ESYS;
    }
    int sz = 4 << 20;
    setsockopt(d->fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
    setsockopt(d->fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
    *out = d;
    return WEFT_OK;
}

static int ud_address(weft_driver_t *d, void *buf, size_t *len)
{
    if (*len < d->me_len)
        return WEFT_ENOBUFS;
    memcpy(buf, &d->me, d->me_len);
    *len = d->me_len;
    return WEFT_OK;
}

static int ud_connect(weft_driver_t *d, int peer, const void *addr, size_t addrlen, void *cookie,
                      weft_track_t **out, weft_track_caps_t *caps)
{
    if (addrlen > sizeof(struct sockaddr_un) || peer < 0 || peer >= MAX_RANKS)
        return WEFT_EINVAL;
    weft_track_t *t = calloc(1, sizeof *t);
    if (!t)
        return WEFT_ENOMEM;
    t->d = d;
    t->peer = peer;
    t->cookie = cookie;
    memcpy(&t->to, addr, addrlen);
    t->to_len = (socklen_t)addrlen;
    d->tracks[peer] = t;
    *caps = (weft_track_caps_t){.flags = WEFT_DRV_CAP_SEND_COPY,
                                .max_packet = MAX_PACKET,
                                .max_iov = 15,
                                .rdv_threshold = 4096,
                                .latency_us = 5,
                                .bandwidth_mbs = 2000};
    *out = t;
    return WEFT_OK;
}

static int ud_connected(weft_driver_t *d)
{
    return WEFT_OK;
}

/* Each datagram starts with the sender's rank: a receiver knows its track. */
static int ud_send(weft_track_t *t, const struct iovec *iov, int iovcnt, void *cookie)
{
    struct iovec v[16];
    int32_t from = t->d->rank;
    v[0] = (struct iovec){.iov_base = &from, .iov_len = sizeof from};
    for (int i = 0; i < iovcnt; i++)
        v[i + 1] = iov[i];
    struct msghdr m = {.msg_name = &t->to,
                       .msg_namelen = t->to_len,
                       .msg_iov = v,
                       .msg_iovlen = (size_t)iovcnt + 1};
    if (sendmsg(t->d->fd, &m, MSG_NOSIGNAL) < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS ? WEFT_EAGAIN
                                                                           : WEFT_EPEERDEAD;
    sent_packets++;
    return WEFT_OK;
}

static int ud_poll(weft_driver_t *d)
{
    int events = 0;
    for (;;) {
        ssize_t n = recv(d->fd, d->buf, sizeof d->buf, 0);
        if (n < 4)
            return events;
        int32_t from;
        memcpy(&from, d->buf, sizeof from);
        weft_track_t *t = from >= 0 && from < MAX_RANKS ? d->tracks[from] : NULL;
        if (!t)
            continue;
        got_packets++;
        d->up.packet(d->up.owner, t->cookie, d->buf + 4, (size_t)n - 4);
        events++;
    }
}

static int ud_wait_fd(weft_driver_t *d)
{
    return d->fd;
}

static void ud_disconnect(weft_track_t *t)
{
    t->d->tracks[t->peer] = NULL;
    free(t);
}

static void ud_fini(weft_driver_t *d)
{
    close(d->fd);
    free(d);
}

static const weft_param_desc_t ud_params[] = {{NULL, NULL, NULL}};

static const weft_driver_ops_t udgram_ops = {
    .name = "udgram",
    .description = "a test's own: datagrams over abstract AF_UNIX sockets",
    .reach = WEFT_DRV_REACH_NODE,
    .preference = 5,
    .strategy = "aggreg",
    .params = ud_params,
    .init = ud_init,
    .address = ud_address,
    .connect = ud_connect,
    .connected = ud_connected,
    .send = ud_send,
    .poll = ud_poll,
    .wait_fd = ud_wait_fd,
    .disconnect = ud_disconnect,
    .fini = ud_fini,
};

static const size_t sizes[] = {0, 1, 8, 1000, 4096, 4097, 20000, 100000, 1u << 20};

int main(void)
{
    test_watchdog(120);
    weft_ctx_t *ctx;
    /* 1 */
    static const weft_driver_ops_t hollow = {.name = "hollow", .reach = WEFT_DRV_REACH_NODE};
    const weft_driver_ops_t *bad[] = {&hollow};
    weft_init_params_t bp = {.field_mask = WEFT_INIT_FIELD_DRIVERS, .drivers = bad, .ndrivers = 1};
    CHECK(weft_init(&bp, &ctx) == WEFT_EINVAL);

    /* 2: only this driver between ranks (shm would be preferred). */
    setenv("WEFT_DRIVERS", "udgram", 0);
    const weft_driver_ops_t *mine[] = {&udgram_ops};
    weft_init_params_t p = {.field_mask = WEFT_INIT_FIELD_DRIVERS, .drivers = mine, .ndrivers = 1};
    MUST(weft_init(&p, &ctx));
    test_rank = weft_rank(ctx);
    int n = weft_size(ctx), me = weft_rank(ctx);
    if (n < 2) {
        printf("mp_own_driver: needs 2 ranks; skipped\n");
        weft_finalize(ctx);
        return 77;
    }
    size_t max = sizes[sizeof sizes / sizeof sizes[0] - 1];
    uint8_t *out = malloc(max), *in = malloc(max);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t len = sizes[k];
        for (int peer = 0; peer < n; peer++) {
            if (peer == me)
                continue;
            uint64_t okey = (uint64_t)me << 32 | (uint64_t)peer << 16 | k;
            uint64_t ikey = (uint64_t)peer << 32 | (uint64_t)me << 16 | k;
            test_fill(out, len, okey);
            memset(in, 0, len);
            weft_request_t *r[2];
            MUST(weft_sr_irecv(ctx, peer, 3, k, in, len, &r[0]));
            MUST(weft_sr_isend(ctx, peer, 3, k, out, len, &r[1]));
            weft_status_t st[2];
            MUST(weft_sr_waitall(ctx, 2, r, st));
            CHECK(st[0].length == len && st[0].source == peer);
            CHECK(test_verify(in, len, ikey) == -1);
        }
    }

    /* 3 */
    CHECK(sent_packets > 0 && got_packets > 0);
    weft_counters_t c;
    MUST(weft_counters_get(ctx, &c));
    CHECK(c.packets_sent == (uint64_t)sent_packets && c.packets_received == (uint64_t)got_packets);
    free(out);
    free(in);
    MUST(weft_finalize(ctx));
    return test_summary("mp_own_driver");
}
