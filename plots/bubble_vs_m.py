#!/usr/bin/python3
"""Simulated bubble fraction against the number of microbatches m, one line per schedule and one panel per N
(rows of three), with the 1F1B closed form (N-1)/(m+N-1) overlaid. Input: a CSV from pipesim sweep, e.g.

    pipesim sweep uniform.yaml --stages 4,8 --microbatches 4:64:x2 --schedules gpipe,1f1b-flush,zb-h1 --out s.csv
    plots/bubble_vs_m.py s.csv -o bubble_vs_m.png
"""
import argparse
import csv
from collections import OrderedDict

from plotting import panel_grid, save

MARKERS = "osD^v<>ph*"


def read_rows(path, metric):
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if not r.get("error")]
    if rows and metric not in rows[0]:
        raise SystemExit(f"{path}: no column '{metric}'")
    return rows


def build_figure(rows, metric):
    """One panel per N (wrapped into rows of three), one line per schedule and the 1F1B closed form."""
    stages = sorted({int(r["devices"]) for r in rows})
    fig, panels = panel_grid(len(stages), "microbatches per batch m",
                             "bubble fraction" if metric == "bubble_fraction" else "bubble rate (ZB convention)",
                             sharey=True)
    schedules = list(OrderedDict.fromkeys(r["label"] for r in rows))
    for ax, n in zip(panels, stages):
        for i, schedule in enumerate(schedules):
            points = sorted((int(r["microbatches"]), float(r[metric])) for r in rows
                            if r["label"] == schedule and int(r["devices"]) == n)
            if points:
                # Hollow markers shrinking with the index keep schedules with equal bubbles (gpipe and 1F1B)
                # visible on top of each other.
                ax.plot(*zip(*points), marker=MARKERS[i % len(MARKERS)], markersize=max(9 - 1.5 * i, 3),
                        markerfacecolor="none", label=schedule)
        ms = sorted({int(r["microbatches"]) for r in rows if int(r["devices"]) == n})
        dense = [ms[0] + (ms[-1] - ms[0]) * k / 200 for k in range(201)]
        ax.plot(dense, [(n - 1) / (m + n - 1) for m in dense], "k--", linewidth=1, label="(N-1)/(m+N-1)")
        ax.set_xscale("log", base=2)
        ax.set_xticks(ms)
        ax.set_xticklabels([str(m) for m in ms])
        ax.set_title(f"N = {n}", fontsize=10)
        ax.grid(linestyle=":", linewidth=0.5)
    panels[-1].legend(fontsize=8)
    return fig


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sweep", help="CSV written by pipesim sweep")
    parser.add_argument("-o", "--output", required=True, help="PNG file to write")
    parser.add_argument("--metric", default="bubble_fraction", choices=["bubble_fraction", "bubble_rate_zb"],
                        help="steady-state bubble (default) or the Zero Bubble paper's one-batch rate")
    parser.add_argument("--title", default="", help="figure title")
    args = parser.parse_args()

    rows = read_rows(args.sweep, args.metric)
    if not rows:
        raise SystemExit(f"{args.sweep}: no successful runs")
    save(build_figure(rows, args.metric), args.output, args.title)


if __name__ == "__main__":
    main()
