#!/usr/bin/env bash
# run_compare.sh: weft against the raw cache-line floor, Open MPI and MPICH on
# this machine, in one go.
#
#   bench/run_compare.sh [--quick] [--reps R] [--no-install] [--weft-src DIR] [--build DIR]
#
# 1. checks for cmake, ninja, a C compiler, Open MPI and MPICH (Debian packages
#    openmpi-bin libopenmpi-dev mpich libmpich-dev) and python3; as root it
#    apt-get installs what is missing, otherwise it prints the command to run;
#    a missing MPI is skipped, not fatal;
# 2. builds weft (Release) and its benchmarks with CMake + Ninja, and the MPI
#    twins (mpi_pingpong.c, mpi_match.c) with mpicc.openmpi and mpicc.mpich;
# 3. runs, for each repetition, raw_cacheline, weft, Open MPI, MPICH one after
#    the other (alternating, so slow drift of a noisy machine hits all alike),
#    every program pinned by rank (--pin);
# 4. writes CSV to bench/results/ (pingpong.csv, match.csv, raw.csv, logs/) and
#    prints a markdown table of medians over the repetitions with weft/peer ratios.
#
# 5. tcp section (--tcp to run only it, --no-tcp to skip it): weft_pingpong with
#    WEFT_DRIVERS=tcp, raw_tcp (a plain non-blocking loopback socket, busy
#    polling) and Open MPI's tcp path (--mca pml ob1 --mca btl tcp,self), one
#    after the other per repetition, 8 B latency and 4 MiB bandwidth medians
#    (tcp_pingpong.csv, raw_tcp.csv).
# --quick: sizes up to 4 MiB, fewer iterations, 3 repetitions (< 3 minutes).
# --weft-src DIR: build weft from another tree (default: this script's repository).
# This is a benchmark, not a test: the "target" column informs, the exit status
# does not depend on speed.
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
quick=0
reps=""
install=1
weft_src=$(cd "$here/.." && pwd)
build=""
tcp=1 shm=1
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) quick=1 ;;
    --reps) reps=$2; shift ;;
    --no-install) install=0 ;;
    --weft-src) weft_src=$(cd "$2" && pwd); shift ;;
    --build) build=$2; shift ;;
    --tcp) shm=0 ;;
    --no-tcp) tcp=0 ;;
    -h | --help) sed -n '2,31p' "$0"; exit 0 ;;
    *) echo "run_compare.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
    shift
done
[ -n "$build" ] || build="$weft_src/build-bench"
if [ -z "$reps" ]; then
    if [ $quick = 1 ]; then reps=3; else reps=5; fi
fi
if [ $quick = 1 ]; then
    pp_args=(--pin --quick --max 4M); match_args=(--pin --quick); raw_n=200000
else
    pp_args=(--pin --max 64M); match_args=(--pin); raw_n=1000000
fi
results="$here/results"
mkdir -p "$results/logs"
t_start=$SECONDS
log() { printf '[run_compare %3ds] %s\n' $((SECONDS - t_start)) "$*" >&2; }

