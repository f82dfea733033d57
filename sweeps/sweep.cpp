#include "sweeps/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "api/resolve.h"
#include "api/schedule_selection.h"
#include "api/simulation.h"
#include "api/unmodelled_check.h"
#include "base/errors.h"
#include "base/task_pool.h"
#include "distributed/work_farm.h"
#include "report/csv.h"
#include "report/progress_bar.h"
#include "report/report.h"
#include "schedules/registry.h"
#include "sim/resource_estimate.h"
#include "sim/steady_state.h"
#include "sweeps/sweep_params.h"

namespace pipesim {
namespace {

constexpr size_t kMaxListValues = 100'000;
// Runs in one sweep: each keeps a row of results in memory, and at ~10 ms a run this is 20 minutes on one
// core.
constexpr double kMaxSweepRuns = 100'000;

double parse_number(const std::string& text, const std::string& option, const std::string& item) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value)) {
    throw InputError(fmt::format("{} '{}': '{}' is not a number", option, item, text));
  }
  return value;
}

// "a:b:xK" or "a:b:+K", both ends included when reached.
void expand_range(const std::string& item, const std::string& option, std::vector<std::string>& values) {
  std::vector<std::string> parts;
  std::stringstream stream(item);
  for (std::string part; std::getline(stream, part, ':');) parts.push_back(part);
  const auto fail = [&](const std::string& why) {
    throw InputError(
        fmt::format("{} '{}': {}; expected a list (4,8,16), a geometric range (4:64:x2) or an "
                    "arithmetic range (0.5:2:+0.25)",
                    option, item, why));
  };
  if (parts.size() != 3 || parts[2].size() < 2 || (parts[2][0] != 'x' && parts[2][0] != '+')) {
    fail("not a range");
  }
  const double first = parse_number(parts[0], option, item);
  const double last = parse_number(parts[1], option, item);
  const double step = parse_number(parts[2].substr(1), option, item);
  const bool geometric = parts[2][0] == 'x';
  if (last < first) fail("the range ends before it starts");
  if (geometric && !(step > 1 && first > 0)) fail("a geometric range needs a factor > 1 and a start > 0");
  if (!geometric && !(step > 0)) fail("an arithmetic range needs a step > 0");
  for (long k = 0;; ++k) {
    const double value = geometric ? first * std::pow(step, static_cast<double>(k)) : first + k * step;
    if (value > last + 1e-9 * std::abs(last)) break;
    if (values.size() == kMaxListValues) fail(fmt::format("more than {} values", kMaxListValues));
    values.push_back(fmt::format("{:.12g}", value));
  }
}

struct SweepRun {
  ScheduleRequest request;
  std::vector<std::string> param_values;
  size_t scenario = 0;  // index into the (N, m) scenarios
};

// One scenario per (N, m), or the error that loading it gave.
struct ShapeScenario {
  int stages = 0;
  int microbatches = 0;
  std::optional<Scenario> scenario;
  std::string error;
};

// A row and whether its run was only skipped: bad input for that point of the grid (the schedule's rules
// refuse that N and m) or a deadlock, as `run` lists skipped schedules; anything else failed.
struct RowOutcome {
  std::vector<std::string> cells;
  bool skipped = false;
};

std::vector<ShapeScenario> load_shapes(const SweepConfig& config, const Scenario& base) {
  const std::vector<int> stages = config.stages.empty() ? std::vector<int>{base.stages} : config.stages;
  const std::vector<int> microbatches =
      config.microbatches.empty() ? std::vector<int>{base.microbatches} : config.microbatches;
  std::vector<ShapeScenario> shapes;
  for (int n : stages) {
    for (int m : microbatches) {
      ShapeScenario shape{n, m, std::nullopt, ""};
      std::vector<std::string> overrides = config.overrides;
      // Only the axes given: an axis pins its key over the entries' own pipeline: (Scenario), and an entry's
      // own m must stay when no -m is given.
      if (!config.stages.empty()) overrides.push_back(fmt::format("pipeline.stages={}", n));
      if (!config.microbatches.empty()) overrides.push_back(fmt::format("pipeline.microbatches={}", m));
      try {
        shape.scenario = load_scenario(config.scenario_path, overrides);
        shape.scenario->allow_unmodelled = config.allow_unmodelled;
      } catch (const InputError& e) {
        shape.error = e.what();
      }
      shapes.push_back(std::move(shape));
    }
  }
  return shapes;
}

