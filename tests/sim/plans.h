#pragma once
// Plans and costs built directly for the tests of the engine (tests/sim/) and, through
// tests/schedules/schedule_runs.h, of the schedules: no scenario, no YAML, nothing above sim/. A test states
// its per-stage costs, writes a device's list as text ("F0 F1 B0 U0") or takes a schedule's plan, runs the
// engine and reads the trace as "F0@3" timelines.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "sim/comm_model.h"
#include "sim/cost_model.h"
#include "sim/engine/engine.h"
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
        return forward_ns_;
      case OpKind::B:
        return input_ns_ + weight_ns_;
      case OpKind::I:
        return input_ns_;
      case OpKind::W:
        return weight_ns_;
      case OpKind::U:
        return optimizer_ns_of_stage_.empty() ? optimizer_ns_ : optimizer_ns_of_stage_[a.stage];
    }
    return 0;
  }
  // U's duration per (virtual) stage instead of one for all, in ms.
  UniformStageCosts& optimizer_ms_per_stage(const std::vector<double>& ms) {
    optimizer_ns_of_stage_.clear();
    for (double t : ms) optimizer_ns_of_stage_.push_back(ms_to_ns(t));
    return *this;
  }
  bool durations_by_kind_and_stage() const override { return true; }
  Bytes activation_bytes(int /*stage*/) const override { return 1; }
  Bytes weight_grad_activation_bytes(int /*stage*/) const override { return 0; }
  Bytes transfer_bytes(int /*stage*/) const override { return 0; }

 private:
  TimeNs forward_ns_, input_ns_, weight_ns_, optimizer_ns_;
  std::vector<TimeNs> optimizer_ns_of_stage_;
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

// Figures over the whole trace: 1 - busy / (devices x makespan), and the most any device idles before its
// last op ends.
inline double whole_run_bubble(const RunTrace& trace) {
  double busy_ns = 0;
  for (const OpRecord& op : trace.ops) busy_ns += static_cast<double>(op.end_ns - op.start_ns);
  return 1 - busy_ns / (trace.layout.devices * static_cast<double>(trace.makespan_ns));
}

}  // namespace pipesim::test
