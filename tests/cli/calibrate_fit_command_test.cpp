// pipesim calibrate --fit and pipesim costs --layer-times through the binary: the fitted profile is written,
// reads back as a profile with its fit, replaces an earlier fit instead of stacking on it, and wrong
// invocations say what is missing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "io/hardware_profile_reader.h"
#include "pipesim_source_dir.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

using test::TempDir;
using ::testing::HasSubstr;

const std::string kSource = PIPESIM_SOURCE_DIR;
const std::string kLayerTimes = kSource + "/share/data/gpu/h200-layer-times.csv";
const std::string kProfile = kSource + "/share/profiles/nvidia-h200.yaml";

TEST(CalibrateFitCommand, WritesAFittedProfileThatReadsBackAndRefitsFromTheMeasurement) {
  TempDir dir;
  const std::string out = dir.file("fitted.yaml");
  const test::CommandResult r = test::run_pipesim("calibrate --fit '" + kLayerTimes + "' --profile '" +
                                                      kProfile + "' --terms gemm,attention -o '" + out + "'",
                                                  dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("fitted: gemm efficiency"));
  EXPECT_THAT(r.out, HasSubstr("cross-validated (each configuration held out in turn (4 fits))"));
  EXPECT_THAT(r.err, HasSubstr("fit: cross-validation fit 4 of 4"));  // progress on stderr
  const HardwareProfile fitted = load_hardware_profile(out);
  EXPECT_TRUE(fitted.fit.fitted());
  EXPECT_THAT(fitted.fit.source, HasSubstr("39 measured layer times"));
  EXPECT_DOUBLE_EQ(fitted.fit.elementwise_efficiency, 1);  // not among --terms: left alone
  // The input profile had a fit: the new file holds one fit: section, the new one.
  const std::string text = test::read_file(out);
  EXPECT_EQ(text.find("fit: {"), text.rfind("fit: {"));
  EXPECT_THAT(text, Not(HasSubstr("elementwise_efficiency")));
  // Fitting the fitted file again gives the same terms: a fit always starts from the measured figures.
  const std::string again = dir.file("again.yaml");
  ASSERT_EQ(test::run_pipesim("calibrate --fit '" + kLayerTimes + "' --profile '" + out +
                                  "' --terms gemm,attention --no-cross-validation -o '" + again + "'",
                              dir)
                .exit_code,
            0);
  const HardwareProfile refitted = load_hardware_profile(again);
  EXPECT_NEAR(refitted.fit.gemm_efficiency, fitted.fit.gemm_efficiency, 1e-5);
  EXPECT_NEAR(refitted.fit.attention_efficiency, fitted.fit.attention_efficiency, 1e-5);
}

TEST(CalibrateFitCommand, WrongInvocationsSayWhatIsMissing) {
  TempDir dir;
  const test::CommandResult no_profile = test::run_pipesim("calibrate --fit '" + kLayerTimes + "'", dir);
  EXPECT_NE(no_profile.exit_code, 0);
  EXPECT_THAT(no_profile.err, HasSubstr("needs --profile"));
  const test::CommandResult both =
      test::run_pipesim("calibrate --cpu --fit '" + kLayerTimes + "' --profile '" + kProfile + "'", dir);
  EXPECT_NE(both.exit_code, 0);
  EXPECT_THAT(both.err, HasSubstr("--cpu and --fit"));
  const test::CommandResult term = test::run_pipesim(
      "calibrate --fit '" + kLayerTimes + "' --profile '" + kProfile + "' --terms gemm,attenton", dir);
  EXPECT_NE(term.exit_code, 0);
  EXPECT_THAT(term.err, HasSubstr("did you mean 'attention'"));
  const test::CommandResult costs = test::run_pipesim("costs --layer-times '" + kLayerTimes + "'", dir);
  EXPECT_NE(costs.exit_code, 0);
  EXPECT_THAT(costs.err, HasSubstr("--layer-times needs --profile"));
}

TEST(CalibrateFitCommand, CostsComparesMeasuredLayers) {
  TempDir dir;
  const test::CommandResult r =
      test::run_pipesim("costs --layer-times '" + kLayerTimes + "' --profile '" + kProfile + "'", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("device: NVIDIA H200"));
  EXPECT_THAT(r.out, HasSubstr("mean |error|: F "));
}

}  // namespace
}  // namespace pipesim
