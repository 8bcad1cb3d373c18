/* The driver interface: what the engine asks of a transport.
 *
 * A driver moves whole packets (opaque byte strings built by the engine) between
 * processes, and may offer a one-sided "get" for rendezvous (RDMA on fabrics,
 * process_vm_readv on shared memory). It knows nothing of requests, tags or
 * matching: it calls the engine back through weft_driver_upcalls_t.
 *
 * One driver instance (weft_driver_t) per context; one track (weft_track_t) per
 * peer reached through it. Every op returns a weft status; no driver aborts the
 * process. Drivers never include core headers.
 *
 * Threading: the engine serialises calls on one driver instance (it holds the
 * engine lock around poll and every call, and the gate's lock around a
 * track's send), so a driver needs no locks of its own for that. A track with
 * WEFT_DRV_CAP_SEND_MT also takes send() from a thread that holds only the
 * gate's lock, while another thread may be inside poll() or another track's
 * send(). A track with WEFT_DRV_CAP_CELLS takes rget() and rput() from threads
 * that hold no lock at all, several at once, beside any other call. Upcalls are made from inside
 * poll() (and, for send completions, possibly from inside send()). From inside a
 * packet upcall the engine may call send(), rget() and rput() on any track of
 * the instance (to answer a rendezvous at once), never poll().
 */
#ifndef WEFT_DRIVER_H
#define WEFT_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "util/param.h"
#include "weft/weft.h"

typedef struct weft_driver weft_driver_t; /* a driver's own instance state */
typedef struct weft_track weft_track_t;   /* a driver's own per-peer state */

/* Capability flags of a track. */
enum {
    /* rget() works on this track: the receiver of a rendezvous can pull the data. */
    WEFT_DRV_CAP_RGET = 1u << 0,
    /* rput() works on this track: the sender can write into an exposed receive
     * buffer (so both sides can copy parts of one message at once). */
    WEFT_DRV_CAP_RPUT = 1u << 1,
    /* cells() works on this track, and rget()/rput() complete at once (never
     * WEFT_INPROGRESS) and are thread-safe (any thread, no lock held, several
     * at once): both sides may move a rendezvous piece by piece, coordinated
     * through memory they share, each piece copied outside the engine lock. */
    WEFT_DRV_CAP_CELLS = 1u << 2,
    /* send() copies the packet before it returns, so the engine may gather a
     * packet from buffers that do not outlive the call. WEFT_INPROGRESS then
     * only says that the copy has not left yet; send_done follows as usual. */
    WEFT_DRV_CAP_SEND_COPY = 1u << 3,
    /* send() on this track may run while another thread polls the instance or
     * sends on another of its tracks (the engine still serialises the sends of
     * one track, under the gate's lock): a thread may then send without the
     * engine lock (weft__proto_send_unlocked). */
    WEFT_DRV_CAP_SEND_MT = 1u << 4,
};

/* What a track can do, filled by connect(). Queried once at setup. */
typedef struct weft_track_caps {
    uint32_t flags;       /* WEFT_DRV_CAP_* */
    size_t max_packet;    /* largest packet one send() may carry, header included */
    int max_iov;          /* most iovec entries one send() accepts */
    size_t rdv_threshold; /* payloads above this go by rendezvous */
    double latency_us;    /* rough one-way latency, for strategies */
    double bandwidth_mbs; /* rough bandwidth in MB/s, for strategies */
    /* The packet strategy that suits this track when WEFT_STRATEGY is unset
     * ("aggreg" where each packet costs system calls); NULL: the default for
     * the driver's name. */
    const char *strategy;
} weft_track_caps_t;

/* How the engine is called back. owner is the engine's context. */
typedef struct weft_driver_upcalls {
    void *owner;
    /* A packet of len bytes arrived from the peer whose connect() was given
     * peer_cookie. buf is valid only during the call. A negative return tells the
     * driver the packet was malformed; the driver then treats the peer as lost. */
    int (*packet)(void *owner, void *peer_cookie, const void *buf, size_t len);
    /* A send() that returned WEFT_INPROGRESS finished (status WEFT_OK or an error);
     * its buffers may be reused. */
    void (*send_done)(void *owner, void *peer_cookie, void *send_cookie, int status);
    /* An rget() that returned WEFT_INPROGRESS finished. */
    void (*rget_done)(void *owner, void *peer_cookie, void *op_cookie, int status);
    /* The peer is gone (process died, connection closed). Called once per track;
     * sends and gets on the track fail afterwards with WEFT_EPEERDEAD. Before it,
     * the driver completes every send and rget of the track still in flight
     * (send_done / rget_done with WEFT_EPEERDEAD); after it, no upcall names the
     * track, so the engine may fail what remains without racing a completion. */
    void (*peer_lost)(void *owner, void *peer_cookie, int status);
} weft_driver_upcalls_t;

#define WEFT_DRV_SECRET_LEN 16

