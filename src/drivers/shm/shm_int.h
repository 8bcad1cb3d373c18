/* Private types of the shm driver: the layout of a process's shared segment,
 * the address blob, and the driver and track objects. See README.md here. */
#ifndef WEFT_SHM_INT_H
#define WEFT_SHM_INT_H

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include "drivers/driver.h"
#include "util/util.h"

/* ---- Segment layout ------------------------------------------------------------
 *
 *   page 0                  shm_seg_hdr_t (identity, geometry, CMA probe word)
 *   ctl region (pages)      node_size x shm_ring_ctl_t: the reader's tail of ring i
 *   bell region (pages)     1 + node_size x shm_bell_line_t: the owner's asleep word,
 *                           then want_room of ring i (shm_bell.c); the only part of
 *                           the header and control pages that peers map writable
 *   cells region            node_size x WEFT_DRV_CELL_BYTES: block i is shared with the
 *                           rank of node_index i, which maps it read-write (cells())
 *   ring 0 .. node_size-1   ring_bytes of 64-byte slots each, page aligned;
 *                           ring i is written only by the rank of node_index i
 */
#define SHM_SEG_MAGIC   0x4d485357u /* "WSHM" */
#define SHM_SEG_VERSION 4u
#define SHM_PAGE        4096u
#define SHM_CTL_SIZE    128u /* two cache lines: keeps the adjacent-line prefetcher off */
#define SHM_BELL_NAME   16u  /* room for an autobound abstract name (6 bytes) */
/* A progress thread's doorbell disarmed by another thread's poll is armed
 * again this late (shm_bell.c). */
#define SHM_BELL_REARM_NS 1000000

typedef struct shm_seg_hdr {
    uint32_t magic;
    uint32_t version;
    uint32_t node_size;
    uint32_t node_index;
    uint64_t ring_bytes;
    uint64_t seg_size;
    int32_t rank;
    int32_t pid;
    uint64_t probe; /* random word that a peer reads with process_vm_readv to test CMA */
    uint64_t netns; /* inode of /proc/self/ns/net: a doorbell rings only within one */
    /* The doorbell (shm_bell.c), when the owner's progress thread sleeps on
     * one: the abstract address of its datagram socket, bell_len bytes of
     * sun_path (0: no doorbell). */
    uint32_t bell_len;
    char bell_name[SHM_BELL_NAME];
} shm_seg_hdr_t;

/* The reader of a ring publishes here how far it has consumed (absolute slot
 * index); the writer reads it only when its cached copy says the ring is full. */
typedef struct shm_ring_ctl {
    _Alignas(WEFT_CACHELINE) _Atomic uint64_t tail;
    uint8_t pad[SHM_CTL_SIZE - sizeof(uint64_t)];
} shm_ring_ctl_t;

/* A word of the bell region, on a cache line of its own (peers write it).
 * Line 0, asleep: 1 while the owner's sleeper is about to sleep or sleeps on
 * the doorbell; whoever gives it work takes it back to 0 and rings. Line
 * 1 + i, want_room of ring i: its writer, whose send did not fit, asks the
 * reader to ring its doorbell once it frees room. */
typedef struct shm_bell_line {
    _Alignas(WEFT_CACHELINE) _Atomic uint32_t word;
} shm_bell_line_t;

/* Offsets inside a segment, computed the same way by its owner and by peers. */
static inline uint64_t shm_ctl_region_size(uint32_t node_size)
{
    return WEFT_ALIGN_UP((uint64_t)node_size * SHM_CTL_SIZE, (uint64_t)SHM_PAGE);
}
static inline uint64_t shm_bell_offset(uint32_t node_size)
{
    return SHM_PAGE + shm_ctl_region_size(node_size);
}
static inline uint64_t shm_bell_region_size(uint32_t node_size)
{
    return WEFT_ALIGN_UP((1 + (uint64_t)node_size) * sizeof(shm_bell_line_t), (uint64_t)SHM_PAGE);
}
static inline uint64_t shm_cells_offset(uint32_t node_size, uint32_t index)
{
    return shm_bell_offset(node_size) + shm_bell_region_size(node_size) +
           (uint64_t)index * WEFT_DRV_CELL_BYTES;
}
static inline uint64_t shm_ring_offset(uint32_t node_size, uint64_t ring_bytes, uint32_t index)
{
    return shm_cells_offset(node_size, node_size) + (uint64_t)index * ring_bytes;
}
static inline uint64_t shm_seg_size(uint32_t node_size, uint64_t ring_bytes)
{
    return shm_ring_offset(node_size, ring_bytes, node_size);
}

