// The run length (sim/steady_state.h): the requested batches are a minimum, the window passes every stage's
// fill and is whole cycles, the figures do not depend on `batches`, and none breaks physics
// (api/run_assertions.h).
#include "sim/steady_state.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <numeric>

#include "api/run_assertions.h"
#include "base/errors.h"
#include "report/report.h"
#include "report/result_record.h"
#include "report/table_columns.h"
#include "schedules/registry.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

constexpr TimeNs kMs = kNsPerMs;

// F = I = W = 1 ms on every stage (B = 2 ms when not split), as in the repro.
Scenario uniform_split(int n, int m, int batches) {
  return test::scenario_from_yaml(
      fmt::format("pipeline: {{stages: {}, microbatches: {}, batches: {}}}\n"
                  "costs: {{forward_ms: 1.0, backward_input_ms: 1.0, backward_weight_ms: 1.0}}\n",
                  n, m, batches));
}

// Uneven stages (the first and last heavier, as with an embedding and a loss), an optimizer step and a
// comm latency.
Scenario uneven(int n, int m, int batches) {
  std::string forward, input, weight;
  for (int i = 0; i < n; ++i) {
    const double scale = i == 0 ? 1.5 : i == n - 1 ? 1.8 : 1.0 + 0.1 * (i % 3);
    forward += fmt::format("{}{:.2f}", i ? ", " : "", scale);
    input += fmt::format("{}{:.2f}", i ? ", " : "", 1.1 * scale);
    weight += fmt::format("{}{:.2f}", i ? ", " : "", 0.7 * scale);
  }
  return test::scenario_from_yaml(fmt::format(
      "pipeline: {{stages: {}, microbatches: {}, batches: {}}}\n"
      "costs: {{forward_ms: [{}], backward_input_ms: [{}], backward_weight_ms: [{}], optimizer_ms: 0.3, "
      "comm_ms: 0.05}}\n",
      n, m, batches, forward, input, weight));
}

SimulationResult run(const Scenario& scenario, const std::string& name, int accumulation = 0) {
  std::map<std::string, std::string> params;
  if (accumulation > 0) params["accumulation"] = std::to_string(accumulation);
  SimulationOptions options;
  options.analyze_graph = false;
  return test::run_schedule(scenario, name, params, options);
}

int stage1_versions(const SimulationResult& r) {
  return r.drift.stages[0].weight_versions_max;
}

// --- the repro: a window inside stage 1's fill printed impossible figures ---------------------------------

// A saturated uniform stream: stage 1 runs one F, I and W per microbatch back to back (3 ms), N microbatches
// in flight (N x M_B), Δ = N−1 steps between F and B on stage 1 (a = 1), zero bubble.
TEST(SteadyState, PaciN8M1IsSaturatedWhateverTheRequestedBatches) {
  for (int batches : {1, 4, 32}) {
    SCOPED_TRACE(batches);
    const SimulationResult r = run(uniform_split(8, 1, batches), "paci", 1);
    EXPECT_EQ(r.metrics.period_ns, 3 * kMs);
    EXPECT_EQ(r.metrics.bubble_fraction, 0.0);
    EXPECT_EQ(r.drift.stages[0].drift_max, 7);
    EXPECT_EQ(r.metrics.devices[0].peak_in_flight, 8);
    EXPECT_EQ(r.metrics.devices[0].peak_activation_bytes, 8 * r.activation_bytes_per_microbatch[0]);
    EXPECT_GE(r.spec.batches, batches);
  }
}

// m ≤ N/4: a batch of 8 microbatches takes 8 x 3 ms on a saturated stage 1; PipeDream stashes one version per
// step in flight on stage 1: N−1 steps plus the current one = N versions.
TEST(SteadyState, StreamsAtN32M8MeasurePastTheFill) {
  for (const char* name : {"paci", "async-1f1b", "pipedream"}) {
    SCOPED_TRACE(name);
    const SimulationResult r = run(uniform_split(32, 8, 4), name, std::string(name) == "paci" ? 1 : 0);
    EXPECT_EQ(r.metrics.period_ns, 8 * 3 * kMs);
    EXPECT_EQ(r.metrics.bubble_fraction, 0.0);
    if (std::string(name) == "pipedream") {
      EXPECT_EQ(stage1_versions(r), 32);
    } else {
      EXPECT_EQ(r.drift.stages[0].drift_max, 31);
    }
  }
}

