#!/usr/bin/env bash
# Installs the Debian packages pipesim needs, only those that are missing.
# Idempotent and quiet when everything is already there.
set -euo pipefail

packages=(cmake g++ make ccache libgtest-dev libbenchmark-dev libboost-graph-dev libfmt-dev libcli11-dev
          libyaml-cpp-dev nlohmann-json3-dev libtomlplusplus-dev python3-matplotlib clang-format
          clang-tidy  # scripts/tidy.sh: function size and naming (.clang-tidy)
          libopenblas-dev
          pybind11-dev python3-dev  # the Python module (python/), built for /usr/bin/python3
          mpich libmpich-dev  # the executor's mpi transport (one rank per device under mpiexec)
          zlib1g-dev dataset-fashion-mnist fortunes  # the executor's data readers and two of its corpora
          python3-jsonschema  # tests validate result JSON against schema/pipesim-result.v1.schema.json
          clang libclang-rt-14-dev)  # clang and its libFuzzer runtime: scripts/sanitize.sh, scripts/fuzz.sh

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

sudo_cmd=""
if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi
updated=0
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  $sudo_cmd apt-get update -qq >/dev/null
  updated=1
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Jane Austen's novels for the executor's character GPT (executor/README.md): the R package's data files,
# unpacked from the Debian package without installing R, where executor/corpus_readers.h looks for them.
austen_dir=/usr/local/share/pipesim/janeaustenr
if [ ! -f "$austen_dir/data/Rdata.rdb" ]; then
  echo "setup: unpacking r-cran-janeaustenr into $austen_dir" >&2
  if [ "$updated" -eq 0 ]; then $sudo_cmd apt-get update -qq >/dev/null; fi
  work=$(mktemp -d)
  chmod 755 "$work"  # apt-get download as root hands the file to the _apt user
  (cd "$work" && apt-get download -qq r-cran-janeaustenr >/dev/null && dpkg -x r-cran-janeaustenr_*.deb unpacked)
  $sudo_cmd mkdir -p "$austen_dir"
  $sudo_cmd cp -r "$work"/unpacked/usr/lib/R/site-library/janeaustenr/. "$austen_dir"/
  rm -rf "$work"
fi
