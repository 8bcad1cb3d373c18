/* Symmetric regions (include/weft/weft_rma.h): the heap and the program's
 * static data, each a shared-memory segment per process, mapped by every
 * process of the same node.
 *
 * Making a region: the process creates its segment (/weft-<job>-rma<k>-<rank>),
 * publishes its node (its node leader's rank) and the region's size, and
 * after a fence maps the segment of every process with the same node. A
 * second fence, once everybody mapped, lets each unlink its own name: the
 * memory lives as long as a mapping does, and nothing is left in /dev/shm,
 * even when a process dies later. */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "core/core_int.h"
#include "rma/rma.h"
#include "util/log.h"
#include "util/param.h"

enum { REGION_HEAP, REGION_STATIC, NREGIONS };

typedef struct region {
    char *base; /* this process's copy */
    size_t size;
    char **peer; /* [rank]: where rank's copy is mapped here, NULL if not */
} region_t;

struct weft__rma {
    region_t regions[NREGIONS];
    struct weft__rma_net *net; /* rma_net.c */
};

struct weft__rma_net **weft__rma_net_of(weft_ctx_t *ctx)
{
    return &ctx->rma->net;
}

/* FNV-1a: a job id too long or too odd for a shm name is replaced by it. */
static uint64_t name_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static void region_name(char *out, size_t n, weft_ctx_t *ctx, int kind, int rank)
{
    const char *job = ctx->boot ? weft__boot_job_id(ctx->boot) : "single";
    if (weft__name_plain(job, 40))
        snprintf(out, n, "/weft-%s-rma%d-%d", job, kind, rank);
    else
        snprintf(out, n, "/weft-h%016llx-rma%d-%d", (unsigned long long)name_hash(job), kind, rank);
}

static struct weft__rma *rma_of(weft_ctx_t *ctx)
{
    if (!ctx->rma)
        ctx->rma = calloc(1, sizeof *ctx->rma);
    return ctx->rma;
}

/* What a process tells the others of one of its regions. */
typedef struct region_card {
    int32_t node; /* its node leader's rank */
    uint64_t size;
} region_card_t;

/* Whether every process maps every region of this one's (one node, and
 * WEFT_RMA_MAP the same for every rank): then nobody sends it requests. */
static bool all_mapped(weft_ctx_t *ctx)
{
    for (int k = 0; k < NREGIONS; k++) {
        const region_t *reg = &ctx->rma->regions[k];
        for (int r = 0; reg->peer && r < ctx->size; r++)
            if (!reg->peer[r])
                return false;
    }
    return true;
}

/* Map the regions of kind of the processes on this node; this process's
 * segment (fd) is made and sized. Collective. */
