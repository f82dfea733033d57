#!/usr/bin/python3
"""Weight-version drift per stage: the measured maximum and steady-state mean of Δ_i next to the bound the schedule
promises, one colour per schedule (e.g. PACI at several accumulation factors a). Input: the JSON of pipesim run, e.g.

    pipesim run scenarios/paci/example.yaml --json drift.json \\
        --schedules paci:accumulation=1,paci:accumulation=2,paci:accumulation=4,paci:accumulation=8
    plots/drift.py drift.json -o drift.png
"""
import argparse
import json

from plotting import plt, save


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", help="JSON written by pipesim run --json")
    parser.add_argument("-o", "--output", required=True, help="PNG file to write")
    parser.add_argument("--all", action="store_true", help="also draw schedules without drift (synchronous, stashing)")
    parser.add_argument("--title", default="", help="figure title")
    args = parser.parse_args()

    with open(args.results) as f:
        doc = json.load(f)
    results = [r for r in doc.get("results", []) if r["stages"]]
    if not args.all:
        results = [r for r in results if any(s["drift_max"] > 0 or (s["drift_bound"] or 0) > 0 for s in r["stages"])]
    if not results:
        raise SystemExit(f"{args.results}: no result with drift (pass --all to draw them anyway)")

    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, r in enumerate(results):
        color = colors[k % len(colors)]
        stages = [s["stage"] for s in r["stages"]]
        ax.plot(stages, [s["drift_max"] for s in r["stages"]], "o-", color=color, label=f"{r['label']}: max")
        ax.plot(stages, [s["drift_mean"] for s in r["stages"]], "x--", color=color, linewidth=1, label="mean")
        ax.step(stages, [s["drift_bound"] for s in r["stages"]], where="mid", color=color, linestyle=":", linewidth=1.5,
                label="bound")
    n = max(len(r["stages"]) for r in results)
    ax.set_xticks(range(1, n + 1))
    ax.set_xlabel("stage i")
    ax.set_ylabel("drift Δ_i (optimizer steps between F and B)")
    ax.grid(linestyle=":", linewidth=0.5)
    ax.legend(fontsize=7, ncol=max(1, len(results) // 3), loc="upper right")
    save(fig, args.output, args.title or f"{doc.get('scenario', '')}: drift per stage")


if __name__ == "__main__":
    main()
