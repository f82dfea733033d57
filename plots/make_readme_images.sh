#!/usr/bin/env bash
# Regenerates the images README.md shows (docs/img/*.png) with pipesim and the plot scripts, and lists which it
# regenerated and which it skipped and why. The study_* and validate_* images come from other commands (README,
# "Learning studies" and "Validation against the executor") and are redrawn only with --all. Exits 1 when README
# shows an image this script has no recipe for, so that none goes stale unnoticed.
# usage: plots/make_readme_images.sh [--all] [--out DIR] [PIPESIM_BINARY]   (defaults: docs/img, build/pipesim)
set -euo pipefail
all=0
out=
pipesim=
while [ $# -gt 0 ]; do
  case "$1" in
    --all) all=1 ;;
    --out) out=$2; shift ;;
    -h|--help) sed -n '2,6s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) pipesim=$1 ;;
  esac
  shift
done
# Paths given relative to the caller's directory, before moving to the repository root (the defaults' base).
[ -n "$out" ] && out=$(mkdir -p "$out" && cd "$out" && pwd)
[ -e "$pipesim" ] && pipesim=$(cd "$(dirname "$pipesim")" && pwd)/$(basename "$pipesim")
cd "$(dirname "$0")/.."
out=${out:-$PWD/docs/img}
pipesim=${pipesim:-$PWD/build/pipesim}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
made=()
skipped=()

# Uniform stages, F = I = W = 1 ms (B = 2 ms): the closed forms hold exactly. W keeps half of the activations
# (M_W = M_B / 2; a transformer layer keeps 32sbh of 34sbh + 5as^2b).
cat >"$work/uniform.yaml" <<'YAML'
name: uniform
pipeline: {stages: 4, microbatches: 8, batches: 4}
costs: {forward_ms: 1, backward_input_ms: 1, backward_weight_ms: 1, weight_grad_activation_bytes: 500000}
YAML

# One batch of N = 4, m = 8 with a 0.25 ms link latency: 1F1B against the Zero Bubble schedules.
"$pipesim" run "$work/uniform.yaml" --set pipeline.batches=1 --set costs.comm_ms=0.25 \
  --schedules 1f1b-flush,zb-h1,zb-2p --trace "$work/trace.json" >/dev/null
plots/gantt.py "$work/trace.json" -o "$out/gantt.png" \
  --title "N=4, m=8, F=I=W=1 ms, 0.25 ms comm: one batch"
made+=(gantt.png)

"$pipesim" sweep "$work/uniform.yaml" --stages 4,8 --microbatches 4:64:x2 -q \
  --schedules gpipe,1f1b-flush,interleaved-1f1b,zb-h1,zb-2p --out "$work/bubble_vs_m.csv"
plots/bubble_vs_m.py "$work/bubble_vs_m.csv" -o "$out/bubble_vs_m.png" \
  --title "Uniform stages, F=I=W=1 ms, no comm: steady-state bubble"
made+=(bubble_vs_m.png)

# The Zero Bubble paper's 1.5B model (profiled A100 times, the paper's M_B and M_W), the search under a
# sliding memory limit (from 1: below N * M_B the greedy has no list).
"$pipesim" sweep scenarios/zb/1.5B-N8-m24.yaml --schedules zb-1p --param memory_limit=1:2.5:+0.125 -q \
  --out "$work/zb.csv"
"$pipesim" sweep scenarios/zb/1.5B-N8-m24.yaml --schedules 1f1b-flush,zb-h1,zb-h2 -q --out "$work/ref.csv"
plots/bubble_vs_memory.py "$work/zb.csv" "$work/ref.csv" -o "$out/bubble_vs_memory.png" \
  --title "1.5B model, N=8, m=24 (ZB paper's profiled times, M_B and M_W): bubble against the activation limit"
made+=(bubble_vs_memory.png)

# The V, bidirectional and loop placements against 1F1B (scenarios/v_placement.yaml names these commands).
"$pipesim" run scenarios/v_placement.yaml --trace "$work/v.json" >/dev/null
plots/gantt.py "$work/v.json" -o "$out/v_schedules.png" --max-ms 60
made+=(v_schedules.png)

