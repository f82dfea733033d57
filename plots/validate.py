#!/usr/bin/python3
"""Predicted against measured throughput per schedule, from `pipesim validate --json FILE`: one point per schedule
and prediction (fitted costs drawn from the run's op times, the same fit with each op's mean, the CPU profile's cost
model); the diagonal is a perfect prediction.

    pipesim validate scenarios/executor/validate.yaml --calibrate --json validation.json
    plots/validate.py validation.json validate.png
"""
import argparse
import json

from plotting import plt


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("validation", help="JSON written by pipesim validate --json")
    parser.add_argument("output", nargs="?", default="validate.png", help="PNG file to write (default validate.png)")
    args = parser.parse_args()
    with open(args.validation) as f:
        report = json.load(f)
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
    fig.savefig(args.output, dpi=120)
    print(args.output)


if __name__ == "__main__":
    main()
