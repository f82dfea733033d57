#!/usr/bin/env bash
# Installs what is missing, checks formatting, builds, and runs every test (unit tests and the CLI's invariant check).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/check_format.sh
scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
