#!/bin/sh
# apps/halo3d (OpenSHMEM and MPI) and apps/mandelbrot through weftrun at 1,
# 2 and 4 processes, 1 and 3 threads each, every context kind: each run's
# own check must pass (the halo against the known field, the image's
# checksums against a serial computation), then bad arguments are refused.
# Usage: test_shmem_apps.sh WEFTRUN HALO3D_SHMEM HALO3D_MPI MANDELBROT
set -u
WEFTRUN=$1 HSHMEM=$2 HMPI=$3 MANDEL=$4
fail=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
. "$(dirname "$0")/apps_lib.sh"
for np in 1 2 4; do
    for t in 1 3; do
        for c in default shared private; do
            run "halo3d shmem $np PEs x $t threads, ctx $c" "check ok" $np \
                "$HSHMEM" --size 12 --iters 9 --threads $t --ctx $c
        done
        run "halo3d mpi $np ranks x $t threads" "check ok" $np "$HMPI" --size 12 --iters 9 --threads $t
        for c in default private; do
            run "mandelbrot $np PEs x $t threads, ctx $c" "mandelbrot: check ok" $np \
                "$MANDEL" --width 160 --height 121 --max 300 --rows 2 --threads $t --ctx $c --check
        done
    done
done
# More threads than rows of a block is refused; so is an unknown context.
refuse() { # what prog args...
    what=$1
    shift
    timeout -k 5 120 "$WEFTRUN" --timeout 60 -n 2 "$@" >"$out" 2>&1
    if [ $? = 2 ] && grep -q usage "$out"; then
        echo "ok: $what refused"
    else
        echo "FAIL: $what not refused"
        sed 's/^/    /' "$out"
        fail=1
    fi
}
refuse "halo3d --threads > --size" "$HSHMEM" --size 4 --threads 5
refuse "halo3d --ctx nonsense" "$HSHMEM" --ctx nonsense
refuse "halo3d_mpi --iters 0" "$HMPI" --iters 0
refuse "mandelbrot --ctx shared" "$MANDEL" --ctx shared
exit $fail
