#!/usr/bin/python3
"""Writes `published` hardware profiles: fitted to the public microbenchmarks in share/data/microbenchmarks/.

What a job achieves, not the data sheet. Every figure is fitted to a microbenchmark (never to a training run) or
stated as assumed, and the profile's notes name the rows it came from:

  GEMMs    TFLOP/s(m, n, k) = peak * e_max * tiles / (tiles + tiles_half) * k / (k + k_half),  tiles = m n / 128^2
           e_max:      the A100 profile's e_max (fitted to the Zero Bubble paper's in-training op times) times the
                       GPU's best-shape torch.mm efficiency over the A100's, both from the same brute-force search
                       (gemm.csv, stas00_mamf): what the A100 loses in training, the GPU loses alike.
           k_half:     fitted to the K sweep of an autotuned Hopper kernel at M = N = 8192 (gemm.csv,
                       tilelang_matmul_h800; the H800's SM90 die is the H100's).
           tiles_half: the A100 fit's 60 tiles scaled by SM count (assumed, as the spec profiles do).
  Memory   the A100 profile's bandwidth times the GPU's same-GPU copy rate over the A100's, both from
           p2pBandwidthLatencyTest on 8-GPU nodes (memory_bandwidth.csv, stas00_net_p2p): the A100's element-wise
           passes were fitted at its bandwidth, so every GPU keeps that convention.
  NCCL     intra_node_collectives: an all-reduce's bus bandwidth against its size from nccl-tests-style sweeps on
           8 GPUs (collectives.csv); all-gathers and reduce-scatters at their share of it at 16 GiB.
  Link     point-to-point NVLink: the mean GPU-to-GPU copy rate of p2pBandwidthLatencyTest (collectives.csv).

Usage: calibrate/gpu/published_profile.py [NAME ...] [--output-dir DIR] [--print-a100-collectives]
  (no NAME: all of them, into share/profiles/NAME.yaml; the spec-derived profiles stay as NAME-spec.yaml)
"""
import argparse
import csv
import math
import os
import sys

from fit_a100 import gemm_grid_lines, rate_tflops
from spec_profile import (A100_SMS, A100_TILES_HALF, HOPPER_BF16_TFLOPS, HOPPER_FP32_TFLOPS, HOPPER_SMS,
                          LAUNCH_US, NDR_IB)

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "share", "data", "microbenchmarks")
A100_E_MAX, A100_K_HALF, A100_BANDWIDTH = 0.86, 128, 2039  # the A100 profile's (fit_a100.py)
DATE = "2026-12-07"


def rows(name):
    with open(os.path.join(DATA, name), newline="") as f:
        return list(csv.DictReader(f))


def mamf_efficiency(gpu):
    """Best-shape bf16 torch.mm TFLOP/s over the dense peak, from the same search for every GPU."""
    for r in rows("gemm.csv"):
        if r["source_id"] == "stas00_mamf" and r["gpu"] == gpu and r["dtype"] == "bf16":
            peak = float(r["notes"].split("theory ")[1].split(";")[0])
            return float(r["tflops"]) / peak, r
    raise SystemExit(f"no stas00_mamf bf16 row for {gpu}")


def fp8_gemm_line():
    """FP8 GEMMs as a multiple of bf16's: the H100's best-shape rates of both from the same search."""
    best = {}
    for r in rows("gemm.csv"):
        if r["source_id"] == "stas00_mamf" and r["gpu"] == "NVIDIA H100 SXM" and r["dtype"] in ("bf16", "fp8_e4m3"):
            best[r["dtype"]] = r
    fp8, bf16 = best["fp8_e4m3"], best["bf16"]
    speedup = float(fp8["tflops"]) / float(bf16["tflops"])
    source = (f"the H100 SXM's best-shape torch FP8 E4M3 GEMM over its bf16 one from the same brute-force search "
              f"({fp8['tflops']} TFLOP/s at {fp8['m']}x{fp8['n']}x{fp8['k']} against {bf16['tflops']} at "
              f"{bf16['m']}x{bf16['n']}x{bf16['k']}, stas00_mamf); every Hopper part has the same SM90 die, so "
              f"the same multiple (assumed: smaller shapes gain less in FP8, not modelled)")
    assert '"' not in source
    return f'fp8_gemm: {{speedup_over_bf16: {speedup:.4f}, source: "{source}"}}'


