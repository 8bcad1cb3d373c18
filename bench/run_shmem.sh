#!/bin/bash
# OpenSHMEM: weft against Open MPI's OSHMEM, the same source
# (bench/shmem_bench.c) built with each one's oshcc, launches alternated:
#
#   bench/run_shmem.sh [BUILD_DIR] [LAUNCHES]     (default build/rel, 5)
#
# Prints, per measurement, the median over the launches of each library's
# value (itself a median of --runs batches), the range, and weft / Open MPI.
# Latencies: lower is better; rates: higher is better.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build/rel}
launches=${2:-5}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_oob_tcp_if_include=lo
# Open MPI's default heap is too small for the 4 MiB puts here: the same for both.
export SHMEM_SYMMETRIC_SIZE=512M
src=("$here/shmem_bench.c" "$here/bench_common.c")
"$build/bin/oshcc" -O2 -D_GNU_SOURCE -I"$here" "${src[@]}" -lpthread -o "$out/sb_weft"
have_ompi=0
if command -v oshcc.openmpi >/dev/null || [ -x /usr/bin/oshcc ]; then
    ompicc=$(command -v oshcc.openmpi || echo /usr/bin/oshcc)
    "$ompicc" -O2 -D_GNU_SOURCE -I"$here" "${src[@]}" -lpthread -o "$out/sb_ompi" && have_ompi=1
fi
args=(--runs 11 --max 4M)
for ((l = 0; l < launches; l++)); do
    "$build/bin/oshrun" -n 2 "$out/sb_weft" "${args[@]}" | grep '^csv' | sed 's/^/weft,/' >>"$out/all"
    if [ $have_ompi = 1 ]; then
        # Open MPI 4.1's OSHMEM ends with a segmentation fault in its teardown
        # here, after the results are out: its exit status is not looked at.
        { oshrun -np 2 -x SHMEM_SYMMETRIC_SIZE "$out/sb_ompi" "${args[@]}" 2>/dev/null || true; } |
            grep '^csv' | sed 's/^/ompi,/' >>"$out/all"
    fi
done
python3 - "$out/all" <<'EOS'
import sys, statistics
vals = {}
order = []
for line in open(sys.argv[1]):
    lib, _, bench, param, metric, value = line.strip().split(",")
    key = (bench, param, metric)
    if key not in vals:
        vals[key] = {}
        order.append(key)
    vals[key].setdefault(lib, []).append(float(value))
print(f"{'measurement':<28} {'weft':>10} {'range':>19} {'Open MPI':>10} {'range':>19} {'weft/OMPI':>9}")
for key in order:
    bench, param, metric = key
    w = vals[key].get("weft", [])
    o = vals[key].get("ompi", [])
    def fmt(v):
        if not v:
            return f"{'-':>10} {'':>19}"
        return f"{statistics.median(v):>10.4g} [{min(v):>8.4g},{max(v):>8.4g}]"
    ratio = f"{statistics.median(w) / statistics.median(o):>9.2f}" if w and o else f"{'-':>9}"
    name = f"{bench} {int(float(param))} {metric}"
    print(f"{name:<28} {fmt(w)} {fmt(o)} {ratio}")
EOS
