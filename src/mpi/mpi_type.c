/* Datatypes (MPI 3.1 chapter 4): the predefined types, the constructors, and the
 * queries on types and statuses.
 *
 * Every constructor reduces to one builder: a list of blocks (byte displacement,
 * block length, child type). Children are already flat, so the builder only
 * replicates their segments and basic-element runs, merging what touches; a child
 * whose one segment fills its extent makes a block one segment, whatever its
 * length. Subarray and darray are built the way ROMIO builds them (one indexed
 * level per dimension, each resized to the full row), then take their own
 * envelope. Types are reference counted: a type holds its children (the types of
 * its envelope) and Type_free only drops the user's reference.
 *
 * Thread safety: constructors and queries touch only the objects they are given;
 * reference counts are atomic. Setting a name while another thread reads it is
 * the caller's race, as in the standard.
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "mpi/mpi_int.h"
#include "mpi/mpi_type_int.h"

/* The flattened form of one element is bounded: past this many segments (or
 * runs) a type is refused with MPI_ERR_NO_MEM instead of exhausting memory. */
#define MAX_SEGS (1 << 25)

/* ---------------------------------------------------------------- predefined types */

#define TYPE_COMMON(mpi_name)                                                                      \
    .magic = WEFT_MPI_MAGIC_TYPE, .refs = 1, .predefined = true, .committed = true,                \
    .combiner = MPI_COMBINER_NAMED, .name = mpi_name

/* A type of one C scalar: one segment, one run of itself. */
#define SCALAR(mpi_name, obj, ctype, kind)                                                         \
    static weft_mpi_seg_t segs_##obj[1] = {{0, sizeof(ctype)}};                                    \
    static weft_mpi_run_t runs_##obj[1] = {{&weft_mpi_type_##obj, 1}};                             \
    struct weft_mpi_datatype weft_mpi_type_##obj = {                                               \
        TYPE_COMMON(mpi_name),                                                                     \
        .basic = kind,                                                                             \
        .size = sizeof(ctype),                                                                     \
        .ub = sizeof(ctype),                                                                       \
        .true_ub = sizeof(ctype),                                                                  \
        .contig = true,                                                                            \
        .nsegs = 1,                                                                                \
        .segs = segs_##obj,                                                                        \
        .nruns = 1,                                                                                \
        .runs = runs_##obj,                                                                        \
        .reduce_type = &weft_mpi_type_##obj,                                                       \
    };

/* A value/index pair (MINLOC/MAXLOC): two segments unless the index follows the
 * value with no padding; its basic elements are the two members' types. */
#define PAIR_SEGS(S)   ((offsetof(S, k) == sizeof(((S *)0)->v)) ? 1 : 2)
#define PAIR_SIZE(S)   (sizeof(((S *)0)->v) + sizeof(((S *)0)->k))
#define PAIR_MERGED(S) (offsetof(S, k) == sizeof(((S *)0)->v))
#define PAIR(mpi_name, obj, S, vtype, ktype, nrun, ...)                                            \
    static weft_mpi_seg_t segs_##obj[2] = {                                                        \
        {0, PAIR_MERGED(S) ? PAIR_SIZE(S) : sizeof(((S *)0)->v)},                                  \
        {offsetof(S, k), sizeof(((S *)0)->k)}};                                                    \
    static weft_mpi_run_t runs_##obj[2] = {__VA_ARGS__};                                           \
    struct weft_mpi_datatype weft_mpi_type_##obj = {                                               \
        TYPE_COMMON(mpi_name),                                                                     \
        .basic = WEFT_MPI_B_PAIR,                                                                  \
        .size = PAIR_SIZE(S),                                                                      \
        .ub = sizeof(S),                                                                           \
        .true_ub = offsetof(S, k) + sizeof(((S *)0)->k),                                           \
        .contig = PAIR_MERGED(S) && PAIR_SIZE(S) == sizeof(S),                                     \
        .nsegs = PAIR_SEGS(S),                                                                     \
        .segs = segs_##obj,                                                                        \
        .nruns = nrun,                                                                             \
        .runs = runs_##obj,                                                                        \
        .reduce_type = &weft_mpi_type_##obj,                                                       \
    };
#define PAIR1(mpi_name, obj, S, t)      PAIR(mpi_name, obj, S, t, t, 1, {t, 2})
#define PAIR2(mpi_name, obj, S, vt, kt) PAIR(mpi_name, obj, S, vt, kt, 2, {vt, 1}, {kt, 1})

/* One description per entry of WEFT_MPI_PREDEFINED_TYPES; a new entry without
 * one fails to compile. MPI_CHAR, MPI_WCHAR and MPI_CHARACTER hold text: no
 * reduction applies to them (MPI 3.1 section 5.9.2), hence no basic kind. */
