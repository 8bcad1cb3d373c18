#!/bin/sh
# apps/spmvm through weftrun at 1, 2 and 4 ranks, two OpenMP threads each
# (one under ThreadSanitizer, which does not see libgomp's synchronization):
# every mode (vector, naive, task) on every matrix kind (Holstein-Hubbard-like,
# 3-D Poisson cube and box, a symmetric real and a general pattern Matrix
# Market file, a matrix with fewer rows than ranks), each checked by spmvm
# against the serial product of its rows; then bad input.
# Usage: test_spmvm.sh WEFTRUN SPMVM [THREADS]
set -u
WEFTRUN=$1 SPMVM=$2 THREADS=${3:-2}
here=$(cd "$(dirname "$0")" && pwd)
fail=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
run() { # np matrix: expect 3 checked modes
    np=$1 m=$2
    timeout -k 5 300 "$WEFTRUN" --timeout 240 -n "$np" -x OMP_NUM_THREADS="$THREADS" \
        -x OMP_WAIT_POLICY=passive "$SPMVM" --matrix "$m" --iters 3 >"$out" 2>&1
    st=$?
    if [ $st = 0 ] && [ "$(grep -c '  check ok ' "$out")" = 3 ]; then
        echo "ok: $np ranks, $m: $(grep -c '  check ok ' "$out") modes checked"
    else
        echo "FAIL: $np ranks, $m: status $st"
        sed 's/^/    /' "$out"
        fail=1
    fi
}
refuse() { # matrix pattern
    timeout -k 5 120 "$WEFTRUN" --timeout 60 -n 2 "$SPMVM" --matrix "$1" --iters 1 >"$out" 2>&1
    if [ $? != 0 ] && grep -q -- "$2" "$out"; then
        echo "ok: $1 refused ($2)"
    else
        echo "FAIL: $1 not refused with '$2'"
        sed 's/^/    /' "$out"
        fail=1
    fi
}
for np in 1 2 4; do
    for m in hh:3000 poisson:12 poisson:20x7x5 "$here/sym37.mtx" "$here/pattern41.mtx"; do
        run $np "$m"
    done
done
run 4 hh:3
refuse hh:x "bad matrix"
refuse "$here/bad_rect.mtx" "must be square"
refuse "$here/bad_entry.mtx" "bad entry 2"
refuse "$here/none.mtx" "cannot open"
exit $fail
