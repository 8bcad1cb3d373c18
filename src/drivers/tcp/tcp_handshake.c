/* Connection set-up and the job-secret handshake.
 *
 * Direction: the higher rank connects to the lower one, so two ranks never
 * open two connections to each other and no tie-break is needed. The lower
 * rank only accepts; an accepted connection belongs to nobody until its
 * handshake proves it is the rank it claims.
 *
 * Handshake (message formats in tcp_int.h): HELLO (client nonce) ->
 * CHALLENGE (server nonce + server's proof) -> PROOF (client's proof), each
 * proof a SipHash under the job secret of both nonces, both ranks and the job
 * id. Each side checks the other's proof in constant time. Messages are read
 * exactly (never a byte of what follows), so frames that the client sends
 * right after PROOF stay in the socket for the established connection.
 *
 * Strangers: an accepted connection that sends anything else, a wrong proof,
 * or does not finish within WEFT_TCP_HANDSHAKE_MS is closed with one warning
 * that names its address; at most TCP_MAX_HANDSHAKES plus the job's size
 * accepted connections may be unauthenticated at once (more are closed at
 * once), so a flood of half-open connections cannot eat the process's
 * descriptors. The bound counts accepted connections only, not this rank's
 * own connections to its peers, and leaves room for every peer of the job:
 * at init every rank connects to all the others before any of them polls, so
 * a job of more than 64 ranks has that many real handshakes pending at once.
 * None of this touches the job's tracks. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "drivers/tcp/tcp_int.h"
#include "util/log.h"
#include "util/siphash.h"

static void name_of(const struct sockaddr_storage *ss, char *out, size_t n)
{
    char host[INET6_ADDRSTRLEN] = "?";
    unsigned port = 0;
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *s = (const struct sockaddr_in *)ss;
        inet_ntop(AF_INET, &s->sin_addr, host, sizeof host);
        port = ntohs(s->sin_port);
        snprintf(out, n, "%s:%u", host, port);
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)ss;
        inet_ntop(AF_INET6, &s->sin6_addr, host, sizeof host);
        port = ntohs(s->sin6_port);
        snprintf(out, n, "[%s]:%u", host, port);
    } else {
        snprintf(out, n, "(unknown)");
    }
}

static void nonce(uint8_t *out)
{
    if (getrandom(out, TCP_NONCE_LEN, 0) == TCP_NONCE_LEN)
        return;
    /* No entropy source: still unique per connection, if predictable. */
    uint64_t a = weft__now_ns(), b = (uint64_t)getpid() ^ (uint64_t)(uintptr_t)out;
    memcpy(out, &a, 8);
    memcpy(out + 8, &b, 8);
}

static tcp_conn_t *conn_new(weft_driver_t *d, int fd, int state)
{
    tcp_conn_t *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->fd = fd;
    c->state = state;
    c->driver = d;
    c->deadline_ns = weft__now_ns() + d->hs_timeout_ns;
    weft_list_push_back(&d->handshakes, &c->hs_link);
    d->nhandshakes++;
    return c;
}

