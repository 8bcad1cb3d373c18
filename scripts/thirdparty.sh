#!/bin/sh
# Third-party MPI programs against weft, as a new user would try them: the
# Debian sources of MPICH's MPI test suite (test/mpi), NetPIPE and HPCC, built
# with weft's mpicc and run with its mpirun. Prints a pass/fail/skip line per
# test group or program, and for the MPICH suite which failures are known to
# be outside MPI 3.1 or outside weft's scope (see docs/mpi.md, "What is not there").
#
#   scripts/thirdparty.sh [WORKDIR]     (default: ${TMPDIR:-/tmp}/weft-thirdparty)
#
# Environment:
#   BUILD=build                   weft's build tree (build/bin/mpicc, mpirun)
#   TIMEOUT=60                    seconds per MPICH test (MPITEST_TIMEOUT)
#   MPICH_GROUPS="attr ..."       the test/mpi groups to run
#   SKIP_MPICH=1, SKIP_NETPIPE=1, SKIP_HPCC=1
#
# Exits 77 when apt-get source (deb-src, network) is not available, 1 when a
# program fails to build or fails its own checks, or when an MPICH test fails
# that is not on the known list below; 0 otherwise. Sources are fetched and
# built in WORKDIR, never in the repository; a second run reuses them.
set -u

