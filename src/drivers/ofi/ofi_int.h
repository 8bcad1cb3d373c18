/* The ofi driver's internals: one libfabric RDM endpoint per instance, tagged
 * messages for packets, fi_read for rendezvous. README.md in this directory
 * has the design. */
#ifndef WEFT_OFI_INT_H
#define WEFT_OFI_INT_H

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "drivers/driver.h"
#include "util/list.h"
#include "util/lock.h"
#include "util/util.h"

/* libfabric is loaded when the driver first starts, not with weft: loading
 * it runs its providers' libraries' constructors (the PSM ones wait about
 * 0.2 s on a machine without their hardware), which every weft process
 * would otherwise pay, on one node too. Its interface is inline, through
 * its objects' operation tables, but for these few functions, called
 * through here. */
typedef struct weft__ofi_lib {
    int (*getinfo)(uint32_t version, const char *node, const char *service, uint64_t flags,
                   const struct fi_info *hints, struct fi_info **info);
    void (*freeinfo)(struct fi_info *info);
    struct fi_info *(*dupinfo)(const struct fi_info *info); /* NULL: a blank one */
    int (*fabric)(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);
    const char *(*strerror)(int errnum);
} weft__ofi_lib_t;
extern weft__ofi_lib_t weft__fi;

/* Load libfabric (WEFT_OFI_LIBRARY, default libfabric.so.1) once per
 * process: WEFT_OK, or WEFT_EUNSUPPORTED with *reason saying why (absent,
 * older than weft was built against, or missing a function). */
int weft__ofi_load(const char **reason);

/* Limits and defaults. */
#define OFI_MAX_PACKET  (64u << 10)
#define OFI_RDV_DEFAULT (32u << 10)
#define OFI_MAX_IOV     64 /* entries one send() gathers (it copies) */
#define OFI_CQ_BATCH    16
#define OFI_PKT_HDR     4   /* a packet's sequence number, before the engine's bytes */
#define OFI_INJECT_MAX  256 /* largest packet ever injected */
#define OFI_ADDR_HDR    8   /* rank and process id before the endpoint's name */
#define OFI_NAME_MAX    (WEFT_ADDR_MAX - OFI_ADDR_HDR)
#define OFI_READ_MRS    16 /* local iovec entries of one rget (FI_MR_LOCAL providers) */

/* Every message carries the job's mark as its tag (a message from another job,
 * or from a stranger, matches no posted receive: receives ask for that exact
 * tag) and, as remote completion data (32 bits), its sender's rank and what
 * it is. */
#define OFI_DATA_RANK_SHIFT 8
#define OFI_DATA_RANK_MASK  0xFFFFFFu
enum { OFI_MSG_PACKET = 0, OFI_MSG_PING = 1 };

/* What a completion's context is. Every libfabric operation's context starts
 * with an ofi_ctx_t. */
enum { OFI_OP_RECV = 1, OFI_OP_SEND, OFI_OP_PING, OFI_OP_READ };
typedef struct ofi_ctx {
    struct fi_context2 fctx; /* libfabric's, first (FI_CONTEXT2 mode) */
    uint8_t kind;            /* OFI_OP_* */
} ofi_ctx_t;

/* A receive or send buffer of the instance's pools. */
typedef struct ofi_buf {
    ofi_ctx_t c;
    struct ofi_buf *next_free;
    uint8_t *data;
    weft_track_t *track;       /* sends: the packet's peer (NULL: nobody to tell) */
    void *cookie;              /* sends: the engine's */
    struct ofi_buf *next_sent; /* sends: the track's next, in sending order */
    bool done;                 /* sends: libfabric is done with it */
    int status;
} ofi_buf_t;

/* A packet that arrived ahead of its turn, held until those before it are in. */
typedef struct ofi_held {
    struct ofi_held *next; /* by sequence number */
    uint32_t seq;
    size_t len;
    uint8_t data[];
} ofi_held_t;

/* A registration of the cache (ofi_mr.c). */
typedef struct ofi_mr {
    uintptr_t base;
    size_t len;
    struct fid_mr *mr;
    uint64_t key;
    void *desc;
    int refs;
    uint64_t used; /* LRU stamp */
} ofi_mr_t;

