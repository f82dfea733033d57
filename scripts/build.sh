#!/usr/bin/env bash
# Configures and builds pipesim into build/ (Release). Leaves the binary at build/pipesim.
# A failed build fails the script (the progress lines are filtered out, the exit status is kept).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DPIPESIM_WERROR="${PIPESIM_WERROR:-OFF}" >/dev/null
status=0
cmake --build build -j"$(nproc)" >build/build.log 2>&1 || status=$?
grep -Ev '^\[ *[0-9]+%\]|^-- |Consolidate compiler|^$' build/build.log || true
if [ "$status" -ne 0 ]; then
  echo "build: failed (exit $status); full log in build/build.log" >&2
  exit "$status"
fi
test -x build/pipesim
