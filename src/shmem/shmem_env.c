/* OpenSHMEM setup, exit and query (§9.1), contexts (§9.5), ordering (§9.11).
 *
 * shmem_init joins the job through the engine (the same launcher as MPI:
 * oshrun is weftrun), moves the program's static data into shared memory
 * and makes the symmetric heap (SHMEM_SYMMETRIC_SIZE bytes, as other
 * OpenSHMEMs read it; SMA_SYMMETRIC_SIZE too), so that every PE maps every
 * other's symmetric memory. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shmem/shmem_int.h"

weft_shmem_state_t weft__shmem;

static struct weft_shmem_ctx default_ctx = {.magic = WEFT_SHMEM_CTX_MAGIC};
WEFT_SHMEM_EXPORT shmem_ctx_t SHMEM_CTX_DEFAULT = &default_ctx;

void weft__shmem_fatal(const char *fn, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "weft OpenSHMEM: PE %d: %s: %s\n", weft__shmem.me, fn, msg);
    fflush(stderr);
    if (weft__shmem.ctx)
        weft_abort(weft__shmem.ctx, 1, msg);
    exit(1);
}

void weft__shmem_check_init(const char *fn)
{
    if (__builtin_expect(atomic_load_explicit(&weft__shmem.initialized, memory_order_relaxed) != 1,
                         0))
        weft__shmem_fatal(fn, "called %s shmem_init",
                          weft__shmem.initialized ? "after shmem_finalize, without" : "before");
}

void weft__shmem_check_ctx(shmem_ctx_t ctx, const char *fn)
{
    if (__builtin_expect(!ctx || ctx->magic != WEFT_SHMEM_CTX_MAGIC, 0))
        weft__shmem_fatal(fn, "context %p is not a live context (destroyed, or never created)",
                          (void *)ctx);
}

void *weft__shmem_bad_ptr(const void *addr, size_t len, int pe, const char *fn)
{
    if (pe < 0 || pe >= weft__shmem.npes)
        weft__shmem_fatal(fn, "PE %d out of range (0 to %d)", pe, weft__shmem.npes - 1);
    if (len == 0)
        return NULL;
    weft_ctx_t *ctx = weft__shmem.ctx;
    if (!weft_rma_ptr(ctx, weft__shmem.me, addr))
        weft__shmem_fatal(
            fn, "address %p is not symmetric (not in the symmetric heap or static data)", addr);
    if (!weft_rma_ptr_range(ctx, weft__shmem.me, addr, len))
        weft__shmem_fatal(fn, "the %zu bytes at %p run past the end of their symmetric region", len,
                          addr);
    return NULL; /* symmetric, only not mapped: the caller goes through the engine */
}

void weft__shmem_check_rc(int rc, const void *addr, size_t len, int pe, const char *fn)
{
    if (rc == WEFT_OK)
        return;
    weft__shmem_bad_ptr(addr, len, pe, fn);
    weft__shmem_fatal(fn, "PE %d: %s", pe, weft_strerror(rc));
}

void weft__shmem_pause(unsigned *spins)
{
    if (++*spins < 256) {
        __builtin_ia32_pause();
        return;
    }
    *spins = 0;
    weft_progress(weft__shmem.ctx); /* what the engine owes the job (an MPI side) */
    sched_yield();
}

/* "256M", "1G", "65536": bytes; 0 if it does not parse. */
static size_t parse_size(const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v <= 0)
        return 0;
    switch (*end) {
    case 'k':
    case 'K':
        v *= 1024.0;
        end++;
        break;
    case 'm':
    case 'M':
        v *= 1024.0 * 1024.0;
        end++;
        break;
    case 'g':
    case 'G':
        v *= 1024.0 * 1024.0 * 1024.0;
        end++;
        break;
    case 't':
    case 'T':
        v *= 1024.0 * 1024.0 * 1024.0 * 1024.0;
        end++;
        break;
    default:
        break;
    }
    if (*end == 'b' || *end == 'B')
        end++;
    return *end ? 0 : (size_t)v;
}

static size_t heap_size(void)
{
    const char *names[] = {"SHMEM_SYMMETRIC_SIZE", "SMA_SYMMETRIC_SIZE"};
    for (int i = 0; i < 2; i++) {
        const char *v = getenv(names[i]);
        if (v && *v) {
            size_t n = parse_size(v);
            if (!n)
                weft__shmem_fatal("shmem_init", "%s=%s is not a size (bytes, or with K, M, G)",
                                  names[i], v);
            return n;
        }
    }
    return WEFT_RMA_HEAP_DEFAULT;
}

static void at_exit(void)
{
    if (atomic_load(&weft__shmem.initialized) == 1)
        shmem_finalize();
}

