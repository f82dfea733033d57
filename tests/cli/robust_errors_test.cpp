// Every error is located and bounded, and degenerate input is an error rather than a nonsense figure:
// zero-length ops, engine errors translated to the 0-based numbering of a CSV, third-party exceptions
// wrapped.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <new>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "api/engine_error_location.h"
#include "base/error_message.h"
#include "base/errors.h"
#include "cost_models/noisy_costs.h"
#include "pipesim_source_dir.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

using ::testing::HasSubstr;

std::string scenario_text(const std::string& costs, const std::string& schedule = "1f1b-flush") {
  return "pipeline: {stages: 2, microbatches: 4}\ncosts: " + costs + "\nschedules: [" + schedule + "]\n";
}

std::string run_error(const std::string& yaml) {
  try {
    const Scenario scenario = test::scenario_from_yaml(yaml);
    for (const ScheduleRequest& request : requested_schedules(scenario)) simulate_schedule(scenario, request);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError for:\n" << yaml;
  return "";
}

TEST(ZeroLengthOps, CostsThatAreAllZeroAreALocatedError) {
  // Before: throughput 0 and "peak memory 0 B" with exit 0.
  for (const std::string costs :
       {"{forward_ms: 0, backward_ms: 0}", "{forward_ms: [0, 0], backward_ms: [0, 0]}",
        "{forward_ms: 0, backward_input_ms: 0, backward_weight_ms: 0, comm_ms: 5}"}) {
    const std::string message = run_error(scenario_text(costs));
    EXPECT_THAT(message, HasSubstr(":2: key 'costs': expected a positive forward_ms or backward time"))
        << costs;
  }
}

TEST(ZeroLengthOps, OneStageOfZeroLengthRunsWithTheOtherStagesTimes) {
  // Stage 1 takes no time, stage 2 F = 1 ms and B = 2 ms: a 1F1B-flush batch is stage 2's 4 x 3 ms in a row
  // (stage 1's ops fit in zero time around them), and stage 1 still holds N = 2 microbatches' activations
  // (1 MB each by default) between its F and its B.
  const Scenario scenario =
      test::scenario_from_yaml(scenario_text("{forward_ms: [0, 1], backward_ms: [0, 2]}"));
  const SimulationResult r = simulate_schedule(scenario, scenario.schedules.at(0));
  EXPECT_EQ(r.metrics.period_ns, 12'000'000);
  EXPECT_EQ(r.metrics.devices.at(0).peak_activation_bytes, 2'000'000);
  EXPECT_GT(r.memory.peak_bytes(), 0);
}

TEST(ZeroLengthOps, TimesThatRoundToZeroOverChunksStopTheRun) {
  // 1 ns per device split over 2 chunks is 0 ns per op: no input value is 0, yet the run would take no time.
  const std::string message = run_error(
      scenario_text("{forward_ms: 0.000001, backward_ms: 0.000001}", "{name: interleaved-1f1b, chunks: 2}"));
  EXPECT_THAT(message, HasSubstr("every op of this run lasts 0 ns"));
}

TEST(ZeroLengthOps, CommandLineCostsOfZeroAreAnError) {
  const test::TempDir dir;
  const test::CommandResult r = test::run_pipesim("show gpipe -N 2 -m 2 --costs 0,0", dir);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--costs '0,0': every op would take 0 ms"));
}

TEST(EngineErrors, NameTheRequestAndTranslateToZeroBasedNumbering) {
  const std::string where = "s.yaml:4: key 'schedules[0]'";
  try {
    with_engine_errors_located(where, "csv:my.csv", 4, []() -> int {
      throw DeadlockError("deadlock at 3.000000 ms; device 1 waits to run B(stage 2, mb 5)");
    });
    FAIL();
  } catch (const DeadlockError& e) {
    EXPECT_EQ(
        std::string(e.what()),
        "s.yaml:4: key 'schedules[0]': csv:my.csv: deadlock at 3.000000 ms; device 1 waits to run "
        "B(stage 2, mb 5) (the engine counts stages from 1 and microbatches across batches: its stage s, "
        "mb k is 0-based stage s-1, microbatch k mod 4 of batch k / 4)");
  }
  try {
    with_engine_errors_located(where, "csv:my.csv", 4, []() -> int { throw ScheduleError("op twice"); });
    FAIL();
  } catch (const ScheduleError& e) {
    EXPECT_THAT(e.what(), HasSubstr("s.yaml:4: key 'schedules[0]': csv:my.csv: op twice"));
  }
  // Input errors are already located: they pass untouched, and a result passes through.
  EXPECT_THROW(with_engine_errors_located(where, "x", 4, []() -> int { throw InputError("x"); }), InputError);
  EXPECT_EQ(with_engine_errors_located(where, "x", 4, [] { return 7; }), 7);
}

TEST(ErrorMessages, ASweepNamesItsFirstFailedOrSkippedRun) {
  const test::TempDir dir;
  const std::string scenario = dir.write("s.yaml", scenario_text("{forward_ms: 1, backward_ms: 2}"));
  const std::string out = dir.file("sweep.csv");
  // Row 2 of the CSV is N=2 (m = 14 is 7 rounds of 2), row 3 is N=3, which interleaving refuses (14 is not
  // 4 equal rounds): skipped, as `run` skips a schedule that cannot run, and the sweep succeeds.
  test::CommandResult r = test::run_pipesim(
      fmt::format("sweep '{}' -N 2,3 -m 14 --schedules interleaved-1f1b:chunks=2 -o '{}'", scenario, out),
      dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("2 runs written to " + out + "; 1 skipped")) << r.err;
  // Only refused points: nothing ran (exit 3), and the first is named.
  r = test::run_pipesim(
      fmt::format("sweep '{}' -N 3 -m 14 --schedules interleaved-1f1b:chunks=2 -o '{}'", scenario, out), dir);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("sweep: none of the 1 runs could run; the first is row 2 of " + out +
                               " (interleaved-1f1b N=3 m=14): --schedules interleaved-1f1b:chunks=2: "))
      << r.err;
  EXPECT_THAT(r.err, HasSubstr("microbatches (14) must be divisible by m div N = 4")) << r.err;
  // A run refused by a resource ceiling failed (exit 1): the user can raise the ceiling.
  r = test::run_pipesim(
      fmt::format("--max-ops 100 sweep '{}' -N 2,3 -m 14 --schedules gpipe -o '{}'", scenario, out), dir);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err,
              HasSubstr("sweep: 2 of 2 runs failed; the first is row 2 of " + out + " (gpipe N=2 m=14)"))
      << r.err;
}

