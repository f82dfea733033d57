// Values that pass a type check but not the engine's arithmetic are refused where they are read, and runs
// that would not fit in memory are refused before anything is allocated: the repros of the fuzzing report.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <thread>

#include "api/resolve.h"
#include "base/errors.h"
#include "base/task_pool.h"
#include "base/text_file.h"
#include "base/value_ranges.h"
#include "pipesim_source_dir.h"
#include "sim/resource_estimate.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

using test::input_error_of;

TEST(ValueRanges, TimesAndBytesAreCheckedAtTheirBounds) {
  EXPECT_EQ(checked_ms_to_ns(0), 0);
  EXPECT_EQ(checked_ms_to_ns(1.5), 1'500'000);
  EXPECT_EQ(checked_ms_to_ns(1e5), 100'000'000'000);  // 100 s, the largest time
  for (double bad : {1e5 * (1 + 1e-12), 1e13, -1e-9, std::nan(""), std::numeric_limits<double>::infinity()}) {
    EXPECT_FALSE(checked_ms_to_ns(bad).has_value()) << bad;
  }
  EXPECT_EQ(checked_bytes(1099511627776.0), Bytes{1} << 40);
  for (double bad : {1099511627777.0, 1e300, -1.0, std::nan(""), -std::numeric_limits<double>::infinity()}) {
    EXPECT_FALSE(checked_bytes(bad).has_value()) << bad;
  }
  // The documented headroom: 9.2e7 time values and 2^23 byte values sum without overflow.
  EXPECT_LT(9.2e7 * static_cast<double>(kMaxTimeNs), 9.223e18);
  EXPECT_LE(static_cast<double>(Bytes{1} << 23) * kMaxBytes, 9.223372036854775807e18);
  EXPECT_EQ(add_time_ns(kNever - 1, 1, "t"), kNever);
  EXPECT_NE(
      input_error_of([] { add_time_ns(kNever, 1, "an op's end"); }).find("an op's end: the simulated time"),
      std::string::npos);
}

std::string scenario_error(const std::string& costs, const std::string& extra = "") {
  return input_error_of([&] {
    test::scenario_from_yaml("pipeline: {stages: 2, microbatches: 2}\ncosts: {" + costs + "}\n" + extra);
  });
}

TEST(ValueRanges, ScenarioValuesOutOfRangeNameTheFileLineAndKey) {
  const struct {
    std::string costs;
    std::string key;
  } cases[] = {
      {"forward_ms: 1e13, backward_ms: 1", "test.yaml:2: key 'costs.forward_ms'"},
      {"forward_ms: 1, backward_ms: 1, comm_ms: 1e300", "test.yaml:2: key 'costs.comm_ms'"},
      {"forward_ms: [1, .inf], backward_ms: 1", "test.yaml:2: key 'costs.forward_ms[1]'"},
      {"forward_ms: .nan, backward_ms: 1", "test.yaml:2: key 'costs.forward_ms'"},
      {"forward_ms: 1, backward_input_ms: 1, backward_weight_ms: -1", "key 'costs.backward_weight_ms'"},
      {"forward_ms: 1, backward_ms: 1, optimizer_ms: 1e6", "key 'costs.optimizer_ms'"},
  };
  for (const auto& c : cases) {
    const std::string message = scenario_error(c.costs);
    EXPECT_NE(message.find(c.key + ": expected a time in ms from 0 to 100000"), std::string::npos) << message;
  }
  // Bytes: the error blames the key that is out of range, not another one compared with it.
  for (const char* key :
       {"activation_bytes", "parameter_bytes", "transfer_bytes", "weight_grad_activation_bytes"}) {
    const std::string message = scenario_error(fmt::format("forward_ms: 1, backward_ms: 1, {}: 1e300", key));
    EXPECT_NE(message.find(fmt::format("key 'costs.{}': expected a byte count from 0 to 1099511627776", key)),
              std::string::npos)
        << message;
  }
  const std::string latency = input_error_of([] {
    test::scenario_from_yaml(
        "pipeline: {stages: 2, microbatches: 2}\ncosts: {forward_ms: 1, backward_ms: 1}\n"
        "comm: {model: link, bandwidth_gb_per_s: 1, latency_ms: 1e300}\n");
  });
  EXPECT_NE(latency.find("test.yaml:3: key 'comm.latency_ms'"), std::string::npos) << latency;
}

// Exactly the one batch asked for (no run-length extension), so the makespan is that batch's.
SimulationResult one_batch_run(const std::string& yaml, const std::string& schedule) {
  return test::run_schedule(test::scenario_from_yaml(yaml), schedule, {}, test::fixed_batches());
}

TEST(ValueRanges, ExtremeButAcceptedValuesRunWithoutOverflow) {
  // The largest time on every op, and the largest bytes: the run ends at an exact, hand-computed time.
  // 1F1B-flush, N = 2, m = 2, F = B = 100 s, one batch: F0 F0' ... the makespan is (m + N - 1) (F + B) = 600
  // s.
  const SimulationResult r = one_batch_run(
      "pipeline: {stages: 2, microbatches: 2, batches: 1}\n"
      "costs: {forward_ms: 1e5, backward_ms: 1e5, activation_bytes: 1099511627776, parameter_bytes: "
      "1099511627776}\n",
      "1f1b-flush");
  EXPECT_EQ(r.trace.makespan_ns, 600 * TimeNs{1'000'000'000});
  // Device 0 holds both microbatches' activations at its peak: 2 x 2^40 bytes.
  EXPECT_EQ(r.trace.peak_activation_bytes[0], Bytes{2} << 40);
}

TEST(ValueRanges, TransformerTimesDerivedBeyondTheBoundAreAnError) {
  // hidden 2^22 on one stage: F FLOPs s*b*h*(24h + 4s) per layer are ~1e21, far beyond 1e5 s on a CPU.
  const Scenario s =
      load_scenario(std::string(PIPESIM_SOURCE_DIR) + "/share/scenarios/transformer/tiny-gpt-cpu.yaml",
                    {"model.hidden=4194304", "model.heads=8"});
  const std::string message = input_error_of([&] { test::run_schedule(s, "gpipe"); });
  EXPECT_NE(message.find("model: stage 1's forward time is"), std::string::npos) << message;
  EXPECT_NE(message.find("expected at most 100000 s (27.8 h"), std::string::npos) << message;
}

// Issue 47: a computed time (here a transfer's wire time, bytes over bandwidth) was held to the 100 s of a
// typed one, which refused a legitimate communication-bound run; it may reach 1e5 s.
TEST(ValueRanges, ComputedTimesMayExceedTheBoundOfTypedOnes) {
  // F0, the activation's 500 s on the link, F1 B1, the gradient's 500 s back, B0: 1000.004 s.
  EXPECT_EQ(one_batch_run("pipeline: {stages: 2, microbatches: 1, batches: 1}\n"
                          "costs: {forward_ms: 1, backward_ms: 1, transfer_bytes: 5e11}\n"
                          "comm: {model: link, bandwidth_gb_per_s: 1}\n",
                          "gpipe")
                .trace.makespan_ns,
            1000 * TimeNs{1'000'000'000} + 4'000'000);
  EXPECT_GT(static_cast<double>(kMaxComputedTimeNs), 1e3 * static_cast<double>(kMaxTimeNs) - 1);
  EXPECT_TRUE(computed_time_in_range(1e14));
  EXPECT_FALSE(computed_time_in_range(1.0000001e14));
  EXPECT_FALSE(computed_time_in_range(std::nan("")));
}

TEST(ValueRanges, LinkTransferLongerThanOneTimeValueIsAnError) {
  const Scenario s = test::scenario_from_yaml(
      "pipeline: {stages: 2, microbatches: 1, batches: 1}\n"
      "costs: {forward_ms: 1, backward_ms: 1, transfer_bytes: 1e12}\n"
      "comm: {model: link, bandwidth_gb_per_s: 1e-9}\n");
  const std::string message = input_error_of([&] { test::run_schedule(s, "gpipe"); });
  EXPECT_NE(message.find("a transfer of 1000000000000 bytes at 1e-09 GB/s"), std::string::npos) << message;
}

TEST(ValueRanges, ScheduleParameterMustBeFinite) {
  const Scenario s = test::scenario_from_yaml(
      "pipeline: {stages: 2, microbatches: 4}\n"
      "costs: {forward_ms: 1, backward_input_ms: 1, backward_weight_ms: 1, weight_grad_activation_bytes: "
      "0}\n");
  const std::string message = input_error_of([&] {
    test::run_schedule(s, "zb-1p", {{"memory_limit", "inf"}});
  });
  EXPECT_NE(message.find("parameter 'memory_limit': expected a finite number >= 0, got 'inf'"),
            std::string::npos)
      << message;
  // A limit far above any memory is no limit: the same ops as a limit just large enough for every microbatch
  // (m = 4 microbatches of 1 MB on N = 2 stages: 4 / 2 = 2 units of N * M_B).
  const SimulationResult huge = test::run_schedule(s, "zb-1p", {{"memory_limit", "1e300"}});
  const SimulationResult ample = test::run_schedule(s, "zb-1p", {{"memory_limit", "2"}});
  EXPECT_EQ(huge.trace.makespan_ns, ample.trace.makespan_ns);
}

TEST(ValueRanges, CommandLineTimesRejectNanAndInfinity) {
  test::TempDir dir;
  for (const char* args : {"show gpipe --comm nan", "show gpipe --comm inf", "show gpipe --costs 1,1e300",
                           "export gpipe --costs nan,1", "show gpipe --comm -1"}) {
    const test::CommandResult r = test::run_pipesim(args, dir);
    EXPECT_EQ(r.exit_code, 1) << args;
    EXPECT_NE(r.err.find("is not a time in ms from 0 to 100000"), std::string::npos) << args << "\n" << r.err;
  }
}

TEST(ResourceEstimate, CountsMatchAHandCount) {
  // N = 2 devices, 2 stages, m = 4, 1 batch: 3 x 2 x 4 ops + 2 U = 26; 2 x 1 x 4 transfers = 8; edges
  // 3 x 26 + 8 + 2 x 2 x 1 barrier = 90.
  const ResourceEstimate e = estimate_resources({2, 2, 4, 1, true, false});
  EXPECT_EQ(e.ops, 26);
  EXPECT_EQ(e.transfers, 8);
  EXPECT_EQ(e.graph_edges, 90);
  // Barrier edges grow as stages x devices: gpipe N = 10000, m = 1, 4 batches holds 4e8 of them.
  const ResourceEstimate wide = estimate_resources({10000, 10000, 1, 4, true, false});
  EXPECT_GE(wide.graph_edges, 4e8);
  EXPECT_GT(wide.bytes, 4e8 * 8);
  EXPECT_LT(estimate_resources({10000, 10000, 1, 4, false, false}).bytes, 1e9);
  // No overflow at the extremes of int: 2^31 stages x 2^31 microbatches x 2^31 batches stays finite and huge.
  const int big = std::numeric_limits<int>::max();
  const double extreme = estimate_resources({big, big, big, big, true, true}).bytes;
  EXPECT_TRUE(std::isfinite(extreme));
  EXPECT_GT(extreme, 1e28);
}

TEST(ResourceEstimate, OversizedRunsAreRefusedBeforeAllocating) {
  // The task graph's barrier edges of gpipe with N = 10000 (15.7 GB measured before this check).
  SimulationOptions with_graph;
  with_graph.analyze_graph = true;
  const std::string wide = input_error_of(
      [&] { test::run_schedule(test::uniform_scenario(10000, 1, 1, 1), "gpipe", {}, with_graph); });
  EXPECT_NE(wide.find("above the 4 GB ceiling; lower N, m or the batches, or raise the ceiling with "
                      "--max-memory-gb"),
            std::string::npos)
      << wide;
  // An entry's own pipeline: is the run that counts.
  const std::string entry = input_error_of([] {
    const Scenario s = test::scenario_from_yaml(
        "pipeline: {stages: 2, microbatches: 2}\ncosts: {forward_ms: 1, backward_ms: 1}\n"
        "schedules: [{name: gpipe, pipeline: {microbatches: 100000000}}]\n");
    simulate_schedule(s, s.schedules.at(0));
  });
  EXPECT_NE(entry.find("m = 100000000"), std::string::npos) << entry;
  EXPECT_NE(entry.find("raise the ceiling with --max-ops"), std::string::npos) << entry;
}

TEST(ResourceEstimate, TheSteadyStateSearchsLengthCountsAndLongRunsAreRefused) {
  // PACI's window is a microbatches: a = 10^6 at N = 4 simulated 24 M ops and held 4.2 GB in `pipesim check`.
  const Scenario s = test::uniform_scenario(4, 8, 1, 2);
  const std::string paci = input_error_of([&] {
    test::run_schedule(s, "paci", {{"accumulation", "1000000"}});
  });
  EXPECT_NE(paci.find("3.75e+07 ops"), std::string::npos) << paci;  // 4 stages x 3 x (2 windows of a + more)
  EXPECT_NE(paci.find("--max-memory-gb"), std::string::npos) << paci;  // the trace would hold them all
  // pipesim check reports it instead of skipping the grid point as one the schedule does not allow.
  test::TempDir dir;
  const test::CommandResult check =
      test::run_pipesim("check --schedules paci -N 4 -m 8 --accumulation 1000000 --seeds 1", dir);
  EXPECT_EQ(check.exit_code, 1) << check.out;
  EXPECT_NE(check.err.find("raise the ceiling with --max-memory-gb"), std::string::npos) << check.err;
  // PipeDream at N = 4096 warms up over 2N microbatches on every stage: ~10^8 ops a window, minutes of work.
  const std::string deep =
      input_error_of([] { test::run_schedule(test::uniform_scenario(4096, 8, 1, 2), "pipedream"); });
  EXPECT_NE(deep.find("raise the ceiling with --max-ops"), std::string::npos) << deep;
  // Streamed, the same run is bounded by its work only, and the flag raises that bound.
  EXPECT_EQ(input_error_of([] {
              ResolveOptions options;
              options.records = false;
              options.task_graph = false;
              options.limits.ops = 1e12;
              resolve(test::uniform_scenario(4096, 8, 1, 2), {"pipedream", ScheduleParams("test")}, options);
            }),
            "no error");
}

// Two callers in one process, each under its own ceilings: a run refused under one Limits value is taken
// under the other, and the first refusal leaves nothing behind (no process-wide setting).
TEST(ResourceEstimate, CeilingsBelongToTheCallerNotTheProcess) {
  const Scenario deep = test::uniform_scenario(4096, 8, 1, 2);
  const ScheduleRequest pipedream{"pipedream", ScheduleParams("test")};
  ResolveOptions tight;
  tight.records = false;
  tight.task_graph = false;
  tight.limits.ops = 1e3;
  ResolveOptions loose = tight;
  loose.limits.ops = 1e12;
  EXPECT_THROW(resolve(deep, pipedream, tight), ResourceLimitError);
  EXPECT_NO_THROW(resolve(deep, pipedream, loose));
  EXPECT_THROW(resolve(deep, pipedream, tight), ResourceLimitError);
  ResolveOptions small_memory = loose;
  small_memory.records = true;
  small_memory.limits.memory_bytes = 1e3;
  EXPECT_THROW(resolve(deep, pipedream, small_memory), ResourceLimitError);
}

TEST(ResourceEstimate, EveryCommandChecksAndTheFlagRaisesTheCeiling) {
  test::TempDir dir;
  // Chunks count: 4096 devices x 1024 chunks.
  for (const char* args : {"show interleaved-1f1b -N 4096 -m 4096 --chunks 1024",
                           "export gpipe -N 4096 -m 1048576", "show gpipe -N 64 -m 256 --max-memory-gb 0.001",
                           "--max-memory-gb 0.001 export gpipe -N 64 -m 4096"}) {
    const test::CommandResult r = test::run_pipesim(args, dir);
    EXPECT_EQ(r.exit_code, 1) << args;
    EXPECT_NE(r.err.find("raise the ceiling with --max-"), std::string::npos) << args << "\n" << r.err;
  }
  EXPECT_EQ(test::run_pipesim("show gpipe -N 64 -m 256", dir).exit_code, 0);
}

TEST(ResourceEstimate, SweepsBoundTheirRunsAndThreads) {
  test::TempDir dir;
  const std::string yaml = dir.write("s.yaml",
                                     "pipeline: {stages: 2, microbatches: 2}\n"
                                     "costs: {forward_ms: 1, backward_ms: 1}\nschedules: [gpipe]\n");
  const test::CommandResult grid =
      test::run_pipesim(fmt::format("sweep '{}' -N 1:100000:+1 -m 1:100000:+1 --out -", yaml), dir);
  EXPECT_EQ(grid.exit_code, 1);
  EXPECT_NE(
      grid.err.find("100000 values of N x 100000 of m x 1 parameter combinations x 1 schedules = 1e+10 runs, "
                    "more than 100000"),
      std::string::npos)
      << grid.err;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const test::CommandResult many = test::run_pipesim(fmt::format("sweep '{}' -j 4096 --out -", yaml), dir);
  EXPECT_EQ(many.exit_code, 0) << many.err;
  EXPECT_NE(many.err.find(fmt::format("--jobs 4096 cut to {}", 4 * cores)), std::string::npos) << many.err;
  EXPECT_EQ(worker_count(0, 1000, "-j"), cores);
  EXPECT_EQ(worker_count(100000, 3, "-j"), 3u);
  EXPECT_EQ(worker_count(100000, 100000, "-j"), 4 * cores);
}

TEST(ResourceEstimate, ACommandsWholeWorkIsEstimatedBeforeItStarts) {
  test::TempDir dir;
  // check --seeds 10^8 (about 10^15 ops, years of work) is refused before a single job is allocated.
  const test::CommandResult check = test::run_pipesim("check --seeds 100000000", dir);
  EXPECT_EQ(check.exit_code, 1) << check.out;
  EXPECT_NE(check.err.find("check: 177100000000 runs would simulate about"), std::string::npos) << check.err;
  EXPECT_NE(check.err.find("above the ceiling of 1e+10 ops; lower --seeds"), std::string::npos) << check.err;
  // The estimate is each run's own (the same ResourceEstimate the run checks): one gpipe run at N = 2, m = 4,
  // 3 batches is 2 stages x (3 ops x 12 microbatches + 3 U) = 78 ops, 4 seeds 312; a ceiling of 311 refuses
  // it.
  const test::CommandResult tight =
      test::run_pipesim("--max-total-ops 311 check --schedules gpipe -N 2 -m 4 --seeds 4", dir);
  EXPECT_EQ(tight.exit_code, 1) << tight.out;
  EXPECT_NE(tight.err.find("4 runs would simulate about 312 ops in all"), std::string::npos) << tight.err;
  EXPECT_EQ(
      test::run_pipesim("--max-total-ops 312 check --schedules gpipe -N 2 -m 4 --seeds 4", dir).exit_code, 0);
  // A sweep too: every run of its shard.
  const std::string yaml = dir.write("s.yaml",
                                     "pipeline: {stages: 2, microbatches: 2}\n"
                                     "costs: {forward_ms: 1, backward_ms: 1}\nschedules: [gpipe]\n");
  const test::CommandResult sweep =
      test::run_pipesim(fmt::format("--max-total-ops 10 sweep '{}' -N 2,4 --out -", yaml), dir);
  EXPECT_EQ(sweep.exit_code, 1) << sweep.err;
  EXPECT_NE(sweep.err.find("sweep: 2 runs would simulate about"), std::string::npos) << sweep.err;
  EXPECT_NE(sweep.err.find("--shard i/n, or raise the ceiling with --max-total-ops"), std::string::npos)
      << sweep.err;
  // Issue 47: `run` bounded each schedule but not the command, whose schedules each under the run's ceiling
  // could take minutes together: their estimates are summed before the first run too.
  const std::string run = fmt::format("run '{}' --schedules gpipe,gpipe,gpipe", yaml);
  const test::CommandResult tight_run = test::run_pipesim("--max-total-ops 10 " + run, dir);
  EXPECT_EQ(tight_run.exit_code, 1) << tight_run.err;
  EXPECT_EQ(tight_run.out, "");  // refused before the first run
  EXPECT_NE(tight_run.err.find("run: 3 runs would simulate about"), std::string::npos) << tight_run.err;
  EXPECT_NE(tight_run.err.find("run fewer schedules (--schedules, --entry) or lower N or m, or raise the "
                               "ceiling with --max-total-ops"),
            std::string::npos)
      << tight_run.err;
  EXPECT_EQ(test::run_pipesim("--max-total-ops 1000 " + run, dir).exit_code, 0);
}

TEST(TextInput, Utf8IsValidatedByItsEncodingRules) {
  EXPECT_TRUE(is_valid_utf8("plain"));
  EXPECT_TRUE(is_valid_utf8("caf\xC3\xA9"));       // U+00E9
  EXPECT_TRUE(is_valid_utf8("\xF0\x9F\x98\x80"));  // U+1F600, four bytes
  EXPECT_TRUE(is_valid_utf8("\xF4\x8F\xBF\xBF"));  // U+10FFFF, the last code point
  EXPECT_FALSE(
      is_valid_utf8("a\xFF\xFE"
                    "b"));                          // bytes that never occur
  EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));      // a UTF-16 surrogate
  EXPECT_FALSE(is_valid_utf8("\xE2\x82"));          // truncated
  EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(is_valid_utf8("\x80"));              // a lone continuation byte
}

TEST(TextInput, NameThatIsNotUtf8IsALocatedErrorNotAJsonLibraryMessage) {
  const std::string message = input_error_of([] {
    test::scenario_from_yaml(
        "name: \"a\xFF\xFE"
        "b\"\npipeline: {stages: 2, microbatches: 2}\n"
        "costs: {forward_ms: 1, backward_ms: 1}\n");
  });
  EXPECT_NE(message.find("test.yaml:1: key 'name': expected a string of valid UTF-8 text"), std::string::npos)
      << message;
}

}  // namespace
}  // namespace pipesim