static int init(int requested, const char *fn)
{
    int state = atomic_load(&weft__shmem.initialized);
    if (state == 1)
        return 0; /* a second init is allowed and does nothing */
    if (state == 2)
        weft__shmem_fatal(fn, "OpenSHMEM was finalized and cannot start again");
    if (requested < SHMEM_THREAD_SINGLE || requested > SHMEM_THREAD_MULTIPLE)
        requested = SHMEM_THREAD_MULTIPLE;
    /* SHMEM's four levels and the engine's are the same, in the same order. */
    weft_init_params_t params = {.field_mask = WEFT_INIT_FIELD_THREAD_LEVEL,
                                 .thread_level = requested};
    int rc = weft_world_acquire(&params, &weft__shmem.ctx);
    if (rc != WEFT_OK)
        weft__shmem_fatal(fn, "cannot join the job: %s", weft_strerror(rc));
    weft__shmem.me = weft_rank(weft__shmem.ctx);
    weft__shmem.npes = weft_size(weft__shmem.ctx);
    weft__shmem.thread_level = weft_thread_level(weft__shmem.ctx);
    size_t size = heap_size();
    if ((rc = weft_rma_expose_static(weft__shmem.ctx)) != WEFT_OK)
        weft__shmem_fatal(fn, "cannot expose the program's static data: %s", weft_strerror(rc));
    void *base;
    size_t reserved = weft__shmem_sync_size();
    if ((rc = weft_rma_heap_create(weft__shmem.ctx, size + reserved, &base)) != WEFT_OK)
        weft__shmem_fatal(fn, "cannot make a symmetric heap of %zu bytes: %s", size,
                          weft_strerror(rc));
    weft__shmem.heap = base;
    weft__shmem.sync = base;
    weft__shmem_mem_init((char *)base + reserved, size);
    weft__shmem_team_init();
    default_ctx.team = SHMEM_TEAM_WORLD;
    atomic_store(&weft__shmem.initialized, 1);
    static bool registered;
    if (!registered)
        registered = atexit(at_exit) == 0;
    shmem_barrier_all();
    return 0;
}

WEFT_SHMEM_EXPORT void shmem_init(void)
{
    init(SHMEM_THREAD_SINGLE, "shmem_init");
}

WEFT_SHMEM_EXPORT int shmem_init_thread(int requested, int *provided)
{
    int rc = init(requested, "shmem_init_thread");
    if (provided)
        *provided = weft__shmem.thread_level;
    return rc;
}

WEFT_SHMEM_EXPORT void start_pes(int npes)
{
    (void)npes;
    init(SHMEM_THREAD_SINGLE, "start_pes");
}

WEFT_SHMEM_EXPORT void shmem_query_thread(int *provided)
{
    weft__shmem_check_init("shmem_query_thread");
    if (provided)
        *provided = weft__shmem.thread_level;
}

WEFT_SHMEM_EXPORT void shmem_finalize(void)
{
    if (atomic_load(&weft__shmem.initialized) != 1)
        return;
    shmem_barrier_all();
    atomic_store(&weft__shmem.initialized, 2);
    weft_world_release(weft__shmem.ctx);
    weft__shmem.ctx = NULL;
}

WEFT_SHMEM_EXPORT void shmem_global_exit(int status)
{
    fflush(stdout);
    fflush(stderr);
    if (weft__shmem.ctx)
        weft_abort(weft__shmem.ctx, status, "shmem_global_exit");
    exit(status);
}

WEFT_SHMEM_EXPORT int shmem_my_pe(void)
{
    weft__shmem_check_init("shmem_my_pe");
    return weft__shmem.me;
}

WEFT_SHMEM_EXPORT int shmem_n_pes(void)
{
    weft__shmem_check_init("shmem_n_pes");
    return weft__shmem.npes;
}

WEFT_SHMEM_EXPORT int _my_pe(void)
{
    return shmem_my_pe();
}

WEFT_SHMEM_EXPORT int _num_pes(void)
{
    return shmem_n_pes();
}

WEFT_SHMEM_EXPORT int shmem_num_pes(void)
{
    return shmem_n_pes();
}

WEFT_SHMEM_EXPORT int shmem_pe_accessible(int pe)
{
    weft__shmem_check_init("shmem_pe_accessible");
    return pe >= 0 && pe < weft__shmem.npes; /* mapped, or through the engine */
}

WEFT_SHMEM_EXPORT int shmem_addr_accessible(const void *addr, int pe)
{
    weft__shmem_check_init("shmem_addr_accessible");
    return pe >= 0 && pe < weft__shmem.npes && weft_rma_is_symmetric(weft__shmem.ctx, addr);
}

WEFT_SHMEM_EXPORT void *shmem_ptr(const void *dest, int pe)
{
    weft__shmem_check_init("shmem_ptr");
    return weft_rma_ptr(weft__shmem.ctx, pe, dest);
}

WEFT_SHMEM_EXPORT void shmem_info_get_version(int *major, int *minor)
{
    if (major)
        *major = SHMEM_MAJOR_VERSION;
    if (minor)
        *minor = SHMEM_MINOR_VERSION;
}

