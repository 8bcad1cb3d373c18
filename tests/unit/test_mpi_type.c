/* MPI datatypes in-process, without MPI_Init: predefined types, every constructor's
 * bounds against hand-computed values, packing (whole, windows, iovecs, unpack)
 * against a naive reference list of element offsets, envelopes and contents,
 * element counts on partial data, external32, argument errors, references. */
#include <limits.h>
#include <mpi.h>
#include <wchar.h>

#include "../common/test_util.h"
#include "mpi/mpi_int.h"

/* Collectives, topologies and intercommunicators are other parts' (mpi_coll*.c,
 * mpi_topo.c, mpi_intercomm.c); until they are on this branch, the rest of the
 * layer links against these stand-ins, which these tests never reach. */
__attribute__((weak)) int weft__mpi_topo_dup(const weft_mpi_topo_t *t, weft_mpi_topo_t **out)
{
    return MPI_ERR_INTERN;
}
__attribute__((weak)) void weft__mpi_topo_free(weft_mpi_topo_t *t) {}
__attribute__((weak)) int weft__mpi_intercomm_dup(MPI_Comm comm, MPI_Comm *out)
{
    return MPI_ERR_INTERN;
}
__attribute__((weak)) int PMPI_Barrier(MPI_Comm comm)
{
    return MPI_ERR_INTERN;
}

static void check_bounds(MPI_Datatype t, int line, MPI_Count size, MPI_Aint lb, MPI_Aint extent,
                         MPI_Aint true_lb, MPI_Aint true_extent)
{
    MPI_Count sz, clb, cext;
    MPI_Aint l, e, tl, te;
    MPI_Type_size_x(t, &sz);
    MPI_Type_get_extent(t, &l, &e);
    MPI_Type_get_true_extent(t, &tl, &te);
    MPI_Type_get_extent_x(t, &clb, &cext);
    if (sz != size || l != lb || e != extent || tl != true_lb || te != true_extent)
        fprintf(stderr,
                "line %d: size %lld lb %ld extent %ld true %ld/%ld; want %lld %ld %ld %ld/%ld\n",
                line, sz, (long)l, (long)e, (long)tl, (long)te, size, (long)lb, (long)extent,
                (long)true_lb, (long)true_extent);
    CHECK(sz == size && l == lb && e == extent && tl == true_lb && te == true_extent);
    CHECK(clb == lb && cext == extent);
}
#define BOUNDS(t, ...) check_bounds(t, __LINE__, __VA_ARGS__)

/* A buffer with room on both sides, for types with negative displacements. */
#define ARENA 65536
static unsigned char src_arena[2 * ARENA], dst_arena[2 * ARENA];
#define SRC (src_arena + ARENA)
#define DST (dst_arena + ARENA)

/* Check everything that moves data for count elements of t, whose basic data is
 * the `n` blocks of `esize` bytes at offsets ref[] (one element; later elements
 * repeat at +extent). */
