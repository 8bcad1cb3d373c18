#!/bin/sh
# Launcher behaviour of weftrun: exit codes, failure detection, timeouts,
# environment, output forwarding, skips, bad programs, --keep-going, signals,
# cleanup. Usage: test_weftrun.sh WEFTRUN BOOT_HELPER
set -u
WEFTRUN=$1
HELPER=$2
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# weftrun makes its socket directory in $TMPDIR: what a killed weftrun leaves
# behind goes away with $tmp.
TMPDIR=$tmp
export TMPDIR
out=$tmp/out
err=$tmp/err

. "$(dirname "$0")/weftrun_lib.sh"

# --- usage
run 2 5 && expect "$err" "usage: weftrun" "no arguments: usage, exit 2"
run 2 5 --bogus -n 1 true && expect "$err" "unknown option '--bogus'" "bad option: exit 2"
run 2 5 -n 1 && expect "$err" "no program" "missing program: exit 2"
run 2 5 -n zero true && ok "bad -n: exit 2"
run 0 5 --help && expect "$out" "usage: weftrun" "--help"
run 0 5 --version && expect "$out" "weftrun \(weft\) [0-9]" "--version"

# --- plain runs, output forwarding
run 0 10 -n 1 true && ok "-n 1 true"
if run 0 10 -n 3 "$HELPER" info; then
    for r in 0 1 2; do
        expect "$out" "^rank $r size 3 jobid w[0-9]+-[0-9a-f]+ addr unix:" "stdout of rank $r"
        expect "$err" "^stderr from rank $r\$" "stderr of rank $r"
    done
    sock=$(sed -n 's/.* addr unix://p' "$out" | head -n 1)
    case $sock in "$tmp"/weftrun-*) ok "socket in \$TMPDIR" ;; *) bad "socket at '$sock'" ;; esac
    if [ -n "$sock" ] && [ ! -e "$(dirname "$sock")" ]; then
        ok "socket directory removed"
    else
        bad "socket directory $(dirname "$sock") left behind"
    fi
fi
run 0 10 -np 2 --tag-output "$HELPER" info &&
    expect "$out" "^\[1\] rank 1 size 2" "--tag-output on stdout" &&
    expect "$err" "^\[0\] stderr from rank 0" "--tag-output on stderr"

# --- environment
FOO2=forwarded
export FOO2
run 0 10 -x FOO=bar -x FOO2 -x EMPTY= -n 2 "$HELPER" env FOO bar FOO2 forwarded EMPTY "" &&
    ok "-x VAR=val and -x VAR reach the ranks"
run 2 5 -x "1BAD=x" -n 1 true && ok "-x with a bad name: exit 2"

# --- exit statuses
run 3 15 -n 3 "$HELPER" exit 1 3 sleep &&
    expect "$err" "^weftrun: rank 1 \(pid [0-9]+\) exited with status 3; ending the job" \
        "a rank exiting 3 ends the job with 3"
[ "$(grep -c '^weftrun:' "$err")" = 1 ] && ok "one line about the failure" ||
    bad "expected one weftrun line, got: $(cat "$err")"
run 77 10 -n 3 "$HELPER" exit 0 77 77 && ok "all ranks exit 77: weftrun exits 77"
run 77 10 -n 3 "$HELPER" exit 1 77 0 && ok "one rank 77, others 0: weftrun exits 77"
run 4 15 -n 2 "$HELPER" exit 0 4 0 && ok "rank 0 exits 4, rank 1 exits 0: 4"

# --- a rank killed mid-job while the others sleep forever
if run 137 15 -n 3 "$HELPER" kill-self 2; then
    expect "$err" "^weftrun: rank 2 \(pid [0-9]+\) was killed by signal 9 \(Killed\); ending the job" \
        "SIGKILLed rank named with its signal"
    for pid in $(sed -n 's/^sleeping rank [0-9]* pid //p' "$out"); do
        alive "$pid" && bad "rank pid $pid survived the job"
    done
fi