here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-build}
case $build in /*) ;; *) build=$here/$build ;; esac
work=${1:-${TMPDIR:-/tmp}/weft-thirdparty}
timeout=${TIMEOUT:-60}
groups=${MPICH_GROUPS:-"attr basic comm datatype errhan group info init pt2pt part topo coll io rma"}
mpicc=$build/bin/mpicc
mpirun=$build/bin/mpirun
jobs=2

skip() {
    echo "thirdparty: skipped: $*"
    exit 77
}

[ -x "$mpicc" ] && [ -x "$mpirun" ] || {
    echo "thirdparty: no $mpicc; build weft first" >&2
    exit 1
}
command -v apt-get > /dev/null || skip "apt-get not found (not a Debian system)"
mkdir -p "$work" || exit 1
cd "$work" || exit 1

# fetch PKG: unpack PKG's upstream sources into WORKDIR/PKG. Uses the orig
# tarball only, so that a missing Debian diff does not stop us.
fetch() {
    [ -d "$work/$1" ] && return 0
    if ! ls "$1"_*.orig.tar.* > /dev/null 2>&1; then
        apt-get source --download-only "$1" > "fetch-$1.log" 2>&1
        ls "$1"_*.orig.tar.* > /dev/null 2>&1 ||
            skip "apt-get source $1 failed (no deb-src or no network; see $work/fetch-$1.log)"
    fi
    mkdir -p "$1.tmp" && tar -xf "$1"_*.orig.tar.* -C "$1.tmp" || return 1
    mv "$1.tmp"/* "$1" && rmdir "$1.tmp"
}

status=0
summary=""
line() {
    summary="$summary$(printf '%-22s %s' "$1" "$2")
"
}

# ---- MPICH's test suite -------------------------------------------------

# Failures that are not weft's: the test needs something outside MPI 3.1 or
# outside weft's scope, or relies on one implementation's choices, or on
# more than this machine gives. "test:reason", one per line.
known='
nonblocking_pready:sends 0 elements of MPI_DATATYPE_NULL (MPICH accepts it; not a valid datatype)
pt2pt_large:MPI-4.0 large-count (_c) functions
coll_large:MPI-4.0 large-count (_c) functions
type_large:MPI-4.0 large-count (_c) functions
keyval_double_free_win:frees a keyval that was already freed (erroneous)
lbub_oldapi:MPI_LB/MPI_UB markers, removed in MPI 3.0
struct_no_real_types:MPI_LB/MPI_UB markers, removed in MPI 3.0
indexed_misc_oldapi:builds a type from a freed datatype handle (erroneous)
typename_oldapi:MPI_LB/MPI_UB markers, removed in MPI 3.0
pack_external:switches on MPI_Datatype values (integer handles in MPICH)
nonblocking2:keeps MPI_Datatype handles in an int array (MPICH handles)
nonblocking3:keeps MPI_Datatype handles in an int array (MPICH handles)
opband:MPICH extension: MPI_CHAR in reductions (not strict MPI)
opbor:MPICH extension: MPI_CHAR in reductions (not strict MPI)
opbxor:MPICH extension: MPI_CHAR in reductions (not strict MPI)
opland:MPICH extension: MPI_CHAR in reductions (not strict MPI)
oplor:MPICH extension: MPI_CHAR in reductions (not strict MPI)
oplxor:MPICH extension: MPI_CHAR, MPI_DOUBLE in logical reductions
opmax:MPICH extension: MPI_CHAR in reductions (not strict MPI)
opmin:MPICH extension: MPI_CHAR in reductions (not strict MPI)
opprod:MPICH extension: MPI_CHAR in reductions (not strict MPI)
opsum:MPICH extension: MPI_CHAR in reductions (not strict MPI)
keyval_double_free:frees a keyval that was already freed (erroneous)
keyval_double_free_comm:frees a keyval that was already freed (erroneous)
keyval_double_free_type:frees a keyval that was already freed (erroneous)
indexed_misc:builds a type from a freed datatype handle (erroneous)
cartsuball:expects MPI_COMM_NULL where MPI 3.1 7.5.7 gives a 0-dim grid
comm_info:expects unknown info keys dropped (MPI 3.1 6.4.4 allows either)
typename:MPI_C_COMPLEX and MPI_C_FLOAT_COMPLEX are one handle here
tst_fileview:expects the MPI_ERR_IO of ROMIO for invalid view types (MPI 3.1 13.3 names no class; weft says MPI_ERR_TYPE)
dims5:42 of 75395 equally balanced grids chosen differently from MPICH
'

known_reason() {
    printf '%s\n' "$known" | sed -n "s/^$1:\(.*\)/\1/p" | head -n 1
}

run_mpich() {
    fetch mpich || {
        line "mpich" "FAIL (unpack)"
        status=1
        return
    }
    t=$work/mpich/test/mpi
    if [ ! -f "$t/Makefile" ]; then
        echo "thirdparty: configuring MPICH's test suite against weft (a minute)"
        (cd "$t" && ./configure CC="$mpicc" MPICC="$mpicc" CXX="$build/bin/mpicxx" \
            MPICXX="$build/bin/mpicxx" MPIEXEC="$build/bin/mpiexec" --disable-fortran \
            --disable-cxx --disable-spawn --disable-part \
            --disable-ft-tests --disable-checkpointing --disable-perftest \
            --disable-dtpools --enable-threads=funneled) > "$work/mpich-configure.log" 2>&1 || {
            line "mpich" "FAIL (configure: $work/mpich-configure.log)"
            status=1
            return
        }
        make -C "$t/util" -j$jobs > "$work/mpich-util.log" 2>&1
    fi
    for g in $groups; do
        if [ ! -f "$t/$g/testlist" ]; then
            line "mpich/$g" "skip (no testlist: not part of the suite's run)"
            continue
        fi
        echo "thirdparty: MPICH $g"
        make -C "$t/$g" -k -j$jobs > "$work/mpich-$g-build.log" 2>&1
        tap=$work/mpich-$g.tap
        (cd "$t/$g" && MPITEST_TIMEOUT=$timeout ../runtests -srcdir=. -tests=testlist \
            -mpiexec="$build/bin/mpiexec" -tapfile="$tap") > "$work/mpich-$g.log" 2>&1
        pass=$(grep -c '^ok ' "$tap" | tr -d ' ')
        skipped=$(grep -c '# SKIP' "$tap" | tr -d ' ')
        pass=$((pass - skipped))
        fail=0
        known_fail=0
        for name in $(sed -n 's|^not ok  *- \./\([^ ]*\).*|\1|p' "$tap"); do
            if [ -n "$(known_reason "$name")" ]; then
                known_fail=$((known_fail + 1))
            else
                fail=$((fail + 1))
                echo "thirdparty:   FAIL $g/$name"
                status=1
            fi
        done
        line "mpich/$g" "pass $pass, fail $fail, known $known_fail, skip $skipped"
    done
}

# ---- NetPIPE ------------------------------------------------------------

run_netpipe() {
    fetch netpipe || return
    d=$work/netpipe
    make -C "$d" mpi MPICC="$mpicc" > "$work/netpipe-build.log" 2>&1 || {
        line "netpipe" "FAIL (build: $work/netpipe-build.log)"
        status=1
        return
    }
    # A fixed repeat count: NetPIPE's own timing of repeats makes a run on a
    # loaded machine last for ever. -i checks every byte of every message.
    "$mpirun" --timeout 300 -n 2 "$d/NPmpi" -n 20 -u 4194304 -o "$work/np.out" \
        > "$work/netpipe-2.log" 2>&1
    rc=$?
    "$mpirun" --timeout 300 -n 2 "$d/NPmpi" -i -n 5 -u 4194304 > "$work/netpipe-2i.log" 2>&1
    rci=$?
    bad=$(grep -c 'Integrity check failed' "$work/netpipe-2i.log")
    if [ $rc -eq 0 ] && [ $rci -eq 0 ] && [ "$bad" -eq 0 ] &&
        grep -q 'Integrity check passed' "$work/netpipe-2i.log"; then
        line "netpipe np2" "pass ($(grep -c 'bytes' "$work/netpipe-2.log") sizes, integrity check passed)"
    else
        line "netpipe np2" "FAIL (see $work/netpipe-2*.log)"
        status=1
    fi
    # Ranks other than 0 and n-1 go straight to MPI_Finalize while those two
    # call MPI_Barrier(MPI_COMM_WORLD): NetPIPE hangs beyond 2 ranks under
    # any MPI.
    line "netpipe np4" "skip (NetPIPE runs on 2 ranks only)"
}

# ---- HPCC ---------------------------------------------------------------

run_hpcc() {
    ls /usr/lib/*/libopenblas.so /usr/lib/libopenblas.so 2> /dev/null | grep -q . || {
        line "hpcc" "skip (needs libopenblas-dev)"
        return
    }
    fetch hpcc || return
    d=$work/hpcc
    cat > "$d/hpl/Make.weft" << 'EOF'
