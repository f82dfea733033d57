#!/usr/bin/env bash
# Runs clang-tidy (.clang-tidy: function size and naming) on the C++ files a change touches: those changed
# since BASE (default: the commit before HEAD, so CI checks the last commit; `scripts/tidy.sh main` checks a
# branch), plus each changed header's .cpp of the same name. Tests and fuzz targets are left out (a test may
# be long: it is a list of cases). Needs build/compile_commands.json (any configure of build/ writes it); the
# precompiled-header flags in it are gcc's, so a copy without them (and with a unity build's batches
# unfolded into their files) is what clang-tidy reads.
# Exit 1 when a check fails, naming the file, line and check.
set -euo pipefail
cd "$(dirname "$0")/.."
base="${1:-HEAD~1}"
if [ ! -f build/compile_commands.json ]; then
  echo "tidy: no build/compile_commands.json; configure first (scripts/build.sh)" >&2
  exit 2
fi
if ! git rev-parse -q --verify "$base^{commit}" >/dev/null; then
  echo "tidy: '$base' names no commit; nothing to compare with, nothing checked" >&2
  exit 0
fi
mapfile -t changed < <(git diff --name-only --diff-filter=AMR "$base" -- '*.cpp' '*.h' |
  grep -Ev '^(tests|fuzz|bench|build[^/]*)/' || true)
files=()
for f in "${changed[@]}"; do
  case "$f" in
    *.h) [ -f "${f%.h}.cpp" ] && files+=("${f%.h}.cpp") ;;
    *) files+=("$f") ;;
  esac
done
mapfile -t files < <(printf '%s\n' "${files[@]}" | sort -u | grep -v '^$' || true)
if [ ${#files[@]} -eq 0 ]; then
  echo "tidy: no C++ source changed since $base"
  exit 0
fi
mkdir -p build/tidy
/usr/bin/python3 - <<'PY'
import json, re
entries = json.load(open("build/compile_commands.json"))
out = []
for e in entries:
    e["command"] = re.sub(r"\s-include \S*cmake_pch\.hxx|\s-Winvalid-pch", "", e["command"])
    # A unity build (PIPESIM_UNITY_BUILD) compiles generated files that include the sources: each source gets
    # its batch's command, so the files are checked one by one all the same.
    if re.search(r"/Unity/unity_\d+_cxx\.cxx$", e["file"]):
        for source in re.findall(r'^#include "(.+)"$', open(e["file"]).read(), re.M):
            out.append(dict(e, file=source, command=e["command"].replace(e["file"], source)))
    else:
        out.append(e)
json.dump(out, open("build/tidy/compile_commands.json", "w"))
PY
status=0
for f in "${files[@]}"; do
  if ! grep -q "\"file\": \"$PWD/$f\"" build/tidy/compile_commands.json; then
    echo "tidy: $f is not compiled in this configuration; skipped"
    continue
  fi
  out=$(clang-tidy -p build/tidy --quiet --extra-arg=-Wno-unknown-warning-option "$f" 2>&1) || {
    status=1
    echo "$out" | grep -E "(warning|error):" | grep -v "warnings generated" || echo "$out"
  }
done
echo "tidy: ${#files[@]} file(s) changed since $base checked, $([ $status -eq 0 ] && echo clean || echo 'see above')"
exit $status