WEFT_SHMEM_EXPORT void shmem_info_get_name(char *name)
{
    if (name)
        snprintf(name, SHMEM_MAX_NAME_LEN, "%s", SHMEM_VENDOR_STRING);
}

/* ---- contexts ----
 * Destroyed contexts are kept for the next create, never freed: a handle
 * used after its destroy then reads a dead magic number, and the call says
 * so, rather than reading freed memory. */

static struct weft_shmem_ctx *recycled;
static pthread_mutex_t recycled_lock = PTHREAD_MUTEX_INITIALIZER;

static struct weft_shmem_ctx *ctx_take(void)
{
    pthread_mutex_lock(&recycled_lock);
    struct weft_shmem_ctx *c = recycled;
    if (c)
        recycled = c->next;
    pthread_mutex_unlock(&recycled_lock);
    return c ? c : malloc(sizeof *c);
}

WEFT_SHMEM_EXPORT int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx)
{
    weft__shmem_check_init("shmem_team_create_ctx");
    if (!ctx || team == SHMEM_TEAM_INVALID || team->my_pe < 0)
        return -1;
    if (options & ~(SHMEM_CTX_SERIALIZED | SHMEM_CTX_PRIVATE | SHMEM_CTX_NOSTORE))
        return -1;
    /* Local, no round trip: a context is its options and its team. */
    struct weft_shmem_ctx *c = ctx_take();
    if (!c) {
        *ctx = SHMEM_CTX_INVALID;
        return -1;
    }
    c->magic = WEFT_SHMEM_CTX_MAGIC;
    c->options = options;
    c->team = team;
    *ctx = c;
    return 0;
}

WEFT_SHMEM_EXPORT int shmem_ctx_create(long options, shmem_ctx_t *ctx)
{
    return shmem_team_create_ctx(SHMEM_TEAM_WORLD, options, ctx);
}

WEFT_SHMEM_EXPORT void shmem_ctx_destroy(shmem_ctx_t ctx)
{
    if (ctx == SHMEM_CTX_INVALID)
        return;
    if (ctx == SHMEM_CTX_DEFAULT)
        weft__shmem_fatal("shmem_ctx_destroy", "the default context cannot be destroyed");
    weft__shmem_check_ctx(ctx, "shmem_ctx_destroy");
    shmem_ctx_quiet(ctx); /* its operations complete first (§9.5.2) */
    ctx->magic = 0;
    pthread_mutex_lock(&recycled_lock);
    ctx->next = recycled;
    recycled = ctx;
    pthread_mutex_unlock(&recycled_lock);
}

WEFT_SHMEM_EXPORT int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team)
{
    if (!team || ctx == SHMEM_CTX_INVALID) {
        if (team)
            *team = SHMEM_TEAM_INVALID;
        return -1;
    }
    weft__shmem_check_ctx(ctx, "shmem_ctx_get_team");
    *team = ctx->team ? ctx->team : SHMEM_TEAM_WORLD;
    return 0;
}

/* ---- ordering ----
 * A put to a mapped PE is a copy, complete when it returns; one through the
 * engine is in place once acknowledged. Quiet is a full fence and waits for
 * those acknowledgements (weft_rma_quiet); fence does the same, which orders
 * more than it must (puts to one PE are applied in order already, but a
 * put is ordered after an earlier atomic only by its completion). */

WEFT_SHMEM_EXPORT void shmem_ctx_fence(shmem_ctx_t ctx)
{
    weft__shmem_check_ctx(ctx, "shmem_ctx_fence");
    weft_rma_quiet(weft__shmem.ctx);
}

WEFT_SHMEM_EXPORT void shmem_ctx_quiet(shmem_ctx_t ctx)
{
    weft__shmem_check_ctx(ctx, "shmem_ctx_quiet");
    weft_rma_quiet(weft__shmem.ctx);
}

WEFT_SHMEM_EXPORT void shmem_fence(void)
{
    weft_rma_quiet(weft__shmem.ctx);
}

WEFT_SHMEM_EXPORT void shmem_quiet(void)
{
    weft_rma_quiet(weft__shmem.ctx);
}

/* Cache management: deprecated, nothing to do on coherent memory. */
WEFT_SHMEM_EXPORT void shmem_clear_cache_inv(void) {}
WEFT_SHMEM_EXPORT void shmem_set_cache_inv(void) {}
WEFT_SHMEM_EXPORT void shmem_clear_cache_line_inv(void *dest)
{
    (void)dest;
}
WEFT_SHMEM_EXPORT void shmem_set_cache_line_inv(void *dest)
{
    (void)dest;
}
WEFT_SHMEM_EXPORT void shmem_udcflush(void) {}
WEFT_SHMEM_EXPORT void shmem_udcflush_line(void *dest)
{
    (void)dest;
}
