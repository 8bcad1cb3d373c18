#!/bin/sh
# Alternate WEFT_STRATEGY=default and aggreg, repetition after repetition (so a
# noisy machine's drift hits both alike), and print per point the median over
# the repetitions, the range, and aggreg/default.
#
#   bench/run_aggreg.sh [--build DIR] [--reps N] [--tcp | --ofi PROVIDER] [-- weft_aggreg options]
#
# --tcp runs over tcp (WEFT_DRIVERS=self,tcp) instead of shm; --ofi over the
# ofi driver on that libfabric provider (WEFT_DRIVERS=self,ofi, e.g. tcp or
# shm; the tcp provider on loopback). Raw lines go to
# bench/results/aggreg_<shm|tcp|ofi-PROVIDER>.txt (not committed).
set -e
cd "$(dirname "$0")/.."
build=build reps=5 net=shm prov=
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --tcp) net=tcp; shift ;;
    --ofi) net=ofi-$2; prov=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "usage: bench/run_aggreg.sh [--build DIR] [--reps N] [--tcp | --ofi PROVIDER] [-- options]" >&2; exit 2 ;;
    esac
done
drivers=self,shm
[ $net = tcp ] && drivers=self,tcp
case $net in ofi-*)
    drivers=self,ofi
    export WEFT_OFI_PROVIDER="$prov"
    [ "$prov" = tcp ] && export WEFT_OFI_DOMAIN=lo
    ;;
esac
mkdir -p bench/results
out=bench/results/aggreg_$net.txt
: >"$out"
i=1
while [ $i -le "$reps" ]; do
    for s in default aggreg; do
        WEFT_DRIVERS=$drivers WEFT_STRATEGY=$s "$build/tools/weftrun" -n 2 \
            "$build/bench/weft_aggreg" "$@" | grep -v '^#' | sed "s/^/$s /" >>"$out"
    done
    i=$((i + 1))
done
# strategy test p1 p2 value -> per (test p1 p2): median, min, max per strategy
awk -f bench/median.awk -f /dev/fd/3 "$out" 3<<'EOF'
{ k = $2 " " $3 " " $4; if (!(k in seen)) { seen[k] = 1; keys[nk++] = k } v[$1, k] = v[$1, k] " " $5 }
END {
    printf "%-22s %12s %23s %12s %23s %8s\n", "point", "default", "(range)", "aggreg", "(range)", "ratio"
    for (i = 0; i < nk; i++) {
        k = keys[i]; d = median(v["default", k]); a = median(v["aggreg", k])
        printf "%-22s %12.4g %11.4g-%-11.4g %12.4g %11.4g-%-11.4g %8.3f\n", k, d, lo(v["default", k]), hi(v["default", k]), a, lo(v["aggreg", k]), hi(v["aggreg", k]), d ? a / d : 0
    }
}
EOF
echo "(rate: messages/s, ratio > 1 is better for aggreg; multi and lat: us, ratio < 1 is better; $reps alternated repetitions, $net)"
