// `pipesim export`'s CSV with PyTorch's SEND and RECV actions (api/schedule_export.h, compute_comms) for
// every static schedule: it reads back to the compute lists and runs as they do through the api. The transfer
// gates and PyTorch's lowering pass by hand are tests/schedules/transfer_gates_test.cpp.
#include <gtest/gtest.h>

#include "api/schedule_export.h"
#include "schedules/pytorch_csv.h"
#include "schedules/registry.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

using test::TempDir;

// Every static schedule on one pipeline: its compute_comms export reads back to the same compute lists, runs
// as the compute-only file does when transfers overlap compute, and runs without deadlock under blocking comm
// (each RECV comes before the op that reads it, as PyTorch's pass places it).
TEST(PytorchCommsFormat, EveryStaticScheduleRoundTripsAndRunsUnderBlockingComm) {
  TempDir dir;
  const std::string yaml =
      "pipeline: {stages: 4, microbatches: 8, batches: 2}\n"
      "costs: {forward_ms: [1, 1.5, 1.25, 2], backward_input_ms: [1, 1.25, 1.5, 2.5],\n"
      "        backward_weight_ms: [0.75, 1, 0.5, 1.5], comm_ms: 0.125, weight_grad_activation_bytes: "
      "400000}\n";
  const Scenario overlapping = test::scenario_from_yaml(yaml);
  const Scenario blocking = test::scenario_from_yaml(yaml + "comm: {model: latency, blocking: true}\n");
  int tested = 0;
  for (const ScheduleInfo& info : registered_schedules()) {
    const ScheduleRequest request{info.name, ScheduleParams(test::kTestSource)};
    const std::unique_ptr<Schedule> schedule = make_schedule(request.name, request.params);
    if (!dynamic_cast<const StaticSchedule*>(schedule.get()) || schedule->layout(4).pipelines > 1) continue;
    SCOPED_TRACE(info.name);
    const std::string plain_text = export_schedule_csv(overlapping, request);
    const std::string comms_text = export_schedule_csv(overlapping, request, true);
    EXPECT_EQ(parse_pytorch_csv(comms_text, "comms.csv").actions,
              parse_pytorch_csv(plain_text, "p.csv").actions);
    const std::string plain = dir.write(info.name + ".csv", plain_text);
    const std::string comms = dir.write(info.name + "-comms.csv", comms_text);
    const SimulationResult a = test::run_schedule(overlapping, "csv:" + plain);
    const SimulationResult b = test::run_schedule(overlapping, "csv:" + comms);
    EXPECT_EQ(a.metrics.period_ns, b.metrics.period_ns);
    EXPECT_EQ(a.metrics.makespan_ns, b.metrics.makespan_ns);
    EXPECT_NO_THROW(test::run_schedule(blocking, "csv:" + comms));
    ++tested;
  }
  EXPECT_GE(tested, 12);
}

}  // namespace
}  // namespace pipesim
