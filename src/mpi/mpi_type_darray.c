/* Subarray and darray types (MPI 3.1 sections 4.1.3, 4.1.4), built the way
 * ROMIO builds them: one indexed level per dimension, each resized to the full
 * row, then the result takes its own envelope.
 *
 * Thread safety: touches only the objects it is given.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_int.h"
#include "mpi/mpi_type_int.h"

#define ERR(cls, fn) weft__mpi_err(NULL, (cls), (fn))

/* ---------------------------------------------------------------- subarray, darray */

/* The index ranges one dimension keeps: n blocks [start[i], start[i]+len[i]). */
typedef struct dim_blocks {
    int n;
    int *start, *len;
} dim_blocks_t;

/* An n-dimensional selection of an array of gsizes elements of old: one
 * hindexed level per dimension, innermost first, each resized to a whole row so
 * that the next level's displacements count rows. The result spans the whole
 * array: lb 0, extent prod(gsizes) * extent(old). */
static int build_nd(int ndims, const int *gsizes, const dim_blocks_t *dims, int order,
                    MPI_Datatype old, MPI_Datatype *out)
{
    MPI_Datatype cur = old;
    int err = MPI_SUCCESS;
    for (int k = 0; k < ndims; k++) {
        int d = order == MPI_ORDER_C ? ndims - 1 - k : k;
        MPI_Aint ext = weft__mpi_type_extent(cur), row;
        MPI_Aint *disps = malloc((dims[d].n ? dims[d].n : 1) * sizeof *disps);
        if (!disps) {
            err = MPI_ERR_NO_MEM;
            break;
        }
        for (int i = 0; i < dims[d].n && !err; i++)
            if (__builtin_mul_overflow((MPI_Aint)dims[d].start[i], ext, &disps[i]))
                err = MPI_ERR_INTERN;
        if (!err && __builtin_mul_overflow((MPI_Aint)gsizes[d], ext, &row))
            err = MPI_ERR_INTERN;
        weft_mpi_layout_t l = {.n = dims[d].n, .adisp = disps, .blens = dims[d].len, .type = cur};
        MPI_Datatype level = NULL, next = NULL;
        if (!err)
            err = weft__mpi_type_build(&l, &level);
        free(disps);
        /* The level's envelope only has to keep cur alive until resized. */
        if (!err && !(err = weft__mpi_type_envelope_alloc(level, MPI_COMBINER_HINDEXED, 0, 0, 1))) {
            level->types[0] = cur;
            weft__mpi_type_envelope_hold(level, 1);
        }
        if (!err)
            err = weft__mpi_type_resized(level, 0, row, &next);
        weft__mpi_type_release(level);
        if (cur != old)
            weft__mpi_type_release(cur);
        if (err)
            return err;
        cur = next;
    }
    if (err) {
        if (cur != old)
            weft__mpi_type_release(cur);
        return err;
    }
    if (cur == old) /* ndims == 0 cannot reach here: callers refuse it */
        return MPI_ERR_INTERN;
    /* The scaffolding goes; the result keeps only its own envelope. */
    weft__mpi_type_envelope_drop(cur);
    *out = cur;
    return MPI_SUCCESS;
}

static int check_order(int order)
{
    return order == MPI_ORDER_C || order == MPI_ORDER_FORTRAN ? MPI_SUCCESS : MPI_ERR_ARG;
}

int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                              const int array_of_starts[], int order, MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_subarray";
    int err = weft__mpi_type_check_new(0, oldtype, newtype, fn);
    if (!err && (ndims <= 0 || !array_of_sizes || !array_of_subsizes || !array_of_starts))
        err = MPI_ERR_ARG;
    if (!err)
        err = check_order(order);
    for (int d = 0; !err && d < ndims; d++)
        if (array_of_sizes[d] <= 0 || array_of_subsizes[d] < 0 || array_of_starts[d] < 0 ||
            array_of_subsizes[d] > array_of_sizes[d] - array_of_starts[d])
            err = MPI_ERR_ARG;
    if (err)
        return ERR(err, fn);
    dim_blocks_t *dims = malloc(ndims * sizeof *dims);
    if (!dims)
        return ERR(MPI_ERR_NO_MEM, fn);
    for (int d = 0; d < ndims; d++)
        dims[d] = (dim_blocks_t){1, (int *)&array_of_starts[d], (int *)&array_of_subsizes[d]};
    MPI_Datatype t;
    err = build_nd(ndims, array_of_sizes, dims, order, oldtype, &t);
    free(dims);
    if (err)
        return ERR(err, fn);
    if ((err = weft__mpi_type_envelope_alloc(t, MPI_COMBINER_SUBARRAY, 3 * ndims + 2, 0, 1))) {
        weft__mpi_type_destroy(t);
        return ERR(err, fn);
    }
    t->ints[0] = ndims;
    memcpy(t->ints + 1, array_of_sizes, ndims * sizeof(int));
    memcpy(t->ints + 1 + ndims, array_of_subsizes, ndims * sizeof(int));
    memcpy(t->ints + 1 + 2 * ndims, array_of_starts, ndims * sizeof(int));
    t->ints[1 + 3 * ndims] = order;
    t->types[0] = oldtype;
    weft__mpi_type_envelope_hold(t, 1);
    *newtype = t;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_create_subarray)

