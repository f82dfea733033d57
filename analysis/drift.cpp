#include "analysis/drift.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/errors.h"

namespace pipesim {
namespace {

// A change at one instant: counters move by these deltas.
struct Change {
  TimeNs time_ns;
  int live;
  int current;
};

// Post-instant maximum of a counter: every change at time t is applied before the count at t is read, as the
// engine processes every op end before any start at t.
template <typename Sample>
int sweep(std::vector<Change>& changes, Sample sample) {
  std::stable_sort(changes.begin(), changes.end(),
                   [](const Change& a, const Change& b) { return a.time_ns < b.time_ns; });
  int live = 0;
  int current = 0;
  int peak = 0;
  for (size_t k = 0; k < changes.size(); ++k) {
    live += changes[k].live;
    current += changes[k].current;
    if (k + 1 == changes.size() || changes[k + 1].time_ns != changes[k].time_ns) {
      peak = std::max(peak, live);
      sample(changes[k].time_ns, current, live);
    }
  }
  return peak;
}

struct StageOps {
  std::vector<int> forward_version;
  std::vector<int> gradient_version;    // largest over B, I, W
  std::vector<TimeNs> gradient_end_ns;  // end of the last gradient op
  // The stage's optimizer steps in order, as contiguous columns (searched per microbatch: no pointer
  // chasing into the trace).
  std::vector<TimeNs> update_start_ns;
  std::vector<TimeNs> update_end_ns;
  std::vector<int> update_version;
  std::vector<TimeNs> last_read_ns;  // per version
  std::vector<Change> in_flight;
};

void summarize(const StageOps& ops, const DriftWindow& window, StageDrift& out) {
  const int microbatches = static_cast<int>(ops.forward_version.size());
  out.drift.assign(microbatches, -1);
  out.staleness.assign(microbatches, -1);
  StageDriftTally tally;
  for (int j = 0; j < microbatches; ++j) {
    const int v_f = ops.forward_version[j];
    if (v_f < 0 || ops.gradient_version[j] < 0) continue;
    const bool in_window = j >= window.first_microbatch && j < window.end_microbatch;
    const int drift = ops.gradient_version[j] - v_f;
    out.drift[j] = drift;
    tally.add_drift(drift, in_window);
    // The gradient is applied by the first U that starts once the last gradient op has ended.
    const auto applied =
        std::lower_bound(ops.update_start_ns.begin(), ops.update_start_ns.end(), ops.gradient_end_ns[j]);
    if (applied == ops.update_start_ns.end()) continue;
    const int staleness = ops.update_version[applied - ops.update_start_ns.begin()] - v_f;
    out.staleness[j] = staleness;
    tally.add_staleness(staleness, in_window);
  }
  tally.finish(out);
}

// Live versions over time: version v lives from the end of the U that made it (0 for v = 0) until the later
// of the end of the U that replaced it and the end of the last op that read it.
void version_timeline(const StageOps& ops, StageDrift& out) {
  std::vector<Change> changes;
  const int versions = static_cast<int>(ops.update_end_ns.size()) + 1;
  for (int v = 0; v < versions; ++v) {
    const TimeNs made = v == 0 ? 0 : ops.update_end_ns[v - 1];
    const TimeNs last_read = v < static_cast<int>(ops.last_read_ns.size()) ? ops.last_read_ns[v] : 0;
    changes.push_back({made, 1, v == 0 ? 0 : 1});
    // The newest version lives on after the run.
    if (v + 1 < versions) changes.push_back({std::max(ops.update_end_ns[v], last_read), -1, 0});
  }
  out.weight_versions_max = sweep(changes, [&](TimeNs t, int current, int live) {
    out.versions.push_back({t, current, live});
  });
}

}  // namespace

void StageDriftTally::add_drift(int drift, bool in_window) {
  drift_max_ = std::max(drift_max_, drift);
  if (static_cast<int>(histogram_.size()) <= drift) histogram_.resize(drift + 1, 0);
  ++histogram_[drift];
  if (in_window) {
    drift_sum_ += drift;
    ++drift_count_;
  }
}

void StageDriftTally::add_staleness(int staleness, bool in_window, long count) {
  staleness_max_ = std::max(staleness_max_, staleness);
  if (in_window) {
    staleness_sum_ += staleness * count;
    staleness_count_ += count;
  }
}

void StageDriftTally::finish(StageDrift& out) const {
  out.drift_max = drift_max_;
  out.staleness_max = staleness_max_;
  out.drift_histogram = histogram_;
  out.drift_mean = drift_count_ > 0 ? static_cast<double>(drift_sum_) / drift_count_ : 0;
  out.staleness_mean = staleness_count_ > 0 ? static_cast<double>(staleness_sum_) / staleness_count_ : 0;
}

DriftReport compute_drift(const RunTrace& trace, const DriftWindow& window) {
  const int stages = trace.layout.stages;
  const int microbatches = trace.total_microbatches;
  std::vector<StageOps> per_stage(stages);
  for (StageOps& s : per_stage) {
    s.forward_version.assign(microbatches, -1);
    s.gradient_version.assign(microbatches, -1);
    s.gradient_end_ns.assign(microbatches, 0);
  }
  for (const OpRecord& op : trace.ops) {
    const Action& a = op.action;
    StageOps& s = per_stage[a.stage];
    if (op.weight_version < 0)
      throw ScheduleError(fmt::format("trace: {} read no weight version", describe(a)));
    if (static_cast<int>(s.last_read_ns.size()) <= op.weight_version) {
      s.last_read_ns.resize(op.weight_version + 1, 0);
    }
    s.last_read_ns[op.weight_version] = std::max(s.last_read_ns[op.weight_version], op.end_ns);
    if (a.kind == OpKind::U) {
      if (op.weight_version != static_cast<int>(s.update_version.size())) {
        throw ScheduleError(fmt::format("trace: {} read version {} after {} steps", describe(a),
                                        op.weight_version, s.update_version.size()));
      }
      s.update_start_ns.push_back(op.start_ns);
      s.update_end_ns.push_back(op.end_ns);
      s.update_version.push_back(op.weight_version);
      continue;
    }
    const int j = a.microbatch;
    if (a.kind == OpKind::F) {
      s.forward_version[j] = op.weight_version;
      s.in_flight.push_back({op.start_ns, 1, 0});
      continue;
    }
    s.gradient_version[j] = std::max(s.gradient_version[j], op.weight_version);
    s.gradient_end_ns[j] = std::max(s.gradient_end_ns[j], op.end_ns);
    if (a.kind != OpKind::W) s.in_flight.push_back({op.end_ns, -1, 0});
  }

  DriftReport report;
  report.stages.resize(stages);
  for (int stage = 0; stage < stages; ++stage) {
    StageOps& s = per_stage[stage];
    StageDrift& out = report.stages[stage];
    summarize(s, window, out);
    version_timeline(s, out);
    out.in_flight_max = sweep(s.in_flight, [](TimeNs, int, int) {});
  }
  return report;
}

}  // namespace pipesim
