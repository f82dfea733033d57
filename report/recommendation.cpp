#include "report/recommendation.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "report/format.h"
#include "report/report.h"
#include "report/result_figures.h"

namespace pipesim {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

bool asynchronous(const SimulationResult& r) {
  return r.spec.sync == OptimizerSync::kNone;
}

std::string run_text(const SimulationResult& r) {
  return fmt::format("{} (B={:.4g}, m={}): {} samples/s", r.schedule_label, global_batch_samples(r),
                     r.spec.microbatches, format_rate(r.metrics.throughput_samples_per_s, 2));
}

// The fastest run among those `keep` accepts; -1 when none.
template <typename Keep>
int fastest(const std::vector<SimulationResult>& results, Keep keep) {
  int best = -1;
  for (size_t i = 0; i < results.size(); ++i) {
    if (!keep(results[i])) continue;
    if (best < 0 ||
        results[i].metrics.throughput_samples_per_s > results[best].metrics.throughput_samples_per_s) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

std::string semantics_note(const SimulationResult& r) {
  if (!asynchronous(r)) return "";
  // τ: steps between the weights a gradient was computed on and those it updates; Δ: between a microbatch's
  // forward and backward weights (0 when a schedule stashes them).
  return fmt::format(
      " (asynchronous: changes the training semantics: gradients up to τ = {} steps stale, Δ max {})",
      max_staleness(r), max_drift(r));
}

std::string nothing_fits_text(const std::vector<SimulationResult>& results, const RecommendationContext& c) {
  size_t leanest = 0;
  for (size_t i = 1; i < results.size(); ++i) {
    if (results[i].memory.peak_bytes() < results[leanest].memory.peak_bytes()) leanest = i;
  }
  const SimulationResult& r = results[leanest];
  const std::string recompute =
      c.can_recompute_more ? "recomputation (model.recompute: selective or full), " : "";
  const std::string remedies = fmt::format(
      "more stages, {}a smaller microbatch{}, or a schedule with fewer microbatches in flight (v-half, "
      "v-min)",
      recompute, c.transformer ? " (more microbatches at the same global batch)" : "");
  return fmt::format(
      "no run fits: the device may hold {:.2f} GiB; the leanest, {} (B={:.4g}, m={}), needs {:.2f} GiB on "
      "device "
      "{}. What would help: {}.\n",
      r.memory_capacity_bytes / kGiB, r.schedule_label, global_batch_samples(r), r.spec.microbatches,
      static_cast<double>(r.memory.peak_bytes()) / kGiB, peak_memory_device(r) + 1, remedies);
}

}  // namespace

std::string recommendation_text(const std::vector<SimulationResult>& results,
                                const RecommendationContext& context) {
  if (results.empty()) return "";
  const auto fits = [](const SimulationResult& r) { return fits_memory(r).value_or(true); };
  const bool capacity_known =
      std::any_of(results.begin(), results.end(), [](const SimulationResult& r) { return fits_memory(r); });
  if (capacity_known && std::none_of(results.begin(), results.end(), fits)) {
    return wrap_lines(nothing_fits_text(results, context));
  }
  const std::string that_fits = capacity_known ? " that fits" : "";
  std::string out;
  const int sync = fastest(results, [&](const SimulationResult& r) { return fits(r) && !asynchronous(r); });
  const int any = fastest(results, fits);
  if (sync >= 0) out += fmt::format("fastest synchronous run{}: {}\n", that_fits, run_text(results[sync]));
  if (any >= 0 && any != sync) {
    out +=
        fmt::format("fastest run{}: {}{}", that_fits, run_text(results[any]), semantics_note(results[any]));
    if (sync >= 0) {
      const double margin =
          results[any].metrics.throughput_samples_per_s / results[sync].metrics.throughput_samples_per_s - 1;
      out += fmt::format("; {:+.1f} % against the fastest synchronous run", 100 * margin);
    }
    out += "\n";
  }
  // Runs of different global batches or sync rules answer different questions: say so.
  std::set<double> batches;
  std::set<OptimizerSync> syncs;
  for (const SimulationResult& r : results) {
    batches.insert(global_batch_samples(r));
    syncs.insert(r.spec.sync);
  }
  if (batches.size() > 1 || syncs.size() > 1) {
    std::string caveat = "note: these runs differ in";
    if (batches.size() > 1) {
      std::string list;
      for (double b : batches) list += fmt::format("{}{:.4g}", list.empty() ? "" : ", ", b);
      caveat += fmt::format(" global batch ({})", list);
    }
    if (syncs.size() > 1) {
      std::string list;
      for (OptimizerSync s : syncs)
        list += fmt::format("{}{}", list.empty() ? "" : ", ", name_in(sync_names(), s));
      caveat += fmt::format("{} sync ({})", batches.size() > 1 ? " and" : "", list);
    }
    out += caveat + ": samples/s compares hardware use, not how training converges at each setting.\n";
  }
  return wrap_lines(out);  // under a table of at most 120 columns, as wide as it
}

}  // namespace pipesim