# --- timeout
run 124 15 --timeout 2 -n 2 "$HELPER" sleep &&
    expect "$err" "longer than --timeout 2 s" "--timeout ends a hanging job"

# --- missing program
run 127 10 -n 2 /nonexistent/weft-prog &&
    expect "$err" "^weftrun: cannot run '/nonexistent/weft-prog': No such file or directory" \
        "missing program: clear error"

# --- --keep-going waits for the survivors
run 5 15 --keep-going -n 3 "$HELPER" keep-going &&
    expect "$out" "^survivor 0 done" "--keep-going: survivor 0 finished" &&
    expect "$out" "^survivor 2 done" "--keep-going: survivor 2 finished" &&
    expect "$err" "rank 1 \(pid [0-9]+\) exited with status 5; waiting for the other ranks" \
        "--keep-going: failure reported"
run 137 15 --keep-going -n 3 "$HELPER" fence-dead &&
    expect "$out" "^rank 0: fence reported a dead peer" "fence fails when a rank died (rank 0)" &&
    expect "$out" "^rank 2: fence reported a dead peer" "fence fails when a rank died (rank 2)"

# --- abort
run 7 15 -n 3 "$HELPER" abort &&
    expect "$err" "^weftrun: rank 1 \(pid [0-9]+\) aborted the job with code 7: helper abort" \
        "abort ends the job with its code"

# --- the first failure is the one named, even when the others notice it on
# their own and abort (with 77, ctest's skip) before weftrun has its status
if run 1 15 -n 3 "$HELPER" peer exit0; then
    expect "$err" "^weftrun: rank 1 \(pid [0-9]+\) exited with status 0 without finalizing; ending the job" \
        "exit(0) without finalizing, peers abort with 77: rank 1 named, exit 1"
    [ "$(grep -c '^weftrun:' "$err")" = 1 ] && ok "exit(0) then aborts: one line" ||
        bad "exit(0) then aborts: expected one weftrun line, got: $(cat "$err")"
fi
# first_line PATTERN WHAT: weftrun's first line on stderr matches PATTERN.
first_line() {
    if head -n 1 "$err" | grep -qE "$1"; then
        ok "$2"
    else
        bad "$2: the first line is not '$1':"
        sed 's/^/    /' "$err"
    fi
}
run 1 15 --keep-going -n 3 "$HELPER" peer exit0 &&
    first_line "^weftrun: rank 1 \(pid [0-9]+\) exited with status 0 without finalizing; waiting for the other ranks" \
        "--keep-going: the rank that left is named first"
run 137 15 --keep-going -n 3 "$HELPER" peer kill &&
    first_line "^weftrun: rank 1 \(pid [0-9]+\) was killed by signal 9 \(Killed\); waiting for the other ranks" \
        "--keep-going: the killed rank is named first, before its peers' aborts"
run 1 15 -n 3 "$HELPER" abort 77 &&
    expect "$err" "^weftrun: rank 1 \(pid [0-9]+\) aborted the job with code 77: helper abort" \
        "an abort with code 77 exits 1, not skip"

# --- many local ranks: they never wait behind, nor are counted with, the TCP
# connections waiting for their HELLO (at most 256 of those)
if [ "$(ulimit -Hn)" = unlimited ] || [ "$(ulimit -Hn)" -ge 400 ]; then
    run 0 120 -n 300 "$HELPER" info &&
        [ "$(grep -c '^rank [0-9]* size 300 ' "$out")" = 300 ] &&
        ok "-n 300: every local rank joins the store"
else
    echo "skip: -n 300 needs ulimit -n of 400 or more (hard limit $(ulimit -Hn))"
fi

# --- ranks that leave before the others
if run 1 15 -n 3 "$HELPER" early-exit; then
    expect "$err" "^weftrun: rank 1 \(pid [0-9]+\) exited with status 0 without finalizing; ending the job" \
        "a rank exiting 0 without finalizing fails the job, named"
    [ "$(grep -c '^weftrun:' "$err")" = 1 ] && ok "exit without finalizing: one line" ||
        bad "exit without finalizing: expected one weftrun line, got: $(cat "$err")"
