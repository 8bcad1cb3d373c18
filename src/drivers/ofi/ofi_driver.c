/* The ofi driver: weft over libfabric's reliable datagram (RDM) endpoints, the
 * way onto InfiniBand, Omni-Path, Slingshot, EFA and RoCE. README.md in this
 * directory has the design; this file is the instance (provider choice,
 * endpoint, buffer pools), wire-up, packets and the poll loop. ofi_mr.c has
 * registration and rendezvous reads. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drivers/ofi/ofi_int.h"
#include "util/log.h"
#include "util/param.h"
#include "util/siphash.h"

#define OFI_API FI_VERSION(1, 9)

int weft__ofi_status(int fi_rc)
{
    switch (fi_rc < 0 ? -fi_rc : fi_rc) {
    case 0:
        return WEFT_OK;
    case FI_EAGAIN:
        return WEFT_EAGAIN;
    case FI_ENOMEM:
        return WEFT_ENOMEM;
    case FI_EINVAL:
        return WEFT_EINVAL;
    case FI_ENOSYS:
    case FI_EOPNOTSUPP:
    case FI_ENODATA:
        return WEFT_EUNSUPPORTED;
    case FI_ETRUNC:
    case FI_EMSGSIZE:
        return WEFT_EPROTO;
    case FI_ECANCELED:
        return WEFT_ECANCELED;
    case FI_EACCES:
    case FI_EPERM:
    case FI_EKEYREJECTED:
        return WEFT_EPERM;
    default:
        /* FI_EIO, FI_ECONNREFUSED, FI_ECONNRESET, FI_EHOSTUNREACH, FI_ETIMEDOUT... */
        return WEFT_EPEERDEAD;
    }
}

/* Is prov's core provider (before any ";ofi_rxm") one of list? */
static bool core_provider_in(const char *prov, const char *const *list, size_t n)
{
    size_t len = strcspn(prov, ";");
    for (size_t i = 0; i < n; i++)
        if (strlen(list[i]) == len && !strncmp(prov, list[i], len))
            return true;
    return false;
}

/* Providers that move data over the kernel's sockets. */
static const char *const on_sockets[] = {"tcp", "sockets", "udp", "net"};
/* Those and the ones over shared memory emulate a fabric: weft's tcp and shm
 * drivers do that job, so these are used only when WEFT_DRIVERS names ofi. */
static const char *const emulated[] = {"tcp", "sockets", "udp", "net", "shm", "sm2"};

static bool provider_is_native(const char *prov)
{
    return !core_provider_in(prov, emulated, WEFT_ARRAY_SIZE(emulated));
}

static struct fi_info *make_hints(bool rma)
{
    struct fi_info *h = weft__fi.dupinfo(NULL);
    if (!h)
        return NULL;
    h->ep_attr->type = FI_EP_RDM;
    h->caps = FI_TAGGED | FI_SEND | FI_RECV;
    if (rma)
        h->caps |= FI_RMA | FI_READ | FI_REMOTE_READ;
    h->mode = FI_CONTEXT | FI_CONTEXT2;
    h->domain_attr->cq_data_size = 4;
    h->domain_attr->mr_mode =
        FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    h->domain_attr->threading = FI_THREAD_DOMAIN;
    h->domain_attr->data_progress = FI_PROGRESS_MANUAL;
    /* Packets of one peer arrive in the order they were sent: the engine's
     * per-peer sequence depends on it. */
    h->tx_attr->msg_order = FI_ORDER_SAS;
    h->rx_attr->msg_order = FI_ORDER_SAS;
    const char *prov = weft__param_str("WEFT_OFI_PROVIDER", NULL);
    if (prov)
        h->fabric_attr->prov_name = strdup(prov);
    return h;
}

/* The provider's best offer (the first fi_getinfo lists), with rendezvous
 * reads if it has them. */
static int pick_provider(weft_driver_t *d)
{
    bool want_rma = weft__param_size("WEFT_OFI_RMA", 1) != 0;
    for (int pass = want_rma ? 0 : 1; pass < 2; pass++) {
        struct fi_info *hints = make_hints(pass == 0);
        if (!hints)
            return WEFT_ENOMEM;
        struct fi_info *info = NULL;
        int rc = weft__fi.getinfo(OFI_API, NULL, NULL, 0, hints, &info);
        weft__fi.freeinfo(hints);
        if (rc == 0 && info) {
            /* A utility provider (ofi_rxm) may offer every domain whatever
             * the hint: WEFT_OFI_DOMAIN picks among the offers. */
            const char *dom = weft__param_str("WEFT_OFI_DOMAIN", NULL);
            struct fi_info *pick = dom ? NULL : info;
            for (struct fi_info *i = info; !pick && i; i = i->next)
                if (i->domain_attr->name && !strcmp(i->domain_attr->name, dom))
                    pick = i;
            if (!pick) {
                weft__fi.freeinfo(info);
                continue;
            }
            d->info = weft__fi.dupinfo(pick);
            weft__fi.freeinfo(info);
            if (!d->info)
                return WEFT_ENOMEM;
            d->rma = pass == 0;
            return WEFT_OK;
        }
    }
    return WEFT_EUNSUPPORTED;
}

