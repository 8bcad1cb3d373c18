/* The fake driver the in-process engine tests share (test_sched.c,
 * test_coop.c): the real engine code, two contexts (rank 0 and rank 1 of a
 * two-rank job) joined by fake tracks that a test makes idle, busy (send in
 * progress until the test completes it), slow (completed at the next poll),
 * full (WEFT_EAGAIN) or flaky (any of those at random). Every packet a track
 * takes is logged. Its single-copy calls copy between the two contexts'
 * exposed regions (rget can be refused or left in progress, a share of rput
 * refused); with WEFT_DRV_CAP_CELLS the tracks share cells (coop.c).
 * Everything here is static: each test program has its own pair. */
#ifndef WEFT_TESTS_FAKE_DRIVER_H
#define WEFT_TESTS_FAKE_DRIVER_H

#include "../common/test_util.h"
#include "core/core_int.h"
#include "core/wire.h"

/* ---- the fake driver ---------------------------------------------------- */

enum { FAKE_IDLE, FAKE_BUSY, FAKE_SLOW, FAKE_FULL, FAKE_FLAKY };

#define FAKE_MAX_LOG 100000
#define FAKE_REGIONS 256

typedef struct fake_pkt {
    uint8_t *data;
    size_t len;
    int from;              /* the sender's rank */
    struct fake_pkt *next; /* in the receiver's inbox */
} fake_pkt_t;

struct weft_track {
    struct weft_driver *d;
    int peer;
    void *cookie;
    int mode;
    /* The packet in progress: its iovec (gathered again at completion, to
     * check the engine left its buffers untouched) and its bytes at send. */
    bool inflight;
    void *inflight_cookie;
    struct iovec inflight_iov[WEFT_PKT_MAX_IOV + 1];
    int inflight_iovcnt;
    fake_pkt_t *inflight_pkt;
    /* Every packet the track took, in order. */
    fake_pkt_t **log;
    int nlog;
    int refused;
    bool doomed, lost; /* shut down by the engine (reported at the next poll); reported lost */
};

typedef struct fake_region {
    const uint8_t *buf;
    size_t len;
    bool used;
} fake_region_t;

typedef struct fake_rget_op {
    struct weft_track *t;
    struct iovec local;
    const uint8_t *src;
    void *cookie;
} fake_rget_op_t;

enum { RGET_NOW, RGET_LATER, RGET_REFUSE };

struct weft_driver {
    weft_driver_upcalls_t up;
    int rank, size, instance;
    int rget_mode;         /* RGET_* */
    fake_rget_op_t ops[8]; /* rgets in progress (RGET_LATER) */
    int nops;
    uint64_t rget_len[16]; /* length of each rget asked of this instance */
    int nrget;
    uint64_t nrput; /* rput calls */
    struct weft_track *tracks;
    fake_pkt_t *inbox, **inbox_tail;
    fake_region_t regions[FAKE_REGIONS];
};

static struct {
    struct weft_driver *drv[2];
    struct weft_driver *rail[2]; /* instance 1 of each rank (rails) */
    uint32_t caps;
    size_t max_packet;
    int max_iov;
    uint64_t rng;
    /* rput calls refused (WEFT_EPERM, nothing written), in percent, per rank. */
    int rput_refuse[2];
    /* With WEFT_DRV_CAP_CELLS: cells[r] is rank r's block for traffic from the
     * other rank, which both contexts use (coop.c). */
    _Alignas(64) uint8_t cells[2][WEFT_DRV_CELL_BYTES];
} fake = {.max_packet = 8192, .max_iov = 64};

static inline uint64_t rnd(void)
{
    fake.rng ^= fake.rng << 13;
    fake.rng ^= fake.rng >> 7;
    fake.rng ^= fake.rng << 17;
    return fake.rng;
}

static inline int fake_init(const weft_driver_params_t *params, const weft_driver_upcalls_t *up,
                            weft_driver_t **out)
{
    struct weft_driver *d = calloc(1, sizeof *d);
    d->up = *up;
    d->rank = params->rank;
    d->size = params->size;
    d->tracks = calloc((size_t)params->size, sizeof *d->tracks);
    d->inbox_tail = &d->inbox;
    d->instance = params->instance;
    if (params->instance)
        fake.rail[params->rank] = d;
    else
        fake.drv[params->rank] = d;
    *out = d;
    return WEFT_OK;
}

static inline int fake_address(weft_driver_t *d, void *buf, size_t *len)
{
    *len = 0;
    return WEFT_OK;
}

