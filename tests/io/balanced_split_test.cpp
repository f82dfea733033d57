// layer_split: balanced. The min-max partition is exact (brute force over every contiguous split), respects
// the memory bound and says when nothing fits; the transformer's units add up to its layers; on the default
// scenario the balanced split's slowest stage is faster than the even split's and fits the device.
#include "cost_models/balanced_split.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>

#include "base/errors.h"
#include "cost_models/transformer/memory_bytes.h"
#include "cost_models/transformer/shapes_flops.h"
#include "cost_models/transformer/stage_costs.h"
#include "cost_models/transformer/units.h"
#include "io/scenario.h"
#include "pipesim_source_dir.h"
#include "tests/error_text.h"

namespace pipesim {
namespace {

constexpr double kNoBound = 0;

// The largest group time of a split given by its group starts, or +infinity when a group breaks the bound.
double max_time(const std::vector<PartitionItem>& items, const std::vector<int>& starts, double capacity) {
  const int parts = static_cast<int>(starts.size());
  double largest = 0;
  for (int g = 0; g < parts; ++g) {
    PartitionItem sum;
    const int last = g + 1 < parts ? starts[g + 1] : static_cast<int>(items.size());
    for (int k = starts[g]; k < last; ++k) {
      sum.time_s += items[k].time_s;
      sum.static_bytes += items[k].static_bytes;
      sum.activation_bytes += items[k].activation_bytes;
    }
    if (capacity > 0 && sum.static_bytes + (parts - g) * sum.activation_bytes > capacity)
      return std::numeric_limits<double>::infinity();
    largest = std::max(largest, sum.time_s);
  }
  return largest;
}

// Every split of n items into `parts` non-empty groups: choose parts - 1 of the n - 1 gaps.
double brute_force_best(const std::vector<PartitionItem>& items, int parts, double capacity) {
  const int n = static_cast<int>(items.size());
  double best = std::numeric_limits<double>::infinity();
  for (unsigned mask = 0; mask < (1u << (n - 1)); ++mask) {
    if (__builtin_popcount(mask) != parts - 1) continue;
    std::vector<int> starts = {0};
    for (int gap = 0; gap < n - 1; ++gap)
      if (mask & (1u << gap)) starts.push_back(gap + 1);
    best = std::min(best, max_time(items, starts, capacity));
  }
  return best;
}

TEST(BalancedSplit, HandWorkedCase) {
  // Times 1, 2, 3, 4, 5 over 3 stages: {1,2,3} {4} {5} has largest 6; every other split has more.
  const std::vector<PartitionItem> items = {{1, 0, 0}, {2, 0, 0}, {3, 0, 0}, {4, 0, 0}, {5, 0, 0}};
  EXPECT_EQ(min_max_partition(items, 3, kNoBound, {}), (std::vector<int>{0, 3, 4}));
  // With 1 byte of activations per item and 7 bytes per device, stage 1 (3 microbatches in flight) holds at
  // most 2 items and stage 2 (2 in flight) at most 3: {1,2} {3,4} {5} (largest 7) beats {1,2} {3} {4,5} (9)
  // and every split starting {1}.
  std::vector<PartitionItem> bounded = items;
  for (PartitionItem& item : bounded) item.activation_bytes = 1;
  EXPECT_EQ(min_max_partition(bounded, 3, 7, {}), (std::vector<int>{0, 2, 4}));
  EXPECT_DOUBLE_EQ(max_time(bounded, {0, 2, 4}, 7), 7);
}

TEST(BalancedSplit, OptimalOnRandomItems) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> time(0.1, 10), bytes(0, 5);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 10);
    const int parts = 1 + static_cast<int>(rng() % std::min(n, 5));
    std::vector<PartitionItem> items;
    for (int k = 0; k < n; ++k) items.push_back({time(rng), bytes(rng), bytes(rng)});
    const double capacity = trial % 2 == 0 ? kNoBound : 6 + 10 * time(rng);
    const double best = brute_force_best(items, parts, capacity);
    if (best == std::numeric_limits<double>::infinity()) {
      EXPECT_NE(
          test::input_error_of([&] { min_max_partition(items, parts, capacity, {}); }).find("leanest needs"),
          std::string::npos);
      continue;
    }
    const std::vector<int> starts = min_max_partition(items, parts, capacity, {});
    ASSERT_EQ(static_cast<int>(starts.size()), parts);
    EXPECT_NEAR(max_time(items, starts, capacity), best, 1e-9) << "trial " << trial;
  }
}

TEST(BalancedSplit, FewerUnitsThanStagesIsAnError) {
  EXPECT_NE(test::input_error_of([] {
              min_max_partition({{1, 0, 0}, {1, 0, 0}}, 3, kNoBound, {});
            }).find("2 units cannot fill 3 stages"),
            std::string::npos);
}

const char* kDefault = "share/scenarios/default.yaml";

TransformerSetup default_setup() {
  const Scenario s = load_scenario(std::string(PIPESIM_SOURCE_DIR) + "/" + kDefault);
  return *s.transformer;
}

double work_s(const StageCosts& c) {
  return c.forward_s + c.backward_input_s + c.backward_weight_s;
}

