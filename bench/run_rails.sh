#!/bin/sh
# Multi-rail bandwidth (issue 5), and weft's against Open MPI's tcp path over
# the same links (issue 3): two hosts (network namespaces) joined by two links,
# each on its own veth pair, bridge and subnet, shaped with tc (netem's rate,
# or tbf where the kernel has no netem) to different rates, e.g. 2 and 1
# Gbit/s. In one cluster, repetition after repetition (so drift hits every
# configuration alike), the streaming bandwidth of 4 MiB messages is measured
# by bench/weft_rails (weft's own API) and by its plain-MPI twin
# bench/mpi_rails.c (built here with weft's mpicc and with Open MPI's):
#   rail1      weft, one tcp rail on eth0 alone   (WEFT_TCP_IF=eth0)
#   rail2      weft, one tcp rail on eth1 alone   (WEFT_TCP_IF=eth1)
#   both       weft, both rails, split_balance, WEFT_RAIL_BW in the rates' proportion
#   both_meas  weft, both rails, split_balance, no WEFT_RAIL_BW: shares measured at run time
#   mpi_both   weft's MPI (mpi_rails), as both
#   mpi_both_meas weft's MPI, as both_meas
#   ompi_eth0  Open MPI, --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include eth0
#   ompi_both  Open MPI, the same with btl_tcp_if_include eth0,eth1 (ob1 stripes
#              over one tcp btl module per interface, as it does on a real cluster)
#   ompi_both_bw  Open MPI, as ompi_both with btl_tcp_bandwidth_eth0/eth1 set to
#              the shaped rates (its striping weights; WEFT_RAIL_BW's twin)
# and prints per configuration the median over the repetitions, their range and
# the share of the bytes that went over eth1 (from the hosts' tx counters),
# then both / (rail1 + rail2) (issue 5 asks >= 0.90) and weft / Open MPI over
# both links (issue 3 asks >= 1.5). Open MPI's mpirun starts its daemons in the
# namespaces through scripts/netns_rsh.sh (--mca plm_rsh_agent); without
# mpicc.openmpi and mpirun.openmpi the Open MPI configurations are skipped, and
# without weft's MPI wrappers the mpi_ ones. Then, unshaped, over loopback on
# this machine: one tcp rail against two.
#
#   bench/run_rails.sh [--build DIR] [--reps N] [--rate 2gbit,1gbit|none] [--size S]
#                      [--no-loopback] [--no-cluster] [--no-mpi]
#
# --rate none leaves the links unshaped (then the CPUs are the limit; 'both'
# gets equal shares and ompi_both_bw is not run); --no-mpi runs weft_rails only.
# Needs root for the namespaces (scripts/cluster.sh --rails 2); without it the
# cluster part is skipped. Raw lines go to bench/results/rails.txt (not committed).
set -eu
cd "$(dirname "$0")/.."
here=$(pwd)

