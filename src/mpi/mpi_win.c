/* Windows (MPI 3.1 §11.2): the four flavours, free, and what a window says
 * of itself.
 *
 * Making a window is collective over its communicator, which it duplicates:
 * the duplicate's engine id names the window to the server everywhere. Each
 * member registers the window here (so the server can find it before any
 * peer knows of it), then tells the others its card: base, size, unit,
 * process id, node and, for the flavours weft allocates, the name of the
 * shared segment holding its part. Members of one node map each other's
 * segments (MPI_Win_allocate, MPI_Win_allocate_shared); windows of the
 * application's memory are reached by the kernel's cross-process copies on
 * one node, by requests elsewhere (mpi_win_int.h). A barrier after the maps
 * lets each member unlink its segment's name: nothing stays in /dev/shm. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi/mpi_win_int.h"
#include "weft/weft_rma.h"

/* The control blocks' page before a segment's data. */
#define CTL_AREA 4096

/* ---------------------------------------------------------------- the table */

typedef struct win_node {
    struct win_node *next;
    MPI_Win win;
} win_node_t;

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static win_node_t *table;

static void table_add(win_node_t *n)
{
    pthread_mutex_lock(&table_lock);
    n->next = table;
    table = n;
    pthread_mutex_unlock(&table_lock);
}

static void table_remove(MPI_Win win)
{
    pthread_mutex_lock(&table_lock);
    for (win_node_t **pp = &table; *pp; pp = &(*pp)->next)
        if ((*pp)->win == win) {
            win_node_t *n = *pp;
            *pp = n->next;
            free(n);
            break;
        }
    pthread_mutex_unlock(&table_lock);
}

MPI_Win weft__win_find(uint32_t id)
{
    MPI_Win w = NULL;
    pthread_mutex_lock(&table_lock);
    for (win_node_t *n = table; n; n = n->next)
        if (n->win->id == id) {
            w = n->win;
            break;
        }
    pthread_mutex_unlock(&table_lock);
    return w;
}

int weft__win_check(MPI_Win win)
{
    return win && win != MPI_WIN_NULL && win->magic == WEFT_MPI_MAGIC_WIN ? MPI_SUCCESS
                                                                          : MPI_ERR_WIN;
}

/* ---------------------------------------------------------------- making one */

/* What a member tells the others. */
typedef struct card {
    uint64_t base, size;
    int32_t disp_unit, pid, node;
    char seg[WEFT_RMA_SEG_NAME];
} card_t;

static bool map_allowed(void)
{
    const char *v = weft_param_get("WEFT_RMA_MAP");
    return !v || strcmp(v, "0") != 0;
}

static int keep_seg(MPI_Win w, void *p, size_t len)
{
    void **s = realloc(w->segs, (size_t)(w->nsegs + 1) * sizeof *s);
    if (!s)
        return MPI_ERR_NO_MEM;
    w->segs = s;
    size_t *l = realloc(w->seg_len, (size_t)(w->nsegs + 1) * sizeof *l);
    if (!l)
        return MPI_ERR_NO_MEM;
    w->seg_len = l;
    w->segs[w->nsegs] = p;
    w->seg_len[w->nsegs++] = len;
    return MPI_SUCCESS;
}

static void win_destroy(MPI_Win w)
{
    if (w->comm)
        table_remove(w);
    for (int i = 0; i < w->nsegs; i++)
        weft_rma_seg_unmap(w->segs[i], w->seg_len[i]);
    free(w->segs);
    free(w->seg_len);
    if (w->ctl_own)
        free(w->ctl);
    for (weft__win_region_t *r = w->regions, *next; r; r = next) {
        next = r->next;
        free(r);
    }
    free(w->peer);
    free((void *)w->req_err);
    free((void *)w->rdv_pending);
    if (w->info)
        weft__mpi_info_release(w->info);
    if (w->errhandler)
        weft__mpi_errh_release(w->errhandler);
    if (w->comm)
        PMPI_Comm_free(&w->comm);
    pthread_mutex_destroy(&w->lock);
    w->magic = WEFT_MPI_MAGIC_DEAD;
    free(w);
}

