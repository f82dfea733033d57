// Inputs saved by any editor parse alike, mistakes are never silently accepted, and outputs are never
// half-written: duplicate YAML keys, BOM and CR line ends, long echoed values, atomic files, stdout errors.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/errors.h"
#include "base/text_file.h"
#include "io/yaml_reader.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

const std::string kRobustIoScenario =
    "pipeline: {stages: 2, microbatches: 2}\n"
    "costs: {forward_ms: 1, backward_ms: 2}\n"
    "schedules: [1f1b-flush]\n";

TEST(TextInput, ByteOrderMarkAndLineEndsAreNormalised) {
  EXPECT_EQ(normalize_text("\xEF\xBB\xBF"
                           "a\r\nb\rc\n"),
            "a\nb\nc\n");
  EXPECT_EQ(normalize_text("a\r"), "a\n");
  EXPECT_EQ(normalize_text("plain\n"), "plain\n");
  test::TempDir dir;
  std::string cr_only = "\xEF\xBB\xBF" + kRobustIoScenario;
  for (char& c : cr_only) c = c == '\n' ? '\r' : c;
  const Scenario scenario = load_scenario(dir.write("cr.yaml", cr_only));
  EXPECT_EQ(scenario.stages, 2);
  EXPECT_EQ(scenario.microbatches, 2);
}

TEST(TextInput, MissingFileNamesItAndTheReason) {
  try {
    read_text_file("/nonexistent/x.yaml", "scenario file");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "/nonexistent/x.yaml: cannot open the scenario file: No such file or directory");
  }
}

TEST(YamlInput, DuplicateKeyIsAnErrorWithItsLine) {
  const std::string yaml =
      "pipeline:\n"
      "  stages: 2\n"
      "  microbatches: 2\n"
      "  stages: 4\n"
      "costs: {forward_ms: 1, backward_ms: 2}\n";
  try {
    test::scenario_from_yaml(yaml);
    FAIL() << "a duplicate key was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(":4: key 'pipeline.stages': duplicate key"), std::string::npos)
        << e.what();
  }
}

// A key missing from a map read through a const node is yaml-cpp's "zombie" node, whose type throws
// InvalidNode: the reader says "expected ..., got nothing" instead.
TEST(YamlInput, AMissingKeyReadThroughAConstNodeIsAnInputError) {
  const YAML::Node map = YAML::Load("{a: 1}");
  const YamlReader reader("m.yaml");
  EXPECT_THROW(reader.get_string(map["b"], "b"), InputError);
  EXPECT_THROW(reader.get_int(map["b"], "b", 0), InputError);
  EXPECT_THROW(reader.get_double_list(map["b"], "b", 2, 0), InputError);
  EXPECT_THROW(reader.expect_map(map["b"], "b", {}), InputError);
}

TEST(YamlInput, LongValuesAreEchoedAsAShortPrefix) {
  std::string list = "[";
  for (int i = 0; i < 100000; ++i) list += (i ? ", " : "") + std::to_string(i);
  list += "]";
  try {
    test::scenario_from_yaml("pipeline: {stages: 2, microbatches: 2}\ncosts: {forward_ms: " + list +
                             ", backward_ms: 2}\n");
    FAIL();
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_LT(message.size(), 400u) << message;
    EXPECT_NE(message.find("characters)"), std::string::npos) << message;
  }
}

