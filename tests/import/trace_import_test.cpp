// `pipesim import trace`: a Chrome trace written here in the format PyTorch's pipelining runtime profiles
// (ranges "PP:<stage><kind><microbatch>", durations in microseconds) becomes per-(stage, kind) distributions
// and a scenario with each rank's mean times that runs.
#include "import/trace_import.h"

#include <gtest/gtest.h>

#include "import/pytorch_trace.h"
#include "tests/error_text.h"
#include "tests/import/trace_events.h"
#include "tests/scenario_text.h"

namespace pipesim {
namespace {

using test::rank_trace;

TEST(TraceImport, DurationsByStageAndKind) {
  TracedActions traced;
  read_pytorch_trace(rank_trace(0, {0}, 2, 4, 1000, {{'B', 2500}}), "rank0.json", traced);
  read_pytorch_trace(rank_trace(1, {1}, 2, 4, 1200, {{'B', 2600}}), "rank1.json", traced);
  EXPECT_EQ(traced.stages, 2);
  EXPECT_EQ(traced.microbatches, 4);
  EXPECT_EQ(traced.steps, 2);
  const DurationSummary f0 = summarize_durations(traced.durations_ms[0][static_cast<size_t>(OpKind::F)]);
  EXPECT_EQ(f0.count, 8);
  EXPECT_DOUBLE_EQ(f0.mean, 1.0);
  EXPECT_DOUBLE_EQ(f0.min, 0.9);
  EXPECT_DOUBLE_EQ(f0.max, 1.1);
  EXPECT_DOUBLE_EQ(f0.median, 1.0);
  EXPECT_EQ(traced.other_actions["SEND_F"], 16);
  EXPECT_EQ(traced.other_actions["UNSHARD"], 2);
  EXPECT_EQ(traced.events, 2 * (1 + 1 + 2 * 4 * 3));
}

TEST(TraceImport, TheScenarioHasEachRanksMeanTimes) {
  TracedActions traced;
  read_pytorch_trace(rank_trace(0, {0}, 2, 4, 1000, {{'B', 2500}}), "rank0.json", traced);
  read_pytorch_trace(rank_trace(1, {1}, 2, 4, 1200, {{'B', 2600}}), "rank1.json", traced);
  TraceImportSettings settings;
  settings.schedule = "Schedule1F1B";  // PyTorch's class name
  settings.sources = {"rank0.json", "rank1.json"};
  const std::string text = scenario_from_trace(traced, settings);
  EXPECT_NE(text.find("forward_ms: [1, 1.2]"), std::string::npos) << text;
  EXPECT_NE(text.find("backward_ms: [2.5, 2.6]"), std::string::npos) << text;
  EXPECT_NE(text.find("pipeline: {stages: 2, microbatches: 4}"), std::string::npos) << text;
  EXPECT_NE(text.find("SEND_F x16"), std::string::npos) << text;
  // That it runs, and how fast: tests/api/traced_scenario_test.cpp.
  EXPECT_EQ(parse_scenario(text, "traced.yaml").stages, 2);
}

TEST(TraceImport, InterleavedStagesGoToTheirRanksAndSplitBackwardsNeedIAndW) {
  // Interleaved on 2 ranks with 2 chunks: rank r holds stages r and r + 2.
  TracedActions traced;
  read_pytorch_trace(rank_trace(0, {0, 2}, 1, 4, 1000, {{'I', 1000}, {'W', 500}}), "r0.json", traced);
  read_pytorch_trace(rank_trace(1, {1, 3}, 1, 4, 1000, {{'I', 1000}, {'W', 500}}), "r1.json", traced);
  TraceImportSettings settings;
  settings.schedule = "interleaved-zb";
  settings.ranks = 2;
  settings.sources = {"r0.json", "r1.json"};
  const std::string text = scenario_from_trace(traced, settings);
  EXPECT_NE(text.find("forward_ms: [2, 2]"), std::string::npos) << text;  // two stages of 1 ms each
  EXPECT_NE(text.find("backward_input_ms: [2, 2]"), std::string::npos) << text;
  EXPECT_NE(text.find("backward_weight_ms: [1, 1]"), std::string::npos) << text;
  EXPECT_NE(text.find("{name: interleaved-zb, chunks: 2}"), std::string::npos) << text;
  settings.schedule = "1f1b-flush";  // 4 stages on 2 ranks: not its placement
  EXPECT_NE(
      test::input_error_of([&] { scenario_from_trace(traced, settings); }).find("the trace has 4 stages"),
      std::string::npos);
}

TEST(TraceImport, BadTracesSayWhatIsWrong) {
  TracedActions traced;
  EXPECT_NE(test::input_error_of([&] {
              read_pytorch_trace("{\"traceEvents\": [", "t.json", traced);
            }).find("t.json: not JSON"),
            std::string::npos);
  EXPECT_NE(test::input_error_of([&] {
              read_pytorch_trace(R"({"traceEvents": [{"dur": 1e520}]})", "t.json", traced);
            }).find("t.json: not a Chrome trace: [json.exception.out_of_range.406] number overflow"),
            std::string::npos);
  EXPECT_NE(test::input_error_of([&] {
              read_pytorch_trace("{\"events\": []}", "t.json", traced);
            }).find("traceEvents"),
            std::string::npos);
  // Fields of another type, or numbers no pipeline has, are located errors, not the JSON library's
  // type_error (a "pipesim bug" at the top).
  EXPECT_NE(test::input_error_of([&] {
              read_pytorch_trace(R"({"traceEvents": [{"ph": "X"}, {"ph": 5}]})", "t.json", traced);
            }).find("t.json: event 1: \"ph\" should be a string"),
            std::string::npos);
  EXPECT_NE(test::input_error_of([&] {
              read_pytorch_trace(R"([{"ph": "X", "name": 7}])", "t.json", traced);
            }).find("t.json: event 0: \"name\" should be a string"),
            std::string::npos);
  EXPECT_NE(test::input_error_of([&] {
              read_pytorch_trace(R"([{"ph": "X", "name": "PP:99999999999F0", "dur": 1}])", "t.json", traced);
            }).find("t.json: event 0 (PP:99999999999F0): its stage or microbatch number is out of range"),
            std::string::npos);
  traced = {};
  read_pytorch_trace(R"({"traceEvents": [{"ph": "X", "name": "aten::mm", "ts": 0, "dur": 3}]})", "t.json",
                     traced);
  TraceImportSettings settings;
  settings.schedule = "1f1b-flush";
  settings.sources = {"t.json"};
  EXPECT_NE(test::input_error_of([&] { scenario_from_trace(traced, settings); }).find("no pipelining action"),
            std::string::npos);
}

}  // namespace
}  // namespace pipesim
