// The A100 profile and the transformer model reproduce the Zero Bubble paper's profiled per-stage times
// (share/data/zero_bubble/zb_profiled_times.csv): every F, I and W within 10%. A model change that breaks the
// fit fails here.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "io/hardware_profile_reader.h"
#include "io/zb_reference.h"
#include "report/fit_report.h"

namespace pipesim {
namespace {

TEST(A100Fit, EveryProfiledTimeWithinTenPercent) {
  const HardwareProfile profile = load_hardware_profile(resolve_profile_path("a100-sxm4-80gb"));
  const std::vector<FitRow> rows = a100_fit_rows(profile, default_reference_data_dir());
  ASSERT_EQ(rows.size(), 12u);
  std::cout << render_fit_report(rows, profile.source);  // the residual per row, in the test log
  for (const FitRow& r : rows) {
    const std::string row = r.profiled.model + " m=" + std::to_string(r.profiled.microbatches);
    EXPECT_LT(std::abs(r.forward_error()), 0.10) << row << " F";
    EXPECT_LT(std::abs(r.backward_input_error()), 0.10) << row << " I";
    EXPECT_LT(std::abs(r.backward_weight_error()), 0.10) << row << " W";
    // The link (0.25 ms + s·b·h·2 bytes at 80 GB/s) is fitted to comm_ms as well; it is not part of the
    // target.
    EXPECT_LT(std::abs(r.comm_error()), 0.25) << row << " comm";
  }
}

TEST(A100Fit, ComparesAMiddleStageWithAllItsLayers) {
  const HardwareProfile profile = load_hardware_profile(resolve_profile_path("a100-sxm4-80gb"));
  for (const FitRow& r : a100_fit_rows(profile, default_reference_data_dir())) {
    EXPECT_EQ(r.stage, 1);
    const int expected = r.profiled.model == "1.5B"    ? 3
                         : r.profiled.model == "6.2B"  ? 4
                         : r.profiled.model == "14.6B" ? 3
                                                       : 2;
    EXPECT_EQ(r.layers, expected) << r.profiled.model;
  }
}

}  // namespace
}  // namespace pipesim
