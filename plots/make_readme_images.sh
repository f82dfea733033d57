#!/usr/bin/env bash
# Regenerates docs/img/{gantt,bubble_vs_m,bubble_vs_memory}.png with pipesim and the plot scripts.
# usage: plots/make_readme_images.sh [PIPESIM_BINARY]   (default: build/pipesim)
set -euo pipefail
cd "$(dirname "$0")/.."
pipesim=${1:-build/pipesim}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

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
plots/gantt.py "$work/trace.json" -o docs/img/gantt.png \
  --title "N=4, m=8, F=I=W=1 ms, 0.25 ms comm: one batch"

"$pipesim" sweep "$work/uniform.yaml" --stages 4,8 --microbatches 4:64:x2 -q \
  --schedules gpipe,1f1b-flush,interleaved-1f1b,zb-h1,zb-2p --out "$work/bubble_vs_m.csv"
plots/bubble_vs_m.py "$work/bubble_vs_m.csv" -o docs/img/bubble_vs_m.png \
  --title "Uniform stages, F=I=W=1 ms, no comm: steady-state bubble"

# The Zero Bubble paper's 1.5B model (profiled A100 times, the paper's M_B and M_W), the search under a
# sliding memory limit (from 1: below N * M_B the greedy has no list).
"$pipesim" sweep scenarios/zb/1.5B-N8-m24.yaml --schedules zb-1p --param memory_limit=1:2.5:+0.125 -q \
  --out "$work/zb.csv"
"$pipesim" sweep scenarios/zb/1.5B-N8-m24.yaml --schedules 1f1b-flush,zb-h1,zb-h2 -q --out "$work/ref.csv"
plots/bubble_vs_memory.py "$work/zb.csv" "$work/ref.csv" -o docs/img/bubble_vs_memory.png \
  --title "1.5B model, N=8, m=24 (ZB paper's profiled times, M_B and M_W): bubble against the activation limit"
