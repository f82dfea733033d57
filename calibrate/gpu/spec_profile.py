#!/usr/bin/python3
"""Writes spec-derived hardware profiles (not measurements) from public specifications.

A spec sheet gives peaks, not a surface, so every profile here samples the A100 profile's GEMM-efficiency curve
(calibrate/gpu/fit_a100.py, fitted to the Zero Bubble paper's profiled times) at the device's own dense peak:

    TFLOP/s(m, n, k) = peak * e_max * tiles / (tiles + tiles_half) * k / (k + k_half),  tiles = m * n / 128^2

with the A100 fit's e_max = 0.86 and k_half = 128, and tiles_half = 60 * SMs / 108: the A100's 60 tiles scaled by
the number of SMs a GEMM must fill (108 on the A100). Each profile's provenance.notes and link sources state every
source figure and every assumption. A measured profile (pipesim-gpu-calibrate) replaces any of them.

Profiles (the file stem is the name a scenario gives in `hardware: {profile: NAME}`):
  rtx-pro-6000-blackwell-maxq  NVIDIA RTX PRO 6000 Blackwell Max-Q (also written by spec_rtx_pro_6000.py)
  h100-sxm5-80gb-spec          NVIDIA H100 SXM5 80GB (HBM3), NVLink 4 / NVSwitch, one NDR InfiniBand NIC per GPU
  h200-sxm-141gb-spec          NVIDIA H200 SXM 141GB (HBM3e), otherwise as the H100 SXM5
(h100-sxm5-80gb, h200-sxm-141gb and h800-sxm5-80gb, without -spec, are the `published` profiles that
calibrate/gpu/published_profile.py fits to public microbenchmarks: the defaults.)

memory_capacity_gb is in GiB (2^30 bytes). The H100 and H200 profiles give the total CUDA reports (nvidia-smi's
MiB / 1024); the RTX profile's 96 is its data-sheet figure and predates that convention (its file is kept as is).

Usage: calibrate/gpu/spec_profile.py [NAME ...] [-o FILE]   (no NAME: all of them, into share/profiles/NAME.yaml)
"""
import argparse
import dataclasses
import os
import sys

from fit_a100 import gemm_grid_lines

HERE = os.path.dirname(os.path.abspath(__file__))
E_MAX, K_HALF = 0.86, 128                  # the A100 fit's
A100_TILES_HALF, A100_SMS = 60, 108        # the A100 fit's half-occupancy tile count, and the SMs it fills
LAUNCH_US = 4.0                            # assumed, as in the A100 profile


@dataclasses.dataclass
class Link:
    bandwidth_gb_per_s: float
    latency_us: float
    source: str


@dataclasses.dataclass
class Spec:
    name: str                  # file stem
    command: str               # provenance.command: the command line that writes this file
    date: str
    device: str
    bf16_tflops: float         # dense tensor peak; fp16 is the same
    fp32_tflops: float         # CUDA cores, no TF32
    sms: int
    memory_gb_per_s: float
    memory_capacity_gb: float
    notes: str
    link: Link
    inter_node_link: Link = None
    launch_us: float = LAUNCH_US
    fp8_speedup: float = 0  # the data sheet's dense FP8 over dense bf16 (2 on Hopper and Blackwell); 0: no FP8

    @property
    def tiles_half(self):
        return A100_TILES_HALF * self.sms / A100_SMS