SHELL        = /bin/sh
CD           = cd
CP           = cp
LN_S         = ln -s
MKDIR        = mkdir
RM           = /bin/rm -f
TOUCH        = touch
ARCH         = weft
TOPdir       = ../../..
INCdir       = $(TOPdir)/include
BINdir       = $(TOPdir)/bin/$(ARCH)
LIBdir       = $(TOPdir)/lib/$(ARCH)
HPLlib       = $(LIBdir)/libhpl.a
LAlib        = -lopenblas
HPL_INCLUDES = -I$(INCdir) -I$(INCdir)/$(ARCH)
HPL_LIBS     = $(HPLlib) $(LAlib) -lm
HPL_OPTS     = -DHPL_CALL_CBLAS
HPL_DEFS     = $(HPL_OPTS) $(HPL_INCLUDES)
CC           = $(HPCC_MPICC)
CCNOOPT      = $(HPL_DEFS)
CCFLAGS      = $(HPL_DEFS) -O2 -fcommon
LINKER       = $(HPCC_MPICC)
LINKFLAGS    = $(CCFLAGS)
ARCHIVER     = ar
ARFLAGS      = r
RANLIB       = echo
EOF
    # Not -j: HPCC's makefiles call make without $(MAKE).
    make -C "$d" arch=weft HPCC_MPICC="$mpicc" > "$work/hpcc-build.log" 2>&1 || {
        line "hpcc" "FAIL (build: $work/hpcc-build.log)"
        status=1
        return
    }
    for np in 2 4; do
        r=$d/run$np
        mkdir -p "$r"
        # The shipped input (N=1000), on a 1x2 or 2x2 grid.
        if [ $np -eq 2 ]; then
            sed -e '11s/^2 /1 /' "$d/_hpccinf.txt" > "$r/hpccinf.txt"
        else
            cp "$d/_hpccinf.txt" "$r/hpccinf.txt"
        fi
        rm -f "$r/hpccoutf.txt"
        (cd "$r" && OPENBLAS_NUM_THREADS=1 "$mpirun" --timeout 600 -n $np ../hpcc) \
            > "$work/hpcc-$np.log" 2>&1
        rc=$?
        out=$r/hpccoutf.txt
        passed=$(grep -c 'PASSED' "$out" 2> /dev/null)
        failed=$(grep -c 'FAILED' "$out" 2> /dev/null)
        if [ $rc -eq 0 ] && grep -q '^Success=1' "$out" && [ "${failed:-1}" -eq 0 ] &&
            grep -q '^MPIRandomAccess_Errors=0' "$out"; then
            line "hpcc np$np" "pass ($passed checks PASSED, Success=1, RandomAccess errors 0)"
        else
            line "hpcc np$np" "FAIL (exit $rc; see $out)"
            status=1
        fi
    done
}

[ "${SKIP_MPICH:-0}" = 1 ] || run_mpich
[ "${SKIP_NETPIPE:-0}" = 1 ] || run_netpipe
[ "${SKIP_HPCC:-0}" = 1 ] || run_hpcc

echo
echo "thirdparty summary (weft $build; logs in $work):"
printf '%s' "$summary"
exit $status
