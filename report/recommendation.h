#pragma once
// The answer under `pipesim run`'s table: the fastest synchronous run that fits, the fastest run that fits
// overall and the margin between them, asynchronous runs marked as changing the training semantics (with
// their Δ), and a caveat when the runs differ in global batch or sync. When nothing fits: the leanest run's
// need and what would help.
#include <string>
#include <vector>

#include "analysis/run_result.h"

namespace pipesim {

struct RecommendationContext {
  bool transformer = false;         // the costs come from a model
  bool can_recompute_more = false;  // its recomputation is not already full (a remedy to name)
};

std::string recommendation_text(const std::vector<SimulationResult>& results,
                                const RecommendationContext& context = {});

}  // namespace pipesim