static void check_moves(MPI_Datatype t, int line, int count, const long *ref, int n, int esize)
{
    MPI_Aint lb, ext;
    MPI_Type_commit(&t); /* MPI_Pack wants it; committing again is harmless */
    MPI_Type_get_extent(t, &lb, &ext);
    size_t total = (size_t)count * n * esize;
    unsigned char *want = malloc(total + 1), *got = malloc(total + 1), *win = malloc(total + 1);
    test_fill(src_arena, sizeof src_arena, (uint64_t)line);
    for (int e = 0, k = 0; e < count; e++)
        for (int i = 0; i < n; i++, k++)
            memcpy(want + (size_t)k * esize, SRC + e * ext + ref[i], esize);

    /* Whole stream. */
    weft__mpi_type_pack(t, SRC, count, 0, total, got);
    bool ok = memcmp(got, want, total) == 0;
    if (!ok)
        fprintf(stderr, "line %d: packed stream differs\n", line);
    CHECK(ok);

    /* Windows of odd sizes that cut segments anywhere. */
    for (size_t step = 1; step <= 13; step += 4) {
        memset(win, 0, total + 1);
        for (size_t off = 0; off < total; off += step) {
            size_t len = total - off < step ? total - off : step;
            weft__mpi_type_pack(t, SRC, count, off, len, win + off);
        }
        CHECK(memcmp(win, want, total) == 0);
    }

    /* Unpack, whole and by windows: exactly the type map's bytes change. */
    for (int pass = 0; pass < 2; pass++) {
        memset(dst_arena, 0xee, sizeof dst_arena);
        if (pass == 0) {
            weft__mpi_type_unpack(t, DST, count, 0, total, want);
        } else {
            for (size_t off = 0; off < total; off += 7)
                weft__mpi_type_unpack(t, DST, count, off, total - off < 7 ? total - off : 7,
                                      want + off);
        }
        unsigned char *expect = malloc(sizeof dst_arena);
        memset(expect, 0xee, sizeof dst_arena);
        for (int e = 0, k = 0; e < count; e++)
            for (int i = 0; i < n; i++, k++)
                memcpy(expect + ARENA + e * ext + ref[i], want + (size_t)k * esize, esize);
        ok = memcmp(expect, dst_arena, sizeof dst_arena) == 0;
        if (!ok)
            fprintf(stderr, "line %d: unpack pass %d differs\n", line, pass);
        CHECK(ok);
        free(expect);
    }

    /* Iovecs: in order, they are the packed stream. */
    int niov = weft__mpi_type_iov(t, SRC, count, NULL, 0);
    struct iovec *iov = malloc((niov + 1) * sizeof *iov);
    CHECK(weft__mpi_type_iov(t, SRC, count, iov, niov) == niov);
    size_t pos = 0;
    ok = true;
    for (int i = 0; i < niov && ok; i++) {
        ok = pos + iov[i].iov_len <= total &&
             memcmp(iov[i].iov_base, want + pos, iov[i].iov_len) == 0;
        if (i > 0) /* merged: no entry starts where the previous ends */
            ok = ok && (char *)iov[i - 1].iov_base + iov[i - 1].iov_len != iov[i].iov_base;
        pos += iov[i].iov_len;
    }
    CHECK(ok && pos == total);
    /* A short array gets a prefix and the full count. */
    if (niov > 1) {
        struct iovec one;
        CHECK(weft__mpi_type_iov(t, SRC, count, &one, 1) == niov);
        CHECK(one.iov_base == iov[0].iov_base && one.iov_len == iov[0].iov_len);
    }

    /* MPI_Pack / MPI_Unpack at a position, and truncation. */
    int psize, pos2 = 3;
    MPI_Pack_size(count, t, MPI_COMM_WORLD, &psize);
    CHECK((size_t)psize == total);
    unsigned char *pk = malloc(total + 3);
    CHECK(MPI_Pack(SRC, count, t, pk, (int)total + 3, &pos2, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(pos2 == (int)total + 3 && memcmp(pk + 3, want, total) == 0);
    if (total > 0) {
        pos2 = 4;
        CHECK(MPI_Pack(SRC, count, t, pk, (int)total + 3, &pos2, MPI_COMM_WORLD) ==
              MPI_ERR_TRUNCATE);
        pos2 = 4;
        CHECK(MPI_Unpack(pk, (int)total + 3, &pos2, DST, count, t, MPI_COMM_WORLD) ==
              MPI_ERR_TRUNCATE);
    }
    pos2 = 3;
    memset(dst_arena, 0, sizeof dst_arena);
    CHECK(MPI_Unpack(pk, (int)total + 3, &pos2, DST, count, t, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(pos2 == (int)total + 3);
    weft__mpi_type_pack(t, DST, count, 0, total, got);
    CHECK(memcmp(got, want, total) == 0);
    free(pk);
    free(iov);
    free(want);
    free(got);
    free(win);
}
#define MOVES(t, count, ref, n, esize) check_moves(t, __LINE__, count, ref, n, esize)

static void envelope(MPI_Datatype t, int ni, int na, int nd, int combiner)
{
    int i, a, d, c;
    CHECK(MPI_Type_get_envelope(t, &i, &a, &d, &c) == MPI_SUCCESS);
    if (i != ni || a != na || d != nd || c != combiner)
        fprintf(stderr, "envelope %d %d %d comb %d; want %d %d %d comb %d\n", i, a, d, c, ni, na,
                nd, combiner);
    CHECK(i == ni && a == na && d == nd && c == combiner);
}

/* Contents equal the given arrays; the types handed out are freed again. */
static void contents(MPI_Datatype t, int ni, const int *ints, int na, const MPI_Aint *addrs, int nd,
                     const MPI_Datatype *types)
{
    int gi[64];
    MPI_Aint ga[64];
    MPI_Datatype gd[64];
    CHECK(MPI_Type_get_contents(t, 64, 64, 64, gi, ga, gd) == MPI_SUCCESS);
    CHECK(ni == 0 || memcmp(gi, ints, ni * sizeof(int)) == 0);
    CHECK(na == 0 || memcmp(ga, addrs, na * sizeof(MPI_Aint)) == 0);
    for (int k = 0; k < nd; k++) {
        /* Predefined children come back as they are; derived ones as new
         * objects of the same layout and envelope (§4.1.13). */
        if (types[k]->predefined)
            CHECK(gd[k] == types[k]);
        else
            CHECK(gd[k] != types[k] && gd[k]->size == types[k]->size && gd[k]->lb == types[k]->lb &&
                  gd[k]->ub == types[k]->ub && gd[k]->combiner == types[k]->combiner);
        if (!gd[k]->predefined)
            MPI_Type_free(&gd[k]);
    }
    if (ni > 0)
        CHECK(MPI_Type_get_contents(t, ni - 1, 64, 64, gi, ga, gd) == MPI_ERR_ARG);
}

static void test_predefined(void)
{
    /* Every predefined type: named, committed, a sensible size, MPI_ name. */
    int n = 0;
#define EACH(mpi, obj)                                                                             \
    {                                                                                              \
        MPI_Datatype t = mpi;                                                                      \
        char name[MPI_MAX_OBJECT_NAME];                                                            \
        int len, ni, na, nd, comb;                                                                 \
        CHECK(weft__mpi_check_type(t) == MPI_SUCCESS);                                             \
        CHECK(MPI_Type_get_name(t, name, &len) == MPI_SUCCESS && strcmp(name, #mpi) == 0);         \
        CHECK(len == (int)strlen(#mpi));                                                           \
        CHECK(t->size > 0 && t->size <= 32 && weft__mpi_type_extent(t) >= (MPI_Aint)t->size);      \
        MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);                                            \
        CHECK(comb == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nd == 0);                        \
        CHECK(MPI_Type_get_contents(t, 0, 0, 0, NULL, NULL, NULL) == MPI_ERR_ARG);                 \
        CHECK(t->reduce_type == t);                                                                \
        n++;                                                                                       \
    }
    WEFT_MPI_PREDEFINED_TYPES(EACH)
#undef EACH
    CHECK(n == 62);
    BOUNDS(MPI_CHAR, 1, 0, 1, 0, 1);
    BOUNDS(MPI_INT, 4, 0, 4, 0, 4);
    BOUNDS(MPI_LONG, 8, 0, 8, 0, 8);
    BOUNDS(MPI_LONG_DOUBLE, 16, 0, 16, 0, 16);
    BOUNDS(MPI_C_LONG_DOUBLE_COMPLEX, 32, 0, 32, 0, 32);
    BOUNDS(MPI_WCHAR, 4, 0, 4, 0, 4);
    BOUNDS(MPI_C_BOOL, 1, 0, 1, 0, 1);
    BOUNDS(MPI_LOGICAL, 4, 0, 4, 0, 4);
    BOUNDS(MPI_FLOAT_INT, 8, 0, 8, 0, 8);
    BOUNDS(MPI_DOUBLE_INT, 12, 0, 16, 0, 12);
    BOUNDS(MPI_LONG_INT, 12, 0, 16, 0, 12);
    BOUNDS(MPI_SHORT_INT, 6, 0, 8, 0, 8);
    BOUNDS(MPI_LONG_DOUBLE_INT, 20, 0, 32, 0, 20);
    BOUNDS(MPI_2INT, 8, 0, 8, 0, 8);
    BOUNDS(MPI_2DOUBLE_PRECISION, 16, 0, 16, 0, 16);
    CHECK(MPI_SHORT_INT->nsegs == 2 && !MPI_SHORT_INT->contig && MPI_2INT->contig);
    CHECK(MPI_FLOAT_INT->nruns == 2 && MPI_2INT->nruns == 1 && MPI_2INT->runs[0].n == 2);
    CHECK(MPI_INT->basic == WEFT_MPI_B_INT && MPI_UNSIGNED->basic == WEFT_MPI_B_UINT &&
          MPI_C_FLOAT_COMPLEX->basic == WEFT_MPI_B_COMPLEX && MPI_BYTE->basic == WEFT_MPI_B_BYTE &&
          MPI_CXX_BOOL->basic == WEFT_MPI_B_BOOL && MPI_2REAL->basic == WEFT_MPI_B_PAIR);
    CHECK(MPI_LONG_LONG == MPI_LONG_LONG_INT && MPI_C_COMPLEX == MPI_C_FLOAT_COMPLEX);

    /* Names can change; Init puts them back. */
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    CHECK(MPI_Type_set_name(MPI_INT, "my int") == MPI_SUCCESS);
    MPI_Type_get_name(MPI_INT, name, &len);
    CHECK(strcmp(name, "my int") == 0 && len == 6);
    weft__mpi_types_init();
    MPI_Type_get_name(MPI_INT, name, &len);
    CHECK(strcmp(name, "MPI_INT") == 0);

    MPI_Datatype t;
    CHECK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 8, &t) == MPI_SUCCESS && t == MPI_INTEGER8);
    CHECK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 4, &t) == MPI_SUCCESS && t == MPI_REAL4);
    CHECK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &t) == MPI_SUCCESS && t == MPI_COMPLEX16);
    CHECK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &t) == MPI_ERR_ARG);
    CHECK(MPI_Type_match_size(99, 4, &t) == MPI_ERR_ARG);
    /* The f90 types have the layout of the matching sized type and an envelope
     * that says how they were asked for; the same request gives the same handle,
     * and they cannot be freed. */
    MPI_Datatype t2;
    int ni, na, nd, comb, ints[2];
    MPI_Aint addr;
    MPI_Datatype dt;
    CHECK(MPI_Type_create_f90_integer(3, &t) == MPI_SUCCESS && t->size == 2);
    CHECK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb) == MPI_SUCCESS &&
          comb == MPI_COMBINER_F90_INTEGER && ni == 1 && na == 0 && nd == 0);
    CHECK(MPI_Type_get_contents(t, 1, 0, 0, ints, &addr, &dt) == MPI_SUCCESS && ints[0] == 3);
    CHECK(MPI_Type_create_f90_integer(3, &t2) == MPI_SUCCESS && t2 == t);
    CHECK(MPI_Type_free(&t2) == MPI_ERR_TYPE);
    CHECK(MPI_Type_create_f90_integer(10, &t) == MPI_SUCCESS && t->size == 8);
    CHECK(MPI_Type_create_f90_integer(19, &t) == MPI_ERR_ARG);
    CHECK(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &t) == MPI_SUCCESS && t->size == 4);
    CHECK(MPI_Type_create_f90_real(7, 30, &t) == MPI_SUCCESS && t->size == 8);
    CHECK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb) == MPI_SUCCESS &&
          comb == MPI_COMBINER_F90_REAL && ni == 2);
    CHECK(MPI_Type_get_contents(t, 2, 0, 0, ints, &addr, &dt) == MPI_SUCCESS && ints[0] == 7 &&
          ints[1] == 30);
    CHECK(MPI_Type_create_f90_real(40, 30, &t) == MPI_ERR_ARG);
    CHECK(MPI_Type_create_f90_complex(15, 300, &t) == MPI_SUCCESS && t->size == 16);
    CHECK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb) == MPI_SUCCESS &&
          comb == MPI_COMBINER_F90_COMPLEX);
}

