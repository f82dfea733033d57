#!/usr/bin/env bash
# The unit tests, the fuzz regressions (fuzz/regressions/) and a small `pipesim check` grid under
# AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/, scripts/sanitize_build.sh). Any sanitizer report
# aborts the test that triggered it and fails the script. The unit tests run as shards, one worker per core.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/sanitize_build.sh
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Every layer's test executable in shards, all the shards of all the executables queued on one worker per
# core, the largest executables first: a core that finishes a shard takes the next one instead of waiting
# for the other shards of the same executable (CI's time).
shards="$(nproc)"
jobs=()
rm -f build-asan/failed-shards.txt
for tests in $(ls -S build-asan/pipesim_tests_*); do
  [ -f "$tests" ] && [ -x "$tests" ] || continue  # not the .dir folders beside them
  for ((shard = 0; shard < shards; ++shard)); do jobs+=("$tests $shard"); done
done
run_shard() {  # EXECUTABLE SHARD SHARDS: the shard's log in build-asan/NAME-shard-K.log, its exit status
  GTEST_TOTAL_SHARDS="$3" GTEST_SHARD_INDEX="$2" "$1" --gtest_brief=1 \
    >"build-asan/$(basename "$1")-shard-$2.log" 2>&1
}
export -f run_shard
status=0
printf '%s\n' "${jobs[@]}" |
  xargs -P "$shards" -L 1 bash -c 'run_shard "$0" "$1" '"$shards"' || echo "$0 $1" >>build-asan/failed-shards.txt' ||
  true
for job in "${jobs[@]}"; do
  read -r tests shard <<<"$job"
  name=$(basename "$tests")
  log="build-asan/$name-shard-$shard.log"
  if grep -qx "$tests $shard" build-asan/failed-shards.txt 2>/dev/null; then
    echo "sanitize: $name, shard $shard of $shards, FAILED:" >&2
    tail -60 "$log" >&2
    status=1
  fi
  grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \]' "$log" | sed "s/^/$name: /" >&2 || true
done
rm -f build-asan/failed-shards.txt
source scripts/fuzz_targets.sh
for reader in "${fuzz_targets[@]}"; do
  build-asan/"fuzz_replay_$reader" "fuzz/regressions/$reader" >&2 || status=1
done
build-asan/pipesim check --stages 2,3,4 --seeds 2 || status=1
exit "$status"
