#!/usr/bin/python3
"""Which schedule is fastest at each (N, m): a heatmap with one row per number of stages N and one column per number
of microbatches m, each cell coloured by the schedule with the highest throughput among the runs that fit in memory
(fits true, or empty: unknown) and labelled with its name and its margin over the second best. Cells where no
run fits, or where every run failed (a non-empty error), are grey. Input: a CSV from pipesim sweep over N and m with
several schedules, e.g.

    pipesim sweep scenarios/quickstart/llama2-7b-h100.yaml -N 2,4,8,16 -m 4,8,16,32,64 \\
        --set pipeline.global_batch=64 --schedules 1f1b-flush,interleaved-1f1b,zb-h1,zb-v,v-half --out s.csv
    plots/best_schedule_heatmap.py s.csv -o best_schedule_heatmap.png
"""
import argparse
import csv
from collections import OrderedDict, namedtuple

from plotting import plt, save
from matplotlib.colors import ListedColormap, to_rgb
from matplotlib.patches import Patch

COLUMNS = ("label", "devices", "microbatches", "sync", "fits", "error")
NONE_FITS = "none fits"
FAILED = "failed"
MASKED = {NONE_FITS: "#d9d9d9", FAILED: "#8c8c8c"}
# tab20's strong colours, then its pale ones, without its greys (which mean a masked cell here).
PALETTE = [c for i, c in sorted(enumerate(plt.get_cmap("tab20").colors), key=lambda p: (p[0] % 2, p[0]))
           if i not in (14, 15)]

# A cell: the best schedule and its margin in % over the second best (None when it is the only one that fits), or
# no schedule and why (NONE_FITS, FAILED).
Best = namedtuple("Best", "schedule margin reason")


def read_rows(path, metric, sync_only=False):
    """The sweep's rows, without asynchronous schedules (sync "none") when `sync_only`. Exits naming the file and the
    column when a column this script reads is missing."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        for column in COLUMNS + (metric,):
            if column not in (reader.fieldnames or []):
                raise SystemExit(f"{path}: no column '{column}' (expected a CSV written by pipesim sweep)")
        return [r for r in reader if not (sync_only and r["sync"] == "none")]


def best_per_cell(rows, metric):
    """{(N, m): Best} over the rows that ran without an error, fit in memory (fits not "false") and have the
    metric. A schedule listed twice in a cell counts once, with its best run, so the margin is over another one."""
    cells = OrderedDict()
    for r in rows:
        cells.setdefault((int(r["devices"]), int(r["microbatches"])), []).append(r)
    best = {}
    for key, runs in cells.items():
        if all(r["error"] for r in runs):
            best[key] = Best(None, None, FAILED)
            continue
        values = {}
        for r in runs:
            if not r["error"] and r["fits"] != "false" and r[metric]:
                values[r["label"]] = max(values.get(r["label"], 0.0), float(r[metric]))
        if not values:
            best[key] = Best(None, None, NONE_FITS)
            continue
        ranked = sorted(values.items(), key=lambda item: -item[1])
        margin = 100 * (ranked[0][1] / ranked[1][1] - 1) if len(ranked) > 1 else None
        best[key] = Best(ranked[0][0], margin, None)
    return best


def cell_text(cell):
    if cell.schedule is None:
        return cell.reason
    return f"{cell.schedule}\n" + ("only fit" if cell.margin is None else f"+{cell.margin:.1f}%")


def build_figure(rows, metric, title=""):
    """The heatmap: N down, m across, one colour per schedule of the sweep (in its order), masked cells grey."""
    best = best_per_cell(rows, metric)
    stages = sorted({n for n, _ in best})
    microbatches = sorted({m for _, m in best})
    schedules = list(OrderedDict.fromkeys(r["label"] for r in rows))
    colours = [PALETTE[i % len(PALETTE)] for i in range(len(schedules))] + list(MASKED.values())
    index = {name: i for i, name in enumerate(schedules + list(MASKED))}
    fig, ax = plt.subplots(figsize=(max(6.0, 1.25 * len(microbatches) + 3.2), max(3.0, 0.75 * len(stages) + 1.6)))
    grid = [[index[best[(n, m)].schedule or best[(n, m)].reason] if (n, m) in best else None for m in microbatches]
            for n in stages]
    ax.imshow([[len(colours) if i is None else i for i in row] for row in grid],
              cmap=ListedColormap(colours + ["white"]), vmin=-0.5, vmax=len(colours) + 0.5, aspect="auto")
    for y, n in enumerate(stages):
        for x, m in enumerate(microbatches):
            if (n, m) not in best:
                continue
            red, green, blue = to_rgb(colours[grid[y][x]])
            dark = 0.299 * red + 0.587 * green + 0.114 * blue < 0.55
            ax.text(x, y, cell_text(best[(n, m)]), ha="center", va="center", fontsize=8,
                    color="white" if dark else "black")
    ax.set_xticks(range(len(microbatches)))
    ax.set_xticklabels([str(m) for m in microbatches])
    ax.set_yticks(range(len(stages)))
    ax.set_yticklabels([str(n) for n in stages])
    ax.set_xlabel("microbatches per batch m")
    ax.set_ylabel("pipeline stages N")
    used = {cell.reason for cell in best.values() if cell.reason}
    handles = [Patch(color=colours[i], label=name) for i, name in enumerate(schedules)]
    handles += [Patch(color=colour, label=reason) for reason, colour in MASKED.items() if reason in used]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1), fontsize=8, frameon=False)
    ax.set_title(title or f"best schedule by {metric} among the runs that fit, margin over the second", fontsize=10)
    return fig


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sweep", help="CSV written by pipesim sweep")
    parser.add_argument("-o", "--output", required=True, help="PNG file to write")
    parser.add_argument("--metric", default="throughput_samples_per_s",
                        choices=["throughput_samples_per_s", "throughput_tokens_per_s"],
                        help="what 'best' means (default throughput_samples_per_s)")
    parser.add_argument("--sync-only", action="store_true",
                        help="leave out asynchronous schedules (rows whose sync column is 'none')")
    parser.add_argument("--title", default="", help="figure title")
    args = parser.parse_args()

    rows = read_rows(args.sweep, args.metric, args.sync_only)
    if not rows:
        raise SystemExit(f"{args.sweep}: no runs" + (" with a synchronous schedule" if args.sync_only else ""))
    if not any(r[args.metric] for r in rows):
        raise SystemExit(f"{args.sweep}: column '{args.metric}' is empty in every run")
    save(build_figure(rows, args.metric, args.title), args.output)


if __name__ == "__main__":
    main()
