#include "report/table_columns.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "base/did_you_mean.h"
#include "base/errors.h"
#include "report/format.h"
#include "report/report.h"
#include "report/result_figures.h"

namespace pipesim {
namespace {

using Cell = std::optional<std::string>;

constexpr size_t kCompactLabelWidth = 27;  // schedule labels are ASCII: bytes are columns
using Figure = std::optional<double>;

struct Column {
  TableColumnInfo info;
  std::function<Cell(const SimulationResult&)> text;     // a text or preformatted column
  std::function<Figure(const SimulationResult&)> bytes;  // a byte column: the unit follows the figures
};

std::string fixed(double value, int decimals) {
  return fmt::format("{:.{}f}", value, decimals);
}

// A fraction in [0, 1) as a percentage with one decimal, with as many more as it takes not to read as 100.0
// (a bubble of 1 − 1e-7 is not a bubble of 100 %: the run did some work).
std::string percent_below_100(double fraction) {
  std::string text = fixed(100 * fraction, 1);
  for (int decimals = 2; text == "100.0" || (text.rfind("100.", 0) == 0 && fraction < 1); ++decimals) {
    text = fixed(100 * fraction, decimals);
    if (decimals >= 12) break;
  }
  return text;
}

Column text(const char* id, const char* title, bool compact, std::function<Cell(const SimulationResult&)> f) {
  return {{id, title, compact}, std::move(f), {}};
}
Column bytes(const char* id, const char* title, bool compact,
             std::function<Figure(const SimulationResult&)> f) {
  return {{id, title, compact}, {}, std::move(f)};
}

// The compact table (the default): the schedule, the batch, the throughput, the bubble, the memory peak
// and whether it fits, the weight drift.
void table_columns_append_compact(std::vector<Column>& columns) {
  const std::initializer_list<Column> group = {
      text("schedule", "schedule", true, [](const SimulationResult& r) { return r.schedule_label; }),
      text("mxb", "m x b", true,
           [](const SimulationResult& r) {
             if (!r.microbatch_size_text.empty())
               return fmt::format("{}x{}", r.spec.microbatches, r.microbatch_size_text);
             return fmt::format("{}x{:.3g}", r.spec.microbatches, r.microbatch_size);
           }),
      text("global_batch", "B", true,
           [](const SimulationResult& r) { return fmt::format("{:.4g}", global_batch_samples(r)); }),
      text("sync", "sync", true,
           [](const SimulationResult& r) { return name_in(sync_names(), r.spec.sync); }),
      text("throughput_samples_per_s", "samples/s", true,
           [](const SimulationResult& r) { return format_rate(r.metrics.throughput_samples_per_s, 2); }),
      text("throughput_tokens_per_s", "tokens/s", true,
           [](const SimulationResult& r) -> Cell {
             const Figure t = tokens_per_s(r);
             return t ? Cell(fixed(*t, 0)) : std::nullopt;
           }),
      text("bubble_fraction", "bubble %", true,
           [](const SimulationResult& r) { return percent_below_100(r.metrics.bubble_fraction); }),
      bytes("peak_memory_bytes", "peak", true,
            [](const SimulationResult& r) { return static_cast<double>(r.memory.peak_bytes()); }),
      text("fits", "fits", true,
           [](const SimulationResult& r) -> Cell {
             const std::optional<bool> fits = fits_memory(r);
             return fits ? Cell(*fits ? "yes" : "no") : std::nullopt;
           }),
      text("drift_max", "Δ max/bound", true,
           [](const SimulationResult& r) { return fmt::format("{}/{}", max_drift(r), max_drift_bound(r)); }),
  };
  columns.insert(columns.end(), group);
}

// The wide table's rates: the period, throughput per GPU, model FLOP/s and MFU.
void table_columns_append_per_gpu_rates(std::vector<Column>& columns) {
  const std::initializer_list<Column> group = {
      text("period_ms", "period (ms)", false,
           [](const SimulationResult& r) { return fixed(ns_to_ms(r.metrics.period_ns), 3); }),
      text("throughput_samples_per_gpu_s", "samples/s/GPU", false,
           [](const SimulationResult& r) { return format_rate(r.metrics.throughput_samples_per_gpu_s, 3); }),
      text("throughput_tokens_per_gpu_s", "tokens/s/GPU", false,
           [](const SimulationResult& r) -> Cell {
             const Figure t = tokens_per_device_s(r);
             return t ? Cell(fixed(*t, 0)) : std::nullopt;
           }),
      text("model_tflops_per_gpu", "TFLOP/s/GPU", false,
           [](const SimulationResult& r) -> Cell {
             const Figure t = model_tflops_per_device(r);
             return t ? Cell(fixed(*t, 1)) : std::nullopt;
           }),
      text("mfu", "MFU %", false,
           [](const SimulationResult& r) -> Cell {
             const Figure u = model_flops_utilization(r);
             return u ? Cell(fixed(100 * *u, 1)) : std::nullopt;
           }),
  };
  columns.insert(columns.end(), group);
}

// The peak's breakdown: weights, gradients, optimizer state, activations and buffers.
void table_columns_append_memory_breakdown(std::vector<Column>& columns) {
  const std::initializer_list<Column> group = {
      bytes("memory_breakdown_weight_bytes", "weights", false,
            [](const SimulationResult& r) {
              return static_cast<double>(peak_memory_breakdown(r).weight_bytes);
            }),
      bytes("memory_breakdown_gradient_bytes", "grads", false,
            [](const SimulationResult& r) {
              return static_cast<double>(peak_memory_breakdown(r).gradient_bytes);
            }),
      bytes("memory_breakdown_optimizer_bytes", "opt. state", false,
            [](const SimulationResult& r) {
              return static_cast<double>(peak_memory_breakdown(r).optimizer_bytes);
            }),
      bytes("memory_breakdown_activation_bytes", "act.", false,
            [](const SimulationResult& r) {
              return static_cast<double>(peak_memory_breakdown(r).activation_bytes);
            }),
      bytes("memory_breakdown_buffer_bytes", "buffers", false,
            [](const SimulationResult& r) {
              return static_cast<double>(peak_memory_breakdown(r).buffer_bytes);
            }),
  };
  columns.insert(columns.end(), group);
}

// The schedule's own figures: the Zero Bubble paper's bubble rate, the per-stage peaks, the critical
// path, staleness and weight versions, and the size of the run.
void table_columns_append_schedule_figures(std::vector<Column>& columns) {
  const std::initializer_list<Column> group = {
      text("bubble_rate_zb", "ZB bubble %", false,
           [](const SimulationResult& r) -> Cell {
             const Figure rate = zb_bubble_rate(r);
             return rate ? Cell(fixed(100 * *rate, 1)) : std::nullopt;
           }),
      bytes("peak_weight_bytes", "peak weights", false,
            [](const SimulationResult& r) -> Figure {
              const std::optional<Bytes> w = max_peak_weight_bytes(r);
              return w ? Figure(static_cast<double>(*w)) : std::nullopt;
            }),
      bytes("peak_activation_bytes", "peak act.", false,
            [](const SimulationResult& r) { return static_cast<double>(max_peak_activation_bytes(r)); }),
      text("peak_activation_microbatches", "peak act. (x M_B)", false,
           [](const SimulationResult& r) { return fixed(max_peak_activation_microbatches(r), 1); }),
      text("peak_in_flight", "in flight", false,
           [](const SimulationResult& r) { return fmt::format("{}", max_peak_in_flight(r)); }),
      text("critical_path_ms", "critical path (ms)", false,
           [](const SimulationResult& r) -> Cell {
             const Figure ms = critical_path_ms(r);
             return ms ? Cell(fixed(*ms, 3)) : std::nullopt;
           }),
      text("staleness_max", "staleness", false,
           [](const SimulationResult& r) { return fmt::format("{}", max_staleness(r)); }),
      text("weight_versions_max", "versions", false,
           [](const SimulationResult& r) { return fmt::format("{}", max_weight_versions(r)); }),
      text("batches_simulated", "batches", false,
           [](const SimulationResult& r) { return fmt::format("{}", r.spec.batches); }),
      text("simulated_ops", "ops", false,
           [](const SimulationResult& r) { return fmt::format("{}", r.metrics.simulated_ops); }),
  };
  columns.insert(columns.end(), group);
}

// Every column, in the order --wide prints them and --columns lists them.
const std::vector<Column>& catalogue() {
  static const std::vector<Column> columns = [] {
    std::vector<Column> all;
    table_columns_append_compact(all);
    table_columns_append_per_gpu_rates(all);
    table_columns_append_memory_breakdown(all);
    table_columns_append_schedule_figures(all);
    return all;
  }();
  return columns;
}

// One unit for a whole byte column, chosen by its largest figure.
struct ByteUnit {
  const char* name;
  double bytes;
};
// Binary units, as device capacities are stated (an 80 GiB card; nvidia-smi's MiB).
ByteUnit byte_unit(double largest) {
  if (largest < 10 * 1024.0) return {"B", 1};
  if (largest < 10 * 1024.0 * 1024) return {"KiB", 1024.0};
  if (largest < 10 * 1024.0 * 1024 * 1024) return {"MiB", 1024.0 * 1024};
  return {"GiB", 1024.0 * 1024 * 1024};
}

std::vector<const Column*> chosen_columns(const TableOptions& options) {
  std::vector<const Column*> chosen;
  if (!options.columns.empty()) {
    for (const std::string& id : options.columns) {
      for (const Column& c : catalogue()) {
        if (c.info.id == id) chosen.push_back(&c);
      }
    }
    return chosen;
  }
  for (const Column& c : catalogue()) {
    if (options.wide || c.info.compact) chosen.push_back(&c);
  }
  return chosen;
}

}  // namespace

std::vector<TableColumnInfo> table_columns() {
  std::vector<TableColumnInfo> infos;
  for (const Column& c : catalogue()) infos.push_back(c.info);
  return infos;
}

// The ids columns had before they took their JSON names: still accepted.
const std::map<std::string, std::string>& column_aliases() {
  static const std::map<std::string, std::string> aliases = {
      {"samples_per_s", "throughput_samples_per_s"},
      {"tokens_per_s", "throughput_tokens_per_s"},
      {"bubble", "bubble_fraction"},
      {"peak_memory", "peak_memory_bytes"},
      {"drift", "drift_max"},
      {"period", "period_ms"},
      {"samples_per_gpu_s", "throughput_samples_per_gpu_s"},
      {"tokens_per_gpu_s", "throughput_tokens_per_gpu_s"},
      {"tflops_per_gpu", "model_tflops_per_gpu"},
      {"memory_weights", "memory_breakdown_weight_bytes"},
      {"memory_gradients", "memory_breakdown_gradient_bytes"},
      {"memory_optimizer", "memory_breakdown_optimizer_bytes"},
      {"memory_activations", "memory_breakdown_activation_bytes"},
      {"memory_buffers", "memory_breakdown_buffer_bytes"},
      {"zb_bubble", "bubble_rate_zb"},
      {"peak_weights", "peak_weight_bytes"},
      {"peak_activations", "peak_activation_bytes"},
      {"peak_activations_mb", "peak_activation_microbatches"},
      {"in_flight", "peak_in_flight"},
      {"critical_path", "critical_path_ms"},
      {"staleness", "staleness_max"},
      {"versions", "weight_versions_max"},
      {"batches", "batches_simulated"},
      {"ops", "simulated_ops"},
  };
  return aliases;
}

std::vector<std::string> parse_column_list(const std::string& text, const std::string& option) {
  std::string allowed;
  for (const Column& c : catalogue()) allowed += (allowed.empty() ? "" : ", ") + c.info.id;
  std::vector<std::string> ids;
  std::stringstream stream(text);
  for (std::string id; std::getline(stream, id, ',');) {
    if (const auto alias = column_aliases().find(id); alias != column_aliases().end()) id = alias->second;
    const bool known =
        std::any_of(catalogue().begin(), catalogue().end(), [&](const Column& c) { return c.info.id == id; });
    if (!known) {
      std::vector<std::string> ids_known;
      for (const Column& c : catalogue()) ids_known.push_back(c.info.id);
      throw InputError(fmt::format("{} '{}': unknown column '{}'{}; columns: {}", option, text, id,
                                   did_you_mean(id, ids_known), allowed));
    }
    ids.push_back(id);
  }
  if (ids.empty()) throw InputError(fmt::format("{}: expected a list of columns: {}", option, allowed));
  return ids;
}

std::vector<SimulationResult> sorted_by_column(std::vector<SimulationResult> results, const std::string& id) {
  const std::string checked = parse_column_list(id, "--sort").front();
  const Column* column = nullptr;
  for (const Column& c : catalogue()) {
    if (c.info.id == checked) column = &c;
  }
  const std::set<std::string> descending = {"throughput_samples_per_s",     "throughput_tokens_per_s",
                                            "throughput_samples_per_gpu_s", "throughput_tokens_per_gpu_s",
                                            "model_tflops_per_gpu",         "mfu"};
  const bool down = descending.count(checked) > 0;
  // A figure to order by: the byte count, or the cell read as a number; text cells order as text.
  struct Key {
    std::optional<double> number;
    std::string text;
    bool known;
  };
  const auto key_of = [&](const SimulationResult& r) -> Key {
    if (column->bytes) {
      const Figure f = column->bytes(r);
      return {f, "", f.has_value()};
    }
    const Cell cell = column->text(r);
    if (!cell) return {std::nullopt, "", false};
    char* end = nullptr;
    const double value = std::strtod(cell->c_str(), &end);
    if (end != cell->c_str()) return {value, *cell, true};
    return {std::nullopt, *cell, true};
  };
  std::vector<std::pair<Key, size_t>> keys;
  for (size_t i = 0; i < results.size(); ++i) keys.push_back({key_of(results[i]), i});
  std::stable_sort(keys.begin(), keys.end(), [&](const auto& a, const auto& b) {
    if (a.first.known != b.first.known) return a.first.known;
    if (!a.first.known) return false;
    if (a.first.number && b.first.number) {
      return down ? *a.first.number > *b.first.number : *a.first.number < *b.first.number;
    }
    return down ? a.first.text > b.first.text : a.first.text < b.first.text;
  });
  std::vector<SimulationResult> sorted;
  for (const auto& [key, index] : keys) sorted.push_back(std::move(results[index]));
  return sorted;
}

int best_fitting_run(const std::vector<SimulationResult>& results) {
  const bool any_known =
      std::any_of(results.begin(), results.end(), [](const SimulationResult& r) { return fits_memory(r); });
  int best = -1;
  for (size_t i = 0; i < results.size(); ++i) {
    const std::optional<bool> fits = fits_memory(results[i]);
    if (any_known && !(fits && *fits)) continue;
    if (best < 0 ||
        results[i].metrics.throughput_samples_per_s > results[best].metrics.throughput_samples_per_s) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

std::string render_result_table(const std::string& scenario_name,
                                const std::vector<SimulationResult>& results, const TableOptions& options) {
  if (results.empty()) return "";
  const SimulationResult& first = results.front();
  std::string out = fmt::format("scenario {}: N={} devices, at least {} batches per run\n", scenario_name,
                                first.spec.devices, first.batches_requested);
  // The modelling choices behind every figure of a transformer scenario.
  if (!first.model_choices.empty()) {
    std::string choices = first.model_choices;
    const size_t hardware = choices.find("; hardware ");
    if (hardware != std::string::npos) choices.replace(hardware, 11, "\nhardware: ");
    out += fmt::format("model: {}\n", choices);
  }
  out += unmodelled_banner(first.unmodelled);
  out += "\n";
  const std::vector<const Column*> columns = chosen_columns(options);
  const int best = best_fitting_run(results);
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows(results.size());
  double largest_bytes = 0;
  for (const Column* c : columns) {
    if (!c->bytes) continue;
    for (const SimulationResult& r : results)
      largest_bytes = std::max(largest_bytes, c->bytes(r).value_or(0));
  }
  for (const Column* c : columns) {
    if (c->bytes) {
      // One unit for every byte column, so that the memory breakdown reads against the peak.
      const ByteUnit unit = byte_unit(largest_bytes);
      header.push_back(fmt::format("{} ({})", c->info.title, unit.name));
      for (size_t i = 0; i < results.size(); ++i) {
        const Figure value = c->bytes(results[i]);
        rows[i].push_back(value ? fixed(*value / unit.bytes, unit.bytes > 1 ? 2 : 0) : "-");
      }
      continue;
    }
    header.push_back(c->info.title);
    for (size_t i = 0; i < results.size(); ++i) {
      std::string cell = c->text(results[i]).value_or("-");
      // The compact table keeps 120 columns: a long label (a per-stage list) is cut, --wide shows it whole.
      const bool compact = !options.wide && options.columns.empty();
      if (c->info.id == "schedule" && compact && cell.size() > kCompactLabelWidth) {
        cell = cell.substr(0, kCompactLabelWidth - 1) + "…";
      }
      if (c->info.id == "schedule" && static_cast<int>(i) == best) cell += " *";
      rows[i].push_back(std::move(cell));
    }
  }
  out += render_table(header, rows);
  if (best >= 0) {
    const bool any_known =
        std::any_of(results.begin(), results.end(), [](const SimulationResult& r) { return fits_memory(r); });
    out += any_known ? "* the highest samples/s among the runs that fit in the device's memory\n"
                     : "* the highest samples/s (no memory capacity known: every run counts as fitting)\n";
  }
  return out;
}

}  // namespace pipesim
