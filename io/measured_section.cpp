#include "io/measured_section.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "base/did_you_mean.h"
#include "io/yaml_reader.h"

namespace pipesim {

MeasuredRun read_measured_section(const YamlReader& r, const YAML::Node& node,
                                  const std::vector<std::string>& schedule_names) {
  std::vector<std::string> allowed = {"source", "reference", "flops", "quote", "schedule", "ranking"};
  for (const MeasuredFigureInfo& info : measured_figures()) allowed.push_back(info.key);
  r.expect_map(node, "measured", allowed);
  MeasuredRun run;
  // Who and where: a comparison with an unnamed measurement cannot be checked or grouped by source.
  if (!node["source"]) r.fail(node, "measured.source", "who published the run (e.g. torchtitan)");
  if (!node["reference"])
    r.fail(node, "measured.reference", "where: repository and path, or paper and table");
  run.source = r.get_string(node["source"], "measured.source");
  run.reference = r.get_string(node["reference"], "measured.reference");
  if (node["flops"]) run.flops = r.get_string(node["flops"], "measured.flops");
  if (node["quote"]) run.quote = r.get_string(node["quote"], "measured.quote");
  if (node["ranking"]) run.ranking = r.get_string(node["ranking"], "measured.ranking");
  for (const MeasuredFigureInfo& info : measured_figures()) {
    const YAML::Node value = node[info.key];
    if (!value) continue;
    const std::string key = std::string("measured.") + info.key;
    const double v = r.get_double(value, key, 0);
    if (!(v > 0)) r.fail(value, key, fmt::format("a {} greater than 0 ({})", info.meaning, info.unit));
    if (info.figure == MeasuredFigure::kMfuPercent && v > 100) r.fail(value, key, "a percentage up to 100");
    run.values.push_back({info.figure, v});
  }
  if (run.values.empty()) {
    std::string keys;
    for (const MeasuredFigureInfo& info : measured_figures())
      keys += std::string(keys.empty() ? "" : ", ") + info.key;
    r.fail(node, "measured", "at least one measured figure: " + keys);
  }
  const bool counts_flops = run.value_of(MeasuredFigure::kModelTflopsPerGpu).has_value() ||
                            run.value_of(MeasuredFigure::kMfuPercent).has_value();
  if (counts_flops && run.flops.empty()) {
    r.fail(node, "measured.flops",
           "how the source counts FLOPs (pipesim counts model FLOPs without recomputation; convert a figure "
           "counted otherwise and say how)");
  }
  if (node["schedule"]) {
    run.schedule = r.get_string(node["schedule"], "measured.schedule");
    if (!schedule_names.empty() &&
        std::find(schedule_names.begin(), schedule_names.end(), run.schedule) == schedule_names.end()) {
      std::string names;
      for (const std::string& n : schedule_names) names += (names.empty() ? "'" : ", '") + n + "'";
      r.fail(node["schedule"], "measured.schedule",
             "one of the scenario's schedules: " + names + did_you_mean(run.schedule, schedule_names));
    }
  }
  return run;
}

}  // namespace pipesim
