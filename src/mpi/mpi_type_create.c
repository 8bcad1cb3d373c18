/* Datatype constructors (MPI 3.1 sections 4.1.2-4.1.7, 4.1.13): contiguous,
 * vector, indexed, struct, resized, dup, and the Fortran 90 parameterized
 * types. Each one describes its blocks as a layout for the builder
 * (mpi_type.c) and records its envelope; subarray and darray are in
 * mpi_type_darray.c.
 *
 * Thread safety: constructors touch only the objects they are given; the
 * table of Fortran 90 types has a lock of its own.
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_int.h"
#include "mpi/mpi_type_int.h"

#define ERR(cls, fn) weft__mpi_err(NULL, (cls), (fn))

int weft__mpi_type_check_new(int count, MPI_Datatype old, MPI_Datatype *newtype, const char *fn)
{
    if (count < 0)
        return MPI_ERR_COUNT;
    if (!weft__mpi_type_valid(old))
        return MPI_ERR_TYPE;
    if (!newtype)
        return MPI_ERR_ARG;
    return MPI_SUCCESS;
}

int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_contiguous";
    int err = weft__mpi_type_check_new(count, oldtype, newtype, fn);
    if (err)
        return ERR(err, fn);
    weft_mpi_layout_t l = {.n = 1, .stride = 0, .blen = count, .type = oldtype};
    err =
        weft__mpi_type_make(&l, MPI_COMBINER_CONTIGUOUS, 1, &count, 0, NULL, 1, &oldtype, newtype);
    return err ? ERR(err, fn) : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_contiguous)

static int hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, int combiner,
                   const int *ints, int ni, MPI_Datatype *newtype)
{
    weft_mpi_layout_t l = {.n = count, .stride = stride, .blen = blocklength, .type = oldtype};
    int na = combiner == MPI_COMBINER_HVECTOR;
    return weft__mpi_type_make(&l, combiner, ni, ints, na, &stride, 1, &oldtype, newtype);
}

int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_vector";
    int err = weft__mpi_type_check_new(count, oldtype, newtype, fn);
    if (!err && blocklength < 0)
        err = MPI_ERR_ARG;
    MPI_Aint bytes;
    if (!err && __builtin_mul_overflow((MPI_Aint)stride, weft__mpi_type_extent(oldtype), &bytes))
        err = MPI_ERR_INTERN;
    if (!err) {
        int ints[3] = {count, blocklength, stride};
        err = hvector(count, blocklength, bytes, oldtype, MPI_COMBINER_VECTOR, ints, 3, newtype);
    }
    return err ? ERR(err, fn) : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_vector)

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_hvector";
    int err = weft__mpi_type_check_new(count, oldtype, newtype, fn);
    if (!err && blocklength < 0)
        err = MPI_ERR_ARG;
    if (!err) {
        int ints[2] = {count, blocklength};
        err = hvector(count, blocklength, stride, oldtype, MPI_COMBINER_HVECTOR, ints, 2, newtype);
    }
    return err ? ERR(err, fn) : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_create_hvector)

static int check_blens(int count, const int *blens)
{
    if (count > 0 && !blens)
        return MPI_ERR_ARG;
    for (int i = 0; i < count; i++)
        if (blens[i] < 0)
            return MPI_ERR_ARG;
    return MPI_SUCCESS;
}

int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                      const int array_of_displacements[], MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_indexed";
    int err = weft__mpi_type_check_new(count, oldtype, newtype, fn);
    if (!err)
        err = check_blens(count, array_of_blocklengths);
    if (!err && count > 0 && !array_of_displacements)
        err = MPI_ERR_ARG;
    if (err)
        return ERR(err, fn);
    weft_mpi_layout_t l = {.n = count,
                           .idisp = array_of_displacements,
                           .unit = weft__mpi_type_extent(oldtype),
                           .blens = array_of_blocklengths,
                           .type = oldtype};
    const int *ints[3] = {&count, array_of_blocklengths, array_of_displacements};
    int ni[3] = {1, count, count};
    err = weft__mpi_type_make_pieces(&l, MPI_COMBINER_INDEXED, 3, ints, ni, 0, NULL, 1, &oldtype,
                                     newtype);
    return err ? ERR(err, fn) : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_indexed)

int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                              const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_hindexed";
    int err = weft__mpi_type_check_new(count, oldtype, newtype, fn);
    if (!err)
        err = check_blens(count, array_of_blocklengths);
    if (!err && count > 0 && !array_of_displacements)
        err = MPI_ERR_ARG;
    if (err)
        return ERR(err, fn);
    weft_mpi_layout_t l = {.n = count,
                           .adisp = array_of_displacements,
                           .blens = array_of_blocklengths,
                           .type = oldtype};
    const int *ints[2] = {&count, array_of_blocklengths};
    int ni[2] = {1, count};
    err = weft__mpi_type_make_pieces(&l, MPI_COMBINER_HINDEXED, 2, ints, ni, count,
                                     array_of_displacements, 1, &oldtype, newtype);
    return err ? ERR(err, fn) : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_create_hindexed)

int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_indexed_block";
    int err = weft__mpi_type_check_new(count, oldtype, newtype, fn);
    if (!err && (blocklength < 0 || (count > 0 && !array_of_displacements)))
        err = MPI_ERR_ARG;
    if (err)
        return ERR(err, fn);
    weft_mpi_layout_t l = {.n = count,
                           .idisp = array_of_displacements,
                           .unit = weft__mpi_type_extent(oldtype),
                           .blen = blocklength,
                           .type = oldtype};
    int head[2] = {count, blocklength};
    const int *ints[2] = {head, array_of_displacements};
    int ni[2] = {2, count};
    err = weft__mpi_type_make_pieces(&l, MPI_COMBINER_INDEXED_BLOCK, 2, ints, ni, 0, NULL, 1,
                                     &oldtype, newtype);
    return err ? ERR(err, fn) : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_create_indexed_block)

int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                    const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                    MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_hindexed_block";
    int err = weft__mpi_type_check_new(count, oldtype, newtype, fn);
    if (!err && (blocklength < 0 || (count > 0 && !array_of_displacements)))
        err = MPI_ERR_ARG;
    if (err)
        return ERR(err, fn);
    weft_mpi_layout_t l = {
        .n = count, .adisp = array_of_displacements, .blen = blocklength, .type = oldtype};
    int ints[2] = {count, blocklength};
    err = weft__mpi_type_make(&l, MPI_COMBINER_HINDEXED_BLOCK, 2, ints, count,
                              array_of_displacements, 1, &oldtype, newtype);
    return err ? ERR(err, fn) : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_create_hindexed_block)

/* Alignment of a basic type: its size, halved for complex (two reals), at most
 * what malloc guarantees. */
