/* The tcp driver: ranks on different nodes talk over TCP. README.md in this
 * directory has the design; this file is the instance (listening socket,
 * epoll set, parameters), wire-up and the poll loop.
 *
 * Wire-up is eager: connect() of a lower rank starts a non-blocking connect
 * and handshake at once, connect() of a higher rank only prepares the track
 * for the connection the peer will open, and connected() (after the engine's
 * job-wide fence) waits until every track is up. Eager because a connection is
 * also how a peer's death is noticed: a receive posted for a rank we never
 * talked to must still fail if that rank dies. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "drivers/tcp/tcp_int.h"
#include "util/log.h"
#include "util/param.h"

#define TCP_POLL_EVENTS 32

/* Instance i (a rail) listens on the i-th comma-separated entry of
 * WEFT_TCP_IF, or on its only entry (each instance on its own port). */
static const char *iface_spec(int instance, char *buf, size_t len)
{
    const char *spec = weft__param_str("WEFT_TCP_IF", NULL);
    if (!spec || !strchr(spec, ','))
        return spec;
    const char *p = spec;
    for (int i = 0; i < instance; i++) {
        const char *c = strchr(p, ',');
        if (!c)
            break;
        p = c + 1;
    }
    size_t n = strcspn(p, ",");
    snprintf(buf, len, "%.*s", (int)WEFT_MIN(n, len - 1), p);
    return buf;
}

static int listen_on(weft_driver_t *d, int instance)
{
    struct sockaddr_storage ss;
    socklen_t len = 0;
    char spec[128];
    int rc = weft__iface_pick(iface_spec(instance, spec, sizeof spec), &ss, &len, d->if_name,
                              sizeof d->if_name);
    if (rc)
        return rc;
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        weft_log_error("tcp: cannot make the listening socket: %s", strerror(errno));
        return WEFT_ESYS;
    }
    if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, SOMAXCONN) != 0 ||
        getsockname(fd, (struct sockaddr *)&ss, &len) != 0) {
        weft_log_error("tcp: cannot listen on %s: %s", d->if_name, strerror(errno));
        close(fd);
        return WEFT_ESYS;
    }
    memset(&d->addr, 0, sizeof d->addr);
    d->addr.rank = d->rank;
    if (ss.ss_family == AF_INET6) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
        d->addr.family = AF_INET6;
        d->addr.port = ntohs(s6->sin6_port);
        d->addr.scope_id = s6->sin6_scope_id;
        memcpy(d->addr.addr, &s6->sin6_addr, 16);
    } else {
        struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
        d->addr.family = AF_INET;
        d->addr.port = ntohs(s4->sin_port);
        memcpy(d->addr.addr, &s4->sin_addr, 4);
    }
    char host[INET6_ADDRSTRLEN] = "?";
    inet_ntop(ss.ss_family, d->addr.addr, host, sizeof host);
    weft_log_info("tcp: listening on %s (%s) port %u", host, d->if_name, d->addr.port);
    d->listen_fd = fd;
    return WEFT_OK;
}

