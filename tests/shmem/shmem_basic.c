/* OpenSHMEM through oshrun: setup and query, symmetric static data and heap,
 * put/get/p/g (blocking, non-blocking, strided), atomics, put-with-signal,
 * wait_until, locks, contexts, and the collectives on teams and on active
 * sets, at whatever number of PEs the test is run with. Every check prints
 * what it saw and the test fails on the first wrong value. */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int me, npes;
static long static_word;          /* .bss: symmetric */
static int static_array[8] = {1}; /* .data: symmetric */
static long lock;
static long pSync[SHMEM_BARRIER_SYNC_SIZE];
static long pWrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + 64];

#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "PE %d: %s:%d: check failed: %s: ", me, __FILE__, __LINE__, #c);       \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            shmem_global_exit(1);                                                                  \
        }                                                                                          \
    } while (0)

static void test_rma(void)
{
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    /* Static data: each PE puts its number into its right neighbor's. */
    shmem_long_p(&static_word, 1000 + me, right);
    shmem_int_put(static_array + 1, &me, 1, right);
    shmem_barrier_all();
    CHECK(static_word == 1000 + left, "static_word %ld", static_word);
    CHECK(static_array[1] == left && static_array[0] == 1, "static_array %d %d", static_array[0],
          static_array[1]);
    CHECK(shmem_long_g(&static_word, right) == 1000 + me, "g");

    /* Heap: a block of 1 MiB, written by the left neighbor. */
    size_t n = 1 << 17;
    long *buf = shmem_malloc(n * sizeof *buf);
    long *src = malloc(n * sizeof *src);
    CHECK(buf && src, "allocation");
    for (size_t i = 0; i < n; i++)
        src[i] = (long)(me * 1000003 + i);
    shmem_long_put_nbi(buf, src, n, right);
    shmem_quiet();
    shmem_barrier_all();
    for (size_t i = 0; i < n; i++)
        CHECK(buf[i] == (long)(left * 1000003 + i), "buf[%zu] = %ld", i, buf[i]);
    long *got = malloc(n * sizeof *got);
    shmem_getmem(got, buf, n * sizeof *buf, right);
    for (size_t i = 0; i < n; i++)
        CHECK(got[i] == (long)(me * 1000003 + i), "get[%zu] = %ld", i, got[i]);

    /* Strided: every third element of src into every second of the peer's. */
    shmem_barrier_all();
    memset(buf, 0, 64 * sizeof *buf);
    shmem_barrier_all();
    shmem_long_iput(buf, src, 2, 3, 10, right);
    shmem_barrier_all();
    for (int i = 0; i < 10; i++)
        CHECK(buf[2 * i] == (long)(left * 1000003 + 3 * i) && buf[2 * i + 1] == 0,
              "iput element %d: %ld", i, buf[2 * i]);
    long strided[10];
    shmem_long_iget(strided, buf, 1, 2, 10, me);
    for (int i = 0; i < 10; i++)
        CHECK(strided[i] == (long)(left * 1000003 + 3 * i), "iget %d", i);
    CHECK(shmem_addr_accessible(buf, right) && !shmem_addr_accessible(src, right), "accessible");
    CHECK(shmem_ptr(buf, me) == buf && shmem_ptr(src, right) == NULL, "shmem_ptr");
    shmem_barrier_all();
    free(got);
    free(src);
    shmem_free(buf);

    /* An alignment larger than a page: aligned, and the same block on every
     * PE (a put into it lands in the neighbor's). */
    char *small = shmem_malloc(8);
    long *aligned = shmem_align((size_t)1 << 20, 3 * sizeof(long));
    CHECK(aligned && ((uintptr_t)aligned & ((1u << 20) - 1)) == 0, "shmem_align gave %p",
          (void *)aligned);
    shmem_long_p(&aligned[2], me, right);
    shmem_barrier_all();
    CHECK(aligned[2] == left, "aligned block: %ld", aligned[2]);
    aligned = shmem_realloc(aligned, 4096 * sizeof(long));
    CHECK(aligned && aligned[2] == left, "realloc kept the contents");
    shmem_free(aligned);
    shmem_free(small);
}

