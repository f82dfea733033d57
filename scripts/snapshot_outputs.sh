#!/bin/sh
# Writes what the deterministic commands print into DIR, one file per command and output, so that two trees
# can be compared byte for byte (a restructuring must leave every output as it was):
#   scripts/snapshot_outputs.sh build/pipesim /tmp/before    (on the old tree)
#   scripts/snapshot_outputs.sh build/pipesim /tmp/after     (on the new one)
#   diff -r /tmp/before /tmp/after
# Covered: run (table, JSON, CSV, trace) on every shipped scenario, show, export, check, sweep, costs,
# extrapolate and execute --clock scenario. Wall-clock lines ("checked in 3.1 s") are dropped and DIR is
# written as OUT, so that snapshots in two directories compare equal.
set -u
binary=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=$2
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
cd "$out" || exit 1

# Runs the command line in $2.. from the source root; stdout and stderr into $1.out and $1.err, the exit code
# into $1.rc, wall-clock lines dropped.
snap() {
  name=$1
  shift
  (cd "$root" && "$binary" "$@") >"$out/$name.out" 2>"$out/$name.err"
  echo $? >"$out/$name.rc"
  sed -i -E "/ in [0-9.]+ (s|ms)\$/d; /elapsed|seconds? (of|on) /d; s|$out|OUT|g" "$out/$name.out" "$out/$name.err"
}

for scenario in $(cd "$root/share" && find scenarios -name "*.yaml" | sort); do  # shipped files by their name under share/
  id=$(echo "$scenario" | tr '/' '_')
  snap "run_$id" run "$scenario" -q --json "$out/run_$id.json" --csv "$out/run_$id.csv"
done
snap run_default_trace run scenarios/default.yaml -q --schedules 1f1b-flush,paci --trace "$out/trace.json"
snap run_zb_trace run scenarios/zb/1.5B-N8-m24.yaml -q --schedules zb-h1 --trace "$out/trace_zb.json"
for schedule in gpipe 1f1b-flush interleaved-1f1b zb-h1 zb-h2 zb-v v-half dualpipe-v dualpipe chimera paci pipedream; do
  snap "show_$schedule" show "$schedule" -N 4 -m 8
  snap "export_$schedule" export "$schedule" -N 4 -m 8
done
snap check_grid check --stages 2,3,4 --seeds 2 -j 2 --json "$out/check.json"
snap check_scenario check scenarios/paci/example.yaml --seeds 3 -j 1
snap sweep sweep scenarios/default.yaml -N 2,4,8 -m 4:32:x2 -j 2 -o "$out/sweep.csv"
snap sweep_params sweep scenarios/zb/1.5B-N8-m24.yaml --schedules zb-2p --param memory_limit=1:2:+0.5 -o "$out/sweep_params.csv"
for scenario in scenarios/default.yaml scenarios/quickstart/llama2-7b-h100.yaml scenarios/zb/6.2B-N8-m24.yaml; do
  id=$(echo "$scenario" | tr '/' '_')
  snap "costs_$id" costs "$scenario"
done
snap extrapolate extrapolate --models 1.5B,6.2B --csv "$out/extrapolate.csv" --markdown "$out/extrapolate.md"
if "$binary" execute --help >/dev/null 2>&1; then
  snap execute_scenario execute scenarios/executor/fashion-mlp.yaml --clock scenario --csv "$out/execute.csv"
fi
echo "snapshot in $out: $(ls "$out" | wc -l) files"
