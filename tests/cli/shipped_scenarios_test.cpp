// Every scenario shipped in share/scenarios runs as `pipesim run` runs it: a scenario the README or a comment
// points a user to never fails to read or run after a change to the format or the models.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "pipesim_source_dir.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

TEST(ShippedScenarios, EveryOneRuns) {
  const test::TempDir dir;
  std::vector<std::string> paths;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(std::string(PIPESIM_SOURCE_DIR) + "/share/scenarios")) {
    if (entry.is_regular_file() && entry.path().extension() == ".yaml")
      paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  EXPECT_GE(paths.size(), 25u);  // 27 when this was written
  for (const std::string& path : paths) {
    const test::CommandResult r = test::run_pipesim(fmt::format("run '{}'", path), dir);
    EXPECT_EQ(r.exit_code, 0) << path << ":\n" << r.err;
    EXPECT_NE(r.out.find("schedule"), std::string::npos) << path;
  }
}

}  // namespace
}  // namespace pipesim
