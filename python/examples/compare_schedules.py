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

GB = 1e9


def samples_per_batch(result):
    return round(result["microbatches"] * result["microbatch_size"])


def main(argv):
    results = [r for r in pipesim.run() if samples_per_batch(r) == 128]
    results.sort(key=lambda r: r["throughput_samples_per_s"], reverse=True)
    best = next((r for r in results if r["fits_memory"]), None)

    print(f"pipesim {pipesim.__version__}: {len(results)} runs at B = 128, fastest first (* best that fits)")
    width = max(len(r["schedule"]) for r in results)
    sync_width = max(len(r["sync"]) for r in results)
    print(f"  {'schedule':<{width}} {'m':>3} {'sync':<{sync_width}} {'samples/s':>9} {'bubble':>7} {'peak GB':>8}  fits")
    for r in results:
        mark = "*" if r is best else " "
        bubble = f"{100 * r['bubble_fraction']:.1f}%"
        peak_gb = max(r["peak_memory_bytes"]) / GB
        fits = {True: "yes", False: "no", None: "-"}[r["fits_memory"]]
        print(f"{mark} {r['schedule']:<{width}} {r['microbatches']:>3} {r['sync']:<{sync_width}} "
              f"{r['throughput_samples_per_s']:>9.1f} {bubble:>7} {peak_gb:>8.1f}  {fits}")
    # Synchronous schedules flush every batch, so they have a per-batch bubble rate (null for async ones).
    flush = max((r for r in results if r["bubble_rate_zb"] is not None), key=lambda r: r["throughput_samples_per_s"])
    if best is not None:
        gain = best["throughput_samples_per_s"] / flush["throughput_samples_per_s"] - 1
        print(f"best that fits: {best['schedule']}, {100 * gain:+.1f}% samples/s over the fastest schedule "
              f"with a flush ({flush['schedule']})")

    if len(argv) > 1:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(8, 5))
        for r in results:
            x, y = max(r["peak_memory_bytes"]) / GB, r["throughput_samples_per_s"]
            ax.scatter(x, y, color="tab:green" if r["fits_memory"] else "tab:red")
            ax.annotate(r["schedule"], (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
        if results and results[0]["memory_capacity_bytes"]:
            ax.axvline(results[0]["memory_capacity_bytes"] / GB, color="grey", linestyle="--",
                       label="device memory")
            ax.legend()
        ax.set_xlabel("peak memory of the fullest device (GB)")
        ax.set_ylabel("samples/s")
        ax.set_title("scenarios/default.yaml, B = 128")
        fig.tight_layout()
        fig.savefig(argv[1], dpi=120)
        print(f"plot written to {argv[1]}")


if __name__ == "__main__":
    main(sys.argv)