TEST(Outputs, AFailedRunLeavesExistingFilesUntouched) {
  test::TempDir dir;
  const std::string scenario = dir.write("s.yaml", kRobustIoScenario);
  const std::string json = dir.write("out.json", "previous contents");
  // The trace path is a directory: the run must fail before writing anything.
  const test::CommandResult r =
      test::run_pipesim(fmt::format("run '{}' --json '{}' --trace '{}'", scenario, json, dir.file("")), dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is a directory"), std::string::npos) << r.err;
  EXPECT_EQ(test::read_file(json), "previous contents");
}

TEST(Outputs, MissingDirectoryFailsBeforeTheWork) {
  test::TempDir dir;
  const std::string scenario = dir.write("s.yaml", kRobustIoScenario);
  const test::CommandResult r =
      test::run_pipesim(fmt::format("run '{}' --csv '{}'", scenario, dir.file("no/such/dir/x.csv")), dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "") << "the table was printed although the output could not be written";
}

TEST(Outputs, WritesReplaceTheFileWhole) {
  test::TempDir dir;
  const std::string scenario = dir.write("s.yaml", kRobustIoScenario);
  const std::string csv = dir.write("out.csv", std::string(100000, 'x'));
  const test::CommandResult r = test::run_pipesim(fmt::format("run '{}' --csv '{}'", scenario, csv), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = test::read_file(csv);
  EXPECT_EQ(text.find("xxxx"), std::string::npos) << "old contents survived";
  EXPECT_EQ(text.rfind("schedule", 0), 0u);
  EXPECT_FALSE(std::filesystem::exists(csv + ".tmp." + std::to_string(::getpid())));
}

TEST(Outputs, StdoutWriteErrorIsAFailure) {
  test::TempDir dir;
  const std::string scenario = dir.write("s.yaml", kRobustIoScenario);
  const int status =
      std::system(fmt::format("'{}' run '{}' >/dev/full 2>/dev/null", PIPESIM_BINARY, scenario).c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
}

// --version and --help print to standard output like any command: a write error there is exit 1 too.
TEST(Outputs, VersionAndHelpOnAFullDiskFail) {
  for (const char* args : {"--version", "--help", "run --help"}) {
    const int status =
        std::system(fmt::format("'{}' {} >/dev/full 2>/dev/null", PIPESIM_BINARY, args).c_str());
    ASSERT_TRUE(WIFEXITED(status)) << args;
    EXPECT_EQ(WEXITSTATUS(status), 1) << args;
  }
}

// An output option's value that is empty or reads as an option is refused, naming the option: never a file
// named "--" or an empty path.
TEST(Outputs, EmptyAndOptionLikeOutputPathsAreRefused) {
  test::TempDir dir;
  const std::string scenario = dir.write("s.yaml", kRobustIoScenario);
  for (const std::string& output :
       std::vector<std::string>{"--json --", "--json ''", "--csv ''", "-o ''", "--csv -x", "--trace --"}) {
    const std::string command = output.rfind("-o", 0) == 0
                                    ? fmt::format("import hf '{}' {}", scenario, output)
                                    : fmt::format("run '{}' {}", scenario, output);
    const test::CommandResult r = test::run_pipesim(command, dir);
    EXPECT_NE(r.exit_code, 0) << command;
    const std::string option = output.substr(0, output.find(' '));
    EXPECT_NE(r.err.find(option), std::string::npos) << command << ": " << r.err;
    EXPECT_NE(r.err.find("expected a file path or - (standard output)"), std::string::npos)
        << command << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  // The commands ran in this process's directory: no file named "--" there.
  EXPECT_FALSE(std::filesystem::exists("--"));
  std::filesystem::remove("--");
}

TEST(Outputs, DevicesAndFifosAreWrittenThroughNeverReplaced) {
  test::TempDir dir;
  const std::string scenario = dir.write("s.yaml", kRobustIoScenario);
  // /dev/null stays a character device.
  test::CommandResult r =
      test::run_pipesim(fmt::format("run '{}' --csv /dev/null --json /dev/null", scenario), dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  // A full device is a write error (exit 1), not a success.
  r = test::run_pipesim(fmt::format("run '{}' --json /dev/full", scenario), dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/dev/full: write failed"), std::string::npos) << r.err;
  ASSERT_EQ(::stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  // A FIFO gets the text and stays a FIFO.
  const std::string fifo = dir.file("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string copy = dir.file("from-pipe.csv");
  const int status = std::system(fmt::format("cat '{}' > '{}' & '{}' run '{}' --csv '{}' > /dev/null; wait",
                                             fifo, copy, PIPESIM_BINARY, scenario, fifo)
                                     .c_str());
  EXPECT_EQ(WEXITSTATUS(status), 0);
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(test::read_file(copy).rfind("schedule_name,", 0), 0u);
  // /dev/stdout writes to whatever standard output is.
  r = test::run_pipesim(fmt::format("run '{}' --format json --csv /dev/stdout", scenario), dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("schedule_name,"), std::string::npos);
}

TEST(Outputs, ASymlinkKeepsItsLinkAndItsTargetIsReplaced) {
  test::TempDir dir;
  const std::string scenario = dir.write("s.yaml", kRobustIoScenario);
  const std::string target = dir.write("real.csv", "old");
  const std::string link = dir.file("link.csv");
  std::filesystem::create_symlink(target, link);
  const test::CommandResult r = test::run_pipesim(fmt::format("run '{}' --csv '{}'", scenario, link), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_EQ(test::read_file(target).rfind("schedule_name,", 0), 0u);
}

// A dangling link (here a chain: a relative link to a link whose target is missing) is kept too: its final
// target is created, never the link replaced by a regular file.
TEST(Outputs, ADanglingSymlinkIsKeptAndItsTargetCreated) {
  test::TempDir dir;
  const std::string scenario = dir.write("s.yaml", kRobustIoScenario);
  std::filesystem::create_directory(dir.file("sub"));
  const std::string target = dir.file("sub/real.json");
  std::filesystem::create_symlink("real.json", dir.file("sub/inner.json"));
  const std::string link = dir.file("link.json");
  std::filesystem::create_symlink("sub/inner.json", link);
  const test::CommandResult r = test::run_pipesim(fmt::format("run '{}' --json '{}'", scenario, link), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_TRUE(std::filesystem::is_symlink(dir.file("sub/inner.json")));
  ASSERT_TRUE(std::filesystem::is_regular_file(target));
  EXPECT_NE(test::read_file(target).find("\"results\""), std::string::npos);
}

TEST(Outputs, TemporaryFilesGoOnSigtermAndStaleOnesOfDeadProcessesAreRemoved) {
  test::TempDir dir;
  const std::string out = dir.file("sweep.csv");
  // A stale temporary of a process that no longer exists (pid 2^22 - 1 is above Linux's default pid_max).
  const std::string stale = out + ".tmp.4194303";
  std::ofstream(stale) << "half";
  const std::string scenario =
      dir.write("big.yaml",
                "pipeline: {stages: 8, microbatches: 8, batches: 2}\n"
                "costs: {forward_ms: 1, backward_input_ms: 1, backward_weight_ms: 1, "
                "weight_grad_activation_bytes: 0}\n");
  // A sweep long enough to be interrupted, killed once its own temporary exists (the stale one is removed
  // just before it is made; a fixed 0.3 s was too short under the sanitizers on a loaded machine): it must
  // leave no PATH.tmp.PID behind.
  const int status = std::system(
      fmt::format(
          "'{0}' sweep '{1}' -N 2:64:+1 -m 8:512:x2 -j 1 -q -o '{2}' & p=$!; "
          "for i in $(seq 1 300); do [ -e '{2}'.tmp.$p ] && break; sleep 0.1; done; kill -TERM $p; wait $p",
          PIPESIM_BINARY, scenario, out)
          .c_str());
  (void)status;
  for (const auto& entry : std::filesystem::directory_iterator(dir.file(""))) {
    const std::string name = entry.path().filename().string();
    EXPECT_EQ(name.find("sweep.csv.tmp."), std::string::npos) << name << " was left behind";
  }
}

}  // namespace
}  // namespace pipesim
