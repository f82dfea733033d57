#!/usr/bin/python3
"""Rewrites the README's printed outputs and docs/fidelity.md's tables with what the commands print today (the
blocks tests/readme_outputs_test.py holds current). Usage: scripts/update_readme_outputs.py [PIPESIM]
(default build/pipesim), from the source tree."""
import re
import subprocess
import sys
import tempfile

pipesim = sys.argv[1] if len(sys.argv) > 1 else "build/pipesim"


def run(*args):
    return subprocess.run([pipesim, *args], check=True, capture_output=True, text=True).stdout


with open("README.md", encoding="utf-8") as f:
    readme = f.read()


def replace_block(text, marker, first_word, now):
    start = text.index(marker)
    match = re.search(r"```\n(" + first_word + r" .*?)```", text[start:], re.S)
    if not match:
        raise SystemExit(f"README.md: no output block after {marker!r}")
    a, b = start + match.start(1), start + match.end(1)
    return text[:a] + now + text[b:]


readme = replace_block(readme, "## Your model on your GPUs", "scenario",
                       run("run", "scenarios/quickstart/llama2-7b-h100.yaml"))
readme = replace_block(readme, "## Default output", "scenario", run("run"))
readme = replace_block(readme, "## Plan a job", "plan:",
                       run("plan", "scenarios/transformer/llama3-70b-h100.yaml", "--gpus", "1024", "--top", "3"))
with tempfile.TemporaryDirectory() as tmp:
    subprocess.run([pipesim, "fidelity", "-q", "--markdown", f"{tmp}/fidelity.md"], check=True, capture_output=True)
    with open(f"{tmp}/fidelity.md", encoding="utf-8") as f:
        fidelity = f.read()
with open("docs/fidelity.md", encoding="utf-8") as f:
    doc = f.read()
begin, end = "<!-- pipesim fidelity --markdown: begin -->\n", "<!-- pipesim fidelity --markdown: end -->"
doc = doc[:doc.index(begin) + len(begin)] + fidelity + doc[doc.index(end):]
with open("docs/fidelity.md", "w", encoding="utf-8") as f:
    f.write(doc)
table = fidelity[fidelity.index("\n| source |") + 1:]
table = table[:table.index("\n\n") + 1]
old = re.search(r"\| source \|.*?\n\n", readme, re.S)
if not old:
    raise SystemExit("README.md: no per-source fidelity table")
readme = readme[:old.start()] + table + "\n" + readme[old.end():]
with open("README.md", "w", encoding="utf-8") as f:
    f.write(readme)
print("README.md and docs/fidelity.md rewritten")
