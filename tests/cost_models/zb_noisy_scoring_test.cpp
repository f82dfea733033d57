// The Zero Bubble search's scores (schedules/zb_greedy.h) where the one pass falls back: every candidate
// the search can meet (the greedy under each flag setting, ZB-H1, ZB-H2, 1F1B's split order) scored by the
// one pass, by the static pass's trace and by the event engine on random pipelines, some under the link
// comm model and some with noisy costs (cost_models/noisy_costs.h, why it lives here): the same figures.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <tuple>

#include "schedules/zb_greedy.h"
#include "sim/duration_table.h"
#include "tests/random_scenarios.h"
#include "tests/schedules/random_zb_pipelines.h"

namespace pipesim {
namespace {

TEST(ZbScoring, OnePassStaticPassAndEngineGiveTheSameScores) {
  std::mt19937 rng(96);
  int compared = 0;
  for (int k = 0; k < 40; ++k) {
    // The link model: no one-pass timing.
    const test::RandomZbPipeline pipeline = test::random_zb_pipeline(rng, k, k % 10 == 9);
    const std::string what = fmt::format("configuration {}:\n{}", k, pipeline.text);
    test::RandomZbRun run = test::prepare_random_zb(pipeline);
    PipelineSpec spec = run.prepared.spec;
    std::unique_ptr<CostModel> costs = std::make_unique<test::StageTableCosts>(std::move(run.costs));
    if (k % 10 == 4) {  // noisy costs: one run with a fixed window
      costs = test::jitter_and_stragglers(k)(std::move(costs));
      spec.exact_costs = false;
    }
    const std::vector<DeviceActionLists> candidates = test::zb_search_candidates(spec, *costs);
    const DurationTable durations(*costs, spec.devices, 4 * spec.microbatches);
    for (const DeviceActionLists& lists : candidates) {
      const ZbScore fastest = score_zb_candidate(lists, spec, durations, ZbScoring::kFastest);
      const ZbScore traced = score_zb_candidate(lists, spec, *costs, ZbScoring::kStaticPass);
      const ZbScore engine = score_zb_candidate(lists, spec, *costs, ZbScoring::kEngine);
      const auto fields = [](const ZbScore& s) {
        return std::tuple{s.period_ns, s.zb_batch_cost_ns, s.makespan_ns};
      };
      EXPECT_EQ(fields(fastest), fields(engine)) << what;
      EXPECT_EQ(fields(traced), fields(engine)) << what;
      ++compared;
    }
  }
  EXPECT_GT(compared, 200);
}

}  // namespace
}  // namespace pipesim
