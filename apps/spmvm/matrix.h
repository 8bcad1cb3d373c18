/* The rows of a sparse matrix that one rank owns, in CRS form with global
 * column indices: generated (a Holstein-Hubbard-like matrix, a 3-D 7-point
 * Poisson matrix) or read from a Matrix Market file. */
#ifndef SPMVM_MATRIX_H
#define SPMVM_MATRIX_H

#include <stdio.h>

typedef struct {
    long n;       /* global rows (= columns) */
    long r0, r1;  /* this rank's rows: [r0, r1) */
    long *rowptr; /* r1 - r0 + 1 entries */
    long *col;    /* global column of each non-zero, sorted within a row */
    double *val;
    char name[96]; /* "hh:100000", "poisson:64x64x64", the file's name */
} rows_t;

/* The first row of rank r of size ranks, for n rows split evenly. */
long rows_start(long n, int r, int size);

/* Builds this rank's rows of the matrix `spec`: "hh:N", "poisson:N" or
 * "poisson:NXxNYxNZ", or the path of a .mtx file (square; real, integer or
 * pattern; general or symmetric). 0, or -1 with a message on err. */
int rows_build(const char *spec, int rank, int size, rows_t *out, FILE *err);
void rows_free(rows_t *m);

#endif