static inline int fake_connect(weft_driver_t *d, int peer, const void *addr, size_t addrlen,
                               void *cookie, weft_track_t **track_out, weft_track_caps_t *caps)
{
    struct weft_track *t = &d->tracks[peer];
    t->d = d;
    t->peer = peer;
    t->cookie = cookie;
    t->log = calloc(FAKE_MAX_LOG, sizeof *t->log);
    caps->flags = fake.caps;
    caps->max_packet = fake.max_packet;
    caps->max_iov = fake.max_iov;
    caps->rdv_threshold = 1024;
    caps->latency_us = 1;
    caps->bandwidth_mbs = 1000;
    *track_out = t;
    return WEFT_OK;
}

static inline int fake_connected(weft_driver_t *d)
{
    return WEFT_OK;
}

static inline fake_pkt_t *gather(const struct iovec *iov, int iovcnt)
{
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    fake_pkt_t *p = calloc(1, sizeof *p);
    p->data = malloc(len ? len : 1);
    p->len = len;
    size_t off = 0;
    for (int i = 0; i < iovcnt; i++) {
        memcpy(p->data + off, iov[i].iov_base, iov[i].iov_len);
        off += iov[i].iov_len;
    }
    return p;
}

/* The packet left the track: log it and put a copy in the peer's inbox. */
static inline void take(struct weft_track *t, fake_pkt_t *p)
{
    CHECK(t->nlog < FAKE_MAX_LOG);
    if (t->nlog < FAKE_MAX_LOG)
        t->log[t->nlog++] = p;
    struct weft_driver *peer = fake.drv[t->peer];
    if (!peer)
        return;
    fake_pkt_t *q = calloc(1, sizeof *q);
    q->data = malloc(p->len);
    memcpy(q->data, p->data, p->len);
    q->len = p->len;
    q->from = t->d->rank;
    *peer->inbox_tail = q;
    peer->inbox_tail = &q->next;
}

static inline int fake_send(weft_track_t *t, const struct iovec *iov, int iovcnt, void *cookie)
{
    CHECK(!t->inflight); /* one packet in flight per track: the engine's rule */
    CHECK(iovcnt <= fake.max_iov);
    int mode = t->mode;
    if (mode == FAKE_FLAKY) {
        uint64_t r = rnd() % 4;
        mode = r == 0 ? FAKE_FULL : r == 1 ? FAKE_SLOW : FAKE_IDLE;
    }
    if (mode == FAKE_FULL) {
        t->refused++;
        return WEFT_EAGAIN;
    }
    fake_pkt_t *p = gather(iov, iovcnt);
    CHECK(p->len <= fake.max_packet);
    if (mode == FAKE_IDLE) {
        take(t, p);
        return WEFT_OK;
    }
    t->inflight = true;
    t->inflight_cookie = cookie;
    memcpy(t->inflight_iov, iov, sizeof *iov * (size_t)iovcnt);
    t->inflight_iovcnt = iovcnt;
    t->inflight_pkt = p;
    return WEFT_INPROGRESS;
}

/* Finish the send in progress on t (the test's "the NIC is done"). */
static inline void fake_complete(struct weft_track *t)
{
    if (!t->inflight)
        return;
    fake_pkt_t *again = gather(t->inflight_iov, t->inflight_iovcnt);
    CHECK(again->len == t->inflight_pkt->len &&
          !memcmp(again->data, t->inflight_pkt->data, again->len));
    free(again->data);
    free(again);
    take(t, t->inflight_pkt);
    t->inflight = false;
    t->inflight_pkt = NULL;
    t->d->up.send_done(t->d->up.owner, t->cookie, t->inflight_cookie, WEFT_OK);
}

/* Finish the rgets in progress on d (the data is copied on success), then,
 * if lost, report the peer lost on each of d's tracks. */
static inline void fake_rget_finish(struct weft_driver *d, int status, bool lost)
{
    int n = d->nops;
    d->nops = 0;
    for (int i = 0; i < n; i++) {
        fake_rget_op_t *op = &d->ops[i];
        if (status == WEFT_OK)
            memcpy(op->local.iov_base, op->src, op->local.iov_len);
        d->up.rget_done(d->up.owner, op->t->cookie, op->cookie, status);
    }
    if (lost) {
        d->tracks[1 - d->rank].lost = true;
        d->up.peer_lost(d->up.owner, d->tracks[1 - d->rank].cookie, WEFT_EPEERDEAD);
    }
}

