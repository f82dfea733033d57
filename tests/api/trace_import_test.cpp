// `pipesim import trace`: a Chrome trace written here in the format PyTorch's pipelining runtime profiles
// (ranges "PP:<stage><kind><microbatch>", durations in microseconds) becomes per-(stage, kind) distributions
// and a scenario with each rank's mean times that runs.
#include "api/trace_import.h"

#include <gtest/gtest.h>

#include "api/simulation.h"
#include "io/pytorch_trace.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

// One rank's trace of `steps` steps of m microbatches through `stages` (stage s on this rank): each action a
// complete event with its duration in microseconds, the F's alternating `f_us` +- 100, plus a SEND, an
// UNSHARD and a profiler range of another kind.
std::string rank_trace(int rank, const std::vector<int>& stages, int steps, int m, double f_us,
                       const std::map<char, double>& backward_us) {
  std::string events = R"({"ph": "X", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 5})";
  double ts = 10;
  auto add = [&](const std::string& name, double dur) {
    events += fmt::format(
        R"(, {{"ph": "X", "cat": "user_annotation", "name": "{}", "pid": {}, "tid": 7, "ts": {}, "dur": {}}})",
        name, rank, ts, dur);
    ts += dur + 1;
  };
  add(fmt::format("PP:{}UNSHARD", stages.front()), 3);
  for (int step = 0; step < steps; ++step) {
    for (int stage : stages) {
      for (int mb = 0; mb < m; ++mb) {
        add(fmt::format("PP:{}F{}", stage, mb), f_us + (mb % 2 == 0 ? 100 : -100));
        add(fmt::format("PP:{}SEND_F{}", stage, mb), 4);
        for (const auto& [kind, us] : backward_us) add(fmt::format("PP:{}{}{}", stage, kind, mb), us);
      }
    }
  }
  return fmt::format(R"({{"schemaVersion": 1, "traceEvents": [{}]}})", events);
}

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

TEST(TraceImport, TheScenarioHasEachRanksMeanTimesAndRuns) {
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
  const Scenario s = parse_scenario(text, "traced.yaml");
  const SimulationResult r = simulate_schedule(s, s.schedules.at(0), {});
  // 1F1B on two stages: the slower rank's F + B per microbatch bounds the period from below.
  EXPECT_GE(r.metrics.period_ns, 4 * ms_to_ns(1.2 + 2.6) - 4);
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