def profile_lines(spec):
    """The profile's text, line by line."""
    for text in (spec.notes, spec.link.source) + ((spec.inter_node_link.source,) if spec.inter_node_link else ()):
        assert '"' not in text and "\\" not in text, "notes and sources are written inside double quotes"
    assert spec.notes.startswith("Not a measurement: spec-derived."), spec.name
    peak = {"bf16": spec.bf16_tflops, "fp16": spec.bf16_tflops, "fp32": spec.fp32_tflops}

    def link_line(key, link):
        return (f'{key}: {{bandwidth_gb_per_s: {link.bandwidth_gb_per_s:g}, latency_us: {link.latency_us:g}, '
                f'source: "{link.source}"}}')

    lines = [
        "# pipesim hardware profile; format: calibrate/README.md",
        f"# Written by {spec.command.split()[0]} from public specifications: NOT measured (see notes).",
        "format: pipesim-hardware-profile-1",
        f'device: {{name: "{spec.device}", kind: gpu}}',
        "provenance:",
        f'  command: "{spec.command}"',
        f'  date: "{spec.date}"',
        '  driver: "n/a (public specifications)"',
        '  host: "n/a"',
        '  kind: spec',
        f'  notes: "{spec.notes}"',
        f"peak_tflops: {{bf16: {spec.bf16_tflops:.1f}, fp16: {spec.bf16_tflops:.1f}, fp32: {spec.fp32_tflops:.1f}}}",
        f"memory_bandwidth_gb_per_s: {spec.memory_gb_per_s:g}",
        f"memory_capacity_gb: {spec.memory_capacity_gb:g}",
        f"launch_overhead_us: {spec.launch_us:g}",
        link_line("link", spec.link),
    ]
    if spec.inter_node_link:
        lines.append(link_line("inter_node_link", spec.inter_node_link))
    if spec.fp8_speedup:
        lines.append(f'fp8_gemm: {{speedup_over_bf16: {spec.fp8_speedup:g}, source: "the data sheet: dense FP8 '
                     f'tensor throughput {spec.fp8_speedup:g} times dense bf16 (an upper bound, as every figure '
                     f'here)"}}')
    lines.append("gemm:  # per dtype: [m, n, k, achieved TFLOP/s]")
    lines += gemm_grid_lines(peak, E_MAX, spec.tiles_half, K_HALF)
    return lines


def write_profile(spec, path):
    with open(path, "w") as f:
        f.write("\n".join(profile_lines(spec)) + "\n")
    print(f"{spec.name}: bf16 peak {spec.bf16_tflops:.2f}, fp32 peak {spec.fp32_tflops:.2f} TFLOP/s; wrote {path}")


# --- NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition ---------------------------------------------------
# GB202, 188 SMs (752 tensor cores), 300 W board power, 96 GB GDDR7 (512-bit, 28 Gbps: 1792 GB/s), PCIe 5.0 x16,
# no NVLink. NVIDIA quotes 4000 "AI TOPS" (FP4 with 2:4 sparsity) and 125 TFLOPS FP32 for the RTX PRO 6000
# Blackwell (Workstation Edition, 600 W). The tensor ratios of Blackwell are sparse/dense = 2, FP4/FP8 = 2,
# FP8/BF16 = 2, so dense BF16 (FP32 accumulate) = 4000 / 8 = 500 TFLOPS at that card's clock. Both figures scale
# with the boost clock; the Max-Q's is 2288 MHz, which gives FP32 = 24064 cores x 2 x 2.288 GHz = 110.1 TFLOPS,
# hence dense BF16 = 500 x 110.1 / 125 = 440.5 TFLOPS (= 188 SMs x 1024 FLOP/clock x 2.288 GHz).