static inline int fake_poll(weft_driver_t *d)
{
    int n = 0;
    for (int r = 0; r < d->size; r++) {
        struct weft_track *t = &d->tracks[r];
        if (t->doomed && !t->lost) {
            /* As tcp after shutdown: what is in flight fails, then the loss. */
            if (t->inflight) {
                t->inflight = false;
                d->up.send_done(d->up.owner, t->cookie, t->inflight_cookie, WEFT_EPEERDEAD);
            }
            fake_rget_finish(d, WEFT_EPEERDEAD, true);
            return n + 1;
        }
        if (t->inflight && (t->mode == FAKE_SLOW || t->mode == FAKE_FLAKY)) {
            fake_complete(t);
            n++;
        }
    }
    /* Deliver what arrived before this poll (answers wait for the next). */
    fake_pkt_t *p = d->inbox;
    d->inbox = NULL;
    d->inbox_tail = &d->inbox;
    while (p) {
        fake_pkt_t *next = p->next;
        int rc = d->up.packet(d->up.owner, d->tracks[p->from].cookie, p->data, p->len);
        CHECK(rc == WEFT_OK);
        if (rc != WEFT_OK && getenv("FAKE_DEBUG")) {
            weft__wire_iter_t it;
            weft__wire_chunk_t c;
            int o = weft__wire_open(p->data, p->len, &it), k;
            fprintf(stderr, "open %d remaining %u\n", o, it.remaining);
            while ((k = weft__wire_next(&it, &c)) == 1)
                fprintf(stderr, " kind %d seq %u rreq %llx len %llu off %llu\n", c.kind, c.seq,
                        (unsigned long long)c.rreq, (unsigned long long)c.len,
                        (unsigned long long)c.offset);
            fprintf(stderr, " end %d\n", k);
        }
        free(p->data);
        free(p);
        p = next;
        n++;
    }
    return n;
}

static inline int fake_expose(weft_driver_t *d, const void *buf, size_t len, weft_rkey_t *rkey)
{
    for (uint32_t i = 0; i < FAKE_REGIONS; i++) {
        if (!d->regions[i].used) {
            d->regions[i] = (fake_region_t){.buf = buf, .len = len, .used = true};
            rkey->len = 4;
            memcpy(rkey->bytes, &i, 4);
            return WEFT_OK;
        }
    }
    return WEFT_ENOMEM;
}

static inline void fake_unexpose(weft_driver_t *d, const weft_rkey_t *rkey)
{
    uint32_t i;
    memcpy(&i, rkey->bytes, 4);
    if (i < FAKE_REGIONS)
        d->regions[i].used = false;
}

static inline fake_region_t *peer_region(weft_track_t *t, const weft_rkey_t *rkey, uint64_t off,
                                         size_t len)
{
    uint32_t i;
    memcpy(&i, rkey->bytes, 4);
    struct weft_driver *peer = t->d->instance ? fake.rail[t->peer] : fake.drv[t->peer];
    CHECK(rkey->len == 4 && i < FAKE_REGIONS && peer->regions[i].used);
    fake_region_t *r = &peer->regions[i];
    CHECK(off <= r->len && len <= r->len - off);
    return r;
}

/* Copy len bytes between the local iovec and the peer's region at remote:
 * into the iovec (rget) or out of it (rput). */
static inline void fake_copy(const struct iovec *local, int iovcnt, uint8_t *remote, size_t len,
                             bool to_local)
{
    for (int i = 0; i < iovcnt && len; i++) {
        size_t n = WEFT_MIN(local[i].iov_len, len);
        if (to_local)
            memcpy(local[i].iov_base, remote, n);
        else
            memcpy(remote, local[i].iov_base, n);
        remote += n;
        len -= n;
    }
}

static inline int fake_rget(weft_track_t *t, const struct iovec *local, int iovcnt,
                            const weft_rkey_t *rkey, uint64_t offset, size_t len, void *cookie)
{
    struct weft_driver *d = t->d;
    if (d->nrget < 16)
        d->rget_len[d->nrget++] = len;
    if (d->rget_mode == RGET_REFUSE)
        return WEFT_EPERM;
    fake_region_t *r = peer_region(t, rkey, offset, len);
    uint8_t *src = (uint8_t *)r->buf + offset;
    if (d->rget_mode == RGET_LATER) {
        CHECK(iovcnt == 1 && d->nops < 8);
        d->ops[d->nops++] =
            (fake_rget_op_t){.t = t, .local = local[0], .src = src, .cookie = cookie};
        return WEFT_INPROGRESS;
    }
    fake_copy(local, iovcnt, src, len, true);
    return WEFT_OK;
}

static inline int fake_rput(weft_track_t *t, const struct iovec *local, int iovcnt,
                            const weft_rkey_t *rkey, uint64_t offset, size_t len, void *cookie)
{
    t->d->nrput++;
    if (fake.rput_refuse[t->d->rank] && (int)(rnd() % 100) < fake.rput_refuse[t->d->rank])
        return WEFT_EPERM;
    fake_region_t *r = peer_region(t, rkey, offset, len);
    fake_copy(local, iovcnt, (uint8_t *)r->buf + offset, len, false);
    return WEFT_OK;
}

static inline void *fake_cells(weft_track_t *t, bool mine)
{
    return fake.cells[mine ? t->d->rank : t->peer];
}

static inline void fake_disconnect(weft_track_t *t)
{
    for (int i = 0; i < t->nlog; i++) {
        free(t->log[i]->data);
        free(t->log[i]);
    }
    free(t->log);
    if (t->inflight_pkt) {
        free(t->inflight_pkt->data);
        free(t->inflight_pkt);
    }
}

