#!/bin/sh
# A remote shell whose "hosts" are network namespaces, for launchers that
# expect ssh: Open MPI's mpirun (--mca plm_rsh_agent scripts/netns_rsh.sh)
# across the hosts of scripts/cluster.sh. Like ssh, it joins its arguments
# into one command line and runs it with sh, here inside the namespace.
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
exec ip netns exec "$ns" sh -c "$*"
