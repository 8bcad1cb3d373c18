/* The shm driver: processes of one node talk through per-peer rings in shared
 * memory, and read each other's large buffers with one copy (CMA,
 * process_vm_readv; see shm_cma.c). README.md in this directory has the design.
 *
 * Every process creates one segment, /weft-<job>-<rank>, that holds one receive
 * ring per rank of the node; ring i is written only by the rank whose node index is
 * i. A process thus only reads its own segment and only writes its own ring in
 * each peer's segment: every ring has one producer and one consumer, so no locks
 * and no atomic read-modify-write are needed anywhere. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "drivers/driver.h"
#include "drivers/shm/shm_int.h"
#include "drivers/shm/shm_ring.h"
#include "util/log.h"
#include "util/param.h"
#include "util/util.h"

#define SHM_POLL_BATCH  32 /* records delivered per ring per poll: no peer starves others */
#define SHM_RDV_DEFAULT (32u << 10) /* measured: a 32 KiB eager copy beats a rendezvous */

/* ---- Identity of the node: who may share memory with us ------------------------- */

static uint64_t fnv1a(const void *p, size_t n, uint64_t h)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) {
        h ^= c[i];
        h *= 0x100000001b3ull;
    }
    return h;
}
#define FNV_INIT 0xcbf29ce484222325ull

static uint64_t boot_hash(void)
{
    char buf[64];
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    return n > 0 ? fnv1a(buf, (size_t)n, FNV_INIT) : 0;
}

static uint64_t host_hash(void)
{
    char buf[256];
    if (gethostname(buf, sizeof buf) != 0)
        return 0;
    buf[sizeof buf - 1] = 0;
    return fnv1a(buf, strlen(buf), FNV_INIT);
}

static uint64_t pidns_id(void)
{
    struct stat st;
    if (stat("/proc/self/ns/pid", &st) != 0)
        return 0;
    return ((uint64_t)st.st_dev << 32) ^ (uint64_t)st.st_ino;
}

/* /weft-<job>-<rank>; a job id that is long or has characters a shm name should
 * not hold is replaced by its hash, so any job id gives a valid, unique name. */
static void segment_name(char *out, size_t n, const char *job_id, int rank)
{
    if (weft__name_plain(job_id, 48))
        snprintf(out, n, "/weft-%s-%d", job_id, rank);
    else
        snprintf(out, n, "/weft-h%016llx-%d",
                 (unsigned long long)fnv1a(job_id, strlen(job_id), FNV_INIT), rank);
}

static uint64_t random_word(void)
{
    uint64_t v = 0;
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) != (ssize_t)sizeof v)
        v = weft__now_ns() ^ ((uint64_t)getpid() << 32);
    return v | 1; /* never 0, which a fresh page would read */
}

/* With Yama's ptrace_scope=1 (Ubuntu's default) a process may only read the memory
 * of its descendants, so CMA between sibling ranks fails. Declaring any process of
 * the same user an allowed tracer is what the kernel offers for this (Open MPI's
 * CMA path does the same); it widens nothing beyond same-uid processes. */
static void allow_cma_peers(void)
{
    char c = 0;
    int fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, &c, 1);
    close(fd);
    if (n == 1 && c == '1') {
        if (prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0) != 0)
            weft_log_info("shm: prctl(PR_SET_PTRACER) failed: %s; CMA may be refused",
                          strerror(errno));
    }
}

static uint64_t ring_size_param(void)
{
    uint64_t r = weft__param_size("WEFT_SHM_RING", 256u << 10);
    uint64_t p = SHM_RING_MIN;
    while (p < r && p < SHM_RING_MAX)
        p <<= 1;
    if (p != r)
        weft_log_warn("shm: WEFT_SHM_RING=%llu is not a power of two in [%u, %u]; using %llu",
                      (unsigned long long)r, SHM_RING_MIN, SHM_RING_MAX, (unsigned long long)p);
    return p;
}

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

/* ---- Losing a peer ---------------------------------------------------------------- */

