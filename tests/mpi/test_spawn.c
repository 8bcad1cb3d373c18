/* MPI_Comm_spawn and MPI_Comm_spawn_multiple: the parents (this program run
 * by mpirun) start 1 to 4 children (this program again, with "child"), and
 * the two jobs talk over the intercommunicator: point-to-point both ways,
 * a broadcast, an all-reduce and a barrier, MPI_Intercomm_merge, then
 * MPI_Comm_disconnect. spawn_multiple starts two programs at once (two
 * argument lists of this one), whose ranks see their MPI_APPNUM. */
#include <stdbool.h>

#include "mpitest.h"

#define TAG 7

/* What both sides do over the intercommunicator inter; parents says which
 * side this is. */
static void talk(MPI_Comm inter, bool parents);

/* The parents' end of a round: talk, then the children's failures. */
static void parents_talk(MPI_Comm inter)
{
    talk(inter, true);
    long none = 0, theirs = 0;
    MPI_MUST(MPI_Allreduce(&none, &theirs, 1, MPI_LONG, MPI_SUM, inter));
    CHECK(theirs == 0);
}

static void talk(MPI_Comm inter, bool parents)
{
    int rank, size, rsize, flag;
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_size(inter, &size);
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_test_inter(inter, &flag);
    CHECK(flag);
    /* Point-to-point: each parent sends to every child, which answers. */
    int buf[64];
    if (parents) {
        for (int c = 0; c < rsize; c++) {
            mt_fill(buf, 64, rank * 100 + c);
            MPI_MUST(MPI_Send(buf, 64, MPI_INT, c, TAG, inter));
        }
        for (int c = 0; c < rsize; c++) {
            MPI_Status st;
            MPI_MUST(MPI_Recv(buf, 64, MPI_INT, MPI_ANY_SOURCE, TAG + 1, inter, &st));
            CHECK(mt_verify(buf, 64, 1000 + st.MPI_SOURCE * 100 + rank));
        }
    } else {
        for (int p = 0; p < rsize; p++) {
            MPI_Status st;
            MPI_MUST(MPI_Recv(buf, 64, MPI_INT, MPI_ANY_SOURCE, TAG, inter, &st));
            CHECK(mt_verify(buf, 64, st.MPI_SOURCE * 100 + rank));
            mt_fill(buf, 64, 1000 + rank * 100 + st.MPI_SOURCE);
            MPI_MUST(MPI_Send(buf, 64, MPI_INT, st.MPI_SOURCE, TAG + 1, inter));
        }
    }
    /* A broadcast from parent 0 to the children. */
    int v = parents ? 4242 : 0;
    if (parents)
        MPI_MUST(MPI_Bcast(&v, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter));
    else
        MPI_MUST(MPI_Bcast(&v, 1, MPI_INT, 0, inter));
    CHECK(v == 4242);
    /* An all-reduce: each side gets the other side's sum. */
    int mine = parents ? 1 : 10, sum = 0;
    MPI_MUST(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter));
    CHECK(sum == rsize * (parents ? 10 : 1));
    MPI_MUST(MPI_Barrier(inter));
    /* Merge: parents low, children high. */
    MPI_Comm merged;
    MPI_MUST(MPI_Intercomm_merge(inter, parents ? 0 : 1, &merged));
    int mrank, msize;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    CHECK(msize == size + rsize);
    CHECK(mrank == (parents ? rank : rsize + rank));
    int total = 0;
    MPI_MUST(MPI_Allreduce(&mrank, &total, 1, MPI_INT, MPI_SUM, merged));
    CHECK(total == msize * (msize - 1) / 2);
    /* A ring over the merged communicator: every pair of neighbours, across
     * the two jobs too. */
    int left = (mrank + msize - 1) % msize, right = (mrank + 1) % msize, got = -1;
    MPI_MUST(MPI_Sendrecv(&mrank, 1, MPI_INT, right, TAG + 2, &got, 1, MPI_INT, left, TAG + 2,
                          merged, MPI_STATUS_IGNORE));
    CHECK(got == left);
    MPI_Comm dup;
    MPI_MUST(MPI_Comm_dup(inter, &dup));
    MPI_MUST(MPI_Barrier(dup));
    MPI_MUST(MPI_Comm_free(&dup));
    MPI_MUST(MPI_Comm_free(&merged));
}

