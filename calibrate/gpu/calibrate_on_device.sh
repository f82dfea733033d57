#!/usr/bin/env bash
# One prepared run on a lent GPU machine: builds pipesim-gpu-calibrate unless a working build is given,
# calibrates the GPU, then times real transformer layers with PyTorch (torch_layer_times.py) as ground truth
# for the cost model. Everything lands in $OUT (default ./out): the profile, the layer times and the logs.
#   calibrate/gpu/calibrate_on_device.sh [PREBUILT_BINARY]
set -u
out=${OUT:-out}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,power.limit,temperature.gpu \
  --format=csv 2>&1 | tee "$out/nvidia-smi.csv"
lscpu 2>/dev/null | grep -E '^(Model name|CPU\(s\)|Socket)' | tee "$out/host.txt"
binary=${1:-}
if [ -z "$binary" ] || ! "$binary" --quick --repeats 1 -o /tmp/quick.yaml >/tmp/quick.log 2>&1; then
  [ -n "$binary" ] && { echo "prebuilt $binary does not run here:"; cat /tmp/quick.log; }
  binary=/tmp/pipesim-gpu-calibrate
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  "$nvcc" -O2 -std=c++17 -arch=sm_90 -o "$binary" "$here/cuda_calibrate.cu" -lcublas || exit 1
fi
start=$(date +%s)
timeout 300 "$binary" -o "$out/nvidia-h200.yaml" 2>&1 | tee "$out/calibrate.log"
echo "calibration: $(( $(date +%s) - start )) s"
start=$(date +%s)
PYTHONUNBUFFERED=1 timeout 200 python3 "$here/torch_layer_times.py" -o "$out/h200-layer-times.csv" 2>&1 |
  tee "$out/layer-times.log"
echo "layer times: $(( $(date +%s) - start )) s"
ls -la "$out"