static void test_contiguous_vector(void)
{
    MPI_Datatype t, u;
    long ref[64];

    MPI_Type_contiguous(3, MPI_INT, &t);
    BOUNDS(t, 12, 0, 12, 0, 12);
    CHECK(t->contig && t->nsegs == 1 && t->reduce_type == MPI_INT);
    CHECK(weft__mpi_check_type(t) == MPI_ERR_TYPE); /* not committed yet */
    MPI_Type_commit(&t);
    CHECK(weft__mpi_check_type(t) == MPI_SUCCESS);
    for (int i = 0; i < 3; i++)
        ref[i] = 4 * i;
    MOVES(t, 5, ref, 3, 4);
    envelope(t, 1, 0, 1, MPI_COMBINER_CONTIGUOUS);
    contents(t, 1, (int[]){3}, 0, NULL, 1, (MPI_Datatype[]){MPI_INT});
    MPI_Type_free(&t);
    CHECK(t == MPI_DATATYPE_NULL);

    MPI_Type_contiguous(0, MPI_INT, &t);
    BOUNDS(t, 0, 0, 0, 0, 0);
    MPI_Type_free(&t);

    /* vector(3, 2, 4): blocks of two ints every 16 bytes. */
    MPI_Type_vector(3, 2, 4, MPI_INT, &t);
    BOUNDS(t, 24, 0, 40, 0, 40);
    CHECK(t->nsegs == 3 && !t->contig && t->nruns == 1 && t->runs[0].n == 6);
    for (int i = 0, k = 0; i < 3; i++)
        for (int j = 0; j < 2; j++)
            ref[k++] = 16 * i + 4 * j;
    MOVES(t, 3, ref, 6, 4);
    envelope(t, 3, 0, 1, MPI_COMBINER_VECTOR);
    contents(t, 3, (int[]){3, 2, 4}, 0, NULL, 1, (MPI_Datatype[]){MPI_INT});
    MPI_Type_free(&t);

    /* A vector whose stride equals its block is one segment, and contiguous. */
    MPI_Type_vector(4, 2, 2, MPI_DOUBLE, &t);
    BOUNDS(t, 64, 0, 64, 0, 64);
    CHECK(t->nsegs == 1 && t->contig);
    MPI_Type_free(&t);

    /* Negative stride: elements go backwards, lb below zero. */
    MPI_Type_vector(3, 1, -2, MPI_INT, &t);
    BOUNDS(t, 12, -16, 20, -16, 20);
    ref[0] = 0, ref[1] = -8, ref[2] = -16;
    MOVES(t, 2, ref, 3, 4);
    MPI_Type_free(&t);

    /* hvector of 3 ints every 20 bytes. */
    MPI_Type_create_hvector(2, 3, 20, MPI_INT, &t);
    BOUNDS(t, 24, 0, 32, 0, 32);
    long h[] = {0, 4, 8, 20, 24, 28};
    MOVES(t, 3, h, 6, 4);
    envelope(t, 2, 1, 1, MPI_COMBINER_HVECTOR);
    contents(t, 2, (int[]){2, 3}, 1, (MPI_Aint[]){20}, 1, (MPI_Datatype[]){MPI_INT});

    /* A vector of the hvector: segments of the child are replicated. */
    MPI_Type_vector(2, 1, 2, t, &u);
    BOUNDS(u, 48, 0, 96, 0, 96);
    long hh[] = {0, 4, 8, 20, 24, 28, 64, 68, 72, 84, 88, 92};
    MOVES(u, 2, hh, 12, 4);
    MPI_Type_free(&t);
    MOVES(u, 1, hh, 12, 4); /* the child lives on inside u */
    MPI_Type_free(&u);
}

