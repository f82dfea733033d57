// PyTorch's SEND and RECV actions in a CSV schedule: no compute, but under blocking comm a transfer moves
// only once both devices have ended the op before its SEND and its RECV (sim/transfer_gates.h), and PyTorch's
// lowering pass places them (schedules/pytorch_csv.h). The csv: schedule's plan runs on costs and comm stated
// directly; the export of every registered schedule with its comms is
// tests/api/pytorch_comms_export_test.cpp.
#include "sim/transfer_gates.h"

#include <gtest/gtest.h>

#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "schedules/pytorch_csv.h"
#include "sim/comm_model.h"
#include "tests/error_text.h"
#include "tests/schedules/schedule_runs.h"
#include "tests/sim/stage_table_costs.h"
#include "tests/temp_dir.h"

namespace pipesim {
namespace {

using test::TempDir;

// The file's plan on 2 devices, m = 2, one batch exactly under a barrier: F = 1 ms, B = 2 ms on each device,
// 1 ms on every transfer, blocking (a transfer holds both devices' streams) or overlapping compute.
RunTrace transfer_gates_run(const std::string& path, bool blocking) {
  test::ScheduleRunSpec run("csv:" + path, 2, 2, 1);
  run.with_sync(OptimizerSync::kBarrier).with_comm([blocking](int devices) -> std::unique_ptr<CommModel> {
    auto latency = std::make_unique<FixedLatencyComm>(std::vector<TimeNs>(devices, ms_to_ns(1)));
    if (blocking) return std::make_unique<BlockingComm>(std::move(latency));
    return latency;
  });
  return test::run_schedule_plan(
      run, test::device_costs_on(PipelineLayout::linear(2), test::device_table_ms(2, {1}, {2}, {})));
}

constexpr const char* kTransferGatesLateRecv =
    "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\n"
    "1RECV_F0,1F0,1B0,1SEND_B0,1RECV_F1,1F1,1B1,1SEND_B1\n";
constexpr const char* kTransferGatesComputeOnly = "0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n";

struct TransferGatesTimelines {
  std::vector<std::string> device0;
  std::vector<std::string> device1;
};

TransferGatesTimelines transfer_gates_timelines(const std::string& text, bool blocking) {
  TempDir dir;
  const RunTrace trace = transfer_gates_run(dir.write("schedule.csv", text), blocking);
  return {test::timeline(trace, 0, 0, 2), test::timeline(trace, 1, 0, 2)};
}

// Each SEND and RECV gates its transfer on the compute action before it in its row; one that comes first in
// its row, or that follows the producing op itself, adds no wait beyond the data's.
TEST(TransferGates, ParsedFromTheActionBeforeEachSendAndRecv) {
  const PytorchCsvSchedule csv = parse_pytorch_csv(kTransferGatesLateRecv, "late.csv");
  EXPECT_EQ(csv.actions, parse_pytorch_csv(kTransferGatesComputeOnly, "plain.csv").actions);
  const std::vector<TransferGate> want = {
      {0, true, 0, forward(0, 0)},    // 0SEND_F0 after 0F0
      {0, true, 1, forward(0, 1)},    // 0SEND_F1 after 0F1
      {1, false, 0, forward(0, 1)},   // 0RECV_B0 after 0F1
      {1, false, 1, backward(0, 0)},  // 0RECV_B1 after 0B0
      // Row 1: 1RECV_F0 comes first (no gate).
      {1, false, 0, backward(1, 0)},  // 1SEND_B0 after 1B0
      {0, true, 1, backward(1, 0)},   // 1RECV_F1 after 1B0
      {1, false, 1, backward(1, 1)},  // 1SEND_B1 after 1B1
  };
  EXPECT_EQ(csv.transfer_gates, want);
}

// Worked by hand (F = 1 ms, B = 2 ms, 1 ms a transfer, blocking: a transfer holds both devices' streams).
// Compute only, the activation of microbatch 1 leaves device 0 at 3 ms, as device 1 ends F0, and holds device
// 1 until 4: B0 at 4-6, its gradient 6-7, F1 7-8, B1 8-10, gradient 10-11, device 0's B1 11-13.
// With device 1's RECV_F1 after its B0, that activation waits until B0 ends (3-5) and moves with B0's
// gradient (5-6): device 0's B0 at 6-8, device 1's F1 6-7 and B1 7-9, the gradient 9-10, B1 10-12.
TEST(TransferGates, BlockingCommPostsEachTransferAtItsSendAndRecv) {
  const TransferGatesTimelines plain = transfer_gates_timelines(kTransferGatesComputeOnly, true);
  EXPECT_EQ(plain.device0, (std::vector<std::string>{"F0@0", "F1@2", "B0@7", "B1@11", "U@13"}));
  EXPECT_EQ(plain.device1, (std::vector<std::string>{"F0@2", "B0@4", "F1@7", "B1@8", "U@13"}));
  const TransferGatesTimelines late = transfer_gates_timelines(kTransferGatesLateRecv, true);
  EXPECT_EQ(late.device0, (std::vector<std::string>{"F0@0", "F1@2", "B0@6", "B1@10", "U@12"}));
  EXPECT_EQ(late.device1, (std::vector<std::string>{"F0@2", "B0@3", "F1@6", "B1@7", "U@12"}));
}

// Transfers that overlap compute are posted when their data exists, as PyTorch's runtime posts a RECV early
// and waits only before the op that reads it: the actions change nothing.
TEST(TransferGates, OverlappingCommIgnoresThem) {
  const TransferGatesTimelines plain = transfer_gates_timelines(kTransferGatesComputeOnly, false);
  const TransferGatesTimelines late = transfer_gates_timelines(kTransferGatesLateRecv, false);
  EXPECT_EQ(late.device0, plain.device0);
  EXPECT_EQ(late.device1, plain.device1);
}

// A RECV after the op that reads it can never be met under blocking comm (PyTorch's runtime refuses to
// compute before receiving): the run stops with a deadlock that names the transfer.
TEST(TransferGates, ARecvAfterItsConsumerDeadlocksUnderBlockingComm) {
  const std::string text = "0F0,0SEND_F0,0F1,0SEND_F1,0B0,0B1\n1F0,1RECV_F0,1B0,1F1,1B1\n";
  TempDir dir;
  const std::string path = dir.write("bad.csv", text);
  std::string message;
  try {
    transfer_gates_run(path, true);
  } catch (const std::exception& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("the activation of mb 0 from stage 1 to stage 2 waits for its SEND and RECV points"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("needs the activation of mb 0 from stage 1, held back at its SEND and RECV points"),
            std::string::npos)
      << message;
  EXPECT_NO_THROW(transfer_gates_timelines(text, false));
}

TEST(TransferGates, MalformedActionsAreNamed) {
  const auto error = [](const std::string& text) {
    return test::input_error_of([&] { parse_pytorch_csv(text, "t.csv"); });
  };
  EXPECT_NE(
      error("0RECV_F0,0F0,0B0\n1F0,1B0\n").find("'0RECV_F0' moves no data: stage 0 receives no activation"),
      std::string::npos);
  EXPECT_NE(error("0F0,1SEND_F0,0B0\n1F0,1B0\n")
                .find("row 1 (rank 0), column 2: '1SEND_F0' names stage 1, "
                      "which row 2 (rank 1) runs"),
            std::string::npos);
  EXPECT_NE(
      error("0F0,0SEND_F4,0B0\n1F0,1B0\n").find("names microbatch 4, but the file's microbatches are 0..0"),
      std::string::npos);
  EXPECT_NE(error("0F0,0SEND_Fx,0B0\n1F0,1B0\n").find("'0SEND_Fx' is not an action"), std::string::npos);
  // A transfer without its microbatch names no transfer.
  EXPECT_NE(error("0F0,0SEND_F,0B0\n1F0,1B0\n").find("'0SEND_F' is not an action"), std::string::npos);
}

// PyTorch's lowering pass on 1F1B, N = 2, m = 2, worked by hand: round 1 rank 0 places 0F0 (SEND_F0 after
// it, RECV_F0 to rank 1) and rank 1 then 1F0; round 2: 0F1 (RECV_F1 to rank 1), 1B0 (RECV_B0 to rank 0);
// round 3: 0B0, 1F1; round 4: rank 0's 0B1 has no gradient yet, 1B1 (RECV_B1 to rank 0); round 5: 0B1.
TEST(PytorchCommsFormat, OneFOneBByHand) {
  const PytorchCsvSchedule plain = parse_pytorch_csv(kTransferGatesComputeOnly, "plain.csv");
  EXPECT_EQ(format_pytorch_csv_with_comms(plain.actions, plain.layout()),
            "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\n"
            "1RECV_F0,1F0,1RECV_F1,1B0,1SEND_B0,1F1,1B1,1SEND_B1\n");
}

}  // namespace
}  // namespace pipesim
