#!/bin/sh
# A small cluster on this machine, out of network namespaces, to run weft jobs
# across "hosts": a bridge in the root namespace with the launcher's address,
# one namespace per host with its own address on the bridge through a veth pair,
# lo up, optionally netem delay and rate on each host's link (tbf for the rate
# where the kernel has no netem). Runs
#   weftrun -n H*R --hosts NS0:R,NS1:R,... --rsh "ip netns exec" --boot-addr BRIDGE_IP \
#           [weftrun options] program args
# and tears everything down on the way out, failure and signals included.
#
# usage: scripts/cluster.sh [--hosts H] [--ranks-per-host R] [--delay 100us]
#                           [--rate 1gbit] [--weftrun PATH] [--] [weftrun options] program args
#   H 1 to 16 (default 2), R 1 to 16 (default 1). Exits with weftrun's status;
#   77 (skip) with a reason when namespaces cannot be made here (needs root).
#
# Names carry this script's pid (namespaces wc<pid>h<i>, bridge wcb<pid>), and the
# subnet 10.<pid/256%256>.<pid%256>.0/24 follows it too, so runs in parallel do not
# meet; ctest also serialises them (RESOURCE_LOCK weft_cluster). The hosts share
# this machine's hostname, boot id, /dev/shm and pid space: weftrun gives each
# host's ranks WEFT_NODE_ID=<namespace>, so ranks of different hosts use the
# network between them, as on a real cluster.
set -u
hosts=2 per=1 delay= rate=
weftrun=${WEFTRUN:-$(dirname "$0")/../build/tools/weftrun}
while [ $# -gt 0 ]; do
    case $1 in
    --hosts) hosts=$2; shift 2 ;;
    --ranks-per-host) per=$2; shift 2 ;;
    --delay) delay=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --weftrun) weftrun=$2; shift 2 ;;
    --) shift; break ;;
    -h | --help) sed -n '2,21s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) break ;;
    esac
done
case $hosts$per in *[!0-9]*) echo "cluster.sh: --hosts and --ranks-per-host take numbers" >&2; exit 2 ;; esac
if [ "$hosts" -lt 1 ] || [ "$hosts" -gt 16 ] || [ "$per" -lt 1 ] || [ "$per" -gt 16 ]; then
    echo "cluster.sh: --hosts 1..16, --ranks-per-host 1..16" >&2
    exit 2
fi
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
    [ -n "$made_bridge" ] && ip link del "$bridge" 2>/dev/null
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
made_bridge=1
ip addr add "$net.254/24" dev "$bridge" && ip link set "$bridge" up || fail "cannot set up $bridge"
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
    if [ -n "$delay$rate" ] &&
        ! ip netns exec "$ns" tc qdisc add dev eth0 root netem ${delay:+delay $delay} \
            ${rate:+rate $rate} 2>/dev/null; then
        # Without netem, a token bucket still shapes the rate (not the delay).
        [ -z "$delay" ] &&
            ip netns exec "$ns" tc qdisc add dev eth0 root tbf rate "$rate" burst 256kb \
                latency 100ms 2>/dev/null ||
            skip "netem is not available in this kernel (tbf shapes --rate, not --delay)"
    fi
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

echo "cluster.sh: $hosts hosts ($list) on $bridge $net.0/24${delay:+, delay $delay}${rate:+, rate $rate}"
"$weftrun" -n $((hosts * per)) --hosts "$list" --rsh "ip netns exec" --boot-addr "$net.254" "$@"
status=$?
teardown
exit $status