static void test_amo(void)
{
    long *counter = shmem_calloc(1, sizeof *counter);
    unsigned *bits = shmem_calloc(1, sizeof *bits);
    double *d = shmem_calloc(1, sizeof *d);
    /* Every PE adds to PE 0's counter 100 times, half fetching. */
    for (int i = 0; i < 100; i++) {
        if (i & 1)
            shmem_long_atomic_add(counter, me + 1, 0);
        else
            (void)shmem_long_atomic_fetch_add(counter, me + 1, 0);
    }
    shmem_uint_atomic_or(bits, 1u << (me % 32), 0);
    shmem_barrier_all();
    if (me == 0) {
        long want = 100L * npes * (npes + 1) / 2;
        CHECK(*counter == want, "counter %ld, want %ld", *counter, want);
        unsigned wb = 0;
        for (int p = 0; p < npes; p++)
            wb |= 1u << (p % 32);
        CHECK(*bits == wb, "bits %x", *bits);
    }
    shmem_barrier_all();
    /* compare_swap: exactly one PE wins each round. */
    long *owner = shmem_malloc(sizeof *owner);
    *owner = -1;
    shmem_barrier_all();
    long old = shmem_long_atomic_compare_swap(owner, -1, me, 0);
    shmem_barrier_all();
    long winner = shmem_long_atomic_fetch(owner, 0);
    CHECK((old == -1) == (winner == me), "cswap old %ld winner %ld", old, winner);
    shmem_double_atomic_set(d, 2.5, (me + 1) % npes);
    shmem_barrier_all();
    CHECK(*d == 2.5, "double set %g", *d);
    CHECK(shmem_double_atomic_swap(d, 1.0, me) == 2.5 && *d == 1.0, "double swap");
    long f;
    shmem_long_atomic_fetch_inc_nbi(&f, counter, 0);
    shmem_quiet();
    shmem_barrier_all();
    shmem_free(owner);
    shmem_free(d);
    shmem_free(bits);
    shmem_free(counter);
}

static void test_signal_wait(void)
{
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    uint64_t *sig = shmem_calloc(1, sizeof *sig);
    int *data = shmem_calloc(4, sizeof *data);
    int mine[4] = {me, me + 1, me + 2, me + 3};
    shmem_int_put_signal(data, mine, 4, sig, 7, SHMEM_SIGNAL_SET, right);
    CHECK(shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 7) == 7, "signal");
    CHECK(data[0] == left && data[3] == left + 3, "data under the signal: %d %d", data[0], data[3]);
    CHECK(shmem_signal_fetch(sig) == 7, "signal_fetch");
    /* wait_until_any on a vector each PE's left neighbor sets one of. */
    long *flags = shmem_calloc(4, sizeof *flags);
    shmem_long_p(&flags[2], 1, right);
    size_t i = shmem_long_wait_until_any(flags, 4, NULL, SHMEM_CMP_EQ, 1);
    CHECK(i == 2, "wait_until_any gave %zu", i);
    int status[4] = {0, 0, 1, 0};
    CHECK(shmem_long_test_any(flags, 4, status, SHMEM_CMP_EQ, 1) == SIZE_MAX, "test_any masked");
    CHECK(shmem_long_test_all(flags, 4, status, SHMEM_CMP_EQ, 0) == 1, "test_all");
    shmem_barrier_all();
    shmem_free(flags);
    shmem_free(data);
    shmem_free(sig);
}

