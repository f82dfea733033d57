#include "sweeps/check_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "report/format.h"

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

std::string counterexample_text(const Violation& v) {
  std::string out = fmt::format("{} N={} m={}", v.schedule, v.stages, v.microbatches);
  if (v.accumulation > 0) out += fmt::format(" a={}", v.accumulation);
  out += fmt::format(" seed={}", v.seed);
  if (v.what.starts_with("run failed")) return out + fmt::format(": {}", v.what);
  out += fmt::format(", stage {}", v.stage + 1);
  if (v.microbatch >= 0) out += fmt::format(", microbatch {}", v.microbatch);
  const std::string value = v.value_text.empty() ? std::to_string(v.value) : v.value_text;
  const std::string bound = v.bound_text.empty() ? std::to_string(v.bound) : v.bound_text;
  return out +
         fmt::format(": {} = {} {} {} ({})", v.what, value, v.must_equal ? "≠" : ">", bound, v.bound_name);
}

std::string render_check_report(const CheckReport& report) {
  std::string out = fmt::format("pipesim check: {}\n\n", report.grid);
  std::vector<std::vector<std::string>> rows;
  for (const ScheduleCheckSummary& s : report.schedules) {
    rows.push_back(
        {s.schedule, std::to_string(s.runs), std::to_string(s.skipped), std::to_string(s.failed_runs)});
  }
  out += render_table({"schedule", "runs", "skipped (not allowed)", "failed"}, rows);
  for (const ScheduleCheckSummary& s : report.schedules) {
    if (!s.general_bound_differs) continue;
    out += s.general_bound_broken_runs == 0
               ? fmt::format("{}: the general bound ⌈(L_i−1)/a⌉ held on all {} runs\n", s.schedule, s.runs)
               : fmt::format("{}: the general bound ⌈(L_i−1)/a⌉ broke on {} of {} runs\n", s.schedule,
                             s.general_bound_broken_runs, s.runs);
  }
  if (report.passed()) {
    return out + fmt::format("\nOK: {} runs, every invariant held\n", report.runs);
  }
  out += fmt::format("\nFAILED: {} of {} runs broke an invariant\n", report.failed_runs, report.runs);
  const Violation& v = *report.smallest;
  out += "smallest counterexample: " + counterexample_text(v) + "\n";
  if (v.what.starts_with("run failed")) return out;
  if (v.what == "Δ" && !v.general_bound_check && v.general_bound != v.bound) {
    out += fmt::format("  there the general bound ⌈(L_i−1)/a⌉ = {} {}\n", v.general_bound,
                       v.value <= v.general_bound ? "held" : "broke too");
  }
  return out;
}

}  // namespace pipesim
