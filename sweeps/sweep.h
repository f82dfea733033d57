#pragma once
// `pipesim sweep`: the product of lists of N, m, schedules and schedule parameters, run on a thread pool, one
// CSV row per run. Rows come in the order of the product whatever the number of threads, and each row equals
// the row of the same run made alone. Rows are streamed: each is handed on as soon as it and every row before
// it are done, so memory holds only rows finished out of order (at most a window of them: workers wait
// rather than run far ahead of the oldest unfinished row).
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "sim/limits.h"

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
  std::vector<int> microbatches;       // empty: the scenario's (and each entry's own); given: every run's
  std::string schedules;               // select_schedules syntax; empty: the scenario's
  std::string entries;                 // --entry: the scenario's entries "1,3" (not with schedules)
  std::vector<std::pair<std::string, std::vector<std::string>>>
      params;             // --param key=list or schedule:key=list (sweeps/sweep_params.h)
  int jobs = 0;           // threads; 0: every core
  bool progress = false;  // progress bar with ETA on stderr (weighted by each run's expected ops)
  // Run only shard `shard_index` (1-based) of `shard_count`: contiguous blocks of the product holding about
  // equal expected work, so shards 1..n together are the whole sweep in order.
  int shard_index = 1;
  int shard_count = 1;
  // Inside an MpiSession (distributed/mpi_session.h): rank 0 hands the runs out to the other ranks, the most
  // expected ops first, and writes the rows in the product's order; the other ranks only run what they are
  // handed (their sink is never called). The rows are the same as with threads.
  bool mpi = false;
  bool allow_unmodelled = false;  // --allow-unmodelled (api/unmodelled_check.h)
  Limits limits;                  // each run's ceilings, and the sweep's in all (sim/limits.h)
};

// "i/n" (1 <= i <= n) as {i, n}; names --shard in errors.
std::pair<int, int> parse_shard(const std::string& text);

struct SweepTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  int failed = 0;   // runs whose error column is set by a failure
  int skipped = 0;  // runs whose error column says why the schedule cannot run at that point
};

// Columns: schedule_name, one per --param, csv_header() of report/report.h, error. A run that cannot happen
// keeps its row with the message in `error` and the metrics empty: skipped when the schedule's rules refuse
// that point (e.g. m not a multiple of N for interleaved-1f1b) or it deadlocks, failed otherwise (a resource
// ceiling, an internal error).
SweepTable run_sweep(const SweepConfig& config);
std::string sweep_to_csv(const SweepTable& table);

// The streamed form: `header` once, then `row` for every run in order. Returns what a report needs.
struct SweepSink {
  std::function<void(const std::vector<std::string>& header)> header;
  std::function<void(const std::vector<std::string>& row)> row;
};
struct SweepSummary {
  std::vector<std::string> header;
  size_t rows = 0;
  int failed = 0;
  size_t first_failed_index = 0;              // its position among the rows written (0-based)
  std::vector<std::string> first_failed_row;  // empty when no run failed
  int skipped = 0;
  size_t first_skipped_index = 0;
  std::vector<std::string> first_skipped_row;  // empty when no run was skipped
  bool leader = true;                          // false on a serving MPI rank (which wrote nothing)
};
SweepSummary run_sweep(const SweepConfig& config, const SweepSink& sink);

}  // namespace pipesim
