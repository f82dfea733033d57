#!/usr/bin/python3
"""Writes share/profiles/rtx-pro-6000-blackwell-maxq.yaml from public specifications (not a measurement).

A thin wrapper kept for the command line the committed profile names: the derivation (NVIDIA RTX PRO 6000
Blackwell Max-Q Workstation Edition: dense BF16 440.5 TFLOP/s from 4000 AI TOPS / 8 scaled to the Max-Q's
2288 MHz boost, the A100 fit's GEMM curve with tiles_half = 60 x 188/108, 1792 GB/s GDDR7, PCIe 5.0 link) lives in
spec_profile.py, which writes the same bytes with `calibrate/gpu/spec_profile.py rtx-pro-6000-blackwell-maxq`.

Usage: calibrate/gpu/spec_rtx_pro_6000.py [-o share/profiles/rtx-pro-6000-blackwell-maxq.yaml]
"""
import argparse
import os

from spec_profile import HERE, SPECS, write_profile

NAME = "rtx-pro-6000-blackwell-maxq"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", default=os.path.join(HERE, "..", "..", "share", "profiles", NAME + ".yaml"))
    args = parser.parse_args()
    write_profile(SPECS[NAME], args.output)


if __name__ == "__main__":
    main()
