/* mpi_io: bandwidth of collective MPI I/O through a file view that interleaves
 * the ranks, in plain MPI (built by bench/weft-bench against weft, Open MPI and
 * MPICH).
 *
 *   mpirun -n P mpi_io [--pin] [--quick|--smoke] [--runs R] [--min B] [--max B] [--size S]
 *
 * Each rank owns every P-th block of B bytes of one shared file (a filetype of
 * B bytes resized to P * B, displaced by rank * B), and writes S bytes (default
 * 8 MiB; 1 MiB with --smoke) through it with one MPI_File_write_at_all, then
 * reads them back with MPI_File_read_at_all and checks them. B sweeps from
 * --min to --max (default 64 B to 1 MiB, by 4; by 16 with --quick). Bandwidth
 * = P * S / the slowest rank's time, median of R runs (default 5; 3 with
 * --quick), in MB/s. Small blocks are where an implementation that gathers
 * the ranks' pieces into large file accesses (two-phase I/O) wins over one
 * that issues each piece itself.
 *
 * The file is $TMPDIR/weft_mpi_io_<pid> (/tmp when unset), so on most machines
 * this measures the library's path into the page cache, not a disk. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_common.h"
#include "bench_mpi.h"

/* One timed collective access; returns the slowest rank's microseconds. */
static double timed(MPI_Comm comm, MPI_File fh, int write, char *buf, size_t len)
{
    MPI_Status st;
    MPI_Barrier(comm);
    double t0 = bench_now_us();
    if (write)
        MPI_File_write_at_all(fh, 0, buf, (int)len, MPI_BYTE, &st);
    else
        MPI_File_read_at_all(fh, 0, buf, (int)len, MPI_BYTE, &st);
    return bench_mpi_max(comm, bench_now_us() - t0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_opts_t o = {.runs = 5, .min = 64, .max = 1 << 20, .msg_size = 0, .window = 1};
    if (bench_parse_opts(argc, argv, &o,
                         "[--pin] [--quick|--smoke] [--runs R] [--min B] [--max B] [--size S]"))
        MPI_Abort(MPI_COMM_WORLD, 2);
    if (o.quick && o.runs == 5)
        o.runs = o.smoke ? 1 : 3;
    size_t len = o.msg_size ? o.msg_size : o.smoke ? (size_t)1 << 20 : (size_t)8 << 20;
    if (o.step == 0)
        o.step = o.quick ? 16 : 4;
    int rank, size;
    MPI_Comm comm;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    int cpu = bench_pin_opts(rank, &o);
    char *buf = malloc(len), *back = malloc(len);
    double *runs_w = malloc(sizeof(double) * (size_t)o.runs);
    double *runs_r = malloc(sizeof(double) * (size_t)o.runs);
    if (!buf || !back || !runs_w || !runs_r || len > (size_t)1 << 30) {
        fprintf(stderr, "mpi_io: out of memory (or --size over 1 GiB)\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t i = 0; i < len; i++)
        buf[i] = (char)(i * 7 + (size_t)rank * 13);
    char name[512];
    int pid = (int)getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, comm);
    const char *dir = getenv("TMPDIR");
    snprintf(name, sizeof name, "%s/weft_mpi_io_%d", dir && *dir ? dir : "/tmp", pid);
    if (rank == 0) {
        char lib[256];
        bench_mpi_library(lib, sizeof lib);
        printf("# mpi_io (%s): %d ranks pinned %s (rank 0 cpu %d); %zu bytes per rank; median "
               "of %d runs; file %s\n",
               lib, size, o.pin ? "yes" : "no", cpu, len, o.runs, name);
        fflush(stdout);
    }
    int bad = 0;
    for (size_t b = o.min; b <= o.max && b <= len; b = bench_next(b, &o)) {
        MPI_File fh;
        if (MPI_File_open(comm, name, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                          MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
            fprintf(stderr, "mpi_io: cannot open %s\n", name);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        MPI_Datatype block, tile;
        MPI_Type_contiguous((int)b, MPI_BYTE, &block);
        MPI_Type_create_resized(block, 0, (MPI_Aint)(b * (size_t)size), &tile);
        MPI_Type_commit(&tile);
        MPI_File_set_view(fh, (MPI_Offset)(b * (size_t)rank), MPI_BYTE, tile, "native",
                          MPI_INFO_NULL);
        for (int r = 0; r < o.runs; r++) {
            runs_w[r] = timed(comm, fh, 1, buf, len);
            memset(back, 0, len);
            runs_r[r] = timed(comm, fh, 0, back, len);
            bad += memcmp(buf, back, len) != 0;
        }
        MPI_File_close(&fh);
        MPI_Type_free(&tile);
        MPI_Type_free(&block);
        double total = (double)len * (double)size;
        double w = total / bench_median(runs_w, o.runs), rd = total / bench_median(runs_r, o.runs);
        if (rank == 0) {
            printf("# block %8zu B: write %10.1f MB/s  read %10.1f MB/s\n", b, w, rd);
            bench_csv("io_write", (double)b, "bandwidth_MBps", w);
            bench_csv("io_read", (double)b, "bandwidth_MBps", rd);
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, comm);
    if (bad && rank == 0)
        fprintf(stderr, "mpi_io: data read back differs from what was written (%d runs)\n", bad);
    free(buf);
    free(back);
    free(runs_w);
    free(runs_r);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return bad ? 1 : 0;
}
