// The data search path (io/data_dirs.h): --data-dir, then PIPESIM_DATA_DIR, then the install prefix and the
// source tree; a file missing everywhere names every place searched. What the binary says of a data directory
// that is not one is tests/cli/data_dirs_command_test.cpp.
#include "io/data_dirs.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/scenario.h"
#include "pipesim_source_dir.h"
#include "tests/error_text.h"

namespace pipesim {
namespace {

namespace fs = std::filesystem;

// Runs the scope in another working directory.
struct DataDirsInDirectory {
  explicit DataDirsInDirectory(const fs::path& directory) : before(fs::current_path()) {
    fs::current_path(directory);
  }
  ~DataDirsInDirectory() { fs::current_path(before); }
  DataDirsInDirectory(const DataDirsInDirectory&) = delete;
  DataDirsInDirectory& operator=(const DataDirsInDirectory&) = delete;
  fs::path before;
};

class DataDirsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / fs::path("pipesim_data_dirs_" + std::to_string(::getpid()));
    fs::create_directories(root_ / "flag" / "scenarios");
    fs::create_directories(root_ / "env" / "scenarios");
    std::ofstream(root_ / "flag" / "scenarios" / "only_in_flag.yaml") << "x";
    std::ofstream(root_ / "flag" / "scenarios" / "in_both.yaml") << "x";
    std::ofstream(root_ / "env" / "scenarios" / "in_both.yaml") << "x";
    std::ofstream(root_ / "env" / "scenarios" / "only_in_env.yaml") << "x";
  }
  void TearDown() override {
    set_data_dir("");
    ::unsetenv("PIPESIM_DATA_DIR");
    fs::remove_all(root_);
  }
  fs::path root_;
};

TEST_F(DataDirsTest, FlagComesBeforeTheEnvironmentWhichComesBeforeTheSourceTree) {
  set_data_dir((root_ / "flag").string());
  ::setenv("PIPESIM_DATA_DIR", (root_ / "env").c_str(), 1);
  EXPECT_EQ(find_data_path("scenarios/in_both.yaml", "x"),
            (root_ / "flag" / "scenarios" / "in_both.yaml").string());
  EXPECT_EQ(find_data_path("scenarios/only_in_env.yaml", "x"),
            (root_ / "env" / "scenarios" / "only_in_env.yaml").string());
  // Neither has the profiles: the source tree (last on the path) does.
  EXPECT_TRUE(
      fs::equivalent(find_data_path("profiles", "x"), fs::path(PIPESIM_SOURCE_DIR) / "share" / "profiles"));
  const std::vector<DataDirCandidate> candidates = data_dir_candidates();
  ASSERT_GE(candidates.size(), 3u);
  EXPECT_EQ(candidates[0].origin, "--data-dir");
  EXPECT_EQ(candidates[1].origin, "PIPESIM_DATA_DIR");
  EXPECT_EQ(candidates.back().origin, "source tree");
}

TEST_F(DataDirsTest, MissingFileNamesEveryPlaceSearched) {
  set_data_dir((root_ / "flag").string());
  ::setenv("PIPESIM_DATA_DIR", (root_ / "env").c_str(), 1);
  const std::string error =
      test::input_error_of([] { find_data_path("scenarios/no_such.yaml", "the test scenario"); });
  EXPECT_NE(error.find("the test scenario (scenarios/no_such.yaml) not found"), std::string::npos) << error;
  EXPECT_NE(error.find((root_ / "flag" / "scenarios" / "no_such.yaml").string() + " (--data-dir)"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find((root_ / "env" / "scenarios" / "no_such.yaml").string() + " (PIPESIM_DATA_DIR)"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("(source tree)"), std::string::npos) << error;
}

TEST_F(DataDirsTest, DefaultScenarioFollowsTheSearchPath) {
  std::ofstream(root_ / "flag" / "scenarios" / "default.yaml") << "x";
  set_data_dir((root_ / "flag").string());
  EXPECT_EQ(default_scenario_path(), (root_ / "flag" / "scenarios" / "default.yaml").string());
  set_data_dir("");
  EXPECT_TRUE(fs::equivalent(default_scenario_path(),
                             fs::path(PIPESIM_SOURCE_DIR) / "share" / "scenarios" / "default.yaml"));
}

// A scenario or study named on the command line: the file itself when it is there, else the shipped file of
// that relative name on the search path, else the name as given (for the reader's "cannot open" error).
TEST_F(DataDirsTest, InputFilesComeFromTheCurrentDirectoryThenTheSearchPath) {
  set_data_dir((root_ / "flag").string());
  EXPECT_EQ(input_or_data_path("scenarios/only_in_flag.yaml"),
            (root_ / "flag" / "scenarios" / "only_in_flag.yaml").string());
  EXPECT_TRUE(fs::equivalent(input_or_data_path("studies/paci-scaled.yaml"),
                             fs::path(PIPESIM_SOURCE_DIR) / "share" / "studies" / "paci-scaled.yaml"));
  EXPECT_EQ(input_or_data_path("scenarios/no_such.yaml"), "scenarios/no_such.yaml");
  const std::string absolute = (root_ / "env" / "scenarios" / "only_in_env.yaml").string();
  EXPECT_EQ(input_or_data_path(absolute), absolute);
  // A file of the same name in the current directory wins over the shipped one.
  {
    const DataDirsInDirectory env(root_ / "env");
    EXPECT_EQ(input_or_data_path("scenarios/in_both.yaml"), "scenarios/in_both.yaml");
  }
  // load_scenario reads the shipped default scenario by its name under share/.
  set_data_dir("");
  const DataDirsInDirectory elsewhere(root_);
  EXPECT_EQ(load_scenario("scenarios/default.yaml").name, "paci-gpt2-medium-8stage");
}

// A data directory the user named that is not one is an error naming the option or the variable, never a
// silent fall-through to the shipped data.
TEST_F(DataDirsTest, ADataDirectoryThatDoesNotExistIsRefused) {
  const std::string missing = (root_ / "no_such_dir").string();
  std::string error = test::input_error_of([&] { set_data_dir(missing); });
  EXPECT_NE(error.find("--data-dir " + missing + ": no such directory"), std::string::npos) << error;
  ::setenv("PIPESIM_DATA_DIR", missing.c_str(), 1);
  error = test::input_error_of([] { find_data_path("scenarios/default.yaml", "the default scenario"); });
  EXPECT_NE(error.find("PIPESIM_DATA_DIR=" + missing + ": no such directory"), std::string::npos) << error;
  ::setenv("PIPESIM_DATA_DIR", (root_ / "flag" / "scenarios" / "in_both.yaml").c_str(), 1);
  error = test::input_error_of([] { data_dir_candidates(); });
  EXPECT_NE(error.find(": not a directory"), std::string::npos) << error;
}

}  // namespace
}  // namespace pipesim
