#!/usr/bin/env python3
"""Plots of the applications' benchmarks, from the raw files of
bench/run_spmvm.sh (bench/results/spmvm.txt) and bench/run_shmem_apps.sh
(bench/results/shmem_apps.txt): spMVM Gflop/s per mode and per library, one
panel per matrix; halo3d's time per iteration against threads, and
mandelbrot's time against threads, one line per library and context.

    bench/plot_apps.py [--results DIR] [--out DIR]

Medians over the repetitions; the error bars span the least and greatest.
Needs matplotlib (Debian: python3-matplotlib)."""
import argparse
import os
import statistics
import sys


def read(path, nkey):
    vals, order = {}, []
    if not os.path.exists(path):
        return vals, order
    for line in open(path):
        f = line.split()
        if len(f) != nkey + 1:
            continue
        key = tuple(f[:nkey])
        if key not in vals:
            vals[key] = []
            order.append(key)
        vals[key].append(float(f[nkey]))
    return vals, order


def mlh(v):
    return statistics.median(v), min(v), max(v)


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--results", default=os.path.join(here, "results"))
    ap.add_argument("--out", default=os.path.join(here, "..", "docs", "img"))
    a = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_apps: matplotlib is not installed (apt-get install python3-matplotlib)")
    os.makedirs(a.out, exist_ok=True)

    spmvm, order = read(os.path.join(a.results, "spmvm.txt"), 4)
    mats = list(dict.fromkeys(k[0] for k in order))
    libs = list(dict.fromkeys(k[1] for k in order))
    modes = ["vector", "naive", "task"]
    if mats:
        fig, axes = plt.subplots(1, len(mats), figsize=(3.4 * len(mats), 3.6), squeeze=False)
        width = 0.8 / max(1, len(libs))
        for ax, m in zip(axes[0], mats):
            for j, lib in enumerate(libs):
                xs, ys, lo, hi = [], [], [], []
                for i, mode in enumerate(modes):
                    v = spmvm.get((m, lib, mode, "gflops"))
                    if not v:
                        continue
                    md, l, h = mlh(v)
                    xs.append(i + (j - (len(libs) - 1) / 2) * width)
                    ys.append(md)
                    lo.append(md - l)
                    hi.append(h - md)
                ax.bar(xs, ys, width, yerr=[lo, hi], label=lib, capsize=2)
            ax.set_xticks(range(len(modes)))
            ax.set_xticklabels(modes)
            ax.set_title(m, fontsize=9)
            ax.set_ylabel("Gflop/s")
        axes[0][0].legend(fontsize=7)
        fig.suptitle("spmvm, 2 ranks: Gflop/s per mode and library", fontsize=10)
        fig.tight_layout()
        fig.savefig(os.path.join(a.out, "apps_spmvm.png"), dpi=90)
        print("plot_apps: wrote", os.path.join(a.out, "apps_spmvm.png"))

    apps, order = read(os.path.join(a.results, "shmem_apps.txt"), 4)
    for app, unit in (("halo3d", "µs per iteration"), ("mandelbrot", "seconds")):
        lines = list(dict.fromkeys((k[1], k[2]) for k in order if k[0] == app))
        if not lines:
            continue
        fig, ax = plt.subplots(figsize=(5.2, 3.6))
        for lib, kind in lines:
            pts = sorted((int(k[3]), apps[k]) for k in order if k[:3] == (app, lib, kind))
            xs = [p[0] for p in pts]
            st = [mlh(p[1]) for p in pts]
            ax.errorbar(xs, [s[0] for s in st],
                        yerr=[[s[0] - s[1] for s in st], [s[2] - s[0] for s in st]],
                        marker="o", capsize=2, label=f"{lib} {kind}",
                        linestyle="-" if lib == "weft" else "--")
        if app == "halo3d":
            ax.set_yscale("log")  # MPI over oversubscribed threads is 10-100x the rest
        ax.set_xlabel("threads per process")
        ax.set_ylabel(unit)
        ax.set_xticks(sorted({int(k[3]) for k in order if k[0] == app}))
        ax.set_title(f"{app}, 2 processes: {unit} against threads", fontsize=10)
        ax.legend(fontsize=7)
        fig.tight_layout()
        path = os.path.join(a.out, f"apps_{app}.png")
        fig.savefig(path, dpi=90)
        print("plot_apps: wrote", path)


if __name__ == "__main__":
    main()
