/* MPI one-sided communication (MPI 3.1 chapter 11): the window object and
 * the interfaces between its three parts.
 *
 *   mpi_win.c       windows: creation of the four flavours, free, queries,
 *                   attributes, info, names, error handlers
 *   mpi_win_ops.c   put, get, accumulates and atomics; the request server
 *   mpi_win_sync.c  fence, post/start/complete/wait, lock/unlock, flush
 *
 * Every operation finds its target one of three ways (weft__win_path):
 *   - MAPPED: the target's part of the window is mapped here (this process,
 *     or a window of memory weft allocated, on the same node): the operation
 *     is a copy, an accumulate is applied element by element with CPU
 *     atomics, and it is complete at the target when the call returns;
 *   - CMA: a window of the application's memory (MPI_Win_create) on the same
 *     node: puts and gets are single copies by the kernel
 *     (process_vm_writev/readv), accumulates go as requests;
 *   - REQUEST: a message to the target's server (a progress callback of the
 *     target's engine, mpi_win_ops.c), which applies it and answers gets,
 *     fetches, flushes and locks. Requests from one origin are served in the
 *     order they were sent (each is eager, below WEFT_WIN_REQ_MAX bytes), so
 *     a flush request answered means every earlier request is applied.
 * Targets whose memory is mapped lock through the lock word in their
 * control block; the server takes the same word for the origins that do
 * not map it. */
#ifndef WEFT_MPI_WIN_INT_H
#define WEFT_MPI_WIN_INT_H

#include "mpi/mpi_int.h"

/* The engine communicator ids of the server's requests and of its replies. */
#define WEFT_WIN_COMM_REQ   0xffffff03u
#define WEFT_WIN_COMM_REPLY 0xffffff04u
/* ... and of the data of large puts, which go by the engine's rendezvous
 * straight from the origin's buffer into the target's memory. */
#define WEFT_WIN_COMM_DATA 0xffffff05u
#define WEFT_WIN_PUT_RDV   (64u << 10) /* from this size on */
/* The largest request (header, target segments and data): eager on every
 * track, so requests complete in the order they were sent. */
#define WEFT_WIN_REQ_MAX (8u << 10)

enum { WEFT_WIN_MAPPED, WEFT_WIN_CMA, WEFT_WIN_REQUEST };

/* The lock word's exclusive bit; below it, the number of shared holders. */
#define WEFT_WIN_LOCK_EXCL (1ull << 62)

/* A target's control block: in shared memory for the flavours weft
 * allocates (its node's processes use it directly), else in this process. */
typedef struct weft__win_ctl {
    _Alignas(64) _Atomic uint64_t lock;
    atomic_int acc; /* accumulates on types no CPU atomic covers */
} weft__win_ctl_t;

/* What an origin knows of one target, and its own epoch towards it. */
typedef struct weft__win_peer {
    uint64_t base; /* the target's base address in its own process */
    uint64_t size;
    int disp_unit;
    int world; /* world rank */
    int pid;
    int path;             /* WEFT_WIN_MAPPED, _CMA or _REQUEST */
    char *mapped;         /* MAPPED: the target's base here */
    weft__win_ctl_t *ctl; /* MAPPED: its control block here */
    /* This process's epoch towards it: the lock it holds (0, or
     * MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE, with LOCK_HELD when taken rather
     * than asserted away with MPI_MODE_NOCHECK), and whether it is in the
     * group of MPI_Win_start. */
    atomic_int lock;
    atomic_bool started;
    /* REQUEST: requests sent since the last flush, and answers awaited. */
    atomic_long unflushed;
    atomic_long replies;
    /* The first failure of a request or an answer (its MPI class: the
     * target died, MPIX_ERR_PROC_FAILED), told by the next flush. */
    atomic_int err;
} weft__win_peer_t;

#define WEFT_WIN_LOCK_HELD 0x100

/* A region attached to a dynamic window. */
typedef struct weft__win_region {
    struct weft__win_region *next;
    uintptr_t base;
    size_t size;
} weft__win_region_t;

