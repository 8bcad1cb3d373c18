/* Symmetric memory management (§9.3).
 *
 * Every PE makes the same calls in the same order (they are collective), so
 * one deterministic allocator per PE hands out the same offsets everywhere:
 * first fit over a list of blocks sorted by address, kept in private memory
 * (so a stray write into the heap cannot corrupt it), neighbors merged when
 * freed. Blocks are multiples of 64 bytes, aligned to 64 at least. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shmem/shmem_int.h"

#define GRAIN 64

typedef struct block {
    size_t off, size;
    bool used;
    struct block *prev, *next;
} block_t;

static char *base;
static block_t *blocks; /* sorted by off, covering the whole heap */

void weft__shmem_mem_init(char *heap, size_t size)
{
    base = heap;
    while (blocks) {
        block_t *n = blocks->next;
        free(blocks);
        blocks = n;
    }
    blocks = calloc(1, sizeof *blocks);
    if (!blocks)
        weft__shmem_fatal("shmem_init", "out of memory");
    blocks->size = size / GRAIN * GRAIN;
}

static block_t *split(block_t *b, size_t at)
{
    block_t *n = malloc(sizeof *n);
    if (!n)
        return NULL;
    n->off = b->off + at;
    n->size = b->size - at;
    n->used = false;
    n->prev = b;
    n->next = b->next;
    if (b->next)
        b->next->prev = n;
    b->next = n;
    b->size = at;
    return n;
}

/* size bytes at a multiple of align (a power of two, at least GRAIN). */
static void *alloc(size_t align, size_t size)
{
    if (size > SIZE_MAX - GRAIN)
        return NULL;
    size = (size + GRAIN - 1) / GRAIN * GRAIN;
    for (block_t *b = blocks; b; b = b->next) {
        if (b->used)
            continue;
        /* Aligned from the heap's start, which is aligned alike on every PE
         * (WEFT_RMA_HEAP_ALIGN): the same padding everywhere. */
        size_t at = (size_t)(base - weft__shmem.heap) + b->off;
        size_t pad = (align - at % align) % align;
        if (b->size < pad + size)
            continue;
        if (pad) {
            block_t *n = split(b, pad);
            if (!n)
                return NULL;
            b = n;
        }
        if (b->size > size && !split(b, size))
            return NULL;
        b->used = true;
        return base + b->off;
    }
    return NULL;
}

static block_t *find(void *p)
{
    for (block_t *b = blocks; b; b = b->next)
        if (base + b->off == (char *)p && b->used)
            return b;
    return NULL;
}

static void merge_next(block_t *b)
{
    block_t *n = b->next;
    b->size += n->size;
    b->next = n->next;
    if (n->next)
        n->next->prev = b;
    free(n);
}

static void release(block_t *b)
{
    b->used = false;
    if (b->next && !b->next->used)
        merge_next(b);
    if (b->prev && !b->prev->used)
        merge_next(b->prev);
}

static void *malloc_aligned(size_t align, size_t size, const char *fn)
{
    weft__shmem_check_init(fn);
    void *p = size ? alloc(align < GRAIN ? GRAIN : align, size) : NULL;
    /* The standard returns NULL when the heap cannot hold the request; say
     * why, since a program that does not look gets a crash later. */
    if (size && !p)
        fprintf(stderr,
                "weft OpenSHMEM: PE %d: %s: %zu bytes do not fit in the symmetric heap "
                "(SHMEM_SYMMETRIC_SIZE)\n",
                weft__shmem.me, fn, size);
    shmem_barrier_all(); /* everybody's block exists before anybody uses it */
    return p;
}

WEFT_SHMEM_EXPORT void *shmem_malloc(size_t size)
{
    return malloc_aligned(GRAIN, size, "shmem_malloc");
}

WEFT_SHMEM_EXPORT void *shmem_malloc_with_hints(size_t size, long hints)
{
    (void)hints; /* every block serves every use equally well here */
    return malloc_aligned(GRAIN, size, "shmem_malloc_with_hints");
}

WEFT_SHMEM_EXPORT void *shmem_calloc(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return malloc_aligned(GRAIN, SIZE_MAX, "shmem_calloc");
    weft__shmem_check_init("shmem_calloc");
    void *p = count && size ? alloc(GRAIN, count * size) : NULL;
    if (p)
        memset(p, 0, count * size);
    shmem_barrier_all();
    return p;
}

WEFT_SHMEM_EXPORT void *shmem_align(size_t alignment, size_t size)
{
    if (alignment == 0 || (alignment & (alignment - 1))) {
        weft__shmem_check_init("shmem_align");
        shmem_barrier_all();
        return NULL;
    }
    return malloc_aligned(alignment, size, "shmem_align");
}

WEFT_SHMEM_EXPORT void shmem_free(void *ptr)
{
    weft__shmem_check_init("shmem_free");
    shmem_barrier_all(); /* nobody still uses it (§9.3.1) */
    if (!ptr)
        return;
    block_t *b = find(ptr);
    if (!b)
        weft__shmem_fatal("shmem_free",
                          "%p was not returned by shmem_malloc (or was freed "
                          "already)",
                          ptr);
    release(b);
}

WEFT_SHMEM_EXPORT void *shmem_realloc(void *ptr, size_t size)
{
    weft__shmem_check_init("shmem_realloc");
    if (!ptr)
        return shmem_malloc(size);
    if (!size) {
        shmem_free(ptr);
        return NULL;
    }
    shmem_barrier_all();
    block_t *b = find(ptr);
    if (!b)
        weft__shmem_fatal("shmem_realloc", "%p was not returned by shmem_malloc", ptr);
    size_t want = (size + GRAIN - 1) / GRAIN * GRAIN;
    void *p = ptr;
    if (want <= b->size) {
        if (b->size > want && split(b, want))
            release(b->next);
    } else if (b->next && !b->next->used && b->size + b->next->size >= want) {
        merge_next(b);
        if (b->size > want && split(b, want))
            release(b->next);
    } else {
        size_t old = b->size;
        p = alloc(GRAIN, size);
        if (p) {
            memcpy(p, ptr, old < size ? old : size);
            release(find(ptr));
        }
    }
    shmem_barrier_all();
    return p;
}

WEFT_SHMEM_EXPORT void *shmalloc(size_t size)
{
    return shmem_malloc(size);
}

WEFT_SHMEM_EXPORT void shfree(void *ptr)
{
    shmem_free(ptr);
}

WEFT_SHMEM_EXPORT void *shrealloc(void *ptr, size_t size)
{
    return shmem_realloc(ptr, size);
}

WEFT_SHMEM_EXPORT void *shmemalign(size_t alignment, size_t size)
{
    return shmem_align(alignment, size);
}
