#!/bin/sh
# WEFT_TRACE on a real run: each rank's file is well formed (valid JSON,
# every begin has its end, time runs forward per thread), the packets it
# shows per gate are those WEFT_STATS counted in the same run, and the
# merged timeline holds both ranks; a rank put on another node's clock is
# brought back by the offset merge measures from the packets.
#
#   trace_check.sh WEFTRUN WEFT-TRACE DIR PROG [ARGS...]   (2 ranks)
set -e
weftrun=$1 tool=$2 dir=$3
shift 3
command -v python3 >/dev/null || { echo "trace_check: no python3; skipped"; exit 77; }
rm -rf "$dir"
mkdir -p "$dir"
WEFT_STATS=1 WEFT_TRACE="$dir/t.%r.json" "$weftrun" --timeout 120 -n 2 "$@" 2>"$dir/stderr" ||
    { cat "$dir/stderr" >&2; exit 1; }
"$tool" check --stats "$dir/stderr" "$dir/t.0.json" "$dir/t.1.json"
"$tool" merge "$dir/all.json" "$dir/t.0.json" "$dir/t.1.json"
python3 - "$dir/all.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
pids = {e["pid"] for e in d["traceEvents"] if e["ph"] != "M"}
names = {e["name"] for e in d["traceEvents"]}
assert pids == {0, 1}, pids
for n in ("isend", "irecv", "packet", "arrive", "match"):
    assert n in names, n
print("trace_check: merged timeline holds ranks", sorted(pids), "and", len(names), "event names")
PY
# Rank 1 as if on another node whose clock is 5 ms ahead (and whose realtime
# clock says nothing useful): merge measures the offset from the packets.
python3 - "$dir/t.1.json" "$dir/t.1.far.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["otherData"]["node"] = "another node"
d["otherData"]["real_ns"] += 10**9
for e in d["traceEvents"]:
    if "ts" in e:
        e["ts"] += 5000.0
json.dump(d, open(sys.argv[2], "w"))
PY
"$tool" merge "$dir/far.json" "$dir/t.0.json" "$dir/t.1.far.json"
python3 - "$dir/far.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["otherData"]["weft_ranks"][1]
assert r["shift_from"].startswith("measured"), r
assert abs(r["shift_us"] + 5000.0) < 100.0, r  # the one-way times' asymmetry, at most
print("trace_check: offset of a far rank measured: %+.1f us" % r["shift_us"])
PY
"$tool" summary "$dir/t.0.json"
