#pragma once
// Plans and costs built directly for the tests of the engine (tests/sim/) and, through
// tests/schedules/schedule_runs.h, of the schedules: no scenario, no YAML, nothing above sim/. A test states
// its per-stage costs, writes a device's list as text ("F0 F1 B0 U0") or takes a schedule's plan, runs the
// engine and reads the trace as "F0@3" timelines.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "sim/comm_model.h"
#include "sim/cost_model.h"
#include "sim/engine/engine.h"
#include "sim/metrics.h"
#include "sim/policy.h"

namespace pipesim::test {

// The same costs on every (virtual) stage, in ns: F, I (a whole B is I + W), W and U. One activation byte per
// microbatch, none held for W, transfers of no bytes.
class UniformStageCosts final : public CostModel {
 public:
  UniformStageCosts(TimeNs forward_ns, TimeNs input_ns, TimeNs weight_ns = 0, TimeNs optimizer_ns = 0)
      : forward_ns_(forward_ns), input_ns_(input_ns), weight_ns_(weight_ns), optimizer_ns_(optimizer_ns) {}
  static UniformStageCosts ms(double forward_ms, double input_ms, double weight_ms = 0,
                              double optimizer_ms = 0) {
    return {ms_to_ns(forward_ms), ms_to_ns(input_ms), ms_to_ns(weight_ms), ms_to_ns(optimizer_ms)};
  }
  TimeNs duration(const Action& a) const override {
    switch (a.kind) {
      case OpKind::F:
        return forward_ns_ / chunks_;
      case OpKind::B:
        return (input_ns_ + weight_ns_) / chunks_;
      case OpKind::I:
        return input_ns_ / chunks_;
      case OpKind::W:
        return weight_ns_ / chunks_;
      case OpKind::U:
        return (optimizer_ns_of_stage_.empty() ? optimizer_ns_ : optimizer_ns_of_stage_[a.stage]) / chunks_;
    }
    return 0;
  }
  // U's duration per (virtual) stage instead of one for all, in ms.
  UniformStageCosts& optimizer_ms_per_stage(const std::vector<double>& ms) {
    optimizer_ns_of_stage_.clear();
    for (double t : ms) optimizer_ns_of_stage_.push_back(ms_to_ns(t));
    return *this;
  }
  // M_B and M_W per microbatch and the bytes of one transfer, instead of 1, 0 and 0.
  UniformStageCosts& bytes(Bytes activation, Bytes weight_grad_activation, Bytes transfer = 0) {
    activation_bytes_ = activation;
    weight_grad_activation_bytes_ = weight_grad_activation;
    transfer_bytes_ = transfer;
    return *this;
  }
  // One slot of a forward fused with another microbatch's backward (DualPipe's F&B), in ms; unset: F + B.
  UniformStageCosts& overlap_fb_ms(double ms) {
    overlap_fb_ns_ = ms_to_ns(ms);
    return *this;
  }
  // The times above (optimizer and fused slot too) and M_B, M_W as a device's, split evenly over its
  // `chunks` stages (as a scenario's explicit costs are, cost_models/explicit_costs.h): each op takes
  // ⌊device time / chunks⌋.
  UniformStageCosts& over_chunks(int chunks) {
    chunks_ = chunks;
    return *this;
  }
  TimeNs overlapped_duration(const Action& forward, const Action& backward) const override {
    return overlap_fb_ns_ >= 0 ? overlap_fb_ns_ / chunks_ : CostModel::overlapped_duration(forward, backward);
  }
  bool durations_by_kind_and_stage() const override { return true; }
  Bytes activation_bytes(int /*stage*/) const override { return activation_bytes_ / chunks_; }
  Bytes weight_grad_activation_bytes(int /*stage*/) const override {
    return weight_grad_activation_bytes_ / chunks_;
  }
  Bytes transfer_bytes(int /*stage*/) const override { return transfer_bytes_; }

