#!/bin/sh
# The dynamic broadcast against MPI_Bcast and against the root sending to
# every destination (bench/mpi_dynbcast.c): the same source built against
# weft's MPI (all three ways) and Open MPI (MPI_Bcast and send-to-all),
# launches alternated repetition after repetition, 2 to 16 ranks on this
# machine (oversubscribed where there are fewer cores). Prints the median
# (least-greatest) microseconds for the data to reach every rank, and the
# ratios: weft's dynamic broadcast over Open MPI's MPI_Bcast, over weft's
# MPI_Bcast, and over the root sending to all (below 1: the dynamic
# broadcast is faster).
#
#   bench/run_dynbcast.sh [--build DIR] [--reps N] [--ranks "2 4 8 16"]
#                         [--min B] [--max B] [--iters N] [--tcp] [--hosts RATE]
#
# --tcp: every rank talks over tcp (weft: WEFT_DRIVERS=self,tcp; Open MPI:
# btl tcp,self). --hosts RATE: each rank on a host of its own, network
# namespaces whose links are shaped to RATE (scripts/cluster.sh, root only):
# weft alone (Open MPI's launcher does not start ranks in namespaces here).
# Raw lines go to bench/results/dynbcast.txt (not committed).
set -e
cd "$(dirname "$0")/.."
build=build reps=3 ranks="2 4 8 16" min=8 max=16777216 iters=50 tcp=0 rate=
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --min) min=$2; shift 2 ;;
    --max) max=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --tcp) tcp=1; shift ;;
    --hosts) rate=$2; shift 2 ;;
    *) echo "usage: bench/run_dynbcast.sh [--build DIR] [--reps N] [--ranks LIST] [--min B] [--max B] [--iters N] [--tcp]" >&2; exit 2 ;;
    esac
done
ninja -C "$build" weftrun mpi >/dev/null
bin=$build/bench-dynbcast
mkdir -p "$bin" bench/results
impls=weft
"$build/bin/mpicc" -O2 bench/mpi_dynbcast.c -o "$bin/dynbcast_weft"
if [ -n "$rate" ]; then
    : # weft alone
elif command -v mpicc.openmpi >/dev/null; then
    mpicc.openmpi -O2 bench/mpi_dynbcast.c -o "$bin/dynbcast_ompi"
    impls="weft ompi"
else
    echo "run_dynbcast: mpicc.openmpi not found: weft alone" >&2
fi
args="--min $min --max $max --reps $iters"
if [ $tcp = 1 ]; then
    weft_env="WEFT_DRIVERS=self,tcp" ompi_btl=tcp,self
else
    weft_env="WEFT_DRIVERS=self,shm" ompi_btl=vader,self
fi
out=bench/results/dynbcast.txt
: >"$out"
i=1
while [ "$i" -le "$reps" ]; do
    for n in $ranks; do
        for impl in $impls; do
            case $impl in
            weft) if [ -n "$rate" ]; then
                scripts/cluster.sh --hosts "$n" --rate "$rate" --weftrun "$build/tools/weftrun" \
                    -- "$bin/dynbcast_weft" $args
            else
                env $weft_env "$build/bin/mpirun" -n "$n" "$bin/dynbcast_weft" $args
            fi ;;
            ompi) env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
                OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_tcp_if_include=lo \
                mpirun.openmpi -np "$n" --oversubscribe --bind-to none \
                --mca btl "$ompi_btl" "$bin/dynbcast_ompi" $args --methods bcast,sendall ;;
            esac | sed -n "s/^csv,dynbcast,\([a-z]*\),\([0-9]*\),\([0-9]*\),us,/$impl \1 \2 \3 /p" >>"$out"
        done
    done
    i=$((i + 1))
done
awk -f bench/median.awk -f /dev/fd/3 "$out" 3<<'AWK'
{ k = $1 " " $2 " " $3 " " $4; v[k] = v[k] " " $5; if (!(($3 " " $4) in seen)) { seen[$3 " " $4] = 1; order[++nk] = $3 " " $4 } }
function cell(k) { return (k in v) ? sprintf("%9.1f (%.0f-%.0f)", median(v[k]), lo(v[k]), hi(v[k])) : sprintf("%9s", "-") }
function ratio(a, b) { return ((a in v) && (b in v)) ? sprintf("%6.2f", median(v[a]) / median(v[b])) : sprintf("%6s", "-") }
END {
    printf "# %-5s %9s | %-22s %-22s %-22s | %-22s %-22s | %6s %6s %6s\n", "ranks", "bytes",
        "weft dynamic", "weft MPI_Bcast", "weft send-to-all", "Open MPI MPI_Bcast",
        "Open MPI send-to-all", "/ompi", "/weft", "/send"
    for (i = 1; i <= nk; i++) {
        split(order[i], p, " ")
        d = "weft dynamic " order[i]
        printf "%7s %9s | %-22s %-22s %-22s | %-22s %-22s | %s %s %s\n", p[1], p[2], cell(d),
            cell("weft bcast " order[i]), cell("weft sendall " order[i]),
            cell("ompi bcast " order[i]), cell("ompi sendall " order[i]),
            ratio(d, "ompi bcast " order[i]), ratio(d, "weft bcast " order[i]),
            ratio(d, "weft sendall " order[i])
    }
}
AWK
echo "# microseconds for the data to reach every rank: medians of $reps launches, each the slowest rank's mean over its repetitions"
