#!/bin/sh
# WEFT_TRACE on a real run: each rank's file is well formed (valid JSON,
# every begin has its end, time runs forward per thread), the packets it
# shows per gate are those WEFT_STATS counted in the same run, and the
# merged timeline holds both ranks.
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
"$tool" summary "$dir/t.0.json"