static int open_objects(weft_driver_t *d, bool doorbell)
{
    struct fi_info *fi = d->info;
    int rc = weft__fi.fabric(fi->fabric_attr, &d->fabric, NULL);
    if (!rc)
        rc = fi_domain(d->fabric, fi, &d->domain, NULL);
    if (rc)
        return rc;
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE, .count = (size_t)d->size};
    if ((rc = fi_av_open(d->domain, &av_attr, &d->av, NULL)))
        return rc;
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_TAGGED,
                                 .wait_obj = FI_WAIT_NONE,
                                 .size = (size_t)(d->rx_depth + d->tx_depth) * 2 + 256};
    /* A doorbell for a progress thread to sleep on, where the provider has
     * one (not the shm provider): the queue's file descriptor. */
    d->cq_fd = -1;
    if (doorbell) {
        cq_attr.wait_obj = FI_WAIT_FD;
        if ((rc = fi_cq_open(d->domain, &cq_attr, &d->cq, NULL)) == 0 &&
            (rc = fi_control(&d->cq->fid, FI_GETWAIT, &d->cq_fd)) != 0) {
            fi_close(&d->cq->fid);
            d->cq = NULL;
            d->cq_fd = -1;
        }
        if (rc)
            weft_log_debug("ofi: no doorbell on this provider (%s): a progress thread polls",
                           weft__fi.strerror(-rc));
        cq_attr.wait_obj = FI_WAIT_NONE;
    }
    if (!d->cq && (rc = fi_cq_open(d->domain, &cq_attr, &d->cq, NULL)))
        return rc;
    if ((rc = fi_endpoint(d->domain, fi, &d->ep, NULL)))
        return rc;
    if ((rc = fi_ep_bind(d->ep, &d->av->fid, 0)))
        return rc;
    if ((rc = fi_ep_bind(d->ep, &d->cq->fid, FI_TRANSMIT | FI_RECV)))
        return rc;
    if (!strcmp(fi->fabric_attr->prov_name, "shm")) {
        /* The shm provider names its memory region after the process id,
         * and the region of a process that was killed stays behind; once
         * the pid comes round again, that name is taken and the endpoint
         * cannot open. A name of this job and rank is never anybody's, and
         * weftrun removes what a killed rank of its job left (it sweeps
         * /dev/shm/weft-<job>-*). */
        if ((rc = fi_setname(&d->ep->fid, d->shm_name, strlen(d->shm_name) + 1)))
            weft_log_debug("ofi: shm endpoint keeps its own name: %s", weft__fi.strerror(-rc));
    }
    return fi_enable(d->ep);
}

/* Post a receive. Called with d->lock. */
static int post_recv(weft_driver_t *d, ofi_buf_t *b)
{
    for (;;) {
        ssize_t rc = fi_trecv(d->ep, b->data, d->max_packet, d->rx_desc, FI_ADDR_UNSPEC,
                              d->tag_mark, 0, &b->c);
        if (rc != -FI_EAGAIN)
            return (int)rc;
        fi_cq_read(d->cq, NULL, 0); /* progress, so that room frees up */
    }
}

/* The pools: receives posted at all times, send copies. */
static int open_buffers(weft_driver_t *d)
{
    size_t rx_bytes = (size_t)d->rx_depth * d->max_packet;
    size_t tx_bytes = (size_t)d->tx_depth * d->max_packet;
    d->rx_slab = aligned_alloc(4096, rx_bytes);
    d->tx_slab = aligned_alloc(4096, tx_bytes);
    d->rx = calloc((size_t)d->rx_depth, sizeof *d->rx);
    d->tx = calloc((size_t)d->tx_depth, sizeof *d->tx);
    if (!d->rx_slab || !d->tx_slab || !d->rx || !d->tx)
        return -FI_ENOMEM;
    int rc = weft__ofi_reg(d, d->rx_slab, rx_bytes, FI_RECV, &d->rx_mr, NULL);
    if (!rc)
        rc = weft__ofi_reg(d, d->tx_slab, tx_bytes, FI_SEND, &d->tx_mr, NULL);
    if (rc)
        return rc;
    d->rx_desc = d->mr_local ? fi_mr_desc(d->rx_mr) : NULL;
    d->tx_desc = d->mr_local ? fi_mr_desc(d->tx_mr) : NULL;
    for (int i = d->tx_depth - 1; i >= 0; i--) {
        d->tx[i].c.kind = OFI_OP_SEND;
        d->tx[i].data = d->tx_slab + (size_t)i * d->max_packet;
        d->tx[i].next_free = d->tx_free;
        d->tx_free = &d->tx[i];
    }
    for (int i = 0; i < d->rx_depth; i++) {
        d->rx[i].c.kind = OFI_OP_RECV;
        d->rx[i].data = d->rx_slab + (size_t)i * d->max_packet;
        if ((rc = post_recv(d, &d->rx[i])))
            return rc;
    }
    return 0;
}

static void close_fid(struct fid *f)
{
    if (f)
        fi_close(f);
}