#define D_char(n, o)                    SCALAR(n, o, char, WEFT_MPI_B_NONE)
#define D_short(n, o)                   SCALAR(n, o, short, WEFT_MPI_B_INT)
#define D_int(n, o)                     SCALAR(n, o, int, WEFT_MPI_B_INT)
#define D_long(n, o)                    SCALAR(n, o, long, WEFT_MPI_B_INT)
#define D_long_long_int(n, o)           SCALAR(n, o, long long, WEFT_MPI_B_INT)
#define D_signed_char(n, o)             SCALAR(n, o, signed char, WEFT_MPI_B_INT)
#define D_unsigned_char(n, o)           SCALAR(n, o, unsigned char, WEFT_MPI_B_UINT)
#define D_unsigned_short(n, o)          SCALAR(n, o, unsigned short, WEFT_MPI_B_UINT)
#define D_unsigned(n, o)                SCALAR(n, o, unsigned, WEFT_MPI_B_UINT)
#define D_unsigned_long(n, o)           SCALAR(n, o, unsigned long, WEFT_MPI_B_UINT)
#define D_unsigned_long_long(n, o)      SCALAR(n, o, unsigned long long, WEFT_MPI_B_UINT)
#define D_float(n, o)                   SCALAR(n, o, float, WEFT_MPI_B_FLOAT)
#define D_double(n, o)                  SCALAR(n, o, double, WEFT_MPI_B_FLOAT)
#define D_long_double(n, o)             SCALAR(n, o, long double, WEFT_MPI_B_FLOAT)
#define D_wchar(n, o)                   SCALAR(n, o, wchar_t, WEFT_MPI_B_NONE)
#define D_c_bool(n, o)                  SCALAR(n, o, _Bool, WEFT_MPI_B_BOOL)
#define D_int8_t(n, o)                  SCALAR(n, o, int8_t, WEFT_MPI_B_INT)
#define D_int16_t(n, o)                 SCALAR(n, o, int16_t, WEFT_MPI_B_INT)
#define D_int32_t(n, o)                 SCALAR(n, o, int32_t, WEFT_MPI_B_INT)
#define D_int64_t(n, o)                 SCALAR(n, o, int64_t, WEFT_MPI_B_INT)
#define D_uint8_t(n, o)                 SCALAR(n, o, uint8_t, WEFT_MPI_B_UINT)
#define D_uint16_t(n, o)                SCALAR(n, o, uint16_t, WEFT_MPI_B_UINT)
#define D_uint32_t(n, o)                SCALAR(n, o, uint32_t, WEFT_MPI_B_UINT)
#define D_uint64_t(n, o)                SCALAR(n, o, uint64_t, WEFT_MPI_B_UINT)
#define D_aint(n, o)                    SCALAR(n, o, MPI_Aint, WEFT_MPI_B_INT)
#define D_count(n, o)                   SCALAR(n, o, MPI_Count, WEFT_MPI_B_INT)
#define D_offset(n, o)                  SCALAR(n, o, MPI_Offset, WEFT_MPI_B_INT)
#define D_c_float_complex(n, o)         SCALAR(n, o, float _Complex, WEFT_MPI_B_COMPLEX)
#define D_c_double_complex(n, o)        SCALAR(n, o, double _Complex, WEFT_MPI_B_COMPLEX)
#define D_c_long_double_complex(n, o)   SCALAR(n, o, long double _Complex, WEFT_MPI_B_COMPLEX)
#define D_byte(n, o)                    SCALAR(n, o, unsigned char, WEFT_MPI_B_BYTE)
#define D_packed(n, o)                  SCALAR(n, o, unsigned char, WEFT_MPI_B_NONE)
#define D_cxx_bool(n, o)                SCALAR(n, o, _Bool, WEFT_MPI_B_BOOL)
#define D_cxx_float_complex(n, o)       SCALAR(n, o, float _Complex, WEFT_MPI_B_COMPLEX)
#define D_cxx_double_complex(n, o)      SCALAR(n, o, double _Complex, WEFT_MPI_B_COMPLEX)
#define D_cxx_long_double_complex(n, o) SCALAR(n, o, long double _Complex, WEFT_MPI_B_COMPLEX)
#define D_float_int(n, o)               PAIR2(n, o, weft_mpi_float_int_t, MPI_FLOAT, MPI_INT)
#define D_double_int(n, o)              PAIR2(n, o, weft_mpi_double_int_t, MPI_DOUBLE, MPI_INT)
#define D_long_int(n, o)                PAIR2(n, o, weft_mpi_long_int_t, MPI_LONG, MPI_INT)
#define D_2int(n, o)                    PAIR1(n, o, weft_mpi_2int_t, MPI_INT)
#define D_short_int(n, o)               PAIR2(n, o, weft_mpi_short_int_t, MPI_SHORT, MPI_INT)
#define D_long_double_int(n, o)         PAIR2(n, o, weft_mpi_long_double_int_t, MPI_LONG_DOUBLE, MPI_INT)
/* Fortran types, with the sizes of gfortran's defaults on this ABI. */
#define D_character(n, o)         SCALAR(n, o, char, WEFT_MPI_B_NONE)
#define D_logical(n, o)           SCALAR(n, o, int32_t, WEFT_MPI_B_BOOL)
#define D_integer(n, o)           SCALAR(n, o, int32_t, WEFT_MPI_B_INT)
#define D_real(n, o)              SCALAR(n, o, float, WEFT_MPI_B_FLOAT)
#define D_double_precision(n, o)  SCALAR(n, o, double, WEFT_MPI_B_FLOAT)
#define D_complex(n, o)           SCALAR(n, o, float _Complex, WEFT_MPI_B_COMPLEX)
#define D_double_complex(n, o)    SCALAR(n, o, double _Complex, WEFT_MPI_B_COMPLEX)
#define D_integer1(n, o)          SCALAR(n, o, int8_t, WEFT_MPI_B_INT)
#define D_integer2(n, o)          SCALAR(n, o, int16_t, WEFT_MPI_B_INT)
#define D_integer4(n, o)          SCALAR(n, o, int32_t, WEFT_MPI_B_INT)
#define D_integer8(n, o)          SCALAR(n, o, int64_t, WEFT_MPI_B_INT)
#define D_real4(n, o)             SCALAR(n, o, float, WEFT_MPI_B_FLOAT)
#define D_real8(n, o)             SCALAR(n, o, double, WEFT_MPI_B_FLOAT)
#define D_real16(n, o)            SCALAR(n, o, long double, WEFT_MPI_B_FLOAT)
#define D_complex8(n, o)          SCALAR(n, o, float _Complex, WEFT_MPI_B_COMPLEX)
#define D_complex16(n, o)         SCALAR(n, o, double _Complex, WEFT_MPI_B_COMPLEX)
#define D_complex32(n, o)         SCALAR(n, o, long double _Complex, WEFT_MPI_B_COMPLEX)
#define D_2integer(n, o)          PAIR1(n, o, weft_mpi_2int_t, MPI_INTEGER)
#define D_2real(n, o)             PAIR1(n, o, weft_mpi_2real_t, MPI_REAL)
#define D_2double_precision(n, o) PAIR1(n, o, weft_mpi_2double_t, MPI_DOUBLE_PRECISION)