void weft__tcp_hs_close(weft_driver_t *d, tcp_conn_t *c)
{
    weft_list_remove(&c->hs_link);
    d->nhandshakes--;
    if (c->accepted)
        d->naccepted--;
    if (c->fd >= 0) {
        epoll_ctl(d->epfd, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
    }
    c->fd = -1;
    if (c->track && c->track->conn == c)
        c->track->conn = NULL;
    c->closed = true;
    c->next_closed = d->hs_closed;
    d->hs_closed = c;
}

void weft__tcp_hs_reap(weft_driver_t *d)
{
    while (d->hs_closed) {
        tcp_conn_t *c = d->hs_closed;
        d->hs_closed = c->next_closed;
        free(c);
    }
}

#define TCP_REFUSE_LINES 10

void weft__tcp_refused(weft_driver_t *d, const char *peer, const char *why)
{
    uint64_t now = weft__now_ns();
    if (!peer || now - d->refuse_window_ns >= 1000000000ull) {
        if (d->refuse_quiet)
            weft_log_warn("tcp: refused %llu more connections from strangers since %.1f s ago "
                          "(at most %d lines a second)",
                          (unsigned long long)d->refuse_quiet,
                          (double)(now - d->refuse_window_ns) / 1e9, TCP_REFUSE_LINES);
        d->refuse_window_ns = now;
        d->refuse_lines = 0;
        d->refuse_quiet = 0;
    }
    if (!peer)
        return;
    if (d->refuse_lines < TCP_REFUSE_LINES) {
        d->refuse_lines++;
        weft_log_warn("tcp: refused a connection from %s: %s", peer, why);
    } else {
        d->refuse_quiet++;
    }
}

/* A connection that failed its handshake. A client connection is one of our
 * tracks: its peer is lost. A server connection is nobody yet: refuse it. */
static void hs_fail(weft_driver_t *d, tcp_conn_t *c, int status, const char *why)
{
    weft_track_t *t = c->track;
    if (t) {
        if (t->link)
            weft_log_error("tcp: cannot link to process %016llx at %s: %s",
                           (unsigned long long)t->link_peer, c->peer_name, why);
        else
            weft_log_error("tcp: cannot connect to rank %d at %s: %s", t->peer_rank, c->peer_name,
                           why);
        weft__tcp_hs_close(d, c);
        weft__tcp_track_lose(d, t, status, why);
        return;
    }
    weft__tcp_refused(d, c->peer_name, why);
    weft__tcp_hs_close(d, c);
}

static int set_events(weft_driver_t *d, tcp_conn_t *c, uint32_t events, int op)
{
    struct epoll_event ev = {.events = events, .data.u64 = tcp_ev_conn(c)};
    return epoll_ctl(d->epfd, op, c->fd, &ev);
}

/* Write the pending handshake message; 1 when all of it is out, 0 when the
 * socket is full, or an error. */
static int hs_flush(tcp_conn_t *c)
{
    while (c->hs_out_done < c->hs_out_len) {
        ssize_t w = send(c->fd, c->hs_out + c->hs_out_done, c->hs_out_len - c->hs_out_done,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            if (errno == EINTR)
                continue;
            return WEFT_EPEERDEAD;
        }
        c->hs_out_done += (size_t)w;
    }
    return 1;
}

/* Read exactly one handshake message of the given type; 1 when complete, 0
 * when more is to come, or an error. */
static int hs_read(tcp_conn_t *c, uint16_t type)
{
    size_t want = weft__tcp_hs_size(type);
    while (c->hs_in_len < want) {
        ssize_t r = recv(c->fd, c->hs_in + c->hs_in_len, want - c->hs_in_len, MSG_DONTWAIT);
        if (r == 0)
            return WEFT_EPEERDEAD;
        if (r < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            if (errno == EINTR)
                continue;
            return WEFT_EPEERDEAD;
        }
        c->hs_in_len += (size_t)r;
    }
    return 1;
}

static void hs_send(tcp_conn_t *c, const tcp_hs_msg_t *m)
{
    c->hs_out_len = weft__tcp_hs_encode(c->hs_out, m);
    c->hs_out_done = 0;
}

/* A handshake message of kind type (HELLO, CHALLENGE or PROOF: a link's
 * LHELLO, LCHAL or LPROOF on a link) naming the two sides of c. */
static tcp_hs_msg_t conn_msg(const weft_driver_t *d, const tcp_conn_t *c, uint16_t type)
{
    tcp_hs_msg_t m = {.type = (uint16_t)(type + (c->link ? TCP_HS_LHELLO - TCP_HS_HELLO : 0))};
    if (c->link) {
        m.client_id = c->client_id;
        m.server_id = c->server_id;
    } else {
        m.client_rank = c->client_rank;
        m.server_rank = c->server_rank;
        m.size = (uint32_t)d->size;
    }
    return m;
}

/* Whether a decoded message names the same two sides as c. */
static bool conn_names(const weft_driver_t *d, const tcp_conn_t *c, const tcp_hs_msg_t *m)
{
    if (c->link)
        return m->client_id == c->client_id && m->server_id == c->server_id;
    return m->client_rank == c->client_rank && m->server_rank == c->server_rank &&
           m->size == (uint32_t)d->size;
}

/* One side's proof on c: the job secret's, or on a link that of the link
 * track t. */
static uint64_t conn_proof(const weft_driver_t *d, const tcp_conn_t *c, const weft_track_t *t,
                           char role, const uint8_t *nc, const uint8_t *ns)
{
    if (c->link)
        return weft__tcp_hs_link_proof(t->link_secret, role, c->client_id, c->server_id, nc, ns);
    return weft__tcp_hs_proof(d->secret, role, c->client_rank, c->server_rank, nc, ns, d->job_id);
}

int weft__tcp_hs_connect(weft_driver_t *d, weft_track_t *t)
{
    struct sockaddr_storage ss;
    socklen_t len = weft__tcp_addr_sockaddr(&t->addr, &ss);
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        weft_log_error("tcp: cannot make a socket to rank %d: %s%s", t->peer_rank, strerror(errno),
                       errno == EMFILE ? " (raise the limit on open files: ulimit -n)" : "");
        return WEFT_ESYS;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    tcp_conn_t *c = conn_new(d, fd, TCP_C_CONNECTING);
    if (!c) {
        close(fd);
        return WEFT_ENOMEM;
    }
    /* Our own deadline is the connect timeout: the server answers once it polls. */
    c->deadline_ns = weft__now_ns() + d->connect_timeout_ns;
    c->track = t;
    c->link = t->link;
    c->client_id = t->link_mine;
    c->server_id = t->link_peer;
    c->client_rank = (uint32_t)d->rank;
    c->server_rank = (uint32_t)t->peer_rank;
    t->conn = c;
    name_of(&ss, c->peer_name, sizeof c->peer_name);
    nonce(c->nonce_mine);
    tcp_hs_msg_t hello = conn_msg(d, c, TCP_HS_HELLO);
    memcpy(hello.nonce, c->nonce_mine, TCP_NONCE_LEN);
    hs_send(c, &hello);
    int rc = connect(fd, (struct sockaddr *)&ss, len);
    if (rc != 0 && errno != EINPROGRESS) {
        weft_log_error("tcp: cannot connect to rank %d at %s: %s", t->peer_rank, c->peer_name,
                       strerror(errno));
        weft__tcp_hs_close(d, c);
        return WEFT_EPEERDEAD;
    }
    if (set_events(d, c, EPOLLOUT | EPOLLIN, EPOLL_CTL_ADD) != 0) {
        weft_log_error("tcp: epoll_ctl for rank %d: %s", t->peer_rank, strerror(errno));
        weft__tcp_hs_close(d, c);
        return WEFT_ESYS;
    }
    return WEFT_OK;
}

void weft__tcp_hs_accept(weft_driver_t *d)
{
    for (int i = 0; i < 16; i++) {
        struct sockaddr_storage ss;
        socklen_t len = sizeof ss;
        int fd = accept4(d->listen_fd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        char name[64];
        name_of(&ss, name, sizeof name);
        if (d->naccepted >= TCP_MAX_HANDSHAKES + d->size) {
            weft__tcp_refused(d, name, "too many unfinished handshakes");
            close(fd);
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        tcp_conn_t *c = conn_new(d, fd, TCP_C_WAIT_HELLO);
        if (!c) {
            close(fd);
            continue;
        }
        c->accepted = true;
        d->naccepted++;
        snprintf(c->peer_name, sizeof c->peer_name, "%s", name);
        if (set_events(d, c, EPOLLIN, EPOLL_CTL_ADD) != 0) {
            weft__tcp_hs_close(d, c);
            continue;
        }
        /* The HELLO is usually there already. */
        weft__tcp_hs_event(d, c, EPOLLIN);
    }
}

/* Client: the connection is up; frames may follow our PROOF at once. */
static void client_up(weft_driver_t *d, tcp_conn_t *c)
{
    weft_track_t *t = c->track;
    int fd = c->fd;
    epoll_ctl(d->epfd, EPOLL_CTL_DEL, fd, NULL);
    c->fd = -1;
    weft__tcp_hs_close(d, c);
    if (weft__tcp_track_up(d, t, fd) != WEFT_OK) {
        close(fd);
        weft__tcp_track_lose(d, t, WEFT_EPEERDEAD, "cannot register the connection");
    }
}

static void client_step(weft_driver_t *d, tcp_conn_t *c, uint32_t events)
{
    int rc;
    if (c->state == TCP_C_CONNECTING) {
        if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
            return;
        int err = 0;
        socklen_t l = sizeof err;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &l);
        if (err) {
            hs_fail(d, c, WEFT_EPEERDEAD, strerror(err));
            return;
        }
        c->state = TCP_C_HELLO_SENT;
    }
    if ((rc = hs_flush(c)) < 0) {
        hs_fail(d, c, rc, "connection lost during the handshake");
        return;
    }
    if (rc == 1)
        set_events(d, c, EPOLLIN, EPOLL_CTL_MOD);
    if (c->state == TCP_C_HELLO_SENT && c->hs_out_done == c->hs_out_len) {
        if ((rc = hs_read(c, TCP_HS_CHALLENGE)) <= 0) {
            if (rc < 0)
                hs_fail(d, c, rc, "connection closed by the peer during the handshake");
            return;
        }
        tcp_hs_msg_t m;
        if (weft__tcp_hs_decode(c->hs_in, c->hs_in_len, conn_msg(d, c, TCP_HS_CHALLENGE).type,
                                &m) != WEFT_OK ||
            !conn_names(d, c, &m)) {
            hs_fail(d, c, WEFT_EPROTO, "malformed handshake answer");
            return;
        }
        memcpy(c->nonce_peer, m.nonce, TCP_NONCE_LEN);
        uint8_t want[8], got[8];
        tcp_le64_put(want, conn_proof(d, c, c->track, 'S', c->nonce_mine, c->nonce_peer));
        tcp_le64_put(got, m.proof);
        if (weft__memcmp_ct(want, got, sizeof want) != 0) {
            hs_fail(d, c, WEFT_EPROTO,
                    c->link ? "the peer does not know the link's secret"
                            : "the peer does not know the job secret");
            return;
        }
        tcp_hs_msg_t proof = conn_msg(d, c, TCP_HS_PROOF);
        proof.proof = conn_proof(d, c, c->track, 'C', c->nonce_mine, c->nonce_peer);
        hs_send(c, &proof);
        if ((rc = hs_flush(c)) < 0) {
            hs_fail(d, c, rc, "connection lost during the handshake");
            return;
        }
        if (rc == 0) {
            /* 32 bytes on a fresh socket: the rest goes first in the queue. */
            tcp_txop_t *op = calloc(1, sizeof *op);
            if (!op) {
                hs_fail(d, c, WEFT_ENOMEM, "out of memory");
                return;
            }
            op->heap = true;
            op->hdr_len = c->hs_out_len - c->hs_out_done;
            memcpy(op->hdr, c->hs_out + c->hs_out_done, op->hdr_len);
            weft_track_t *t = c->track;
            weft_list_push_back(&t->txq, &op->link);
            op->iov_i = -1;
            op->left = op->hdr_len;
        }
        client_up(d, c);
    }
}

/* The link track an LHELLO names: ours to the client's id, not up yet. */
static weft_track_t *link_named(weft_driver_t *d, const tcp_hs_msg_t *m)
{
    weft_list_t *pos, *tmp;
    weft_list_for_each_safe(pos, tmp, &d->links)
    {
        weft_track_t *t = weft_list_entry(pos, weft_track_t, link_node);
        if (t->link_peer == m->client_id && t->link_mine == m->server_id)
            return t;
    }
    return NULL;
}

/* Server: the HELLO (or a link's LHELLO) is in hs_in; answer with a
 * CHALLENGE. false when the connection was failed or parked. */
static bool server_hello(weft_driver_t *d, tcp_conn_t *c)
{
    tcp_hs_msg_t m;
    uint16_t type = tcp_le16_get(c->hs_in + 6) == TCP_HS_LHELLO ? TCP_HS_LHELLO : TCP_HS_HELLO;
    if (weft__tcp_hs_decode(c->hs_in, c->hs_in_len, type, &m) != WEFT_OK) {
        hs_fail(d, c, WEFT_EPROTO, "not a weft tcp handshake");
        return false;
    }
    weft_track_t *t = NULL;
    if (type == TCP_HS_LHELLO) {
        if (!(t = link_named(d, &m))) {
            /* Its job learned of the link before ours did: wait for link(),
             * as long as a client waits for a server that has yet to poll. */
            if (!c->parked)
                c->deadline_ns = weft__now_ns() + d->connect_timeout_ns;
            c->parked = true;
            set_events(d, c, 0, EPOLL_CTL_MOD);
            return false;
        }
        c->link = true;
        c->link_track = t;
        c->client_id = m.client_id;
        c->server_id = m.server_id;
    } else {
        if (m.server_rank != (uint32_t)d->rank || m.size != (uint32_t)d->size ||
            !d->tracks[m.client_rank]) {
            hs_fail(d, c, WEFT_EPROTO, "handshake names another job or rank");
            return false;
        }
        /* Whether that rank is connected already is checked only once the
         * proof is in: an unproven HELLO learns nothing about the job. */
        c->client_rank = m.client_rank;
        c->server_rank = m.server_rank;
    }
    c->parked = false;
    memcpy(c->nonce_peer, m.nonce, TCP_NONCE_LEN);
    nonce(c->nonce_mine);
    tcp_hs_msg_t chal = conn_msg(d, c, TCP_HS_CHALLENGE);
    memcpy(chal.nonce, c->nonce_mine, TCP_NONCE_LEN);
    chal.proof = conn_proof(d, c, t, 'S', c->nonce_peer, c->nonce_mine);
    hs_send(c, &chal);
    c->hs_in_len = 0;
    c->state = TCP_C_WAIT_PROOF;
    return true;
}

static void server_step(weft_driver_t *d, tcp_conn_t *c, uint32_t events)
{
    int rc;
    if (c->state == TCP_C_WAIT_HELLO) {
        if ((rc = hs_read(c, TCP_HS_HELLO)) <= 0) {
            if (rc < 0)
                hs_fail(d, c, rc, "closed before its handshake ended");
            return;
        }
        if (!server_hello(d, c))
            return;
    }
    if ((rc = hs_flush(c)) < 0) {
        hs_fail(d, c, rc, "closed before its handshake ended");
        return;
    }
    set_events(d, c, rc == 1 ? EPOLLIN : EPOLLIN | EPOLLOUT, EPOLL_CTL_MOD);
    if (rc == 0)
        return;
    if ((rc = hs_read(c, TCP_HS_PROOF)) <= 0) {
        if (rc < 0)
            hs_fail(d, c, rc, "closed before its handshake ended");
        return;
    }
    tcp_hs_msg_t m;
    if (weft__tcp_hs_decode(c->hs_in, c->hs_in_len, conn_msg(d, c, TCP_HS_PROOF).type, &m) !=
            WEFT_OK ||
        !conn_names(d, c, &m)) {
        hs_fail(d, c, WEFT_EPROTO, "malformed handshake proof");
        return;
    }
    weft_track_t *t = c->link ? c->link_track : d->tracks[c->client_rank];
    uint8_t want[8], got[8];
    tcp_le64_put(want, conn_proof(d, c, t, 'C', c->nonce_peer, c->nonce_mine));
    tcp_le64_put(got, m.proof);
    if (weft__memcmp_ct(want, got, sizeof want) != 0) {
        hs_fail(d, c, WEFT_EPROTO,
                c->link ? "wrong proof of the link's secret" : "wrong proof of the job secret");
        return;
    }
    if (t->up || t->lost) {
        hs_fail(d, c, WEFT_EPROTO, "that rank is connected already");
        return;
    }
    int fd = c->fd;
    epoll_ctl(d->epfd, EPOLL_CTL_DEL, fd, NULL);
    c->fd = -1;
    weft__tcp_hs_close(d, c);
    if (weft__tcp_track_up(d, t, fd) != WEFT_OK) {
        close(fd);
        weft__tcp_track_lose(d, t, WEFT_EPEERDEAD, "cannot register the connection");
    }
}

void weft__tcp_hs_unpark(weft_driver_t *d)
{
    weft_list_t *pos, *tmp;
    weft_list_for_each_safe(pos, tmp, &d->handshakes)
    {
        tcp_conn_t *c = weft_list_entry(pos, tcp_conn_t, hs_link);
        if (c->parked && !c->closed) {
            c->parked = false;
            server_step(d, c, EPOLLIN);
        }
    }
}

void weft__tcp_hs_event(weft_driver_t *d, tcp_conn_t *c, uint32_t events)
{
    if (c->closed)
        return; /* closed earlier in this poll pass */
    if (c->track)
        client_step(d, c, events);
    else
        server_step(d, c, events);
}

void weft__tcp_hs_expire(weft_driver_t *d, uint64_t now)
{
    weft_list_t *pos, *tmp;
    weft_list_for_each_safe(pos, tmp, &d->handshakes)
    {
        tcp_conn_t *c = weft_list_entry(pos, tcp_conn_t, hs_link);
        if (now >= c->deadline_ns)
            hs_fail(d, c, WEFT_ETIMEDOUT, "handshake timed out");
    }
}
