/* See bench_common.h. */
#include "bench_common.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double bench_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static volatile double compute_sink;

void bench_compute_us(double us)
{
    double end = bench_now_us() + us, x = 1.0;
    do {
        for (int i = 0; i < 512; i++)
            x = x * 1.0000001 + 1e-9;
    } while (bench_now_us() < end);
    compute_sink = x;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
    if (n <= 0)
        return 0.0;
    qsort(v, (size_t)n, sizeof v[0], cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int bench_pin_block(int rank, int ncores)
{
    cpu_set_t set;
    if (ncores < 1 || sched_getaffinity(0, sizeof set, &set) != 0)
        return -1;
    int cpus[CPU_SETSIZE], k = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set))
            cpus[k++] = c;
    if (k < 2)
        return -1;
    cpu_set_t block;
    CPU_ZERO(&block);
    for (int i = 0; i < ncores && i < k; i++)
        CPU_SET(cpus[((long)rank * ncores + i) % k], &block);
    if (sched_setaffinity(0, sizeof block, &block) != 0) {
        perror("sched_setaffinity");
        return -1;
    }
    return cpus[((long)rank * ncores) % k];
}

int bench_pin_by_rank(int rank)
{
    return bench_pin_block(rank, 1);
}

int bench_pin_opts(int rank, const bench_opts_t *o)
{
    return o->pin ? bench_pin_block(rank, o->pin) : -1;
}

void bench_shuffle(uint32_t *v, size_t n, uint64_t seed)
{
    uint64_t x = seed ? seed : 0x9E3779B97F4A7C15ull;
    for (size_t i = n; i > 1; i--) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t j = (size_t)(x % i);
        uint32_t t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}

size_t bench_parse_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 0);
    switch (*end) {
    case 'k':
    case 'K':
        v <<= 10;
        end++;
        break;
    case 'm':
    case 'M':
        v <<= 20;
        end++;
        break;
    case 'g':
    case 'G':
        v <<= 30;
        end++;
        break;
    default:
        break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    return *end ? 0 : (size_t)v;
}

size_t bench_next(size_t x, const bench_opts_t *o)
{
    size_t next = x * (o->step > 1 ? o->step : 2);
    return next > o->max && x < o->max ? o->max : next;
}

void bench_csv(const char *bench, double param, const char *metric, double value)
{
    printf("csv,%s,%.15g,%s,%.6g\n", bench, param, metric, value);
    fflush(stdout);
}

int bench_parse_opts(int argc, char **argv, bench_opts_t *o, const char *usage)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--pin")) {
            o->pin = 1;
        } else if (!strcmp(a, "--cores") && val) {
            o->pin = atoi(val);
            i++;
            if (o->pin < 1) {
                fprintf(stderr, "--cores needs a count of at least 1\n");
                return -1;
            }
        } else if (!strcmp(a, "--floor")) {
            o->floor = 1;
        } else if (!strcmp(a, "--quick")) {
            o->quick = 1;
        } else if (!strcmp(a, "--smoke")) {
            o->smoke = 1;
            o->quick = 1;
        } else if (!strcmp(a, "--runs") && val) {
            o->runs = atoi(val);
            i++;
        } else if (!strcmp(a, "--min") && val) {
            o->min = bench_parse_size(val);
            i++;
        } else if (!strcmp(a, "--max") && val) {
            o->max = bench_parse_size(val);
            i++;
        } else if (!strcmp(a, "--window") && val) {
            o->window = atoi(val);
            i++;
        } else if (!strcmp(a, "--step") && val) {
            o->step = bench_parse_size(val);
            i++;
        } else if (!strcmp(a, "--size") && val) {
            o->msg_size = bench_parse_size(val);
            i++;
        } else {
            fprintf(stderr, "unknown or incomplete option '%s'\nusage: %s %s\n", a, argv[0], usage);
            return -1;
        }
    }
    if (o->runs < 1 || o->min < 1 || o->max < o->min || o->window < 1) {
        fprintf(stderr, "bad option values\nusage: %s %s\n", argv[0], usage);
        return -1;
    }
    return 0;
}