def rtx_pro_6000_maxq():
    workstation_ai_tops = 4000.0     # FP4, 2:4 sparse; NVIDIA's RTX PRO 6000 Blackwell announcement
    workstation_fp32_tflops = 125.0  # same source, same (Workstation Edition) clock
    cuda_cores, sms, boost_ghz = 24064, 188, 2.288  # Max-Q Workstation Edition
    fp32 = cuda_cores * 2 * boost_ghz / 1e3
    bf16 = workstation_ai_tops / 8 * fp32 / workstation_fp32_tflops
    tiles_half = A100_TILES_HALF * sms / A100_SMS
    notes = (f"Not a measurement: spec-derived. Dense bf16/fp16 peak {bf16:.1f} TFLOP/s = 4000 AI TOPS (FP4, "
             f"2:4 sparse, RTX PRO 6000 Blackwell at 125 TFLOPS FP32) / 8 (sparse->dense, FP4->FP8, FP8->BF16) x "
             f"{fp32:.1f}/125 (the Max-Q's FP32 at its 2288 MHz boost: 24064 cores x 2 x 2.288 GHz); fp32 "
             f"peak {fp32:.1f} (CUDA cores, no TF32). GEMM grid: the A100 profile's fitted efficiency curve "
             f"e_max*tiles/(tiles+tiles_half)*k/(k+{K_HALF}) with e_max={E_MAX}, tiles=m*n/128^2 and tiles_half="
             f"60*188/108={tiles_half:.2f} (the A100 fit's 60 tiles scaled by SM count), at this peak. Memory "
             f"bandwidth and capacity: datasheet (96 GB GDDR7, 512-bit, 28 Gbps). Launch overhead assumed "
             f"({LAUNCH_US:g} us, as the A100 profile). Sustained clocks at the 300 W limit may sit below boost; "
             f"a measured profile (pipesim-gpu-calibrate) replaces every figure here.")
    link = Link(50.0, 25.0,
                "assumed for PCIe 5.0 x16 peer-to-peer without NVLink: 32 GT/s x 16 lanes, 128b/130b = 63 GB/s "
                "per direction; p2pBandwidthLatencyTest on PCIe 5.0 x16 GPUs reports about 50-55 GB/s "
                "unidirectional, so 50. Latency 25 us: a small NCCL send/recv through torch.distributed (the "
                "PCIe round trip is ~2 us; launch and proxy overheads make the rest)")
    # Its command and date stay those of the committed file: either script writes the same bytes.
    return Spec(name="rtx-pro-6000-blackwell-maxq", command="calibrate/gpu/spec_rtx_pro_6000.py",
                date="2026-12-01", device="NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
                bf16_tflops=bf16, fp32_tflops=fp32, sms=sms, memory_gb_per_s=1792.0,  # 512-bit x 28 Gbps
                memory_capacity_gb=96,  # datasheet (nvidia-smi shows 97887 MiB; the rest is headroom)
                notes=notes, link=link, fp8_speedup=2)


# --- NVIDIA H100 SXM5 80GB and H200 SXM 141GB (Hopper GH100, 132 SMs, 700 W) ------------------------------------
# The data sheets' 1,979 TFLOPS BF16/FP16 Tensor Core are with 2:4 sparsity; dense is half, 989.4 TFLOP/s
# (= 132 SMs x 4096 dense FLOP/clock x 1.83 GHz). FP32 (non-tensor) 66.9 = 16896 cores x 2 x 1.98 GHz; the H200
# has the same GH100 compute and differs only in memory (HBM3e, 141 GB, 4.8 TB/s).
HOPPER_BF16_TFLOPS, HOPPER_FP32_TFLOPS, HOPPER_SMS = 989.4, 66.9, 132
# Achieved copy bandwidth: assumed 90 % of the data sheet's HBM figure. Device-to-device copies and STREAM-like
# kernels on the H100 SXM are commonly reported near 3.0 TB/s of its 3.35 (about 90 %); the same fraction is
# assumed for the H200's HBM3e, for which no figure was at hand.
ACHIEVED_FRACTION = 0.90
DATE = "2026-12-04"

NVLINK4 = Link(370.0, 15.0,
               "assumed for NVLink 4 through NVSwitch (8-GPU HGX board): 18 links x 50 GB/s = 900 GB/s "
               "bidirectional per GPU, 450 GB/s per direction; a point-to-point copy or NCCL send/recv between "
               "two GPUs reaches roughly 350-400 GB/s one way (protocol overhead, NCCL channel limits), so 370. "
               "Latency 15 us: a small NCCL send/recv through torch.distributed, launch and proxy overhead "
               "included (the NVLink hop itself takes a few us)")
NDR_IB = Link(46.0, 25.0,
              "assumed for one 400 Gb/s NDR InfiniBand NIC per GPU (ConnectX-7, GPUDirect RDMA, rail-optimized "
              "fabric): 400 Gb/s = 50 GB/s per direction on the wire; ib_write_bw and inter-node NCCL send/recv "
              "reach about 45-48 GB/s, so 46. Latency 25 us: a few us on the wire and through one switch, plus "
              "NCCL's launch and proxy overhead for a small send/recv")


