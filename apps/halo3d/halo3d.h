/* What the OpenSHMEM and MPI versions of halo3d share: the decomposition of
 * a 3-D grid over processes and of each process's block over threads, the
 * stencil, the packing of faces, and the check against the known field.
 *
 * Each process holds an n x n x n block with a layer of ghost cells; its
 * threads own slabs of it along z. One iteration: a thread fills the ghost
 * cells of its slab from the faces its neighbors sent in the previous
 * iteration, updates its slab (u' = mean of the 6 neighbors + 1), then packs
 * and sends its own part of each face: the part of the x and y faces in its
 * slab, and the z faces for the first and last thread. Faces are received
 * into buffers of the iteration's parity, so one synchronization per
 * iteration suffices.
 *
 * The field starts as L = gx + 2 gy + 3 gz (global coordinates) and stays
 * L + k after k iterations, exactly (integers in doubles): a ghost cell that
 * is missing, misplaced or one iteration late shows as a wrong value. */
#ifndef HALO3D_H
#define HALO3D_H

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int n;              /* block edge */
    int dims[3], at[3]; /* process grid, and this process's place in it */
    int nbr[6];         /* neighbor process per face (-x,+x,-y,+y,-z,+z), -1: none */
    int threads;
} grid_t;

static inline size_t idx(const grid_t *g, int x, int y, int z)
{
    size_t e = (size_t)g->n + 2;
    return ((size_t)z * e + (size_t)y) * e + (size_t)x;
}

/* Splits np processes into a balanced 3-D grid, like MPI_Dims_create. */
static inline void grid_make(grid_t *g, int n, int threads, int me, int np)
{
    int d[3] = {1, 1, 1}, left = np;
    for (int f = 2; left > 1;) {
        if (left % f) {
            f++;
            continue;
        }
        int small = 0; /* give the factor to the smallest dimension */
        for (int i = 1; i < 3; i++)
            if (d[i] < d[small])
                small = i;
        d[small] *= f;
        left /= f;
    }
    g->n = n;
    g->threads = threads;
    memcpy(g->dims, d, sizeof d);
    g->at[0] = me % d[0];
    g->at[1] = me / d[0] % d[1];
    g->at[2] = me / (d[0] * d[1]);
    for (int f = 0; f < 6; f++) {
        int c[3] = {g->at[0], g->at[1], g->at[2]}, axis = f / 2;
        c[axis] += f % 2 ? 1 : -1;
        g->nbr[f] = c[axis] < 0 || c[axis] >= d[axis] ? -1 : c[0] + d[0] * (c[1] + d[1] * c[2]);
    }
}

/* The known field at cell (x, y, z) of this block (ghosts included) after k
 * iterations. */
static inline double known(const grid_t *g, int x, int y, int z, int k)
{
    long gx = (long)g->at[0] * g->n + x - 1, gy = (long)g->at[1] * g->n + y - 1,
         gz = (long)g->at[2] * g->n + z - 1;
    return (double)(gx + 2 * gy + 3 * gz + k);
}

/* Thread t's slab: z in [z0, z1). */
static inline void slab(const grid_t *g, int t, int *z0, int *z1)
{
    *z0 = 1 + (int)((long)g->n * t / g->threads);
    *z1 = 1 + (int)((long)g->n * (t + 1) / g->threads);
}

/* Thread t's part of face f: offset and length in a face buffer (n*n
 * doubles), or 0 length when the thread has none of it. */
static inline void face_part(const grid_t *g, int f, int t, size_t *off, size_t *len)
{
    int z0, z1;
    slab(g, t, &z0, &z1);
    if (f < 4) {
        *off = (size_t)(z0 - 1) * (size_t)g->n;
        *len = (size_t)(z1 - z0) * (size_t)g->n;
    } else {
        bool mine = f == 4 ? t == 0 : t == g->threads - 1;
        *off = 0;
        *len = mine ? (size_t)g->n * (size_t)g->n : 0;
    }
}

/* Copies thread t's part of face f between the block (the layer `plane`:
 * 1 or n for the interior faces, 0 or n+1 for the ghosts) and buf. */
static inline void face_copy(const grid_t *g, double *u, int f, int t, int plane, double *buf,
                             bool to_buf)
{
    int n = g->n, z0, z1;
    slab(g, t, &z0, &z1);
    if (f >= 4) {
        if ((f == 4 && t != 0) || (f == 5 && t != g->threads - 1))
            return;
        for (int y = 1; y <= n; y++)
            for (int x = 1; x <= n; x++) {
                double *c = &u[idx(g, x, y, plane)], *b = &buf[(size_t)(y - 1) * n + (x - 1)];
                if (to_buf)
                    *b = *c;
                else
                    *c = *b;
            }
        return;
    }
    for (int z = z0; z < z1; z++)
        for (int i = 1; i <= n; i++) {
            double *c = &u[f < 2 ? idx(g, plane, i, z) : idx(g, i, plane, z)];
            double *b = &buf[(size_t)(z - 1) * n + (i - 1)];
            if (to_buf)
                *b = *c;
            else
                *c = *b;
        }
}

