#!/bin/sh
# apps/cholesky side by side, in one go: the native back end (weft's active
# messages), the bcast back end (weft's dynamic broadcast for tiles read on
# several ranks) and the mpi back end on weft, against the mpi back end built
# with Open MPI's wrapper, launches alternated repetition after repetition,
# for each matrix size, tile size and rank count. Medians of GFlop/s (least
# and greatest in the raw file) and the ratios: native against the mpi back
# end on Open MPI, and bcast against native (what the broadcast gains over a
# send to each destination).
#
#   bench/run_cholesky.sh [--build DIR] [--reps N] [--sizes "2048 4096"]
#                         [--tiles "256 512"] [--ranks "2 4"] [--workers W]
#
# OPENBLAS_NUM_THREADS=1 (the workers are the parallelism). Raw lines go to
# bench/results/cholesky.txt (not committed).
set -e
cd "$(dirname "$0")/.."
build=build reps=3 sizes="2048 4096" tiles="256 512" ranks="2 4" workers=1
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --tiles) tiles=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    *) echo "usage: bench/run_cholesky.sh [--build DIR] [--reps N] [--sizes LIST] [--tiles LIST] [--ranks LIST] [--workers W]" >&2; exit 2 ;;
    esac
done
ninja -C "$build" mpi weftrun >/dev/null
bin=$build/bench-cholesky
mkdir -p "$bin" bench/results
src="apps/cholesky/cholesky.c apps/taskrt/taskrt.c -Iapps/taskrt -Iapps/common -llapacke -lopenblas -lm -lpthread"
"$build/bin/mpicc" -O2 -D_GNU_SOURCE $src -o "$bin/cholesky_weft"
have_ompi=0
if command -v mpicc.openmpi >/dev/null; then
    mpicc.openmpi -O2 -D_GNU_SOURCE $src -o "$bin/cholesky_ompi" && have_ompi=1
fi
export OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_oob_tcp_if_include=lo
out=bench/results/cholesky.txt
: >"$out"
i=1
while [ "$i" -le "$reps" ]; do
    for np in $ranks; do
        for n in $sizes; do
            for t in $tiles; do
                a="--n $n --tile $t --workers $workers"
                for be in native bcast mpi; do
                    "$build/bin/mpirun" -n "$np" "$bin/cholesky_weft" $a --backend $be |
                        sed -n "s/^csv,cholesky_$be,[0-9]*,gflops,/$np $n $t weft_$be /p" >>"$out"
                done
                [ $have_ompi = 1 ] && mpirun.openmpi -np "$np" --oversubscribe \
                    --mca btl vader,self "$bin/cholesky_ompi" $a --backend mpi |
                    sed -n "s/^csv,cholesky_mpi,[0-9]*,gflops,/$np $n $t ompi_mpi /p" >>"$out"
            done
        done
    done
    i=$((i + 1))
done
awk -f bench/median.awk -f /dev/fd/3 "$out" 3<<'EOF'
{ k = $1 " " $2 " " $3; v[k " " $4] = v[k " " $4] " " $5; if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
function m(k, c) { return ((k " " c) in v) ? median(v[k " " c]) : 0 }
END {
    printf "%-6s %6s %5s %12s %12s %12s %12s %12s %12s\n", "# ranks", "N", "tile", "weft native",
           "weft bcast", "weft mpi", "ompi mpi", "native/ompi", "bcast/native"
    for (i = 1; i <= n; i++) {
        split(order[i], p, " ")
        wn = m(order[i], "weft_native"); wm = m(order[i], "weft_mpi"); om = m(order[i], "ompi_mpi")
        wb = m(order[i], "weft_bcast")
        printf "%-7s %6s %5s %12.2f %12.2f %12.2f %12.2f %12s %12s\n", p[1], p[2], p[3], wn, wb, wm,
               om, (om > 0 ? sprintf("%.2f", wn / om) : "-"), (wn > 0 ? sprintf("%.2f", wb / wn) : "-")
    }
}
EOF
echo "# GFlop/s (N^3/3 over the task flow's time), medians of $reps launches, $workers worker(s) per rank"
