#!/bin/sh
# Build weft and run its whole test suite: a warnings-as-errors build, an
# ASan+UBSan build, a TSan build, and the libFuzzer targets run briefly (clang).
# Every test has a timeout. Options: --quick (first build only), --no-fuzz.
# With CI=true the release stage also runs the benchmark suite's smoke mode.
set -e
cd "$(dirname "$0")/.."
quick=0 fuzz=1
for a in "$@"; do
    case $a in
    --quick) quick=1 ;;
    --no-fuzz) fuzz=0 ;;
    *) echo "usage: scripts/test.sh [--quick] [--no-fuzz]" >&2; exit 2 ;;
    esac
done
[ $quick = 1 ] && fuzz=0
if [ $fuzz = 1 ]; then scripts/deps.sh --fuzz; else scripts/deps.sh; fi
jobs=$(nproc)

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
    ninja -C build/fuzz fuzz_wire fuzz_packet fuzz_tcp fuzz_wire_replay fuzz_tcp_replay
    for t in fuzz_wire fuzz_packet fuzz_tcp; do
        corpus=build/fuzz/corpus-$t
        mkdir -p "$corpus"
        seeds=fuzz_wire_replay
        [ $t = fuzz_tcp ] && seeds=fuzz_tcp_replay
        build/fuzz/tests/fuzz/$seeds --write-corpus "$corpus"
        build/fuzz/tests/fuzz/$t -max_total_time="${WEFT_FUZZ_SECONDS:-30}" -max_len=4096 \
            -print_final_stats=1 "$corpus" 2>&1 | tail -4
    done
fi
echo "== all tests passed"