static int tcp_init(const weft_driver_params_t *params, const weft_driver_upcalls_t *up,
                    weft_driver_t **out)
{
    if (strlen(params->job_id) > TCP_JOBID_MAX)
        return WEFT_EINVAL;
    weft_driver_t *d = calloc(1, sizeof *d);
    if (!d)
        return WEFT_ENOMEM;
    d->up = *up;
    d->rank = params->rank;
    d->size = params->size;
    d->epfd = d->listen_fd = -1;
    snprintf(d->job_id, sizeof d->job_id, "%s", params->job_id);
    memcpy(d->secret, params->job_secret, WEFT_DRV_SECRET_LEN);
    weft_list_init(&d->handshakes);
    weft_list_init(&d->links);
    d->hs_timeout_ns = weft__param_size("WEFT_TCP_HANDSHAKE_MS", 5000) * 1000000ull;
    d->connect_timeout_ns = weft__param_size("WEFT_TCP_CONNECT_MS", 30000) * 1000000ull;
    d->user_timeout_ms = (uint32_t)WEFT_MIN(
        WEFT_MAX(weft__param_size("WEFT_TCP_TIMEOUT_MS", 10000), 1000ull), 3600000ull);
    d->max_packet = TCP_MAX_PACKET_DEFAULT;
    d->rdv_threshold = TCP_RDV_DEFAULT;
    int rc = WEFT_ENOMEM;
    d->tracks = calloc((size_t)params->size, sizeof *d->tracks);
    if (!d->tracks)
        goto err;
    rc = WEFT_ESYS;
    d->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (d->epfd < 0) {
        weft_log_error("tcp: epoll_create1: %s", strerror(errno));
        goto err;
    }
    if ((rc = listen_on(d, params->instance)) != WEFT_OK)
        goto err;
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 0};
    if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->listen_fd, &ev) != 0) {
        weft_log_error("tcp: epoll_ctl: %s", strerror(errno));
        rc = WEFT_ESYS;
        goto err;
    }
    *out = d;
    return WEFT_OK;
err:
    if (d->listen_fd >= 0)
        close(d->listen_fd);
    if (d->epfd >= 0)
        close(d->epfd);
    free(d->tracks);
    free(d);
    return rc;
}

static int tcp_address(weft_driver_t *d, void *buf, size_t *len)
{
    if (*len < TCP_ADDR_LEN)
        return WEFT_ENOBUFS;
    *len = weft__tcp_addr_encode(buf, &d->addr);
    return WEFT_OK;
}

/* A track to the peer at address a; rank is -1 for a link, whose fields the
 * caller sets before calling track_open. */
static weft_track_t *track_new(weft_driver_t *d, const tcp_addr_t *a, int rank, void *peer_cookie)
{
    weft_track_t *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->fd = -1;
    t->driver = d;
    t->peer_cookie = peer_cookie;
    t->peer_rank = rank;
    t->addr = *a;
    /* A link-local address is reached through an interface of this host: the
     * peer published its own interface's index, which names nothing here.
     * Ours is the one we listen on, on the same link (WEFT_TCP_IF chose it). */
    if (a->family == AF_INET6 && a->addr[0] == 0xfe && (a->addr[1] & 0xc0) == 0x80) /* fe80::/10 */
        t->addr.scope_id = d->addr.family == AF_INET6 ? d->addr.scope_id : 0;
    weft_list_init(&t->txq);
    weft_list_init(&t->gets);
    weft_list_init(&t->pkt_op.link);
    weft_list_init(&t->link_node);
    return t;
}

/* Start connecting if t is the client, and say what the track can do. */
static int track_open(weft_driver_t *d, weft_track_t *t, weft_track_t **track_out,
                      weft_track_caps_t *caps)
{
    if (t->is_client) {
        int rc = weft__tcp_hs_connect(d, t);
        if (rc)
            return rc;
    }
    caps->flags = WEFT_DRV_CAP_RGET;
    caps->max_packet = d->max_packet;
    caps->max_iov = TCP_MAX_IOV;
    caps->rdv_threshold = d->rdv_threshold;
    caps->latency_us = 5;
    caps->bandwidth_mbs = 5000;
    *track_out = t;
    return WEFT_OK;
}

static int tcp_connect(weft_driver_t *d, int peer_rank, const void *addr, size_t addrlen,
                       void *peer_cookie, weft_track_t **track_out, weft_track_caps_t *caps)
{
    if (peer_rank < 0 || peer_rank >= d->size || peer_rank == d->rank || d->tracks[peer_rank])
        return WEFT_EINVAL;
    tcp_addr_t a;
    if (weft__tcp_addr_decode(addr, addrlen, &a) != WEFT_OK || a.rank != peer_rank) {
        weft_log_error("tcp: rank %d published a malformed address", peer_rank);
        return WEFT_EPROTO;
    }
    weft_track_t *t = track_new(d, &a, peer_rank, peer_cookie);
    if (!t)
        return WEFT_ENOMEM;
    t->is_client = d->rank > peer_rank;
    d->tracks[peer_rank] = t;
    int rc = track_open(d, t, track_out, caps);
    if (rc) {
        d->tracks[peer_rank] = NULL;
        free(t);
    }
    return rc;
}