// Bounds the number of runs before any is built: each list may hold 100000 values, their product far more.
void check_sweep_size(const SweepConfig& config, const Scenario& base) {
  const double stages = config.stages.empty() ? 1 : static_cast<double>(config.stages.size());
  const double microbatches =
      config.microbatches.empty() ? 1 : static_cast<double>(config.microbatches.size());
  double params = 1;
  for (const auto& [key, values] : config.params) params *= static_cast<double>(values.size());
  const double schedules = static_cast<double>(select_runs(base, config.schedules, config.entries).size());
  const double runs = stages * microbatches * params * schedules;
  if (runs > kMaxSweepRuns) {
    throw InputError(fmt::format(
        "sweep: {:g} values of N x {:g} of m x {:g} parameter combinations x {:g} schedules = {:.4g} runs, "
        "more than {:g}; narrow the ranges or split the sweep",
        stages, microbatches, params, schedules, runs, kMaxSweepRuns));
  }
}

// Schedules, then parameter values (the first --param outermost), then N, then m.
std::vector<SweepRun> expand_runs(const SweepConfig& config, const Scenario& base, size_t shapes) {
  std::vector<SweepRun> runs;
  const std::vector<ScheduleRequest> schedules = select_runs(base, config.schedules, config.entries);
  check_sweep_params_apply(config.params, schedules);
  for (const ScheduleRequest& request : schedules) {
    // A parameter the schedule does not take keeps its column empty and multiplies nothing.
    std::vector<bool> applies;
    for (const auto& [key, values] : config.params) {
      applies.push_back(sweep_param_applies(parse_sweep_param_key(key), request.name));
    }
    std::vector<size_t> index(config.params.size(), 0);
    for (;;) {
      SweepRun run{request, {}, 0};
      for (size_t p = 0; p < config.params.size(); ++p) {
        const auto& [key, values] = config.params[p];
        if (applies[p]) run.request.params.set(parse_sweep_param_key(key).key, values[index[p]]);
        run.param_values.push_back(applies[p] ? values[index[p]] : "");
      }
      for (size_t shape = 0; shape < shapes; ++shape) {
        run.scenario = shape;
        runs.push_back(run);
      }
      size_t p = config.params.size();
      while (p > 0 && (!applies[p - 1] || ++index[p - 1] == config.params[p - 1].second.size()))
        index[--p] = 0;
      if (p == 0) break;
    }
  }
  return runs;
}

size_t column_of(const std::vector<std::string>& header, const std::string& name) {
  return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
}

