#!/bin/sh
# weftrun's placement (--map-by, --bind-to, --report-bindings): real bindings
# on this machine, read back from /proc/self/status; the cpu sets and pictures
# weftrun chooses on hwloc's synthetic machines (a 2-package x 2-NUMA x 8-core
# x 2-hwthread one, a 64-core one); remote ranks placed on their host by
# `weftrun --placed`; bad input refused before any rank starts.
# Usage: test_weftrun_place.sh WEFTRUN RSH_DETACH HWLOC(ON/OFF)
set -u
WEFTRUN=$1
RSH=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
HWLOC=$3
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$tmp/out
err=$tmp/err
. "$(dirname "$0")/weftrun_lib.sh"

# The cpus a rank may run on, as the kernel says: one line per rank, tagged.
SHOW='echo "cpus $(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"'
mine=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
ncpu=$(nproc)
# Cores of this machine, from weftrun's own picture of it ("[B/.]": 2).
pic=$("$WEFTRUN" --bind-to core --report-bindings -n 1 true 2>&1 | sed -n 's/.*): \(\[.*\]\).*/\1/p')
ncore=$(printf '%s' "$pic" | tr -cd '[/' | wc -c)
[ "$ncore" -ge 1 ] || { echo "FAIL: no picture of this machine from weftrun: $pic"; exit 1; }
echo "this machine: $ncore cores, $ncpu cpus allowed ($mine): $pic"

# --- real bindings on this machine
if [ "$ncore" -ge 2 ]; then
    if run 0 15 --tag-output --bind-to core --report-bindings -n 2 sh -c "$SHOW"; then
        c0=$(sed -n 's/^\[0\] cpus //p' "$out")
        c1=$(sed -n 's/^\[1\] cpus //p' "$out")
        expect "$err" "^weftrun: host [^ ]+ rank 0: bound to 0x[0-9a-f]+ \(cpus $c0\): \[" \
            "rank 0 bound where --report-bindings says ($c0)"
        expect "$err" "^weftrun: host [^ ]+ rank 1: bound to 0x[0-9a-f]+ \(cpus $c1\): \[" \
            "rank 1 bound where --report-bindings says ($c1)"
        [ -n "$c0" ] && [ "$c0" != "$c1" ] && [ "$c0" != "$mine" ] && ok "two ranks, two cores" ||
            bad "ranks bound to '$c0' and '$c1' (this process: $mine)"
    fi
    # The default binds too (ranks <= cores), a core each.
    if run 0 15 --tag-output -n 2 sh -c "$SHOW"; then
        c0=$(sed -n 's/^\[0\] cpus //p' "$out")
        c1=$(sed -n 's/^\[1\] cpus //p' "$out")
        [ -n "$c0" ] && [ "$c0" != "$c1" ] && [ "$c0" != "$mine" ] &&
            ok "default: ranks on cores of their own ($c0 / $c1)" ||
            bad "default: ranks on '$c0' and '$c1'"
    fi
else
    echo "skip: one core here: two ranks cannot be bound apart"
fi
# One rank by default: all the cores this process may use.
run 0 15 -n 1 sh -c "$SHOW" && expect "$out" "^cpus $mine\$" "one rank: every allowed cpu ($mine)"
# Oversubscribed, or --bind-to none: not bound.
n=$((ncore + 1))
if run 0 30 --report-bindings -n $n sh -c "$SHOW"; then
    [ "$(grep -c "^cpus $mine\$" "$out")" = "$n" ] && ok "$n ranks on $ncore cores: not bound" ||
        bad "$n ranks on $ncore cores: $(cat "$out")"
    expect "$err" "rank 0: not bound \(more ranks than cores here; $n ranks on this host\)" \
        "--report-bindings says why"
fi
run 0 15 --bind-to none --report-bindings -n 2 sh -c "$SHOW" &&
    [ "$(grep -c "^cpus $mine\$" "$out")" = 2 ] && expect "$err" "not bound \(--bind-to none" \
    "--bind-to none"
# Through mpirun's options (Open MPI's spelling).
MPIRUN=$(dirname "$WEFTRUN")/../bin/mpirun
if [ -x "$MPIRUN" ] && [ "$ncore" -ge 2 ]; then
    timeout -k 5 150 "$MPIRUN" --bind-to core --map-by core --report-bindings -np 2 true \
        >"$out" 2>"$err" && expect "$err" "rank 1: bound to" "mpirun --bind-to core --report-bindings"
fi

