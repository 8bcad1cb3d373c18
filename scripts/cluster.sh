#!/bin/sh
# A small cluster on this machine, out of network namespaces, to run weft jobs
# across "hosts": a bridge in the root namespace with the launcher's address,
# one namespace per host with its own address on the bridge through a veth pair,
# lo up, optionally netem delay and rate on each host's link (tbf for the rate
# where the kernel has no netem). With --rails N every host gets N links, eth0
# to eth<N-1>, each on its own bridge and subnet (multi-rail: WEFT_TCP_RAILS=N
# WEFT_TCP_IF=eth0,eth1,...); --rate may then give one rate per rail
# (2gbit,1gbit), shaping each host's sending side of that rail. Runs
#   weftrun -n H*R --hosts NS0:R,NS1:R,... --rsh "ip netns exec" --boot-addr BRIDGE_IP \
#           [weftrun options] program args
# and tears everything down on the way out, failure and signals included.
#
# usage: scripts/cluster.sh [--hosts H] [--ranks-per-host R] [--delay 100us]
#                           [--rate 1gbit[,RATE2...]] [--rails N] [--weftrun PATH] [--]
#                           [weftrun options] program args
#   H 1 to 16 (default 2), R 1 to 16 (default 1), N 1 to 4 (default 1). Exits with weftrun's status;
#   77 (skip) with a reason when namespaces cannot be made here (needs root).
#
# Names carry this script's pid (namespaces wc<pid>h<i>, bridge wcb<pid>), and the
# subnet 10.<pid/256%256>.<pid%256>.0/24 follows it too, so runs in parallel do not
# meet; ctest also serialises them (RESOURCE_LOCK weft_cluster). Extra rails
# (bridges wcb<pid>r<k>, 192.168.<100+k>.0/24) have no address in this namespace,
# so they meet nothing here either. The hosts share
# this machine's hostname, boot id, /dev/shm and pid space: weftrun gives each
# host's ranks WEFT_NODE_ID=<namespace>, so ranks of different hosts use the
# network between them, as on a real cluster.
set -u
hosts=2 per=1 delay= rate= rails=1
weftrun=${WEFTRUN:-$(dirname "$0")/../build/tools/weftrun}
while [ $# -gt 0 ]; do
    case $1 in
    --hosts) hosts=$2; shift 2 ;;
    --ranks-per-host) per=$2; shift 2 ;;
    --delay) delay=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --rails) rails=$2; shift 2 ;;
    --weftrun) weftrun=$2; shift 2 ;;
    --) shift; break ;;
    -h | --help) sed -n '2,29s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) break ;;
    esac
done
case $hosts$per$rails in *[!0-9]*) echo "cluster.sh: --hosts, --ranks-per-host and --rails take numbers" >&2; exit 2 ;; esac
if [ "$hosts" -lt 1 ] || [ "$hosts" -gt 16 ] || [ "$per" -lt 1 ] || [ "$per" -gt 16 ] ||
    [ "$rails" -lt 1 ] || [ "$rails" -gt 4 ]; then
    echo "cluster.sh: --hosts 1..16, --ranks-per-host 1..16, --rails 1..4" >&2
    exit 2
