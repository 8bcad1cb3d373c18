/* MPI_Dims_create on large and awkward sizes: the answer comes without a
 * search over every number (a program may ask for thousands of grids), is the
 * most balanced grid, and
 * breaks ties between equally balanced grids the way MPICH does, so that a
 * program sees the same grid under either library. */
#include "mpitest.h"

static void expect(int nnodes, int ndims, const int *want)
{
    int d[16] = {0};
    MPI_MUST(MPI_Dims_create(nnodes, ndims, d));
    int same = 1;
    for (int i = 0; i < ndims; i++)
        same = same && d[i] == want[i];
    CHECK(same);
    if (!same) {
        fprintf(stderr, "Dims_create(%d, %d):", nnodes, ndims);
        for (int i = 0; i < ndims; i++)
            fprintf(stderr, " %d (want %d)", d[i], want[i]);
        fprintf(stderr, "\n");
    }
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);

    expect(72, 2, (const int[]){9, 8});
    expect(364500, 2, (const int[]){675, 540});
    /* Equal spread: the larger smallest factor, then the more balanced rest. */
    expect(5040, 3, (const int[]){21, 16, 15});
    expect(10800, 3, (const int[]){27, 20, 20});
    expect(5616, 4, (const int[]){13, 9, 8, 6});
    /* Fixed entries stay; the rest is factored. */
    int fixed[3] = {0, 7, 0};
    MPI_MUST(MPI_Dims_create(5040, 3, fixed));
    CHECK(fixed[1] == 7 && fixed[0] * fixed[2] == 720 && fixed[0] >= fixed[2]);

    /* Many large sizes in up to 12 dimensions, as a program that tries grids
     * (or a test of them) asks. A search over every number up to the size
     * takes minutes for these, so the test's timeout catches that; the time
     * itself is not checked (a loaded machine is slow). */
    for (int m = 360000; m < 360400; m++)
        for (int nd = 1; nd <= 12; nd++) {
            int d[12] = {0};
            MPI_MUST(MPI_Dims_create(m, nd, d));
            long p = 1;
            int ordered = 1;
            for (int i = 0; i < nd; i++) {
                p *= d[i];
                ordered = ordered && (i == 0 || d[i] <= d[i - 1]);
            }
            CHECK(p == m && ordered);
        }
    return mt_finish("test_dims");
}
