#include "train/validate_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "report/format.h"

namespace pipesim {

namespace {

const MeasuredMetrics& predicted(const ScheduleValidation& v, Prediction which) {
  switch (which) {
    case Prediction::kFitted:
      return v.fitted;
    case Prediction::kFittedMeans:
      return v.fitted_means;
    case Prediction::kCostModel:
      return v.cost_model;
  }
  return v.fitted;
}

constexpr Prediction kPredictions[] = {Prediction::kFitted, Prediction::kFittedMeans, Prediction::kCostModel};

template <typename Metric>
double mape(const ValidationReport& report, Prediction which, Metric metric) {
  if (report.schedules.empty()) return 0;
  double sum = 0;
  for (const ScheduleValidation& v : report.schedules)
    sum += percent_error(metric(predicted(v, which)), metric(v.measured));
  return sum / static_cast<double>(report.schedules.size());
}

std::string drift_text(const std::vector<int>& drift) {
  return fmt::format("{}", fmt::join(drift, "/"));
}

// Δ per stage (its largest over microbatches: what the schedules' bounds speak of) and per microbatch. A
// schedule whose rule reads arrivals (PACI, async-1f1b) follows the real run's timing, which the fitted
// prediction reproduces only on average: where the two orders part, single microbatches' Δ differ.
std::string drift_summary(const ValidationReport& report) {
  std::vector<std::string> per_stage_differs, per_microbatch_differs;
  for (const ScheduleValidation& v : report.schedules) {
    if (v.fitted.max_drift_per_stage != v.measured.max_drift_per_stage)
      per_stage_differs.push_back(v.schedule);
    if (!v.drift_exact)
      // Rounded down: a schedule that is not exact never reads as 100 %.
      per_microbatch_differs.push_back(
          fmt::format("{} {:.1f} %", v.schedule, std::floor(1000 * v.drift_agreement) / 10));
  }
  const std::size_t total = report.schedules.size();
  std::string out = fmt::format("drift, fitted prediction vs run: largest Δ per stage {}; ",
                                per_stage_differs.empty()
                                    ? "equal for every schedule"
                                    : fmt::format("DIFFERS for {}", fmt::join(per_stage_differs, ", ")));
  if (per_microbatch_differs.empty()) return out + "Δ per microbatch exact for every schedule\n";
  return out + fmt::format(
                   "Δ per microbatch exact for {} of {}; agreeing on {} of microbatches (an arrival-driven "
                   "rule follows the run's own timing)\n",
                   total - per_microbatch_differs.size(), total, fmt::join(per_microbatch_differs, ", "));
}

// Per op kind and stage, summed over the schedules' ops: the cost model's mean against the run's, so that its
// next error can be read off.
std::string op_time_table(const ValidationReport& report) {
  struct Sums {
    int count = 0;
    double measured_ms = 0, predicted_ms = 0, overhead_ms = 0;
  };
  std::map<std::pair<int, int>, Sums> sums;
  for (const ScheduleValidation& v : report.schedules) {
    for (const OpTimeComparison& c : v.op_times) {
      Sums& s = sums[{static_cast<int>(c.kind), c.stage}];
      s.count += c.count;
      s.measured_ms += c.measured_mean_ms * c.count;
      s.predicted_ms += c.predicted_mean_ms * c.count;
      s.overhead_ms += c.overhead_mean_ms * c.count;
    }
  }
  if (sums.empty()) return "";
  std::string out = fmt::format(
      "\nop times over all schedules, cost model against the run (mean ms per op)\n"
      "{:>4} {:>5} {:>7} {:>10} {:>10} {:>7} {:>12}\n",
      "kind", "stage", "ops", "predicted", "measured", "error", "overhead");
  for (const auto& [key, s] : sums) {
    const double measured = s.measured_ms / s.count, predicted = s.predicted_ms / s.count;
    out += fmt::format("{:>4} {:>5} {:>7} {:>10.4f} {:>10.4f} {:>+6.1f}% {:>12.4f}\n",
                       op_letter(static_cast<OpKind>(key.first)), key.second, s.count, predicted, measured,
                       measured > 0 ? 100 * (predicted - measured) / measured : 0.0, s.overhead_ms / s.count);
  }
  return out;
}

// What the figures above rest on: the profile (and whether it is this machine's), what it lacked, how far the
// timing can be trusted and how much the runs varied.
std::string assumptions_text(const ValidationReport& report) {
  std::string out =
      fmt::format("\ncost model: profile {}\n", report.profile.empty() ? "(none)" : report.profile);
  for (const std::string& m : report.profile_mismatches)
    out += fmt::format(
        "  WARNING: another machine's profile: {}; measure this one with `pipesim calibrate --cpu` "
        "or `pipesim validate --calibrate`\n",
        m);
  if (!report.schedules.empty()) {
    for (const std::string& m : report.schedules.front().cost_model_missing)
      out += fmt::format(
          "  the profile lacks {}: left out or estimated (recalibrate with `pipesim calibrate --cpu`)\n", m);
  }
  const auto speed_line = [&](const char* when, const std::optional<MachineSpeed>& speed) {
    if (!speed) return;
    out += fmt::format("machine {}: {}\n", when, speed->describe());
    if (std::abs(speed->ratio - 1) > ValidationReport::kSpeedTolerance) {
      out += fmt::format(
          "  WARNING: this machine's GEMMs run {:.0f} % {} than the profile's: the cost model's error "
          "includes that (a VM's speed drifts; recalibrate, or --rescale-to-probe)\n",
          100 * std::abs(speed->ratio - 1), speed->ratio > 1 ? "faster" : "slower");
    }
  };
  speed_line("before the runs", report.speed_before);
  speed_line("after the runs", report.speed_after);
  if (report.rescaled_to_probe && report.speed_before) {
    out +=
        fmt::format("cost model rescaled to the machine's speed before the runs: every duration x {:.3f}\n",
                    1 / report.speed_before->ratio);
  }
  const double worst = report.worst_preempted_share();
  out +=
      fmt::format("timing: ops' threads preempted for {:.1f} % of op time at most (threshold {:.1f} %): {}\n",
                  100 * worst, 100 * report.max_preempted_share,
                  report.timing_trusted()
                      ? "trusted"
                      : "NOT TRUSTED: other work shared this machine's cores; rerun on an idle machine");
  double largest_spread = 0, spread_sum = 0;
  int runs = 1;
  for (const ScheduleValidation& v : report.schedules) {
    largest_spread = std::max(largest_spread, v.makespan_spread);
    spread_sum += v.makespan_spread;
    runs = v.runs;
  }
  if (runs > 1 && !report.schedules.empty()) {
    out += fmt::format(
        "runs: each schedule {} times, the median run reported; measured makespan spread (max - min) / "
        "median: mean {:.1f} %, largest {:.1f} %\n",
        runs, 100 * spread_sum / static_cast<double>(report.schedules.size()), 100 * largest_spread);
  }
  return out;
}

const char* prediction_name(Prediction which) {
  switch (which) {
    case Prediction::kFitted:
      return "fitted";
    case Prediction::kFittedMeans:
      return "fitted-means";
    case Prediction::kCostModel:
      return "cost-model";
  }
  return "fitted";
}

}  // namespace

double throughput_mape(const ValidationReport& report, Prediction which) {
  return mape(report, which, [](const MeasuredMetrics& m) { return m.throughput_samples_per_s; });
}

double makespan_mape(const ValidationReport& report, Prediction which) {
  return mape(report, which, [](const MeasuredMetrics& m) { return m.makespan_ms; });
}

std::string validation_table(const ValidationReport& report) {
  std::ostringstream out;
  for (const Prediction which : {Prediction::kFitted, Prediction::kCostModel}) {
    out << fmt::format("predicted with {} costs\n",
                       which == Prediction::kFitted
                           ? "fitted (each op draws from the run's durations of its kind and stage)"
                           : "the CPU profile's cost model");
    out << fmt::format("{:<24} {:>6} {:>22} {:>18} {:>20} {:>12} {:>10} {:>22}\n", "schedule", "mode",
                       "throughput/s pred/meas", "bubble pred/meas", "makespan_ms pred/meas", "Δ pred/meas",
                       "in-flight", "act. peak KB pred/meas");
    for (const ScheduleValidation& v : report.schedules) {
      const MeasuredMetrics& p = predicted(v, which);
      const MeasuredMetrics& m = v.measured;
      out << fmt::format(
          "{:<24} {:>6} {:>9.0f}/{:<9.0f}{:>3.0f}% {:>6.3f}/{:<6.3f}{:>4.1f}pp {:>8.2f}/{:<8.2f}{:>3.0f}% "
          "{:>12} "
          "{:>5}/{:<4} {:>8.1f}/{:<8.1f}{:>4.0f}%\n",
          v.schedule, v.mode, p.throughput_samples_per_s, m.throughput_samples_per_s,
          percent_error(p.throughput_samples_per_s, m.throughput_samples_per_s), p.bubble, m.bubble,
          100 * std::abs(p.bubble - m.bubble), p.makespan_ms, m.makespan_ms,
          percent_error(p.makespan_ms, m.makespan_ms),
          drift_text(p.max_drift_per_stage) + (p.max_drift_per_stage == m.max_drift_per_stage ? "=" : "≠"),
          p.peak_in_flight, m.peak_in_flight, static_cast<double>(p.peak_activation_bytes) / 1e3,
          static_cast<double>(m.peak_activation_bytes) / 1e3,
          percent_error(static_cast<double>(p.peak_activation_bytes),
                        static_cast<double>(m.peak_activation_bytes)));
    }
    out << fmt::format("MAPE over {} schedules ({}): throughput {:.2f} %, makespan {:.2f} %\n",
                       report.schedules.size(), prediction_name(which), throughput_mape(report, which),
                       makespan_mape(report, which));
    if (which == Prediction::kFitted) {
      // The same fit without the spread: how much op-to-op variation costs this pipeline.
      out << fmt::format(
          "MAPE over {} schedules ({}: each op its kind and stage's mean): throughput {:.2f} %, "
          "makespan {:.2f} %\n",
          report.schedules.size(), prediction_name(Prediction::kFittedMeans),
          throughput_mape(report, Prediction::kFittedMeans), makespan_mape(report, Prediction::kFittedMeans));
    }
    out << "\n";
  }
  out << drift_summary(report);
  out << op_time_table(report);
  out << assumptions_text(report);
  return out.str();
}

namespace {

nlohmann::json metrics_json(const MeasuredMetrics& m) {
  return {{"makespan_ms", m.makespan_ms},
          {"throughput_samples_per_s", m.throughput_samples_per_s},
          {"bubble", m.bubble},
          {"max_drift_per_stage", m.max_drift_per_stage},
          {"peak_in_flight", m.peak_in_flight},
          {"peak_activation_bytes", m.peak_activation_bytes}};
}

}  // namespace

std::string validation_json_text(const ValidationReport& report) {
  nlohmann::json rows = nlohmann::json::array();
  for (const ScheduleValidation& v : report.schedules) {
    rows.push_back({{"schedule", v.schedule},
                    {"mode", v.mode},
                    {"drift_exact", v.drift_exact},
                    {"drift_agreement", v.drift_agreement},
                    {"measured", metrics_json(v.measured)},
                    {"fitted", metrics_json(v.fitted)},
                    {"fitted_means", metrics_json(v.fitted_means)},
                    {"cost_model", metrics_json(v.cost_model)}});
  }
  nlohmann::json out{{"scenario", report.scenario}, {"schedules", rows}};
  for (std::size_t i = 0; i < report.schedules.size(); ++i) {
    const ScheduleValidation& v = report.schedules[i];
    nlohmann::json ops = nlohmann::json::array();
    for (const OpTimeComparison& c : v.op_times) {
      ops.push_back({{"stage", c.stage},
                     {"kind", std::string(1, op_letter(c.kind))},
                     {"count", c.count},
                     {"measured_mean_ms", c.measured_mean_ms},
                     {"predicted_mean_ms", c.predicted_mean_ms},
                     {"error_percent", 100 * (c.predicted_mean_ms - c.measured_mean_ms) / c.measured_mean_ms},
                     {"overhead_mean_ms", c.overhead_mean_ms},
                     {"preempted_share", c.preempted_share}});
    }
    out["schedules"][i]["op_times"] = ops;
    out["schedules"][i]["preempted_share"] = v.preempted_share;
    out["schedules"][i]["runs"] = v.runs;
    out["schedules"][i]["makespan_spread"] = v.makespan_spread;
    out["schedules"][i]["cost_model_missing"] = v.cost_model_missing;
  }
  out["profile"] = report.profile;
  out["profile_mismatches"] = report.profile_mismatches;
  const auto speed_json = [](const std::optional<MachineSpeed>& speed) {
    return speed ? nlohmann::json{{"ratio", speed->ratio}, {"gemms", speed->gemms}} : nlohmann::json();
  };
  out["machine_speed"] = {{"before_runs", speed_json(report.speed_before)},
                          {"after_runs", speed_json(report.speed_after)},
                          {"rescaled_to_probe", report.rescaled_to_probe},
                          {"meaning", "calibrated GEMM time / time now, fp32 nn at m, n, k in 256-512"}};
  out["timing"] = {{"worst_preempted_share", report.worst_preempted_share()},
                   {"max_preempted_share", report.max_preempted_share},
                   {"trusted", report.timing_trusted()}};
  for (const Prediction which : kPredictions) {
    out["mape_percent"][prediction_name(which)] = {{"throughput", throughput_mape(report, which)},
                                                   {"makespan", makespan_mape(report, which)}};
  }
  return out.dump(2) + "\n";
}

std::string validation_csv(const ValidationReport& report) {
  std::string out =
      "schedule,mode,prediction,throughput_pred,throughput_meas,bubble_pred,bubble_meas,makespan_ms_pred,"
      "makespan_ms_meas,peak_in_flight_pred,peak_in_flight_meas,peak_activation_bytes_pred,"
      "peak_activation_bytes_meas,drift_exact\n";
  for (const ScheduleValidation& v : report.schedules) {
    for (const Prediction which : kPredictions) {
      const MeasuredMetrics& p = predicted(v, which);
      const MeasuredMetrics& m = v.measured;
      out +=
          fmt::format("\"{}\",{},{},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{},{},{},{},{}\n", v.schedule,
                      v.mode, prediction_name(which), p.throughput_samples_per_s, m.throughput_samples_per_s,
                      p.bubble, m.bubble, p.makespan_ms, m.makespan_ms, p.peak_in_flight, m.peak_in_flight,
                      p.peak_activation_bytes, m.peak_activation_bytes, v.drift_exact ? 1 : 0);
    }
  }
  return out;
}

}  // namespace pipesim
