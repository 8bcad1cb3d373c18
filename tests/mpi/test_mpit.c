/* The MPI tools information interface (MPI_T): control variables are weft's
 * WEFT_* parameters, performance variables its engine counters.
 *
 * A write of WEFT_RDV_THRESHOLD before MPI_Init must change what MPI_Init's
 * engine does: afterwards a 4 KiB message goes by rendezvous and a 16-byte
 * one eagerly, which the counters weft_rdv_sent and weft_eager_sent show
 * through handles allocated just before. Also: the interface before
 * MPI_T_init_thread and after MPI_T_finalize, nested init, every error class
 * of a bad index, name, handle or session, strings cut to the room given,
 * read-only and continuous variables, categories, writes refused once MPI
 * is initialized, counters still readable after MPI_Finalize. */
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

static int cvar_index(const char *name)
{
    int i = -1;
    MPI_MUST(MPI_T_cvar_get_index(name, &i));
    return i;
}

static int pvar_index(const char *name, int var_class)
{
    int i = -1;
    MPI_MUST(MPI_T_pvar_get_index(name, var_class, &i));
    return i;
}

static unsigned long long pread(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    unsigned long long v = ~0ull;
    MPI_MUST(MPI_T_pvar_read(s, h, &v));
    return v;
}

static void check_cvars(void)
{
    int n = 0;
    MPI_MUST(MPI_T_cvar_get_num(&n));
    CHECK(n > 10);
    for (int i = 0; i < n; i++) {
        int name_len = 0, desc_len = 0, verbosity, bind, scope;
        MPI_Datatype dt;
        MPI_T_enum en;
        /* Lengths first (no buffers), then the strings. */
        MPI_MUST(
            MPI_T_cvar_get_info(i, NULL, &name_len, NULL, NULL, NULL, NULL, &desc_len, NULL, NULL));
        char *name = malloc((size_t)name_len), *desc = malloc((size_t)desc_len);
        MPI_MUST(MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &dt, &en, desc, &desc_len,
                                     &bind, &scope));
        CHECK(!strncmp(name, "WEFT_", 5) && (int)strlen(name) + 1 == name_len);
        CHECK(strstr(desc, "(default: ") != NULL && (int)strlen(desc) + 1 == desc_len);
        CHECK(dt == MPI_CHAR && en == MPI_T_ENUM_NULL && bind == MPI_T_BIND_NO_OBJECT);
        CHECK(scope == MPI_T_SCOPE_LOCAL && verbosity >= MPI_T_VERBOSITY_USER_BASIC &&
              verbosity <= MPI_T_VERBOSITY_MPIDEV_ALL);
        int back = -1;
        MPI_MUST(MPI_T_cvar_get_index(name, &back));
        CHECK(back == i);
        free(name);
        free(desc);
    }
    /* A name cut to the room given, its NUL kept. */
    char small[6];
    int len = (int)sizeof small;
    MPI_MUST(MPI_T_cvar_get_info(cvar_index("WEFT_RDV_THRESHOLD"), small, &len, NULL, NULL, NULL,
                                 NULL, NULL, NULL, NULL));
    CHECK(len == 6 && !strcmp(small, "WEFT_"));

    int i;
    CHECK(MPI_T_cvar_get_index("WEFT_NO_SUCH_THING", &i) == MPI_T_ERR_INVALID_NAME);
    CHECK(MPI_T_cvar_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) ==
          MPI_T_ERR_INVALID_INDEX);
    CHECK(MPI_T_cvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) ==
          MPI_T_ERR_INVALID_INDEX);
    MPI_T_cvar_handle h;
    int count;
    CHECK(MPI_T_cvar_handle_alloc(n, NULL, &h, &count) == MPI_T_ERR_INVALID_INDEX);
    CHECK(MPI_T_cvar_read(MPI_T_CVAR_HANDLE_NULL, small) == MPI_T_ERR_INVALID_HANDLE);
    MPI_T_enum en = MPI_T_ENUM_NULL;
    int num;
    CHECK(MPI_T_enum_get_info(en, &num, NULL, NULL) == MPI_T_ERR_INVALID_HANDLE);
}

