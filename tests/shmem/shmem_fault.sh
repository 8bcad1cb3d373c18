#!/bin/sh
# shmem_fault.sh OSHRUN PROG NP WHAT PATTERN: run PROG WHAT on NP PEs, which
# must fail: a non-zero exit, PATTERN in its output, no segment of the job
# left in /dev/shm.
oshrun=$1 prog=$2 np=$3 what=$4 pattern=$5
out=$("$oshrun" --timeout 60 -n "$np" "$prog" "$what" 2>&1)
rc=$?
echo "$out"
[ $rc -ne 0 ] || { echo "FAIL: the job exited 0"; exit 1; }
echo "$out" | grep -q -- "$pattern" || { echo "FAIL: no '$pattern' in the output"; exit 1; }
job=$(echo "$out" | sed -n 's/^job //p' | head -n 1)
[ -n "$job" ] || { echo "FAIL: the job id was not printed"; exit 1; }
left=$(ls /dev/shm 2>/dev/null | grep -F -- "weft-$job-" || true)
[ -z "$left" ] || { echo "FAIL: left in /dev/shm: $left"; exit 1; }
echo "ok: exit $rc"
