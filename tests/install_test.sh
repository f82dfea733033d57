#!/bin/sh
# `cmake --install` into a temporary prefix, then the installed binary run from another directory: it finds
# the default scenario and the hardware profile in <prefix>/share/pipesim (io/data_dirs.h), PIPESIM_DATA_DIR
# and --data-dir take precedence in that order, and a missing data file names every place searched.
# Usage: install_test.sh BUILD_DIR
set -eu
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
bin="$tmp/prefix/bin/pipesim"
share="$tmp/prefix/share/pipesim"
for f in scenarios/default.yaml profiles/a100-sxm4-80gb.yaml data/zero_bubble/zb_models.csv studies/paci-scaled.yaml \
  corpus/snippet.txt; do
  test -e "$share/$f" || { echo "not installed: $share/$f"; exit 1; }
done
mkdir "$tmp/elsewhere"
cd "$tmp/elsewhere"

# The installed default scenario, renamed so that its use is visible in the table's title.
run_default() {
  "$bin" "$@" run --schedules 1f1b-flush --set pipeline.batches=2 >"$tmp/out" 2>&1 || {
    cat "$tmp/out"
    exit 1
  }
}
one_stage_scenario() {  # DIR NAME: a data directory whose default scenario is named NAME
  mkdir -p "$1/scenarios"
  printf 'name: %s\npipeline: {stages: 2, microbatches: 4}\ncosts: {forward_ms: 1, backward_ms: 2}\n' "$2" \
    >"$1/scenarios/default.yaml"
}
rm "$share/scenarios/default.yaml"
cp "$share/scenarios/paci/gpt2-medium-8stage.yaml" "$share/scenarios/default.yaml"
sed -i 's/^name: .*/name: installed-copy/' "$share/scenarios/default.yaml"
run_default
grep -q installed-copy "$tmp/out" || { echo "the installed default scenario was not used:"; cat "$tmp/out"; exit 1; }

one_stage_scenario "$tmp/env" env-copy
PIPESIM_DATA_DIR="$tmp/env" run_default
grep -q env-copy "$tmp/out" || { echo "PIPESIM_DATA_DIR was not used:"; cat "$tmp/out"; exit 1; }

one_stage_scenario "$tmp/flag" flag-copy
PIPESIM_DATA_DIR="$tmp/env" run_default --data-dir "$tmp/flag"
grep -q flag-copy "$tmp/out" || { echo "--data-dir was not used:"; cat "$tmp/out"; exit 1; }
# A shipped scenario by its name under share/, from a directory that has no scenarios/ of its own.
"$bin" run scenarios/zb/1.5B-N8-m24.yaml --schedules zb-h1 >"$tmp/out" 2>&1 || {
  echo "a shipped scenario by its relative name failed:"
  cat "$tmp/out"
  exit 1
}
echo "install test passed"
