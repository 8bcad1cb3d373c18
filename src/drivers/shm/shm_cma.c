/* Single-copy transfers between processes of one node: Cross Memory Attach
 * (process_vm_readv/writev, Linux 3.2). The receiver of a rendezvous reads the
 * sender's buffer straight into its own, one copy instead of two through a ring;
 * for large messages the sender writes part of it into the receiver's buffer at
 * the same time (rput), so two cores copy one message.
 *
 * Exposing a buffer costs nothing: its rkey just names {pid, address, length}.
 * The kernel checks that we may read that process (same user, ptrace rules), and
 * rget checks the range against the length the rkey carries, so a peer's rkey
 * can only make us read the region that peer exposed. */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/uio.h>

#include "drivers/driver.h"
#include "drivers/shm/shm_int.h"
#include "util/log.h"
#include "util/util.h"

#ifndef IOV_MAX
#define IOV_MAX 1024
#endif
#define CMA_MAX_IOV   IOV_MAX
#define CMA_MAX_CHUNK (1ull << 30) /* bytes per call: the kernel caps one call near 2 GiB */

static int errno_status(int e)
{
    switch (e) {
    case EPERM:
    case ENOSYS:
    case EACCES:
        return WEFT_EPERM;
    case ESRCH:
        return WEFT_EPEERDEAD;
    case EFAULT:
    case EINVAL:
        return WEFT_EINVAL;
    case ENOMEM:
        return WEFT_ENOMEM;
    default:
        return WEFT_ESYS;
    }
}

int weft__shm_cma_probe(pid_t pid, uint64_t addr, uint64_t expect)
{
    static atomic_int logged;
    uint64_t got = 0;
    struct iovec l = {.iov_base = &got, .iov_len = sizeof got};
    struct iovec r = {.iov_base = (void *)(uintptr_t)addr, .iov_len = sizeof got};
    ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);
    if (n == (ssize_t)sizeof got && got == expect)
        return WEFT_OK;
    int e = n < 0 ? errno : 0;
    if (e == ESRCH)
        return WEFT_EPEERDEAD;
    if (!atomic_exchange_explicit(&logged, 1, memory_order_relaxed))
        weft_log_info("shm: single-copy (CMA) unavailable towards pid %d: %s; using the copy path",
                      (int)pid, n < 0 ? strerror(e) : "probe mismatch");
    return n < 0 ? errno_status(e) : WEFT_EPROTO;
}

int weft__shm_expose(weft_driver_t *d, const void *buf, size_t len, weft_rkey_t *rkey)
{
    if (!d || !rkey || (!buf && len))
        return WEFT_EINVAL;
    shm_rkey_t k = {
        .magic = SHM_RKEY_MAGIC,
        .pid = d->addr.pid,
        .addr = (uint64_t)(uintptr_t)buf,
        .len = (uint64_t)len,
    };
    memset(rkey, 0, sizeof *rkey);
    memcpy(rkey->bytes, &k, sizeof k);
    rkey->len = sizeof k;
    return WEFT_OK;
}

void weft__shm_unexpose(weft_driver_t *d, const weft_rkey_t *rkey)
{
    (void)d; /* nothing was registered */
    (void)rkey;
}

/* Copy between a local iovec and [offset, offset+len) of a peer's exposed
 * region: a read (rget) or a write (rput), the same walk either way. */
static int cma_copy(weft_track_t *t, const struct iovec *local, int iovcnt, const weft_rkey_t *rkey,
                    uint64_t offset, size_t len, bool write)
{
    if (!t || !rkey)
        return WEFT_EINVAL;
    if (atomic_load_explicit(&t->dead, memory_order_relaxed))
        return WEFT_EPEERDEAD;
    if (!t->cma)
        return WEFT_EPERM;
    shm_rkey_t k;
    if (rkey->len != sizeof k)
        return WEFT_EINVAL;
    memcpy(&k, rkey->bytes, sizeof k);
    if (k.magic != SHM_RKEY_MAGIC || k.pid != (int32_t)t->pid || k.addr + k.len < k.addr ||
        offset > k.len || len > k.len - offset)
        return WEFT_EINVAL;
    if (iovcnt < 0 || (iovcnt > 0 && !local))
        return WEFT_EINVAL;
    size_t room = 0;
    for (int i = 0; i < iovcnt && room < len; i++)
        room += local[i].iov_len;
    if (room < len)
        return WEFT_EINVAL;

    /* Walk the local iovec, at most CMA_MAX_IOV entries and CMA_MAX_CHUNK bytes per
     * call; a call may also stop short (a fault, a signal): continue from there. */
    struct iovec lv[CMA_MAX_IOV];
    uint64_t remote = k.addr + offset;
    size_t done = 0;
    int idx = 0;
    size_t skip = 0; /* bytes of local[idx] already filled */
    while (done < len) {
        size_t want = WEFT_MIN(len - done, (size_t)CMA_MAX_CHUNK);
        size_t got = 0;
        int n = 0;
        for (int i = idx; i < iovcnt && n < CMA_MAX_IOV && got < want; i++) {
            size_t off = (i == idx) ? skip : 0;
            size_t l = WEFT_MIN(local[i].iov_len - off, want - got);
            if (!l)
                continue;
            lv[n].iov_base = (char *)local[i].iov_base + off;
            lv[n].iov_len = l;
            got += l;
            n++;
        }
        struct iovec rv = {.iov_base = (void *)(uintptr_t)(remote + done), .iov_len = got};
        ssize_t r = write ? process_vm_writev(t->pid, lv, (unsigned long)n, &rv, 1, 0)
                          : process_vm_readv(t->pid, lv, (unsigned long)n, &rv, 1, 0);
        const char *call = write ? "process_vm_writev to" : "process_vm_readv from";
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            int st = errno_status(e);
            if (st != WEFT_EPEERDEAD && st != WEFT_EPERM)
                weft_log_warn("shm: %s rank %d: %s", call, t->peer_rank, strerror(e));
            return st;
        }
        if (r == 0) {
            weft_log_warn("shm: %s rank %d made no progress", call, t->peer_rank);
            return WEFT_ESYS;
        }
        done += (size_t)r;
        /* Advance the local cursor by r bytes. */
        size_t adv = (size_t)r;
        while (adv > 0) {
            size_t left = local[idx].iov_len - skip;
            if (adv < left) {
                skip += adv;
                adv = 0;
            } else {
                adv -= left;
                idx++;
                skip = 0;
            }
        }
    }
    return WEFT_OK;
}

int weft__shm_rget(weft_track_t *t, const struct iovec *local, int iovcnt, const weft_rkey_t *rkey,
                   uint64_t offset, size_t len, void *op_cookie)
{
    (void)op_cookie;
    return cma_copy(t, local, iovcnt, rkey, offset, len, false);
}

int weft__shm_rput(weft_track_t *t, const struct iovec *local, int iovcnt, const weft_rkey_t *rkey,
                   uint64_t offset, size_t len, void *op_cookie)
{
    (void)op_cookie;
    return cma_copy(t, local, iovcnt, rkey, offset, len, true);
}
