#pragma once
// `pipesim sweep`: the product of lists of N, m, schedules and schedule parameters, run on a thread pool, one
// CSV row per run. Rows come in the order of the product whatever the number of threads, and each row equals
// the row of the same run made alone.
#include <string>
#include <utility>
#include <vector>

namespace pipesim {

// Expands "4,8,16" (a list), "4:64:x2" (geometric: 4, 8, ..., up to 64) or "0.5:2:+0.25" (arithmetic); lists
// and ranges mix: "1,2,8:32:x2". `option` names the list in errors. Numbers keep their written form in lists
// and are printed with %g in ranges.
std::vector<std::string> expand_value_list(const std::string& text, const std::string& option);
std::vector<int> expand_int_list(const std::string& text, const std::string& option, int min_value);

struct SweepConfig {
  std::string scenario_path;
  std::vector<std::string> overrides;  // --set, applied to every run
  std::vector<int> stages;             // empty: the scenario's
  std::vector<int> microbatches;       // empty: the scenario's
  std::string schedules;               // select_schedules syntax; empty: the scenario's
  std::vector<std::pair<std::string, std::vector<std::string>>>
      params;             // --param key=list or schedule:key=list (cli/sweep_params.h)
  int jobs = 0;           // threads; 0: every core
  bool progress = false;  // progress bar with ETA on stderr
};

struct SweepTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  int failed = 0;  // runs whose error column is set
};

// Columns: schedule_name, one per --param, csv_header() of cli/report.h, error. A run that fails (e.g. m not
// a multiple of N for interleaved-1f1b) keeps its row with the message in `error` and the metrics empty.
SweepTable run_sweep(const SweepConfig& config);
std::string sweep_to_csv(const SweepTable& table);

}  // namespace pipesim
