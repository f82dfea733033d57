// DualPipe through the api: the weights a scenario's parameter_bytes put on each device (two copies) and the
// refusal of the PyTorch CSV export. Its plans and timelines are tested in tests/schedules/dualpipe_test.cpp.
#include <gtest/gtest.h>

#include "api/schedule_export.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

using test::run_schedule;

Scenario dualpipe_scenario(int devices, int microbatches) {
  return test::scenario_from_yaml(
      fmt::format("pipeline: {{stages: {}, microbatches: {}, batches: 1}}\n"
                  "costs: {{forward_ms: 1, backward_input_ms: 1, backward_weight_ms: 1, comm_ms: 0, "
                  "activation_bytes: 10,\n"
                  "        weight_grad_activation_bytes: 3, parameter_bytes: 1000}}\n"
                  "optimizer: {{sync: barrier}}\n",
                  devices, microbatches));
}

// Each device holds one stage of each copy: twice 1F1B's weights, every copy stepped once per batch.
TEST(DualPipe, EveryDeviceHoldsTwoCopiesOfItsWeights) {
  const SimulationResult dual = run_schedule(dualpipe_scenario(4, 8), "dualpipe");
  const SimulationResult one = run_schedule(dualpipe_scenario(4, 8), "1f1b-flush");
  ASSERT_TRUE(dual.weight_memory_known);
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(dual.memory.devices[d].peak_weight_bytes, 2 * one.memory.devices[d].peak_weight_bytes);
    EXPECT_EQ(one.memory.devices[d].peak_weight_bytes, 1000);
  }
}

TEST(DualPipe, ExportSaysPyTorchsCsvCannotHoldTwoCopies) {
  try {
    export_schedule_csv(dualpipe_scenario(4, 8), ScheduleRequest{"dualpipe", ScheduleParams("test")});
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("runs 2 copies of the model side by side"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace pipesim
