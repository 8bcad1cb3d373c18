#!/bin/sh
# Placement side by side, in one go: ranks bound by weftrun (its default, a
# core each here) against unbound ones (--bind-to none), and Open MPI's
# --bind-to core / none, for 8-byte latency (mpi_pingpong); then where the
# progress thread runs, for overlap (mpi_overlap, seed 001's benchmark):
# none, on the rank's own core (weft's default for a rank bound to one core:
# the core's idle time), on the other core (WEFT_PROGRESS_CPU per rank), and
# unpinned at idle priority beside unbound ranks; Open MPI --bind-to core
# beside them. Configurations alternate repetition after repetition, so a
# noisy machine's drift hits all alike; medians over the repetitions, with
# the least and greatest.
#
#   bench/run_place.sh [--build DIR] [--reps N] [--size BYTES] [--compute US]
#
# Raw lines go to bench/results/place.txt (not committed).
set -e
cd "$(dirname "$0")/.."
build=build reps=7 size=16777216 compute=10000
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --compute) compute=$2; shift 2 ;;
    *) echo "usage: bench/run_place.sh [--build DIR] [--reps N] [--size BYTES] [--compute US]" >&2; exit 2 ;;
    esac
done
ninja -C "$build" mpi weftrun >/dev/null
bin=$build/bench-place
mkdir -p "$bin" bench/results
impls=weft
for b in pingpong overlap; do
    "$build/bin/mpicc" -O2 -D_GNU_SOURCE -Ibench "bench/mpi_$b.c" bench/bench_common.c -o "$bin/${b}_weft"
done
if command -v mpicc.openmpi >/dev/null; then
    for b in pingpong overlap; do
        mpicc.openmpi -O2 -D_GNU_SOURCE -Ibench "bench/mpi_$b.c" bench/bench_common.c -o "$bin/${b}_ompi"
    done
    impls="weft ompi"
else
    echo "run_place: no mpicc.openmpi: weft only" >&2
fi
ncpu=$(nproc)
ompi_btl=vader
ompi_info 2>/dev/null | grep -q "MCA btl: vader" || ompi_btl=sm
ompi() {
    env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_oob_tcp_if_include=lo \
        mpirun.openmpi -np 2 --mca pml ob1 --mca btl "$ompi_btl,self" "$@"
}
weft() { env WEFT_DRIVERS=self,shm "$build/bin/mpirun" -n 2 "$@"; }
# Each rank's progress thread on the next rank's cpu: the other core here.
other='WEFT_PROGRESS_CPU=$(( (WEFT_RANK + 1) % '$ncpu' )) exec "$0" "$@"'
out=bench/results/place.txt
: >"$out"
lat() { # name command...: 8-byte one-way latency
    name=$1
    shift
    "$@" --min 8 --max 8 --runs 3 | sed -n "s/^csv,latency,8,latency_us,/lat $name /p" >>"$out"
}
ovl() { # name command...: overlap ratios, receiver computing and both
    name=$1
    shift
    "$@" --size "$size" --min "$compute" --max "$compute" --runs 3 |
        sed -n "s/^csv,overlap_\(receiver\|both\),[0-9.]*,overlap_ratio,/ovl_\1 $name /p" >>"$out"
}
i=1
while [ "$i" -le "$reps" ]; do
    lat weft_bound weft "$bin/pingpong_weft"
    lat weft_unbound weft --bind-to none "$bin/pingpong_weft"
    ovl weft_bound_noprog weft "$bin/overlap_weft"
    ovl weft_prog_samecore weft -x WEFT_PROGRESS_THREAD=1 "$bin/overlap_weft"
    ovl weft_prog_othercore weft -x WEFT_PROGRESS_THREAD=1 sh -c "$other" "$bin/overlap_weft"
    ovl weft_unbound_prog_idle weft --bind-to none -x WEFT_PROGRESS_THREAD=1 \
        -x WEFT_PROGRESS_CPU=none "$bin/overlap_weft"
    if [ "$impls" != weft ]; then
        lat ompi_core ompi --bind-to core "$bin/pingpong_ompi"
        lat ompi_unbound ompi --bind-to none "$bin/pingpong_ompi"
        ovl ompi_core ompi --bind-to core "$bin/overlap_ompi"
    fi
    i=$((i + 1))
done
# kind name value -> per (kind name): median, least, greatest
awk -f bench/median.awk -f /dev/fd/3 "$out" 3<<'EOF'
{
    k = $1 " " $2; v[k] = v[k] " " $3
    if (!(k in seen)) { seen[k] = 1; order[++n] = k }
}
END {
    printf "%-12s %-24s %10s %10s %10s\n", "# kind", "configuration", "median", "lo", "hi"
    for (i = 1; i <= n; i++) {
        split(order[i], p, " ")
        printf "%-12s %-24s %10.3f %10.3f %10.3f\n", p[1], p[2], median(v[order[i]]),
               lo(v[order[i]]), hi(v[order[i]])
    }
}
EOF
echo "# lat: one-way µs, 8 B; ovl_*: overlap ratio (1 = hidden, 0 = serialized), $size B, ${compute} µs compute"
