/* Sessions (MPI 4.0 §11.3), as a program that never calls MPI_Init uses them:
 * the process sets and their info, groups from them, communicators from
 * groups (the world, self, the even and the odd ranks at once under two
 * string tags, an intercommunicator between those), traffic and collectives
 * on each, two sessions at once, session error handlers, MPI_ERRORS_ABORT's
 * handle. With the argument "mixed", MPI_Init comes between the sessions'
 * inits and finalizes: both models share one instance.
 *
 * Plain MPI 4.0: builds against any MPI with sessions. */
#include "mpitest.h"

static int me = -1, np;

static int handler_calls, handler_code;

static void session_handler(MPI_Session *s, int *code, ...)
{
    (void)s;
    handler_calls++;
    handler_code = *code;
}

/* The value of key in info as an int, or -1. */
static int info_int(MPI_Info info, const char *key)
{
    char v[64];
    int len = sizeof v, flag = 0;
    MPI_MUST(MPI_Info_get_string(info, key, &len, v, &flag));
    return flag ? atoi(v) : -1;
}

static void psets(MPI_Session s)
{
    int n = 0;
    MPI_MUST(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    CHECK(n >= 2);
    int seen_world = 0, seen_self = 0;
    for (int i = 0; i < n; i++) {
        int len = 0;
        MPI_MUST(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL));
        CHECK(len > 1 && len <= MPI_MAX_PSET_NAME_LEN);
        char *name = malloc((size_t)len);
        MPI_MUST(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name));
        CHECK(strlen(name) == (size_t)len - 1);
        seen_world += !strcmp(name, "mpi://WORLD");
        seen_self += !strcmp(name, "mpi://SELF");
        MPI_Info info;
        MPI_MUST(MPI_Session_get_pset_info(s, name, &info));
        int size = info_int(info, "mpi_size");
        if (!strcmp(name, "mpi://SELF"))
            CHECK(size == 1);
        if (!strcmp(name, "mpi://WORLD"))
            np = size;
        MPI_Info_free(&info);
        /* A buffer too small: the name cut, terminated. */
        char small[4] = "xyz";
        int four = 4;
        MPI_MUST(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &four, small));
        CHECK(small[3] == '\0' && !strncmp(small, "mpi", 3));
        free(name);
    }
    CHECK(seen_world == 1 && seen_self == 1);
    CHECK(np >= 1);
}

/* Traffic on c: a ring exchange, an allreduce, a barrier. */
static void use(MPI_Comm c)
{
    int r, n;
    MPI_MUST(MPI_Comm_rank(c, &r));
    MPI_MUST(MPI_Comm_size(c, &n));
    int right = (r + 1) % n, left = (r + n - 1) % n, got = -1;
    MPI_MUST(
        MPI_Sendrecv(&r, 1, MPI_INT, right, 5, &got, 1, MPI_INT, left, 5, c, MPI_STATUS_IGNORE));
    CHECK(got == left);
    int sum = 0;
    MPI_MUST(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == n * (n - 1) / 2);
    MPI_MUST(MPI_Barrier(c));
}

static MPI_Comm from_pset(MPI_Session s, const char *pset, const char *tag)
{
    MPI_Group g;
    MPI_MUST(MPI_Group_from_session_pset(s, pset, &g));
    MPI_Comm c;
    MPI_MUST(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    MPI_Group_free(&g);
    return c;
}

static void communicators(MPI_Session s)
{
    MPI_Comm world = from_pset(s, "mpi://WORLD", "org.weft.test.world");
    MPI_MUST(MPI_Comm_rank(world, &me));
    mt_rank = me;
    int n;
    MPI_MUST(MPI_Comm_size(world, &n));
    CHECK(n == np);
    use(world);
    /* The error handler given is the communicator's. */
    MPI_Errhandler e;
    MPI_MUST(MPI_Comm_get_errhandler(world, &e));
    CHECK(e == MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&e);
    int x = 0;
    CHECK(mt_class(MPI_Send(&x, 1, MPI_INT, np + 3, 0, world)) == MPI_ERR_RANK);

    MPI_Comm self = from_pset(s, "mpi://self", "org.weft.test.self"); /* case aside */
    MPI_MUST(MPI_Comm_size(self, &n));
    CHECK(n == 1);
    use(self);

    /* Even and odd ranks, each half its own tag, at once. */
    MPI_Group wg, half, other;
    MPI_MUST(MPI_Comm_group(world, &wg));
    int nh = (np + 1) / 2, no = np / 2;
    int *evens = malloc(sizeof(int) * (size_t)nh), *odds = malloc(sizeof(int) * (size_t)np);
    for (int i = 0; i < nh; i++)
        evens[i] = 2 * i;
    for (int i = 0; i < no; i++)
        odds[i] = 2 * i + 1;
    int even = me % 2 == 0;
    MPI_MUST(MPI_Group_incl(wg, even ? nh : no, even ? evens : odds, &half));
    MPI_MUST(MPI_Group_incl(wg, even ? no : nh, even ? odds : evens, &other));
    MPI_Comm hc;
    MPI_MUST(MPI_Comm_create_from_group(half, even ? "org.weft.test.even" : "org.weft.test.odd",
                                        MPI_INFO_NULL, MPI_ERRORS_RETURN, &hc));
    MPI_MUST(MPI_Comm_size(hc, &n));
    CHECK(n == (even ? nh : no));
    use(hc);

    /* The halves joined: leaders are each half's first member. */
    if (no > 0) {
        MPI_Comm inter;
        MPI_MUST(MPI_Intercomm_create_from_groups(half, 0, other, 0, "org.weft.test.inter",
                                                  MPI_INFO_NULL, MPI_ERRORS_RETURN, &inter));
        int flag = 0, rsize = 0;
        MPI_MUST(MPI_Comm_test_inter(inter, &flag));
        MPI_MUST(MPI_Comm_remote_size(inter, &rsize));
        CHECK(flag && rsize == (even ? no : nh));
        /* Sum of the other half's world ranks. */
        int sum = -1, want = 0;
        for (int i = 0; i < (even ? no : nh); i++)
            want += even ? odds[i] : evens[i];
        MPI_MUST(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, inter));
        CHECK(sum == want);
        MPI_Comm_free(&inter);
    }
    MPI_Comm_free(&hc);
    MPI_Group_free(&half);
    MPI_Group_free(&other);
    MPI_Group_free(&wg);
    free(evens);
    free(odds);
    MPI_Comm_free(&self);
    MPI_Comm_free(&world);
}

