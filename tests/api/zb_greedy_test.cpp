// zb-1p / zb-2p: the Zero Bubble greedy scheduler (schedules/zb_greedy.h).
#include "schedules/zb_greedy.h"

#include <gtest/gtest.h>

#include "base/errors.h"
#include "cost_models/explicit_costs.h"
#include "pipesim_source_dir.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

using test::device_timeline;
using test::run_schedule;
using test::scenario_from_yaml;

// F = I = W = t ms, no comm, a barrier before each optimizer step: every batch runs on its own, and the Zero
// Bubble bubble (longest device span without U - m(F+I+W)) is the paper's per-batch one.
Scenario uniform_with_barrier(int stages, int microbatches, double t_ms) {
  return scenario_from_yaml(
      fmt::format("pipeline: {{stages: {}, microbatches: {}, batches: 2}}\n"
                  "costs: {{forward_ms: {t}, backward_input_ms: {t}, backward_weight_ms: {t},\n"
                  "        weight_grad_activation_bytes: 500000}}\n"
                  "optimizer: {{sync: barrier}}\n",
                  stages, microbatches, fmt::arg("t", t_ms)));
}

// Every device's activation peak within memory_limit * N * M_B of its stage.
void expect_within_limit(const Scenario& scenario, const SimulationResult& result, double memory_limit) {
  for (int d = 0; d < scenario.stages; ++d) {
    const auto limit =
        static_cast<Bytes>(memory_limit * scenario.stages * scenario.costs.activation_bytes[d]);
    EXPECT_LE(result.metrics.devices[d].peak_activation_bytes, limit) << result.label << " device " << d;
  }
}

std::vector<std::string> letters(const ActionList& list) {
  std::vector<std::string> out;
  for (const Action& a : list) out.push_back(fmt::format("{}{}", op_letter(a.kind), a.microbatch));
  return out;
}

struct Shape {
  int stages;
  int microbatches;
};

// Random pipelines (uneven stages, comm, M_W > 0, m < N): tests/api/zb_search_test.cpp.

// The Zero Bubble paper's profiled settings (uniform stages, real comm latency): there the order is strict,
// with the shipped M_W (the paper's 32sbh per layer) and with M_W = 0 (W frees nothing).
TEST(ZbGreedy, ProfiledSettingsTwoPBeatsOnePBeatsH1) {
  for (const char* file : {"6.2B-N8-m24.yaml", "14.6B-N16-m48.yaml", "28.3B-N32-m96.yaml"}) {
    for (const char* sync : {"barrier", "post-validation"}) {
      for (const bool shipped_weight_grad_bytes : {true, false}) {
        std::vector<std::string> overrides{fmt::format("optimizer.sync={}", sync)};
        if (!shipped_weight_grad_bytes) overrides.emplace_back("costs.weight_grad_activation_bytes=0");
        const Scenario scenario =
            load_scenario(std::string(PIPESIM_SOURCE_DIR) + "/share/scenarios/zb/" + file, overrides);
        SCOPED_TRACE(fmt::format("{} {} shipped M_W: {}", file, sync, shipped_weight_grad_bytes));
        const SimulationOptions fast{};  // no task graph
        const SimulationResult h1 = run_schedule(scenario, "zb-h1", {}, fast);
        const SimulationResult one_p = run_schedule(scenario, "zb-1p", {}, fast);
        const SimulationResult two_p = run_schedule(scenario, "zb-2p", {}, fast);
        EXPECT_LE(two_p.metrics.bubble_fraction, one_p.metrics.bubble_fraction);
        EXPECT_LE(one_p.metrics.bubble_fraction, h1.metrics.bubble_fraction);
        expect_within_limit(scenario, one_p, 1.0);
        expect_within_limit(scenario, two_p, 2.0);
      }
    }
  }
}

