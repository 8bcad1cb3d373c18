#!/bin/sh
# A rank killed by SIGKILL on libfabric's shm provider cannot remove the
# memory region the provider made for it; weftrun removes what its job left
# in /dev/shm once the job ends (the region is named weft-<jobid>-ofi-<rank>).
# Checked two ways: nothing named after the job is left, and no weft-* file
# made since the test began is left (ctest runs this test alone: RUN_SERIAL).
#   ofi_shm_leftover.sh WEFTRUN MP_PEER_DEATH
set -u
weftrun=$1
prog=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
touch "$dir/start"
sleep 1 # file times are in whole seconds on some file systems
# Rank 1 dies by SIGKILL mid-job; --keep-going lets rank 0 see it and finish.
WEFT_DRIVERS=ofi WEFT_OFI_PROVIDER=shm "$weftrun" --keep-going --timeout 60 -n 2 \
    sh -c 'echo "$WEFT_JOBID" > "$0/job.$WEFT_RANK"; exec "$@"' "$dir" "$prog" kill \
    > "$dir/out" 2>&1
grep -q "rank 0: peer death detected" "$dir/out" || {
    echo "ofi_shm_leftover: the job did not run as expected:"
    cat "$dir/out"
    exit 1
}
job=$(cat "$dir/job.0")
[ -n "$job" ] || { echo "ofi_shm_leftover: no job id"; exit 1; }
left=$(ls /dev/shm 2>/dev/null | grep -F "weft-$job-" || true)
left="$left$(find /dev/shm -maxdepth 1 -name 'weft-*' -newer "$dir/start" 2>/dev/null)"
if [ -n "$left" ]; then
    echo "ofi_shm_leftover: left in /dev/shm after job $job: $left"
    exit 1
fi
echo "ofi_shm_leftover: nothing of job $job left in /dev/shm"
