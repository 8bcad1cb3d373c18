#!/usr/bin/env bash
# run_compare.sh: the old name of bench/weft-bench, kept so that old commands
# still work. Its options map onto weft-bench's:
#
#   --quick, --reps R, --no-install, --build DIR   the same
#   --tcp                                          only the tcp comparison (--only tcp --tcp)
#   --no-tcp                                       the default (tcp is opt-in now)
#
# Everything else: bench/weft-bench --help.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
args=()
while [ $# -gt 0 ]; do
    case "$1" in
    --tcp) args+=(--tcp --only tcp) ;;
    --no-tcp) ;;
    *) args+=("$1") ;;
    esac
    shift
done
exec "$here/weft-bench" ${args[@]+"${args[@]}"}