fi
# The rate of rail k: the k-th entry of --rate, or its only one.
rate_of() {
    case $rate in
    *,*) echo "$rate" | cut -d, -f$(($1 + 1)) ;;
    *) echo "$rate" ;;
    esac
}
[ $# -gt 0 ] || { echo "cluster.sh: no program to run (see --help)" >&2; exit 2; }
[ -x "$weftrun" ] || { echo "cluster.sh: no weftrun at $weftrun (use --weftrun)" >&2; exit 2; }

skip() { echo "cluster.sh: skipped: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "network namespaces need root"
command -v ip >/dev/null || skip "no ip command (iproute2)"

id=$$
tag=wc$id
bridge=wcb$id
net=10.$((id / 256 % 256)).$((id % 256))
made_ns=
made_bridge=
teardown() {
    for ns in $made_ns; do ip netns del "$ns" 2>/dev/null; done
    for b in $made_bridge; do ip link del "$b" 2>/dev/null; done
    made_ns= made_bridge=
}
trap 'teardown' EXIT
trap 'teardown; exit 130' INT
trap 'teardown; exit 143' TERM
trap 'teardown; exit 129' HUP

# Can we make namespaces at all (a container without CAP_SYS_ADMIN cannot)?
ip netns add "${tag}probe" 2>/dev/null || skip "cannot create network namespaces here"
ip netns del "${tag}probe"

fail() { echo "cluster.sh: $*" >&2; exit 1; }
ip link add "$bridge" type bridge || fail "cannot create bridge $bridge"
made_bridge=$bridge
ip addr add "$net.254/24" dev "$bridge" && ip link set "$bridge" up || fail "cannot set up $bridge"
k=1
while [ $k -lt "$rails" ]; do
    ip link add "${bridge}r$k" type bridge || fail "cannot create bridge ${bridge}r$k"
    made_bridge="$made_bridge ${bridge}r$k"
    ip link set "${bridge}r$k" up || fail "cannot set up ${bridge}r$k"
    k=$((k + 1))
done
# shape NS DEV RATE: netem delay and rate on DEV's egress, or tbf for the rate
shape() {
    [ -n "$delay$3" ] || return 0
    if ! ip netns exec "$1" tc qdisc add dev "$2" root netem ${delay:+delay $delay} \
        ${3:+rate $3} 2>/dev/null; then
        # Without netem, a token bucket still shapes the rate (not the delay).
        [ -z "$delay" ] &&
            ip netns exec "$1" tc qdisc add dev "$2" root tbf rate "$3" burst 256kb \
                latency 100ms 2>/dev/null ||
            skip "netem is not available in this kernel (tbf shapes --rate, not --delay)"
    fi
}
list=
i=0
while [ $i -lt "$hosts" ]; do
    ns=${tag}h$i
    ip netns add "$ns" || fail "cannot create namespace $ns"
    made_ns="$made_ns $ns"
    ip link add "${tag}v$i" type veth peer name "${tag}p$i" || fail "cannot create veth for $ns"
    ip link set "${tag}v$i" master "$bridge" && ip link set "${tag}v$i" up &&
        ip link set "${tag}p$i" netns "$ns" &&
        ip -n "$ns" link set "${tag}p$i" name eth0 &&
        ip -n "$ns" addr add "$net.$((i + 1))/24" dev eth0 &&
        ip -n "$ns" link set eth0 up && ip -n "$ns" link set lo up ||
        fail "cannot wire $ns to $bridge"
    shape "$ns" eth0 "$(rate_of 0)"
    k=1
    while [ $k -lt "$rails" ]; do
        ip link add "${tag}v${i}r$k" type veth peer name "${tag}p${i}r$k" &&
            ip link set "${tag}v${i}r$k" master "${bridge}r$k" &&
            ip link set "${tag}v${i}r$k" up &&
            ip link set "${tag}p${i}r$k" netns "$ns" &&
            ip -n "$ns" link set "${tag}p${i}r$k" name "eth$k" &&
            ip -n "$ns" addr add "192.168.$((100 + k)).$((i + 1))/24" dev "eth$k" &&
            ip -n "$ns" link set "eth$k" up || fail "cannot wire rail $k of $ns"
        shape "$ns" "eth$k" "$(rate_of $k)"
        k=$((k + 1))
    done
    list="$list${list:+,}$ns:$per"
    i=$((i + 1))
done
# The hosts must reach the launcher before anything starts: a firewall that drops
# bridged traffic would otherwise look like a weft bug.
i=0
command -v ping >/dev/null || i=$hosts # no ping here: weftrun's own message will have to do
while [ $i -lt "$hosts" ]; do
    ip netns exec "${tag}h$i" ping -c 1 -W 2 "$net.254" >/dev/null 2>&1 ||
        fail "host ${tag}h$i cannot reach $net.254 over $bridge (firewall on bridged traffic?)"
    i=$((i + 1))
done
k=1
while [ $k -lt "$rails" ] && [ "$hosts" -gt 1 ] && command -v ping >/dev/null; do
    ip netns exec "${tag}h0" ping -c 1 -W 2 "192.168.$((100 + k)).2" >/dev/null 2>&1 ||
        fail "host ${tag}h0 cannot reach ${tag}h1 on rail $k (192.168.$((100 + k)).2)"
    k=$((k + 1))
done

echo "cluster.sh: $hosts hosts ($list) on $bridge $net.0/24${delay:+, delay $delay}${rate:+, rate $rate}"
[ "$rails" -gt 1 ] && echo "cluster.sh: $rails rails per host: eth0 to eth$((rails - 1))"
"$weftrun" -n $((hosts * per)) --hosts "$list" --rsh "ip netns exec" --boot-addr "$net.254" "$@"
status=$?
teardown
exit $status