static inline void fake_shutdown(weft_track_t *t)
{
    t->doomed = true;
}

static inline void fake_fini(weft_driver_t *d)
{
    while (d->inbox) {
        fake_pkt_t *p = d->inbox;
        d->inbox = p->next;
        free(p->data);
        free(p);
    }
    if (fake.drv[d->rank] == d)
        fake.drv[d->rank] = NULL;
    if (fake.rail[d->rank] == d)
        fake.rail[d->rank] = NULL;
    free(d->tracks);
    free(d);
}

static const weft_driver_ops_t fake_ops = {
    .name = "fake",
    .init = fake_init,
    .address = fake_address,
    .connect = fake_connect,
    .connected = fake_connected,
    .send = fake_send,
    .poll = fake_poll,
    .expose = fake_expose,
    .unexpose = fake_unexpose,
    .rget = fake_rget,
    .rput = fake_rput,
    .cells = fake_cells,
    .disconnect = fake_disconnect,
    .shutdown = fake_shutdown,
    .fini = fake_fini,
};

/* ---- helpers ------------------------------------------------------------- */

static weft_ctx_t *ctx[2];

static inline void open_pair(const char *strategy, uint32_t caps)
{
    fake.caps = caps;
    memset(fake.cells, 0, sizeof fake.cells);
    MUST(weft__ctx_create_local(0, 2, &fake_ops, strategy, &ctx[0]));
    MUST(weft__ctx_create_local(1, 2, &fake_ops, strategy, &ctx[1]));
}

static inline void close_pair(void)
{
    for (int r = 0; r < 2; r++) {
        /* Nothing may stay in flight on a fake track at finalize. */
        for (int p = 0; p < 2; p++) {
            struct weft_track *t = &fake.drv[r]->tracks[p];
            t->mode = FAKE_IDLE;
            fake_complete(t);
        }
    }
    MUST(weft_finalize(ctx[0]));
    MUST(weft_finalize(ctx[1]));
}

static inline struct weft_track *track(int from)
{
    return &fake.drv[from]->tracks[1 - from];
}

/* Decode logged packet i of rank from's track; returns its chunk count. */
static inline int decode(int from, int i, weft__wire_chunk_t *out, int max)
{
    struct weft_track *t = track(from);
    if (i >= t->nlog)
        return -1;
    weft__wire_iter_t it;
    if (weft__wire_open(t->log[i]->data, t->log[i]->len, &it))
        return -2;
    int n = 0, rc;
    weft__wire_chunk_t c;
    while ((rc = weft__wire_next(&it, &c)) == 1) {
        if (n < max)
            out[n] = c;
        n++;
    }
    return rc < 0 ? -3 : n;
}

static inline bool is_msg(uint8_t kind)
{
    return kind == WEFT_CHUNK_EAGER || kind == WEFT_CHUNK_EAGER_SYNC || kind == WEFT_CHUNK_RDV;
}

static inline void pump(int rounds)
{
    for (int i = 0; i < rounds; i++) {
        weft_progress(ctx[0]);
        weft_progress(ctx[1]);
    }
}

/* Drive both contexts until every request of reqs[r][0..n[r]) (rank r's) is
 * done (tested and freed, status in st[r] if given); false if that takes more
 * than a generous number of rounds. A request that ends in error fails the
 * test, unless errors_ok: then its status (st must be given) says how. */
/* The rounds (a test of every request left, then a pump) the last
 * finish_all took. */
static int finish_rounds;

static inline bool finish_all(weft_request_t **reqs[2], const int n[2], weft_status_t *st[2],
                              bool errors_ok)
{
    for (int round = 0; round < 200000; round++) {
        finish_rounds = round + 1;
        int left = 0;
        for (int r = 0; r < 2; r++) {
            for (int i = 0; i < n[r]; i++) {
                if (!reqs[r][i])
                    continue;
                int flag = 0;
                weft_status_t *sp = st && st[r] ? &st[r][i] : NULL;
                int rc = weft_sr_test(ctx[r], reqs[r][i], &flag, sp);
                if (errors_ok)
                    CHECK(sp && (!flag || rc == sp->error));
                else
                    MUST(rc);
                if (flag)
                    reqs[r][i] = NULL;
                else
                    left++;
            }
        }
        if (!left)
            return true;
        pump(1);
    }
    return false;
}

static inline bool finish(weft_request_t **reqs[2], const int n[2], weft_status_t *st[2])
{
    return finish_all(reqs, n, st, false);
}

static inline uint8_t *pattern(size_t len, uint64_t key)
{
    uint8_t *b = malloc(len ? len : 1);
    test_fill(b, len, key);
    return b;
}

#endif
