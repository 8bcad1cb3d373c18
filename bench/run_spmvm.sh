#!/bin/sh
# apps/spmvm side by side, in one go: the same source built against weft's
# MPI, Open MPI and MPICH, each mode (vector, naive overlap, task) on 2 ranks,
# weft with and without its progress thread, launches alternated repetition
# after repetition. Prints per matrix and configuration the median Gflop/s of
# each mode (least and greatest in the raw file), the exchange's share of a
# vector-mode iteration, and the ratios the seed asks about: weft's naive
# overlap against the best task mode, and against Open MPI's naive overlap.
#
#   bench/run_spmvm.sh [--build DIR] [--reps N] [--threads T] [--iters K]
#                      [--matrices "hh:10000 hh:100000 hh:1000000"]
#
# With --threads above 1, ranks are launched unbound (--bind-to none for
# every MPI): on this 2-core machine 2 ranks x 2 threads oversubscribe.
# Raw lines go to bench/results/spmvm.txt (not committed).
set -e
cd "$(dirname "$0")/.."
build=build reps=5 threads=1 iters=30
matrices="hh:10000 hh:100000 hh:1000000 poisson:100"
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --matrices) matrices=$2; shift 2 ;;
    *) echo "usage: bench/run_spmvm.sh [--build DIR] [--reps N] [--threads T] [--iters K] [--matrices LIST]" >&2; exit 2 ;;
    esac
done
ninja -C "$build" weftrun mpi >/dev/null
bin=$build/bench-spmvm
mkdir -p "$bin" bench/results
impls=""
# Every library's program built the same way, by its own wrapper.
for impl in weft ompi mpich; do
    case $impl in
    weft) cc=$build/bin/mpicc ;;
    ompi) cc=mpicc.openmpi ;;
    mpich) cc=mpicc.mpich ;;
    esac
    command -v "$cc" >/dev/null || { echo "run_spmvm: $cc not found, skipping $impl" >&2; continue; }
    # MPICH's MPI_Waitall is declared to write its statuses: gcc then warns about
    # MPI_STATUSES_IGNORE.
    extra=""
    [ $impl = mpich ] && extra=-Wno-stringop-overflow
    "$cc" -O2 -fopenmp -D_GNU_SOURCE $extra -Iapps/spmvm -Iapps/common apps/spmvm/spmvm.c apps/spmvm/matrix.c \
        -o "$bin/spmvm_$impl" -lm
    impls="$impls $impl"
done
bind=core weft_bind=""
[ "$threads" -gt 1 ] && bind=none weft_bind="--bind-to none"
omp="OMP_NUM_THREADS=$threads OMP_WAIT_POLICY=passive OMP_PROC_BIND=close OMP_PLACES=cores"
out=bench/results/spmvm.txt
: >"$out"
run() { # config command...
    cfg=$1
    shift
    for m in $matrices; do
        "$@" --matrix "$m" --iters "$iters" |
            sed -n "s/^csv,spmvm_\([a-z]*\),[0-9]*,\(gflops\|us_per_iter\),/$m $cfg \1 \2 /p" >>"$out"
    done
}
i=1
while [ "$i" -le "$reps" ]; do
    run weft env $omp WEFT_PROGRESS_THREAD=0 "$build/bin/mpirun" -n 2 $weft_bind "$bin/spmvm_weft"
    run weft_progress env $omp WEFT_PROGRESS_THREAD=1 "$build/bin/mpirun" -n 2 $weft_bind \
        "$bin/spmvm_weft"
    for impl in $impls; do
        case $impl in
        weft) ;;
        ompi) run ompi env $omp OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
            OMPI_MCA_oob_tcp_if_include=lo mpirun.openmpi -np 2 --mca pml ob1 --mca btl vader,self \
            --bind-to $bind "$bin/spmvm_ompi" ;;
        mpich) run mpich env $omp mpirun.mpich -n 2 -bind-to $bind "$bin/spmvm_mpich" ;;
        esac
    done
    i=$((i + 1))
done
# matrix config mode metric value -> medians, and the seed's ratios
awk -f bench/median.awk -f /dev/fd/3 "$out" 3<<'EOF'
{
    k = $1 " " $2 " " $3 " " $4; v[k] = v[k] " " $5
    if (!($1 in seenm)) { seenm[$1] = 1; mats[++nm] = $1 }
    if (!($2 in seenc)) { seenc[$2] = 1; cfgs[++nc] = $2 }
}
function g(m, c, mode) { k = m " " c " " mode " gflops"; return (k in v) ? median(v[k]) : 0 }
END {
    printf "%-14s %-14s %9s %9s %9s %10s\n", "# matrix", "library", "vector", "naive", "task", "exchange%"
    for (a = 1; a <= nm; a++) {
        m = mats[a]
        for (b = 1; b <= nc; b++) {
            c = cfgs[b]
            ex = m " " c " exchange us_per_iter"; it = m " " c " vector us_per_iter"
            share = (ex in v && it in v) ? 100 * median(v[ex]) / median(v[it]) : 0
            printf "%-14s %-14s %9.3f %9.3f %9.3f %9.0f%%\n", m, c, g(m, c, "vector"), g(m, c, "naive"),
                   g(m, c, "task"), share
        }
        best = 0
        for (b = 1; b <= nc; b++) if (g(m, cfgs[b], "task") > best) best = g(m, cfgs[b], "task")
        wn = g(m, "weft_progress", "naive"); on = g(m, "ompi", "naive")
        if (best > 0 && on > 0)
            printf "%-14s weft_progress naive / best task %.2f, / Open MPI naive %.2f\n", m, wn / best, wn / on
    }
}
EOF
echo "# Gflop/s, medians of $reps launches; 2 ranks x $threads threads; exchange%: the halo exchange's share of a vector-mode iteration"
