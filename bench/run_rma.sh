#!/bin/bash
# MPI one-sided communication: weft against Open MPI and MPICH, the same
# source (bench/mpi_rma.c) built with each one's mpicc, launches alternated:
#
#   bench/run_rma.sh [BUILD_DIR] [LAUNCHES] [mpi_rma options...]
#       (default build/rel, 5; options e.g. --win create, --max 64K --overlap 0)
#   RMA_TCP=1 bench/run_rma.sh ...   over loopback tcp: weft's tcp driver with
#                                    WEFT_RMA_MAP=0, without and with a progress
#                                    thread (weft-pt); Open MPI's tcp btl with
#                                    osc pt2pt (osc sm would map the window);
#                                    MPICH (ch4:ucx) with UCX_TLS=tcp,self
#
# Prints, per measurement, the median over the launches of each library's
# value (itself a median of --runs batches), the range, and weft / peer.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build/rel}
launches=${2:-5}
shift $(($# < 2 ? $# : 2))
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_oob_tcp_if_include=lo
src=("$here/mpi_rma.c" "$here/bench_common.c")
flags=(-O2 -D_GNU_SOURCE -pthread -I"$here")
"$build/bin/mpicc" "${flags[@]}" "${src[@]}" -o "$out/weft"
impls=(weft)
[ "${RMA_TCP:-0}" = 1 ] && impls+=(weft-pt)
command -v mpicc.openmpi >/dev/null && mpicc.openmpi "${flags[@]}" "${src[@]}" -o "$out/ompi" &&
    impls+=(ompi)
command -v mpicc.mpich >/dev/null && mpicc.mpich "${flags[@]}" "${src[@]}" -o "$out/mpich" &&
    impls+=(mpich)
args=(--runs 5 "$@")
for ((l = 0; l < launches; l++)); do
    for impl in "${impls[@]}"; do
        case $impl in
        weft)
            if [ "${RMA_TCP:-0}" = 1 ]; then
                WEFT_DRIVERS=tcp WEFT_RMA_MAP=0 "$build/bin/mpirun" -n 2 "$out/weft" "${args[@]}"
            else
                "$build/bin/mpirun" -n 2 "$out/weft" "${args[@]}"
            fi ;;
        weft-pt)
            WEFT_DRIVERS=tcp WEFT_RMA_MAP=0 WEFT_PROGRESS_THREAD=1 \
                "$build/bin/mpirun" -n 2 "$out/weft" "${args[@]}" ;;
        ompi)
            if [ "${RMA_TCP:-0}" = 1 ]; then
                mpirun.openmpi -n 2 --mca btl self,tcp --mca osc pt2pt "$out/ompi" "${args[@]}"
            else
                mpirun.openmpi -n 2 --mca btl self,vader "$out/ompi" "${args[@]}"
            fi 2>/dev/null || true ;; # its osc sm crashes in MPI_Compare_and_swap here
        mpich)
            if [ "${RMA_TCP:-0}" = 1 ]; then
                UCX_TLS=tcp,self mpirun.mpich -n 2 "$out/mpich" "${args[@]}"
            else
                mpirun.mpich -n 2 "$out/mpich" "${args[@]}"
            fi 2>/dev/null || true ;;
        esac | grep '^csv' | sed "s/^/$impl,/" >>"$out/all"
    done
done
python3 - "$out/all" "${impls[@]}" <<'EOS'
import sys, statistics
vals, order = {}, []
impls = sys.argv[2:]
names = {"weft": "weft", "weft-pt": "weft+pt", "ompi": "Open MPI", "mpich": "MPICH"}
for line in open(sys.argv[1]):
    lib, _, bench, param, metric, value = line.strip().split(",")
    key = (bench, param, metric)
    if key not in vals:
        vals[key] = {}
        order.append(key)
    vals[key].setdefault(lib, []).append(float(value))
head = f"{'measurement':<34}" + "".join(f" {names[i]:>10} {'range':>19}" for i in impls)
head += "".join(f" {'weft/' + names[i]:>14}" for i in impls[1:])
print(head)
for key in order:
    bench, param, metric = key
    def fmt(v):
        if not v:
            return f" {'-':>10} {'':>19}"
        return f" {statistics.median(v):>10.4g} [{min(v):>8.4g},{max(v):>8.4g}]"
    row = f"{bench + ' ' + str(int(float(param))) + ' ' + metric:<34}"
    row += "".join(fmt(vals[key].get(i, [])) for i in impls)
    w = vals[key].get("weft", [])
    for i in impls[1:]:
        o = vals[key].get(i, [])
        row += f" {statistics.median(w) / statistics.median(o):>14.2f}" if w and o else f" {'-':>14}"
    print(row)
EOS