static void test_lock(void)
{
    long *total = shmem_calloc(1, sizeof *total);
    for (int i = 0; i < 50; i++) {
        shmem_set_lock(&lock);
        long v = shmem_long_g(total, 0); /* read-modify-write under the lock */
        shmem_long_p(total, v + 1, 0);
        shmem_quiet();
        shmem_clear_lock(&lock);
    }
    shmem_barrier_all();
    if (me == 0)
        CHECK(*total == 50L * npes, "locked total %ld", *total);
    shmem_barrier_all(); /* PE 0 has read the total */
    /* test_lock: every PE tries the free lock at once; exactly one gets it,
     * the others are refused while it holds it. */
    int got = shmem_test_lock(&lock) == 0;
    shmem_long_atomic_add(total, got, 0);
    shmem_barrier_all();
    if (me == 0)
        CHECK(*total == 50L * npes + 1, "test_lock winners: %ld", *total - 50L * npes);
    if (!got)
        CHECK(shmem_test_lock(&lock) == 1, "test_lock while another PE holds it");
    shmem_barrier_all();
    if (got)
        shmem_clear_lock(&lock);
    shmem_barrier_all();
    CHECK(shmem_test_lock(&lock) == 0 || npes > 1, "test_lock after clear");
    shmem_barrier_all();
    if (shmem_long_atomic_fetch(&lock, 0) == me + 1)
        shmem_clear_lock(&lock);
    shmem_barrier_all();
    shmem_free(total);
}

static void test_ctx(void)
{
    shmem_ctx_t ctx;
    CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0, "ctx_create");
    long *x = shmem_calloc(1, sizeof *x);
    shmem_ctx_long_atomic_add(ctx, x, 1, 0);
    shmem_ctx_quiet(ctx);
    shmem_team_t team;
    CHECK(shmem_ctx_get_team(ctx, &team) == 0 && team == SHMEM_TEAM_WORLD, "ctx team");
    shmem_ctx_destroy(ctx);
    shmem_barrier_all();
    if (me == 0)
        CHECK(*x == npes, "ctx adds %ld", *x);
    shmem_free(x);
}

static void test_coll(void)
{
    long *src = shmem_malloc(4 * sizeof *src), *dst = shmem_malloc(4 * (size_t)npes * sizeof *dst);
    for (int i = 0; i < 4; i++)
        src[i] = me * 10 + i;
    shmem_long_broadcast(SHMEM_TEAM_WORLD, dst, src, 4, npes - 1);
    for (int i = 0; i < 4; i++)
        CHECK(dst[i] == (npes - 1) * 10 + i, "broadcast %d: %ld", i, dst[i]);
    shmem_long_fcollect(SHMEM_TEAM_WORLD, dst, src, 4);
    for (int p = 0; p < npes; p++)
        for (int i = 0; i < 4; i++)
            CHECK(dst[p * 4 + i] == p * 10 + i, "fcollect %d %d: %ld", p, i, dst[p * 4 + i]);
    /* collect: PE p gives p % 3 + 1 elements. */
    shmem_long_collect(SHMEM_TEAM_WORLD, dst, src, (size_t)(me % 3 + 1));
    size_t k = 0;
    for (int p = 0; p < npes; p++)
        for (int i = 0; i < p % 3 + 1; i++, k++)
            CHECK(dst[k] == p * 10 + i, "collect %zu: %ld", k, dst[k]);
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, dst, src, 4);
    for (int i = 0; i < 4; i++)
        CHECK(dst[i] == 10L * npes * (npes - 1) / 2 + (long)i * npes, "sum %d: %ld", i, dst[i]);
    shmem_long_max_reduce(SHMEM_TEAM_WORLD, src, src, 4); /* in place */
    CHECK(src[0] == (npes - 1) * 10, "max in place %ld", src[0]);
    /* alltoall: element j of PE p's source goes to PE j. */
    for (int j = 0; j < npes; j++)
        dst[j] = me * 100 + j;
    long *a2a = shmem_malloc((size_t)npes * sizeof *a2a);
    shmem_long_alltoall(SHMEM_TEAM_WORLD, a2a, dst, 1);
    for (int p = 0; p < npes; p++)
        CHECK(a2a[p] == p * 100 + me, "alltoall from %d: %ld", p, a2a[p]);
    /* The deprecated active-set forms, on the even PEs. */
    int evens = (npes + 1) / 2;
    if (me % 2 == 0) {
        for (int i = 0; i < 4; i++)
            src[i] = me + i;
        shmem_long_sum_to_all(dst, src, 4, 0, 1, evens, pWrk, pSync);
        long want = 0;
        for (int p = 0; p < npes; p += 2)
            want += p;
        CHECK(dst[0] == want && dst[3] == want + 3L * evens, "sum_to_all %ld", dst[0]);
        dst[0] = -5;
        shmem_broadcast64(dst, src, 4, 0, 0, 1, evens, pSync);
        CHECK(me == 0 ? dst[0] == -5 : dst[0] == 0, "broadcast64 %ld", dst[0]);
        shmem_barrier(0, 1, evens, pSync);
        for (int i = 0; i < SHMEM_BARRIER_SYNC_SIZE; i++)
            CHECK(pSync[i] == SHMEM_SYNC_VALUE, "pSync left as it was");
    }
    shmem_barrier_all();
    shmem_free(a2a);
    shmem_free(dst);
    shmem_free(src);
}