static void test_indexed_struct(void)
{
    MPI_Datatype t, u, w;

    /* indexed: a zero-length block is no part of the type map, even for bounds. */
    int bl[] = {2, 0, 1}, disp[] = {5, 1, 0};
    MPI_Type_indexed(3, bl, disp, MPI_INT, &t);
    BOUNDS(t, 12, 0, 28, 0, 28);
    long r1[] = {20, 24, 0};
    MOVES(t, 2, r1, 3, 4);
    envelope(t, 7, 0, 1, MPI_COMBINER_INDEXED);
    contents(t, 7, (int[]){3, 2, 0, 1, 5, 1, 0}, 0, NULL, 1, (MPI_Datatype[]){MPI_INT});
    MPI_Type_free(&t);

    int hbl[] = {1, 2};
    MPI_Aint hd[] = {12, 0};
    MPI_Type_create_hindexed(2, hbl, hd, MPI_INT, &t);
    BOUNDS(t, 12, 0, 16, 0, 16);
    long r2[] = {12, 0, 4};
    MOVES(t, 3, r2, 3, 4);
    envelope(t, 3, 2, 1, MPI_COMBINER_HINDEXED);
    contents(t, 3, (int[]){2, 1, 2}, 2, hd, 1, (MPI_Datatype[]){MPI_INT});
    MPI_Type_free(&t);

    int bd[] = {0, 4, 10};
    MPI_Type_create_indexed_block(3, 2, bd, MPI_INT, &t);
    BOUNDS(t, 24, 0, 48, 0, 48);
    long r3[] = {0, 4, 16, 20, 40, 44};
    MOVES(t, 2, r3, 6, 4);
    envelope(t, 5, 0, 1, MPI_COMBINER_INDEXED_BLOCK);
    contents(t, 5, (int[]){3, 2, 0, 4, 10}, 0, NULL, 1, (MPI_Datatype[]){MPI_INT});
    MPI_Type_free(&t);

    MPI_Aint hbd[] = {8, -4};
    MPI_Type_create_hindexed_block(2, 1, hbd, MPI_DOUBLE, &t);
    BOUNDS(t, 16, -4, 20, -4, 20);
    long r4[] = {8, 12, -4, 0}; /* as 4-byte pieces */
    MOVES(t, 2, r4, 4, 4);
    envelope(t, 2, 2, 1, MPI_COMBINER_HINDEXED_BLOCK);
    contents(t, 2, (int[]){2, 1}, 2, hbd, 1, (MPI_Datatype[]){MPI_DOUBLE});
    MPI_Type_free(&t);

    /* struct {char; double}: padded to the double's alignment, like C. */
    int sbl[] = {1, 1};
    MPI_Aint sd[] = {0, 8};
    MPI_Datatype st[] = {MPI_CHAR, MPI_DOUBLE};
    MPI_Type_create_struct(2, sbl, sd, st, &t);
    BOUNDS(t, 9, 0, 16, 0, 16);
    CHECK(t->reduce_type == NULL && t->nruns == 2 && t->nsegs == 2);
    long r5[] = {0, 8, 9, 10, 11, 12, 13, 14, 15};
    MOVES(t, 3, r5, 9, 1);
    envelope(t, 3, 2, 2, MPI_COMBINER_STRUCT);
    contents(t, 3, (int[]){2, 1, 1}, 2, sd, 2, st);
    MPI_Type_free(&t);

    /* struct {double; char} at 0 and 8: ub 9 padded to 16. */
    MPI_Datatype st2[] = {MPI_DOUBLE, MPI_CHAR};
    MPI_Type_create_struct(2, sbl, sd, st2, &t);
    BOUNDS(t, 9, 0, 16, 0, 9);
    MPI_Type_free(&t);

    /* ... but not when a member's bounds were set explicitly: its lb and ub
     * markers alone give the bounds (MPI 3.1 §4.1.7), here those of the char
     * at 8 (as Open MPI gives). */
    MPI_Type_create_resized(MPI_CHAR, 0, 1, &u);
    MPI_Datatype st3[] = {MPI_DOUBLE, u};
    MPI_Type_create_struct(2, sbl, sd, st3, &t);
    BOUNDS(t, 9, 8, 1, 0, 9);
    MPI_Type_free(&t);
    /* Markers stick through other constructors, and the members without
     * them do not move the bounds: {resized(int, 4, 4) at 0, char at 0}
     * has lb 4 and extent 4; two of them in a row step by that extent. */
    MPI_Type_create_resized(MPI_INT, 4, 4, &w);
    MPI_Datatype st5[] = {w, MPI_CHAR};
    MPI_Type_create_struct(2, sbl, (MPI_Aint[]){0, 0}, st5, &t);
    BOUNDS(t, 5, 4, 4, 0, 4);
    MPI_Datatype two;
    MPI_Type_contiguous(2, t, &two);
    BOUNDS(two, 10, 4, 8, 0, 8);
    MPI_Type_free(&two);
    MPI_Type_free(&w);
    MPI_Type_free(&t);
    MPI_Type_free(&u);

    /* Struct of one type throughout keeps a reduce type; mixed pairs too. */
    MPI_Datatype st4[] = {MPI_2INT, MPI_2INT};
    MPI_Aint sd4[] = {0, 16};
    MPI_Type_create_struct(2, sbl, sd4, st4, &t);
    CHECK(t->reduce_type == MPI_2INT && t->nruns == 1 && t->runs[0].type == MPI_INT);
    BOUNDS(t, 16, 0, 24, 0, 24);
    MPI_Type_free(&t);

    /* resized: bounds only, data unchanged. */
    MPI_Type_create_resized(MPI_INT, -4, 12, &t);
    BOUNDS(t, 4, -4, 12, 0, 4);
    CHECK(!t->contig);
    envelope(t, 0, 2, 1, MPI_COMBINER_RESIZED);
    contents(t, 0, NULL, 2, (MPI_Aint[]){-4, 12}, 1, (MPI_Datatype[]){MPI_INT});
    MPI_Type_contiguous(2, t, &u);
    BOUNDS(u, 8, -4, 24, 0, 16);
    long r6[] = {0, 12};
    MOVES(u, 3, r6, 2, 4);
    MPI_Type_free(&u);
    MPI_Type_free(&t);

    /* dup: same map, DUP envelope, committed like its parent. */
    MPI_Type_vector(2, 1, 3, MPI_INT, &u);
    MPI_Type_commit(&u);
    MPI_Type_dup(u, &t);
    BOUNDS(t, 8, 0, 16, 0, 16);
    CHECK(t->committed);
    envelope(t, 0, 0, 1, MPI_COMBINER_DUP);
    contents(t, 0, NULL, 0, NULL, 1, &u);
    MPI_Type_free(&u);
    long r7[] = {0, 12};
    MOVES(t, 2, r7, 2, 4);
    MPI_Type_free(&t);
}

