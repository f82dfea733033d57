#!/usr/bin/python3
"""The maps of the code drawn from the layer declarations (CMakeLists.txt's pipesim_layer(), which the build
writes to build/pipesim_layer_map.tsv): the floors and the layer table of docs/design.md §7 and the directory
list of the README's "How it works". tests/layer_map_test.py holds the documents equal to what this prints.
Usage: scripts/layer_map.py BUILD/pipesim_layer_map.tsv floors|table|readme|write|check [SOURCE_DIR]
(write: replace the three in docs/design.md and README.md; check: exit 1 naming what differs.)
"""
import os
import re
import sys

# Directories that are not layers, listed after the layers in the README's map.
README_TAIL = """python/         the pipesim Python module (pybind11)
share/          what ships (the install tree as is): scenarios/, studies/, profiles/ (hardware), data/ (the
                Zero Bubble paper's figures, measured layer times), corpus/ (the executor's text)
plots/          matplotlib scripts (/usr/bin/python3)
tests/          GoogleTest, one directory per layer; bench/ Google Benchmark; fuzz/ libFuzzer targets; scripts/
                build, CI, tools
"""


def read_layers(path):
    layers = {}  # name -> (dir, declared uses, about), in declaration order
    with open(path, encoding="utf-8") as file:
        for line in file:
            if line.strip():
                name, directory, uses, about = line.rstrip("\n").split("\t")
                layers[name] = (directory, uses.split(), about)
    return layers


def closure(layers, name):
    seen, todo = set(), list(layers[name][1])
    while todo:
        used = todo.pop()
        if used not in seen:
            seen.add(used)
            todo.extend(layers[used][1])
    return seen


def direct_uses(layers, name):
    """The declared uses minus those reached through another declared use (the arrows of the graph)."""
    declared = layers[name][1]
    reached = set()
    for used in declared:
        reached |= closure(layers, used)
    return [used for used in declared if used not in reached]


def floors(layers):
    floor = {}
    for name in layers:  # declarations come after what they use
        floor[name] = 1 + max((floor[used] for used in layers[name][1]), default=-1)
    return floor


def draw_floors(layers):
    floor = floors(layers)
    lines = []
    for level in range(max(floor.values()), -1, -1):
        names = [layers[n][0] if n == layers[n][0] else f"{layers[n][0]} ({'pipesim_' + n})"
                 for n in layers if floor[n] == level]
        lines.append(f"{level:<4}" + "".join(f"{n:<18}" for n in names).rstrip())
    return "\n".join(lines) + "\n"


def draw_table(layers):
    rows = ["| layer | uses (directly) | what it holds |", "|---|---|---|"]
    for name, (directory, _, about) in layers.items():
        uses = ", ".join(layers[u][0] for u in direct_uses(layers, name)) or "nothing"
        rows.append(f"| `{directory}/` | {uses} | {about} |")
    return "\n".join(rows) + "\n"


def wrap(head, text, width, indent):
    """`head` padded to `indent`, then `text` wrapped at `width`, continuation lines indented."""
    words, lines, line = text.split(), [], f"{head:<{indent - 1}}"
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = " " * indent + word
        else:
            line = f"{line} {word}"
    lines.append(line)
    return "\n".join(lines)


def draw_readme(layers):
    floor = floors(layers)
    order = sorted(layers, key=lambda n: (floor[n], list(layers).index(n)))
    text = "".join(wrap(layers[n][0] + "/", layers[n][2], 116, 16) + "\n" for n in order)
    return text + README_TAIL


def places(layers):
    """(file, the block's pattern, its text now) for each map in the documents."""
    return [("docs/design.md", r"(By floor,[^`]*```\n)(.*?)(```)", draw_floors(layers)),
            ("docs/design.md", r"(\n)(\| layer \| uses \(directly\).*?\n)(\n)", draw_table(layers)),
            ("README.md", r"(## How it works\n\n```\n)(.*?)(```)", draw_readme(layers))]


def update(source, layers, write):
    stale = []
    for name, pattern, text in places(layers):
        path = os.path.join(source, name)
        with open(path, encoding="utf-8") as file:
            document = file.read()
        match = re.search(pattern, document, re.S)
        if not match:
            stale.append(f"{name}: no map found ({pattern})")
        elif match.group(2) != text:
            stale.append(f"{name}: the map differs from the layer declarations:\n{text}")
            document = document[:match.start(2)] + text + document[match.end(2):]
            if write:
                with open(path, "w", encoding="utf-8") as file:
                    file.write(document)
    return stale


if __name__ == "__main__":
    table = read_layers(sys.argv[1])
    mode = sys.argv[2]
    if mode in ("write", "check"):
        source = sys.argv[3] if len(sys.argv) > 3 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        stale = update(source, table, mode == "write")
        if mode == "check" and stale:
            print("\n".join(stale) + "\nrun: scripts/layer_map.py build/pipesim_layer_map.tsv write")
            sys.exit(1)
        print("layer maps " + ("written" if mode == "write" else "match the layer declarations"))
    else:
        sys.stdout.write({"floors": draw_floors, "table": draw_table, "readme": draw_readme}[mode](table))