 private:
  TimeNs forward_ns_, input_ns_, weight_ns_, optimizer_ns_;
  std::vector<TimeNs> optimizer_ns_of_stage_;
  Bytes activation_bytes_ = 1, weight_grad_activation_bytes_ = 0, transfer_bytes_ = 0;
  TimeNs overlap_fb_ns_ = -1;
  int chunks_ = 1;
};

// Costs that differ by (virtual) stage: entry s of a list is stage s's, a list of one value serves every
// stage. Times in ns; the fused F&B slot (DualPipe) is its forward's stage's, none: F + B.
struct StageCostLists {
  std::vector<TimeNs> forward_ns, input_ns, weight_ns, optimizer_ns{0}, overlap_fb_ns;
  std::vector<Bytes> activation_bytes{1}, weight_grad_activation_bytes{0}, transfer_bytes{0};
};

class PerStageCosts final : public CostModel {
 public:
  explicit PerStageCosts(StageCostLists lists) : c_(std::move(lists)) {}
  TimeNs duration(const Action& a) const override {
    switch (a.kind) {
      case OpKind::F:
        return at(c_.forward_ns, a.stage);
      case OpKind::B:
        return at(c_.input_ns, a.stage) + at(c_.weight_ns, a.stage);
      case OpKind::I:
        return at(c_.input_ns, a.stage);
      case OpKind::W:
        return at(c_.weight_ns, a.stage);
      case OpKind::U:
        return at(c_.optimizer_ns, a.stage);
    }
    return 0;
  }
  TimeNs overlapped_duration(const Action& forward, const Action& backward) const override {
    if (c_.overlap_fb_ns.empty()) return CostModel::overlapped_duration(forward, backward);
    return at(c_.overlap_fb_ns, forward.stage);
  }
  bool durations_by_kind_and_stage() const override { return true; }
  Bytes activation_bytes(int stage) const override { return at(c_.activation_bytes, stage); }
  Bytes weight_grad_activation_bytes(int stage) const override {
    return at(c_.weight_grad_activation_bytes, stage);
  }
  Bytes transfer_bytes(int stage) const override { return at(c_.transfer_bytes, stage); }

 private:
  template <class T>
  static T at(const std::vector<T>& list, int stage) {
    return list.size() == 1 ? list.front() : list.at(static_cast<std::size_t>(stage));
  }
  StageCostLists c_;
};

// A device's list as text, ops separated by spaces: a letter (F, B, I, W, U), the microbatch (U: the step),
// and for a device with several stages "s" and the 1-based stage, e.g. "F0 F1 B0 U0" or "F0s1 F0s3". A U
// followed by "!" waits for every device's U of the same step (a barrier): "U0!".
inline std::vector<Action> actions_of(const std::string& text, int stage_when_unnamed) {
  std::vector<Action> out;
  std::istringstream in(text);
  std::string token;
  while (in >> token) {
    Action a;
    EXPECT_TRUE(parse_op_letter(token[0], a.kind)) << "bad op '" << token << "'";
    a.synchronized = token.back() == '!';
    if (a.synchronized) token.pop_back();
    const auto s = token.find('s');
    a.microbatch = std::stoi(token.substr(1, s == std::string::npos ? std::string::npos : s - 1));
    a.stage = s == std::string::npos ? stage_when_unnamed : std::stoi(token.substr(s + 1)) - 1;
    out.push_back(a);
  }
  return out;
}

// Runs its list in order, waiting for the next entry whether it is ready or not.
class TextListPolicy final : public DevicePolicy {
 public:
  explicit TextListPolicy(std::vector<Action> actions) : actions_(std::move(actions)) {}
  std::optional<Action> next(const LocalView& /*view*/) override {
    if (cursor_ == actions_.size()) return std::nullopt;
    return actions_[cursor_];
  }
  void started(const Action& /*action*/) override { ++cursor_; }
  bool finished() const override { return cursor_ == actions_.size(); }

