#!/usr/bin/python3
"""Writes profiles/rtx-pro-6000-blackwell-maxq.yaml from public specifications (not a measurement).

The NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition: GB202, 188 SMs (752 tensor cores), 300 W board power,
96 GB GDDR7 (512-bit, 28 Gbps: 1792 GB/s), PCIe 5.0 x16, no NVLink.

Dense bf16 tensor throughput. NVIDIA quotes 4000 "AI TOPS" (FP4 with 2:4 sparsity) and 125 TFLOPS FP32 for the
RTX PRO 6000 Blackwell (Workstation Edition, 600 W). The tensor ratios of Blackwell are sparse/dense = 2,
FP4/FP8 = 2, FP8/BF16 = 2, so dense BF16 (FP32 accumulate) = 4000 / 8 = 500 TFLOPS at that card's clock. Both
figures scale with the boost clock; the Max-Q's is 2288 MHz, which gives FP32 = 24064 cores x 2 x 2.288 GHz =
110.1 TFLOPS, hence dense BF16 = 500 x 110.1 / 125 = 440.5 TFLOPS (= 188 SMs x 1024 FLOP/clock x 2.288 GHz).

GEMM grid. A spec sheet gives a peak, not a surface, so the grid is the A100 profile's efficiency curve
(gpu_calibration/fit_a100.py, fitted to the Zero Bubble paper's profiled times) at this peak:
    TFLOP/s(m, n, k) = peak * e_max * tiles / (tiles + tiles_half) * k / (k + k_half),  tiles = m * n / 128^2
with the A100 fit's e_max = 0.86 and k_half = 128, and tiles_half = 60 * 188 / 108: the A100's 60 tiles scaled by
the number of SMs a GEMM must fill (108 on the A100). A measured profile (pipesim-gpu-calibrate) replaces it.

Usage: gpu_calibration/spec_rtx_pro_6000.py [-o gpu_calibration/profiles/rtx-pro-6000-blackwell-maxq.yaml]
"""
import argparse
import os

from fit_a100 import gemm_grid_lines

HERE = os.path.dirname(os.path.abspath(__file__))
WORKSTATION_AI_TOPS = 4000.0     # FP4, 2:4 sparse; NVIDIA's RTX PRO 6000 Blackwell announcement
WORKSTATION_FP32_TFLOPS = 125.0  # same source, same (Workstation Edition) clock
CUDA_CORES, SMS, BOOST_GHZ = 24064, 188, 2.288  # Max-Q Workstation Edition
FP32_TFLOPS = CUDA_CORES * 2 * BOOST_GHZ / 1e3
BF16_TFLOPS = WORKSTATION_AI_TOPS / 8 * FP32_TFLOPS / WORKSTATION_FP32_TFLOPS
PEAK = {"bf16": BF16_TFLOPS, "fp16": BF16_TFLOPS, "fp32": FP32_TFLOPS}
E_MAX, K_HALF = 0.86, 128                  # the A100 fit's
TILES_HALF = 60 * SMS / 108                # the A100 fit's 60 tiles, scaled by SMs
MEMORY_GB_PER_S = 1792.0                   # 512-bit GDDR7 at 28 Gbps, datasheet
MEMORY_GB = 96                             # datasheet (nvidia-smi shows 97887 MiB; the rest is headroom)
LAUNCH_US = 4.0                            # assumed, as in the A100 profile
LINK_GB_PER_S, LINK_LATENCY_US = 50.0, 25.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", default=os.path.join(HERE, "profiles", "rtx-pro-6000-blackwell-maxq.yaml"))
    args = parser.parse_args()
    notes = (f"Not a measurement: spec-derived. Dense bf16/fp16 peak {BF16_TFLOPS:.1f} TFLOP/s = 4000 AI TOPS (FP4, "
             f"2:4 sparse, RTX PRO 6000 Blackwell at 125 TFLOPS FP32) / 8 (sparse->dense, FP4->FP8, FP8->BF16) x "
             f"{FP32_TFLOPS:.1f}/125 (the Max-Q's FP32 at its 2288 MHz boost: 24064 cores x 2 x 2.288 GHz); fp32 "
             f"peak {FP32_TFLOPS:.1f} (CUDA cores, no TF32). GEMM grid: the A100 profile's fitted efficiency curve "
             f"e_max*tiles/(tiles+tiles_half)*k/(k+{K_HALF}) with e_max={E_MAX}, tiles=m*n/128^2 and tiles_half="
             f"60*188/108={TILES_HALF:.2f} (the A100 fit's 60 tiles scaled by SM count), at this peak. Memory "
             f"bandwidth and capacity: datasheet (96 GB GDDR7, 512-bit, 28 Gbps). Launch overhead assumed "
             f"({LAUNCH_US:g} us, as the A100 profile). Sustained clocks at the 300 W limit may sit below boost; "
             f"a measured profile (pipesim-gpu-calibrate) replaces every figure here.")
    link_source = ("assumed for PCIe 5.0 x16 peer-to-peer without NVLink: 32 GT/s x 16 lanes, 128b/130b = 63 GB/s "
                   "per direction; p2pBandwidthLatencyTest on PCIe 5.0 x16 GPUs reports about 50-55 GB/s "
                   "unidirectional, so 50. Latency 25 us: a small NCCL send/recv through torch.distributed (the "
                   "PCIe round trip is ~2 us; launch and proxy overheads make the rest)")
    lines = [
        "# pipesim hardware profile; format: gpu_calibration/README.md",
        "# Written by gpu_calibration/spec_rtx_pro_6000.py from public specifications: NOT measured (see notes).",
        "format: pipesim-hardware-profile-1",
        'device: {name: "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", kind: gpu}',
        "provenance:",
        '  command: "gpu_calibration/spec_rtx_pro_6000.py"',
        '  date: "2026-12-01"',
        '  driver: "n/a (public specifications)"',
        '  host: "n/a"',
        f'  notes: "{notes}"',
        f"peak_tflops: {{bf16: {BF16_TFLOPS:.1f}, fp16: {BF16_TFLOPS:.1f}, fp32: {FP32_TFLOPS:.1f}}}",
        f"memory_bandwidth_gb_per_s: {MEMORY_GB_PER_S:g}",
        f"memory_capacity_gb: {MEMORY_GB}",
        f"launch_overhead_us: {LAUNCH_US:g}",
        f'link: {{bandwidth_gb_per_s: {LINK_GB_PER_S:g}, latency_us: {LINK_LATENCY_US:g}, source: "{link_source}"}}',
        "gemm:  # per dtype: [m, n, k, achieved TFLOP/s]",
    ]
    lines += gemm_grid_lines(PEAK, E_MAX, TILES_HALF, K_HALF)
    with open(args.output, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"bf16 peak {BF16_TFLOPS:.2f}, fp32 peak {FP32_TFLOPS:.2f} TFLOP/s; wrote {args.output}")


if __name__ == "__main__":
    main()