/* Subarray against the obvious nested loops. */
static void test_subarray(int order)
{
    int sizes[] = {4, 5, 6}, sub[] = {2, 3, 2}, starts[] = {1, 1, 3};
    MPI_Datatype t;
    CHECK(MPI_Type_create_subarray(3, sizes, sub, starts, order, MPI_INT, &t) == MPI_SUCCESS);
    long ref[12];
    int k = 0;
    for (int a = 0; a < sub[0]; a++)
        for (int b = 0; b < sub[1]; b++)
            for (int c = 0; c < sub[2]; c++) {
                int i = starts[0] + a, j = starts[1] + b, l = starts[2] + c;
                /* C: last index fastest; Fortran: first index fastest. */
                ref[k++] = 4L * (order == MPI_ORDER_C ? (i * 5 + j) * 6 + l : (l * 5 + j) * 4 + i);
            }
    if (order == MPI_ORDER_FORTRAN) {
        /* Fortran type-map order runs the first index fastest. */
        k = 0;
        for (int c = 0; c < sub[2]; c++)
            for (int b = 0; b < sub[1]; b++)
                for (int a = 0; a < sub[0]; a++)
                    ref[k++] = 4L * (((starts[2] + c) * 5 + starts[1] + b) * 4 + starts[0] + a);
    }
    BOUNDS(t, 48, 0, 480, ref[0], ref[11] + 4 - ref[0]);
    MOVES(t, 2, ref, 12, 4);
    envelope(t, 11, 0, 1, MPI_COMBINER_SUBARRAY);
    contents(t, 11, (int[]){3, 4, 5, 6, 2, 3, 2, 1, 1, 3, order}, 0, NULL, 1,
             (MPI_Datatype[]){MPI_INT});
    MPI_Type_free(&t);
    int bad[] = {4, 5, 5};
    CHECK(MPI_Type_create_subarray(3, sizes, bad, starts, order, MPI_INT, &t) == MPI_ERR_ARG);
    CHECK(MPI_Type_create_subarray(3, sizes, sub, starts, 3, MPI_INT, &t) == MPI_ERR_ARG);
}

/* darray: a 7 x 9 array, rows by blocks over 2 processes, columns cyclic(2)
 * over 3; every element has exactly one owner and each owner's list is in
 * local storage order. */
