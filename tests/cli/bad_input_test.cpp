// Bad input: every class of mistake is an InputError that names the file, the line and the key (or the
// --set option), and the CLI turns it into one line on stderr and a non-zero exit.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "base/errors.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

// A valid scenario, one key per line so every error has its own line number.
const std::vector<std::string> kValid = {
    "name: bad-input",          // 1
    "pipeline:",                // 2
    "  stages: 4",              // 3
    "  microbatches: 8",        // 4
    "costs:",                   // 5
    "  forward_ms: 1",          // 6
    "  backward_ms: 2",         // 7
    "schedules: [1f1b-flush]",  // 8
};

std::string join(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

// The valid scenario with line `line` (1-based) replaced.
std::string with_line(int line, const std::string& text) {
  std::vector<std::string> lines = kValid;
  lines.at(line - 1) = text;
  return join(lines);
}

std::string with_extra_line(const std::string& text) {
  std::vector<std::string> lines = kValid;
  lines.push_back(text);
  return join(lines);
}

// Parses the scenario and simulates every schedule it lists; returns the InputError's message.
std::string input_error(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  try {
    const Scenario scenario = test::scenario_from_yaml(yaml, overrides);
    for (const ScheduleRequest& request : requested_schedules(scenario)) simulate_schedule(scenario, request);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError for:\n" << yaml;
  return "";
}

struct Case {
  const char* what;
  std::string yaml;
  std::vector<std::string> fragments;  // all must appear in the message
  std::vector<std::string> overrides = {};
};

void expect_all(const Case& c) {
  SCOPED_TRACE(c.what);
  const std::string message = input_error(c.yaml, c.overrides);
  for (const std::string& fragment : c.fragments) {
    EXPECT_NE(message.find(fragment), std::string::npos) << "missing '" << fragment << "' in: " << message;
  }
}

TEST(BadInput, TheValidScenarioRuns) {
  const Scenario scenario = test::scenario_from_yaml(join(kValid));
  EXPECT_EQ(simulate_schedule(scenario, requested_schedules(scenario).at(0)).metrics.simulated_ops,
            4 * (8 * 2 + 1) * 4);
}

TEST(BadInput, UnknownKeys) {
  expect_all({"top level",
              with_extra_line("colour: red"),
              {"test.yaml:9: key 'colour'", "unknown key", "pipeline"}});
  expect_all({"nested",
              with_line(4, "  microbatchez: 8"),
              {"test.yaml:4: key 'pipeline.microbatchez'", "unknown key", "microbatches"}});
  expect_all({"in costs",
              with_line(7, "  backward_mz: 2"),
              {"test.yaml:7: key 'costs.backward_mz'", "unknown key"}});
}

TEST(BadInput, WrongTypes) {
  expect_all({"int",
              with_line(3, "  stages: four"),
              {"test.yaml:3: key 'pipeline.stages'", "an integer", "'four'"}});
  expect_all({"number",
              with_line(6, "  forward_ms: fast"),
              {"test.yaml:6: key 'costs.forward_ms'", "a time in ms"}});
  expect_all({"string", with_line(1, "name: [a, b]"), {"test.yaml:1: key 'name'", "a string"}});
  expect_all({"map", with_extra_line("optimizer: fast"), {"test.yaml:9: key 'optimizer'", "a map"}});
  expect_all({"schedules", with_line(8, "schedules: gpipe"), {"test.yaml:8: key 'schedules'", "a list"}});
}

TEST(BadInput, ImpossibleValues) {
  expect_all({"N < 1", with_line(3, "  stages: 0"), {"test.yaml:3: key 'pipeline.stages'", ">= 1", "'0'"}});
  expect_all(
      {"m < 1", with_line(4, "  microbatches: -2"), {"test.yaml:4: key 'pipeline.microbatches'", ">= 1"}});
  expect_all({"negative time",
              with_line(6, "  forward_ms: -1"),
              {"test.yaml:6: key 'costs.forward_ms'", "from 0 to 100000"}});
  expect_all({"negative time in a list",
              with_line(7, "  backward_ms: [2, 2, -0.5, 2]"),
              {"test.yaml:7: key 'costs.backward_ms[2]'", "from 0 to 100000", "'-0.5'"}});
}

TEST(BadInput, WrongLengthPerStageList) {
  expect_all({"3 values for 4 stages",
              with_line(6, "  forward_ms: [1, 1, 1]"),
              {"test.yaml:6: key 'costs.forward_ms'", "a list of 4"}});
}

TEST(BadInput, UnknownSchedule) {
  expect_all({"unknown schedule",
              with_line(8, "schedules: [1f1b-flush, 1f2b]"),
              {"test.yaml:8: key 'schedules[1]'", "unknown schedule '1f2b'", "gpipe"}});
}

TEST(BadInput, UnknownScheduleParameter) {
  expect_all({"gpipe has no chunks",
              with_line(8, "schedules: [{name: gpipe, chunks: 2}]"),
              {"test.yaml:8: key 'schedules[0]'", "no parameter 'chunks'"}});
  expect_all({"chunks must be >= 1",
              with_line(8, "schedules: [{name: interleaved-1f1b, chunks: 0}]"),
              {"test.yaml:8: key 'schedules[0]'", "'chunks'", ">= 1"}});
}

// m = 9 over N = 4: two rounds (9 div 4) cannot hold 9 microbatches equally.
TEST(BadInput, InterleavedNeedsEqualRounds) {
  std::vector<std::string> lines = kValid;
  lines[3] = "  microbatches: 9";
  lines[7] = "schedules: [{name: interleaved-1f1b, chunks: 2}]";
  expect_all({"m=9, N=4",
              join(lines),
              {"test.yaml:8: key 'schedules[0]'", "microbatches (9) must be divisible by m div N = 2"}});
}

TEST(BadInput, BackwardGivenTwoWays) {
  std::vector<std::string> lines = kValid;
  lines.insert(lines.begin() + 7, "  backward_input_ms: 1");
  expect_all({"backward_ms and backward_input_ms",
              join(lines),
              {"test.yaml:7: key 'costs.backward_ms'", "not both"}});
}

TEST(BadInput, SplitScheduleWithOnlyBackwardMs) {
  expect_all({"zb-h1 needs I and W",
              with_line(8, "schedules: [zb-h1]"),
              {"test.yaml:8: key 'schedules[0]'", "backward_input_ms", "backward_weight_ms"}});
}

TEST(BadInput, BadSetOverrides) {
  const std::string valid = join(kValid);
  expect_all({"no '='", valid, {"--set 'pipeline.stages'", "key=value"}, {"pipeline.stages"}});
  expect_all({"bad value",
              valid,
              {"--set pipeline.stages: key 'pipeline.stages'", ">= 1", "'0'"},
              {"pipeline.stages=0"}});
  expect_all({"unknown key",
              valid,
              {"--set pipeline.stagez: key 'pipeline.stagez'", "unknown key"},
              {"pipeline.stagez=2"}});
  expect_all({"not YAML", valid, {"--set pipeline.stages", "not valid YAML"}, {"pipeline.stages=[4,"}});
  expect_all({"through a scalar", valid, {"--set name.first", "'name' is not a map"}, {"name.first=1"}});
}

TEST(BadInput, MissingFile) {
  try {
    load_scenario("/nonexistent-dir/missing.yaml");
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/missing.yaml: cannot open"), std::string::npos)
        << e.what();
  }
}

TEST(BadInput, ADirectoryOrAnEndlessFileIsNotAScenario) {
  const test::TempDir dir;
  try {
    load_scenario(dir.path());
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), dir.path() + ": cannot read the scenario file: it is a directory");
  }
  try {
    load_scenario("/dev/zero");  // read in blocks up to the bound, not until memory runs out
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(
        std::string(e.what()),
        "/dev/zero: the scenario file is larger than 256 MiB, the most pipesim reads from one input file");
  }
}