# --- remote ranks: placed on their host by weftrun --placed
if [ "$ncore" -ge 2 ]; then
    if run 0 30 --tag-output --hosts h0:2,h1:2 --rsh "$RSH" --boot-addr 127.0.0.1 \
        --bind-to core --report-bindings -n 4 sh -c "$SHOW"; then
        expect "$err" "^(\[3\] )?weftrun: host h1 rank 3: bound to " "remote rank 3 reports from h1"
        c2=$(sed -n 's/^\[2\] cpus //p' "$out")
        c3=$(sed -n 's/^\[3\] cpus //p' "$out")
        [ -n "$c2" ] && [ "$c2" != "$c3" ] && [ "$c2" != "$mine" ] &&
            ok "h1's two ranks on cores of their own ($c2 / $c3)" ||
            bad "h1's ranks on '$c2' and '$c3'"
    fi
fi
run 2 30 --hosts h0,h1 --rsh "$RSH" --boot-addr 127.0.0.1 --map-by core:pe=1000 -n 2 true &&
    expect "$err" "host h[01] rank [01]: cannot place: pe=1000 is more than the" \
        "a remote rank that cannot be placed says why"

# --- bad input: refused before any rank starts
started=$tmp/started
run 2 5 --bind-to board -n 1 touch "$started" && expect "$err" "--bind-to 'board'" \
    "--bind-to board refused"
run 2 5 --map-by l2cache -n 1 touch "$started" && expect "$err" "--map-by 'l2cache'" \
    "--map-by l2cache refused"
run 2 5 --map-by core:pe=0 -n 1 touch "$started" && expect "$err" "pe=N needs" "pe=0 refused"
run 2 5 --map-by core:pe=$((ncore * 4 + 1)) -n 1 touch "$started" &&
    expect "$err" "pe=$((ncore * 4 + 1)) is more than the [0-9]+ cores of a package" \
        "pe larger than a package refused"
run 2 5 --bind-to core -n $((ncore + 1)) touch "$started" &&
    expect "$err" "$((ncore + 1)) ranks do not fit this host's $ncore cores" \
        "more ranks than cores with --bind-to core refused"
[ -e "$started" ] && bad "a rank started despite a refused placement" ||
    ok "no rank started for any refused placement"

# --- synthetic machines: what weftrun chooses, reported and not applied
if [ "$HWLOC" = ON ]; then
    HWLOC_SYNTHETIC="pack:2 numa:2 core:8 pu:2"
    export HWLOC_SYNTHETIC
    E='\(not applied: the topology is not this machine.s\)'
    P0='\[BB/BB/BB/BB/BB/BB/BB/BB/\.\./\.\./\.\./\.\./\.\./\.\./\.\./\.\.\]'
    PX='\[(\.\./){15}\.\.\]'
    if run 0 15 --map-by numa --report-bindings -n 4 true; then
        expect "$err" "rank 0: bound to 0x0000ffff \(cpus 0-15\): $P0$PX $E" "numa: rank 0 picture"
        expect "$err" "rank 3: bound to 0xffff0000,0x00000000 \(cpus 48-63\): " "numa: rank 3"
    fi
    run 0 15 --map-by package:pe=4 --report-bindings -n 3 true &&
        expect "$err" "rank 1: bound to 0x000000ff,0x00000000 \(cpus 32-39\): $PX\[BB/BB/BB/BB/" \
            "package:pe=4: rank 1 on the second package's first 4 cores"
    run 0 15 --map-by numa --bind-to core --report-bindings -n 6 true &&
        expect "$err" "rank 5: bound to 0x000c0000 \(cpus 18-19\)" "numa, bound to core: rank 5"
    run 0 15 --bind-to hwthread --report-bindings -n 3 true &&
        expect "$err" "rank 2: bound to 0x00000004 \(cpus 2\): \[\.\./B\./" "hwthread: rank 2"
    run 2 5 --bind-to core -n 33 true &&
        expect "$err" "33 ranks do not fit this host's 32 cores" "33 ranks on 32 cores refused"
    run 2 5 --map-by l3cache -n 2 true && expect "$err" "has no l3cache" "no L3 here: refused"
    HWLOC_SYNTHETIC="pack:2 numa:2 l3:2 core:8 pu:1"
    run 0 15 --map-by l3cache --report-bindings -n 9 true &&
        expect "$err" "rank 8: bound to 0x000000ff \(cpus 0-7\): \[B/B/B/B/B/B/B/B/\./" \
            "64 cores, by L3: rank 8 back on the first"
    run 0 15 --report-bindings -n 64 true &&
        expect "$err" "rank 63: bound to 0x80000000,0x00000000 \(cpus 63\)" "64 ranks, a core each"
    unset HWLOC_SYNTHETIC
fi
exit $fail
