#!/usr/bin/env bash
# Configures and builds pipesim into build/ (Release). Leaves the binary at build/pipesim.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" 2>&1 | grep -Ev '^\[ *[0-9]+%\]|^-- |Consolidate compiler|^$' || true
test -x build/pipesim
