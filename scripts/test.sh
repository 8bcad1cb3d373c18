#!/bin/sh
# Build weft and run its whole test suite: a warnings-as-errors build, an
# ASan+UBSan build, a TSan build, and the libFuzzer targets run briefly (clang).
# Every test has a timeout. Options: --quick (first build only), --no-fuzz,
# --loaded (the whole run beside a CPU load on every core, stress-ng's, as on
# a shared machine: the tests must pass there too, since none checks time).
# With CI=true the release stage also runs the benchmark suite's smoke mode.
set -e
cd "$(dirname "$0")/.."
quick=0 fuzz=1 loaded=0
for a in "$@"; do
    case $a in
    --quick) quick=1 ;;
    --no-fuzz) fuzz=0 ;;
    --loaded) loaded=1 ;;
    *) echo "usage: scripts/test.sh [--quick] [--no-fuzz] [--loaded]" >&2; exit 2 ;;
    esac
done
[ $quick = 1 ] && fuzz=0
deps_args=""
[ $fuzz = 1 ] && deps_args="--fuzz"
[ $loaded = 1 ] && deps_args="$deps_args --loaded"
# shellcheck disable=SC2086
scripts/deps.sh $deps_args
jobs=$(nproc)
if [ $loaded = 1 ]; then
    # One busy worker per core at the lowest priority would let the tests win
    # every time: the load runs at the tests' own priority.
    stress-ng --cpu "$jobs" --cpu-load 100 --timeout 3h --quiet &
    load_pid=$!
    trap 'rc=$?; kill $load_pid 2>/dev/null; wait $load_pid 2>/dev/null || true; exit $rc' EXIT
    echo "== under load: stress-ng --cpu $jobs (pid $load_pid)"
fi

echo "== release build, warnings as errors"
cmake -S . -B build/ci -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_WERROR=ON >/dev/null
ninja -C build/ci
(cd build/ci && ctest -j"$jobs" --output-on-failure)
if [ "${CI:-}" = true ]; then
    # Every benchmark once with weft, Open MPI and MPICH (tiny iterations), and
    # the report and plots made: proves the suite runs; speed is not checked.
    echo "== benchmark suite smoke run (bench/weft-bench --smoke)"
    bench/weft-bench --smoke --build build/ci --out build/ci/bench-smoke
fi
[ $quick = 1 ] && exit 0

echo "== AddressSanitizer + UndefinedBehaviorSanitizer build"
cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DWEFT_WERROR=ON \
    -DWEFT_ASAN=ON -DWEFT_UBSAN=ON >/dev/null
ninja -C build/asan
(cd build/asan && ctest -j"$jobs" --output-on-failure)

echo "== ThreadSanitizer build"
cmake -S . -B build/tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_WERROR=ON \
    -DWEFT_TSAN=ON >/dev/null
ninja -C build/tsan
(cd build/tsan && ctest -j"$jobs" --output-on-failure)

if [ $fuzz = 1 ]; then
    echo "== libFuzzer targets (clang), ${WEFT_FUZZ_SECONDS:-30} s each"
    CC=clang cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DWEFT_FUZZ=ON -DWEFT_ASAN=ON -DWEFT_UBSAN=ON -DBUILD_TESTING=ON >/dev/null
    targets="fuzz_wire fuzz_packet fuzz_tcp fuzz_boot"
    # The ofi driver's target exists where the driver does (libfabric-dev).
    if grep -q '^WEFT_OFI:BOOL=ON' build/fuzz/CMakeCache.txt; then targets="$targets fuzz_ofi"; fi
    replays=""
    for t in $targets; do
        if [ $t != fuzz_packet ]; then replays="$replays ${t}_replay"; fi
    done
    # shellcheck disable=SC2086
    ninja -C build/fuzz $targets $replays
    for t in $targets; do
        corpus=build/fuzz/corpus-$t
        mkdir -p "$corpus"
        # The committed corpus (tests/fuzz/corpus/, minimized from long runs)
        # and the replay program's seeds, so that a short run starts deep.
        if [ -d tests/fuzz/corpus/$t ]; then cp -r tests/fuzz/corpus/$t/. "$corpus"/; fi
        seeds=${t}_replay
        [ $t = fuzz_packet ] && seeds=fuzz_wire_replay
        build/fuzz/tests/fuzz/$seeds --write-corpus "$corpus"
        build/fuzz/tests/fuzz/$t -max_total_time="${WEFT_FUZZ_SECONDS:-30}" -max_len=4096 \
            -print_final_stats=1 "$corpus" 2>&1 | tail -4
    done
fi
echo "== all tests passed"