TEST(ZbGreedy, UniformCostsMatchTheHandcraftedClosedForms) {
  const double t_ms = 2;
  for (const Shape& shape : std::vector<Shape>{{2, 3}, {3, 5}, {4, 7}, {4, 10}, {6, 11}, {8, 15}, {8, 20}}) {
    const Scenario scenario = uniform_with_barrier(shape.stages, shape.microbatches, t_ms);
    SCOPED_TRACE(fmt::format("N={} m={}", shape.stages, shape.microbatches));
    const int n = shape.stages;
    // m >= 2N-1: ZB-2p removes the bubble (as ZB-H2 does with 2N-1 microbatches on stage 1) within 2N M_B.
    const SimulationResult two_p = run_schedule(scenario, "zb-2p");
    EXPECT_EQ(two_p.metrics.zb_bubble_ns, 0);
    expect_within_limit(scenario, two_p, 2.0);
    // ZB-1p: ZB-H1's (N-1)(F+I-W) with 1F1B's peak N * M_B.
    const SimulationResult one_p = run_schedule(scenario, "zb-1p");
    EXPECT_EQ(one_p.metrics.zb_bubble_ns, (n - 1) * ms_to_ns(t_ms + t_ms - t_ms));
    EXPECT_EQ(one_p.metrics.zb_bubble_ns, run_schedule(scenario, "zb-h1").metrics.zb_bubble_ns);
    EXPECT_EQ(one_p.metrics.devices[0].peak_activation_bytes, n * scenario.costs.activation_bytes[0]);
  }
}

TEST(ZbGreedy, OnePWithUniformCostsAtMEqualsNKeepsTheClosedForm) {
  for (int n : {2, 3, 4, 6}) {
    const SimulationResult one_p = run_schedule(uniform_with_barrier(n, n, 1), "zb-1p");
    EXPECT_EQ(one_p.metrics.zb_bubble_ns, (n - 1) * ms_to_ns(1)) << "N=m=" << n;
  }
}

// Hand-worked: N=2, m=4, F=I=W=1 ms, no comm, 1p (2 M_B per stage), M_W = M_B/2.
//   warm-up     stage 2 runs one F; stage 1 two (F1 ends at 2 <= 3, when I0's gradient arrives)
//   stage 1     I0 waits for the gradient until 3; F2 needs 2.5 M_B, so W0 first; likewise W1 before F3;
//               I3's gradient comes 1 ms (= W) after I2 ends, so W2 fills that gap; W3 is left over
//   stage 2     W0 fills the 1 ms wait for F2, W1 the wait for F3; W2, W3 left over
// Every flag setting gives these lists (no gap is shorter than W, no stage is two forwards ahead).
TEST(ZbGreedy, HandWorkedListsForTwoStages) {
  ExplicitCostTable table;
  table.forward_ns = table.backward_input_ns = table.backward_weight_ns = {ms_to_ns(1), ms_to_ns(1)};
  table.optimizer_ns = {0, 0};
  table.activation_bytes = {2000, 2000};
  table.weight_grad_activation_bytes = {1000, 1000};
  table.transfer_bytes = {0, 0};
  const ExplicitCostModel costs(table, PipelineLayout::linear(2));
  PipelineSpec spec;
  spec.devices = 2;
  spec.microbatches = 4;
  const ZbProblem problem = make_zb_problem(spec, costs, 1.0);
  EXPECT_EQ(problem.stages[0].limit_bytes, 4000);
  for (int index = 0; index < kZbFlagCombinations; ++index) {
    const std::optional<ZbGreedyPlan> plan = zb_greedy_schedule(problem, ZbFlags::from_index(index));
    ASSERT_TRUE(plan);
    const DeviceActionLists& lists = plan->lists;
    SCOPED_TRACE(fmt::format("flags {}", index));
    EXPECT_EQ(letters(lists[0]), (std::vector<std::string>{"F0", "F1", "I0", "W0", "F2", "I1", "W1", "F3",
                                                           "I2", "W2", "I3", "W3"}));
    EXPECT_EQ(letters(lists[1]), (std::vector<std::string>{"F0", "I0", "F1", "I1", "W0", "F2", "I2", "W1",
                                                           "F3", "I3", "W2", "W3"}));
  }
  // The engine runs the lists on exactly the predicted timeline.
  const Scenario scenario = scenario_from_yaml(
      "pipeline: {stages: 2, microbatches: 4, batches: 1}\n"
      "costs: {forward_ms: 1, backward_input_ms: 1, backward_weight_ms: 1, activation_bytes: 2000,\n"
      "        weight_grad_activation_bytes: 1000}\n"
      "optimizer: {sync: barrier}\n");
  const SimulationResult result = run_schedule(scenario, "zb-1p");
  EXPECT_EQ(device_timeline(result.trace, 0, 0, 4),
            (std::vector<std::string>{"F0@0", "F1@1", "I0@3", "W0@4", "F2@5", "I1@6", "W1@7", "F3@8", "I2@9",
                                      "W2@10", "I3@11", "W3@12", "U@13"}));
  EXPECT_EQ(device_timeline(result.trace, 1, 0, 4),
            (std::vector<std::string>{"F0@1", "I0@2", "F1@3", "I1@4", "W0@5", "F2@6", "I2@7", "W1@8", "F3@9",
                                      "I3@10", "W2@11", "W3@12", "U@13"}));
  EXPECT_EQ(result.metrics.devices[0].peak_activation_bytes, 4000);
}

