#pragma once
// `pipesim calibrate --fit MEASURED.csv --profile P`: adjusts a profile's efficiency and overhead terms
// (spec/hardware_profile.h, ProfileFit) so that its predictions match measured times, and says how
// well the fitted terms predict what they were not fitted to.
//
// Two kinds of measurement, told apart by the CSV's columns:
//   layer times  one layer's F, I and B per configuration (calibrate/gpu/torch_layer_times.py)
//   step times   scenario,schedule,step_time_ms[,set]: one training step (the scenario's global batch) of a
//                schedule on a transformer scenario, measured on the cluster the profile describes; `set`
//                holds --set overrides separated by ';' (pipeline.microbatches=24;model.seq_len=4096)
// The fit minimises the mean squared log error of the predictions: a golden-section search per term, then
// Nelder-Mead over all of them together (log scale for efficiencies, within the terms' bounds).
// Deterministic.
//
// Cross-validation: fit on part, predict the rest. Step times: fitted on the synchronous schedules' rows,
// predicting the asynchronous ones when there are both; else each schedule in turn held out. Layer times:
// each configuration (config column) in turn held out.
#include <functional>
#include <string>
#include <vector>

#include "sim/limits.h"
#include "spec/hardware_profile.h"

namespace pipesim {

enum class FitTerm { kGemmEfficiency, kElementwiseEfficiency, kAttentionEfficiency, kHostOverhead };
std::string fit_term_name(FitTerm term);          // gemm, elementwise, attention, overhead
FitTerm parse_fit_term(const std::string& name);  // throws InputError with a did-you-mean

// One measured figure and how to predict it from a profile.
struct FitObservation {
  std::string label;            // "llama3-8b s=4096 b=1 F", "zb-1.5B.yaml:3 1f1b-flush"
  std::string group;            // what cross-validation holds out together
  bool held_out_first = false;  // step times: an asynchronous schedule's row (predicted, not fitted, first)
  double measured_s = 0;
  std::function<double(const HardwareProfile&)> predict_s;
};

struct FitOptions {
  std::vector<FitTerm> terms;  // empty: the default for the kind of measurement
  bool cross_validate = true;
};

struct FitRowResult {
  std::string label, group;
  double measured_s = 0, before_s = 0, after_s = 0;
  double cross_validated_s = 0;  // predicted by terms fitted without this row's group; 0: not cross-validated
};

struct FitResult {
  std::string kind;  // "layer times" or "step times"
  std::vector<FitTerm> terms;
  ProfileFit fit;  // the terms fitted on every row (source left empty: the caller says what and where)
  std::vector<FitRowResult> rows;
  double mape_before = 0, mape_after = 0;  // mean |predicted/measured - 1| over the rows
  double mape_cross_validated = -1;        // < 0: not cross-validated (one group only)
  std::string cross_validation;            // how the rows were split
  int evaluations = 0;                     // predictions of the whole set made while fitting
};

// The measurements in `csv` as observations (the layer-time or step-time form). Throws InputError naming the
// file, line and column of what is wrong. Step times are predicted by runs under `limits`.
std::vector<FitObservation> load_fit_observations(const std::string& csv, std::string* kind,
                                                  const Limits& limits);

// `raw`: the profile as measured (no fit applied). `progress` gets a line per fit.
FitResult fit_profile(const HardwareProfile& raw, const std::vector<FitObservation>& observations,
                      const std::string& kind, const FitOptions& options,
                      const std::function<void(const std::string&)>& progress = {});

// The result as a table: measured, before, after, cross-validated per row; the terms; the errors.
std::string render_fit_result(const FitResult& result, const std::string& profile_source);

}  // namespace pipesim
