#!/usr/bin/env bash
# Fails when a tracked C++/CUDA source is not clang-formatted (.clang-format); lists the files to fix.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.cu' 2>/dev/null || find . -name '*.cpp' -o -name '*.h' -o -name '*.cu')
# All files in batches on every core; only when some batch fails is each file checked alone, to name it.
if printf '%s\0' "${files[@]}" | xargs -0 -P "$(nproc)" -n 24 clang-format --dry-run --Werror >/dev/null 2>&1; then
  echo "check_format: ${#files[@]} files clang-formatted"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then bad+=("$f"); fi
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "check_format: not clang-formatted (run: clang-format -i FILE):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "check_format: ${#files[@]} files clang-formatted"
