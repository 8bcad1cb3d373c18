#!/bin/sh
# Two jobs started apart meet at a port (dynport.c): a server job of $2 ranks,
# a client job of $3, the name service in a directory of their own.
#   dynport.sh MPIRUN DYNPORT NSERVER NCLIENT
set -u
mpirun=$1 prog=$2 ns=$3 nc=$4
dir=$(mktemp -d "${TMPDIR:-/tmp}/weft-dynport.XXXXXX")
trap 'rm -rf "$dir"' EXIT
export WEFT_NAME_DIR="$dir"
service="weft-dynport-$$"
"$mpirun" --timeout 100 -n "$ns" "$prog" server "$service" &
server=$!
"$mpirun" --timeout 100 -n "$nc" "$prog" client "$service"
crc=$?
wait $server
src=$?
echo "dynport: server exit $src, client exit $crc"
[ $src -eq 0 ] && [ $crc -eq 0 ]