def hopper_notes(model, memory, datasheet_gb_per_s, reported_mib, capacity_gb):
    tiles_half = A100_TILES_HALF * HOPPER_SMS / A100_SMS
    achieved = round(datasheet_gb_per_s * ACHIEVED_FRACTION, 1)
    return (f"Not a measurement: spec-derived. Dense bf16/fp16 peak {HOPPER_BF16_TFLOPS:.1f} TFLOP/s: the {model} "
            f"data sheet's 1979 TFLOPS BF16/FP16 Tensor Core are with 2:4 sparsity, dense is half (= 132 SMs x "
            f"4096 dense FLOP/clock x 1.83 GHz); fp32 peak {HOPPER_FP32_TFLOPS:.1f} (non-tensor: 16896 CUDA cores "
            f"x 2 x 1.98 GHz; fp32 GEMMs without TF32). GEMM grid: the A100 profile's fitted efficiency curve "
            f"e_max*tiles/(tiles+tiles_half)*k/(k+{K_HALF}) with e_max={E_MAX}, tiles=m*n/128^2 and tiles_half="
            f"60*132/108={tiles_half:.2f} (the A100 fit's 60 tiles scaled by SM count), at this peak. Memory "
            f"bandwidth {achieved:g} GB/s: assumed {ACHIEVED_FRACTION:.0%} of the "
            f"data sheet's {datasheet_gb_per_s / 1000:g} TB/s {memory} (copies on an H100 SXM are commonly "
            f"reported near 3.0 of 3.35 TB/s); the A100 profile's element-wise passes were fitted with its "
            f"data-sheet bandwidth, so element-wise time here is about 11% above that convention. Memory capacity "
            f"{capacity_gb:g} GiB: the total CUDA reports (nvidia-smi {reported_mib} MiB / 1024), not the data "
            f"sheet's GB. Launch overhead assumed ({LAUNCH_US:g} us, as the A100 profile). link: NVLink 4 through "
            f"NVSwitch; inter_node_link: one 400 Gb/s NDR InfiniBand NIC per GPU; both assumed (see their "
            f"source). Sustained clocks at the 700 W limit may sit below boost; a measured profile "
            f"(pipesim-gpu-calibrate) replaces every figure here.")


def hopper(name, device, model, memory, datasheet_gb_per_s, reported_mib):
    capacity_gb = round(reported_mib / 1024, 2)
    return Spec(name=name, command=f"calibrate/gpu/spec_profile.py {name}", date=DATE, device=device,
                bf16_tflops=HOPPER_BF16_TFLOPS, fp32_tflops=HOPPER_FP32_TFLOPS, sms=HOPPER_SMS,
                memory_gb_per_s=round(datasheet_gb_per_s * ACHIEVED_FRACTION, 1), memory_capacity_gb=capacity_gb,
                notes=hopper_notes(model, memory, datasheet_gb_per_s, reported_mib, capacity_gb),
                link=NVLINK4, inter_node_link=NDR_IB, fp8_speedup=2)


SPECS = {spec.name: spec for spec in (
    rtx_pro_6000_maxq(),
    hopper("h100-sxm5-80gb-spec", "NVIDIA H100 SXM5 80GB", "H100 SXM", "HBM3", 3350.0, 81559),
    hopper("h200-sxm-141gb-spec", "NVIDIA H200 SXM 141GB", "H200 SXM", "HBM3e", 4800.0, 143771),
)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"one or more of: {', '.join(SPECS)} (default: all)")
    parser.add_argument("-o", "--output", help="the file to write (one NAME only; default share/profiles/NAME.yaml)")
    args = parser.parse_args(argv)
    names = args.names or list(SPECS)
    unknown = [n for n in names if n not in SPECS]
    if unknown:
        parser.error(f"unknown profile {', '.join(unknown)}; known: {', '.join(SPECS)}")
    if args.output and len(names) != 1:
        parser.error("-o needs exactly one NAME")
    for name in names:
        write_profile(SPECS[name], args.output or os.path.join(HERE, "..", "..", "share", "profiles", name + ".yaml"))


if __name__ == "__main__":
    sys.exit(main())