static int tcp_link(weft_driver_t *d, const weft_drv_link_t *link, const void *addr, size_t addrlen,
                    void *peer_cookie, weft_track_t **track_out, weft_track_caps_t *caps)
{
    if (!link->mine || !link->peer || link->mine == link->peer)
        return WEFT_EINVAL;
    tcp_addr_t a;
    if (weft__tcp_addr_decode(addr, addrlen, &a) != WEFT_OK) {
        weft_log_error("tcp: a linked process gave a malformed address");
        return WEFT_EPROTO;
    }
    weft_list_t *pos, *tmp;
    weft_list_for_each_safe(pos, tmp, &d->links)
    {
        if (weft_list_entry(pos, weft_track_t, link_node)->link_peer == link->peer)
            return WEFT_EINVAL; /* one link per peer */
    }
    weft_track_t *t = track_new(d, &a, -1, peer_cookie);
    if (!t)
        return WEFT_ENOMEM;
    t->link = true;
    t->link_mine = link->mine;
    t->link_peer = link->peer;
    memcpy(t->link_secret, link->secret, WEFT_DRV_SECRET_LEN);
    t->is_client = link->mine > link->peer;
    weft_list_push_back(&d->links, &t->link_node);
    int rc = track_open(d, t, track_out, caps);
    if (rc) {
        weft_list_remove(&t->link_node);
        free(t);
        return rc;
    }
    /* Its peer may have knocked already; if it never does, it is lost. */
    if (!t->is_client) {
        t->link_deadline_ns = weft__now_ns() + d->connect_timeout_ns;
        d->links_waiting++;
        weft__tcp_hs_unpark(d);
    }
    return WEFT_OK;
}

static int tcp_poll(weft_driver_t *d);

static int tcp_track_up(weft_track_t *t)
{
    return t->up ? 1 : t->lost ? WEFT_EPEERDEAD : 0;
}

static int tcp_connected(weft_driver_t *d)
{
    /* Every track up (or lost) before the job starts: a peer that cannot be
     * reached fails init here rather than a send later. */
    uint64_t deadline = weft__now_ns() + d->connect_timeout_ns;
    for (;;) {
        int waiting = 0, lost = 0;
        for (int r = 0; r < d->size; r++) {
            weft_track_t *t = d->tracks[r];
            if (t && !t->up && !t->lost)
                waiting++;
            if (t && t->lost)
                lost++;
        }
        if (lost)
            return WEFT_EPEERDEAD;
        if (!waiting)
            return WEFT_OK;
        if (weft__now_ns() > deadline) {
            weft_log_error("tcp: %d peers did not connect within WEFT_TCP_CONNECT_MS", waiting);
            return WEFT_ETIMEDOUT;
        }
        if (tcp_poll(d) == 0)
            usleep(100); /* nothing yet: leave the core to the peers we wait for */
    }
}

/* Links whose peer should have connected by now: lost (it died before it
 * could, or cannot reach us). Counts those still waiting. */
static void links_expire(weft_driver_t *d, uint64_t now)
{
    int waiting = 0;
    weft_list_t *pos, *tmp;
    weft_list_for_each_safe(pos, tmp, &d->links)
    {
        weft_track_t *t = weft_list_entry(pos, weft_track_t, link_node);
        if (t->is_client || t->up || t->lost)
            continue;
        if (now < t->link_deadline_ns)
            waiting++;
        else
            weft__tcp_track_lose(d, t, WEFT_EPEERDEAD,
                                 "it never connected within WEFT_TCP_CONNECT_MS");
    }
    d->links_waiting = waiting;
}