// --- the window arithmetic, by hand ---------------------------------------------------------------------

// Warm-up 16 microbatches, a cycle of 6, drain 19, m = 2: the warm-up in whole cycles (18), halves of one
// cycle, the window [18, 30), and the run holds 30 + 19 = 49 microbatches in whole batches: 25.
TEST(SteadyState, InitialWindowIsWarmupTwoWholeCyclesAndDrain) {
  RunLengthOptions o;
  o.microbatches_per_batch = 2;
  o.min_batches = 1;
  o.hint = {16, 6, 19};
  RunWindow w = initial_window(o);
  EXPECT_EQ(w.first_microbatch, 18);
  EXPECT_EQ(w.end_microbatch, 30);
  EXPECT_EQ(w.total_batches, 25);
  // 40 requested (80 microbatches): (80 − 18 − 19) / 12 = 3 pairs of cycles widen the window to 36
  // microbatches; of the 80 − 73 = 7 left over, one whole cycle (6) more of warm-up.
  o.min_batches = 40;
  w = initial_window(o);
  EXPECT_EQ(w.microbatches(), 36);
  EXPECT_EQ(w.first_microbatch, 24);
  EXPECT_EQ(w.total_batches, 40);
  // A cycle of one batch keeps the window at batch starts: (80 − 16 − 19) / 4 = 11 pairs of 2, rounded down
  // to whole multiples of the fill's quarter ((16 + 19) / 4 / 2 = 4 pairs): 8 pairs, 32 microbatches from
  // 16; of the 80 − 67 = 13 left over, 12 (6 cycles) more of warm-up: it starts at 28 = batch 14.
  o.hint = {16, 2, 19};
  w = initial_window(o);
  EXPECT_EQ(w.microbatches(), 32);
  EXPECT_EQ(w.first_microbatch, 28);
  EXPECT_EQ(w.first_microbatch % o.microbatches_per_batch, 0);
}

// A stream of few microbatches per batch over many stages: fill 2·64 = 128 microbatches = 32 batches of 4,
// drain 129; the window takes a quarter of those 257 microbatches in whole cycles: 64 a half.
TEST(SteadyState, LongFillAndDrainWidenTheFirstWindow) {
  RunLengthOptions o;
  o.microbatches_per_batch = 4;
  o.hint = {128, 4, 129};
  const RunWindow w = initial_window(o);
  EXPECT_EQ(w.first_microbatch, 128);
  EXPECT_EQ(w.end_microbatch, 256);
  EXPECT_EQ(w.total_batches, 97);
  o.exact_repeat = false;  // noisy costs: halves of one batch
  EXPECT_EQ(initial_window(o).microbatches(), 8);
}

// Async 1F1B at N=64, m=4 with a 0.05 ms latency repeats per device only every 16 batches (each batch
// boundary cuts ops 0.1 ms later on the next device): the widened window holds whole repeats, so one run
// suffices (five before: windows of 1, 2, 4, 8 and 16 batches a half), with the figures of a run of 200.
TEST(SteadyState, AStreamWithALongRepeatConvergesInOneRun) {
  const auto scenario = [](int batches) {
    return test::scenario_from_yaml(fmt::format(
        "pipeline: {{stages: 64, microbatches: 4, batches: {}}}\n"
        "costs: {{forward_ms: 1.0, backward_input_ms: 1.0, backward_weight_ms: 1.0, comm_ms: 0.05}}\n",
        batches));
  };
  const SimulationResult r = run(scenario(1), "pipedream");
  EXPECT_EQ(r.simulations, 1);
  const SimulationResult long_run = run(scenario(200), "pipedream");
  EXPECT_EQ(r.metrics.period_ns, long_run.metrics.period_ns);
  EXPECT_EQ(r.metrics.bubble_fraction, long_run.metrics.bubble_fraction);
  EXPECT_EQ(r.metrics.period_ns * 16, ms_to_ns(198.3));  // fifteen batches of 12.4 ms and one of 12.3
}

