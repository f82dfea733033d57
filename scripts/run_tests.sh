#!/usr/bin/env bash
# Installs what is missing, checks formatting, builds, runs clang-tidy on the last commit's C++ files
# (scripts/tidy.sh), and runs every test: the Release build's ctest (the
# CLI's invariant check, the Python module, the fuzz regressions, the quick learning studies, the README's
# outputs), then the unit tests and a `pipesim check` grid under ASan + UBSan (scripts/sanitize.sh) and 30 s
# of libFuzzer on each input reader (scripts/fuzz.sh). `--no-sanitizers` builds the unit tests in Release and
# stops after ctest (a quicker loop while developing; CI runs everything). Each phase prints its time.
set -euo pipefail
cd "$(dirname "$0")/.."
# The test command builds with warnings as errors (CMake option PIPESIM_WERROR, passed on by scripts/build.sh
# and scripts/sanitize_build.sh); scripts/run_default.sh and plain builds do not, so a newer compiler's new
# warnings never stop a user's build. PIPESIM_WERROR=OFF scripts/run_tests.sh turns it off.
export PIPESIM_WERROR="${PIPESIM_WERROR:-ON}"
sanitizers=1
for arg in "$@"; do
  case "$arg" in
    --no-sanitizers) sanitizers=0 ;;
    -h | --help)
      sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "run_tests.sh: unknown argument '$arg' (expected --no-sanitizers or --help)" >&2
      exit 2
      ;;
  esac
done
phase() {
  local name="$1"
  shift
  local start=$SECONDS
  "$@"
  echo "run_tests: $name took $((SECONDS - start)) s" >&2
}
# With the sanitizers the unit tests run once, in the instrumented build (scripts/sanitize.sh): the Release
# build leaves their executables out and its ctest runs the rest (the CLI's checks, the Python module, the
# fuzz regressions, the learning studies, the README's outputs). --no-sanitizers builds and runs them here.
# That Release tree is then compiled as a unity build (scripts/build.sh): from scratch, as in CI, 203 s
# instead of 383 s here.
if [ "$sanitizers" -eq 1 ]; then
  export PIPESIM_UNIT_TESTS=OFF
  export PIPESIM_UNITY_BUILD="${PIPESIM_UNITY_BUILD:-ON}"
else
  export PIPESIM_UNIT_TESTS=ON
fi
phase setup scripts/setup.sh
phase format scripts/check_format.sh
phase build scripts/build.sh
phase tidy scripts/tidy.sh
phase ctest ctest --test-dir build --output-on-failure -j"$(nproc)"
if [ "$sanitizers" -eq 1 ]; then
  phase "sanitizer build" scripts/sanitize_build.sh
  phase "sanitizer tests" scripts/sanitize.sh
  phase fuzzing scripts/fuzz.sh 30
fi
