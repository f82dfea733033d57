#!/usr/bin/python3
"""Runs a shipped study's --quick variant and checks what it wrote (ctest: study_quick_<name>).

Usage: study_quick_test.py PIPESIM STUDY.yaml WORK_DIR. Checks that every run of the study is in the curves CSV,
complete (its last point at the budget) and learned (held-out loss at least 1 nat below the untrained model's),
that every group has a table row and that at least one group reached the quick target; then that a second
invocation resumes every run from the CSV instead of training again.
"""
import csv
import os
import subprocess
import sys

PIPESIM, STUDY, WORK = (os.path.abspath(a) for a in sys.argv[1:4])
os.makedirs(WORK, exist_ok=True)
name = os.path.splitext(os.path.basename(STUDY))[0]
failures = []


def train():
    return subprocess.run([PIPESIM, "train", STUDY, "--quick", "--out", WORK, "-j2"], capture_output=True,
                          text=True, check=True).stdout


csv_path = os.path.join(WORK, f"{name}-quick.csv")
if os.path.exists(csv_path):
    os.remove(csv_path)
first = train()
runs = {}
with open(csv_path) as f:
    for row in csv.DictReader(f):
        runs.setdefault(row["run"], []).append(row)
summary = first.splitlines()[0]  # "NAME: K runs (0 resumed from ..., K trained)"
total = int(summary.split(": ")[1].split(" runs")[0])
if len(runs) != total:
    failures.append(f"{len(runs)} runs in the CSV, the summary says {total}")
budget = max(int(r["samples"]) for rows in runs.values() for r in rows)
for key, rows in runs.items():
    samples = [int(r["samples"]) for r in rows]
    if samples != sorted(samples) or samples[0] != 0 or samples[-1] != budget:
        failures.append(f"{key}: points at {samples}, expected 0 ... {budget}")
    start, end = float(rows[0]["val_loss"]), float(rows[-1]["val_loss"])
    if not end < start - 1.0:
        failures.append(f"{key}: held-out loss {start:.3f} -> {end:.3f}, it did not learn")
table = [line for line in first.splitlines() if line.startswith("| ") and not line.startswith("| B ")]
# Every group in a table row: the comparison, or the learning-rate sweep for a swept schedule's other rates.
groups = {(r["global_batch"], r["schedule"], r["optimizer"]) for rows in runs.values() for r in rows}
for batch, schedule, optimizer in sorted(groups):
    if not any(line.startswith(f"| {batch} | {schedule} | {optimizer} |") for line in table):
        failures.append(f"no table row for B={batch} {schedule} {optimizer}")
if not any(" 1/1 " in line or " 2/2 " in line or " 3/3 " in line for line in table):
    failures.append("no group reached the quick target")
second = train()
if f"({total} resumed" not in second.splitlines()[0] or "0 trained" not in second.splitlines()[0]:
    failures.append(f"the second run did not resume every run: {second.splitlines()[0]}")
for failure in failures:
    print("FAIL:", failure)
print(f"{name} --quick: {len(runs)} runs, {len(table)} groups, {'FAILED' if failures else 'OK'}")
sys.exit(1 if failures else 0)
