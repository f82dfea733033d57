#include "cost_models/transformer/balanced_stages.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/errors.h"
#include "cost_models/balanced_split.h"
#include "cost_models/transformer/memory_bytes.h"
#include "cost_models/transformer/mtp_modules.h"

namespace pipesim::transformer {
namespace {

// "emb 1-3 4a" for units [first, last): whole layers as 1-based ranges, a lone half as 4a (attention) or
// 4m (MLP), the embedding, final norm and output layer as emb, norm, out.
std::string unit_range_label(const std::vector<UnitCosts>& units, int first, int last) {
  std::vector<std::string> words;
  int range_first = -1, range_last = -1;  // the run of whole layers being collected (0-based)
  auto flush = [&] {
    if (range_first < 0) return;
    words.push_back(range_first == range_last ? fmt::format("{}", range_first + 1)
                                              : fmt::format("{}-{}", range_first + 1, range_last + 1));
    range_first = range_last = -1;
  };
  for (int k = first; k < last; ++k) {
    const UnitCosts& u = units[k];
    const bool whole = u.kind == UnitKind::kAttention && k + 1 < last;
    if (whole) {
      if (range_first < 0) range_first = u.layer;
      range_last = u.layer;
      ++k;  // its MLP half
      continue;
    }
    flush();
    switch (u.kind) {
      case UnitKind::kEmbedding:
        words.push_back("emb");
        break;
      case UnitKind::kAttention:
        words.push_back(fmt::format("{}a", u.layer + 1));
        break;
      case UnitKind::kMlp:
        words.push_back(fmt::format("{}m", u.layer + 1));
        break;
      case UnitKind::kFinalNorm:
        words.push_back("norm");
        break;
      case UnitKind::kOutput:
        words.push_back("out");
        break;
    }
  }
  flush();
  std::string label;
  for (const std::string& w : words) label += (label.empty() ? "" : " ") + w;
  return label;
}

}  // namespace

// A balanced split: contiguous groups of units, by a min-max partition of F + I + W per microbatch under the
// device's memory (cost_models/balanced_split.h).
std::vector<int> balanced_starts(const TransformerSetup& setup, const std::vector<UnitCosts>& units, double b,
                                 int stages, const Limits& limits) {
  const Device d(setup);
  std::vector<PartitionItem> items;
  for (const UnitCosts& u : units) {
    StageCosts alone;
    set_parameters_and_optimizer(alone, setup, d, b, stages, u.matrix_params, u.other_params,
                                 {0, u.matrix_optimizer_bytes}, u.expert_params);
    items.push_back({u.forward_s + u.backward_input_s + u.backward_weight_s,
                     alone.parameter_bytes + alone.gradient_bytes + alone.optimizer_bytes,
                     u.activation_bytes});
  }
  try {
    return min_max_partition(items, stages, setup.profile.usable_memory_bytes(), limits);
  } catch (const InputError& e) {
    throw InputError(fmt::format("layer_split balanced on {}, microbatch size {:g}: {}", setup.profile.source,
                                 b, e.what()));
  }
}

std::vector<StageCosts> balanced_stage_costs(const TransformerSetup& setup, double b, int stages,
                                             const Limits& limits) {
  const Device d(setup);
  const std::vector<UnitCosts> units = rank_units(setup, b);
  std::vector<int> starts = setup.balanced_unit_starts.empty()
                                ? balanced_starts(setup, units, b, stages, limits)
                                : setup.balanced_unit_starts;
  if (static_cast<int>(starts.size()) != stages)
    throw InputError(
        fmt::format("layer_split balanced: {} pinned stage starts for {} stages", starts.size(), stages));
  starts.push_back(static_cast<int>(units.size()));
  // What each layer's backward rebuilds and holds while it runs: all of it, or what op-level recomputation
  // dropped (a MoE layer's more than a dense one's).
  std::vector<double> layer_working_bytes(setup.model.layers, 0.0);
  for (const UnitCosts& u : units) {
    if (u.layer < 0) continue;
    layer_working_bytes[u.layer] += setup.model.recompute == Recompute::kOp
                                        ? u.full_activation_bytes - u.activation_bytes
                                        : u.full_activation_bytes;
  }
  std::vector<StageCosts> result(stages);
  for (int i = 0; i < stages; ++i) {
    StageCosts& c = result[i];
    double matrix_params = 0, other_params = 0, expert_params = 0;
    MatrixOptimizerWork matrix_work;
    for (int k = starts[i]; k < starts[i + 1]; ++k) {
      const UnitCosts& u = units[k];
      add_unit_costs(c, u);
      matrix_params += u.matrix_params;
      other_params += u.other_params;
      expert_params += u.expert_params;
      matrix_work.seconds += u.matrix_optimizer_s;
      matrix_work.state_bytes += u.matrix_optimizer_bytes;
      c.embedding = c.embedding || u.kind == UnitKind::kEmbedding;
      c.output = c.output || u.kind == UnitKind::kOutput;
      // A layer counts when its MLP half (the second) is here and so is its attention half.
      if (u.kind == UnitKind::kMlp && k > starts[i]) ++c.layers;
      const bool layer_part = u.kind == UnitKind::kAttention || u.kind == UnitKind::kMlp;
      const bool rebuilds =
          setup.model.recompute == Recompute::kOp || setup.model.recompute == Recompute::kFull;
      if (layer_part && rebuilds)
        c.recompute_working_bytes = std::max(c.recompute_working_bytes, layer_working_bytes[u.layer]);
      if (layer_part && setup.model.recompute == Recompute::kFull) {
        // A stage that starts at an MLP half keeps that half's input, which its attention half would hold.
        if (u.kind == UnitKind::kMlp && k == starts[i]) {
          c.activation_bytes += 2.0 * setup.model.seq_len * b * setup.model.hidden * d.bytes;
        }
      }
    }
    if (c.embedding && c.output) {
      // One rank's vocab / t rows: one shared matrix where the ends are tied, and no copy for the
      // multi-token prediction modules.
      const double rows = static_cast<double>(setup.model.vocab) * setup.model.hidden / setup.parallel.tensor;
      if (setup.model.tied_embeddings) other_params -= rows;
      other_params -= mtp_embedding_copy_parameters(setup);
    }
    c.units = unit_range_label(units, starts[i], starts[i + 1]);
    set_parameters_and_optimizer(c, setup, d, b, stages, matrix_params, other_params, matrix_work,
                                 expert_params);
  }
  return result;
}

}  // namespace pipesim::transformer