static MPI_Aint basic_align(MPI_Datatype b)
{
    size_t a = b->basic == WEFT_MPI_B_COMPLEX ? b->size / 2 : b->size;
    return a > _Alignof(max_align_t) ? _Alignof(max_align_t) : (a ? a : 1);
}

static MPI_Aint type_align(MPI_Datatype t)
{
    MPI_Aint a = 1;
    for (int i = 0; i < t->nruns; i++) {
        MPI_Aint b = basic_align(t->runs[i].type);
        a = b > a ? b : a;
    }
    return a;
}

int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                            const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_struct";
    int err = count < 0 ? MPI_ERR_COUNT : !newtype ? MPI_ERR_ARG : MPI_SUCCESS;
    if (!err)
        err = check_blens(count, array_of_blocklengths);
    if (!err && count > 0 && (!array_of_displacements || !array_of_types))
        err = MPI_ERR_ARG;
    for (int i = 0; !err && i < count; i++)
        if (!weft__mpi_type_valid(array_of_types[i]))
            err = MPI_ERR_TYPE;
    if (err)
        return ERR(err, fn);
    weft_mpi_layout_t l = {.n = count,
                           .adisp = array_of_displacements,
                           .blens = array_of_blocklengths,
                           .types = array_of_types};
    MPI_Datatype t;
    if ((err = weft__mpi_type_build(&l, &t)))
        return ERR(err, fn);
    /* The epsilon of MPI 3.1 section 4.1.6: a struct's extent is padded to the
     * alignment of its most aligned member, as the C compiler pads a struct, unless
     * a member's bounds were set explicitly. Like MPICH, only struct pads: the
     * other constructors keep the extent their blocks span. */
    MPI_Aint align = 1;
    for (int i = 0; i < count; i++) {
        if (array_of_blocklengths[i] == 0)
            continue;
        MPI_Aint a = type_align(array_of_types[i]);
        align = a > align ? a : align;
    }
    MPI_Aint ext = t->ub - t->lb;
    if (!t->xlb && !t->xub && ext > 0 && ext % align)
        t->ub += align - ext % align;
    weft__mpi_type_set_contig(t);
    if ((err = weft__mpi_type_envelope_alloc(t, MPI_COMBINER_STRUCT, count + 1, count, count))) {
        weft__mpi_type_destroy(t);
        return ERR(err, fn);
    }
    t->ints[0] = count;
    memcpy(t->ints + 1, array_of_blocklengths, count * sizeof(int));
    memcpy(t->addrs, array_of_displacements, count * sizeof(MPI_Aint));
    memcpy(t->types, array_of_types, count * sizeof(MPI_Datatype));
    weft__mpi_type_envelope_hold(t, count);
    *newtype = t;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_create_struct)

