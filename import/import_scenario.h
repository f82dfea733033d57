#pragma once
// `pipesim import`: a scenario a user can edit and run, written from another tool's description of the model.
#include <string>
#include <vector>

#include "import/model_import.h"

namespace pipesim {

// What the model's file does not say: the hardware, the pipeline and the schedules the scenario starts with.
struct ImportSettings {
  std::string name;                        // the scenario's name
  std::string profile = "h100-sxm5-80gb";  // a shipped profile's name or a path
  int stages = 4;                          // pipeline stages, one per device
  int microbatches = 8;                    // m
  int global_batch = 0;                    // B in sequences; 0: m (one sequence per microbatch)
  std::string origin;                      // the command that made it, for the file's first line
  std::string schedules = "[gpipe, 1f1b-flush, zb-h1, zb-h2, pipedream-2bw]";  // the YAML list
  std::vector<std::string> pipeline_notes;  // how the pipeline and schedules were chosen, for the comments
  bool pipeline_from_options = true;        // the hardware and pipeline come from the importer's options
  std::string layer_split;                  // "" (the default, even), zb or balanced
  // GiB of each device a run cannot use (CUDA context, NCCL buffers, allocator fragmentation): written as
  // hardware.reserve_gb where the profile states a capacity above twice it, so that no plan fills the
  // device to its last byte.
  double reserve_gb = 4;
};

// "name: NAME\n" for a scenario an importer writes: the --name as given, double-quoted where YAML would read
// it otherwise ("a: b" breaks the line, "#1" and "null" read as nothing).
std::string imported_name_line(const std::string& name);

// Reads an importer's text back as a scenario (what it writes must be one); InputError "<what> does not read
// back: ..." otherwise, the text named as "the imported scenario", not a file that does not exist.
void expect_imported_scenario_reads_back(const std::string& text, const std::string& what);

// The scenario's YAML text: the imported model with comments listing what was read, what was assumed and
// what the figures ignore or cannot represent, then the settings' hardware and pipeline, marked as the
// importer's choice. Read back as a scenario before it is returned: InputError when it does not read; a
// profile that does not exist is named with its option (--profile).
std::string scenario_from_import(const ModelImport& imported, const ImportSettings& settings);

}  // namespace pipesim