static int tcp_poll(weft_driver_t *d)
{
    /* With one connection (two ranks, or one remote peer) the socket is read
     * directly: one system call per poll, like a plain socket loop, instead of
     * epoll_wait and then recv. Every 64th poll still asks epoll, for
     * strangers at the listening socket and anything else it reports; so
     * does every poll while the connection waits for room (EPOLLOUT armed):
     * the event that reports the room also disarms it, so a sleeper on the
     * instance does not wake again and again for room already there. */
    weft_track_t *one = d->single;
    if (WEFT_LIKELY(one && (++d->polls & 63) && !d->nhandshakes && !d->links_waiting &&
                    !one->want_out)) {
        uint64_t before = d->events;
        weft__tcp_track_poll(d, one);
        return (int)(d->events - before);
    }
    struct epoll_event evs[TCP_POLL_EVENTS];
    int n = epoll_wait(d->epfd, evs, TCP_POLL_EVENTS, 0);
    if (WEFT_UNLIKELY(d->nhandshakes || d->links_waiting)) {
        /* Unfinished handshakes have deadlines (slow strangers, peers that
         * never answer), and so do links whose peer has yet to connect; only
         * then is the clock read. */
        uint64_t now = weft__now_ns();
        weft__tcp_hs_expire(d, now);
        if (d->links_waiting)
            links_expire(d, now);
    }
    for (int i = 0; i < n; i++) {
        uint64_t u = evs[i].data.u64;
        if (u == 0)
            weft__tcp_hs_accept(d);
        else if (u & 1)
            weft__tcp_hs_event(d, (tcp_conn_t *)(uintptr_t)(u & ~(uint64_t)1), evs[i].events);
        else
            weft__tcp_track_event(d, (weft_track_t *)(uintptr_t)u, evs[i].events);
    }
    if (WEFT_UNLIKELY(d->hs_closed))
        weft__tcp_hs_reap(d); /* no event of this pass names them any more */
    return n > 0 ? n : 0;
}

/* The epoll instance: readable while a connection has bytes, room it waits
 * for (EPOLLOUT is armed only while a send is queued or was refused whole,
 * and disarmed by the poll that finds the room), an error or a hang-up, or the listening
 * socket a caller. Nothing waits in user space that a poll would find
 * without an event: a partial frame needs more bytes, a queued send room.
 * Handshakes have deadlines, which a sleeper meets through its timeout. */
static int tcp_wait_fd(weft_driver_t *d)
{
    return d->epfd;
}

static void tcp_disconnect(weft_track_t *t)
{
    weft_driver_t *d = t->driver;
    if (t->conn)
        weft__tcp_hs_close(d, t->conn);
    if (t->fd >= 0) {
        epoll_ctl(d->epfd, EPOLL_CTL_DEL, t->fd, NULL);
        if (t->up)
            d->nup--;
    }
    if (t->link) {
        weft_list_remove(&t->link_node);
        /* A connection still shaking hands for it forgets it. */
        weft_list_t *pos, *tmp;
        weft_list_for_each_safe(pos, tmp, &d->handshakes)
        {
            tcp_conn_t *c = weft_list_entry(pos, tcp_conn_t, hs_link);
            if (c->link_track == t)
                weft__tcp_hs_close(d, c);
        }
    } else {
        d->tracks[t->peer_rank] = NULL;
    }
    if (d->single == t)
        d->single = NULL;
    weft__tcp_track_free(t);
}

static void tcp_shutdown(weft_track_t *t)
{
    /* The connection's end is what poll reports as a loss (and then completes
     * every send and rget in flight), as after a failed send. */
    if (!t->lost && t->fd >= 0)
        shutdown(t->fd, SHUT_RDWR);
}

