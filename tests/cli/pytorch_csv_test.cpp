// PyTorch CSV schedules: exact parsing, errors that name row and column, a deadlock that is reported, and the
// round trip export -> csv:PATH giving the identical run for every static schedule.
#include "schedules/pytorch_csv.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/schedule_export.h"
#include "base/errors.h"
#include "report/report.h"
#include "report/result_record.h"
#include "report/table_columns.h"
#include "schedules/registry.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

using test::TempDir;

// Heterogeneous split costs with a comm latency, so that every schedule (also split ones) runs and timings
// differ.
constexpr const char* kPytorchCsvScenario =
    "pipeline: {stages: 4, microbatches: 8, batches: 3}\n"
    "costs: {forward_ms: [1, 1.5, 1.25, 2], backward_input_ms: [1, 1.25, 1.5, 2.5],\n"
    "        backward_weight_ms: [0.75, 1, 0.5, 1.5], comm_ms: 0.125, weight_grad_activation_bytes: "
    "400000}\n";

std::string expect_csv_input_error(const std::string& text) {
  try {
    parse_pytorch_csv(text, "user.csv");
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError for:\n" << text;
  return "";
}

TEST(PytorchCsv, ParsesCellsSkipsIdleAndCommunication) {
  // Empty cells are PyTorch's idle slots; SEND/RECV/UNSHARD come from its compute_comms format.
  const PytorchCsvSchedule csv =
      parse_pytorch_csv("0F0,0F1,,0B0, 0B1\r\n1F0,1RECV_F0,1B0,1SEND_B0,1UNSHARD,1F1,1B1\n\n", "user.csv");
  EXPECT_EQ(csv.ranks, 2);
  EXPECT_EQ(csv.stages, 2);
  EXPECT_EQ(csv.chunks(), 1);
  EXPECT_EQ(csv.microbatches, 2);
  const DeviceActionLists expected = {{forward(0, 0), forward(0, 1), backward(0, 0), backward(0, 1)},
                                      {forward(1, 0), backward(1, 0), forward(1, 1), backward(1, 1)}};
  EXPECT_EQ(csv.actions, expected);
}

TEST(PytorchCsv, GlobalStagesGiveTheInterleavedLayout) {
  // Stage s on rank s % N: ranks 0 and 1 hold stages {0, 2} and {1, 3}.
  const PytorchCsvSchedule csv =
      parse_pytorch_csv("0F0,2F0,2I0,2W0,0I0,0W0\n1F0,3F0,3I0,1I0,3W0,1W0\n", "v.csv");
  EXPECT_EQ(csv.stages, 4);
  EXPECT_EQ(csv.chunks(), 2);
  EXPECT_EQ(csv.actions[1][3], backward_input(1, 0));
  EXPECT_EQ(csv.actions[1][4], backward_weight(3, 0));
}

TEST(PytorchCsv, WritesOneRowPerDevice) {
  const DeviceActionLists lists = {
      {forward(0, 0), forward(2, 0), backward_input(2, 0), backward_weight(0, 10)},
      {forward(1, 0), backward(3, 12)}};
  EXPECT_EQ(format_pytorch_csv(lists), "0F0,2F0,2I0,0W10\n1F0,3B12\n");
  EXPECT_THROW(format_pytorch_csv({{optimizer_step(0, 0, true)}}), InputError);
}

TEST(PytorchCsv, MalformedCellNamesFileRowAndColumn) {
  const struct {
    std::string text;
    std::string where;
  } cases[] = {
      {"0F0,0X1\n1F0\n", "row 1 (rank 0), column 2: '0X1'"},
      {"0F0\n1F0,F1\n", "row 2 (rank 1), column 2: 'F1'"},
      {"0F0,0F\n1F0\n", "row 1 (rank 0), column 2: '0F'"},
      {"0F0,0F1x\n1F0\n", "row 1 (rank 0), column 2: '0F1x'"},
      {"0F0\n1F0,1B-1\n", "row 2 (rank 1), column 2: '1B-1'"},
      {"-0F0\n1F0\n", "row 1 (rank 0), column 1: '-0F0'"},
      {"0F0,0U0\n1F0\n", "row 1 (rank 0), column 2: '0U0'"},
      {"0F0,0F99999999999\n1F0\n", "row 1 (rank 0), column 2: '0F99999999999'"},
      {"0F0,0SEND_Fx\n1F0\n", "row 1 (rank 0), column 2: '0SEND_Fx'"},
  };
  for (const auto& c : cases) {
    const std::string message = expect_csv_input_error(c.text);
    EXPECT_NE(message.find("user.csv: " + c.where), std::string::npos) << message;
    EXPECT_NE(message.find("e.g. 2F0"), std::string::npos) << message;
  }
}

TEST(PytorchCsv, AStageOnTwoRanksOnNoneOrARankWithoutStagesIsAnError) {
  EXPECT_NE(expect_csv_input_error("0F0,1F0\n1F0\n")
                .find("row 2 (rank 1), column 1: '1F0' names stage 1, which row 1 (rank 0) runs already"),
            std::string::npos);
  EXPECT_NE(expect_csv_input_error("0F0,0B0,2F0,2B0\n3F0,3B0\n").find("stage 1 appears in no row"),
            std::string::npos);
  EXPECT_NE(expect_csv_input_error("0F0,0B0,1F0,1B0\n1SEND_F0\n").find("row 2 (rank 1) runs no stage"),
            std::string::npos);
  EXPECT_NE(expect_csv_input_error("\n\n").find("empty schedule"), std::string::npos);
}

// PyTorch's fused cells, (F;B)OVERLAP_F_B: the forward and another microbatch's backward start together once
// both are ready and run back to back in one slot (CostModel::overlapped_duration, by default F + B).
// 2 ranks, m = 3, F = 1 ms, B = 2 ms, no comm. By hand: rank 0 F0 [0, 1), F1 [1, 2); rank 1 F0 [1, 2),
// B0 [2, 4), F1 [4, 5), B1 [5, 7). Rank 0's pair waits for 1B0 (ends at 4) although its F2 could start at
// 2: F2 [4, 5), B0 [5, 7). Rank 1 F2 [7, 8), B2 [8, 10); rank 0 B1 [7, 9), B2 [10, 12).
TEST(PytorchCsv, AFusedCellStartsItsForwardAndBackwardTogether) {
  const std::string text =
      "0F0,0F1,(0F2;0B0)OVERLAP_F_B,0B1,0B2\n"
      "1F0,1B0,1F1,1B1,1F2,1B2\n";
  const PytorchCsvSchedule csv = parse_pytorch_csv(text, "fused.csv");
  ASSERT_EQ(csv.actions[0].size(), 6u);
  EXPECT_TRUE(csv.actions[0][2].fused_with_next);
  EXPECT_EQ(csv.actions[0][3], backward(0, 0));
  EXPECT_EQ(format_pytorch_csv(csv.actions), text);  // written back as one cell
  TempDir dir;
  const std::string path = dir.write("fused.csv", text);
  const Scenario scenario = test::scenario_from_yaml(
      "pipeline: {stages: 2, microbatches: 3, batches: 1}\n"
      "costs: {forward_ms: 1, backward_ms: 2}\n");
  const SimulationResult r = test::run_schedule(scenario, "csv:" + path, {}, test::fixed_batches());
  const OpRecord f2 = test::find_op(r.trace, OpKind::F, 0, 2);
  const OpRecord b0 = test::find_op(r.trace, OpKind::B, 0, 0);
  EXPECT_EQ(f2.start_ns, ms_to_ns(4));
  EXPECT_EQ(f2.end_ns, ms_to_ns(5));
  EXPECT_EQ(b0.start_ns, ms_to_ns(5));
  EXPECT_EQ(b0.end_ns, ms_to_ns(7));
  EXPECT_EQ(r.trace.makespan_ns, ms_to_ns(12));
  // Either order inside the parentheses; the F comes first.
  EXPECT_EQ(
      parse_pytorch_csv("0F0,0F1,(0B0;0F2)OVERLAP_F_B,0B1,0B2\n1F0,1B0,1F1,1B1,1F2,1B2\n", "f.csv").actions,
      csv.actions);
}

TEST(PytorchCsv, MalformedFusedCellsAreErrorsNamingTheCell) {
  const struct {
    std::string text;
    std::string message;
  } cases[] = {
      {"(0F1;1B0)OVERLAP\n",
       "column 1: '(0F1;1B0)OVERLAP' is not an action; a fused cell is (F;B)OVERLAP_F_B"},
      {"(0F1)OVERLAP_F_B\n", "overlaps one forward with one backward (B or I)"},
      {"(0F1;0F0)OVERLAP_F_B\n", "overlaps one forward with one backward (B or I)"},
      {"(0F1;0W0)OVERLAP_F_B\n", "overlaps one forward with one backward (B or I)"},
      {"(0F1;0X0)OVERLAP_F_B\n", "'0X0' inside the fused cell is not an F, B or I action"},
      // A microbatch's backward fused with its own forward waits for itself.
      {"(0F0;0B0)OVERLAP_F_B\n", "deadlock"},
  };
  for (const auto& c : cases) {
    const std::string message = expect_csv_input_error(c.text);
    EXPECT_NE(message.find(c.message), std::string::npos) << c.text << "\n" << message;
  }
}

// DualPipeV splits only some backwards: a file may use B for some (stage, microbatch) and I with W for
// others, but not both for one.
TEST(PytorchCsv, FullAndSplitBackwardsMixAcrossMicrobatches) {
  const PytorchCsvSchedule mixed =
      parse_pytorch_csv("0F0,0F1,0B0,0I1,0W1\n1F0,1I0,1F1,1B1,1W0\n", "mixed.csv");
  EXPECT_EQ(mixed.microbatches, 2);
  EXPECT_NE(expect_csv_input_error("0F0,0B0,0I0,0W0\n1F0,1B0\n")
                .find("column 3: '0I0' splits the backward of stage 0, microbatch 0, which also runs a full "
                      "backward B at column 2"),
            std::string::npos);
}

// A V-shaped file (rank r holds stages r and 2N-1-r, as PyTorch's ZB-V and DualPipeV write them): the
// placement is read from the rows, and the middle stages, both on the last rank, pass activations without a
// transfer.
TEST(PytorchCsv, VPlacementIsInferredAndItsLocalHopsCostNoTransfer) {
  const std::string text = "0F0,3F0,3B0,0B0\n1F0,2F0,2B0,1B0\n";
  const PytorchCsvSchedule csv = parse_pytorch_csv(text, "v.csv");
  EXPECT_EQ(csv.rank_of_stage, (std::vector<int>{0, 1, 1, 0}));
  EXPECT_EQ(csv.layout().placement_name(), "v");
  EXPECT_EQ(csv.chunks(), 2);
  TempDir dir;
  const std::string path = dir.write("v.csv", text);
  // A device's F = 1 and B = 2 ms, halved over its two chunks; 0.5 ms per transfer between devices: 0->1,
  // 2->3 forward, 3->2 and 1->0 backward. The hops 1->2 and 2->1 stay on rank 1. 4 F + 4 B = 6 ms of work in
  // a chain, plus 4 transfers (a loop placement would need 6).
  const Scenario scenario = test::scenario_from_yaml(
      "pipeline: {stages: 2, microbatches: 1, batches: 1}\n"
      "costs: {forward_ms: 1, backward_ms: 2, comm_ms: 0.5}\n");
  const SimulationResult result = test::run_schedule(scenario, "csv:" + path, {}, test::fixed_batches());
  EXPECT_EQ(result.trace.makespan_ns, ms_to_ns(8));
  EXPECT_EQ(result.trace.transfers.size(), 4u);
}

TEST(PytorchCsv, MicrobatchCountMustMatchTheScenario) {
  TempDir dir;
  const std::string path = dir.write("two.csv", "0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n");
  const Scenario scenario = test::uniform_scenario(2, 4, 1, 2);
  try {
    test::run_schedule(scenario, "csv:" + path);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    // The scenario's location comes first, then the CSV file and what it expected.
    EXPECT_THAT(
        std::string(e.what()),
        ::testing::EndsWith(path + ": the file's microbatches are 0..1 (m = 2), but the scenario has m = 4 "
                                   "microbatches"));
  }
  EXPECT_THROW(test::run_schedule(test::uniform_scenario(3, 2, 1, 2), "csv:" + path), InputError);
}

TEST(PytorchCsv, DeadlockingScheduleIsRefusedBeforeRunningInTheFilesNumbering) {
  // Rank 1 wants B of microbatch 0 before its F: both ranks wait forever. Reported by the reader, before
  // any run, with rows, columns and the file's 0-based stage indices.
  const std::string message = expect_csv_input_error("0F0,0B0\n1B0,1F0\n");
  EXPECT_NE(message.find("user.csv: deadlock"), std::string::npos) << message;
  EXPECT_NE(message.find("row 1 (rank 0), column 2: '0B0' waits for '1B0' at row 2, column 1"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("row 2 (rank 1), column 1: '1B0' waits for '1F0' at row 2, column 2"),
            std::string::npos)
      << message;
  // A cycle across chunks: rank 0 runs 2F0 before 0F0 although 2F0 needs 1F0, which needs 0F0.
  const std::string chunked = expect_csv_input_error("2F0,0F0,2B0,0B0\n1F0,3F0,3B0,1B0\n");
  EXPECT_NE(chunked.find("row 1 (rank 0), column 1: '2F0' waits for '1F0' at row 2, column 1"),
            std::string::npos)
      << chunked;
  // W before its own I on one rank.
  EXPECT_NE(expect_csv_input_error("0F0,0W0,0I0\n").find("'0W0' waits for '0I0' at row 1, column 3"),
            std::string::npos);
}

TEST(PytorchCsv, MissingOrExtraOpsAreErrorsNamingTheCell) {
  const struct {
    std::string text;
    std::string message;
  } cases[] = {
      // F only: the first missing op, in the file's own numbering.
      {"0F0\n1F0\n", "user.csv: row 1 (rank 0) has no 0B0: stage 0, microbatch 0 needs F and B"},
      // I without W.
      {"0F0,0I0\n1F0,1I0,1W0\n",
       "user.csv: row 1 (rank 0) has no 0W0: stage 0, microbatch 0 needs F, I and W"},
      // No microbatch 0: microbatch 1 implies microbatches 0..1.
      {"0F1,0B1\n1F1,1B1\n", "user.csv: row 1 (rank 0) has no 0F0: stage 0, microbatch 0 needs F and B"},
      // No stage 2 of a chunked file whose rank 1 names stage 3: stage 2 has no rank to run on.
      {"0F0,0B0\n1F0,3F0,3B0,1B0\n", "user.csv: stage 2 appears in no row, but stage 3 does"},
      // The same op twice.
      {"0F0,0F0,0B0\n1F0,1B0\n",
       "user.csv: row 1 (rank 0), column 2: '0F0' runs F of stage 0, microbatch 0 a second time (first at "
       "column 1)"},
      // B and I for one microbatch of one stage.
      {"0F0,0B0,0I0\n1F0,1B0\n", "row 1 (rank 0), column 3: '0I0' splits the backward of stage 0"},
  };
  for (const auto& c : cases) {
    const std::string message = expect_csv_input_error(c.text);
    EXPECT_NE(message.find(c.message), std::string::npos) << c.text << "\n" << message;
  }
}

TEST(PytorchCsv, HugeIndicesAreRefusedWithoutAllocatingOrOverflowing) {
  // 2147483647 + 1 overflows an int; stage 2147483647 x microbatch 2147483647 would need 2^62 cells.
  const std::string stage = expect_csv_input_error("2147483647F0\n");
  EXPECT_NE(stage.find("user.csv: row 1 (rank 0), column 1 names stage 2147483647"), std::string::npos)
      << stage;
  const std::string both = expect_csv_input_error("0F0,0F2147483647,0B0\n");
  EXPECT_NE(both.find("row 1 (rank 0), column 2 names microbatch 2147483647"), std::string::npos) << both;
  EXPECT_NE(both.find("but the file has 3"), std::string::npos) << both;
}

TEST(PytorchCsv, ExportThenReadGivesTheIdenticalRunForEveryStaticSchedule) {
  TempDir dir;
  const Scenario scenario = test::scenario_from_yaml(kPytorchCsvScenario);
  std::vector<std::string> tested;
  for (const ScheduleInfo& info : registered_schedules()) {
    const ScheduleRequest request{info.name, ScheduleParams(test::kTestSource)};
    const std::unique_ptr<Schedule> schedule = make_schedule(request.name, request.params);
    if (!dynamic_cast<const StaticSchedule*>(schedule.get())) continue;
    // Two copies of the model cannot be said in PyTorch's CSV: export refuses them (DualPipe's test).
    if (schedule->layout(scenario.stages).pipelines > 1) continue;
    SCOPED_TRACE(info.name);
    tested.push_back(info.name);
    const SimulationResult original = simulate_schedule(scenario, request);
    const std::string path = dir.write(info.name + ".csv", export_schedule_csv(scenario, request));
    Scenario same_sync = scenario;
    same_sync.sync = original.spec.sync;
    const SimulationResult replayed = test::run_schedule(same_sync, "csv:" + path);

    ASSERT_EQ(replayed.trace.ops.size(), original.trace.ops.size());
    for (size_t i = 0; i < original.trace.ops.size(); ++i) {
      const OpRecord& a = original.trace.ops[i];
      const OpRecord& b = replayed.trace.ops[i];
      ASSERT_TRUE(a.action == b.action && a.device == b.device && a.start_ns == b.start_ns &&
                  a.end_ns == b.end_ns && a.weight_version == b.weight_version)
          << "op " << i << ": " << describe(a.action) << " vs " << describe(b.action);
    }
    nlohmann::ordered_json expected = result_record(original, {true});
    nlohmann::ordered_json actual = result_record(replayed, {true});
    EXPECT_EQ(actual["schedule"]["name"], "csv:" + path);
    EXPECT_EQ(actual["label"], "csv:" + path);
    for (const char* differs : {"schedule", "label"}) {
      expected.erase(differs);
      actual.erase(differs);
    }
    EXPECT_EQ(actual.dump(), expected.dump());
  }
  for (const char* name :
       {"gpipe", "1f1b-flush", "interleaved-1f1b", "looped-bfs", "interleaved-zb", "zb-h1", "zb-h2", "zb-1p",
        "zb-2p", "zb-v", "zb-v-greedy", "v-half", "v-min", "dualpipe-v"}) {
    EXPECT_NE(std::find(tested.begin(), tested.end(), name), tested.end())
        << name << " was not round-tripped";
  }
}

TEST(PytorchCsv, CommandLineExportAndRun) {
  TempDir dir;
  const std::string csv = dir.file("1f1b.csv");
  const test::CommandResult exported =
      test::run_pipesim(fmt::format("export 1f1b-flush --stages 2 --microbatches 3 --csv '{}'", csv), dir);
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_EQ(test::read_file(csv), "0F0,0F1,0B0,0F2,0B1,0B2\n1F0,1B0,1F1,1B1,1F2,1B2\n");

  const std::string yaml = dir.write("s.yaml",
                                     "pipeline: {stages: 2, microbatches: 3}\n"
                                     "costs: {forward_ms: 1, backward_ms: 2}\n");
  const test::CommandResult run = test::run_pipesim(
      fmt::format("run '{}' --schedules 'csv:{}',1f1b-flush --csv '{}'", yaml, csv, dir.file("out.csv")),
      dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string rows = test::read_file(dir.file("out.csv"));
  const auto first = rows.find('\n') + 1;
  const auto second = rows.find('\n', first) + 1;
  const std::string csv_row = rows.substr(first, second - first);
  const std::string flush_row = rows.substr(second);
  // After schedule_name and label, every column agrees.
  const auto after_label = [](const std::string& row) {
    return row.substr(row.find(',', row.find(',') + 1));
  };
  EXPECT_EQ(after_label(csv_row), after_label(flush_row));

  // --chunks: global stage indices, stage s on rank s % N.
  const test::CommandResult chunked =
      test::run_pipesim("export interleaved-1f1b --stages 2 --microbatches 2 --chunks 2", dir);
  ASSERT_EQ(chunked.exit_code, 0) << chunked.err;
  EXPECT_EQ(chunked.out, "0F0,0F1,2F0,2F1,2B0,2B1,0B0,0B1\n1F0,1F1,3F0,3B0,3F1,3B1,1B0,1B1\n");

  const test::CommandResult rule = test::run_pipesim("export paci --stages 2 --microbatches 2", dir);
  EXPECT_EQ(rule.exit_code, 1);
  EXPECT_NE(rule.err.find("decides at run time"), std::string::npos) << rule.err;
}

}  // namespace
}  // namespace pipesim
