/* MPI_Sendrecv_replace of more than INT_MAX bytes: 513 elements of a 4 MiB
 * contiguous type (2 GiB + 4 MiB), a small count whose bytes do not fit an
 * int. The packed copy went out as an int count of MPI_BYTE, which turned
 * negative (MPI_ERR_COUNT), and past 4 GiB would have wrapped and silently
 * truncated. Each rank needs about 4.1 GiB (the buffer and the copy); the
 * test is skipped (77) where the machine has less available for all ranks,
 * and under ThreadSanitizer, whose shadow memory would take several times
 * that. */
#include <stdint.h>

#include "mpitest.h"

#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif

#define ELEM_INTS (1 << 20) /* 4 MiB elements */
#define COUNT     513       /* 2 GiB + 4 MiB in all */

static long long mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    long long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb < 0 ? -1 : kb * 1024;
}

static inline int pattern(size_t i, int key)
{
    return (int)((uint32_t)i * 2654435761u) ^ key;
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
#ifdef UNDER_TSAN
    if (mt_rank == 0)
        printf("mpi_sendrecv_big: skipped under ThreadSanitizer (its shadow of 4 GiB)\n");
    MPI_Finalize();
    return 77;
#endif
    size_t n = (size_t)COUNT * ELEM_INTS, bytes = n * sizeof(int);
    /* One decision for all: every rank needs the buffer and the copy, and a
     * margin for the rest of the machine. */
    long long need = (long long)mt_size * (long long)(2 * bytes) + (1ll << 30);
    int enough = mt_rank != 0 || mem_available() >= need;
    MPI_MUST(MPI_Bcast(&enough, 1, MPI_INT, 0, MPI_COMM_WORLD));
    int *buf = enough ? malloc(bytes) : NULL;
    int have = buf != NULL, all_have = 0;
    MPI_MUST(MPI_Allreduce(&have, &all_have, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (!all_have) {
        if (mt_rank == 0)
            printf("mpi_sendrecv_big: skipped, %.1f GiB of memory not available\n",
                   (double)need / (1 << 30));
        free(buf);
        MPI_Finalize();
        return 77;
    }
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    for (size_t i = 0; i < n; i++)
        buf[i] = pattern(i, mt_rank);
    MPI_Datatype elem;
    MPI_MUST(MPI_Type_contiguous(ELEM_INTS, MPI_INT, &elem));
    MPI_MUST(MPI_Type_commit(&elem));
    MPI_Status st;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Sendrecv_replace(buf, COUNT, elem, right, 4, left, 4, MPI_COMM_WORLD, &st);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    CHECK(rc == MPI_SUCCESS);
    if (rc == MPI_SUCCESS) {
        int count = -1;
        MPI_Count elements = -1;
        MPI_MUST(MPI_Get_count(&st, elem, &count));
        MPI_MUST(MPI_Get_elements_x(&st, MPI_INT, &elements));
        CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 4 && count == COUNT);
        CHECK(elements == (MPI_Count)n);
        size_t bad = 0;
        for (size_t i = 0; i < n; i++)
            bad += buf[i] != pattern(i, left);
        CHECK(bad == 0);
    }
    MPI_MUST(MPI_Type_free(&elem));
    free(buf);
    return mt_finish("mpi_sendrecv_big");
}
