// The Zero Bubble search's fast scoring (schedules/zb_greedy.h): repeated lists timed in one pass without a
// trace (sim/fast/repeated_list_timing.h) against the static pass on the built lists, op for op; the search
// picks the same schedule whichever way it scores, and what its rule written out serially picks. On random
// pipelines stated directly (tests/schedules/random_zb_pipelines.h); the scores under noisy costs and the
// link model are in tests/cost_models/zb_noisy_scoring_test.cpp (the noise is a cost model's).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <tuple>

#include "base/errors.h"
#include "base/task_pool.h"
#include "schedules/registry.h"
#include "schedules/zb_greedy.h"
#include "schedules/zb_handcrafted.h"
#include "sim/fast/repeated_list_timing.h"
#include "sim/fast/static_list_timing.h"
#include "tests/reduction_costs.h"
#include "tests/schedules/random_zb_pipelines.h"
#include "tests/sim/plans.h"

namespace pipesim {
namespace {

using ZbScoringOpKey = std::tuple<int, int, int>;  // kind, stage, microbatch

// Durations that differ by microbatch (deterministic, as a per-op measured model's): no batch repeats
// another exactly, so the one pass must not shift batches.
class ZbScoringDurationsByMicrobatch final : public CostModel {
 public:
  explicit ZbScoringDurationsByMicrobatch(const CostModel& base) : base_(base) {}
  TimeNs duration(const Action& a) const override {
    return base_.duration(a) + (a.kind == OpKind::U ? 0 : 100 * a.microbatch);
  }
  Bytes activation_bytes(int stage) const override { return base_.activation_bytes(stage); }
  Bytes weight_grad_activation_bytes(int stage) const override {
    return base_.weight_grad_activation_bytes(stage);
  }
  Bytes transfer_bytes(int stage) const override { return base_.transfer_bytes(stage); }