/* The name is taken with # before MPI_X can expand to its object's address. */
#define DEFINE_TYPE(mpi, obj) D_##obj(#mpi, obj)
WEFT_MPI_PREDEFINED_TYPES(DEFINE_TYPE)
#undef DEFINE_TYPE

/* MPI_DATATYPE_NULL carries no magic: every check refuses it as a type. */
struct weft_mpi_datatype weft_mpi_datatype_null = {.predefined = true, .name = "MPI_DATATYPE_NULL"};

/* The predefined objects are complete at compile time, so datatype functions work
 * before MPI_Init; Init only restores names a program may have changed. */
void weft__mpi_types_init(void)
{
#define RENAME(mpi, obj) strcpy(weft_mpi_type_##obj.name, #mpi);
    WEFT_MPI_PREDEFINED_TYPES(RENAME)
#undef RENAME
}

/* ---------------------------------------------------------------- references */

static bool type_valid(MPI_Datatype t)
{
    return t && t->magic == WEFT_MPI_MAGIC_TYPE;
}

static void type_destroy(MPI_Datatype t)
{
    /* Type_free ran the delete callbacks already; this is for types that die
     * otherwise (a dup whose attribute copy failed, the last reference of a type
     * freed while in use). */
    if (t->attrs)
        weft__mpi_type_attrs_delete_all(t);
    for (int i = 0; i < t->ntypes; i++)
        weft__mpi_type_release(t->types[i]);
    free(t->segs);
    free(t->runs);
    free(t->ints);
    free(t->addrs);
    free(t->types);
    t->magic = WEFT_MPI_MAGIC_DEAD;
    free(t);
}

void weft__mpi_type_retain(MPI_Datatype t)
{
    if (!t->predefined)
        atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
}

void weft__mpi_type_release(MPI_Datatype t)
{
    if (!t || t->predefined)
        return;
    /* acq_rel: the last releaser must see every write made through other refs. */
    if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) == 1)
        type_destroy(t);
}

/* ---------------------------------------------------------------- checks */

int weft__mpi_check_type(MPI_Datatype t)
{
    if (!type_valid(t) || !t->committed)
        return MPI_ERR_TYPE;
    return MPI_SUCCESS;
}

