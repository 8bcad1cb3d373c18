/* Groups (MPI 3.1 §6.3): an ordered list of world ranks. */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_int.h"

struct weft_mpi_group weft_mpi_group_empty = {
    .magic = WEFT_MPI_MAGIC_GROUP, .predefined = true, .size = 0, .rank = MPI_UNDEFINED};
struct weft_mpi_group weft_mpi_group_null = {.magic = WEFT_MPI_MAGIC_GROUP, .predefined = true};

MPI_Group weft__mpi_group_new(int size, const int *world_ranks)
{
    MPI_Group g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->ranks = malloc((size_t)(size ? size : 1) * sizeof *g->ranks);
    if (!g->ranks) {
        free(g);
        return NULL;
    }
    if (size)
        memcpy(g->ranks, world_ranks, (size_t)size * sizeof *g->ranks);
    g->magic = WEFT_MPI_MAGIC_GROUP;
    atomic_init(&g->refs, 1);
    g->size = size;
    g->rank = MPI_UNDEFINED;
    for (int i = 0; i < size; i++)
        if (world_ranks[i] == weft__mpi.world_rank)
            g->rank = i;
    return g;
}

void weft__mpi_group_retain(MPI_Group g)
{
    if (!g->predefined)
        atomic_fetch_add(&g->refs, 1);
}

void weft__mpi_group_release(MPI_Group g)
{
    if (g && !g->predefined && atomic_fetch_sub(&g->refs, 1) == 1) {
        g->magic = WEFT_MPI_MAGIC_DEAD;
        free(g->ranks);
        free(g);
    }
}
