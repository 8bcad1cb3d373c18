/* Slab allocation of small fixed-size objects, cache-line aligned.
 *
 * Objects live in 16 KiB slabs (aligned to their size, so an object finds its
 * slab from its address) and every allocation takes the lowest free object of
 * the lowest slab that has one. So objects allocated in a burst lie next to
 * each other in allocation order, whatever order the previous burst freed
 * them in, and a program with few live objects keeps reusing the same few
 * cache lines. A random walk over n live objects touches about n object-sized
 * runs of memory in few pages, instead of n malloc chunks spread over the heap.
 *
 * Empty slabs beyond `keep` objects' worth are given back once they are the
 * last ones, so memory held after the largest burst stays bounded.
 *
 * Not thread-safe: the owner serialises every call (the engine lock).
 */
#ifndef WEFT_SLAB_H
#define WEFT_SLAB_H

#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

#define WEFT_SLAB_BYTES 16384u

typedef struct weft_slab weft_slab_t;

typedef struct weft_slab_cache {
    size_t obj_size;     /* a multiple of WEFT_CACHELINE */
    uint32_t per_slab;   /* objects in one slab */
    uint64_t recip;      /* ceil(2^32 / obj_size): object index without a division */
    size_t keep_slabs;   /* empty slabs up to this count are kept */
    weft_slab_t **slabs; /* in address-independent creation order */
    uint64_t *nonfull;   /* bit i: slabs[i] has a free object */
    size_t nslabs, cap;  /* slabs in use, room in slabs[] (a multiple of 64) */
    size_t live;         /* objects allocated */
} weft_slab_cache_t;

/* A position in a walk over the live objects (weft_slab_next). */
typedef struct weft_slab_cursor {
    size_t slab;
    uint32_t index;
} weft_slab_cursor_t;

/* obj_size is rounded up to a cache line (at most a quarter of a slab); empty
 * slabs holding up to keep_objects objects are kept for reuse. */
int weft_slab_init(weft_slab_cache_t *c, size_t obj_size, size_t keep_objects);
/* Free every slab, live objects included. */
void weft_slab_fini(weft_slab_cache_t *c);
/* An object of obj_size bytes, cache-line aligned, contents undefined; NULL
 * when out of memory. */
void *weft_slab_alloc(weft_slab_cache_t *c);
/* Give back an object from weft_slab_alloc of the same cache. */
void weft_slab_free(weft_slab_cache_t *c, void *obj);
/* The next live object after the cursor (start with {0, 0}), in address order
 * within each slab; NULL at the end. The object returned may be freed before
 * the next call. */
void *weft_slab_next(const weft_slab_cache_t *c, weft_slab_cursor_t *cur);

#endif