/* The description of an exposed region that travels to the reader. */
typedef struct ofi_rkey {
    uint64_t addr; /* remote address of the region's first byte, as fi_read wants it */
    uint64_t key;
    uint64_t len;
    uint32_t slot; /* the exposer's cache slot (for unexpose) */
} ofi_rkey_t;
_Static_assert(sizeof(ofi_rkey_t) <= WEFT_RKEY_MAX, "an ofi rkey fits weft_rkey_t");

struct ofi_read;
/* One fi_readv of an rget (at most the provider's rma_iov_limit entries). */
typedef struct ofi_sub {
    ofi_ctx_t c;
    struct ofi_read *parent;
    struct iovec iov[4];
    void *desc[4];
    int iovcnt;
    uint64_t raddr;
    size_t len;
    weft_list_t link; /* on d->retry while libfabric said FI_EAGAIN */
} ofi_sub_t;

/* An rget in flight. */
typedef struct ofi_read {
    weft_list_t link; /* on its track's reads */
    weft_track_t *track;
    void *cookie;
    uint64_t key;
    int nsub, left; /* sub-reads, and those not yet completed */
    int status;
    bool orphan; /* its track was lost: completed already, only freed when the
                    sub-reads come back */
    int nmr;
    int mrs[OFI_READ_MRS]; /* cache slots of local registrations held (FI_MR_LOCAL) */
    ofi_sub_t sub[];
} ofi_read_t;

struct weft_track {
    weft_driver_t *driver;
    void *peer_cookie;
    int peer_rank;
    fi_addr_t addr;
    bool lost;
    weft_list_t reads;                 /* ofi_read_t in flight */
    ofi_ctx_t ping;                    /* the keepalive message's context */
    bool ping_busy;                    /* a keepalive is in flight */
    uint64_t ping_sent;                /* when (ns) */
    uint64_t refused;                  /* since when (ns) keepalives cannot leave (0: they can) */
    int pid;                           /* the peer's process, when it runs on this node (else 0) */
    uint32_t tx_seq;                   /* number of the next packet to the peer */
    uint32_t rx_seq;                   /* number of the next packet expected from it */
    ofi_held_t *held;                  /* packets from it that came ahead of their turn */
    struct ofi_buf *tx_head, *tx_tail; /* its sends in flight, oldest first */
};

struct weft_driver {
    weft_driver_upcalls_t up;
    int rank, size;
    int *node_ranks; /* ranks on this node (a copy) */
    int node_size;
    uint64_t tag_mark;    /* the job's mark, already shifted into the high bits */
    char shm_name[96];    /* the shm provider's region: weft-<job>-ofi-<rank> */
    struct fi_info *info; /* the provider's offer we took */
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    int cq_fd; /* its doorbell (FI_WAIT_FD), or -1 */
    struct fid_ep *ep;
    bool mr_local, mr_virt, mr_prov_key, mr_endpoint, mr_pins;
    bool rma;
    bool on_sockets; /* a provider over kernel sockets (tcp, sockets, udp, net) */
    size_t max_packet, rdv_threshold;
    size_t inject_max; /* packets up to this size go by fi_tinjectdata (0: none) */
    int rma_iov_limit;
    /* Buffers: receives posted at all times, send copies. */
    int rx_depth, tx_depth;
    uint8_t *rx_slab, *tx_slab;
    struct fid_mr *rx_mr, *tx_mr;
    void *rx_desc, *tx_desc;
    ofi_buf_t *rx, *tx;
    ofi_buf_t *tx_free;
    /* Receive buffers whose packet was handed on, posted again at the next
     * poll rather than before the application hears of the packet (poll
     * runs under the engine's lock, so this needs no lock of its own). */
    ofi_buf_t *rx_done[2 * OFI_CQ_BATCH];
    int nrx_done;
    /* Registration cache. */
    ofi_mr_t *mrs;
    int nmr_slots;
    uint64_t mr_clock, next_key;
    weft_list_t retry;   /* ofi_sub_t that met FI_EAGAIN */
    weft_list_t orphans; /* ofi_read_t of disconnected tracks, still in libfabric */
    int nretry;
    weft_track_t **tracks;
    int nlive;
    uint64_t ping_ns, timeout_ns, next_ping;
    unsigned polls;
    weft_lock_t lock; /* send, rget and poll may come from different threads
                       * (params.threaded; none otherwise) */
    char name[OFI_NAME_MAX];
    size_t namelen;
};

