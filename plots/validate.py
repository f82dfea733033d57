#!/usr/bin/python3
"""Predicted against measured throughput per schedule, from `pipesim validate --json FILE`.

Usage: /usr/bin/python3 plots/validate.py VALIDATION.json [OUT.png]
One point per schedule and prediction (fitted costs drawn from the run's op times, the same fit with each
op's mean, the CPU profile's cost model); the diagonal is a perfect prediction.
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        report = json.load(f)
    out = sys.argv[2] if len(sys.argv) > 2 else "validate.png"
    fig, ax = plt.subplots(figsize=(6, 6))
    everything = []
    predictions = (
        ("fitted", "fitted", "fitted costs", "o"),
        ("fitted_means", "fitted-means", "fitted means", "x"),
        ("cost_model", "cost-model", "CPU-profile cost model", "s"),
    )
    for key, mape_key, label, marker in predictions:
        if mape_key not in report["mape_percent"]:
            continue
        mape = report["mape_percent"][mape_key]["throughput"]
        xs = [row["measured"]["throughput_samples_per_s"] for row in report["schedules"]]
        ys = [row[key]["throughput_samples_per_s"] for row in report["schedules"]]
        everything += xs + ys
        ax.scatter(xs, ys, marker=marker, label=f"{label} (MAPE {mape:.1f} %)")
        if key == "fitted":
            for row, x, y in zip(report["schedules"], xs, ys):
                ax.annotate(row["schedule"], (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
    lo, hi = min(everything) * 0.9, max(everything) * 1.1
    ax.plot([lo, hi], [lo, hi], color="grey", linewidth=1, label="predicted = measured")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("measured throughput (samples/s)")
    ax.set_ylabel("predicted throughput (samples/s)")
    ax.set_title(f"pipesim validate: {report['scenario']}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(out)


if __name__ == "__main__":
    main()