TEST(ErrorMessages, FilesystemErrorsNameTheirPathAndWhy) {
  const std::filesystem::filesystem_error e("create_directories", "/proc/nope",
                                            std::make_error_code(std::errc::no_such_file_or_directory));
  EXPECT_EQ(error_message(e), "/proc/nope: No such file or directory");
}

TEST(ErrorMessages, ThirdPartyExceptionsAreWrappedNeverPassedOnBare) {
  const std::string yaml = error_message(YAML::ParserException(YAML::Mark::null_mark(), "bad thing"));
  EXPECT_THAT(yaml,
              HasSubstr("internal error: an unexpected exception (YAML::ParserException) reached the top"));
  EXPECT_THAT(yaml, HasSubstr("this is a pipesim bug"));
  try {
    const nlohmann::json parsed = nlohmann::json::parse("{");
    FAIL() << parsed.dump();
  } catch (const nlohmann::json::exception& e) {
    EXPECT_THAT(error_message(e), HasSubstr("(nlohmann::"));
    EXPECT_THAT(error_message(e), HasSubstr("this is a pipesim bug"));
  }
  EXPECT_THAT(error_message(std::bad_alloc()), HasSubstr("out of memory"));
  // pipesim's own errors are already located: shown as they are.
  EXPECT_EQ(error_message(InputError("f.yaml:3: key 'x': expected y")), "f.yaml:3: key 'x': expected y");
}

TEST(ErrorMessages, LongMessagesAreCutToABoundedPrefix) {
  const std::string message = error_message(InputError(std::string(1'000'000, 'x')));
  EXPECT_LE(message.size(), kMaxErrorChars + 40);
  EXPECT_THAT(message, HasSubstr("... (1000000 characters)"));
}

