/* MPI-IO edge cases, each rank on a file of its own (MPI_COMM_SELF):
 *   - overlap: views whose tiles overlap, read from a file open read-only
 *     (MPI 3.1 §13.3 allows them there): the pieces come back in the view's
 *     order although the view goes back in the file, through the small-piece
 *     read path;
 *   - overlap_writable: the same kind of view on a file open for writing is
 *     refused with MPI_ERR_TYPE (MPICH says MPI_ERR_IO);
 *   - atomic_threads: atomic mode with two threads of one process writing
 *     the same strided range at once through one handle: each round's file
 *     holds one thread's data whole, never a mix (§13.6.1; under
 *     MPI_THREAD_MULTIPLE the threads' calls happen in some order).
 * Plain MPI 3.1: builds against any MPI with MPI-IO. MPICH 4.0.2 reads the
 * 20-byte case of the 8-byte tiles wrong, and Open MPI 4.1.4 that one and
 * the 16-byte case of the 102-byte tiles (short counts and wrong bytes): the
 * expected bytes follow the view's type map, tile after tile (§13.3). */
#include <pthread.h>
#include <unistd.h>

#include "mpitest.h"

static char base[256];

/* A file of n bytes, byte i holding i mod 128, opened read-only. */
static MPI_File pattern_file(const char *name, int n)
{
    MPI_File fh;
    unsigned char *b = malloc((size_t)n);
    for (int i = 0; i < n; i++)
        b[i] = (unsigned char)(i & 0x7f);
    MPI_MUST(
        MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    MPI_MUST(MPI_File_write_at(fh, 0, b, n, MPI_BYTE, MPI_STATUS_IGNORE));
    MPI_MUST(MPI_File_close(&fh));
    free(b);
    MPI_MUST(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh));
    return fh;
}

/* Read `count` bytes at 0 through blocks of len[i] bytes at disp[i] in tiles
 * of `extent` bytes, and compare with the file offsets the view names. */
static void overlap_case(int nblocks, const int *len, const MPI_Aint *disp, MPI_Aint extent,
                         int count)
{
    char name[300];
    snprintf(name, sizeof name, "%s_overlap", base);
    MPI_File fh = pattern_file(name, 8192);
    MPI_Datatype t, ft;
    MPI_MUST(MPI_Type_create_hindexed(nblocks, len, disp, MPI_BYTE, &t));
    MPI_MUST(MPI_Type_create_resized(t, 0, extent, &ft));
    MPI_MUST(MPI_Type_commit(&ft));
    MPI_MUST(MPI_File_set_view(fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL));
    unsigned char *got = calloc((size_t)count, 1);
    MPI_Status st;
    int n = -1;
    MPI_MUST(MPI_File_read_at(fh, 0, got, count, MPI_BYTE, &st));
    MPI_MUST(MPI_Get_count(&st, MPI_BYTE, &n));
    CHECK(n == count);
    /* The file offsets of the view's data bytes, in order. */
    long bad = 0, k = 0;
    for (long tile = 0; k < count; tile++)
        for (int b = 0; b < nblocks && k < count; b++)
            for (int j = 0; j < len[b] && k < count; j++, k++)
                bad += got[k] != (unsigned char)((tile * extent + disp[b] + j) & 0x7f);
    CHECK(bad == 0);
    free(got);
    MPI_MUST(MPI_Type_free(&t));
    MPI_MUST(MPI_Type_free(&ft));
    MPI_MUST(MPI_File_close(&fh));
}

static void overlap(void)
{
    /* Tile 1 starts inside tile 0's second block. */
    const int len_a[] = {4, 8};
    const MPI_Aint disp_a[] = {0, 100};
    overlap_case(2, len_a, disp_a, 102, 16);
    overlap_case(2, len_a, disp_a, 102, 600);
    /* Tiles 8 bytes apart, each with a block 100 bytes on: the view goes
     * back at every tile. */
    const int len_b[] = {4, 4};
    const MPI_Aint disp_b[] = {0, 100};
    overlap_case(2, len_b, disp_b, 8, 20);
    overlap_case(2, len_b, disp_b, 8, 2000);
}

