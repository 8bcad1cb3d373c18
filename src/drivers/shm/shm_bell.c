/* Doorbells of the shm driver: a progress thread, or a waiter under
 * WEFT_WAIT=block or fixed_spin, may sleep while the rings are quiet, and a
 * peer that gives it work wakes it.
 *
 * A ring is plain memory: a record shows only to a poll that looks. So a
 * process whose engine sleeps on doorbells (weft_driver_params_t.doorbell)
 * binds a datagram socket to an autobound abstract address (no file, gone
 * with the process) and names it in its segment's header; its wait_fd is an
 * epoll instance holding that socket and its peers' pidfds (a peer's death
 * wakes it too). Before each sleep it stores 1 in its asleep word (line 0 of
 * its segment's bell region, the one part peers map writable),
 * then looks at every ring once more. A writer stores its record, then looks
 * at the reader's asleep word, and if it reads 1 takes it back to 0 (one
 * exchange: one ring per sleep) and sends one byte to the socket. Both
 * sides' store and look are sequentially consistent (Dekker): either the
 * sleeper sees the record, or the writer sees the word.
 *
 * A thread that polls while the sleeper sleeps takes the asleep word
 * back to 0 itself (weft__shm_bell_disarm): it will see the records, and a
 * ring would only wake a thread to preempt it (a wake and a system call per
 * message where the application waits in the library). That thread may
 * leave the library before the next record, so disarming also starts a
 * one-shot timer in the epoll instance: the sleeper wakes SHM_BELL_REARM_NS
 * later and arms again. Work that arrives after the last poll of an
 * application thread thus waits at most that long for the sleeper;
 * while application threads keep polling, the sleeper wakes once per
 * period; a rank where nobody polls is never woken but by work.
 *
 * Room works the same way in the other direction: a writer whose packet did
 * not fit (blocked_at; weft__shm_bell_full at once, and its sleeper again
 * before each sleep) sets the ring's want_room in the reader's bell region,
 * then looks at the tail again; the reader publishes its tail, then looks at
 * want_room, and rings the writer's doorbell.
 *
 * Costs: nothing for peers without a doorbell (one predictable branch per
 * send and per batch read); with one, a sequentially consistent store (a
 * full barrier on x86) per send and per batch read,
 * and a system call per sleep that a peer interrupts. The socket is reachable
 * only from the same network namespace: a peer in another (ranks that share
 * a node by WEFT_NODE_ID, not by namespace) turns both sides' doorbells off,
 * and their threads poll as before. */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include "drivers/shm/shm_int.h"
#include "drivers/shm/shm_ring.h"
#include "util/log.h"

static uint64_t netns_id(void)
{
    struct stat st;
    if (stat("/proc/self/ns/net", &st) != 0)
        return 0;
    return ((uint64_t)st.st_dev << 32) ^ (uint64_t)st.st_ino;
}

/* The socket that rings doorbells (ours too, weft__shm_bell_full). */
static int ring_socket(weft_driver_t *d)
{
    if (d->ring_fd < 0) {
        d->ring_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (d->ring_fd < 0) {
            weft_log_warn("shm: cannot make the socket that rings doorbells: %s", strerror(errno));
            return WEFT_ESYS;
        }
    }
    return WEFT_OK;
}

/* One byte to a doorbell whose asleep word we took from 1 to 0. A full
 * queue already rings; other errors (a peer gone is the liveness check's)
 * are told once. */
static void ring_at(weft_driver_t *d, const struct sockaddr_un *to, socklen_t len)
{
    static atomic_int told;
    char b = 1;
    if (sendto(d->ring_fd, &b, 1, MSG_DONTWAIT | MSG_NOSIGNAL, (const struct sockaddr *)to, len) <
            0 &&
        errno != EAGAIN && errno != ECONNREFUSED && !atomic_exchange(&told, 1))
        weft_log_info("shm: ringing a doorbell: %s", strerror(errno));
}

/* At init, before the header is published: the doorbell, where the engine
 * will sleep on one and the socket can be made. Without it, nothing: the
 * header says bell_len 0 and wait_fd answers POLL. */
