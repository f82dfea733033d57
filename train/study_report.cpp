#include "train/study_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace pipesim {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The target's metric at a point, signed so that lower is better.
double badness(const CurvePoint& p, const StudyTarget& target) {
  return target.metric == StudyTarget::Metric::kLoss ? p.val_loss : -p.val_accuracy;
}
double goal(const StudyTarget& target) {
  return target.metric == StudyTarget::Metric::kLoss ? target.value : -target.value;
}

std::string value(double v, const char* format) {
  return std::isnan(v) ? std::string("-") : fmt::format(fmt::runtime(format), v);
}

}  // namespace

std::optional<TargetCrossing> first_crossing(const std::vector<CurvePoint>& points,
                                             const StudyTarget& target) {
  for (std::size_t i = 0; i < points.size(); ++i) {
    const CurvePoint& p = points[i];
    if (!(badness(p, target) <= goal(target))) continue;
    if (i == 0) {
      return TargetCrossing{static_cast<double>(p.samples), static_cast<double>(p.steps), p.predicted_s,
                            p.measured_s, p.pipelined_s};
    }
    const CurvePoint& q = points[i - 1];  // missed the target: its badness is above the goal
    const double f = (badness(q, target) - goal(target)) / (badness(q, target) - badness(p, target));
    auto lerp = [f](double a, double b) { return a + f * (b - a); };
    return TargetCrossing{lerp(static_cast<double>(q.samples), static_cast<double>(p.samples)),
                          lerp(static_cast<double>(q.steps), static_cast<double>(p.steps)),
                          lerp(q.predicted_s, p.predicted_s), lerp(q.measured_s, p.measured_s),
                          lerp(q.pipelined_s, p.pipelined_s)};
  }
  return std::nullopt;
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

namespace {

std::vector<GroupSummary> summarize_runs(const Study& study, const StudyCurves& curves,
                                         const std::vector<StudyRun>& runs) {
  std::vector<GroupSummary> groups;
  std::map<std::string, std::vector<const std::vector<CurvePoint>*>> seed_curves;
  for (const StudyRun& run : runs) {
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
      g.stages = stages_of(study, run.schedule);
      g.learning_rate = run.optimizer.learning_rate;
      g.swept = run.optimizer.swept && run.schedule.lr_sweep;
      groups.push_back(g);
    }
    seed_curves[run.group()].push_back(&found->second);
  }
  for (GroupSummary& g : groups) {
    const auto& seeds = seed_curves.at(g.group);
    g.seeds = static_cast<int>(seeds.size());
    double final_loss = 0;
    for (const auto* c : seeds) final_loss += c->back().val_loss;
    g.final_val_loss = final_loss / g.seeds;
    g.loss_spread = loss_spread(seeds);
    for (const StudyTarget& target : study.targets) {
      TargetSummary t;
      double samples = 0, steps = 0, predicted = 0, measured = 0, pipelined = 0;
      for (const auto* c : seeds) {
        const std::optional<TargetCrossing> x = first_crossing(*c, target);
        if (!x) continue;
        ++t.reached;
        samples += x->samples;
        steps += x->steps;
        predicted += x->predicted_s;
        measured += x->measured_s;
        pipelined += x->pipelined_s;  // NaN from any seed trained before it was kept: NaN
      }
      t.samples_to_target = t.reached ? samples / t.reached : kNaN;
      t.steps_to_target = t.reached ? steps / t.reached : kNaN;
      t.predicted_s_to_target = t.reached ? predicted / t.reached : kNaN;
      t.measured_s_to_target = t.reached ? measured / t.reached : kNaN;
      t.pipelined_s_to_target = t.reached ? pipelined / t.reached : kNaN;
      g.targets.push_back(t);
    }
  }
  for (std::size_t i = 0; i < study.targets.size(); ++i) {
    for (GroupSummary& g : groups) {
      double fastest = kNaN;
      for (const GroupSummary& f : groups) {
        if (!f.synchronous || f.global_batch != g.global_batch || f.optimizer != g.optimizer ||
            f.stages != g.stages)
          continue;
        const TargetSummary& ft = f.targets[i];
        if (ft.reached == f.seeds && !(ft.predicted_s_to_target >= fastest))
          fastest = ft.predicted_s_to_target;
      }
      TargetSummary& t = g.targets[i];
      t.speedup_over_fastest_flush = t.reached == g.seeds ? fastest / t.predicted_s_to_target : kNaN;
    }
  }
  return groups;
}

}  // namespace

std::vector<GroupSummary> summarize_study(const Study& study, const StudyCurves& curves) {
  return summarize_runs(study, curves, comparison_runs(study, curves));
}

