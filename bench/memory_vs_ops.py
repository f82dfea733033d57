#!/usr/bin/env python3
"""Peak RSS of `pipesim run` against simulated ops, with and without a trace.

Without a trace (no --trace or --memory-timeline) a run streams its analyses and the engine keeps state only
for the microbatches in flight, so RSS should stay flat as m grows, except for GPipe, which holds every
microbatch of a batch in flight by design, and the one-pass stream of static schedules, which holds up to
2^17 ops of a batch (about 7.5 MB) before it leaves larger batches to the event loop. With
--memory-timeline the run keeps its trace and writes every device's memory timeline into its JSON, for
comparison (most of that row's time and memory is the JSON document).

Usage: bench/memory_vs_ops.py [--pipesim build/pipesim] [--stages 32] [--microbatches 256,1024,4096,16384]
                              [--schedules 1f1b-flush,zb-h1,pipedream,paci,gpipe] [--with-trace]
Prints one row per run: schedule, N, m, simulated ops, peak RSS (MiB), RSS above the smallest run per op
(bytes/op), wall seconds and the marginal time per op against the previous row (ns/op).
"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run_once(pipesim, schedule, stages, microbatches, with_trace):
    """Simulated ops, the child's own peak RSS (KiB on Linux, from wait4) and its wall seconds."""
    with tempfile.TemporaryDirectory() as scratch:
        # The row comes back as CSV: this process stays small, so the children's peak RSS (inherited at
        # fork on Linux) is their own.
        csv_path = os.path.join(scratch, "result.csv")
        command = [pipesim, "run", os.path.join(HERE, "sweep_scenario.yaml"), "--schedules", schedule,
                   "--set", f"pipeline.stages={stages}", "--set", f"pipeline.microbatches={microbatches}",
                   "--set", "pipeline.batches=1", "--csv", csv_path, "--format", "csv"]
        if with_trace:
            command += ["--memory-timeline", "--json", os.path.join(scratch, "result.json")]
        start = time.monotonic()
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.monotonic() - start
        if status != 0:
            sys.exit(f"{' '.join(command)} failed: {child.stderr.read().decode().strip()}")
        with open(csv_path, newline="") as f:
            ops = int(next(csv.DictReader(f))["simulated_ops"])
    return ops, usage.ru_maxrss, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipesim", default=os.path.join(HERE, "..", "build", "pipesim"))
    parser.add_argument("--stages", type=int, default=32)
    parser.add_argument("--microbatches", default="256,1024,4096,16384")
    parser.add_argument("--schedules", default="1f1b-flush,zb-h1,pipedream,paci,gpipe")
    parser.add_argument("--with-trace", action="store_true", help="also run keeping the trace (--memory-timeline)")
    args = parser.parse_args()
    sizes = [int(m) for m in args.microbatches.split(",")]
    modes = [False, True] if args.with_trace else [False]
    print(f"{'schedule':<12} {'trace':>5} {'N':>4} {'m':>6} {'ops':>10} {'RSS MiB':>8} {'B/op':>6} {'s':>6} "
          f"{'ns/op':>6}")
    for schedule in args.schedules.split(","):
        for with_trace in modes:
            base = None
            previous = None
            for m in sizes:
                ops, rss, seconds = run_once(args.pipesim, schedule, args.stages, m, with_trace)
                if base is None:
                    base = (ops, rss)
                per_op = (rss - base[1]) * 1024 / (ops - base[0]) if ops > base[0] else 0.0
                # Marginal time per op against the previous size: start-up and parsing cancel out.
                ns_per_op = "-"
                if previous is not None and ops > previous[0]:
                    ns_per_op = f"{(seconds - previous[1]) * 1e9 / (ops - previous[0]):.0f}"
                previous = (ops, seconds)
                print(f"{schedule:<12} {'yes' if with_trace else 'no':>5} {args.stages:>4} {m:>6} {ops:>10} "
                      f"{rss / 1024:>8.1f} {per_op:>6.1f} {seconds:>6.2f} {ns_per_op:>6}", flush=True)


if __name__ == "__main__":
    main()
