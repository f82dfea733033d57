// zb-1p / zb-2p, the Zero Bubble greedy scheduler (schedules/zb_greedy.h), through the api: the bubble and
// period of steady runs of the shipped profiled scenarios and of uniform ones. Its lists, problem and
// parameters: tests/schedules/zb_greedy_test.cpp.
#include "schedules/zb_greedy.h"

#include <gtest/gtest.h>

#include "base/errors.h"
#include "pipesim_source_dir.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

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

}  // namespace
}  // namespace pipesim