static int region_share(weft_ctx_t *ctx, int kind, region_t *reg, const char *name)
{
    reg->peer = calloc((size_t)ctx->size, sizeof *reg->peer);
    if (!reg->peer)
        return WEFT_ENOMEM;
    reg->peer[ctx->rank] = reg->base;
    /* Served before any peer can learn of the region (the fence below). */
    int nrc = weft__rma_net_start(ctx);
    if (nrc != WEFT_OK)
        return nrc;
    if (!ctx->boot)
        return shm_unlink(name) == 0 ? WEFT_OK : WEFT_ESYS;
    bool map_peers = strcmp(weft__param_str("WEFT_RMA_MAP", "1"), "0") != 0;
    char key[48];
    snprintf(key, sizeof key, "rma%d.%d", kind, ctx->rank);
    region_card_t mine = {.node = ctx->node_leader, .size = reg->size};
    int rc = weft__boot_put(ctx->boot, key, &mine, sizeof mine);
    if (rc == WEFT_OK)
        rc = weft__boot_fence(ctx->boot);
    for (int r = 0; rc == WEFT_OK && r < ctx->size; r++) {
        if (r == ctx->rank)
            continue;
        region_card_t card;
        size_t len = sizeof card;
        snprintf(key, sizeof key, "rma%d.%d", kind, r);
        if ((rc = weft__boot_get(ctx->boot, key, &card, &len)) != WEFT_OK)
            break;
        if (card.node != ctx->node_leader || !map_peers)
            continue; /* another node: reached through the engine's messages */
        if (card.size != reg->size) {
            weft_log_error("rma: rank %d's region %d has %llu bytes, this one %zu", r, kind,
                           (unsigned long long)card.size, reg->size);
            rc = WEFT_EINVAL;
            break;
        }
        char peer_name[96];
        region_name(peer_name, sizeof peer_name, ctx, kind, r);
        int fd = shm_open(peer_name, O_RDWR | O_CLOEXEC, 0);
        if (fd < 0) {
            weft_log_error("rma: shm_open(%s): %s", peer_name, strerror(errno));
            rc = WEFT_ESYS;
            break;
        }
        void *p = mmap(NULL, reg->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (p == MAP_FAILED) {
            weft_log_error("rma: mapping rank %d's region %d: %s", r, kind, strerror(errno));
            rc = WEFT_ESYS;
            break;
        }
        reg->peer[r] = p;
    }
    /* Everybody mapped (or failed): the names can go. */
    int frc = weft__boot_fence(ctx->boot);
    shm_unlink(name);
    if (rc == WEFT_OK)
        weft__rma_net_arm(ctx, !all_mapped(ctx));
    return rc != WEFT_OK ? rc : frc;
}

/* A new segment of size bytes for this process's region kind: its fd. */
static int segment_create(weft_ctx_t *ctx, int kind, size_t size, char *name, size_t n)
{
    region_name(name, n, ctx, kind, ctx->rank);
    shm_unlink(name); /* a dead job's leftover of the same name */
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        weft_log_error("rma: shm_open(%s): %s", name, strerror(errno));
        return -1;
    }
    if (ftruncate(fd, (off_t)size) != 0) {
        weft_log_error("rma: sizing %s to %zu bytes: %s", name, size, strerror(errno));
        close(fd);
        shm_unlink(name);
        return -1;
    }
    return fd;
}

static size_t page_round(size_t n)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    return (n + pg - 1) / pg * pg;
}

/* Map fd's size bytes at an address aligned to WEFT_RMA_HEAP_ALIGN, so that
 * an alignment up to it is the same on every process (allocators align
 * offsets from the heap's start). NULL on failure. */
static void *map_aligned(int fd, size_t size)
{
    size_t span = size + WEFT_RMA_HEAP_ALIGN;
    char *area = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (area == MAP_FAILED)
        return NULL;
    uintptr_t a =
        ((uintptr_t)area + WEFT_RMA_HEAP_ALIGN - 1) & ~(uintptr_t)(WEFT_RMA_HEAP_ALIGN - 1);
    char *start = (char *)a;
    void *p = mmap(start, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
    if (p == MAP_FAILED) {
        munmap(area, span);
        return NULL;
    }
    /* The reservation around it goes back. */
    if (start > area)
        munmap(area, (size_t)(start - area));
    size_t tail = (size_t)(area + span - (start + size));
    if (tail)
        munmap(start + size, tail);
    return p;
}

int weft_rma_heap_create(weft_ctx_t *ctx, size_t size, void **base_out)
{
    if (!ctx || !base_out || size == 0)
        return WEFT_EINVAL;
    struct weft__rma *rma = rma_of(ctx);
    if (!rma)
        return WEFT_ENOMEM;
    region_t *reg = &rma->regions[REGION_HEAP];
    if (reg->base)
        return WEFT_ESTATE;
    size = page_round(size);
    char name[96];
    int fd = segment_create(ctx, REGION_HEAP, size, name, sizeof name);
    if (fd < 0)
        return WEFT_ESYS;
    void *p = map_aligned(fd, size);
    close(fd);
    if (!p) {
        shm_unlink(name);
        return WEFT_ENOMEM;
    }
    reg->base = p;
    reg->size = size;
    int rc = region_share(ctx, REGION_HEAP, reg, name);
    if (rc == WEFT_OK)
        *base_out = p;
    return rc;
}

/* ---- segments of one process (weft_rma_seg_*) ---- */

/* Numbers the segments a process makes, after its region kinds. */
static atomic_int seg_serial = NREGIONS;

int weft_rma_seg_create(weft_ctx_t *ctx, size_t size, char *name_out, void **base_out)
{
    if (!ctx || !name_out || !base_out)
        return WEFT_EINVAL;
    size = page_round(size ? size : 1);
    /* tmpfs sizes a segment lazily: one larger than what is free would
     * fault (SIGBUS) at its first untouched page instead of failing here. */
    struct statvfs fs;
    if (statvfs("/dev/shm", &fs) == 0 && (uint64_t)fs.f_bavail * fs.f_frsize < size) {
        weft_log_error("rma: a segment of %zu bytes does not fit in /dev/shm (%llu bytes free)",
                       size, (unsigned long long)fs.f_bavail * fs.f_frsize);
        return WEFT_ENOMEM;
    }
    int fd =
        segment_create(ctx, atomic_fetch_add(&seg_serial, 1), size, name_out, WEFT_RMA_SEG_NAME);
    if (fd < 0)
        return WEFT_ESYS;
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        shm_unlink(name_out);
        return WEFT_ENOMEM;
    }
    *base_out = p;
    return WEFT_OK;
}