static int child(int argc, char **argv)
{
    MPI_Comm par;
    MPI_Comm_get_parent(&par);
    CHECK(par != MPI_COMM_NULL);
    if (par == MPI_COMM_NULL)
        return mt_finish("test_spawn child");
    int *appnum, flag;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    CHECK(flag);
    if (argc > 2 && flag)
        CHECK(*appnum == atoi(argv[2]));
    talk(par, false);
    /* The children's failures count in the parents' result. */
    long f = mt_failed, theirs = 0;
    MPI_MUST(MPI_Allreduce(&f, &theirs, 1, MPI_LONG, MPI_SUM, par));
    MPI_MUST(MPI_Comm_disconnect(&par));
    MPI_Comm_get_parent(&par);
    CHECK(par == MPI_COMM_NULL);
    /* Not mt_finish: its lines would mix with the parents'. */
    MPI_Finalize();
    return mt_failed ? 1 : 0;
}

/* On several hosts (cluster spawn_h2x1): rank 0 spawns two children on the
 * host of the last rank (the "host" info key, through weftrun's --hosts and
 * the parents' remote shell). */
static int remote(const char *self)
{
    const char *node = getenv("WEFT_NODE_ID");
    char mine[256] = "", last[sizeof mine + 8] = "";
    snprintf(mine, sizeof mine, "%s", node ? node : "");
    if (mt_rank == mt_size - 1)
        snprintf(last, sizeof last, "%s:2", mine);
    MPI_MUST(MPI_Bcast(last, sizeof last, MPI_CHAR, mt_size - 1, MPI_COMM_WORLD));
    CHECK(node != NULL);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "host", last);
    char *cargv[] = {"child", NULL};
    MPI_Comm inter;
    MPI_MUST(MPI_Comm_spawn(self, cargv, 2, info, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE));
    MPI_Info_free(&info);
    parents_talk(inter);
    MPI_MUST(MPI_Comm_disconnect(&inter));
    return mt_finish("test_spawn remote");
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "child")) {
        MPI_Init(&argc, &argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
        MPI_Comm_size(MPI_COMM_WORLD, &mt_size);
        return child(argc, argv);
    }
    mt_init(&argc, &argv);
    if (argc > 1 && !strcmp(argv[1], "remote"))
        return remote(argv[0]);
    MPI_Comm par;
    MPI_Comm_get_parent(&par);
    CHECK(par == MPI_COMM_NULL);
    int *usize, flag;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag);
    CHECK(flag && *usize >= mt_size);
    char *cargv[] = {"child", NULL};
    for (int n = 1; n <= 4; n++) {
        MPI_Comm inter;
        int errs[4] = {-1, -1, -1, -1};
        MPI_MUST(MPI_Comm_spawn(argv[0], cargv, n, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs));
        for (int i = 0; i < n; i++)
            CHECK(errs[i] == MPI_SUCCESS);
        int rsize;
        MPI_Comm_remote_size(inter, &rsize);
        CHECK(rsize == n);
        parents_talk(inter);
        MPI_MUST(MPI_Comm_disconnect(&inter));
        CHECK(inter == MPI_COMM_NULL);
    }
    /* Two programs: 1 rank of the first, 2 of the second; each child checks
     * its MPI_APPNUM against the number it is given. */
    char *argv_a[] = {"child", "0", NULL}, *argv_b[] = {"child", "1", NULL};
    char *cmds[2] = {argv[0], argv[0]};
    char **argvs[2] = {argv_a, argv_b};
    int np[2] = {1, 2};
    MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
    MPI_Comm inter;
    MPI_MUST(MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, mt_size - 1, MPI_COMM_WORLD, &inter,
                                     MPI_ERRCODES_IGNORE));
    int rsize;
    MPI_Comm_remote_size(inter, &rsize);
    CHECK(rsize == 3);
    parents_talk(inter);
    MPI_MUST(MPI_Comm_disconnect(&inter));
    return mt_finish("test_spawn");
}
