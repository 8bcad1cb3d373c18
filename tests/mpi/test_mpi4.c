/* What weft has of MPI 4: MPI_Isendrecv and MPI_Isendrecv_replace (one
 * request over a send and a receive), MPI 4.1's status accessors,
 * MPI_Info_get_string, MPI_Info_create_env (before MPI_Init too) and the
 * Fortran status constants. Ring exchanges of every size class (eager and
 * rendezvous), non-contiguous types, wildcards, MPI_PROC_NULL, completion
 * through Wait, Test loops and Waitall mixed with plain requests, cancel,
 * MPI_Request_free on an active one, and truncation. Runs on any number of
 * ranks (alone, a rank is its own neighbour). */
#include "mpitest.h"

#define BIG (1 << 18) /* ints: 1 MiB, a rendezvous on every driver */

static int right, left;

/* The receive's source, tag and count in the status. */
static void check_status(const MPI_Status *st, int src, int tag, int count, MPI_Datatype t)
{
    int n = -1;
    MPI_Get_count(st, t, &n);
    CHECK(st->MPI_SOURCE == src);
    CHECK(st->MPI_TAG == tag);
    CHECK(n == count);
}

static void ring(int n, int tag)
{
    int *out = malloc(sizeof(int) * (size_t)(n ? n : 1));
    int *in = calloc((size_t)(n ? n : 1), sizeof(int));
    mt_fill(out, n, mt_rank + tag);
    MPI_Request r;
    MPI_Status st;
    MPI_MUST(
        MPI_Isendrecv(out, n, MPI_INT, right, tag, in, n, MPI_INT, left, tag, MPI_COMM_WORLD, &r));
    MPI_MUST(MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL);
    check_status(&st, left, tag, n, MPI_INT);
    CHECK(mt_verify(in, n, left + tag));

    /* _replace: the buffer goes round the ring in place, completed by a Test loop. */
    MPI_MUST(MPI_Isendrecv_replace(out, n, MPI_INT, right, tag + 1, MPI_ANY_SOURCE, MPI_ANY_TAG,
                                   MPI_COMM_WORLD, &r));
    int flag = 0;
    long tests = 0;
    while (!flag) {
        MPI_MUST(MPI_Test(&r, &flag, &st));
        tests++;
    }
    CHECK(r == MPI_REQUEST_NULL && tests >= 1);
    check_status(&st, left, tag + 1, n, MPI_INT);
    CHECK(mt_verify(out, n, left + tag));
    free(out);
    free(in);
}

/* A vector type on the sending side, contiguous on the receiving side, and
 * the other way round for _replace. */
static void noncontiguous(void)
{
    enum { N = 4096, STRIDE = 3 };
    int *grid = malloc(sizeof(int) * N * STRIDE);
    int *flat = malloc(sizeof(int) * N);
    for (int i = 0; i < N * STRIDE; i++)
        grid[i] = i % STRIDE == 0 ? mt_rank * 100000 + i / STRIDE : -1;
    MPI_Datatype col;
    MPI_MUST(MPI_Type_vector(N, 1, STRIDE, MPI_INT, &col));
    MPI_MUST(MPI_Type_commit(&col));
    MPI_Request r;
    MPI_Status st;
    MPI_MUST(
        MPI_Isendrecv(grid, 1, col, right, 20, flat, N, MPI_INT, left, 20, MPI_COMM_WORLD, &r));
    MPI_MUST(MPI_Wait(&r, &st));
    int ok = 1;
    for (int i = 0; i < N; i++)
        ok &= flat[i] == left * 100000 + i;
    CHECK(ok);
    check_status(&st, left, 20, N, MPI_INT);

    /* In place through the vector: the gaps keep their -1. */
    MPI_MUST(MPI_Isendrecv_replace(grid, 1, col, right, 21, left, 21, MPI_COMM_WORLD, &r));
    MPI_MUST(MPI_Wait(&r, &st));
    ok = 1;
    for (int i = 0; i < N * STRIDE; i++)
        ok &= grid[i] == (i % STRIDE == 0 ? left * 100000 + i / STRIDE : -1);
    CHECK(ok);
    int elems = -1;
    MPI_Get_elements(&st, MPI_INT, &elems);
    CHECK(elems == N);
    MPI_Type_free(&col);
    free(grid);
    free(flat);
}

