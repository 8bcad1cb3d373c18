/* Private to the datatype and reduction files (mpi_type*.c, mpi_op.c): the
 * layouts of the predefined value/index pair types, and small helpers on
 * flattened types. */
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

#endif