static void check_categories(void)
{
    int ncat = 0, ncvar = 0, npvar = 0, sum_c = 0, sum_p = 0;
    MPI_MUST(MPI_T_category_get_num(&ncat));
    MPI_MUST(MPI_T_cvar_get_num(&ncvar));
    MPI_MUST(MPI_T_pvar_get_num(&npvar));
    CHECK(ncat >= 2);
    for (int c = 0; c < ncat; c++) {
        char name[64];
        int len = (int)sizeof name, nc, np, nsub;
        MPI_MUST(MPI_T_category_get_info(c, name, &len, NULL, NULL, &nc, &np, &nsub));
        int back = -1;
        MPI_MUST(MPI_T_category_get_index(name, &back));
        CHECK(back == c && nsub == 0);
        sum_c += nc;
        sum_p += np;
    }
    /* Every variable in exactly one category. */
    CHECK(sum_c == ncvar && sum_p == npvar);
    int tcp, idx[64], nc;
    MPI_MUST(MPI_T_category_get_index("weft_tcp", &tcp));
    MPI_MUST(MPI_T_category_get_info(tcp, NULL, NULL, NULL, NULL, &nc, NULL, NULL));
    CHECK(nc > 0 && nc <= 64);
    MPI_MUST(MPI_T_category_get_cvars(tcp, 64, idx));
    int tcp_if = cvar_index("WEFT_TCP_IF"), found = 0;
    for (int k = 0; k < nc; k++)
        found += idx[k] == tcp_if;
    CHECK(found == 1);
    int stamp = -1;
    MPI_MUST(MPI_T_category_changed(&stamp));
    CHECK(stamp >= 0);
    CHECK(MPI_T_category_get_index("no_such_category", &tcp) == MPI_T_ERR_INVALID_NAME);
    CHECK(MPI_T_category_get_cvars(ncat, 64, idx) == MPI_T_ERR_INVALID_INDEX);
}

