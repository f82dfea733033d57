#include "plan/plan_space.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "base/errors.h"
#include "cost_models/transformer/parallel_comm.h"
#include "schedules/registry.h"

namespace pipesim {
namespace {

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int k = 1; k <= n; ++k) {
    if (n % k == 0) out.push_back(k);
  }
  return out;
}

std::vector<int> default_tensor_degrees(const TransformerSetup& setup, int gpus) {
  std::vector<int> out;
  for (int t : divisors(setup.parallel.gpus_per_node)) {
    // Megatron splits the heads and the key/value groups over the tensor ranks.
    if (gpus % t == 0 && setup.model.heads % t == 0 && setup.model.key_value_heads() % t == 0) {
      out.push_back(t);
    }
  }
  return out;
}

// PACI's accumulation when the request leaves it open: every power of two that divides m (counted in int64:
// doubling past m = 2^30 must not wrap to 0 and divide by it).
std::vector<ScheduleRequest> expanded_for(const ScheduleRequest& request, int microbatches) {
  if (canonical_schedule_name(request.name) != "paci" || request.params.has("accumulation")) {
    return {request};
  }
  std::vector<ScheduleRequest> out;
  for (std::int64_t a = 1; a <= microbatches; a *= 2) {
    if (microbatches % a != 0) continue;
    ScheduleRequest copy = request;
    copy.params.set("accumulation", std::to_string(a));
    out.push_back(std::move(copy));
  }
  return out;
}

}  // namespace

std::string default_plan_schedules() {
  return "gpipe,1f1b-flush,interleaved-1f1b:chunks=2,interleaved-1f1b:chunks=3,interleaved-1f1b:chunks=4,"
         "interleaved-1f1b:chunks=6,zb-h1,zb-v,v-half,dualpipe-v,pipedream-2bw,paci";
}

int plan_global_batch(const Scenario& scenario, const PlanSpaceOptions& options) {
  if (options.global_batch > 0) return options.global_batch;
  // The scenario's pipeline is one replica: its batch times its data-parallel degree is the job's (in int64:
  // each factor fits an int, their product need not).
  const std::int64_t replicas = scenario.transformer ? scenario.transformer->parallel.data : 1;
  const std::int64_t replica_batch =
      scenario.global_batch > 0 ? scenario.global_batch
                                : static_cast<std::int64_t>(scenario.microbatches) * scenario.microbatch_size;
  const std::int64_t batch = replica_batch * replicas;
  if (batch > kMaxPlanGlobalBatch) {
    throw InputError(fmt::format(
        "{}: the job's global batch is {} samples ({} per replica x parallel.data = {}), above the {} "
        "`pipesim plan` takes; give a smaller one with --global-batch",
        scenario.source, batch, replica_batch, replicas, kMaxPlanGlobalBatch));
  }
  return static_cast<int>(batch);
}

namespace {

// The expert-parallel degrees for a stage's `ranks` (t x c x d over the expert-tensor degree): those given
// that divide them and the routed experts, or every power of two that does (1 for a dense model).
std::vector<int> expert_degrees(const TransformerModel& model, const std::vector<int>& given, int ranks) {
  const int d = ranks;
  std::vector<int> out;
  const auto fits = [&](int e) {
    return e >= 1 && d % e == 0 && (e == 1 || (model.moe.any() && model.moe.experts % e == 0));
  };
  if (!given.empty()) {
    for (int e : given)
      if (fits(e)) out.push_back(e);
    return out;
  }
  for (int e = 1; e <= d; e *= 2)
    if (fits(e)) out.push_back(e);
  return out;
}

}  // namespace

