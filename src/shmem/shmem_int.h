/* OpenSHMEM on weft, inside: the process's state, teams, and the helpers
 * every routine group uses. The layer sees only weft's public API. */
#ifndef WEFT_SHMEM_INT_H
#define WEFT_SHMEM_INT_H

#define WEFT_SHMEM_BUILD 1
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shmem.h"
#include "weft/weft.h"
#include "weft/weft_rma.h"

#define WEFT_SHMEM_EXPORT __attribute__((visibility("default")))

/* A team: the world PEs start, start + stride, ... (size of them). Every
 * team this release makes is strided, so translation is arithmetic. */
struct weft_shmem_team {
    int start, stride, size;
    int my_pe; /* this PE's index in the team, -1 if not a member */
    int num_contexts;
    bool predefined;
};

/* A context: all it holds is its options and team. Within a node an
 * operation is complete when its call returns, so a context needs no
 * queue and no lock: threads with their own contexts share nothing. */
struct weft_shmem_ctx {
    uint32_t magic; /* WEFT_SHMEM_CTX_MAGIC while alive */
    long options;
    shmem_team_t team;
    struct weft_shmem_ctx *next; /* on the recycled list once destroyed */
};
#define WEFT_SHMEM_CTX_MAGIC 0x5c7c7c01u

/* What the library keeps per process. The first bytes of the symmetric heap
 * are the library's own (sync words, see shmem_coll.c), the same on every
 * PE; the user's allocations come after. */
typedef struct weft_shmem_state {
    weft_ctx_t *ctx;
    int me, npes;
    int thread_level;
    atomic_int initialized;       /* 0 never, 1 running, 2 finalized */
    char *heap;                   /* the symmetric heap (weft_rma_heap_create) */
    struct weft_shmem_sync *sync; /* at the heap's start */
} weft_shmem_state_t;

extern weft_shmem_state_t weft__shmem;

/* Print "weft OpenSHMEM: fn: <why>" and end the job. */
void weft__shmem_fatal(const char *fn, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 2, 3)));
/* The library must be running. */
void weft__shmem_check_init(const char *fn);

/* Ends the job when addr (len bytes) on pe cannot be reached at all (a bad
 * PE, an address outside symmetric memory, a range past its region's
 * end); returns NULL otherwise: len 0, or a PE whose memory is not mapped
 * here and goes through the engine. */
void *weft__shmem_bad_ptr(const void *addr, size_t len, int pe, const char *fn);
/* After a weft_rma_* call on addr at pe: nothing when rc is WEFT_OK, else end
 * the job saying why. */
void weft__shmem_check_rc(int rc, const void *addr, size_t len, int pe, const char *fn);

/* A context argument: the default one, or a live one (else the job ends). */
void weft__shmem_check_ctx(shmem_ctx_t ctx, const char *fn);

/* Wait politely: spin a little, then make progress in the engine and let a
 * peer sharing the core run. */
void weft__shmem_pause(unsigned *spins);

/* Memory (shmem_mem.c): the allocator's setup on the heap past reserved. */
void weft__shmem_mem_init(char *base, size_t size);

/* Teams (shmem_team.c). */
void weft__shmem_team_init(void);
/* World PE of a team's index i. */
static inline int weft__shmem_team_pe(shmem_team_t t, int i)
{
    return t->start + i * t->stride;
}

/* Collectives (shmem_coll.c): a barrier over the members of team (this PE
 * among them), with all memory updates before it visible after it. */
void weft__shmem_team_barrier(shmem_team_t team);
/* The reserved sync area's size at the heap's start. */
size_t weft__shmem_sync_size(void);

#endif
