/* OpenSHMEM's C11 generic forms: each picks the typed routine from its
 * destination's type, with and without a context first. */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>

static long l;
static int i32;
static double d;
static unsigned long long ull;

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "PE %d: line %d: %s\n", shmem_my_pe(), __LINE__, #c);                  \
            shmem_global_exit(1);                                                                  \
        }                                                                                          \
    } while (0)

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes(), right = (me + 1) % npes;
    long lv = me;
    shmem_put(&l, &lv, 1, right);
    shmem_p(&i32, me + 10, right);
    shmem_p(SHMEM_CTX_DEFAULT, &d, me + 0.5, right);
    shmem_barrier_all();
    int left = (me + npes - 1) % npes;
    CHECK(l == left && i32 == left + 10 && d == left + 0.5);
    long got;
    shmem_get(&got, &l, 1, right);
    CHECK(got == me);
    CHECK(shmem_g(&i32, right) == me + 10);
    CHECK(shmem_g(SHMEM_CTX_DEFAULT, &d, right) == me + 0.5);
    shmem_barrier_all();
    (void)shmem_atomic_fetch_add(&ull, 2ull, 0);
    shmem_atomic_inc(SHMEM_CTX_DEFAULT, &ull, 0);
    shmem_atomic_add(&l, 5L, me);
    CHECK(shmem_atomic_fetch(&l, me) == left + 5);
    CHECK(shmem_atomic_compare_swap(&i32, left + 10, 99, me) == left + 10 && i32 == 99);
    CHECK(shmem_atomic_swap(&d, 1.5, me) == left + 0.5 && d == 1.5);
    shmem_atomic_set(&i32, 7, me);
    shmem_atomic_or(&ull, 0ull, 0);
    shmem_barrier_all();
    if (me == 0)
        CHECK(ull == 3ull * (unsigned long long)npes);
    shmem_barrier_all();
    shmem_p(&i32, 42, right);
    shmem_wait_until(&i32, SHMEM_CMP_EQ, 42);
    CHECK(shmem_test(&i32, SHMEM_CMP_EQ, 42));
    /* Put with signal, collectives and array waits, generic too. */
    static long arr[4], res[4], mine[4]; /* a collective's source is symmetric too */
    static uint64_t sig;
    for (int k = 0; k < 4; k++)
        mine[k] = me;
    shmem_barrier_all();
    shmem_put_signal(arr, mine, 4, &sig, 1, SHMEM_SIGNAL_ADD, right);
    shmem_signal_wait_until(&sig, SHMEM_CMP_GE, 1);
    CHECK(arr[3] == left);
    shmem_put64_signal(arr, mine, 1, &sig, 1, SHMEM_SIGNAL_ADD, right);
    shmem_signal_wait_until(&sig, SHMEM_CMP_GE, 2);
    shmem_barrier_all();
    shmem_sum_reduce(SHMEM_TEAM_WORLD, res, mine, 4);
    CHECK(res[0] == (long)npes * (npes - 1) / 2);
    shmem_broadcast(SHMEM_TEAM_WORLD, res, mine, 4, 0);
    CHECK(res[2] == 0);
    long flags[2] = {1, 1};
    CHECK(shmem_test_all(flags, 2, NULL, SHMEM_CMP_EQ, 1L));
    shmem_finalize();
    if (me == 0)
        printf("shmem_generic: %d PEs ok\n", npes);
    return 0;
}
