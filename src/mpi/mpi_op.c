/* Reduction operations (MPI 3.1 section 5.9): the predefined operations on the
 * type classes of section 5.9.2, user operations, Reduce_local, and the one
 * entry the collectives use, weft__mpi_op_apply().
 *
 * A predefined operation works on a derived type made of one predefined type
 * (its reduce_type): the function runs on the runs of basic elements that the
 * flattened segments hold, with no copy when the basic type fills its extent.
 *
 * Integer sums and products are computed on unsigned values (wrap-around, as
 * every MPI does, without C's undefined signed overflow).
 *
 * Thread safety: the predefined operations are immutable; user operations are
 * reference counted.
 */
#include <complex.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_int.h"
#include "mpi/mpi_type_int.h"

/* Type classes of section 5.9.2, as a mask per operation. */
enum {
    C_INT = 1 << 0, /* C and Fortran integers, multi-language (Aint, Offset, Count) */
    C_FLOAT = 1 << 1,
    C_COMPLEX = 1 << 2,
    C_LOGICAL = 1 << 3,
    C_BYTE = 1 << 4,
    C_PAIR = 1 << 5,
    C_ANY = 1 << 6, /* REPLACE, NO_OP: any type at all */
};

static unsigned class_of(MPI_Datatype b)
{
    switch (b->basic) {
    case WEFT_MPI_B_INT:
    case WEFT_MPI_B_UINT:
        return C_INT;
    case WEFT_MPI_B_FLOAT:
        return C_FLOAT;
    case WEFT_MPI_B_COMPLEX:
        return C_COMPLEX;
    case WEFT_MPI_B_BOOL:
        return C_LOGICAL;
    case WEFT_MPI_B_BYTE:
        return C_BYTE;
    case WEFT_MPI_B_PAIR:
        return C_PAIR;
    default:
        return 0;
    }
}

/* ---------------------------------------------------------------- kernels */

#define LOOP(T, EXPR)                                                                              \
    do {                                                                                           \
        const T *a = in;                                                                           \
        T *b = inout;                                                                              \
        for (size_t i = 0; i < n; i++)                                                             \
            b[i] = (T)(EXPR);                                                                      \
    } while (0)

#define UINTS(EXPR)                                                                                \
    switch (t->size) {                                                                             \
    case 1:                                                                                        \
        LOOP(uint8_t, EXPR);                                                                       \
        break;                                                                                     \
    case 2:                                                                                        \
        LOOP(uint16_t, EXPR);                                                                      \
        break;                                                                                     \
    case 4:                                                                                        \
        LOOP(uint32_t, EXPR);                                                                      \
        break;                                                                                     \
    case 8:                                                                                        \
        LOOP(uint64_t, EXPR);                                                                      \
        break;                                                                                     \
    }
#define SINTS(EXPR)                                                                                \
    switch (t->size) {                                                                             \
    case 1:                                                                                        \
        LOOP(int8_t, EXPR);                                                                        \
        break;                                                                                     \
    case 2:                                                                                        \
        LOOP(int16_t, EXPR);                                                                       \
        break;                                                                                     \
    case 4:                                                                                        \
        LOOP(int32_t, EXPR);                                                                       \
        break;                                                                                     \
    case 8:                                                                                        \
        LOOP(int64_t, EXPR);                                                                       \
        break;                                                                                     \
    }
#define FLOATS(EXPR)                                                                               \
    switch (t->size) {                                                                             \
    case sizeof(float):                                                                            \
        LOOP(float, EXPR);                                                                         \
        break;                                                                                     \
    case sizeof(double):                                                                           \
        LOOP(double, EXPR);                                                                        \
        break;                                                                                     \
    case sizeof(long double):                                                                      \
        LOOP(long double, EXPR);                                                                   \
        break;                                                                                     \
    }
#define COMPLEXES(EXPR)                                                                            \
    switch (t->size) {                                                                             \
    case sizeof(float _Complex):                                                                   \
        LOOP(float _Complex, EXPR);                                                                \
        break;                                                                                     \
    case sizeof(double _Complex):                                                                  \
        LOOP(double _Complex, EXPR);                                                               \
        break;                                                                                     \
    case sizeof(long double _Complex):                                                             \
        LOOP(long double _Complex, EXPR);                                                          \
        break;                                                                                     \
    }