def fit_k_half(e_max, tiles_half):
    """k_half and the sweep's own level: least squares in log rate over the TileLang K sweep."""
    sweep = [(float(r["m"]), float(r["n"]), float(r["k"]), float(r["tflops"]))
             for r in rows("gemm.csv") if r["source_id"] == "tilelang_matmul_h800"]
    best = None
    for k_half in range(32, 1025, 4):
        # The level that fits best for this k_half (its log mean), then the residual.
        logs = [math.log(t / rate_tflops(m, n, k, HOPPER_BF16_TFLOPS, 1.0, tiles_half, k_half))
                for m, n, k, t in sweep]
        level = sum(logs) / len(logs)
        error = sum((x - level) ** 2 for x in logs)
        if best is None or error < best[0]:
            best = (error, k_half, math.exp(level))
    error, k_half, level = best
    worst = max(abs(rate_tflops(m, n, k, HOPPER_BF16_TFLOPS, level, tiles_half, k_half) / t - 1)
                for m, n, k, t in sweep)
    return k_half, level, worst, len(sweep)


def copy_rate(gpu_prefix):
    """Mean same-GPU copy rate of p2pBandwidthLatencyTest on an 8-GPU node."""
    values = [float(r["gb_per_s"]) for r in rows("memory_bandwidth.csv")
              if r["source_id"] == "stas00_net_p2p" and r["gpu"].startswith(gpu_prefix)]
    return sum(values) / len(values), len(values)


def p2p_rate(gpu):
    values = [float(r["alg_gb_per_s"]) for r in rows("collectives.csv")
              if r["source_id"] == "stas00_net_p2p" and r["gpu"] == gpu]
    return sum(values) / len(values), len(values)


def all_reduce_curve(gpu, source, scale=1.0):
    """[(bytes, bus GB/s)] of one sweep on 8 GPUs, the first row per size; a rate that grows faster than the
    size (a time that falls with more bytes: measurement noise) is held to the size's growth."""
    points = []
    for r in rows("collectives.csv"):
        if (r["gpu"] == gpu and r["source_id"] == source and r["collective"] == "all-reduce" and
                r["ranks"] == "8" and r["message_bytes"] and r["bus_gb_per_s"]):
            size = float(r["message_bytes"])
            if points and size <= points[-1][0]:
                continue
            bus = round(float(r["bus_gb_per_s"]) * scale, 2)  # as written, so that the check holds on the file
            if points:
                bus = min(bus, math.floor(points[-1][1] * size / points[-1][0] * 100) / 100)
            points.append((size, bus))
    return points


def h200_gather_scatter_share():
    """All-gather and reduce-scatter bus bandwidth over the all-reduce's, all at 16 GiB on one 8x H200 node."""
    got = {}
    for r in rows("collectives.csv"):
        if r["source_id"] == "stas00_net_h200_sharp" and r["message_bytes"] == "17179869184":
            if r["collective"] == "all-reduce" and "NVLS" in r["notes"] and "ENABLE=1" in r["notes"]:
                got["all-reduce"] = float(r["bus_gb_per_s"])
            elif r["collective"] in ("all-gather", "reduce-scatter"):
                got[r["collective"]] = float(r["bus_gb_per_s"])
    share = (got["all-gather"] + got["reduce-scatter"]) / 2 / got["all-reduce"]
    return share, got


def curve_lines(points, share, source):
    pairs = ", ".join(f"[{b:.0f}, {g:.2f}]" for b, g in points)
    assert '"' not in source
    return [f'intra_node_collectives: {{ranks: 8, gather_scatter_share: {share:.4f}, source: "{source}",',
            f"                         bus_gb_per_s: [{pairs}]}}"]


def a100_collective_lines():
    points = all_reduce_curve("A100", "stas00_net_a100_ar")
    source = ("nccl-tests all_reduce_perf on 8 A100 SXM over NVLink 3 / NVSwitch, 32 KiB to 16 GiB "
              "(share/data/microbenchmarks/collectives.csv, stas00_net_a100_ar); all-gathers and reduce-scatters "
              "assumed at the all-reduce's bus bandwidth (rings either way: NVLink SHARP needs NVSwitch 3)")
    return curve_lines(points, 1.0, source)


