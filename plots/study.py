#!/usr/bin/python3
"""Curves of a learning study (pipesim train): validation loss against samples and against the simulator's
predicted time on the study's target setting (one panel per global batch, the mean over seeds per group), and the
speed-up of each group over the fastest synchronous schedule against the target loss. Input: the CSV that
pipesim train writes, e.g.

    pipesim train studies/one-step-delay.yaml --out results
    plots/study.py results/one-step-delay.csv -o results/one-step-delay
    (writes results/one-step-delay-samples.png, -time.png and -speedup.png)
"""
import argparse
import csv
import math
from collections import OrderedDict, defaultdict

from plotting import plt, save

SYNCHRONOUS = ("gpipe", "1f1b-flush", "interleaved-1f1b", "zb-h1", "zb-h2", "zb-1p", "zb-2p")


def read_groups(path):
    """{(B, schedule, optimizer, correction): {seed: [(samples, val_loss, predicted_s)]}} in file order."""
    groups = OrderedDict()
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            key = (int(r["global_batch"]), r["schedule"], r["optimizer"], r["correction"])
            groups.setdefault(key, defaultdict(list))[r["seed"]].append(
                (int(r["samples"]), float(r["val_loss"]), float(r["predicted_s"])))
    return groups


def mean_curve(seeds):
    curves = list(seeds.values())
    n = min(len(c) for c in curves)
    return [tuple(sum(c[i][k] for c in curves) / len(curves) for k in range(3)) for i in range(n)]


def label(key):
    _, schedule, optimizer, correction = key
    text = f"{schedule} {optimizer}"
    return text if correction == "none" else f"{text} +{correction}"


def time_to(curve, target):
    """Predicted time at which the curve first reaches the target loss, linear between evaluation points (as
    pipesim train's table)."""
    for i, (_, loss, t) in enumerate(curve):
        if loss <= target:
            if i == 0:
                return t
            _, previous_loss, previous_t = curve[i - 1]
            return previous_t + (previous_loss - target) / (previous_loss - loss) * (t - previous_t)
    return math.nan


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("curves", help="CSV written by pipesim train")
    parser.add_argument("-o", "--output", required=True, help="prefix of the PNG files to write")
    args = parser.parse_args()
    groups = read_groups(args.curves)
    batches = sorted({k[0] for k in groups})
    curves = {k: mean_curve(v) for k, v in groups.items()}
    for axis, suffix, xlabel in ((0, "samples", "samples"), (2, "time", "predicted time on the target setting (s)")):
        fig, axes = plt.subplots(1, len(batches), figsize=(6.5 * len(batches), 4.5), squeeze=False)
        for ax, b in zip(axes[0], batches):
            for k, c in curves.items():
                if k[0] != b:
                    continue
                style = "-" if k[1].split(":")[0].split(" ")[0] in SYNCHRONOUS else "--"
                ax.plot([p[axis] for p in c], [p[1] for p in c], style, label=label(k), linewidth=1.2)
            ax.set_xlabel(xlabel)
            ax.set_ylabel("validation loss (mean over seeds)")
            ax.set_yscale("log")
            ax.set_title(f"global batch {b}")
            ax.legend(fontsize=6)
        save(fig, f"{args.output}-{suffix}.png")
    # Speed-up over the fastest synchronous group at the same batch and optimizer, for a range of targets.
    fig, axes = plt.subplots(1, len(batches), figsize=(6.5 * len(batches), 4.5), squeeze=False)
    for ax, b in zip(axes[0], batches):
        losses = [p[1] for k, c in curves.items() if k[0] == b for p in c]
        low, high = min(losses), sorted(losses)[len(losses) // 2]
        targets = [high * (low / high) ** (i / 19) for i in range(20)]
        for k, c in curves.items():
            if k[0] != b:
                continue
            speedups = []
            for t in targets:
                flush = [time_to(fc, t) for fk, fc in curves.items()
                         if fk[0] == b and fk[2] == k[2] and fk[1].split(":")[0].split(" ")[0] in SYNCHRONOUS]
                flush = [x for x in flush if not math.isnan(x)]
                speedups.append(min(flush) / time_to(c, t) if flush else math.nan)
            ax.plot(targets, speedups, marker=".", label=label(k), linewidth=1)
        ax.axhline(1.0, color="grey", linewidth=0.8)
        ax.set_xscale("log")
        ax.invert_xaxis()
        ax.set_xlabel("target validation loss")
        ax.set_ylabel("speed-up over the fastest flush (predicted time)")
        ax.set_title(f"global batch {b}")
        ax.legend(fontsize=6)
    save(fig, f"{args.output}-speedup.png")


if __name__ == "__main__":
    main()