/* The layer a face's data comes from (interior) or goes to (ghost). */
static inline int face_plane(const grid_t *g, int f, bool ghost)
{
    bool upper = f % 2;
    return ghost ? (upper ? g->n + 1 : 0) : (upper ? g->n : 1);
}

/* Ghosts of thread t's parts at the edge of the whole grid: the known field
 * of iteration k. */
static inline void boundary_ghosts(const grid_t *g, double *u, int t, int k)
{
    int n = g->n, z0, z1;
    slab(g, t, &z0, &z1);
    for (int f = 0; f < 6; f++) {
        if (g->nbr[f] >= 0)
            continue;
        int p = face_plane(g, f, true);
        if (f >= 4) {
            if ((f == 4 && t != 0) || (f == 5 && t != g->threads - 1))
                continue;
            for (int y = 1; y <= n; y++)
                for (int x = 1; x <= n; x++)
                    u[idx(g, x, y, p)] = known(g, x, y, p, k);
            continue;
        }
        for (int z = z0; z < z1; z++)
            for (int i = 1; i <= n; i++) {
                if (f < 2)
                    u[idx(g, p, i, z)] = known(g, p, i, z, k);
                else
                    u[idx(g, i, p, z)] = known(g, i, p, z, k);
            }
    }
}

/* One update of thread t's slab: out = mean of in's 6 neighbors + 1. */
static inline void stencil(const grid_t *g, const double *in, double *out, int t)
{
    int n = g->n, z0, z1;
    slab(g, t, &z0, &z1);
    size_t sx = 1, sy = (size_t)n + 2, sz = sy * sy;
    for (int z = z0; z < z1; z++)
        for (int y = 1; y <= n; y++) {
            size_t c = idx(g, 1, y, z);
            for (int x = 1; x <= n; x++, c++)
                out[c] =
                    (in[c - sx] + in[c + sx] + in[c - sy] + in[c + sy] + in[c - sz] + in[c + sz]) /
                        6.0 +
                    1.0;
        }
}

static inline void field_init(const grid_t *g, double *u)
{
    size_t e = (size_t)g->n + 2;
    for (size_t i = 0; i < e * e * e; i++)
        u[i] = -1e30; /* ghosts nobody filled stand out */
    for (int z = 1; z <= g->n; z++)
        for (int y = 1; y <= g->n; y++)
            for (int x = 1; x <= g->n; x++)
                u[idx(g, x, y, z)] = known(g, x, y, z, 0);
}

/* The cells of this block that differ from the known field after k. */
static inline long field_wrong(const grid_t *g, const double *u, int k)
{
    long bad = 0;
    for (int z = 1; z <= g->n; z++)
        for (int y = 1; y <= g->n; y++)
            for (int x = 1; x <= g->n; x++)
                bad += u[idx(g, x, y, z)] != known(g, x, y, z, k);
    return bad;
}

/* The two fields (ghosts included), initialized. 0, or -1 if out of memory. */
static inline int fields_make(const grid_t *g, double *fields[2])
{
    size_t e = (size_t)g->n + 2;
    for (int i = 0; i < 2; i++) {
        if (!(fields[i] = malloc(sizeof(double) * e * e * e)))
            return -1;
        field_init(g, fields[i]);
    }
    return 0;
}

/* Runs fn(0) here and fn(1..threads-1) on threads of their own; returns
 * when all are done. */
static inline void run_threads(int threads, void *(*fn)(void *))
{
    pthread_t *ids = malloc(sizeof *ids * (size_t)threads);
    if (!ids) {
        fprintf(stderr, "halo3d: out of memory\n");
        exit(1);
    }
    for (int t = 1; t < threads; t++)
        pthread_create(&ids[t], NULL, fn, (void *)(long)t);
    fn((void *)0);
    for (int t = 1; t < threads; t++)
        pthread_join(ids[t], NULL);
    free(ids);
}

/* Command line: --size n --iters k --threads t [--ctx KIND]. */
typedef struct {
    int n, iters, threads;
    const char *ctx;
} opts_t;

static inline int opts_parse(int argc, char **argv, opts_t *o, bool with_ctx)
{
    *o = (opts_t){.n = 64, .iters = 100, .threads = 1, .ctx = "private"};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--size") && i + 1 < argc)
            o->n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            o->iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            o->threads = atoi(argv[++i]);
        else if (with_ctx && !strcmp(argv[i], "--ctx") && i + 1 < argc)
            o->ctx = argv[++i];
        else
            return -1;
    }
    if (o->n < 1 || o->iters < 1 || o->threads < 1 || o->threads > o->n ||
        (with_ctx && strcmp(o->ctx, "default") && strcmp(o->ctx, "shared") &&
         strcmp(o->ctx, "private")))
        return -1;
    return 0;
}

#endif