# Inside the cluster, scripts/cluster.sh runs us in weftrun's place ("$@" is
# weftrun's command line: -n, --hosts, --rsh and --boot-addr, then the options
# and program run_rails gave it): run every configuration, reps times,
# interleaved. The MPI configurations reuse the hosts and the launcher's
# address; Open MPI's mpirun takes the namespaces as host names and reaches
# them through scripts/netns_rsh.sh.
if [ -n "${RUN_RAILS_INNER:-}" ]; then
    np='' hosts='' rsh='' boot=''
    while [ $# -gt 0 ]; do
        case $1 in
        -n) np=$2; shift 2 ;;
        --hosts) hosts=$2; shift 2 ;;
        --rsh) rsh=$2; shift 2 ;;
        --boot-addr) boot=$2; shift 2 ;;
        *) break ;;
        esac
    done
    if [ -z "$np" ] || [ -z "$hosts" ] || [ -z "$rsh" ] || [ -z "$boot" ]; then
        echo "run_rails: unexpected command line from cluster.sh" >&2
        exit 2
    fi
    # Open MPI's out-of-band channel (mpirun to its daemons) goes over the
    # launcher's bridge, the only network this namespace shares with the hosts.
    oob_net=${boot%.*}.0/24
    cfgs="rail1 rail2 both both_meas"
    [ -n "$RUN_RAILS_MPI_WEFT" ] && cfgs="$cfgs mpi_both mpi_both_meas"
    [ -n "$RUN_RAILS_MPI_OMPI" ] && cfgs="$cfgs ompi_eth0 ompi_both"
    [ -n "$RUN_RAILS_MPI_OMPI" ] && [ -n "$RUN_RAILS_OMPI_BW" ] && cfgs="$cfgs ompi_both_bw"
    # Bytes sent on rail $1 (eth0, eth1) by all the hosts: what each
    # configuration put on each link, to show how it split the data.
    sent() {
        echo "$hosts" | tr ',' '\n' | cut -d: -f1 | while read -r ns; do
            ip netns exec "$ns" cat "/sys/class/net/$1/statistics/tx_bytes"
        done | awk '{ s += $1 } END { printf "%.0f", s }'
    }
    i=1 failed=0
    while [ "$i" -le "$RUN_RAILS_REPS" ]; do
        for cfg in $cfgs; do
            ompi_if=
            case $cfg in
            rail1) env="WEFT_TCP_RAILS=1 WEFT_TCP_IF=eth0" ;;
            rail2) env="WEFT_TCP_RAILS=1 WEFT_TCP_IF=eth1" ;;
            both | mpi_both) env="WEFT_TCP_RAILS=2 WEFT_TCP_IF=eth0,eth1 WEFT_STRATEGY=split_balance WEFT_RAIL_BW=$RUN_RAILS_BW" ;;
            both_meas | mpi_both_meas) env="WEFT_TCP_RAILS=2 WEFT_TCP_IF=eth0,eth1 WEFT_STRATEGY=split_balance" ;;
            ompi_eth0) env='' ompi_if=eth0 ;;
            ompi_both | ompi_both_bw) env='' ompi_if=eth0,eth1 ;;
            esac
            # Open MPI's own share knob, as WEFT_RAIL_BW is weft's: the
            # bandwidth of each tcp btl module in Mbit/s (by default, the
            # speed ethtool reports, the same 10000 for both veths here).
            ompi_bw=
            [ "$cfg" = ompi_both_bw ] && ompi_bw="--mca btl_tcp_bandwidth_eth0 ${RUN_RAILS_OMPI_BW%,*} --mca btl_tcp_bandwidth_eth1 ${RUN_RAILS_OMPI_BW#*,}"
            s0=$(sent eth0) s1=$(sent eth1)
            case $cfg in
            mpi_*)
                # shellcheck disable=SC2086 # env is a list of assignments
                line=$(env $env "$RUN_RAILS_WEFTRUN" -n "$np" --hosts "$hosts" --rsh "$rsh" \
                    --boot-addr "$boot" --timeout 300 "$RUN_RAILS_MPI_WEFT" --size "$RUN_RAILS_SIZE" |
                    grep '^bandwidth_MBps') ;;
            ompi_*)
                # --bind-to none: every "host" here has the same two cores, and
                # Open MPI would bind the rank of each to the first one.
                # shellcheck disable=SC2086 # ompi_bw is empty or a list of options
                line=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
                    timeout -k 10 300 mpirun.openmpi -np "$np" --host "$hosts" --bind-to none \
                    --mca plm_rsh_agent "$here/scripts/netns_rsh.sh" \
                    --mca oob_tcp_if_include "$oob_net" --mca pml ob1 --mca btl tcp,self \
                    --mca btl_tcp_if_include "$ompi_if" $ompi_bw \
                    "$RUN_RAILS_MPI_OMPI" --size "$RUN_RAILS_SIZE" </dev/null |
                    grep '^bandwidth_MBps') ;;
            *)
                # shellcheck disable=SC2086 # env is a list of assignments
                line=$(env $env "$RUN_RAILS_WEFTRUN" -n "$np" --hosts "$hosts" --rsh "$rsh" \
                    --boot-addr "$boot" "$@" | grep '^bandwidth_MBps') ;;
            esac || {
                # One failed run costs its configuration one repetition (the
                # reps column shows it), not the whole cluster's results.
                echo "run_rails: $cfg failed (repetition $i)" >&2
                failed=$((failed + 1))
                continue
            }
            share=$(awk -v a=$(($(sent eth0) - s0)) -v b=$(($(sent eth1) - s1)) \
                'BEGIN { printf "%.3f", (a + b > 0 ? b / (a + b) : 0) }')
            echo "cluster $cfg $line eth1_share $share" | tee -a "$RUN_RAILS_OUT" >&2
        done
        i=$((i + 1))
    done
    [ $failed = 0 ] || { echo "run_rails: $failed run(s) failed" >&2; exit 1; }
    exit 0
