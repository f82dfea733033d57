#include "train/study_gaps.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

namespace pipesim {

namespace {

// A group of the comparison: its runs' curves by seed.
struct Group {
  StudyRun first;  // any of its runs (all but the seed agree)
  std::map<std::uint64_t, const std::vector<CurvePoint>*> by_seed;
  bool plain_flush = false;  // 1F1B-flush, no delay mask, not a step-rate baseline
};

double sample_sd(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  double mean = 0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  double squares = 0;
  for (double v : values) squares += (v - mean) * (v - mean);
  return std::sqrt(squares / static_cast<double>(values.size() - 1));
}

std::optional<PairedGap> pair(const Study& study, const Group& group, const Group& reference,
                              bool noise_floor) {
  PairedGap gap;
  const DelayFigures delays = largest_delays(study, group.first);
  gap.delta_max = delays.drift_max;
  gap.tau_max = delays.staleness_max;
  gap.global_batch = group.first.global_batch;
  gap.schedule = group.first.schedule.label();
  gap.optimizer = group.first.optimizer.label;
  gap.correction = executor::delay_correction_name(group.first.correction);
  gap.reference_schedule = reference.first.schedule.label();
  gap.noise_floor = noise_floor;
  // The points both curves have, by samples, taken from the first common seed (every seed of a group has
  // the same grid: the grid depends on the schedule, B and the budget only).
  for (const auto& [seed, curve] : group.by_seed) {
    if (reference.by_seed.contains(seed)) gap.seeds.push_back(seed);
  }
  if (gap.seeds.empty()) return std::nullopt;
  const std::vector<CurvePoint>& mine = *group.by_seed.at(gap.seeds.front());
  const std::vector<CurvePoint>& theirs = *reference.by_seed.at(gap.seeds.front());
  std::vector<std::pair<std::size_t, std::size_t>> common;  // indices into mine and theirs
  for (std::size_t i = 0, j = 0; i < mine.size() && j < theirs.size();) {
    if (mine[i].samples == theirs[j].samples) {
      common.emplace_back(i++, j++);
    } else if (mine[i].samples < theirs[j].samples) {
      ++i;
    } else {
      ++j;
    }
  }
  if (common.empty()) return std::nullopt;
  for (const auto& [i, j] : common) {
    gap.samples.push_back(mine[i].samples);
    gap.reference_steps.push_back(theirs[j].steps);
  }
  std::vector<double> finals;
  for (std::uint64_t seed : gap.seeds) {
    const std::vector<CurvePoint>& a = *group.by_seed.at(seed);
    const std::vector<CurvePoint>& b = *reference.by_seed.at(seed);
    std::vector<double> row;
    for (const auto& [i, j] : common) {
      // Another seed's curve may be cut shorter (never for complete runs): the point is then missing.
      row.push_back(i < a.size() && j < b.size() ? a[i].val_loss - b[j].val_loss : std::nan(""));
    }
    finals.push_back(row.back());
    gap.gap_by_seed.push_back(std::move(row));
  }
  double sum = 0;
  for (double f : finals) sum += f;
  gap.final_mean = sum / static_cast<double>(finals.size());
  gap.final_sd = sample_sd(finals);
  return gap;
}

}  // namespace

std::vector<PairedGap> paired_gaps(const Study& study, const StudyCurves& curves) {
  std::vector<Group> groups;
  std::map<std::string, std::size_t> index;
  for (const StudyRun& run : comparison_runs(study, curves)) {
    const auto found = curves.find(run.key());
    if (found == curves.end() || found->second.empty()) continue;
    auto [it, added] = index.emplace(run.group(), groups.size());
    if (added) {
      Group g;
      g.first = run;
      g.plain_flush = run.schedule.name == "1f1b-flush" && run.schedule.params.empty() &&
                      run.schedule.delay_mask.empty() && !run.schedule.baseline;
      groups.push_back(g);
    }
    groups[it->second].by_seed[run.seed] = &found->second;
  }
  const auto same_setting = [&study](const Group& a, const Group& b) {
    return a.first.global_batch == b.first.global_batch &&
           a.first.optimizer.label == b.first.optimizer.label &&
           stages_of(study, a.first.schedule) == stages_of(study, b.first.schedule);
  };
  std::vector<PairedGap> gaps;
  for (const Group& g : groups) {
    if (g.plain_flush || g.first.schedule.baseline) continue;
    const Group* reference = nullptr;
    // A schedule that steps on fewer microbatches than its batch pairs with its step-rate baseline when the
    // study has one: the same samples per step and the same microbatches in the same order.
    const int per_step = microbatches_per_step(study, g.first.schedule);
    const int m = g.first.schedule.microbatches;
    for (const Group& f : groups) {
      if (f.first.schedule.baseline && per_step < m && f.first.schedule.microbatches == per_step &&
          f.first.global_batch == g.first.global_batch / m * per_step &&
          f.first.optimizer.label == g.first.optimizer.label &&
          stages_of(study, f.first.schedule) == stages_of(study, g.first.schedule)) {
        reference = &f;
      }
    }
    const bool has_baseline = reference != nullptr;
    for (const Group& f : groups) {
      if (has_baseline) break;
      if (!f.plain_flush || !same_setting(f, g)) continue;
      if (reference == nullptr) reference = &f;
      if (f.first.schedule.microbatches == g.first.schedule.microbatches) {
        reference = &f;
        break;
      }
    }
    if (reference == nullptr) continue;
    if (std::optional<PairedGap> gap = pair(study, g, *reference, false)) gaps.push_back(std::move(*gap));
  }
  for (std::size_t i = 0; i < groups.size(); ++i) {
    for (std::size_t j = i + 1; j < groups.size(); ++j) {
      const Group& a = groups[i];
      const Group& b = groups[j];
      if (!a.plain_flush || !b.plain_flush || !same_setting(a, b) ||
          a.first.schedule.microbatches == b.first.schedule.microbatches)
        continue;
      if (std::optional<PairedGap> gap = pair(study, a, b, true)) gaps.push_back(std::move(*gap));
    }
  }
  return gaps;
}

std::string format_paired_gap_table(const std::vector<PairedGap>& gaps) {
  if (gaps.empty()) return "";
  std::string out =
      "Paired gaps: validation loss minus that of the flush it is paired with, seed by seed (the same seed "
      "draws the same weights and samples), in nats; mean ± sample standard deviation over the seeds. The "
      "noise floor is the gap between two flushes that compute the same thing with another m. Δ_max and "
      "τ_max "
      "are the schedule's largest weight-version drift (versions between a microbatch's forward and its "
      "gradient) and gradient staleness (steps between the weights a gradient was computed on and those it "
      "updates), the simulator's on the target setting (1 and 1 for a delay mask).\n\n"
      "| B | schedule | optimizer | correction | paired with | Δ_max | τ_max | seeds | gap at 1/4 | gap at "
      "1/2 | "
      "final gap |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const PairedGap& g : gaps) {
    // The gap at the point nearest a fraction of the run, mean ± sd over seeds.
    const auto at = [&g](double fraction) {
      const std::size_t last = g.samples.size() - 1;
      const std::size_t i = static_cast<std::size_t>(std::lround(fraction * static_cast<double>(last)));
      std::vector<double> values;
      double sum = 0;
      for (const std::vector<double>& row : g.gap_by_seed) {
        values.push_back(row[i]);
        sum += row[i];
      }
      return fmt::format("{:+.4f} ± {:.4f} ({} steps)", sum / static_cast<double>(values.size()),
                         sample_sd(values), g.reference_steps[i]);
    };
    out += fmt::format("| {} | {} | {} | {} | {}{} | {} | {} | {} | {} | {} | {} |\n", g.global_batch,
                       g.schedule, g.optimizer, g.correction, g.reference_schedule,
                       g.noise_floor ? " (noise floor)" : "", g.delta_max, g.tau_max, g.seeds.size(),
                       at(0.25), at(0.5), at(1.0));
  }
  return out;
}

std::string paired_gap_csv(const std::vector<PairedGap>& gaps) {
  std::string out =
      "global_batch,schedule,optimizer,correction,paired_with,noise_floor,delta_max,tau_max,seed,samples,"
      "reference_steps,gap\n";
  for (const PairedGap& g : gaps) {
    for (std::size_t s = 0; s < g.seeds.size(); ++s) {
      for (std::size_t i = 0; i < g.samples.size(); ++i) {
        out +=
            fmt::format("{},{},{},{},{},{},{},{},{},{},{},{:.9g}\n", g.global_batch, g.schedule, g.optimizer,
                        g.correction, g.reference_schedule, g.noise_floor ? 1 : 0, g.delta_max, g.tau_max,
                        g.seeds[s], g.samples[i], g.reference_steps[i], g.gap_by_seed[s][i]);
      }
    }
  }
  return out;
}

}  // namespace pipesim
