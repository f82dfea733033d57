#pragma once
// The structured result record of a run and the JSON document that holds them, format
// "pipesim-result" version 1, published as schema/pipesim-result.v1.schema.json (README, "Output formats").
// Every figure is a number with its unit in its name, null when unknown (never 0); the schedule's parameters
// are typed; the display label is a convenience only.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/run_result.h"
#include "report/report.h"

namespace pipesim {

inline constexpr const char* kResultFormat = "pipesim-result";
inline constexpr int kResultFormatVersion = 1;

// The scenario the runs came from.
struct ResultsSource {
  std::string scenario_name;
  std::string scenario_path;
};

// A requested run that could not run here (api/run_batch.h): listed under the table and in the document.
struct SkippedRun {
  std::string schedule;  // the schedule's label and the entry's pipeline, as a row would show it
  std::string where;     // where it was requested (file, line, key; or --schedules ...)
  std::string reason;    // one line
};

std::string pipesim_version();

nlohmann::ordered_json schedule_param_json(const ScheduleParamValue& value);
nlohmann::ordered_json result_record(const SimulationResult& result, const ReportOptions& options = {});
// {format, format_version, pipesim_version, scenario: {name, path}, results: [...], skipped: [...]} (skipped
// only when some run was).
nlohmann::ordered_json results_document(const ResultsSource& source,
                                        const std::vector<SimulationResult>& results,
                                        const ReportOptions& options = {},
                                        const std::vector<SkippedRun>& skipped = {});
// The document as text, indented, with a final newline.
std::string results_json_text(const ResultsSource& source, const std::vector<SimulationResult>& results,
                              const ReportOptions& options = {}, const std::vector<SkippedRun>& skipped = {});

}  // namespace pipesim
