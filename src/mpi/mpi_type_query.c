/* Queries on datatypes and statuses (MPI 3.1 sections 4.1.5, 4.1.11, 4.1.13,
 * 6.8, 17.1.9): sizes and extents, envelope and contents, names, addresses,
 * counts and elements of a status.
 *
 * Thread safety: reads only the objects it is given; setting a name while
 * another thread reads it is the caller's race, as in the standard.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_int.h"
#include "mpi/mpi_type_int.h"

#define ERR(cls, fn) weft__mpi_err(NULL, (cls), (fn))

/* ---------------------------------------------------------------- queries */

int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    if (!weft__mpi_type_valid(datatype))
        return ERR(MPI_ERR_TYPE, "MPI_Type_size_x");
    if (!size)
        return ERR(MPI_ERR_ARG, "MPI_Type_size_x");
    *size = (MPI_Count)datatype->size;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_size_x)

int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
    if (!weft__mpi_type_valid(datatype))
        return ERR(MPI_ERR_TYPE, "MPI_Type_size");
    if (!size)
        return ERR(MPI_ERR_ARG, "MPI_Type_size");
    *size = datatype->size > INT_MAX ? MPI_UNDEFINED : (int)datatype->size;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_size)

int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    if (!weft__mpi_type_valid(datatype))
        return ERR(MPI_ERR_TYPE, "MPI_Type_get_extent");
    if (!lb || !extent)
        return ERR(MPI_ERR_ARG, "MPI_Type_get_extent");
    *lb = datatype->lb;
    *extent = weft__mpi_type_extent(datatype);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_get_extent)

int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    if (!weft__mpi_type_valid(datatype))
        return ERR(MPI_ERR_TYPE, "MPI_Type_get_extent_x");
    if (!lb || !extent)
        return ERR(MPI_ERR_ARG, "MPI_Type_get_extent_x");
    *lb = datatype->lb;
    *extent = weft__mpi_type_extent(datatype);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_get_extent_x)

int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
    if (!weft__mpi_type_valid(datatype))
        return ERR(MPI_ERR_TYPE, "MPI_Type_get_true_extent");
    if (!true_lb || !true_extent)
        return ERR(MPI_ERR_ARG, "MPI_Type_get_true_extent");
    *true_lb = datatype->true_lb;
    *true_extent = datatype->true_ub - datatype->true_lb;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_get_true_extent)

int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
    if (!weft__mpi_type_valid(datatype))
        return ERR(MPI_ERR_TYPE, "MPI_Type_get_true_extent_x");
    if (!true_lb || !true_extent)
        return ERR(MPI_ERR_ARG, "MPI_Type_get_true_extent_x");
    *true_lb = datatype->true_lb;
    *true_extent = datatype->true_ub - datatype->true_lb;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_get_true_extent_x)

int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
                           int *num_datatypes, int *combiner)
{
    if (!weft__mpi_type_valid(datatype))
        return ERR(MPI_ERR_TYPE, "MPI_Type_get_envelope");
    if (!num_integers || !num_addresses || !num_datatypes || !combiner)
        return ERR(MPI_ERR_ARG, "MPI_Type_get_envelope");
    *num_integers = datatype->nints;
    *num_addresses = datatype->naddrs;
    *num_datatypes = datatype->ntypes;
    *combiner = datatype->combiner;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_get_envelope)

/* A new datatype object equal to derived type t (MPI 3.1 §4.1.13: what
 * get_contents hands out is new, so freeing or renaming it leaves t, its name
 * and its attributes alone): the same layout, bounds and envelope, committed
 * as t is, without attributes or name. */
static int contents_copy(MPI_Datatype t, MPI_Datatype *out)
{
    MPI_Datatype c;
    int err = weft__mpi_type_build_copy(t, t->lb, t->ub, &c);
    if (err)
        return err;
    if ((err = weft__mpi_type_envelope_alloc(c, t->combiner, t->nints, t->naddrs, t->ntypes))) {
        weft__mpi_type_destroy(c);
        return err;
    }
    if (t->nints)
        memcpy(c->ints, t->ints, (size_t)t->nints * sizeof *c->ints);
    if (t->naddrs)
        memcpy(c->addrs, t->addrs, (size_t)t->naddrs * sizeof *c->addrs);
    if (t->ntypes)
        memcpy(c->types, t->types, (size_t)t->ntypes * sizeof *c->types);
    weft__mpi_type_envelope_hold(c, t->ntypes);
    c->committed = t->committed;
    *out = c;
    return MPI_SUCCESS;
}

