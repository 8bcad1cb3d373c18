/* Intercommunicators (MPI 3.1 §6.6): made from the two halves of the world,
 * point-to-point across, merge with each high/low order, dup, split and create
 * on an intercommunicator. Needs two ranks. */
#include "topo_check.h"

/* Every local rank sends its world rank to every remote rank (tag = its local
 * rank) and checks what each remote rank sent. */
static void all_pairs(MPI_Comm inter, MPI_Group remote_world_order)
{
    int lrank, rsize;
    MPI_Comm_rank(inter, &lrank);
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Request *r = malloc((size_t)rsize * sizeof *r);
    int *got = malloc((size_t)rsize * sizeof *got);
    for (int j = 0; j < rsize; j++)
        MUSTMPI(MPI_Isend(&t_rank, 1, MPI_INT, j, lrank, inter, &r[j]));
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    for (int j = 0; j < rsize; j++) {
        MPI_Status st;
        MUSTMPI(MPI_Recv(&got[j], 1, MPI_INT, MPI_ANY_SOURCE, j, inter, &st));
        CHECK(st.MPI_SOURCE == j && st.MPI_TAG == j);
        int w;
        MPI_Group_translate_ranks(remote_world_order, 1, &j, world, &w);
        CHECK(got[j] == w);
    }
    MUSTMPI(MPI_Waitall(rsize, r, MPI_STATUSES_IGNORE));
    MPI_Group_free(&world);
    free(r);
    free(got);
}