/* What the engine tells a driver at init. */
typedef struct weft_driver_params {
    int rank;                  /* this process's rank in the job */
    int size;                  /* ranks in the job */
    const char *job_id;        /* unique per job: names shared objects */
    const uint8_t *job_secret; /* WEFT_DRV_SECRET_LEN bytes known to the job only */
    const int *node_ranks;     /* ranks on this node, ascending (this one included) */
    int node_size;             /* number of entries in node_ranks */
    int node_index;            /* position of this rank in node_ranks */
    /* Start only on a native network (a fabric with its own hardware): a
     * driver that would emulate one over sockets or shared memory returns
     * WEFT_EUNSUPPORTED instead. Set when the driver was not asked for by
     * name (WEFT_DRIVERS). */
    bool only_native;
    int instance; /* 0, or which rail this instance is (several of one driver) */
    /* The engine may call the driver from several threads at once (sends
     * beside a poll): at WEFT_THREAD_MULTIPLE or with a progress thread.
     * Unset, every call comes from one thread at a time and a driver's own
     * locks may be none. */
    bool threaded;
    /* A thread will sleep on wait_fd() (a progress thread, or a waiter under
     * WEFT_WAIT=block or fixed_spin): a driver whose doorbell costs something
     * while nobody sleeps on it (libfabric's, shm's) opens it only then. */
    bool doorbell;
} weft_driver_params_t;

/* A remote memory descriptor produced by expose() and consumed by rget(). */
#define WEFT_RKEY_MAX 32
typedef struct weft_rkey {
    uint32_t len;
    uint8_t bytes[WEFT_RKEY_MAX];
} weft_rkey_t;

#define WEFT_ADDR_MAX 256

/* A link: a track to a process of another job (MPI's dynamic processes).
 * Ranks name nobody across jobs, so the two processes name themselves by ids
 * drawn at random, unique across jobs (mine, peer: non-zero, different), and
 * prove they know the link's secret, which the two jobs agreed on when they
 * met (at an MPI port), instead of a job secret. */
typedef struct weft_drv_link {
    uint64_t mine, peer;
    uint8_t secret[WEFT_DRV_SECRET_LEN];
} weft_drv_link_t;

/* Bytes of memory cells() shares per direction and peer. */
#define WEFT_DRV_CELL_BYTES 4096u

/* wait_fd() answers other than a file descriptor. */
#define WEFT_DRV_WAIT_IDLE (-1) /* nothing can arrive unasked */
#define WEFT_DRV_WAIT_POLL (-2) /* work arrives with no doorbell: keep polling */
#define WEFT_DRV_WAIT_BUSY (-3) /* work waits now: poll, then ask again */

/* Which peers a driver can reach (weft_driver_ops_t.reach). */
enum {
    WEFT_DRV_REACH_SELF = 1, /* this process */
    WEFT_DRV_REACH_NODE = 2, /* processes of this node */
    WEFT_DRV_REACH_NET = 4,  /* processes of other nodes (and of this one, if asked) */
};

/* A driver: its description, read by the engine to choose drivers (ctx.c)
 * and by weft-info to list them, so no driver name appears in the engine;
 * then its operations. */