static void active_remove(weft_driver_t *d, weft_track_t *t)
{
    int i = t->active_at;
    if (i < 0)
        return;
    weft_track_t *last = d->active[--d->nactive];
    d->active[i] = last;
    last->active_at = i;
    d->active[d->nactive] = NULL;
    t->active_at = -1;
}

/* Report the peer lost, once. The upcall may disconnect the track: the caller must
 * not touch t afterwards. */
static void lose_peer(weft_driver_t *d, weft_track_t *t, int status)
{
    if (t->lost)
        return;
    t->lost = 1;
    atomic_store_explicit(&t->dead, 1, memory_order_relaxed);
    active_remove(d, t);
    weft__shm_bell_forget(d, t);
    if (status == WEFT_EPROTO)
        weft_log_warn("shm: malformed data from rank %d: dropping it", t->peer_rank);
    else
        weft_log_info("shm: rank %d (pid %d) is gone", t->peer_rank, (int)t->pid);
    d->up.peer_lost(d->up.owner, t->peer_cookie, status);
}

/* ---- Receiving -------------------------------------------------------------------- */

/* Deliver up to budget records of t's ring. Returns the packets delivered; *gone is
 * set when the peer was reported lost (t must not be used then). */
static int rx_drain(weft_driver_t *d, weft_track_t *t, int budget, int *gone)
{
    shm_slot_t *slots = t->rx_slots;
    const uint64_t mask = t->rx_mask;
    const uint64_t nslots = mask + 1;
    uint64_t head = t->rx_head;
    int n = 0, bad = 0;

    for (int visits = 0; visits < budget; visits++) {
        uint64_t pos = head & mask;
        shm_slot_t *s = &slots[pos];
        if (atomic_load_explicit(&s->flag, memory_order_acquire) != shm_ring_flag(head))
            break;
        uint32_t len = atomic_load_explicit(&s->length, memory_order_relaxed);
        if (len == SHM_LEN_SKIP) {
            atomic_store_explicit(&s->flag, 0, memory_order_relaxed);
            head += nslots - pos;
            continue;
        }
        uint64_t need = shm_rec_slots(len);
        if (WEFT_UNLIKELY(len < SHM_REC_HDR || len - SHM_REC_HDR > t->rx_max_packet ||
                          pos + need > nslots)) {
            bad = 1;
            break;
        }
        int rc = d->up.packet(d->up.owner, t->peer_cookie, s->data, len - SHM_REC_HDR);
        for (uint64_t k = 0; k < need; k++)
            atomic_store_explicit(&slots[pos + k].flag, 0, memory_order_relaxed);
        head += need;
        n++;
        if (WEFT_UNLIKELY(rc < 0)) {
            bad = 1;
            break;
        }
    }
    if (head != t->rx_head) {
        t->rx_head = head;
        shm_publish_tail(t, head);
    }
    if (WEFT_UNLIKELY(bad)) {
        *gone = 1;
        lose_peer(d, t, WEFT_EPROTO);
    }
    return n;
}

/* The peer's process ended: deliver what it wrote before dying, then report it. */
static int peer_died(weft_driver_t *d, weft_track_t *t)
{
    int n = 0, gone = 0, got;
    uint64_t bound = t->rx_mask + 1; /* a dead writer cannot write more than one ring */
    do {
        got = rx_drain(d, t, (int)WEFT_MIN(bound, (uint64_t)INT_MAX), &gone);
        n += got;
    } while (got > 0 && !gone && --bound > 0);
    if (!gone)
        lose_peer(d, t, WEFT_EPEERDEAD);
    return n;
}

