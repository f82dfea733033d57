#!/usr/bin/python3
"""docs/import-keys.md from the importers' own key tables: `pipesim import KIND --keys` for hf, megatron and
torchtitan. tests/readme_outputs_test.py checks that the file is what this prints today.
Usage: scripts/import_keys_doc.py PIPESIM > docs/import-keys.md
"""
import subprocess
import sys

IMPORTERS = [("hf", "a Hugging Face config.json"), ("megatron", "Megatron-LM's pretrain_gpt.py arguments"),
             ("torchtitan", "a torchtitan job file")]


def document(pipesim):
    parts = ["# What the importers read\n\n"
             "Generated from the readers' key tables by `scripts/import_keys_doc.py build/pipesim` (each section is "
             "`pipesim import KIND --keys`); `tests/readme_outputs_test.py` fails when this file is not what the "
             "readers do today.\n"]
    for kind, what in IMPORTERS:
        text = subprocess.run([pipesim, "import", kind, "--keys"], check=True, capture_output=True,
                              text=True).stdout
        parts.append(f"\n## `pipesim import {kind}`: {what}\n\n{text}")
    return "".join(parts)


if __name__ == "__main__":
    sys.stdout.write(document(sys.argv[1]))