// The Zero Bubble paper's profiled settings (uniform stages, real comm, the shipped M_B and M_W). A greedy
// heuristic may do a little worse with somewhat more memory, so the curve need not fall at every step; but
// zb-1p's plans fit every larger limit and are among the candidates, so no point is above zb-1p's.
TEST(ZbGreedy, MoreMemoryNeverLosesToOneP) {
  for (const char* file : {"6.2B-N8-m24.yaml", "1.5B-N8-m32.yaml", "14.6B-N16-m48.yaml"}) {
    for (const char* sync : {"barrier", "post-validation"}) {
      const Scenario scenario = load_scenario(std::string(PIPESIM_SOURCE_DIR) + "/share/scenarios/zb/" + file,
                                              {fmt::format("optimizer.sync={}", sync)});
      const SimulationOptions fast{};  // no task graph
      const SimulationResult one_p = run_schedule(scenario, "zb-1p", {}, fast);
      for (int eighths = 8; eighths <= 16; eighths += 2) {
        const double limit = eighths / 8.0;
        SCOPED_TRACE(fmt::format("{} {} memory_limit={}", file, sync, limit));
        const SimulationResult result =
            run_schedule(scenario, "zb-2p", {{"memory_limit", fmt::format("{}", limit)}}, fast);
        EXPECT_LE(result.metrics.period_ns, one_p.metrics.period_ns);
        expect_within_limit(scenario, result, limit);
      }
      // The ends of the curve are zb-1p and zb-2p.
      EXPECT_EQ(run_schedule(scenario, "zb-2p", {{"memory_limit", "1"}}, fast).metrics.period_ns,
                one_p.metrics.period_ns);
    }
  }
}

TEST(ZbGreedy, PlansWithEachLinksLatency) {
  ExplicitCostTable table;
  table.forward_ns = table.backward_input_ns = table.backward_weight_ns = {1, 1, 1};
  table.optimizer_ns = {0, 0, 0};
  table.activation_bytes = {10, 10, 10};
  table.weight_grad_activation_bytes = {0, 0, 0};
  table.transfer_bytes = {1000, 3000, 0};
  const ExplicitCostModel costs(table, PipelineLayout::linear(3));
  PipelineSpec spec;
  spec.devices = 3;
  spec.microbatches = 3;
  spec.make_comm = [] { return std::make_unique<LinkComm>(3, 2.0, 7); };  // 2 bytes/ns, 7 ns latency
  const ZbProblem problem = make_zb_problem(spec, costs, 1.5);
  EXPECT_EQ(problem.stages[0].forward_send_ns, 500 + 7);
  EXPECT_EQ(problem.stages[1].backward_send_ns, 500 + 7);  // the boundary's size, both ways
  EXPECT_EQ(problem.stages[1].forward_send_ns, 1500 + 7);
  EXPECT_EQ(problem.stages[2].backward_send_ns, 1500 + 7);
  EXPECT_EQ(problem.stages[2].limit_bytes, 45);  // 1.5 * 3 * 10
}

TEST(ZbGreedy, ParametersAndLabels) {
  const Scenario scenario = uniform_with_barrier(4, 8, 1);
  EXPECT_EQ(run_schedule(scenario, "zb-1p").label, "zb-1p");
  EXPECT_EQ(run_schedule(scenario, "zb-2p", {{"memory_limit", "1.5"}}).label, "zb-2p(memory_limit=1.5)");
  // Below 1F1B's N * M_B the greedy has no list: a clear error, not an internal one.
  for (const char* limit : {"0.2", "0.5", "0.875"}) {
    try {
      run_schedule(scenario, "zb-1p", {{"memory_limit", limit}});
      ADD_FAILURE() << "memory_limit " << limit << " accepted";
    } catch (const InputError& error) {
      EXPECT_NE(std::string(error.what()).find("is below 1 (N x M_B"), std::string::npos) << error.what();
    }
  }
  EXPECT_THROW(run_schedule(scenario, "zb-2p", {{"memory_limit", "lots"}}), InputError);
}

}  // namespace
}  // namespace pipesim
