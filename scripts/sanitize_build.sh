#!/usr/bin/env bash
# Configures and builds build-asan/: clang with AddressSanitizer + UndefinedBehaviorSanitizer
# (-DPIPESIM_SANITIZE=ON) and the libFuzzer targets (-DPIPESIM_FUZZ=ON), so that one instrumented build serves
# both the sanitizer tests (scripts/sanitize.sh) and the fuzzing (scripts/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DPIPESIM_SANITIZE=ON \
  -DPIPESIM_FUZZ=ON -DPIPESIM_CUDA=OFF >/dev/null
status=0
cmake --build build-asan -j"$(nproc)" "$@" >build-asan/build.log 2>&1 || status=$?
grep -Ev '^\[ *[0-9]+%\]|^-- |Consolidate compiler|^$' build-asan/build.log || true
if [ "$status" -ne 0 ]; then
  echo "sanitize build: failed (exit $status); full log in build-asan/build.log" >&2
  exit "$status"
fi