 private:
  std::vector<Action> actions_;
  std::size_t cursor_ = 0;
};

// A plan of one list per device on `layout`.
inline ExecutionPlan plan_of_actions(const PipelineLayout& layout, std::vector<std::vector<Action>> lists,
                                     int total_microbatches) {
  ExecutionPlan plan;
  plan.layout = layout;
  plan.total_microbatches = total_microbatches;
  for (auto& list : lists) plan.policies.push_back(std::make_unique<TextListPolicy>(std::move(list)));
  return plan;
}

// A plan of one text list per device on `layout` (device d's unnamed ops are on its first stage).
inline ExecutionPlan plan_of_lists(const PipelineLayout& layout, const std::vector<std::string>& lists,
                                   int total_microbatches) {
  std::vector<std::vector<Action>> actions;
  for (int d = 0; d < static_cast<int>(lists.size()); ++d)
    actions.push_back(actions_of(lists[d], layout.stages_on(d).front()));
  return plan_of_actions(layout, std::move(actions), total_microbatches);
}

// The engine's run of `plan` with the same latency on every transfer.
inline RunTrace run_plan(ExecutionPlan& plan, const CostModel& costs, TimeNs latency_ns = 0) {
  FixedLatencyComm comm(std::vector<TimeNs>(static_cast<std::size_t>(plan.layout.devices), latency_ns));
  return simulate(plan, costs, comm);
}

// One device's ops in the order they ran, as "F3@4.5" (microbatch, start in ms); with several stages on the
// device the 1-based stage is added, "F3s5@4.5"; U is written "U@t". `microbatches_per_batch` > 0 keeps one
// batch's ops (a U's index is its step).
inline std::vector<std::string> timeline(const RunTrace& trace, int device, int batch = -1,
                                         int microbatches_per_batch = 0) {
  std::vector<std::string> out;
  for (const OpRecord& op : trace.ops) {
    if (op.device != device) continue;
    if (batch >= 0) {
      const int op_batch =
          op.action.kind == OpKind::U ? op.action.microbatch : op.action.microbatch / microbatches_per_batch;
      if (op_batch != batch) continue;
    }
    const std::string stage =
        trace.layout.chunks_per_device > 1 ? fmt::format("s{}", op.action.stage + 1) : std::string();
    if (op.action.kind == OpKind::U) {
      out.push_back(fmt::format("U{}@{:g}", stage, ns_to_ms(op.start_ns)));
    } else {
      out.push_back(fmt::format("{}{}{}@{:g}", op_letter(op.action.kind), op.action.microbatch, stage,
                                ns_to_ms(op.start_ns)));
    }
  }
  return out;
}

// The record of one op; fails the test (and returns a dummy) when the op did not run.
inline OpRecord find_op(const RunTrace& trace, OpKind kind, int stage, int microbatch) {
  for (const OpRecord& op : trace.ops) {
    if (op.action.kind == kind && op.action.stage == stage && op.action.microbatch == microbatch) return op;
  }
  ADD_FAILURE() << "no " << describe({kind, false, stage, microbatch}) << " in the trace";
  return OpRecord{};
}

inline TimeNs start_ns(const RunTrace& trace, OpKind kind, int stage, int microbatch) {
  return find_op(trace, kind, stage, microbatch).start_ns;
}

// The most any device idles before its last op ends (optimizer steps left out): DualPipe's bubble figure.
inline TimeNs most_idle_device_ns(const RunTrace& trace) {
  std::vector<TimeNs> end_ns(trace.layout.devices, 0);
  std::vector<TimeNs> busy_ns(trace.layout.devices, 0);
  for (const OpRecord& op : trace.ops) {
    if (op.action.kind == OpKind::U) continue;
    end_ns[op.device] = std::max(end_ns[op.device], op.end_ns);
    busy_ns[op.device] += op.end_ns - op.start_ns;
  }
  TimeNs idle_max_ns = 0;
  for (int d = 0; d < trace.layout.devices; ++d) idle_max_ns = std::max(idle_max_ns, end_ns[d] - busy_ns[d]);
  return idle_max_ns;
}

// The engine's figures (sim/metrics.h) over a whole run of `batches` batches of m microbatches, as a run of
// exactly that many batches reports them.
inline RunMetrics whole_run_metrics(const RunTrace& trace, int microbatches_per_batch, int batches) {
  return compute_metrics(
      trace, {microbatches_per_batch, RunWindow::of_batches(batches, 0, batches, microbatches_per_batch)});
}

// Figures over the whole trace: 1 - busy / (devices x makespan), and the most any device idles before its
// last op ends.
inline double whole_run_bubble(const RunTrace& trace) {
  double busy_ns = 0;
  for (const OpRecord& op : trace.ops) busy_ns += static_cast<double>(op.end_ns - op.start_ns);
  return 1 - busy_ns / (trace.layout.devices * static_cast<double>(trace.makespan_ns));
}

}  // namespace pipesim::test
