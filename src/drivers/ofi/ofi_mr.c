/* The ofi driver's memory registration and rendezvous reads.
 *
 * Registration cache: a table of registrations, each covering whole pages,
 * found by address range and held by a count while an exposed send buffer or
 * a read's local buffer uses it. What happens when the count drops to zero
 * depends on the provider:
 *  - a provider that pins memory (hardware: FI_MR_ALLOCATED or FI_MR_LOCAL in
 *    its mr_mode) gets the registration closed at once. The memory may be
 *    freed by the application the moment its request completes, and a pinned
 *    registration kept past that would hand out stale pages for whatever is
 *    allocated there next. Such providers cache registrations themselves,
 *    invalidated by their memory monitor (FI_MR_CACHE_MONITOR), so
 *    registering again is cheap;
 *  - a provider that reads memory through the process's virtual addresses
 *    (tcp, shm, sockets) keeps it, idle, for the next transfer from the same
 *    pages: a stale entry can only name addresses, which always read what
 *    lies there now. Idle entries beyond WEFT_OFI_MR_CACHE are closed, least
 *    recently used first. */
#include <stdlib.h>
#include <string.h>

#include "drivers/ofi/ofi_int.h"
#include "util/log.h"
#include "util/param.h"

#define PAGE 4096u

int weft__ofi_reg(weft_driver_t *d, void *buf, size_t len, uint64_t access, struct fid_mr **mr,
                  uint64_t *key)
{
    uint64_t requested = d->mr_prov_key ? 0 : d->next_key++;
    int rc = fi_mr_reg(d->domain, buf, len, access, 0, requested, 0, mr, NULL);
    if (rc)
        return rc;
    if (d->mr_endpoint) {
        if ((rc = fi_mr_bind(*mr, &d->ep->fid, 0)) == 0)
            rc = fi_mr_enable(*mr);
        if (rc) {
            fi_close(&(*mr)->fid);
            *mr = NULL;
            return rc;
        }
    }
    if (key) {
        *key = fi_mr_key(*mr);
        if (*key == FI_KEY_NOTAVAIL) {
            fi_close(&(*mr)->fid);
            *mr = NULL;
            return -FI_ENOSYS;
        }
    }
    return 0;
}

int weft__ofi_mr_init(weft_driver_t *d)
{
    d->nmr_slots =
        (int)WEFT_MIN(WEFT_MAX(weft__param_size("WEFT_OFI_MR_CACHE", 64), 1ull), 4096ull);
    d->mrs = calloc((size_t)d->nmr_slots, sizeof *d->mrs);
    return d->mrs ? 0 : -FI_ENOMEM;
}

static void slot_close(ofi_mr_t *m)
{
    if (m->mr)
        fi_close(&m->mr->fid);
    memset(m, 0, sizeof *m);
}

void weft__ofi_mr_fini(weft_driver_t *d)
{
    for (int i = 0; d->mrs && i < d->nmr_slots; i++)
        slot_close(&d->mrs[i]);
    free(d->mrs);
    d->mrs = NULL;
}

/* A slot for a new registration: a free one, else the least recently used
 * idle one, else a larger table (every entry held: transfers in flight). */
static int free_slot(weft_driver_t *d)
{
    int lru = -1;
    for (int i = 0; i < d->nmr_slots; i++) {
        ofi_mr_t *m = &d->mrs[i];
        if (!m->mr)
            return i;
        if (m->refs == 0 && (lru < 0 || m->used < d->mrs[lru].used))
            lru = i;
    }
    if (lru >= 0) {
        slot_close(&d->mrs[lru]);
        return lru;
    }
    int n = d->nmr_slots * 2;
    ofi_mr_t *grown = realloc(d->mrs, sizeof *grown * (size_t)n);
    if (!grown)
        return WEFT_ENOMEM;
    memset(grown + d->nmr_slots, 0, sizeof *grown * (size_t)(n - d->nmr_slots));
    d->mrs = grown;
    int slot = d->nmr_slots;
    d->nmr_slots = n;
    return slot;
}

