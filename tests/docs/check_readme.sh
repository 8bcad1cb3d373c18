#!/bin/sh
# The README's commands, run as a newcomer runs them (docs.readme_commands):
# each ```sh block that builds and runs a program is run in a scratch
# directory with this build tree standing for `build/` and a real program of
# its front end standing for `prog.c` (an MPI program, the native ring of
# examples/ring.c, an OpenSHMEM program); the scripts the README names must
# exist and be executable (CI runs scripts/test.sh and bench/weft-bench itself).
#
#   check_readme.sh SOURCE_DIR BUILD_DIR SCRATCH
set -eu
src=$1 build=$2 tmp=$3
rm -rf "$tmp"
mkdir -p "$tmp"
cat >"$tmp/mpi.c" <<'C'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int rank, size, sum = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (sum != size * (size - 1) / 2)
        return 1;
    if (rank == 0)
        printf("mpi: %d ranks, sum %d\n", size, sum);
    MPI_Finalize();
    return 0;
}
C
cat >"$tmp/shmem.c" <<'C'
#include <shmem.h>
#include <stdio.h>
int main(void)
{
    static int got = -1;
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    shmem_int_p(&got, me, (me + 1) % n);
    shmem_barrier_all();
    int ok = got == (me + n - 1) % n;
    if (me == 0)
        printf("shmem: %d PEs, got %d\n", n, got);
    shmem_finalize();
    return ok ? 0 : 1;
}
C
cp "$src/examples/ring.c" "$tmp/native.c"
awk '/^```sh/ { f = 1; n++; next } /^```/ { f = 0 } f { print n "\t" $0 }' "$src/README.md" \
    >"$tmp/blocks"
[ -s "$tmp/blocks" ] || { echo "check_readme: no sh block in README.md"; exit 1; }
ran=0
for b in $(cut -f1 "$tmp/blocks" | sort -un); do
    cmds=$(awk -F'\t' -v b="$b" '$1 == b { sub(/^[^\t]*\t/, ""); sub(/[ \t]+#.*$/, ""); print }' \
        "$tmp/blocks")
    case $cmds in
    *mpicc*) prog=mpi.c ;;
    *oshcc*) prog=shmem.c ;;
    *-lweft*) prog=native.c ;;
    *)
        for c in $(echo "$cmds" | awk '{ print $1 }'); do
            [ -x "$src/$c" ] || { echo "check_readme: $c is not an executable of the tree"; exit 1; }
        done
        echo "check_readme: block $b names scripts that exist"
        continue ;;
    esac
    rm -f "$tmp/prog" "$tmp/prog.c"
    cp "$tmp/$prog" "$tmp/prog.c"
    echo "$cmds" | while IFS= read -r c; do
        [ -n "$c" ] || continue
        c=$(echo "$c" | sed -e "s#\$PWD/build#$build#g" -e "s#-Lbuild#-L$build#g" \
            -e "s#-Iinclude#-I$src/include#g" -e "s#^build/#$build/#")
        echo "check_readme: block $b: $c"
        (cd "$tmp" && sh -c "$c") || { echo "check_readme: block $b failed: $c"; exit 1; }
    done
    ran=$((ran + 1))
done
[ $ran -ge 3 ] || { echo "check_readme: only $ran program blocks ran (MPI, native, OpenSHMEM expected)"; exit 1; }
echo "check_readme: $ran program blocks built and ran"
