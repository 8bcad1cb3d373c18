/* Matrices for spmvm. Every rank builds only its own rows: the generated
 * kinds row by row from a formula, a Matrix Market file by reading it whole
 * and keeping its rows (and, for a symmetric one, the mirror of the others). */
#include "matrix.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

long rows_start(long n, int r, int size)
{
    return (long)((__int128)n * r / size);
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* Row i of the Holstein-Hubbard-like matrix: 7 to 15 non-zeros. Seed 001's
 * HMeP matrix couples electronic states (near the diagonal) with phonon
 * states (blocks far off it): here a diagonal, hops to i±1 and i±3, phonon
 * couplings to i±B and i±2B (B = n/64), and up to 6 more within ±8B, all
 * from a hash of i, so that a rank needs entries of ranks far away. */
static int hh_row(long n, long i, long *cols, double *vals)
{
    long b = n / 64 > 1 ? n / 64 : 1;
    long cand[16];
    int k = 0;
    cand[k++] = i;
    const long offs[] = {1, -1, 3, -3, b, -b, 2 * b, -2 * b};
    uint64_t h = mix((uint64_t)i + 1);
    int want = 7 + (int)(h % 9); /* 7..15 */
    for (size_t o = 0; o < sizeof offs / sizeof *offs && k < want; o++)
        if (i + offs[o] >= 0 && i + offs[o] < n)
            cand[k++] = i + offs[o];
    for (int extra = 0; k < want && extra < 12; extra++) {
        h = mix(h);
        long j = i + (long)(h % (uint64_t)(16 * b + 1)) - 8 * b;
        if (j >= 0 && j < n)
            cand[k++] = j;
    }
    qsort(cand, (size_t)k, sizeof *cand, cmp_long);
    int m = 0;
    for (int a = 0; a < k; a++) {
        if (m && cols[m - 1] == cand[a])
            continue;
        cols[m] = cand[a];
        vals[m] = cand[a] == i ? 4.0 + (double)(i % 5) * 0.25
                               : -0.5 - (double)(mix((uint64_t)(i * 31 + cand[a])) % 8) / 16.0;
        m++;
    }
    return m;
}

/* Row i of the 7-point Laplacian on an nx x ny x nz grid. */
static int poisson_row(long nx, long ny, long nz, long i, long *cols, double *vals)
{
    long x = i % nx, y = (i / nx) % ny, z = i / (nx * ny);
    int m = 0;
    long plane = nx * ny;
    if (z > 0)
        cols[m] = i - plane, vals[m++] = -1.0;
    if (y > 0)
        cols[m] = i - nx, vals[m++] = -1.0;
    if (x > 0)
        cols[m] = i - 1, vals[m++] = -1.0;
    cols[m] = i, vals[m++] = 6.0;
    if (x < nx - 1)
        cols[m] = i + 1, vals[m++] = -1.0;
    if (y < ny - 1)
        cols[m] = i + nx, vals[m++] = -1.0;
    if (z < nz - 1)
        cols[m] = i + plane, vals[m++] = -1.0;
    return m;
}

static int alloc_rows(rows_t *m, long nnz)
{
    long nrows = m->r1 - m->r0;
    m->rowptr = calloc((size_t)nrows + 1, sizeof *m->rowptr);
    m->col = malloc(sizeof *m->col * (size_t)(nnz > 0 ? nnz : 1));
    m->val = malloc(sizeof *m->val * (size_t)(nnz > 0 ? nnz : 1));
    return m->rowptr && m->col && m->val ? 0 : -1;
}

static int build_generated(rows_t *m, int kind, long nx, long ny, long nz)
{
    long nrows = m->r1 - m->r0;
    if (alloc_rows(m, nrows * 15) != 0)
        return -1;
    long at = 0;
    for (long i = m->r0; i < m->r1; i++) {
        m->rowptr[i - m->r0] = at;
        at += kind == 0 ? hh_row(m->n, i, m->col + at, m->val + at)
                        : poisson_row(nx, ny, nz, i, m->col + at, m->val + at);
    }
    m->rowptr[nrows] = at;
    return 0;
}

struct triplet {
    long i, j;
    double v;
};

static int cmp_triplet(const void *a, const void *b)
{
    const struct triplet *x = a, *y = b;
    if (x->i != y->i)
        return (x->i > y->i) - (x->i < y->i);
    return (x->j > y->j) - (x->j < y->j);
}

/* A Matrix Market coordinate file: this rank's rows, duplicates summed. */
static int build_mtx(rows_t *m, const char *path, int rank, int size, FILE *err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(err, "spmvm: cannot open %s\n", path);
        return -1;
    }
    char line[1024], obj[64] = "", fmt[64] = "", field[64] = "", sym[64] = "";
    int rc = -1;
    struct triplet *t = NULL;
    if (!fgets(line, sizeof line, f) ||
        sscanf(line, "%%%%MatrixMarket %63s %63s %63s %63s", obj, fmt, field, sym) != 4 ||
        strcasecmp(obj, "matrix") || strcasecmp(fmt, "coordinate")) {
        fprintf(err, "spmvm: %s: not a Matrix Market coordinate matrix\n", path);
        goto out;
    }
    bool pattern = !strcasecmp(field, "pattern");
    bool symmetric = !strcasecmp(sym, "symmetric");
    if ((!pattern && strcasecmp(field, "real") && strcasecmp(field, "integer")) ||
        (!symmetric && strcasecmp(sym, "general"))) {
        fprintf(err,
                "spmvm: %s: %s %s matrices are not supported (real, integer or pattern; "
                "general or symmetric)\n",
                path, field, sym);
        goto out;
    }
    do {
        if (!fgets(line, sizeof line, f)) {
            fprintf(err, "spmvm: %s: no size line\n", path);
            goto out;
        }
    } while (line[0] == '%');
    long rows, cols, entries;
    if (sscanf(line, "%ld %ld %ld", &rows, &cols, &entries) != 3 || rows < 1 || rows != cols ||
        entries < 0) {
        fprintf(err, "spmvm: %s: the matrix must be square (size line '%s')\n", path, line);
        goto out;
    }
    m->n = rows;
    m->r0 = rows_start(rows, rank, size);
    m->r1 = rows_start(rows, rank + 1, size);
    size_t cap = 1024, nt = 0;
    t = malloc(sizeof *t * cap);
    for (long e = 0; t && e < entries; e++) {
        long i, j;
        double v = 1.0;
        if (!fgets(line, sizeof line, f) ||
            (pattern ? sscanf(line, "%ld %ld", &i, &j) != 2
                     : sscanf(line, "%ld %ld %lf", &i, &j, &v) != 3) ||
            i < 1 || i > rows || j < 1 || j > rows) {
            fprintf(err, "spmvm: %s: bad entry %ld\n", path, e + 1);
            goto out;
        }
        for (int mirror = 0; mirror < (symmetric && i != j ? 2 : 1); mirror++) {
            long r = (mirror ? j : i) - 1, c = (mirror ? i : j) - 1;
            if (r < m->r0 || r >= m->r1)
                continue;
            if (nt == cap) {
                struct triplet *g = realloc(t, sizeof *t * (cap *= 2));
                if (!g)
                    goto out;
                t = g;
            }
            t[nt++] = (struct triplet){r, c, v};
        }
    }
    if (!t)
        goto out;
    qsort(t, nt, sizeof *t, cmp_triplet);
    if (alloc_rows(m, (long)nt) != 0)
        goto out;
    long at = 0, row = m->r0;
    for (size_t k = 0; k < nt; k++) {
        while (row <= t[k].i)
            m->rowptr[row++ - m->r0] = at;
        if (at > m->rowptr[t[k].i - m->r0] && m->col[at - 1] == t[k].j) {
            m->val[at - 1] += t[k].v;
            continue;
        }
        m->col[at] = t[k].j;
        m->val[at++] = t[k].v;
    }
    while (row <= m->r1)
        m->rowptr[row++ - m->r0] = at;
    const char *base = strrchr(path, '/');
    snprintf(m->name, sizeof m->name, "%s", base ? base + 1 : path);
    rc = 0;
out:
    free(t);
    fclose(f);
    return rc;
}