RowOutcome run_one(const SweepRun& run, const ShapeScenario& shape, const Limits& limits) {
  std::vector<std::string> row = {csv_escape(run.request.name)};
  for (const std::string& value : run.param_values) row.push_back(csv_escape(value));
  std::string error = shape.error;
  bool skipped = !shape.error.empty();
  if (shape.scenario) {
    try {
      SimulationOptions streamed;  // a row needs no op-by-op record: memory stays flat in the run's length
      streamed.keep_trace = false;
      streamed.limits = limits;
      const SimulationResult result = simulate_schedule(*shape.scenario, run.request, streamed);
      for (std::string& cell : csv_row(result)) row.push_back(std::move(cell));
      row.push_back("");
      return {row, false};
    } catch (const ResourceLimitError& e) {
      error =
          e.what();  // a run refused by a ceiling the user can raise: a failure, not a rule of the schedule
    } catch (const InputError& e) {
      error = e.what();
      skipped = true;
    } catch (const DeadlockError& e) {
      error = e.what();
      skipped = true;
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  const std::vector<std::string> header = csv_header();
  std::vector<std::string> metrics(header.size());
  metrics[column_of(header, "label")] = csv_escape(run.request.name);
  metrics[column_of(header, "devices")] = std::to_string(shape.stages);
  // The m the run tried: the entry's own pipeline: may set it where no -m pins it.
  int microbatches = shape.microbatches;
  if (shape.scenario) {
    try {
      microbatches = scenario_for(*shape.scenario, run.request).microbatches;
    } catch (const InputError&) {
    }
  }
  metrics[column_of(header, "microbatches")] = std::to_string(microbatches);
  for (std::string& cell : metrics) row.push_back(std::move(cell));
  row.push_back(csv_escape(error));
  return {row, skipped};
}

// A row as a serving rank sends it: "s" or "r" (skipped or not), then each cell as its length, ':' and
// its bytes.
std::string encode_row(const RowOutcome& row) {
  std::string out = row.skipped ? "s" : "r";
  for (const std::string& cell : row.cells) out += fmt::format("{}:{}", cell.size(), cell);
  return out;
}

RowOutcome decode_row(const std::string& bytes) {
  RowOutcome row{{}, !bytes.empty() && bytes[0] == 's'};
  size_t at = 1;
  while (at < bytes.size()) {
    const size_t colon = bytes.find(':', at);
    if (colon == std::string::npos) throw ScheduleError("sweep: a malformed row from a serving rank");
    const size_t length = std::stoul(bytes.substr(at, colon - at));
    row.cells.push_back(bytes.substr(colon + 1, length));
    at = colon + 1 + length;
  }
  return row;
}

// Rows finished ahead of the oldest unfinished one that a sweep holds at most, per thread.
constexpr size_t kReorderWindowPerThread = 64;

// What a run is expected to simulate: its stages x m x 3 ops (F, I, W) x the batches its steady-state
// search starts with. A weight for the ETA and the shards, not a promise: 0 cost when it cannot be known.
double expected_ops(const SweepRun& run, const ShapeScenario& shape) {
  constexpr double kFallback = 1;
  if (!shape.scenario) return kFallback;
  try {
    const Scenario& scenario = *shape.scenario;
    const std::unique_ptr<Schedule> schedule = make_schedule(run.request.name, run.request.params);
    const PipelineSpec spec = pipeline_spec_for(scenario, *schedule);
    RunLengthOptions length;
    length.microbatches_per_batch = scenario.microbatches;
    length.min_batches = scenario.batches;
    length.hint = schedule->steady_state(spec);
    const double batches = initial_window(length).total_batches;
    return std::max(kFallback,
                    3.0 * schedule->layout(scenario.stages).stages * scenario.microbatches * batches);
  } catch (const std::exception&) {
    return kFallback;  // the run itself will report what is wrong
  }
}

}  // namespace

std::pair<int, int> parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  int index = 0, count = 0;
  const auto number = [](const std::string& part, int& out) {
    char* end = nullptr;
    const long value = std::strtol(part.c_str(), &end, 10);
    if (part.empty() || end != part.c_str() + part.size() || value < 1 || value > 1'000'000) return false;
    out = static_cast<int>(value);
    return true;
  };
  if (slash == std::string::npos || !number(text.substr(0, slash), index) ||
      !number(text.substr(slash + 1), count) || index > count) {
    throw InputError(fmt::format("--shard '{}': expected i/n with 1 <= i <= n, e.g. 2/8", text));
  }
  return {index, count};
}

std::vector<std::string> expand_value_list(const std::string& text, const std::string& option) {
  std::vector<std::string> values;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) {
    if (item.empty()) throw InputError(fmt::format("{} '{}': empty value", option, text));
    if (item.find(':') != std::string::npos) {
      expand_range(item, option, values);
    } else {
      values.push_back(item);
    }
  }
  if (values.empty()) throw InputError(fmt::format("{}: empty list", option));
  return values;
}

std::vector<int> expand_int_list(const std::string& text, const std::string& option, int min_value) {
  std::vector<int> values;
  for (const std::string& item : expand_value_list(text, option)) {
    char* end = nullptr;
    const long value = std::strtol(item.c_str(), &end, 10);
    if (end != item.c_str() + item.size() || value < min_value || value > 1'000'000) {
      throw InputError(fmt::format("{} '{}': '{}' is not an integer >= {}", option, text, item, min_value));
    }
    values.push_back(static_cast<int>(value));
  }
  return values;
}

