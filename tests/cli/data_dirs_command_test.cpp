// A data directory the user named that is not one (io/data_dirs.h; its search path is
// tests/io/data_dirs_test.cpp): the binary exits 1 with one line naming the option or the variable, never a
// silent fall-through to the shipped data.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/test_util.h"

namespace pipesim {
namespace {

TEST(DataDirsCommand, ADataDirectoryThatDoesNotExistExitsWithOneLine) {
  const test::TempDir dir;
  const std::string missing = dir.file("no_such_dir");
  test::CommandResult r = test::run_pipesim(fmt::format("--data-dir '{}' run", missing), dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--data-dir " + missing + ": no such directory"), std::string::npos) << r.err;
  r = test::run_pipesim_with(fmt::format("PIPESIM_DATA_DIR='{}' '{}'", missing, PIPESIM_BINARY), "run", dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("PIPESIM_DATA_DIR=" + missing + ": no such directory"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace pipesim
