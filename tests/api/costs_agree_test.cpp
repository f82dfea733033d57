// `pipesim costs` and `pipesim run` resolve a schedule entry through the same resolve() (api/resolve.h), so
// the per-stage costs the one shows are the op durations the other's engine ran, and the memory the one shows
// is the memory the other measured: checked here on explicit and transformer scenarios, entries with their
// own pipeline: (global batch, microbatch size, layer split) and interleaved layouts.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "api/simulation.h"
#include "api/stage_costs.h"
#include "pipesim_source_dir.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

// Every schedule entry of the scenario: each F, I/B and W the run simulated lasted what `costs` shows for its
// stage, each device's activation bytes per microbatch are the sum over its stages, and (one weight version)
// the weights at the peak are the parameter bytes of its stages.
void expect_costs_agree_with_run(const Scenario& scenario) {
  const std::vector<ScheduleRequest> requests = requested_schedules(scenario);
  ASSERT_FALSE(requests.empty());
  for (size_t k = 0; k < requests.size(); ++k) {
    SCOPED_TRACE(requests[k].name);
    const ResolvedStageCosts costs = resolve_stage_costs(scenario, static_cast<int>(k) + 1, {});
    const SimulationResult run = simulate_schedule(scenario, requests[k], test::fixed_batches());
    EXPECT_EQ(costs.entry, run.label);
    EXPECT_DOUBLE_EQ(costs.scenario.samples_per_microbatch(), run.microbatch_size);
    const PipelineLayout& layout = run.trace.layout;
    ASSERT_EQ(costs.rows.size(), static_cast<size_t>(layout.stages));
    ASSERT_EQ(costs.devices, layout.devices);
    int checked_ops = 0;
    const UnevenSplit split = uneven_split(costs.scenario);
    EXPECT_EQ(costs.smaller_rows.empty(), split.larger_count == 0);
    for (const OpRecord& op : run.trace.ops) {
      // An uneven batch: the first B mod m microbatches of each batch are the larger ones (costs.rows).
      const bool smaller =
          split.larger_count > 0 && op.action.microbatch % costs.scenario.microbatches >= split.larger_count;
      const StageRow& row = (smaller ? costs.smaller_rows : costs.rows)[op.action.stage];
      double expected_ms = -1;
      if (op.action.kind == OpKind::F) expected_ms = row.forward_ms;
      if (op.action.kind == OpKind::I) expected_ms = row.backward_input_ms;
      if (op.action.kind == OpKind::W) expected_ms = row.backward_weight_ms;
      if (op.action.kind == OpKind::B) expected_ms = row.backward_input_ms + row.backward_weight_ms;
      if (expected_ms < 0) continue;
      // The engine keeps integer nanoseconds: within 1 ns of the costs' milliseconds (2 for B = I + W).
      EXPECT_NEAR(ns_to_ms(op.duration_ns()), expected_ms, 2.5e-6) << describe(op.action);
      ++checked_ops;
    }
    EXPECT_GT(checked_ops, 0);
    std::vector<double> activation(layout.devices, 0), weights(layout.devices, 0);
    for (int stage = 0; stage < layout.stages; ++stage) {
      activation[layout.device(stage)] += costs.rows[stage].activation_bytes;
      weights[layout.device(stage)] += std::max(0.0, costs.rows[stage].parameter_bytes);
    }
    for (int device = 0; device < layout.devices; ++device) {
      EXPECT_NEAR(static_cast<double>(run.activation_bytes_per_microbatch[device]), activation[device],
                  layout.stages);
      const DeviceMemory& memory = run.memory.devices[device];
      if (memory.weight_versions_max == 1 && costs.rows[0].parameter_bytes >= 0) {
        EXPECT_NEAR(static_cast<double>(memory.peak_weight_bytes), weights[device], layout.stages);
      }
    }
  }
}

TEST(CostsAgreeWithRun, ExplicitCostsPerDeviceAndInterleaved) {
  expect_costs_agree_with_run(test::scenario_from_yaml(
      "pipeline: {stages: 3, microbatches: 6, batches: 2}\n"
      "costs: {forward_ms: [1, 2, 3], backward_input_ms: [2, 3, 1], backward_weight_ms: [1, 1, 2],\n"
      "        comm_ms: 0.5, activation_bytes: [100, 200, 300], weight_grad_activation_bytes: [10, 20, 30],\n"
      "        parameter_bytes: [1000, 2000, 3000]}\n"
      "schedules: [gpipe, 1f1b-flush, zb-h1, {name: interleaved-1f1b, chunks: 2}]\n"));
}

TEST(CostsAgreeWithRun, TransformerWithGlobalBatchAndEntryPipelines) {
  // The entries' own global batch (b = B/m, fractional for B=10, m=4), microbatch size and microbatches: the
  // costs change with b, so a `costs` that ignored them would disagree with the run.
  expect_costs_agree_with_run(test::scenario_from_yaml(
      "model: {layers: 8, hidden: 256, heads: 8, seq_len: 128, vocab: 1000, dtype: fp32}\n"
      "hardware: {profile: cpu-vm}\n"
      "pipeline: {stages: 4, microbatches: 4, global_batch: 16, batches: 2}\n"
      "optimizer: {sync: barrier, type: adamw}\n"
      "schedules:\n"
      "  - 1f1b-flush\n"
      "  - {name: gpipe, pipeline: {global_batch: 10}}\n"
      "  - {name: 1f1b-flush, pipeline: {microbatches: 8, microbatch_size: 3}}\n"
      "  - {name: zb-h1, pipeline: {global_batch: 32, layer_split: even}}\n"));
}

TEST(CostsAgreeWithRun, DefaultScenarioWithGlobalBatchAndBalancedSplit) {
  // The PACI setting: global batch 128 over entries at m = 4..40 (b = 128/m, fractional for m = 24, 40), PACI
  // entries with their own m; a balanced split of the model's units.
  expect_costs_agree_with_run(
      load_scenario(std::string(PIPESIM_SOURCE_DIR) + "/share/scenarios/paci/gpt2-medium-8stage.yaml",
                    {"pipeline.batches=2"}));
}

}  // namespace
}  // namespace pipesim