static int check_peers(weft_driver_t *d)
{
    uint64_t now = weft__now_ns();
    if (now < d->next_check_ns)
        return 0;
    d->next_check_ns = now + d->check_interval_ns;

    int npfd = 0, n = 0;
    for (int i = 0; i < d->node_size; i++) {
        weft_track_t *t = d->by_index[i];
        if (!t || t->lost)
            continue;
        if (t->pidfd >= 0) {
            d->pfds[npfd] = (struct pollfd){.fd = t->pidfd, .events = POLLIN};
            d->pfd_index[npfd++] = i;
        } else if (kill(t->pid, 0) != 0 && errno == ESRCH) {
            n += peer_died(d, t);
        }
    }
    if (npfd == 0)
        return n;
    /* A pidfd turns readable when its process exits (zombie included), and names
     * that process only: no confusion with a recycled pid. */
    int r = poll(d->pfds, (nfds_t)npfd, 0);
    if (r <= 0)
        return n;
    for (int k = 0; k < npfd; k++) {
        if (!d->pfds[k].revents)
            continue;
        weft_track_t *t = d->by_index[d->pfd_index[k]];
        if (t && !t->lost)
            n += peer_died(d, t);
    }
    return n;
}

/* Whether t's ring holds a record at its head. */
static inline bool rx_ready(const weft_track_t *t)
{
    const shm_slot_t *s = &t->rx_slots[t->rx_head & t->rx_mask];
    return atomic_load_explicit(&s->flag, memory_order_relaxed) == shm_ring_flag(t->rx_head);
}

/* The work of a poll, from active track i on (the first with a record), and
 * the liveness check when it is due. Out of line, so that an empty poll (a
 * waiter spins on them) saves no registers and makes no frame. */
static WEFT_NOINLINE int poll_work(weft_driver_t *d, int i)
{
    int n = 0;
    for (; i < d->nactive; i++) {
        weft_track_t *t = d->active[i];
        if (!rx_ready(t))
            continue;
        int gone = 0;
        n += rx_drain(d, t, SHM_POLL_BATCH, &gone);
        if (gone)
            i--; /* the array was compacted: slot i now holds another track */
    }
    if (WEFT_UNLIKELY(++d->polls >= SHM_CHECK_EVERY)) {
        d->polls = 0;
        n += check_peers(d);
    }
    return n;
}

static inline int poll_scan(weft_driver_t *d)
{
    for (int i = 0; i < d->nactive; i++)
        if (rx_ready(d->active[i]))
            return poll_work(d, i);
    if (WEFT_UNLIKELY(d->polls + 1 >= SHM_CHECK_EVERY))
        return poll_work(d, d->nactive);
    d->polls++;
    return 0;
}

/* A poll where a doorbell may be armed: disarm it first. */
static WEFT_NOINLINE int poll_disarm(weft_driver_t *d)
{
    shm_bell_disarm(d);
    return poll_scan(d);
}

static int shm_poll(weft_driver_t *d)
{
    if (WEFT_UNLIKELY(d->asleep != NULL))
        return poll_disarm(d);
    return poll_scan(d);
}

/* A ring has no doorbell of its own: shm_bell.c adds one. */
static int shm_wait_fd(weft_driver_t *d)
{
    return weft__shm_bell_wait_fd(d);
}

/* ---- Sending ---------------------------------------------------------------------- */

static int shm_send(weft_track_t *t, const struct iovec *iov, int iovcnt, void *send_cookie)
{
    (void)send_cookie;
    if (WEFT_UNLIKELY(atomic_load_explicit(&t->dead, memory_order_relaxed)))
        return WEFT_EPEERDEAD;
    size_t total;
    if (WEFT_LIKELY(iovcnt == 1)) {
        total = iov[0].iov_len;
    } else {
        if (iovcnt < 0 || iovcnt > SHM_MAX_IOV || (iovcnt > 0 && !iov))
            return WEFT_EINVAL;
        total = 0;
        for (int i = 0; i < iovcnt; i++) {
            if (iov[i].iov_len > t->max_packet - total)
                return WEFT_EINVAL;
            total += iov[i].iov_len;
        }
    }
    if (WEFT_UNLIKELY(total > t->max_packet))
        return WEFT_EINVAL;
    bool bell = t->peer_asleep != NULL;
    int rc = shm_ring_write(t, iov, iovcnt, total, bell);
    if (WEFT_UNLIKELY(bell) && rc == WEFT_OK)
        shm_bell_after_send(t);
    else if (rc == WEFT_EAGAIN && t->driver->bell_ep >= 0)
        weft__shm_bell_full(t); /* a sleeper of ours needs a ring for room */
    return rc;
}