/* The part of a window every flavour shares: checks, the duplicate, the
 * registration. */
static int win_begin(MPI_Comm comm, MPI_Info info, int flavor, MPI_Aint size, int disp_unit,
                     MPI_Win *out)
{
    int rc = weft__mpi_check_comm(comm);
    if (rc)
        return rc;
    if (comm->inter)
        return MPI_ERR_COMM;
    if (!out)
        return MPI_ERR_ARG;
    if (size < 0)
        return MPI_ERR_SIZE;
    if (disp_unit <= 0)
        return MPI_ERR_DISP;
    if (info != MPI_INFO_NULL && (!info || info->magic != WEFT_MPI_MAGIC_INFO))
        return MPI_ERR_INFO;
    MPI_Win w = calloc(1, sizeof *w);
    if (!w)
        return MPI_ERR_NO_MEM;
    pthread_mutex_init(&w->lock, NULL);
    w->magic = WEFT_MPI_MAGIC_WIN;
    w->flavor = flavor;
    w->bytes = size;
    w->disp_unit = disp_unit;
    w->errhandler = MPI_ERRORS_ARE_FATAL;
    w->start_group = w->post_group = MPI_GROUP_NULL;
    win_node_t *node = calloc(1, sizeof *node);
    if (!node || (rc = PMPI_Comm_dup(comm, &w->comm)) != MPI_SUCCESS) {
        free(node);
        win_destroy(w);
        return rc ? rc : MPI_ERR_NO_MEM;
    }
    w->id = w->comm->id_p2p;
    w->rank = w->comm->rank;
    w->size = w->comm->size;
    w->peer = calloc((size_t)w->size, sizeof *w->peer);
    w->req_err = calloc((size_t)w->size, sizeof *w->req_err);
    w->rdv_pending = calloc((size_t)w->size, sizeof *w->rdv_pending);
    if (info != MPI_INFO_NULL)
        rc = weft__mpi_info_dup_internal(info, &w->info);
    if (!w->peer || !w->req_err || !w->rdv_pending || rc) {
        free(node);
        win_destroy(w);
        return rc ? rc : MPI_ERR_NO_MEM;
    }
    node->win = w;
    table_add(node);
    *out = w;
    return MPI_SUCCESS;
}

/* Exchange the cards and set each peer's path; with segs (the flavours
 * weft allocates), map the segments of the peers on this node. A request
 * that comes before this process's server is up waits in the engine
 * until the server posts its receives. */
