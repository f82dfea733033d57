#include "sweeps/check_report_files.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace pipesim {
namespace {

std::string xml_escaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

bool is_smallest_of(const CheckReport& report, const ScheduleCheckSummary& s) {
  return report.smallest && report.smallest->schedule == s.schedule;
}

}  // namespace

std::string check_report_json(const CheckReport& report) {
  using Json = nlohmann::ordered_json;
  Json doc;
  doc["format"] = "pipesim-check";
  doc["format_version"] = 1;
  doc["grid"] = report.grid;
  doc["passed"] = report.passed();
  doc["runs"] = report.runs;
  doc["failed_runs"] = report.failed_runs;
  doc["schedules"] = Json::array();
  for (const ScheduleCheckSummary& s : report.schedules) {
    doc["schedules"].push_back({{"schedule", s.schedule},
                                {"runs", s.runs},
                                {"skipped", s.skipped},
                                {"failed_runs", s.failed_runs},
                                {"general_bound_differs", s.general_bound_differs},
                                {"general_bound_broken_runs", s.general_bound_broken_runs}});
  }
  if (report.smallest) {
    const Violation& v = *report.smallest;
    doc["smallest_counterexample"] = {{"schedule", v.schedule},
                                      {"stages", v.stages},
                                      {"microbatches", v.microbatches},
                                      {"accumulation", v.accumulation},
                                      {"seed", v.seed},
                                      {"stage", v.stage + 1},
                                      {"microbatch", v.microbatch >= 0 ? Json(v.microbatch) : Json()},
                                      {"what", v.what},
                                      {"value", v.value},
                                      {"bound", v.bound},
                                      {"bound_name", v.bound_name},
                                      {"text", counterexample_text(v)}};
  } else {
    doc["smallest_counterexample"] = nullptr;
  }
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string check_report_junit(const CheckReport& report, double seconds) {
  long failures = 0;
  for (const ScheduleCheckSummary& s : report.schedules) failures += s.failed_runs > 0 ? 1 : 0;
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"pipesim check\" tests=\"{}\" failures=\"{}\" time=\"{:.3f}\">\n",
                     report.schedules.size(), failures, seconds);
  out += fmt::format("  <testsuite name=\"pipesim check\" tests=\"{}\" failures=\"{}\" time=\"{:.3f}\">\n",
                     report.schedules.size(), failures, seconds);
  out += fmt::format("    <properties><property name=\"grid\" value=\"{}\"/></properties>\n",
                     xml_escaped(report.grid));
  for (const ScheduleCheckSummary& s : report.schedules) {
    out += fmt::format("    <testcase classname=\"pipesim.check\" name=\"{}\">", xml_escaped(s.schedule));
    if (s.failed_runs > 0) {
      std::string message = fmt::format("{} of {} runs broke an invariant", s.failed_runs, s.runs);
      if (is_smallest_of(report, s))
        message += "; smallest counterexample: " + counterexample_text(*report.smallest);
      out += fmt::format("\n      <failure message=\"{}\" type=\"invariant\">{}</failure>\n    ",
                         xml_escaped(message), xml_escaped(message));
    } else {
      out += fmt::format("<system-out>{} runs, {} grid points not allowed</system-out>", s.runs, s.skipped);
    }
    out += "</testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace pipesim