/* Integers by signedness where it matters (comparisons), by size otherwise. */
#define MAXMIN(CMP)                                                                                \
    switch (t->basic) {                                                                            \
    case WEFT_MPI_B_INT:                                                                           \
        SINTS(a[i] CMP b[i] ? a[i] : b[i]);                                                        \
        break;                                                                                     \
    case WEFT_MPI_B_UINT:                                                                          \
        UINTS(a[i] CMP b[i] ? a[i] : b[i]);                                                        \
        break;                                                                                     \
    case WEFT_MPI_B_FLOAT:                                                                         \
        FLOATS(a[i] CMP b[i] ? a[i] : b[i]);                                                       \
        break;                                                                                     \
    default:                                                                                       \
        break;                                                                                     \
    }

static void op_max(const void *in, void *inout, size_t n, MPI_Datatype t)
{
    MAXMIN(>)
}

static void op_min(const void *in, void *inout, size_t n, MPI_Datatype t)
{
    MAXMIN(<)
}

static void op_sum(const void *in, void *inout, size_t n, MPI_Datatype t)
{
    switch (t->basic) {
    case WEFT_MPI_B_INT:
    case WEFT_MPI_B_UINT:
        UINTS((uintmax_t)a[i] + b[i]);
        break;
    case WEFT_MPI_B_FLOAT:
        FLOATS(a[i] + b[i]);
        break;
    case WEFT_MPI_B_COMPLEX:
        COMPLEXES(a[i] + b[i]);
        break;
    default:
        break;
    }
}

static void op_prod(const void *in, void *inout, size_t n, MPI_Datatype t)
{
    switch (t->basic) {
    case WEFT_MPI_B_INT:
    case WEFT_MPI_B_UINT:
        UINTS((uintmax_t)a[i] * b[i]);
        break;
    case WEFT_MPI_B_FLOAT:
        FLOATS(a[i] * b[i]);
        break;
    case WEFT_MPI_B_COMPLEX:
        COMPLEXES(a[i] * b[i]);
        break;
    default:
        break;
    }
}

/* Logical operations: integers and logicals (C _Bool, Fortran LOGICAL) alike,
 * any non-zero value is true, the result is 0 or 1. */
static void op_land(const void *in, void *inout, size_t n, MPI_Datatype t)
{
    UINTS(a[i] && b[i]);
}

static void op_lor(const void *in, void *inout, size_t n, MPI_Datatype t)
{
    UINTS(a[i] || b[i]);
}

static void op_lxor(const void *in, void *inout, size_t n, MPI_Datatype t)
{
    UINTS(!a[i] != !b[i]);
}

static void op_band(const void *in, void *inout, size_t n, MPI_Datatype t)
{
    UINTS(a[i] & b[i]);
}

static void op_bor(const void *in, void *inout, size_t n, MPI_Datatype t)
{
    UINTS(a[i] | b[i]);
}

static void op_bxor(const void *in, void *inout, size_t n, MPI_Datatype t)
{
    UINTS(a[i] ^ b[i]);
}

/* MINLOC/MAXLOC (section 5.9.4): the better value wins; on a tie, the lower
 * index, so that the result does not depend on the order of the reduction. */
#define PAIR_LOOP(S, CMP)                                                                          \
    do {                                                                                           \
        const S *a = in;                                                                           \
        S *b = inout;                                                                              \
        for (size_t i = 0; i < n; i++) {                                                           \
            if (a[i].v CMP b[i].v)                                                                 \
                b[i] = a[i];                                                                       \
            else if (a[i].v == b[i].v && a[i].k < b[i].k)                                          \
                b[i].k = a[i].k;                                                                   \
        }                                                                                          \
    } while (0)

#define LOC(CMP)                                                                                   \
    if (t == MPI_FLOAT_INT)                                                                        \
        PAIR_LOOP(weft_mpi_float_int_t, CMP);                                                      \
    else if (t == MPI_DOUBLE_INT)                                                                  \
        PAIR_LOOP(weft_mpi_double_int_t, CMP);                                                     \
    else if (t == MPI_LONG_INT)                                                                    \
        PAIR_LOOP(weft_mpi_long_int_t, CMP);                                                       \
    else if (t == MPI_2INT || t == MPI_2INTEGER)                                                   \
        PAIR_LOOP(weft_mpi_2int_t, CMP);                                                           \
    else if (t == MPI_SHORT_INT)                                                                   \
        PAIR_LOOP(weft_mpi_short_int_t, CMP);                                                      \
    else if (t == MPI_LONG_DOUBLE_INT)                                                             \
        PAIR_LOOP(weft_mpi_long_double_int_t, CMP);                                                \
    else if (t == MPI_2REAL)                                                                       \
        PAIR_LOOP(weft_mpi_2real_t, CMP);                                                          \
    else if (t == MPI_2DOUBLE_PRECISION)                                                           \
        PAIR_LOOP(weft_mpi_2double_t, CMP);

