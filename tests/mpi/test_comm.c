/* Communicators: dup, split (with keys reordering ranks), create, create_group,
 * split_type, compare, free, names, info, attributes with copy and delete
 * callbacks, and traffic isolation between communicators. Point-to-point only,
 * so it checks communicators without relying on collectives. */
#include "mpitest.h"

static int copies, deletes;

static int copy_fn(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag)
{
    copies++;
    *(void **)out = (char *)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Comm c, int k, void *val, void *extra)
{
    deletes++;
    return MPI_SUCCESS;
}

/* A ring exchange on comm: each rank sends its rank, checks its left one's. */
static void ring(MPI_Comm comm, int tag)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size, got = -1;
    MPI_Status st;
    MPI_MUST(MPI_Sendrecv(&rank, 1, MPI_INT, right, tag, &got, 1, MPI_INT, left, tag, comm, &st));
    CHECK(got == left && st.MPI_SOURCE == left);
}

/* More communicators than there are context ids (4096), each freed while its
 * requests are pending: each id must come back once its last request
 * completes, or the creation of one runs out of ids. */
static void free_pending_many(void)
{
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    int bad = 0;
    for (int i = 0; i < 4200; i++) {
        MPI_Comm c;
        MPI_Request r[2];
        int in = -1;
        bad += MPI_Comm_dup(MPI_COMM_WORLD, &c) != MPI_SUCCESS;
        if (bad)
            break;
        bad += MPI_Irecv(&in, 1, MPI_INT, left, 3, c, &r[0]) != MPI_SUCCESS;
        bad += MPI_Isend(&mt_rank, 1, MPI_INT, right, 3, c, &r[1]) != MPI_SUCCESS;
        bad += MPI_Comm_free(&c) != MPI_SUCCESS;
        bad += MPI_Waitall(2, r, MPI_STATUSES_IGNORE) != MPI_SUCCESS || in != left;
    }
    CHECK(bad == 0);
}

/* MPI_Comm_free only marks a communicator for deallocation (§6.4.3): what is
 * pending on it (requests, persistent ones, a matched message, a non-blocking
 * collective) completes normally, and its context stays taken until then, so
 * a communicator made meanwhile never matches its traffic. */
