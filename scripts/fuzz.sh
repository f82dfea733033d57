#!/usr/bin/env bash
# Fuzzes every reader and writer target of fuzz/ with libFuzzer for SECONDS each (default 60), all at once:
# the YAML scenario reader (with small runs of what it accepts and their JSON and CSV writers), the PyTorch CSV
# schedule reader, the hardware profile reader, the learning-study reader, the three importers (Hugging Face,
# Megatron-LM, torchtitan, each with the scenario it writes read back) and the planner (with its report and
# CSV). Builds build-asan/ (scripts/sanitize_build.sh) when needed. Seeds: fuzz/seeds/<target>/, the
# repository's scenarios and profiles, CSVs that `pipesim export` writes, and fuzz/regressions/<target>/ (every past finding). The corpus
# grows in build-asan/corpus/<target>/ across runs. Any crash, sanitizer report or unexpected exception fails
# the script and leaves the input in build-asan/crash-<target>-*: copy it into fuzz/regressions/<target>/ (the
# ctest fuzz_regressions_<target> replays it from then on) and add a unit test for its class of bug.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
source scripts/fuzz_targets.sh
targets=("${fuzz_targets[@]}")
scripts/sanitize_build.sh

seeds=build-asan/seeds
rm -rf "$seeds"
for target in "${targets[@]}"; do
  mkdir -p "$seeds/$target"
  if [ -d "fuzz/seeds/$target" ]; then cp "fuzz/seeds/$target"/* "$seeds/$target/"; fi
done
cp share/scenarios/transformer/*.yaml share/scenarios/quickstart/*.yaml "$seeds/planner/"
cp share/studies/*.yaml "$seeds/study_reader/"
for file in share/scenarios/*.yaml share/scenarios/*/*.yaml; do  # two directories hold files of the same name
  cp "$file" "$seeds/scenario_reader/$(echo "${file#share/scenarios/}" | tr / -)"
done
cp share/profiles/*.yaml "$seeds/profile_reader/"
for schedule in gpipe 1f1b-flush zb-h1 zb-h2; do
  build-asan/pipesim export "$schedule" -N 4 -m 8 --costs 1,1,1 --csv "$seeds/pytorch_csv_reader/$schedule.csv"
done
build-asan/pipesim export interleaved-1f1b -N 2 -m 4 --chunks 2 --csv "$seeds/pytorch_csv_reader/interleaved.csv"

pids=()
for target in "${targets[@]}"; do
  corpus="build-asan/corpus/$target"
  mkdir -p "$corpus"
  echo "fuzz: $target for ${seconds}s" >&2
  ASAN_OPTIONS=detect_leaks=1 "build-asan/fuzz_$target" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -max_len=4096 -dict="fuzz/$target.dict" -artifact_prefix="build-asan/crash-$target-" \
    -print_final_stats=1 "$corpus" "$seeds/$target" "fuzz/regressions/$target" >"build-asan/fuzz-$target.log" 2>&1 &
  pids+=($!)
done
status=0
for i in "${!targets[@]}"; do
  target="${targets[$i]}"
  log="build-asan/fuzz-$target.log"
  if ! wait "${pids[$i]}"; then
    echo "fuzz: $target FAILED; log in $log:" >&2
    tail -40 "$log" >&2
    status=1
  fi
  echo "fuzz: $target: $(grep -E '^#[0-9]+.*DONE' "$log" | tail -1)" >&2
done
exit "$status"