typedef struct weft_driver_ops {
    const char *name;
    const char *description; /* one line, for weft-info */
    unsigned reach;          /* WEFT_DRV_REACH_*: the peers it can reach */
    /* Among the drivers that reach a peer, the engine takes the one with the
     * highest preference that both ranks opened; a node driver before a
     * network one for peers of the node. */
    int preference;
    /* Opened only where some peer needs it (REACH_NET: a peer on another
     * node, or node peers when no node driver is allowed); native_only: unless
     * WEFT_DRIVERS names it, it starts only on a native fabric
     * (weft_driver_params_t.only_native) and its failure is no error. */
    bool native_only;
    /* The parameter that asks for more instances of it, each a rail of every
     * gate on it ("WEFT_TCP_RAILS"), or NULL. */
    const char *rails_param;
    /* The strategy its gates take unless WEFT_STRATEGY or a track's caps say
     * otherwise; NULL: "default". */
    const char *strategy;
    /* Its own WEFT_* parameters, ending with an entry whose name is NULL
     * (listed by weft-info and MPI_T; read with weft__param_*). */
    const weft_param_desc_t *params;
    /* Create the instance; *out on success. */
    int (*init)(const weft_driver_params_t *params, const weft_driver_upcalls_t *up,
                weft_driver_t **out);
    /* This instance's address blob (at most WEFT_ADDR_MAX bytes), published to peers
     * through the bootstrap. *len is the buffer size in, the blob size out. */
    int (*address)(weft_driver_t *d, void *buf, size_t *len);
    /* Open a track to peer_rank, whose address blob is addr. peer_cookie is
     * handed back in every upcall about this peer. Fills *caps. */
    int (*connect)(weft_driver_t *d, int peer_rank, const void *addr, size_t addrlen,
                   void *peer_cookie, weft_track_t **track_out, weft_track_caps_t *caps);
    /* Open a track to a process of another job (a link, above), whose address
     * blob, from its own instance of this driver, is addr; otherwise as
     * connect(). Called at any time after init, under the engine lock; the
     * peer does the same with the ids swapped, in any order. Optional: NULL
     * for a driver that reaches only its own job. */
    int (*link)(weft_driver_t *d, const weft_drv_link_t *link, const void *addr, size_t addrlen,
                void *peer_cookie, weft_track_t **track_out, weft_track_caps_t *caps);
    /* Whether t's connection is set up: 1 up, 0 still being set up,
     * WEFT_EPEERDEAD once lost. Optional (NULL: up once connect() returned). */
    int (*track_up)(weft_track_t *t);
    /* Called once every rank has connected all its tracks (after a job-wide fence):
     * the driver may now release setup resources (shm unlinks its segment). */
    int (*connected)(weft_driver_t *d);
    /* Send one packet gathered from iov. The iov array may be reused as soon as
     * the call returns; the buffers it points to stay untouched until the
     * packet is done. Returns WEFT_OK when the buffers may be
     * reused at once, WEFT_INPROGRESS when send_done will be called later,
     * WEFT_EAGAIN when the track has no room now (nothing was sent), or an error
     * (WEFT_EPEERDEAD...). */
    int (*send)(weft_track_t *t, const struct iovec *iov, int iovcnt, void *send_cookie);
    /* Poll for arrivals and completions, making upcalls. Returns the number of
     * events handled (>= 0) or an error of the instance as a whole. */
    int (*poll)(weft_driver_t *d);
    /* What a thread that found nothing to do may sleep on until poll() has work
     * again: a file descriptor that turns readable (POLLIN, level-triggered)
     * whenever an arrival, a completion, room to send or a lost peer waits for
     * poll(), with nothing of the instance's work left that only a later poll()
     * would find without it; WEFT_DRV_WAIT_IDLE when no work can arrive
     * without a call from the engine (no peer, or none it has not already
     * reported); WEFT_DRV_WAIT_POLL when work arrives without any doorbell, so
     * only polling finds it; WEFT_DRV_WAIT_BUSY when poll() has work now (a
     * doorbell that must be re-armed, as libfabric's, says so rather than
     * ring). Asked again before each sleep: the answer holds for one sleep.
     * Called under the engine lock, between polls. Optional: NULL means
     * WEFT_DRV_WAIT_POLL. */
    int (*wait_fd)(weft_driver_t *d);
    /* Make [buf, buf+len) readable by peers' rget(); fill *rkey. Optional (NULL
     * when no track has WEFT_DRV_CAP_RGET). */
    int (*expose)(weft_driver_t *d, const void *buf, size_t len, weft_rkey_t *rkey);
    /* Undo expose(). Optional. */
    void (*unexpose)(weft_driver_t *d, const weft_rkey_t *rkey);
    /* Read len bytes at offset of the peer's exposed region rkey into the local
     * iovec. WEFT_OK when done, WEFT_INPROGRESS when rget_done comes later,
     * WEFT_EPERM when the system forbids it (the engine falls back to a copy
     * path), or an error. Optional. */
    int (*rget)(weft_track_t *t, const struct iovec *local, int iovcnt, const weft_rkey_t *rkey,
                uint64_t offset, size_t len, void *op_cookie);
    /* Write len bytes from the local iovec into the peer's exposed region rkey at
     * offset. Same returns as rget. Optional. */
    int (*rput)(weft_track_t *t, const struct iovec *local, int iovcnt, const weft_rkey_t *rkey,
                uint64_t offset, size_t len, void *op_cookie);
    /* Memory shared with the peer of t, WEFT_DRV_CELL_BYTES long, zero at
     * start, 64-byte aligned, mapped by both processes for the life of the
     * track. mine: the block in this process's memory (the engine uses it for
     * traffic from the peer); otherwise the block in the peer's memory (traffic
     * to the peer). Optional (tracks with WEFT_DRV_CAP_CELLS). */
    void *(*cells)(weft_track_t *t, bool mine);
    /* Close one track. */
    void (*disconnect)(weft_track_t *t);
    /* Drop t's connection as if its peer were lost, without upcalls now: the
     * next poll completes what is in flight on t with WEFT_EPEERDEAD and
     * reports peer_lost, as for any loss; nothing of the engine's buffers is
     * read or written meanwhile. The engine calls it on the other rails of a
     * gate one of whose rails lost the peer. Optional. */
    void (*shutdown)(weft_track_t *t);
    /* Free the instance (all tracks were disconnected). */
    void (*fini)(weft_driver_t *d);
} weft_driver_ops_t;

/* The drivers built into this library, in order of preference between nodes
 * (weft__drivers_builtin lists them). */
extern const weft_driver_ops_t weft__driver_self_ops;
extern const weft_driver_ops_t weft__driver_shm_ops;
extern const weft_driver_ops_t weft__driver_tcp_ops;
#ifdef WEFT_HAVE_OFI
extern const weft_driver_ops_t weft__driver_ofi_ops;
#endif

#endif
