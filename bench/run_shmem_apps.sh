#!/bin/sh
# apps/halo3d and apps/mandelbrot side by side, in one go: the same sources
# built with weft's oshcc / mpicc and with Open MPI's oshcc / mpicc, launches
# alternated repetition after repetition, at 1, 2 and 4 threads per process:
# halo3d's time per iteration with the default context, one shared context
# and a private context per thread, and its MPI twin; mandelbrot's time with
# the default context and with private ones. Medians over the repetitions,
# with the least and greatest, and the issue's two ratios at the most
# threads: weft's private contexts against Open MPI's, and against weft's
# own shared (halo3d) or default (mandelbrot) context.
#
#   bench/run_shmem_apps.sh [--build DIR] [--reps N] [--threads "1 2 4"]
#                           [--size N] [--iters K] [--image WxH] [--max M]
#
# Raw lines go to bench/results/shmem_apps.txt (not committed).
set -e
cd "$(dirname "$0")/.."
build=build reps=3 threadlist="1 2 4" size=48 iters=200 image=1600x1600 maxit=4096
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --threads) threadlist=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --image) image=$2; shift 2 ;;
    --max) maxit=$2; shift 2 ;;
    *) echo "usage: bench/run_shmem_apps.sh [--build DIR] [--reps N] [--threads LIST] [--size N] [--iters K] [--image WxH] [--max M]" >&2; exit 2 ;;
    esac
done
ninja -C "$build" shmem mpi weftrun >/dev/null
bin=$build/bench-shmem-apps
mkdir -p "$bin" bench/results
# Every library's programs built the same way, by its own wrappers.
"$build/bin/oshcc" -O2 -D_GNU_SOURCE apps/halo3d/halo3d_shmem.c -o "$bin/halo3d_shmem_weft" -lpthread
"$build/bin/mpicc" -O2 -D_GNU_SOURCE apps/halo3d/halo3d_mpi.c -o "$bin/halo3d_mpi_weft" -lpthread
"$build/bin/oshcc" -O2 -D_GNU_SOURCE apps/mandelbrot/mandelbrot.c -o "$bin/mandelbrot_weft" -lpthread
have_ompi=0
if [ -x /usr/bin/oshcc ] && command -v mpicc.openmpi >/dev/null; then
    /usr/bin/oshcc -O2 -D_GNU_SOURCE apps/halo3d/halo3d_shmem.c -o "$bin/halo3d_shmem_ompi" -lpthread
    mpicc.openmpi -O2 -D_GNU_SOURCE apps/halo3d/halo3d_mpi.c -o "$bin/halo3d_mpi_ompi" -lpthread
    /usr/bin/oshcc -O2 -D_GNU_SOURCE apps/mandelbrot/mandelbrot.c -o "$bin/mandelbrot_ompi" -lpthread
    have_ompi=1
else
    echo "run_shmem_apps: no Open MPI oshcc/mpicc: weft only" >&2
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_oob_tcp_if_include=lo
w=${image%x*} h=${image#*x}
out=bench/results/shmem_apps.txt
: >"$out"
# Ranks are left unbound: the threads of 2 processes share this machine's cores.
weft() { "$build/bin/mpirun" -n 2 --bind-to none "$@"; }
# Open MPI 4.1's OSHMEM ends each run with a segmentation fault in its
# teardown here, after its results are out: its status is not looked at.
ompi() { { oshrun -np 2 --bind-to none "$@" 2>/dev/null || true; }; }
record() { # lib: csv lines on stdin -> "app lib kind threads value"
    sed -n "s/^csv,halo3d_shmem_\([a-z]*\),\([0-9]*\),[a-z_]*,/halo3d $1 \1 \2 /p
            s/^csv,halo3d_mpi,\([0-9]*\),[a-z_]*,/halo3d $1 mpi \1 /p
            s/^csv,mandelbrot_\([a-z]*\),\([0-9]*\),[a-z_]*,/mandelbrot $1 \1 \2 /p" >>"$out"
}
i=1
while [ "$i" -le "$reps" ]; do
    for t in $threadlist; do
        for c in default shared private; do
            weft "$bin/halo3d_shmem_weft" --size "$size" --iters "$iters" --threads "$t" \
                --ctx $c | record weft
            [ $have_ompi = 1 ] && ompi "$bin/halo3d_shmem_ompi" --size "$size" --iters "$iters" \
                --threads "$t" --ctx $c | record ompi
        done
        weft "$bin/halo3d_mpi_weft" --size "$size" --iters "$iters" --threads "$t" |
            record weft
        [ $have_ompi = 1 ] && { mpirun.openmpi -np 2 --bind-to none "$bin/halo3d_mpi_ompi" \
            --size "$size" --iters "$iters" --threads "$t" | record ompi; }
        for c in default private; do
            weft "$bin/mandelbrot_weft" --width "$w" --height "$h" --max "$maxit" \
                --threads "$t" --ctx $c | record weft
            [ $have_ompi = 1 ] && ompi "$bin/mandelbrot_ompi" --width "$w" --height "$h" \
                --max "$maxit" --threads "$t" --ctx $c | record ompi
        done
    done
    i=$((i + 1))
done
awk -v top="${threadlist##* }" -f bench/median.awk -f /dev/fd/3 "$out" 3<<'EOF'
{
    k = $1 " " $2 " " $3 " " $4; v[k] = v[k] " " $5
    if (!(k in seen)) { seen[k] = 1; order[++n] = k }
}
function m(app, lib, kind, t,   k) { k = app " " lib " " kind " " t; return (k in v) ? median(v[k]) : 0 }
END {
    printf "%-11s %-5s %-8s %7s %12s %12s %12s\n", "# app", "lib", "context", "threads", "median", "lo", "hi"
    for (i = 1; i <= n; i++) {
        split(order[i], p, " ")
        printf "%-11s %-5s %-8s %7s %12.3f %12.3f %12.3f\n", p[1], p[2], p[3], p[4], median(v[order[i]]),
               lo(v[order[i]]), hi(v[order[i]])
    }
    hp = m("halo3d", "weft", "private", top); hs = m("halo3d", "weft", "shared", top)
    ho = m("halo3d", "ompi", "private", top)
    mp = m("mandelbrot", "weft", "private", top); md = m("mandelbrot", "weft", "default", top)
    mo = m("mandelbrot", "ompi", "private", top)
    if (hp > 0 && hs > 0)
        printf "# halo3d at %s threads: weft private %.3f us/iter; speedup over weft shared %.2fx%s\n", top, hp,
               hs / hp, (ho > 0 ? sprintf(", over Open MPI private %.2fx", ho / hp) : "")
    if (mp > 0 && md > 0)
        printf "# mandelbrot at %s threads: weft private %.3f s; speedup over weft default %.2fx%s\n", top, mp,
               md / mp, (mo > 0 ? sprintf(", over Open MPI private %.2fx", mo / mp) : "")
}
EOF
echo "# halo3d: us per iteration (block ${size}^3, $iters iterations; 'mpi' = halo3d_mpi); mandelbrot: seconds (${image}, up to $maxit iterations); 2 processes"
