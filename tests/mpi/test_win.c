/* One-sided communication (MPI 3.1 chapter 11): every window flavour under
 * every synchronization, puts, gets, accumulates and atomics on predefined
 * and derived types, the request-based forms, attributes, info, error
 * classes and window error handlers. Plain MPI: it runs on any
 * implementation. */
#include <complex.h>
#include <stdint.h>

#include "mpitest.h"

#define N 64 /* doubles... of each rank's window */

enum { F_CREATE, F_ALLOCATE, F_SHARED, F_DYNAMIC, NFLAVORS };
static const char *const fname[] = {"create", "allocate", "shared", "dynamic"};

typedef struct win {
    MPI_Win win;
    int64_t *mem;   /* this rank's part: N int64 */
    void *own;      /* create and dynamic: the user's memory */
    MPI_Aint *addr; /* dynamic: each rank's address of mem */
    int flavor;
} win_t;

static int me, np;

/* A window of N int64 per rank, zeroed, of flavour f; disp unit 8 (1 for
 * dynamic, whose displacements are addresses). */
static int win_make(win_t *w, int f, MPI_Comm comm)
{
    memset(w, 0, sizeof *w);
    w->flavor = f;
    int rc = MPI_SUCCESS;
    MPI_Aint bytes = N * sizeof(int64_t);
    switch (f) {
    case F_CREATE:
        w->own = w->mem = calloc(N, sizeof(int64_t));
        rc = MPI_Win_create(w->mem, bytes, sizeof(int64_t), MPI_INFO_NULL, comm, &w->win);
        break;
    case F_ALLOCATE:
        rc = MPI_Win_allocate(bytes, sizeof(int64_t), MPI_INFO_NULL, comm, &w->mem, &w->win);
        break;
    case F_SHARED: {
        MPI_Comm node;
        MPI_MUST(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
        int nsize, csize;
        MPI_Comm_size(node, &nsize);
        MPI_Comm_size(comm, &csize);
        MPI_Comm_free(&node);
        if (nsize != csize)
            return -1; /* not all on one node */
        rc = MPI_Win_allocate_shared(bytes, sizeof(int64_t), MPI_INFO_NULL, comm, &w->mem, &w->win);
        break;
    }
    default: {
        w->own = w->mem = calloc(N, sizeof(int64_t));
        rc = MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &w->win);
        if (rc == MPI_SUCCESS)
            rc = MPI_Win_attach(w->win, w->mem, bytes);
        int csize;
        MPI_Comm_size(comm, &csize);
        w->addr = calloc((size_t)csize, sizeof(MPI_Aint));
        MPI_Aint mine;
        MPI_Get_address(w->mem, &mine);
        MPI_Allgather(&mine, 1, MPI_AINT, w->addr, 1, MPI_AINT, comm);
        break;
    }
    }
    if (rc == MPI_SUCCESS && f != F_CREATE && f != F_DYNAMIC) {
        /* Zero through the window's own epoch rules: a local store, then a
         * barrier, in the unified model. */
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, w->win);
        memset(w->mem, 0, N * sizeof(int64_t));
        MPI_Win_unlock(me, w->win);
    }
    MPI_Barrier(comm);
    return rc;
}

/* The displacement of element i at rank r. */
static MPI_Aint disp(const win_t *w, int r, int i)
{
    return w->flavor == F_DYNAMIC ? w->addr[r] + (MPI_Aint)(i * sizeof(int64_t)) : i;
}

static void win_done(win_t *w)
{
    if (w->flavor == F_DYNAMIC)
        MPI_MUST(MPI_Win_detach(w->win, w->mem));
    MPI_MUST(MPI_Win_free(&w->win));
    CHECK(w->win == MPI_WIN_NULL);
    free(w->own);
    free(w->addr);
}