namespace {

double sum_of(const std::vector<double>& weights) {
  double total = 0;
  for (double w : weights) total += w;
  return total;
}

// This shard's contiguous block of the runs and their weights: the runs whose work starts in its share of the
// total.
void keep_shard_block(const SweepConfig& config, double total_work, std::vector<SweepRun>& runs,
                      std::vector<double>& weights) {
  const double from = total_work * (config.shard_index - 1) / config.shard_count;
  const double to = total_work * config.shard_index / config.shard_count;
  std::vector<SweepRun> block;
  std::vector<double> block_weights;
  double before = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    const bool last_shard = config.shard_index == config.shard_count;
    if (before >= from && (before < to || last_shard)) {
      block.push_back(runs[i]);
      block_weights.push_back(weights[i]);
    }
    before += weights[i];
  }
  runs = std::move(block);
  weights = std::move(block_weights);
}

// The whole of this shard's work, estimated as each run's resource check will (streamed runs).
void check_shard_work(const std::vector<SweepRun>& runs, const std::vector<ShapeScenario>& shapes,
                      const Limits& limits) {
  double ops = 0;
  for (const SweepRun& run : runs) {
    const ShapeScenario& shape = shapes[run.scenario];
    if (!shape.scenario) continue;
    ResolveOptions streamed;
    streamed.task_graph = false;
    streamed.records = false;
    streamed.limits = limits;
    ops += estimated_ops(*shape.scenario, run.request, streamed);
  }
  check_total_ops(ops, static_cast<double>(runs.size()), "sweep",
                  "narrow the lists (-N, -m, --schedules, --param) or split the sweep with --shard i/n",
                  limits);
}

std::vector<std::string> sweep_header(const SweepConfig& config) {
  std::vector<std::string> header = {"schedule_name"};
  for (const auto& [key, values] : config.params) header.push_back(key);
  for (const std::string& column : csv_header()) header.push_back(column);
  header.push_back("error");
  return header;
}

// Writes the rows in the product's order however they finish, counting the skipped and failed ones.
class RowWriter {
 public:
  RowWriter(const SweepSink& sink, const std::vector<double>& weights, SweepSummary& summary)
      : sink_(sink), weights_(weights), summary_(summary) {}

  // Takes a finished row; whoever completes the oldest row writes it and every finished row after it, in
  // order. Called under the sweep's mutex.
  void take_row(size_t i, RowOutcome row, ProgressBar& progress) {
    finished_.emplace(i, std::move(row));
    ++done_;
    work_done_ += weights_[i];
    progress.update(done_, work_done_);
    for (auto it = finished_.begin(); it != finished_.end() && it->first == emitted_;
         it = finished_.erase(it), ++emitted_) {
      const RowOutcome& outcome = it->second;
      if (outcome.skipped) {
        if (summary_.skipped++ == 0) {
          summary_.first_skipped_index = emitted_;
          summary_.first_skipped_row = outcome.cells;
        }
      } else if (!outcome.cells.back().empty() && summary_.failed++ == 0) {
        summary_.first_failed_index = emitted_;
        summary_.first_failed_row = outcome.cells;
      }
      if (sink_.row) sink_.row(outcome.cells);
    }
  }
  size_t emitted() const { return emitted_; }

 private:
  const SweepSink& sink_;
  const std::vector<double>& weights_;
  SweepSummary& summary_;
  std::map<size_t, RowOutcome> finished_;  // rows done ahead of `emitted_`
  size_t emitted_ = 0;
  size_t done_ = 0;
  double work_done_ = 0;
};

// Rank 0 hands the runs out, the most expected ops first, and writes the rows in the product's order.
// False on a serving rank.
bool run_on_ranks(const SweepConfig& config, const SweepSink& sink, const std::vector<SweepRun>& runs,
                  const std::vector<ShapeScenario>& shapes, const std::vector<double>& weights,
                  double total_work, const std::vector<std::string>& header, RowWriter& writer) {
  const auto job = [&](size_t i) {
    return encode_row(run_one(runs[i], shapes[runs[i].scenario], config.limits));
  };
  return lead_or_serve(true, job, [&](const FarmRun& farm) {
    if (sink.header) sink.header(header);
    ProgressBar progress(runs.size(), "runs", config.progress, total_work);
    std::vector<size_t> order(runs.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return weights[a] > weights[b]; });
    farm(order, [&](size_t i, const std::string& bytes) { writer.take_row(i, decode_row(bytes), progress); });
  });
}

