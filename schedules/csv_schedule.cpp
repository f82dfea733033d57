// The `csv:PATH` schedule: a user's static schedule in PyTorch's CSV format (schedules/pytorch_csv.h), run
// like any built-in static schedule: each batch replays the rows, then every stage steps.
#include <fmt/format.h>

#include "base/errors.h"
#include "schedules/pytorch_csv.h"

namespace pipesim {
namespace {

class CsvSchedule final : public StaticSchedule {
 public:
  CsvSchedule(std::string path, PytorchCsvSchedule csv) : path_(std::move(path)), csv_(std::move(csv)) {}

  std::string label() const override { return "csv:" + path_; }
  PipelineLayout layout(int /*devices*/) const override { return csv_.layout(); }
  bool splits_backward() const override {
    for (const ActionList& row : csv_.actions) {
      for (const Action& a : row) {
        if (a.kind == OpKind::I || a.kind == OpKind::W) return true;
      }
    }
    return false;
  }
  bool fuses_forward_backward() const override {
    for (const ActionList& row : csv_.actions) {
      for (const Action& a : row) {
        if (a.fused_with_next) return true;
      }
    }
    return false;
  }

  void check(const PipelineSpec& spec) const override {
    if (spec.devices != csv_.ranks) {
      throw InputError(fmt::format("{}: the file has {} rows (ranks), but the scenario has {} stages", path_,
                                   csv_.ranks, spec.devices));
    }
    if (spec.microbatches != csv_.microbatches) {
      throw InputError(
          fmt::format("{}: the file's microbatches are 0..{} (m = {}), but the scenario has "
                      "m = {} microbatches",
                      path_, csv_.microbatches - 1, csv_.microbatches, spec.microbatches));
    }
  }

  DeviceActionLists batch_actions(const PipelineSpec& spec, const CostModel& /*costs*/) const override {
    check(spec);
    return csv_.actions;
  }

  ExecutionPlan plan(const PipelineSpec& spec, const CostModel& costs) const override {
    ExecutionPlan plan = StaticSchedule::plan(spec, costs);
    plan.transfer_gates = csv_.transfer_gates;
    plan.transfer_gate_period = csv_.microbatches;
    return plan;
  }

 private:
  std::string path_;
  PytorchCsvSchedule csv_;
};

}  // namespace

std::unique_ptr<Schedule> make_csv_schedule(const std::string& path, const ScheduleParams& /*params*/) {
  return std::make_unique<CsvSchedule>(path, read_pytorch_csv(path));
}

}  // namespace pipesim
