/* Collective writes of small interleaved pieces (MPI_File_write_all and
 * MPI_File_write_at_all through a strided view), the shape that two-phase
 * I/O serves, every byte of the file checked afterwards:
 *   - interleaved: blocks of 1, 3, 8, 64 and 700 bytes per rank in each tile
 *     of the view, one block of every tile left a hole that must keep the
 *     bytes that were there, a header before the view's displacement
 *     likewise; written in two calls through the individual pointer (which
 *     must move by what was written), then once more at an explicit offset
 *     past them; the views change on one open file, so buffers kept from one
 *     call serve the next at other sizes;
 *   - split: the split collective writes (write_all_begin/end and
 *     write_at_all_begin/end) through the same kind of view;
 *   - uneven: rank r writes r * 51 blocks of 5 bytes (rank 0 none, but takes
 *     part), a shape whose pieces straddle the edges between the ranks'
 *     parts of the file at 2 and at 4 ranks;
 *   - noncontig: every other int of memory into an interleaved int view;
 *   - sparse: blocks far apart (the independent path's shape), and large
 *     blocks;
 *   - external32: an interleaved view in "external32": the file holds
 *     big-endian ints, and reading through the view gives the values back;
 *   - subcomm: files on the even and the odd ranks at once.
 * Files live in /tmp, named after rank 0's pid, and are removed.
 *
 * Plain MPI 3.1: builds against any MPI with MPI-IO. */
#include <unistd.h>

#include "mpitest.h"

#define FILL   0x5a /* bytes that were in the file before a collective write */
#define HEADER 5    /* bytes before the view's displacement */

static int me, np;
static char base[256];
static int nfiles;

static void new_name(char *name, size_t len, const char *what)
{
    snprintf(name, len, "%s_%d_%s", base, nfiles++, what);
}

/* The byte at index i of the stream rank r writes. */
static char val(int r, long i)
{
    return (char)(r * 37 + i * 7 + 1);
}

/* Data written by one rank becomes visible to the others. */
static void settle(MPI_File fh, MPI_Comm comm)
{
    MPI_MUST(MPI_File_sync(fh));
    MPI_MUST(MPI_Barrier(comm));
    MPI_MUST(MPI_File_sync(fh));
}

