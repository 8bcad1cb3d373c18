/* Established connections: sending frames, receiving frames, losing a peer.
 *
 * Sending: a frame goes out with one sendmsg() of its header and the caller's
 * iovec, straight from the caller's buffers. What the socket does not take at
 * once waits in the track's queue (the caller's iovec referenced, not copied:
 * it stays valid until send_done) and leaves when epoll says the socket is
 * writable. A track holds at most one engine packet unsent; a second send()
 * meanwhile answers WEFT_EAGAIN, which is the engine's back-pressure.
 *
 * Receiving: frames are read ahead into a per-track buffer as large as the
 * largest frame, and engine packets are handed up from there. The payload of a
 * DATA frame (the answer to our GET) is read with readv() straight into the
 * iovec of the rget it answers; to keep that copy-free, a track waiting for
 * DATA reads one frame header at a time, so read-ahead never swallows a
 * payload.
 *
 * Losing a peer: every operation in flight on the track completes with
 * WEFT_EPEERDEAD (send_done, rget_done) before the one peer_lost upcall, and
 * nothing is called back about the track afterwards: the engine may then fail
 * what remains without racing a late completion. */
#include <errno.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "drivers/tcp/tcp_int.h"
#include "util/log.h"

#define TCP_RX_BUDGET 16 /* reads per track per poll: a busy peer cannot starve others */
#define TCP_TX_GATHER 256

static void arm_out(weft_driver_t *d, weft_track_t *t, bool on)
{
    if (t->want_out == on || t->fd < 0)
        return;
    struct epoll_event ev = {.events = EPOLLIN | (on ? EPOLLOUT : 0), .data.u64 = tcp_ev_track(t)};
    if (epoll_ctl(d->epfd, EPOLL_CTL_MOD, t->fd, &ev) == 0)
        t->want_out = on;
}

int weft__tcp_track_up(weft_driver_t *d, weft_track_t *t, int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    /* A silent peer (host gone, cable pulled) is noticed within the user timeout:
     * keepalive probes an idle connection, TCP_USER_TIMEOUT bounds how long sent
     * data may stay unacknowledged. */
    int idle = (int)WEFT_MAX(1u, d->user_timeout_ms / 3000);
    int intvl = idle, cnt = 3;
    unsigned int uto = d->user_timeout_ms;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &uto, sizeof uto);
    if (!t->rx_buf) {
        t->rx_cap = d->max_packet + TCP_FRAME_HDR;
        t->rx_buf = malloc(t->rx_cap);
        if (!t->rx_buf)
            return WEFT_ENOMEM;
    }
    t->rx_start = t->rx_end = 0;
    t->rx_state = TCP_RX_HDR;
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tcp_ev_track(t)};
    if (!weft_list_empty(&t->txq))
        ev.events |= EPOLLOUT;
    if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        weft_log_error("tcp: epoll_ctl for rank %d: %s", t->peer_rank, strerror(errno));
        return WEFT_ESYS;
    }
    t->want_out = (ev.events & EPOLLOUT) != 0;
    t->fd = fd;
    t->up = true;
    d->nup++;
    d->single = d->nup == 1 ? t : NULL;
    weft_log_debug("tcp: connected to rank %d", t->peer_rank);
    return WEFT_OK;
}

/* ---- Sending ---------------------------------------------------------------------- */

/* Append the unsent part of op to v (at most max entries); returns entries used. */
static int op_iov(const tcp_txop_t *op, struct iovec *v, int max)
{
    int n = 0;
    if (op->iov_i < 0 && n < max) {
        v[n].iov_base = (uint8_t *)op->hdr + op->done;
        v[n].iov_len = op->hdr_len - op->done;
        n++;
    }
    int i = op->iov_i < 0 ? 0 : op->iov_i;
    size_t skip = op->iov_i < 0 ? 0 : op->done;
    for (; i < op->iovcnt && n < max; i++) {
        if (op->iov[i].iov_len == skip) {
            skip = 0;
            continue;
        }
        v[n].iov_base = (uint8_t *)op->iov[i].iov_base + skip;
        v[n].iov_len = op->iov[i].iov_len - skip;
        skip = 0;
        n++;
    }
    return n;
}