int weft__mpi_check_count(int count)
{
    return count < 0 ? MPI_ERR_COUNT : MPI_SUCCESS;
}

/* A NULL buffer is MPI_BOTTOM: legal only when the type's displacements are
 * absolute addresses, which a type whose data starts at offset 0 cannot have. */
int weft__mpi_check_buf(const void *buf, int count, MPI_Datatype t)
{
    if (buf == NULL && count > 0 && t->size > 0 && t->true_lb == 0)
        return MPI_ERR_BUFFER;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- the builder */

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
} layout_t;

static int block_at(const layout_t *l, int i, MPI_Aint *disp, MPI_Aint *blen, MPI_Datatype *type)
{
    *type = l->types ? l->types[i] : l->type;
    *blen = l->blens ? l->blens[i] : l->blen;
    if (l->adisp)
        *disp = l->adisp[i];
    else if (l->idisp ? __builtin_mul_overflow((MPI_Aint)l->idisp[i], l->unit, disp)
                      : __builtin_mul_overflow((MPI_Aint)i, l->stride, disp))
        return MPI_ERR_INTERN;
    return MPI_SUCCESS;
}

/* The child's one segment fills its extent: any number of them is one range. */
static bool is_whole(MPI_Datatype t)
{
    return t->size > 0 && t->nsegs == 1 && (MPI_Aint)t->segs[0].len == weft__mpi_type_extent(t);
}

static void seg_add(MPI_Datatype t, MPI_Aint off, size_t len)
{
    if (len == 0)
        return;
    weft_mpi_seg_t *last = t->nsegs ? &t->segs[t->nsegs - 1] : NULL;
    if (last && last->off + (MPI_Aint)last->len == off)
        last->len += len;
    else
        t->segs[t->nsegs++] = (weft_mpi_seg_t){off, len};
}

static void run_add(MPI_Datatype t, MPI_Datatype type, size_t n)
{
    if (n == 0)
        return;
    weft_mpi_run_t *last = t->nruns ? &t->runs[t->nruns - 1] : NULL;
    if (last && last->type == type)
        last->n += n;
    else
        t->runs[t->nruns++] = (weft_mpi_run_t){type, n};
}

static void set_contig(MPI_Datatype t)
{
    t->contig = t->size == 0 || is_whole(t);
}

static MPI_Datatype type_alloc(void)
{
    MPI_Datatype t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->magic = WEFT_MPI_MAGIC_TYPE;
    atomic_init(&t->refs, 1);
    return t;
}

/* Two passes: bounds, sizes and how many segments and runs at most; then the
 * segments and runs themselves. The envelope is the caller's. */