TEST(RobustErrors, DocumentsThatAreNotMapsAndDuplicateScheduleParametersAreLocated) {
  // A scalar or a list given --set was an internal error (yaml-cpp's BadSubscript).
  for (const char* text : {"5\n", "- a\n- b\n"}) {
    const std::string error =
        test::input_error_of([&] { test::scenario_from_yaml(text, {"pipeline.stages=2"}); });
    EXPECT_NE(error.find("test.yaml:1: expected a map of keys"), std::string::npos) << error;
  }
  // yaml-cpp keeps the first of two equal keys: {accumulation: 2, accumulation: 3} ran with a = 2.
  const std::string duplicate = test::input_error_of([] {
    test::scenario_from_yaml(
        "pipeline: {stages: 2, microbatches: 4}\ncosts: {forward_ms: 1, backward_ms: 1}\n"
        "schedules:\n  - {name: paci, accumulation: 2, accumulation: 3}\n");
  });
  EXPECT_NE(duplicate.find("key 'schedules[0].accumulation': duplicate key"), std::string::npos) << duplicate;
}

TEST(RobustErrors, NoiseOutsideItsRangeIsAnInputErrorNotACounterexample) {
  for (const NoiseSpec& noise : {NoiseSpec{0, std::nan(""), 0, 0, 1}, NoiseSpec{0, 20, 0, 0, 1},
                                 NoiseSpec{0, 0, 0, 0.5, 1e308}, NoiseSpec{0, 0, 0, std::nan(""), 2}}) {
    EXPECT_THROW(NoisyCosts(nullptr, noise), InputError);
  }
  EXPECT_NO_THROW(NoisyCosts(nullptr, NoiseSpec{0, 3, 3, 1, 1000}));
  // The command line refuses them before any run, with exit 1... or 2 for CLI11's own parse: NaN included.
  for (const char* option : {"--jitter nan", "--jitter 20", "--stage-speeds inf", "--straggler-factor 1e308",
                             "--stragglers nan"}) {
    const int status = std::system(
        fmt::format("{} check {} -N 2 -m 2 --schedules 1f1b-flush > /dev/null 2>&1", PIPESIM_BINARY, option)
            .c_str());
    EXPECT_EQ(WEXITSTATUS(status), 2) << option;
  }
}

// The README's exit-code table lists every code cli/exit_codes.h defines (5 was missing).
TEST(ErrorMessages, TheReadmeListsEveryExitCode) {
  const std::string codes = test::read_file(std::string(PIPESIM_SOURCE_DIR) + "/cli/exit_codes.h");
  const std::string readme = test::read_file(std::string(PIPESIM_SOURCE_DIR) + "/README.md");
  const size_t table = readme.find("### Exit codes");
  ASSERT_NE(table, std::string::npos);
  const std::string section = readme.substr(table, readme.find("\n## ", table) - table);
  const std::regex defined("kExit[A-Za-z]+ = ([0-9]+);");
  int count = 0;
  for (std::sregex_iterator it(codes.begin(), codes.end(), defined), end; it != end; ++it, ++count) {
    EXPECT_THAT(section, HasSubstr("\n| " + (*it)[1].str() + " | ")) << (*it)[0].str();
  }
  EXPECT_GE(count, 6);
}

// A mistyped option or subcommand gets a did-you-mean from the options of the commands given (an outer
// command's options count: they may follow the subcommand), exit 2.
TEST(ErrorMessages, MistypedOptionsAndCommandsSuggestTheClosestName) {
  const test::TempDir dir;
  const std::string scenario = dir.write("s.yaml", scenario_text("{forward_ms: 1, backward_ms: 2}"));
  for (const auto& [args, expected] : std::vector<std::pair<std::string, std::string>>{
           {"run '" + scenario + "' --schedule gpipe",
            "unknown option '--schedule'; did you mean '--schedules'?"},
           {"run '" + scenario + "' --jsno out.json", "unknown option '--jsno'; did you mean '--json'?"},
           {"run '" + scenario + "' --max-memroy-gb 2",
            "unknown option '--max-memroy-gb'; did you mean "
            "'--max-memory-gb'?"},
           {"import hff config.json", "unknown command 'hff'; did you mean 'hf'?"},
           {"swep", "unknown command 'swep'; did you mean 'sweep'?"}}) {
    const test::CommandResult r = test::run_pipesim(args, dir);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.err, "pipesim: error: " + expected + " (see --help)\n") << args;
  }
}

}  // namespace
}  // namespace pipesim
