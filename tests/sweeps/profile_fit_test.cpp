// `pipesim calibrate --fit`: the fit recovers terms that generated the "measured" times, cross-validates on
// what it did not see, and refuses what it cannot use.
#include "sweeps/profile_fit.h"

#include <gtest/gtest.h>

#include <cmath>

#include "base/errors.h"
#include "io/hardware_profile_reader.h"
#include "pipesim_source_dir.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

using test::TempDir;

const std::string kSource = PIPESIM_SOURCE_DIR;
const std::string kProfile = kSource + "/share/profiles/nvidia-h200.yaml";

HardwareProfile raw_h200() {
  return parse_hardware_profile(test::read_file(kProfile), kProfile, ProfileFitUse::kIgnore);
}

// Replaces every observation's measurement with what `truth` predicts: a fit must find `truth` again.
void measure_with(std::vector<FitObservation>& observations, const HardwareProfile& raw,
                  const ProfileFit& truth) {
  const HardwareProfile profile = with_fit(raw, truth);
  for (FitObservation& o : observations) o.measured_s = o.predict_s(profile);
}

TEST(ProfileFit, RecoversTheTermsBehindLayerTimes) {
  const HardwareProfile raw = raw_h200();
  std::string kind;
  std::vector<FitObservation> observations =
      load_fit_observations(kSource + "/share/data/gpu/h200-layer-times.csv", &kind, {});
  EXPECT_EQ(kind, "layer times");
  ASSERT_EQ(observations.size(), 39u);  // F, I and B of 13 layers
  ProfileFit truth;
  truth.gemm_efficiency = 0.85;
  truth.elementwise_efficiency = 2.5;
  truth.attention_efficiency = 0.3;
  truth.source = "test";
  measure_with(observations, raw, truth);
  const FitResult r = fit_profile(raw, observations, kind, {});
  EXPECT_NEAR(r.fit.gemm_efficiency, 0.85, 0.85 * 0.01);
  EXPECT_NEAR(r.fit.elementwise_efficiency, 2.5, 2.5 * 0.02);
  EXPECT_NEAR(r.fit.attention_efficiency, 0.3, 0.3 * 0.01);
  EXPECT_LT(r.mape_after, 0.002);
  EXPECT_GT(r.mape_before, 0.05);
  // Each of the four configurations held out in turn: the others pin the same terms.
  EXPECT_NE(r.cross_validation.find("4 fits"), std::string::npos) << r.cross_validation;
  EXPECT_LT(r.mape_cross_validated, 0.005);
  for (const FitRowResult& row : r.rows) EXPECT_GT(row.cross_validated_s, 0) << row.label;
  const std::string text = render_fit_result(r, kProfile);
  EXPECT_NE(text.find("fitted: gemm efficiency 0.85"), std::string::npos) << text;
  EXPECT_NE(text.find("cross-validated"), std::string::npos);
}

// Step times of a small transformer pipeline (4 stages, 8 microbatches), two synchronous schedules and one
// asynchronous: the fit on the synchronous rows predicts the asynchronous one.
TEST(ProfileFit, StepTimesFitOnSynchronousRunsAndPredictTheRest) {
  TempDir dir;
  dir.write("small.yaml",
            "name: small\n"
            "model: {layers: 8, hidden: 1024, heads: 8, seq_len: 1024, vocab: 32000}\n"
            "hardware: {profile: " +
                kProfile +
                "}\n"
                "pipeline: {stages: 4, microbatches: 8, global_batch: 8, batches: 2}\n"
                "schedules: [1f1b-flush, zb-h1, pipedream-2bw]\n");
  const std::string csv =
      dir.write("steps.csv",
                "# made up by the test: step times of small.yaml\n"
                "scenario,schedule,step_time_ms,set\n"
                "small.yaml,1f1b-flush,100,\n"
                "small.yaml,zb-h1,100,\n"
                "small.yaml,1f1b-flush,100,pipeline.microbatches=16;pipeline.global_batch=16\n"
                "small.yaml,pipedream-2bw,100,\n");
  const HardwareProfile raw = raw_h200();
  std::string kind;
  std::vector<FitObservation> observations = load_fit_observations(csv, &kind, {});
  EXPECT_EQ(kind, "step times");
  ASSERT_EQ(observations.size(), 4u);
  EXPECT_FALSE(observations[0].held_out_first);
  EXPECT_TRUE(observations[3].held_out_first);  // asynchronous
  ProfileFit truth;
  truth.gemm_efficiency = 0.7;
  truth.host_overhead_us = 40;
  truth.source = "test";
  measure_with(observations, raw, truth);
  FitOptions options;
  options.terms = {FitTerm::kGemmEfficiency, FitTerm::kHostOverhead};
  const FitResult r = fit_profile(raw, observations, kind, options);
  EXPECT_NEAR(r.fit.gemm_efficiency, 0.7, 0.7 * 0.02);
  EXPECT_NEAR(r.fit.host_overhead_us, 40, 2);
  EXPECT_LT(r.mape_after, 0.005);
  EXPECT_NE(r.cross_validation.find("synchronous"), std::string::npos) << r.cross_validation;
  EXPECT_EQ(r.rows[0].cross_validated_s, 0);  // fitted, not predicted
  EXPECT_GT(r.rows[3].cross_validated_s, 0);
  EXPECT_LT(r.mape_cross_validated, 0.01);
}

TEST(ProfileFit, RefusesWhatItCannotFit) {
  TempDir dir;
  const HardwareProfile raw = raw_h200();
  std::string kind;
  auto error_of = [&](const std::string& csv_text) {
    try {
      load_fit_observations(dir.write("m.csv", csv_text), &kind, {});
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of("a,b\n1,2\n").find("neither layer times"), std::string::npos);
  const std::string explicit_costs = kSource + "/share/scenarios/zb/1.5B-N8-m24.yaml";
  EXPECT_NE(error_of("scenario,schedule,step_time_ms\n" + explicit_costs + ",1f1b-flush,5\n")
                .find("explicit costs"),
            std::string::npos);
  const std::string quickstart = kSource + "/share/scenarios/quickstart/llama2-7b-h100.yaml";
  EXPECT_NE(error_of("scenario,schedule,step_time_ms\n" + quickstart + ",1f1b-flsh,5\n")
                .find("did you mean '1f1b-flush'"),
            std::string::npos);
  EXPECT_NE(error_of("scenario,schedule,step_time_ms\n" + quickstart + ",gpipe,0\n").find("above 0"),
            std::string::npos);
  EXPECT_NE(error_of("scenario,schedule\n" + quickstart + ",gpipe\n").find("step_time_ms"),
            std::string::npos);
  EXPECT_THROW(parse_fit_term("gemmm"), InputError);
  EXPECT_EQ(parse_fit_term("overhead"), FitTerm::kHostOverhead);
  // Fewer figures than terms.
  std::vector<FitObservation> one =
      load_fit_observations(kSource + "/share/data/gpu/h200-layer-times.csv", &kind, {});
  one.resize(2);
  EXPECT_THROW(fit_profile(raw, one, kind, {}), InputError);
}

}  // namespace
}  // namespace pipesim
