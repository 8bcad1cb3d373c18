/* weft one-sided memory: the symmetric regions a process exposes to the
 * others of its job, and where a peer's copy of a symmetric address lies.
 *
 * A region is symmetric: every process of the job exposes one of the same
 * size and layout, so an address in one process's region names the same
 * object in every other's (base + offset). Two kinds exist:
 *   - the heap, made by weft_rma_heap_create (collective);
 *   - the program's own static data (.data and .bss), exposed by
 *     weft_rma_expose_static (collective), valid when every process runs the
 *     same executable, as OpenSHMEM's global and static variables need.
 * Processes on one node map each other's regions, so a put or a get to such
 * a peer is a copy and an atomic is a CPU atomic: weft_rma_ptr gives the
 * address to use. A peer on another node has no mapping here (NULL). */
#ifndef WEFT_RMA_H
#define WEFT_RMA_H

#include <stddef.h>
#include <stdint.h>

#include "weft/weft.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The heap size OpenSHMEM makes when SHMEM_SYMMETRIC_SIZE is not set. */
#define WEFT_RMA_HEAP_DEFAULT ((size_t)256 << 20)

/* The heap's start is aligned to this on every process. */
#define WEFT_RMA_HEAP_ALIGN ((size_t)2 << 20)

/* Make this process's symmetric heap of size bytes (rounded up to pages)
 * and map those of the processes on its node. Collective over the job:
 * every process calls it with the same size. The memory is zeroed. A
 * context has one heap; *base_out receives its start. */
WEFT_API int weft_rma_heap_create(weft_ctx_t *ctx, size_t size, void **base_out);

/* Expose the program's static data (.data and .bss) to the processes on
 * this node: the pages are moved, contents and all, into shared memory at
 * the same addresses. Collective over the job; call it before other
 * threads touch static data. WEFT_EUNSUPPORTED where the executable's layout
 * cannot be found. */
WEFT_API int weft_rma_expose_static(weft_ctx_t *ctx);

/* The address in this process of pe's copy of the symmetric object at addr
 * (an address in one of this process's symmetric regions), or NULL: addr is
 * in no symmetric region, or pe's regions are not mapped here (another
 * node, or pe out of range). For pe = this process, addr itself when it is
 * symmetric. */
WEFT_API void *weft_rma_ptr(weft_ctx_t *ctx, int pe, const void *addr);

/* The same for the len bytes from addr, which must all lie in one region:
 * NULL when they run past its end. */
WEFT_API void *weft_rma_ptr_range(weft_ctx_t *ctx, int pe, const void *addr, size_t len);

/* ---- one-sided operations on any process of the job ----
 * dest/src/target name symmetric memory of this process; the operation
 * acts on pe's copy. When pe's regions are mapped here it is a copy or a
 * CPU atomic; otherwise a message that pe's progress engine serves (any
 * thread of pe that makes progress: a waiting one, or its progress thread).
 * Errors: WEFT_EINVAL (an address outside symmetric memory, or a range
 * running past its region), WEFT_ERANK, WEFT_ENOMEM, the engine's.
 * Thread-safe. The engine communicator ids WEFT_RMA_COMM_REQ and
 * WEFT_RMA_COMM_REPLY are this layer's own. */
#define WEFT_RMA_COMM_REQ   0xffffff01u
#define WEFT_RMA_COMM_REPLY 0xffffff02u

/* Put len bytes from src (any memory) into pe's dest. Returns once src may
 * be reused; the data is in place at pe after weft_rma_quiet. Puts to one pe
 * take effect in the order they were issued. */
WEFT_API int weft_rma_put(weft_ctx_t *ctx, int pe, void *dest, const void *src, size_t len);
/* The same, then pe's 64-bit signal at sig set to value (add = 0) or
 * increased by it (add = 1), never before the data is in place. */
WEFT_API int weft_rma_put_signal(weft_ctx_t *ctx, int pe, void *dest, const void *src, size_t len,
                                 uint64_t *sig, uint64_t value, int add);
/* Copy len bytes of pe's src into dest (any memory); returns when they are
 * there. */
WEFT_API int weft_rma_get(weft_ctx_t *ctx, int pe, void *dest, const void *src, size_t len);

/* Atomic operations on a 4- or 8-byte integer of pe's (the bits of a float
 * or a double for fetch, set and swap). */
typedef enum weft_rma_amo_op {
    WEFT_RMA_AMO_FETCH, /* *old = target */
    WEFT_RMA_AMO_SET,   /* target = operand */
    WEFT_RMA_AMO_SWAP,  /* *old = target, target = operand */
    WEFT_RMA_AMO_CSWAP, /* *old = target; if it equals compare, target = operand */
    WEFT_RMA_AMO_ADD,   /* *old = target, target += operand */
    WEFT_RMA_AMO_AND,   /* *old = target, target &= operand */
    WEFT_RMA_AMO_OR,
    WEFT_RMA_AMO_XOR,
} weft_rma_amo_op_t;
/* Apply op to pe's target (size 4 or 8 bytes); *old (if not NULL) receives
 * the value before. Sequentially consistent; returns once applied. */
WEFT_API int weft_rma_amo(weft_ctx_t *ctx, int pe, weft_rma_amo_op_t op, void *target, size_t size,
                          uint64_t operand, uint64_t compare, uint64_t *old);
/* Wait until every put this process issued is in place at its target. */
WEFT_API int weft_rma_quiet(weft_ctx_t *ctx);

/* Whether addr lies in a symmetric region of this process (1) or not (0). */
WEFT_API int weft_rma_is_symmetric(weft_ctx_t *ctx, const void *addr);

/* Whether pe's regions are mapped here (1: same node) or not (0). */
WEFT_API int weft_rma_pe_mapped(weft_ctx_t *ctx, int pe);

/* The heap's start and size (NULL and 0 before weft_rma_heap_create). */
WEFT_API void *weft_rma_heap_base(weft_ctx_t *ctx, size_t *size_out);

/* ---- shared-memory segments of one process ----
 * For a front end whose memory is not symmetric (MPI windows): a process
 * makes a segment of its own, tells its name to the processes of its node
 * (through its own messages), and they map it. */

/* Bytes of a segment's name, its final NUL included. */
#define WEFT_RMA_SEG_NAME 96

/* Make a zeroed segment of size bytes (rounded up to pages; 0 makes one
 * page), mapped here at *base_out; name_out (WEFT_RMA_SEG_NAME bytes)
 * receives its name. The name stays until weft_rma_seg_unlink: unlink it
 * once every process that maps it did. Errors: WEFT_EINVAL, WEFT_ESYS,
 * WEFT_ENOMEM (also when /dev/shm has not that much room left, rather
 * than a fault at the first page past it). Thread-safe. */
WEFT_API int weft_rma_seg_create(weft_ctx_t *ctx, size_t size, char *name_out, void **base_out);

/* Map the segment called name (size bytes, as made) at *base_out. Errors:
 * WEFT_EINVAL, WEFT_ESYS (no such segment), WEFT_ENOMEM. Thread-safe. */
WEFT_API int weft_rma_seg_map(weft_ctx_t *ctx, const char *name, size_t size, void **base_out);

/* Remove a segment's name; its memory stays while some process maps it. */
WEFT_API int weft_rma_seg_unlink(const char *name);

/* Unmap size bytes at base, a segment made or mapped here. */
WEFT_API int weft_rma_seg_unmap(void *base, size_t size);

#ifdef __cplusplus
}
#endif
#endif
