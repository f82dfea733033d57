#!/usr/bin/python3
"""Curves of a learning study (pipesim train): validation loss against samples and against the simulator's
predicted time on the study's target setting (one panel per global batch, the mean over seeds per group with a band
of one standard deviation over seeds), the speed-up of each group over the fastest synchronous schedule against the
target loss, and, when pipesim train wrote NAME-gaps.csv beside the curves, the paired per-seed gap to the flush
against the flush's optimizer steps (log scale; band: the seeds' range; grey: the noise floor between flushes that
compute the same thing, mean ± 2 sd). With a learning-rate sweep, a swept schedule is drawn at the rate the other
schedules trained at. Input: the CSV that pipesim train writes, e.g.

    pipesim train studies/one-step-delay.yaml --out results
    plots/study.py results/one-step-delay.csv -o results/one-step-delay
    (writes results/one-step-delay-samples.png, -time.png, -speedup.png and, with gaps, -gaps.png and
    -gap-vs-delay.png: the final gap against the schedules' largest drift and staleness)
"""
import argparse
import csv
import math
import os
import re
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


def sd_curve(seeds):
    """Sample standard deviation of the validation loss over seeds per point (0 for one seed)."""
    curves = list(seeds.values())
    n = min(len(c) for c in curves)
    if len(curves) < 2:
        return [0.0] * n
    out = []
    for i in range(n):
        values = [c[i][1] for c in curves]
        mean = sum(values) / len(values)
        out.append(math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1)))
    return out


def without_other_rates(groups):
    """Drops a swept schedule's groups at rates no unswept group of the same batch and optimizer trained at."""
    def rate(optimizer):
        return optimizer.rsplit(" lr=", 1) if " lr=" in optimizer else (optimizer, None)
    used = defaultdict(set)  # (B, family) -> rates of the groups that did not sweep (those not at every rate)
    counts = defaultdict(lambda: defaultdict(int))
    for b, schedule, optimizer, _ in groups:
        family, r = rate(optimizer)
        if r is not None:
            counts[(b, family, schedule)][r] += 1
    rates_by_family = defaultdict(set)
    for (b, family, schedule), rates in counts.items():
        rates_by_family[(b, family)] |= set(rates)
    for (b, family, schedule), rates in counts.items():
        if len(rates) < len(rates_by_family[(b, family)]):
            used[(b, family)] |= set(rates)
    kept = OrderedDict()
    for key, value in groups.items():
        family, r = rate(key[2])
        if r is None or not used[(key[0], family)] or r in used[(key[0], family)]:
            kept[key] = value
    return kept


def read_gaps(path):
    """{(B, schedule, optimizer, correction, paired_with, noise_floor, delta_max, tau_max): {seed: [(steps, gap)]}}."""
    gaps = OrderedDict()
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            key = (int(r["global_batch"]), r["schedule"], r["optimizer"], r["correction"], r["paired_with"],
                   r["noise_floor"] == "1", int(r["delta_max"]), int(r["tau_max"]))
            gaps.setdefault(key, defaultdict(list))[r["seed"]].append((int(r["reference_steps"]), float(r["gap"])))
    return gaps