/* Predefined children are handed out as they are; derived ones as new
 * objects (contents_copy) the caller frees with Type_free. */
int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                           int max_datatypes, int array_of_integers[],
                           MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
    static const char fn[] = "MPI_Type_get_contents";
    if (!weft__mpi_type_valid(datatype))
        return ERR(MPI_ERR_TYPE, fn);
    if (datatype->combiner == MPI_COMBINER_NAMED || max_integers < datatype->nints ||
        max_addresses < datatype->naddrs || max_datatypes < datatype->ntypes ||
        (datatype->nints && !array_of_integers) || (datatype->naddrs && !array_of_addresses) ||
        (datatype->ntypes && !array_of_datatypes))
        return ERR(MPI_ERR_ARG, fn);
    if (datatype->nints)
        memcpy(array_of_integers, datatype->ints, datatype->nints * sizeof(int));
    if (datatype->naddrs)
        memcpy(array_of_addresses, datatype->addrs, datatype->naddrs * sizeof(MPI_Aint));
    for (int i = 0; i < datatype->ntypes; i++) {
        MPI_Datatype child = datatype->types[i];
        int err = MPI_SUCCESS;
        if (child->predefined)
            array_of_datatypes[i] = child;
        else
            err = contents_copy(child, &array_of_datatypes[i]);
        if (err) {
            for (int j = 0; j < i; j++)
                if (!array_of_datatypes[j]->predefined)
                    weft__mpi_type_release(array_of_datatypes[j]);
            return ERR(err, fn);
        }
    }
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_get_contents)

/* Fortran's sized types first, as MPICH does: Type_match_size serves Fortran
 * programs asking for a kind. */
int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    static const MPI_Datatype ints[] = {MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4, MPI_INTEGER8};
    static const MPI_Datatype reals[] = {MPI_REAL4, MPI_REAL8, MPI_REAL16};
    static const MPI_Datatype complexes[] = {MPI_COMPLEX8, MPI_COMPLEX16, MPI_COMPLEX32};
    const MPI_Datatype *list;
    int n;
    switch (typeclass) {
    case MPI_TYPECLASS_INTEGER:
        list = ints, n = 4;
        break;
    case MPI_TYPECLASS_REAL:
        list = reals, n = 3;
        break;
    case MPI_TYPECLASS_COMPLEX:
        list = complexes, n = 3;
        break;
    default:
        return ERR(MPI_ERR_ARG, "MPI_Type_match_size");
    }
    if (!datatype)
        return ERR(MPI_ERR_ARG, "MPI_Type_match_size");
    for (int i = 0; i < n; i++)
        if ((int)list[i]->size == size) {
            *datatype = list[i];
            return MPI_SUCCESS;
        }
    return ERR(MPI_ERR_ARG, "MPI_Type_match_size");
}
WEFT_MPI_ALIAS(Type_match_size)

int PMPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
    if (!weft__mpi_type_valid(datatype))
        return ERR(MPI_ERR_TYPE, "MPI_Type_set_name");
    if (!type_name)
        return ERR(MPI_ERR_ARG, "MPI_Type_set_name");
    /* Longer names are cut, as the standard allows. */
    size_t n = strnlen(type_name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(datatype->name, type_name, n);
    datatype->name[n] = '\0';
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_set_name)

int PMPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
    if (!weft__mpi_type_valid(datatype))
        return ERR(MPI_ERR_TYPE, "MPI_Type_get_name");
    if (!type_name || !resultlen)
        return ERR(MPI_ERR_ARG, "MPI_Type_get_name");
    size_t n = strnlen(datatype->name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(type_name, datatype->name, n);
    type_name[n] = '\0';
    *resultlen = (int)n;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_get_name)