/* Account n written bytes to op; returns the bytes it did not need. */
static size_t op_advance(tcp_txop_t *op, size_t n)
{
    size_t used = WEFT_MIN(n, op->left);
    op->left -= used;
    n = used;
    while (n) {
        size_t part = op->iov_i < 0 ? op->hdr_len : op->iov[op->iov_i].iov_len;
        size_t take = WEFT_MIN(part - op->done, n);
        op->done += take;
        n -= take;
        if (op->done == part) {
            op->iov_i++;
            op->done = 0;
        }
    }
    return used;
}

static size_t iov_total(const struct iovec *iov, int iovcnt)
{
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    return len;
}

/* Write as much of the queue as the socket takes. Completed packets are
 * reported (send_done) after they leave the queue, so an upcall that sends
 * again finds the queue consistent. Returns WEFT_OK or WEFT_EPEERDEAD. */
static int tx_progress(weft_driver_t *d, weft_track_t *t)
{
    while (!weft_list_empty(&t->txq) && t->fd >= 0) {
        struct iovec v[TCP_TX_GATHER];
        int n = 0;
        weft_list_t *pos;
        for (pos = t->txq.next; pos != &t->txq && n < TCP_TX_GATHER; pos = pos->next)
            n += op_iov(weft_list_entry(pos, tcp_txop_t, link), v + n, TCP_TX_GATHER - n);
        struct msghdr msg = {.msg_iov = v, .msg_iovlen = (size_t)n};
        ssize_t w = sendmsg(t->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                arm_out(d, t, true);
                return WEFT_OK;
            }
            if (errno == EINTR)
                continue;
            return WEFT_EPEERDEAD;
        }
        size_t left = (size_t)w;
        while (left && !weft_list_empty(&t->txq)) {
            tcp_txop_t *op = weft_list_entry(t->txq.next, tcp_txop_t, link);
            left -= op_advance(op, left);
            if (op->left)
                break;
            weft_list_remove(&op->link);
            if (op->kind == TCP_FRAME_PKT) {
                t->pkt_queued--;
                d->events++;
                d->up.send_done(d->up.owner, t->peer_cookie, op->cookie, WEFT_OK);
            } else if (op->heap) {
                free(op);
            }
        }
    }
    if (weft_list_empty(&t->txq))
        arm_out(d, t, false);
    return WEFT_OK;
}

void weft__tcp_tx_queue(weft_track_t *t, tcp_txop_t *op)
{
    op->iov_i = -1;
    op->done = 0;
    op->left = op->hdr_len + iov_total(op->iov, op->iovcnt);
    bool idle = weft_list_empty(&t->txq);
    weft_list_push_back(&t->txq, &op->link);
    if (op->kind == TCP_FRAME_PKT)
        t->pkt_queued++;
    if (idle && tx_progress(t->driver, t) != WEFT_OK)
        shutdown(t->fd, SHUT_RDWR); /* poll sees the end and reports the loss */
}

/* The track's one engine packet that waits in the queue. */
static tcp_txop_t *pkt_op(weft_track_t *t)
{
    return &t->pkt_op;
}