// The same stream with batches of 220: its pattern (63 forward gaps of 3.1 ms and one of 3.0 on stage 1)
// repeats every 64 microbatches, so windows of whole batches would need lcm(64, 220) / 220 = 16 batches a
// half (34 batches in all, two runs: 1.44 M ops). A stream's window is cut at microbatches: one run of 2
// batches (fill 128, halves of 64, drain 129), and the exact period 220 × 198.3 / 64 ms.
TEST(SteadyState, AStreamWindowIsCutBetweenBatches) {
  const auto scenario = [](int microbatches, int batches) {
    return test::scenario_from_yaml(fmt::format(
        "pipeline: {{stages: 64, microbatches: {}, batches: {}}}\n"
        "costs: {{forward_ms: 1.0, backward_input_ms: 1.0, backward_weight_ms: 1.0, comm_ms: 0.05}}\n",
        microbatches, batches));
  };
  const SimulationResult r = run(scenario(220, 1), "pipedream");
  EXPECT_EQ(r.simulations, 1);
  EXPECT_EQ(r.spec.batches, 2);
  EXPECT_EQ(r.metrics.simulated_ops, 2 * 220 * 64 * 3);  // F, B and a step per microbatch and stage
  const int window = r.metrics.end_microbatch - r.metrics.first_steady_microbatch;
  EXPECT_EQ(window % 128, 0) << window;         // whole repeats of 64 in each half
  EXPECT_NE(window % 220, 0) << window;         // not whole batches
  EXPECT_EQ(r.metrics.period_ns, 681'656'250);  // 220 x 3.0984375 ms
  // Per microbatch the same as batches of 64, whose windows are whole batches.
  const SimulationResult whole = run(scenario(64, 1), "pipedream");
  EXPECT_EQ(whole.metrics.period_ns, ms_to_ns(198.3));
  EXPECT_DOUBLE_EQ(r.metrics.bubble_fraction, whole.metrics.bubble_fraction);
  for (size_t d = 0; d < r.metrics.devices.size(); ++d) {
    EXPECT_EQ(r.metrics.devices[d].work_ns_per_microbatch, whole.metrics.devices[d].work_ns_per_microbatch);
    EXPECT_EQ(r.metrics.devices[d].busy_ns_per_batch * 64, whole.metrics.devices[d].busy_ns_per_batch * 220);
  }
}