int weft_rma_seg_map(weft_ctx_t *ctx, const char *name, size_t size, void **base_out)
{
    if (!ctx || !name || !base_out)
        return WEFT_EINVAL;
    int fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0) {
        weft_log_error("rma: shm_open(%s): %s", name, strerror(errno));
        return WEFT_ESYS;
    }
    void *p = mmap(NULL, page_round(size ? size : 1), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return WEFT_ENOMEM;
    *base_out = p;
    return WEFT_OK;
}

int weft_rma_seg_unlink(const char *name)
{
    if (!name)
        return WEFT_EINVAL;
    return shm_unlink(name) == 0 ? WEFT_OK : WEFT_ESYS;
}

int weft_rma_seg_unmap(void *base, size_t size)
{
    if (!base)
        return WEFT_EINVAL;
    return munmap(base, page_round(size ? size : 1)) == 0 ? WEFT_OK : WEFT_ESYS;
}

/* The executable's writable data, without its part made read-only after
 * relocation (RELRO): [*start, *end), page aligned. */
typedef struct static_range {
    uintptr_t start, end;
} static_range_t;

static int find_static(struct dl_phdr_info *info, size_t sz, void *arg)
{
    (void)sz;
    static_range_t *r = arg;
    uintptr_t relro_end = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_GNU_RELRO)
            relro_end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
    }
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
            continue;
        uintptr_t s = info->dlpi_addr + ph->p_vaddr, e = s + ph->p_memsz;
        if (relro_end > s && relro_end <= e)
            s = relro_end;
        s = (s + pg - 1) / pg * pg; /* a page shared with RELRO stays private */
        e = (e + pg - 1) / pg * pg;
        if (e > s) {
            r->start = s;
            r->end = e;
        }
    }
    return 1; /* the first object is the executable */
}

/* Copy n bytes (a multiple of 8, both ends aligned) word by word, unseen by
 * the sanitizers: the pages hold the redzones they put between globals,
 * which are the program's too and must move with it. Volatile, so that the
 * loop does not become a memcpy call that they intercept. */
__attribute__((no_sanitize("address", "thread", "undefined"))) static void
copy_pages(void *dst, const void *src, size_t n)
{
    volatile uint64_t *d = dst;
    const volatile uint64_t *s = src;
    for (size_t i = 0; i < n / 8; i++)
        if (s[i]) /* the segment starts zeroed: untouched pages stay unallocated */
            d[i] = s[i];
}