static int build(const layout_t *l, MPI_Datatype *out)
{
    size_t size = 0;
    MPI_Aint nsegs = 0, nruns = 0;
    MPI_Aint lb = 0, ub = 0, tlb = 0, tub = 0;
    bool any = false, any_data = false, mixed = false;
    MPI_Datatype rt = NULL;
    MPI_Aint disp, blen;
    MPI_Datatype c;
    int err;

    for (int i = 0; i < l->n; i++) {
        if ((err = block_at(l, i, &disp, &blen, &c)))
            return err;
        if (blen == 0)
            continue; /* an empty block is no part of the type map */
        MPI_Aint ext = weft__mpi_type_extent(c), span, lo, hi;
        if (__builtin_mul_overflow(blen - 1, ext, &span))
            return MPI_ERR_INTERN;
        /* Element j of the block sits at disp + j*ext: the bounds come from the
         * first and last element, in whichever order a negative extent puts them. */
        MPI_Aint lo_span = span < 0 ? span : 0, hi_span = span > 0 ? span : 0;
        if (__builtin_add_overflow(disp, c->lb + lo_span, &lo) ||
            __builtin_add_overflow(disp, c->ub + hi_span, &hi))
            return MPI_ERR_INTERN;
        lb = any && lb < lo ? lb : lo;
        ub = any && ub > hi ? ub : hi;
        any = true;
        if (!c->reduce_type || (rt && rt != c->reduce_type))
            mixed = true;
        rt = c->reduce_type;
        if (c->size == 0)
            continue;
        if (__builtin_add_overflow(disp, c->true_lb + lo_span, &lo) ||
            __builtin_add_overflow(disp, c->true_ub + hi_span, &hi))
            return MPI_ERR_INTERN;
        tlb = any_data && tlb < lo ? tlb : lo;
        tub = any_data && tub > hi ? tub : hi;
        any_data = true;
        size_t bytes;
        if (__builtin_mul_overflow((size_t)blen, c->size, &bytes) ||
            __builtin_add_overflow(size, bytes, &size))
            return MPI_ERR_INTERN;
        nsegs += is_whole(c) ? 1 : (blen > MAX_SEGS ? MAX_SEGS + 1 : blen * c->nsegs);
        nruns += c->nruns == 1 ? 1 : (blen > MAX_SEGS ? MAX_SEGS + 1 : blen * c->nruns);
        if (nsegs > MAX_SEGS || nruns > MAX_SEGS)
            return MPI_ERR_NO_MEM;
    }

    MPI_Datatype t = type_alloc();
    if (!t)
        return MPI_ERR_NO_MEM;
    t->segs = malloc((nsegs ? nsegs : 1) * sizeof *t->segs);
    t->runs = malloc((nruns ? nruns : 1) * sizeof *t->runs);
    if (!t->segs || !t->runs) {
        type_destroy(t);
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < l->n; i++) {
        block_at(l, i, &disp, &blen, &c);
        if (blen == 0 || c->size == 0)
            continue;
        MPI_Aint ext = weft__mpi_type_extent(c);
        if (is_whole(c)) {
            seg_add(t, disp + c->segs[0].off, (size_t)blen * c->segs[0].len);
        } else {
            for (MPI_Aint j = 0; j < blen; j++)
                for (int s = 0; s < c->nsegs; s++)
                    seg_add(t, disp + j * ext + c->segs[s].off, c->segs[s].len);
        }
        if (c->nruns == 1) {
            run_add(t, c->runs[0].type, (size_t)blen * c->runs[0].n);
        } else {
            for (MPI_Aint j = 0; j < blen; j++)
                for (int r = 0; r < c->nruns; r++)
                    run_add(t, c->runs[r].type, c->runs[r].n);
        }
    }
    /* Give back what merging saved; a failed shrink keeps the larger block. */
    weft_mpi_seg_t *segs = realloc(t->segs, (t->nsegs ? t->nsegs : 1) * sizeof *segs);
    if (segs)
        t->segs = segs;
    weft_mpi_run_t *runs = realloc(t->runs, (t->nruns ? t->nruns : 1) * sizeof *runs);
    if (runs)
        t->runs = runs;
    t->size = size;
    t->lb = lb;
    t->ub = ub;
    t->true_lb = any_data ? tlb : 0;
    t->true_ub = any_data ? tub : 0;
    t->reduce_type = mixed ? NULL : rt;
    set_contig(t);
    *out = t;
    return MPI_SUCCESS;
}

/* A copy of old's flattened form with new bounds (resized), or the same (dup). */
static int build_copy(MPI_Datatype old, MPI_Aint lb, MPI_Aint ub, MPI_Datatype *out)
{
    MPI_Datatype t = type_alloc();
    if (!t)
        return MPI_ERR_NO_MEM;
    t->segs = malloc((old->nsegs ? old->nsegs : 1) * sizeof *t->segs);
    t->runs = malloc((old->nruns ? old->nruns : 1) * sizeof *t->runs);
    if (!t->segs || !t->runs) {
        type_destroy(t);
        return MPI_ERR_NO_MEM;
    }
    memcpy(t->segs, old->segs, old->nsegs * sizeof *t->segs);
    memcpy(t->runs, old->runs, old->nruns * sizeof *t->runs);
    t->nsegs = old->nsegs;
    t->nruns = old->nruns;
    t->size = old->size;
    t->lb = lb;
    t->ub = ub;
    t->true_lb = old->true_lb;
    t->true_ub = old->true_ub;
    t->reduce_type = old->reduce_type;
    set_contig(t);
    *out = t;
    return MPI_SUCCESS;
}

/* Room for the envelope; the caller fills the arrays, then envelope_hold() takes
 * references on the child types. */
static int envelope_alloc(MPI_Datatype t, int combiner, int ni, int na, int nd)
{
    t->combiner = combiner;
    t->ints = ni ? malloc(ni * sizeof *t->ints) : NULL;
    t->addrs = na ? malloc(na * sizeof *t->addrs) : NULL;
    t->types = nd ? malloc(nd * sizeof *t->types) : NULL;
    if ((ni && !t->ints) || (na && !t->addrs) || (nd && !t->types))
        return MPI_ERR_NO_MEM;
    t->nints = ni;
    t->naddrs = na;
    t->ntypes = 0; /* until envelope_hold: a failed build releases nothing */
    return MPI_SUCCESS;
}

static void envelope_hold(MPI_Datatype t, int nd)
{
    t->ntypes = nd;
    for (int i = 0; i < nd; i++)
        weft__mpi_type_retain(t->types[i]);
}

/* Drop an envelope (subarray and darray replace their scaffolding's). */
static void envelope_drop(MPI_Datatype t)
{
    for (int i = 0; i < t->ntypes; i++)
        weft__mpi_type_release(t->types[i]);
    free(t->ints);
    free(t->addrs);
    free(t->types);
    t->ints = NULL;
    t->addrs = NULL;
    t->types = NULL;
    t->nints = t->naddrs = t->ntypes = 0;
}

