#include "sweeps/fidelity_report.h"

#include <fmt/format.h>

#include <filesystem>

#include "report/csv.h"
#include "report/format.h"

namespace pipesim {
namespace {

std::string percent(double fraction) {
  return fmt::format("{:+.1f} %", 100 * fraction);
}

std::string unsigned_percent(double fraction) {
  return fmt::format("{:.1f} %", 100 * fraction);
}

std::string file_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

// One row per measured figure: run, source, figure (unit), measured, predicted, error.
std::vector<std::vector<std::string>> figure_rows(const Fidelity& f) {
  std::vector<std::vector<std::string>> rows;
  for (const FidelityRun& run : f.runs) {
    if (!run.failure.empty()) continue;
    for (const FigureComparison& c : run.figures) {
      const MeasuredFigureInfo& info = measured_figure_info(c.figure);
      const std::optional<double> error = c.relative_error();
      rows.push_back({run.name, run.measured.source, fmt::format("{} ({})", info.meaning, info.unit),
                      measured_figure_text(c.measured),
                      c.predicted ? measured_figure_text(*c.predicted) : "-", error ? percent(*error) : "-"});
    }
  }
  return rows;
}

std::vector<std::vector<std::string>> source_rows(const Fidelity& f) {
  std::vector<std::vector<std::string>> rows;
  for (const FidelityErrors& e : f.sources) {
    rows.push_back(
        {e.source, std::to_string(e.runs), std::to_string(e.speed_runs),
         e.speed_runs ? unsigned_percent(e.speed_mape) : "-", e.speed_runs ? percent(e.speed_bias) : "-",
         e.speed_runs ? percent(e.worst_speed_error) : "-",
         e.memory_runs ? fmt::format("{} ({})", unsigned_percent(e.memory_mape), e.memory_runs) : "-"});
  }
  return rows;
}

std::vector<std::vector<std::string>> ranking_rows(const Fidelity& f) {
  std::vector<std::vector<std::string>> rows;
  for (const FidelityRanking& r : f.rankings) {
    rows.push_back({r.ranking, r.source, std::to_string(r.runs),
                    r.pairs ? fmt::format("{} of {}", r.ordered_as_measured, r.pairs) : "-",
                    r.measured_fastest.empty() ? "-" : r.measured_fastest,
                    r.predicted_fastest.empty() ? "-" : r.predicted_fastest});
  }
  return rows;
}

const std::vector<std::string> kRankingHeader = {
    "ranking", "source", "runs", "pairs as measured", "measured fastest", "predicted fastest"};
constexpr const char* kRankingMeaning =
    "rankings: runs a source compares (configurations of one model, measured.ranking), each pair ordered by "
    "measured and by predicted speed; a pair counts when both measured the same figure and differ.";

const std::vector<std::string> kFigureHeader = {"run", "source", "figure", "measured", "predicted", "error"};
const std::vector<std::string> kSourceHeader = {"source",   "runs",  "speed runs",        "speed MAPE",
                                                "optimism", "worst", "memory MAPE (runs)"};

constexpr const char* kMeaning =
    "error: (predicted - measured) / measured in the figure's unit; a run's speed figure is its first of "
    "time "
    "per step, tokens/s per GPU, TFLOP/s, MFU; speed MAPE: the mean |error| of those; optimism: "
    "the "
    "mean of predicted over measured speed minus 1 (a time per step inverted), positive when pipesim is "
    "faster than the run; memory MAPE over the runs that published a peak.";

std::string failures_text(const Fidelity& f, const std::string& bullet) {
  std::string out;
  for (const FidelityRun& run : f.runs) {
    if (!run.failure.empty()) out += fmt::format("{}{}: {}\n", bullet, file_name(run.path), run.failure);
  }
  return out;
}

std::string markdown_table(const std::vector<std::string>& header,
                           const std::vector<std::vector<std::string>>& rows) {
  auto line = [](const std::vector<std::string>& cells) {
    std::string out = "|";
    for (const std::string& c : cells) out += " " + c + " |";
    return out + "\n";
  };
  std::string out = line(header) + "|";
  for (size_t i = 0; i < header.size(); ++i) out += "---|";
  out += "\n";
  for (const auto& row : rows) out += line(row);
  return out;
}

}  // namespace

std::string fidelity_summary(const Fidelity& f) {
  std::string out =
      render_table(kFigureHeader, figure_rows(f)) + "\n" + render_table(kSourceHeader, source_rows(f));
  out += wrap_lines(kMeaning) + "\n";
  if (!f.rankings.empty()) {
    out += "\n" + render_table(kRankingHeader, ranking_rows(f)) + wrap_lines(kRankingMeaning) + "\n";
  }
  const std::string failures = failures_text(f, "  ");
  if (!failures.empty()) out += "not predicted:\n" + failures;
  return out;
}

std::string fidelity_markdown(const Fidelity& f) {
  std::string out =
      markdown_table(kFigureHeader, figure_rows(f)) + "\n" + markdown_table(kSourceHeader, source_rows(f));
  out += "\n" + std::string(kMeaning) + "\n";
  if (!f.rankings.empty()) {
    out +=
        "\n" + markdown_table(kRankingHeader, ranking_rows(f)) + "\n" + std::string(kRankingMeaning) + "\n";
  }
  const std::string failures = failures_text(f, "- ");
  if (!failures.empty()) out += "\nNot predicted:\n\n" + failures;
  return out;
}

std::string fidelity_csv(const Fidelity& f) {
  std::string out =
      "scenario,source,figure,unit,measured,predicted,relative_error,predicted_by,profile_kind,reference,"
      "failure\n";
  for (const FidelityRun& run : f.runs) {
    const std::string scenario = file_name(run.path);
    if (!run.failure.empty()) {
      out += csv_escaped_line({scenario, run.measured.source, "", "", "", "", "", "", "",
                               run.measured.reference, run.failure}) +
             "\n";
      continue;
    }
    for (const FigureComparison& c : run.figures) {
      const MeasuredFigureInfo& info = measured_figure_info(c.figure);
      const std::optional<double> error = c.relative_error();
      out += csv_escaped_line({scenario, run.measured.source, info.key, info.unit,
                               fmt::format("{:.6g}", c.measured),
                               c.predicted ? fmt::format("{:.6g}", *c.predicted) : "",
                               error ? fmt::format("{:.6g}", *error) : "", run.predicted_by, run.profile_kind,
                               run.measured.reference, ""}) +
             "\n";
    }
  }
  return out;
}

}  // namespace pipesim
