#!/usr/bin/python3
"""The README's printed outputs are what the commands print today: the quickstart table, the default run's
table and the plan's, byte for byte but for the plan's search time (a README that shows stale figures is a bug), and
docs/import-keys.md against the importers' key tables, docs/fidelity.md and the README's per-source table against
`pipesim fidelity`. Usage: readme_outputs_test.py PIPESIM SOURCE_DIR
"""
import re
import subprocess
import sys

pipesim, source = sys.argv[1], sys.argv[2]
with open(f"{source}/README.md", encoding="utf-8") as f:
    readme = f.read()


def block_after(marker, first_word="scenario"):
    """The first fenced block after `marker` whose text starts with `first_word` and a space."""
    start = readme.index(marker)
    for match in re.finditer(r"```\n(" + first_word + r" .*?)```", readme[start:], re.S):
        return match.group(1)
    raise SystemExit(f"README.md: no output block after {marker!r}")


def run(*args):
    return subprocess.run([pipesim, *args], cwd=source, check=True, capture_output=True, text=True).stdout


failures = []
cases = [("## Your model on your GPUs", ["run", "scenarios/quickstart/llama2-7b-h100.yaml"]),
         ("## Default output", ["run"])]
for marker, args in cases:
    printed, now = block_after(marker), run(*args)
    if printed != now:
        failures.append(f"README.md, {marker}: the block differs from `pipesim {' '.join(args)}`:\n{now}")
# The plan's search time varies with the machine: every other figure must match.
plan_args = ["plan", "scenarios/transformer/llama3-70b-h100.yaml", "--gpus", "1024", "--top", "3"]


def without_time(text):
    return re.sub(r"configurations in [0-9.]+ s:", "configurations in (time) s:", text)


printed, now = block_after("## Plan a job", "plan:"), run(*plan_args)
if without_time(printed) != without_time(now):
    failures.append(f"README.md, ## Plan a job: the block differs from `pipesim {' '.join(plan_args)}`:\n{now}")
# What the importers read, from their key tables (scripts/import_keys_doc.py writes the file).
sys.path.insert(0, f"{source}/scripts")
import import_keys_doc  # noqa: E402

with open(f"{source}/docs/import-keys.md", encoding="utf-8") as f:
    if f.read() != import_keys_doc.document(pipesim):
        failures.append("docs/import-keys.md is not what the importers' key tables say today: run "
                        "scripts/import_keys_doc.py build/pipesim > docs/import-keys.md")
# docs/fidelity.md's tables are what `pipesim fidelity --markdown` writes, and the README's per-source table is
# that table.
import tempfile  # noqa: E402

with tempfile.TemporaryDirectory() as tmp:
    subprocess.run([pipesim, "fidelity", "-q", "--markdown", f"{tmp}/fidelity.md"], cwd=source, check=True,
                   capture_output=True)
    with open(f"{tmp}/fidelity.md", encoding="utf-8") as f:
        fidelity_now = f.read()
with open(f"{source}/docs/fidelity.md", encoding="utf-8") as f:
    doc = f.read()
begin, end = "<!-- pipesim fidelity --markdown: begin -->\n", "<!-- pipesim fidelity --markdown: end -->"
fidelity_printed = doc[doc.index(begin) + len(begin):doc.index(end)]
if fidelity_printed != fidelity_now:
    failures.append("docs/fidelity.md: its tables are not what `pipesim fidelity --markdown F` writes today:\n"
                    + fidelity_now)
source_table = fidelity_now[fidelity_now.index("\n| source |") + 1:]
source_table = source_table[:source_table.index("\n\n") + 1]
if source_table not in readme:
    failures.append("README.md: the fidelity section's table is not `pipesim fidelity`'s per-source table:\n"
                    + source_table)
if failures:
    print("\n".join(failures))
    sys.exit(1)
print("README outputs match")
