#!/bin/sh
# apps/taskrt and apps/cholesky through weftrun: taskrt_test's random task
# graphs (tiles of 64 B, eager, and of 64 KiB, by rendezvous) against their
# sequential result, and the tiled Cholesky factorization with its residual
# check, at 1, 2 and 4 ranks, on the three back ends (MPI, weft's active
# messages, and weft's dynamic broadcast). Usage: test_taskrt.sh WEFTRUN TASKRT_TEST [CHOLESKY]
set -u
WEFTRUN=$1 TEST=$2 CHOL=${3:-}
fail=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
RUN_OPTS="-x OPENBLAS_NUM_THREADS=1"
. "$(dirname "$0")/apps_lib.sh"
for np in 1 2 4; do
    for be in mpi native bcast; do
        run "taskrt $be, $np ranks, 64 B tiles" ": ok$" $np "$TEST" --backend $be --seed $np
        run "taskrt $be, $np ranks, 64 KiB tiles" ": ok$" $np "$TEST" --backend $be \
            --bytes 65536 --tasks 150 --seed $((np + 7))
        [ -n "$CHOL" ] && run "cholesky $be, $np ranks" "check ok" $np "$CHOL" --n 384 --tile 48 \
            --backend $be --check
    done
done
[ -n "$CHOL" ] && run "cholesky mpi, 4 ranks, 1 worker, 16x16 tiles" "check ok" 4 "$CHOL" \
    --n 256 --tile 16 --workers 1 --check
if [ -n "$CHOL" ]; then
    timeout -k 5 60 "$WEFTRUN" -n 1 "$CHOL" --n 100 --tile 48 >"$out" 2>&1
    [ $? = 2 ] && grep -q usage "$out" && echo "ok: a tile that does not divide N is refused" ||
        { echo "FAIL: --n 100 --tile 48 not refused"; fail=1; }
fi
exit $fail
