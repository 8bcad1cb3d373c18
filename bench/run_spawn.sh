#!/bin/sh
# Time to spawn and connect 1, 2 and 4 processes (bench/mpi_spawn.c): the
# same source built against weft's MPI and Open MPI, one parent each,
# launches alternated repetition after repetition. Prints the median (least,
# greatest) milliseconds from MPI_Comm_spawn's call to a barrier over the new
# intercommunicator, and weft's ratio to Open MPI (below 1: weft is faster).
#
#   bench/run_spawn.sh [--build DIR] [--reps N] [--spawns K]
#
# Raw lines go to bench/results/spawn.txt (not committed).
set -e
cd "$(dirname "$0")/.."
build=build reps=3 spawns=5
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --spawns) spawns=$2; shift 2 ;;
    *) echo "usage: bench/run_spawn.sh [--build DIR] [--reps N] [--spawns K]" >&2; exit 2 ;;
    esac
done
ninja -C "$build" weftrun mpi >/dev/null
bin=$build/bench-spawn
mkdir -p "$bin" bench/results
impls=weft
"$build/bin/mpicc" -O2 bench/mpi_spawn.c -o "$bin/spawn_weft"
if command -v mpicc.openmpi >/dev/null; then
    mpicc.openmpi -O2 bench/mpi_spawn.c -o "$bin/spawn_ompi"
    impls="weft ompi"
else
    echo "run_spawn: mpicc.openmpi not found: weft alone" >&2
fi
out=bench/results/spawn.txt
: >"$out"
i=1
while [ "$i" -le "$reps" ]; do
    for n in 1 2 4; do
        for impl in $impls; do
            case $impl in
            weft) "$build/bin/mpirun" -n 1 "$bin/spawn_weft" "$n" "$spawns" ;;
            ompi) env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
                OMPI_MCA_oob_tcp_if_include=lo mpirun.openmpi -np 1 --oversubscribe \
                --host localhost:8 --mca btl vader,self,tcp "$bin/spawn_ompi" "$n" "$spawns" ;;
            esac | sed -n "s/^csv,spawn,\([0-9]*\),ms,/$impl \1 /p" >>"$out"
        done
    done
    i=$((i + 1))
done
awk -f bench/median.awk -f /dev/fd/3 "$out" 3<<'AWK'
{ k = $1 " " $2; v[k] = v[k] " " $3; impl[$1] = 1 }
END {
    printf "%-6s %4s %24s %24s %8s\n", "# n", "", "weft ms (lo-hi)", "Open MPI ms (lo-hi)", "ratio"
    for (n = 1; n <= 4; n *= 2) {
        w = "weft " n; o = "ompi " n
        if (!(w in v)) continue
        line = sprintf("%-6d %4s %10.1f (%5.1f-%6.1f)", n, "", median(v[w]), lo(v[w]), hi(v[w]))
        if (o in v)
            line = line sprintf(" %10.1f (%5.1f-%6.1f) %8.2f", median(v[o]), lo(v[o]), hi(v[o]),
                                median(v[w]) / median(v[o]))
        print line
    }
}
AWK
echo "# medians of $reps launches x $spawns spawns each; one parent, children on this machine"