int weft__mpi_type_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *out)
{
    MPI_Aint ub;
    if (__builtin_add_overflow(lb, extent, &ub))
        return MPI_ERR_INTERN;
    MPI_Datatype t;
    int err = weft__mpi_type_build_copy(old, lb, ub, &t);
    if (err)
        return err;
    t->xlb = t->xub = true;
    if ((err = weft__mpi_type_envelope_alloc(t, MPI_COMBINER_RESIZED, 0, 2, 1))) {
        weft__mpi_type_destroy(t);
        return err;
    }
    t->addrs[0] = lb;
    t->addrs[1] = extent;
    t->types[0] = old;
    weft__mpi_type_envelope_hold(t, 1);
    *out = t;
    return MPI_SUCCESS;
}

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                             MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_resized";
    int err = weft__mpi_type_check_new(0, oldtype, newtype, fn);
    if (!err)
        err = weft__mpi_type_resized(oldtype, lb, extent, newtype);
    return err ? ERR(err, fn) : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_create_resized)

int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_dup";
    int err = weft__mpi_type_check_new(0, oldtype, newtype, fn);
    MPI_Datatype t;
    if (!err)
        err = weft__mpi_type_build_copy(oldtype, oldtype->lb, oldtype->ub, &t);
    if (err)
        return ERR(err, fn);
    if ((err = weft__mpi_type_envelope_alloc(t, MPI_COMBINER_DUP, 0, 0, 1))) {
        weft__mpi_type_destroy(t);
        return ERR(err, fn);
    }
    t->types[0] = oldtype;
    weft__mpi_type_envelope_hold(t, 1);
    t->committed = oldtype->committed;
    /* Attributes follow their copy callbacks (MPI 3.1 section 6.7.4). When one
     * fails, newtype is MPI_DATATYPE_NULL, as MPI_Comm_dup gives MPI_COMM_NULL,
     * so that a caller's `if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t)` is
     * safe. */
    if ((err = weft__mpi_type_attrs_copy(oldtype, t))) {
        weft__mpi_type_destroy(t);
        *newtype = MPI_DATATYPE_NULL;
        return ERR(err, fn);
    }
    *newtype = t;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_dup)

/* Types made by MPI_Type_create_f90_*: a copy of the matching Fortran sized type
 * whose envelope says how it was asked for (combiner F90_*, integers r or p, r),
 * as §4.1.13 and §17.1.9 describe. They count as predefined (never freed), and
 * one (combiner, p, r) always gives the same handle. */