static int win_connect(MPI_Win w, card_t *mine, bool segs)
{
    mine->base = (uint64_t)(uintptr_t)w->base;
    mine->size = (uint64_t)w->bytes;
    mine->disp_unit = w->disp_unit;
    mine->pid = (int32_t)getpid();
    mine->node = weft_node_leader(weft__mpi.ctx);
    card_t *all = malloc((size_t)w->size * sizeof *all);
    if (!all)
        return MPI_ERR_NO_MEM;
    int rc = PMPI_Allgather(mine, sizeof *mine, MPI_BYTE, all, sizeof *mine, MPI_BYTE, w->comm);
    bool map = map_allowed();
    for (int r = 0; rc == MPI_SUCCESS && r < w->size; r++) {
        weft__win_peer_t *p = &w->peer[r];
        p->base = all[r].base;
        p->size = all[r].size;
        p->disp_unit = all[r].disp_unit;
        p->pid = all[r].pid;
        p->world = weft__mpi_comm_peer(w->comm, r);
        if (r == w->rank) {
            p->path = WEFT_WIN_MAPPED;
            p->mapped = w->base;
            p->ctl = w->ctl;
            continue;
        }
        bool near = map && all[r].node == mine->node;
        if (near && segs) {
            void *at;
            size_t len = CTL_AREA + (size_t)all[r].size;
            if (weft_rma_seg_map(weft__mpi.ctx, all[r].seg, len, &at) != WEFT_OK) {
                rc = MPI_ERR_NO_MEM;
                break;
            }
            if ((rc = keep_seg(w, at, len)) != MPI_SUCCESS)
                break;
            p->path = WEFT_WIN_MAPPED;
            p->ctl = at;
            p->mapped = (char *)at + CTL_AREA;
        } else if (near && w->flavor == MPI_WIN_FLAVOR_CREATE) {
            p->path = WEFT_WIN_CMA;
            w->serve = true; /* its accumulates and locks */
        } else {
            p->path = WEFT_WIN_REQUEST;
            w->serve = true;
        }
    }
    free(all);
    if (rc == MPI_SUCCESS && w->serve && (rc = weft__win_server_start()) == MPI_SUCCESS)
        weft__win_server_use(true);
    else
        w->serve = false;
    /* Everybody mapped what it could: the names may go. */
    int brc = PMPI_Barrier(w->comm);
    if (segs && mine->seg[0])
        weft_rma_seg_unlink(mine->seg);
    return rc ? rc : brc;
}

/* A control block of this process's own (its alignment is a cache line). */
static weft__win_ctl_t *ctl_new(void)
{
    weft__win_ctl_t *c = aligned_alloc(_Alignof(weft__win_ctl_t), sizeof *c);
    if (c)
        memset(c, 0, sizeof *c);
    return c;
}

static int win_fail(MPI_Win w, int rc, MPI_Comm comm, const char *fn)
{
    if (w)
        win_destroy(w);
    return weft__mpi_err(comm, rc, fn);
}

int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                    MPI_Win *win)
{
    if (win)
        *win = MPI_WIN_NULL;
    MPI_Win w = NULL;
    int rc = win_begin(comm, info, MPI_WIN_FLAVOR_CREATE, size, disp_unit, &w);
    if (rc)
        return weft__mpi_err(comm, rc, "MPI_Win_create");
    w->base = size ? base : NULL;
    w->ctl = ctl_new();
    w->ctl_own = true;
    card_t mine = {0};
    rc = w->ctl ? win_connect(w, &mine, false) : MPI_ERR_NO_MEM;
    if (rc)
        return win_fail(w, rc, comm, "MPI_Win_create");
    *win = w;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Win_create)

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                      MPI_Win *win)
{
    if (win)
        *win = MPI_WIN_NULL;
    if (!baseptr)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Win_allocate");
    MPI_Win w = NULL;
    int rc = win_begin(comm, info, MPI_WIN_FLAVOR_ALLOCATE, size, disp_unit, &w);
    if (rc)
        return weft__mpi_err(comm, rc, "MPI_Win_allocate");
    /* One segment of this process's: the control page, then the data. */
    card_t mine = {0};
    void *seg;
    size_t len = CTL_AREA + (size_t)size;
    if (weft_rma_seg_create(weft__mpi.ctx, len, mine.seg, &seg) != WEFT_OK)
        return win_fail(w, MPI_ERR_NO_MEM, comm, "MPI_Win_allocate");
    if ((rc = keep_seg(w, seg, len)) != MPI_SUCCESS) {
        weft_rma_seg_unmap(seg, len);
        weft_rma_seg_unlink(mine.seg);
        return win_fail(w, rc, comm, "MPI_Win_allocate");
    }
    w->ctl = seg;
    w->base = (char *)seg + CTL_AREA;
    if ((rc = win_connect(w, &mine, true)) != MPI_SUCCESS)
        return win_fail(w, rc, comm, "MPI_Win_allocate");
    *(void **)baseptr = w->base;
    *win = w;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Win_allocate)