// Per-batch figures of a window cut between batches: ⌊value · m / microbatches⌋ exactly, also where value · m
// would overflow 64 bits (a window of 100 s ops).
TEST(SteadyState, PerBatchScalingIsExactWithoutOverflow) {
  const RunWindow w{4, 128, 348};  // 220 microbatches
  EXPECT_EQ(w.per_batch(681'656'250, 220), 681'656'250);
  EXPECT_EQ(w.per_batch(1000, 64), 290);  // 64000 / 220 = 290.9
  for (const TimeNs value : {TimeNs{3}, TimeNs{219}, TimeNs{400'000'000'000'000'123}}) {
    for (const int m : {1, 7, 64, 4096}) {
      const __int128 exact = static_cast<__int128>(value) * m / 220;
      EXPECT_EQ(static_cast<__int128>(w.per_batch(value, m)), exact) << value << " x " << m;
    }
  }
}

TEST(SteadyState, ScheduleHintsGiveTheFillAndTheAccumulationCycle) {
  PipelineSpec spec;
  spec.devices = 8;
  spec.microbatches = 6;
  ScheduleParams params("test");
  params.set("accumulation", "4");
  const SteadyStateHint paci = make_schedule("paci", params)->steady_state(spec);
  EXPECT_EQ(paci.warmup_microbatches, 16);  // 2·max(N, L_1) = 2·8
  EXPECT_EQ(paci.cycle_microbatches, 4);    // a: a stream's timing knows no batches
  EXPECT_EQ(paci.drain_microbatches, 20);   // 16 + a
  const SteadyStateHint flush = make_schedule("1f1b-flush", ScheduleParams("test"))->steady_state(spec);
  EXPECT_EQ(flush.cycle_microbatches, 6);
}

// Stage 1's forward starts as a trace: gaps 1,2,1,2,... repeat every 2; 1,1,2 every 3; no repeat: 0.
RunTrace forward_starts(const std::vector<TimeNs>& starts) {
  RunTrace trace;
  trace.layout = PipelineLayout::linear(1);
  for (size_t j = 0; j < starts.size(); ++j) {
    trace.ops.push_back({forward(0, static_cast<int>(j)), 0, 0, starts[j], starts[j] + 1});
  }
  return trace;
}

TEST(SteadyState, ForwardGapRepeatIsTheSmallestPeriodOfTheGaps) {
  EXPECT_EQ(forward_gap_repeat(forward_starts({0, 1, 3, 4, 6, 7, 9}), 0, 6), 2);
  EXPECT_EQ(forward_gap_repeat(forward_starts({0, 1, 2, 4, 5, 6, 8}), 0, 6), 3);
  EXPECT_EQ(forward_gap_repeat(forward_starts({0, 5, 5, 5, 5}), 1, 4), 1);
  EXPECT_EQ(forward_gap_repeat(forward_starts({0, 1, 3, 6, 10, 15}), 0, 5), 0);
}

// A transient repeat does not stay in the cycle: a run whose fill repeats every 84 microbatches and whose
// steady state every 109 (PACI at N = 32, m = 4 over inter-node links did) is measured over halves of
// lcm(4, 109) = 436 multiples, not of lcm(4, 84, 109) = 9,156, which outgrew the op cap.
TEST(SteadyState, ATransientsRepeatDoesNotStayInTheCycle) {
  class Probe final : public SteadyStateProbe {
   public:
    RunWindow window;
    int forward_gap_repeat(int first, int /*end*/) const override { return first < 300 ? 84 : 109; }
    bool halves_agree(const RunWindow& w) const override {
      return w.first_microbatch >= 300 && (w.microbatches() / 2) % 109 == 0;
    }
    long ops() const override { return 10L * window.end_microbatch; }
  };
  RunLengthOptions o;
  o.microbatches_per_batch = 4;
  o.hint = {64, 4, 0};
  o.max_ops = 200'000;  // 20,000 microbatches: 9,156-microbatch halves do not fit
  o.run_name = "paci";
  Probe probe;
  const SteadyWindow found = find_steady_window(o, [&](const RunWindow& w) -> const SteadyStateProbe& {
    probe.window = w;
    return probe;
  });
  EXPECT_EQ(found.window.microbatches() / 2 % 436, 0) << found.window.microbatches();
  EXPECT_LT(found.window.microbatches(), 9156);
  EXPECT_GE(found.window.first_microbatch, 300);
}

// A run that never settles (each batch longer than the last) ends in a clear error, not a hang.
TEST(SteadyState, NoSteadyStateIsAnErrorWithinTheOpCap) {
  RunLengthOptions o;
  o.microbatches_per_batch = 1;
  o.hint = {1, 1, 0};
  o.max_ops = 10'000;
  o.run_name = "growing";
  int runs = 0;
  auto growing = [&](int batches) {
    ++runs;
    std::vector<TimeNs> starts;
    for (int b = 0; b <= batches; ++b) starts.push_back(static_cast<TimeNs>(b) * b);
    RunTrace trace = forward_starts(starts);
    trace.total_microbatches = batches + 1;
    return trace;
  };
  try {
    simulate_steady_state(o, growing);
    FAIL() << "expected an error";
  } catch (const ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find("growing: no steady state"), std::string::npos) << e.what();
  }
  EXPECT_LT(runs, 20);
}

// Zero-length ops: refused where the costs are read; a cost table of zeros built in code (which no reader
// accepts) reaches the metrics, which stop with an input error instead of dividing by a zero period.
TEST(SteadyState, AllZeroCostsAreAnErrorNotZeroFigures) {
  const std::string yaml =
      "pipeline: {stages: 4, microbatches: 2}\n"
      "costs: {forward_ms: 0, backward_input_ms: 0, backward_weight_ms: 0}\n";
  EXPECT_THROW(test::scenario_from_yaml(yaml), InputError);
  Scenario s = test::scenario_from_yaml(
      "pipeline: {stages: 4, microbatches: 2}\n"
      "costs: {forward_ms: 1, backward_input_ms: 1, backward_weight_ms: 1}\n");
  for (std::vector<TimeNs>* times :
       {&s.costs.forward_ns, &s.costs.backward_input_ns, &s.costs.backward_weight_ns}) {
    times->assign(times->size(), 0);
  }
  for (const char* name : {"paci", "1f1b-flush", "zb-h1"}) {
    try {
      run(s, name);
      ADD_FAILURE() << name << ": expected an InputError";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("every op of this run lasts 0 ns"), std::string::npos) << e.what();
    }
  }
}