/* Several exchanges at once, with plain requests in the same Waitall. */
static void many(void)
{
    enum { K = 8, N = 1000 };
    static int out[K][N], in[K][N], extra_in, extra_out;
    MPI_Request r[K + 2];
    for (int k = 0; k < K; k++) {
        mt_fill(out[k], N, mt_rank * K + k);
        MPI_MUST(MPI_Isendrecv(out[k], N, MPI_INT, right, 30 + k, in[k], N, MPI_INT, left, 30 + k,
                               MPI_COMM_WORLD, &r[k]));
    }
    extra_out = mt_rank;
    MPI_MUST(MPI_Irecv(&extra_in, 1, MPI_INT, left, 29, MPI_COMM_WORLD, &r[K]));
    MPI_MUST(MPI_Isend(&extra_out, 1, MPI_INT, right, 29, MPI_COMM_WORLD, &r[K + 1]));
    MPI_Status st[K + 2];
    MPI_MUST(MPI_Waitall(K + 2, r, st));
    int ok = 1;
    for (int k = 0; k < K; k++) {
        ok &= mt_verify(in[k], N, left * K + k);
        ok &= st[k].MPI_SOURCE == left && st[k].MPI_TAG == 30 + k;
    }
    CHECK(ok);
    CHECK(extra_in == left);

    /* The same through Waitany: each index exactly once. */
    int seen[K] = {0};
    for (int k = 0; k < K; k++)
        MPI_MUST(MPI_Isendrecv_replace(out[k], N, MPI_INT, right, 50 + k, left, 50 + k,
                                       MPI_COMM_WORLD, &r[k]));
    for (int k = 0; k < K; k++) {
        int idx;
        MPI_Status s1;
        MPI_MUST(MPI_Waitany(K, r, &idx, &s1));
        CHECK(idx >= 0 && idx < K && !seen[idx] && s1.MPI_TAG == 50 + idx);
        if (idx >= 0 && idx < K)
            seen[idx] = 1;
    }
    ok = 1;
    for (int k = 0; k < K; k++)
        ok &= mt_verify(out[k], N, left * K + k);
    CHECK(ok);
}

static void proc_null(void)
{
    int x = 5, y = 7;
    MPI_Request r;
    MPI_Status st;
    MPI_MUST(MPI_Isendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, 1, &y, 1, MPI_INT, MPI_PROC_NULL, 1,
                           MPI_COMM_WORLD, &r));
    MPI_MUST(MPI_Wait(&r, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && y == 7);
    int n = -1;
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(n == 0);
    MPI_MUST(MPI_Isendrecv_replace(&x, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_PROC_NULL, 1,
                                   MPI_COMM_WORLD, &r));
    MPI_MUST(MPI_Wait(&r, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && x == 5);

    /* Send to PROC_NULL, receive from the left (which sends to its right: us). */
    MPI_Request s;
    x = mt_rank;
    MPI_MUST(MPI_Isend(&x, 1, MPI_INT, right, 2, MPI_COMM_WORLD, &s));
    MPI_MUST(MPI_Isendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, 2, &y, 1, MPI_INT, left, 2,
                           MPI_COMM_WORLD, &r));
    MPI_MUST(MPI_Wait(&r, &st));
    CHECK(y == left && st.MPI_SOURCE == left);
    MPI_MUST(MPI_Wait(&s, MPI_STATUS_IGNORE));
}

/* A receive half that nobody matches is cancelled with the request. */
static void cancel(void)
{
    int x = 1, y = 0;
    MPI_Request r;
    MPI_Status st;
    MPI_MUST(MPI_Isendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, 3, &y, 1, MPI_INT, left, 12345,
                           MPI_COMM_WORLD, &r));
    int flag = 1;
    MPI_MUST(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
    CHECK(flag == 0);
    MPI_MUST(MPI_Cancel(&r));
    MPI_MUST(MPI_Wait(&r, &st));
    MPI_MUST(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1 && y == 0);
}

/* MPI_Request_free on an active exchange: it still completes, so the data
 * arrives and a later message on the same pair comes after it. */
