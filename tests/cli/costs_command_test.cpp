// `pipesim costs` says which of the profile's measurements its figures rest on: a shipped spec-derived
// profile has no transposed GEMM grids, no element-wise kernel and no host overhead.
#include <gtest/gtest.h>

#include "pipesim_source_dir.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

TEST(CostsCommand, StatesTheProfileTermsItUses) {
  test::TempDir dir;
  const test::CommandResult r =
      test::run_pipesim(fmt::format("costs {}/share/scenarios/default.yaml", PIPESIM_SOURCE_DIR), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(
      r.out.find("profile terms: GEMMs from one grid (no transposed measurements); memory-bound kernels at "
                 "1792 GB/s (the copy bandwidth); no host overhead measured"),
      std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace pipesim
