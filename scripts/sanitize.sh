#!/usr/bin/env bash
# The unit tests and a small `pipesim check` grid under AddressSanitizer + UndefinedBehaviorSanitizer
# (build-asan/, scripts/sanitize_build.sh). Any sanitizer report aborts the test that triggered it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/sanitize_build.sh --target pipesim pipesim_tests
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
build-asan/pipesim_tests --gtest_brief=1
build-asan/pipesim check --stages 2,3,4 --seeds 2
