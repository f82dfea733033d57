#!/usr/bin/python3
"""The shipped `published` profiles are what calibrate/gpu/published_profile.py writes from the microbenchmark
data in share/data/microbenchmarks/ (an edit to either shows here), and the A100 profile carries the NCCL curve
that script reads for it."""
import os
import subprocess
import sys
import tempfile

source = sys.argv[1]
script = os.path.join(source, "calibrate", "gpu", "published_profile.py")
failures = []
with tempfile.TemporaryDirectory() as out:
    subprocess.run([sys.executable, script, "--output-dir", out], check=True, stdout=subprocess.DEVNULL)
    for name in sorted(os.listdir(out)):
        with open(os.path.join(out, name)) as f:
            written = f.read()
        with open(os.path.join(source, "share", "profiles", name)) as f:
            shipped = f.read()
        if written != shipped:
            failures.append(f"share/profiles/{name} differs from what {script} writes: rerun it")
a100 = subprocess.run([sys.executable, script, "--print-a100-collectives"], check=True, capture_output=True,
                      text=True).stdout
with open(os.path.join(source, "share", "profiles", "a100-sxm4-80gb.yaml")) as f:
    if a100 not in f.read():
        failures.append("share/profiles/a100-sxm4-80gb.yaml lacks the intra_node_collectives its data give: "
                        "rerun calibrate/gpu/fit_a100.py")
for failure in failures:
    print(failure)
sys.exit(1 if failures else 0)
