// The machine-speed probe's arithmetic: calibrated over measured time per grid point, geometric mean, points
// off the profile's grid left out.
#include "executor/costs/machine_drift.h"

#include <gtest/gtest.h>

#include <cmath>

#include "base/errors.h"

namespace pipesim {
namespace {

TEST(MachineSpeed, GeometricMeanOfCalibratedOverMeasuredTimesOnTheGrid) {
  // 1 TFLOP/s everywhere on a 256/512 grid: 256³ takes 2·256³ ps.
  const GemmTable table("fp32", {256, 512}, {256, 512}, {256, 512}, std::vector<double>(8, 1.0));
  const double t256 = 2.0 * 256 * 256 * 256 / 1e12, t512 = 2.0 * 512 * 512 * 512 / 1e12;
  // Twice as fast at 256³, half as fast at 512³: the geometric mean is 1. A point off the grid and another
  // layout do not count.
  const std::vector<pipesim_profile::GemmTiming> now{{"fp32", 256, 256, 256, t256 / 2, "nn"},
                                                     {"fp32", 512, 512, 512, t512 * 2, "nn"},
                                                     {"fp32", 300, 256, 256, 1.0, "nn"},
                                                     {"fp32", 256, 256, 256, 1.0, "nt"}};
  const MachineSpeed balanced = speed_against(table, now);
  EXPECT_EQ(balanced.gemms, 2);
  EXPECT_NEAR(balanced.ratio, 1.0, 1e-12);
  // 20 % slower everywhere: 1 / 1.25 = 0.8.
  const MachineSpeed slower = speed_against(table, {{"fp32", 256, 512, 256, t256 * 2 * 1.25, "nn"}});
  EXPECT_NEAR(slower.ratio, 0.8, 1e-12);
  EXPECT_NE(slower.describe().find("0.80x"), std::string::npos) << slower.describe();
  EXPECT_NE(slower.describe().find("-20.0 %"), std::string::npos) << slower.describe();
  EXPECT_THROW(speed_against(table, {{"fp32", 300, 300, 300, 1.0, "nn"}}), InputError);
}

}  // namespace
}  // namespace pipesim