/* ---------------------------------------------------------------- constructors */

#define ERR(cls, fn) weft__mpi_err(NULL, (cls), (fn))

static int check_new(int count, MPI_Datatype old, MPI_Datatype *newtype, const char *fn)
{
    if (count < 0)
        return MPI_ERR_COUNT;
    if (!type_valid(old))
        return MPI_ERR_TYPE;
    if (!newtype)
        return MPI_ERR_ARG;
    return MPI_SUCCESS;
}

/* Build from a layout, then give the result its envelope: ints and addrs are
 * copied, types held. */
static int make(const layout_t *l, int combiner, int ni, const int *ints, int na,
                const MPI_Aint *addrs, int nd, const MPI_Datatype *types, MPI_Datatype *out)
{
    MPI_Datatype t;
    int err = build(l, &t);
    if (err)
        return err;
    if ((err = envelope_alloc(t, combiner, ni, na, nd))) {
        type_destroy(t);
        return err;
    }
    if (ni)
        memcpy(t->ints, ints, ni * sizeof *ints);
    if (na)
        memcpy(t->addrs, addrs, na * sizeof *addrs);
    if (nd)
        memcpy(t->types, types, nd * sizeof *types);
    envelope_hold(t, nd);
    *out = t;
    return MPI_SUCCESS;
}

int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_contiguous";
    int err = check_new(count, oldtype, newtype, fn);
    if (err)
        return ERR(err, fn);
    layout_t l = {.n = 1, .stride = 0, .blen = count, .type = oldtype};
    err = make(&l, MPI_COMBINER_CONTIGUOUS, 1, &count, 0, NULL, 1, &oldtype, newtype);
    return err ? ERR(err, fn) : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_contiguous)

static int hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, int combiner,
                   const int *ints, int ni, MPI_Datatype *newtype)
{
    layout_t l = {.n = count, .stride = stride, .blen = blocklength, .type = oldtype};
    int na = combiner == MPI_COMBINER_HVECTOR;
    return make(&l, combiner, ni, ints, na, &stride, 1, &oldtype, newtype);
}

int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_vector";
    int err = check_new(count, oldtype, newtype, fn);
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
    int err = check_new(count, oldtype, newtype, fn);
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
    int err = check_new(count, oldtype, newtype, fn);
    if (!err)
        err = check_blens(count, array_of_blocklengths);
    if (!err && count > 0 && !array_of_displacements)
        err = MPI_ERR_ARG;
    if (err)
        return ERR(err, fn);
    layout_t l = {.n = count,
                  .idisp = array_of_displacements,
                  .unit = weft__mpi_type_extent(oldtype),
                  .blens = array_of_blocklengths,
                  .type = oldtype};
    MPI_Datatype t;
    if ((err = build(&l, &t)))
        return ERR(err, fn);
    if ((err = envelope_alloc(t, MPI_COMBINER_INDEXED, 2 * count + 1, 0, 1))) {
        type_destroy(t);
        return ERR(err, fn);
    }
    t->ints[0] = count;
    memcpy(t->ints + 1, array_of_blocklengths, count * sizeof(int));
    memcpy(t->ints + 1 + count, array_of_displacements, count * sizeof(int));
    t->types[0] = oldtype;
    envelope_hold(t, 1);
    *newtype = t;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_indexed)

int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                              const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_hindexed";
    int err = check_new(count, oldtype, newtype, fn);
    if (!err)
        err = check_blens(count, array_of_blocklengths);
    if (!err && count > 0 && !array_of_displacements)
        err = MPI_ERR_ARG;
    if (err)
        return ERR(err, fn);
    layout_t l = {.n = count,
                  .adisp = array_of_displacements,
                  .blens = array_of_blocklengths,
                  .type = oldtype};
    MPI_Datatype t;
    if ((err = build(&l, &t)))
        return ERR(err, fn);
    if ((err = envelope_alloc(t, MPI_COMBINER_HINDEXED, count + 1, count, 1))) {
        type_destroy(t);
        return ERR(err, fn);
    }
    t->ints[0] = count;
    memcpy(t->ints + 1, array_of_blocklengths, count * sizeof(int));
    memcpy(t->addrs, array_of_displacements, count * sizeof(MPI_Aint));
    t->types[0] = oldtype;
    envelope_hold(t, 1);
    *newtype = t;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_create_hindexed)