# ---- 1. prerequisites -------------------------------------------------------
need_pkgs=()
command -v cmake >/dev/null || need_pkgs+=(cmake)
command -v ninja >/dev/null || need_pkgs+=(ninja-build)
command -v cc >/dev/null || need_pkgs+=(gcc)
command -v python3 >/dev/null || need_pkgs+=(python3)
{ command -v mpicc.openmpi && command -v mpirun.openmpi; } >/dev/null || need_pkgs+=(openmpi-bin libopenmpi-dev)
{ command -v mpicc.mpich && command -v mpirun.mpich; } >/dev/null || need_pkgs+=(mpich libmpich-dev)
if [ ${#need_pkgs[@]} -gt 0 ]; then
    if [ $install = 1 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        log "installing: ${need_pkgs[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >/dev/null && apt-get install -y -qq "${need_pkgs[@]}" >/dev/null ||
            log "apt-get failed; continuing with what is there"
    else
        log "missing; install with: apt-get update && apt-get install -y ${need_pkgs[*]}"
    fi
fi
for t in cmake ninja cc python3; do
    command -v $t >/dev/null || { echo "run_compare.sh: $t is required" >&2; exit 1; }
done

# ---- 2. build -----------------------------------------------------------------
log "building weft (Release) from $weft_src in $build"
cmake -S "$weft_src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >"$results/logs/cmake.log" 2>&1 &&
    ninja -C "$build" weftrun weft_pingpong weft_match raw_cacheline raw_tcp >"$results/logs/ninja.log" 2>&1 ||
    { echo "run_compare.sh: weft build failed, see $results/logs/" >&2; tail -20 "$results/logs/ninja.log" >&2; exit 1; }
mpibin="$build/bench-mpi"
mkdir -p "$mpibin"
impls=(raw weft)
declare -A mpicc=([ompi]=mpicc.openmpi [mpich]=mpicc.mpich)
for impl in ompi mpich; do
    cc_=${mpicc[$impl]}
    command -v "$cc_" >/dev/null || { log "$cc_ not found: skipping $impl"; continue; }
    ok=1
    for p in mpi_pingpong mpi_match; do
        "$cc_" -O2 -Wall -Wno-stringop-overflow -D_GNU_SOURCE -I"$here" "$here/$p.c" \
            "$here/bench_common.c" -o "$mpibin/${p}_$impl" >>"$results/logs/mpicc_$impl.log" 2>&1 || ok=0
    done
    if [ $ok = 1 ]; then impls+=("$impl"); else log "building with $cc_ failed: skipping $impl"; fi
done

# How each implementation launches two ranks. Open MPI: shared memory only (ob1 +
# vader, or sm on Open MPI >= 5), no binding of its own (the programs pin by rank).
ompi_btl=vader
if command -v ompi_info >/dev/null && ! ompi_info 2>/dev/null | grep -q "MCA btl: vader"; then
    ompi_btl=sm
fi
launch() { # impl program args...
    local impl=$1 prog=$2; shift 2
    case $impl in
    weft) timeout 600 "$build/tools/weftrun" --timeout 580 -n 2 "$build/bench/weft_$prog" "$@" ;;
    ompi) timeout 600 mpirun.openmpi --allow-run-as-root --oversubscribe -np 2 --bind-to none \
            --mca pml ob1 --mca btl "$ompi_btl,self" "$mpibin/mpi_${prog}_ompi" "$@" ;;
    mpich) timeout 600 mpirun.mpich -n 2 "$mpibin/mpi_${prog}_mpich" "$@" ;;
    esac
}

# ---- 3. run -----------------------------------------------------------------
stamp=$(date +%Y%m%d-%H%M%S)
pp_csv="$results/pingpong.csv"; match_csv="$results/match.csv"; raw_csv="$results/raw.csv"
echo "stamp,impl,rep,size,latency_us,bandwidth_MBps,pingpong_MBps" >"$pp_csv"
echo "stamp,impl,rep,N,expected_us_per_req,unexpected_us_per_req" >"$match_csv"
echo "stamp,rep,oneway_us" >"$raw_csv"
log "implementations: ${impls[*]}; $reps repetitions$([ $quick = 1 ] && echo ' (quick)')"
[ $shm = 1 ] || reps_shm=0
for rep in $(seq 1 "${reps_shm:-$reps}"); do
    for impl in "${impls[@]}"; do
        if [ "$impl" = raw ]; then
            out="$results/logs/raw_$rep.txt"
            "$build/bench/raw_cacheline" "$raw_n" >"$out" 2>&1 || log "raw_cacheline failed (rep $rep)"
            sed -n 's/.*median \([0-9.]*\) us.*/'"$stamp,$rep"',\1/p' "$out" >>"$raw_csv"
            continue
        fi
        for prog in pingpong match; do
            out="$results/logs/${impl}_${prog}_$rep.txt"
            if [ $prog = pingpong ]; then args=("${pp_args[@]}"); else args=("${match_args[@]}"); fi
            log "rep $rep: $impl $prog"
            launch "$impl" "$prog" "${args[@]}" >"$out" 2>&1 || log "$impl $prog failed (rep $rep), see $out"
            csv=$pp_csv; [ $prog = match ] && csv=$match_csv
            awk -v p="$stamp,$impl,$rep" '/^[0-9]/ { $1 = $1; gsub(/ /, ","); print p "," $0 }' "$out" >>"$csv"
        done
    done
