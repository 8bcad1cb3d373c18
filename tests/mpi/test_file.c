/* MPI-IO (MPI 3.1 §13), every check of data byte for byte:
 *   - basic: explicit offsets per rank, the file's size, the count of a read;
 *   - views: a displacement and a strided filetype that interleaves the ranks'
 *     blocks, written collectively and read back whole through a contiguous
 *     view; the view, byte offsets and extents the file reports;
 *   - pointers: the individual file pointer (seek from the start, the current
 *     place and the end), reads that run past the end of the file;
 *   - noncontig: a strided memory datatype of doubles against a contiguous
 *     file region;
 *   - nonblocking: iwrite_at/iread_at, iwrite/iread, iwrite_all/iread_all;
 *   - split: the split collectives (begin/end);
 *   - shared: the shared file pointer (write_shared, seek_shared, ordered
 *     writes and reads, iwrite_shared/iread_shared);
 *   - misc: size, preallocation, sync, atomicity, amode, group, info, the
 *     Fortran handle;
 *   - comms: files on MPI_COMM_SELF and on a split communicator;
 *   - errors: the error classes of bad opens, deletes and accesses, file error
 *     handlers and MPI_FILE_NULL's handler as the default of new files;
 *   - modes: MPI_MODE_DELETE_ON_CLOSE and MPI_MODE_APPEND.
 * Files live in /tmp, named after rank 0's pid, and are all removed.
 *
 * Plain MPI 3.1: builds against any MPI with MPI-IO. */
#include <dirent.h>
#include <unistd.h>

#include "mpitest.h"

#define N   16 /* ints per rank in most files */
#define ISZ ((int)sizeof(int))
#define DSZ ((int)sizeof(double))

static int me, np;
static char base[256]; /* every file's name starts with this */
static int nfiles;

/* The name of a new file, the same on every rank of MPI_COMM_WORLD. */
static void new_name(char *name, size_t len, const char *what)
{
    snprintf(name, len, "%s_%d_%s", base, nfiles++, what);
}

/* Data written by one rank becomes visible to the others (the standard's
 * sync-barrier-sync, for files not in atomic mode). */
static void settle(MPI_File fh, MPI_Comm comm)
{
    MPI_MUST(MPI_File_sync(fh));
    MPI_MUST(MPI_Barrier(comm));
    MPI_MUST(MPI_File_sync(fh));
}

/* Remove a closed file of comm's ranks: its rank 0 deletes it. */
static void drop(const char *name, MPI_Comm comm)
{
    int r;
    MPI_MUST(MPI_Barrier(comm));
    MPI_MUST(MPI_Comm_rank(comm, &r));
    if (r == 0)
        MPI_MUST(MPI_File_delete(name, MPI_INFO_NULL));
    MPI_MUST(MPI_Barrier(comm));
}

static int count_of(MPI_Status *st, MPI_Datatype t)
{
    int n = -1;
    MPI_MUST(MPI_Get_count(st, t, &n));
    return n;
}

static MPI_Offset size_of(MPI_File fh)
{
    MPI_Offset s = -1;
    MPI_MUST(MPI_File_get_size(fh, &s));
    return s;
}

