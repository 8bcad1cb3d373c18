#!/bin/sh
# weft under a PMIx launcher: Open MPI's mpirun (4.1, whose PMIx server is the
# system's libpmix) starts weft programs, which take rank, size and the store
# from PMIx. Skips (77) when weft was built without PMIx or mpirun is absent.
# The ranks keep the binding mpirun gives them; thread groups and the progress
# thread are placed within it.
# MPI_Comm_spawn under mpirun: the children are a job of weftrun's, found by
# their parents through a port. (WEFT_SPAWN=launcher, PMIx_Spawn, is left
# out: Open MPI 4.1.4's mpirun at times never finishes a child's PMIx_Init.)
# Usage: test_pmix.sh WEFT_PMIX(ON|OFF) BOOT_KVS BOOT_HELPER MP_PINGPONG MP_MANY MP_PLACE
#                     [TEST_SPAWN]
set -u
PMIX=$1 KVS=$2 HELPER=$3 PINGPONG=$4 MANY=$5 PLACE=$6 SPAWN=${7:-}
case $PMIX in ON | on | 1 | TRUE | true) ;; *)
    echo "skip: weft was built without PMIx (WEFT_PMIX=OFF: no libpmix found)"
    exit 77
    ;;
esac
MPIRUN=$(command -v mpirun) || {
    echo "skip: no mpirun (Open MPI) on this machine"
    exit 77
}
# CI runs as root; Open MPI refuses that unless told twice.
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Keep Open MPI's own transports out of the way: the ranks only need its PMIx.
OMPI_MCA_btl_base_warn_component_unused=0
# Everything runs on this machine: keep Open MPI's daemons and transports on
# loopback, away from interfaces other tests create and remove.
OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_tcp_if_include=lo
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM OMPI_MCA_btl_base_warn_component_unused
export OMPI_MCA_oob_tcp_if_include OMPI_MCA_btl_tcp_if_include
# Under AddressSanitizer: libpmix's own leaks are not weft's (mpirun passes the
# environment on to the ranks it starts here).
LSAN_OPTIONS="suppressions=$(cd "$(dirname "$0")" && pwd)/lsan_pmix.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export LSAN_OPTIONS
unset WEFT_BOOT_ADDR WEFT_RANK WEFT_SIZE WEFT_JOBID WEFT_JOB_SECRET
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$tmp/out

ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

# mpi EXPECT N prog args...: mpirun -n N with a time bound.
mpi() {
    expect=$1 n=$2
    shift 2
    timeout -k 5 120 "$MPIRUN" -n "$n" --oversubscribe "$@" >"$out" 2>&1
    status=$?
    if [ "$expect" = nonzero ] && [ $status != 0 ] && [ $status != 124 ]; then
        return 0
    fi
    if [ "$status" != "$expect" ]; then
        bad "mpirun -n $n $*: status $status, expected $expect"
        sed 's/^/    /' "$out"
        return 1
    fi
    return 0
}

mpi 0 1 "$KVS" && ok "store under mpirun, 1 process"
mpi 0 3 "$KVS" && [ "$(grep -c '^boot_kvs: rank [0-2] of 3 ok' "$out")" = 3 ] &&
    ok "store under mpirun, 3 processes: puts, fences, gets, missing keys, overwrites"
mpi 0 2 "$PINGPONG" 4194304 && grep -q "passed, 0 failed" "$out" &&
    ok "pingpong over shm, wired up through PMIx"
mpi 0 4 "$MANY" && ok "many requests, 4 ranks through PMIx"
if [ "$(nproc)" -ge 2 ]; then
    mpi 0 2 --bind-to core "$PLACE" group && grep -q "passed, 0 failed" "$out" &&
        [ "$(grep -c 'main thread on cpu' "$out")" = 2 ] &&
        ok "mpirun --bind-to core: thread groups and the progress thread within each binding"
fi
if [ -n "$SPAWN" ]; then
    mpi 0 2 env WEFT_LOG=info "$SPAWN" && grep -q "passed, 0 failed" "$out" &&
        ! grep -q "PMIx_Spawn started namespace" "$out" &&
        ok "MPI_Comm_spawn and spawn_multiple under mpirun, children started by weftrun"
fi
if mpi nonzero 3 "$HELPER" abort; then
    if grep -q "helper abort" "$out"; then
        ok "abort ends the job through PMIx_Abort, with its message"
    else
        bad "abort ended the job but its message was not printed"
        sed 's/^/    /' "$out"
    fi
fi

[ $fail = 0 ] && echo "test_pmix: all passed"
exit $fail
