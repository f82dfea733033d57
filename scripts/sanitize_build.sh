#!/usr/bin/env bash
# Configures and builds build-asan/: clang with AddressSanitizer + UndefinedBehaviorSanitizer
# (-DPIPESIM_SANITIZE=ON) and the libFuzzer targets (-DPIPESIM_FUZZ=ON), so that one instrumented build serves
# both the sanitizer tests (scripts/sanitize.sh) and the fuzzing (scripts/fuzz.sh): the libraries are compiled
# once, with coverage instrumentation, and only the fuzz targets link libFuzzer's main.
# -O1 with line tables only: what the sanitizers' stack traces need, at about half the compile time of -O2 -g.
# A unity build (16 files per compile): the sanitizer tree is compiled from scratch on every CI run, and
# compiling each template instantiation once per batch instead of once per file took it from 459 s to 307 s
# here (2 cores, no ccache). File-local names must therefore be unique within a layer (a clash is a compile
# error here first).
# Without arguments it builds every target the two scripts use; arguments are passed to cmake --build.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPIPESIM_WERROR="${PIPESIM_WERROR:-OFF}" -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DPIPESIM_SANITIZE=ON -DPIPESIM_FUZZ=ON \
  -DPIPESIM_CUDA=OFF \
  -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 >/dev/null
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(--target pipesim pipesim_tests)
  source scripts/fuzz_targets.sh
  for reader in "${fuzz_targets[@]}"; do
    targets+=("fuzz_$reader" "fuzz_replay_$reader")
  done
fi
status=0
cmake --build build-asan -j"$(nproc)" "${targets[@]}" >build-asan/build.log 2>&1 || status=$?
grep -Ev '^\[ *[0-9]+%\]|^-- |Consolidate compiler|^$' build-asan/build.log || true
if [ "$status" -ne 0 ]; then
  echo "sanitize build: failed (exit $status); full log in build-asan/build.log" >&2
  exit "$status"
fi
