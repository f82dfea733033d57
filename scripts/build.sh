#!/usr/bin/env bash
# Configures and builds pipesim into build/ (Release). Leaves the binary at build/pipesim.
# PIPESIM_UNIT_TESTS=OFF leaves out the unit test executables (scripts/run_tests.sh, which runs them under the
# sanitizers instead); any other call builds them.
# PIPESIM_UNITY_BUILD=ON compiles 16 files per compiler call (CMake's unity build): a clean build in about half
# the time (the README's test command uses it, CI compiles from scratch), at the cost of recompiling a whole
# batch when one file changes, so plain builds leave it off.
# A failed build fails the script (the progress lines are filtered out, the exit status is kept).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DPIPESIM_WERROR="${PIPESIM_WERROR:-OFF}" \
  -DPIPESIM_UNIT_TESTS="${PIPESIM_UNIT_TESTS:-ON}" -DCMAKE_UNITY_BUILD="${PIPESIM_UNITY_BUILD:-OFF}" \
  -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 >/dev/null
status=0
cmake --build build -j"$(nproc)" >build/build.log 2>&1 || status=$?
grep -Ev '^\[ *[0-9]+%\]|^-- |Consolidate compiler|^$' build/build.log || true
if [ "$status" -ne 0 ]; then
  echo "build: failed (exit $status); full log in build/build.log" >&2
  exit "$status"
fi
test -x build/pipesim