/* ---- Setup ------------------------------------------------------------------------ */

static int shm_init(const weft_driver_params_t *p, const weft_driver_upcalls_t *up,
                    weft_driver_t **out)
{
    if (!p || !up || !out || !up->packet || !up->peer_lost || !p->job_id || !p->node_ranks ||
        p->node_size < 1 || p->node_size > SHM_NODE_MAX || p->node_index < 0 ||
        p->node_index >= p->node_size || p->node_ranks[p->node_index] != p->rank) {
        weft_log_error("shm: invalid init parameters");
        return WEFT_EINVAL;
    }
    for (int i = 1; i < p->node_size; i++) {
        if (p->node_ranks[i] <= p->node_ranks[i - 1]) {
            weft_log_error("shm: node ranks are not ascending");
            return WEFT_EINVAL;
        }
    }

    int rc = WEFT_ENOMEM;
    weft_driver_t *d = NULL;
    if (posix_memalign((void **)&d, WEFT_CACHELINE, sizeof *d) != 0)
        return WEFT_ENOMEM;
    memset(d, 0, sizeof *d);
    d->up = *up;
    d->doorbell = p->doorbell;
    d->rank = p->rank;
    d->node_index = p->node_index;
    d->node_size = p->node_size;
    d->ring_bytes = ring_size_param();
    d->cma_enabled = weft__param_size("WEFT_SHM_CMA", 1) != 0;
    d->rdv_threshold = (size_t)weft__param_size("WEFT_RDV_THRESHOLD", SHM_RDV_DEFAULT);
    uint64_t ms = weft__param_size("WEFT_PEER_CHECK_MS", 200);
    d->check_interval_ns = WEFT_MIN(ms, (uint64_t)3600000) * 1000000ull;
    size_t ns = (size_t)p->node_size;
    d->node_ranks = malloc(ns * sizeof *d->node_ranks);
    d->by_index = calloc(ns, sizeof *d->by_index);
    d->active = calloc(ns, sizeof *d->active);
    d->pfds = calloc(ns, sizeof *d->pfds);
    d->pfd_index = calloc(ns, sizeof *d->pfd_index);
    if (!d->node_ranks || !d->by_index || !d->active || !d->pfds || !d->pfd_index)
        goto err_free;
    memcpy(d->node_ranks, p->node_ranks, ns * sizeof *d->node_ranks);

    segment_name(d->name, sizeof d->name, p->job_id, p->rank);
    uint64_t seg_size = shm_seg_size((uint32_t)ns, d->ring_bytes);
    if (seg_size > (uint64_t)SIZE_MAX / 2) {
        weft_log_error("shm: segment of %llu bytes is too large", (unsigned long long)seg_size);
        goto err_free;
    }
    int fd = shm_open(d->name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        weft_log_error("shm: shm_open(%s): %s%s", d->name, strerror(errno),
                       errno == EEXIST ? " (left by a crashed job with the same id?)" : "");
        rc = WEFT_ESYS;
        goto err_free;
    }
    if (ftruncate(fd, (off_t)seg_size) != 0) {
        weft_log_error("shm: ftruncate(%s, %llu): %s", d->name, (unsigned long long)seg_size,
                       strerror(errno));
        rc = WEFT_ESYS;
        goto err_unlink;
    }
    /* Reserve the pages now: a full /dev/shm then fails here with a status instead
     * of killing a writer with SIGBUS later. */
    int err = posix_fallocate(fd, 0, (off_t)seg_size);
    if (err == ENOSPC || err == ENOMEM) {
        weft_log_error("shm: cannot reserve %llu bytes in /dev/shm for %s: %s",
                       (unsigned long long)seg_size, d->name, strerror(err));
        rc = WEFT_ENOMEM;
        goto err_unlink;
    }
    d->seg = mmap(NULL, (size_t)seg_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (d->seg == MAP_FAILED) {
        d->seg = NULL;
        weft_log_error("shm: mmap(%s): %s", d->name, strerror(errno));
        rc = WEFT_ESYS;
        goto err_unlink;
    }
    close(fd);
    fd = -1;
    d->seg_size = (size_t)seg_size;

    shm_seg_hdr_t *h = d->seg;
    h->version = SHM_SEG_VERSION;
    h->node_size = (uint32_t)ns;
    h->node_index = (uint32_t)p->node_index;
    h->ring_bytes = d->ring_bytes;
    h->seg_size = seg_size;
    h->rank = p->rank;
    h->pid = (int32_t)getpid();
    h->probe = random_word();
    weft__shm_bell_open(d, h, (shm_bell_line_t *)((char *)d->seg + shm_bell_offset((uint32_t)ns)));
    atomic_thread_fence(memory_order_release);
    h->magic = SHM_SEG_MAGIC;

    shm_addr_t *a = &d->addr;
    a->magic = SHM_ADDR_MAGIC;
    a->version = SHM_ADDR_VERSION;
    a->rank = p->rank;
    a->pid = (int32_t)getpid();
    a->node_size = (uint32_t)ns;
    a->node_index = (uint32_t)p->node_index;
    a->boot_hash = boot_hash();
    a->host_hash = host_hash();
    a->pidns = pidns_id();
    a->ring_bytes = d->ring_bytes;
    a->probe_addr = (uint64_t)(uintptr_t)&h->probe;
    memcpy(a->name, d->name, sizeof a->name);

    if (d->cma_enabled)
        allow_cma_peers();
    *out = d;
    return WEFT_OK;

err_unlink:
    close(fd);
    shm_unlink(d->name);
err_free:
    free(d->node_ranks);
    free(d->by_index);
    free(d->active);
    free(d->pfds);
    free(d->pfd_index);
    free(d);
    return rc;
}

static int shm_address(weft_driver_t *d, void *buf, size_t *len)
{
    if (!d || !buf || !len)
        return WEFT_EINVAL;
    if (*len < sizeof d->addr)
        return WEFT_ENOBUFS;
    memcpy(buf, &d->addr, sizeof d->addr);
    *len = sizeof d->addr;
    return WEFT_OK;
}

/* A blob comes from the bootstrap, so from anyone who could reach it: check every
 * field before acting on it. */
static int check_addr(weft_driver_t *d, int peer_rank, const shm_addr_t *a, int *index_out)
{
    if (a->magic != SHM_ADDR_MAGIC || a->version != SHM_ADDR_VERSION || a->rank != peer_rank ||
        a->pid <= 0 || a->ring_bytes < SHM_RING_MIN || a->ring_bytes > SHM_RING_MAX ||
        (a->ring_bytes & (a->ring_bytes - 1)) || !memchr(a->name, 0, sizeof a->name))
        return WEFT_EPROTO;
    /* Node identity first: a well-formed blob from another host is no protocol error,
     * just a peer this driver cannot reach. */
    if (a->boot_hash != d->addr.boot_hash || a->host_hash != d->addr.host_hash ||
        a->pidns != d->addr.pidns)
        return WEFT_EUNSUPPORTED;
    int index = -1;
    for (int i = 0; i < d->node_size; i++) {
        if (d->node_ranks[i] == peer_rank) {
            index = i;
            break;
        }
    }
    if (index < 0)
        return WEFT_EUNSUPPORTED;
    if (a->node_size != (uint32_t)d->node_size || a->node_index != (uint32_t)index)
        return WEFT_EPROTO;
    /* The name must be the one the job id gives for that rank: no path games.
     * Ours is "/weft-<job>-<our rank>"; swap the rank. */
    char expect[SHM_NAME_MAX];
    const char *dash = strrchr(d->name, '-');
    snprintf(expect, sizeof expect, "%.*s-%d", (int)(dash - d->name), d->name, peer_rank);
    if (strcmp(expect, a->name) != 0)
        return WEFT_EPROTO;
    *index_out = index;
    return WEFT_OK;
}

static int shm_connect(weft_driver_t *d, int peer_rank, const void *addr, size_t addrlen,
                       void *peer_cookie, weft_track_t **track_out, weft_track_caps_t *caps)
{
    if (!d || !track_out || !caps)
        return WEFT_EINVAL;
    int index = -1, rc = WEFT_EPROTO;
    shm_addr_t a;
    if (addr && addrlen == sizeof a) {
        memcpy(&a, addr, sizeof a);
        rc = check_addr(d, peer_rank, &a, &index);
    }
    if (rc == WEFT_EUNSUPPORTED) {
        weft_log_info("shm: rank %d is not on this node", peer_rank);
        return rc;
    }
    if (rc != WEFT_OK) {
        /* Whoever fed us one bad blob may feed many: warn once, then only at info. */
        if (!d->warned_addr) {
            d->warned_addr = 1;
            weft_log_warn("shm: malformed address for rank %d (%zu bytes)", peer_rank, addrlen);
        } else {
            weft_log_info("shm: malformed address for rank %d (%zu bytes)", peer_rank, addrlen);
        }
        return rc;
    }
    if (d->by_index[index]) {
        weft_log_warn("shm: rank %d is already connected", peer_rank);
        return WEFT_ESTATE;
    }

    uint32_t ns = (uint32_t)d->node_size;
    uint64_t seg_size = shm_seg_size(ns, a.ring_bytes);
    size_t hdr_len = (size_t)(SHM_PAGE + shm_ctl_region_size(ns));
    weft_track_t *t = NULL;
    if (posix_memalign((void **)&t, WEFT_CACHELINE, sizeof *t) != 0)
        return WEFT_ENOMEM;
    memset(t, 0, sizeof *t);
    t->pidfd = -1;
    t->active_at = -1;

    int fd = shm_open(a.name, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0) {
        /* Not in our /dev/shm (another container on the same kernel) or not ours. */
        int e = errno;
        rc = (e == ENOENT || e == EACCES) ? WEFT_EUNSUPPORTED : WEFT_ESYS;
        if (rc == WEFT_EUNSUPPORTED)
            weft_log_info("shm: cannot open %s of rank %d: %s", a.name, peer_rank, strerror(e));
        else
            weft_log_warn("shm: cannot open %s of rank %d: %s", a.name, peer_rank, strerror(e));
        goto err_free;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size != seg_size || st.st_uid != geteuid()) {
        weft_log_warn("shm: segment %s of rank %d has the wrong size or owner", a.name, peer_rank);
        rc = WEFT_EPROTO;
        goto err_close;
    }
    t->peer_hdr_len = hdr_len;
    t->peer_hdr_map = mmap(NULL, hdr_len, PROT_READ, MAP_SHARED, fd, 0);
    if (t->peer_hdr_map == MAP_FAILED) {
        t->peer_hdr_map = NULL;
        weft_log_warn("shm: mmap of %s: %s", a.name, strerror(errno));
        rc = WEFT_ESYS;
        goto err_close;
    }
    const shm_seg_hdr_t *h = t->peer_hdr_map;
    if (h->magic != SHM_SEG_MAGIC || h->version != SHM_SEG_VERSION || h->node_size != ns ||
        h->node_index != (uint32_t)index || h->ring_bytes != a.ring_bytes ||
        h->seg_size != seg_size || h->rank != peer_rank || h->pid != a.pid) {
        weft_log_warn("shm: segment %s does not match the address of rank %d", a.name, peer_rank);
        rc = WEFT_EPROTO;
        goto err_unmap;
    }
    t->peer_ring_len = (size_t)a.ring_bytes;
    t->peer_ring_map = mmap(NULL, t->peer_ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                            (off_t)shm_ring_offset(ns, a.ring_bytes, (uint32_t)d->node_index));
    if (t->peer_ring_map == MAP_FAILED) {
        t->peer_ring_map = NULL;
        weft_log_warn("shm: mmap of a ring of %s: %s", a.name, strerror(errno));
        rc = WEFT_ESYS;
        goto err_unmap;
    }
    t->peer_cells = mmap(NULL, WEFT_DRV_CELL_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                         (off_t)shm_cells_offset(ns, (uint32_t)d->node_index));
    if (t->peer_cells == MAP_FAILED) {
        t->peer_cells = NULL;
        weft_log_warn("shm: mmap of the cells of %s: %s", a.name, strerror(errno));
        rc = WEFT_ESYS;
        goto err_unmap;
    }
    t->peer_bells_len = (size_t)shm_bell_region_size(ns);
    t->peer_bells = mmap(NULL, t->peer_bells_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                         (off_t)shm_bell_offset(ns));
    if (t->peer_bells == MAP_FAILED) {
        t->peer_bells = NULL;
        weft_log_warn("shm: mmap of the bell region of %s: %s", a.name, strerror(errno));
        rc = WEFT_ESYS;
        goto err_unmap;
    }
    t->my_cells = (char *)d->seg + shm_cells_offset(ns, (uint32_t)index);
    close(fd);
    fd = -1;

    t->pid = (pid_t)a.pid;
    t->peer_rank = peer_rank;
    t->peer_index = index;
    t->peer_cookie = peer_cookie;
    t->driver = d;
    if (d->cma_enabled) {
        rc = weft__shm_cma_probe(t->pid, a.probe_addr, h->probe);
        if (rc == WEFT_EPEERDEAD)
            goto err_unmap;
        t->cma = rc == WEFT_OK;
    }
    t->pidfd = open_pidfd(t->pid); /* close-on-exec by the kernel's default */
    if (t->pidfd < 0) {
        if (errno == ESRCH) {
            rc = WEFT_EPEERDEAD;
            goto err_unmap;
        }
        t->pidfd = -1; /* kernel before 5.3: kill(pid, 0) instead */
    }
    rc = weft__shm_bell_connect(d, t, h);
    if (rc != WEFT_OK)
        goto err_unmap;

    /* Sending side: our ring in the peer's segment. Start where its reader is, so a
     * track closed and opened again (quiescent) continues the sequence. */
    const shm_ring_ctl_t *pctl = (const shm_ring_ctl_t *)((const char *)t->peer_hdr_map + SHM_PAGE);
    t->tx_slots = t->peer_ring_map;
    t->tx_tail = (_Atomic uint64_t *)&pctl[d->node_index].tail;
    t->tx_want = &t->peer_bells[1 + d->node_index].word;
    t->tx_mask = a.ring_bytes / SHM_SLOT - 1;
    t->tx_head = atomic_load_explicit(t->tx_tail, memory_order_acquire);
    t->tx_tail_cache = t->tx_head;
    t->max_packet = shm_max_packet(a.ring_bytes);

    /* Receiving side: the peer's ring in our segment. */
    shm_ring_ctl_t *ctl = (shm_ring_ctl_t *)((char *)d->seg + SHM_PAGE);
    t->rx_slots =
        (shm_slot_t *)((char *)d->seg + shm_ring_offset(ns, d->ring_bytes, (uint32_t)index));
    t->rx_tail = &ctl[index].tail;
    shm_bell_line_t *bells = (shm_bell_line_t *)((char *)d->seg + shm_bell_offset(ns));
    t->rx_want = &bells[1 + index].word;
    t->rx_mask = d->ring_bytes / SHM_SLOT - 1;
    t->rx_head = atomic_load_explicit(t->rx_tail, memory_order_relaxed);
    t->rx_max_packet = shm_max_packet(d->ring_bytes);

    d->by_index[index] = t;
    t->active_at = d->nactive;
    d->active[d->nactive++] = t;

    *caps = (weft_track_caps_t){
        .flags = WEFT_DRV_CAP_SEND_COPY | WEFT_DRV_CAP_SEND_MT |
                 (t->cma ? (WEFT_DRV_CAP_RGET | WEFT_DRV_CAP_RPUT | WEFT_DRV_CAP_CELLS) : 0),
        .max_packet = t->max_packet,
        .max_iov = SHM_MAX_IOV,
        .rdv_threshold = d->rdv_threshold,
        .latency_us = 0.1,
        .bandwidth_mbs = 10000.0,
    };
    *track_out = t;
    return WEFT_OK;

err_unmap:
    if (t->pidfd >= 0)
        close(t->pidfd);
    if (t->peer_bells)
        munmap(t->peer_bells, t->peer_bells_len);
    if (t->peer_cells)
        munmap(t->peer_cells, WEFT_DRV_CELL_BYTES);
    if (t->peer_ring_map)
        munmap(t->peer_ring_map, t->peer_ring_len);
    munmap(t->peer_hdr_map, t->peer_hdr_len);
err_close:
    if (fd >= 0)
        close(fd);
err_free:
    free(t);
    return rc;
}

/* Every rank has mapped every segment (the engine fenced): remove our name, so
 * nothing is left in /dev/shm whatever happens to this process from now on. */
static int shm_connected(weft_driver_t *d)
{
    if (!d)
        return WEFT_EINVAL;
    if (d->unlinked)
        return WEFT_OK;
    d->unlinked = 1;
    if (shm_unlink(d->name) != 0 && errno != ENOENT) {
        weft_log_warn("shm: shm_unlink(%s): %s", d->name, strerror(errno));
        return WEFT_ESYS;
    }
    return WEFT_OK;
}

static void shm_disconnect(weft_track_t *t)
{
    if (!t)
        return;
    weft_driver_t *d = t->driver;
    active_remove(d, t);
    if (d->by_index[t->peer_index] == t)
        d->by_index[t->peer_index] = NULL;
    weft__shm_bell_forget(d, t);
    if (t->pidfd >= 0)
        close(t->pidfd);
    munmap(t->peer_bells, t->peer_bells_len);
    munmap(t->peer_cells, WEFT_DRV_CELL_BYTES);
    munmap(t->peer_ring_map, t->peer_ring_len);
    munmap(t->peer_hdr_map, t->peer_hdr_len);
    free(t);
}

static void *shm_cells(weft_track_t *t, bool mine)
{
    return mine ? t->my_cells : t->peer_cells;
}

static void shm_fini(weft_driver_t *d)
{
    if (!d)
        return;
    for (int i = 0; i < d->node_size; i++) {
        if (d->by_index[i])
            shm_disconnect(d->by_index[i]);
    }
    if (!d->unlinked)
        shm_unlink(d->name);
    weft__shm_bell_close(d);
    if (d->seg)
        munmap(d->seg, d->seg_size);
    free(d->node_ranks);
    free(d->by_index);
    free(d->active);
    free(d->pfds);
    free(d->pfd_index);
    free(d);
}

/* The parameters this driver reads. */
static const weft_param_desc_t shm_params[] = {
    {"WEFT_SHM_RING", "256K", "bytes of each per-peer shared-memory ring"},
    {"WEFT_SHM_CMA", "1", "use single-copy process_vm_readv for large shm messages (0: copy path)"},
    {"WEFT_PEER_CHECK_MS", "200", "how often a waiting rank checks that its shm peers are alive"},
    {NULL, NULL, NULL},
};

const weft_driver_ops_t weft__driver_shm_ops = {
    .name = "shm",
    .description = "processes of one node: per-peer rings, single-copy CMA for large messages",
    .reach = WEFT_DRV_REACH_NODE,
    .preference = 10,
    .params = shm_params,
    .init = shm_init,
    .address = shm_address,
    .connect = shm_connect,
    .connected = shm_connected,
    .send = shm_send,
    .poll = shm_poll,
    .wait_fd = shm_wait_fd,
    .expose = weft__shm_expose,
    .unexpose = weft__shm_unexpose,
    .rget = weft__shm_rget,
    .rput = weft__shm_rput,
    .cells = shm_cells,
    .disconnect = shm_disconnect,
    .fini = shm_fini,
};