// The runs on `threads` workers, each at most the reorder window ahead of the oldest row not yet written;
// a sink's failure stops them and is rethrown.
void run_on_threads(const std::vector<SweepRun>& runs, const std::vector<ShapeScenario>& shapes,
                    const Limits& limits, size_t threads, ProgressBar& progress, RowWriter& writer) {
  const size_t window = kReorderWindowPerThread * std::max<size_t>(1, threads);
  std::mutex mutex;
  std::condition_variable room;
  std::exception_ptr sink_error;
  size_t next = 0;
  auto worker = [&] {
    for (;;) {
      size_t i = 0;
      {
        std::unique_lock<std::mutex> lock(mutex);
        if (next >= runs.size() || sink_error) return;
        i = next++;
        room.wait(lock, [&] { return i < writer.emitted() + window || sink_error; });
        if (sink_error) return;
      }
      RowOutcome row = run_one(runs[i], shapes[runs[i].scenario], limits);
      std::unique_lock<std::mutex> lock(mutex);
      try {
        writer.take_row(i, std::move(row), progress);
      } catch (...) {
        sink_error = std::current_exception();
      }
      room.notify_all();
    }
  };
  run_workers(threads, worker);
  if (sink_error) std::rethrow_exception(sink_error);
}

}  // namespace

SweepSummary run_sweep(const SweepConfig& config, const SweepSink& sink) {
  if (config.shard_count < 1 || config.shard_index < 1 || config.shard_index > config.shard_count) {
    throw InputError(
        fmt::format("--shard {}/{}: expected i/n with 1 <= i <= n", config.shard_index, config.shard_count));
  }
  Scenario base = load_scenario(config.scenario_path, config.overrides);
  base.allow_unmodelled = config.allow_unmodelled;
  require_modelled(base);  // one refusal, not one per row
  check_sweep_size(config, base);
  const std::vector<ShapeScenario> shapes = load_shapes(config, base);
  std::vector<SweepRun> runs = expand_runs(config, base, shapes.size());

  // Weights, then this shard's contiguous block.
  std::vector<double> weights;
  weights.reserve(runs.size());
  for (const SweepRun& run : runs) weights.push_back(expected_ops(run, shapes[run.scenario]));
  double total_work = sum_of(weights);
  if (config.shard_count > 1) {
    keep_shard_block(config, total_work, runs, weights);
    total_work = sum_of(weights);
  }
  check_shard_work(runs, shapes, config.limits);

  SweepSummary summary;
  summary.header = sweep_header(config);
  const size_t threads = config.mpi ? 1 : worker_count(config.jobs, runs.size(), "--jobs");
  RowWriter writer(sink, weights, summary);
  if (config.mpi) {
    summary.leader = run_on_ranks(config, sink, runs, shapes, weights, total_work, summary.header, writer);
    summary.rows = writer.emitted();
    return summary;
  }

  if (sink.header) sink.header(summary.header);
  ProgressBar progress(runs.size(), "runs", config.progress, total_work);
  run_on_threads(runs, shapes, config.limits, threads, progress, writer);
  summary.rows = writer.emitted();
  return summary;
}

SweepTable run_sweep(const SweepConfig& config) {
  SweepTable table;
  SweepSink sink;
  sink.header = [&](const std::vector<std::string>& header) { table.header = header; };
  sink.row = [&](const std::vector<std::string>& row) { table.rows.push_back(row); };
  const SweepSummary summary = run_sweep(config, sink);
  table.failed = summary.failed;
  table.skipped = summary.skipped;
  return table;
}

std::string sweep_to_csv(const SweepTable& table) {
  std::string out = csv_line(table.header);
  for (const auto& row : table.rows) out += csv_line(row);
  return out;
}

}  // namespace pipesim
