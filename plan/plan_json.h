#pragma once
// `pipesim plan --json`: the whole search as one JSON document (schema/pipesim-plan.v1.schema.json), for
// scripts: the job, the fate counts, the best configurations of each kind (indices into the candidates), and
// every candidate with its configuration, fate, bounds and, where it ran, figures, in seconds, bytes and
// per-GPU units.
#include <nlohmann/json.hpp>
#include <string>

#include "plan/plan.h"

namespace pipesim {

nlohmann::ordered_json plan_json(const std::string& scenario_name, const PlanResult& result);

}  // namespace pipesim