static void test_teams(void)
{
    shmem_team_t odd, x, y;
    int nodd = npes / 2;
    int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, nodd > 0 ? nodd : 1, NULL, 0, &odd);
    CHECK(rc == 0 || nodd == 0, "split_strided rc %d", rc);
    if (me % 2 == 1) {
        CHECK(odd != SHMEM_TEAM_INVALID && shmem_team_my_pe(odd) == me / 2, "odd my_pe");
        CHECK(shmem_team_translate_pe(odd, shmem_team_my_pe(odd), SHMEM_TEAM_WORLD) == me,
              "translate");
        CHECK(shmem_team_n_pes(odd) == nodd, "odd n_pes %d", shmem_team_n_pes(odd));
        CHECK(shmem_team_sync(odd) == 0, "team_sync");
        shmem_team_destroy(odd);
    } else if (nodd > 0) {
        CHECK(odd == SHMEM_TEAM_INVALID, "even PE in the odd team");
    }
    /* The shared team: the PEs this one maps, each reachable by shmem_ptr. */
    int nshared = shmem_team_n_pes(SHMEM_TEAM_SHARED);
    CHECK(nshared >= 1 && shmem_team_my_pe(SHMEM_TEAM_SHARED) >= 0, "shared team");
    for (int i = 0; i < nshared; i++) {
        int pe = shmem_team_translate_pe(SHMEM_TEAM_SHARED, i, SHMEM_TEAM_WORLD);
        CHECK(pe >= 0 && shmem_ptr(&lock, pe) != NULL, "shared team member %d (PE %d)", i, pe);
    }
    CHECK(shmem_team_split_2d(SHMEM_TEAM_WORLD, 2, NULL, 0, &x, NULL, 0, &y) == 0, "split_2d");
    CHECK(shmem_team_my_pe(x) == me % 2 && shmem_team_my_pe(y) == me / 2, "2d: %d %d",
          shmem_team_my_pe(x), shmem_team_my_pe(y));
    int *in = shmem_malloc(sizeof *in), *out = shmem_malloc(sizeof *out);
    *in = me;
    shmem_int_sum_reduce(y, out, in, 1);
    int want = 0;
    for (int p = me % 2; p < npes; p += 2)
        want += p;
    CHECK(*out == want, "sum over the y team: %d, want %d", *out, want);
    shmem_team_destroy(x);
    shmem_team_destroy(y);
    shmem_barrier_all();
    shmem_free(out);
    shmem_free(in);
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    int major, minor;
    shmem_info_get_version(&major, &minor);
    CHECK(major == 1 && minor == 5, "version %d.%d", major, minor);
    char name[SHMEM_MAX_NAME_LEN];
    shmem_info_get_name(name);
    CHECK(strcmp(name, "weft") == 0, "name %s", name);
    CHECK(shmem_pe_accessible((me + 1) % npes) && !shmem_pe_accessible(npes), "pe_accessible");
    test_rma();
    test_amo();
    test_signal_wait();
    test_lock();
    test_ctx();
    test_coll();
    test_teams();
    shmem_finalize();
    if (me == 0)
        printf("shmem_basic: %d PEs ok\n", npes);
    return 0;
}
