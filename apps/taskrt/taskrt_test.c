/* taskrt's own test: a random task graph whose sequential result is known.
 * T tiles of B bytes hold one value each (repeated over the whole tile, so a
 * partial transfer shows); task k reads up to 3 tiles and updates a fourth:
 * w = (3 w + sum of what it read + k) mod p. Every rank submits the same
 * tasks, the runtime runs them where the written tile lives, and at the end
 * every tile must hold what a sequential run gives. A read tile that is not
 * whole (another version's bytes in it) fails at once.
 *
 *   mpirun -n P taskrt_test [--backend mpi|native|bcast] [--tiles T] [--tasks K]
 *                           [--bytes B] [--workers W] [--seed S]
 */
#include <mpi.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "taskrt.h"

#define MOD 2305843009213693951ULL /* 2^61 - 1 */

static size_t bytes = 64;
static int size_;
static long bad_reads;
static pthread_mutex_t bad_lock = PTHREAD_MUTEX_INITIALIZER;

static int owner(int tile, void *arg)
{
    (void)arg;
    return (tile * 7 + 3) % size_;
}

static void tile_set(uint64_t *t, uint64_t v)
{
    for (size_t i = 0; i < bytes / sizeof *t; i++)
        t[i] = v;
}

static uint64_t tile_get(const uint64_t *t)
{
    for (size_t i = 1; i < bytes / sizeof *t; i++)
        if (t[i] != t[0]) {
            pthread_mutex_lock(&bad_lock);
            bad_reads++;
            pthread_mutex_unlock(&bad_lock);
            break;
        }
    return t[0];
}

typedef struct {
    int k, nread;
} args_t;

static void update(void **tiles, const void *arg)
{
    const args_t *a = arg;
    unsigned __int128 v = (unsigned __int128)tile_get(tiles[a->nread]) * 3 + (unsigned)a->k;
    for (int i = 0; i < a->nread; i++)
        v += tile_get(tiles[i]);
    tile_set(tiles[a->nread], (uint64_t)(v % MOD));
}

static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

int main(int argc, char **argv)
{
    int backend = TASKRT_MPI, ntiles = 16, ntasks = 400, workers = 2;
    uint64_t seed = 12345;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--backend"))
            backend = taskrt_backend(argv[i + 1]) < 0 ? TASKRT_MPI : taskrt_backend(argv[i + 1]);
        else if (!strcmp(argv[i], "--tiles"))
            ntiles = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--tasks"))
            ntasks = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--bytes"))
            bytes = (size_t)atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--workers"))
            workers = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--seed"))
            seed = (uint64_t)atoll(argv[i + 1]);
    }
    if (bytes < 8 || bytes % 8 || ntiles < 4) {
        fprintf(stderr, "taskrt_test: --bytes a multiple of 8, --tiles at least 4\n");
        return 2;
    }
    int provided, rank;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    taskrt_t *rt;
    if (taskrt_create(backend, workers, ntiles, bytes, owner, NULL, &rt) != 0) {
        MPI_Finalize();
        return 1;
    }
    uint64_t *ref = malloc(sizeof *ref * (size_t)ntiles);
    for (int t = 0; t < ntiles; t++) {
        ref[t] = (uint64_t)t + 1;
        if (taskrt_tile(rt, t))
            tile_set(taskrt_tile(rt, t), ref[t]);
    }
    for (int k = 0; k < ntasks; k++) {
        int tiles[4], modes[4] = {TASKRT_R, TASKRT_R, TASKRT_R, TASKRT_R};
        args_t a = {k, (int)(rng(&seed) % 4)};
        for (int i = 0; i <= a.nread; i++) {
            bool again;
            do { /* distinct tiles */
                tiles[i] = (int)(rng(&seed) % (uint64_t)ntiles);
                again = false;
                for (int j = 0; j < i; j++)
                    again |= tiles[j] == tiles[i];
            } while (again);
        }
        modes[a.nread] = TASKRT_RW;
        taskrt_submit(rt, update, &a, sizeof a, a.nread + 1, tiles, modes);
        /* The sequential run. */
        unsigned __int128 v = (unsigned __int128)ref[tiles[a.nread]] * 3 + (unsigned)k;
        for (int i = 0; i < a.nread; i++)
            v += ref[tiles[i]];
        ref[tiles[a.nread]] = (uint64_t)(v % MOD);
    }
    int rc = taskrt_run(rt);
    long wrong = 0, all_wrong, all_bad;
    for (int t = 0; t < ntiles; t++)
        if (taskrt_tile(rt, t))
            wrong += tile_get(taskrt_tile(rt, t)) != ref[t];
    MPI_Allreduce(&wrong, &all_wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&bad_reads, &all_bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    taskrt_stats_t st;
    taskrt_stats(rt, &st);
    long mine[3] = {st.tasks, st.sent, st.recv}, sum[3];
    MPI_Allreduce(mine, sum, 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    bool ok = rc == 0 && all_wrong == 0 && all_bad == 0 && sum[0] == ntasks && sum[1] == sum[2];
    if (rank == 0)
        printf("taskrt_test %s: %d ranks x %d workers, %d tiles of %zu B, %d tasks: %ld run, %ld "
               "tiles sent, %ld received; %ld tiles wrong, %ld torn reads: %s\n",
               taskrt_backend_name(backend), size_, workers, ntiles, bytes, ntasks, sum[0], sum[1],
               sum[2], all_wrong, all_bad, ok ? "ok" : "FAILED");
    free(ref);
    taskrt_free(rt);
    MPI_Finalize();
    return ok ? 0 : 1;
}
