#include "plan/plan_json.h"

namespace pipesim {
namespace {

constexpr CandidateFate kFates[] = {CandidateFate::kNotRunnable,   CandidateFate::kOverMemoryBound,
                                    CandidateFate::kPrunedByBound, CandidateFate::kSimulated,
                                    CandidateFate::kReused,        CandidateFate::kOverMemory,
                                    CandidateFate::kFailed};

bool has_figures(CandidateFate fate) {
  return fate == CandidateFate::kSimulated || fate == CandidateFate::kReused ||
         fate == CandidateFate::kOverMemory;
}

nlohmann::ordered_json candidate_json(const PlanRow& r, double capacity_bytes) {
  const PlanCandidate& c = r.candidate;
  nlohmann::ordered_json j;
  j["schedule"] = r.label;
  j["synchronous"] = r.synchronous;
  j["tensor"] = c.tensor;
  j["context"] = c.context;
  j["pipeline"] = c.pipeline;
  j["data"] = c.data;
  j["expert"] = c.expert;
  j["microbatch_size"] = c.microbatch_size;
  j["microbatches"] = c.microbatches;
  j["recompute"] = recompute_name(c.recompute);
  j["zero"] = c.zero;
  j["even_split"] = c.even_split;
  j["fate"] = fate_name(r.fate);
  if (!r.reason.empty()) j["reason"] = r.reason;
  if (r.fate != CandidateFate::kNotRunnable) {
    j["bounds"] = {{"busiest_work_s", r.busiest_work_s}, {"min_peak_bytes", r.min_peak_bytes}};
  }
  if (has_figures(r.fate)) {
    j["figures"] = {{"step_s", r.step_s},
                    {"job_samples_per_s", r.job_samples_per_s},
                    {"tokens_per_gpu_s", r.tokens_per_gpu_s},
                    {"tflops_per_gpu", r.tflops_per_gpu},
                    {"mfu", r.mfu},
                    {"peak_bytes", r.peak_bytes},
                    {"margin_bytes", capacity_bytes - r.peak_bytes},
                    {"idle_fraction", r.idle_fraction}};
  }
  return j;
}

}  // namespace

nlohmann::ordered_json plan_json(const std::string& scenario_name, const PlanResult& result) {
  nlohmann::ordered_json j;
  j["format"] = "pipesim-plan-1";
  j["scenario"] = scenario_name;
  j["gpus"] = result.gpus;
  j["global_batch"] = result.global_batch;
  j["capacity_bytes"] = result.capacity_bytes;
  j["search_seconds"] = result.seconds;
  nlohmann::ordered_json counts = nlohmann::ordered_json::object();
  for (CandidateFate fate : kFates) counts[fate_name(fate)] = result.count(fate);
  j["counts"] = counts;
  j["best_synchronous"] = result.best_sync;
  j["best_asynchronous"] = result.best_async;
  nlohmann::ordered_json candidates = nlohmann::ordered_json::array();
  for (const PlanRow& r : result.rows) candidates.push_back(candidate_json(r, result.capacity_bytes));
  j["candidates"] = candidates;
  return j;
}

}  // namespace pipesim