done

# ---- 4. summary -------------------------------------------------------------
log "done; CSV in $results"
[ $shm = 1 ] && python3 - "$pp_csv" "$match_csv" "$raw_csv" "$quick" <<'PY'
import csv, statistics, sys
pp, match, raw, quick = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
def med(xs):
    return statistics.median(xs) if xs else None
def lo(xs):
    return min(xs) if xs else None
def hi(xs):
    return max(xs) if xs else None
lat, bw, me, mu = {}, {}, {}, {}
for r in csv.DictReader(open(pp)):
    if r["size"] == "8": lat.setdefault(r["impl"], []).append(float(r["latency_us"]))
    if r["size"] == str(4 << 20): bw.setdefault(r["impl"], []).append(float(r["bandwidth_MBps"]))
for r in csv.DictReader(open(match)):
    me.setdefault((r["impl"], r["N"]), []).append(float(r["expected_us_per_req"]))
    mu.setdefault((r["impl"], r["N"]), []).append(float(r["unexpected_us_per_req"]))
lat["raw"] = [float(r["oneway_us"]) for r in csv.DictReader(open(raw))]
impls = ["raw", "weft", "ompi", "mpich"]
def fmt(v, d=3):
    return "n/a" if v is None else f"{v:.{d}f}"
def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b
def num(s):
    try: return float(s)
    except ValueError: return None
def table(title, small, big):
    # small: aggregator for times (median or min), big: for bandwidth (median or max)
    rows = []
    def row(name, vals, d, target=""):
        w = vals.get("weft")
        rows.append([name] + [fmt(vals.get(i), d) for i in impls] +
                    [fmt(ratio(w, vals.get(i)), 2) for i in ("raw", "ompi", "mpich")] + [target])
    row("8 B one-way latency (us)", {i: small(lat.get(i, [])) for i in impls}, 3, "weft/raw <= 1.3")
    row("4 MiB bandwidth (MB/s, window 16)", {i: big(bw.get(i, [])) for i in impls}, 0,
        "weft/ompi >= 1.2")
    for kind, tab in (("expected", me), ("unexpected", mu)):
        a = {i: small(tab.get((i, "16"), [])) for i in impls}
        b = {i: small(tab.get((i, "4096"), [])) for i in impls}
        row(f"match {kind} N=16 (us/req)", a, 3)
        row(f"match {kind} N=4096 (us/req)", b, 3)
        row(f"match {kind} growth N=4096/N=16", {i: ratio(b[i], a[i]) for i in impls}, 2,
            "weft growth <= 1.5")
    def verdict(r, v, ok):
        r[-1] += " (n/a)" if v is None else " (" + ("met" if ok(v) else "NOT met") + ")"
    verdict(rows[0], num(rows[0][5]), lambda v: v <= 1.3)
    verdict(rows[1], num(rows[1][6]), lambda v: v >= 1.2)
    for k in (4, 7):
        verdict(rows[k], num(rows[k][2]), lambda v: v <= 1.5)
    head = [title, "raw", "weft", "Open MPI", "MPICH", "weft/raw", "weft/ompi", "weft/mpich",
            "target"]
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---" for _ in head) + "|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
table("median over reps", med, med)
print()
table("best over reps (min time, max MB/s)", lo, hi)
print(f"\nreps: {len(lat.get('raw', []))} raw, {len(lat.get('weft', []))} weft, "
      f"{len(lat.get('ompi', []))} ompi, {len(lat.get('mpich', []))} mpich"
      + (" (quick)" if quick else ""))
PY

