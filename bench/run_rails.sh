#!/bin/sh
# Multi-rail bandwidth (issue 5): two hosts (network namespaces) joined by two
# links, each on its own veth pair, bridge and subnet, shaped with tc (netem's
# rate, or tbf where the kernel has no netem) to different rates, e.g. 2 and
# 1 Gbit/s. In one cluster, repetition after repetition (so drift hits every
# configuration alike), bench/weft_rails measures the streaming bandwidth of
# 4 MiB messages
#   rail1   one tcp rail on eth0 alone          (WEFT_TCP_IF=eth0)
#   rail2   one tcp rail on eth1 alone          (WEFT_TCP_IF=eth1)
#   both    both rails, split_balance, WEFT_RAIL_BW in the rates' proportion
#   both_meas both rails, split_balance, no WEFT_RAIL_BW: shares measured at run time
# and prints per configuration the median over the repetitions and the range,
# then both / (rail1 + rail2) (issue 5 asks >= 0.90). Then, unshaped, over
# loopback on this machine: one tcp rail against two.
#
#   bench/run_rails.sh [--build DIR] [--reps N] [--rate 2gbit,1gbit] [--size S]
#                      [--no-loopback] [--no-cluster]
#
# Needs root for the namespaces (scripts/cluster.sh --rails 2); without it the
# cluster part is skipped. Raw lines go to bench/results/rails.txt (not committed).
set -eu
cd "$(dirname "$0")/.."
here=$(pwd)

# Inside the cluster, scripts/cluster.sh runs us in weftrun's place ("$@" is
# weftrun's command line): run every configuration, reps times, interleaved.
if [ -n "${RUN_RAILS_INNER:-}" ]; then
    i=1
    while [ "$i" -le "$RUN_RAILS_REPS" ]; do
        for cfg in rail1 rail2 both both_meas; do
            case $cfg in
            rail1) env="WEFT_TCP_RAILS=1 WEFT_TCP_IF=eth0" ;;
            rail2) env="WEFT_TCP_RAILS=1 WEFT_TCP_IF=eth1" ;;
            both) env="WEFT_TCP_RAILS=2 WEFT_TCP_IF=eth0,eth1 WEFT_STRATEGY=split_balance WEFT_RAIL_BW=$RUN_RAILS_BW" ;;
            both_meas) env="WEFT_TCP_RAILS=2 WEFT_TCP_IF=eth0,eth1 WEFT_STRATEGY=split_balance" ;;
            esac
            # shellcheck disable=SC2086 # env is a list of assignments
            line=$(env $env "$RUN_RAILS_WEFTRUN" "$@" | grep '^bandwidth_MBps') ||
                { echo "run_rails: $cfg failed" >&2; exit 1; }
            echo "cluster $cfg $line" | tee -a "$RUN_RAILS_OUT" >&2
        done
        i=$((i + 1))
    done
    exit 0
fi

build=build reps=5 rate=2gbit,1gbit size=4M loopback=1 cluster=1
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --no-loopback) loopback=0; shift ;;
    --no-cluster) cluster=0; shift ;;
    -h | --help) sed -n '2,22s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "usage: bench/run_rails.sh [--build DIR] [--reps N] [--rate R1,R2] [--size S] [--no-loopback] [--no-cluster]" >&2; exit 2 ;;
    esac
done
case $build in /*) ;; *) build=$here/$build ;; esac
[ -x "$build/bench/weft_rails" ] || { echo "run_rails: no $build/bench/weft_rails (build first)" >&2; exit 2; }
mkdir -p bench/results
out=$here/bench/results/rails.txt
: >"$out"

# A tc rate (2gbit, 500mbit, 1000kbit) in MB/s (10^6 bytes), for WEFT_RAIL_BW.
mbs() {
    echo "$1" | awk '{ v = $1 + 0; u = tolower($1); sub(/^[0-9.]+/, "", u)
        f = u == "gbit" ? 1e9 : u == "mbit" ? 1e6 : u == "kbit" ? 1e3 : u == "bit" ? 1 : -1
        if (f < 0) exit 1; printf "%d", v * f / 8e6 }'
}

if [ $cluster = 1 ]; then
    r1=$(echo "$rate" | cut -d, -f1) r2=$(echo "$rate" | cut -d, -f2)
    bw="$(mbs "$r1"),$(mbs "$r2")" || { echo "run_rails: cannot read rates $rate" >&2; exit 2; }
    echo "== cluster: 2 hosts, 2 rails shaped $rate (WEFT_RAIL_BW=$bw for 'both'), $size messages, $reps repetitions"
    set +e
    RUN_RAILS_INNER=1 RUN_RAILS_REPS=$reps RUN_RAILS_BW=$bw RUN_RAILS_OUT=$out \
        RUN_RAILS_WEFTRUN=$build/tools/weftrun \
        scripts/cluster.sh --rails 2 --rate "$rate" --weftrun "$here/bench/run_rails.sh" -- \
        --timeout 300 "$build/bench/weft_rails" --size "$size"
    status=$?
    set -e
    [ $status = 77 ] && echo "run_rails: cluster part skipped (see above)"
    [ $status = 0 ] || [ $status = 77 ] || exit $status
fi

if [ $loopback = 1 ]; then
    echo "== loopback (unshaped, this machine's 2 cores): 1 tcp rail against 2, $size messages, $reps repetitions"
    i=1
    while [ "$i" -le "$reps" ]; do
        for n in 1 2; do
            line=$(WEFT_DRIVERS=self,tcp WEFT_TCP_IF=lo WEFT_TCP_RAILS=$n WEFT_STRATEGY=split_balance \
                "$build/tools/weftrun" -n 2 "$build/bench/weft_rails" --size "$size" |
                grep '^bandwidth_MBps')
            echo "loopback rails$n $line" | tee -a "$out" >&2
        done
        i=$((i + 1))
    done
fi

# where cfg bandwidth_MBps median min x max y -> per (where cfg): median of the
# medians, their range
awk '
function median(list,   n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function lo(list,   n, a, i, m) { n = split(list, a, " "); m = a[1] + 0; for (i = 2; i <= n; i++) if (a[i] + 0 < m) m = a[i] + 0; return m }
function hi(list,   n, a, i, m) { n = split(list, a, " "); m = a[1] + 0; for (i = 2; i <= n; i++) if (a[i] + 0 > m) m = a[i] + 0; return m }
{ k = $1 " " $2; if (!(k in seen)) { seen[k] = 1; keys[nk++] = k } v[k] = v[k] " " $4; n[k]++ }
END {
    printf "%-18s %10s %21s %5s\n", "configuration", "MB/s", "(range)", "reps"
    for (i = 0; i < nk; i++) {
        k = keys[i]; m[k] = median(v[k])
        printf "%-18s %10.1f %10.1f-%-10.1f %5d\n", k, m[k], lo(v[k]), hi(v[k]), n[k]
    }
    if (("cluster rail1" in m) && ("cluster rail2" in m) && ("cluster both" in m)) {
        s = m["cluster rail1"] + m["cluster rail2"]
        printf "both / (rail1 + rail2) = %.1f / %.1f = %.3f (target >= 0.90)\n", m["cluster both"], s, m["cluster both"] / s
        printf "both_meas / (rail1 + rail2) = %.3f (no WEFT_RAIL_BW: shares measured)\n", m["cluster both_meas"] / s
    }
    if (("loopback rails1" in m) && ("loopback rails2" in m))
        printf "loopback: 2 rails / 1 rail = %.3f\n", m["loopback rails2"] / m["loopback rails1"]
}' "$out"