 private:
  const CostModel& base_;
};

TEST(RepeatedListTiming, EqualsTheStaticPassOnTheBuiltListsOpForOp) {
  std::mt19937 rng(11);
  int compared = 0, shifted = 0;
  for (const ScheduleInfo& info : registered_schedules()) {
    for (int trial = 0; trial < 6; ++trial) {
      const test::RandomZbPipeline pipeline = test::random_zb_pipeline(rng, trial);
      const std::string what = fmt::format("{} trial {}:\n{}", info.name, trial, pipeline.text);
      std::optional<test::RandomZbRun> run;
      try {
        run.emplace(test::prepare_random_zb(pipeline, info.name));
      } catch (const InputError&) {
        continue;  // a shape the schedule refuses
      }
      const auto* list_schedule = dynamic_cast<const StaticSchedule*>(run->prepared.schedule.get());
      if (list_schedule == nullptr) continue;
      const PipelineLayout& layout = run->prepared.layout;
      PipelineSpec spec = run->prepared.spec;
      spec.batches = 1 + trial % 5;
      const ZbScoringDurationsByMicrobatch by_microbatch(run->costs);
      // Odd trials: each stage's step also reduces its gradients before the barrier.
      const test::WithReductionsBeforeBarrier reducing(
          run->costs,
          trial % 2 ? std::vector<TimeNs>{ms_to_ns(0.7), 0, ms_to_ns(2.1)} : std::vector<TimeNs>{});
      const CostModel& costs = trial % 3 == 2 ? static_cast<const CostModel&>(by_microbatch)
                                              : static_cast<const CostModel&>(reducing);
      const DeviceActionLists one_batch = list_schedule->batch_actions(spec, run->costs);
      const DeviceActionLists lists = repeat_batches(layout, one_batch, spec);
      std::vector<TimeNs> latency;
      for (int d = 0; d < layout.devices; ++d) latency.push_back(pipeline.latency_ns.at(d));
      const std::optional<RunTrace> expected = time_static_lists(
          {layout, lists, spec.total_microbatches(), BackwardReads::kCurrentWeights, latency}, costs);
      const std::optional<RepeatedListTimes> times = time_repeated_lists(
          {layout, one_batch, spec.microbatches, spec.batches, spec.sync == OptimizerSync::kBarrier, latency},
          costs);
      ASSERT_EQ(expected.has_value(), times.has_value()) << what;
      if (!times) continue;
      std::map<ZbScoringOpKey, const OpRecord*> by_action;
      for (const OpRecord& op : expected->ops) {
        by_action[{static_cast<int>(op.action.kind), op.action.stage, op.action.microbatch}] = &op;
      }
      long ops = 0;
      for (int d = 0; d < layout.devices; ++d) {
        for (size_t i = 0; i < lists[d].size(); ++i, ++ops) {
          const Action& a = lists[d][i];
          const OpRecord& op = *by_action.at({static_cast<int>(a.kind), a.stage, a.microbatch});
          EXPECT_EQ(times->start_ns(d, i), op.start_ns) << what << describe(a);
          EXPECT_EQ(times->end_ns(d, i), op.end_ns) << what << describe(a);
        }
      }
      EXPECT_EQ(times->ops(), ops) << what;
      EXPECT_EQ(times->makespan_ns(), expected->makespan_ns) << what;
      if (&costs == &by_microbatch) {
        EXPECT_EQ(times->explicit_batches(), spec.batches) << what;
      }
      shifted += times->explicit_batches() < spec.batches ? 1 : 0;
      ++compared;
    }
  }
  EXPECT_GT(compared, 40);
  EXPECT_GT(shifted, 10);  // the shifted batches were compared too
}

// Four stages of F = 1 ms, I = 1.5 ms, W = 0.5 ms and a 0.5 ms step.
test::UniformStageCosts zb_scoring_four_stages() {
  return test::UniformStageCosts::ms(1, 1.5, 0.5, 0.5);
}

// Once a batch repeats, the rest are shifted copies: 1F1B over 6 batches (post-validation) is timed op by
// op for its first batches only, and its times are still the static pass's (above).
TEST(RepeatedListTiming, TimesOnlyTheBatchesBeforeTheRunRepeats) {
  const PipelineLayout layout = PipelineLayout::linear(4);
  const test::UniformStageCosts costs = zb_scoring_four_stages();
  const DeviceActionLists one_batch = one_f_one_b_split_lists(4, 8);
  const std::optional<RepeatedListTimes> times =
      time_repeated_lists({layout, one_batch, 8, 6, false, {0, 0, 0, 0}}, costs);
  ASSERT_TRUE(times);
  EXPECT_LE(times->explicit_batches(), 3);
  // 1F1B's steady batch: stage 1's 8 F (1 ms), 8 I (1.5 ms), 8 W (0.5 ms) and its 0.5 ms step, plus the
  // next batch's first microbatch going down the other 3 stages (F) and its gradient coming back (I)
  // before stage 1's first I of the batch: 24.5 + 3 x 2.5 ms.
  EXPECT_EQ(times->repeat_shift_ns(), ms_to_ns(8 * 1.0 + 8 * 1.5 + 8 * 0.5 + 0.5 + 3 * (1.0 + 1.5)));
}

// Under a barrier with equal steps every device ends batch 0 at the same time, as every device began it:
// batch 0 alone is timed, the rest are its copies shifted by 1F1B's batch, (m + N - 1)(F + I + W) = 11 x 3 ms
// less the W on each of the N - 1 hops of the last gradient's way back (it moves on after I), 31.5 ms, plus
// the 0.5 ms step (the op-for-op test above holds the shifted times equal to the static pass's).
TEST(RepeatedListTiming, UnderABarrierOneBatchTimesTheRun) {
  const PipelineLayout layout = PipelineLayout::linear(4);
  const test::UniformStageCosts costs = zb_scoring_four_stages();
  const std::optional<RepeatedListTimes> times =
      time_repeated_lists({layout, one_f_one_b_split_lists(4, 8), 8, 6, true, {0, 0, 0, 0}}, costs);
  ASSERT_TRUE(times);
  EXPECT_EQ(times->explicit_batches(), 1);
  EXPECT_EQ(times->repeat_shift_ns(), ms_to_ns(11 * 3.0 - 3 * 0.5 + 0.5));
  EXPECT_EQ(times->makespan_ns(), 6 * ms_to_ns(11 * 3.0 - 3 * 0.5 + 0.5));
}

TEST(RepeatedListTiming, RefusesWhatTheStaticPassRefuses) {
  const PipelineLayout layout = PipelineLayout::linear(2);
  const test::UniformStageCosts costs = test::UniformStageCosts::ms(1.0, 1.0);
  const auto timed = [&](const DeviceActionLists& one_batch) {
    return time_repeated_lists({layout, one_batch, 1, 2, false, {0, 0}}, costs).has_value();
  };
  const Action f0 = forward(0, 0), f1 = forward(1, 0), b0 = backward(0, 0), b1 = backward(1, 0);
  EXPECT_TRUE(timed({{f0, b0}, {f1, b1}}));
  EXPECT_FALSE(timed({{b0, f0}, {f1, b1}}));             // deadlock: B before its own F
  EXPECT_FALSE(timed({{f0, f0, b0}, {f1, b1}}));         // F run twice
  EXPECT_FALSE(timed({{f1, b0}, {f0, b1}}));             // a stage on another device
  EXPECT_FALSE(timed({{forward(0, 1), b0}, {f1, b1}}));  // a microbatch outside the batch
}

// The search stops timing a candidate once batch 0 proves its period longer than the best so far (the
// bounds of RepeatedListRun::period_to_beat_ns). Every candidate on random pipelines, with and without a
// barrier: never stopped when the period to beat is its own, always stopped when it is 0.
TEST(RepeatedListTiming, BatchZeroNeverProvesAPeriodLongerThanTheRealOne) {
  std::mt19937 rng(4242);
  int stopped = 0, kept = 0;
  for (int k = 0; k < 30; ++k) {
    // Post-validation and barrier in turn.
    const test::RandomZbPipeline pipeline = test::random_zb_pipeline(rng, k);
    const test::RandomZbRun run = test::prepare_random_zb(pipeline);
    const PipelineSpec& spec = run.prepared.spec;
    const PipelineLayout layout = PipelineLayout::linear(spec.devices);
    const bool barrier = spec.sync == OptimizerSync::kBarrier;
    for (const DeviceActionLists& lists : test::zb_search_candidates(spec, run.costs)) {
      const std::string what = fmt::format("configuration {}:\n{}", k, pipeline.text);
      const ZbScore score = score_zb_candidate(lists, spec, run.costs);
      const auto timed = [&](TimeNs to_beat_ns) {
        const std::atomic<TimeNs> bound{to_beat_ns};
        return time_repeated_lists(
            {layout, lists, spec.microbatches, 4, barrier, pipeline.latency_ns, &bound}, run.costs);
      };
      const std::optional<RepeatedListTimes> own = timed(score.period_ns);
      ASSERT_TRUE(own) << what;
      EXPECT_FALSE(own->cannot_beat()) << what;
      kept += own->cannot_beat() ? 0 : 1;
      const std::optional<RepeatedListTimes> shorter = timed(0);
      ASSERT_TRUE(shorter) << what;
      stopped += shorter->cannot_beat() ? 1 : 0;
      if (shorter->cannot_beat()) {
        EXPECT_EQ(shorter->explicit_batches(), 1) << what;
      }
    }
  }
  EXPECT_GT(kept, 100);
  EXPECT_EQ(stopped, kept);  // every list here starts stage 1 with microbatch 0's forward
}

// The whole search (its greedy runs and scoring spread over the cores) picks the same schedule with the
// same score whether it scores on the engine or in one pass.
TEST(ZbScoring, TheSearchPicksTheSameScheduleWhicheverWayItScores) {
  std::mt19937 rng(2401);
  for (int k = 0; k < 30; ++k) {
    const test::RandomZbPipeline pipeline = test::random_zb_pipeline(rng, k);
    const test::RandomZbRun run = test::prepare_random_zb(pipeline);
    const std::string& what = pipeline.text;
    for (double limit : {1.0, 1.5, 2.0}) {
      const ZbCandidate fast = zb_search(run.prepared.spec, run.costs, limit, ZbScoring::kFastest);
      const ZbCandidate engine = zb_search(run.prepared.spec, run.costs, limit, ZbScoring::kEngine);
      EXPECT_EQ(fast.construction, engine.construction) << what << "limit " << limit;
      EXPECT_EQ(fast.lists, engine.lists) << what;
      EXPECT_EQ(fast.score.period_ns, engine.score.period_ns) << what;
      EXPECT_EQ(fast.score.zb_batch_cost_ns, engine.score.zb_batch_cost_ns) << what;
      EXPECT_EQ(fast.score.makespan_ns, engine.score.makespan_ns) << what;
    }
  }
}

// The search's rule written out serially: every candidate in tie order (the greedy under each limit by flag
// index, zb-h1, zb-h2, 1F1B's order), kept where it fits the limit (1F1B's order always), each scored on its
// own, the best by score with ties to the earlier. The search (greedy runs and scoring spread over the cores
// as they become ready, equal lists scored once) picks the same, and so does it on one thread.
TEST(ZbScoring, TheSearchPicksWhatTheSerialRuleDoes) {
  std::mt19937 rng(1729);
  for (int k = 0; k < 24; ++k) {
    const test::RandomZbPipeline pipeline = test::random_zb_pipeline(rng, k);
    const test::RandomZbRun run = test::prepare_random_zb(pipeline);
    const PipelineSpec& spec = run.prepared.spec;
    for (double limit : {1.0, 1.5, 2.0}) {
      const std::string what = fmt::format("configuration {} limit {}:\n{}", k, limit, pipeline.text);
      const ZbProblem problem = make_zb_problem(spec, run.costs, limit);
      std::vector<std::pair<std::string, DeviceActionLists>> candidates;
      std::vector<double> limits{limit};
      if (limit > 1.0) limits.push_back(1.0);
      for (double under : limits) {
        const ZbProblem limited = make_zb_problem(spec, run.costs, under);
        for (int index = 0; index < kZbFlagCombinations; ++index) {
          if (auto plan = zb_greedy_schedule(limited, ZbFlags::from_index(index)))
            candidates.emplace_back("greedy", plan->lists);
        }
      }
      candidates.emplace_back("zb-h1", zb_h1_lists(spec.devices, spec.microbatches));
      candidates.emplace_back("zb-h2", zb_h2_lists(spec.devices, spec.microbatches));
      candidates.emplace_back("1f1b", one_f_one_b_split_lists(spec.devices, spec.microbatches));
      std::optional<std::pair<ZbScore, DeviceActionLists>> best;
      for (size_t i = 0; i < candidates.size(); ++i) {
        const DeviceActionLists& lists = candidates[i].second;
        bool fits = true;
        for (size_t s = 0; s < lists.size(); ++s) {
          fits &= list_peak_activation_bytes(lists[s], problem.stages[s]) <= problem.stages[s].limit_bytes;
        }
        if (!fits && i + 1 < candidates.size()) continue;
        const ZbScore score = score_zb_candidate(lists, spec, run.costs);
        if (!best || score < best->first) best.emplace(score, lists);
      }
      const ZbCandidate spread = zb_search(spec, run.costs, limit);
      ZbCandidate serial;
      {
        const ParallelWorkerScope one_thread;  // as inside a sweep's worker
        serial = zb_search(spec, run.costs, limit);
      }
      for (const ZbCandidate* found : {&spread, static_cast<const ZbCandidate*>(&serial)}) {
        EXPECT_EQ(found->lists, best->second) << what;
        EXPECT_EQ(found->score.period_ns, best->first.period_ns) << what;
        EXPECT_EQ(found->score.zb_batch_cost_ns, best->first.zb_batch_cost_ns) << what;
        EXPECT_EQ(found->score.makespan_ns, best->first.makespan_ns) << what;
      }
      EXPECT_EQ(spread.construction, serial.construction) << what;
    }
  }
}

}  // namespace
}  // namespace pipesim

