/* Helpers shared by the weft benchmarks and their plain-MPI twins: a clock,
 * medians, pinning by rank, a deterministic shuffle and tiny option parsing.
 * No dependency on weft or MPI, so the MPI twins compile it with mpicc. */
#ifndef WEFT_BENCH_COMMON_H
#define WEFT_BENCH_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* Monotonic time in microseconds. */
double bench_now_us(void);

/* Work in registers until `us` microseconds have passed, calling no library
 * (so only a library that progresses on its own moves a transfer meanwhile). */
void bench_compute_us(double us);

/* Median of n values (sorts v in place). */
double bench_median(double *v, int n);

/* Pin the calling process to the (rank mod k)-th CPU of the k it may use, as
 * HPC ranks are pinned; returns that CPU, or -1 (and pins nothing) if it has
 * fewer than two CPUs or the call fails. */
int bench_pin_by_rank(int rank);

/* Bind the calling process (and the threads it makes later) to ncores CPUs of
 * the k it may use: rank r gets the r-th block of ncores, wrapping around. So
 * on a machine of 16 CPUs two ranks with ncores 8 get one half each, the room
 * a rank's threads or its progress thread need. Returns the block's first CPU,
 * or -1 (nothing bound) with fewer than two CPUs or when the call fails. */
int bench_pin_block(int rank, int ncores);

/* Fisher-Yates shuffle of v[0..n) with a fixed-seed xorshift generator, so
 * every implementation sees the same permutation for a given seed. */
void bench_shuffle(uint32_t *v, size_t n, uint64_t seed);

/* Parse a size with an optional K/M/G suffix (powers of two); 0 on error. */
size_t bench_parse_size(const char *s);

/* Print one machine-readable result line, the only output bench/weft-bench reads:
 *   csv,<bench>,<param>,<metric>,<value>
 * bench names the measurement (latency, msgrate...), param its x value (a size
 * in bytes, a thread count, a compute time in microseconds), metric the
 * quantity with its unit (latency_us, bandwidth_MBps, rate_Mmsgs). Call it
 * from one rank only. */
void bench_csv(const char *bench, double param, const char *metric, double value);

/* Options common to the benchmarks. */
typedef struct bench_opts {
    int pin;         /* CPUs per rank, 0: not bound. --pin: 1 (rank r on the r-th allowed
                      * CPU); --cores N: N (rank r on the r-th block of N) */
    int quick;       /* --quick: fewer iterations and repetitions */
    int smoke;       /* --smoke: tiny iterations, only proves the program runs (implies quick) */
    int runs;        /* --runs R: repetitions per point (median is reported) */
    size_t min, max; /* --min/--max: size range (pingpong) or N range (match) */
    int window;      /* --window W: messages in flight for streaming bandwidth */
    size_t msg_size; /* --size S: message size (match) */
    size_t step;     /* --step K: sweeps multiply by K (default 2), and always end at --max */
    int floor;       /* --floor: also time the driver's floor in the same launch (weft_pingpong) */
} bench_opts_t;

/* Bind this rank as o->pin says (bench_pin_block); -1 when it does not. */
int bench_pin_opts(int rank, const bench_opts_t *o);

/* The point after `x` in a sweep from o->min to o->max: x * o->step (2 when
 * unset), or o->max itself when the step jumps over it, so a coarse sweep
 * still ends on the size asked for; a value above o->max ends the loop. */
size_t bench_next(size_t x, const bench_opts_t *o);

/* Fill *o from argv (defaults must be set by the caller); prints usage and
 * returns -1 on a bad option. */
int bench_parse_opts(int argc, char **argv, bench_opts_t *o, const char *usage);

#endif
