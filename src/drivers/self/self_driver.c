/* The self driver: a rank talking to itself. A sent packet is copied into a
 * queue and delivered on the next poll (never from inside send, so the engine
 * is not re-entered while it builds a packet). A rendezvous to oneself is a
 * plain memcpy from the exposed buffer. An rkey names a slot of the table of
 * exposed regions, never an address, so a forged key reads nothing it should
 * not. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/driver.h"
#include "util/util.h"

typedef struct self_packet {
    struct self_packet *next;
    size_t len;
    uint8_t data[];
} self_packet_t;

typedef struct self_rkey {
    uint32_t slot;
    uint32_t gen;
} self_rkey_t;

typedef struct self_region {
    const uint8_t *buf;
    size_t len;
    uint32_t gen;
    bool used;
} self_region_t;

struct weft_track {
    struct weft_driver *driver;
    void *peer_cookie;
};

struct weft_driver {
    weft_driver_upcalls_t up;
    struct weft_track track;
    bool connected;
    self_packet_t *head, **tail;
    self_region_t *regions;
    uint32_t nregions;
};

static int self_init(const weft_driver_params_t *params, const weft_driver_upcalls_t *up,
                     weft_driver_t **out)
{
    weft_driver_t *d = calloc(1, sizeof *d);
    if (!d)
        return WEFT_ENOMEM;
    d->up = *up;
    d->tail = &d->head;
    d->track.driver = d;
    *out = d;
    return WEFT_OK;
}

static int self_address(weft_driver_t *d, void *buf, size_t *len)
{
    *len = 0;
    return WEFT_OK;
}

static int self_connect(weft_driver_t *d, int peer_rank, const void *addr, size_t addrlen,
                        void *peer_cookie, weft_track_t **track_out, weft_track_caps_t *caps)
{
    if (d->connected)
        return WEFT_ESTATE;
    d->connected = true;
    d->track.peer_cookie = peer_cookie;
    caps->flags = WEFT_DRV_CAP_RGET | WEFT_DRV_CAP_RPUT;
    caps->max_packet = 64 * 1024;
    caps->max_iov = 1024;
    caps->rdv_threshold = 16 * 1024;
    caps->latency_us = 0.05;
    caps->bandwidth_mbs = 20000;
    *track_out = &d->track;
    return WEFT_OK;
}

static int self_connected(weft_driver_t *d)
{
    return WEFT_OK;
}

static int self_send(weft_track_t *t, const struct iovec *iov, int iovcnt, void *cookie)
{
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    self_packet_t *p = malloc(sizeof *p + len);
    if (!p)
        return WEFT_EAGAIN;
    p->next = NULL;
    p->len = len;
    size_t off = 0;
    for (int i = 0; i < iovcnt; i++) {
        memcpy(p->data + off, iov[i].iov_base, iov[i].iov_len);
        off += iov[i].iov_len;
    }
    weft_driver_t *d = t->driver;
    *d->tail = p;
    d->tail = &p->next;
    return WEFT_OK;
}

static int self_poll(weft_driver_t *d)
{
    /* Deliver only what was queued before this poll: packets sent by the
     * upcalls wait for the next one. */
    self_packet_t *p = d->head;
    d->head = NULL;
    d->tail = &d->head;
    int n = 0;
    while (p) {
        self_packet_t *next = p->next;
        d->up.packet(d->up.owner, d->track.peer_cookie, p->data, p->len);
        free(p);
        p = next;
        n++;
    }
    return n;
}

/* Packets to oneself are sent from inside the engine: nothing arrives unasked. */
static int self_wait_fd(weft_driver_t *d)
{
    return d->head ? WEFT_DRV_WAIT_POLL : WEFT_DRV_WAIT_IDLE;
}

static int self_expose(weft_driver_t *d, const void *buf, size_t len, weft_rkey_t *rkey)
{
    uint32_t i = 0;
    while (i < d->nregions && d->regions[i].used)
        i++;
    if (i == d->nregions) {
        uint32_t n = d->nregions ? d->nregions * 2 : 16;
        self_region_t *r = realloc(d->regions, sizeof *r * n);
        if (!r)
            return WEFT_ENOMEM;
        memset(r + d->nregions, 0, sizeof *r * (n - d->nregions));
        d->regions = r;
        d->nregions = n;
    }
    self_region_t *r = &d->regions[i];
    r->buf = buf;
    r->len = len;
    r->used = true;
    self_rkey_t k = {.slot = i, .gen = ++r->gen};
    rkey->len = sizeof k;
    memcpy(rkey->bytes, &k, sizeof k);
    return WEFT_OK;
}

static self_region_t *region_of(weft_driver_t *d, const weft_rkey_t *rkey)
{
    self_rkey_t k;
    if (rkey->len != sizeof k)
        return NULL;
    memcpy(&k, rkey->bytes, sizeof k);
    if (k.slot >= d->nregions || !d->regions[k.slot].used || d->regions[k.slot].gen != k.gen)
        return NULL;
    return &d->regions[k.slot];
}

static void self_unexpose(weft_driver_t *d, const weft_rkey_t *rkey)
{
    self_region_t *r = region_of(d, rkey);
    if (r)
        r->used = false;
}

/* Copy between a local iovec and an exposed region, either way. */
static int self_copy(weft_track_t *t, const struct iovec *local, int iovcnt,
                     const weft_rkey_t *rkey, uint64_t offset, size_t len, bool write)
{
    self_region_t *r = region_of(t->driver, rkey);
    if (!r || offset > r->len || len > r->len - offset)
        return WEFT_EINVAL;
    uint8_t *remote = (uint8_t *)r->buf + offset;
    for (int i = 0; i < iovcnt && len; i++) {
        size_t take = WEFT_MIN(local[i].iov_len, len);
        if (write)
            memcpy(remote, local[i].iov_base, take);
        else
            memcpy(local[i].iov_base, remote, take);
        remote += take;
        len -= take;
    }
    return len ? WEFT_EINVAL : WEFT_OK;
}

static int self_rget(weft_track_t *t, const struct iovec *local, int iovcnt,
                     const weft_rkey_t *rkey, uint64_t offset, size_t len, void *cookie)
{
    return self_copy(t, local, iovcnt, rkey, offset, len, false);
}

static int self_rput(weft_track_t *t, const struct iovec *local, int iovcnt,
                     const weft_rkey_t *rkey, uint64_t offset, size_t len, void *cookie)
{
    return self_copy(t, local, iovcnt, rkey, offset, len, true);
}

static void self_disconnect(weft_track_t *t)
{
    t->driver->connected = false;
}

static void self_fini(weft_driver_t *d)
{
    self_packet_t *p = d->head;
    while (p) {
        self_packet_t *next = p->next;
        free(p);
        p = next;
    }
    free(d->regions);
    free(d);
}

const weft_driver_ops_t weft__driver_self_ops = {
    .name = "self",
    .description = "loopback within a process",
    .reach = WEFT_DRV_REACH_SELF,
    .preference = 0,
    .init = self_init,
    .address = self_address,
    .connect = self_connect,
    .connected = self_connected,
    .send = self_send,
    .poll = self_poll,
    .wait_fd = self_wait_fd,
    .expose = self_expose,
    .unexpose = self_unexpose,
    .rget = self_rget,
    .rput = self_rput,
    .disconnect = self_disconnect,
    .fini = self_fini,
};