/* The blocks of one darray dimension owned by process coordinate p of np
 * (MPI 3.1 section 4.1.4): block distribution keeps one range of darg elements
 * (default ceil(g/np)); cyclic(darg) keeps every np-th block of darg (default 1);
 * none keeps everything. */
static int darray_dim(int g, int distrib, int darg, int np, int p, dim_blocks_t *out)
{
    out->n = 0;
    out->start = out->len = NULL;
    long long b;
    long long nblocks;
    switch (distrib) {
    case MPI_DISTRIBUTE_NONE:
        if (np != 1)
            return MPI_ERR_ARG;
        b = g;
        nblocks = 1;
        break;
    case MPI_DISTRIBUTE_BLOCK:
        b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + np - 1) / np : darg;
        if (b <= 0 || b * np < g)
            return MPI_ERR_ARG;
        nblocks = 1;
        break;
    case MPI_DISTRIBUTE_CYCLIC:
        b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
        if (b <= 0)
            return MPI_ERR_ARG;
        nblocks = (g + b - 1) / b;
        break;
    default:
        return MPI_ERR_ARG;
    }
    /* Blocks p, p + np, ... of b elements, the last one cut at g. */
    long long mine = distrib == MPI_DISTRIBUTE_CYCLIC ? (nblocks - p + np - 1) / np : 1;
    if (mine < 0)
        mine = 0;
    out->start = malloc((mine ? mine : 1) * sizeof(int));
    out->len = malloc((mine ? mine : 1) * sizeof(int));
    if (!out->start || !out->len)
        return MPI_ERR_NO_MEM;
    for (long long i = 0; i < mine; i++) {
        long long j = distrib == MPI_DISTRIBUTE_NONE ? 0 : p + i * np;
        long long s = j * b, e = s + b < g ? s + b : g;
        if (s >= g)
            break;
        out->start[out->n] = (int)s;
        out->len[out->n++] = (int)(e - s);
    }
    return MPI_SUCCESS;
}

int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                            const int array_of_distribs[], const int array_of_dargs[],
                            const int array_of_psizes[], int order, MPI_Datatype oldtype,
                            MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_darray";
    int err = weft__mpi_type_check_new(0, oldtype, newtype, fn);
    if (!err && (size <= 0 || rank < 0 || rank >= size || ndims <= 0 || !array_of_gsizes ||
                 !array_of_distribs || !array_of_dargs || !array_of_psizes))
        err = MPI_ERR_ARG;
    if (!err)
        err = check_order(order);
    long long procs = 1;
    for (int d = 0; !err && d < ndims; d++) {
        if (array_of_gsizes[d] <= 0 || array_of_psizes[d] <= 0)
            err = MPI_ERR_ARG;
        else
            procs *= array_of_psizes[d];
        if (procs > size)
            err = MPI_ERR_ARG;
    }
    if (!err && procs != size)
        err = MPI_ERR_ARG;
    if (err)
        return ERR(err, fn);
    dim_blocks_t *dims = calloc(ndims, sizeof *dims);
    if (!dims)
        return ERR(MPI_ERR_NO_MEM, fn);
    /* The process grid is row-major whatever the array order (MPI 3.1 4.1.4). */
    int r = rank;
    for (int d = ndims - 1; d >= 0 && !err; d--) {
        int p = r % array_of_psizes[d];
        r /= array_of_psizes[d];
        err = darray_dim(array_of_gsizes[d], array_of_distribs[d], array_of_dargs[d],
                         array_of_psizes[d], p, &dims[d]);
    }
    MPI_Datatype t = NULL;
    if (!err)
        err = build_nd(ndims, array_of_gsizes, dims, order, oldtype, &t);
    for (int d = 0; d < ndims; d++) {
        free(dims[d].start);
        free(dims[d].len);
    }
    free(dims);
    if (err)
        return ERR(err, fn);
    if ((err = weft__mpi_type_envelope_alloc(t, MPI_COMBINER_DARRAY, 4 * ndims + 4, 0, 1))) {
        weft__mpi_type_destroy(t);
        return ERR(err, fn);
    }
    t->ints[0] = size;
    t->ints[1] = rank;
    t->ints[2] = ndims;
    memcpy(t->ints + 3, array_of_gsizes, ndims * sizeof(int));
    memcpy(t->ints + 3 + ndims, array_of_distribs, ndims * sizeof(int));
    memcpy(t->ints + 3 + 2 * ndims, array_of_dargs, ndims * sizeof(int));
    memcpy(t->ints + 3 + 3 * ndims, array_of_psizes, ndims * sizeof(int));
    t->ints[3 + 4 * ndims] = order;
    t->types[0] = oldtype;
    weft__mpi_type_envelope_hold(t, 1);
    *newtype = t;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_create_darray)
