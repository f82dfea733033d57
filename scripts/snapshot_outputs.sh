#!/usr/bin/env bash
# Writes what the commands print for every shipped scenario into DIR, one file per command, so that a change
# meant to keep every output (a refactoring) can be checked: scripts/snapshot_outputs.sh PIPESIM DIR before
# and after, then `diff -r` the two directories. Each file holds the command line, its exit status, its
# standard output and standard error; the one wall time (plan's search) is replaced by "(time)", every
# other figure is kept. Covers: `run` (table and JSON) and `costs` of every shipped scenario; `plan` of the
# 70B and quickstart scenarios on 64 GPUs; `schedules`; `show` and `export` of five schedules; `import` of
# the fuzz seeds (fuzz/seeds/); every command's --help.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ $# -ne 2 ] || [ ! -x "$1" ]; then
  echo "usage: scripts/snapshot_outputs.sh PIPESIM DIR" >&2
  exit 2
fi
out="$2"
mkdir -p "$out/.bin"
# Run as "pipesim" from PATH, so that the usage lines (argv[0]) do not name where the binary is.
ln -sf "$(realpath "$1")" "$out/.bin/pipesim"
export PATH="$(realpath "$out/.bin"):$PATH"
count=0
snap() {  # NAME ARGS...: one command's outputs into $out/NAME.txt
  local name="$1"
  shift
  local status
  {
    echo "\$ pipesim $*"
    pipesim "$@" >"$out/.stdout" 2>"$out/.stderr"
    status=$?
    echo "exit $status"
    echo "--- stdout"
    cat "$out/.stdout"
    echo "--- stderr"
    cat "$out/.stderr"
  } | sed -E 's/configurations in [0-9.]+ s:/configurations in (time) s:/' \
    >"$out/$name.txt"
  count=$((count + 1))
}
for scenario in $(cd share && find scenarios -name '*.yaml' | sort); do
  name="$(echo "$scenario" | tr / -)"
  snap "run-$name" run "$scenario"
  snap "run-json-$name" run "$scenario" --json -
  snap "costs-$name" costs "$scenario"
done
for scenario in scenarios/transformer/llama3-70b-h100.yaml scenarios/quickstart/llama2-7b-h100.yaml; do
  snap "plan-$(basename "$scenario" .yaml)" plan "$scenario" --gpus 64 --top 3
done
snap schedules schedules
for schedule in gpipe 1f1b-flush zb-h1 zb-v pipedream-2bw; do
  snap "show-$schedule" show "$schedule" -N 4 -m 8
  snap "export-$schedule" export "$schedule" -N 4 -m 8 --costs 1,1,1 --csv -
done
for file in fuzz/seeds/hf_config_reader/*.json; do
  snap "import-hf-$(basename "$file" .json)" import hf "$file" --seq-len 4096
done
for file in fuzz/seeds/torchtitan_config_reader/*.toml; do
  snap "import-torchtitan-$(basename "$file" .toml)" import torchtitan "$file"
done
for file in fuzz/seeds/megatron_args_reader/*.txt; do
  # The seed's first byte is the fuzz target's option byte: the arguments follow it.
  read -r -a args <<<"$(tail -c +2 "$file")"
  snap "import-megatron-$(basename "$file" .txt)" import megatron --vocab 50257 -- "${args[@]}"
done
snap help --help
for command in run schedules costs calibrate extrapolate check export show sweep plan execute validate train \
  "import hf" "import megatron" "import torchtitan" "import trace"; do
  # shellcheck disable=SC2086 # the command's words
  snap "help-${command// /-}" $command --help
done
rm -rf "$out/.stdout" "$out/.stderr" "$out/.bin"
echo "snapshot: $count outputs in $out" >&2