static void op_minloc(const void *in, void *inout, size_t n, MPI_Datatype t)
{
    LOC(<)
}

static void op_maxloc(const void *in, void *inout, size_t n, MPI_Datatype t)
{
    LOC(>)
}

static void op_replace(const void *in, void *inout, size_t n, MPI_Datatype t)
{
    memmove(inout, in, n * (size_t)weft__mpi_type_extent(t));
}

static void op_no_op(const void *in, void *inout, size_t n, MPI_Datatype t) {}

/* ---------------------------------------------------------------- predefined objects */

#define DEFINE_OP(mpi, obj)                                                                        \
    struct weft_mpi_op weft_mpi_op_##obj = {.magic = WEFT_MPI_MAGIC_OP,                            \
                                            .refs = 1,                                             \
                                            .predefined = true,                                    \
                                            .commute = true,                                       \
                                            .fn = op_##obj};
WEFT_MPI_PREDEFINED_OPS(DEFINE_OP)
#undef DEFINE_OP

/* MPI_OP_NULL carries no magic: every check refuses it. */
struct weft_mpi_op weft_mpi_op_null = {.predefined = true};

static unsigned classes_of(MPI_Op op)
{
    if (op == MPI_MAX || op == MPI_MIN)
        return C_INT | C_FLOAT;
    if (op == MPI_SUM || op == MPI_PROD)
        return C_INT | C_FLOAT | C_COMPLEX;
    if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR)
        return C_INT | C_LOGICAL;
    if (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR)
        return C_INT | C_BYTE;
    if (op == MPI_MINLOC || op == MPI_MAXLOC)
        return C_PAIR;
    return C_ANY;
}

static bool op_valid(MPI_Op op)
{
    return op && op->magic == WEFT_MPI_MAGIC_OP;
}

/* ---------------------------------------------------------------- applying */

/* Types whose basic type leaves holes (MPI_SHORT_INT, MPI_DOUBLE_INT...) inside a
 * derived layout: bring both sides to arrays of the basic type, reduce, put back. */
static int apply_staged(MPI_Op op, const void *in, void *inout, size_t count, MPI_Datatype t,
                        MPI_Datatype rt)
{
    size_t bytes = count * t->size, n = bytes / rt->size;
    size_t ext = (size_t)weft__mpi_type_extent(rt);
    char *packed = malloc(bytes ? bytes : 1);
    size_t arr = n * ext + 1; /* + 1: never malloc(0) */
    char *a = malloc(arr), *b = malloc(arr);
    int err = MPI_SUCCESS;
    if (!packed || !a || !b) {
        err = MPI_ERR_NO_MEM;
        goto out_free;
    }
    weft__mpi_type_pack(t, in, count, 0, bytes, packed);
    weft__mpi_type_unpack(rt, a - rt->lb, n, 0, bytes, packed);
    weft__mpi_type_pack(t, inout, count, 0, bytes, packed);
    weft__mpi_type_unpack(rt, b - rt->lb, n, 0, bytes, packed);
    op->fn(a, b, n, rt);
    weft__mpi_type_pack(rt, b - rt->lb, n, 0, bytes, packed);
    weft__mpi_type_unpack(t, inout, count, 0, bytes, packed);
out_free:
    free(packed);
    free(a);
    free(b);
    return err;
}

int weft__mpi_op_check_type(MPI_Op op, MPI_Datatype t)
{
    if (!op->predefined || op == MPI_NO_OP || op == MPI_REPLACE || t->size == 0)
        return MPI_SUCCESS;
    MPI_Datatype rt = t->reduce_type;
    return rt && (classes_of(op) & (class_of(rt) | C_ANY)) ? MPI_SUCCESS : MPI_ERR_OP;
}

