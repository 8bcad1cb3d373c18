#!/bin/sh
# A remote shell whose "hosts" are network namespaces, for launchers that
# expect ssh: Open MPI's mpirun (--mca plm_rsh_agent scripts/netns_rsh.sh)
# across the hosts of scripts/cluster.sh. Like ssh, it joins its arguments
# into one command line and runs it with sh, here inside the namespace, and
# in a UTS namespace of its own whose host name is the namespace's name: a
# launcher that keys its files on the host name (Open MPI's session
# directories under /tmp, which the namespaces share) then sees distinct
# hosts, as it would on a real cluster.
#
#   scripts/netns_rsh.sh NAMESPACE command [words...]
#
# Leading ssh options (-x, -o X, ...), which some launchers add, are skipped.
# Needs root, as ip netns exec does.
set -eu
while [ $# -gt 0 ]; do
    case $1 in
    -o | -l | -p | -i | -F) shift 2 ;;
    -*) shift ;;
    *) break ;;
    esac
done
[ $# -ge 2 ] || { echo "netns_rsh.sh: usage: netns_rsh.sh NAMESPACE command [words...]" >&2; exit 2; }
ns=$1
shift
if command -v unshare >/dev/null && command -v hostname >/dev/null; then
    # shellcheck disable=SC2016 # expanded by the inner shell
    exec ip netns exec "$ns" unshare --uts sh -c 'hostname "$1" && exec sh -c "$2"' sh "$ns" "$*"
fi
exec ip netns exec "$ns" sh -c "$*"
