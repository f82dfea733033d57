#include "cost_models/transformer/mtp_modules.h"

#include "cost_models/transformer/moe_layer.h"
#include "cost_models/transformer/shapes_flops.h"

namespace pipesim::transformer {
namespace {

// The model of one module's layer alone: one layer, a MoE where the model's last layer is one.
TransformerModel module_layer_model(const TransformerModel& t) {
  TransformerModel one = t;
  one.layers = 1;
  one.mtp_layers = 0;
  if (t.moe.any()) {
    one.moe.dense_layers = t.moe_layer(t.layers - 1) ? 0 : 1;
    one.moe.layer_step = 1;
  }
  return one;
}

}  // namespace

double mtp_embedding_copy_parameters(const TransformerSetup& setup) {
  if (setup.model.mtp_layers <= 0) return 0;
  return static_cast<double>(setup.model.vocab) * setup.model.hidden / setup.parallel.tensor;
}

UnitCosts mtp_unit(const TransformerSetup& setup, const Device& d, double b) {
  const TransformerModel& t = setup.model;
  UnitCosts m;
  m.kind = UnitKind::kOutput;
  if (t.mtp_layers <= 0) return m;
  TransformerSetup one = setup;
  one.model = module_layer_model(t);
  // Units of the one-layer model: embedding, attention half, MLP half, final norm, output layer.
  const std::vector<UnitCosts> units = rank_units(one, b);
  const UnitCosts& embedding = units[0];
  const UnitCosts& norm = units[3];
  const int tp = setup.parallel.tensor;
  const double h = t.hidden, tokens = t.seq_len * b;
  // What a module runs without holding weights of its own: the output layer and the embedding are the
  // model's, and the three norms (the two inputs' and the module's last) are counted as h each below.
  const auto without_weights = [](UnitCosts u) {
    u.matrix_params = u.expert_params = u.other_params = 0;
    u.matrix_optimizer_s = u.matrix_optimizer_bytes = 0;
    return u;
  };
  UnitCosts module;
  add_to_unit(module, units[1]);
  add_to_unit(module, units[2]);
  add_to_unit(module, without_weights(units[4]));
  add_to_unit(module, without_weights(embedding));  // the shifted tokens' lookup
  for (int k = 0; k < 3; ++k) add_to_unit(module, without_weights(norm));
  // The projection of the concatenated 2h to h, column-parallel.
  const std::vector<Gemm> forward = {{tokens, h / tp, 2 * h}}, input = {{tokens, 2 * h, h / tp}},
                          weight = {{2 * h, h / tp, tokens}};
  module.forward_s += gemm_seconds(d.forward, forward) + d.launch;
  module.backward_input_s += gemm_seconds(d.gemm, input) + d.launch;
  module.backward_weight_s += gemm_seconds(d.weight, weight) + d.launch;
  module.activation_bytes += tokens * 2 * h * d.bytes;  // the projection's input
  module.full_activation_bytes += tokens * 2 * h * d.bytes;
  module.weight_grad_activation_bytes += tokens * (2 * h + h / tp) * d.bytes;
  module.model_flops += flops(forward) + flops(input) + flops(weight);
  module.matrix_params += 2 * h * h / tp;
  module.other_params += 3 * h;
  for (int k = 0; k < t.mtp_layers; ++k) add_to_unit(m, module);
  m.other_params += mtp_embedding_copy_parameters(setup);
  return m;
}

double mtp_parameters(const TransformerModel& t, bool active) {
  if (t.mtp_layers <= 0) return 0;
  const TransformerModel one = module_layer_model(t);
  const double moe = active ? moe_active_mlp_parameters(one) : moe_mlp_parameters(one);
  const double layer = attention_parameters(one) + (one.moe_layer(0) ? moe : mlp_parameters(one));
  return t.mtp_layers * (layer + 2.0 * t.hidden * t.hidden);
}

double mtp_model_flops_per_sample(const TransformerModel& t) {
  if (t.mtp_layers <= 0) return 0;
  const TransformerModel one = module_layer_model(t);
  // One layer's model FLOPs: the one-layer model's less its output layer's.
  const double s = t.seq_len, h = t.hidden, output = 3 * 2.0 * s * h * t.vocab;
  const double layer = model_flops_per_sample(one) - output;
  return t.mtp_layers * (layer + 3 * 2.0 * s * 2 * h * h + output);
}

}  // namespace pipesim::transformer
