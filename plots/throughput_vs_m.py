#!/usr/bin/python3
"""Throughput of 1F1B-flush against the number of microbatches m next to PACI's (which has no flush), and their
ratio with the ideal m/(m+N-1) overlaid. One colour per N. Input: a CSV from pipesim sweep, e.g.

    pipesim sweep scenarios/paci/example.yaml -N 4,8 -m 1:64:x2 --schedules 1f1b-flush,paci \\
        --set pipeline.batches=64 -o throughput.csv
    plots/throughput_vs_m.py throughput.csv -o throughput_vs_m.png

Asynchronous schedules run as a stream of batches x m microbatches; give enough batches that the stream is long
against N (the metrics window starts after the pipeline has filled).
"""
import argparse
import csv

from plotting import plt, save


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sweep", help="CSV written by pipesim sweep")
    parser.add_argument("-o", "--output", required=True, help="PNG file to write")
    parser.add_argument("--flush", default="1f1b-flush", help="the synchronous schedule (default 1f1b-flush)")
    parser.add_argument("--paci", default="paci", help="the asynchronous schedule's name (default paci)")
    parser.add_argument("--title", default="", help="figure title")
    args = parser.parse_args()

    with open(args.sweep, newline="") as f:
        rows = [r for r in csv.DictReader(f) if not r.get("error")]
    if not rows:
        raise SystemExit(f"{args.sweep}: no successful runs")

    def series(n, match):
        return dict(sorted((int(r["microbatches"]), float(r["throughput_samples_per_s"])) for r in rows
                           if int(r["stages"]) == n and match(r["schedule_name"])))

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.3))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, n in enumerate(sorted({int(r["stages"]) for r in rows})):
        color = colors[k % len(colors)]
        flush = series(n, lambda s: s == args.flush)
        paci = series(n, lambda s: s == args.paci)
        if flush:
            left.plot(list(flush), list(flush.values()), "o-", color=color, label=f"N={n} {args.flush}")
        if paci:
            left.plot(list(paci), list(paci.values()), "s--", color=color, markerfacecolor="none",
                      label=f"N={n} {args.paci}")
        ms = sorted(set(flush) & set(paci))
        if ms:
            right.plot(ms, [flush[m] / paci[m] for m in ms], "o", color=color, label=f"N={n} simulated")
            dense = [ms[0] * (ms[-1] / ms[0]) ** (t / 200) for t in range(201)]
            right.plot(dense, [m / (m + n - 1) for m in dense], "-", color=color, linewidth=1,
                       label=f"m/(m+{n - 1})")
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("microbatches per batch m")
        ax.grid(linestyle=":", linewidth=0.5)
        ax.legend(fontsize=7)
    left.set_ylabel("throughput (samples/s)")
    right.set_ylabel(f"throughput {args.flush} / {args.paci}")
    right.set_ylim(0, 1.05)
    save(fig, args.output, args.title)


if __name__ == "__main__":
    main()