int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_indexed_block";
    int err = check_new(count, oldtype, newtype, fn);
    if (!err && (blocklength < 0 || (count > 0 && !array_of_displacements)))
        err = MPI_ERR_ARG;
    if (err)
        return ERR(err, fn);
    layout_t l = {.n = count,
                  .idisp = array_of_displacements,
                  .unit = weft__mpi_type_extent(oldtype),
                  .blen = blocklength,
                  .type = oldtype};
    MPI_Datatype t;
    if ((err = build(&l, &t)))
        return ERR(err, fn);
    if ((err = envelope_alloc(t, MPI_COMBINER_INDEXED_BLOCK, count + 2, 0, 1))) {
        type_destroy(t);
        return ERR(err, fn);
    }
    t->ints[0] = count;
    t->ints[1] = blocklength;
    memcpy(t->ints + 2, array_of_displacements, count * sizeof(int));
    t->types[0] = oldtype;
    envelope_hold(t, 1);
    *newtype = t;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_create_indexed_block)

int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                    const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                    MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_hindexed_block";
    int err = check_new(count, oldtype, newtype, fn);
    if (!err && (blocklength < 0 || (count > 0 && !array_of_displacements)))
        err = MPI_ERR_ARG;
    if (err)
        return ERR(err, fn);
    layout_t l = {
        .n = count, .adisp = array_of_displacements, .blen = blocklength, .type = oldtype};
    int ints[2] = {count, blocklength};
    err = make(&l, MPI_COMBINER_HINDEXED_BLOCK, 2, ints, count, array_of_displacements, 1, &oldtype,
               newtype);
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

/* Bounds set explicitly somewhere inside (resized, and subarray and darray,
 * whose bounds are the whole array): such a type's extent is never padded. */
static bool has_explicit_bounds(MPI_Datatype t)
{
    if (t->predefined)
        return false;
    if (t->combiner == MPI_COMBINER_RESIZED || t->combiner == MPI_COMBINER_SUBARRAY ||
        t->combiner == MPI_COMBINER_DARRAY)
        return true;
    for (int i = 0; i < t->ntypes; i++)
        if (has_explicit_bounds(t->types[i]))
            return true;
    return false;
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
        if (!type_valid(array_of_types[i]))
            err = MPI_ERR_TYPE;
    if (err)
        return ERR(err, fn);
    layout_t l = {.n = count,
                  .adisp = array_of_displacements,
                  .blens = array_of_blocklengths,
                  .types = array_of_types};
    MPI_Datatype t;
    if ((err = build(&l, &t)))
        return ERR(err, fn);
    /* The epsilon of MPI 3.1 section 4.1.6: a struct's extent is padded to the
     * alignment of its most aligned member, as the C compiler pads a struct, unless
     * a member's bounds were set explicitly. Like MPICH, only struct pads: the
     * other constructors keep the extent their blocks span. */
    bool explicit_bounds = false;
    MPI_Aint align = 1;
    for (int i = 0; i < count; i++) {
        if (array_of_blocklengths[i] == 0)
            continue;
        explicit_bounds |= has_explicit_bounds(array_of_types[i]);
        MPI_Aint a = type_align(array_of_types[i]);
        align = a > align ? a : align;
    }
    MPI_Aint ext = t->ub - t->lb;
    if (!explicit_bounds && ext > 0 && ext % align)
        t->ub += align - ext % align;
    set_contig(t);
    if ((err = envelope_alloc(t, MPI_COMBINER_STRUCT, count + 1, count, count))) {
        type_destroy(t);
        return ERR(err, fn);
    }
    t->ints[0] = count;
    memcpy(t->ints + 1, array_of_blocklengths, count * sizeof(int));
    memcpy(t->addrs, array_of_displacements, count * sizeof(MPI_Aint));
    memcpy(t->types, array_of_types, count * sizeof(MPI_Datatype));
    envelope_hold(t, count);
    *newtype = t;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_create_struct)

static int resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *out)
{
    MPI_Aint ub;
    if (__builtin_add_overflow(lb, extent, &ub))
        return MPI_ERR_INTERN;
    MPI_Datatype t;
    int err = build_copy(old, lb, ub, &t);
    if (err)
        return err;
    if ((err = envelope_alloc(t, MPI_COMBINER_RESIZED, 0, 2, 1))) {
        type_destroy(t);
        return err;
    }
    t->addrs[0] = lb;
    t->addrs[1] = extent;
    t->types[0] = old;
    envelope_hold(t, 1);
    *out = t;
    return MPI_SUCCESS;
}

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                             MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_resized";
    int err = check_new(0, oldtype, newtype, fn);
    if (!err)
        err = resized(oldtype, lb, extent, newtype);
    return err ? ERR(err, fn) : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_create_resized)

