#!/usr/bin/env bash
# Installs what is missing, builds, and runs pipesim on the built-in default scenario.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
build/pipesim run "$@"
