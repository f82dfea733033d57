// The costs of a layout with two copies of the model (cost_models/pipeline_copies_costs.h) under DualPipe's
// plan: a fused F&B slot of two different pieces of the model stays physical although overlap_fb_ms was given
// per device.
#include "cost_models/pipeline_copies_costs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "cost_models/explicit_costs.h"
#include "tests/schedules/schedule_runs.h"

namespace pipesim {
namespace {

// A fused slot on a device runs two different pieces of the model (one of each copy), while overlap_fb_ms was
// given per device: the slot stays physical for the pair it runs, from its longer op to both. Device 1 pairs
// the first piece's F (1 ms) with the second piece's B (4 ms); device 0's 2 ms overlap would make that slot
// shorter than the B alone.
TEST(DualPipe, AFusedSlotStaysBetweenItsLongerOpAndBoth) {
  // costs: {forward_ms: [1, 3], backward_input_ms: [1, 2], backward_weight_ms: [1, 2], overlap_fb_ms: [2, 7]}
  // for the first copy's two devices, as the api prices a scenario with two copies.
  ExplicitCostTable table;
  table.forward_ns = {ms_to_ns(1), ms_to_ns(3)};
  table.backward_input_ns = {ms_to_ns(1), ms_to_ns(2)};
  table.backward_weight_ns = {ms_to_ns(1), ms_to_ns(2)};
  table.optimizer_ns = {0, 0};
  table.overlap_fb_ns = {ms_to_ns(2), ms_to_ns(7)};
  table.activation_bytes = {1'000'000, 1'000'000};
  table.weight_grad_activation_bytes = {0, 0};
  table.transfer_bytes = {0, 0};
  const PipelineLayout layout = PipelineLayout::bidirectional(2);
  const PipelineCopiesCostModel costs(std::make_unique<ExplicitCostModel>(table, layout.first_pipeline()),
                                      layout);
  const RunTrace trace = test::run_schedule_plan("dualpipe", 2, 8, /*batches=*/1, costs);
  int fused = 0;
  for (int d = 0; d < 2; ++d) {
    std::vector<OpRecord> ops;
    for (const OpRecord& op : trace.ops) {
      if (op.device == d) ops.push_back(op);
    }
    for (std::size_t i = 0; i + 1 < ops.size(); ++i) {
      if (!ops[i].action.fused_with_next) continue;
      ++fused;
      const TimeNs forward_ns = costs.duration(ops[i].action);
      const TimeNs backward_ns = costs.duration(ops[i + 1].action);
      const TimeNs slot_ns = (ops[i].end_ns - ops[i].start_ns) + (ops[i + 1].end_ns - ops[i + 1].start_ns);
      EXPECT_GE(slot_ns, std::max(forward_ns, backward_ns)) << describe(ops[i].action);
      EXPECT_LE(slot_ns, forward_ns + backward_ns) << describe(ops[i].action);
    }
  }
  EXPECT_GT(fused, 0);
}

}  // namespace
}  // namespace pipesim