int rows_build(const char *spec, int rank, int size, rows_t *m, FILE *err)
{
    memset(m, 0, sizeof *m);
    if (!strncmp(spec, "hh:", 3) || !strncmp(spec, "poisson:", 8)) {
        bool hh = spec[0] == 'h';
        const char *num = spec + (hh ? 3 : 8);
        long nx = 0, ny = 0, nz = 0;
        int got = sscanf(num, "%ldx%ldx%ld", &nx, &ny, &nz);
        if (got == 1)
            ny = nz = hh ? 1 : nx;
        if ((got != 1 && (hh || got != 3)) || nx < 1 || ny < 1 || nz < 1 ||
            nx > (1L << 40) / ny / nz) {
            fprintf(err, "spmvm: bad matrix '%s' (hh:N, poisson:N or poisson:NXxNYxNZ)\n", spec);
            return -1;
        }
        m->n = nx * ny * nz;
        m->r0 = rows_start(m->n, rank, size);
        m->r1 = rows_start(m->n, rank + 1, size);
        snprintf(m->name, sizeof m->name, "%s", spec);
        if (build_generated(m, hh ? 0 : 1, nx, ny, nz) != 0) {
            fprintf(err, "spmvm: out of memory\n");
            return -1;
        }
        return 0;
    }
    return build_mtx(m, spec, rank, size, err);
}

void rows_free(rows_t *m)
{
    free(m->rowptr);
    free(m->col);
    free(m->val);
}
