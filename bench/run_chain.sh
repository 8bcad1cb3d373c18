#!/bin/sh
# Seed 003's task chains side by side, in one go: weft's active messages
# (weft_chain: am_cq, am_handler, and its tagged-call twin sr) and the MPI
# pattern (mpi_chain: Irecv window + Testany + Isend) built against weft's MPI,
# Open MPI and MPICH, alternating repetition after repetition so that a noisy
# machine's drift hits all alike. Prints per size the median over the
# repetitions of the rate (M hops/s, 64 chains) and of the one-way time per
# hop (µs, one chain).
#
# --cq: instead, completions found among N outstanding receives (1 to 4096):
# weft_cq (popping one completion queue, and its scan of N requests) against
# mpi_cq (MPI_Testsome over N requests) with each MPI; µs per completion.
#
#   bench/run_chain.sh [--build DIR] [--reps N] [--sizes "8 4096"] [--tcp] [--cq]
#
# --tcp: weft over its tcp driver, Open MPI over its tcp btl (MPICH here is
# ch4:ucx, with no plain tcp path: left out). Raw lines go to
# bench/results/chain_<shm|tcp>.txt or cq_<shm|tcp>.txt (not committed).
set -e
cd "$(dirname "$0")/.."
build=build reps=5 sizes="8 4096" net=shm what=chain
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --tcp) net=tcp; shift ;;
    --cq) what=cq; shift ;;
    *) echo "usage: bench/run_chain.sh [--build DIR] [--reps N] [--sizes \"8 4096\"] [--tcp] [--cq]" >&2; exit 2 ;;
    esac
done
ninja -C "$build" weft_chain weft_cq mpi weftrun >/dev/null
src=bench/mpi_$what.c
bin=$build/bench-mpi-chain
mkdir -p "$bin" bench/results
impls=""
for impl in weft ompi mpich; do
    case $impl in
    weft) cc=$build/bin/mpicc ;;
    ompi) cc=mpicc.openmpi ;;
    mpich) cc=mpicc.mpich ;;
    esac
    [ $net = tcp ] && [ $impl = mpich ] && continue
    command -v "$cc" >/dev/null || { echo "run_chain: $cc not found, skipping $impl" >&2; continue; }
    "$cc" -O2 -D_GNU_SOURCE -pthread -Ibench "$src" bench/bench_common.c -o "$bin/${what}_$impl"
    impls="$impls $impl"
done
weft_env="WEFT_DRIVERS=self,shm"
ompi_btl=vader
ompi_info 2>/dev/null | grep -q "MCA btl: vader" || ompi_btl=sm
[ $net = tcp ] && weft_env="WEFT_DRIVERS=self,tcp" && ompi_btl=tcp
out=bench/results/${what}_$net.txt
: >"$out"
i=1
# mpirun_cmd IMPL: the command that launches 2 ranks of IMPL, in $launch (split at spaces)
mpirun_cmd() {
    case $1 in
    weft) set -- env $weft_env "$build/bin/mpirun" -n 2 ;;
    ompi) set -- env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        OMPI_MCA_oob_tcp_if_include=lo mpirun.openmpi -np 2 --mca pml ob1 \
        --mca btl "$ompi_btl,self" --mca btl_tcp_if_include lo --bind-to core ;;
    mpich) set -- mpirun.mpich -n 2 -bind-to core ;;
    esac
    launch="$*"
}
while [ $i -le "$reps" ]; do
    if [ $what = cq ]; then
        env $weft_env "$build/tools/weftrun" -n 2 "$build/bench/weft_cq" --runs 1 |
            sed -n 's/^csv,cq_\([a-z]*\),\([0-9.]*\),us_per_completion,/native_\1 \2 rate /p' >>"$out"
        for impl in $impls; do
            mpirun_cmd $impl
            $launch "$bin/cq_$impl" --runs 1 |
                sed -n "s/^csv,testsome,\([0-9.]*\),us_per_completion,/testsome_$impl \1 rate /p" >>"$out"
        done
        i=$((i + 1))
        continue
    fi
    for s in $sizes; do
        env $weft_env "$build/tools/weftrun" -n 2 "$build/bench/weft_chain" --size "$s" --reps 1 |
            sed -n 's/^csv,chain_\([a-z_]*\)_t1,\([0-9.]*\),rate_mmsgs,/native_\1 \2 rate /p;
                    s/^csv,chain_\([a-z_]*\)_t1,\([0-9.]*\),latency_us,/native_\1 \2 lat /p' >>"$out"
        for impl in $impls; do
            mpirun_cmd $impl
            $launch "$bin/chain_$impl" --min "$s" --max "$s" --runs 1 |
                sed -n "s/^csv,chain,\([0-9.]*\),rate_Mhops,/mpi_$impl \1 rate /p;
                        s/^csv,chain_lat,\([0-9.]*\),us_per_hop,/mpi_$impl \1 lat /p" >>"$out"
        done
    done
    i=$((i + 1))
done
rate_h=rate_Mhops lat_h=us_per_hop
[ $what = cq ] && rate_h=us_per_compl lat_h=-
# what size metric value -> per (what size metric): median over the repetitions
awk -v rate_h="$rate_h" -v lat_h="$lat_h" -f bench/median.awk -f /dev/fd/3 "$out" 3<<'EOF'
{
    k = $1 " " $2 " " $3; v[k] = v[k] " " $4
    if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 }
    if (!($2 in sz)) { sz[$2] = 1; sizes = sizes " " $2 }
}
END {
    printf "%-18s %6s %12s %12s\n", "# what", "size", rate_h, lat_h
    m = split(sizes, ns, " ")
    for (a = 2; a <= m; a++) { t = ns[a] + 0; for (b = a - 1; b >= 1 && ns[b] + 0 > t; b--) ns[b + 1] = ns[b]; ns[b + 1] = t }
    for (j = 1; j <= m; j++) for (i = 1; i <= n; i++) {
        s = ns[j]; w = order[i]; r = w " " s " rate"; l = w " " s " lat"
        if (r in v) printf "%-18s %6s %12.3f %12.3f\n", w, s, median(v[r]), (l in v) ? median(v[l]) : 0
    }
}
EOF