# ---- 5. tcp -------------------------------------------------------------------
[ $tcp = 1 ] || exit 0
tcp_csv="$results/tcp_pingpong.csv"; rawtcp_csv="$results/raw_tcp.csv"
echo "stamp,impl,rep,size,latency_us,bandwidth_MBps,pingpong_MBps" >"$tcp_csv"
echo "stamp,rep,oneway_us,bandwidth_MBps" >"$rawtcp_csv"
tcp_impls=(raw weft)
printf '%s\n' "${impls[@]}" | grep -qx ompi && tcp_impls+=(ompi)
if [ $quick = 1 ]; then rawtcp_n=20000; else rawtcp_n=100000; fi
log "tcp: ${tcp_impls[*]}; $reps repetitions"
for rep in $(seq 1 "$reps"); do
    for impl in "${tcp_impls[@]}"; do
        out="$results/logs/tcp_${impl}_$rep.txt"
        log "rep $rep: tcp $impl"
        case $impl in
        raw) timeout 600 "$build/bench/raw_tcp" "$rawtcp_n" >"$out" 2>&1 || log "raw_tcp failed (rep $rep)"
            lat=$(sed -n 's/^latency 8 B: median \([0-9.]*\) us.*/\1/p' "$out")
            bw=$(sed -n 's/^bandwidth 4 MiB: median \([0-9.]*\) MB.*/\1/p' "$out")
            echo "$stamp,$rep,$lat,$bw" >>"$rawtcp_csv"
            continue ;;
        weft) WEFT_DRIVERS=tcp timeout 600 "$build/tools/weftrun" --timeout 580 -n 2 \
                "$build/bench/weft_pingpong" --pin --quick --max 4M >"$out" 2>&1 ;;
        ompi) timeout 600 mpirun.openmpi --allow-run-as-root --oversubscribe -np 2 --bind-to none \
                --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo \
                "$mpibin/mpi_pingpong_ompi" --pin --quick --max 4M >"$out" 2>&1 ;;
        esac || log "tcp $impl failed (rep $rep), see $out"
        awk -v p="$stamp,$impl,$rep" '/^[0-9]/ { $1 = $1; gsub(/ /, ","); print p "," $0 }' "$out" >>"$tcp_csv"
    done
done
python3 - "$tcp_csv" "$rawtcp_csv" <<'PY'
import csv, statistics, sys
pp, raw = sys.argv[1], sys.argv[2]
lat, bw = {}, {}
for r in csv.DictReader(open(pp)):
    if r["size"] == "8": lat.setdefault(r["impl"], []).append(float(r["latency_us"]))
    if r["size"] == str(4 << 20): bw.setdefault(r["impl"], []).append(float(r["bandwidth_MBps"]))
for r in csv.DictReader(open(raw)):
    try:
        lat.setdefault("raw", []).append(float(r["oneway_us"]))
        bw.setdefault("raw", []).append(float(r["bandwidth_MBps"]))
    except ValueError:
        pass
def med(xs): return statistics.median(xs) if xs else None
def spread(xs): return f"{min(xs):.3g}-{max(xs):.3g}" if xs else "n/a"
def fmt(v, d): return "n/a" if v is None else f"{v:.{d}f}"
def ratio(a, b): return None if a is None or b is None or b == 0 else a / b
impls = ["raw", "weft", "ompi"]
print("| tcp, loopback (median over reps) | raw socket | weft tcp | Open MPI tcp | weft/raw | weft/ompi | target |")
print("|---|---|---|---|---|---|---|")
l = {i: med(lat.get(i, [])) for i in impls}
b = {i: med(bw.get(i, [])) for i in impls}
rl, rb = ratio(l["weft"], l["raw"]), ratio(b["weft"], b["ompi"])
print(f"| 8 B one-way latency (us) | {fmt(l['raw'],3)} | {fmt(l['weft'],3)} | {fmt(l['ompi'],3)} | "
      f"{fmt(rl,2)} | {fmt(ratio(l['weft'], l['ompi']),2)} | weft/raw <= 1.3 "
      f"({'n/a' if rl is None else ('met' if rl <= 1.3 else 'NOT met')}) |")
print(f"| 4 MiB bandwidth (MB/s) | {fmt(b['raw'],0)} | {fmt(b['weft'],0)} | {fmt(b['ompi'],0)} | "
      f"{fmt(ratio(b['weft'], b['raw']),2)} | {fmt(rb,2)} | weft/ompi >= 1.5 "
      f"({'n/a' if rb is None else ('met' if rb >= 1.5 else 'NOT met')}) |")
print("\nspread (min-max over reps): latency " +
      ", ".join(f"{i} {spread(lat.get(i, []))}" for i in impls) +
      "; bandwidth " + ", ".join(f"{i} {spread(bw.get(i, []))}" for i in impls))
PY
