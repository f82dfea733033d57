#pragma once
// Where pipesim finds its data files (hardware profiles, the Zero Bubble reference data, the default
// scenario), in this order (docs/design.md, "Data files"):
//   1. --data-dir DIR (set_data_dir), 2. the PIPESIM_DATA_DIR environment variable,
//   3. share/pipesim beside the running binary (<prefix>/bin/pipesim -> <prefix>/share/pipesim),
//   4. share/pipesim under the configured install prefix, 5. the source tree the binary was built from.
// Each directory holds the source tree's layout: scenarios/, gpu_calibration/profiles/, data/zero_bubble/.
#include <string>
#include <vector>

namespace pipesim {

struct DataDirCandidate {
  std::string directory;
  std::string origin;  // "--data-dir", "PIPESIM_DATA_DIR", "beside the binary", ...
};

// An empty string clears it. Set once, before any run reads data (the CLI's --data-dir).
void set_data_dir(const std::string& directory);

// The directories searched, in order; unset ones are left out.
std::vector<DataDirCandidate> data_dir_candidates();

// `relative` (e.g. "scenarios/default.yaml" or "data/zero_bubble") under the first candidate that has it.
// Throws InputError naming `what` and every place it looked.
std::string find_data_path(const std::string& relative, const std::string& what);

}  // namespace pipesim
