/* Private to the datatype and reduction files (mpi_type*.c, mpi_op.c): the
 * layouts of the predefined value/index pair types, small helpers on
 * flattened types, and the builder the constructors share. */
#ifndef WEFT_MPI_TYPE_INT_H
#define WEFT_MPI_TYPE_INT_H

#include "mpi/mpi_int.h"

/* The C layouts of MPI_FLOAT_INT and friends: MINLOC/MAXLOC read them, the type
 * objects take their size, extent and segments from them. */
typedef struct {
    float v;
    int k;
} weft_mpi_float_int_t;
typedef struct {
    double v;
    int k;
} weft_mpi_double_int_t;
typedef struct {
    long v;
    int k;
} weft_mpi_long_int_t;
typedef struct {
    int v;
    int k;
} weft_mpi_2int_t;
typedef struct {
    short v;
    int k;
} weft_mpi_short_int_t;
typedef struct {
    long double v;
    int k;
} weft_mpi_long_double_int_t;
typedef struct {
    float v;
    float k;
} weft_mpi_2real_t;
typedef struct {
    double v;
    double k;
} weft_mpi_2double_t;

/* buf + off as a pointer, computed on integers: with MPI_BOTTOM (NULL) the
 * offsets are absolute addresses, and pointer arithmetic on NULL is undefined. */
static inline char *weft__mpi_at(const void *buf, MPI_Aint off)
{
    return (char *)((uintptr_t)buf + (uintptr_t)off);
}

/* ---------------------------------------------------------------- the builder (mpi_type.c) */

static inline bool weft__mpi_type_valid(MPI_Datatype t)
{
    return t && t->magic == WEFT_MPI_MAGIC_TYPE;
}

/* Blocks of a constructor: block i is blen(i) elements of type(i) at disp(i)
 * bytes. Each field is either one array or one value for all blocks. */
typedef struct layout {
    int n;
    const MPI_Aint *adisp; /* byte displacements, or */
    const int *idisp;      /* displacements in units of `unit` bytes, or */
    MPI_Aint stride;       /* block i at i * stride bytes */
    MPI_Aint unit;
    const int *blens;
    MPI_Aint blen;
    const MPI_Datatype *types;
    MPI_Datatype type;
} weft_mpi_layout_t;

/* Build the flattened type of a layout (no envelope). */
int weft__mpi_type_build(const weft_mpi_layout_t *l, MPI_Datatype *out);
/* A copy of old's flattened form with bounds [lb, ub) (resized), or the same (dup). */
int weft__mpi_type_build_copy(MPI_Datatype old, MPI_Aint lb, MPI_Aint ub, MPI_Datatype *out);
/* Room for the envelope; the caller fills the arrays, then envelope_hold takes
 * references on the nd child types. */
int weft__mpi_type_envelope_alloc(MPI_Datatype t, int combiner, int ni, int na, int nd);
void weft__mpi_type_envelope_hold(MPI_Datatype t, int nd);
/* Drop an envelope (subarray and darray replace their scaffolding's). */
void weft__mpi_type_envelope_drop(MPI_Datatype t);
/* Build from a layout, then give the result its envelope: ints and addrs are
 * copied, types held. */
int weft__mpi_type_make(const weft_mpi_layout_t *l, int combiner, int ni, const int *ints, int na,
                        const MPI_Aint *addrs, int nd, const MPI_Datatype *types,
                        MPI_Datatype *out);
/* The same with the envelope's integers in np pieces: ni[i] of them at ints[i]. */
int weft__mpi_type_make_pieces(const weft_mpi_layout_t *l, int combiner, int np,
                               const int *const *ints, const int *ni, int na, const MPI_Aint *addrs,
                               int nd, const MPI_Datatype *types, MPI_Datatype *out);
/* Mark t contiguous if its data is one range (after its bounds changed). */
void weft__mpi_type_set_contig(MPI_Datatype t);
/* Free a type that nobody holds (also one half built). */
void weft__mpi_type_destroy(MPI_Datatype t);

/* ---------------------------------------------------------------- constructors (mpi_type_create.c)
 */

/* The checks every constructor makes: an error class, or MPI_SUCCESS. */
int weft__mpi_type_check_new(int count, MPI_Datatype old, MPI_Datatype *newtype, const char *fn);
/* MPI_Type_create_resized without the checks. */
int weft__mpi_type_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *out);

#endif
