#!/bin/bash
# Instructions per 8-byte message in mpi_msgrate (window 64), the same source
# built against weft, Open MPI and MPICH, counted by callgrind on both ranks
# inside the timed loop (rate_iters) only:
#
#   bench/callgrind_msgrate.sh [BUILD_DIR]      (default build/rel)
#
# For each library and rank: the calls of MPI_Isend / MPI_Irecv and
# MPI_Waitall in the loop and their inclusive instructions per message, and
# every instruction of the loop per message. The sender's MPI_Waitall and
# the receiver's include the polls that found nothing while they waited,
# whose number depends on timing; MPI_Isend and MPI_Irecv are deterministic.
# Prints one line per library and rank.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build/rel}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_oob_tcp_if_include=lo
cat >"$out/vg.sh" <<'EOS'
#!/bin/sh
rank=${WEFT_RANK:-${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}}
exec valgrind --tool=callgrind --toggle-collect=rate_iters \
    --callgrind-out-file="$VG_DIR/cg.$rank" "$@" 2>/dev/null
EOS
chmod +x "$out/vg.sh"
declare -A cc=([weft]="$build/bin/mpicc" [ompi]=mpicc.openmpi [mpich]=mpicc.mpich)
per() { # file function -> "calls inclusive"
    callgrind_annotate --tree=calling --inclusive=yes "$1" 2>/dev/null |
        awk -v f="$2" '$0 ~ ">" && $0 ~ (":" f " ") {
            gsub(",", "", $1); n = $0; sub(/.*\(/, "", n); sub(/x\).*/, "", n); gsub(",", "", n)
            c += n; i += $1 } END { printf "%d %d\n", c, i }'
}
for impl in weft ompi mpich; do
    command -v "${cc[$impl]}" >/dev/null || { echo "$impl: ${cc[$impl]} not found"; continue; }
    "${cc[$impl]}" -O2 -D_GNU_SOURCE -I"$here" "$here/mpi_msgrate.c" "$here/bench_common.c" \
        -o "$out/mr_$impl"
    rm -f "$out"/cg.*
    case $impl in
    weft) VG_DIR=$out "$build/bin/mpirun" -n 2 "$out/vg.sh" "$out/mr_$impl" --max 8 --quick --runs 1 ;;
    ompi) VG_DIR=$out mpirun.openmpi -np 2 --mca pml ob1 --mca btl vader,self -x VG_DIR \
        "$out/vg.sh" "$out/mr_$impl" --max 8 --quick --runs 1 ;;
    mpich) VG_DIR=$out mpirun.mpich -n 2 -genv VG_DIR "$out" "$out/vg.sh" "$out/mr_$impl" \
        --max 8 --quick --runs 1 ;;
    esac >/dev/null 2>&1
    for r in 0 1; do
        f="$out/cg.$r"
        [ -f "$f" ] || { echo "$impl rank $r: no profile"; continue; }
        op=$([ $r = 0 ] && echo PMPI_Isend || echo PMPI_Irecv)
        read -r n iop < <(per "$f" "$op")
        read -r _ iwait < <(per "$f" PMPI_Waitall)
        total=$(callgrind_annotate "$f" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
        [ "$n" -gt 0 ] || { echo "$impl rank $r: no $op calls"; continue; }
        awk -v impl="$impl" -v r="$r" -v op="${op#PMPI_}" -v n="$n" -v a="$iop" -v w="$iwait" -v t="$total" \
            'BEGIN { printf "%-6s rank %d: %6d messages  %s %6.0f  Waitall %6.0f  loop %6.0f instructions per message\n",
                     impl, r, n, op, a / n, w / n, t / n }'
    done
done