std::vector<GroupSummary> summarize_lr_sweep(const Study& study, const StudyCurves& curves) {
  std::vector<StudyRun> swept;
  for (const StudyRun& run : study_runs(study, curves)) {
    if (run.optimizer.swept && run.schedule.lr_sweep) swept.push_back(run);
  }
  std::vector<GroupSummary> groups = summarize_runs(study, curves, swept);
  // The best rate of each schedule (lowest mean final validation loss), and the one chosen for the others.
  const auto chosen = chosen_learning_rates(study, curves);
  for (GroupSummary& g : groups) {
    const std::string family = g.optimizer.substr(0, g.optimizer.rfind(" lr="));
    for (const GroupSummary& other : groups) {
      const std::string other_family = other.optimizer.substr(0, other.optimizer.rfind(" lr="));
      if (other.global_batch == g.global_batch && other.schedule == g.schedule && other_family == family &&
          other.correction == g.correction && other.final_val_loss < g.final_val_loss)
        g.best_for_schedule = false;
    }
    const auto found = chosen.find({g.global_batch, family});
    g.chosen = found != chosen.end() && study.optimizers[found->second].label == g.optimizer;
  }
  return groups;
}

std::string format_lr_sweep_table(const Study& study, const std::vector<GroupSummary>& groups) {
  if (groups.empty()) return "";
  const StudyTarget& lead = study.targets.front();
  std::string out = fmt::format(
      "Learning-rate sweep: the swept schedules at every rate; `best` marks each schedule's lowest mean "
      "final "
      "validation loss, `chosen` the rate whose swept runs end lowest on average, which every other schedule "
      "trains at (the comparison above).\n\n| B | schedule | optimizer | lr | seeds | final val loss | loss "
      "spread | samples to {} | |\n|---|---|---|---|---|---|---|---|---|\n",
      lead.label());
  for (const GroupSummary& g : groups) {
    const TargetSummary& t = g.targets.front();
    std::string marks;
    if (g.best_for_schedule) marks = "best";
    if (g.chosen) marks += marks.empty() ? "chosen" : ", chosen";
    out += fmt::format("| {} | {} | {} | {:g} | {} | {:.4f} | {:.4f} | {} | {} |\n", g.global_batch,
                       g.schedule, g.optimizer, g.learning_rate, g.seeds, g.final_val_loss, g.loss_spread,
                       t.reached == g.seeds ? value(t.samples_to_target, "{:.0f}")
                                            : fmt::format("{}/{} reached", t.reached, g.seeds),
                       marks);
  }
  return out;
}

std::string format_study_table(const Study& study, const std::vector<GroupSummary>& groups) {
  const StudyTarget& lead = study.targets.front();
  std::string out = fmt::format(
      "Target: {}. Points are taken after the optimizer step, on the same held-out samples for every run; "
      "times to target are interpolated between points and averaged over the seeds that reached it. "
      "Predicted s: the simulator's clock on the study's target setting. Measured s: the replay worker's "
      "compute time over all stages, one after another, on this machine. Pipelined s: the same ops, each at "
      "its measured CPU time, timed on the schedule's plan with a core per device and free transfers "
      "(`-`: a run trained before pipesim kept it).\n\n",
      lead.label());
  if (study.lr_scaling != Study::LrScaling::kNone) {
    out += fmt::format(
        "Learning rates are the optimizers' for a step of B samples, times (step batch / B)^{} for the "
        "schedules "
        "that step on fewer samples (PipeDream b, PACI a b, WPipe N b).\n\n",
        study.lr_scaling == Study::LrScaling::kSqrt ? "1/2" : "1");
  }
  out +=
      "| B | schedule | optimizer | correction | reached | samples | steps | predicted s | measured s | "
      "pipelined s | final val loss | loss spread | speed-up vs fastest flush |\n";
  out += "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const GroupSummary& g : groups) {
    const TargetSummary& t = g.targets.front();
    out += fmt::format("| {} | {} | {} | {} | {}/{} | {} | {} | {} | {} | {} | {:.4f} | {:.4f} | {} |\n",
                       g.global_batch, g.schedule, g.optimizer, g.correction, t.reached, g.seeds,
                       value(t.samples_to_target, "{:.0f}"), value(t.steps_to_target, "{:.0f}"),
                       value(t.predicted_s_to_target, "{:.3f}"), value(t.measured_s_to_target, "{:.3f}"),
                       value(t.pipelined_s_to_target, "{:.3f}"), g.final_val_loss, g.loss_spread,
                       value(t.speedup_over_fastest_flush, "{:.2f}x"));
  }
  if (study.targets.size() < 2) return out;
  out +=
      "\nPredicted seconds to each target (speed-up over the fastest flush):\n\n| B | schedule | optimizer | "
      "correction |";
  std::string rule = "|---|---|---|---|";
  for (const StudyTarget& target : study.targets) {
    out += fmt::format(" {} |", target.label());
    rule += "---|";
  }
  out += "\n" + rule + "\n";
  for (const GroupSummary& g : groups) {
    out += fmt::format("| {} | {} | {} | {} |", g.global_batch, g.schedule, g.optimizer, g.correction);
    for (const TargetSummary& t : g.targets) {
      out += t.reached == g.seeds ? fmt::format(" {} ({}) |", value(t.predicted_s_to_target, "{:.3f}"),
                                                value(t.speedup_over_fastest_flush, "{:.2f}x"))
                                  : fmt::format(" {}/{} reached |", t.reached, g.seeds);
    }
    out += "\n";
  }
  return out;
}

}  // namespace pipesim