struct weft_mpi_win {
    uint32_t magic;
    uint32_t id;   /* the server's key: comm's engine id, the same everywhere */
    MPI_Comm comm; /* a private duplicate */
    int rank, size;
    int flavor;
    void *base;
    MPI_Aint bytes;
    int disp_unit;
    weft__win_peer_t *peer; /* [size] */
    weft__win_ctl_t *ctl;   /* this process's control block */
    bool ctl_own;           /* malloc'd (else in a segment) */
    /* Segments weft made or mapped for it, unmapped at free. */
    void **segs;
    size_t *seg_len;
    int nsegs;
    bool alloc_own; /* base is weft's (MPI_Win_allocate without shared memory) */
    bool serve;     /* some peer reaches this process through the server */
    /* Dynamic windows: the attached regions, under lock. */
    weft__win_region_t *regions;
    pthread_mutex_t lock;
    /* Epochs. */
    atomic_bool fence;   /* an access epoch opened by a fence */
    atomic_int lock_all; /* 0, or 1 + the lock_all's assert */
    MPI_Group start_group;
    MPI_Group post_group;
    MPI_Request *post_reqs; /* the completions awaited from post_group */
    /* Errors the server found in others' requests, told at their next
     * flush: [comm rank] of the origin. */
    atomic_int *req_err;
    /* Large puts whose data is still arriving, [comm rank] of the origin:
     * its flush and unlock wait for them. */
    atomic_int *rdv_pending;
    /* Requests the server applied: MPI_Win_sync acquires what it released. */
    atomic_ulong served;
    MPI_Info info;
    MPI_Errhandler errhandler;
    weft_mpi_attr_t *attrs;
    char name[MPI_MAX_OBJECT_NAME];
};

/* A full memory barrier: what a window's epoch ends with, so that stores
 * to mapped memory are seen by its next epoch. (TSan does not model
 * fences: a sequentially consistent read-modify-write stands in.) */
static inline void weft__win_fence(void)
{
#if defined(__SANITIZE_THREAD__)
    static _Atomic int word;
    atomic_fetch_add_explicit(&word, 0, memory_order_seq_cst);
#else
    atomic_thread_fence(memory_order_seq_cst);
#endif
}

/* End what this thread did to its own part of win before what the server
 * applies next (the server acquires served before each request), and see
 * what it applied: epochs' ends and MPI_Win_sync. */
static inline void weft__win_publish(MPI_Win win)
{
    atomic_fetch_add_explicit(&win->served, 0, memory_order_acq_rel);
    weft__win_fence();
}

/* MPI_SUCCESS when win is a live window, else MPI_ERR_WIN. */
int weft__win_check(MPI_Win win);
/* The window with server key id, or NULL (mpi_win.c's table). */
MPI_Win weft__win_find(uint32_t id);

/* The server (mpi_win_ops.c): started by the first window that needs it,
 * before its peers can know of the window; armed while such windows live. */
int weft__win_server_start(void);
void weft__win_server_use(bool on);
void weft__mpi_win_fini(void);

/* Wait until every operation this process issued to target t (every target
 * when t < 0) is complete there; the server's report of bad requests comes
 * back as an MPI error class. */
int weft__win_flush(MPI_Win win, int t);
/* The requests of the lock protocol (mpi_win_sync.c asks, the server
 * grants): kind LOCK or UNLOCK, lock type; returns the target's answer. */
int weft__win_lock_remote(MPI_Win win, int t, bool lock, int type);
/* Take or release the lock word at ctl for type (spinning with progress). */
void weft__win_lock_word(weft__win_ctl_t *ctl, int type);
bool weft__win_lock_try(weft__win_ctl_t *ctl, int type);
void weft__win_unlock_word(weft__win_ctl_t *ctl, int type);
/* Delete every attribute of win through the delete callbacks (Win_free). */
int weft__win_attrs_delete_all(MPI_Win win);
/* Whether [addr, addr + len) lies in one region attached to a dynamic win. */
bool weft__win_attached(MPI_Win win, uintptr_t addr, size_t len);
/* Whether this process has an access epoch towards t. */
static inline bool weft__win_access(MPI_Win win, int t)
{
    const weft__win_peer_t *p = &win->peer[t];
    return atomic_load_explicit(&win->lock_all, memory_order_relaxed) ||
           atomic_load_explicit(&p->lock, memory_order_relaxed) ||
           atomic_load_explicit(&win->fence, memory_order_relaxed) ||
           atomic_load_explicit(&p->started, memory_order_relaxed);
}

#endif
