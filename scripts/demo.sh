#!/bin/sh
# Build weft and run its demo: 4 processes on this machine passing a token
# around a ring over shared memory, then a ping-pong latency measurement.
set -e
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build weftrun ring >/dev/null
echo "== build/tools/weftrun -n 4 build/examples/ring"
build/tools/weftrun -n 4 build/examples/ring