/* A new file of every rank, named after what the case tests. */
static MPI_File open_new(const char *what, char *name, size_t len)
{
    MPI_File fh;
    new_name(name, len, what);
    MPI_MUST(
        MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    return fh;
}

/* Close a file of comm's ranks and remove it. */
static void close_drop(MPI_File *fh, const char *name, MPI_Comm comm)
{
    int r;
    MPI_MUST(MPI_File_close(fh));
    MPI_MUST(MPI_Barrier(comm));
    MPI_MUST(MPI_Comm_rank(comm, &r));
    if (r == 0)
        MPI_MUST(MPI_File_delete(name, MPI_INFO_NULL));
}

/* n bytes of this rank's stream, from its start. */
static char *stream(long n)
{
    char *b = malloc((size_t)n + 1);
    for (long i = 0; i < n; i++)
        b[i] = val(me, i);
    return b;
}

/* Rank 0 of comm fills the file's first len bytes with FILL. */
static void prefill(MPI_File fh, MPI_Comm comm, long len)
{
    int r;
    MPI_MUST(MPI_Comm_rank(comm, &r));
    if (r == 0) {
        char *b = malloc((size_t)len);
        memset(b, FILL, (size_t)len);
        MPI_MUST(MPI_File_write_at(fh, 0, b, (int)len, MPI_BYTE, MPI_STATUS_IGNORE));
        free(b);
    }
    settle(fh, comm);
}

/* The whole of a file as bytes (len of them expected), read by this rank on
 * its own through the default view; the caller frees it. */
static char *slurp(MPI_File fh, long len)
{
    char *b = malloc((size_t)len + 1);
    MPI_Status st;
    int n = -1;
    MPI_MUST(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_MUST(MPI_File_read_at(fh, 0, b, (int)len + 1, MPI_BYTE, &st));
    MPI_MUST(MPI_Get_count(&st, MPI_BYTE, &n));
    CHECK(n == len);
    return b;
}

/* The filetype of rank r's blocks of blk bytes in tiles of np + 1 blocks
 * (the last block of each tile belongs to nobody). */
static MPI_Datatype tile_type(int r, int blk, MPI_Datatype unit, int usize)
{
    MPI_Datatype t, tiled;
    int disp = r * blk;
    MPI_MUST(MPI_Type_create_indexed_block(1, blk, &disp, unit, &t));
    MPI_MUST(MPI_Type_create_resized(t, 0, (MPI_Aint)(np + 1) * blk * usize, &tiled));
    MPI_MUST(MPI_Type_commit(&tiled));
    MPI_MUST(MPI_Type_free(&t));
    return tiled;
}

/* Check a file of `tiles` tiles of np + 1 blocks of blk bytes after HEADER:
 * block r of tile k holds bytes `from + k * blk ...` of rank r's stream
 * where rank r wrote tiles [0, upto(r)), FILL elsewhere. */
static long check_tiles(const char *f, int blk, long tiles, const long *upto)
{
    long bad = 0;
    for (long i = 0; i < HEADER; i++)
        bad += f[i] != (char)FILL;
    for (long k = 0; k < tiles; k++) {
        const char *t = f + HEADER + k * (np + 1) * blk;
        for (int r = 0; r <= np; r++)
            for (int j = 0; j < blk; j++) {
                char want = r < np && k < upto[r] ? val(r, k * blk + j) : (char)FILL;
                bad += t[r * blk + j] != want;
            }
    }
    return bad;
}

/* Once the writes are in place for every rank, the whole file of len bytes
 * holds what check_tiles expects, where rank r wrote tiles [0, tiles_of(r))
 * with tiles_of(r) = per_rank * (r or 1 as `by_rank` says). */
static void check_file(MPI_File fh, long len, int blk, long tiles, long per_rank, int by_rank)
{
    settle(fh, MPI_COMM_WORLD);
    char *f = slurp(fh, len);
    long upto[64];
    for (int r = 0; r < np; r++)
        upto[r] = by_rank ? per_rank * r : per_rank;
    long bad = check_tiles(f, blk, tiles, upto);
    if (bad)
        fprintf(stderr, "[rank %d] blocks of %d: %ld bad bytes\n", me, blk, bad);
    CHECK(bad == 0);
    free(f);
}

/* Blocks of blk bytes, `tiles` of them per rank: two write_all calls through
 * the individual pointer, then write_at_all at an explicit offset past them. */
static void interleaved_one(MPI_File fh, int blk, long tiles)
{
    long len = HEADER + 2 * tiles * (np + 1) * blk;
    prefill(fh, MPI_COMM_WORLD, len);
    MPI_Datatype ft = tile_type(me, blk, MPI_BYTE, 1);
    MPI_MUST(MPI_File_set_view(fh, HEADER, MPI_BYTE, ft, "native", MPI_INFO_NULL));
    long n = tiles * blk;
    char *mine = stream(2 * n);
    long half = (n / blk / 2) * blk; /* whole blocks in the first call */
    MPI_Status st;
    MPI_MUST(MPI_File_write_all(fh, mine, (int)half, MPI_BYTE, &st));
    int got = -1;
    MPI_MUST(MPI_Get_count(&st, MPI_BYTE, &got));
    CHECK(got == half);
    MPI_Offset pos = -1;
    MPI_MUST(MPI_File_get_position(fh, &pos));
    CHECK(pos == half);
    MPI_MUST(MPI_File_write_all(fh, mine + half, (int)(n - half), MPI_BYTE, &st));
    MPI_MUST(MPI_Get_count(&st, MPI_BYTE, &got));
    CHECK(got == n - half);
    MPI_MUST(MPI_File_get_position(fh, &pos));
    CHECK(pos == n);
    MPI_MUST(MPI_File_write_at_all(fh, n, mine + n, (int)n, MPI_BYTE, &st));
    MPI_MUST(MPI_Get_count(&st, MPI_BYTE, &got));
    CHECK(got == n);
    MPI_MUST(MPI_File_get_position(fh, &pos));
    CHECK(pos == n); /* explicit offsets leave the pointer */
    check_file(fh, len, blk, 2 * tiles, 2 * tiles, 0);
    free(mine);
    MPI_MUST(MPI_Type_free(&ft));
    /* The next size starts on an empty file, once every rank has read. */
    MPI_MUST(MPI_Barrier(MPI_COMM_WORLD));
    MPI_MUST(MPI_File_set_size(fh, 0));
}

static void interleaved(void)
{
    char name[300];
    MPI_File fh = open_new("interleaved", name, sizeof name);
    interleaved_one(fh, 1, 3000);
    interleaved_one(fh, 3, 1001);
    interleaved_one(fh, 64, 100);
    interleaved_one(fh, 8, 4097);
    interleaved_one(fh, 700, 10);
    close_drop(&fh, name, MPI_COMM_WORLD);
}

/* The split collective writes (begin/end) through the same interleaving,
 * through the individual pointer and at an explicit offset. */
static void split(void)
{
    char name[300];
    MPI_File fh = open_new("split", name, sizeof name);
    const int blk = 3;
    const long tiles = 700, n = tiles * blk, len = HEADER + 2 * tiles * (np + 1) * blk;
    prefill(fh, MPI_COMM_WORLD, len);
    MPI_Datatype ft = tile_type(me, blk, MPI_BYTE, 1);
    MPI_MUST(MPI_File_set_view(fh, HEADER, MPI_BYTE, ft, "native", MPI_INFO_NULL));
    char *mine = stream(2 * n);
    MPI_Status st;
    int got = -1;
    MPI_MUST(MPI_File_write_all_begin(fh, mine, (int)n, MPI_BYTE));
    MPI_MUST(MPI_File_write_all_end(fh, mine, &st));
    MPI_MUST(MPI_Get_count(&st, MPI_BYTE, &got));
    CHECK(got == n);
    MPI_Offset pos = -1;
    MPI_MUST(MPI_File_get_position(fh, &pos));
    CHECK(pos == n);
    MPI_MUST(MPI_File_write_at_all_begin(fh, n, mine + n, (int)n, MPI_BYTE));
    MPI_MUST(MPI_File_write_at_all_end(fh, mine + n, &st));
    MPI_MUST(MPI_Get_count(&st, MPI_BYTE, &got));
    CHECK(got == n);
    check_file(fh, len, blk, 2 * tiles, 2 * tiles, 0);
    free(mine);
    MPI_MUST(MPI_Type_free(&ft));
    close_drop(&fh, name, MPI_COMM_WORLD);
}

/* Rank r writes r * 51 blocks of 5 bytes: some ranks' pieces fall in other
 * ranks' parts of the file, some straddle two parts, and rank 0 sends
 * nothing. */
static void uneven(void)
{
    char name[300];
    MPI_File fh = open_new("uneven", name, sizeof name);
    const int blk = 5;
    long tiles = 51L * (np - 1), len = HEADER + tiles * (np + 1) * blk;
    prefill(fh, MPI_COMM_WORLD, len);
    MPI_Datatype ft = tile_type(me, blk, MPI_BYTE, 1);
    MPI_MUST(MPI_File_set_view(fh, HEADER, MPI_BYTE, ft, "native", MPI_INFO_NULL));
    long n = 51L * me * blk;
    char *mine = stream(n);
    MPI_Status st;
    int got = -1;
    MPI_MUST(MPI_File_write_at_all(fh, 0, mine, (int)n, MPI_BYTE, &st));
    MPI_MUST(MPI_Get_count(&st, MPI_BYTE, &got));
    CHECK(got == n);
    check_file(fh, len, blk, tiles, 51, 1);
    free(mine);
    MPI_MUST(MPI_Type_free(&ft));
    close_drop(&fh, name, MPI_COMM_WORLD);
}

/* Every other int of memory into a view of one int per rank per tile. */
static void noncontig(void)
{
    char name[300];
    MPI_File fh = open_new("noncontig", name, sizeof name);
    const int count = 5000;
    MPI_Datatype ft, every_other;
    int disp = me;
    MPI_MUST(MPI_Type_create_indexed_block(1, 1, &disp, MPI_INT, &ft));
    MPI_Datatype tiled;
    MPI_MUST(MPI_Type_create_resized(ft, 0, (MPI_Aint)np * (MPI_Aint)sizeof(int), &tiled));
    MPI_MUST(MPI_Type_commit(&tiled));
    MPI_MUST(MPI_Type_vector(count, 1, 2, MPI_INT, &every_other));
    MPI_MUST(MPI_Type_commit(&every_other));
    MPI_MUST(MPI_File_set_view(fh, 0, MPI_INT, tiled, "native", MPI_INFO_NULL));
    int *mem = malloc(2 * count * sizeof *mem);
    for (int i = 0; i < count; i++) {
        mem[2 * i] = me * 1000003 + i;
        mem[2 * i + 1] = -1; /* must not reach the file */
    }
    MPI_Status st;
    int got = -1;
    MPI_MUST(MPI_File_write_all(fh, mem, 1, every_other, &st));
    MPI_MUST(MPI_Get_count(&st, MPI_INT, &got));
    CHECK(got == count);
    settle(fh, MPI_COMM_WORLD);
    int *f = (int *)slurp(fh, (long)count * np * (long)sizeof(int));
    long bad = 0;
    for (int i = 0; i < count; i++)
        for (int r = 0; r < np; r++)
            bad += f[i * np + r] != r * 1000003 + i;
    CHECK(bad == 0);
    free(f);
    free(mem);
    MPI_MUST(MPI_Type_free(&ft));
    MPI_MUST(MPI_Type_free(&tiled));
    MPI_MUST(MPI_Type_free(&every_other));
    close_drop(&fh, name, MPI_COMM_WORLD);
}

/* Shapes two-phase I/O leaves to the independent path: blocks of 8 bytes
 * 64 KiB apart, and blocks of 64 KiB. The data must be right either way. */
static void sparse(void)
{
    char name[300];
    MPI_File fh = open_new("sparse", name, sizeof name);
    const int shapes[2][3] = {{8, 65536, 16}, {65536, 65536, 4}}; /* block, gap, tiles */
    for (int s = 0; s < 2; s++) {
        int blk = shapes[s][0], gap = shapes[s][1], tiles = shapes[s][2];
        long stride = (long)np * blk + gap, len = tiles * stride;
        MPI_MUST(MPI_File_set_size(fh, 0)); /* after the last shape's barrier */
        MPI_Datatype t, ft;
        int disp = me * blk;
        MPI_MUST(MPI_Type_create_indexed_block(1, blk, &disp, MPI_BYTE, &t));
        MPI_MUST(MPI_Type_create_resized(t, 0, stride, &ft));
        MPI_MUST(MPI_Type_commit(&ft));
        MPI_MUST(MPI_File_set_view(fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL));
        long n = (long)tiles * blk;
        char *mine = stream(n);
        MPI_MUST(MPI_File_write_at_all(fh, 0, mine, (int)n, MPI_BYTE, MPI_STATUS_IGNORE));
        settle(fh, MPI_COMM_WORLD);
        char *f = slurp(fh, len - gap); /* the last gap is past the end */
        long bad = 0;
        for (int k = 0; k < tiles; k++)
            for (int r = 0; r < np; r++)
                for (int j = 0; j < blk; j++)
                    bad += f[k * stride + r * blk + j] != val(r, (long)k * blk + j);
        CHECK(bad == 0);
        free(f);
        free(mine);
        MPI_MUST(MPI_Type_free(&t));
        MPI_MUST(MPI_Type_free(&ft));
        MPI_MUST(MPI_Barrier(MPI_COMM_WORLD));
    }
    close_drop(&fh, name, MPI_COMM_WORLD);
}

/* The 4-byte big-endian values of an interleaved external32 file of `tiles`
 * tiles of np + 1 blocks of blk values, block r of tile k holding values
 * k * blk ... of rank r: how many are not want(r, i). */
static long check_be32(const unsigned char *f, long tiles, int blk, uint32_t (*want)(int, long))
{
    long bad = 0;
    for (long k = 0; k < tiles; k++)
        for (int r = 0; r < np; r++)
            for (int j = 0; j < blk; j++) {
                const unsigned char *b = f + ((k * (np + 1) + r) * blk + j) * 4;
                uint32_t v =
                    (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
                bad += v != want(r, k * blk + j);
            }
    return bad;
}

static uint32_t want_int(int r, long i)
{
    return (uint32_t)(r * 1000003 + i);
}

/* The longs written: alternately negative, so the 4 bytes carry the sign. */
static long long_value(int r, long i)
{
    return (i & 1 ? -1L : 1L) * (r * 1000003L + i);
}

static uint32_t want_long(int r, long i)
{
    return (uint32_t)long_value(r, i);
}

/* An interleaved view in "external32": big-endian ints in the file. */
static void external32(void)
{
    char name[300];
    MPI_File fh = open_new("external32", name, sizeof name);
    const int count = 3000, blk = 2;
    MPI_Datatype ft = tile_type(me, blk, MPI_INT, (int)sizeof(int));
    MPI_MUST(MPI_File_set_view(fh, 0, MPI_INT, ft, "external32", MPI_INFO_NULL));
    int *mine = malloc(count * sizeof *mine), *back = calloc(count, sizeof *back);
    for (int i = 0; i < count; i++)
        mine[i] = me * 1000003 + i;
    MPI_MUST(MPI_File_write_all(fh, mine, count, MPI_INT, MPI_STATUS_IGNORE));
    settle(fh, MPI_COMM_WORLD);
    MPI_MUST(MPI_File_read_at_all(fh, 0, back, count, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(mt_verify(back, count, me));
    long tiles = count / blk, len = tiles * (np + 1) * blk * (long)sizeof(int);
    unsigned char *f = (unsigned char *)slurp(fh, len - blk * (long)sizeof(int));
    CHECK(check_be32(f, tiles, blk, want_int) == 0);
    free(f);
    free(mine);
    free(back);
    MPI_MUST(MPI_Type_free(&ft));
    close_drop(&fh, name, MPI_COMM_WORLD);
}

/* The same with MPI_LONG, 4 bytes in external32: the filetype's resized
 * extent is given in the file's bytes (§13.5.1), the collective write packs
 * 8-byte longs into 4-byte images, and the read widens them back. */
static void external32_long(void)
{
    char name[300];
    MPI_File fh = open_new("external32l", name, sizeof name);
    const int count = 3000, blk = 2;
    MPI_Datatype ft = tile_type(me, blk, MPI_LONG, 4);
    MPI_MUST(MPI_File_set_view(fh, 0, MPI_LONG, ft, "external32", MPI_INFO_NULL));
    long *mine = malloc(count * sizeof *mine), *back = calloc(count, sizeof *back);
    for (int i = 0; i < count; i++)
        mine[i] = long_value(me, i);
    MPI_Status st;
    MPI_MUST(MPI_File_write_all(fh, mine, count, MPI_LONG, &st));
    int got = 0;
    MPI_MUST(MPI_Get_count(&st, MPI_LONG, &got));
    CHECK(got == count);
    settle(fh, MPI_COMM_WORLD);
    MPI_MUST(MPI_File_read_at_all(fh, 0, back, count, MPI_LONG, MPI_STATUS_IGNORE));
    long wrong = 0;
    for (int i = 0; i < count; i++)
        wrong += back[i] != mine[i];
    CHECK(wrong == 0);
    long tiles = count / blk, len = tiles * (np + 1) * blk * 4L;
    unsigned char *f = (unsigned char *)slurp(fh, len - blk * 4L);
    CHECK(check_be32(f, tiles, blk, want_long) == 0);
    free(f);
    free(mine);
    free(back);
    MPI_MUST(MPI_Type_free(&ft));
    close_drop(&fh, name, MPI_COMM_WORLD);
}

/* Two files at once, one on the even ranks and one on the odd ranks, each
 * written collectively by its own ranks. */
static void subcomm(void)
{
    MPI_Comm half;
    MPI_MUST(MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half));
    int hr, hn;
    MPI_MUST(MPI_Comm_rank(half, &hr));
    MPI_MUST(MPI_Comm_size(half, &hn));
    char name[300];
    new_name(name, sizeof name, "subcomm");
    snprintf(name + strlen(name), sizeof name - strlen(name), "_%d", me % 2);
    MPI_File fh;
    MPI_MUST(MPI_File_open(half, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    const int count = 4000;
    MPI_Datatype t, ft;
    int disp = hr;
    MPI_MUST(MPI_Type_create_indexed_block(1, 1, &disp, MPI_SHORT, &t));
    MPI_MUST(MPI_Type_create_resized(t, 0, (MPI_Aint)hn * (MPI_Aint)sizeof(short), &ft));
    MPI_MUST(MPI_Type_commit(&ft));
    MPI_MUST(MPI_File_set_view(fh, 0, MPI_SHORT, ft, "native", MPI_INFO_NULL));
    short *mine = malloc(count * sizeof *mine);
    for (int i = 0; i < count; i++)
        mine[i] = (short)(me * 331 + i);
    MPI_MUST(MPI_File_write_all(fh, mine, count, MPI_SHORT, MPI_STATUS_IGNORE));
    settle(fh, half);
    short *f = (short *)slurp(fh, (long)count * hn * (long)sizeof(short));
    long bad = 0;
    for (int i = 0; i < count; i++)
        for (int r = 0; r < hn; r++) /* rank r of half is world rank 2r + me % 2 */
            bad += f[i * hn + r] != (short)((2 * r + me % 2) * 331 + i);
    CHECK(bad == 0);
    free(f);
    free(mine);
    MPI_MUST(MPI_Type_free(&t));
    MPI_MUST(MPI_Type_free(&ft));
    MPI_MUST(MPI_File_close(&fh));
    MPI_MUST(MPI_Barrier(half));
    if (hr == 0)
        MPI_MUST(MPI_File_delete(name, MPI_INFO_NULL));
    MPI_MUST(MPI_Comm_free(&half));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    me = mt_rank;
    np = mt_size;
    if (np > 64) {
        if (me == 0)
            printf("test_file_coll: at most 64 ranks\n");
        MPI_Finalize();
        return 77;
    }
    int pid = (int)getpid();
    MPI_MUST(MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD));
    snprintf(base, sizeof base, "/tmp/weft_test_file_coll_%d", pid);
    interleaved();
    split();
    uneven();
    noncontig();
    sparse();
    external32();
    external32_long();
    subcomm();
    return mt_finish("test_file_coll");
}
