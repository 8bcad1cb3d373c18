#!/bin/sh
# A parent that dies takes the job it spawned with it (weftrun's lifeline
# from MPI_Comm_spawn): the parent job fails with the parent's signal, and
# the child it left sleeping is gone soon after.
#   spawn_orphan.sh MPIRUN TEST_SPAWN_FAULT
set -u
mpirun=$1 prog=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/weft-orphan.XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$mpirun" --timeout 100 -n 1 "$prog" orphan "$dir/pid"
rc=$?
[ $rc -eq 137 ] || { echo "spawn_orphan: the parent job exited $rc, not 137 (SIGKILL)"; exit 1; }
pid=$(cat "$dir/pid" 2>/dev/null)
[ -n "$pid" ] || { echo "spawn_orphan: the child never wrote its pid"; exit 1; }
i=0
while kill -0 "$pid" 2>/dev/null; do
    i=$((i + 1))
    [ $i -le 600 ] || { echo "spawn_orphan: child $pid still alive 60 s after its parent died"; kill -9 "$pid"; exit 1; }
    sleep 0.1
done
echo "spawn_orphan: child $pid ended with its parent"