static void tcp_fini(weft_driver_t *d)
{
    weft__tcp_refused(d, NULL, NULL); /* the count not logged yet */
    for (int r = 0; r < d->size; r++)
        if (d->tracks[r])
            tcp_disconnect(d->tracks[r]);
    while (!weft_list_empty(&d->links))
        tcp_disconnect(weft_list_entry(d->links.next, weft_track_t, link_node));
    while (!weft_list_empty(&d->handshakes))
        weft__tcp_hs_close(d, weft_list_entry(d->handshakes.next, tcp_conn_t, hs_link));
    weft__tcp_hs_reap(d);
    if (d->listen_fd >= 0)
        close(d->listen_fd);
    if (d->epfd >= 0)
        close(d->epfd);
    free(d->regions);
    free(d->tracks);
    free(d);
}

static int tcp_send(weft_track_t *t, const struct iovec *iov, int iovcnt, void *cookie)
{
    return weft__tcp_send(t, iov, iovcnt, cookie);
}

static int tcp_expose(weft_driver_t *d, const void *buf, size_t len, weft_rkey_t *rkey)
{
    return weft__tcp_expose(d, buf, len, rkey);
}

static void tcp_unexpose(weft_driver_t *d, const weft_rkey_t *rkey)
{
    weft__tcp_unexpose(d, rkey);
}

static int tcp_rget(weft_track_t *t, const struct iovec *local, int iovcnt, const weft_rkey_t *rkey,
                    uint64_t offset, size_t len, void *cookie)
{
    return weft__tcp_rget(t, local, iovcnt, rkey, offset, len, cookie);
}

/* The parameters this driver reads. */
static const weft_param_desc_t tcp_params[] = {
    {"WEFT_TCP_IF", "first up non-loopback interface, else lo",
     "tcp: interface name (eth0) or CIDR (10.77.0.0/24, fd00::/64) to listen on; with "
     "WEFT_TCP_RAILS, a comma-separated list gives rail i the i-th entry"},
    {"WEFT_TCP_TIMEOUT_MS", "10000",
     "tcp: a silent peer is declared dead after this long (keepalive + TCP_USER_TIMEOUT)"},
    {"WEFT_TCP_HANDSHAKE_MS", "5000",
     "tcp: an accepted connection must prove job membership within this time"},
    {"WEFT_TCP_RAILS", "1",
     "tcp: rails (connections) per peer, 1-4, one tcp instance each, rail i on WEFT_TCP_IF's "
     "i-th entry or all on its only one; rail 0 carries every packet; with "
     "WEFT_STRATEGY=split_balance large messages are read in parts over the first two"},
    {"WEFT_TCP_CONNECT_MS", "30000", "tcp: how long init waits for every connection to come up"},
    {NULL, NULL, NULL},
};

const weft_driver_ops_t weft__driver_tcp_ops = {
    .name = "tcp",
    .description = "between nodes: one authenticated connection per peer, rendezvous read straight "
                   "into the receive buffer",
    .reach = WEFT_DRV_REACH_NET,
    .preference = 10,
    .rails_param = "WEFT_TCP_RAILS",
    /* Every packet costs a system call on each side, so packing a burst
     * into one pays many times over (bench/weft_aggreg.c); over shm and self
     * a packet costs a ring write or a queue push, and default is as fast
     * with less delay. */
    .strategy = "aggreg",
    .params = tcp_params,
    .init = tcp_init,
    .address = tcp_address,
    .connect = tcp_connect,
    .link = tcp_link,
    .track_up = tcp_track_up,
    .connected = tcp_connected,
    .send = tcp_send,
    .poll = tcp_poll,
    .wait_fd = tcp_wait_fd,
    .expose = tcp_expose,
    .unexpose = tcp_unexpose,
    .rget = tcp_rget,
    .rput = NULL,
    .disconnect = tcp_disconnect,
    .shutdown = tcp_shutdown,
    .fini = tcp_fini,
};