namespace pipesim {
namespace {

// The search runs the greedy only for flag settings that could differ from one already run: every setting's
// result (lists, predicted cost, or no list) equals its own run on random configurations and limits, and
// some settings were skipped.
TEST(ZbGreedyAllFlags, EachSettingEqualsItsOwnRun) {
  std::mt19937 rng(5150);
  int runs = 0;
  int settings = 0;
  for (int k = 0; k < 60; ++k) {
    const test::RandomZbPipeline pipeline = test::random_zb_pipeline(rng, k);
    const test::RandomZbRun run = test::prepare_random_zb(pipeline);
    const double limit = 1.0 + 0.25 * (k % 5);
    const ZbProblem problem = make_zb_problem(run.prepared.spec, run.costs, limit);
    int ran = 0;
    const std::vector<std::optional<ZbGreedyPlan>> all = zb_greedy_all_flags(problem, &ran);
    ASSERT_EQ(all.size(), static_cast<size_t>(kZbFlagCombinations));
    for (int index = 0; index < kZbFlagCombinations; ++index) {
      const std::optional<ZbGreedyPlan> own = zb_greedy_schedule(problem, ZbFlags::from_index(index));
      const std::string what =
          fmt::format("configuration {} limit {} flags {}:\n{}", k, limit, index, pipeline.text);
      ASSERT_EQ(all[index].has_value(), own.has_value()) << what;
      if (!own) continue;
      EXPECT_EQ(all[index]->lists, own->lists) << what;
      EXPECT_EQ(all[index]->predicted_cost_ns, own->predicted_cost_ns) << what;
    }
    runs += ran;
    settings += kZbFlagCombinations;
  }
  EXPECT_LT(runs, settings * 2 / 3);  // 267 of 480 when written
}

}  // namespace
}  // namespace pipesim
