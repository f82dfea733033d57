#!/usr/bin/env bash
# The unit tests, the fuzz regressions (fuzz/regressions/) and a small `pipesim check` grid under
# AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/, scripts/sanitize_build.sh). Any sanitizer report
# aborts the test that triggered it and fails the script. The unit tests run in one shard per core.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/sanitize_build.sh
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Each layer's test executable in turn, in one shard per core.
shards="$(nproc)"
status=0
for tests in build-asan/pipesim_tests_*; do
  [ -f "$tests" ] && [ -x "$tests" ] || continue  # not the .dir folders beside them
  name=$(basename "$tests")
  pids=()
  for ((shard = 0; shard < shards; ++shard)); do
    GTEST_TOTAL_SHARDS="$shards" GTEST_SHARD_INDEX="$shard" "$tests" --gtest_brief=1 \
      >"build-asan/$name-shard-$shard.log" 2>&1 &
    pids+=($!)
  done
  for ((shard = 0; shard < shards; ++shard)); do
    if ! wait "${pids[$shard]}"; then
      echo "sanitize: $name, shard $shard of $shards, FAILED:" >&2
      tail -60 "build-asan/$name-shard-$shard.log" >&2
      status=1
    fi
    grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \]' "build-asan/$name-shard-$shard.log" | sed "s/^/$name: /" >&2 || true
  done
done
source scripts/fuzz_targets.sh
for reader in "${fuzz_targets[@]}"; do
  build-asan/"fuzz_replay_$reader" "fuzz/regressions/$reader" >&2 || status=1
done
build-asan/pipesim check --stages 2,3,4 --seeds 2 || status=1
exit "$status"
