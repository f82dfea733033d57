#!/usr/bin/env bash
# Installs the Debian packages pipesim needs, only those that are missing.
# Idempotent and quiet when everything is already there.
set -euo pipefail

packages=(cmake g++ make ccache libgtest-dev libbenchmark-dev libboost-graph-dev libfmt-dev libcli11-dev
          libyaml-cpp-dev nlohmann-json3-dev python3-matplotlib clang-format
          libopenblas-dev
          python3-jsonschema  # tests validate result JSON against schema/pipesim-result.v1.schema.json
          clang libclang-rt-14-dev)  # clang and its libFuzzer runtime: scripts/sanitize.sh, scripts/fuzz.sh

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}" >&2
sudo_cmd=""
if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi
$sudo_cmd apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