static void free_active(void)
{
    static int out[BIG], in[BIG];
    mt_fill(out, BIG, mt_rank + 7);
    MPI_Request r;
    MPI_MUST(MPI_Isendrecv(out, BIG, MPI_INT, right, 60, in, BIG, MPI_INT, left, 60, MPI_COMM_WORLD,
                           &r));
    MPI_MUST(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL);
    /* The left neighbour sends its token after its own exchange's send. */
    int token = 0, mine = 1;
    MPI_MUST(MPI_Sendrecv(&mine, 1, MPI_INT, right, 61, &token, 1, MPI_INT, left, 61,
                          MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(token == 1);
    /* The freed receive ends when its data lands: poll until it did. */
    int flag = 0;
    for (long i = 0; i < 100000000 && !mt_verify(in, BIG, left + 7); i++)
        MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    CHECK(mt_verify(in, BIG, left + 7));
}

static void truncation(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int out[16] = {0}, in[4];
    MPI_Request r;
    MPI_Status st;
    MPI_MUST(
        MPI_Isendrecv(out, 16, MPI_INT, right, 70, in, 4, MPI_INT, left, 70, MPI_COMM_WORLD, &r));
    int rc = MPI_Wait(&r, &st);
    CHECK(mt_class(rc) == MPI_ERR_TRUNCATE);
    CHECK(r == MPI_REQUEST_NULL);
    /* Bad arguments are refused with nothing started. */
    rc = MPI_Isendrecv(out, 1, MPI_INT, right, 71, in, 1, MPI_INT, left, 71, MPI_COMM_WORLD, NULL);
    CHECK(mt_class(rc) == MPI_ERR_REQUEST);
    rc = MPI_Isendrecv(out, 1, MPI_INT, mt_size + 3, 71, in, 1, MPI_INT, left, 71, MPI_COMM_WORLD,
                       &r);
    CHECK(mt_class(rc) == MPI_ERR_RANK);
    rc = MPI_Isendrecv(out, 1, MPI_INT, right, 71, in, -1, MPI_INT, left, 71, MPI_COMM_WORLD, &r);
    CHECK(mt_class(rc) == MPI_ERR_COUNT);
    rc = MPI_Isendrecv_replace(in, 1, MPI_INT, right, -5, left, 71, MPI_COMM_WORLD, &r);
    CHECK(mt_class(rc) == MPI_ERR_TAG);
    rc = MPI_Isendrecv(out, 1, MPI_INT, right, 71, in, 1, MPI_INT, left, 71, MPI_COMM_NULL, &r);
    CHECK(mt_class(rc) == MPI_ERR_COMM);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void status_fields(void)
{
    MPI_Status st;
    MPI_MUST(MPI_Status_set_source(&st, 3));
    MPI_MUST(MPI_Status_set_tag(&st, 44));
    MPI_MUST(MPI_Status_set_error(&st, MPI_ERR_TRUNCATE));
    int v[3];
    MPI_MUST(MPI_Status_get_source(&st, &v[0]));
    MPI_MUST(MPI_Status_get_tag(&st, &v[1]));
    MPI_MUST(MPI_Status_get_error(&st, &v[2]));
    CHECK(v[0] == 3 && v[1] == 44 && v[2] == MPI_ERR_TRUNCATE);
    CHECK(st.MPI_SOURCE == 3 && st.MPI_TAG == 44 && st.MPI_ERROR == MPI_ERR_TRUNCATE);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(mt_class(MPI_Status_get_tag(MPI_STATUS_IGNORE, &v[0])) == MPI_ERR_ARG);
    CHECK(mt_class(MPI_Status_get_tag(&st, NULL)) == MPI_ERR_ARG);
    CHECK(mt_class(MPI_Status_set_source(MPI_STATUS_IGNORE, 1)) == MPI_ERR_ARG);

    /* The Fortran ignore values: distinct, and refused where a status is due. */
    CHECK(MPI_F_STATUS_IGNORE != NULL && MPI_F_STATUSES_IGNORE != NULL);
    CHECK(MPI_F_STATUS_IGNORE != MPI_F_STATUSES_IGNORE);
    CHECK(mt_class(MPI_Status_c2f(&st, MPI_F_STATUS_IGNORE)) == MPI_ERR_ARG);
    CHECK(mt_class(MPI_Status_f2c(MPI_F_STATUS_IGNORE, &st)) == MPI_ERR_ARG);
    MPI_Fint f[MPI_F_STATUS_SIZE];
    MPI_MUST(MPI_Status_c2f(&st, f));
    CHECK(f[MPI_F_SOURCE] == 3 && f[MPI_F_TAG] == 44);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void info_string(void)
{
    MPI_Info info;
    MPI_MUST(MPI_Info_create(&info));
    MPI_MUST(MPI_Info_set(info, "colour", "ultramarine"));
    char buf[64];
    int len = sizeof buf, flag = 0;
    MPI_MUST(MPI_Info_get_string(info, "colour", &len, buf, &flag));
    CHECK(flag == 1 && len == 12 && strcmp(buf, "ultramarine") == 0);
    /* Too small: cut, and the length needed comes back. */
    len = 5;
    memset(buf, 'x', sizeof buf);
    MPI_MUST(MPI_Info_get_string(info, "colour", &len, buf, &flag));
    CHECK(flag == 1 && len == 12 && strcmp(buf, "ultr") == 0);
    /* Zero: only the length. */
    len = 0;
    memset(buf, 'x', sizeof buf);
    MPI_MUST(MPI_Info_get_string(info, "colour", &len, NULL, &flag));
    CHECK(flag == 1 && len == 12 && buf[0] == 'x');
    /* Absent: flag false, the rest untouched. */
    len = 9;
    MPI_MUST(MPI_Info_get_string(info, "shape", &len, buf, &flag));
    CHECK(flag == 0 && len == 9);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    len = -1;
    CHECK(mt_class(MPI_Info_get_string(info, "colour", &len, buf, &flag)) == MPI_ERR_ARG);
    CHECK(mt_class(MPI_Info_get_string(info, "colour", NULL, buf, &flag)) == MPI_ERR_ARG);
    CHECK(mt_class(MPI_Info_get_string(MPI_INFO_NULL, "colour", &len, buf, &flag)) == MPI_ERR_INFO);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Info_free(&info);
}

/* The value of key in info, or "" when absent. */
static const char *info_value(MPI_Info info, const char *key, char *buf, int cap)
{
    int flag = 0, len = cap;
    MPI_Info_get_string(info, key, &len, buf, &flag);
    return flag ? buf : "";
}

/* MPI_Info_create_env made before MPI_Init (early) says what one made now
 * says, and both describe this process. */
static void info_env(int argc, char **argv, MPI_Info early)
{
    MPI_Info now;
    MPI_MUST(MPI_Info_create_env(argc, argv, &now));
    static const char *keys[] = {"command", "argv", "maxprocs", "host", "wdir", "thread_level"};
    char a[MPI_MAX_INFO_VAL + 1], b[MPI_MAX_INFO_VAL + 1];
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
        CHECK(strcmp(info_value(early, keys[k], a, sizeof a),
                     info_value(now, keys[k], b, sizeof b)) == 0);
    CHECK(strcmp(info_value(now, "command", a, sizeof a), argv[0]) == 0);
    CHECK(strcmp(info_value(now, "argv", a, sizeof a), "first second") == 0);
    CHECK(atoi(info_value(now, "maxprocs", a, sizeof a)) == mt_size);
    char host[MPI_MAX_PROCESSOR_NAME];
    int len;
    MPI_Get_processor_name(host, &len);
    CHECK(strcmp(info_value(now, "host", a, sizeof a), host) == 0);
    CHECK(info_value(now, "wdir", a, sizeof a)[0] == '/');
    /* MPI_INFO_ENV agrees on what both have, and knows the thread level. */
    CHECK(strcmp(info_value(MPI_INFO_ENV, "maxprocs", a, sizeof a),
                 info_value(now, "maxprocs", b, sizeof b)) == 0);
    CHECK(strcmp(info_value(MPI_INFO_ENV, "thread_level", a, sizeof a), "MPI_THREAD_SINGLE") == 0);
    /* No arguments: no command, no argv. */
    MPI_Info bare;
    MPI_MUST(MPI_Info_create_env(0, NULL, &bare));
    CHECK(info_value(bare, "command", a, sizeof a)[0] == '\0');
    CHECK(info_value(bare, "host", a, sizeof a)[0] != '\0');
    MPI_Info_free(&bare);
    MPI_Info_free(&now);
    MPI_Info_free(&early);
}

/* MPI_Comm_idup_with_info: a working duplicate that carries the hints given. */
static void idup_info(void)
{
    MPI_Info info;
    MPI_MUST(MPI_Info_create(&info));
    MPI_MUST(MPI_Info_set(info, "weft_test_hint", "blue"));
    MPI_Comm dup;
    MPI_Request r;
    MPI_MUST(MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, &dup, &r));
    MPI_Info_free(&info); /* the duplicate keeps its own copy */
    MPI_MUST(MPI_Wait(&r, MPI_STATUS_IGNORE));
    int n = -1, me = -1;
    MPI_Comm_size(dup, &n);
    MPI_Comm_rank(dup, &me);
    CHECK(n == mt_size && me == mt_rank);
    MPI_Info got;
    MPI_MUST(MPI_Comm_get_info(dup, &got));
    char v[16];
    CHECK(strcmp(info_value(got, "weft_test_hint", v, sizeof v), "blue") == 0);
    MPI_Info_free(&got);
    int x = mt_rank, y = -1;
    MPI_MUST(
        MPI_Sendrecv(&x, 1, MPI_INT, right, 0, &y, 1, MPI_INT, left, 0, dup, MPI_STATUS_IGNORE));
    CHECK(y == left);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(mt_class(MPI_Comm_idup_with_info(MPI_COMM_WORLD, NULL, &dup, &r)) == MPI_ERR_INFO);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_free(&dup);
}

int main(int argc, char **argv)
{
    /* As if the program had been started with two arguments. */
    char *args[] = {argv[0], "first", "second", NULL};
    MPI_Info early;
    MPI_MUST(MPI_Info_create_env(3, args, &early));
    mt_init(&argc, &argv);
    info_env(3, args, early);
    right = (mt_rank + 1) % mt_size;
    left = (mt_rank + mt_size - 1) % mt_size;
    int sizes[] = {0, 1, 7, 100, 4096, 65536, BIG};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        ring(sizes[i], 10 * (int)i + 100);
    noncontiguous();
    many();
    proc_null();
    cancel();
    free_active();
    truncation();
    status_fields();
    info_string();
    idup_info();
    return mt_finish("test_mpi4");
}