fi
run 0 15 -n 3 "$HELPER" fini-early && ok "a rank leaving with fini does not block fences"

# --- leftover shared-memory files of the job are removed
if run 0 10 -n 1 "$HELPER" shm; then
    f=$(head -n 1 "$out")
    [ -n "$f" ] && [ ! -e "$f" ] && ok "/dev/shm/weft-<jobid>* removed" || bad "$f left behind"
fi

# --- signals to weftrun reach the ranks; ranks die if weftrun dies
# start_bg HELPER-ARGS...: weftrun -n 2 of the helper in the background
# ($wpid), once both ranks have printed their first line; on failure it is
# killed and the check fails.
start_bg() {
    : >"$out" # see wait_lines
    "$WEFTRUN" -n 2 "$HELPER" "$@" >"$out" 2>"$err" &
    wpid=$!
    wait_lines "$out" 2 && return 0
    bad "$*: ranks did not start"
    kill -KILL $wpid
    wait $wpid
    return 1
}

for sig in TERM KILL; do
    start_bg sleep || continue
    kill -$sig $wpid
    wait $wpid
    status=$?
    pids=$(sed -n 's/^sleeping rank [0-9]* pid //p' "$out")
    [ -n "$pids" ] || bad "SIG$sig: no rank pids in: $(cat "$out")"
    # The ranks end within seconds; a minute leaves room for a loaded machine.
    i=0
    for pid in $pids; do
        while alive "$pid" && [ $i -lt 600 ]; do
            sleep 0.1
            i=$((i + 1))
        done
        alive "$pid" && bad "SIG$sig to weftrun: rank pid $pid survived"
    done
    if [ $sig = TERM ]; then
        [ $status = 143 ] && ok "SIGTERM to weftrun: exit 143, ranks ended" ||
            bad "SIGTERM to weftrun: status $status"
    else
        [ $i -lt 600 ] && ok "SIGKILL to weftrun: ranks died with it"
    fi
done

# --- out of file descriptors: one clear line and the job ends, instead of an
# accept loop that spins on the listening socket. Lines are counted through
# head, so that a spinning weftrun cannot fill the disk before timeout ends it.
if command -v timeout >/dev/null; then
    {
        (ulimit -n 64 && exec timeout -s KILL 60 "$WEFTRUN" -n 60 "$HELPER" info) 2>&1 >/dev/null
        echo $? >"$tmp/status"
    } | head -n 1000 >"$err"
    status=$(cat "$tmp/status")
    lines=$(grep -c '^weftrun:' "$err")
    if [ "$status" != 0 ] && [ "$status" != 137 ] && [ "$lines" -le 3 ]; then
        ok "ulimit -n 64, -n 60: weftrun exits $status with $lines line(s) of its own"
    else
        bad "ulimit -n 64, -n 60: status $status, $lines weftrun lines; the first ones:"
        head -n 5 "$err" | sed 's/^/    /'
    fi
    # Not expect: it would print every line of a spinning weftrun.
    if grep -qE "^weftrun: out of file descriptors accepting rank connections \(ulimit -n is 64; 60 ranks need about [0-9]+\); raise it with ulimit -n; ending the job" "$err"; then
        ok "out of descriptors: the line says so and how to fix it"
    else
        bad "out of descriptors: no line says so"
    fi
else
    echo "skip: no timeout(1) to bound the out-of-descriptors run"
fi

# --- SIGUSR1, SIGUSR2, SIGALRM to weftrun reach the ranks; the job goes on
for sig in USR1 USR2 ALRM; do
    start_bg signal $sig || continue
    kill -$sig $wpid
    wait $wpid
    status=$?
    if [ $status = 0 ] && [ "$(grep -c "^rank [01] got SIG$sig\$" "$out")" = 2 ]; then
        ok "SIG$sig to weftrun: forwarded to both ranks, the job ends normally"
    else
        bad "SIG$sig to weftrun: status $status, output:"
        sed 's/^/    /' "$out" "$err"
    fi
done

[ $fail = 0 ] && echo "test_weftrun: all passed"
exit $fail