static bool info_true(MPI_Info info, const char *key)
{
    char v[16];
    int flag = 0;
    if (info == MPI_INFO_NULL || PMPI_Info_get(info, key, sizeof v - 1, v, &flag) || !flag)
        return false;
    return !strcasecmp(v, "true");
}

/* MPI_Win_allocate_shared: one segment for the whole communicator, made by
 * rank 0: the control blocks' page, then each rank's part after the
 * previous one's (contiguous, §11.2.3), or each on a page of its own with
 * alloc_shared_noncontig. */
static int shared_layout(MPI_Win w, MPI_Info info, MPI_Aint size)
{
    struct {
        int64_t size;
        int32_t node;
    } mine = {size, weft_node_leader(weft__mpi.ctx)}, *all = malloc((size_t)w->size * sizeof *all);
    if (!all)
        return MPI_ERR_NO_MEM;
    int rc = PMPI_Allgather(&mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE, w->comm);
    bool noncontig = info_true(info, "alloc_shared_noncontig");
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    size_t ctl_len = ((size_t)w->size * sizeof(weft__win_ctl_t) + pg - 1) / pg * pg;
    size_t *off = malloc((size_t)w->size * sizeof *off);
    size_t total = ctl_len;
    for (int r = 0; rc == MPI_SUCCESS && off && r < w->size; r++) {
        if (all[r].node != all[0].node)
            rc = MPI_ERR_RMA_SHARED;
        if (noncontig)
            total = (total + pg - 1) / pg * pg;
        off[r] = total;
        total += (size_t)all[r].size;
    }
    char name[WEFT_RMA_SEG_NAME] = "";
    void *seg = NULL;
    int ok = rc == MPI_SUCCESS && off;
    if (ok && w->rank == 0)
        ok = weft_rma_seg_create(weft__mpi.ctx, total, name, &seg) == WEFT_OK;
    /* Everybody learns whether it can go on, and the name. */
    int all_ok = 0;
    if (PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, w->comm) == MPI_SUCCESS && all_ok) {
        if (PMPI_Bcast(name, sizeof name, MPI_CHAR, 0, w->comm) == MPI_SUCCESS && w->rank != 0 &&
            weft_rma_seg_map(weft__mpi.ctx, name, total, &seg) != WEFT_OK)
            seg = NULL;
    }
    ok = seg != NULL;
    if (PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, w->comm) != MPI_SUCCESS)
        all_ok = 0;
    if (w->rank == 0 && name[0])
        weft_rma_seg_unlink(name);
    if (seg && keep_seg(w, seg, total) != MPI_SUCCESS) {
        weft_rma_seg_unmap(seg, total);
        all_ok = 0;
    }
    if (all_ok) {
        weft__win_ctl_t *ctl = seg;
        for (int r = 0; r < w->size; r++) {
            weft__win_peer_t *p = &w->peer[r];
            p->base = (uint64_t)(uintptr_t)((char *)seg + off[r]);
            p->size = (uint64_t)all[r].size;
            p->world = weft__mpi_comm_peer(w->comm, r);
            p->path = WEFT_WIN_MAPPED;
            p->mapped = (char *)seg + off[r];
            p->ctl = &ctl[r];
        }
        w->ctl = &ctl[w->rank];
        w->base = w->peer[w->rank].mapped;
    }
    free(off);
    free(all);
    if (rc == MPI_SUCCESS && !all_ok)
        rc = MPI_ERR_NO_MEM;
    return rc;
}

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                             void *baseptr, MPI_Win *win)
{
    if (win)
        *win = MPI_WIN_NULL;
    if (!baseptr)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Win_allocate_shared");
    MPI_Win w = NULL;
    int rc = win_begin(comm, info, MPI_WIN_FLAVOR_SHARED, size, disp_unit, &w);
    if (rc)
        return weft__mpi_err(comm, rc, "MPI_Win_allocate_shared");
    if ((rc = shared_layout(w, info, size)) != MPI_SUCCESS)
        return win_fail(w, rc, comm, "MPI_Win_allocate_shared");
    /* The units: each member's own. */
    int *units = malloc((size_t)w->size * sizeof *units);
    rc =
        units ? PMPI_Allgather(&disp_unit, 1, MPI_INT, units, 1, MPI_INT, w->comm) : MPI_ERR_NO_MEM;
    for (int r = 0; rc == MPI_SUCCESS && r < w->size; r++)
        w->peer[r].disp_unit = units[r];
    free(units);
    if (rc)
        return win_fail(w, rc, comm, "MPI_Win_allocate_shared");
    *(void **)baseptr = size ? w->base : NULL;
    *win = w;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Win_allocate_shared)

