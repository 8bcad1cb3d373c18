#!/bin/sh
# weftrun with hosts, without any other machine: the "remote shell" is
# rsh_detach.sh, which starts the rank here but detached (killing it does not
# reach the rank, as killing an ssh client does not), or the same script named
# ssh (quoted command line, the secret on stdin). Remote ranks reach weftrun over
# TCP on 127.0.0.1. Covers placement, hostfiles and their errors, remote failures
# and their messages, the lifeline (remote ranks die with the job), strangers on
# the TCP port, and remote shells that cannot start anything.
# Usage: test_weftrun_hosts.sh WEFTRUN BOOT_HELPER BOOT_BADCLIENT RSH_DETACH
set -u
WEFTRUN=$1
HELPER=$2
BADCLIENT=$3
RSH=$(cd "$(dirname "$4")" && pwd)/$(basename "$4")
fail=0
tmp=$(mktemp -d)
stranger_pid=
cleanup() {
    [ -n "$stranger_pid" ] && kill "$stranger_pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
TMPDIR=$tmp
export TMPDIR
out=$tmp/out
err=$tmp/err
ln -s "$RSH" "$tmp/ssh"
SSH=$tmp/ssh
REMOTE="--rsh $RSH --boot-addr 127.0.0.1"

. "$(dirname "$0")/weftrun_lib.sh"

# all_dead FILE WHAT: every "sleeping rank R pid P" of FILE ends within 5 s.
all_dead() {
    pids=$(sed -n 's/^sleeping rank [0-9]* pid //p' "$1")
    if [ -z "$pids" ]; then
        bad "$2: no rank pids in:"
        sed 's/^/    /' "$1"
        return
    fi
    i=0
    for pid in $pids; do
        while alive "$pid" && [ $i -lt 600 ]; do
            sleep 0.1
            i=$((i + 1))
        done
        if alive "$pid"; then
            bad "$2: rank pid $pid survived"
            kill -KILL "$pid" 2>/dev/null
            return
        fi
    done
    ok "$2"
}

# --- placement and node ids
if run 0 15 --hosts h0,h1 $REMOTE -n 3 "$HELPER" where; then
    expect "$out" "^rank 0 node h0 addr tcp:127\.0\.0\.1:[0-9]+$" "rank 0 on h0, over TCP"
    expect "$out" "^rank 1 node h1 addr tcp:" "rank 1 on h1 (one slot each)"
    expect "$out" "^rank 2 node h0 addr tcp:" "rank 2 back on h0 (more ranks than slots)"
fi
if run 0 15 --hosts h0:2,h1:2 $REMOTE -n 4 "$HELPER" where; then
    expect "$out" "^rank 1 node h0 " "by slot: rank 1 fills h0"
    expect "$out" "^rank 2 node h1 " "by slot: rank 2 on h1"
fi
run 0 15 --hosts h0:2,h1:2 --map-by node $REMOTE -n 4 "$HELPER" where &&
    expect "$out" "^rank 1 node h1 " "--map-by node: round-robin"
if run 0 15 --hosts localhost,h1 $REMOTE -n 2 "$HELPER" where; then
    expect "$out" "^rank 0 node localhost addr unix:" "localhost: forked, Unix socket"
    expect "$out" "^rank 1 node h1 addr tcp:" "other host: TCP"
fi
run 0 15 --hosts h0,h1 $REMOTE -x WEFT_NODE_ID=same -n 2 "$HELPER" where &&
    expect "$out" "^rank 1 node same " "-x WEFT_NODE_ID overrides the host's"

# --- hostfiles
cat >"$tmp/hosts" <<'HOSTS'
# two hosts
h0 slots=2   # two ranks here
h1:1

HOSTS
run 0 15 --hostfile "$tmp/hosts" $REMOTE -n 3 "$HELPER" where &&
    expect "$out" "^rank 1 node h0 " "hostfile: slots=2" &&
    expect "$out" "^rank 2 node h1 " "hostfile: host:1, comments, blank lines"
printf 'h0\nh1 slots=x\n' >"$tmp/bad1"
run 2 5 --hostfile "$tmp/bad1" -n 1 true &&
    expect "$err" "hostfile .*/bad1 line 2: 'slots=x': bad slots= value" "hostfile: bad slots"
printf 'h0 cpus=4\n' >"$tmp/bad2"
run 2 5 --hostfile "$tmp/bad2" -n 1 true &&
    expect "$err" "hostfile .*/bad2 line 1: 'cpus=4': unknown field" "hostfile: unknown field"
printf '# nothing\n\n' >"$tmp/bad3"
run 2 5 --hostfile "$tmp/bad3" -n 1 true &&
    expect "$err" "hostfile .*/bad3 names no host" "hostfile: empty"
printf -- '-oProxyCommand=x\n' >"$tmp/bad4"
run 2 5 --hostfile "$tmp/bad4" -n 1 true &&
    expect "$err" "hostfile .*/bad4 line 1: bad host name" "hostfile: a host name like an option"
run 2 5 --hostfile "$tmp/none" -n 1 true &&
    expect "$err" "--hostfile .*/none: No such file" "hostfile: missing file"
run 2 5 --hosts h0,,h1 -n 1 true && expect "$err" "bad host name" "--hosts with an empty name"
run 2 5 --hosts h0:0 -n 1 true && expect "$err" "bad slot count" "--hosts h0:0"
run 2 5 --map-by board -n 1 true && expect "$err" "--map-by 'board'" "--map-by board"

# --- an ssh-like remote shell: quoted words, the secret on stdin
run 0 15 --hosts h0,h1 --rsh "$SSH" --boot-addr 127.0.0.1 -x "Q=it's \"quoted\" \$HOME" -n 2 \
    "$HELPER" env Q "it's \"quoted\" \$HOME" && ok "ssh-like: words quoted for the remote shell"
run 0 15 --hosts h0,h1 --rsh "$SSH" --boot-addr 127.0.0.1 -n 2 "$BADCLIENT" &&
    ok "ssh-like: the ranks got the secret on stdin (their bad clients prove it)"

# --- the store over TCP against lying clients (the ranks' own bad clients)
run 0 30 --hosts h0,h1 $REMOTE -n 2 "$BADCLIENT" &&
    expect "$err" "refused a connection from tcp 127\.0\.0\.1 port [0-9]+ claiming rank 1 of 2: it does not know the job secret" \
        "bad clients over TCP refused and logged"

# --- a stranger on the TCP port: refused, logged, and the job ends as it would have
rm -f "$tmp/go" "$out" "$err" "$tmp/stranger"
"$WEFTRUN" --hosts h0,h1 $REMOTE -n 2 "$HELPER" wait-file "$tmp/go" >"$out" 2>"$err" &
wpid=$!
if wait_lines "$out" 2; then
    addr=$(sed -n 's/^rank 0 addr tcp:\([^ ]*\) jobid .*/\1/p' "$out")
    jobid=$(sed -n 's/^rank 0 addr .* jobid //p' "$out")
    "$HELPER" stranger "$addr" "$jobid" >"$tmp/stranger" 2>&1 &
    stranger_pid=$!
    wait_lines "$tmp/stranger" 3 || bad "stranger: $(cat "$tmp/stranger")"
    expect "$tmp/stranger" "^stranger: garbage refused" "stranger's garbage refused"
    expect "$tmp/stranger" "^stranger: wrong proof refused" "stranger's guessed proof refused"
    touch "$tmp/go"
    wait $wpid
    status=$?
    [ $status = 0 ] && ok "job unchanged by the stranger (a half handshake still open)" ||
        bad "job with a stranger: status $status"
    expect "$err" "refused a connection from tcp 127\.0\.0\.1 port [0-9]+ claiming rank 0 of 2: it does not know the job secret" \
        "stranger logged"
    kill "$stranger_pid"
    wait "$stranger_pid" 2>/dev/null
    stranger_pid=
else
    bad "stranger: the job did not start"
    kill -KILL $wpid
fi

# --- many silent strangers on the TCP port, from the ranks' own address and from
# 20 others (127.0.0.0/8 is this machine's), more than the bound on connections
# waiting for their HELLO: the job's ranks still get in. A stand-in remote shell
# holds the ranks back until the strangers are in place, and says where the port is.
cat >"$tmp/rsh_gate" <<GATE
#!/bin/sh
echo "\$*" >"$tmp/gate-args.\$1"
i=0
while [ ! -e "$tmp/gate" ] && [ \$i -lt 600 ]; do sleep 0.05; i=\$((i + 1)); done
exec "$RSH" "\$@"
GATE
chmod +x "$tmp/rsh_gate"
rm -f "$tmp/gate" "$tmp"/gate-args.* "$out" "$err" "$tmp/silent"
"$WEFTRUN" --hosts h0,h1 --rsh "$tmp/rsh_gate" --boot-addr 127.0.0.1 -n 2 "$HELPER" where \
    >"$out" 2>"$err" &
wpid=$!
i=0
while [ ! -s "$tmp/gate-args.h1" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
port=$(sed -n 's/.*WEFT_BOOT_ADDR=tcp:127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/gate-args.h1" 2>/dev/null)
srcs=127.0.0.1
for a in $(seq 2 21); do srcs="$srcs 127.0.0.$a"; done
if [ -n "$port" ]; then
    # shellcheck disable=SC2086
    "$HELPER" silent "127.0.0.1:$port" 20 $srcs >"$tmp/silent" 2>&1 &
    stranger_pid=$!
    wait_lines "$tmp/silent" 1 "^holding" || bad "silent strangers: $(cat "$tmp/silent")"
    held=$(sed -n 's/^holding //p' "$tmp/silent")
    touch "$tmp/gate"
    wait $wpid
    status=$?
    if [ "${held:-0}" -lt 300 ]; then
        echo "skip: only ${held:-0} silent connections could be opened: $(cat "$tmp/silent")"
    elif [ $status = 0 ] && grep -q "^rank 1 node h1 addr tcp:" "$out"; then
        ok "$held silent strangers (20 from the ranks' address): the job still starts"
        lines=$(grep -c '^weftrun:' "$err")
        if [ "$lines" -le 40 ] &&
            grep -qE "^weftrun: refused or closed [0-9]+ more connections from strangers in the last [0-9.]+ s" "$err"; then
            ok "strangers' lines rate-limited ($lines lines, the rest counted)"
        else
            bad "strangers' lines not rate-limited: $lines lines; the last ones:"
            tail -n 5 "$err" | sed 's/^/    /'
        fi
    else
        bad "with $held silent strangers: status $status"
        sed 's/^/    stdout: /' "$out"
        head -n 20 "$err" | sed 's/^/    stderr: /'
    fi
    kill "$stranger_pid"
    wait "$stranger_pid" 2>/dev/null
    stranger_pid=
else
    bad "silent strangers: the gated remote shell did not say where the port is"
    touch "$tmp/gate"
    wait $wpid
fi

# --- remote ranks that fail, and the lifeline
if run 3 15 --hosts h0,h1 $REMOTE -n 3 "$HELPER" exit 1 3 0; then
    expect "$err" "^weftrun: rank 1 on host h1 \(pid [0-9]+\) exited with status 3 and never connected to weftrun" \
        "remote failure names rank and host"
fi
if run 137 15 --hosts h0,h1 $REMOTE -n 3 "$HELPER" kill-self 2; then
    expect "$err" "^weftrun: rank 2 on host h0 \(pid [0-9]+\) exited with status 137; ending the job" \
        "a killed remote rank: named with its host"
    all_dead "$out" "the other remote ranks died with the job (lifeline, not the remote shell)"
fi
for sig in TERM KILL; do
    rm -f "$out" "$err"
    "$WEFTRUN" --hosts h0,h1 $REMOTE -n 2 "$HELPER" boot-sleep >"$out" 2>"$err" &
    wpid=$!
    if ! wait_lines "$out" 2 "^sleeping rank"; then
        bad "SIG$sig: ranks did not start"
        kill -KILL $wpid
        wait $wpid
        continue
    fi
    kill -$sig $wpid
    wait $wpid
    all_dead "$out" "SIG$sig to weftrun: detached remote ranks end (lifeline)"
done

# --- remote shells that cannot start anything: a clear message, no hang
run 1 10 --hosts h0,h1 --rsh false --boot-addr 127.0.0.1 -n 2 "$HELPER" boot-sleep &&
    expect "$err" "^weftrun: rank [01] on host h[01] \(pid [0-9]+\) exited with status 1 and never connected to weftrun \(check that 'false h[01]' starts it" \
        "--rsh false: the job ends, naming the host"
run 127 10 --hosts h0 --rsh weft-no-such-rsh --boot-addr 127.0.0.1 -n 1 "$HELPER" boot-sleep &&
    expect "$err" "cannot run 'weft-no-such-rsh': No such file" "a missing remote shell"
if [ "$(id -u)" = 0 ] && command -v ip >/dev/null && ip netns list >/dev/null 2>&1; then
    run 255 10 --hosts weft-no-such-ns-$$ --rsh "ip netns exec" --boot-addr 127.0.0.1 -n 1 \
        "$HELPER" boot-sleep &&
        expect "$err" "rank 0 on host weft-no-such-ns-$$ \(pid [0-9]+\) exited with status 255 \(255: the remote shell 'ip' could not reach the host" \
            "a namespace that does not exist"
else
    echo "skip: ip netns needs root"
fi
run 2 5 --hosts h0 --rsh "" -n 1 true && expect "$err" "--rsh is empty" "empty --rsh"
run 1 10 --hosts h0 --rsh "$RSH" --boot-addr 203.0.113.300 -n 1 true &&
    expect "$err" "--boot-addr '203.0.113.300' is not a numeric IP" "bad --boot-addr"

[ $fail = 0 ] && echo "test_weftrun_hosts: all passed"
exit $fail