fi

build=build reps=5 rate=2gbit,1gbit size=4M loopback=1 cluster=1 mpi=1
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --no-loopback) loopback=0; shift ;;
    --no-cluster) cluster=0; shift ;;
    --no-mpi) mpi=0; shift ;;
    -h | --help) sed -n '2,36s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "usage: bench/run_rails.sh [--build DIR] [--reps N] [--rate R1,R2|none] [--size S] [--no-loopback] [--no-cluster] [--no-mpi]" >&2; exit 2 ;;
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

# mpi_rails.c built with the MPI wrapper $2 into $build/bench-mpi/$1/ (where
# bench/weft-bench puts its MPI programs); prints the program's path, or
# nothing, with the reason on stderr, when it cannot be built.
mpi_build() {
    if ! command -v "$2" >/dev/null; then
        echo "run_rails: no $2: skipping the $1 MPI configurations" >&2
        return 0
    fi
    mkdir -p "$build/bench-mpi/$1"
    if "$2" -O2 -Wall -Wextra -D_GNU_SOURCE -pthread -I"$here/bench" "$here/bench/mpi_rails.c" \
        "$here/bench/bench_common.c" -o "$build/bench-mpi/$1/mpi_rails" >"$build/bench-mpi/$1/mpi_rails.log" 2>&1; then
        echo "$build/bench-mpi/$1/mpi_rails"
    else
        echo "run_rails: mpi_rails.c does not build with $2 (see $build/bench-mpi/$1/mpi_rails.log): skipping the $1 MPI configurations" >&2
    fi
}

if [ $cluster = 1 ]; then
    ompi_bw=
    if [ "$rate" = none ]; then
        # Unshaped: both links are veth pairs limited only by the CPUs; weft
        # splits them evenly.
        bw=1,1 shaping=
    else
        r1=$(echo "$rate" | cut -d, -f1) r2=$(echo "$rate" | cut -d, -f2)
        bw="$(mbs "$r1"),$(mbs "$r2")" || { echo "run_rails: cannot read rates $rate" >&2; exit 2; }
        shaping="--rate $rate"
        ompi_bw="$(($(mbs "$r1") * 8)),$(($(mbs "$r2") * 8))"
    fi
    mpi_weft='' mpi_ompi=''
    if [ $mpi = 1 ]; then
        if [ -x "$build/bin/mpicc" ]; then
            mpi_weft=$(mpi_build weft "$build/bin/mpicc")
        else
            echo "run_rails: no $build/bin/mpicc (weft built without its MPI layer?): skipping weft's MPI configurations" >&2
        fi
        if command -v mpirun.openmpi >/dev/null; then
            mpi_ompi=$(mpi_build ompi mpicc.openmpi)
        else
            echo "run_rails: no mpirun.openmpi (Debian: openmpi-bin libopenmpi-dev): skipping the Open MPI configurations" >&2
        fi
    fi
    echo "== cluster: 2 hosts, 2 rails, ${shaping:-unshaped} (WEFT_RAIL_BW=$bw for 'both'), $size messages, $reps repetitions"
    set +e
    # shellcheck disable=SC2086 # shaping is empty or an option and its value
    RUN_RAILS_INNER=1 RUN_RAILS_REPS=$reps RUN_RAILS_BW=$bw RUN_RAILS_OUT=$out \
        RUN_RAILS_WEFTRUN=$build/tools/weftrun RUN_RAILS_SIZE=$size \
        RUN_RAILS_MPI_WEFT=$mpi_weft RUN_RAILS_MPI_OMPI=$mpi_ompi RUN_RAILS_OMPI_BW=$ompi_bw \
        scripts/cluster.sh --rails 2 $shaping --weftrun "$here/bench/run_rails.sh" -- \
        --timeout 300 "$build/bench/weft_rails" --size "$size"
    status=$?
    set -e
    [ $status = 77 ] && echo "run_rails: cluster part skipped (see above)"
    # 1: some runs failed; what the others measured is still summed up below
    [ $status = 0 ] || [ $status = 77 ] || [ $status = 1 ] || exit $status
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
awk -f bench/median.awk -f /dev/fd/3 "$out" 3<<'EOF'
{ k = $1 " " $2; if (!(k in seen)) { seen[k] = 1; keys[nk++] = k } v[k] = v[k] " " $4; n[k]++
  if ($(NF - 1) == "eth1_share") sh[k] = sh[k] " " $NF }