int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    int rc = weft__win_check(win);
    if (rc)
        return weft__mpi_err_win(win, rc, "MPI_Win_shared_query");
    if (!size || !disp_unit || !baseptr)
        return weft__mpi_err_win(win, MPI_ERR_ARG, "MPI_Win_shared_query");
    if (rank == MPI_PROC_NULL) {
        /* The first member with memory (§11.2.3). */
        for (rank = 0; rank < win->size - 1 && win->peer[rank].size == 0; rank++)
            ;
    }
    if (rank < 0 || rank >= win->size)
        return weft__mpi_err_win(win, MPI_ERR_RANK, "MPI_Win_shared_query");
    const weft__win_peer_t *p = &win->peer[rank];
    if (win->flavor != MPI_WIN_FLAVOR_SHARED &&
        (p->path != WEFT_WIN_MAPPED || win->flavor == MPI_WIN_FLAVOR_DYNAMIC))
        return weft__mpi_err_win(win, MPI_ERR_RMA_FLAVOR, "MPI_Win_shared_query");
    *size = (MPI_Aint)p->size;
    *disp_unit = p->disp_unit;
    *(void **)baseptr = p->size ? p->mapped : NULL;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Win_shared_query)

int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    if (win)
        *win = MPI_WIN_NULL;
    MPI_Win w = NULL;
    int rc = win_begin(comm, info, MPI_WIN_FLAVOR_DYNAMIC, 0, 1, &w);
    if (rc)
        return weft__mpi_err(comm, rc, "MPI_Win_create_dynamic");
    w->ctl = ctl_new();
    w->ctl_own = true;
    card_t mine = {0};
    rc = w->ctl ? win_connect(w, &mine, false) : MPI_ERR_NO_MEM;
    if (rc)
        return win_fail(w, rc, comm, "MPI_Win_create_dynamic");
    *win = w;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Win_create_dynamic)

int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    int rc = weft__win_check(win);
    if (!rc && win->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        rc = MPI_ERR_RMA_FLAVOR;
    if (!rc && size < 0)
        rc = MPI_ERR_SIZE;
    if (!rc && !base && size > 0)
        rc = MPI_ERR_ARG;
    if (rc)
        return weft__mpi_err_win(win, rc, "MPI_Win_attach");
    if (size == 0)
        return MPI_SUCCESS;
    weft__win_region_t *r = malloc(sizeof *r);
    if (!r)
        return weft__mpi_err_win(win, MPI_ERR_NO_MEM, "MPI_Win_attach");
    r->base = (uintptr_t)base;
    r->size = (size_t)size;
    pthread_mutex_lock(&win->lock);
    for (weft__win_region_t *o = win->regions; o; o = o->next)
        if (r->base < o->base + o->size && o->base < r->base + r->size)
            rc = MPI_ERR_RMA_ATTACH; /* overlaps a region attached already */
    if (!rc) {
        r->next = win->regions;
        win->regions = r;
    }
    pthread_mutex_unlock(&win->lock);
    if (rc) {
        free(r);
        return weft__mpi_err_win(win, rc, "MPI_Win_attach");
    }
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Win_attach)