/* Ring size bounds (WEFT_SHM_RING is rounded up to a power of two inside them). */
#define SHM_RING_MIN    (4u << 10)
#define SHM_RING_MAX    (256u << 20)
#define SHM_MAX_PACKET  (64u << 10)
#define SHM_MAX_IOV     64
#define SHM_NODE_MAX    4096
#define SHM_NAME_MAX    96
#define SHM_CHECK_EVERY 1024 /* polls between two reads of the clock for liveness checks */

static inline size_t shm_max_packet(uint64_t ring_bytes)
{
    return (size_t)WEFT_MIN(ring_bytes / 4, (uint64_t)SHM_MAX_PACKET);
}

/* ---- Address blob ----------------------------------------------------------------
 * Fixed layout, little-endian host order (peers share the host by construction). */
#define SHM_ADDR_MAGIC   0x52444157u /* "WADR" */
#define SHM_ADDR_VERSION 1u

typedef struct shm_addr {
    uint32_t magic;
    uint32_t version;
    int32_t rank;
    int32_t pid;
    uint32_t node_size;
    uint32_t node_index;
    uint64_t boot_hash; /* hash of /proc/sys/kernel/random/boot_id */
    uint64_t host_hash; /* hash of the host name */
    uint64_t pidns;     /* inode of /proc/self/ns/pid: kill() and CMA need one pid space */
    uint64_t ring_bytes;
    uint64_t probe_addr; /* address, in the peer, of its segment header's probe word */
    char name[SHM_NAME_MAX];
} shm_addr_t;

_Static_assert(sizeof(shm_addr_t) <= WEFT_ADDR_MAX, "shm address blob too large");

/* ---- rkey (CMA) ------------------------------------------------------------------ */
#define SHM_RKEY_MAGIC 0x414d4357u /* "WCMA" */
typedef struct shm_rkey {
    uint32_t magic;
    int32_t pid;
    uint64_t addr;
    uint64_t len;
} shm_rkey_t;
_Static_assert(sizeof(shm_rkey_t) <= WEFT_RKEY_MAX, "shm rkey too large");

/* ---- Objects ---------------------------------------------------------------------- */
typedef struct shm_slot shm_slot_t;

struct weft_track {
    /* Sending side: our ring in the peer's segment. One cache line, hot in send(). */
    _Alignas(WEFT_CACHELINE) shm_slot_t *tx_slots;
    _Atomic uint64_t *tx_tail; /* the peer's (reader's) tail of that ring */
    uint64_t tx_head;          /* private: next absolute slot to write */
    uint64_t tx_tail_cache;    /* last tail read */
    uint64_t tx_mask;          /* slots - 1 */
    size_t max_packet;
    /* Set by poll() with peer_lost; read by send() and rget(), which the engine may
     * run in other threads than poll(): hence atomic (relaxed: a plain load). */
    _Atomic int dead;
    /* The peer's asleep word when it has a doorbell this process can ring
     * (shm_bell.c), else NULL: rung after a record, and after room freed in
     * its ring when it asked for room. */
    _Atomic uint32_t *peer_asleep;

    /* Receiving side: the peer's ring in our segment. Hot in poll(). */
    _Alignas(WEFT_CACHELINE) shm_slot_t *rx_slots;
    _Atomic uint64_t *rx_tail;
    uint64_t rx_head;
    uint64_t rx_mask;
    size_t rx_max_packet;
    void *peer_cookie;
    weft_driver_t *driver;

    /* Cold. */
    _Alignas(WEFT_CACHELINE) int peer_rank;
    int peer_index;
    pid_t pid;
    int pidfd;          /* -1 when pidfd_open is not available: kill(pid, 0) then */
    int active_at;      /* position in driver->active, -1 when not polled */
    int lost;           /* peer_lost was called */
    int cma;            /* rget works on this track */
    void *peer_hdr_map; /* the peer's header and control pages, read-only */
    size_t peer_hdr_len;
    shm_bell_line_t *peer_bells; /* the peer's bell region, writable */
    size_t peer_bells_len;
    void *peer_ring_map;
    size_t peer_ring_len;
    void *peer_cells; /* our block of cells in the peer's segment (WEFT_DRV_CELL_BYTES) */
    void *my_cells;   /* the peer's block of cells in our segment */
    /* Doorbells (shm_bell.c). */
    struct sockaddr_un peer_bell; /* the peer's doorbell, when peer_asleep */
    socklen_t peer_bell_len;
    _Atomic uint32_t *tx_want;   /* want_room of our ring, in the peer's bell region */
    _Atomic uint32_t *rx_want;   /* want_room of the peer's ring, in ours */
    _Atomic uint64_t blocked_at; /* 0, or 1 + the tail our last send that did not fit saw */
};

struct weft_driver {
    /* Hot in poll(). */
    _Alignas(WEFT_CACHELINE) weft_track_t **active; /* tracks whose ring is polled */
    int nactive;
    uint32_t polls;
    weft_driver_upcalls_t up;
    _Atomic uint32_t *asleep; /* in our header, with a doorbell (shm_bell.c) */

