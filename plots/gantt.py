#!/usr/bin/python3
"""Draws a schedule from a pipesim Chrome/Perfetto trace (pipesim run ... --trace F): one row per device, one bar
per op coloured by kind and labelled by microbatch, hatched when it belongs to a device's later chunk (interleaved,
V placement), a thick frame around a fused F&B slot (dualpipe-v); with several runs in the trace, one panel per run.

    plots/gantt.py trace.json -o gantt.png [--max-ms 40] [--transfers]
"""
import argparse
import json
from collections import OrderedDict

from plotting import plt, save
from matplotlib.patches import Patch, Rectangle  # noqa: E402

COLORS = {"F": "#4C72B0", "B": "#55A868", "I": "#8FBF6A", "W": "#DD8452", "U": "#8172B2"}
NAMES = {"F": "forward", "B": "backward", "I": "backward (inputs)", "W": "backward (weights)", "U": "optimizer step"}
COMPUTE_TID = 0
SEND_TID = 1000


def load_runs(path):
    """Returns OrderedDict run label -> {"devices": [(pid, label)], "ops": [...], "transfers": [...]}, from the
    trace's metadata block (each run's first process and device count)."""
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    runs = OrderedDict()
    run_of = {}
    for schedule in trace["metadata"]["schedules"]:
        run = runs.setdefault(schedule["label"], {"devices": [], "ops": [], "transfers": []})
        for device in range(schedule["devices"]):
            pid = schedule["first_pid"] + device
            run["devices"].append((pid, f"device {device + 1}"))
            run_of[pid] = schedule["label"]
    for e in events:
        if e.get("ph") != "X" or e["pid"] not in run_of:
            continue
        target = runs[run_of[e["pid"]]]
        if e["tid"] == COMPUTE_TID:
            target["ops"].append(e)
        elif SEND_TID <= e["tid"] < SEND_TID + 1000:
            target["transfers"].append(e)
    return runs


def draw_run(ax, run, title, max_ms, show_transfers, labels):
    rows = {pid: i for i, (pid, _) in enumerate(run["devices"])}
    height = 0.8
    end_ms = 0.0
    for op in run["ops"]:
        start, dur = op["ts"] / 1000.0, op["dur"] / 1000.0
        if dur <= 0 or (max_ms is not None and start >= max_ms):
            continue  # zero-length ops (a free optimizer step) have nothing to draw
        end_ms = max(end_ms, start + dur)
        y = rows[op["pid"]]
        kind = op["cat"]
        later_chunk = op["args"].get("chunk", 0) > 0
        ax.barh(y, dur, left=start, height=height, color=COLORS.get(kind, "gray"), edgecolor="black", linewidth=0.3,
                hatch="///" if later_chunk else None)
        if labels and kind != "U":
            ax.text(start + dur / 2, y, str(op["args"].get("microbatch", "")), ha="center", va="center",
                    fontsize=6, color="white", clip_on=True)
    # A fused F&B slot (DualPipe's overlapped chunk): one thick frame around the F and the device's next op.
    by_device = {}
    for op in sorted(run["ops"], key=lambda o: o["ts"]):
        by_device.setdefault(op["pid"], []).append(op)
    for ops in by_device.values():
        for op, partner in zip(ops, ops[1:]):
            if not op["args"].get("fused_with_next") or (max_ms is not None and op["ts"] / 1000.0 >= max_ms):
                continue
            start = op["ts"] / 1000.0
            end = (partner["ts"] + partner["dur"]) / 1000.0
            ax.add_patch(Rectangle((start, rows[op["pid"]] - height / 2), end - start, height, fill=False,
                                   edgecolor="black", linewidth=1.6))
    if show_transfers:
        for t in run["transfers"]:
            start, dur = t["ts"] / 1000.0, t["dur"] / 1000.0
            if max_ms is not None and start >= max_ms:
                continue
            ax.barh(rows[t["pid"]] + height / 2 + 0.05, dur, left=start, height=0.08, color="black", alpha=0.5)
    ax.set_yticks(range(len(run["devices"])))
    ax.set_yticklabels([label for _, label in run["devices"]])
    ax.invert_yaxis()
    ax.set_title(title, fontsize=10, loc="left")
    ax.grid(axis="x", linestyle=":", linewidth=0.5)
    return end_ms


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trace", help="Chrome trace JSON written by pipesim run --trace")
    parser.add_argument("-o", "--output", required=True, help="PNG file to write")
    parser.add_argument("--max-ms", type=float, help="draw only the first MS milliseconds")
    parser.add_argument("--transfers", action="store_true", help="draw each send as a thin line above its device")
    parser.add_argument("--no-labels", action="store_true", help="do not write microbatch numbers in the bars")
    parser.add_argument("--title", default="", help="figure title")
    parser.add_argument("--width", type=float, default=12, help="figure width in inches")
    args = parser.parse_args()

    runs = load_runs(args.trace)
    if not runs:
        parser.error(f"{args.trace}: no process_name metadata; is this a pipesim trace?")
    heights = [max(1.2, 0.35 * len(run["devices"]) + 0.8) for run in runs.values()]
    fig, axes = plt.subplots(len(runs), 1, figsize=(args.width, sum(heights) + 0.8), squeeze=False,
                             gridspec_kw={"height_ratios": heights}, sharex=True)
    end_ms = 0.0
    for ax, (name, run) in zip(axes[:, 0], runs.items()):
        end_ms = max(end_ms, draw_run(ax, run, name or "", args.max_ms, args.transfers, not args.no_labels))
    # One time axis for all runs, so that their lengths compare.
    axes[-1, 0].set_xlim(0, args.max_ms if args.max_ms is not None else end_ms)
    axes[-1, 0].set_xlabel("time (ms)")
    kinds = sorted({op["cat"] for run in runs.values() for op in run["ops"] if op["dur"] > 0}, key="FBIWU".index)
    handles = [Patch(color=COLORS[k], label=f"{k}: {NAMES[k]}") for k in kinds]
    if any(op["args"].get("chunk", 0) > 0 for run in runs.values() for op in run["ops"]):
        handles.append(Patch(facecolor="white", edgecolor="black", hatch="///", label="a device's later chunk"))
    if any(op["args"].get("fused_with_next") for run in runs.values() for op in run["ops"]):
        handles.append(Patch(facecolor="white", edgecolor="black", linewidth=1.6, label="fused F&B slot"))
    fig.legend(handles=handles, loc="upper right", ncol=len(handles), fontsize=8, frameon=False)
    if args.title:
        fig.suptitle(args.title, x=0.01, ha="left", fontsize=11)  # left, clear of the legend on the right
    save(fig, args.output, top=0.95)


if __name__ == "__main__":
    main()