TEST(BalancedSplit, UnitsAddUpToTheLayers) {
  TransformerSetup setup = default_setup();
  setup.split = LayerSplit::kEven;
  const double b = 4;
  const std::vector<UnitCosts> units = transformer_units(setup, b);
  const TransformerModel& t = setup.model;
  ASSERT_EQ(static_cast<int>(units.size()), 2 * t.layers + 3);
  // A middle stage of the even split (3 layers, no embedding or output) against layers 4-6's halves.
  const StageCosts middle = transformer_stage_costs(setup, b, 8)[1];
  ASSERT_EQ(middle.layers, 3);
  double f = 0, i = 0, w = 0, act = 0, act_w = 0, params = 0;
  for (int k = 1 + 2 * 3; k < 1 + 2 * 6; ++k) {
    f += units[k].forward_s;
    i += units[k].backward_input_s;
    w += units[k].backward_weight_s;
    act += units[k].activation_bytes;
    act_w += units[k].weight_grad_activation_bytes;
    params += units[k].matrix_params;
  }
  EXPECT_NEAR(f, middle.forward_s, 1e-12);
  EXPECT_NEAR(i, middle.backward_input_s, 1e-12);
  EXPECT_NEAR(w, middle.backward_weight_s, 1e-12);
  EXPECT_DOUBLE_EQ(act, 3 * layer_activation_bytes(t, b));
  EXPECT_DOUBLE_EQ(act_w, 3 * layer_weight_grad_activation_bytes(t, b));
  EXPECT_DOUBLE_EQ(params, 3 * layer_parameters(t));
  // M_B (bytes, 16-bit) splits as s·b(13h + 5as) (attention) and s·b·21h (MLP).
  const double s = t.seq_len, h = t.hidden, a = t.heads;
  EXPECT_DOUBLE_EQ(units[1].activation_bytes, s * b * (13 * h + 5 * a * s));
  EXPECT_DOUBLE_EQ(units[2].activation_bytes, s * b * 21 * h);
  EXPECT_EQ(units.front().kind, UnitKind::kEmbedding);
  EXPECT_EQ(units[units.size() - 2].kind, UnitKind::kFinalNorm);
  EXPECT_EQ(units.back().kind, UnitKind::kOutput);
}

TEST(BalancedSplit, DefaultScenarioIsBalancedAndFits) {
  const TransformerSetup balanced = default_setup();
  ASSERT_EQ(balanced.split, LayerSplit::kBalanced);
  TransformerSetup even = balanced;
  even.split = LayerSplit::kEven;
  const int stages = 8;
  for (const double b : {3.2, 16.0, 32.0}) {
    const std::vector<StageCosts> split = transformer_stage_costs(balanced, b, stages);
    const std::vector<StageCosts> layers = transformer_stage_costs(even, b, stages);
    double split_max = 0, even_max = 0, split_total = 0, units_total = 0;
    for (const StageCosts& c : split) split_max = std::max(split_max, work_s(c)), split_total += work_s(c);
    for (const StageCosts& c : layers) even_max = std::max(even_max, work_s(c));
    for (const UnitCosts& u : transformer_units(balanced, b))
      units_total += u.forward_s + u.backward_input_s + u.backward_weight_s;
    EXPECT_LT(split_max, even_max) << "b=" << b;
    EXPECT_NEAR(split_total, units_total, 1e-9);
    EXPECT_TRUE(split.front().embedding && split.back().output);
    // Each stage's weights, gradients, optimizer state and 1F1B in-flight activations fit 96 GB.
    for (int k = 0; k < stages; ++k) {
      const StageCosts& c = split[k];
      EXPECT_LE(c.parameter_bytes + c.gradient_bytes + c.optimizer_bytes + (stages - k) * c.activation_bytes,
                96.0 * 1024 * 1024 * 1024)
          << "b=" << b << " stage " << k + 1;
    }
  }
}

TEST(BalancedSplit, TooLittleMemoryIsAnError) {
  TransformerSetup setup = default_setup();
  setup.profile.memory_capacity_gb = 5;  // less than stage 1's 8 microbatches of b = 16 in flight
  const std::string message = test::input_error_of([&] { transformer_stage_costs(setup, 16, 8); });
  EXPECT_NE(message.find("layer_split balanced on"), std::string::npos) << message;
  EXPECT_NE(message.find("no split of 51 units over 8 stages fits 5.00 GiB"), std::string::npos) << message;
}

// Issue 47: the exact search is O(stages x units^2): 10^6 layers never ended. It is bounded before it starts,
// by the ops ceiling (a step weighing 1/50 of a simulated op) and the memory ceiling.
TEST(BalancedSplit, ASearchBeyondTheCeilingsIsRefusedBeforeItStarts) {
  TransformerSetup setup = default_setup();
  setup.model.layers = 1000000;
  const std::string message = test::input_error_of([&] { transformer_stage_costs(setup, 16, 8); });
  EXPECT_NE(message.find("units over 8 stages take about 1.6e+13 steps of the exact split's search"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("above the 5e+09 the ceiling allows (--max-ops 1e+08"), std::string::npos)
      << message;
  EXPECT_NE(message.find("or raise --max-ops"), std::string::npos) << message;
  // 100,000 units over 1,000 stages: 5e12 steps and 1.2 GB of tables.
  EXPECT_THROW(check_partition_work(100000, 1000, {}), ResourceLimitError);
  check_partition_work(200, 100, {});  // 2e6 steps: a default scenario's size
}

TEST(BalancedSplit, DefaultModelIsGpt2MediumWithAnUntiedHead) {
  const TransformerSetup setup = default_setup();
  double params = 0;
  for (const StageCosts& c : transformer_stage_costs(setup, 1, 8)) params += c.parameters;
  // 24 layers x 12h² + an embedding and a separate output layer of vocab x h each, + the final norm's 2h.
  const double h = 1024, vocab = 50257;
  EXPECT_DOUBLE_EQ(params, 24 * 12 * h * h + 2 * vocab * h + 2 * h);
  // GPT-2 Medium untied: 354,823,168 (tied) + 50,257 x 1024 = 406,286,336; the rest is the position
  // embedding and the layers' biases and norms, which the model leaves out (within 0.4%).
  EXPECT_NEAR(params / 406'286'336.0, 1, 0.004);
}

}  // namespace
}  // namespace pipesim
