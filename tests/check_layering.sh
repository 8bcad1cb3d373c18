#!/bin/sh
# Each layer includes only the headers of the layers below it (DESIGN.md):
#   util, topo < drivers, boot, progress < core, rma, coll < api < mpi, shmem. A driver never sees the
# engine; completion objects (progress) never see requests.
root=${1:-.}
fail=0
check() { # dir forbidden-prefix...
    dir=$1; shift
    for f in $(find "$root/src/$dir" -name '*.[ch]' 2>/dev/null); do
        for bad in "$@"; do
            if grep -nE "^#include \"$bad/" "$f"; then
                echo "layering: $f includes $bad/ (not allowed from src/$dir)"
                fail=1
            fi
        done
    done
}
check util drivers boot core api mpi shmem progress coll
check topo drivers boot core api mpi shmem progress rma coll
check drivers boot core api mpi shmem progress coll
check boot drivers core api mpi shmem progress coll
check progress drivers boot core api mpi shmem coll
check core api mpi shmem
check rma api mpi shmem
check coll api mpi shmem
check api mpi shmem
# The MPI layer is a front end: the public API, and the header-only helpers
# of util (locks, small inlines), nothing of the engine.
check mpi core drivers boot progress api shmem rma coll
# OpenSHMEM the same: the public API (weft.h, weft_rma.h) only.
check shmem core drivers boot progress api mpi rma coll
[ $fail = 0 ] && echo "layering: ok"
exit $fail
