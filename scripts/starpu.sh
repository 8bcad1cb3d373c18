#!/bin/sh
# StarPU's MPI layer on weft's MPI, as a user of another MPI would build it:
# StarPU's Debian source package configured with weft's mpicc, mpicxx and
# mpiexec (--with-mpicc, --with-mpicxx, --with-mpiexec), built, and its MPI
# tests and examples run by its own `make check`; then the same with Open
# MPI's wrappers, and a table of every test's result under each. Then
# mpi_cholesky on 2 ranks under each, with its check, for GFlop/s.
#
#   scripts/starpu.sh [--build DIR] [--work DIR] [--only weft|ompi] [--skip-build]
#
# --build: weft's build tree (build/rel); --work: where StarPU is unpacked
# and built (/tmp/weft-starpu). Needs `apt-get source starpu`, so a deb-src
# line for the archive (Debian: "Types: deb deb-src" in
# /etc/apt/sources.list.d/debian.sources, then apt-get update), and the
# packages below (installed when run as root). StarPU's tests run 4 ranks
# each, with STARPU_NCPU=1 (one CPU worker per rank: this machine has 2
# cores) and MPIEXEC_TIMEOUT=300 under both MPIs alike.
set -u
cd "$(dirname "$0")/.."
root=$(pwd)
build=build/rel work=/tmp/weft-starpu only="" skip_build=0
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --skip-build) skip_build=1; shift ;;
    *) echo "usage: scripts/starpu.sh [--build DIR] [--work DIR] [--only weft|ompi] [--skip-build]" >&2; exit 2 ;;
    esac
done
case $build in /*) ;; *) build=$root/$build ;; esac
need="pkg-config libhwloc-dev libopenblas-dev libnuma-dev openmpi-bin libopenmpi-dev dpkg-dev"
missing=""
for p in $need; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ]; then
        apt-get install -y $missing >/dev/null || { echo "starpu.sh: apt-get install$missing failed" >&2; exit 1; }
    else
        echo "starpu.sh: install first (as root): apt-get install$missing" >&2
        exit 1
    fi
fi
[ -x "$build/bin/mpicc" ] || { echo "starpu.sh: no $build/bin/mpicc: build weft first" >&2; exit 1; }
mkdir -p "$work"
src=$(ls -d "$work"/starpu-*/ 2>/dev/null | head -1)
if [ -z "$src" ]; then
    (cd "$work" && apt-get source starpu >"$work/source.log" 2>&1) || {
        echo "starpu.sh: apt-get source starpu failed (see $work/source.log): add a deb-src" >&2
        echo "  line (Debian: 'Types: deb deb-src' in /etc/apt/sources.list.d/debian.sources)," >&2
        echo "  then apt-get update" >&2
        exit 1
    }
    src=$(ls -d "$work"/starpu-*/ | head -1)
fi
src=${src%/}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_oob_tcp_if_include=lo
export STARPU_NCPU=1 STARPU_SILENT=1 MPIEXEC_TIMEOUT=300
impls="weft ompi"
[ -n "$only" ] && impls=$only
for impl in $impls; do
    case $impl in
    weft) cc=$build/bin/mpicc cxx=$build/bin/mpicxx exe=$build/bin/mpiexec args="" ;;
    ompi) cc=/usr/bin/mpicc.openmpi cxx=/usr/bin/mpicxx.openmpi exe=/usr/bin/mpiexec.openmpi
        args="--oversubscribe --mca btl_tcp_if_include lo" ;;
    esac
    b=$work/build-$impl
    if [ $skip_build = 0 ]; then
        rm -rf "$b"
        mkdir -p "$b"
        echo "starpu.sh: configuring and building StarPU with $cc (log: $b/build.log)"
        (cd "$b" && "$src/configure" --enable-mpi --enable-mpi-check --enable-quick-check \
            --with-mpicc="$cc" --with-mpicxx="$cxx" --with-mpiexec="$exe" \
            --with-mpiexec-args="$args" --disable-opencl --disable-cuda --disable-fortran \
            --disable-build-doc --disable-starpufft --disable-socl --disable-glpk \
            --disable-openmp && make -j2 && make -j2 -C mpi check TESTS=) >"$b/build.log" 2>&1 || {
            echo "starpu.sh: StarPU did not build with $impl (tail of $b/build.log):" >&2
            tail -20 "$b/build.log" >&2
            continue
        }
    fi
    echo "starpu.sh: running StarPU's MPI tests and examples under $impl (log: $b/check.log)"
    (cd "$b" && make -k -C mpi check) >"$b/check.log" 2>&1
done
# One line per test: its result under each MPI (the .trs files automake writes).
table=$work/results.txt
: >"$table"
for impl in weft ompi; do
    for trs in $(find "$work/build-$impl/mpi" -name '*.trs' 2>/dev/null | sort); do
        t=${trs#"$work/build-$impl/mpi/"}
        t=${t%.trs}
        r=$(sed -n 's/^:test-result: //p' "$trs" | head -1)
        echo "$t $impl $r" >>"$table"
    done
done
echo
awk '{ r[$1 " " $2] = $3; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
END {
    printf "%-48s %-6s %-6s\n", "# StarPU MPI test / example", "weft", "ompi"
    for (i = 1; i <= n; i++) {
        t = order[i]; w = (t " weft") in r ? r[t " weft"] : "-"; o = (t " ompi") in r ? r[t " ompi"] : "-"
        printf "%-48s %-6s %-6s%s\n", t, w, o, (o == "PASS" && w != "PASS") ? "   <- passes under Open MPI only" : ""
        cw[w]++; co[o]++
        if (o == "PASS" && w != "PASS") lost++
    }
    printf "# weft: %d pass, %d fail, %d skip; Open MPI: %d pass, %d fail, %d skip; passing under Open MPI only: %d\n",
        cw["PASS"], cw["FAIL"] + cw["ERROR"], cw["SKIP"], co["PASS"], co["FAIL"] + co["ERROR"], co["SKIP"], lost
}' "$table"
# mpi_cholesky on 2 ranks, checked, as the issue measured it.
for impl in weft ompi; do
    p=$work/build-$impl/mpi/examples/matrix_decomposition/mpi_cholesky
    [ -x "$p" ] || continue
    case $impl in
    weft) run="$build/bin/mpiexec -np 2" ;;
    ompi) run="mpiexec.openmpi -np 2 --oversubscribe" ;;
    esac
    STARPU_NCPU=1 timeout 600 $run "$p" -size 3840 -nblocks 12 -check >"$work/cholesky-$impl.log" 2>&1
    st=$?
    echo "# mpi_cholesky -size 3840 -nblocks 12 -check, 2 ranks, $impl: status $st," \
        "$(grep -c 'comparing results' "$work/cholesky-$impl.log") rank(s) compared," \
        "$(sed -n 's/^Synthetic GFlops : //p' "$work/cholesky-$impl.log" | head -1) GFlop/s"
done