# DualPipeV's fused slots hiding the expert all-to-alls, against 1F1B and ZB-H1 on the same MoE job.
"$pipesim" run scenarios/moe/deepseek-v3-like-overlap.yaml --set pipeline.batches=1 --trace "$work/moe.json" >/dev/null
plots/gantt.py "$work/moe.json" -o "$out/moe_overlap.png" --max-ms 6200 \
  --title "DeepSeek-V3-like layers, 4 stages, EP 64 over 8 nodes (H800): the first batch"
made+=(moe_overlap.png)

# The quickstart model on H100s: the fastest schedule that fits, per N and m.
"$pipesim" sweep scenarios/quickstart/llama2-7b-h100.yaml -N 2,4,8,16 -m 4,8,16,32,64 \
  --set pipeline.global_batch=64 --schedules 1f1b-flush,interleaved-1f1b,zb-h1,zb-h2,zb-v,v-half,v-min -q \
  --out "$work/best.csv"
plots/best_schedule_heatmap.py "$work/best.csv" -o "$out/best_schedule_heatmap.png" \
  --title "Llama-2-7B on 80 GB H100s (quickstart), global batch 64: fastest schedule that fits"
made+=(best_schedule_heatmap.png)

# The studies' curves (docs/results/) come from `pipesim train studies/NAME.yaml -j2` (12-18 min each); --all
# redraws the images from the committed curves, it does not train.
study_images=(study_one_step_delay_time.png study_paci_scaled_time.png study_paci_scaled_speedup.png)
if [ "$all" = 1 ]; then
  plots/study.py docs/results/one-step-delay.csv -o "$work/one_step_delay"
  plots/study.py docs/results/paci-scaled.csv -o "$work/paci_scaled"
  cp "$work/one_step_delay-time.png" "$out/study_one_step_delay_time.png"
  cp "$work/paci_scaled-time.png" "$out/study_paci_scaled_time.png"
  cp "$work/paci_scaled-speedup.png" "$out/study_paci_scaled_speedup.png"
  made+=("${study_images[@]}")
else
  for image in "${study_images[@]}"; do
    study=${image#study_}
    study=${study%_*}
    study=${study//_/-}
    skipped+=("$image: from docs/results/$study.csv, the curves of \`pipesim train studies/$study.yaml -j2\`;\
 --all redraws it from them")
  done
fi

# pipesim validate calibrates this machine, trains on its cores and measures it (about 45 s at N = 2, 200 s at N = 8
# on 2 cores).
validate_images=(validate_n2_real.png validate_n8_replay.png)
if [ "$all" = 1 ]; then
  "$pipesim" validate scenarios/executor/validate.yaml --calibrate --json "$work/n2.json" >/dev/null
  plots/validate.py "$work/n2.json" "$out/validate_n2_real.png" >/dev/null
  "$pipesim" validate scenarios/executor/validate.yaml --calibrate --set pipeline.stages=8 \
    --json "$work/n8.json" >/dev/null
  plots/validate.py "$work/n8.json" "$out/validate_n8_replay.png" >/dev/null
  made+=("${validate_images[@]}")
else
  for image in "${validate_images[@]}"; do
    skipped+=("$image: measured by \`pipesim validate scenarios/executor/validate.yaml --calibrate\`\
 (N = 8: --set pipeline.stages=8) on this machine's cores; --all runs it")
  done
fi

echo "regenerated in $out:"
printf '  %s\n' "${made[@]}"
if [ ${#skipped[@]} -gt 0 ]; then
  echo "skipped (left as they are):"
  printf '  %s\n' "${skipped[@]}"
fi
unknown=0
for image in $(grep -o 'docs/img/[A-Za-z0-9_.-]*\.png' README.md | sort -u); do
  name=${image#docs/img/}
  if [[ " ${made[*]} ${study_images[*]} ${validate_images[*]} " != *" $name "* ]]; then
    echo "README.md shows $image, which this script does not make" >&2
    unknown=1
  fi
done
exit $unknown
