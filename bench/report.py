#!/usr/bin/env python3
"""report.py: turn a bench/weft-bench results directory into report.md and plots.

    python3 bench/report.py DIR

Reads DIR/results.csv (impl,rep,bench,param,metric,value: every value of every
run), DIR/runs.csv (every run with its status and command) and DIR/machine.txt,
and writes DIR/report.md and one PNG per benchmark (matplotlib; without it the
report says so and has tables only). Every point measured is shown: a table row
per parameter with the median over the repetitions, the min-max range, and the
ratio of weft's median to each peer's. Nothing is dropped or picked: the
headline table's points are fixed in HEADLINE below, before any run."""

import csv
import os
import statistics
import sys
from collections import defaultdict

IMPLS = ["weft", "weft-native", "ompi", "mpich", "raw"]
LABEL = {
    "weft": "weft",
    "weft-native": "weft native API",
    "ompi": "Open MPI",
    "mpich": "MPICH",
    "raw": "raw floor",
}
PEERS = ["ompi", "mpich"]
STYLE = {
    "weft": dict(color="#d62728", marker="o"),
    "weft-native": dict(color="#ff9896", marker="^", linestyle="--"),
    "ompi": dict(color="#1f77b4", marker="s"),
    "mpich": dict(color="#2ca02c", marker="D"),
    "raw": dict(color="#7f7f7f", marker="x", linestyle=":"),
}

# metric -> (unit shown, True if higher is better)
METRICS = {
    "latency_us": ("µs", False),
    "oneway_us": ("µs", False),
    "bandwidth_MBps": ("MB/s", True),
    "bibw_MBps": ("MB/s", True),
    "rate_Mmsgs": ("M msg/s", True),
    "us_per_req": ("µs per request", False),
    "overlap_ratio": ("overlap ratio", True),
    "overlap_pct": ("overlap %", True),
    "pure_us": ("µs", False),
    "total_us": ("µs", False),
    "comm_us": ("µs", False),
    "us_per_msg": ("µs per message", False),
    "rate_Mhops": ("M hops/s", True),
    "us_per_hop": ("µs per hop", False),
    "us_per_completion": ("µs per completion", False),
}