int weft_rma_expose_static(weft_ctx_t *ctx)
{
    if (!ctx)
        return WEFT_EINVAL;
    struct weft__rma *rma = rma_of(ctx);
    if (!rma)
        return WEFT_ENOMEM;
    region_t *reg = &rma->regions[REGION_STATIC];
    if (reg->base)
        return WEFT_ESTATE;
    static_range_t r = {0, 0};
    dl_iterate_phdr(find_static, &r);
    if (r.end <= r.start)
        return WEFT_EUNSUPPORTED;
    size_t size = r.end - r.start;
    char name[96];
    int fd = segment_create(ctx, REGION_STATIC, size, name, sizeof name);
    if (fd < 0)
        return WEFT_ESYS;
    /* Copy the pages into the segment, then put the segment in their place. */
    void *tmp = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (tmp == MAP_FAILED) {
        close(fd);
        shm_unlink(name);
        return WEFT_ENOMEM;
    }
    copy_pages(tmp, (void *)r.start, size);
    void *p = mmap((void *)r.start, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
    munmap(tmp, size);
    close(fd);
    if (p == MAP_FAILED) {
        shm_unlink(name);
        weft_log_error("rma: moving static data into shared memory: %s", strerror(errno));
        return WEFT_ESYS;
    }
    reg->base = p;
    reg->size = size;
    return region_share(ctx, REGION_STATIC, reg, name);
}

void *weft_rma_ptr_range(weft_ctx_t *ctx, int pe, const void *addr, size_t len)
{
    if (!ctx || !ctx->rma || pe < 0 || pe >= ctx->size)
        return NULL;
    const char *a = addr;
    for (int k = 0; k < NREGIONS; k++) {
        const region_t *reg = &ctx->rma->regions[k];
        if (reg->base && a >= reg->base && a < reg->base + reg->size) {
            if (len > (size_t)(reg->base + reg->size - a))
                return NULL; /* runs past the region's end */
            return reg->peer[pe] ? reg->peer[pe] + (a - reg->base) : NULL;
        }
    }
    return NULL;
}

void *weft_rma_ptr(weft_ctx_t *ctx, int pe, const void *addr)
{
    return weft_rma_ptr_range(ctx, pe, addr, 1);
}

int weft_rma_is_symmetric(weft_ctx_t *ctx, const void *addr)
{
    return ctx && weft_rma_ptr(ctx, ctx->rank, addr) != NULL;
}

int weft_rma_pe_mapped(weft_ctx_t *ctx, int pe)
{
    if (!ctx || pe < 0 || pe >= ctx->size)
        return 0;
    if (pe == ctx->rank)
        return 1;
    for (int k = 0; ctx->rma && k < NREGIONS; k++)
        if (ctx->rma->regions[k].peer)
            return ctx->rma->regions[k].peer[pe] != NULL;
    return 0;
}

void *weft_rma_heap_base(weft_ctx_t *ctx, size_t *size_out)
{
    const region_t *reg = ctx && ctx->rma ? &ctx->rma->regions[REGION_HEAP] : NULL;
    if (size_out)
        *size_out = reg ? reg->size : 0;
    return reg ? reg->base : NULL;
}

bool weft__rma_locate(weft_ctx_t *ctx, const void *addr, size_t len, int *kind, uint64_t *off)
{
    const char *a = addr;
    for (int k = 0; ctx->rma && k < NREGIONS; k++) {
        const region_t *reg = &ctx->rma->regions[k];
        if (reg->base && a >= reg->base && a < reg->base + reg->size) {
            if (len > (size_t)(reg->base + reg->size - a))
                return false;
            *kind = k;
            *off = (uint64_t)(a - reg->base);
            return true;
        }
    }
    return false;
}

void *weft__rma_at(weft_ctx_t *ctx, int kind, uint64_t off, size_t len)
{
    if (!ctx->rma || kind < 0 || kind >= NREGIONS)
        return NULL;
    const region_t *reg = &ctx->rma->regions[kind];
    if (!reg->base || off > reg->size || len > reg->size - off)
        return NULL;
    return reg->base + off;
}

void weft__rma_fini(weft_ctx_t *ctx)
{
    struct weft__rma *rma = ctx->rma;
    if (!rma)
        return;
    weft__rma_net_fini(ctx);
    for (int k = 0; k < NREGIONS; k++) {
        region_t *reg = &rma->regions[k];
        for (int r = 0; reg->peer && r < ctx->size; r++)
            if (reg->peer[r] && r != ctx->rank)
                munmap(reg->peer[r], reg->size);
        /* The static data stays where it is: the program still runs on it. */
        if (k == REGION_HEAP && reg->base)
            munmap(reg->base, reg->size);
        free(reg->peer);
    }
    free(rma);
    ctx->rma = NULL;
}
