#include "import/pytorch_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>
#include <regex>

#include "base/errors.h"

namespace pipesim {
namespace {

// "PP:" then stage, action kind, and the microbatch when the action has one.
const std::regex& action_pattern() {
  static const std::regex pattern(R"(PP:(\d+)([A-Z_]+?)(\d*))");
  return pattern;
}

double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double at = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<size_t>(at);
  const size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (at - static_cast<double>(below));
}

}  // namespace

void read_pytorch_trace(const std::string& text, const std::string& source, TracedActions& into) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(fmt::format("{}: not JSON (byte {}): {}", source, e.byte, e.what()));
  } catch (const nlohmann::json::out_of_range& e) {
    throw InputError(fmt::format("{}: not a Chrome trace: {}", source, e.what()));  // a number such as 1e520
  }
  const nlohmann::json* events = &json;
  if (json.is_object()) {
    if (!json.contains("traceEvents")) {
      throw InputError(
          fmt::format("{}: a Chrome trace object needs \"traceEvents\" (torch.profiler's "
                      "export_chrome_trace writes it)",
                      source));
    }
    events = &json["traceEvents"];
  }
  if (!events->is_array())
    throw InputError(fmt::format("{}: \"traceEvents\" is not a list of events", source));
  for (size_t i = 0; i < events->size(); ++i) {
    const nlohmann::json& e = (*events)[i];
    if (!e.is_object() || !e.contains("ph")) continue;
    // json::value throws the library's type_error for a field of another type: say which event and field.
    if (!e["ph"].is_string()) {
      throw InputError(
          fmt::format("{}: event {}: \"ph\" should be a string (the event's phase, \"X\" for a "
                      "complete event), got {}",
                      source, i, e["ph"].dump()));
    }
    if (e["ph"] != "X") continue;
    ++into.events;
    if (e.contains("name") && !e["name"].is_string()) {
      throw InputError(
          fmt::format("{}: event {}: \"name\" should be a string, got {}", source, i, e["name"].dump()));
    }
    const std::string name = e.value("name", "");
    std::smatch match;
    if (!std::regex_match(name, match, action_pattern())) continue;
    if (!e.contains("dur") || !e["dur"].is_number() || e["dur"].get<double>() < 0) {
      throw InputError(
          fmt::format("{}: event {} ({}): \"dur\" should be a duration in microseconds", source, i, name));
    }
    // Digits past int's range would make std::stoi throw out_of_range: far beyond any pipeline anyway.
    if (match[1].length() > 6 || match[3].length() > 9) {
      throw InputError(
          fmt::format("{}: event {} ({}): its stage or microbatch number is out of range", source, i, name));
    }
    const int stage = std::stoi(match[1].str());
    const std::string kind = match[2].str();
    OpKind op = OpKind::F;
    if (kind.size() != 1 || !parse_op_letter(kind[0], op) || op == OpKind::U || match[3].str().empty()) {
      ++into.other_actions[kind];
      continue;
    }
    const int microbatch = std::stoi(match[3].str());
    into.durations_ms[stage][static_cast<size_t>(op)].push_back(e["dur"].get<double>() / 1000.0);
    into.stages = std::max(into.stages, stage + 1);
    into.microbatches = std::max(into.microbatches, microbatch + 1);
    if (op == OpKind::F && stage == 0 && microbatch == 0) ++into.steps;
  }
}

DurationSummary summarize_durations(std::vector<double> values) {
  DurationSummary s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.count = static_cast<int>(values.size());
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / s.count;
  s.median = quantile(values, 0.5);
  s.p10 = quantile(values, 0.1);
  s.p90 = quantile(values, 0.9);
  s.min = values.front();
  s.max = values.back();
  return s;
}

}  // namespace pipesim
