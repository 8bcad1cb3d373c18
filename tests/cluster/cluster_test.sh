#!/bin/sh
# ctest's way into scripts/cluster.sh.
#   cluster_test.sh mp CLUSTER_SH WEFTRUN WEFT_INFO [cluster.sh options] -- program args
#       a multi-process test across hosts; ranks of different hosts talk over the
#       network, so it skips (77) while weft-info lists no tcp driver
#   cluster_test.sh fault CLUSTER_SH WEFTRUN BOOT_HELPER HOSTS
#       one host's rank is killed mid-job: the job must end at once with a line
#       naming the rank and its host, every other rank gone, no hang
set -u
mode=$1 cluster=$2 weftrun=$3
shift 3
case $mode in
mp)
    info=$1
    shift
    if ! "$info" | grep -qE '^  tcp '; then
        echo "cluster_test: skipped: this build has no tcp driver (weft-info), which ranks on" \
            "different hosts need"
        exit 77
    fi
    opts=
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        opts="$opts $1"
        shift
    done
    shift
    # shellcheck disable=SC2086 # the options are single words
    exec "$cluster" --weftrun "$weftrun" $opts -- --timeout 250 "$@"
    ;;
fault)
    helper=$1 hosts=$2
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    # A job that does not end fails on weftrun's --timeout (124, not 137).
    "$cluster" --weftrun "$weftrun" --hosts "$hosts" -- --timeout 60 "$helper" kill-self 1 \
        >"$tmp/out" 2>"$tmp/err"
    status=$?
    cat "$tmp/out" "$tmp/err"
    [ $status = 77 ] && exit 77
    fail=0
    [ $status = 137 ] || { echo "FAIL: status $status, expected 137 (SIGKILL)"; fail=1; }
    grep -qE "^weftrun: rank 1 on host wc[0-9]+h1 \(pid [0-9]+\) was killed by signal 9 \(Killed\); ending the job" \
        "$tmp/err" || { echo "FAIL: no line naming rank 1 and its host"; fail=1; }
    for pid in $(sed -n 's/^sleeping rank [0-9]* pid //p' "$tmp/out"); do
        if [ -d "/proc/$pid" ] && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null; then
            echo "FAIL: rank pid $pid survived the job"
            kill -KILL "$pid"
            fail=1
        fi
    done
    [ $fail = 0 ] && echo "cluster_test: fault: ok"
    exit $fail
    ;;
*)
    echo "usage: cluster_test.sh mp|fault ..." >&2
    exit 2
    ;;
esac
