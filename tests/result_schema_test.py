#!/usr/bin/python3
"""Validates real `pipesim run` JSON against schema/pipesim-result.v1.schema.json (ctest: result_schema).

Usage: result_schema_test.py PIPESIM SOURCE_DIR WORK_DIR. Runs the built binary on the repository's scenarios and
on small inline ones (every schedule, typed parameters, unknown figures), validates every document, checks that
--format json, --json - and --json FILE agree, that the run CSV's header is the one README documents, and that
documents breaking the schema are rejected (so the check itself can fail).
"""
import copy
import json
import os
import re
import subprocess
import sys

try:
    import jsonschema
except ImportError:
    sys.exit("python3-jsonschema is missing (scripts/setup.sh installs it)")

PIPESIM, SOURCE, WORK = (os.path.abspath(a) for a in sys.argv[1:4])
os.makedirs(WORK, exist_ok=True)
with open(os.path.join(SOURCE, "schema", "pipesim-result.v1.schema.json")) as f:
    SCHEMA = json.load(f)
jsonschema.Draft202012Validator.check_schema(SCHEMA)
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
failures = []


def pipesim(*args):
    done = subprocess.run([PIPESIM, *args], capture_output=True, text=True, cwd=WORK)
    if done.returncode != 0:
        sys.exit(f"pipesim {' '.join(args)} failed: {done.stderr}")
    return done.stdout


def validate(name, doc):
    errors = sorted(VALIDATOR.iter_errors(doc), key=lambda e: list(e.path))
    for e in errors[:5]:
        failures.append(f"{name}: {'/'.join(map(str, e.path))}: {e.message}")
    return not errors


def write(name, text):
    path = os.path.join(WORK, name)
    with open(path, "w") as f:
        f.write(text)
    return path


# Explicit costs with every schedule kind: a list parameter, a double, an async schedule, no parameter bytes
# (weights unknown), no sequence length (tokens/s unknown), no memory capacity (fits unknown).
EXPLICIT = write("explicit.yaml", """name: schema-explicit
pipeline: {stages: 4, microbatches: 8, batches: 2}
costs: {forward_ms: 1, backward_input_ms: 1, backward_weight_ms: 1, activation_bytes: 1000,
        weight_grad_activation_bytes: 400}
schedules:
  - gpipe
  - 1f1b-flush
  - {name: interleaved-1f1b, chunks: 2}
  - zb-h1
  - {name: zb-1p, memory_limit: 1.5}
  - pipedream
  - pipedream-2bw
  - {name: paci, accumulation: 2, max_in_flight: [4, 3, 2, 1]}
""")

documents = {
    "explicit": json.loads(pipesim("run", EXPLICIT, "--format", "json", "--memory-timeline")),
    "paci-example": json.loads(pipesim("run", os.path.join(SOURCE, "share/scenarios/paci/example.yaml"), "--json", "-")),
    "tiny-gpt": json.loads(pipesim("run", os.path.join(SOURCE, "share/scenarios/transformer/tiny-gpt-cpu.yaml"),
                                   "--format", "json")),
    "zb-1.5B": json.loads(pipesim("run", os.path.join(SOURCE, "share/scenarios/zb/1.5B-N8-m24.yaml"),
                                  "--schedules", "1f1b-flush,zb-h1,zb-2p:memory_limit=1.25", "--format", "json")),
    "default": json.loads(pipesim("run", "--schedules", "1f1b-flush,paci:accumulation=4", "--format", "json")),
}
for name, doc in documents.items():
    validate(name, doc)

# Typed parameters reach the record as the schedule ran them; unknown figures are null, never 0.
explicit = {r["label"]: r for r in documents["explicit"]["results"]}
paci = next(r for r in documents["explicit"]["results"] if r["schedule"]["name"] == "paci")
expect = [
    (paci["schedule"]["parameters"], {"accumulation": 2, "max_in_flight": [4, 3, 2, 1]}),
    (paci["sync"], "none"),
    (paci["metrics"]["bubble_rate_zb"], None),
    (next(r for r in documents["explicit"]["results"] if r["schedule"]["name"] == "zb-1p")["schedule"]["parameters"],
     {"memory_limit": 1.5}),
    (next(r for r in documents["explicit"]["results"] if r["schedule"]["name"] == "interleaved-1f1b")["pipeline"]
     ["virtual_stages"], 8),
    (explicit["gpipe"]["metrics"]["throughput_tokens_per_s"], None),
    (explicit["gpipe"]["metrics"]["peak_weight_bytes"], None),
    (explicit["gpipe"]["fits"], None),
    (explicit["gpipe"]["pipeline"]["global_batch"], 8),
    (documents["explicit"]["scenario"], {"name": "schema-explicit", "path": EXPLICIT}),
]
for got, wanted in expect:
    if got != wanted:
        failures.append(f"explicit: got {got!r}, expected {wanted!r}")
if documents["tiny-gpt"]["results"][0]["metrics"]["peak_weight_bytes"] is None:
    failures.append("tiny-gpt: a transformer scenario knows its weights")

# The three ways to ask for JSON give one document.
json_file = os.path.join(WORK, "out.json")
pipesim("run", EXPLICIT, "--json", json_file, "--memory-timeline")
with open(json_file) as f:
    if json.load(f) != documents["explicit"]:
        failures.append("--json FILE differs from --format json")
version = pipesim("--version").strip()
if version != "pipesim " + documents["explicit"]["pipesim_version"]:
    failures.append(f"--version says {version!r}, the document {documents['explicit']['pipesim_version']!r}")

# The run CSV's columns are the ones README documents, in order.
csv_header = pipesim("run", EXPLICIT, "--format", "csv").splitlines()[0].split(",")
with open(os.path.join(SOURCE, "README.md")) as f:
    readme = f.read()
section = readme[readme.index("#### CSV columns"):]
section = section[:section.index("\n\n", section.index("|"))]
documented = re.findall(r"^\| `([a-z_]+)` \|", section, re.M)
if csv_header != documented:
    failures.append(f"CSV header {csv_header} != README's CSV columns {documented}")

# Negative cases: each breaks one rule of the schema and must be rejected.
base = documents["explicit"]
broken = []
doc = copy.deepcopy(base); doc["results"][0]["sync"] = "none (async)"; broken.append(("a sync label", doc))
doc = copy.deepcopy(base); doc["results"][0]["metrics"]["throughput_tokens_per_s"] = "-"; broken.append(("text for unknown", doc))
doc = copy.deepcopy(base); del doc["results"][0]["fits"]; broken.append(("no fits", doc))
doc = copy.deepcopy(base); doc["results"][0]["schedule"]["parameters"]["x"] = {"a": 1}; broken.append(("an object parameter", doc))
doc = copy.deepcopy(base); doc["format_version"] = 2; broken.append(("another version", doc))
doc = copy.deepcopy(base); doc["results"][0]["metrics"]["bubble_fraction"] = 1.5; broken.append(("a fraction > 1", doc))
for what, doc in broken:
    if not list(VALIDATOR.iter_errors(doc)):
        failures.append(f"the schema accepted a document with {what}")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"{len(documents)} documents valid, {len(broken)} broken ones rejected")