static void free_pending(void)
{
    /* A reversed copy of the world: its ranks differ from the world's, so a
     * status translated through a freed rank table would show it. */
    int crank = mt_size - 1 - mt_rank;
    int cright = (crank + 1) % mt_size, cleft = (crank + mt_size - 1) % mt_size;
    MPI_Comm c, saved;
    MPI_Request r[2];
    MPI_Status st[2];
    int in = -1, out = crank;
    MPI_MUST(MPI_Comm_split(MPI_COMM_WORLD, 0, -mt_rank, &c));
    MPI_MUST(MPI_Irecv(&in, 1, MPI_INT, cleft, 8, c, &r[0]));
    MPI_MUST(MPI_Isend(&out, 1, MPI_INT, cright, 8, c, &r[1]));
    saved = c;
    MPI_MUST(MPI_Comm_free(&c));
    CHECK(c == MPI_COMM_NULL);
    /* The handle is dead even while the object lives on: a second free is an
     * error, not a second release. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(mt_class(MPI_Comm_free(&saved)) == MPI_ERR_COMM);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_MUST(MPI_Waitall(2, r, st));
    CHECK(in == cleft && st[0].MPI_SOURCE == cleft && st[0].MPI_TAG == 8);

    /* Persistent requests outlive their communicator's handle and start again. */
    MPI_MUST(MPI_Comm_split(MPI_COMM_WORLD, 0, -mt_rank, &c));
    MPI_MUST(MPI_Recv_init(&in, 1, MPI_INT, cleft, 9, c, &r[0]));
    MPI_MUST(MPI_Send_init(&out, 1, MPI_INT, cright, 9, c, &r[1]));
    MPI_MUST(MPI_Comm_free(&c));
    for (int i = 0; i < 3; i++) {
        in = -1;
        MPI_MUST(MPI_Startall(2, r));
        MPI_MUST(MPI_Waitall(2, r, st));
        CHECK(in == cleft && st[0].MPI_SOURCE == cleft);
    }
    MPI_MUST(MPI_Request_free(&r[0]));
    MPI_MUST(MPI_Request_free(&r[1]));

    /* A matched message received after its communicator was freed. */
    MPI_Message msg;
    MPI_MUST(MPI_Comm_split(MPI_COMM_WORLD, 0, -mt_rank, &c));
    MPI_MUST(MPI_Isend(&out, 1, MPI_INT, crank, 10, c, &r[1]));
    MPI_MUST(MPI_Mprobe(crank, 10, c, &msg, &st[0]));
    MPI_MUST(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
    MPI_MUST(MPI_Comm_free(&c));
    in = -1;
    MPI_MUST(MPI_Mrecv(&in, 1, MPI_INT, &msg, &st[0]));
    CHECK(in == crank && st[0].MPI_SOURCE == crank);

    /* A non-blocking collective on a freed communicator runs to its end. */
    int sum = 0;
    MPI_MUST(MPI_Comm_split(MPI_COMM_WORLD, 0, -mt_rank, &c));
    MPI_MUST(MPI_Iallreduce(&out, &sum, 1, MPI_INT, MPI_SUM, c, &r[0]));
    MPI_MUST(MPI_Comm_free(&c));
    MPI_MUST(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    CHECK(sum == mt_size * (mt_size - 1) / 2);

    /* A receive pending on a freed communicator keeps its context: the next
     * communicator made (which could take the freed one's context) does not
     * match its traffic. Exactly one message reaches each rank, on d. */
    MPI_Comm d;
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    int on_c = -1, on_d = -1, index = -1, cancelled = 0;
    MPI_MUST(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_MUST(MPI_Irecv(&on_c, 1, MPI_INT, MPI_ANY_SOURCE, 11, c, &r[0]));
    MPI_MUST(MPI_Comm_free(&c));
    MPI_MUST(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPI_MUST(MPI_Irecv(&on_d, 1, MPI_INT, MPI_ANY_SOURCE, 11, d, &r[1]));
    MPI_MUST(MPI_Send(&mt_rank, 1, MPI_INT, right, 11, d));
    MPI_MUST(MPI_Waitany(2, r, &index, &st[0]));
    CHECK(index == 1 && on_d == left && on_c == -1);
    MPI_MUST(MPI_Cancel(&r[index == 1 ? 0 : 1]));
    MPI_MUST(MPI_Wait(&r[index == 1 ? 0 : 1], &st[1]));
    MPI_MUST(MPI_Test_cancelled(&st[1], &cancelled));
    CHECK(cancelled);
    MPI_MUST(MPI_Comm_free(&d));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int result;

    /* dup: same group, new context; a message on one is never received on the
     * other, even with wildcards. */
    MPI_Comm dup;
    MPI_MUST(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_MUST(MPI_Comm_compare(MPI_COMM_WORLD, dup, &result));
    CHECK(result == MPI_CONGRUENT);
    MPI_MUST(MPI_Comm_compare(dup, dup, &result));
    CHECK(result == MPI_IDENT);
    int right = (mt_rank + 1) % mt_size;
    int a = 1, b = 2, ga = 0, gb = 0;
    MPI_Request r[2];
    MPI_MUST(MPI_Irecv(&gb, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &r[1]));
    MPI_MUST(MPI_Irecv(&ga, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r[0]));
    MPI_MUST(MPI_Send(&a, 1, MPI_INT, right, 5, MPI_COMM_WORLD));
    MPI_MUST(MPI_Send(&b, 1, MPI_INT, right, 5, dup));
    MPI_MUST(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    CHECK(ga == 1 && gb == 2);
    ring(dup, 1);

    /* Names. */
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_MUST(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(!strcmp(name, "MPI_COMM_WORLD"));
    MPI_MUST(MPI_Comm_set_name(dup, "my dup"));
    MPI_MUST(MPI_Comm_get_name(dup, name, &len));
    CHECK(!strcmp(name, "my dup") && len == 6);

    /* Attributes: copied by dup through the callback, deleted on free. */
    int key;
    MPI_MUST(MPI_Comm_create_keyval(copy_fn, delete_fn, &key, NULL));
    static char base[4];
    MPI_MUST(MPI_Comm_set_attr(dup, key, base));
    MPI_Comm dup2;
    MPI_MUST(MPI_Comm_dup(dup, &dup2));
    void *val;
    int flag;
    MPI_MUST(MPI_Comm_get_attr(dup2, key, &val, &flag));
    CHECK(flag && val == base + 1 && copies == 1);
    MPI_MUST(MPI_Comm_delete_attr(dup, key));
    CHECK(deletes == 1);
    MPI_MUST(MPI_Comm_get_attr(dup, key, &val, &flag));
    CHECK(!flag);
    MPI_MUST(MPI_Comm_free(&dup2));
    CHECK(deletes == 2 && dup2 == MPI_COMM_NULL);
    MPI_MUST(MPI_Comm_free_keyval(&key));
    CHECK(key == MPI_KEYVAL_INVALID);

    /* split: even and odd ranks, reversed order by key. */
    MPI_Comm half;
    MPI_MUST(MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, -mt_rank, &half));
    int hr, hs;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_size(half, &hs);
    CHECK(hs == (mt_size + 1 - mt_rank % 2) / 2);
    int expect_rank = 0;
    for (int r2 = mt_rank + 2; r2 < mt_size; r2 += 2)
        expect_rank++;
    CHECK(hr == expect_rank);
    ring(half, 2);
    MPI_MUST(MPI_Comm_compare(MPI_COMM_WORLD, half, &result));
    CHECK(mt_size == 1 ? result == MPI_SIMILAR || result == MPI_CONGRUENT : result == MPI_UNEQUAL);
    /* MPI_UNDEFINED colour gives MPI_COMM_NULL. */
    MPI_Comm none;
    MPI_MUST(MPI_Comm_split(MPI_COMM_WORLD, mt_rank == 0 ? MPI_UNDEFINED : 1, 0, &none));
    CHECK((mt_rank == 0) == (none == MPI_COMM_NULL));
    if (none != MPI_COMM_NULL) {
        ring(none, 3);
        MPI_MUST(MPI_Comm_free(&none));
    }

    /* create from a group (the first half of the world, reversed). */
    MPI_Group world_group, g;
    MPI_MUST(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    int n = (mt_size + 1) / 2, ranks[64];
    for (int i = 0; i < n; i++)
        ranks[i] = n - 1 - i;
    MPI_MUST(MPI_Group_incl(world_group, n, ranks, &g));
    MPI_Comm created;
    MPI_MUST(MPI_Comm_create(MPI_COMM_WORLD, g, &created));
    CHECK((mt_rank < n) == (created != MPI_COMM_NULL));
    if (created != MPI_COMM_NULL) {
        int cr;
        MPI_Comm_rank(created, &cr);
        CHECK(cr == n - 1 - mt_rank);
        ring(created, 4);
        MPI_MUST(MPI_Comm_free(&created));
    }
    /* create_group: only the members call it. */
    if (mt_rank < n) {
        MPI_Comm cg;
        MPI_MUST(MPI_Comm_create_group(MPI_COMM_WORLD, g, 77, &cg));
        ring(cg, 5);
        MPI_MUST(MPI_Comm_free(&cg));
    }
    MPI_MUST(MPI_Group_free(&g));
    MPI_MUST(MPI_Group_free(&world_group));

    /* split_type shared: every rank of this job runs on this machine. */
    MPI_Comm node;
    MPI_MUST(
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, mt_rank, MPI_INFO_NULL, &node));
    int ns;
    MPI_Comm_size(node, &ns);
    CHECK(ns == mt_size);
    ring(node, 6);
    MPI_MUST(MPI_Comm_free(&node));

    /* Info on a communicator. */
    MPI_Info info, used;
    MPI_MUST(MPI_Info_create(&info));
    MPI_MUST(MPI_Info_set(info, "weft_hint", "yes"));
    MPI_MUST(MPI_Comm_set_info(dup, info));
    MPI_MUST(MPI_Comm_get_info(dup, &used));
    char v[16];
    MPI_MUST(MPI_Info_get(used, "weft_hint", sizeof v - 1, v, &flag));
    CHECK(flag && !strcmp(v, "yes"));
    int nkeys;
    MPI_MUST(MPI_Info_get_nkeys(used, &nkeys));
    CHECK(nkeys == 1);
    MPI_MUST(MPI_Info_free(&used));
    MPI_MUST(MPI_Info_free(&info));

    /* Many communicators created and freed: context ids are recycled. */
    for (int i = 0; i < 300; i++) {
        MPI_Comm c;
        MPI_MUST(MPI_Comm_dup(half, &c));
        if (i % 50 == 0)
            ring(c, 7);
        MPI_MUST(MPI_Comm_free(&c));
    }
    MPI_MUST(MPI_Comm_free(&half));
    MPI_MUST(MPI_Comm_free(&dup));
    free_pending();
    free_pending_many();
    return mt_finish("comm");
}
