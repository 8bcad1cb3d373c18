#!/bin/sh
# The ofi driver against libfabric's own fi_pingpong on the same provider, and
# against weft's own driver for the same path, in one run (issue 7):
#
#   provider tcp (RDM through ofi_rxm):
#     fi_pingpong    fi_pingpong -p tcp -e rdm -m tagged  (one-way latency, usec/xfer)
#     weft_ofi       bench/weft_pingpong, WEFT_DRIVERS=ofi WEFT_OFI_PROVIDER=tcp
#     weft_tcp       bench/weft_pingpong, WEFT_DRIVERS=tcp (weft's own tcp driver)
#   provider shm:
#     fi_pingpong    fi_pingpong -p shm -e rdm -m tagged
#     weft_ofi       bench/weft_pingpong, WEFT_DRIVERS=ofi WEFT_OFI_PROVIDER=shm
#     weft_shm       bench/weft_pingpong, weft's own shm driver
#
# Latency at 8 bytes, and ping-pong bandwidth (size / one-way time) at 64 KiB
# and 4 MiB, plus weft's streaming bandwidth at 4 MiB. Configurations are
# interleaved, repetition after repetition, so drift hits them alike; each
# line is the median over the repetitions with the range, and the ratio of
# weft_ofi's latency to fi_pingpong's (issue 7 asks <= 1.10).
#
#   bench/run_ofi.sh [--build DIR] [--reps N] [--providers "tcp shm"]
#
# Needs fi_pingpong (Debian: libfabric-bin) and a build with the ofi driver
# (libfabric-dev). Raw lines go to bench/results/ofi.txt (not committed).
set -eu
cd "$(dirname "$0")/.."
build=build reps=5 providers="tcp shm"
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --providers) providers=$2; shift 2 ;;
    -h | --help) sed -n '2,24s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "usage: bench/run_ofi.sh [--build DIR] [--reps N] [--providers LIST]" >&2; exit 2 ;;
    esac
done
command -v fi_pingpong >/dev/null || { echo "run_ofi: needs fi_pingpong (apt-get install libfabric-bin)" >&2; exit 77; }
grep -q '^WEFT_OFI:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null ||
    { echo "run_ofi: $build has no ofi driver (install libfabric-dev, reconfigure)" >&2; exit 77; }
ninja -C "$build" weftrun weft_pingpong >/dev/null
weftrun=$build/tools/weftrun pp=$build/bench/weft_pingpong
out=bench/results/ofi.txt
mkdir -p bench/results
: >"$out"

# fi_pingpong: one-way usec/xfer and MB/sec of a ping-pong of SIZE bytes.
fi_pp() { # provider size iters port
    fi_pingpong -p "$1" -e rdm -m tagged -S "$2" -I "$3" -B "$4" >/dev/null 2>&1 &
    srv=$!
    sleep 0.3
    line=$(timeout 120 fi_pingpong -p "$1" -e rdm -m tagged -S "$2" -I "$3" -P "$4" 127.0.0.1 2>/dev/null |
        awk '$1 ~ /^[0-9]+[kmgKMG]?$/ {print $7, $6}')
    wait "$srv" 2>/dev/null || true
    echo "$line"
}

# weft_pingpong: latency_us at 8 B; pingpong_MBps and bandwidth_MBps at 64K and 4M.
weft_pp() { # env...
    lat=$(env "$@" "$weftrun" --timeout 120 -n 2 "$pp" --quick --min 8 --max 8 2>/dev/null |
        awk '$1 == 8 {print $2}')
    env "$@" "$weftrun" --timeout 120 -n 2 "$pp" --quick --min 65536 --max 4194304 --step 64 \
        2>/dev/null | awk -v lat="$lat" '$1 == 65536 {p64 = $4} $1 == 4194304 {p4 = $4; bw = $3}
                                         END {print lat, p64, p4, bw}'
}

port=47600
i=1
while [ "$i" -le "$reps" ]; do
    for prov in $providers; do
        port=$((port + 3))
        lat=$(fi_pp "$prov" 8 20000 "$port" | cut -d' ' -f1)
        p64=$(fi_pp "$prov" 65536 2000 $((port + 1)) | cut -d' ' -f2)
        p4=$(fi_pp "$prov" 4194304 100 $((port + 2)) | cut -d' ' -f2)
        echo "$prov fi_pingpong ${lat:--} ${p64:--} ${p4:--} -" | tee -a "$out" >&2
        echo "$prov weft_ofi $(weft_pp WEFT_DRIVERS=ofi WEFT_OFI_PROVIDER="$prov")" | tee -a "$out" >&2
        if [ "$prov" = tcp ]; then
            echo "$prov weft_tcp $(weft_pp WEFT_DRIVERS=tcp)" | tee -a "$out" >&2
        else
            echo "$prov weft_shm $(weft_pp WEFT_DRIVERS=self,shm)" | tee -a "$out" >&2
        fi
    done
    i=$((i + 1))
done

python3 - "$out" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 6:
        continue
    rows.setdefault((f[0], f[1]), []).append(f[2:6])
def col(key, i):
    v = [float(r[i]) for r in rows.get(key, []) if r[i] not in ("-", "")]
    return (statistics.median(v), min(v), max(v)) if v else None
def fmt(x, d=2):
    return "-" if not x else f"{x[0]:.{d}f} ({x[1]:.{d}f}-{x[2]:.{d}f})"
print("| provider | path | 8 B latency us | 64 KiB ping-pong MB/s | 4 MiB ping-pong MB/s | 4 MiB streaming MB/s |")
print("|---|---|---|---|---|---|")
for key in rows:
    print(f"| {key[0]} | {key[1]} | {fmt(col(key, 0))} | {fmt(col(key, 1), 0)} | {fmt(col(key, 2), 0)} | {fmt(col(key, 3), 0)} |")
for prov in sorted({k[0] for k in rows}):
    a, b = col((prov, "weft_ofi"), 0), col((prov, "fi_pingpong"), 0)
    if a and b:
        print(f"{prov}: weft_ofi / fi_pingpong 8 B latency = {a[0] / b[0]:.3f} (target <= 1.10)")
EOF
