#!/bin/sh
# Install what building and testing weft needs on Debian (as root), or say
# exactly what to install. Usage: scripts/deps.sh [--fuzz] [--loaded]
# (--loaded: stress-ng, for scripts/test.sh --loaded; with CI=true also the
# peer MPIs and matplotlib for the benchmark smoke run)
set -e
# libfabric-dev: the ofi driver; libhwloc-dev: placement of ranks and threads;
# liblapacke-dev, libopenblas-dev: apps/cholesky's kernels (weft also builds
# without them: then without ofi, counting each cpu as a core, no cholesky)
pkgs="cmake ninja-build gcc make libfabric-dev libhwloc-dev liblapacke-dev libopenblas-dev"
for a in "$@"; do
    case $a in
    --fuzz) pkgs="$pkgs clang libclang-rt-14-dev" ;;
    --loaded) pkgs="$pkgs stress-ng" ;;
    *) echo "usage: scripts/deps.sh [--fuzz] [--loaded]" >&2; exit 2 ;;
    esac
done
# CI runs bench/weft-bench --smoke against the peer MPIs, and plots the report
[ "${CI:-}" = true ] && pkgs="$pkgs openmpi-bin libopenmpi-dev mpich libmpich-dev python3-matplotlib libfabric-bin"
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "deps: installing$missing"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
else
    echo "deps: please install:$missing (e.g. sudo apt-get install$missing)" >&2
    exit 1
fi