int weft__tcp_send(weft_track_t *t, const struct iovec *iov, int iovcnt, void *cookie)
{
    if (WEFT_UNLIKELY(!t->up))
        return t->lost ? WEFT_EPEERDEAD : WEFT_EAGAIN;
    if (WEFT_UNLIKELY(iovcnt < 0 || iovcnt > TCP_MAX_IOV))
        return WEFT_EINVAL;
    if (!weft_list_empty(&t->txq)) {
        if (t->pkt_queued)
            return WEFT_EAGAIN;
        size_t len = iov_total(iov, iovcnt);
        if (len > t->driver->max_packet)
            return WEFT_EINVAL;
        tcp_txop_t *op = pkt_op(t);
        op->kind = TCP_FRAME_PKT;
        op->cookie = cookie;
        weft__tcp_frame_encode(op->hdr, TCP_FRAME_PKT, (uint32_t)len, 0);
        op->hdr_len = TCP_FRAME_HDR;
        memcpy(t->pkt_iov, iov, (size_t)iovcnt * sizeof *iov);
        op->iov = t->pkt_iov;
        op->iovcnt = iovcnt;
        weft__tcp_tx_queue(t, op);
        return WEFT_INPROGRESS;
    }
    /* The common case: the socket takes the whole frame now. */
    struct iovec v[TCP_MAX_IOV + 1];
    uint8_t hdr[TCP_FRAME_HDR];
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++) {
        v[i + 1] = iov[i];
        len += iov[i].iov_len;
    }
    if (WEFT_UNLIKELY(len > t->driver->max_packet))
        return WEFT_EINVAL;
    weft__tcp_frame_encode(hdr, TCP_FRAME_PKT, (uint32_t)len, 0);
    v[0].iov_base = hdr;
    v[0].iov_len = TCP_FRAME_HDR;
    struct msghdr msg = {.msg_iov = v, .msg_iovlen = (size_t)iovcnt + 1};
    ssize_t w;
    do
        w = sendmsg(t->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (w < 0 && errno == EINTR);
    if (WEFT_LIKELY((size_t)w == len + TCP_FRAME_HDR))
        return WEFT_OK;
    if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
        /* The connection broke: poll reports the loss (and completes whatever
         * else is in flight) on its next turn. */
        shutdown(t->fd, SHUT_RDWR);
        return WEFT_EPEERDEAD;
    }
    if (w <= 0) {
        /* Nothing went: the caller keeps its packet and tries again at a
         * later poll. A thread asleep on the wait fd must wake when the
         * socket has room, not at its sleep's timeout: ask for room (the
         * next tx_progress, with the queue empty, stops asking). */
        arm_out(t->driver, t, true);
        return WEFT_EAGAIN;
    }
    /* Partly written: the rest waits in the queue, from the caller's buffers. */
    tcp_txop_t *op = pkt_op(t);
    op->kind = TCP_FRAME_PKT;
    op->cookie = cookie;
    memcpy(op->hdr, hdr, TCP_FRAME_HDR);
    op->hdr_len = TCP_FRAME_HDR;
    memcpy(t->pkt_iov, iov, (size_t)iovcnt * sizeof *iov);
    op->iov = t->pkt_iov;
    op->iovcnt = iovcnt;
    op->iov_i = -1;
    op->done = 0;
    op->left = len + TCP_FRAME_HDR;
    op_advance(op, (size_t)w);
    weft_list_push_back(&t->txq, &op->link);
    t->pkt_queued++;
    arm_out(t->driver, t, true);
    return WEFT_INPROGRESS;
}

/* ---- Losing the peer ------------------------------------------------------------ */

void weft__tcp_track_lose(weft_driver_t *d, weft_track_t *t, int status, const char *why)
{
    if (t->lost)
        return;
    t->lost = true;
    if (t->up)
        d->nup--;
    d->single = NULL;
    t->up = false;
    if (t->fd >= 0) {
        epoll_ctl(d->epfd, EPOLL_CTL_DEL, t->fd, NULL);
        close(t->fd);
        t->fd = -1;
    }
    char who[48];
    if (t->link)
        snprintf(who, sizeof who, "linked process %016llx", (unsigned long long)t->link_peer);
    else
        snprintf(who, sizeof who, "rank %d", t->peer_rank);
    if (status == WEFT_EPROTO)
        weft_log_warn("tcp: protocol error from %s (%s): dropping the connection", who, why);
    else
        weft_log_info("tcp: lost %s (%s)", who, why);
    /* Everything in flight completes before peer_lost, nothing after it. */
    weft_list_t *pos;
    while ((pos = weft_list_pop_front(&t->txq))) {
        tcp_txop_t *op = weft_list_entry(pos, tcp_txop_t, link);
        if (op->kind == TCP_FRAME_PKT)
            d->up.send_done(d->up.owner, t->peer_cookie, op->cookie, WEFT_EPEERDEAD);
        else if (op->heap)
            free(op);
    }
    t->pkt_queued = 0;
    t->rx_get = NULL;
    while ((pos = weft_list_pop_front(&t->gets))) {
        tcp_getop_t *g = weft_list_entry(pos, tcp_getop_t, link);
        void *cookie = g->cookie;
        if (g->iov != g->iov_inline)
            free(g->iov);
        free(g);
        d->up.rget_done(d->up.owner, t->peer_cookie, cookie, WEFT_EPEERDEAD);
    }
    d->up.peer_lost(d->up.owner, t->peer_cookie,
                    status == WEFT_EPROTO ? WEFT_EPROTO : WEFT_EPEERDEAD);
}