void weft__shm_bell_open(weft_driver_t *d, shm_seg_hdr_t *h, shm_bell_line_t *bells)
{
    d->bell_fd = d->bell_ep = d->ring_fd = d->bell_timer = -1;
    h->netns = netns_id();
    if (!d->doorbell)
        return;
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    socklen_t len = sizeof sa;
    /* An address of the family alone: the kernel picks a free abstract name. */
    errno = 0;
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa_family_t)) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0 ||
        len <= offsetof(struct sockaddr_un, sun_path) ||
        len - offsetof(struct sockaddr_un, sun_path) > SHM_BELL_NAME || ring_socket(d) != WEFT_OK) {
        weft_log_info("shm: no doorbell (%s): waiting threads will poll",
                      errno ? strerror(errno) : "unexpected socket name");
        if (fd >= 0)
            close(fd);
        return;
    }
    int ep = epoll_create1(EPOLL_CLOEXEC);
    int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
    struct epoll_event tev = {.events = EPOLLIN, .data.fd = tfd};
    if (ep < 0 || tfd < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0 ||
        epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &tev) != 0) {
        weft_log_info("shm: no doorbell (epoll, timerfd: %s): waiting threads will poll",
                      strerror(errno));
        if (ep >= 0)
            close(ep);
        if (tfd >= 0)
            close(tfd);
        close(fd);
        return;
    }
    d->bell_fd = fd;
    d->bell_ep = ep;
    d->bell_timer = tfd;
    d->bell_addr = sa;
    d->bell_addr_len = len;
    h->bell_len = (uint32_t)(len - offsetof(struct sockaddr_un, sun_path));
    memcpy(h->bell_name, sa.sun_path, h->bell_len);
    d->asleep = &bells[0].word;
}

/* At connect, with the peer's header mapped: whether we ring its doorbell,
 * and its pidfd into our epoll instance. */
int weft__shm_bell_connect(weft_driver_t *d, weft_track_t *t, const shm_seg_hdr_t *peer)
{
    const shm_seg_hdr_t *mine = d->seg;
    if (peer->netns != mine->netns) {
        if (d->bell_fd >= 0 || peer->bell_len)
            weft_log_info("shm: rank %d is in another network namespace: no doorbells between us",
                          t->peer_rank);
        d->bell_off = true;
        return WEFT_OK;
    }
    if (d->bell_ep >= 0 && t->pidfd >= 0) {
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = t->pidfd};
        if (epoll_ctl(d->bell_ep, EPOLL_CTL_ADD, t->pidfd, &ev) != 0) {
            weft_log_warn("shm: epoll_ctl: %s", strerror(errno));
            return WEFT_ESYS;
        }
    }
    /* Shared memory the peer may write at any time: read the length once. */
    uint32_t len = *(const volatile uint32_t *)&peer->bell_len;
    if (!len)
        return WEFT_OK;
    if (len > SHM_BELL_NAME) {
        weft_log_warn("shm: rank %d names a malformed doorbell", t->peer_rank);
        return WEFT_EPROTO;
    }
    int rc = ring_socket(d);
    if (rc != WEFT_OK)
        return rc;
    t->peer_bell.sun_family = AF_UNIX;
    memcpy(t->peer_bell.sun_path, peer->bell_name, len);
    if (t->peer_bell.sun_path[0] != 0) { /* abstract names only: no file is rung */
        weft_log_warn("shm: rank %d names a malformed doorbell", t->peer_rank);
        return WEFT_EPROTO;
    }
    t->peer_bell_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
    t->peer_asleep = &t->peer_bells[0].word;
    return WEFT_OK;
}

/* The peer is lost or leaves: its pidfd out of our epoll instance (it stays
 * readable once the peer has exited). peer_asleep stays: senders on other
 * threads may read it until the track is gone, and its mapping lasts as
 * long; a ring of a dead peer's doorbell is lost harmlessly. */
void weft__shm_bell_forget(weft_driver_t *d, weft_track_t *t)
{
    if (d->bell_ep >= 0 && t->pidfd >= 0)
        epoll_ctl(d->bell_ep, EPOLL_CTL_DEL, t->pidfd, NULL);
}

/* The peer's asleep word read 1: take it back and ring. */
void weft__shm_bell_ring(weft_track_t *t)
{
    if (atomic_exchange_explicit(t->peer_asleep, 0, memory_order_seq_cst))
        ring_at(t->driver, &t->peer_bell, t->peer_bell_len);
}

/* A send of ours found t's ring full while our doorbell is in use: the
 * sleeper's half of the room handshake, done by the sender, which may be an
 * application thread that returns to compute while a sleeper of ours armed
 * before the ring filled. Ask the reader for room, then look at the tail:
 * either the reader sees want_room and rings us, or we see room it freed and
 * ring our own doorbell if somebody sleeps on it. */
