#!/bin/sh
# A stand-in for a remote shell, for tests: "rsh_detach.sh HOST COMMAND..." runs
# COMMAND on this machine in a session of its own, and passes on its exit status.
# Like the ssh client, which ends without ending the remote process, this script
# can be killed while COMMAND goes on: only the rank's lifeline to weftrun can
# end it then. Named ssh (a link), it runs its single argument with sh -c, as
# sshd does with a remote command line.
host=$1
shift
[ -n "$host" ] || exit 255
# A background command's stdin would be /dev/null: keep ours (the secret
# travels there in ssh mode) on another descriptor first.
exec 3<&0
case $(basename "$0") in
ssh) setsid sh -c "$1" <&3 3<&- & ;;
*) setsid "$@" <&3 3<&- & ;;
esac
wait $!
