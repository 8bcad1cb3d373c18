/* taskrt: a small dataflow task runtime over MPI or weft's active messages.
 *
 * Sequential task flow, as StarPU-MPI: every rank submits the same tasks in
 * the same order; a task names the tiles it reads (TASKRT_R) and the one it
 * writes (TASKRT_RW, at most one), and runs on the rank that owns that tile.
 * From the order alone each rank knows which versions of which tiles it
 * needs from whom and which of its own it must send where: a tile's new
 * version leaves for every rank with a task reading it as soon as the task
 * that wrote it ends, and is received into a buffer posted in advance. On
 * each rank the tasks run on worker threads as their inputs arrive; the
 * calling thread of taskrt_run drives the communication.
 *
 * Back ends: TASKRT_MPI (MPI_Isend/MPI_Irecv/MPI_Testsome, any MPI, the
 * library initialized with at least MPI_THREAD_FUNNELED) and, built against
 * weft, TASKRT_NATIVE (weft_am_send with the tile as payload; arrivals popped
 * from a completion queue, large tiles received by rendezvous straight into
 * the posted buffer) and TASKRT_BCAST (weft's tagged calls, a tile version
 * that leaves for several ranks at once sent by one dynamic broadcast,
 * weft/weft_bcast.h, which the ranks it reaches forward down a tree). MPI
 * must be initialized in every case (rank, size and the final barrier come
 * from it). */
#ifndef TASKRT_H
#define TASKRT_H

#include <stddef.h>
#include <stdint.h>

typedef struct taskrt taskrt_t;

enum { TASKRT_MPI, TASKRT_NATIVE, TASKRT_BCAST };

/* "mpi", "native", "bcast": the back end's name, or -1 from taskrt_backend. */
int taskrt_backend(const char *name);
const char *taskrt_backend_name(int backend);
enum { TASKRT_R = 1, TASKRT_RW = 2 };

/* A task's work: tiles[i] is the memory of the task's i-th access (the
 * rank's own tile, or the received copy), args its arguments. */
typedef void (*taskrt_fn)(void **tiles, const void *args);

/* A runtime for ntiles tiles of tile_bytes each, tile t owned by rank
 * owner(t, arg), with nworkers worker threads. 0, or -1 (said on stderr:
 * TASKRT_NATIVE or TASKRT_BCAST without weft, out of memory). */
int taskrt_create(int backend, int nworkers, int ntiles, size_t tile_bytes,
                  int (*owner)(int tile, void *arg), void *arg, taskrt_t **out);

/* The memory of tile t, which this rank owns (NULL otherwise). */
void *taskrt_tile(taskrt_t *rt, int tile);

/* Submits a task: n accesses, tiles[i] in modes[i]; args (argsize bytes)
 * are copied. Same calls, same order, on every rank. */
void taskrt_submit(taskrt_t *rt, taskrt_fn fn, const void *args, size_t argsize, int n,
                   const int *tiles, const int *modes);

/* Runs every task submitted; returns once this rank's are done and all
 * ranks got here. 0, or -1 on a communication error (said). */
int taskrt_run(taskrt_t *rt);

typedef struct {
    long tasks;      /* tasks run here */
    long sent, recv; /* tile versions sent and received */
} taskrt_stats_t;

void taskrt_stats(const taskrt_t *rt, taskrt_stats_t *out);
void taskrt_free(taskrt_t *rt);

#endif
