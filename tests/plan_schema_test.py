#!/usr/bin/python3
"""Validates real `pipesim plan --json` documents against schema/pipesim-plan.v1.schema.json (ctest: plan_schema).

Usage: plan_schema_test.py PIPESIM SOURCE_DIR WORK_DIR. Plans a dense and a mixture-of-experts job, validates each
document, checks what the schema cannot (the fate counts add up to the candidates, the best configurations point at
simulated candidates of their kind, best first, each bound below its figure, --json - and --json FILE agree), and
that documents breaking the schema are rejected (so the check itself can fail).
"""
import copy
import json
import os
import subprocess
import sys

try:
    import jsonschema
except ImportError:
    sys.exit("python3-jsonschema is missing (scripts/setup.sh installs it)")

PIPESIM, SOURCE, WORK = (os.path.abspath(a) for a in sys.argv[1:4])
os.makedirs(WORK, exist_ok=True)
with open(os.path.join(SOURCE, "schema", "pipesim-plan.v1.schema.json")) as f:
    SCHEMA = json.load(f)
jsonschema.Draft202012Validator.check_schema(SCHEMA)
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
failures = []


def pipesim(*args):
    done = subprocess.run([PIPESIM, *args], capture_output=True, text=True, cwd=SOURCE)
    if done.returncode != 0:
        sys.exit(f"pipesim {' '.join(args)} failed: {done.stderr}")
    return done.stdout


def check(name, doc):
    for e in sorted(VALIDATOR.iter_errors(doc), key=lambda e: list(e.path))[:5]:
        failures.append(f"{name}: {'/'.join(map(str, e.path))}: {e.message}")
    candidates = doc["candidates"]
    if sum(doc["counts"].values()) != len(candidates):
        failures.append(f"{name}: counts add up to {sum(doc['counts'].values())}, not {len(candidates)}")
    for key, synchronous in (("best_synchronous", True), ("best_asynchronous", False)):
        steps = []
        for i in doc[key]:
            c = candidates[i]
            if c["fate"] not in ("simulated", "reused") or c["synchronous"] != synchronous:
                failures.append(f"{name}: {key} {i} is {c['fate']}, synchronous {c['synchronous']}")
            steps.append(-c["figures"]["tokens_per_gpu_s"])
        if steps != sorted(steps):
            failures.append(f"{name}: {key} not best first")
    for i, c in enumerate(candidates):
        if "figures" in c and c["figures"]["step_s"] < c["bounds"]["busiest_work_s"] * (1 - 1e-9):
            failures.append(f"{name}: candidate {i} steps in {c['figures']['step_s']} s, under its bound")
    return candidates


DENSE = ["plan", "scenarios/transformer/llama3-70b-h100.yaml", "--gpus", "64", "--global-batch", "64", "-q"]
dense = json.loads(pipesim(*DENSE, "--json", "-"))
check("dense", dense)
path = os.path.join(WORK, "plan.json")
pipesim(*DENSE, "--json", path)
with open(path) as f:
    from_file = json.load(f)
for doc in (dense, from_file):
    doc.pop("search_seconds")
if dense != from_file:
    failures.append("--json - and --json FILE differ")
moe = json.loads(pipesim("plan", "scenarios/moe/deepseek-v3-like-overlap.yaml", "--gpus", "256", "--global-batch",
                         "1024", "--pipeline", "4", "--expert", "64", "--microbatch-sizes", "1", "-q", "--json", "-"))
check("moe", moe)
if not any(c["schedule"] == "dualpipe-v" and "figures" in c for c in moe["candidates"]):
    failures.append("moe: no simulated dualpipe-v candidate")

# The check can fail: documents that break the schema are rejected.
for what, breaking in (("unknown fate", lambda d: d["candidates"][0].update(fate="lost")),
                       ("figures without bounds", lambda d: d["candidates"][d["best_synchronous"][0]].pop("bounds")),
                       ("a missing count", lambda d: d["counts"].pop("reused"))):
    broken = copy.deepcopy(moe)
    breaking(broken)
    if VALIDATOR.is_valid(broken):
        failures.append(f"a document with {what} passed the schema")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"plan_schema: {len(dense['candidates'])} dense and {len(moe['candidates'])} MoE candidates valid")