int PMPI_Win_detach(MPI_Win win, const void *base)
{
    int rc = weft__win_check(win);
    if (!rc && win->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        rc = MPI_ERR_RMA_FLAVOR;
    if (rc)
        return weft__mpi_err_win(win, rc, "MPI_Win_detach");
    weft__win_region_t *found = NULL;
    pthread_mutex_lock(&win->lock);
    for (weft__win_region_t **pp = &win->regions; *pp; pp = &(*pp)->next)
        if ((*pp)->base == (uintptr_t)base) {
            found = *pp;
            *pp = found->next;
            break;
        }
    pthread_mutex_unlock(&win->lock);
    if (!found)
        return weft__mpi_err_win(win, MPI_ERR_RMA_ATTACH, "MPI_Win_detach");
    free(found);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Win_detach)

/* Whether [addr, addr + len) lies in regions attached to win (one, or
 * several that touch). */
bool weft__win_attached(MPI_Win win, uintptr_t addr, size_t len)
{
    pthread_mutex_lock(&win->lock);
    uintptr_t end = addr + len;
    bool moved = true;
    while (addr < end && moved) {
        moved = false;
        for (weft__win_region_t *r = win->regions; r; r = r->next)
            if (addr >= r->base && addr < r->base + r->size) {
                addr = r->base + r->size;
                moved = true;
                break;
            }
    }
    bool ok = addr >= end && (len || win->regions);
    pthread_mutex_unlock(&win->lock);
    return ok;
}

/* Whether this process has an epoch open on win that MPI_Win_free would
 * cut short. */
static bool epoch_open(MPI_Win win)
{
    if (atomic_load(&win->lock_all) || win->start_group != MPI_GROUP_NULL ||
        win->post_group != MPI_GROUP_NULL)
        return true;
    for (int r = 0; r < win->size; r++)
        if (atomic_load(&win->peer[r].lock))
            return true;
    return false;
}

int PMPI_Win_free(MPI_Win *win)
{
    MPI_Win w = win ? *win : MPI_WIN_NULL;
    int rc = weft__win_check(w);
    if (rc)
        return weft__mpi_err_win(w, rc, "MPI_Win_free");
    if (epoch_open(w))
        return weft__mpi_err_win(w, MPI_ERR_RMA_SYNC, "MPI_Win_free");
    if ((rc = weft__win_attrs_delete_all(w)) != MPI_SUCCESS)
        return weft__mpi_err_win(w, rc, "MPI_Win_free");
    /* Everything this process issued is complete (its epochs are closed);
     * once every member is here, nobody addresses the window any more. */
    rc = weft__win_flush(w, -1);
    int brc = PMPI_Barrier(w->comm);
    if (w->serve)
        weft__win_server_use(false);
    win_destroy(w);
    *win = MPI_WIN_NULL;
    return rc    ? weft__mpi_err(MPI_COMM_WORLD, rc, "MPI_Win_free")
           : brc ? weft__mpi_err(MPI_COMM_WORLD, brc, "MPI_Win_free")
                 : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Win_free)

int PMPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    if (group)
        *group = MPI_GROUP_NULL;
    int rc = weft__win_check(win);
    if (!rc && !group)
        rc = MPI_ERR_ARG;
    if (rc)
        return weft__mpi_err_win(win, rc, "MPI_Win_get_group");
    return PMPI_Comm_group(win->comm, group);
}
WEFT_MPI_ALIAS(Win_get_group)

int PMPI_Win_set_name(MPI_Win win, const char *win_name)
{
    int rc = weft__win_check(win);
    if (!rc && !win_name)
        rc = MPI_ERR_ARG;
    if (rc)
        return weft__mpi_err_win(win, rc, "MPI_Win_set_name");
    snprintf(win->name, sizeof win->name, "%s", win_name);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Win_set_name)

int PMPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen)
{
    int rc = weft__win_check(win);
    if (!rc && (!win_name || !resultlen))
        rc = MPI_ERR_ARG;
    if (rc)
        return weft__mpi_err_win(win, rc, "MPI_Win_get_name");
    strcpy(win_name, win->name);
    *resultlen = (int)strlen(win->name);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Win_get_name)

/* ---------------------------------------------------------------- info */

/* The hints a window answers with, and their values when not given. */
static const char *const info_keys[][2] = {
    {"no_locks", "false"},
    {"accumulate_ordering", "rar,raw,war,waw"},
    {"accumulate_ops", "same_op_no_op"},
    {"same_size", "false"},
    {"same_disp_unit", "false"},
};

int PMPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    int rc = weft__win_check(win);
    if (!rc && (!info || info == MPI_INFO_NULL || info->magic != WEFT_MPI_MAGIC_INFO))
        rc = MPI_ERR_INFO;
    if (rc)
        return weft__mpi_err_win(win, rc, "MPI_Win_set_info");
    MPI_Info copy;
    if ((rc = weft__mpi_info_dup_internal(info, &copy)) != MPI_SUCCESS)
        return weft__mpi_err_win(win, rc, "MPI_Win_set_info");
    pthread_mutex_lock(&win->lock);
    MPI_Info old = win->info;
    win->info = copy;
    pthread_mutex_unlock(&win->lock);
    if (old)
        weft__mpi_info_release(old);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Win_set_info)

int PMPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    if (info_used)
        *info_used = MPI_INFO_NULL;
    int rc = weft__win_check(win);
    if (!rc && !info_used)
        rc = MPI_ERR_ARG;
    if (rc)
        return weft__mpi_err_win(win, rc, "MPI_Win_get_info");
    MPI_Info out;
    if ((rc = PMPI_Info_create(&out)) != MPI_SUCCESS)
        return weft__mpi_err_win(win, rc, "MPI_Win_get_info");
    pthread_mutex_lock(&win->lock);
    for (size_t i = 0; i < sizeof info_keys / sizeof info_keys[0]; i++) {
        char v[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        if (win->info)
            PMPI_Info_get(win->info, info_keys[i][0], MPI_MAX_INFO_VAL, v, &flag);
        PMPI_Info_set(out, info_keys[i][0], flag ? v : info_keys[i][1]);
    }
    if (win->flavor == MPI_WIN_FLAVOR_SHARED)
        PMPI_Info_set(out, "alloc_shared_noncontig",
                      info_true(win->info ? win->info : MPI_INFO_NULL, "alloc_shared_noncontig")
                          ? "true"
                          : "false");
    pthread_mutex_unlock(&win->lock);
    *info_used = out;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Win_get_info)

/* ---------------------------------------------------------------- error handlers */

int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    int rc = weft__win_check(win);
    if (rc)
        return weft__mpi_err_win(win, rc, "MPI_Win_set_errhandler");
    if (!errhandler || errhandler->magic != WEFT_MPI_MAGIC_ERRH ||
        (!errhandler->predefined && errhandler->kind != WEFT_MPI_ERRH_WIN))
        return weft__mpi_err_win(win, MPI_ERR_ARG, "MPI_Win_set_errhandler");
    weft__mpi_errh_retain(errhandler);
    MPI_Errhandler old = win->errhandler;
    win->errhandler = errhandler;
    weft__mpi_errh_release(old);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Win_set_errhandler)

int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    int rc = weft__win_check(win);
    if (!rc && !errhandler)
        rc = MPI_ERR_ARG;
    if (rc)
        return weft__mpi_err_win(win, rc, "MPI_Win_get_errhandler");
    weft__mpi_errh_retain(win->errhandler);
    *errhandler = win->errhandler;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Win_get_errhandler)

int PMPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
    int rc = weft__win_check(win);
    if (rc)
        return weft__mpi_err_win(win, rc, "MPI_Win_call_errhandler");
    weft__mpi_err_win(win, errorcode, "MPI_Win_call_errhandler");
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Win_call_errhandler)
