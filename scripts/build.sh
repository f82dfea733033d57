#!/usr/bin/env bash
# Configures and builds pipesim into build/ (Release). Leaves the binary at build/pipesim.
# PIPESIM_UNIT_TESTS=OFF leaves out the unit test executables (scripts/run_tests.sh, which runs them under the
# sanitizers instead); any other call builds them.
# A failed build fails the script (the progress lines are filtered out, the exit status is kept).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DPIPESIM_WERROR="${PIPESIM_WERROR:-OFF}" \
  -DPIPESIM_UNIT_TESTS="${PIPESIM_UNIT_TESTS:-ON}" >/dev/null
status=0
cmake --build build -j"$(nproc)" >build/build.log 2>&1 || status=$?
grep -Ev '^\[ *[0-9]+%\]|^-- |Consolidate compiler|^$' build/build.log || true
if [ "$status" -ne 0 ]; then
  echo "build: failed (exit $status); full log in build/build.log" >&2
  exit "$status"
fi
test -x build/pipesim