typedef struct f90_entry {
    struct f90_entry *next;
    int combiner, p, r;
    MPI_Datatype type;
} f90_entry_t;

static f90_entry_t *f90_types;
static pthread_mutex_t f90_lock = PTHREAD_MUTEX_INITIALIZER;

static int f90_type(int combiner, int p, int r, MPI_Datatype base, MPI_Datatype *out)
{
    int err = MPI_SUCCESS;
    pthread_mutex_lock(&f90_lock);
    for (f90_entry_t *e = f90_types; e; e = e->next)
        if (e->combiner == combiner && e->p == p && e->r == r) {
            *out = e->type;
            goto out_unlock;
        }
    f90_entry_t *e = calloc(1, sizeof *e);
    MPI_Datatype t = NULL;
    if (!e || (err = weft__mpi_type_build_copy(base, base->lb, base->ub, &t)) ||
        (err = weft__mpi_type_envelope_alloc(t, combiner,
                                             combiner == MPI_COMBINER_F90_INTEGER ? 1 : 2, 0, 0))) {
        if (t)
            weft__mpi_type_destroy(t);
        free(e);
        err = err ? err : MPI_ERR_NO_MEM;
        goto out_unlock;
    }
    if (combiner == MPI_COMBINER_F90_INTEGER) {
        t->ints[0] = r;
    } else {
        t->ints[0] = p;
        t->ints[1] = r;
    }
    t->basic = base->basic;
    t->reduce_type = base->reduce_type ? base->reduce_type : base;
    t->committed = true;
    t->predefined = true;
    snprintf(t->name, sizeof t->name, "%s", base->name);
    *e = (f90_entry_t){.next = f90_types, .combiner = combiner, .p = p, .r = r, .type = t};
    f90_types = e;
    *out = t;
out_unlock:
    pthread_mutex_unlock(&f90_lock);
    return err;
}

/* The selected_*_kind rules: the smallest type with at least r decimal digits of
 * range (and p of precision); MPI_UNDEFINED asks nothing of that parameter. */
int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    static const struct {
        int r;
        MPI_Datatype t;
    } k[] = {{2, MPI_INTEGER1}, {4, MPI_INTEGER2}, {9, MPI_INTEGER4}, {18, MPI_INTEGER8}};
    if (!newtype)
        return ERR(MPI_ERR_ARG, "MPI_Type_create_f90_integer");
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (r == MPI_UNDEFINED || r <= k[i].r) {
            int err = f90_type(MPI_COMBINER_F90_INTEGER, 0, r, k[i].t, newtype);
            return err ? ERR(err, "MPI_Type_create_f90_integer") : MPI_SUCCESS;
        }
    return ERR(MPI_ERR_ARG, "MPI_Type_create_f90_integer");
}
WEFT_MPI_ALIAS(Type_create_f90_integer)

static int f90_float(int p, int r, bool complex, MPI_Datatype *out)
{
    static const struct {
        int p, r;
    } k[] = {{6, 37}, {15, 307}, {18, 4931}};
    const MPI_Datatype reals[] = {MPI_REAL4, MPI_REAL8, MPI_REAL16};
    const MPI_Datatype complexes[] = {MPI_COMPLEX8, MPI_COMPLEX16, MPI_COMPLEX32};
    for (int i = 0; i < 3; i++)
        if ((p == MPI_UNDEFINED || p <= k[i].p) && (r == MPI_UNDEFINED || r <= k[i].r))
            return f90_type(complex ? MPI_COMBINER_F90_COMPLEX : MPI_COMBINER_F90_REAL, p, r,
                            complex ? complexes[i] : reals[i], out);
    return MPI_ERR_ARG;
}

int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    int err = newtype ? f90_float(p, r, false, newtype) : MPI_ERR_ARG;
    return err ? ERR(err, "MPI_Type_create_f90_real") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_create_f90_real)

int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    int err = newtype ? f90_float(p, r, true, newtype) : MPI_ERR_ARG;
    return err ? ERR(err, "MPI_Type_create_f90_complex") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_create_f90_complex)