/* Explicit offsets: each rank writes its block and reads its neighbour's. */
static void basic(void)
{
    char name[300];
    new_name(name, sizeof name, "basic");
    MPI_File fh;
    MPI_MUST(
        MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CHECK(size_of(fh) == 0);
    /* Nobody writes before everybody has seen the empty file. */
    MPI_MUST(MPI_Barrier(MPI_COMM_WORLD));
    int buf[N], got[N];
    MPI_Status st;
    mt_fill(buf, N, me + 1);
    MPI_MUST(MPI_File_write_at(fh, (MPI_Offset)me * N * ISZ, buf, N, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == N);
    /* The rank's own data reads back at once. */
    memset(got, 0, sizeof got);
    MPI_MUST(MPI_File_read_at(fh, (MPI_Offset)me * N * ISZ, got, N, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == N);
    CHECK(mt_verify(got, N, me + 1));
    settle(fh, MPI_COMM_WORLD);
    CHECK(size_of(fh) == (MPI_Offset)np * N * ISZ);
    /* The next rank's block; then a piece from the middle of it. */
    int next = (me + 1) % np;
    memset(got, 0, sizeof got);
    MPI_MUST(MPI_File_read_at(fh, (MPI_Offset)next * N * ISZ, got, N, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == N);
    CHECK(mt_verify(got, N, next + 1));
    int part[4] = {0};
    MPI_MUST(MPI_File_read_at(fh, ((MPI_Offset)next * N + 5) * ISZ, part, 4, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == 4);
    int whole[N];
    mt_fill(whole, N, next + 1);
    CHECK(!memcmp(part, whole + 5, sizeof part));
    /* A status may be ignored. */
    MPI_MUST(MPI_File_read_at(fh, 0, got, 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(got[0] == 1 * 1000003);
    MPI_MUST(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL);
    drop(name, MPI_COMM_WORLD);
}

#define VB  4 /* ints in a block of the strided view */
#define VK  3 /* blocks per rank in one filetype */
#define HDR 64

/* Element j written by rank r through the strided view. */
static int vval(int r, int j)
{
    return r * 100000 + j + 1;
}

static void views(void)
{
    char name[300];
    new_name(name, sizeof name, "views");
    MPI_File fh;
    MPI_MUST(
        MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    /* VK blocks of VB ints, np blocks apart, the whole tile VK * np blocks
     * long: rank r's blocks sit at r, r + np, r + 2np... counted from HDR. */
    MPI_Datatype vec, ft;
    MPI_MUST(MPI_Type_vector(VK, VB, VB * np, MPI_INT, &vec));
    MPI_MUST(MPI_Type_create_resized(vec, 0, (MPI_Aint)VK * VB * np * ISZ, &ft));
    MPI_MUST(MPI_Type_commit(&ft));
    MPI_MUST(MPI_Type_free(&vec));
    MPI_Offset disp = HDR + (MPI_Offset)me * VB * ISZ;
    MPI_MUST(MPI_File_set_view(fh, disp, MPI_INT, ft, "native", MPI_INFO_NULL));

    /* Two tiles' worth per rank. */
    enum { M = 2 * VK * VB };
    int buf[M];
    for (int j = 0; j < M; j++)
        buf[j] = vval(me, j);
    MPI_Status st;
    MPI_MUST(MPI_File_write_all(fh, buf, M, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == M);
    MPI_Offset pos = -1;
    MPI_MUST(MPI_File_get_position(fh, &pos));
    CHECK(pos == M);

    /* What the file says of the view. */
    MPI_Offset d = -1;
    MPI_Datatype et, ft2;
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_MUST(MPI_File_get_view(fh, &d, &et, &ft2, rep));
    CHECK(d == disp);
    CHECK(!strcmp(rep, "native"));
    /* The etype, predefined, may come back as itself or as a new type with
     * its typemap, to be freed. */
    int ni, na, nd, comb, tsize = -1;
    MPI_MUST(MPI_Type_get_envelope(et, &ni, &na, &nd, &comb));
    if (comb == MPI_COMBINER_NAMED) {
        CHECK(et == MPI_INT);
    } else {
        MPI_MUST(MPI_Type_size(et, &tsize));
        CHECK(tsize == ISZ);
        MPI_MUST(MPI_Type_free(&et));
    }
    MPI_MUST(MPI_Type_get_envelope(ft2, &ni, &na, &nd, &comb));
    /* A new datatype with the filetype's typemap: how it was built (a
     * duplicate, or the same constructor again) is the implementation's. */
    CHECK(comb != MPI_COMBINER_NAMED);
    MPI_Aint lb = -1, ext = -1;
    MPI_MUST(MPI_Type_size(ft2, &tsize));
    MPI_MUST(MPI_Type_get_extent(ft2, &lb, &ext));
    CHECK(tsize == VK * VB * (int)sizeof(int));
    CHECK(lb == 0 && ext == (MPI_Aint)VK * VB * np * ISZ);
    if (comb != MPI_COMBINER_NAMED)
        MPI_MUST(MPI_Type_free(&ft2));

    /* Byte offsets of view positions: etype o lies in the rank's block o / VB,
     * which is block (o / VB) * np + me of the file. */
    int offs[] = {0, 1, VB - 1, VB, VB + 2, VK * VB, VK * VB + 3, M - 1, M + 5};
    for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++) {
        MPI_Offset o = offs[i], b = -1;
        MPI_MUST(MPI_File_get_byte_offset(fh, o, &b));
        MPI_Offset want = HDR + ((o / VB) * np + me) * VB * ISZ + (o % VB) * ISZ;
        CHECK(b == want);
    }
    MPI_Aint fext = -1;
    MPI_MUST(MPI_File_get_type_extent(fh, MPI_INT, &fext));
    CHECK(fext == ISZ);
    MPI_MUST(MPI_File_get_type_extent(fh, ft, &fext));
    CHECK(fext == (MPI_Aint)VK * VB * np * ISZ);
    MPI_MUST(MPI_File_get_type_extent(fh, MPI_DOUBLE, &fext));
    CHECK(fext == DSZ);

    /* The rank's own data read back through its view. */
    int got[M];
    memset(got, 0, sizeof got);
    MPI_MUST(MPI_File_read_at_all(fh, 0, got, M, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == M);
    CHECK(!memcmp(got, buf, sizeof got));
    settle(fh, MPI_COMM_WORLD);
    CHECK(size_of(fh) == HDR + (MPI_Offset)np * M * ISZ);
    /* Past the end of the file through the view: the rank's next block lies
     * beyond it, so a read of M + VB ints gets M, and one of 2 ints from
     * M - 1 gets 1 (the file may go on past a block, in other ranks' data).
     * The count is what was read (§13.4.1); MPICH 4.0.2 reports the count
     * asked for here, and fails these two checks. */
    int more[M + VB];
    memset(more, 0, sizeof more);
    MPI_MUST(MPI_File_read_at(fh, 0, more, M + VB, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == M);
    CHECK(!memcmp(more, buf, sizeof buf));
    MPI_MUST(MPI_File_read_at(fh, M - 1, more, 2, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == 1 && more[0] == buf[M - 1]);

    /* The whole file through a contiguous view from HDR: every rank sees the
     * blocks of all ranks, interleaved. */
    MPI_MUST(MPI_File_set_view(fh, HDR, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    MPI_MUST(MPI_File_get_position(fh, &pos));
    CHECK(pos == 0);
    int total = np * M;
    int *all = calloc((size_t)total, sizeof(int));
    MPI_MUST(MPI_File_read_all(fh, all, total, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == total);
    int bad = 0;
    for (int p = 0; p < total; p++) {
        int blk = p / VB, owner = blk % np, j = (blk / np) * VB + p % VB;
        bad += all[p] != vval(owner, j);
    }
    CHECK(bad == 0);
    /* The contiguous view: both types predefined. */
    MPI_MUST(MPI_File_get_view(fh, &d, &et, &ft2, rep));
    CHECK(d == HDR);
    MPI_Datatype both[2] = {et, ft2};
    for (int i = 0; i < 2; i++) {
        MPI_MUST(MPI_Type_get_envelope(both[i], &ni, &na, &nd, &comb));
        if (comb == MPI_COMBINER_NAMED) {
            CHECK(both[i] == MPI_INT);
        } else {
            MPI_MUST(MPI_Type_size(both[i], &tsize));
            CHECK(tsize == ISZ);
            MPI_MUST(MPI_Type_free(&both[i]));
        }
    }
    free(all);
    MPI_MUST(MPI_Type_free(&ft));
    MPI_MUST(MPI_File_close(&fh));
    drop(name, MPI_COMM_WORLD);
}

/* The individual file pointer, in ints (etype MPI_INT). */
static void pointers(void)
{
    char name[300];
    new_name(name, sizeof name, "pointers");
    MPI_File fh;
    MPI_MUST(
        MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_MUST(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    MPI_Offset pos = -1;
    MPI_MUST(MPI_File_get_position(fh, &pos));
    CHECK(pos == 0);
    int buf[N], got[N + 8];
    MPI_Status st;
    mt_fill(buf, N, me + 7);
    MPI_MUST(MPI_File_seek(fh, (MPI_Offset)me * N, MPI_SEEK_SET));
    MPI_MUST(MPI_File_get_position(fh, &pos));
    CHECK(pos == (MPI_Offset)me * N);
    /* Two writes, one after the other. */
    MPI_MUST(MPI_File_write(fh, buf, N / 2, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == N / 2);
    MPI_MUST(MPI_File_get_position(fh, &pos));
    CHECK(pos == (MPI_Offset)me * N + N / 2);
    MPI_MUST(MPI_File_write(fh, buf + N / 2, N / 2, MPI_INT, &st));
    MPI_MUST(MPI_File_get_position(fh, &pos));
    CHECK(pos == (MPI_Offset)(me + 1) * N);
    /* Back by N from here; forward by 3 from here. */
    MPI_MUST(MPI_File_seek(fh, -N, MPI_SEEK_CUR));
    MPI_MUST(MPI_File_get_position(fh, &pos));
    CHECK(pos == (MPI_Offset)me * N);
    MPI_MUST(MPI_File_seek(fh, 3, MPI_SEEK_CUR));
    memset(got, 0, sizeof got);
    MPI_MUST(MPI_File_read(fh, got, 5, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == 5);
    CHECK(!memcmp(got, buf + 3, 5 * ISZ));
    MPI_MUST(MPI_File_get_position(fh, &pos));
    CHECK(pos == (MPI_Offset)me * N + 8);
    settle(fh, MPI_COMM_WORLD);

    /* From the end: np * N ints in the file. Its size is settled (no rank
     * changes it from here on), and then a read moves the pointer by what it
     * read, not by what it asked for. */
    MPI_Offset end = (MPI_Offset)np * N;
    MPI_MUST(MPI_File_seek(fh, 0, MPI_SEEK_END));
    MPI_MUST(MPI_File_get_position(fh, &pos));
    CHECK(pos == end);
    got[0] = -5;
    MPI_MUST(MPI_File_read(fh, got, 4, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == 0); /* at the end: nothing */
    CHECK(got[0] == -5);
    MPI_MUST(MPI_File_get_position(fh, &pos));
    CHECK(pos == end);
    /* Two ints before the end, five asked for: two come, the last rank's. */
    MPI_MUST(MPI_File_seek(fh, -2, MPI_SEEK_END));
    MPI_MUST(MPI_File_get_position(fh, &pos));
    CHECK(pos == end - 2);
    for (int i = 0; i < N + 8; i++)
        got[i] = -1;
    MPI_MUST(MPI_File_read(fh, got, 5, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == 2);
    int last[N];
    mt_fill(last, N, np - 1 + 7);
    CHECK(got[0] == last[N - 2] && got[1] == last[N - 1] && got[2] == -1);
    MPI_MUST(MPI_File_get_position(fh, &pos));
    CHECK(pos == end);
    /* A whole neighbour's block and beyond, by the pointer from the start. */
    int next = (me + 1) % np;
    MPI_MUST(MPI_File_seek(fh, (MPI_Offset)next * N, MPI_SEEK_SET));
    MPI_MUST(MPI_File_read(fh, got, N + 8, MPI_INT, &st));
    int want_n = next == np - 1 ? N : N + 8;
    CHECK(count_of(&st, MPI_INT) == want_n);
    int nb[N];
    mt_fill(nb, N, next + 7);
    CHECK(!memcmp(got, nb, sizeof nb));
    /* Explicit offsets past the end read nothing and leave the pointer. */
    MPI_MUST(MPI_File_seek(fh, 1, MPI_SEEK_SET));
    MPI_MUST(MPI_File_read_at(fh, end + 10, got, 3, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == 0);
    MPI_MUST(MPI_File_get_position(fh, &pos));
    CHECK(pos == 1);
    /* A read in bytes cut short inside an int: MPI_Get_count cannot say. */
    MPI_MUST(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_MUST(MPI_File_read_at(fh, end * ISZ - 6, got, 2, MPI_INT, &st));
    int nbytes = -1, c = 0;
    MPI_MUST(MPI_Get_count(&st, MPI_BYTE, &nbytes));
    CHECK(nbytes == 6);
    MPI_MUST(MPI_Get_count(&st, MPI_INT, &c));
    CHECK(c == MPI_UNDEFINED);
    MPI_MUST(MPI_File_close(&fh));
    drop(name, MPI_COMM_WORLD);
}

/* Every third double of a buffer, to and from a contiguous file region. */
static void noncontig(void)
{
    enum { K = 8, STRIDE = 3 };
    char name[300];
    new_name(name, sizeof name, "noncontig");
    MPI_File fh;
    MPI_MUST(
        MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_MUST(MPI_File_set_view(fh, 0, MPI_DOUBLE, MPI_DOUBLE, "native", MPI_INFO_NULL));
    MPI_Datatype vec;
    MPI_MUST(MPI_Type_vector(K, 1, STRIDE, MPI_DOUBLE, &vec));
    MPI_MUST(MPI_Type_commit(&vec));
    double src[K * STRIDE];
    for (int i = 0; i < K * STRIDE; i++)
        src[i] = i % STRIDE ? -1.0 : me * 1000.0 + i / STRIDE + 0.25;
    MPI_Status st;
    MPI_MUST(MPI_File_write_at_all(fh, (MPI_Offset)me * K, src, 1, vec, &st));
    int n = -1;
    MPI_MUST(MPI_Get_count(&st, vec, &n));
    CHECK(n == 1);
    MPI_MUST(MPI_Get_elements(&st, vec, &n));
    CHECK(n == K);
    settle(fh, MPI_COMM_WORLD);
    CHECK(size_of(fh) == (MPI_Offset)np * K * DSZ);

    /* The neighbour's doubles, contiguous. */
    int next = (me + 1) % np;
    double got[K + 1];
    got[K] = 42.0;
    MPI_MUST(MPI_File_read_at(fh, (MPI_Offset)next * K, got, K, MPI_DOUBLE, &st));
    CHECK(count_of(&st, MPI_DOUBLE) == K);
    int bad = 0;
    for (int i = 0; i < K; i++)
        bad += got[i] != next * 1000.0 + i + 0.25;
    CHECK(bad == 0 && got[K] == 42.0);

    /* Back into the strided layout: the gaps are left alone. */
    double back[K * STRIDE];
    for (int i = 0; i < K * STRIDE; i++)
        back[i] = -2.0;
    MPI_MUST(MPI_File_read_at(fh, (MPI_Offset)next * K, back, 1, vec, &st));
    MPI_MUST(MPI_Get_count(&st, vec, &n));
    CHECK(n == 1);
    bad = 0;
    for (int i = 0; i < K * STRIDE; i++)
        bad += back[i] != (i % STRIDE ? -2.0 : next * 1000.0 + i / STRIDE + 0.25);
    CHECK(bad == 0);
    MPI_MUST(MPI_Type_free(&vec));
    MPI_MUST(MPI_File_close(&fh));
    drop(name, MPI_COMM_WORLD);
}

/* Non-blocking reads and writes, by explicit offset, by the individual
 * pointer, and collective. */
static void nonblocking(void)
{
    char name[300];
    new_name(name, sizeof name, "nonblocking");
    MPI_File fh;
    MPI_MUST(
        MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_MUST(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    /* Section s of the file holds np blocks of N ints, one per rank, each
     * filled with key 10 * s + rank + 1. */
    int a[N], b[N], c[N], d[N], ra[N], rb[N];
    mt_fill(a, N, 0 * 10 + me + 1);
    mt_fill(b, N, 1 * 10 + me + 1);
    mt_fill(c, N, 2 * 10 + me + 1);
    mt_fill(d, N, 3 * 10 + me + 1);
    MPI_Offset sec = (MPI_Offset)np * N;
    MPI_Request rq[2];
    MPI_Status st[2];
    MPI_MUST(MPI_File_iwrite_at(fh, (MPI_Offset)me * N, a, N, MPI_INT, &rq[0]));
    MPI_MUST(MPI_File_iwrite_at(fh, sec + (MPI_Offset)me * N, b, N, MPI_INT, &rq[1]));
    MPI_MUST(MPI_Waitall(2, rq, st));
    CHECK(count_of(&st[0], MPI_INT) == N && count_of(&st[1], MPI_INT) == N);
    CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL);
    memset(ra, 0, sizeof ra);
    memset(rb, 0, sizeof rb);
    MPI_MUST(MPI_File_iread_at(fh, sec + (MPI_Offset)me * N, rb, N, MPI_INT, &rq[0]));
    MPI_MUST(MPI_File_iread_at(fh, (MPI_Offset)me * N, ra, N, MPI_INT, &rq[1]));
    MPI_MUST(MPI_Waitall(2, rq, st));
    CHECK(count_of(&st[0], MPI_INT) == N && count_of(&st[1], MPI_INT) == N);
    CHECK(mt_verify(ra, N, me + 1) && mt_verify(rb, N, 10 + me + 1));

    /* By the individual pointer: it moves when the operation starts. */
    MPI_MUST(MPI_File_seek(fh, 2 * sec + (MPI_Offset)me * N, MPI_SEEK_SET));
    MPI_MUST(MPI_File_iwrite(fh, c, N, MPI_INT, &rq[0]));
    MPI_Offset pos = -1;
    MPI_MUST(MPI_File_get_position(fh, &pos));
    CHECK(pos == 2 * sec + (MPI_Offset)(me + 1) * N);
    MPI_MUST(MPI_Wait(&rq[0], &st[0]));
    CHECK(count_of(&st[0], MPI_INT) == N);
    MPI_MUST(MPI_File_seek(fh, -N, MPI_SEEK_CUR));
    memset(ra, 0, sizeof ra);
    MPI_MUST(MPI_File_iread(fh, ra, N, MPI_INT, &rq[0]));
    MPI_MUST(MPI_Wait(&rq[0], &st[0]));
    CHECK(count_of(&st[0], MPI_INT) == N);
    CHECK(mt_verify(ra, N, 20 + me + 1));

    /* Collective, through a view that starts at the rank's block of the
     * fourth section. */
    MPI_MUST(MPI_File_set_view(fh, (3 * sec + (MPI_Offset)me * N) * ISZ, MPI_INT, MPI_INT, "native",
                               MPI_INFO_NULL));
    MPI_MUST(MPI_File_iwrite_all(fh, d, N, MPI_INT, &rq[0]));
    MPI_MUST(MPI_Wait(&rq[0], &st[0]));
    CHECK(count_of(&st[0], MPI_INT) == N);
    MPI_MUST(MPI_File_get_position(fh, &pos));
    CHECK(pos == N);
    MPI_MUST(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    memset(ra, 0, sizeof ra);
    MPI_MUST(MPI_File_iread_all(fh, ra, N, MPI_INT, &rq[0]));
    MPI_MUST(MPI_Wait(&rq[0], &st[0]));
    CHECK(count_of(&st[0], MPI_INT) == N);
    CHECK(mt_verify(ra, N, 30 + me + 1));

    /* Every rank reads the next rank's block of each section, then the whole
     * file, and checks all blocks. */
    settle(fh, MPI_COMM_WORLD);
    MPI_MUST(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    int next = (me + 1) % np;
    for (int s = 0; s < 4; s++) {
        memset(ra, 0, sizeof ra);
        MPI_MUST(MPI_File_iread_at_all(fh, s * sec + (MPI_Offset)next * N, ra, N, MPI_INT, &rq[0]));
        MPI_MUST(MPI_Wait(&rq[0], &st[0]));
        CHECK(count_of(&st[0], MPI_INT) == N);
        CHECK(mt_verify(ra, N, 10 * s + next + 1));
    }
    int total = 4 * np * N;
    int *all = calloc((size_t)total, sizeof(int));
    MPI_MUST(MPI_File_iread_at(fh, 0, all, total, MPI_INT, &rq[0]));
    MPI_MUST(MPI_Wait(&rq[0], &st[0]));
    CHECK(count_of(&st[0], MPI_INT) == total);
    int bad = 0;
    for (int s = 0; s < 4; s++)
        for (int r = 0; r < np; r++)
            bad += !mt_verify(all + (s * np + r) * N, N, 10 * s + r + 1);
    CHECK(bad == 0);
    free(all);
    /* MPI_Test completes one too. */
    MPI_MUST(MPI_File_iread_at(fh, 0, ra, 1, MPI_INT, &rq[0]));
    int done = 0;
    while (!done)
        MPI_MUST(MPI_Test(&rq[0], &done, &st[0]));
    CHECK(count_of(&st[0], MPI_INT) == 1 && ra[0] == 1 * 1000003);
    MPI_MUST(MPI_File_close(&fh));
    drop(name, MPI_COMM_WORLD);
}

/* The split collectives. */
static void split(void)
{
    char name[300];
    new_name(name, sizeof name, "split");
    MPI_File fh;
    MPI_MUST(
        MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_MUST(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    int a[N], b[N], ra[N], rb[N];
    mt_fill(a, N, 40 + me);
    mt_fill(b, N, 50 + me);
    MPI_Status st;
    MPI_MUST(MPI_File_seek(fh, (MPI_Offset)me * N, MPI_SEEK_SET));
    MPI_MUST(MPI_File_write_all_begin(fh, a, N, MPI_INT));
    MPI_MUST(MPI_File_write_all_end(fh, a, &st));
    CHECK(count_of(&st, MPI_INT) == N);
    MPI_Offset pos = -1;
    MPI_MUST(MPI_File_get_position(fh, &pos));
    CHECK(pos == (MPI_Offset)(me + 1) * N);
    MPI_Offset sec = (MPI_Offset)np * N;
    MPI_MUST(MPI_File_write_at_all_begin(fh, sec + (MPI_Offset)me * N, b, N, MPI_INT));
    MPI_MUST(MPI_File_write_at_all_end(fh, b, &st));
    CHECK(count_of(&st, MPI_INT) == N);
    settle(fh, MPI_COMM_WORLD);
    CHECK(size_of(fh) == 2 * sec * ISZ);

    /* Read the other section's block of the next rank each way. */
    int next = (me + 1) % np;
    memset(ra, 0, sizeof ra);
    memset(rb, 0, sizeof rb);
    MPI_MUST(MPI_File_seek(fh, sec + (MPI_Offset)next * N, MPI_SEEK_SET));
    MPI_MUST(MPI_File_read_all_begin(fh, rb, N, MPI_INT));
    MPI_MUST(MPI_File_read_all_end(fh, rb, &st));
    CHECK(count_of(&st, MPI_INT) == N);
    CHECK(mt_verify(rb, N, 50 + next));
    MPI_MUST(MPI_File_read_at_all_begin(fh, (MPI_Offset)next * N, ra, N, MPI_INT));
    MPI_MUST(MPI_File_read_at_all_end(fh, ra, &st));
    CHECK(count_of(&st, MPI_INT) == N);
    CHECK(mt_verify(ra, N, 40 + next));
    /* The explicit-offset form left the pointer where the other put it. */
    MPI_MUST(MPI_File_get_position(fh, &pos));
    CHECK(pos == sec + (MPI_Offset)(next + 1) * N);
    MPI_MUST(MPI_File_close(&fh));
    drop(name, MPI_COMM_WORLD);
}

#define R 6 /* ints in a record: rank, tag, then a pattern */

static void record(int *rec, int tag)
{
    rec[0] = me;
    rec[1] = tag;
    mt_fill(rec + 2, R - 2, tag * 100 + me);
}

/* The rank that wrote rec with tag, or -1 if it is not a record of tag. */
static int record_rank(const int *rec, int tag)
{
    if (rec[1] != tag || rec[0] < 0 || rec[0] >= np)
        return -1;
    return mt_verify(rec + 2, R - 2, tag * 100 + rec[0]) ? rec[0] : -1;
}

/* recs holds np records of tag: one of each rank, in any order (ordered: in
 * rank order). */
static int one_each(const int *recs, int tag, int ordered)
{
    int *seen = calloc((size_t)np, sizeof(int)), ok = 1;
    for (int i = 0; i < np; i++) {
        int r = record_rank(recs + i * R, tag);
        if (r < 0 || seen[r] || (ordered && r != i))
            ok = 0;
        else
            seen[r] = 1;
    }
    free(seen);
    return ok;
}

/* The shared file pointer of fh is at want, for every rank. The barrier keeps
 * the pointer still until all have looked: a collective that moves it may do
 * so on some ranks before the others have entered it. */
static void shared_at(MPI_File fh, MPI_Offset want)
{
    MPI_Offset pos = -1;
    MPI_MUST(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == want);
    MPI_MUST(MPI_Barrier(MPI_COMM_WORLD));
}

static void shared(void)
{
    char name[300];
    new_name(name, sizeof name, "shared");
    MPI_File fh;
    MPI_MUST(
        MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_MUST(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    MPI_Offset pos = -1;
    shared_at(fh, 0);
    int rec[R], *recs = calloc((size_t)np * R, sizeof(int));
    MPI_Status st;
    MPI_Offset all = (MPI_Offset)np * R;

    /* Every rank appends one record through the shared pointer. */
    record(rec, 1);
    MPI_MUST(MPI_File_write_shared(fh, rec, R, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == R);
    settle(fh, MPI_COMM_WORLD);
    shared_at(fh, all);
    CHECK(size_of(fh) == all * ISZ);
    MPI_MUST(MPI_File_read_at(fh, 0, recs, np * R, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == np * R);
    CHECK(one_each(recs, 1, 0));
    /* The individual pointer did not move. */
    MPI_MUST(MPI_File_get_position(fh, &pos));
    CHECK(pos == 0);

    /* Ordered: over the same place again, in rank order. */
    MPI_MUST(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    shared_at(fh, 0);
    record(rec, 2);
    MPI_MUST(MPI_File_write_ordered(fh, rec, R, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == R);
    shared_at(fh, all);
    settle(fh, MPI_COMM_WORLD);
    memset(recs, 0, sizeof(int) * (size_t)np * R);
    MPI_MUST(MPI_File_read_at(fh, 0, recs, np * R, MPI_INT, &st));
    CHECK(one_each(recs, 2, 1));
    /* Read in order, each rank gets its own record. */
    MPI_MUST(MPI_File_seek_shared(fh, -all, MPI_SEEK_CUR));
    int got[R];
    memset(got, 0, sizeof got);
    MPI_MUST(MPI_File_read_ordered(fh, got, R, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == R);
    CHECK(!memcmp(got, rec, sizeof got));
    shared_at(fh, all);

    /* Non-blocking, from the end of the file. */
    MPI_MUST(MPI_File_seek_shared(fh, 0, MPI_SEEK_END));
    shared_at(fh, all);
    record(rec, 3);
    MPI_Request rq;
    MPI_MUST(MPI_File_iwrite_shared(fh, rec, R, MPI_INT, &rq));
    MPI_MUST(MPI_Wait(&rq, &st));
    CHECK(count_of(&st, MPI_INT) == R);
    settle(fh, MPI_COMM_WORLD);
    shared_at(fh, 2 * all);
    MPI_MUST(MPI_File_read_at(fh, all, recs, np * R, MPI_INT, &st));
    CHECK(one_each(recs, 3, 0));
    /* Each rank reads one record of the second half: between them, all. */
    MPI_MUST(MPI_File_seek_shared(fh, all, MPI_SEEK_SET));
    memset(got, 0, sizeof got);
    MPI_MUST(MPI_File_iread_shared(fh, got, R, MPI_INT, &rq));
    MPI_MUST(MPI_Wait(&rq, &st));
    CHECK(count_of(&st, MPI_INT) == R);
    MPI_MUST(MPI_Allgather(got, R, MPI_INT, recs, R, MPI_INT, MPI_COMM_WORLD));
    CHECK(one_each(recs, 3, 0));
    /* The shared pointer is at the end: one more read gives nothing. */
    shared_at(fh, 2 * all);
    MPI_MUST(MPI_File_read_shared(fh, got, R, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == 0);
    free(recs);
    MPI_MUST(MPI_File_close(&fh));
    drop(name, MPI_COMM_WORLD);
}

/* The size of fh, once a change to it (a write, as far as consistency goes)
 * has settled, is want for every rank; then settled again, so that no rank
 * changes it while another still looks. */
static void size_is(MPI_File fh, MPI_Offset want)
{
    settle(fh, MPI_COMM_WORLD);
    CHECK(size_of(fh) == want);
    settle(fh, MPI_COMM_WORLD);
}

static void misc(void)
{
    char name[300];
    new_name(name, sizeof name, "misc");
    MPI_Info info;
    MPI_MUST(MPI_Info_create(&info));
    MPI_MUST(MPI_Info_set(info, "access_style", "read_mostly"));
    MPI_MUST(MPI_Info_set(info, "org_weft_test_unknown", "ignored"));
    MPI_File fh;
    int amode = MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_UNIQUE_OPEN;
    MPI_MUST(MPI_File_open(MPI_COMM_WORLD, name, amode, info, &fh));
    MPI_MUST(MPI_Info_free(&info));
    int got_amode = -1;
    MPI_MUST(MPI_File_get_amode(fh, &got_amode));
    CHECK(got_amode == amode);

    /* The group is the communicator's. */
    MPI_Group g, wg;
    MPI_MUST(MPI_File_get_group(fh, &g));
    MPI_MUST(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    int cmp = -1;
    MPI_MUST(MPI_Group_compare(g, wg, &cmp));
    CHECK(cmp == MPI_IDENT);
    MPI_MUST(MPI_Group_free(&g));
    MPI_MUST(MPI_Group_free(&wg));

    /* Hints: get_info gives a new object each time (unknown keys may or may
     * not be kept, so only the handle is checked). */
    MPI_Info got1 = MPI_INFO_NULL, got2 = MPI_INFO_NULL;
    MPI_MUST(MPI_File_get_info(fh, &got1));
    CHECK(got1 != MPI_INFO_NULL);
    MPI_MUST(MPI_Info_create(&info));
    MPI_MUST(MPI_Info_set(info, "access_style", "random"));
    MPI_MUST(MPI_File_set_info(fh, info));
    MPI_MUST(MPI_Info_free(&info));
    MPI_MUST(MPI_File_get_info(fh, &got2));
    CHECK(got2 != MPI_INFO_NULL && got2 != got1);
    int nkeys = -1;
    MPI_MUST(MPI_Info_get_nkeys(got2, &nkeys));
    CHECK(nkeys >= 0);
    MPI_MUST(MPI_Info_free(&got1));
    MPI_MUST(MPI_Info_free(&got2));
    CHECK(got1 == MPI_INFO_NULL && got2 == MPI_INFO_NULL);

    /* The Fortran handle. */
    MPI_Fint f = MPI_File_c2f(fh);
    CHECK(MPI_File_f2c(f) == fh);
    CHECK(MPI_File_f2c(MPI_File_c2f(MPI_FILE_NULL)) == MPI_FILE_NULL);

    /* Size: extend, truncate, extend again; data before the cut stays. */
    int buf[N], got[N];
    mt_fill(buf, N, 60);
    if (me == 0)
        MPI_MUST(MPI_File_write_at(fh, 0, buf, N, MPI_INT, MPI_STATUS_IGNORE));
    settle(fh, MPI_COMM_WORLD);
    MPI_MUST(MPI_File_set_size(fh, 1000));
    size_is(fh, 1000);
    MPI_MUST(MPI_File_set_size(fh, 10 * ISZ));
    size_is(fh, 10 * ISZ);
    MPI_MUST(MPI_File_set_size(fh, 500));
    size_is(fh, 500);
    memset(got, 0, sizeof got);
    MPI_Status st;
    MPI_MUST(MPI_File_read_at(fh, 0, got, N, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == N);
    CHECK(!memcmp(got, buf, 10 * ISZ));
    /* Preallocation grows the file, never shrinks it. */
    MPI_MUST(MPI_File_preallocate(fh, 3000));
    size_is(fh, 3000);
    MPI_MUST(MPI_File_preallocate(fh, 100));
    size_is(fh, 3000);
    MPI_MUST(MPI_File_read_at(fh, 0, got, N, MPI_INT, &st));
    CHECK(!memcmp(got, buf, 10 * ISZ));
    settle(fh, MPI_COMM_WORLD);
    MPI_MUST(MPI_File_set_size(fh, 0));
    size_is(fh, 0);

    /* Atomic mode: a write is seen by the other ranks after a barrier, no
     * sync needed. */
    int flag = -1;
    MPI_MUST(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 0);
    MPI_MUST(MPI_File_set_atomicity(fh, 1));
    MPI_MUST(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 1);
    mt_fill(buf, N, 70 + me);
    MPI_MUST(MPI_File_write_at(fh, (MPI_Offset)me * N * ISZ, buf, N, MPI_INT, &st));
    MPI_MUST(MPI_Barrier(MPI_COMM_WORLD));
    int prev = (me + np - 1) % np;
    MPI_MUST(MPI_File_read_at(fh, (MPI_Offset)prev * N * ISZ, got, N, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == N);
    CHECK(mt_verify(got, N, 70 + prev));
    MPI_MUST(MPI_File_set_atomicity(fh, 0));
    MPI_MUST(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 0);
    MPI_MUST(MPI_File_sync(fh));
    MPI_MUST(MPI_File_close(&fh));
    drop(name, MPI_COMM_WORLD);
}

/* A file of each rank on MPI_COMM_SELF; a file of each half of the ranks. */
static void comms(void)
{
    char name[300], mine[340];
    new_name(name, sizeof name, "self");
    snprintf(mine, sizeof mine, "%s_rank%d", name, me);
    MPI_File fh;
    MPI_MUST(
        MPI_File_open(MPI_COMM_SELF, mine, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Group g;
    int n = -1;
    MPI_MUST(MPI_File_get_group(fh, &g));
    MPI_MUST(MPI_Group_size(g, &n));
    CHECK(n == 1);
    MPI_MUST(MPI_Group_free(&g));
    int buf[N], got[N];
    mt_fill(buf, N, 80 + me);
    MPI_Status st;
    /* Collectives on a one-rank file. */
    MPI_MUST(MPI_File_write_at_all(fh, 4, buf, N, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == N);
    MPI_MUST(MPI_File_write_shared(fh, buf, 2, MPI_INT, &st));
    CHECK(size_of(fh) == 4 + N * ISZ);
    MPI_MUST(MPI_File_read_at_all(fh, 4, got, N, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == N);
    /* The shared pointer wrote the first two ints over the start. */
    CHECK(!memcmp(got + 1, buf + 1, (N - 1) * ISZ) && got[0] == buf[1]);
    MPI_MUST(MPI_File_close(&fh));
    MPI_MUST(MPI_File_delete(mine, MPI_INFO_NULL));

    /* Even and odd ranks, each half its own file. */
    MPI_Comm half;
    int color = me % 2, hr, hn;
    MPI_MUST(MPI_Comm_split(MPI_COMM_WORLD, color, me, &half));
    MPI_MUST(MPI_Comm_rank(half, &hr));
    MPI_MUST(MPI_Comm_size(half, &hn));
    new_name(name, sizeof name, color ? "odd" : "even");
    MPI_MUST(MPI_File_open(half, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Group hg;
    MPI_MUST(MPI_File_get_group(fh, &g));
    MPI_MUST(MPI_Comm_group(half, &hg));
    int cmp = -1;
    MPI_MUST(MPI_Group_compare(g, hg, &cmp));
    CHECK(cmp == MPI_IDENT);
    MPI_MUST(MPI_Group_free(&g));
    MPI_MUST(MPI_Group_free(&hg));
    mt_fill(buf, N, 90 + me);
    MPI_MUST(MPI_File_write_at_all(fh, (MPI_Offset)hr * N * ISZ, buf, N, MPI_INT, &st));
    settle(fh, half);
    CHECK(size_of(fh) == (MPI_Offset)hn * N * ISZ);
    int *all = calloc((size_t)hn * N, sizeof(int));
    MPI_MUST(MPI_File_read_at_all(fh, 0, all, hn * N, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == hn * N);
    /* Half rank i is world rank 2i + color. */
    int bad = 0;
    for (int i = 0; i < hn; i++)
        bad += !mt_verify(all + i * N, N, 90 + 2 * i + color);
    CHECK(bad == 0);
    free(all);
    MPI_MUST(MPI_File_close(&fh));
    drop(name, half);
    MPI_MUST(MPI_Comm_free(&half));
}

static int handler_calls, handler_class;
static MPI_File handler_file;

static void file_handler(MPI_File *fh, int *code, ...)
{
    handler_calls++;
    handler_file = *fh;
    handler_class = mt_class(*code);
}

static void errors(void)
{
    char name[300], missing[300];
    new_name(name, sizeof name, "errors");
    new_name(missing, sizeof missing, "missing");
    MPI_File fh = MPI_FILE_NULL;

    /* Files start with MPI_FILE_NULL's handler, MPI_ERRORS_RETURN unless
     * changed. */
    MPI_Errhandler e;
    MPI_MUST(MPI_File_get_errhandler(MPI_FILE_NULL, &e));
    CHECK(e == MPI_ERRORS_RETURN);
    MPI_MUST(MPI_Errhandler_free(&e));

    CHECK(mt_class(MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDWR, MPI_INFO_NULL, &fh)) ==
          MPI_ERR_NO_SUCH_FILE);
    CHECK(mt_class(MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh)) ==
          MPI_ERR_NO_SUCH_FILE);
    /* Exactly one of RDONLY, RDWR, WRONLY; no CREATE or EXCL with RDONLY. */
    CHECK(mt_class(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY | MPI_MODE_CREATE,
                                 MPI_INFO_NULL, &fh)) == MPI_ERR_AMODE);
    CHECK(mt_class(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY | MPI_MODE_RDWR,
                                 MPI_INFO_NULL, &fh)) == MPI_ERR_AMODE);
    CHECK(mt_class(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE, MPI_INFO_NULL, &fh)) ==
          MPI_ERR_AMODE);
    CHECK(mt_class(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL,
                                 MPI_INFO_NULL, &fh)) == MPI_ERR_AMODE);
    CHECK(fh == MPI_FILE_NULL);

    /* EXCL: the first open creates the file, the second finds it there. */
    MPI_MUST(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY,
                           MPI_INFO_NULL, &fh));
    int buf[N];
    mt_fill(buf, N, 3);
    if (me == 0)
        MPI_MUST(MPI_File_write_at(fh, 0, buf, N, MPI_INT, MPI_STATUS_IGNORE));
    /* Reading a file opened write-only: refused as an access the file's mode
     * does not permit. */
    CHECK(mt_class(MPI_File_read_at(fh, 0, buf, 1, MPI_INT, MPI_STATUS_IGNORE)) == MPI_ERR_ACCESS);
    MPI_MUST(MPI_File_close(&fh));
    MPI_File fh2 = MPI_FILE_NULL;
    CHECK(mt_class(MPI_File_open(MPI_COMM_WORLD, name,
                                 MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR, MPI_INFO_NULL,
                                 &fh2)) == MPI_ERR_FILE_EXISTS);
    CHECK(fh2 == MPI_FILE_NULL);

    /* Writing a file opened read-only: MPI 3.1 names MPI_ERR_READ_ONLY ("read
     * only file or file system") and MPI_ERR_ACCESS ("permission denied");
     * implementations pick either for a read-only handle. */
    MPI_MUST(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    int c = mt_class(MPI_File_write_at(fh, 0, buf, 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(c == MPI_ERR_READ_ONLY || c == MPI_ERR_ACCESS);
    c = mt_class(MPI_File_write(fh, buf, 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(c == MPI_ERR_READ_ONLY || c == MPI_ERR_ACCESS);
    /* The data is still the one written. */
    int got[N];
    MPI_MUST(MPI_File_read_at(fh, 0, got, N, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(mt_verify(got, N, 3));

    /* A handler of the file's own: called with the handle, on this file only. */
    MPI_Errhandler fe;
    MPI_MUST(MPI_File_create_errhandler(file_handler, &fe));
    MPI_MUST(MPI_File_set_errhandler(fh, fe));
    MPI_MUST(MPI_File_get_errhandler(fh, &e));
    CHECK(e == fe);
    MPI_MUST(MPI_Errhandler_free(&e));
    /* Freed, it stays while the file holds it. */
    MPI_MUST(MPI_Errhandler_free(&fe));
    CHECK(fe == MPI_ERRHANDLER_NULL);
    c = mt_class(MPI_File_write_at(fh, 0, buf, 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(handler_calls == 1 && handler_file == fh);
    CHECK(handler_class == c && (c == MPI_ERR_READ_ONLY || c == MPI_ERR_ACCESS));
    MPI_MUST(MPI_File_call_errhandler(fh, MPI_ERR_OTHER));
    CHECK(handler_calls == 2 && handler_file == fh && handler_class == MPI_ERR_OTHER);
    /* Errors not on this file still return. */
    CHECK(mt_class(MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDWR, MPI_INFO_NULL, &fh2)) ==
          MPI_ERR_NO_SUCH_FILE);
    CHECK(handler_calls == 2);
    MPI_MUST(MPI_File_close(&fh));

    /* Deleting a file that is not there. */
    char gone[340];
    snprintf(gone, sizeof gone, "%s_rank%d", missing, me);
    CHECK(mt_class(MPI_File_delete(gone, MPI_INFO_NULL)) == MPI_ERR_NO_SUCH_FILE);

    /* A handle that is no file. */
    MPI_Offset sz;
    CHECK(mt_class(MPI_File_get_size(MPI_FILE_NULL, &sz)) == MPI_ERR_FILE);
    CHECK(mt_class(MPI_File_write_at(MPI_FILE_NULL, 0, buf, 1, MPI_INT, MPI_STATUS_IGNORE)) ==
          MPI_ERR_FILE);
    MPI_File nullfh = MPI_FILE_NULL;
    CHECK(mt_class(MPI_File_close(&nullfh)) == MPI_ERR_FILE);

    /* MPI_FILE_NULL's handler: the one of errors with no file (a failed open,
     * a failed delete), and the one a new file starts with. It is freed at
     * the end, once neither MPI_FILE_NULL nor the file holds it (MPICH 4.0.2
     * counts a handler a file took from MPI_FILE_NULL one reference short and
     * asserts on that free; weft must not). */
    handler_calls = 0;
    MPI_Errhandler dfe;
    MPI_MUST(MPI_File_create_errhandler(file_handler, &dfe));
    MPI_MUST(MPI_File_set_errhandler(MPI_FILE_NULL, dfe));
    MPI_MUST(MPI_File_get_errhandler(MPI_FILE_NULL, &e));
    CHECK(e == dfe);
    MPI_MUST(MPI_Errhandler_free(&e));
    CHECK(mt_class(MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDWR, MPI_INFO_NULL, &fh2)) ==
          MPI_ERR_NO_SUCH_FILE);
    CHECK(handler_calls == 1 && handler_file == MPI_FILE_NULL &&
          handler_class == MPI_ERR_NO_SUCH_FILE);
    CHECK(mt_class(MPI_File_delete(gone, MPI_INFO_NULL)) == MPI_ERR_NO_SUCH_FILE);
    CHECK(handler_calls == 2 && handler_file == MPI_FILE_NULL &&
          handler_class == MPI_ERR_NO_SUCH_FILE);
    MPI_MUST(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    MPI_MUST(MPI_File_get_errhandler(fh, &e));
    CHECK(e == dfe);
    MPI_MUST(MPI_Errhandler_free(&e));
    c = mt_class(MPI_File_write_at(fh, 0, buf, 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(handler_calls == 3 && handler_file == fh && handler_class == c);
    /* Changing MPI_FILE_NULL's handler leaves the open file's. */
    MPI_MUST(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    MPI_MUST(MPI_File_get_errhandler(fh, &e));
    CHECK(e == dfe);
    MPI_MUST(MPI_Errhandler_free(&e));
    MPI_MUST(MPI_File_close(&fh));
    MPI_MUST(MPI_File_get_errhandler(MPI_FILE_NULL, &e));
    CHECK(e == MPI_ERRORS_RETURN);
    MPI_MUST(MPI_Errhandler_free(&e));
    MPI_MUST(MPI_Errhandler_free(&dfe));
    CHECK(dfe == MPI_ERRHANDLER_NULL);
    CHECK(handler_calls == 3);
    drop(name, MPI_COMM_WORLD);
}

static void modes(void)
{
    char name[300];
    new_name(name, sizeof name, "delete_on_close");
    MPI_File fh;
    MPI_MUST(MPI_File_open(MPI_COMM_WORLD, name,
                           MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh));
    int buf[N], got[N];
    mt_fill(buf, N, 5 + me);
    MPI_Status st;
    MPI_MUST(MPI_File_write_at(fh, (MPI_Offset)me * N * ISZ, buf, N, MPI_INT, &st));
    MPI_MUST(MPI_File_read_at(fh, (MPI_Offset)me * N * ISZ, got, N, MPI_INT, &st));
    CHECK(mt_verify(got, N, 5 + me));
    MPI_MUST(MPI_File_close(&fh));
    MPI_MUST(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(access(name, F_OK) != 0);
    CHECK(mt_class(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh)) ==
          MPI_ERR_NO_SUCH_FILE);

    /* APPEND: both pointers start at the end (in bytes: the default view). */
    new_name(name, sizeof name, "append");
    MPI_MUST(
        MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    mt_fill(buf, N, 99);
    if (me == 0)
        MPI_MUST(MPI_File_write_at(fh, 0, buf, N, MPI_INT, &st));
    MPI_MUST(MPI_File_close(&fh));
    MPI_MUST(
        MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR | MPI_MODE_APPEND, MPI_INFO_NULL, &fh));
    MPI_Offset pos = -1, end = N * ISZ;
    MPI_MUST(MPI_File_get_position(fh, &pos));
    CHECK(pos == end);
    shared_at(fh, end);
    /* Each rank appends its block in rank order. */
    mt_fill(buf, N, 100 + me);
    MPI_MUST(MPI_File_write_ordered(fh, buf, N, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == N);
    /* And one int of its own at its individual pointer, past all of those. */
    MPI_MUST(MPI_File_seek(fh, (MPI_Offset)np * N * ISZ + me * ISZ, MPI_SEEK_CUR));
    MPI_MUST(MPI_File_write(fh, &me, 1, MPI_INT, &st));
    MPI_MUST(MPI_File_get_position(fh, &pos));
    CHECK(pos == end + (MPI_Offset)(np * N + me + 1) * ISZ);
    MPI_MUST(MPI_File_close(&fh));
    MPI_MUST(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    int total = (np + 1) * N + np;
    CHECK(size_of(fh) == (MPI_Offset)total * ISZ);
    int *all = calloc((size_t)total, sizeof(int));
    MPI_MUST(MPI_File_read_at_all(fh, 0, all, total, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == total);
    int bad = !mt_verify(all, N, 99);
    for (int r = 0; r < np; r++)
        bad += !mt_verify(all + (r + 1) * N, N, 100 + r) + (all[(np + 1) * N + r] != r);
    CHECK(bad == 0);
    free(all);
    MPI_MUST(MPI_File_close(&fh));
    drop(name, MPI_COMM_WORLD);
}

/* No file of this run is left in the directory, hidden ones (an
 * implementation's own, beside a file) included. */
static void leftovers(void)
{
    MPI_MUST(MPI_Barrier(MPI_COMM_WORLD));
    if (me != 0)
        return;
    const char *slash = strrchr(base, '/');
    char dir[256];
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - base), base);
    DIR *dp = opendir(dir);
    CHECK(dp != NULL);
    if (!dp)
        return;
    int left = 0;
    for (struct dirent *de; (de = readdir(dp));)
        if (strstr(de->d_name, slash + 1)) {
            fprintf(stderr, "[rank 0] left behind: %s/%s\n", dir, de->d_name);
            left++;
        }
    closedir(dp);
    CHECK(left == 0);
}

/* Data representations: external32 puts big-endian values in the file and
 * reads them back, in the standard's sizes (MPI_LONG in 4 bytes, pairs
 * without padding), which the view's positions follow. A filetype
 * with overlapping regions is refused on a file open for writing and taken
 * on one open read-only (§13.3). A registered representation's name is
 * taken once (§13.5.3). */
static int dummy_extent(MPI_Datatype t, MPI_Aint *extent, void *state)
{
    MPI_Aint lb;
    return MPI_Type_get_extent(t, &lb, extent);
}

static void datareps(void)
{
    char name[300];
    new_name(name, sizeof name, "external32");
    MPI_File fh;
    MPI_MUST(
        MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_MUST(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_Offset d;
    MPI_Datatype et, ft;
    MPI_MUST(MPI_File_get_view(fh, &d, &et, &ft, rep));
    CHECK(!strcmp(rep, "external32"));
    /* Each rank: 2 ints and 1 double at its own 16 bytes. */
    int iv[2] = {0x01020304 + me, -2};
    double dv = 1.5 + me;
    MPI_Status st;
    MPI_MUST(MPI_File_write_at(fh, (MPI_Offset)me * 16, iv, 2, MPI_INT, &st));
    MPI_MUST(MPI_File_write_at(fh, (MPI_Offset)me * 16 + 8, &dv, 1, MPI_DOUBLE, &st));
    CHECK(count_of(&st, MPI_DOUBLE) == 1);
    settle(fh, MPI_COMM_WORLD);
    int ib[2] = {0, 0};
    double db = 0;
    MPI_MUST(MPI_File_read_at(fh, (MPI_Offset)me * 16, ib, 2, MPI_INT, &st));
    MPI_MUST(MPI_File_read_at(fh, (MPI_Offset)me * 16 + 8, &db, 1, MPI_DOUBLE, &st));
    CHECK(ib[0] == iv[0] && ib[1] == iv[1] && db == dv);
    /* The bytes in the file, through a native view: big-endian. */
    MPI_MUST(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    unsigned char raw[16];
    MPI_MUST(MPI_File_read_at(fh, (MPI_Offset)me * 16, raw, 16, MPI_BYTE, &st));
    CHECK(raw[0] == 0x01 && raw[1] == 0x02 && raw[2] == 0x03 && raw[3] == 0x04 + me);
    CHECK(raw[4] == 0xff && raw[7] == 0xfe);
    unsigned char want[8];
    memcpy(want, &dv, 8);
    int big = 1;
    for (int i = 0; i < 8; i++)
        big &= raw[8 + i] == want[7 - i];
    CHECK(big);

    /* The file's own sizes (MPI 3.1 table 13.2): MPI_LONG takes 4 bytes, so
     * a view of longs places rank r's 3 longs at byte 12 * r, and
     * MPI_File_get_type_extent gives 4; the data read back is sign-extended. */
    MPI_MUST(MPI_File_set_view(fh, 0, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL));
    MPI_Aint fext = 0;
    MPI_MUST(MPI_File_get_type_extent(fh, MPI_LONG, &fext));
    CHECK(fext == 4);
    MPI_MUST(MPI_File_get_type_extent(fh, MPI_LONG_INT, &fext));
    CHECK(fext == 8);
    MPI_MUST(MPI_File_get_type_extent(fh, MPI_DOUBLE_INT, &fext));
    CHECK(fext == 12);
    long lv[3] = {-3 - me, 0x7fffffff, me};
    MPI_MUST(MPI_File_write_at(fh, (MPI_Offset)me * 3, lv, 3, MPI_LONG, &st));
    CHECK(count_of(&st, MPI_LONG) == 3);
    MPI_Offset bo = 0;
    MPI_MUST(MPI_File_get_byte_offset(fh, (MPI_Offset)me * 3, &bo));
    CHECK(bo == (MPI_Offset)me * 12);
    settle(fh, MPI_COMM_WORLD);
    long lb[3] = {0, 0, 0};
    MPI_MUST(MPI_File_read_at(fh, (MPI_Offset)me * 3, lb, 3, MPI_LONG, &st));
    CHECK(count_of(&st, MPI_LONG) == 3);
    CHECK(lb[0] == lv[0] && lb[1] == lv[1] && lb[2] == lv[2]);
    MPI_MUST(MPI_File_get_view(fh, &d, &et, &ft, rep));
    CHECK(et == MPI_LONG && ft == MPI_LONG); /* the types given, not the file's */
    MPI_MUST(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_MUST(MPI_File_read_at(fh, (MPI_Offset)me * 12, raw, 12, MPI_BYTE, &st));
    CHECK(raw[0] == 0xff && raw[3] == (unsigned char)(0xfd - me)); /* -3 - me, 4 bytes */
    CHECK(raw[4] == 0x7f && raw[7] == 0xff && raw[11] == me);
    settle(fh, MPI_COMM_WORLD);
    /* A pair type without its padding: each rank's 2 MPI_DOUBLE_INTs are 24
     * bytes of the file. */
    struct {
        double v;
        int k;
    } pv[2] = {{0.25 + me, 7}, {-1.0, -me}}, pb[2];
    MPI_MUST(MPI_File_set_view(fh, 0, MPI_DOUBLE_INT, MPI_DOUBLE_INT, "external32", MPI_INFO_NULL));
    MPI_MUST(MPI_File_write_at(fh, (MPI_Offset)me * 2, pv, 2, MPI_DOUBLE_INT, &st));
    CHECK(count_of(&st, MPI_DOUBLE_INT) == 2);
    MPI_MUST(MPI_File_get_byte_offset(fh, (MPI_Offset)me * 2, &bo));
    CHECK(bo == (MPI_Offset)me * 24);
    settle(fh, MPI_COMM_WORLD);
    memset(pb, 0, sizeof pb);
    MPI_MUST(MPI_File_read_at(fh, (MPI_Offset)me * 2, pb, 2, MPI_DOUBLE_INT, &st));
    CHECK(pb[0].v == pv[0].v && pb[0].k == 7 && pb[1].v == -1.0 && pb[1].k == -me);
    MPI_MUST(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));

    /* Overlapping regions: refused when writable, taken when read-only. */
    int blens[2] = {2, 2};
    MPI_Aint disps[2] = {0, ISZ};
    MPI_Datatype ov;
    MPI_MUST(MPI_Type_create_hindexed(2, blens, disps, MPI_INT, &ov));
    MPI_MUST(MPI_Type_commit(&ov));
    CHECK(MPI_File_set_view(fh, 0, MPI_INT, ov, "native", MPI_INFO_NULL) != MPI_SUCCESS);
    MPI_MUST(MPI_File_close(&fh));
    MPI_MUST(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    MPI_MUST(MPI_File_set_view(fh, 0, MPI_INT, ov, "native", MPI_INFO_NULL));
    int four[4] = {0, 0, 0, 0};
    MPI_MUST(MPI_File_read_at(fh, 0, four, 4, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == 4);
    /* Ints 0, 1, then 1, 2 of the file (rank 0's record, big-endian). */
    CHECK(four[1] == four[2]);
    MPI_MUST(MPI_File_close(&fh));
    MPI_MUST(MPI_Type_free(&ov));
    drop(name, MPI_COMM_WORLD);

    /* A new representation's name, registered once. */
    CHECK(MPI_Register_datarep("weft-test-datarep", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                               dummy_extent, NULL) == MPI_SUCCESS);
    CHECK(mt_class(MPI_Register_datarep("weft-test-datarep", MPI_CONVERSION_FN_NULL,
                                        MPI_CONVERSION_FN_NULL, dummy_extent, NULL)) ==
          MPI_ERR_DUP_DATAREP);
    CHECK(mt_class(MPI_Register_datarep("native", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                                        dummy_extent, NULL)) == MPI_ERR_DUP_DATAREP);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    me = mt_rank;
    np = mt_size;
    int pid = (int)getpid();
    MPI_MUST(MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD));
    snprintf(base, sizeof base, "/tmp/weft_test_file_%d", pid);
    basic();
    views();
    pointers();
    noncontig();
    nonblocking();
    split();
    shared();
    misc();
    comms();
    errors();
    modes();
    datareps();
    leftovers();
    return mt_finish("test_file");
}
