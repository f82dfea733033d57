#pragma once
// A scenario: the pipeline shape, the costs, the communication model, the optimizer synchronisation and the
// schedules to compare. Read from YAML (format in README.md) with every key checked.
#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <vector>

#include "cost_models/explicit_costs.h"
#include "cost_models/transformer_costs.h"
#include "schedules/schedule.h"
#include "schedules/schedule_params.h"

namespace pipesim {

struct ScheduleRequest {
  std::string name;
  ScheduleParams params;
};

struct CommSpec {
  enum class Model { kFixedLatency, kLink };
  Model model = Model::kFixedLatency;
  std::vector<TimeNs> latency_ns;      // fixed latency: per sending device; link: one value for all links
  double bandwidth_bytes_per_ns = 0;   // link only (1 GB/s = 1 byte/ns)
};

struct Scenario {
  std::string name;
  std::string source;  // the file it came from
  int stages = 1;
  int microbatches = 1;
  int microbatch_size = 1;
  int batches = 4;
  int seq_len = 0;  // tokens per sample; 0 when unknown (no tokens/s then)
  std::optional<OptimizerSync> sync;  // unset: each schedule's default
  ExplicitCostTable costs;  // explicit `costs:`; empty when `model:` is given
  std::optional<TransformerSetup> transformer;  // `model:` + `hardware:`: costs predicted (cost_models/)
  bool backward_split_given = false;  // the scenario gave I and W separately
  CommSpec comm;
  std::vector<ScheduleRequest> schedules;  // empty: every registered schedule
};

// `overrides` are "dotted.key=value" strings (--set); the value is parsed as YAML.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides = {});
Scenario parse_scenario(const std::string& yaml_text, const std::string& source,
                        const std::vector<std::string>& overrides = {});

// The scenario `pipesim run` uses when none is given.
std::string default_scenario_path();

OptimizerSync parse_sync(const std::string& text, const std::string& where);
std::string sync_name(OptimizerSync sync);

}  // namespace pipesim
