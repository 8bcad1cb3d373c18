#!/bin/sh
# mpi4py, a real MPI client, against weft: builds weft, installs mpi4py from its
# source release into a virtual environment with weft's mpicc, and runs
# mpi4py's own test suite under weft's mpirun with 1 and 2 ranks.
#
#   scripts/mpi4py.sh [--version X.Y.Z] [--dir DIR]
#
# Needs python3 with venv and pip (apt-get install python3-venv), and network
# access to PyPI. Every module runs, MPI_Comm_spawn's (test_spawn,
# test_util_pool: mpi4py.futures) and the ports' (test_dynproc) included;
# then an mpi4py.futures map, with spawned workers and under -m mpi4py.futures.
set -eu
version=4.1.2
dir=${TMPDIR:-/tmp}/weft-mpi4py
while [ $# -gt 0 ]; do
    case $1 in
    --version) version=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    *) echo "usage: $0 [--version X.Y.Z] [--dir DIR]" >&2; exit 2 ;;
    esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
if [ ! -x "$build/bin/mpicc" ]; then
    sh "$root/scripts/deps.sh"
    cmake -S "$root" -B "$build" -G Ninja >/dev/null
fi
ninja -C "$build" >/dev/null
command -v python3 >/dev/null || { echo "mpi4py.sh: needs python3 (apt-get install python3 python3-venv)" >&2; exit 1; }
mkdir -p "$dir"
[ -x "$dir/venv/bin/python" ] || python3 -m venv "$dir/venv"
py=$dir/venv/bin/python
echo "mpi4py.sh: building mpi4py $version with $build/bin/mpicc (a few minutes)"
# -O0 -g0: gcc needs over 20 GB of memory to compile mpi4py's generated MPI.c
# at -O3 -g; the test suite does not need an optimized build.
CFLAGS="-O0 -g0" MPICC=$build/bin/mpicc "$py" -m pip install -q --no-cache-dir --no-binary=mpi4py --force-reinstall "mpi4py==$version"
"$py" -m pip download -q --no-deps --no-binary=:all: "mpi4py==$version" -d "$dir/src"
tar xzf "$dir/src/mpi4py-$version.tar.gz" -C "$dir/src"
cd "$dir/src/mpi4py-$version/test"
status=0
echo "mpi4py.sh: mpirun -n 1"
"$build/bin/mpirun" --timeout 900 -n 1 "$py" main.py || status=1
echo "mpi4py.sh: mpirun -n 2"
"$build/bin/mpirun" --timeout 900 -n 2 "$py" main.py || status=1
# mpi4py.futures: a pool of workers that MPI_Comm_spawn starts, and the
# same pool made of the job's own ranks (python -m mpi4py.futures).
cat >"$dir/futures.py" <<'PY'
from mpi4py.futures import MPIPoolExecutor
if __name__ == "__main__":
    with MPIPoolExecutor() as ex:
        got = list(ex.map(pow, range(100), [2] * 100))
    assert got == [i * i for i in range(100)], got
    print("mpi4py.sh: futures map over 100 items: right")
PY
echo "mpi4py.sh: mpi4py.futures, spawned workers"
"$build/bin/mpirun" --timeout 300 -n 1 "$py" "$dir/futures.py" || status=1
echo "mpi4py.sh: python -m mpi4py.futures with mpirun -n 3"
"$build/bin/mpirun" --timeout 300 -n 3 "$py" -m mpi4py.futures "$dir/futures.py" || status=1
exit $status