TEST(SteadyState, ReportsCarryTheBatchesSimulated) {
  const SimulationResult r = run(uniform_split(8, 1, 4), "paci", 1);
  const auto json = result_record(r);
  EXPECT_EQ(json["pipeline"]["batches_requested"], 4);
  EXPECT_EQ(json["pipeline"]["batches_simulated"], r.spec.batches);
  EXPECT_GT(r.spec.batches, 16);  // past the 2N warm-up
  const std::vector<std::string> header = csv_header();
  const std::vector<std::string> row = csv_row(r);
  const auto column = std::find(header.begin(), header.end(), "batches_simulated") - header.begin();
  EXPECT_EQ(row.at(column), std::to_string(r.spec.batches));
  EXPECT_NE(render_result_table("t", {r}, TableOptions{true, {}}).find(fmt::format(" {} ", r.spec.batches)),
            std::string::npos);
}

// --- the grid: every schedule, N ∈ 2..32, m ∈ 1..64, a, uniform and uneven costs -------------------------

// Every steady-state figure of a run (run totals such as the makespan, the critical path and the op count
// grow with the run and are left out).
std::vector<double> figures(const SimulationResult& r) {
  const RunMetrics& m = r.metrics;
  std::vector<double> f = {static_cast<double>(m.period_ns), m.throughput_samples_per_s, m.bubble_fraction,
                           static_cast<double>(r.memory.peak_bytes())};
  // The ZB per-batch figures exist only where batches end in a flush (null for asynchronous schedules).
  if (has_batch_bubble(r)) {
    f.push_back(m.bubble_rate_zb);
    f.push_back(static_cast<double>(m.zb_batch_cost_ns));
  }
  for (const DeviceMetrics& d : m.devices) {
    for (TimeNs v :
         {d.busy_ns_per_batch, d.idle_ns_per_batch, d.work_ns_per_microbatch, d.peak_activation_bytes}) {
      f.push_back(static_cast<double>(v));
    }
    f.push_back(d.peak_in_flight);
  }
  for (const StageDrift& s : r.drift.stages) {
    for (double v : {static_cast<double>(s.drift_max), s.drift_mean, static_cast<double>(s.staleness_max),
                     s.staleness_mean, static_cast<double>(s.weight_versions_max),
                     static_cast<double>(s.in_flight_max)}) {
      f.push_back(v);
    }
  }
  return f;
}

struct GridPoint {
  int n;
  int m;
};

// N from 2 to 32; m below N, at most N/4, equal, above, up to 64.
std::vector<GridPoint> grid_points() {
  std::vector<GridPoint> points;
  for (int n : {2, 3, 5, 8, 12, 32}) {
    std::vector<int> ms = {1, 2, 3, std::max(1, n / 4), n - 1, n, 2 * n + 1};
    if (n == 32) ms = {1, 8, 32, 64};
    std::sort(ms.begin(), ms.end());
    ms.erase(std::unique(ms.begin(), ms.end()), ms.end());
    for (int m : ms) {
      if (m >= 1 && m <= 64) points.push_back({n, m});
    }
  }
  return points;
}