/* A ring over an intracommunicator: each receives its left neighbour's rank. */
static void ring(MPI_Comm c)
{
    int rank, size, got = -1;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    MUSTMPI(MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 7, &got, 1, MPI_INT,
                         (rank + size - 1) % size, 7, c, MPI_STATUS_IGNORE));
    CHECK(got == (rank + size - 1) % size);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    if (t_size < 2)
        t_skip("an intercommunicator needs two ranks");
    int n = t_size, half = n / 2;
    int color = t_rank < half ? 0 : 1;
    MPI_Comm local, inter;
    MUSTMPI(MPI_Comm_split(MPI_COMM_WORLD, color, t_rank, &local));
    MPI_Comm_set_errhandler(local, MPI_ERRORS_RETURN); /* errors are checked on it */
    int lsize, lrank;
    MPI_Comm_size(local, &lsize);
    MPI_Comm_rank(local, &lrank);
    int remote_leader = color == 0 ? half : 0; /* world rank of the other leader */
    MUSTMPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, remote_leader, 1234, &inter));

    int flag, rsize, size, rank;
    MUSTMPI(MPI_Comm_test_inter(inter, &flag));
    CHECK(flag);
    MUSTMPI(MPI_Comm_remote_size(inter, &rsize));
    CHECK(rsize == (color == 0 ? n - half : half));
    MUSTMPI(MPI_Comm_size(inter, &size));
    MUSTMPI(MPI_Comm_rank(inter, &rank));
    CHECK(size == lsize && rank == lrank);
    MPI_Group rg, lg;
    MUSTMPI(MPI_Comm_remote_group(inter, &rg));
    MUSTMPI(MPI_Comm_group(inter, &lg));
    int res;
    MPI_Group localg;
    MPI_Comm_group(local, &localg);
    MUSTMPI(MPI_Group_compare(lg, localg, &res));
    CHECK(res == MPI_IDENT);
    MPI_Group_free(&localg);

    all_pairs(inter, rg);

    /* Merge: the low group first; equal flags put the group of the lower
     * leader (group 0) first. */
    MPI_Comm merged;
    int other = color == 0 ? n - half : half;
    for (int variant = 0; variant < 3; variant++) {
        int high = variant == 0 ? color : variant == 1 ? !color : 0;
        MUSTMPI(MPI_Intercomm_merge(inter, high, &merged));
        MUSTMPI(MPI_Comm_size(merged, &size));
        MUSTMPI(MPI_Comm_rank(merged, &rank));
        CHECK(size == n);
        bool first = variant == 1 ? color == 1 : color == 0;
        CHECK(rank == (first ? lrank : other + lrank));
        MUSTMPI(MPI_Comm_test_inter(merged, &flag));
        CHECK(!flag);
        ring(merged);
        MUSTMPI(MPI_Comm_free(&merged));
    }

    /* Dup: same groups, its own traffic. */
    MPI_Comm dup;
    MUSTMPI(MPI_Comm_dup(inter, &dup));
    MUSTMPI(MPI_Comm_compare(inter, dup, &res));
    CHECK(res == MPI_CONGRUENT);
    MUSTMPI(MPI_Comm_test_inter(dup, &flag));
    CHECK(flag);
    if (lrank == 0) {
        /* Leaders: one message on each, received in the other order. */
        int a = 1, b = 2, x = 0, y = 0;
        MPI_Request r[2];
        MUSTMPI(MPI_Isend(&a, 1, MPI_INT, 0, 5, inter, &r[0]));
        MUSTMPI(MPI_Isend(&b, 1, MPI_INT, 0, 5, dup, &r[1]));
        MUSTMPI(MPI_Recv(&y, 1, MPI_INT, 0, 5, dup, MPI_STATUS_IGNORE));
        MUSTMPI(MPI_Recv(&x, 1, MPI_INT, 0, 5, inter, MPI_STATUS_IGNORE));
        MUSTMPI(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        CHECK(x == 1 && y == 2);
    }
    all_pairs(dup, rg);

    /* Split by local rank parity: colour c pairs the ranks of parity c. */
    MPI_Comm sub;
    MUSTMPI(MPI_Comm_split(inter, lrank % 2, -lrank, &sub));
    int my_parity_remote = (other + 1 - lrank % 2) / 2; /* remote ranks of my parity */
    if (my_parity_remote == 0) {
        CHECK(sub == MPI_COMM_NULL);
    } else {
        CHECK(sub != MPI_COMM_NULL);
        MUSTMPI(MPI_Comm_remote_size(sub, &rsize));
        CHECK(rsize == my_parity_remote);
        MUSTMPI(MPI_Comm_size(sub, &size));
        MUSTMPI(MPI_Comm_rank(sub, &rank));
        int mine = (lsize + 1 - lrank % 2) / 2;
        CHECK(size == mine);
        CHECK(rank == mine - 1 - lrank / 2); /* keys reverse the order */
        MPI_Group sg;
        MPI_Comm_remote_group(sub, &sg);
        all_pairs(sub, sg);
        MPI_Group_free(&sg);
        MUSTMPI(MPI_Comm_free(&sub));
    }

    /* Create: each side keeps its leader only. */
    MPI_Group leader;
    int zero = 0;
    MUSTMPI(MPI_Group_incl(lg, 1, &zero, &leader));
    MUSTMPI(MPI_Comm_create(inter, leader, &sub));
    if (lrank == 0) {
        CHECK(sub != MPI_COMM_NULL);
        MUSTMPI(MPI_Comm_remote_size(sub, &rsize));
        CHECK(rsize == 1);
        int v = t_rank, got = -1;
        MUSTMPI(MPI_Sendrecv(&v, 1, MPI_INT, 0, 3, &got, 1, MPI_INT, 0, 3, sub, MPI_STATUS_IGNORE));
        CHECK(got == remote_leader);
        MUSTMPI(MPI_Comm_free(&sub));
    } else {
        CHECK(sub == MPI_COMM_NULL);
    }
    MPI_Group_free(&leader);

    /* Errors. */
    CHECK_CLASS(MPI_Intercomm_merge(local, 0, &merged), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Comm_remote_size(local, &rsize), MPI_ERR_COMM);

    MPI_Group_free(&rg);
    MPI_Group_free(&lg);
    MUSTMPI(MPI_Comm_free(&dup));
    MUSTMPI(MPI_Comm_free(&inter));
    MUSTMPI(MPI_Comm_free(&local));
    return t_finish("mpi_intercomm");
}
