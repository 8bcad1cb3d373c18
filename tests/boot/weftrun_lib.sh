# Sourced by test_weftrun.sh and test_weftrun_hosts.sh: the checks around one
# weftrun job. Needs WEFTRUN, out and err; sets fail on a failed check.

ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

# run EXPECTED_STATUS SECONDS weftrun-args...: run weftrun and check its
# status; stdout and stderr land in $out and $err. SECONDS is about how long
# the job takes at most on an idle machine: one still running at ten times that
# is killed (status 124), so a hang fails the check, and a slow, loaded machine
# does not.
run() {
    expect=$1 limit=$(($2 * 10))
    shift 2
    timeout -k 5 "$limit" "$WEFTRUN" "$@" >"$out" 2>"$err"
    status=$?
    if [ "$status" != "$expect" ]; then
        why=""
        [ "$status" = 124 ] && [ "$expect" != 124 ] && why=" (still running after ${limit}s)"
        bad "weftrun $*: status $status, expected $expect$why"
        sed 's/^/    stdout: /' "$out"
        sed 's/^/    stderr: /' "$err"
        return 1
    fi
    return 0
}

# expect FILE PATTERN WHAT: FILE contains a line matching PATTERN (grep -E).
expect() {
    if grep -qE -- "$2" "$1"; then
        ok "$3"
    else
        bad "$3: no line matching '$2' in:"
        sed 's/^/    /' "$1"
    fi
}

# alive PID: the process exists and is not a zombie.
alive() {
    [ -r "/proc/$1/stat" ] || return 1
    state=$(sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null)
    [ -n "$state" ] && [ "$state" != Z ]
}

# wait_lines FILE N [PATTERN]: wait (at most 60 s) for N lines (matching
# PATTERN) in FILE. A job started in the background opens its output only once
# the shell's child runs, which under load can be after the first look: empty
# or remove FILE before starting the job, or the look counts the previous
# job's lines.
wait_lines() {
    i=0
    while :; do
        n=$(grep -c -- "${3:-}" "$1" 2>/dev/null)
        [ "${n:-0}" -ge "$2" ] && return 0
        i=$((i + 1))
        [ $i -gt 600 ] && return 1
        sleep 0.1
    done
}
