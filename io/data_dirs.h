#pragma once
// Where pipesim finds its data files (hardware profiles, the Zero Bubble reference data, the default
// scenario), in this order (docs/design.md, "Data files"):
//   1. --data-dir DIR (set_data_dir), 2. the PIPESIM_DATA_DIR environment variable,
//   3. share/pipesim beside the running binary (<prefix>/bin/pipesim -> <prefix>/share/pipesim),
//   4. share/pipesim under the configured install prefix, 5. share/ in the source tree the binary was built
//   from.
// Each directory holds the layout of the source tree's share/ (which is what `cmake --install` copies):
// scenarios/, studies/, profiles/, data/ (reference data, measured layer times), corpus/ (the executor's
// text).
#include <string>
#include <vector>

namespace pipesim {

struct DataDirCandidate {
  std::string directory;
  std::string origin;  // "--data-dir", "PIPESIM_DATA_DIR", "beside the binary", ...
};

// An empty string clears it. Set once, before any run reads data (the CLI's --data-dir). InputError when it
// is not a directory.
void set_data_dir(const std::string& directory);

// The directories searched, in order; unset ones are left out. InputError when PIPESIM_DATA_DIR is set and
// is not a directory.
std::vector<DataDirCandidate> data_dir_candidates();

// A scenario or study file named by the user: `path` itself when it exists (or is absolute), else the file of
// that relative name under the first data directory that has it, so that `scenarios/default.yaml` names the
// shipped scenario from any directory; else `path` unchanged, for the reader's own "cannot open" error.
std::string input_or_data_path(const std::string& path);

// `relative` (e.g. "scenarios/default.yaml" or "data/zero_bubble") under the first candidate that has it.
// Throws InputError naming `what` and every place it looked.
std::string find_data_path(const std::string& relative, const std::string& what);

}  // namespace pipesim