/* Local read of this rank's part, inside an epoch of its own. */
static int64_t local(const win_t *w, int i)
{
    MPI_Win_lock(MPI_LOCK_SHARED, me, 0, w->win);
    int64_t v = ((volatile int64_t *)w->mem)[i];
    MPI_Win_unlock(me, w->win);
    return v;
}

/* ---- fence: puts into the right neighbour, gets from the left, sums at 0 ---- */
static void t_fence(win_t *w)
{
    int right = (me + 1) % np, left = (me + np - 1) % np;
    int64_t v = 100 + me, got = -1, one = 1;
    MPI_MUST(MPI_Win_fence(MPI_MODE_NOPRECEDE, w->win));
    MPI_MUST(MPI_Put(&v, 1, MPI_INT64_T, right, disp(w, right, 0), 1, MPI_INT64_T, w->win));
    MPI_MUST(
        MPI_Accumulate(&one, 1, MPI_INT64_T, 0, disp(w, 0, 1), 1, MPI_INT64_T, MPI_SUM, w->win));
    MPI_MUST(MPI_Win_fence(0, w->win));
    MPI_MUST(MPI_Get(&got, 1, MPI_INT64_T, left, disp(w, left, 0), 1, MPI_INT64_T, w->win));
    MPI_MUST(MPI_Win_fence(MPI_MODE_NOSUCCEED, w->win));
    CHECK(got == 100 + (left + np - 1) % np);
    CHECK(w->mem[0] == 100 + left);
    if (me == 0)
        CHECK(w->mem[1] == np);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- exclusive locks: a read-modify-write nobody else sees half of ---- */
static void t_lock_excl(win_t *w)
{
    enum { ROUNDS = 20 };
    for (int k = 0; k < ROUNDS; k++) {
        int64_t v;
        MPI_MUST(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w->win));
        MPI_MUST(MPI_Get(&v, 1, MPI_INT64_T, 0, disp(w, 0, 2), 1, MPI_INT64_T, w->win));
        MPI_MUST(MPI_Win_flush(0, w->win));
        v++;
        MPI_MUST(MPI_Put(&v, 1, MPI_INT64_T, 0, disp(w, 0, 2), 1, MPI_INT64_T, w->win));
        MPI_MUST(MPI_Win_unlock(0, w->win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        CHECK(local(w, 2) == (int64_t)ROUNDS * np);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- shared locks and atomics: fetch-and-op tickets, compare-and-swap ---- */
static void t_atomics(win_t *w)
{
    enum { ROUNDS = 50 };
    int64_t one = 1, prev, sum = 0;
    MPI_MUST(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w->win));
    for (int k = 0; k < ROUNDS; k++) {
        MPI_MUST(MPI_Fetch_and_op(&one, &prev, MPI_INT64_T, 0, disp(w, 0, 3), MPI_SUM, w->win));
        MPI_MUST(MPI_Win_flush(0, w->win));
        sum += prev;
    }
    MPI_MUST(MPI_Win_unlock(0, w->win));
    /* Every ticket 0 .. ROUNDS*np-1 went to exactly one fetch. */
    int64_t total;
    MPI_Allreduce(&sum, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    int64_t n = (int64_t)ROUNDS * np;
    CHECK(total == n * (n - 1) / 2);
    /* Compare-and-swap: one rank wins slot 4 (from 0), the others see it. */
    int64_t mine = me + 1, zero = 0, old = -1;
    MPI_MUST(MPI_Win_lock_all(0, w->win));
    MPI_MUST(MPI_Compare_and_swap(&mine, &zero, &old, MPI_INT64_T, 0, disp(w, 0, 4), w->win));
    MPI_MUST(MPI_Win_flush_all(w->win));
    MPI_MUST(MPI_Win_unlock_all(w->win));
    int won = old == 0, winners;
    MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(winners == 1);
    if (me == 0) {
        int64_t w4 = local(w, 4);
        CHECK(w4 >= 1 && w4 <= np);
    }
    /* MPI_NO_OP reads atomically, MPI_REPLACE swaps (the last rank's turn,
     * a target of its own or the first rank's). */
    if (me == np - 1) {
        int64_t r = -1, seven = 7;
        MPI_MUST(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w->win));
        MPI_MUST(MPI_Fetch_and_op(NULL, &r, MPI_INT64_T, 0, disp(w, 0, 3), MPI_NO_OP, w->win));
        MPI_MUST(MPI_Win_flush(0, w->win));
        CHECK(r == n);
        MPI_MUST(MPI_Fetch_and_op(&seven, &r, MPI_INT64_T, 0, disp(w, 0, 3), MPI_REPLACE, w->win));
        MPI_MUST(MPI_Win_flush_local(0, w->win));
        CHECK(r == n);
        MPI_MUST(MPI_Fetch_and_op(NULL, &r, MPI_INT64_T, 0, disp(w, 0, 3), MPI_NO_OP, w->win));
        MPI_MUST(MPI_Win_unlock(0, w->win));
        CHECK(r == 7);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- post/start/complete/wait: each rank exposes to its left, accesses its right ---- */
static void t_pscw(win_t *w)
{
    int right = (me + 1) % np, left = (me + np - 1) % np;
    MPI_Group world, gl, gr;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &left, &gl);
    MPI_Group_incl(world, 1, &right, &gr);
    for (int round = 0; round < 3; round++) {
        int64_t v[2] = {1000 * round + me, -me};
        MPI_MUST(MPI_Win_post(gl, 0, w->win));
        MPI_MUST(MPI_Win_start(gr, 0, w->win));
        MPI_MUST(MPI_Put(v, 2, MPI_INT64_T, right, disp(w, right, 5), 2, MPI_INT64_T, w->win));
        MPI_MUST(MPI_Win_complete(w->win));
        if (round == 1) {
            int flag = 0;
            while (!flag)
                MPI_MUST(MPI_Win_test(w->win, &flag));
        } else {
            MPI_MUST(MPI_Win_wait(w->win));
        }
        CHECK(w->mem[5] == 1000 * round + left && w->mem[6] == -left);
    }
    MPI_Group_free(&gl);
    MPI_Group_free(&gr);
    MPI_Group_free(&world);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- derived types at both ends; a large put and get in pieces ---- */
static void t_derived(win_t *w)
{
    int right = (me + 1) % np;
    /* Target: every other element of 8 from 8; origin: contiguous. */
    MPI_Datatype vec;
    MPI_Type_vector(8, 1, 2, MPI_INT64_T, &vec);
    MPI_Type_commit(&vec);
    int64_t src[8], back[16];
    for (int i = 0; i < 8; i++)
        src[i] = 10 * me + i;
    MPI_MUST(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, w->win));
    MPI_MUST(MPI_Put(src, 8, MPI_INT64_T, right, disp(w, right, 8), 1, vec, w->win));
    MPI_MUST(MPI_Win_flush(right, w->win));
    /* Origin vector, target contiguous: the 16 elements back, strided here. */
    MPI_Datatype ovec;
    MPI_Type_vector(16, 1, 1, MPI_INT64_T, &ovec);
    MPI_Type_commit(&ovec);
    memset(back, 0xff, sizeof back);
    MPI_MUST(MPI_Get(back, 1, ovec, right, disp(w, right, 8), 16, MPI_INT64_T, w->win));
    MPI_MUST(MPI_Win_unlock(right, w->win));
    for (int i = 0; i < 8; i++)
        CHECK(back[2 * i] == 10 * me + i);
    /* Accumulate through the vector: the odd slots get the sum of 1s. */
    int64_t ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_MUST(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w->win));
    MPI_MUST(
        MPI_Accumulate(ones, 8, MPI_INT64_T, right, disp(w, right, 9), 1, vec, MPI_SUM, w->win));
    MPI_MUST(MPI_Win_unlock(right, w->win));
    MPI_Barrier(MPI_COMM_WORLD);
    int left = (me + np - 1) % np;
    MPI_Win_lock(MPI_LOCK_SHARED, me, 0, w->win);
    for (int i = 0; i < 8; i++) {
        CHECK(w->mem[8 + 2 * i] == 10 * left + i);
        CHECK(w->mem[9 + 2 * i] == 1);
    }
    MPI_Win_unlock(me, w->win);
    MPI_Type_free(&vec);
    MPI_Type_free(&ovec);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- get_accumulate and the request forms ---- */
static void t_requests(win_t *w)
{
    int right = (me + 1) % np;
    int64_t in[4] = {1, 2, 3, 4}, out[4] = {-1, -1, -1, -1}, got[4];
    MPI_Request rq[3];
    MPI_MUST(MPI_Win_lock_all(0, w->win));
    MPI_MUST(
        MPI_Rput(in, 4, MPI_INT64_T, right, disp(w, right, 30), 4, MPI_INT64_T, w->win, &rq[0]));
    MPI_MUST(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    MPI_MUST(MPI_Win_flush(right, w->win));
    MPI_MUST(MPI_Rget_accumulate(in, 4, MPI_INT64_T, out, 4, MPI_INT64_T, right, disp(w, right, 30),
                                 4, MPI_INT64_T, MPI_SUM, w->win, &rq[1]));
    MPI_MUST(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
    MPI_MUST(MPI_Win_flush(right, w->win));
    MPI_MUST(MPI_Raccumulate(in, 4, MPI_INT64_T, right, disp(w, right, 30), 4, MPI_INT64_T,
                             MPI_PROD, w->win, &rq[0]));
    MPI_MUST(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    MPI_MUST(MPI_Win_flush(right, w->win));
    MPI_MUST(
        MPI_Rget(got, 4, MPI_INT64_T, right, disp(w, right, 30), 4, MPI_INT64_T, w->win, &rq[2]));
    MPI_MUST(MPI_Wait(&rq[2], MPI_STATUS_IGNORE));
    MPI_MUST(MPI_Win_unlock_all(w->win));
    for (int i = 0; i < 4; i++) {
        CHECK(out[i] == in[i]);
        CHECK(got[i] == 2 * in[i] * in[i]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- accumulates on types without a CPU atomic, and pairs with holes ---- */
typedef struct {
    double v;
    int k;
} dbl_int;

static void t_types(win_t *w)
{
    /* The window's bytes from element 40 on (24 elements, 192 bytes):
     * a double-int pair (16 bytes) at 40, a long double at 48, a double
     * complex at 56. */
    dbl_int p = {(double)(me % 3), me}, pr;
    long double ld = 0.5L * (me + 1);
    double _Complex z = (me + 1) + 1.0 * I;
    MPI_Aint pair_at = disp(w, 0, 40), ld_at = disp(w, 0, 48), z_at = disp(w, 0, 56);
    MPI_MUST(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w->win));
    MPI_MUST(
        MPI_Accumulate(&p, 1, MPI_DOUBLE_INT, 0, pair_at, 1, MPI_DOUBLE_INT, MPI_MAXLOC, w->win));
    MPI_MUST(
        MPI_Accumulate(&ld, 1, MPI_LONG_DOUBLE, 0, ld_at, 1, MPI_LONG_DOUBLE, MPI_SUM, w->win));
    MPI_MUST(MPI_Accumulate(&z, 1, MPI_C_DOUBLE_COMPLEX, 0, z_at, 1, MPI_C_DOUBLE_COMPLEX, MPI_SUM,
                            w->win));
    MPI_MUST(MPI_Win_unlock(0, w->win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_MUST(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w->win));
    MPI_MUST(MPI_Get_accumulate(NULL, 0, MPI_DOUBLE_INT, &pr, 1, MPI_DOUBLE_INT, 0, pair_at, 1,
                                MPI_DOUBLE_INT, MPI_NO_OP, w->win));
    long double ldr = 0;
    double _Complex zr = 0;
    MPI_MUST(MPI_Get(&ldr, 1, MPI_LONG_DOUBLE, 0, ld_at, 1, MPI_LONG_DOUBLE, w->win));
    MPI_MUST(MPI_Get(&zr, 1, MPI_C_DOUBLE_COMPLEX, 0, z_at, 1, MPI_C_DOUBLE_COMPLEX, w->win));
    MPI_MUST(MPI_Win_unlock(0, w->win));
    /* MAXLOC: the largest value, at the lowest index among equals; the
     * window started at zero bytes (0.0, index 0). */
    double best = 0;
    for (int r = 0; r < np; r++)
        if (r % 3 > best)
            best = r % 3;
    int at = 0;
    for (int r = 0; r < np; r++)
        if (r % 3 == best) {
            at = r;
            break;
        }
    CHECK(pr.v == best && pr.k == (best == 0 ? 0 : at));
    long double lsum = 0;
    for (int r = 0; r < np; r++)
        lsum += 0.5L * (r + 1);
    CHECK(ldr == lsum);
    CHECK(creal(zr) == np * (np + 1) / 2.0 && cimag(zr) == np);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- what a window says of itself ---- */
static void t_queries(win_t *w)
{
    void *base;
    MPI_Aint *size;
    int *unit, *flavor, *model, flag;
    MPI_MUST(MPI_Win_get_attr(w->win, MPI_WIN_BASE, &base, &flag));
    CHECK(flag && base == (w->flavor == F_DYNAMIC ? NULL : (void *)w->mem));
    MPI_MUST(MPI_Win_get_attr(w->win, MPI_WIN_SIZE, &size, &flag));
    CHECK(flag && *size == (w->flavor == F_DYNAMIC ? 0 : N * (MPI_Aint)sizeof(int64_t)));
    MPI_MUST(MPI_Win_get_attr(w->win, MPI_WIN_DISP_UNIT, &unit, &flag));
    CHECK(flag && *unit == (w->flavor == F_DYNAMIC ? 1 : 8));
    MPI_MUST(MPI_Win_get_attr(w->win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    static const int want[] = {MPI_WIN_FLAVOR_CREATE, MPI_WIN_FLAVOR_ALLOCATE,
                               MPI_WIN_FLAVOR_SHARED, MPI_WIN_FLAVOR_DYNAMIC};
    CHECK(flag && *flavor == want[w->flavor]);
    MPI_MUST(MPI_Win_get_attr(w->win, MPI_WIN_MODEL, &model, &flag));
    CHECK(flag && *model == MPI_WIN_UNIFIED);
    MPI_Group g, wg;
    int cmp;
    MPI_MUST(MPI_Win_get_group(w->win, &g));
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_compare(g, wg, &cmp);
    CHECK(cmp == MPI_IDENT);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_MUST(MPI_Win_get_name(w->win, name, &len));
    CHECK(len == 0);
    MPI_MUST(MPI_Win_set_name(w->win, "weft window"));
    MPI_MUST(MPI_Win_get_name(w->win, name, &len));
    CHECK(!strcmp(name, "weft window") && len == 11);
    MPI_Info info;
    char v[MPI_MAX_INFO_VAL];
    MPI_MUST(MPI_Win_get_info(w->win, &info));
    MPI_Info_get(info, "accumulate_ordering", MPI_MAX_INFO_VAL - 1, v, &flag);
    CHECK(flag && !strcmp(v, "rar,raw,war,waw"));
    MPI_Info_free(&info);
    MPI_Info_create(&info);
    MPI_Info_set(info, "no_locks", "false");
    MPI_Info_set(info, "accumulate_ops", "same_op");
    MPI_MUST(MPI_Win_set_info(w->win, info));
    MPI_Info_free(&info);
    MPI_MUST(MPI_Win_get_info(w->win, &info));
    MPI_Info_get(info, "accumulate_ops", MPI_MAX_INFO_VAL - 1, v, &flag);
    CHECK(flag && !strcmp(v, "same_op"));
    MPI_Info_free(&info);
    /* Attributes of the application's. */
    int key, val = 42, *pv;
    MPI_MUST(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &key, NULL));
    MPI_MUST(MPI_Win_set_attr(w->win, key, &val));
    MPI_MUST(MPI_Win_get_attr(w->win, key, &pv, &flag));
    CHECK(flag && pv == &val);
    MPI_MUST(MPI_Win_delete_attr(w->win, key));
    MPI_MUST(MPI_Win_get_attr(w->win, key, &pv, &flag));
    CHECK(!flag);
    MPI_MUST(MPI_Win_free_keyval(&key));
    CHECK(MPI_Win_f2c(MPI_Win_c2f(w->win)) == w->win);
    if (w->flavor == F_SHARED) {
        /* Each rank's part is mapped here, right after the previous one's. */
        for (int r = 0; r < np; r++) {
            MPI_Aint sz;
            int du;
            int64_t *b;
            MPI_MUST(MPI_Win_shared_query(w->win, r, &sz, &du, &b));
            CHECK(sz == N * (MPI_Aint)sizeof(int64_t) && du == 8);
            CHECK(b == w->mem + (r - me) * N);
        }
    }
}

/* ---- errors: classes through the window's handler ---- */
static int handler_calls, handler_last;
static void win_handler(MPI_Win *win, int *code, ...)
{
    handler_calls++;
    handler_last = *code;
}

static void t_errors(win_t *w)
{
    int64_t v = 1;
    MPI_MUST(MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN));
    /* A put outside any epoch. */
    int rc = MPI_Put(&v, 1, MPI_INT64_T, 0, disp(w, 0, 0), 1, MPI_INT64_T, w->win);
    CHECK(mt_class(rc) == MPI_ERR_RMA_SYNC);
    /* Unlock without lock, complete without start, wait without post. */
    CHECK(mt_class(MPI_Win_unlock(0, w->win)) == MPI_ERR_RMA_SYNC);
    CHECK(mt_class(MPI_Win_unlock_all(w->win)) == MPI_ERR_RMA_SYNC);
    CHECK(mt_class(MPI_Win_complete(w->win)) == MPI_ERR_RMA_SYNC);
    CHECK(mt_class(MPI_Win_wait(w->win)) == MPI_ERR_RMA_SYNC);
    CHECK(mt_class(MPI_Win_flush(0, w->win)) == MPI_ERR_RMA_SYNC);
    CHECK(mt_class(MPI_Win_lock(99, 0, 0, w->win)) == MPI_ERR_LOCKTYPE);
    CHECK(mt_class(MPI_Win_lock(MPI_LOCK_SHARED, 0, 12345, w->win)) == MPI_ERR_ASSERT);
    CHECK(mt_class(MPI_Win_fence(77, w->win)) == MPI_ERR_ASSERT);
    MPI_MUST(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w->win));
    /* Locking one target twice; a displacement outside the window. */
    CHECK(mt_class(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w->win)) == MPI_ERR_RMA_SYNC);
    CHECK(mt_class(MPI_Win_lock_all(0, w->win)) == MPI_ERR_RMA_SYNC);
    if (w->flavor != F_DYNAMIC) {
        rc = MPI_Put(&v, 1, MPI_INT64_T, 0, N, 1, MPI_INT64_T, w->win);
        CHECK(mt_class(rc) == MPI_ERR_RMA_RANGE);
        rc = MPI_Get(&v, 2, MPI_INT64_T, 0, N - 1, 2, MPI_INT64_T, w->win);
        CHECK(mt_class(rc) == MPI_ERR_RMA_RANGE);
        rc = MPI_Put(&v, 1, MPI_INT64_T, 0, -1, 1, MPI_INT64_T, w->win);
        CHECK(mt_class(rc) == MPI_ERR_RMA_RANGE);
    } else {
        /* Outside what is attached: found where the target checks, told at
         * the flush or on the spot. */
        rc = MPI_Put(&v, 1, MPI_INT64_T, 0, w->addr[0] + N * 8, 1, MPI_INT64_T, w->win);
        if (rc == MPI_SUCCESS)
            rc = MPI_Win_flush(0, w->win);
        CHECK(mt_class(rc) == MPI_ERR_RMA_RANGE);
    }
    CHECK(mt_class(MPI_Put(&v, 1, MPI_INT64_T, np, 0, 1, MPI_INT64_T, w->win)) == MPI_ERR_RANK);
    CHECK(mt_class(MPI_Accumulate(&v, 1, MPI_INT64_T, 0, disp(w, 0, 0), 1, MPI_INT64_T, MPI_OP_NULL,
                                  w->win)) == MPI_ERR_OP);
    CHECK(mt_class(MPI_Put(&v, 1, MPI_INT64_T, MPI_PROC_NULL, 0, 1, MPI_INT64_T, w->win)) ==
          MPI_SUCCESS);
    /* Freeing a window with an epoch open. */
    MPI_Win keep = w->win;
    CHECK(mt_class(MPI_Win_free(&keep)) == MPI_ERR_RMA_SYNC && keep == w->win);
    MPI_MUST(MPI_Win_unlock(0, w->win));
    /* A handler of the application's sees the code. */
    MPI_Errhandler eh;
    MPI_MUST(MPI_Win_create_errhandler(win_handler, &eh));
    MPI_MUST(MPI_Win_set_errhandler(w->win, eh));
    MPI_MUST(MPI_Errhandler_free(&eh));
    handler_calls = 0;
    rc = MPI_Win_unlock(0, w->win);
    CHECK(handler_calls == 1 && mt_class(handler_last) == MPI_ERR_RMA_SYNC);
    MPI_MUST(MPI_Win_call_errhandler(w->win, MPI_ERR_OTHER));
    CHECK(handler_calls == 2 && handler_last == MPI_ERR_OTHER);
    MPI_Errhandler got;
    MPI_MUST(MPI_Win_get_errhandler(w->win, &got));
    MPI_MUST(MPI_Errhandler_free(&got));
    MPI_MUST(MPI_Win_set_errhandler(w->win, MPI_ERRORS_ARE_FATAL));
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    for (int f = 0; f < NFLAVORS; f++) {
        win_t w;
        int rc = win_make(&w, f, MPI_COMM_WORLD);
        if (rc < 0)
            continue; /* allocate_shared across nodes */
        MPI_MUST(rc);
        t_fence(&w);
        t_lock_excl(&w);
        t_atomics(&w);
        t_pscw(&w);
        t_derived(&w);
        t_requests(&w);
        t_types(&w);
        t_queries(&w);
        t_errors(&w);
        win_done(&w);
        if (mt_failed)
            fprintf(stderr, "[rank %d] after the %s window\n", me, fname[f]);
    }
    /* Bad input at creation: reported on the communicator. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Win bad;
    int x;
    CHECK(mt_class(MPI_Win_create(&x, -1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &bad)) == MPI_ERR_SIZE);
    CHECK(mt_class(MPI_Win_create(&x, 4, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &bad)) == MPI_ERR_DISP);
    CHECK(bad == MPI_WIN_NULL);
    CHECK(mt_class(MPI_Win_free(&bad)) == MPI_ERR_WIN);
    /* More memory than the node has: an error, not a fault at first touch. */
    void *huge = NULL;
    CHECK(MPI_Win_allocate((MPI_Aint)1 << 50, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &huge, &bad) !=
              MPI_SUCCESS &&
          bad == MPI_WIN_NULL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return mt_finish("win");
}
