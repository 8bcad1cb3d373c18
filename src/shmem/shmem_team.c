/* Teams (§9.4). Every team is a strided set of world PEs (start, stride,
 * size), which the splits of 1.5 keep: a strided subset of a strided team
 * is strided. So a team is local arithmetic; making one costs the parent
 * a barrier, as the standard's collective splits need, and nothing else. */
#include <stdbool.h>
#include <stdlib.h>

#include "shmem/shmem_int.h"

static struct weft_shmem_team world, shared;
WEFT_SHMEM_EXPORT shmem_team_t SHMEM_TEAM_WORLD = &world;
WEFT_SHMEM_EXPORT shmem_team_t SHMEM_TEAM_SHARED = &shared;

void weft__shmem_team_init(void)
{
    world = (struct weft_shmem_team){.start = 0,
                                     .stride = 1,
                                     .size = weft__shmem.npes,
                                     .my_pe = weft__shmem.me,
                                     .predefined = true};
    /* The shared team: the PEs whose memory this one maps (shmem_ptr works
     * for them), when they form a strided set, as they do when ranks are
     * placed by node; otherwise this PE alone. */
    int n = 0, first = -1, stride = 1, last = -1;
    bool strided = true;
    for (int pe = 0; pe < weft__shmem.npes; pe++) {
        if (!weft_rma_pe_mapped(weft__shmem.ctx, pe))
            continue;
        if (n == 1)
            stride = pe - first;
        else if (n > 1 && pe - last != stride)
            strided = false;
        if (n == 0)
            first = pe;
        last = pe;
        n++;
    }
    if (strided && n > 0)
        shared = (struct weft_shmem_team){.start = first,
                                          .stride = stride,
                                          .size = n,
                                          .my_pe = (weft__shmem.me - first) / stride,
                                          .predefined = true};
    else
        shared = (struct weft_shmem_team){
            .start = weft__shmem.me, .stride = 1, .size = 1, .my_pe = 0, .predefined = true};
}

WEFT_SHMEM_EXPORT int shmem_team_my_pe(shmem_team_t team)
{
    weft__shmem_check_init("shmem_team_my_pe");
    return team == SHMEM_TEAM_INVALID ? -1 : team->my_pe;
}

WEFT_SHMEM_EXPORT int shmem_team_n_pes(shmem_team_t team)
{
    weft__shmem_check_init("shmem_team_n_pes");
    return team == SHMEM_TEAM_INVALID ? -1 : team->size;
}

WEFT_SHMEM_EXPORT int shmem_team_get_config(shmem_team_t team, long config_mask,
                                            shmem_team_config_t *config)
{
    weft__shmem_check_init("shmem_team_get_config");
    if (team == SHMEM_TEAM_INVALID || !config)
        return -1;
    if (config_mask & SHMEM_TEAM_NUM_CONTEXTS)
        config->num_contexts = team->num_contexts;
    return 0;
}

WEFT_SHMEM_EXPORT int shmem_team_translate_pe(shmem_team_t src_team, int src_pe,
                                              shmem_team_t dest_team)
{
    weft__shmem_check_init("shmem_team_translate_pe");
    if (src_team == SHMEM_TEAM_INVALID || dest_team == SHMEM_TEAM_INVALID || src_pe < 0 ||
        src_pe >= src_team->size)
        return -1;
    int world_pe = weft__shmem_team_pe(src_team, src_pe);
    int d = world_pe - dest_team->start;
    if (d < 0 || d % dest_team->stride)
        return -1;
    d /= dest_team->stride;
    return d < dest_team->size ? d : -1;
}

/* The members start + k * stride (k < size) of parent, as a new team, or
 * SHMEM_TEAM_INVALID for a PE not among them. */
static shmem_team_t make(shmem_team_t parent, int start, int stride, int size,
                         const shmem_team_config_t *config, long mask)
{
    int me = parent->my_pe - start;
    if (me < 0 || me % stride || me / stride >= size)
        return SHMEM_TEAM_INVALID;
    struct weft_shmem_team *t = calloc(1, sizeof *t);
    if (!t)
        weft__shmem_fatal("shmem_team_split", "out of memory");
    t->start = weft__shmem_team_pe(parent, start);
    t->stride = parent->stride * stride;
    t->size = size;
    t->my_pe = me / stride;
    if (config && (mask & SHMEM_TEAM_NUM_CONTEXTS))
        t->num_contexts = config->num_contexts;
    return t;
}

WEFT_SHMEM_EXPORT int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride,
                                               int size, const shmem_team_config_t *config,
                                               long config_mask, shmem_team_t *new_team)
{
    weft__shmem_check_init("shmem_team_split_strided");
    if (!new_team)
        return -1;
    *new_team = SHMEM_TEAM_INVALID;
    if (parent_team == SHMEM_TEAM_INVALID)
        return -1;
    if (parent_team->my_pe < 0)
        return -1;
    if (size == 1 && stride < 1)
        stride = 1; /* one member: any stride names the same team */
    bool ok = size > 0 && stride > 0 && start >= 0 &&
              start + (long)(size - 1) * stride < parent_team->size;
    weft__shmem_team_barrier(parent_team);
    if (!ok)
        return -1;
    *new_team = make(parent_team, start, stride, size, config, config_mask);
    return 0;
}

WEFT_SHMEM_EXPORT int shmem_team_split_2d(shmem_team_t parent_team, int xrange,
                                          const shmem_team_config_t *xaxis_config, long xaxis_mask,
                                          shmem_team_t *xaxis_team,
                                          const shmem_team_config_t *yaxis_config, long yaxis_mask,
                                          shmem_team_t *yaxis_team)
{
    weft__shmem_check_init("shmem_team_split_2d");
    if (!xaxis_team || !yaxis_team)
        return -1;
    *xaxis_team = *yaxis_team = SHMEM_TEAM_INVALID;
    if (parent_team == SHMEM_TEAM_INVALID || parent_team->my_pe < 0 || xrange < 1)
        return -1;
    int n = parent_team->size, me = parent_team->my_pe;
    if (xrange > n)
        xrange = n;
    weft__shmem_team_barrier(parent_team);
    int row = me / xrange, col = me % xrange;
    int xstart = row * xrange;
    int xsize = n - xstart < xrange ? n - xstart : xrange;
    *xaxis_team = make(parent_team, xstart, 1, xsize, xaxis_config, xaxis_mask);
    int ysize = (n - col + xrange - 1) / xrange;
    *yaxis_team = make(parent_team, col, xrange, ysize, yaxis_config, yaxis_mask);
    return 0;
}

WEFT_SHMEM_EXPORT void shmem_team_destroy(shmem_team_t team)
{
    weft__shmem_check_init("shmem_team_destroy");
    if (team == SHMEM_TEAM_INVALID || team->predefined)
        return;
    free(team);
}