static void test_darray(int order, int distrib1, int darg1)
{
    int gs[] = {7, 9}, dist[] = {MPI_DISTRIBUTE_BLOCK, distrib1};
    int dargs[] = {MPI_DISTRIBUTE_DFLT_DARG, darg1}, ps[] = {2, 3};
    int owners[63] = {0};
    for (int rank = 0; rank < 6; rank++) {
        MPI_Datatype t;
        CHECK(MPI_Type_create_darray(6, rank, 2, gs, dist, dargs, ps, order, MPI_INT, &t) ==
              MPI_SUCCESS);
        int pi = rank / 3, pj = rank % 3,
            b1 = darg1 == MPI_DISTRIBUTE_DFLT_DARG ? (distrib1 == MPI_DISTRIBUTE_BLOCK ? 3 : 1)
                                                   : darg1;
        long ref[63];
        int n = 0;
        for (int outer = 0; outer < (order == MPI_ORDER_C ? 7 : 9); outer++)
            for (int inner = 0; inner < (order == MPI_ORDER_C ? 9 : 7); inner++) {
                int i = order == MPI_ORDER_C ? outer : inner;
                int j = order == MPI_ORDER_C ? inner : outer;
                int oi = i / 4;
                int oj = distrib1 == MPI_DISTRIBUTE_BLOCK ? j / b1 : (j / b1) % 3;
                if (oi == pi && oj == pj) {
                    ref[n++] = 4L * (order == MPI_ORDER_C ? i * 9 + j : i + j * 7);
                    owners[i * 9 + j]++;
                }
            }
        MPI_Aint lb, ext;
        MPI_Type_get_extent(t, &lb, &ext);
        CHECK(lb == 0 && ext == 4 * 63);
        CHECK(t->size == (size_t)n * 4);
        if (n > 0)
            MOVES(t, 1, ref, n, 4);
        envelope(t, 12, 0, 1, MPI_COMBINER_DARRAY);
        contents(t, 12,
                 (int[]){6, rank, 2, 7, 9, dist[0], dist[1], dargs[0], dargs[1], 2, 3, order}, 0,
                 NULL, 1, (MPI_Datatype[]){MPI_INT});
        MPI_Type_free(&t);
    }
    for (int i = 0; i < 63; i++)
        CHECK(owners[i] == 1);
}

static void test_darray_errors(void)
{
    int gs[] = {8}, dist[] = {MPI_DISTRIBUTE_BLOCK}, dargs[] = {2}, ps[] = {2};
    MPI_Datatype t;
    /* Blocks of 2 over 2 processes cannot hold 8 elements. */
    CHECK(MPI_Type_create_darray(2, 0, 1, gs, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &t) ==
          MPI_ERR_ARG);
    int ps3[] = {3};
    dargs[0] = MPI_DISTRIBUTE_DFLT_DARG;
    CHECK(MPI_Type_create_darray(2, 0, 1, gs, dist, dargs, ps3, MPI_ORDER_C, MPI_INT, &t) ==
          MPI_ERR_ARG);
    int none[] = {MPI_DISTRIBUTE_NONE}, one[] = {1};
    CHECK(MPI_Type_create_darray(1, 0, 1, gs, none, dargs, one, MPI_ORDER_C, MPI_INT, &t) ==
          MPI_SUCCESS);
    BOUNDS(t, 32, 0, 32, 0, 32);
    MPI_Type_free(&t);
}

static void test_elements(void)
{
    /* struct {int; double}: 2 basic elements in 12 bytes, extent 16. */
    int bl[] = {1, 1};
    MPI_Aint d[] = {0, 4};
    MPI_Datatype ty[] = {MPI_INT, MPI_DOUBLE}, t;
    MPI_Type_create_struct(2, bl, d, ty, &t);
    MPI_Type_commit(&t);
    MPI_Status st;
    int n;
    MPI_Count nx;
    struct {
        long long bytes;
        int elements, count;
    } cases[] = {{0, 0, 0},  {4, 1, MPI_UNDEFINED},
                 {12, 2, 1}, {16, 3, MPI_UNDEFINED},
                 {24, 4, 2}, {6, MPI_UNDEFINED, MPI_UNDEFINED}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        st.weft_count = cases[i].bytes;
        MPI_Get_elements(&st, t, &n);
        CHECK(n == cases[i].elements);
        MPI_Get_elements_x(&st, t, &nx);
        CHECK(nx == cases[i].elements);
        MPI_Get_count(&st, t, &n);
        CHECK(n == cases[i].count);
    }
    for (int e = 0; e <= 5; e++) {
        MPI_Status_set_elements(&st, t, e);
        MPI_Get_elements(&st, t, &n);
        CHECK(n == e);
    }
    MPI_Status_set_elements(&st, t, 3);
    CHECK(st.weft_count == 16);
    CHECK(weft__mpi_type_elements(t, 20) == 3);
    MPI_Type_free(&t);

    /* Pairs count as two basic elements. */
    st.weft_count = 16;
    MPI_Get_elements(&st, MPI_2INT, &n);
    CHECK(n == 4);
    MPI_Get_count(&st, MPI_2INT, &n);
    CHECK(n == 2);
    MPI_Status_set_elements(&st, MPI_DOUBLE_INT, 3);
    CHECK(st.weft_count == 20);
}