void expect_batches_independent(const std::function<Scenario(int batches)>& scenario, const std::string& name,
                                int a) {
  SimulationResult minimum;
  try {
    minimum = run(scenario(1), name, a);
  } catch (const InputError&) {
    return;  // a shape the schedule does not allow (interleaved: m a multiple of N; 2BW: m ≥ N)
  }
  // Above the minimum and not a multiple of its cycle.
  const SimulationResult longer = run(scenario(2 * minimum.spec.batches + 3), name, a);
  EXPECT_GE(longer.spec.batches, 2 * minimum.spec.batches + 3);
  const std::vector<double> a_figures = figures(minimum);
  const std::vector<double> b_figures = figures(longer);
  ASSERT_EQ(a_figures.size(), b_figures.size());
  for (size_t k = 0; k < a_figures.size(); ++k) {
    EXPECT_NEAR(a_figures[k], b_figures[k], 1e-9 * std::max(1.0, std::abs(a_figures[k])))
        << "figure " << k << " with " << minimum.spec.batches << " and " << longer.spec.batches << " batches";
  }
}

TEST(SteadyStateGrid, EveryScheduleShapeAndCostsGiveBatchesIndependentPhysicalFigures) {
  for (const ScheduleInfo& info : registered_schedules()) {
    for (const GridPoint& p : grid_points()) {
      // zb-1p/2p search 8 candidates per run: the largest shapes are left to the others.
      if (info.name.starts_with("zb-") && p.n * p.m > 256) continue;
      const std::vector<int> as =
          info.name == "paci" ? std::vector<int>{1, 2, 3, 4, 8, 16} : std::vector<int>{0};
      for (int a : as) {
        if (p.n == 32 && a != 0 && a != 3 && a != 16) continue;
        SCOPED_TRACE(fmt::format("{} N={} m={} a={}", info.name, p.n, p.m, a));
        expect_batches_independent([&](int b) { return uniform_split(p.n, p.m, b); }, info.name, a);
        expect_batches_independent([&](int b) { return uneven(p.n, p.m, b); }, info.name, a);
      }
    }
  }
}

// PACI's mean Δ over whole a-cycles is (N−i)/a exactly on every stage, a dividing m or not.
TEST(SteadyStateGrid, PaciMeanDriftIsExactWhenADividesTheWindow) {
  for (int n : {2, 5, 8, 16}) {
    for (int m : {1, 3, n}) {
      for (int a : {1, 2, 3, 4, 8}) {
        SCOPED_TRACE(fmt::format("N={} m={} a={}", n, m, a));
        const SimulationResult r = run(uniform_split(n, m, 1), "paci", a);
        const int window_microbatches = r.metrics.end_microbatch - r.metrics.first_steady_microbatch;
        EXPECT_EQ(window_microbatches % a, 0);
        for (int i = 1; i <= n; ++i) {
          EXPECT_DOUBLE_EQ(r.drift.stages[i - 1].drift_mean, static_cast<double>(n - i) / a) << "stage " << i;
          EXPECT_EQ(r.drift.stages[i - 1].drift_max, (n - i + a - 1) / a) << "stage " << i;
        }
      }
    }
  }
}

// The assertions fire: a result whose period is below m x work is an internal error naming the run.
TEST(RunAssertions, APeriodBelowTheWorkIsAnInternalErrorNamingTheRun) {
  SimulationResult r = run(uniform_split(4, 2, 1), "1f1b-flush");
  EXPECT_NO_THROW(assert_physical(r, true));
  SimulationResult broken = r;
  broken.metrics.period_ns = 2 * broken.metrics.devices[0].work_ns_per_microbatch - 1;
  EXPECT_THROW(assert_physical(broken, true), InternalError);
  broken = r;
  broken.metrics.bubble_fraction = -0.01;
  try {
    assert_physical(broken, true);
    FAIL();
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("1f1b-flush N=4 m=2"), std::string::npos) << e.what();
  }
  broken = r;
  broken.drift.stages[0].weight_versions_max = 2;
  EXPECT_THROW(assert_physical(broken, true), InternalError);
  broken = r;
  // 1F1B N=4, m=2: 2 batches of (m+N−1)·3 ms = 30 ms hold 2·2·3 = 12 ms of work per device; a quarter of the
  // window is shorter than that, so it cannot have been steady.
  broken.metrics.window_ns /= 4;
  EXPECT_THROW(assert_physical(broken, true), InternalError);
}

}  // namespace
}  // namespace pipesim