static void ofi_free(weft_driver_t *d)
{
    /* The endpoint first: it owns the posted receives and sends in flight. */
    close_fid(d->ep ? &d->ep->fid : NULL);
    weft__ofi_reads_free(d);
    weft__ofi_mr_fini(d);
    close_fid(d->rx_mr ? &d->rx_mr->fid : NULL);
    close_fid(d->tx_mr ? &d->tx_mr->fid : NULL);
    close_fid(d->av ? &d->av->fid : NULL);
    close_fid(d->cq ? &d->cq->fid : NULL);
    close_fid(d->domain ? &d->domain->fid : NULL);
    close_fid(d->fabric ? &d->fabric->fid : NULL);
    if (d->info)
        weft__fi.freeinfo(d->info);
    free(d->rx_slab);
    free(d->tx_slab);
    free(d->rx);
    free(d->tx);
    free(d->tracks);
    free(d->node_ranks);
    weft_lock_destroy(&d->lock);
    free(d);
}

static int ofi_init(const weft_driver_params_t *params, const weft_driver_upcalls_t *up,
                    weft_driver_t **out)
{
    const char *why;
    int lrc = weft__ofi_load(&why);
    if (lrc) {
        /* Loud when asked for by name, quiet when only probed for a fabric. */
        if (params->only_native)
            weft_log_info("ofi: %s; not used", why);
        else
            weft_log_error("ofi: %s", why);
        return lrc;
    }
    weft_driver_t *d = calloc(1, sizeof *d);
    if (!d)
        return WEFT_ENOMEM;
    weft_lock_init(&d->lock, params->threaded ? WEFT_LOCK_SPIN : WEFT_LOCK_NONE);
    d->up = *up;
    d->rank = params->rank;
    d->size = params->size;
    weft_list_init(&d->retry);
    weft_list_init(&d->orphans);
    uint8_t key[WEFT_SIPHASH_KEY_LEN] = {0};
    memcpy(key, params->job_secret, WEFT_MIN(sizeof key, (size_t)WEFT_DRV_SECRET_LEN));
    d->tag_mark = weft__siphash24(key, "weft-ofi-tag", 12);
    if (weft__name_plain(params->job_id, 48))
        snprintf(d->shm_name, sizeof d->shm_name, "weft-%s-ofi-%d", params->job_id, d->rank);
    else
        snprintf(d->shm_name, sizeof d->shm_name, "weft-%016llx-%d",
                 (unsigned long long)d->tag_mark, d->rank);
    d->rx_depth = (int)WEFT_MIN(WEFT_MAX(weft__param_size("WEFT_OFI_RX_DEPTH", 64), 4ull), 4096ull);
    d->tx_depth = (int)WEFT_MIN(WEFT_MAX(weft__param_size("WEFT_OFI_TX_DEPTH", 64), 4ull), 4096ull);
    d->ping_ns = WEFT_MAX(weft__param_size("WEFT_OFI_PING_MS", 1000), 10ull) * 1000000ull;
    d->timeout_ns = WEFT_MAX(weft__param_size("WEFT_OFI_TIMEOUT_MS", 10000), 100ull) * 1000000ull;
    int rc = WEFT_ENOMEM;
    if (params->size > (int)OFI_DATA_RANK_MASK)
        goto err;
    d->tracks = calloc((size_t)params->size, sizeof *d->tracks);
    d->node_ranks = malloc(sizeof(int) * (size_t)WEFT_MAX(params->node_size, 1));
    if (!d->tracks || !d->node_ranks)
        goto err;
    memcpy(d->node_ranks, params->node_ranks, sizeof(int) * (size_t)params->node_size);
    d->node_size = params->node_size;
    if ((rc = pick_provider(d)) != WEFT_OK) {
        weft_log_info("ofi: no provider offers tagged RDM endpoints%s%s",
                      weft__param_str("WEFT_OFI_PROVIDER", NULL) ? " for WEFT_OFI_PROVIDER=" : "",
                      weft__param_str("WEFT_OFI_PROVIDER", ""));
        goto err;
    }
    const char *prov = d->info->fabric_attr->prov_name;
    if (params->only_native && !provider_is_native(prov)) {
        weft_log_info("ofi: best provider is %s, no native fabric; not used", prov);
        rc = WEFT_EUNSUPPORTED;
        goto err;
    }
    int mode = d->info->domain_attr->mr_mode;
    d->mr_local = mode & FI_MR_LOCAL;
    d->mr_virt = mode & FI_MR_VIRT_ADDR;
    d->mr_prov_key = mode & FI_MR_PROV_KEY;
    d->mr_endpoint = mode & FI_MR_ENDPOINT;
    /* Hardware providers pin what they register; their own cache (with its
     * memory monitor) makes registering again cheap, and a registration of
     * ours must not outlive its use (the memory may be freed). */
    d->mr_pins = (mode & (FI_MR_ALLOCATED | FI_MR_LOCAL)) || provider_is_native(prov);
    /* Injected packets leave no completion to wait for: only where the
     * provider has them on their way when the call returns (shared memory
     * written into the peer, a NIC's queue), not over kernel sockets, where
     * a packet the socket cannot take yet waits in the provider for this
     * process to poll again. */
    d->on_sockets = core_provider_in(prov, on_sockets, WEFT_ARRAY_SIZE(on_sockets));
    if (!d->on_sockets)
        d->inject_max = WEFT_MIN(d->info->tx_attr->inject_size, (size_t)OFI_INJECT_MAX);
    d->rma_iov_limit = (int)WEFT_MIN(WEFT_MAX(d->info->tx_attr->rma_iov_limit, 1ul), 4ul);
    d->max_packet = WEFT_MIN(WEFT_MAX(weft__param_size("WEFT_OFI_PACKET", OFI_MAX_PACKET), 4096ull),
                             d->info->ep_attr->max_msg_size);
    d->rdv_threshold = WEFT_MIN((size_t)OFI_RDV_DEFAULT, d->max_packet / 2);
    if (d->info->tx_attr->size)
        d->tx_depth = (int)WEFT_MIN((size_t)d->tx_depth, d->info->tx_attr->size);
    if (d->info->rx_attr->size)
        d->rx_depth = (int)WEFT_MIN((size_t)d->rx_depth, d->info->rx_attr->size);
    d->next_key = weft__siphash24(key, "weft-ofi-key", 12) & 0xFFFFFFFF00000000ull;
    if ((rc = open_objects(d, params->doorbell)) != 0 || (rc = weft__ofi_mr_init(d)) != 0 ||
        (rc = open_buffers(d)) != 0) {
        weft_log_error("ofi: %s (%s): %s", prov, d->info->domain_attr->name,
                       weft__fi.strerror(-rc));
        rc = weft__ofi_status(rc) == WEFT_ENOMEM ? WEFT_ENOMEM : WEFT_ESYS;
        goto err;
    }
    d->namelen = sizeof d->name;
    if ((rc = fi_getname(&d->ep->fid, d->name, &d->namelen)) != 0) {
        weft_log_error("ofi: no endpoint name: %s", weft__fi.strerror(-rc));
        rc = WEFT_ESYS;
        goto err;
    }
    weft_log_info("ofi: provider %s, domain %s, rma %s, mr_mode 0x%x", prov,
                  d->info->domain_attr->name, d->rma ? "yes" : "no (copy path)", mode);
    *out = d;
    return WEFT_OK;
err:
    ofi_free(d);
    return rc;
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static bool on_this_node(const weft_driver_t *d, int rank)
{
    for (int i = 0; i < d->node_size; i++)
        if (d->node_ranks[i] == rank)
            return true;
    return false;
}

static int ofi_address(weft_driver_t *d, void *buf, size_t *len)
{
    if (*len < OFI_ADDR_HDR + d->namelen)
        return WEFT_ENOBUFS;
    uint8_t *p = buf;
    put32(p, (uint32_t)d->rank);
    put32(p + 4, (uint32_t)getpid());
    memcpy(p + OFI_ADDR_HDR, d->name, d->namelen);
    *len = OFI_ADDR_HDR + d->namelen;
    return WEFT_OK;
}

static int ofi_connect(weft_driver_t *d, int peer_rank, const void *addr, size_t addrlen,
                       void *peer_cookie, weft_track_t **track_out, weft_track_caps_t *caps)
{
    if (peer_rank < 0 || peer_rank >= d->size || d->tracks[peer_rank])
        return WEFT_EINVAL;
    ofi_addr_t a;
    if (weft__ofi_addr_decode(addr, addrlen, peer_rank, &a) != WEFT_OK) {
        weft_log_error("ofi: rank %d published a malformed address", peer_rank);
        return WEFT_EPROTO;
    }
    weft_track_t *t = calloc(1, sizeof *t);
    if (!t)
        return WEFT_ENOMEM;
    t->driver = d;
    t->peer_cookie = peer_cookie;
    t->peer_rank = peer_rank;
    t->ping.kind = OFI_OP_PING;
    t->pid = on_this_node(d, peer_rank) && peer_rank != d->rank ? (int)a.pid : 0;
    weft_list_init(&t->reads);
    int n = fi_av_insert(d->av, a.name, 1, &t->addr, 0, NULL);
    if (n != 1) {
        weft_log_error("ofi: cannot add rank %d's address to the address vector", peer_rank);
        free(t);
        return WEFT_EPROTO;
    }
    d->tracks[peer_rank] = t;
    d->nlive++;
    /* ofi_send copies every packet (injected, or into a registered buffer). */
    caps->flags = WEFT_DRV_CAP_SEND_COPY | (d->rma ? WEFT_DRV_CAP_RGET : 0);
    caps->max_packet = d->max_packet - OFI_PKT_HDR;
    caps->max_iov = OFI_MAX_IOV;
    caps->rdv_threshold = d->rdv_threshold;
    caps->latency_us = 2;
    caps->bandwidth_mbs = 10000;
    /* Over kernel sockets every packet costs system calls on both sides, as
     * with weft's tcp driver: a burst of small messages goes faster packed
     * (bench/README.md, "Aggregation"). */
    caps->strategy = d->on_sockets ? "aggreg" : NULL;
    *track_out = t;
    return WEFT_OK;
}

/* The remote completion data of a message: its sender's rank and what it is. */
static uint64_t data_of(weft_driver_t *d, int kind)
{
    return ((uint64_t)(uint32_t)d->rank << OFI_DATA_RANK_SHIFT) | (uint64_t)kind;
}

static int ofi_connected(weft_driver_t *d)
{
    d->next_ping = weft__now_ns() + d->ping_ns;
    return WEFT_OK;
}

/* Copy a packet into one buffer. */
static void gather(uint8_t *to, const struct iovec *iov, int iovcnt)
{
    for (int i = 0; i < iovcnt; i++) {
        memcpy(to, iov[i].iov_base, iov[i].iov_len);
        to += iov[i].iov_len;
    }
}

/* A packet is copied into a registered send buffer behind the track's
 * sequence number, and is in flight (WEFT_INPROGRESS) until libfabric has
 * taken it all: with manual progress a provider may still hold it after the
 * call returns, and it leaves only while this process polls, so the engine
 * must know it is not gone yet (finalize waits for it). */
static int ofi_send(weft_track_t *t, const struct iovec *iov, int iovcnt, void *cookie)
{
    weft_driver_t *d = t->driver;
    if (WEFT_UNLIKELY(t->lost))
        return WEFT_EPEERDEAD;
    if (WEFT_UNLIKELY(iovcnt < 0 || iovcnt > OFI_MAX_IOV))
        return WEFT_EINVAL;
    size_t len = OFI_PKT_HDR;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    if (WEFT_UNLIKELY(len > d->max_packet))
        return WEFT_EINVAL;
    weft_lock_acquire(&d->lock);
    if (len <= d->inject_max) {
        /* Small, on a provider that has it on its way when the call returns:
         * no buffer, no completion. */
        uint8_t small[OFI_INJECT_MAX];
        put32(small, t->tx_seq);
        gather(small + OFI_PKT_HDR, iov, iovcnt);
        ssize_t rc =
            fi_tinjectdata(d->ep, small, len, data_of(d, OFI_MSG_PACKET), t->addr, d->tag_mark);
        if (rc == 0)
            t->tx_seq++;
        weft_lock_release(&d->lock);
        return rc == 0 ? WEFT_OK : weft__ofi_status((int)rc);
    }
    ofi_buf_t *b = d->tx_free;
    if (!b) {
        weft_lock_release(&d->lock);
        return WEFT_EAGAIN;
    }
    put32(b->data, t->tx_seq);
    gather(b->data + OFI_PKT_HDR, iov, iovcnt);
    b->track = t;
    b->cookie = cookie;
    b->done = false;
    ssize_t rc = fi_tsenddata(d->ep, b->data, len, d->tx_desc, data_of(d, OFI_MSG_PACKET), t->addr,
                              d->tag_mark, &b->c);
    if (rc == 0) {
        d->tx_free = b->next_free;
        t->tx_seq++;
        b->next_sent = NULL;
        if (t->tx_tail)
            t->tx_tail->next_sent = b;
        else
            t->tx_head = b;
        t->tx_tail = b;
    }
    weft_lock_release(&d->lock);
    return rc == 0 ? WEFT_INPROGRESS : weft__ofi_status((int)rc);
}

/* Back to the pool. Called with d->lock. */
static void tx_put(weft_driver_t *d, ofi_buf_t *b)
{
    b->track = NULL;
    b->next_free = d->tx_free;
    d->tx_free = b;
}

/* A send buffer came back from libfabric. Providers may finish sends out of
 * order (a large one after a small one behind it), and the engine hears of
 * each track's sends in the order they were made: a finished send waits for
 * those before it. A buffer whose track was lost or closed is only freed. */
static void send_back(weft_driver_t *d, ofi_buf_t *b, int status)
{
    weft_track_t *t = b->track;
    weft_lock_acquire(&d->lock);
    b->done = true;
    b->status = status;
    ofi_buf_t *ready = NULL, **tail = &ready;
    if (!t) {
        tx_put(d, b);
    } else {
        while (t->tx_head && t->tx_head->done) {
            ofi_buf_t *h = t->tx_head;
            t->tx_head = h->next_sent;
            *tail = h;
            tail = &h->next_sent;
        }
        if (!t->tx_head)
            t->tx_tail = NULL;
    }
    *tail = NULL;
    weft_lock_release(&d->lock);
    while (ready) {
        ofi_buf_t *h = ready;
        ready = h->next_sent;
        void *cookie = h->cookie;
        int st = h->status;
        weft_lock_acquire(&d->lock);
        tx_put(d, h);
        weft_lock_release(&d->lock);
        d->up.send_done(d->up.owner, t->peer_cookie, cookie, st);
    }
}

/* The packets of t still in libfabric: done with status (lost: the engine
 * hears nothing more of them), or forgotten (closed). Their buffers come
 * back to the pool when libfabric is done with them. */
static void sends_detach(weft_driver_t *d, weft_track_t *t, bool tell, int status)
{
    weft_lock_acquire(&d->lock);
    ofi_buf_t *b = t->tx_head;
    t->tx_head = t->tx_tail = NULL;
    weft_lock_release(&d->lock);
    while (b) {
        ofi_buf_t *next = b->next_sent;
        void *cookie = b->cookie;
        weft_lock_acquire(&d->lock);
        if (b->done)
            tx_put(d, b); /* finished, but held behind an earlier one */
        else
            b->track = NULL; /* freed when libfabric gives it back */
        weft_lock_release(&d->lock);
        if (tell)
            d->up.send_done(d->up.owner, t->peer_cookie, cookie, status);
        b = next;
    }
}

static void held_free(weft_track_t *t)
{
    while (t->held) {
        ofi_held_t *h = t->held;
        t->held = h->next;
        free(h);
    }
}

/* The peer is gone: its reads fail, then the engine hears of it. */
static void lose(weft_driver_t *d, weft_track_t *t, const char *why)
{
    if (t->lost)
        return;
    t->lost = true;
    d->nlive--;
    weft_log_info("ofi: rank %d lost: %s", t->peer_rank, why);
    sends_detach(d, t, true, WEFT_EPEERDEAD);
    weft__ofi_reads_orphan(d, t, true);
    held_free(t);
    d->up.peer_lost(d->up.owner, t->peer_cookie, WEFT_EPEERDEAD);
}

/* Keepalive: each live peer gets a small message every WEFT_OFI_PING_MS. A
 * dead peer makes it fail (connection refused or reset), or never leave: a
 * provider may answer FI_EAGAIN for ever while it tries to reconnect. One
 * that cannot leave, or stays in flight, for WEFT_OFI_TIMEOUT_MS means a
 * peer that is gone; so does a peer on this node whose process has ended.
 * (With manual progress a peer that computes does not read its messages,
 * but its kernel or NIC still takes them: a keepalive waits only when the
 * way to the peer is full.) */
static void ping_peers(weft_driver_t *d, uint64_t now)
{
    d->next_ping = now + d->ping_ns;
    for (int r = 0; r < d->size; r++) {
        weft_track_t *t = d->tracks[r];
        if (!t || t->lost || r == d->rank)
            continue;
        /* A peer on this node is simply looked for (the shm provider writes
         * to a dead peer's memory without a complaint). */
        if (t->pid > 0 && kill(t->pid, 0) != 0 && errno == ESRCH) {
            lose(d, t, "its process is gone");
            continue;
        }
        if (t->ping_busy) {
            if (now - t->ping_sent > d->timeout_ns)
                lose(d, t, "keepalive still in flight after WEFT_OFI_TIMEOUT_MS");
            continue;
        }
        weft_lock_acquire(&d->lock);
        ssize_t rc = fi_tsenddata(d->ep, NULL, 0, NULL, data_of(d, OFI_MSG_PING), t->addr,
                                  d->tag_mark, &t->ping);
        weft_lock_release(&d->lock);
        if (rc == 0) {
            t->ping_busy = true;
            t->ping_sent = now;
            t->refused = 0;
        } else if (rc != -FI_EAGAIN) {
            lose(d, t, weft__fi.strerror((int)-rc));
        } else if (!t->refused) {
            t->refused = now;
        } else if (now - t->refused > d->timeout_ns) {
            lose(d, t, "no keepalive could leave for WEFT_OFI_TIMEOUT_MS");
        }
    }
}

static weft_track_t *track_of(weft_driver_t *d, uint64_t data)
{
    uint32_t r = (uint32_t)(data >> OFI_DATA_RANK_SHIFT) & OFI_DATA_RANK_MASK;
    return r < (uint32_t)d->size ? d->tracks[r] : NULL;
}

static void repost_locked(weft_driver_t *d, ofi_buf_t *b)
{
    int rc = post_recv(d, b);
    if (rc)
        weft_log_error("ofi: cannot post a receive again: %s", weft__fi.strerror(-rc));
}

static void repost(weft_driver_t *d, ofi_buf_t *b)
{
    weft_lock_acquire(&d->lock);
    repost_locked(d, b);
    weft_lock_release(&d->lock);
}

/* A receive buffer whose packet was handed on: posted again at the next
 * poll, so that the application hears of the packet (and may answer it)
 * without waiting for libfabric to take the buffer back. At most two
 * batches wait; rx_depth keeps the rest posted. */
static void repost_later(weft_driver_t *d, ofi_buf_t *b)
{
    if (WEFT_UNLIKELY(d->nrx_done == (int)WEFT_ARRAY_SIZE(d->rx_done)))
        repost(d, b);
    else
        d->rx_done[d->nrx_done++] = b;
}

/* Hand a packet on; a malformed one loses its peer. */
static void hand_on(weft_driver_t *d, weft_track_t *t, const uint8_t *pkt, size_t len)
{
    if (!t->lost && d->up.packet(d->up.owner, t->peer_cookie, pkt, len) < 0)
        lose(d, t, "malformed packet");
}

/* A packet of t arrived. Completions of one peer's messages may come out of
 * order (a provider's own rendezvous finishes a large message after a small
 * one behind it), so each packet carries the peer's sequence number: the
 * next one expected is handed on at once, with those held after it; one
 * ahead is held (copied, so that its receive is posted again at once). */
static int on_packet(weft_driver_t *d, weft_track_t *t, const uint8_t *pkt, size_t len)
{
    if (len < OFI_PKT_HDR) {
        lose(d, t, "packet shorter than its header");
        return 0;
    }
    uint32_t seq = get32(pkt);
    int32_t ahead = (int32_t)(seq - t->rx_seq);
    if (ahead < 0) {
        lose(d, t, "packet repeated");
        return 0;
    }
    if (ahead > 0) {
        ofi_held_t **p = &t->held;
        while (*p && (int32_t)((*p)->seq - seq) < 0)
            p = &(*p)->next;
        /* A number already held is a repeat too. Held twice, the second copy
         * would stay at the head once the first was handed on, and every
         * packet held behind it would wait there for ever. */
        if (*p && (*p)->seq == seq) {
            lose(d, t, "packet repeated");
            return 0;
        }
        ofi_held_t *h = malloc(sizeof *h + len);
        if (!h) {
            lose(d, t, "out of memory holding a packet");
            return 0;
        }
        h->seq = seq;
        h->len = len - OFI_PKT_HDR;
        memcpy(h->data, pkt + OFI_PKT_HDR, h->len);
        h->next = *p;
        *p = h;
        return 0;
    }
    t->rx_seq++;
    hand_on(d, t, pkt + OFI_PKT_HDR, len - OFI_PKT_HDR);
    int n = 1;
    while (t->held && t->held->seq == t->rx_seq && !t->lost) {
        ofi_held_t *h = t->held;
        t->held = h->next;
        t->rx_seq++;
        hand_on(d, t, h->data, h->len);
        free(h);
        n++;
    }
    return n;
}

int weft__ofi_recv(weft_driver_t *d, uint64_t flags, uint64_t data, const uint8_t *pkt, size_t len)
{
    /* Without remote data it is nobody's packet (a stranger's). */
    weft_track_t *t = (flags & FI_REMOTE_CQ_DATA) ? track_of(d, data) : NULL;
    if (t && !t->lost && (data & 0xFF) == OFI_MSG_PACKET)
        return on_packet(d, t, pkt, len);
    return 0;
}

static int handle(weft_driver_t *d, const struct fi_cq_tagged_entry *e)
{
    ofi_ctx_t *c = e->op_context;
    switch (c->kind) {
    case OFI_OP_RECV: {
        ofi_buf_t *b = (ofi_buf_t *)c;
        int n = weft__ofi_recv(d, e->flags, e->data, b->data, e->len);
        repost_later(d, b);
        return n;
    }
    case OFI_OP_SEND:
        send_back(d, (ofi_buf_t *)c, WEFT_OK);
        return 1;
    case OFI_OP_PING: {
        weft_track_t *t = (weft_track_t *)((char *)c - offsetof(weft_track_t, ping));
        t->ping_busy = false;
        return 0;
    }
    case OFI_OP_READ:
        weft__ofi_read_done(d, (ofi_sub_t *)c, WEFT_OK);
        return 1;
    }
    return 0;
}

/* A failed operation: a receive is posted again; a send, keepalive or read
 * to a peer means that peer is gone. */
static int handle_error(weft_driver_t *d, const struct fi_cq_err_entry *e)
{
    ofi_ctx_t *c = e->op_context;
    if (!c)
        return 0;
    const char *why = weft__fi.strerror(e->err);
    weft_log_debug("ofi: operation of kind %d failed: %s", c->kind, why);
    switch (c->kind) {
    case OFI_OP_RECV: {
        /* A message longer than a packet: only a stranger or a broken peer
         * sends one. */
        ofi_buf_t *b = (ofi_buf_t *)c;
        weft_track_t *t = (e->flags & FI_REMOTE_CQ_DATA) ? track_of(d, e->data) : NULL;
        if (t && e->err == FI_ETRUNC)
            lose(d, t, "oversized packet");
        repost(d, b);
        return 1;
    }
    case OFI_OP_SEND: {
        ofi_buf_t *b = (ofi_buf_t *)c;
        weft_track_t *t = b->track;
        send_back(d, b, WEFT_EPEERDEAD);
        if (t)
            lose(d, t, why);
        return 1;
    }
    case OFI_OP_PING: {
        weft_track_t *t = (weft_track_t *)((char *)c - offsetof(weft_track_t, ping));
        t->ping_busy = false;
        lose(d, t, why);
        return 1;
    }
    case OFI_OP_READ: {
        ofi_sub_t *s = (ofi_sub_t *)c;
        weft__ofi_read_done(d, s, WEFT_EPEERDEAD);
        return 1;
    }
    }
    return 0;
}

static int ofi_poll(weft_driver_t *d)
{
    struct fi_cq_tagged_entry ev[OFI_CQ_BATCH];
    int events = 0;
    if (WEFT_UNLIKELY(d->nretry))
        weft__ofi_retry(d);
    for (;;) {
        weft_lock_acquire(&d->lock);
        while (d->nrx_done)
            repost_locked(d, d->rx_done[--d->nrx_done]);
        ssize_t n = fi_cq_read(d->cq, ev, OFI_CQ_BATCH);
        struct fi_cq_err_entry err;
        if (n == -FI_EAVAIL) {
            memset(&err, 0, sizeof err);
            if (fi_cq_readerr(d->cq, &err, 0) != 1)
                err.op_context = NULL;
        }
        weft_lock_release(&d->lock);
        if (n == -FI_EAVAIL) {
            events += handle_error(d, &err);
            continue;
        }
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            events += handle(d, &ev[i]);
        if (n < OFI_CQ_BATCH)
            break;
    }
    if (WEFT_UNLIKELY((++d->polls & 63) == 0) && d->nlive) {
        /* The clock only every 64th poll. */
        uint64_t now = weft__now_ns();
        if (now >= d->next_ping)
            ping_peers(d, now);
    }
    return events;
}

/* The queue's file descriptor, once libfabric says that sleeping on it is
 * safe (fi_trywait: nothing waits in the queue or in the provider that only
 * a poll would find, and the descriptor is quiet until something does);
 * BUSY when something waits, and when receive buffers or reads wait for the
 * next poll. Without a doorbell, polling it is. */
static int ofi_wait_fd(weft_driver_t *d)
{
    if (!d->nlive)
        return WEFT_DRV_WAIT_IDLE;
    if (d->cq_fd < 0)
        return WEFT_DRV_WAIT_POLL;
    if (d->nrx_done || d->nretry)
        return WEFT_DRV_WAIT_BUSY;
    struct fid *f = &d->cq->fid;
    weft_lock_acquire(&d->lock);
    int rc = fi_trywait(d->fabric, &f, 1);
    weft_lock_release(&d->lock);
    if (rc == 0)
        return d->cq_fd;
    return rc == -FI_EAGAIN ? WEFT_DRV_WAIT_BUSY : WEFT_DRV_WAIT_POLL;
}

static void ofi_disconnect(weft_track_t *t)
{
    weft_driver_t *d = t->driver;
    if (!t->lost)
        d->nlive--;
    /* Reads still in flight are abandoned: the endpoint's close (fini)
     * flushes them. */
    sends_detach(d, t, false, 0);
    weft__ofi_reads_orphan(d, t, false);
    held_free(t);
    d->tracks[t->peer_rank] = NULL;
    free(t);
}

static void ofi_fini(weft_driver_t *d)
{
    for (int r = 0; r < d->size; r++)
        if (d->tracks[r])
            ofi_disconnect(d->tracks[r]);
    ofi_free(d);
}

/* The parameters this driver reads. */
static const weft_param_desc_t ofi_params[] = {
    {"WEFT_OFI_PROVIDER", "the first libfabric offers",
     "ofi: libfabric provider (verbs, psm3, cxi, efa, tcp, shm, \"tcp;ofi_rxm\"...)"},
    {"WEFT_OFI_DOMAIN", "the provider's first",
     "ofi: libfabric domain (a NIC, or for the tcp provider an interface: eth0, lo)"},
    {"WEFT_OFI_LIBRARY", "libfabric.so.1",
     "ofi: the libfabric to load when the driver first starts (a name or a path)"},
    {"WEFT_OFI_RMA", "1",
     "ofi: 0 moves rendezvous data by copy (sender streams it) instead of fi_read"},
    {"WEFT_OFI_PACKET", "64K", "ofi: largest packet (eager messages up to half of it)"},
    {"WEFT_OFI_RX_DEPTH", "64", "ofi: receive buffers (one packet each) posted at all times"},
    {"WEFT_OFI_TX_DEPTH", "64", "ofi: send buffers (one packet each) for packets in flight"},
    {"WEFT_OFI_MR_CACHE", "64",
     "ofi: idle memory registrations kept for reuse (providers that do not pin memory)"},
    {"WEFT_OFI_PING_MS", "1000", "ofi: keepalive period to each peer (finds dead peers)"},
    {"WEFT_OFI_TIMEOUT_MS", "10000",
     "ofi: a peer whose keepalive stays unsent this long is declared dead"},
    {NULL, NULL, NULL},
};

const weft_driver_ops_t weft__driver_ofi_ops = {
    .name = "ofi",
    .description = "libfabric (InfiniBand, Omni-Path, Slingshot, EFA...): RDM endpoint, tagged "
                   "packets, rendezvous by fi_read",
    .reach = WEFT_DRV_REACH_NET,
    .preference = 20,
    .native_only = true,
    .params = ofi_params,
    .init = ofi_init,
    .address = ofi_address,
    .connect = ofi_connect,
    .connected = ofi_connected,
    .send = ofi_send,
    .poll = ofi_poll,
    .wait_fd = ofi_wait_fd,
    .expose = weft__ofi_expose,
    .unexpose = weft__ofi_unexpose,
    .rget = weft__ofi_rget,
    .rput = NULL,
    .disconnect = ofi_disconnect,
    .fini = ofi_fini,
};
