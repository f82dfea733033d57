#pragma once
// Weight-version figures derived from a run's trace (docs/design.md §1, §5), never assumed from the schedule:
//   drift      Δ_i(j) = v_B(i,j) − v_F(i,j), the version the gradient ops read (the largest, when split into
//              I and W) minus the version the forward read;
//   staleness  τ_i(j) = the version j's gradient is applied to (the version before the first U on stage i
//   that
//              starts after j's last gradient op ended) minus v_F(i,j);
//   live versions: version v of stage i lives from the end of the U that made it until the later of the end
//   of
//              the U that replaced it and the end of the last op that read it (a stash lives until the last
//              backward that needs it);
//   in flight  q_i: microbatches whose F started on stage i and whose B/I has not ended.
#include <vector>

#include "sim/trace.h"

namespace pipesim {

struct DriftWindow {
  int first_microbatch = 0;  // means are taken over the steady-state microbatches [first, end)
  int end_microbatch = 0;
};

// A stage's weight versions over time: the current one and how many are held.
struct VersionSample {
  TimeNs time_ns;
  int current_version;
  int live_versions;
};

struct StageDrift {
  int drift_max = 0;                  // over every microbatch
  double drift_mean = 0;              // over the window
  std::vector<long> drift_histogram;  // [Δ] -> microbatches, over every microbatch
  int staleness_max = 0;              // over every microbatch whose gradient was applied
  double staleness_mean = 0;          // over the window
  int weight_versions_max = 0;
  int in_flight_max = 0;
  std::vector<int> drift;               // per microbatch; -1 when its F or gradient did not run on this stage
  std::vector<int> staleness;           // per microbatch; -1 when its gradient was never applied
  std::vector<VersionSample> versions;  // timeline, one sample per change
};

struct DriftReport {
  std::vector<StageDrift> stages;  // per (virtual) stage, 0-based
};

DriftReport compute_drift(const RunTrace& trace, const DriftWindow& window);

// A stage's drift and staleness figures, added one microbatch at a time (from a trace or while a run
// streams): maxima and histogram over every microbatch, means over the window's.
class StageDriftTally {
 public:
  void add_drift(int drift, bool in_window);
  void add_staleness(int staleness, bool in_window, long count = 1);  // `count` microbatches alike
  // Fills the maxima, means and histogram of `out`.
  void finish(StageDrift& out) const;

 private:
  int drift_max_ = 0;
  int staleness_max_ = 0;
  long drift_sum_ = 0, drift_count_ = 0, staleness_sum_ = 0, staleness_count_ = 0;
  std::vector<long> histogram_;
};

}  // namespace pipesim
