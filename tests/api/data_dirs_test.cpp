// The data search path (io/data_dirs.h): --data-dir, then PIPESIM_DATA_DIR, then the install prefix and the
// source tree; a file missing everywhere names every place searched.
#include "io/data_dirs.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "io/scenario.h"
#include "pipesim_source_dir.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

namespace fs = std::filesystem;

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
  EXPECT_TRUE(fs::equivalent(find_data_path("gpu_calibration/profiles", "x"),
                             fs::path(PIPESIM_SOURCE_DIR) / "gpu_calibration" / "profiles"));
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
  EXPECT_TRUE(
      fs::equivalent(default_scenario_path(), fs::path(PIPESIM_SOURCE_DIR) / "scenarios" / "default.yaml"));
}

}  // namespace
}  // namespace pipesim
