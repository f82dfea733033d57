#include "cli/train/execution_summary.h"

#include <algorithm>
#include <map>

namespace pipesim {

namespace {

double mean_loss_of_batch(const std::vector<double>& losses, int batch, int m) {
  double sum = 0;
  for (int j = batch * m; j < (batch + 1) * m; ++j) sum += losses[j];
  return sum / m;
}

}  // namespace

nlohmann::json execution_summary(const ExecutedSchedule& run) {
  const auto& ops = run.result.ops;
  TimeNs first_start = ops.empty() ? 0 : ops.front().start_ns;
  TimeNs last_end = first_start;
  std::vector<Bytes> peak(run.spec.devices, 0);
  std::map<std::pair<int, int>, int> drift;  // (stage, mb) -> v_B - v_F
  TimeNs overhead_ns = 0;
  for (const executor::ExecutedOp& op : ops) {
    overhead_ns += op.overhead_ns;
    first_start = std::min(first_start, op.start_ns);
    last_end = std::max(last_end, op.end_ns);
    peak[op.device] = std::max(peak[op.device], op.live_activation_bytes);
    const auto key = std::pair{op.action.stage, op.action.microbatch};
    if (op.action.kind == OpKind::F) drift[key] -= op.weight_version;
    if (op.action.kind == OpKind::B || op.action.kind == OpKind::I) drift[key] += op.weight_version;
  }
  std::vector<int> max_drift(run.virtual_stages, 0);
  for (const auto& [key, d] : drift) max_drift[key.first] = std::max(max_drift[key.first], d);
  const int m = run.spec.microbatches;
  nlohmann::json out;
  out["schedule"] = run.label;
  out["mode"] = run.mode == ExecuteMode::kReplay ? "replay" : "real";
  out["devices"] = run.spec.devices;
  out["stages"] = run.virtual_stages;
  out["microbatches"] = m;
  out["batches"] = run.spec.batches;
  out["ops"] = ops.size();
  out["makespan_ns"] = last_end - first_start;
  out["timing_valid"] = run.result.timing_valid;
  if (run.mode == ExecuteMode::kReal && !ops.empty()) {
    // The executor's own time per op (choosing, receiving, sending; not waiting): ExecutedOp::overhead_ns.
    out["overhead_ns_per_op"] = overhead_ns / static_cast<TimeNs>(ops.size());
  }
  out["first_batch_mean_loss"] = mean_loss_of_batch(run.result.losses, 0, m);
  out["last_batch_mean_loss"] = mean_loss_of_batch(run.result.losses, run.spec.batches - 1, m);
  out["max_drift_per_stage"] = max_drift;
  out["peak_live_activation_bytes_per_device"] = peak;
  std::vector<std::uint64_t> fingerprints;
  for (const std::vector<float>& params : run.result.final_parameters)
    fingerprints.push_back(executor::fingerprint(params));
  out["final_weights_fingerprint_per_stage"] = fingerprints;
  return out;
}

}  // namespace pipesim
