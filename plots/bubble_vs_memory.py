#!/usr/bin/python3
"""Zero Bubble's bubble against its activation-memory limit, from pipesim sweeps over the zb-1p/zb-2p
`memory_limit` parameter (in units of N * M_B: 1 is zb-1p's default, 2 is zb-2p's). Rows without a memory_limit
(other schedules, from a second sweep) are drawn as horizontal reference lines. Right panel: the measured peak
activations in the same unit, to show that each run stays within its limit (the dotted diagonal).

    pipesim sweep s.yaml --schedules zb-1p --param memory_limit=1:2.5:+0.125 --out zb.csv
    pipesim sweep s.yaml --schedules 1f1b-flush,zb-h1,zb-h2 --out ref.csv
    plots/bubble_vs_memory.py zb.csv ref.csv -o bubble_vs_memory.png
"""
import argparse
import csv
from collections import OrderedDict

from plotting import plt, save


def peak_in_limit_units(row):
    """The largest device's peak activation memory in units of N * M_B (the unit of memory_limit)."""
    return float(row["peak_activation_microbatches"]) / int(row["devices"])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sweeps", nargs="+", help="CSV files written by pipesim sweep")
    parser.add_argument("-o", "--output", required=True, help="PNG file to write")
    parser.add_argument("--metric", default="bubble_rate_zb", choices=["bubble_fraction", "bubble_rate_zb"],
                        help="the Zero Bubble paper's one-batch rate (default) or the steady-state bubble")
    parser.add_argument("--title", default="", help="figure title")
    args = parser.parse_args()

    rows = []
    for path in args.sweeps:
        with open(path, newline="") as f:
            rows += [r for r in csv.DictReader(f) if not r.get("error")]
    curves = OrderedDict()
    references = OrderedDict()
    for r in rows:
        if r.get("memory_limit"):
            curves.setdefault((r["schedule_name"], r["devices"], r["microbatches"]), []).append(r)
        else:
            references[r["label"]] = r
    if not curves:
        raise SystemExit("no rows with a memory_limit column value; sweep with --param memory_limit=...")

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for (name, n, m), points in curves.items():
        points.sort(key=lambda r: float(r["memory_limit"]))
        limits = [float(r["memory_limit"]) for r in points]
        label = f"{name} (N={n}, m={m})" if len(curves) > 1 else name
        left.plot(limits, [100 * float(r[args.metric]) for r in points], marker="o", markersize=3, label=label)
        right.plot(limits, [peak_in_limit_units(r) for r in points], marker="o", markersize=3, label=label)
    all_limits = sorted(float(r["memory_limit"]) for points in curves.values() for r in points)
    right.plot([all_limits[0], all_limits[-1]], [all_limits[0], all_limits[-1]], "k:", linewidth=1, label="limit")
    for i, (schedule, r) in enumerate(references.items()):
        left.axhline(100 * float(r[args.metric]), color=f"C{i + 2}", linestyle="--", linewidth=1, label=schedule)
        right.axhline(peak_in_limit_units(r), color=f"C{i + 2}", linestyle="--", linewidth=1, label=schedule)
    for limit, text in ((1, "zb-1p"), (2, "zb-2p")):
        left.axvline(limit, color="gray", linestyle=":", linewidth=1)
        left.text(limit, left.get_ylim()[1], f" {text}", va="top", fontsize=8, color="gray")
    left.set_xlabel("memory limit (x N * M_B per device)")
    left.set_ylabel("bubble rate (%)" if args.metric == "bubble_rate_zb" else "bubble fraction (%)")
    left.grid(linestyle=":", linewidth=0.5)
    left.legend(fontsize=8)
    right.set_xlabel("memory limit (x N * M_B per device)")
    right.set_ylabel("measured peak activations (x N * M_B)")
    right.legend(fontsize=8)
    right.grid(linestyle=":", linewidth=0.5)
    save(fig, args.output, args.title)


if __name__ == "__main__":
    main()
