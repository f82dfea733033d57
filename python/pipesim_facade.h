#pragma once
// The Python module's one door into the library: plain strings and numbers in, the text the CLI itself writes
// (its JSON document, its CSV) out. The module only turns that text into Python objects, so its results are
// the CLI's by construction; this file and its .cpp are the only ones that name the library's headers.
#include <string>
#include <utility>
#include <vector>

namespace pipesim::facade {

// A scenario: a file, or YAML text (JSON is YAML) named `source` in error messages; both empty: the default
// scenario, as `pipesim run` without one.
struct ScenarioInput {
  std::string path;
  std::string text;
  std::string source;
};

struct RunOptions {
  std::string schedules;               // `--schedules` syntax; empty: the scenario's
  std::vector<std::string> overrides;  // `--set key=value`
  bool memory_timeline = false;        // `--memory-timeline`
  bool allow_unmodelled = false;       // `--allow-unmodelled` (api/unmodelled_check.h)
};

// `pipesim run --json`: the JSON document's text.
std::string run_json(const ScenarioInput& scenario, const RunOptions& options);

struct SweepOptions {
  std::string stages;        // `--stages` list syntax ("4,8" or "4:64:x2"); empty: the scenario's
  std::string microbatches;  // `--microbatches`, same syntax
  std::string schedules;     // `--schedules`
  std::vector<std::pair<std::string, std::string>> params;  // `--param key=LIST` as (key, LIST)
  std::vector<std::string> overrides;                       // `--set key=value`
  int jobs = 0;                                             // threads; 0: every core
  bool allow_unmodelled = false;                            // `--allow-unmodelled`
};

// `pipesim sweep` (scenario files only, as the CLI): the CSV text it writes, failed runs included (their
// message in the error column).
std::string sweep_csv(const std::string& scenario_path, const SweepOptions& options);

// `pipesim schedules`: [{"name", "description", "default_sync", "splits_backward", "exportable"}, ...].
std::string schedules_json();

// `pipesim export SCHEDULE --stages --microbatches --chunks --costs --comm`: the PyTorch CSV text.
struct ExportOptions {
  std::string schedule;  // name, name:key=value or csv:PATH
  int stages = 4;
  int microbatches = 8;
  int chunks = 0;               // 0: the schedule's default
  std::string costs = "1,1,1";  // F,B or F,I,W in ms
  std::string comm_ms = "0";
};
std::string export_csv(const ExportOptions& options);

// `--max-memory-gb`: the ceiling every later run of this module is checked against (as the CLI's option is
// for every run of one command).
void set_max_memory_gb(double gb);
double max_memory_gb();

}  // namespace pipesim::facade
