# Sourced by the tests of apps/: one job through weftrun and its check.
# Needs WEFTRUN and out; sets fail on a failed check.

# run WHAT PATTERN NP PROG ARGS...: the job must exit 0 and print a line
# matching PATTERN (its own check); extra weftrun options in $RUN_OPTS.
run() {
    what=$1 pat=$2 np=$3
    shift 3
    timeout -k 5 300 "$WEFTRUN" --timeout 240 -n "$np" ${RUN_OPTS:-} "$@" >"$out" 2>&1
    st=$?
    if [ $st = 0 ] && grep -q -- "$pat" "$out"; then
        echo "ok: $what"
    else
        echo "FAIL: $what: status $st"
        sed 's/^/    /' "$out"
        fail=1
    fi
}