static void errors(MPI_Session s)
{
    MPI_Group g;
    CHECK(mt_class(MPI_Group_from_session_pset(s, "mpi://NOWHERE", &g)) == MPI_ERR_ARG);
    int len = 0;
    CHECK(mt_class(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 99, &len, NULL)) == MPI_ERR_ARG);
    MPI_Info info;
    CHECK(mt_class(MPI_Session_get_pset_info(s, "nope", &info)) == MPI_ERR_ARG);
    /* A handler of the session's own. */
    MPI_Errhandler e, got;
    MPI_MUST(MPI_Session_create_errhandler(session_handler, &e));
    MPI_MUST(MPI_Session_set_errhandler(s, e));
    MPI_MUST(MPI_Session_get_errhandler(s, &got));
    CHECK(got == e);
    MPI_Errhandler_free(&got);
    MPI_MUST(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
    CHECK(handler_calls == 1 && handler_code == MPI_ERR_OTHER);
    CHECK(mt_class(MPI_Group_from_session_pset(s, "mpi://NOWHERE", &g)) == MPI_ERR_ARG);
    CHECK(handler_calls == 2 && handler_code == MPI_ERR_ARG);
    /* A communicator's handler does not fit a session. */
    MPI_Errhandler ce;
    MPI_MUST(MPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)session_handler, &ce));
    CHECK(mt_class(MPI_Session_set_errhandler(s, ce)) == MPI_ERR_ARG);
    MPI_Errhandler_free(&ce);
    MPI_MUST(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN));
    MPI_Errhandler_free(&e);
    /* The predefined handles convert. */
    CHECK(MPI_Session_f2c(MPI_Session_c2f(MPI_SESSION_NULL)) == MPI_SESSION_NULL);
    CHECK(MPI_Session_f2c(MPI_Session_c2f(s)) == s);
    CHECK(MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRORS_ABORT)) == MPI_ERRORS_ABORT);
}

int main(int argc, char **argv)
{
    int mixed = argc > 1 && !strcmp(argv[1], "mixed");
    int flag = 1;
    MPI_Info hints;
    MPI_MUST(MPI_Info_create(&hints));
    MPI_MUST(MPI_Info_set(hints, "thread_level", "MPI_THREAD_MULTIPLE"));
    MPI_Session s1, s2;
    MPI_MUST(MPI_Session_init(hints, MPI_ERRORS_RETURN, &s1));
    MPI_Info_free(&hints);
    MPI_MUST(MPI_Initialized(&flag));
    CHECK(!flag); /* the world model is not */
    MPI_Info used;
    MPI_MUST(MPI_Session_get_info(s1, &used));
    char level[64];
    int len = sizeof level;
    MPI_MUST(MPI_Info_get_string(used, "thread_level", &len, level, &flag));
    CHECK(flag && !strncmp(level, "MPI_THREAD_", 11));
    MPI_Info_free(&used);

    if (mixed) {
        MPI_MUST(MPI_Init(&argc, &argv));
        MPI_MUST(MPI_Initialized(&flag));
        CHECK(flag);
        /* Errors on no session go to the world's handler. */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Group g;
        CHECK(mt_class(MPI_Group_from_session_pset(MPI_SESSION_NULL, "mpi://WORLD", &g)) ==
              MPI_ERR_SESSION);
        int n;
        CHECK(mt_class(MPI_Session_get_num_psets(MPI_SESSION_NULL, MPI_INFO_NULL, &n)) ==
              MPI_ERR_SESSION);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    }
    psets(s1);
    communicators(s1);
    errors(s1);

    /* A second session beside the first; the first ends; the second goes on. */
    MPI_MUST(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2));
    MPI_Comm w2 = from_pset(s2, "mpi://WORLD", "org.weft.test.second");
    MPI_MUST(MPI_Session_finalize(&s1));
    CHECK(s1 == MPI_SESSION_NULL);
    use(w2);
    if (mixed) {
        int r = -1;
        MPI_MUST(MPI_Comm_rank(MPI_COMM_WORLD, &r));
        CHECK(r == me);
        use(MPI_COMM_WORLD);
    }

    /* Everyone's counts, over the second session's world. */
    long mine[2] = {mt_passed, mt_failed}, all[2] = {0, 0};
    MPI_MUST(MPI_Allreduce(mine, all, 2, MPI_LONG, MPI_SUM, w2));
    if (me == 0)
        printf("test_session%s: %d ranks, %ld passed, %ld failed\n", mixed ? " (mixed)" : "", np,
               all[0], all[1]);
    MPI_Comm_free(&w2);
    if (mixed) {
        MPI_MUST(MPI_Finalize());
        MPI_MUST(MPI_Finalized(&flag));
        CHECK(flag);
    }
    MPI_MUST(MPI_Session_finalize(&s2));
    return all[1] || mt_failed ? 1 : 0;
}