void weft__tcp_track_free(weft_track_t *t)
{
    weft_list_t *pos;
    while ((pos = weft_list_pop_front(&t->txq))) {
        tcp_txop_t *op = weft_list_entry(pos, tcp_txop_t, link);
        if (op->heap)
            free(op);
    }
    while ((pos = weft_list_pop_front(&t->gets))) {
        tcp_getop_t *g = weft_list_entry(pos, tcp_getop_t, link);
        if (g->iov != g->iov_inline)
            free(g->iov);
        free(g);
    }
    if (t->fd >= 0)
        close(t->fd);
    free(t->rx_buf);
    free(t);
}

/* ---- Receiving ---------------------------------------------------------------------- */

/* The DATA payload: buffered bytes first, then readv straight into the iovec.
 * Returns 1 when the frame is complete, 0 when the socket is empty, or an
 * error. */
static int rx_data(weft_driver_t *d, weft_track_t *t)
{
    tcp_getop_t *g = t->rx_get;
    /* Bytes already read ahead (at most a frame header's worth of read-ahead,
     * or what arrived with the header on the first read). */
    while (t->rx_left && t->rx_start < t->rx_end) {
        struct iovec *v = &g->iov[t->rx_iov_i];
        size_t take =
            WEFT_MIN(WEFT_MIN(v->iov_len - t->rx_iov_off, t->rx_left), t->rx_end - t->rx_start);
        memcpy((uint8_t *)v->iov_base + t->rx_iov_off, t->rx_buf + t->rx_start, take);
        t->rx_start += take;
        t->rx_iov_off += take;
        t->rx_left -= take;
        if (t->rx_iov_off == v->iov_len) {
            t->rx_iov_i++;
            t->rx_iov_off = 0;
        }
    }
    int reads = 0;
    while (t->rx_left && reads++ < TCP_RX_BUDGET) {
        struct iovec v[TCP_TX_GATHER];
        int n = 0;
        size_t want = t->rx_left;
        for (int i = t->rx_iov_i; i < g->iovcnt && n < TCP_TX_GATHER && want; i++) {
            size_t off = i == t->rx_iov_i ? t->rx_iov_off : 0;
            size_t take = WEFT_MIN(g->iov[i].iov_len - off, want);
            if (!take)
                continue;
            v[n].iov_base = (uint8_t *)g->iov[i].iov_base + off;
            v[n].iov_len = take;
            want -= take;
            n++;
        }
        ssize_t r = readv(t->fd, v, n);
        if (r == 0)
            return WEFT_EPEERDEAD;
        if (r < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            if (errno == EINTR)
                continue;
            return WEFT_EPEERDEAD;
        }
        size_t got = (size_t)r;
        t->rx_left -= got;
        while (got) {
            size_t take = WEFT_MIN(g->iov[t->rx_iov_i].iov_len - t->rx_iov_off, got);
            t->rx_iov_off += take;
            got -= take;
            if (t->rx_iov_off == g->iov[t->rx_iov_i].iov_len) {
                t->rx_iov_i++;
                t->rx_iov_off = 0;
            }
        }
    }
    if (t->rx_left)
        return 0;
    weft_list_remove(&g->link);
    t->rx_get = NULL;
    t->rx_state = TCP_RX_HDR;
    void *cookie = g->cookie;
    if (g->iov != g->iov_inline)
        free(g->iov);
    free(g);
    d->events++;
    d->up.rget_done(d->up.owner, t->peer_cookie, cookie, WEFT_OK);
    return 1;
}

/* Handle the whole frames at the head of the buffer. Returns WEFT_OK, or an
 * error that loses the peer (*why says which). */
