#!/bin/sh
# Soak: the torture pattern (tests/mp/mp_torture.c: random sources,
# destinations, sizes up to 3 MiB, every wildcard kind, every completion call)
# round after round in one job, for a long time, over every network and
# setting, checking that nothing is lost or corrupt and that memory stays flat.
#
#   bench/soak.sh [--build DIR] [--seconds S] [--ranks N] [--nets "shm tcp ofi"]
#
# S (default 3600) is split evenly between the runs: shm, tcp and ofi (over
# libfabric's tcp provider on loopback; left out where the ofi driver is not
# built) x WEFT_STRATEGY default and aggreg x without and with the progress
# thread (WEFT_PROGRESS_THREAD=1), 12 runs. Each run is one weftrun job of N
# ranks (default 4) running rounds of 3000 messages until its time is up, with
# a barrier between rounds. A run passes when every check passed (each message
# arrived once, intact, in order where the pattern asks it), the job exited 0,
# and rank 0's resident memory grew by at most 10% + 2 MiB over the second
# half of its rounds: pools warm up to a plateau (libfabric's take hundreds
# of rounds), a leak keeps growing. Not a test: an hour does not fit CI.
# Prints a table; exits 1 if any run failed.
set -u
cd "$(dirname "$0")/.."
build=build seconds=3600 ranks=4 nets_req=""
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --nets) nets_req=$2; shift 2 ;;
    *) echo "usage: bench/soak.sh [--build DIR] [--seconds S] [--ranks N] [--nets LIST]" >&2; exit 2 ;;
    esac
done
weftrun=$build/tools/weftrun
torture=$build/tests/mp/mp_torture
[ -x "$weftrun" ] && [ -x "$torture" ] ||
    { echo "soak: build weft with its tests first (ninja -C $build)" >&2; exit 2; }
nets="shm tcp"
if grep -q "WEFT_OFI:BOOL=ON" "$build/CMakeCache.txt" 2>/dev/null; then nets="$nets ofi"; fi
[ -n "$nets_req" ] && nets=$nets_req
nruns=0
for _ in $nets; do nruns=$((nruns + 4)); done
slice=$((seconds / nruns))
[ $slice -ge 10 ] || slice=10
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
printf '%-4s %-8s %-8s %7s %9s %11s %11s %s\n' net strategy progress rounds checks "rss mid KiB" \
    "rss end KiB" result
fails=0 seed=1
for net in $nets; do
    for strategy in default aggreg; do
        for progress in 0 1; do
            case $net in
            shm) env="WEFT_DRIVERS=self,shm" ;;
            tcp) env="WEFT_DRIVERS=self,tcp" ;;
            ofi) env="WEFT_DRIVERS=self,ofi WEFT_OFI_PROVIDER=tcp WEFT_OFI_DOMAIN=lo" ;;
            esac
            out=$log/$net-$strategy-$progress.log
            # shellcheck disable=SC2086
            env $env WEFT_STRATEGY=$strategy WEFT_PROGRESS_THREAD=$progress \
                "$weftrun" --timeout $((slice + 300)) -n "$ranks" "$torture" $seed 3000 "-$slice" \
                >"$out" 2>&1
            rc=$?
            seed=$((seed + 1000003))
            rounds=$(sed -n 's/^mp_torture: round \([0-9]*\),.*/\1/p' "$out" | tail -1)
            rss=$(sed -n 's/^mp_torture: round [0-9]*, rank 0 resident \([0-9]*\) KiB.*/\1/p' "$out")
            nrss=$(echo "$rss" | grep -c .)
            first=$(echo "$rss" | sed -n "$((nrss / 2 + 1))p")
            last=$(echo "$rss" | tail -1)
            passed=$(sed -n 's/^mp_torture: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$out")
            bad=$(echo "$passed" | awk '{ s += $2 } END { print s + 0 }')
            checks=$(echo "$passed" | awk '{ s += $1 } END { print s + 0 }')
            result=ok
            if [ $rc != 0 ] || [ "$bad" != 0 ] || [ -z "$passed" ]; then
                result="FAILED (exit $rc, $bad checks failed)"
            elif [ -n "$first" ] && [ -n "$last" ] &&
                [ "$last" -gt $((first + first / 10 + 2048)) ]; then
                result="MEMORY GREW"
            fi
            [ $result = ok ] || { fails=$((fails + 1)); tail -20 "$out" | sed 's/^/    /'; }
            printf '%-4s %-8s %-8s %7s %9s %11s %11s %s\n' $net $strategy $progress \
                "${rounds:-0}" "$checks" "${first:--}" "${last:--}" "$result"
        done
    done
done
echo "soak: $nruns runs of ${slice} s, $fails failed"
[ $fails = 0 ]
