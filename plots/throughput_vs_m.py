#!/usr/bin/python3
"""Throughput of 1F1B-flush against the number of microbatches m next to PACI's (which has no flush), one panel per
N (rows of three), with PACI's throughput times the ideal ratio m/(m+N-1) dotted on top: where the flush's points lie
on that line, the flush loses to PACI exactly its bubble of N-1 microbatches. Input: a CSV from pipesim sweep, e.g.

    pipesim sweep scenarios/paci/example.yaml -N 4,8 -m 1:64:x2 --schedules 1f1b-flush,paci \\
        --set pipeline.batches=64 -o throughput.csv
    plots/throughput_vs_m.py throughput.csv -o throughput_vs_m.png

Asynchronous schedules run as a stream of batches x m microbatches; give enough batches that the stream is long
against N (the metrics window starts after the pipeline has filled).
"""
import argparse
import csv

from plotting import panel_grid, save


def build_figure(rows, flush_name, paci_name):
    """One panel per N: the flush's and PACI's throughput against m, and PACI's x m/(m+N-1)."""
    def series(n, name):
        return dict(sorted((int(r["microbatches"]), float(r["throughput_samples_per_s"])) for r in rows
                           if int(r["devices"]) == n and r["schedule_name"] == name))

    stages = sorted({int(r["devices"]) for r in rows})
    fig, panels = panel_grid(len(stages), "microbatches per batch m", "throughput (samples/s)")
    for ax, n in zip(panels, stages):
        flush = series(n, flush_name)
        paci = series(n, paci_name)
        if flush:
            ax.plot(list(flush), list(flush.values()), "o-", label=flush_name)
        if paci:
            ax.plot(list(paci), list(paci.values()), "s--", markerfacecolor="none", label=paci_name)
            ax.plot(list(paci), [t * m / (m + n - 1) for m, t in paci.items()], "k:", linewidth=1, zorder=3,
                    label=f"{paci_name} x m/(m+N-1)")
        ms = sorted(set(flush) | set(paci))
        ax.set_xscale("log", base=2)
        ax.set_xticks(ms)
        ax.set_xticklabels([str(m) for m in ms])
        ax.set_title(f"N = {n}", fontsize=10)
        ax.grid(linestyle=":", linewidth=0.5)
        ax.legend(fontsize=7)
    return fig


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
    save(build_figure(rows, args.flush, args.paci), args.output, args.title)


if __name__ == "__main__":
    main()