# Sections of the report: title, what it measures, x label, plots
# (bench, metric, panel title), x scale, y scale.
SECTIONS = [
    ("Latency", "latency",
     "One-way latency: half the round trip of a blocking ping-pong "
     "(`mpi_pingpong`, Isend+Wait / Irecv+Wait), per message size. The raw floor "
     "(`raw_cacheline`) is a 64-byte cache line handed between the two cores, "
     "the bound under any shared-memory transport.",
     "message size (bytes)",
     [("latency", "latency_us", "one-way latency")], "log2", "log"),
    ("Bandwidth", "bandwidth",
     "Unidirectional bandwidth (a window of 16 non-blocking sends, then an "
     "ack, as osu_bw) and bidirectional bandwidth (both ranks send a window "
     "of 16 at once, bytes of both directions counted, as osu_bibw).",
     "message size (bytes)",
     [("bandwidth", "bandwidth_MBps", "bandwidth"), ("bibw", "bibw_MBps", "bidirectional bandwidth")],
     "log2", "log"),
    ("Message rate", "msgrate",
     "Small messages per second, one sender and one receiver (`mpi_msgrate`): "
     "windows of 64 non-blocking sends against 64 pre-posted receives, a "
     "zero-byte ack per window (as osu_mbw_mr). Multi-pair: 8-byte messages, "
     "1 pair (2 ranks) and 2 pairs (4 ranks on 2 cores, oversubscribed), the "
     "aggregate rate.",
     "message size (bytes)",
     [("msgrate", "rate_Mmsgs", "message rate, 1 pair"),
      ("multipair", "rate_Mmsgs", "aggregate rate, 8 B, by pairs", "sender/receiver pairs")],
     "log2", "linear"),
    ("Overlap of communication and computation", "overlap",
     "Seed 001's benchmark (`mpi_overlap`): an 80 MB non-blocking transfer "
     "with a compute phase (register arithmetic, no MPI call) between the "
     "non-blocking call and the wait, on the sender, on the receiver, or on "
     "both. overlap = (t_comm + t_compute - t_total) / min(t_comm, t_compute): "
     "1 when the shorter of communication and computation is completely hidden "
     "behind the longer, 0 when they run one after the other. t_comm is "
     "measured at every point, alternating with the runs with compute. The "
     "ratio is printed as measured (noise can push it outside [0, 1]; small "
     "compute times amplify the noise of t_comm); the plots clip it to "
     "[-0.5, 1.5].",
     "compute time (µs)",
     [("overlap_sender", "overlap_ratio", "compute on the sender"),
      ("overlap_receiver", "overlap_ratio", "compute on the receiver"),
      ("overlap_both", "overlap_ratio", "compute on both")], "log", "linear"),
    ("Non-blocking collectives overlapped with computation", "ncoll",
     "OSU's non-blocking collective measurement (`mpi_ncoll`, as osu_iallreduce "
     "and osu_ibcast): the collective alone (t_pure), then started, followed "
     "by t_pure of register arithmetic on every rank with no MPI call, then "
     "waited for (t_total); overlap = 100 - 100 (t_total - t_compute) / t_pure, "
     "at least 0. weft runs with WEFT_PROGRESS_THREAD=1. A library that moves "
     "the collective only inside MPI calls shows about 0; 100 needs a CPU for "
     "the progress thread beside every computing thread (`--cores 2`).",
     "message size (bytes)",
     [("iallreduce", "overlap_pct", "MPI_Iallreduce"),
      ("ibcast", "overlap_pct", "MPI_Ibcast")], "log2", "linear"),
    ("Tag matching with shuffled tags", "match",
     "Seed 000's matching benchmark (`mpi_match`, `weft_match`): N receives "
     "with distinct tags; expected: receives posted first, messages arrive in "
     "shuffled tag order; unexpected: all messages arrive first, receives "
     "are then posted in shuffled order. Time per request.",
     "N (distinct tags)",
     [("match_expected", "us_per_req", "expected (receives first)"),
      ("match_unexpected", "us_per_req", "unexpected (messages first)")], "log2", "log"),
    ("Multithreaded latency and message rate", "mt",
     "Seed 000's multithreaded benchmarks (`mpi_mt`, MPI_THREAD_MULTIPLE, every "
     "thread on its own tag). N to N: T threads per rank, thread t of rank 0 "
     "talks to thread t of rank 1. 1 to N: one thread of rank 0 talks to T "
     "threads of rank 1 in turn. Latency: 1-byte ping-pong, half a round trip "
     "(median over threads for N to N). Rate: windows of 64 8-byte messages "
     "and an ack, all threads' messages over the slowest thread's time. Each "
     "rank and its threads share one core (2 ranks on 2 cores), so from 2 "
     "threads on the threads of a rank take turns on their core: this measures "
     "how an implementation behaves when threads outnumber cores (how long a "
     "waiting thread holds the core), not thread scalability. Each phase is "
     "bounded in time, not in iterations.",
     "threads per rank",
     [("mt_lat_NtoN", "latency_us", "latency, N to N"),
      ("mt_lat_1toN", "latency_us", "latency, 1 to N"),
      ("mt_rate_NtoN", "rate_Mmsgs", "message rate, N to N"),
      ("mt_rate_1toN", "rate_Mmsgs", "message rate, 1 to N")], "log2", "log"),
    ("Collectives", "coll",
     "`mpi_coll`, 2 ranks: MPI_Allreduce (sum of doubles) and MPI_Bcast (root "
     "changing every call) back to back; the slowest rank's time per call.",
     "message size (bytes)",
     [("allreduce", "latency_us", "MPI_Allreduce"), ("bcast", "latency_us", "MPI_Bcast")],
     "log2", "log"),
    ("Collectives, 4 ranks on 2 cores", "coll4",
     "`mpi_coll` again with 4 ranks on the 2 cores (oversubscribed, as on a "
     "laptop or a shared node): every call needs ranks that are not running, "
     "so this measures how soon a waiting rank gives its core away.",
     "message size (bytes)",
     [("allreduce_np4", "latency_us", "MPI_Allreduce"), ("bcast_np4", "latency_us", "MPI_Bcast")],
     "log2", "log"),
    ("Collective MPI I/O", "io",
     "`mpi_io`, 2 ranks: each rank owns every other block of B bytes of one "
     "file (a resized filetype), writes 8 MiB through that view with one "
     "MPI_File_write_at_all and reads it back with MPI_File_read_at_all; "
     "both ranks' bytes over the slowest rank's time. The file is in $TMPDIR "
     "(/tmp), so this is the path into the page cache, not a disk.",
     "block size B (bytes)",
     [("io_write", "bandwidth_MBps", "collective write"),
      ("io_read", "bandwidth_MBps", "collective read")], "log2", "log"),
    ("A flood of unexpected sends", "flood",
     "`mpi_flood`: rank 0 posts N 8-byte MPI_Isends at once, all unexpected "
     "at rank 1, which then posts the N receives; time per message from a "
     "barrier to both ranks' last wait. Past the eager credits the sends go "
     "by rendezvous: a flat line means N outstanding sends cost N times one. "
     "With `--tcp`, the same over loopback TCP (weft's tcp driver, Open MPI's "
     "tcp btl).",
     "N (outstanding sends)",
     [("flood", "us_per_msg", "shared memory"),
      ("tcp_flood", "us_per_msg", "loopback TCP")], "log2", "log"),
    ("Task chains (seed 003)", "chain",
     "`mpi_chain`: a token hops between the 2 ranks, each arrival sending the "
     "next hop, in the pattern of an MPI parcelport (64 MPI_Irecv with "
     "MPI_ANY_TAG tested by MPI_Testany, an MPI_Isend per hop). Rate: 64 "
     "chains at once; latency: one chain, the one-way time per hop. "
     "bench/run_chain.sh runs weft's active messages beside it.",
     "message size (bytes)",
     [("chain", "rate_Mhops", "rate, 64 chains (M hops/s)"),
      ("chain_lat", "us_per_hop", "one-way time per hop, 1 chain")], "log2", "log"),
    ("Completions among N outstanding receives", "cq",
     "`mpi_cq`: N receives with distinct tags, N 8-byte messages sent to them "
     "in a shuffled order, completions found with MPI_Testsome over the N "
     "requests; time per completion (weft_cq pops a completion queue instead).",
     "N (outstanding receives)",
     [("testsome", "us_per_completion", "MPI_Testsome")], "log2", "log"),
    ("TCP over loopback", "tcp",
     "With `--tcp`: `mpi_pingpong` and `weft_pingpong` over weft's tcp driver "
     "(WEFT_DRIVERS=tcp) and Open MPI's tcp btl, against `raw_tcp`, a bare "
     "non-blocking socket (8 B latency and 4 MiB bandwidth only).",
     "message size (bytes)",
     [("tcp_latency", "latency_us", "one-way latency"),
      ("tcp_bandwidth", "bandwidth_MBps", "bandwidth")], "log2", "log"),
]