def hopper_profile(name, device, memory, datasheet_gb_per_s, reported_mib, nvlink_scale, nvlink_what):
    a100_eff, a100_row = mamf_efficiency("NVIDIA A100 SXM")
    h100_eff, h100_row = mamf_efficiency("NVIDIA H100 SXM")
    e_max = A100_E_MAX * h100_eff / a100_eff
    tiles_half = A100_TILES_HALF * HOPPER_SMS / A100_SMS
    k_half, sweep_level, sweep_worst, sweep_n = fit_k_half(e_max, tiles_half)
    m, n, k = (float(h100_row[x]) for x in ("m", "n", "k"))
    at_best = rate_tflops(m, n, k, HOPPER_BF16_TFLOPS, e_max, tiles_half, k_half)
    a100_copy, a100_n = copy_rate("A100")
    h100_copy, h100_n = copy_rate("H100")
    bandwidth = A100_BANDWIDTH * h100_copy / a100_copy
    memory_note = (f"Memory bandwidth {bandwidth:.0f} GB/s: the A100 profile's {A100_BANDWIDTH} times the same-GPU "
                   f"copy rate of p2pBandwidthLatencyTest on 8x H100 ({h100_copy:.1f} GB/s, mean of {h100_n}) over "
                   f"8x A100 ({a100_copy:.1f}, mean of {a100_n}) (stas00_net_p2p)")
    if datasheet_gb_per_s != 3350:
        bandwidth *= datasheet_gb_per_s / 3350
        memory_note += (f", times {datasheet_gb_per_s:g}/3350 for this GPU's {memory} (assumed: no copy "
                        f"measurement at hand)")
    capacity = round(reported_mib / 1024, 2)
    p2p, p2p_n = p2p_rate("H100")
    link_bw = p2p * nvlink_scale
    share, at16 = h200_gather_scatter_share()
    points = all_reduce_curve("H200", "stas00_net_h200_ar", nvlink_scale)
    curve_source = (f"all_reduce_bench.py on 8 H200 over NVLink 4 / NVSwitch with NCCL's defaults (NVLink SHARP "
                    f"on), 32 KiB to 16 GiB (collectives.csv, stas00_net_h200_ar; the H100 HGX board has the same "
                    f"NVLink 4 and NVSwitch){nvlink_what}; all-gathers and reduce-scatters at "
                    f"{at16['all-gather']:g} and {at16['reduce-scatter']:g} of the all-reduce's "
                    f"{at16['all-reduce']:g} GB/s at 16 GiB (stas00_net_h200_sharp)")
    notes = (f"Not a measurement: published, fitted to public microbenchmarks (share/data/microbenchmarks/, "
             f"calibrate/gpu/published_profile.py). Dense bf16/fp16 peak {HOPPER_BF16_TFLOPS:.1f} TFLOP/s (the "
             f"data sheet's 1979 with 2:4 sparsity, halved), fp32 {HOPPER_FP32_TFLOPS:.1f} (no GEMM data: the "
             f"bf16 curve at that peak). GEMM efficiency e_max*tiles/(tiles+tiles_half)*k/(k+k_half): e_max "
             f"{e_max:.4f} = the A100 profile's {A100_E_MAX} x H100 best-shape torch.mm efficiency "
             f"{h100_eff:.3f} ({h100_row['tflops']} TFLOP/s at {h100_row['m']}x{h100_row['n']}x{h100_row['k']}) "
             f"/ the A100's {a100_eff:.3f} ({a100_row['tflops']} of 312) from the same search (stas00_mamf); "
             f"k_half {k_half} fitted to TileLang's K sweep at M=N=8192 on an H800 ({sweep_n} points, largest "
             f"|error| {sweep_worst:.1%} at the sweep's own level {sweep_level:.3f}); tiles_half "
             f"{tiles_half:.2f} = the A100 fit's 60 x 132/108 SMs (assumed). At the search's best shape the "
             f"curve gives {at_best:.0f} TFLOP/s against its {h100_row['tflops']} (the search's best shape is an "
             f"upper envelope). {memory_note}. Memory capacity {capacity:g} GiB: the total CUDA reports "
             f"(nvidia-smi {reported_mib} MiB / 1024). Launch overhead assumed ({LAUNCH_US:g} us, as the A100 "
             f"profile). Collectives inside a node: intra_node_collectives (its source). Clocks: the "
             f"microbenchmarks ran at the data sheet's power limit; a power-capped GPU runs its GEMMs slower "
             f"and is not modelled here.")
    link_source = (f"the mean GPU-to-GPU copy of p2pBandwidthLatencyTest on 8x H100 SXM ({p2p:.1f} GB/s one way, "
                   f"{p2p_n} pairs, stas00_net_p2p){nvlink_what}. Latency 15 us assumed: a small NCCL send/recv "
                   f"through torch.distributed, launch and proxy overhead included")
    for text in (notes, link_source, curve_source):
        assert '"' not in text and "\\" not in text
    peak = {"bf16": HOPPER_BF16_TFLOPS, "fp16": HOPPER_BF16_TFLOPS, "fp32": HOPPER_FP32_TFLOPS}
    lines = [
        "# pipesim hardware profile; format: calibrate/README.md",
        "# Written by calibrate/gpu/published_profile.py from public microbenchmarks: NOT measured here (see notes).",
        "format: pipesim-hardware-profile-1",
        f'device: {{name: "{device}", kind: gpu}}',
        "provenance:",
        f'  command: "calibrate/gpu/published_profile.py {name}"',
        f'  date: "{DATE}"',
        '  driver: "n/a (public microbenchmarks)"',
        '  host: "n/a"',
        "  kind: published",
        f'  notes: "{notes}"',
        f"peak_tflops: {{bf16: {HOPPER_BF16_TFLOPS:.1f}, fp16: {HOPPER_BF16_TFLOPS:.1f}, fp32: {HOPPER_FP32_TFLOPS:.1f}}}",
        f"memory_bandwidth_gb_per_s: {bandwidth:.0f}",
        f"memory_capacity_gb: {capacity:g}",
        f"launch_overhead_us: {LAUNCH_US:g}",
        f'link: {{bandwidth_gb_per_s: {link_bw:.0f}, latency_us: 15, source: "{link_source}"}}',
        (f'inter_node_link: {{bandwidth_gb_per_s: {NDR_IB.bandwidth_gb_per_s:g}, latency_us: '
         f'{NDR_IB.latency_us:g}, source: "{NDR_IB.source}"}}'),
    ]
    lines += curve_lines(points, share, curve_source)
    lines.append(fp8_gemm_line())
    lines.append("gemm:  # per dtype: [m, n, k, achieved TFLOP/s]")
    lines += gemm_grid_lines(peak, e_max, tiles_half, k_half)
    summary = (f"{name}: e_max {e_max:.4f}, k_half {k_half}, tiles_half {tiles_half:.2f}; memory {bandwidth:.0f} "
               f"GB/s; link {link_bw:.0f} GB/s; all-reduce bus bandwidth {points[0][1]:.2f} to "
               f"{points[-1][1]:.2f} GB/s; gathers at {share:.3f}")
    return lines, summary