/* The same kind of view on a file open for writing is refused: its tiles
 * overlap (§13.3: no overlapping regions in a writable file's filetype). */
static void overlap_writable(void)
{
    char name[300];
    snprintf(name, sizeof name, "%s_overlap_rw", base);
    MPI_File fh;
    MPI_MUST(MPI_File_open(MPI_COMM_SELF, name,
                           MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh));
    const int len[] = {4, 8};
    const MPI_Aint disp[] = {0, 100};
    MPI_Datatype t, ft;
    MPI_MUST(MPI_Type_create_hindexed(2, len, disp, MPI_BYTE, &t));
    MPI_MUST(MPI_Type_create_resized(t, 0, 102, &ft));
    MPI_MUST(MPI_Type_commit(&ft));
    CHECK(mt_class(MPI_File_set_view(fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL)) ==
          MPI_ERR_TYPE);
    /* With room for its data in each tile it is fine. */
    MPI_Datatype wide;
    MPI_MUST(MPI_Type_create_resized(t, 0, 108, &wide));
    MPI_MUST(MPI_Type_commit(&wide));
    CHECK(MPI_File_set_view(fh, 0, MPI_BYTE, wide, "native", MPI_INFO_NULL) == MPI_SUCCESS);
    MPI_MUST(MPI_Type_free(&t));
    MPI_MUST(MPI_Type_free(&ft));
    MPI_MUST(MPI_Type_free(&wide));
    MPI_MUST(MPI_File_close(&fh));
}

#define AN 512 /* bytes each thread writes, one every other byte of the file */

static MPI_File atomic_fh;
static char atomic_data[2][AN];

static void *atomic_writer(void *arg)
{
    int k = (int)(long)arg;
    for (int i = 0; i < 10; i++)
        MPI_MUST(MPI_File_write_at(atomic_fh, 0, atomic_data[k], AN, MPI_CHAR, MPI_STATUS_IGNORE));
    return NULL;
}

static void atomic_threads(int provided)
{
    if (provided < MPI_THREAD_MULTIPLE)
        return;
    char name[300];
    snprintf(name, sizeof name, "%s_atomic", base);
    MPI_MUST(MPI_File_open(MPI_COMM_SELF, name,
                           MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &atomic_fh));
    MPI_Datatype ft;
    MPI_MUST(MPI_Type_vector(AN, 1, 2, MPI_CHAR, &ft)); /* one write per byte */
    MPI_MUST(MPI_Type_commit(&ft));
    MPI_MUST(MPI_File_set_view(atomic_fh, 0, MPI_CHAR, ft, "native", MPI_INFO_NULL));
    MPI_MUST(MPI_File_set_atomicity(atomic_fh, 1));
    memset(atomic_data[0], 'A', AN);
    memset(atomic_data[1], 'B', AN);
    int mixed = 0;
    for (int round = 0; round < 10; round++) {
        pthread_t t[2];
        for (long k = 0; k < 2; k++)
            CHECK(pthread_create(&t[k], NULL, atomic_writer, (void *)k) == 0);
        for (int k = 0; k < 2; k++)
            pthread_join(t[k], NULL);
        char r[AN];
        MPI_MUST(MPI_File_read_at(atomic_fh, 0, r, AN, MPI_CHAR, MPI_STATUS_IGNORE));
        int a = 0, b = 0;
        for (int i = 0; i < AN; i++) {
            a += r[i] == 'A';
            b += r[i] == 'B';
        }
        CHECK(a + b == AN);
        mixed += a && b;
    }
    CHECK(mixed == 0);
    MPI_MUST(MPI_Type_free(&ft));
    MPI_MUST(MPI_File_close(&atomic_fh));
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mt_size);
    snprintf(base, sizeof base, "/tmp/weft_test_file_edge_%d", (int)getpid());
    overlap();
    overlap_writable();
    atomic_threads(provided);
    return mt_finish("test_file_edge");
}