int weft__mpi_op_apply(MPI_Op op, const void *in, void *inout, size_t count, MPI_Datatype t)
{
    if (count == 0)
        return MPI_SUCCESS;
    if (!op->predefined) {
        /* The user function sees the call's datatype, and a count that is an
         * int: more elements (a reduce-scatter's total) go in pieces. */
        MPI_Aint ext = weft__mpi_type_extent(t);
        for (size_t done = 0; done < count;) {
            MPI_Datatype type = t;
            int len = count - done > (size_t)INT_MAX ? INT_MAX : (int)(count - done);
            op->user_fn((void *)weft__mpi_at(in, (MPI_Aint)done * ext),
                        weft__mpi_at(inout, (MPI_Aint)done * ext), &len, &type);
            done += (size_t)len;
        }
        return MPI_SUCCESS;
    }
    if (op == MPI_NO_OP || t->size == 0)
        return MPI_SUCCESS;
    MPI_Datatype rt = t->reduce_type;
    if (op == MPI_REPLACE && !rt) {
        /* Any type: copy the data of the type map, segment by segment. */
        MPI_Aint ext = weft__mpi_type_extent(t);
        for (size_t e = 0; e < count; e++)
            for (int s = 0; s < t->nsegs; s++) {
                MPI_Aint off = (MPI_Aint)e * ext + t->segs[s].off;
                memmove(weft__mpi_at(inout, off), weft__mpi_at(in, off), t->segs[s].len);
            }
        return MPI_SUCCESS;
    }
    if (!rt || !(classes_of(op) & (class_of(rt) | C_ANY)))
        return MPI_ERR_OP;
    /* A basic type that fills its extent: every segment holds whole elements. */
    if (rt->contig) {
        if (t->contig) {
            op->fn(weft__mpi_at(in, t->true_lb), weft__mpi_at(inout, t->true_lb),
                   count * t->size / rt->size, rt);
            return MPI_SUCCESS;
        }
        MPI_Aint ext = weft__mpi_type_extent(t);
        for (size_t e = 0; e < count; e++)
            for (int s = 0; s < t->nsegs; s++) {
                MPI_Aint off = (MPI_Aint)e * ext + t->segs[s].off;
                op->fn(weft__mpi_at(in, off), weft__mpi_at(inout, off), t->segs[s].len / rt->size,
                       rt);
            }
        return MPI_SUCCESS;
    }
    if (t == rt) {
        op->fn(in, inout, count, rt);
        return MPI_SUCCESS;
    }
    return apply_staged(op, in, inout, count, t, rt);
}

/* ---------------------------------------------------------------- user operations */

void weft__mpi_op_retain(MPI_Op op)
{
    if (!op->predefined)
        atomic_fetch_add_explicit(&op->refs, 1, memory_order_relaxed);
}

void weft__mpi_op_release(MPI_Op op)
{
    if (!op || op->predefined)
        return;
    if (atomic_fetch_sub_explicit(&op->refs, 1, memory_order_acq_rel) == 1) {
        op->magic = WEFT_MPI_MAGIC_DEAD;
        free(op);
    }
}

int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    if (!user_fn || !op)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Op_create");
    MPI_Op o = calloc(1, sizeof *o);
    if (!o)
        return weft__mpi_err(NULL, MPI_ERR_NO_MEM, "MPI_Op_create");
    o->magic = WEFT_MPI_MAGIC_OP;
    atomic_init(&o->refs, 1);
    o->commute = commute != 0;
    o->user_fn = user_fn;
    *op = o;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Op_create)

int PMPI_Op_free(MPI_Op *op)
{
    if (!op || !op_valid(*op) || (*op)->predefined)
        return weft__mpi_err(NULL, MPI_ERR_OP, "MPI_Op_free");
    weft__mpi_op_release(*op);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Op_free)

int PMPI_Op_commutative(MPI_Op op, int *commute)
{
    if (!op_valid(op))
        return weft__mpi_err(NULL, MPI_ERR_OP, "MPI_Op_commutative");
    if (!commute)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Op_commutative");
    *commute = op->commute;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Op_commutative)

int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype,
                      MPI_Op op)
{
    static const char fn[] = "MPI_Reduce_local";
    int err = weft__mpi_check_count(count);
    if (!err)
        err = weft__mpi_check_type(datatype);
    if (!err && !op_valid(op))
        err = MPI_ERR_OP;
    if (!err)
        err = weft__mpi_check_buf(inbuf, count, datatype);
    if (!err)
        err = weft__mpi_check_buf(inoutbuf, count, datatype);
    if (!err)
        err = weft__mpi_op_apply(op, inbuf, inoutbuf, count, datatype);
    return err ? weft__mpi_err(NULL, err, fn) : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Reduce_local)