# The headline: fixed points, chosen before any run (label, bench, metric, param).
# The overlap points are the largest compute time of the sweep (64 ms, against
# a transfer of a few ms to tens of ms here), where the ratio is the fraction of
# the transfer hidden.
HEADLINE = [
    ("8 B latency (µs)", "latency", "latency_us", 8),
    ("4 MiB bandwidth (MB/s)", "bandwidth", "bandwidth_MBps", 4 << 20),
    ("4 MiB bidirectional bandwidth (MB/s)", "bibw", "bibw_MBps", 4 << 20),
    ("8 B message rate, window 64 (M msg/s)", "msgrate", "rate_Mmsgs", 8),
    ("8 B aggregate rate, 2 pairs (M msg/s)", "multipair", "rate_Mmsgs", 2),
    ("overlap, compute on receiver, 64 ms", "overlap_receiver", "overlap_ratio", 64000),
    ("overlap, compute on sender, 64 ms", "overlap_sender", "overlap_ratio", 64000),
    ("overlap, compute on both, 64 ms", "overlap_both", "overlap_ratio", 64000),
    ("MPI_Iallreduce 1 MiB, overlap (%)", "iallreduce", "overlap_pct", 1 << 20),
    ("MPI_Ibcast 1 MiB, overlap (%)", "ibcast", "overlap_pct", 1 << 20),
    ("matching, expected, N=4096 (µs/req)", "match_expected", "us_per_req", 4096),
    ("matching, unexpected, N=4096 (µs/req)", "match_unexpected", "us_per_req", 4096),
] + [
    (f"MT latency {kind}, {t} threads (µs)", f"mt_lat_{kind}", "latency_us", t)
    for kind in ("NtoN", "1toN") for t in (2, 4, 8)
] + [
    (f"MT rate {kind}, {t} threads (M msg/s)", f"mt_rate_{kind}", "rate_Mmsgs", t)
    for kind in ("NtoN", "1toN") for t in (2, 4, 8)
] + [
    ("8 B allreduce (µs)", "allreduce", "latency_us", 8),
    ("8 B bcast (µs)", "bcast", "latency_us", 8),
    ("8 B allreduce, 4 ranks on 2 cores (µs)", "allreduce_np4", "latency_us", 8),
    ("8 B bcast, 4 ranks on 2 cores (µs)", "bcast_np4", "latency_us", 8),
]