END {
    printf "%-22s %10s %21s %5s %10s\n", "configuration", "MB/s", "(range)", "reps", "eth1 share"
    for (i = 0; i < nk; i++) {
        k = keys[i]; m[k] = median(v[k])
        printf "%-22s %10.1f %10.1f-%-10.1f %5d %10s\n", k, m[k], lo(v[k]), hi(v[k]), n[k],
            k in sh ? sprintf("%.3f", median(sh[k])) : "-"
    }
    if (("cluster rail1" in m) && ("cluster rail2" in m) && ("cluster both" in m)) {
        s = m["cluster rail1"] + m["cluster rail2"]
        printf "both / (rail1 + rail2) = %.1f / %.1f = %.3f (target >= 0.90)\n", m["cluster both"], s, m["cluster both"] / s
        printf "both_meas / (rail1 + rail2) = %.3f (no WEFT_RAIL_BW: shares measured)\n", m["cluster both_meas"] / s
    }
    if ("cluster ompi_both" in m) {
        o = m["cluster ompi_both"]
        printf "weft / Open MPI over both links (issue 3 asks >= 1.5):\n"
        printf "  both / ompi_both = %.1f / %.1f = %.3f\n", m["cluster both"], o, m["cluster both"] / o
        printf "  both_meas / ompi_both = %.3f\n", m["cluster both_meas"] / o
        if ("cluster mpi_both" in m) {
            printf "  mpi_both / ompi_both = %.1f / %.1f = %.3f\n", m["cluster mpi_both"], o, m["cluster mpi_both"] / o
            printf "  mpi_both_meas / ompi_both = %.3f\n", m["cluster mpi_both_meas"] / o
        }
        if ("cluster ompi_both_bw" in m) {
            b = m["cluster ompi_both_bw"]
            printf "  both / ompi_both_bw = %.1f / %.1f = %.3f (both told the rates)\n", m["cluster both"], b, m["cluster both"] / b
            if ("cluster mpi_both" in m)
                printf "  mpi_both / ompi_both_bw = %.3f\n", m["cluster mpi_both"] / b
        }
        if ("cluster ompi_eth0" in m)
            printf "  Open MPI: both links / eth0 alone = %.3f\n", o / m["cluster ompi_eth0"]
    }
    if (("loopback rails1" in m) && ("loopback rails2" in m))
        printf "loopback: 2 rails / 1 rail = %.3f\n", m["loopback rails2"] / m["loopback rails1"]
}
EOF
[ $cluster = 0 ] || [ "$status" != 1 ] || exit 1