void weft__shm_bell_full(weft_track_t *t)
{
    weft_driver_t *d = t->driver;
    uint64_t seen = t->tx_tail_cache;
    atomic_store_explicit(&t->blocked_at, seen + 1, memory_order_relaxed);
    atomic_store_explicit(t->tx_want, 1, memory_order_seq_cst);
    if (atomic_load_explicit(t->tx_tail, memory_order_seq_cst) != seen &&
        atomic_exchange_explicit(d->asleep, 0, memory_order_seq_cst))
        ring_at(d, &d->bell_addr, d->bell_addr_len);
}

/* A poll while the sleeper sleeps (shm_bell_disarm saw the word at
 * 1): take the word back, so writers stop ringing, and have the sleeper
 * wake SHM_BELL_REARM_NS later to arm it again. */
void weft__shm_bell_disarm(weft_driver_t *d)
{
    if (!atomic_exchange_explicit(d->asleep, 0, memory_order_relaxed))
        return;
    /* The sleeper itself, awake (a timeout, a kick): it arms again before
     * its next sleep. */
    if (pthread_equal(pthread_self(), d->sleeper))
        return;
    struct itimerspec its = {.it_value = {.tv_nsec = SHM_BELL_REARM_NS}};
    (void)timerfd_settime(d->bell_timer, 0, &its, NULL);
}

/* Whether a record waits in t's ring. */
static bool record_waits(const weft_track_t *t)
{
    const shm_slot_t *s = &t->rx_slots[t->rx_head & t->rx_mask];
    return atomic_load_explicit(&s->flag, memory_order_seq_cst) == shm_ring_flag(t->rx_head);
}

/* Whether the reader freed room since our packet did not fit; also forgets
 * the packet then (a send that fails again marks it anew). */
static bool room_came(weft_track_t *t)
{
    uint64_t at = atomic_load_explicit(&t->blocked_at, memory_order_relaxed);
    if (!at || atomic_load_explicit(t->tx_tail, memory_order_seq_cst) == at - 1)
        return false;
    atomic_store_explicit(&t->blocked_at, 0, memory_order_relaxed);
    return true;
}

int weft__shm_bell_wait_fd(weft_driver_t *d)
{
    if (!d->nactive)
        return WEFT_DRV_WAIT_IDLE;
    if (d->bell_ep < 0 || d->bell_off)
        return WEFT_DRV_WAIT_POLL;
    /* What rang since the last sleep (one system call when nothing did):
     * rings and the timer are drained, a peer's pidfd (it died) has the
     * liveness check run at the next poll. */
    struct epoll_event ev[8];
    int k = epoll_wait(d->bell_ep, ev, 8, 0);
    bool died = false;
    for (int i = 0; i < k; i++) {
        if (ev[i].data.fd == d->bell_fd) {
            /* Bounded: anyone in the network namespace may send to the
             * socket. What is left only ends the next sleep early. */
            char junk[64];
            for (int n = 0; n < 64 && recv(d->bell_fd, junk, sizeof junk, MSG_DONTWAIT) > 0; n++)
                ;
        } else if (ev[i].data.fd == d->bell_timer) {
            uint64_t expired;
            (void)read(d->bell_timer, &expired, sizeof expired);
        } else {
            died = true;
        }
    }
    if (died) {
        d->next_check_ns = 0;
        d->polls = SHM_CHECK_EVERY - 1;
        return WEFT_DRV_WAIT_BUSY;
    }
    for (int i = 0; i < d->nactive; i++) {
        weft_track_t *t = d->active[i];
        if (atomic_load_explicit(&t->blocked_at, memory_order_relaxed))
            atomic_store_explicit(t->tx_want, 1, memory_order_seq_cst);
    }
    d->sleeper = pthread_self();
    atomic_store_explicit(d->asleep, 1, memory_order_seq_cst);
    for (int i = 0; i < d->nactive; i++) {
        weft_track_t *t = d->active[i];
        if (record_waits(t) || room_came(t)) {
            atomic_store_explicit(d->asleep, 0, memory_order_relaxed);
            return WEFT_DRV_WAIT_BUSY;
        }
    }
    return d->bell_ep;
}

void weft__shm_bell_close(weft_driver_t *d)
{
    if (d->bell_ep >= 0)
        close(d->bell_ep);
    if (d->bell_fd >= 0)
        close(d->bell_fd);
    if (d->ring_fd >= 0)
        close(d->ring_fd);
    if (d->bell_timer >= 0)
        close(d->bell_timer);
    d->bell_ep = d->bell_fd = d->ring_fd = d->bell_timer = -1;
}