def plot_gaps(path, output):
    gaps = read_gaps(path)
    batches = sorted({k[0] for k in gaps})
    fig, axes = plt.subplots(1, len(batches), figsize=(6.5 * len(batches), 4.5), squeeze=False)
    for ax, b in zip(axes[0], batches):
        # The noise floor: every seed of every flush pair, mean ± 2 sd per point.
        floor = [c for k, seeds in gaps.items() if k[0] == b and k[5] for c in seeds.values()]
        if floor:
            n = min(len(c) for c in floor)
            steps = [floor[0][i][0] for i in range(n)]
            values = [[c[i][1] for c in floor] for i in range(n)]
            means = [sum(v) / len(v) for v in values]
            sds = [math.sqrt(sum((x - m) ** 2 for x in v) / max(1, len(v) - 1)) for v, m in zip(values, means)]
            keep = [i for i in range(n) if steps[i] > 0]
            ax.fill_between([steps[i] for i in keep], [means[i] - 2 * sds[i] for i in keep],
                            [means[i] + 2 * sds[i] for i in keep], color="grey", alpha=0.3,
                            label="noise floor (flush vs flush, mean ± 2 sd)")
        for k, seeds in gaps.items():
            if k[0] != b or k[5]:
                continue
            curves = list(seeds.values())
            n = min(len(c) for c in curves)
            keep = [i for i in range(n) if curves[0][i][0] > 0]
            steps = [curves[0][i][0] for i in keep]
            mean = [sum(c[i][1] for c in curves) / len(curves) for i in keep]
            text = f"{k[1]} {k[2]}" + ("" if k[3] == "none" else f" +{k[3]}") + f" − {k[4]}"
            (line,) = ax.plot(steps, mean, label=text, linewidth=1.2)
            ax.fill_between(steps, [min(c[i][1] for c in curves) for i in keep],
                            [max(c[i][1] for c in curves) for i in keep], color=line.get_color(), alpha=0.15)
        ax.axhline(0.0, color="black", linewidth=0.6)
        ax.set_xscale("log")
        ax.set_xlabel("optimizer steps of the flush it is paired with")
        ax.set_ylabel("validation loss gap to the paired flush (nats)")
        ax.set_title(f"global batch {b}: paired per-seed gap (band: seeds' range)")
        ax.legend(fontsize=6)
    save(fig, f"{output}-gaps.png")
    # The final paired gap (mean ± sd over seeds) against the schedule's largest drift and staleness.
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.5), squeeze=False)
    for ax, column, name in ((axes[0][0], 6, "largest weight-version drift Δ_max"),
                             (axes[0][1], 7, "largest gradient staleness τ_max")):
        for k, seeds in gaps.items():
            finals = [c[-1][1] for c in seeds.values()]
            mean = sum(finals) / len(finals)
            sd = math.sqrt(sum((x - mean) ** 2 for x in finals) / (len(finals) - 1)) if len(finals) > 1 else 0
            text = f"B={k[0]} {k[1]} {k[2]}" + ("" if k[3] == "none" else f" +{k[3]}")
            ax.errorbar([k[column]], [mean], yerr=[sd], fmt="o" if not k[5] else "s", capsize=3,
                        label=text + (" (noise floor)" if k[5] else ""))
        ax.axhline(0.0, color="black", linewidth=0.6)
        ax.set_xlabel(name + " (the simulator's)")
        ax.set_ylabel("final validation loss gap to the paired flush (nats)")
        ax.legend(fontsize=5)
    save(fig, f"{output}-gap-vs-delay.png")


def depth(schedule):
    """A schedule label's own N (" N=16"), or None: the study's."""
    found = re.search(r" N=(\d+)", schedule)
    return int(found.group(1)) if found else None


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
    groups = without_other_rates(read_groups(args.curves))
    batches = sorted({k[0] for k in groups})
    curves = {k: mean_curve(v) for k, v in groups.items()}
    spreads = {k: sd_curve(v) for k, v in groups.items()}
    for axis, suffix, xlabel in ((0, "samples", "samples"), (2, "time", "predicted time on the target setting (s)")):
        fig, axes = plt.subplots(1, len(batches), figsize=(6.5 * len(batches), 4.5), squeeze=False)
        for ax, b in zip(axes[0], batches):
            for k, c in curves.items():
                if k[0] != b:
                    continue
                style = "-" if k[1].split(":")[0].split(" ")[0] in SYNCHRONOUS else "--"
                (line,) = ax.plot([p[axis] for p in c], [p[1] for p in c], style, label=label(k), linewidth=1.2)
                ax.fill_between([p[axis] for p in c], [p[1] - s for p, s in zip(c, spreads[k])],
                                [p[1] + s for p, s in zip(c, spreads[k])], color=line.get_color(), alpha=0.12)
            ax.set_xlabel(xlabel)
            ax.set_ylabel("validation loss (mean over seeds)")
            ax.set_yscale("log")
            ax.set_title(f"global batch {b}")
            ax.legend(fontsize=6)
        save(fig, f"{args.output}-{suffix}.png")
    # Speed-up over the fastest synchronous group at the same batch, optimizer and N, for a range of targets.
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
                         if fk[0] == b and fk[2] == k[2] and depth(fk[1]) == depth(k[1])
                         and fk[1].split(":")[0].split(" ")[0] in SYNCHRONOUS]
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
    gaps = os.path.splitext(args.curves)[0] + "-gaps.csv"
    if os.path.exists(gaps):
        plot_gaps(gaps, args.output)


if __name__ == "__main__":
    main()