static int rx_frames(weft_driver_t *d, weft_track_t *t, const char **why)
{
    while (t->up && t->rx_state == TCP_RX_HDR && t->rx_end - t->rx_start >= TCP_FRAME_HDR) {
        const uint8_t *p = t->rx_buf + t->rx_start;
        tcp_frame_t f;
        if (weft__tcp_frame_decode(p, d->max_packet, &f) != WEFT_OK) {
            *why = "bad frame header";
            return WEFT_EPROTO;
        }
        size_t have = t->rx_end - t->rx_start - TCP_FRAME_HDR;
        if (f.type == TCP_FRAME_DATA) {
            tcp_getop_t *g =
                weft_list_empty(&t->gets) ? NULL : weft_list_entry(t->gets.next, tcp_getop_t, link);
            if (!g || g->id != f.aux || g->len != f.length) {
                *why = "DATA that answers no GET of ours";
                return WEFT_EPROTO;
            }
            t->rx_start += TCP_FRAME_HDR;
            t->rx_get = g;
            t->rx_iov_i = 0;
            t->rx_iov_off = 0;
            t->rx_left = f.length;
            t->rx_state = TCP_RX_DATA;
            return WEFT_OK;
        }
        if (have < f.length)
            return WEFT_OK; /* the rest is still on its way */
        t->rx_start += TCP_FRAME_HDR + f.length;
        if (f.type == TCP_FRAME_PKT) {
            d->events++;
            if (d->up.packet(d->up.owner, t->peer_cookie, p + TCP_FRAME_HDR, f.length) < 0) {
                *why = "malformed packet";
                return WEFT_EPROTO;
            }
        } else {
            tcp_get_t g;
            weft__tcp_get_decode(p + TCP_FRAME_HDR, &g);
            if (weft__tcp_serve_get(d, t, f.aux, &g) != WEFT_OK) {
                *why = "GET outside any exposed region";
                return WEFT_EPROTO;
            }
        }
    }
    return WEFT_OK;
}

/* Read and handle what the socket has, up to a budget of reads. Whatever was
 * read is handled before returning: epoll only reports the socket, so bytes
 * left in our buffer would wait for the next arrival. */
static void rx_progress(weft_driver_t *d, weft_track_t *t)
{
    const char *why = "connection closed";
    int rc = WEFT_OK;
    bool drained = false;
    for (int reads = 0; t->up;) {
        if (t->rx_state == TCP_RX_DATA) {
            rc = rx_data(d, t);
            if (rc < 0)
                break;
            if (rc == 0)
                return;
            continue;
        }
        if ((rc = rx_frames(d, t, &why)) != WEFT_OK)
            break;
        if (t->rx_state == TCP_RX_DATA || !t->up)
            continue;
        /* A short read emptied the socket (almost surely): one more recv()
         * would only say EAGAIN. Anything that came since is reported again. */
        if (drained || reads++ == TCP_RX_BUDGET)
            return;
        /* Make room: move a partial frame to the front of the buffer when it
         * would not fit where it is, or when little room is left. */
        size_t have = t->rx_end - t->rx_start;
        size_t need = TCP_FRAME_HDR;
        if (have >= TCP_FRAME_HDR)
            need += tcp_le32_get(t->rx_buf + t->rx_start + 4); /* decoded: <= max_packet */
        if (have == 0) {
            t->rx_start = t->rx_end = 0;
        } else if (t->rx_start + need > t->rx_cap ||
                   (t->rx_start > 0 && t->rx_cap - t->rx_end < TCP_FRAME_HDR + d->max_packet / 2)) {
            memmove(t->rx_buf, t->rx_buf + t->rx_start, have);
            t->rx_end = have;
            t->rx_start = 0;
        }
        /* While a DATA frame may come, read no further than the next frame
         * header (or the frame whose header we have), so its payload goes
         * straight to the user's buffer. */
        size_t room = t->rx_cap - t->rx_end;
        if (!weft_list_empty(&t->gets))
            room = WEFT_MIN(room, need - have);
        ssize_t r = recv(t->fd, t->rx_buf + t->rx_end, room, MSG_DONTWAIT);
        if (r == 0) {
            rc = WEFT_EPEERDEAD;
            break;
        }
        if (r < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return;
            if (errno == EINTR)
                continue;
            why = strerror(errno);
            rc = WEFT_EPEERDEAD;
            break;
        }
        t->rx_end += (size_t)r;
        drained = (size_t)r < room;
    }
    if (rc < 0 && t->up)
        weft__tcp_track_lose(d, t, rc, why);
}

void weft__tcp_track_poll(weft_driver_t *d, weft_track_t *t)
{
    rx_progress(d, t);
    if (t->up && !weft_list_empty(&t->txq) && tx_progress(d, t) != WEFT_OK)
        weft__tcp_track_lose(d, t, WEFT_EPEERDEAD, "send failed");
}

void weft__tcp_track_event(weft_driver_t *d, weft_track_t *t, uint32_t events)
{
    if (!t->up)
        return;
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
        rx_progress(d, t);
    if (t->up && (events & EPOLLOUT) && tx_progress(d, t) != WEFT_OK)
        weft__tcp_track_lose(d, t, WEFT_EPEERDEAD, "send failed");
}