/* ofi_mr.c */
WEFT_INTERNAL int weft__ofi_mr_init(weft_driver_t *d);
WEFT_INTERNAL void weft__ofi_mr_fini(weft_driver_t *d);
/* The cache slot of a registration covering [buf, buf+len), held until
 * weft__ofi_mr_put; or a negative weft error. */
WEFT_INTERNAL int weft__ofi_mr_get(weft_driver_t *d, const void *buf, size_t len);
WEFT_INTERNAL void weft__ofi_mr_put(weft_driver_t *d, int slot);
WEFT_INTERNAL int weft__ofi_reg(weft_driver_t *d, void *buf, size_t len, uint64_t access,
                                struct fid_mr **mr, uint64_t *key);
WEFT_INTERNAL int weft__ofi_expose(weft_driver_t *d, const void *buf, size_t len,
                                   weft_rkey_t *rkey);
WEFT_INTERNAL void weft__ofi_unexpose(weft_driver_t *d, const weft_rkey_t *rkey);
WEFT_INTERNAL int weft__ofi_rget(weft_track_t *t, const struct iovec *local, int iovcnt,
                                 const weft_rkey_t *rkey, uint64_t offset, size_t len,
                                 void *cookie);
/* Post again the sub-reads libfabric refused for want of room. */
WEFT_INTERNAL void weft__ofi_retry(weft_driver_t *d);
/* A sub-read came back (status 0 or a weft error). Called without d->lock. */
WEFT_INTERNAL void weft__ofi_read_done(weft_driver_t *d, ofi_sub_t *s, int status);
/* Detach the reads of a track that is lost or closing (they stay with the
 * driver until libfabric gives them back); tell: complete each with
 * WEFT_EPEERDEAD. */
WEFT_INTERNAL void weft__ofi_reads_orphan(weft_driver_t *d, weft_track_t *t, bool tell);
/* Free the orphaned reads, once the endpoint is closed. */
WEFT_INTERNAL void weft__ofi_reads_free(weft_driver_t *d);

/* ofi_wire.c: what peers send, decoded. Pure functions, so that the fuzz
 * target (tests/fuzz/fuzz_ofi.c) reaches them without libfabric. */
typedef struct ofi_addr {
    uint32_t rank;
    uint32_t pid;        /* the publisher's process id */
    const uint8_t *name; /* its endpoint's name, for fi_av_insert */
    size_t namelen;
} ofi_addr_t;
/* The address peer_rank published (ofi_address): WEFT_OK, or WEFT_EPROTO
 * if it is too short or too long or names another rank. */
WEFT_INTERNAL int weft__ofi_addr_decode(const void *addr, size_t len, int peer_rank,
                                        ofi_addr_t *out);
/* An rkey from a peer, for a read of [offset, offset+len) of its region:
 * WEFT_OK, or WEFT_EINVAL if it is not an ofi rkey or the range is not
 * inside the region. */
WEFT_INTERNAL int weft__ofi_rkey_decode(const weft_rkey_t *rkey, uint64_t offset, size_t len,
                                        ofi_rkey_t *out);

/* ofi_driver.c: a message that arrived in a receive buffer (a completion's
 * flags and remote data, and its bytes): handed on to the engine, in the
 * sender's order, if it is a packet of a live peer; returns how many packets
 * were handed on. The buffer is the caller's again when it returns. */
WEFT_INTERNAL int weft__ofi_recv(weft_driver_t *d, uint64_t flags, uint64_t data,
                                 const uint8_t *pkt, size_t len);

/* A libfabric error code as a weft status. */
WEFT_INTERNAL int weft__ofi_status(int fi_rc);

#endif