TEST(BadInput, ChoicesSuggestTheClosestName) {
  // A transformer scenario, one key per line: line 4 is the model's MLP, line 10 the optimizer.
  const auto transformer = [](const std::string& mlp, const std::string& optimizer) {
    return fmt::format(
        "pipeline: {{stages: 2, microbatches: 4}}\n"
        "model:\n"
        "  layers: 2\n"
        "  mlp: {}\n"
        "  hidden: 64\n"
        "  heads: 2\n"
        "  seq_len: 16\n"
        "  vocab: 100\n"
        "hardware: {{profile: h100-sxm5-80gb}}\n"
        "optimizer: {{type: {}}}\n"
        "schedules: [gpipe]\n",
        mlp, optimizer);
  };
  expect_all({"model.mlp",
              transformer("swigl", "adamw"),
              {"test.yaml:4: key 'model.mlp'", "got 'swigl'; did you mean 'swiglu'?"}});
  expect_all({"optimizer.type",
              transformer("gelu", "adamx"),
              {"test.yaml:10: key 'optimizer.type'",
               "expected adamw, sgd, nadam, muon, lion, adan or soap, got 'adamx'; did you mean 'adamw'?"}});
}

TEST(BadInput, InvalidYaml) {
  // Line 4 is indented less than the map it belongs to.
  expect_all({"bad indentation", with_line(4, " microbatches: 8"), {"test.yaml:4:", "not valid YAML"}});
  expect_all({"unclosed flow map", with_line(8, "schedules: [gpipe"), {"test.yaml:", "not valid YAML"}});
}

TEST(BadInput, MissingRequiredKeys) {
  expect_all({"no stages", with_line(3, "  microbatch_size: 1"), {"test.yaml:3: key 'pipeline.stages'"}});
  expect_all({"no forward", with_line(6, "  optimizer_ms: 0"), {"test.yaml:6: key 'costs.forward_ms'"}});
}

// The real binary: one clear line on stderr, a non-zero exit, nothing half-printed on stdout.
TEST(BadInput, BinaryPrintsOneLineAndFails) {
  const test::TempDir dir;
  const std::string path = dir.write("broken.yaml", with_line(3, "  stages: 0"));
  const test::CommandResult r = test::run_pipesim(fmt::format("run '{}'", path), dir);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(path + ":3: key 'pipeline.stages'"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(BadInput, BinaryUnknownScheduleOnTheCommandLine) {
  const test::TempDir dir;
  const std::string path = dir.write("ok.yaml", join(kValid));
  const test::CommandResult r = test::run_pipesim(fmt::format("run '{}' --schedules gpipe,nope", path), dir);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("unknown schedule 'nope'"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace pipesim