def num(s):
    try:
        return float(s)
    except ValueError:
        return None


def fmt(v):
    if v is None:
        return "n/a"
    a = abs(v)
    if a >= 1000:
        return f"{v:.0f}"
    if a >= 100:
        return f"{v:.1f}"
    if a >= 10:
        return f"{v:.2f}"
    return f"{v:.3f}"


def fmt_param(p):
    p = int(p) if float(p).is_integer() else p
    if isinstance(p, int) and p >= 1024 and p % 1024 == 0:
        if p % (1 << 20) == 0:
            return f"{p >> 20} Mi"
        return f"{p >> 10} Ki"
    return str(p)


def main():
    d = sys.argv[1]
    vals = defaultdict(list)  # (bench, metric, param, impl) -> [values]
    with open(os.path.join(d, "results.csv")) as f:
        for r in csv.DictReader(f):
            v, p = num(r["value"]), num(r["param"])
            if v is not None and p is not None:
                vals[(r["bench"], r["metric"], p, r["impl"])].append(v)
    with open(os.path.join(d, "runs.csv")) as f:
        runs = list(csv.DictReader(f))
    machine = []
    mpath = os.path.join(d, "machine.txt")
    if os.path.exists(mpath):
        machine = [l.rstrip("\n").split(": ", 1) for l in open(mpath) if ": " in l]
    info = dict(machine)

    def stats(bench, metric, param, impl):
        xs = vals.get((bench, metric, param, impl))
        if not xs:
            return None
        return statistics.median(xs), min(xs), max(xs), len(xs)

    def params(bench, metric):
        return sorted({k[2] for k in vals if k[0] == bench and k[1] == metric})

    def impls_of(bench, metric):
        have = {k[3] for k in vals if k[0] == bench and k[1] == metric}
        return [i for i in IMPLS if i in have]

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        plt = None

    out = []
    w = out.append
    w("# weft benchmark report\n")
    w("weft against Open MPI and MPICH on one machine, with the same benchmark source "
      "built three times (`bench/`), made by `bench/weft-bench`. Every run is in "
      "[results.csv](results.csv) (one row per implementation, repetition, benchmark, "
      "parameter, metric) and [runs.csv](runs.csv) (one row per run, with its status and the "
      "exact command that reproduces it).\n")
    w("## Machine\n")
    w("| | |\n|---|---|")
    for k, v in machine:
        w(f"| {k} | {v} |")
    w("")
    n_ok = sum(1 for r in runs if r["status"] == "ok")
    reps = sorted({r["rep"] for r in runs})
    w("## Method and noise\n")
    w(f"- {len(runs)} runs, {n_ok} finished cleanly; {len(reps)} repetition(s) of every "
      "(job, implementation). Inside a repetition the implementations alternate job by "
      "job (weft, weft's native API where the benchmark has one, Open MPI, MPICH), so a "
      "slow phase of the machine hits all of them alike rather than one.")
    w("- Each program reports, per point, the median of several runs inside one "
      "launch (iterations calibrated by time, after a warm-up); the tables give the "
      "median over the repetitions of those values, the min-max range over the "
      "repetitions, and the ratio of weft's median to the peer's median. Plots draw "
      "the median as a line and the min-max range as a band.")
    cpr = info.get("CPUs per rank", "1 (--pin)")
    cores = cpr.split()[0]
    if "--cores" in cpr:
        binding = (f"- Every rank is bound to a block of {cores} CPU(s) of its own (the "
                   f"programs' `--cores {cores}`; the launchers bind nothing)")
        if cores != "1":
            binding += (", so a rank's threads run in parallel, and weft's overlap runs "
                        "have a progress thread (`WEFT_PROGRESS_THREAD=1`) on the rank's "
                        "spare CPU")
        binding += ". "
    else:
        binding = ("- Every rank is pinned to its own core (Open MPI `--bind-to core`, MPICH "
                   "`-bind-to core`, weft by the program's `--pin`); with more ranks than "
                   "cores (multi-pair) ranks share cores. ")
    w(binding + "Open MPI runs with `--mca pml ob1 --mca btl "
      "vader,self` (shared memory); MPICH is Debian's build (its device is in the "
      "machine record). Nothing is tuned for any implementation.")
    w("- The machine is shared (other builds run beside the benchmarks): the min-max "
      "ranges show how much. No point is dropped: every point measured is in the "
      "tables below, and every run in results.csv. The headline points were fixed "
      "in `bench/report.py` before any run.")
    w("- For times (µs) lower is better; for bandwidth, rates and overlap, higher is "
      "better. A ratio column says weft/peer of medians (n/a where a median is not "
      "positive, as an overlap ratio can be); the last column of the headline says "
      "which implementation is best by the medians.\n")

    # ---- headline (only when the run measured some of its points)
    if any(k[0] == h[1] and k[1] == h[2] and k[2] == float(h[3]) for h in HEADLINE for k in vals):
        w("## Headline\n")
        w("| | weft | Open MPI | MPICH | weft/Open MPI | weft/MPICH | better (median) |")
        w("|---|---|---|---|---|---|---|")
    for name, bench, metric, param in HEADLINE:
        s = {i: stats(bench, metric, float(param), i) for i in ("weft", "ompi", "mpich")}
        if all(v is None for v in s.values()):
            continue
        cells = []
        for i in ("weft", "ompi", "mpich"):
            cells.append("n/a" if s[i] is None else f"{fmt(s[i][0])} ({fmt(s[i][1])}–{fmt(s[i][2])})")
        ratios = []
        for p in PEERS:
            if s["weft"] and s[p] and s[p][0] > 0 and s["weft"][0] > 0:
                ratios.append(f"{s['weft'][0] / s[p][0]:.2f}")
            else:
                ratios.append("n/a")
        higher = METRICS.get(metric, ("", False))[1]
        have = {i: s[i][0] for i in s if s[i] is not None}
        best = ""
        if len(have) > 1:
            pick = max(have, key=have.get) if higher else min(have, key=have.get)
            best = LABEL[pick]
        w(f"| {name} | " + " | ".join(cells + ratios) + f" | {best} |")
    if any(k[0] == h[1] and k[1] == h[2] and k[2] == float(h[3]) for h in HEADLINE for k in vals):
        w("\nCells: median (min–max) over the repetitions.\n")

    # ---- failures
    bad = [r for r in runs if r["status"] != "ok"]
    w("## Runs that failed or timed out\n")
    if not bad:
        w("None: every run finished and printed its results.\n")
    else:
        w(f"{len(bad)} run(s); their partial output (points printed before the failure) "
          "is kept in results.csv and the tables. Reproduce with the command shown (from "
          "the repository root, after `bench/weft-bench` built the programs).\n")
        w("| job | implementation | rep | status | exit | seconds | log | command |")
        w("|---|---|---|---|---|---|---|---|")
        for r in bad:
            w(f"| {r['job']} | {LABEL.get(r['impl'], r['impl'])} | {r['rep']} | {r['status']} | "
              f"{r['rc']} | {r['seconds']} | {r['log']} | `{r['command'].strip()}` |")
        w("")

    # ---- sections
    made_plots = 0
    for title, slug, text, xlabel, panels, xscale, yscale in SECTIONS:
        if not any(params(p[0], p[1]) for p in panels):
            continue
        w(f"## {title}\n")
        w(text + "\n")
        if plt is not None:
            n = len(panels)
            cols = 2 if n > 1 else 1
            rows = (n + cols - 1) // cols
            fig, axes = plt.subplots(rows, cols, figsize=(6.4 * cols, 4.2 * rows), squeeze=False)
            for ax, panel in zip(axes.flat, panels):
                bench, metric, ptitle = panel[:3]
                ps = params(bench, metric)
                for impl in impls_of(bench, metric):
                    xs, med, lo, hi = [], [], [], []
                    for p in ps:
                        st = stats(bench, metric, p, impl)
                        if st:
                            xs.append(p)
                            med.append(st[0])
                            lo.append(st[1])
                            hi.append(st[2])
                    if metric == "overlap_ratio":
                        clip = lambda v: min(1.5, max(-0.5, v))
                        med, lo, hi = [list(map(clip, a)) for a in (med, lo, hi)]
                    ax.plot(xs, med, label=LABEL[impl], **STYLE[impl])
                    ax.fill_between(xs, lo, hi, color=STYLE[impl]["color"], alpha=0.15)
                unit, higher = METRICS.get(metric, (metric, False))
                span = (max(ps) / min(ps)) if ps and min(ps) > 0 else 1
                if xscale == "log2" and span >= 4:
                    ax.set_xscale("log", base=2)
                elif xscale == "log" and span >= 4:
                    ax.set_xscale("log")
                if 0 < len(ps) <= 10:
                    ax.set_xticks(ps)
                    ax.set_xticklabels([fmt_param(p) for p in ps])
                    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
                if bench == "latency" and ("raw_cacheline", "oneway_us", 64.0, "raw") in vals:
                    floor = statistics.median(vals[("raw_cacheline", "oneway_us", 64.0, "raw")])
                    ax.axhline(floor, color=STYLE["raw"]["color"], linestyle=":",
                               label="raw floor (cache line)")
                if metric == "overlap_ratio":
                    ax.set_ylim(-0.55, 1.55)
                    ax.axhline(0, color="black", linewidth=0.5)
                    ax.axhline(1, color="black", linewidth=0.5, linestyle=":")
                elif yscale == "log":
                    ys = [v[0] for k, v in ((k, stats(*k)) for k in vals
                                            if k[0] == bench and k[1] == metric) if v]
                    if ys and min(ys) > 0 and max(ys) / min(ys) >= 10:
                        ax.set_yscale("log")
                ax.set_title(f"{ptitle} ({'higher' if higher else 'lower'} is better)")
                ax.set_xlabel(panel[3] if len(panel) > 3 else xlabel)
                ax.set_ylabel(unit)
                ax.grid(True, which="both", alpha=0.3)
                ax.legend()
            for ax in list(axes.flat)[n:]:
                ax.axis("off")
            fig.tight_layout()
            png = f"{slug}.png"
            fig.savefig(os.path.join(d, png), dpi=90)
            plt.close(fig)
            made_plots += 1
            w(f"![{title}]({png})\n")
        if slug == "latency":
            st = stats("raw_cacheline", "oneway_us", 64.0, "raw")
            if st:
                w(f"Raw floor (`raw_cacheline`, one-way, µs): {fmt(st[0])} "
                  f"({fmt(st[1])}–{fmt(st[2])}), {st[3]} repetition(s).\n")
            more = [(what, stats(b, "oneway_us", 64.0, "raw"))
                    for what, b in (("one line per direction", "raw_cacheline_pair"),
                                    ("a ring of 64 one-line slots per direction, as a "
                                     "queue of records needs", "raw_cacheline_ring"))]
            more = [(what, x) for what, x in more if x]
            if more:
                w("The same hand-over in the shape of a queue (`raw_cacheline --rings`, "
                  "one-way, µs): " + "; ".join(
                      f"{what} {fmt(x[0])} ({fmt(x[1])}–{fmt(x[2])})" for what, x in more)
                  + ". No software runs in these: they are what a queue of one-line "
                  "records costs on these two cores before any.\n")
        # weft_pingpong --floor: the floor timed in the same launch, run by run
        lat = {"latency": "latency", "tcp": "tcp_latency"}.get(slug)
        paired = [(p, stats(lat, "floor_ratio", p, "weft-native"),
                   stats(lat, "floor_us", p, "weft-native"),
                   stats(lat, "ring_floor_ratio", p, "weft-native"),
                   stats(lat, "ring_floor_us", p, "weft-native"))
                  for p in (params(lat, "floor_ratio") if lat else [])]
        paired = [x for x in paired if x[1] and x[2]]
        ring = any(x[3] and x[4] for x in paired)
        if paired:
            what = ("one cache line handed back and forth in a page they share"
                    if slug == "latency" else
                    "8 bytes ping-ponged over a plain loopback socket of their own")
            w(f"Native API against the floor timed in the same launch (`weft_pingpong "
              f"--floor`: after each latency run the two ranks time {what}; median over "
              "the repetitions of each launch's median latency/floor of its pairs, so a "
              "change of the machine's core-to-core time or clock between runs cancels "
              "out):\n")
            head = ["message size (bytes)", "latency / floor", "floor (µs)"]
            if ring:
                head += ["latency / ring floor", "ring floor (µs)"]
            w("| " + " | ".join(head) + " |")
            w("|" + "---|" * len(head))
            for p, q, f, rq, rf in paired:
                row = [fmt_param(p), f"{q[0]:.2f} ({q[1]:.2f}–{q[2]:.2f})",
                       f"{fmt(f[0])} ({fmt(f[1])}–{fmt(f[2])})"]
                if ring:
                    row += ["–", "–"] if not (rq and rf) else [
                        f"{rq[0]:.2f} ({rq[1]:.2f}–{rq[2]:.2f})",
                        f"{fmt(rf[0])} ({fmt(rf[1])}–{fmt(rf[2])})"]
                w("| " + " | ".join(row) + " |")
            if ring:
                w("\nThe ring floor is the same two ranks handing messages through a ring of "
                  "64 one-line slots per direction (`bench/cacheline.h`), timed after the "
                  "line floor in each pair: the part of the latency no software adds.")
            w("")
        for panel in panels:
            bench, metric, ptitle = panel[:3]
            ps = params(bench, metric)
            if not ps:
                continue
            imps = impls_of(bench, metric)
            unit, higher = METRICS.get(metric, (metric, False))
            w(f"**{ptitle}** (`{bench}`, {unit}, {'higher' if higher else 'lower'} is better; "
              "median (min–max) over repetitions)\n")
            head = [panel[3] if len(panel) > 3 else xlabel] + [LABEL[i] for i in imps]
            ratio_cols = [p for p in PEERS if p in imps and "weft" in imps]
            head += [f"weft/{LABEL[p]}" for p in ratio_cols]
            w("| " + " | ".join(head) + " |")
            w("|" + "---|" * len(head))
            for p in ps:
                row = [fmt_param(p)]
                for i in imps:
                    st = stats(bench, metric, p, i)
                    row.append("–" if st is None else f"{fmt(st[0])} ({fmt(st[1])}–{fmt(st[2])})")
                for peer in ratio_cols:
                    a, b = stats(bench, metric, p, "weft"), stats(bench, metric, p, peer)
                    row.append(f"{a[0] / b[0]:.2f}" if a and b and a[0] > 0 and b[0] > 0 else "n/a")
                w("| " + " | ".join(row) + " |")
            w("")
            if bench.startswith("overlap_"):
                # the transfer alone, measured at each point of this mode
                cps = params(bench, "comm_us")
                if cps:
                    w(f"t_comm measured alongside (µs, median over repetitions): " + "; ".join(
                        f"{LABEL[i]} " + ", ".join(
                            fmt(stats(bench, 'comm_us', p, i)[0]) for p in cps
                            if stats(bench, 'comm_us', p, i))
                        for i in impls_of(bench, "comm_us")) + "\n")
    if plt is None:
        w("_matplotlib is not installed (`apt-get install python3-matplotlib`): no plots._\n")
    w("## Reproduce\n")
    w("```sh\n" + info.get("command", "bench/weft-bench") + "\n```\n")
    w("`bench/README.md` says what each program measures; `logs/` (not committed for "
      "the sample) holds every run's output.")
    with open(os.path.join(d, "report.md"), "w") as f:
        f.write("\n".join(out) + "\n")
    print(f"report.py: {os.path.join(d, 'report.md')}, {made_plots} plot(s)")


if __name__ == "__main__":
    main()