std::vector<PlanCandidate> plan_candidates(const Scenario& scenario, const PlanSpaceOptions& options) {
  if (!scenario.transformer) {
    throw InputError(
        fmt::format("{}: `pipesim plan` needs a transformer scenario (model: and hardware:), not "
                    "explicit costs: it predicts each configuration's costs from the model",
                    scenario.source));
  }
  if (options.gpus < 1) throw InputError("--gpus: expected a positive number of GPUs");
  const TransformerSetup& setup = *scenario.transformer;
  const int batch = plan_global_batch(scenario, options);
  const std::vector<int> tensor =
      options.tensor.empty() ? default_tensor_degrees(setup, options.gpus) : options.tensor;
  const std::vector<int> sizes =
      options.microbatch_sizes.empty() ? std::vector<int>{1, 2, 4, 8} : options.microbatch_sizes;
  const std::vector<Recompute> recompute =
      options.recompute.empty()
          ? std::vector<Recompute>{Recompute::kNone, Recompute::kSelective, Recompute::kFull}
          : options.recompute;
  const std::vector<int> zero = options.zero.empty() ? std::vector<int>{0, 1, 2, 3} : options.zero;
  const std::vector<int> context = options.context.empty() ? std::vector<int>{1} : options.context;
  for (int c : context) {
    if (const std::string needed = context_parallel_requirement(setup.model, c); !needed.empty()) {
      throw InputError(fmt::format("--context {}: expected {}", c, needed));
    }
  }
  for (int e : options.expert) {
    if (e > 1 && !setup.model.moe.any())
      throw InputError(fmt::format("--expert {}: expected 1 for a dense model (no model.moe)", e));
  }
  std::vector<PlanCandidate> out;
  int shapes = 0;  // (t, c, p, d) that use every GPU
  for (int t : tensor)
    for (int cp : context) {
      // t and c each divide the GPUs first: their product of two list values up to 10^6 could wrap.
      if (t < 1 || cp < 1 || options.gpus % t != 0 || (options.gpus / t) % cp != 0) continue;
      const int tc = t * cp;
      const std::vector<int> pipeline =
          options.pipeline.empty() ? divisors(options.gpus / tc) : options.pipeline;
      for (int p : pipeline) {
        if (p < 1 || p > setup.model.layers || (options.gpus / tc) % p != 0) continue;
        const int d = options.gpus / (tc * p);
        ++shapes;
        if (batch % d != 0) continue;  // every replica takes the same share of the batch
        const int per_replica = batch / d;
        // The experts regroup a stage's t x c x d ranks: e x u (the expert-tensor degree) of them.
        const int expert_tensor = setup.parallel.expert_tensor > 0 ? setup.parallel.expert_tensor : t;
        const int stage_ranks = t * cp * d;
        for (int e : stage_ranks % expert_tensor == 0
                         ? expert_degrees(setup.model, options.expert, stage_ranks / expert_tensor)
                         : std::vector<int>{1})
          for (int b : sizes) {
            if (b < 1 || per_replica % b != 0) continue;
            const int m = per_replica / b;
            for (const ScheduleRequest& request : options.schedules) {
              // A layer_split list fits one number of stages per model copy (p x chunks): elsewhere it would
              // rule the candidate out unsaid, so its layers are split evenly there.
              const bool even_split =
                  setup.split == LayerSplit::kExplicit &&
                  static_cast<int>(setup.stage_layers.size()) !=
                      make_schedule(request.name, request.params)->layout(p).stages_per_pipeline();
              for (const ScheduleRequest& schedule : expanded_for(request, m)) {
                for (Recompute r : recompute) {
                  for (int z : zero) {
                    if (z > 0 && d * cp == 1) continue;  // nothing to shard over
                    PlanCandidate candidate{t, p, d, cp, b, m, r, z, schedule, even_split, e};
                    out.push_back(std::move(candidate));
                  }
                }
              }
            }
          }
      }
    }
  if (shapes == 0) {
    throw InputError(
        fmt::format("--gpus {}: no tensor x context x pipeline x data split uses them all (tensor degrees "
                    "tried: {}; context: {}; pipeline at most {} layers)",
                    options.gpus, fmt::join(tensor, ","), fmt::join(context, ","), setup.model.layers));
  }
  if (out.empty()) {
    throw InputError(fmt::format(
        "global batch {}: no configuration on {} GPUs splits it evenly over the data replicas and "
        "microbatches "
        "(give --global-batch a multiple of the data-parallel degrees, or other --microbatch-sizes)",
        batch, options.gpus));
  }
  return out;
}

Scenario scenario_for_candidate(const Scenario& base, const PlanCandidate& c, bool sequence_parallel) {
  Scenario s = base;
  s.stages = c.pipeline;
  s.microbatches = c.microbatches;
  s.microbatch_size = c.microbatch_size;
  s.global_batch = 0;
  s.schedules = {c.schedule};
  s.pinned_pipeline_keys.clear();
  TransformerSetup& t = *s.transformer;
  t.parallel.tensor = c.tensor;
  t.parallel.data = c.data;
  t.parallel.context = c.context;
  t.parallel.expert = c.expert;
  t.parallel.zero = c.zero;
  t.parallel.sequence_parallel = sequence_parallel && c.tensor > 1;
  t.model.recompute = c.recompute;
  if (c.even_split) {
    t.split = LayerSplit::kEven;
    t.stage_layers.clear();
  }
  return s;
}

std::string candidate_shape_text(const PlanCandidate& c) {
  return fmt::format("t={}{} p={} d={}{} b={} m={} recompute={} zero={}", c.tensor,
                     c.context > 1 ? fmt::format(" c={}", c.context) : "", c.pipeline, c.data,
                     c.expert > 1 ? fmt::format(" e={}", c.expert) : "", c.microbatch_size, c.microbatches,
                     recompute_name(c.recompute), c.zero);
}

}  // namespace pipesim