    /* Cold. */
    _Alignas(WEFT_CACHELINE) uint64_t next_check_ns;
    uint64_t check_interval_ns;
    int rank;
    int node_index;
    int node_size;
    int *node_ranks;
    weft_track_t **by_index; /* node_size entries */
    struct pollfd *pfds;     /* scratch for the liveness check */
    int *pfd_index;
    char name[SHM_NAME_MAX];
    void *seg;
    size_t seg_size;
    uint64_t ring_bytes;
    int unlinked;
    int cma_enabled;
    int warned_addr; /* a bad address blob was logged at warning level once */
    size_t rdv_threshold;
    shm_addr_t addr;
    /* Doorbells (shm_bell.c): the socket our progress thread sleeps on and
     * an epoll instance holding it and the peers' pidfds (-1 without a
     * doorbell), the socket that rings peers' (-1 until a peer has one), and
     * whether a peer cannot ring ours (it lives in another network
     * namespace): polling it is, then. */
    bool doorbell; /* weft_driver_params_t.doorbell */
    bool bell_off;
    int bell_fd;
    int bell_ep;
    int bell_timer; /* timerfd: arm the doorbell again after a disarm */
    int ring_fd;
    struct sockaddr_un bell_addr; /* our own doorbell's address */
    socklen_t bell_addr_len;
    pthread_t sleeper; /* the thread that armed the doorbell last */
};

/* shm_bell.c */
WEFT_INTERNAL void weft__shm_bell_open(weft_driver_t *d, shm_seg_hdr_t *h, shm_bell_line_t *bells);
WEFT_INTERNAL int weft__shm_bell_connect(weft_driver_t *d, weft_track_t *t,
                                         const shm_seg_hdr_t *peer);
WEFT_INTERNAL void weft__shm_bell_forget(weft_driver_t *d, weft_track_t *t);
WEFT_INTERNAL int weft__shm_bell_wait_fd(weft_driver_t *d);
WEFT_INTERNAL void weft__shm_bell_ring(weft_track_t *t);
WEFT_INTERNAL void weft__shm_bell_disarm(weft_driver_t *d);
WEFT_INTERNAL void weft__shm_bell_full(weft_track_t *t);
WEFT_INTERNAL void weft__shm_bell_close(weft_driver_t *d);

/* After a record in t's ring, stored sequentially consistent (shm_ring_write),
 * when the peer has a doorbell: ring the peer if it sleeps. The peer
 * stores its asleep word, then looks at the rings, both sequentially
 * consistent too (Dekker, shm_bell.c). */
static inline void shm_bell_after_send(weft_track_t *t)
{
    if (atomic_load_explicit(t->peer_asleep, memory_order_seq_cst))
        weft__shm_bell_ring(t);
}

/* At each poll: a thread polls, so the doorbell's sleeper need not be rung. */
static inline void shm_bell_disarm(weft_driver_t *d)
{
    if (WEFT_UNLIKELY(d->asleep != NULL) && atomic_load_explicit(d->asleep, memory_order_relaxed))
        weft__shm_bell_disarm(d);
}

/* Publish the tail of t's ring, then ring the writer if it asked for room
 * (shm_bell.c): the same pattern, the writer storing want_room and then
 * looking at the tail. */
static inline void shm_publish_tail(weft_track_t *t, uint64_t tail)
{
    if (WEFT_LIKELY(t->peer_asleep == NULL)) {
        atomic_store_explicit(t->rx_tail, tail, memory_order_release);
        return;
    }
    atomic_store_explicit(t->rx_tail, tail, memory_order_seq_cst);
    if (atomic_load_explicit(t->rx_want, memory_order_seq_cst) &&
        atomic_exchange_explicit(t->rx_want, 0, memory_order_relaxed))
        weft__shm_bell_ring(t);
}

/* shm_cma.c */
WEFT_INTERNAL int weft__shm_cma_probe(pid_t pid, uint64_t addr, uint64_t expect);
WEFT_INTERNAL int weft__shm_expose(weft_driver_t *d, const void *buf, size_t len,
                                   weft_rkey_t *rkey);
WEFT_INTERNAL void weft__shm_unexpose(weft_driver_t *d, const weft_rkey_t *rkey);
WEFT_INTERNAL int weft__shm_rget(weft_track_t *t, const struct iovec *local, int iovcnt,
                                 const weft_rkey_t *rkey, uint64_t offset, size_t len,
                                 void *op_cookie);
WEFT_INTERNAL int weft__shm_rput(weft_track_t *t, const struct iovec *local, int iovcnt,
                                 const weft_rkey_t *rkey, uint64_t offset, size_t len,
                                 void *op_cookie);

#endif