static void test_bottom(void)
{
    /* Absolute addresses from Get_address, used from MPI_BOTTOM. */
    static int x = 11;
    static double y = 2.5;
    MPI_Aint ax, ay;
    MPI_Get_address(&x, &ax);
    MPI_Get_address(&y, &ay);
    CHECK(MPI_Aint_diff(ay, ax) == (MPI_Aint)((char *)&y - (char *)&x));
    CHECK(MPI_Aint_add(ax, MPI_Aint_diff(ay, ax)) == ay);
    int bl[] = {1, 1};
    MPI_Aint d[] = {ax, ay};
    MPI_Datatype ty[] = {MPI_INT, MPI_DOUBLE}, t;
    MPI_Type_create_struct(2, bl, d, ty, &t);
    MPI_Type_commit(&t);
    CHECK(weft__mpi_check_buf(MPI_BOTTOM, 1, t) == MPI_SUCCESS);
    CHECK(weft__mpi_check_buf(MPI_BOTTOM, 1, MPI_INT) == MPI_ERR_BUFFER);
    CHECK(weft__mpi_check_buf(MPI_BOTTOM, 0, MPI_INT) == MPI_SUCCESS);
    unsigned char out[12];
    int pos = 0;
    CHECK(MPI_Pack(MPI_BOTTOM, 1, t, out, sizeof out, &pos, MPI_COMM_WORLD) == MPI_SUCCESS);
    int gx;
    double gy;
    memcpy(&gx, out, 4);
    memcpy(&gy, out + 4, 8);
    CHECK(gx == 11 && gy == 2.5);
    x = 0, y = 0;
    pos = 0;
    CHECK(MPI_Unpack(out, sizeof out, &pos, MPI_BOTTOM, 1, t, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(x == 11 && y == 2.5);
    MPI_Type_free(&t);
}

static void test_external32(void)
{
    struct {
        int i;
        double d;
        long double ld;
        wchar_t w;
        short s;
        char c;
    } v = {0x01020304, 1.0, 1.0L, 0x41, 0x0506, 'z'}, back;
    int bl[] = {1, 1, 1, 1, 1, 1};
    MPI_Aint d[6];
    MPI_Datatype ty[] = {MPI_INT, MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_WCHAR, MPI_SHORT, MPI_CHAR}, t;
    MPI_Get_address(&v.i, &d[0]);
    MPI_Get_address(&v.d, &d[1]);
    MPI_Get_address(&v.ld, &d[2]);
    MPI_Get_address(&v.w, &d[3]);
    MPI_Get_address(&v.s, &d[4]);
    MPI_Get_address(&v.c, &d[5]);
    for (int k = 5; k >= 0; k--)
        d[k] -= d[0];
    MPI_Type_create_struct(6, bl, d, ty, &t);
    MPI_Type_commit(&t);
    MPI_Aint size, pos = 0;
    /* MPI_WCHAR is 2 bytes in external32 (MPI 3.1 table 13.2). */
    CHECK(MPI_Pack_external_size("external32", 1, t, &size) == MPI_SUCCESS && size == 33);
    unsigned char out[64];
    CHECK(MPI_Pack_external("external32", &v, 1, t, out, sizeof out, &pos) == MPI_SUCCESS);
    CHECK(pos == 33);
    static const unsigned char want[33] = {0x01, 0x02, 0x03, 0x04,             /* int */
                                           0x3f, 0xf0, 0,    0,    0, 0, 0, 0, /* 1.0 */
                                           0x3f, 0xff, 0,    0,    0, 0, 0, 0, 0,
                                           0,    0,    0,    0,    0, 0, 0, /* 1.0L as binary128 */
                                           0,    0x41,                      /* wchar */
                                           0x05, 0x06,                      /* short */
                                           'z'};
    CHECK(memcmp(out, want, 33) == 0);
    memset(&back, 0, sizeof back);
    pos = 0;
    CHECK(MPI_Unpack_external("external32", out, 33, &pos, &back, 1, t) == MPI_SUCCESS);
    CHECK(pos == 33 && back.i == v.i && back.d == v.d && back.ld == v.ld && back.w == v.w &&
          back.s == v.s && back.c == v.c);
    pos = 1;
    CHECK(MPI_Pack_external("external32", &v, 1, t, out, 33, &pos) == MPI_ERR_TRUNCATE);
    pos = 0;
    CHECK(MPI_Pack_external("native", &v, 1, t, out, 33, &pos) == MPI_ERR_UNSUPPORTED_DATAREP);
    MPI_Type_free(&t);

    /* MPI_LONG and MPI_UNSIGNED_LONG are 4 bytes: a negative long comes back
     * sign-extended, an unsigned one zero-extended. */
    long l[2] = {-2, 0x01020304};
    unsigned long ul = 0xfffffffeul;
    CHECK(MPI_Pack_external_size("external32", 2, MPI_LONG, &size) == MPI_SUCCESS && size == 8);
    CHECK(MPI_Pack_external_size("external32", 3, MPI_UNSIGNED_LONG, &size) == MPI_SUCCESS &&
          size == 12);
    CHECK(MPI_Pack_external_size("external32", 1, MPI_LONG_INT, &size) == MPI_SUCCESS && size == 8);
    pos = 0;
    CHECK(MPI_Pack_external("external32", l, 2, MPI_LONG, out, sizeof out, &pos) == MPI_SUCCESS);
    CHECK(MPI_Pack_external("external32", &ul, 1, MPI_UNSIGNED_LONG, out, sizeof out, &pos) ==
          MPI_SUCCESS);
    static const unsigned char wl[12] = {0xff, 0xff, 0xff, 0xfe, 1,    2,
                                         3,    4,    0xff, 0xff, 0xff, 0xfe};
    CHECK(pos == 12 && memcmp(out, wl, 12) == 0);
    long lb[2] = {0, 0};
    unsigned long ulb = 0;
    pos = 0;
    CHECK(MPI_Unpack_external("external32", out, 12, &pos, lb, 2, MPI_LONG) == MPI_SUCCESS);
    CHECK(MPI_Unpack_external("external32", out, 12, &pos, &ulb, 1, MPI_UNSIGNED_LONG) ==
          MPI_SUCCESS);
    CHECK(pos == 12 && lb[0] == -2 && lb[1] == 0x01020304 && ulb == 0xfffffffeul);

    /* Complex: each part swapped on its own; pairs by member. */
    float _Complex z = __builtin_complex(1.0f, 2.0f);
    pos = 0;
    MPI_Pack_external("external32", &z, 1, MPI_C_FLOAT_COMPLEX, out, sizeof out, &pos);
    static const unsigned char wz[8] = {0x3f, 0x80, 0, 0, 0x40, 0, 0, 0};
    CHECK(pos == 8 && memcmp(out, wz, 8) == 0);
    struct {
        short v;
        int k;
    } p = {2, 0x0a0b0c0d};
    pos = 0;
    MPI_Pack_external("external32", &p, 1, MPI_SHORT_INT, out, sizeof out, &pos);
    static const unsigned char wp[6] = {0, 2, 0x0a, 0x0b, 0x0c, 0x0d};
    CHECK(pos == 6 && memcmp(out, wp, 6) == 0);
}

static void test_errors_and_refs(void)
{
    MPI_Datatype t, u;
    CHECK(MPI_Type_contiguous(-1, MPI_INT, &t) == MPI_ERR_COUNT);
    CHECK(MPI_Type_contiguous(1, MPI_DATATYPE_NULL, &t) == MPI_ERR_TYPE);
    CHECK(MPI_Type_contiguous(1, NULL, &t) == MPI_ERR_TYPE);
    CHECK(MPI_Type_vector(2, -1, 1, MPI_INT, &t) == MPI_ERR_ARG);
    CHECK(MPI_Type_indexed(1, NULL, NULL, MPI_INT, &t) == MPI_ERR_ARG);
    int bl[] = {1};
    MPI_Aint d[] = {0};
    MPI_Datatype ty[] = {MPI_DATATYPE_NULL};
    CHECK(MPI_Type_create_struct(1, bl, d, ty, &t) == MPI_ERR_TYPE);
    CHECK(MPI_Type_free(&(MPI_Datatype){MPI_INT}) == MPI_ERR_TYPE);
    CHECK(weft__mpi_check_type(MPI_DATATYPE_NULL) == MPI_ERR_TYPE);
    CHECK(weft__mpi_check_count(-1) == MPI_ERR_COUNT && weft__mpi_check_count(0) == 0);
    CHECK(weft__mpi_check_buf(NULL, 1, MPI_INT) == MPI_ERR_BUFFER);
    int x;
    CHECK(MPI_Type_size(MPI_DATATYPE_NULL, &x) == MPI_ERR_TYPE);

    /* Pathological sizes are refused, not crashed on. */
    CHECK(MPI_Type_create_hvector(2, 1, INTPTR_MAX, MPI_INT, &t) == MPI_ERR_INTERN);
    CHECK(MPI_Type_vector(1 << 20, 1, 2, MPI_INT, &t) == MPI_SUCCESS);
    CHECK(MPI_Type_vector(64, 1, 1, t, &u) == MPI_ERR_NO_MEM);
    CHECK(MPI_Type_contiguous(INT_MAX, t, &u) == MPI_ERR_NO_MEM);
    MPI_Type_free(&t);
    MPI_Type_contiguous(INT_MAX, MPI_DOUBLE, &t); /* big but one segment */
    CHECK(t->nsegs == 1 && t->size == (size_t)INT_MAX * 8);
    int size;
    MPI_Type_size(t, &size);
    CHECK(size == MPI_UNDEFINED);
    MPI_Type_free(&t);

    /* References: a pending user (retain) keeps a freed type alive. */
    MPI_Type_vector(2, 1, 2, MPI_INT, &t);
    MPI_Type_commit(&t);
    weft__mpi_type_retain(t);
    u = t;
    MPI_Type_free(&t);
    CHECK(u->magic == WEFT_MPI_MAGIC_TYPE && weft__mpi_check_type(u) == MPI_SUCCESS);
    long ref[] = {0, 8};
    MOVES(u, 2, ref, 2, 4);
    weft__mpi_type_release(u); /* gone: ASan would see a later use */
}

/* get_contents hands out new objects (MPI 3.1 §4.1.13): renaming and freeing
 * one leaves the user's child type, its name and its attributes alone. */
static int contents_deletes;
static int contents_delete_fn(MPI_Datatype t, int key, void *val, void *extra)
{
    contents_deletes++;
    return MPI_SUCCESS;
}

static void test_contents_new_objects(void)
{
    MPI_Datatype child, res, got;
    int key, flag = 0, x = 42;
    void *val = NULL;
    MPI_Type_contiguous(2, MPI_INT, &child);
    CHECK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, contents_delete_fn, &key, NULL) ==
          MPI_SUCCESS);
    CHECK(MPI_Type_set_attr(child, key, &x) == MPI_SUCCESS);
    MPI_Type_set_name(child, "child");
    MPI_Type_create_resized(child, 0, 100, &res);
    MPI_Aint a[2];
    CHECK(MPI_Type_get_contents(res, 0, 2, 1, NULL, a, &got) == MPI_SUCCESS);
    CHECK(got != child && got->size == child->size && got->lb == child->lb &&
          got->ub == child->ub && got->combiner == MPI_COMBINER_CONTIGUOUS);
    int ni, na, nd, comb;
    CHECK(MPI_Type_get_envelope(got, &ni, &na, &nd, &comb) == MPI_SUCCESS && ni == 1 && nd == 1);
    MPI_Type_set_name(got, "renamed-copy");
    CHECK(MPI_Type_free(&got) == MPI_SUCCESS);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Type_get_name(child, name, &len);
    CHECK(!strcmp(name, "child"));
    CHECK(MPI_Type_get_attr(child, key, &val, &flag) == MPI_SUCCESS && flag && val == &x);
    CHECK(contents_deletes == 0);
    MPI_Type_free(&res);
    MPI_Type_free(&child);
    CHECK(contents_deletes == 1);
    MPI_Type_free_keyval(&key);
}

int main(void)
{
    test_watchdog(60);
    /* Errors are returned to be checked. Before MPI_Init they go to MPI_COMM_SELF
     * (or the communicator named), whose handler cannot be set through the API
     * yet: set it in the objects. */
    MPI_COMM_SELF->errhandler = MPI_ERRORS_RETURN;
    MPI_COMM_WORLD->errhandler = MPI_ERRORS_RETURN;
    test_predefined();
    test_contiguous_vector();
    test_indexed_struct();
    test_subarray(MPI_ORDER_C);
    test_subarray(MPI_ORDER_FORTRAN);
    test_darray(MPI_ORDER_C, MPI_DISTRIBUTE_CYCLIC, 2);
    test_darray(MPI_ORDER_FORTRAN, MPI_DISTRIBUTE_CYCLIC, 2);
    test_darray(MPI_ORDER_C, MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_DFLT_DARG);
    test_darray(MPI_ORDER_C, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_DFLT_DARG);
    test_darray(MPI_ORDER_FORTRAN, MPI_DISTRIBUTE_BLOCK, 4);
    test_darray_errors();
    test_elements();
    test_bottom();
    test_external32();
    test_errors_and_refs();
    test_contents_new_objects();
    return test_summary("mpi_type");
}
