#!/usr/bin/env python3
"""Compare the default scenario's schedules from Python (README.md, "Python").

Runs scenarios/default.yaml (GPT-2 Medium on 8 GPUs: 1F1B-flush and PACI at several m, then every other schedule
at m = 8), prints the runs of B = 128 from fastest to slowest with the best one that fits marked, and with a
path argument also plots samples/s against peak memory to that PNG (matplotlib).

    PYTHONPATH=build/python /usr/bin/python3 python/examples/compare_schedules.py [plot.png]
"""

import os
import sys

try:
    import pipesim
except ImportError:  # run from a checkout without PYTHONPATH: the module the default build puts in build/python
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "python"))
    import pipesim

GiB = 2**30  # binary units, as pipesim's tables and device capacities state memory


def samples_per_batch(result):
    return round(result["pipeline"]["global_batch"])


def main(argv):
    results = [r for r in pipesim.run() if samples_per_batch(r) == 128]
    results.sort(key=lambda r: r["metrics"]["throughput_samples_per_s"], reverse=True)
    best = next((r for r in results if r["fits"]), None)

    print(f"pipesim {pipesim.__version__}: {len(results)} runs at B = 128, fastest first (* best that fits)")
    width = max(len(r["label"]) for r in results)
    sync_width = max(len(r["sync"]) for r in results)
    print(f"  {'schedule':<{width}} {'m':>3} {'sync':<{sync_width}} {'samples/s':>9} {'bubble':>7} {'peak GiB':>9}  fits")
    for r in results:
        mark = "*" if r is best else " "
        bubble = f"{100 * r['metrics']['bubble_fraction']:.1f}%"
        peak_gib = r["metrics"]["peak_memory_bytes"] / GiB
        fits = {True: "yes", False: "no", None: "-"}[r["fits"]]
        print(f"{mark} {r['label']:<{width}} {r['pipeline']['microbatches']:>3} {r['sync']:<{sync_width}} "
              f"{r['metrics']['throughput_samples_per_s']:>9.1f} {bubble:>7} {peak_gib:>9.1f}  {fits}")
    # Synchronous schedules flush every batch; asynchronous ones have sync "none".
    flush = max((r for r in results if r["sync"] != "none"), key=lambda r: r["metrics"]["throughput_samples_per_s"])
    if best is not None:
        gain = best["metrics"]["throughput_samples_per_s"] / flush["metrics"]["throughput_samples_per_s"] - 1
        print(f"best that fits: {best['label']}, {100 * gain:+.1f}% samples/s over the fastest schedule "
              f"with a flush ({flush['label']})")

    if len(argv) > 1:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(8, 5))
        for r in results:
            x, y = r["metrics"]["peak_memory_bytes"] / GiB, r["metrics"]["throughput_samples_per_s"]
            ax.scatter(x, y, color="tab:green" if r["fits"] else "tab:red")
            ax.annotate(r["label"], (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
        if results and results[0]["metrics"]["memory_capacity_bytes"]:
            ax.axvline(results[0]["metrics"]["memory_capacity_bytes"] / GiB, color="grey", linestyle="--",
                       label="device memory")
            ax.legend()
        ax.set_xlabel("peak memory of the fullest device (GiB)")
        ax.set_ylabel("samples/s")
        ax.set_title("scenarios/default.yaml, B = 128")
        fig.tight_layout()
        fig.savefig(argv[1], dpi=120)
        print(f"plot written to {argv[1]}")


if __name__ == "__main__":
    main(sys.argv)