int PMPI_Get_address(const void *location, MPI_Aint *address)
{
    if (!address)
        return ERR(MPI_ERR_ARG, "MPI_Get_address");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Get_address)

/* Addresses are integers here: wrap-around arithmetic, no undefined overflow. */
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}
WEFT_MPI_ALIAS(Aint_add)

MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}
WEFT_MPI_ALIAS(Aint_diff)

/* ---------------------------------------------------------------- statuses */

/* Basic elements in one element of t. */
static MPI_Count basics_per_element(MPI_Datatype t)
{
    MPI_Count n = 0;
    for (int i = 0; i < t->nruns; i++)
        n += (MPI_Count)t->runs[i].n;
    return n;
}

/* Whole basic elements in the first `bytes` of a stream of t; *rest gets the
 * bytes of a basic element cut short (not 0: Get_elements says MPI_UNDEFINED). */
static MPI_Count elements_of(MPI_Datatype t, MPI_Count bytes, MPI_Count *rest)
{
    *rest = 0;
    if (t->size == 0)
        return 0;
    MPI_Count whole = bytes / (MPI_Count)t->size, left = bytes % (MPI_Count)t->size;
    MPI_Count n = whole * basics_per_element(t);
    for (int i = 0; i < t->nruns && left > 0; i++) {
        MPI_Count bsize = (MPI_Count)t->runs[i].type->size;
        MPI_Count run = (MPI_Count)t->runs[i].n * bsize;
        if (left >= run) {
            n += (MPI_Count)t->runs[i].n;
            left -= run;
        } else {
            n += left / bsize;
            left %= bsize;
            break;
        }
    }
    *rest = left;
    return n;
}

MPI_Count weft__mpi_type_elements(MPI_Datatype t, MPI_Count bytes)
{
    MPI_Count rest;
    return elements_of(t, bytes, &rest);
}

static int status_type_check(const void *status, MPI_Datatype t, const void *out)
{
    if (!weft__mpi_type_valid(t))
        return MPI_ERR_TYPE;
    if (!status || !out)
        return MPI_ERR_ARG;
    return MPI_SUCCESS;
}

int PMPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    int err = status_type_check(status, datatype, count);
    if (err)
        return ERR(err, "MPI_Get_count");
    if (datatype->size == 0) {
        *count = 0; /* a zero-size type received "all" of nothing */
        return MPI_SUCCESS;
    }
    long long bytes = status->weft_count, size = (long long)datatype->size;
    *count = bytes % size || bytes / size > INT_MAX ? MPI_UNDEFINED : (int)(bytes / size);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Get_count)

int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    int err = status_type_check(status, datatype, count);
    if (err)
        return ERR(err, "MPI_Get_elements_x");
    MPI_Count rest, n = elements_of(datatype, status->weft_count, &rest);
    *count = rest ? MPI_UNDEFINED : n;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Get_elements_x)

int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    int err = status_type_check(status, datatype, count);
    if (err)
        return ERR(err, "MPI_Get_elements");
    MPI_Count rest, n = elements_of(datatype, status->weft_count, &rest);
    *count = rest || n > INT_MAX ? MPI_UNDEFINED : (int)n;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Get_elements)

/* count basic elements of datatype as bytes: whole elements, then the runs of a
 * partial one, so that Get_elements gives count back. */
int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    int err = status_type_check(status, datatype, status);
    if (!err && count < 0)
        err = MPI_ERR_COUNT;
    if (err)
        return ERR(err, "MPI_Status_set_elements_x");
    MPI_Count per = basics_per_element(datatype), bytes = 0;
    if (per > 0) {
        bytes = count / per * (MPI_Count)datatype->size;
        MPI_Count left = count % per;
        for (int i = 0; i < datatype->nruns && left > 0; i++) {
            MPI_Count n =
                (MPI_Count)datatype->runs[i].n < left ? (MPI_Count)datatype->runs[i].n : left;
            bytes += n * (MPI_Count)datatype->runs[i].type->size;
            left -= n;
        }
    }
    status->weft_count = bytes;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Status_set_elements_x)

int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count)
{
    return PMPI_Status_set_elements_x(status, datatype, count);
}
WEFT_MPI_ALIAS(Status_set_elements)