def profiles():
    h100_p2p, _ = p2p_rate("H100")
    h800_nvlink = 160.0  # collectives.csv, deepseek_v3_issue_28: "160GB/s is our unidirectional measurement"
    h800_scale = h800_nvlink / h100_p2p
    h800_what = (f", times {h800_scale:.3f} for the H800's reduced NVLink: DeepSeek's measured 160 GB/s one way "
                 f"(deepseek_v3_issue_28) over the H100's {h100_p2p:.1f} (assumed: NCCL's curve scales with the "
                 f"link)")
    return {
        "h100-sxm5-80gb": lambda: hopper_profile("h100-sxm5-80gb", "NVIDIA H100 SXM5 80GB", "HBM3", 3350, 81559,
                                                 1.0, ""),
        "h200-sxm-141gb": lambda: hopper_profile("h200-sxm-141gb", "NVIDIA H200 SXM 141GB", "HBM3e", 4800,
                                                 143771, 1.0, ""),
        "h800-sxm5-80gb": lambda: hopper_profile("h800-sxm5-80gb", "NVIDIA H800 SXM5 80GB", "HBM3", 3350, 81559,
                                                 h800_scale, h800_what),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    makers = profiles()
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"one or more of: {', '.join(makers)}")
    parser.add_argument("--output-dir", default=os.path.join(HERE, "..", "..", "share", "profiles"),
                        help="where to write NAME.yaml (default: share/profiles)")
    parser.add_argument("--print-a100-collectives", action="store_true",
                        help="print the A100 profile's intra_node_collectives lines (fit_a100.py writes them)")
    args = parser.parse_args(argv)
    if args.print_a100_collectives:
        print("\n".join(a100_collective_lines()))
        return 0
    names = args.names or list(makers)
    unknown = [n for n in names if n not in makers]
    if unknown:
        parser.error(f"unknown profile {', '.join(unknown)}; known: {', '.join(makers)}")
    for name in names:
        lines, summary = makers[name]()
        path = os.path.join(args.output_dir, name + ".yaml")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        print(f"{summary}; wrote {os.path.normpath(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