int weft__ofi_mr_get(weft_driver_t *d, const void *buf, size_t len)
{
    uintptr_t lo = (uintptr_t)buf & ~(uintptr_t)(PAGE - 1);
    uintptr_t hi = ((uintptr_t)buf + len + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
    for (int i = 0; i < d->nmr_slots; i++) {
        ofi_mr_t *m = &d->mrs[i];
        if (m->mr && m->base <= lo && hi <= m->base + m->len) {
            m->refs++;
            m->used = ++d->mr_clock;
            return i;
        }
    }
    int slot = free_slot(d);
    if (slot < 0)
        return slot;
    ofi_mr_t *m = &d->mrs[slot];
    int rc = weft__ofi_reg(d, (void *)lo, hi - lo, FI_READ | FI_REMOTE_READ, &m->mr, &m->key);
    if (rc) {
        weft_log_warn("ofi: cannot register %zu bytes: %s", (size_t)(hi - lo),
                      weft__fi.strerror(-rc));
        m->mr = NULL;
        return weft__ofi_status(rc) == WEFT_ENOMEM ? WEFT_ENOMEM : WEFT_EPERM;
    }
    m->base = lo;
    m->len = hi - lo;
    m->desc = fi_mr_desc(m->mr);
    m->refs = 1;
    m->used = ++d->mr_clock;
    return slot;
}

void weft__ofi_mr_put(weft_driver_t *d, int slot)
{
    ofi_mr_t *m = &d->mrs[slot];
    if (--m->refs == 0 && d->mr_pins)
        slot_close(m);
}

int weft__ofi_expose(weft_driver_t *d, const void *buf, size_t len, weft_rkey_t *rkey)
{
    if (!d->rma)
        return WEFT_EUNSUPPORTED;
    weft_lock_acquire(&d->lock);
    int slot = weft__ofi_mr_get(d, buf, len);
    ofi_rkey_t k = {0};
    if (slot >= 0) {
        ofi_mr_t *m = &d->mrs[slot];
        k.addr = d->mr_virt ? (uint64_t)(uintptr_t)buf : (uint64_t)((uintptr_t)buf - m->base);
        k.key = m->key;
        k.len = len;
        k.slot = (uint32_t)slot;
    }
    weft_lock_release(&d->lock);
    if (slot < 0)
        return slot;
    memset(rkey, 0, sizeof *rkey);
    rkey->len = sizeof k;
    memcpy(rkey->bytes, &k, sizeof k);
    return WEFT_OK;
}

void weft__ofi_unexpose(weft_driver_t *d, const weft_rkey_t *rkey)
{
    ofi_rkey_t k;
    if (rkey->len != sizeof k)
        return;
    memcpy(&k, rkey->bytes, sizeof k);
    weft_lock_acquire(&d->lock);
    if (k.slot < (uint32_t)d->nmr_slots && d->mrs[k.slot].mr && d->mrs[k.slot].key == k.key &&
        d->mrs[k.slot].refs > 0)
        weft__ofi_mr_put(d, (int)k.slot);
    weft_lock_release(&d->lock);
}

/* Largest read one sub-read asks for. */
static size_t max_read(const weft_driver_t *d)
{
    return WEFT_MIN(d->info->ep_attr->max_msg_size, (size_t)1 << 30);
}

/* Cut the local iovec into sub-reads of at most rma_iov_limit entries and
 * max_read bytes each; fill subs when given. Returns how many. */
static int cut(const weft_driver_t *d, const struct iovec *local, int iovcnt, ofi_sub_t *subs)
{
    size_t cap = max_read(d);
    int n = 0;
    ofi_sub_t *s = NULL, scratch; /* counting only: every sub-read in scratch */
    for (int i = 0; i < iovcnt; i++) {
        size_t off = 0;
        while (off < local[i].iov_len) {
            if (!s || s->iovcnt == d->rma_iov_limit || s->len == cap) {
                s = subs ? &subs[n] : &scratch;
                s->iovcnt = 0;
                s->len = 0;
                n++;
            }
            size_t part = WEFT_MIN(local[i].iov_len - off, cap - s->len);
            s->iov[s->iovcnt].iov_base = (uint8_t *)local[i].iov_base + off;
            s->iov[s->iovcnt].iov_len = part;
            s->iovcnt++;
            s->len += part;
            off += part;
        }
    }
    return n;
}

/* Post one sub-read; -FI_EAGAIN queues it for weft__ofi_retry. */
static int post_read(weft_driver_t *d, ofi_sub_t *s)
{
    ofi_read_t *r = s->parent;
    ssize_t rc = fi_readv(d->ep, s->iov, s->desc, (size_t)s->iovcnt, r->track->addr, s->raddr,
                          r->key, &s->c);
    if (rc == -FI_EAGAIN) {
        weft_list_push_back(&d->retry, &s->link);
        d->nretry++;
        return 0;
    }
    return (int)rc;
}

static void read_free(weft_driver_t *d, ofi_read_t *r)
{
    for (int i = 0; i < r->nmr; i++)
        weft__ofi_mr_put(d, r->mrs[i]);
    free(r);
}

int weft__ofi_rget(weft_track_t *t, const struct iovec *local, int iovcnt, const weft_rkey_t *rkey,
                   uint64_t offset, size_t len, void *cookie)
{
    weft_driver_t *d = t->driver;
    if (t->lost)
        return WEFT_EPEERDEAD;
    ofi_rkey_t k;
    if (!d->rma || iovcnt < 0 || weft__ofi_rkey_decode(rkey, offset, len, &k) != WEFT_OK)
        return WEFT_EINVAL;
    size_t total = 0;
    for (int i = 0; i < iovcnt; i++)
        total += local[i].iov_len;
    if (total != len)
        return WEFT_EINVAL;
    if (len == 0)
        return WEFT_OK;
    if (d->mr_local && iovcnt > OFI_READ_MRS)
        return WEFT_EPERM; /* the engine takes its copy path */
    int nsub = cut(d, local, iovcnt, NULL);
    ofi_read_t *r = calloc(1, sizeof *r + sizeof(ofi_sub_t) * (size_t)nsub);
    if (!r)
        return WEFT_ENOMEM;
    r->track = t;
    r->cookie = cookie;
    r->key = k.key;
    r->nsub = r->left = nsub;
    cut(d, local, iovcnt, r->sub);
    int rc = 0;
    weft_lock_acquire(&d->lock);
    if (d->mr_local) {
        /* Local buffers need descriptors: one registration per entry, held
         * until the read is done. */
        for (int i = 0; i < iovcnt && rc == 0; i++) {
            if (!local[i].iov_len)
                continue;
            int slot = weft__ofi_mr_get(d, local[i].iov_base, local[i].iov_len);
            if (slot < 0)
                rc = slot;
            else
                r->mrs[r->nmr++] = slot;
        }
    }
    if (rc) {
        read_free(d, r);
        weft_lock_release(&d->lock);
        return rc;
    }
    uint64_t raddr = k.addr + offset;
    for (int i = 0; i < nsub; i++) {
        ofi_sub_t *s = &r->sub[i];
        s->c.kind = OFI_OP_READ;
        s->parent = r;
        weft_list_init(&s->link);
        s->raddr = raddr;
        raddr += s->len;
        for (int j = 0; j < s->iovcnt && d->mr_local; j++)
            for (int m = 0; m < r->nmr; m++) {
                ofi_mr_t *mr = &d->mrs[r->mrs[m]];
                uintptr_t p = (uintptr_t)s->iov[j].iov_base;
                if (mr->base <= p && p + s->iov[j].iov_len <= mr->base + mr->len) {
                    s->desc[j] = mr->desc;
                    break;
                }
            }
    }
    for (int i = 0; i < nsub; i++) {
        if ((rc = post_read(d, &r->sub[i])) != 0) {
            /* Those posted complete on their own; the rest never will. */
            weft_log_debug("ofi: fi_readv of %zu bytes: %s", r->sub[i].len, weft__fi.strerror(-rc));
            if (i == 0) {
                read_free(d, r);
                weft_lock_release(&d->lock);
                return weft__ofi_status(rc);
            }
            r->status = weft__ofi_status(rc);
            r->left -= nsub - i;
            break;
        }
    }
    weft_list_push_back(&t->reads, &r->link);
    weft_lock_release(&d->lock);
    return WEFT_INPROGRESS;
}

void weft__ofi_retry(weft_driver_t *d)
{
    weft_lock_acquire(&d->lock);
    while (!weft_list_empty(&d->retry)) {
        ofi_sub_t *s = weft_list_entry(d->retry.next, ofi_sub_t, link);
        weft_list_remove(&s->link);
        d->nretry--;
        int rc = post_read(d, s);
        if (!weft_list_empty(&s->link))
            break; /* queued again: no room yet */
        if (rc) {
            weft_lock_release(&d->lock);
            weft__ofi_read_done(d, s, weft__ofi_status(rc));
            weft_lock_acquire(&d->lock);
        }
    }
    weft_lock_release(&d->lock);
}

void weft__ofi_read_done(weft_driver_t *d, ofi_sub_t *s, int status)
{
    ofi_read_t *r = s->parent;
    if (status && !r->status)
        r->status = status;
    if (--r->left > 0)
        return;
    weft_lock_acquire(&d->lock);
    weft_list_remove(&r->link);
    bool tell = !r->orphan;
    weft_track_t *t = r->track;
    void *cookie = r->cookie;
    int st = r->status;
    read_free(d, r);
    weft_lock_release(&d->lock);
    if (tell)
        d->up.rget_done(d->up.owner, t->peer_cookie, cookie, st);
}

void weft__ofi_reads_orphan(weft_driver_t *d, weft_track_t *t, bool tell)
{
    while (!weft_list_empty(&t->reads)) {
        ofi_read_t *r = weft_list_entry(t->reads.next, ofi_read_t, link);
        void *cookie = r->cookie;
        weft_lock_acquire(&d->lock);
        weft_list_remove(&r->link);
        /* Sub-reads still waiting for room are never posted now. */
        for (int i = 0; i < r->nsub; i++)
            if (!weft_list_empty(&r->sub[i].link)) {
                weft_list_remove(&r->sub[i].link);
                d->nretry--;
                r->left--;
            }
        r->orphan = true;
        r->track = NULL;
        if (r->left == 0)
            read_free(d, r);
        else
            weft_list_push_back(&d->orphans, &r->link);
        weft_lock_release(&d->lock);
        if (tell)
            d->up.rget_done(d->up.owner, t->peer_cookie, cookie, WEFT_EPEERDEAD);
    }
}

void weft__ofi_reads_free(weft_driver_t *d)
{
    while (!weft_list_empty(&d->retry)) {
        weft_list_t *e = d->retry.next;
        weft_list_remove(e);
    }
    d->nretry = 0;
    while (!weft_list_empty(&d->orphans)) {
        ofi_read_t *r = weft_list_entry(d->orphans.next, ofi_read_t, link);
        weft_list_remove(&r->link);
        read_free(d, r);
    }
}
