#!/usr/bin/python3
"""Throughput against peak memory per model, one colour per schedule, from `pipesim extrapolate --csv`:

    build/pipesim extrapolate --csv extrapolation.csv --markdown extrapolation.md
    plots/throughput_vs_memory.py extrapolation.csv -o throughput_vs_memory.png

Filled markers: pipesim's predictions, joined across m (labels give m). Hollow markers: the Zero Bubble paper's
measurements (1F1B-flush, ZB-2p). Stars: the PACI paper's method (measured 1F1B x (m+N-1)/m at 1F1B's memory).
The dashed line is the device memory (--capacity, default 80 GiB).
"""
import argparse
import csv
import math
from collections import defaultdict

from plotting import plt, save

PAPER_METHOD = "paci-paper-method"


def number(text):
    return float(text) if text not in ("", None) else None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv", help="CSV written by pipesim extrapolate --csv")
    parser.add_argument("-o", "--output", required=True, help="PNG file to write")
    parser.add_argument("--capacity", type=float, default=80.0, help="device memory in GiB (0: no line)")
    parser.add_argument("--title", default="Throughput against peak memory (predicted; measured hollow)")
    args = parser.parse_args()

    with open(args.csv, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise SystemExit(f"{args.csv}: no rows")
    models = list(dict.fromkeys(r["model"] for r in rows))
    schedules = list(dict.fromkeys(r["schedule"] for r in rows if r["schedule"] != PAPER_METHOD))
    colours = {s: plt.get_cmap("tab10")(i % 10) for i, s in enumerate(schedules)}

    columns = min(2, len(models))
    fig, axes = plt.subplots(math.ceil(len(models) / columns), columns, figsize=(6.5 * columns, 4.8 *
                                                                                  math.ceil(len(models) / columns)),
                             squeeze=False)
    for ax, model in zip(axes.flat, models):
        predicted = defaultdict(list)
        for r in rows:
            if r["model"] != model:
                continue
            memory, throughput = number(r["peak_memory_gib"]), number(r["throughput_samples_per_gpu_s"])
            if r["schedule"] == PAPER_METHOD:
                ax.scatter(memory, throughput, marker="*", s=120, color=colours.get("paci", "black"),
                           edgecolor="black", linewidth=0.5, zorder=4)
                continue
            if memory is not None and throughput is not None:
                predicted[r["schedule"]].append((memory, throughput, r["microbatches"]))
            measured_memory = number(r["measured_memory_gib"])
            measured_throughput = number(r["measured_throughput_samples_per_gpu_s"])
            if measured_memory is not None and measured_throughput is not None:
                ax.scatter(measured_memory, measured_throughput, facecolors="none", edgecolors=colours[r["schedule"]],
                           s=60, linewidth=1.5, zorder=3)
        for schedule, points in predicted.items():
            points.sort(key=lambda p: int(p[2]))
            ax.plot([p[0] for p in points], [p[1] for p in points], "-o", color=colours[schedule], markersize=4,
                    linewidth=0.8, label=schedule)
            last = points[-1]
            ax.annotate(f"m={last[2]}", (last[0], last[1]), fontsize=6, xytext=(3, 2), textcoords="offset points",
                        color=colours[schedule])
        if args.capacity > 0:
            ax.axvline(args.capacity, color="grey", linestyle="--", linewidth=0.8)
        stages = next(r["stages"] for r in rows if r["model"] == model)
        ax.set_title(f"{model} ({stages} stages)", fontsize=10)
        ax.set_xlabel("peak memory per GPU (GiB)")
        ax.set_ylabel("samples / GPU / s")
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(models):]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    handles.append(plt.Line2D([], [], marker="o", linestyle="", markerfacecolor="none", markeredgecolor="black"))
    labels.append("measured (Zero Bubble paper)")
    handles.append(plt.Line2D([], [], marker="*", linestyle="", color="black", markersize=10))
    labels.append("PACI paper's method")
    fig.legend(handles, labels, loc="lower center", ncol=5, fontsize=8, frameon=False)
    save(fig, args.output, args.title, top=0.95)
    fig.subplots_adjust(bottom=0.12)
    fig.savefig(args.output, dpi=150)


if __name__ == "__main__":
    main()