int main(int argc, char **argv)
{
    int provided = -1, n;
    CHECK(MPI_T_cvar_get_num(&n) == MPI_T_ERR_NOT_INITIALIZED);
    CHECK(MPI_T_finalize() == MPI_T_ERR_NOT_INITIALIZED);
    MPI_MUST(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE);
    check_cvars();
    check_categories();

    /* Before MPI_Init: the threshold written is the one MPI_Init uses. */
    MPI_T_cvar_handle thr;
    int count = 0;
    MPI_MUST(MPI_T_cvar_handle_alloc(cvar_index("WEFT_RDV_THRESHOLD"), NULL, &thr, &count));
    CHECK(count >= 16);
    char *val = calloc(1, (size_t)count);
    MPI_MUST(MPI_T_cvar_read(thr, val));
    const char *env = getenv("WEFT_RDV_THRESHOLD");
    CHECK(!strcmp(val, env && *env ? env : "driver's own"));
    MPI_MUST(MPI_T_cvar_write(thr, "1K"));
    MPI_MUST(MPI_T_cvar_read(thr, val));
    CHECK(!strcmp(val, "1K"));

    /* A nested init: one finalize later the interface still works. */
    MPI_MUST(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    MPI_MUST(MPI_T_finalize());
    MPI_MUST(MPI_T_cvar_get_num(&n));

    mt_init(&argc, &argv);
    CHECK(MPI_T_cvar_write(thr, "2K") == MPI_T_ERR_CVAR_SET_NOT_NOW);
    MPI_MUST(MPI_T_cvar_read(thr, val));
    CHECK(!strcmp(val, "1K"));

    /* Performance variables. */
    int npvar = 0;
    MPI_MUST(MPI_T_pvar_get_num(&npvar));
    CHECK(npvar > 0);
    for (int i = 0; i < npvar; i++) {
        char name[64];
        int len = (int)sizeof name, vc, bind, ro, cont, atomic;
        MPI_Datatype dt;
        MPI_MUST(MPI_T_pvar_get_info(i, name, &len, NULL, &vc, &dt, NULL, NULL, NULL, &bind, &ro,
                                     &cont, &atomic));
        CHECK(!strncmp(name, "weft_", 5) && dt == MPI_UNSIGNED_LONG_LONG && cont == 1);
        CHECK(bind == MPI_T_BIND_NO_OBJECT && (ro == 0 || ro == 1));
    }
    int i_rdv = pvar_index("weft_rdv_sent", MPI_T_PVAR_CLASS_COUNTER);
    int i_eager = pvar_index("weft_eager_sent", MPI_T_PVAR_CLASS_COUNTER);
    int i_max = pvar_index("weft_unexpected_max", MPI_T_PVAR_CLASS_HIGHWATERMARK);
    int i;
    CHECK(MPI_T_pvar_get_index("weft_rdv_sent", MPI_T_PVAR_CLASS_TIMER, &i) ==
          MPI_T_ERR_INVALID_NAME);

    MPI_T_pvar_session s, other;
    MPI_T_pvar_handle rdv, eager, peak, foreign;
    MPI_MUST(MPI_T_pvar_session_create(&s));
    MPI_MUST(MPI_T_pvar_session_create(&other));
    MPI_MUST(MPI_T_pvar_handle_alloc(s, i_rdv, NULL, &rdv, &count));
    CHECK(count == 1);
    MPI_MUST(MPI_T_pvar_handle_alloc(s, i_eager, NULL, &eager, &count));
    MPI_MUST(MPI_T_pvar_handle_alloc(s, i_max, NULL, &peak, &count));
    MPI_MUST(MPI_T_pvar_handle_alloc(other, i_rdv, NULL, &foreign, &count));
    CHECK(pread(s, rdv) == 0 && pread(s, eager) == 0);

    /* One 4 KiB and one 16-byte message to the partner (itself when alone). */
    int peer = mt_size == 1 ? 0 : (mt_rank ^ 1) < mt_size ? (mt_rank ^ 1) : mt_rank;
    static int big[1024], bigin[1024];
    int small[4] = {1, 2, 3, 4}, smallin[4];
    mt_fill(big, 1024, mt_rank);
    MPI_Request rq[4];
    MPI_MUST(MPI_Irecv(bigin, 1024, MPI_INT, peer, 1, MPI_COMM_WORLD, &rq[0]));
    MPI_MUST(MPI_Irecv(smallin, 4, MPI_INT, peer, 2, MPI_COMM_WORLD, &rq[1]));
    MPI_MUST(MPI_Isend(big, 1024, MPI_INT, peer, 1, MPI_COMM_WORLD, &rq[2]));
    MPI_MUST(MPI_Isend(small, 4, MPI_INT, peer, 2, MPI_COMM_WORLD, &rq[3]));
    MPI_MUST(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
    CHECK(mt_verify(bigin, 1024, peer) && smallin[3] == 4);
    CHECK(pread(s, rdv) == 1);   /* 4 KiB > the 1K written before MPI_Init */
    CHECK(pread(s, eager) == 1); /* 16 bytes */
    CHECK(pread(other, foreign) == 1);

    /* Reset, readreset and write are per handle. */
    unsigned long long v = 0;
    MPI_MUST(MPI_T_pvar_readreset(s, eager, &v));
    CHECK(v == 1 && pread(s, eager) == 0);
    MPI_MUST(MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES));
    CHECK(pread(s, rdv) == 0 && pread(other, foreign) == 1);
    v = 41;
    MPI_MUST(MPI_T_pvar_write(s, rdv, &v));
    CHECK(pread(s, rdv) == 41);
    /* A high-water mark is read-only; continuous variables neither start nor stop. */
    CHECK(MPI_T_pvar_reset(s, peak) == MPI_T_ERR_PVAR_NO_WRITE);
    CHECK(MPI_T_pvar_write(s, peak, &v) == MPI_T_ERR_PVAR_NO_WRITE);
    CHECK(MPI_T_pvar_readreset(s, peak, &v) == MPI_T_ERR_PVAR_NO_WRITE);
    CHECK(MPI_T_pvar_start(s, rdv) == MPI_T_ERR_PVAR_NO_STARTSTOP);
    CHECK(MPI_T_pvar_stop(s, rdv) == MPI_T_ERR_PVAR_NO_STARTSTOP);
    CHECK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES) == MPI_SUCCESS);
    /* Handles belong to their session. */
    CHECK(MPI_T_pvar_read(s, foreign, &v) == MPI_T_ERR_INVALID_HANDLE);
    CHECK(MPI_T_pvar_read(s, MPI_T_PVAR_ALL_HANDLES, &v) == MPI_T_ERR_INVALID_HANDLE);
    CHECK(MPI_T_pvar_read(MPI_T_PVAR_SESSION_NULL, rdv, &v) == MPI_T_ERR_INVALID_SESSION);
    CHECK(MPI_T_pvar_handle_alloc(s, npvar, NULL, &foreign, &count) == MPI_T_ERR_INVALID_INDEX);
    MPI_MUST(MPI_T_pvar_session_free(&other));
    CHECK(other == MPI_T_PVAR_SESSION_NULL);
    CHECK(MPI_T_pvar_read(other, foreign, &v) == MPI_T_ERR_INVALID_SESSION);
    MPI_MUST(MPI_T_pvar_handle_free(s, &peak));
    CHECK(peak == MPI_T_PVAR_HANDLE_NULL);

    MPI_MUST(MPI_T_pvar_reset(s, eager));
    int rc = mt_finish("mpi_t");

    /* After MPI_Finalize: the counters as they were, no more writes. The
     * closing exchange of mt_finish was eager and came after the reset. */
    long failed_at = mt_failed;
    CHECK(pread(s, rdv) == 41);
    CHECK(pread(s, eager) ==
          (mt_size > 1 ? (mt_rank == 0 ? (unsigned long long)mt_size - 1 : 1) : 0));
    CHECK(MPI_T_cvar_write(thr, "4K") == MPI_T_ERR_CVAR_SET_NEVER);
    MPI_MUST(MPI_T_cvar_handle_free(&thr));
    CHECK(thr == MPI_T_CVAR_HANDLE_NULL);
    MPI_MUST(MPI_T_pvar_session_free(&s));
    MPI_MUST(MPI_T_finalize());
    CHECK(MPI_T_pvar_get_num(&n) == MPI_T_ERR_NOT_INITIALIZED);
    free(val);
    if (mt_failed != failed_at)
        fprintf(stderr, "[rank %d] mpi_t: %ld checks failed after MPI_Finalize\n", mt_rank,
                mt_failed - failed_at);
    return rc || mt_failed != failed_at;
}
