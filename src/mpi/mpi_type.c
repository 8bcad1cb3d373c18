/* Datatypes (MPI 3.1 chapter 4): the predefined types, references, and the
 * builder every constructor reduces to (constructors in mpi_type_create.c and
 * mpi_type_darray.c, queries in mpi_type_query.c, pack and unpack in
 * mpi_type_pack.c).
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
 * one fails to compile. MPI_WCHAR and MPI_CHARACTER hold text: no reduction
 * applies to them (MPI 3.1 section 5.9.2), hence no basic kind. MPI_CHAR is
 * text too by the standard's list, but Open MPI and MPICH reduce it as a
 * small signed integer, and programs rely on it (OSU's reduction benchmarks
 * sum MPI_CHAR by default): so does weft. */
#define D_char(n, o)                    SCALAR(n, o, signed char, WEFT_MPI_B_INT)
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

void weft__mpi_type_destroy(MPI_Datatype t)
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
        weft__mpi_type_destroy(t);
}

/* ---------------------------------------------------------------- checks */

int weft__mpi_check_type(MPI_Datatype t)
{
    if (!weft__mpi_type_valid(t) || !t->committed)
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

static int block_at(const weft_mpi_layout_t *l, int i, MPI_Aint *disp, MPI_Aint *blen,
                    MPI_Datatype *type)
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

void weft__mpi_type_set_contig(MPI_Datatype t)
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
int weft__mpi_type_build(const weft_mpi_layout_t *l, MPI_Datatype *out)
{
    size_t size = 0;
    MPI_Aint nsegs = 0, nruns = 0;
    MPI_Aint lb = 0, ub = 0, tlb = 0, tub = 0, xlb = 0, xub = 0;
    bool any = false, any_data = false, mixed = false, any_xlb = false, any_xub = false;
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
        /* Explicit bounds of members decide alone where there are some. */
        if (c->xlb) {
            xlb = any_xlb && xlb < lo ? xlb : lo;
            any_xlb = true;
        }
        if (c->xub) {
            xub = any_xub && xub > hi ? xub : hi;
            any_xub = true;
        }
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
        weft__mpi_type_destroy(t);
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
    t->lb = any_xlb ? xlb : lb;
    t->ub = any_xub ? xub : ub;
    t->xlb = any_xlb;
    t->xub = any_xub;
    t->true_lb = any_data ? tlb : 0;
    t->true_ub = any_data ? tub : 0;
    t->reduce_type = mixed ? NULL : rt;
    weft__mpi_type_set_contig(t);
    *out = t;
    return MPI_SUCCESS;
}

/* A copy of old's flattened form with new bounds (resized), or the same (dup). */
int weft__mpi_type_build_copy(MPI_Datatype old, MPI_Aint lb, MPI_Aint ub, MPI_Datatype *out)
{
    MPI_Datatype t = type_alloc();
    if (!t)
        return MPI_ERR_NO_MEM;
    t->segs = malloc((old->nsegs ? old->nsegs : 1) * sizeof *t->segs);
    t->runs = malloc((old->nruns ? old->nruns : 1) * sizeof *t->runs);
    if (!t->segs || !t->runs) {
        weft__mpi_type_destroy(t);
        return MPI_ERR_NO_MEM;
    }
    memcpy(t->segs, old->segs, old->nsegs * sizeof *t->segs);
    memcpy(t->runs, old->runs, old->nruns * sizeof *t->runs);
    t->nsegs = old->nsegs;
    t->nruns = old->nruns;
    t->size = old->size;
    t->lb = lb;
    t->ub = ub;
    t->xlb = old->xlb;
    t->xub = old->xub;
    t->true_lb = old->true_lb;
    t->true_ub = old->true_ub;
    t->reduce_type = old->reduce_type;
    weft__mpi_type_set_contig(t);
    *out = t;
    return MPI_SUCCESS;
}

/* Room for the envelope; the caller fills the arrays, then weft__mpi_type_envelope_hold() takes
 * references on the child types. */
int weft__mpi_type_envelope_alloc(MPI_Datatype t, int combiner, int ni, int na, int nd)
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

void weft__mpi_type_envelope_hold(MPI_Datatype t, int nd)
{
    t->ntypes = nd;
    for (int i = 0; i < nd; i++)
        weft__mpi_type_retain(t->types[i]);
}

/* Drop an envelope (subarray and darray replace their scaffolding's). */
void weft__mpi_type_envelope_drop(MPI_Datatype t)
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

/* Build from a layout, then give the result its envelope: ints and addrs are
 * copied, types held. */
int weft__mpi_type_make_pieces(const weft_mpi_layout_t *l, int combiner, int np,
                               const int *const *ints, const int *ni, int na, const MPI_Aint *addrs,
                               int nd, const MPI_Datatype *types, MPI_Datatype *out)
{
    int nints = 0;
    for (int i = 0; i < np; i++)
        nints += ni[i];
    MPI_Datatype t;
    int err = weft__mpi_type_build(l, &t);
    if (err)
        return err;
    if ((err = weft__mpi_type_envelope_alloc(t, combiner, nints, na, nd))) {
        weft__mpi_type_destroy(t);
        return err;
    }
    for (int i = 0, at = 0; i < np; at += ni[i++])
        if (ni[i])
            memcpy(t->ints + at, ints[i], ni[i] * sizeof(int));
    if (na)
        memcpy(t->addrs, addrs, na * sizeof *addrs);
    if (nd)
        memcpy(t->types, types, nd * sizeof *types);
    weft__mpi_type_envelope_hold(t, nd);
    *out = t;
    return MPI_SUCCESS;
}

int weft__mpi_type_make(const weft_mpi_layout_t *l, int combiner, int ni, const int *ints, int na,
                        const MPI_Aint *addrs, int nd, const MPI_Datatype *types, MPI_Datatype *out)
{
    return weft__mpi_type_make_pieces(l, combiner, 1, &ints, &ni, na, addrs, nd, types, out);
}

#define ERR(cls, fn) weft__mpi_err(NULL, (cls), (fn))

/* ---------------------------------------------------------------- commit, free */

int PMPI_Type_commit(MPI_Datatype *datatype)
{
    if (!datatype || !weft__mpi_type_valid(*datatype))
        return ERR(MPI_ERR_TYPE, "MPI_Type_commit");
    /* Flattening happened at construction: committing has nothing left to do. */
    (*datatype)->committed = true;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_commit)

int PMPI_Type_free(MPI_Datatype *datatype)
{
    if (!datatype || !weft__mpi_type_valid(*datatype) || (*datatype)->predefined)
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
