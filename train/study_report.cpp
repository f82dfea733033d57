#include "train/study_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace pipesim {

const CurvePoint* first_at_target(const std::vector<CurvePoint>& points, const StudyTargets& targets) {
  for (const CurvePoint& p : points) {
    const bool loss_ok = !targets.loss || p.val_loss <= *targets.loss;
    const bool accuracy_ok = !targets.accuracy || p.val_accuracy >= *targets.accuracy;
    if (loss_ok && accuracy_ok) return &p;
  }
  return nullptr;
}

double loss_spread(const std::vector<const std::vector<CurvePoint>*>& seed_curves) {
  if (seed_curves.size() < 2) return 0;
  std::size_t points = seed_curves.front()->size();
  for (const auto* c : seed_curves) points = std::min(points, c->size());
  if (points == 0) return 0;
  const double n = static_cast<double>(seed_curves.size());
  double sum_variance = 0;
  for (std::size_t i = 0; i < points; ++i) {
    double mean = 0;
    for (const auto* c : seed_curves) mean += (*c)[i].val_loss;
    mean /= n;
    double squares = 0;
    for (const auto* c : seed_curves) squares += ((*c)[i].val_loss - mean) * ((*c)[i].val_loss - mean);
    sum_variance += squares / (n - 1);
  }
  return std::sqrt(sum_variance / static_cast<double>(points));
}

std::vector<GroupSummary> summarize_study(const Study& study, const StudyCurves& curves) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  std::vector<GroupSummary> groups;
  std::map<std::string, std::vector<const std::vector<CurvePoint>*>> seed_curves;
  for (const StudyRun& run : study_runs(study)) {
    const auto found = curves.find(run.key());
    if (found == curves.end()) continue;
    if (!seed_curves.contains(run.group())) {
      GroupSummary g;
      g.group = run.group();
      g.global_batch = run.global_batch;
      g.schedule = run.schedule.label();
      g.optimizer = run.optimizer.label;
      g.correction = executor::delay_correction_name(run.correction);
      g.synchronous = !is_asynchronous(study, run.schedule);
      groups.push_back(g);
    }
    seed_curves[run.group()].push_back(&found->second);
  }
  for (GroupSummary& g : groups) {
    const auto& seeds = seed_curves.at(g.group);
    g.seeds = static_cast<int>(seeds.size());
    double samples = 0, predicted = 0, measured = 0, final_loss = 0;
    for (const auto* c : seeds) {
      final_loss += c->back().val_loss;
      const CurvePoint* p = first_at_target(*c, study.targets);
      if (p == nullptr) continue;
      ++g.reached;
      samples += static_cast<double>(p->samples);
      predicted += p->predicted_s;
      measured += p->measured_s;
    }
    g.final_val_loss = final_loss / g.seeds;
    g.samples_to_target = g.reached ? samples / g.reached : kNaN;
    g.predicted_s_to_target = g.reached ? predicted / g.reached : kNaN;
    g.measured_s_to_target = g.reached ? measured / g.reached : kNaN;
    g.loss_spread = loss_spread(seeds);
  }
  for (GroupSummary& g : groups) {
    double fastest = kNaN;
    for (const GroupSummary& f : groups) {
      if (!f.synchronous || f.global_batch != g.global_batch || f.optimizer != g.optimizer) continue;
      if (f.reached == f.seeds && !(f.predicted_s_to_target >= fastest)) fastest = f.predicted_s_to_target;
    }
    g.speedup_over_fastest_flush = g.reached == g.seeds ? fastest / g.predicted_s_to_target : kNaN;
  }
  return groups;
}

std::string format_study_table(const Study& study, const std::vector<GroupSummary>& groups) {
  auto value = [](double v, const char* format) {
    return std::isnan(v) ? std::string("-") : fmt::format(fmt::runtime(format), v);
  };
  std::string target;
  if (study.targets.loss) target += fmt::format("val loss <= {}", *study.targets.loss);
  if (study.targets.accuracy)
    target += fmt::format("{}val accuracy >= {}", target.empty() ? "" : ", ", *study.targets.accuracy);
  std::string out =
      fmt::format("Target: {}. Times to target are means over the seeds that reached it.\n\n", target);
  out +=
      "| B | schedule | optimizer | correction | reached | samples | predicted s | measured s | final val "
      "loss "
      "| loss spread | speed-up vs fastest flush |\n";
  out += "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const GroupSummary& g : groups) {
    out += fmt::format("| {} | {} | {} | {} | {}/{} | {} | {} | {} | {:.4f} | {:.4f} | {} |\n",
                       g.global_batch, g.schedule, g.optimizer, g.correction, g.reached, g.seeds,
                       value(g.samples_to_target, "{:.0f}"), value(g.predicted_s_to_target, "{:.3f}"),
                       value(g.measured_s_to_target, "{:.3f}"), g.final_val_loss, g.loss_spread,
                       value(g.speedup_over_fastest_flush, "{:.2f}x"));
  }
  return out;
}

}  // namespace pipesim