int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_dup";
    int err = check_new(0, oldtype, newtype, fn);
    MPI_Datatype t;
    if (!err)
        err = build_copy(oldtype, oldtype->lb, oldtype->ub, &t);
    if (err)
        return ERR(err, fn);
    if ((err = envelope_alloc(t, MPI_COMBINER_DUP, 0, 0, 1))) {
        type_destroy(t);
        return ERR(err, fn);
    }
    t->types[0] = oldtype;
    envelope_hold(t, 1);
    t->committed = oldtype->committed;
    /* Attributes follow their copy callbacks (MPI 3.1 section 6.7.4). */
    if ((err = weft__mpi_type_attrs_copy(oldtype, t))) {
        type_destroy(t);
        return ERR(err, fn);
    }
    *newtype = t;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_dup)

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
        layout_t l = {.n = dims[d].n, .adisp = disps, .blens = dims[d].len, .type = cur};
        MPI_Datatype level = NULL, next = NULL;
        if (!err)
            err = build(&l, &level);
        free(disps);
        /* The level's envelope only has to keep cur alive until resized. */
        if (!err && !(err = envelope_alloc(level, MPI_COMBINER_HINDEXED, 0, 0, 1))) {
            level->types[0] = cur;
            envelope_hold(level, 1);
        }
        if (!err)
            err = resized(level, 0, row, &next);
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
    envelope_drop(cur);
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
    int err = check_new(0, oldtype, newtype, fn);
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
    if ((err = envelope_alloc(t, MPI_COMBINER_SUBARRAY, 3 * ndims + 2, 0, 1))) {
        type_destroy(t);
        return ERR(err, fn);
    }
    t->ints[0] = ndims;
    memcpy(t->ints + 1, array_of_sizes, ndims * sizeof(int));
    memcpy(t->ints + 1 + ndims, array_of_subsizes, ndims * sizeof(int));
    memcpy(t->ints + 1 + 2 * ndims, array_of_starts, ndims * sizeof(int));
    t->ints[1 + 3 * ndims] = order;
    t->types[0] = oldtype;
    envelope_hold(t, 1);
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
    int err = check_new(0, oldtype, newtype, fn);
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
    if ((err = envelope_alloc(t, MPI_COMBINER_DARRAY, 4 * ndims + 4, 0, 1))) {
        type_destroy(t);
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
    envelope_hold(t, 1);
    *newtype = t;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_create_darray)

/* ---------------------------------------------------------------- commit, free */

int PMPI_Type_commit(MPI_Datatype *datatype)
{
    if (!datatype || !type_valid(*datatype))
        return ERR(MPI_ERR_TYPE, "MPI_Type_commit");
    /* Flattening happened at construction: committing has nothing left to do. */
    (*datatype)->committed = true;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_commit)

int PMPI_Type_free(MPI_Datatype *datatype)
{
    if (!datatype || !type_valid(*datatype) || (*datatype)->predefined)
        return ERR(MPI_ERR_TYPE, "MPI_Type_free");
    /* The delete callbacks run now, whoever still holds the type (6.7.4); a
     * failing one leaves the type as it was. */
    int err = weft__mpi_type_attrs_delete_all(*datatype);
    if (err)
        return ERR(err, "MPI_Type_free");
    weft__mpi_type_release(*datatype);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_free)

/* ---------------------------------------------------------------- queries */

int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    if (!type_valid(datatype))
        return ERR(MPI_ERR_TYPE, "MPI_Type_size_x");
    if (!size)
        return ERR(MPI_ERR_ARG, "MPI_Type_size_x");
    *size = (MPI_Count)datatype->size;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_size_x)

int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
    if (!type_valid(datatype))
        return ERR(MPI_ERR_TYPE, "MPI_Type_size");
    if (!size)
        return ERR(MPI_ERR_ARG, "MPI_Type_size");
    *size = datatype->size > INT_MAX ? MPI_UNDEFINED : (int)datatype->size;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_size)

int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    if (!type_valid(datatype))
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
    if (!type_valid(datatype))
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
    if (!type_valid(datatype))
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
    if (!type_valid(datatype))
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
    if (!type_valid(datatype))
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

/* The derived types handed out are the children themselves, with a reference the
 * caller drops with Type_free, as the standard asks. */
int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                           int max_datatypes, int array_of_integers[],
                           MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
    static const char fn[] = "MPI_Type_get_contents";
    if (!type_valid(datatype))
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
        array_of_datatypes[i] = datatype->types[i];
        weft__mpi_type_retain(datatype->types[i]);
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
    if (!e || (err = build_copy(base, base->lb, base->ub, &t)) ||
        (err = envelope_alloc(t, combiner, combiner == MPI_COMBINER_F90_INTEGER ? 1 : 2, 0, 0))) {
        if (t)
            type_destroy(t);
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

int PMPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
    if (!type_valid(datatype))
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
    if (!type_valid(datatype))
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
    if (!type_valid(t))
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
