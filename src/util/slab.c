/* Slab allocation of small fixed-size objects; see slab.h. */
#include <stdlib.h>
#include <string.h>

#include "util/slab.h"
#include "weft/weft.h"

#define SLAB_MAX_OBJS 256
/* A slab's header is one cache line at one of SLAB_COLOURS offsets, chosen by
 * the slab's address, and its objects follow it. Slabs are aligned to their
 * size, so headers at one fixed offset would all fall into the same cache set
 * (16 KiB apart), and a free, which writes its slab's header, would evict
 * another slab's header every time. */
#define SLAB_COLOURS 16

/* The header of a slab. */
struct weft_slab {
    uint32_t index;                      /* in cache->slabs */
    uint32_t used;                       /* live objects */
    uint64_t in_use[SLAB_MAX_OBJS / 64]; /* bit set: object allocated */
};

_Static_assert(sizeof(weft_slab_t) <= WEFT_CACHELINE, "slab header fits one cache line");

/* Offset of the header in the slab at base: a hash of the address, because
 * the allocator may space slabs by any multiple of their size. */
static inline size_t slab_colour(uintptr_t base)
{
    uint64_t h = (uint64_t)(base / WEFT_SLAB_BYTES) * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 60) % SLAB_COLOURS * WEFT_CACHELINE;
}

static inline char *slab_obj(const weft_slab_cache_t *c, weft_slab_t *s, uint32_t i)
{
    return (char *)s + WEFT_CACHELINE + (size_t)i * c->obj_size;
}

int weft_slab_init(weft_slab_cache_t *c, size_t obj_size, size_t keep_objects)
{
    memset(c, 0, sizeof *c);
    obj_size = WEFT_ALIGN_UP(obj_size ? obj_size : 1, (size_t)WEFT_CACHELINE);
    size_t room = WEFT_SLAB_BYTES - SLAB_COLOURS * WEFT_CACHELINE; /* after any header */
    if (obj_size > room / 4)
        return WEFT_EINVAL;
    c->obj_size = obj_size;
    c->per_slab = (uint32_t)(room / obj_size);
    if (c->per_slab > SLAB_MAX_OBJS)
        c->per_slab = SLAB_MAX_OBJS;
    /* offset * recip >> 32 == offset / obj_size for every offset in a slab:
     * the error of the rounded reciprocal stays below one object there. */
    c->recip = ((1ull << 32) + obj_size - 1) / obj_size;
    c->keep_slabs = (keep_objects + c->per_slab - 1) / c->per_slab;
    return WEFT_OK;
}

void weft_slab_fini(weft_slab_cache_t *c)
{
    for (size_t i = 0; i < c->nslabs; i++)
        free((void *)((uintptr_t)c->slabs[i] & ~(uintptr_t)(WEFT_SLAB_BYTES - 1)));
    free(c->slabs);
    free(c->nonfull);
    memset(c, 0, sizeof *c);
}

static int slab_grow(weft_slab_cache_t *c)
{
    if (c->nslabs == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        weft_slab_t **slabs = realloc(c->slabs, cap * sizeof *slabs);
        if (!slabs)
            return WEFT_ENOMEM;
        c->slabs = slabs;
        uint64_t *nonfull = realloc(c->nonfull, cap / 64 * sizeof *nonfull);
        if (!nonfull)
            return WEFT_ENOMEM;
        memset(nonfull + c->cap / 64, 0, (cap - c->cap) / 64 * sizeof *nonfull);
        c->nonfull = nonfull;
        c->cap = cap;
    }
    char *base = aligned_alloc(WEFT_SLAB_BYTES, WEFT_SLAB_BYTES);
    if (!base)
        return WEFT_ENOMEM;
    weft_slab_t *s = (weft_slab_t *)(base + slab_colour((uintptr_t)base));
    memset(s, 0, sizeof *s);
    s->index = (uint32_t)c->nslabs;
    c->slabs[c->nslabs] = s;
    c->nonfull[c->nslabs / 64] |= 1ull << (c->nslabs % 64);
    c->nslabs++;
    return WEFT_OK;
}

void *weft_slab_alloc(weft_slab_cache_t *c)
{
    size_t w = 0, nwords = c->cap / 64;
    while (w < nwords && !c->nonfull[w])
        w++;
    if (w == nwords) {
        if (slab_grow(c) != WEFT_OK)
            return NULL;
        w = (c->nslabs - 1) / 64;
    }
    size_t si = w * 64 + (size_t)__builtin_ctzll(c->nonfull[w]);
    weft_slab_t *s = c->slabs[si];
    uint32_t k = 0;
    while (s->in_use[k] == UINT64_MAX)
        k++;
    uint32_t bit = (uint32_t)__builtin_ctzll(~s->in_use[k]);
    uint32_t i = k * 64 + bit;
    s->in_use[k] |= 1ull << bit;
    if (++s->used == c->per_slab)
        c->nonfull[si / 64] &= ~(1ull << (si % 64));
    c->live++;
    return slab_obj(c, s, i);
}

void weft_slab_free(weft_slab_cache_t *c, void *obj)
{
    uintptr_t base = (uintptr_t)obj & ~(uintptr_t)(WEFT_SLAB_BYTES - 1);
    weft_slab_t *s = (weft_slab_t *)(base + slab_colour(base));
    uint64_t offset = (uint64_t)((char *)obj - (char *)s - WEFT_CACHELINE);
    uint32_t i = (uint32_t)((offset * c->recip) >> 32);
    s->in_use[i / 64] &= ~(1ull << (i % 64));
    c->nonfull[s->index / 64] |= 1ull << (s->index % 64);
    s->used--;
    c->live--;
    /* Give back empty slabs from the end: allocation prefers low slabs, so
     * the last ones are the first to empty after a burst. */
    while (c->nslabs > c->keep_slabs && c->slabs[c->nslabs - 1]->used == 0) {
        size_t last = --c->nslabs;
        c->nonfull[last / 64] &= ~(1ull << (last % 64));
        free((void *)((uintptr_t)c->slabs[last] & ~(uintptr_t)(WEFT_SLAB_BYTES - 1)));
    }
}

void *weft_slab_next(const weft_slab_cache_t *c, weft_slab_cursor_t *cur)
{
    for (; cur->slab < c->nslabs; cur->slab++, cur->index = 0) {
        weft_slab_t *s = c->slabs[cur->slab];
        while (cur->index < c->per_slab) {
            uint32_t k = cur->index / 64;
            uint64_t bits = s->in_use[k] & (UINT64_MAX << (cur->index % 64));
            if (bits) {
                uint32_t i = k * 64 + (uint32_t)__builtin_ctzll(bits);
                cur->index = i + 1;
                return slab_obj(c, s, i);
            }
            cur->index = (k + 1) * 64;
        }
    }
    return NULL;
}
