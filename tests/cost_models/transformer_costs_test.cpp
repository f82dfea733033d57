// The transformer cost model: FLOP, byte and parameter counts against hand-computed values, GEMM shapes that
// add up to the FLOP formulas, and where the time comes from (GEMMs, element-wise traffic, launches, the
// link).
#include <gtest/gtest.h>

#include <cmath>

#include "base/errors.h"
#include "cost_models/transformer/collectives.h"
#include "cost_models/transformer/cost_model.h"
#include "cost_models/transformer/device.h"
#include "cost_models/transformer/layer_split.h"
#include "cost_models/transformer/memory_bytes.h"
#include "cost_models/transformer/parallel_comm.h"
#include "cost_models/transformer/shapes_flops.h"
#include "cost_models/transformer/stage_costs.h"
#include "cost_models/transformer/units.h"

namespace pipesim {
namespace {

// h=64, 4 heads, s=32, vocab 100; b=2 below. Hand-computed:
//   F = s·b·h(24h+4s) = 32·2·64·(1536+128) = 6,815,744      I = 4096·(1536+256) = 7,340,032
//   W = 24·s·b·h² = 6,291,456                               M_B = s·b(34h+5·a·s) = 64·(2176+640) = 180,224
//   M_W = 32·s·b·h = 131,072                                params/layer = 12h² = 49,152
// Megatron's GPT as Korthikanti et al. and the Zero Bubble paper count it: eager attention, dropout.
TransformerModel small_model() {
  TransformerModel t;
  t.layers = 4;
  t.hidden = 64;
  t.heads = 4;
  t.seq_len = 32;
  t.vocab = 100;
  t.attention = AttentionKind::kEager;
  t.dropout = true;
  return t;
}

// Every GEMM runs at `tflops` whatever its shape (a flat grid from 1 to 2^20), memory moves `gb_per_s`.
HardwareProfile flat_profile(double tflops, double gb_per_s, double launch_us, double link_gb_per_s,
                             double link_latency_us) {
  HardwareProfile p;
  p.source = "flat";
  p.memory_bandwidth_gb_per_s = gb_per_s;
  p.launch_overhead_us = launch_us;
  p.link = LinkSpec{link_gb_per_s, link_latency_us, "test", nullptr};
  const std::vector<double> sizes = {1, 1 << 20};
  p.gemm.emplace_back("bf16", sizes, sizes, sizes, std::vector<double>(8, tflops));
  return p;
}

TransformerSetup setup_with(const HardwareProfile& profile, double fwd_passes = 0, double bwd_passes = 0) {
  TransformerSetup s{small_model(), profile, LayerSplit::kEven, {}, {}, {}, {}};
  s.model.forward_elementwise_passes = fwd_passes;
  s.model.backward_elementwise_passes = bwd_passes;
  return s;
}

TEST(TransformerCosts, FlopAndByteCountsMatchHandComputedValues) {
  const TransformerModel t = small_model();
  EXPECT_DOUBLE_EQ(layer_forward_flops(t, 2), 6'815'744);
  EXPECT_DOUBLE_EQ(layer_backward_input_flops(t, 2), 7'340'032);
  EXPECT_DOUBLE_EQ(layer_backward_weight_flops(t, 2), 6'291'456);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(t, 2), 180'224);
  EXPECT_DOUBLE_EQ(layer_weight_grad_activation_bytes(t, 2), 131'072);
  EXPECT_DOUBLE_EQ(layer_parameters(t), 49'152);
  TransformerModel fp32 = t;
  fp32.dtype = "fp32";
  EXPECT_DOUBLE_EQ(layer_activation_bytes(fp32, 2), 2 * 180'224);
}

// A head size of the model's own (Qwen3, Gemma: a·d != h). small_model with d = 32 (a·d = k·d = 128 = 2h):
//   params: attention 2h·ad + 2h·kd = 16,384 + 16,384, MLP 2h·4h = 32,768: 65,536 per layer
//   F = 2·s·b·P + 4·s²·b·ad = 2·64·65,536 + 4·1,024·2·128 = 9,437,184
//   M_B: attention 64·(5h + 4ad + 4kd) + eager scores 64·a·s·5 = 86,016 + 40,960; MLP 64·(5h + 4f) = 86,016
TEST(TransformerCosts, AHeadSizeOfItsOwnWidensQkvAndTheProjection) {
  TransformerModel t = small_model();
  t.head_dim = 32;
  EXPECT_DOUBLE_EQ(attention_parameters(t), 32'768);
  EXPECT_DOUBLE_EQ(layer_parameters(t), 65'536);
  EXPECT_DOUBLE_EQ(layer_forward_flops(t, 2), 9'437'184);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(t, 2), 212'992);
  // head_dim = h / a is the model without it, figure for figure.
  TransformerModel same = small_model();
  same.head_dim = 16;
  EXPECT_DOUBLE_EQ(layer_forward_flops(same, 2), 6'815'744);
  EXPECT_DOUBLE_EQ(layer_backward_input_flops(same, 2), 7'340'032);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(same, 2), 180'224);
  EXPECT_DOUBLE_EQ(layer_weight_grad_activation_bytes(same, 2), 131'072);
  EXPECT_DOUBLE_EQ(layer_parameters(same), 49'152);
}

// The norm (model.norm): RMSNorm keeps a scale per channel, LayerNorm a scale and a bias. small_model: the
// whole model is 4 layers of 49,152, the embedding and the output layer (vocab x h = 6,400 each) and the
// final norm (2h = 128 or h = 64). On 2 stages of the balanced split (the split that prices the final norm as
// a unit of its own) the last stage holds it: h = 64 fewer there. Time and activations do not change (the
// norms' traffic is the element-wise passes').
TEST(TransformerCosts, RmsNormKeepsOneWeightPerChannelInTheFinalNorm) {
  const TransformerModel layer_norm = small_model();
  TransformerModel rms_norm = small_model();
  rms_norm.norm = NormKind::kRmsNorm;
  EXPECT_EQ(layer_norm.norm_parameters(), 128);
  EXPECT_EQ(rms_norm.norm_parameters(), 64);
  EXPECT_DOUBLE_EQ(model_parameters(layer_norm), 4 * 49'152 + 2 * 6'400 + 128);
  EXPECT_DOUBLE_EQ(model_parameters(rms_norm), 4 * 49'152 + 2 * 6'400 + 64);
  EXPECT_DOUBLE_EQ(layer_parameters(rms_norm), layer_parameters(layer_norm));  // per-layer norms: not counted
  TransformerSetup with_layer_norm = setup_with(flat_profile(1, 1e9, 0, 1, 0), 3, 2);
  with_layer_norm.split = LayerSplit::kBalanced;
  TransformerSetup with_rms_norm = with_layer_norm;
  with_rms_norm.model.norm = NormKind::kRmsNorm;
  const std::vector<StageCosts> a = transformer_stage_costs(with_layer_norm, 2, 2);
  const std::vector<StageCosts> b = transformer_stage_costs(with_rms_norm, 2, 2);
  EXPECT_DOUBLE_EQ(a[0].parameters + a[1].parameters, 4 * 49'152 + 2 * 6'400 + 128);
  EXPECT_DOUBLE_EQ(b[1].parameters, a[1].parameters - 64);
  EXPECT_DOUBLE_EQ(b[1].parameter_bytes, a[1].parameter_bytes - 64 * 2);  // bf16
  EXPECT_DOUBLE_EQ(a[0].parameters, b[0].parameters);
  for (int stage = 0; stage < 2; ++stage) {
    EXPECT_DOUBLE_EQ(a[stage].forward_s, b[stage].forward_s);
    EXPECT_DOUBLE_EQ(a[stage].backward_input_s, b[stage].backward_input_s);
    EXPECT_DOUBLE_EQ(a[stage].activation_bytes, b[stage].activation_bytes);
  }
}

TEST(TransformerCosts, ZeroBubbleModelsHaveTheirNamedSizes) {
  struct Case {
    int layers, hidden;
    double billions;
  };
  for (const Case c :
       {Case{22, 2304, 1.5}, Case{30, 4096, 6.2}, Case{46, 5120, 14.6}, Case{62, 6144, 28.3}}) {
    TransformerModel t;
    t.layers = c.layers;
    t.hidden = c.hidden;
    t.vocab = 32000;
    const double params = c.layers * layer_parameters(t) + 32000.0 * c.hidden;
    EXPECT_NEAR(params / 1e9, c.billions, 0.05) << c.layers << " layers";
  }
}

TEST(TransformerCosts, LayerSplits) {
  EXPECT_EQ(split_layers(10, 4, LayerSplit::kEven), (std::vector<int>{3, 3, 2, 2}));
  EXPECT_EQ(split_layers(62, 32, LayerSplit::kZeroBubble)[0], 1);
  EXPECT_EQ(split_layers(62, 32, LayerSplit::kZeroBubble)[1], 2);
  EXPECT_EQ(split_layers(62, 32, LayerSplit::kZeroBubble)[31], 1);
  EXPECT_EQ(split_layers(22, 8, LayerSplit::kZeroBubble), (std::vector<int>{2, 3, 3, 3, 3, 3, 3, 2}));
  EXPECT_EQ(split_layers(23, 8, LayerSplit::kZeroBubble), (std::vector<int>{2, 4, 3, 3, 3, 3, 3, 2}));
  EXPECT_EQ(split_layers(4, 4, LayerSplit::kZeroBubble), (std::vector<int>{0, 2, 2, 0}));
  EXPECT_EQ(split_layers(5, 1, LayerSplit::kZeroBubble), (std::vector<int>{5}));
  EXPECT_THROW(split_layers(3, 4, LayerSplit::kEven), InputError);
  EXPECT_THROW(split_layers(1, 4, LayerSplit::kZeroBubble), InputError);
}

TEST(TransformerCosts, GemmShapesAddUpToTheFlopFormulas) {
  // 1 TFLOP/s everywhere, no element-wise time, no launches: time = FLOPs / 1e12 exactly.
  const TransformerSetup s = setup_with(flat_profile(1, 1e9, 0, 1, 0));
  const std::vector<StageCosts> stages = transformer_stage_costs(s, 2, 2);
  const TransformerModel& t = s.model;
  // Stage 2 of 2 (even split: 2 layers) holds the output layer: 2·s·b·h·vocab per GEMM, one in F, I and W.
  const double out = 2.0 * 64 * 64 * 100;
  EXPECT_NEAR(stages[1].forward_s, (2 * layer_forward_flops(t, 2) + out) / 1e12 + 16.0 * 64 * 100 / 1e18,
              1e-15);
  EXPECT_NEAR(stages[1].backward_input_s,
              (2 * layer_backward_input_flops(t, 2) + out) / 1e12 + 8.0 * 64 * 100 / 1e18, 1e-15);
  EXPECT_NEAR(stages[1].backward_weight_s, (2 * layer_backward_weight_flops(t, 2) + out) / 1e12, 1e-15);
  // Stage 1 holds the embedding: a gather of s·b·h 16-bit values, written once (2·s·b·h·2 bytes moved).
  EXPECT_NEAR(stages[0].forward_s, 2 * layer_forward_flops(t, 2) / 1e12 + 2.0 * 64 * 64 * 2 / 1e18, 1e-15);
}

TEST(TransformerCosts, ElementwiseTimeIsPassesTimesActivationBytesOverBandwidth) {
  // GEMMs practically free (1e9 TFLOP/s), 1 GB/s memory, 3 forward passes and 2 backward passes.
  const TransformerSetup s = setup_with(flat_profile(1e9, 1, 0, 1, 0), 3, 2);
  const StageCosts c = transformer_stage_costs(s, 2, 4)[1];  // a middle stage: 1 layer
  EXPECT_EQ(c.layers, 1);
  EXPECT_NEAR(c.forward_s, 3 * 180'224 / 1e9, 1e-9);
  EXPECT_NEAR(c.backward_input_s, 2 * 180'224 / 1e9, 1e-9);
  EXPECT_NEAR(c.backward_weight_s, 0, 1e-9);
}

TEST(TransformerCosts, LaunchOverheadPerKernel) {
  const TransformerSetup s = setup_with(flat_profile(1e9, 1e9, 10, 1, 0));
  const StageCosts c = transformer_stage_costs(s, 2, 4)[1];
  EXPECT_NEAR(c.forward_s, 17 * 10e-6, 1e-9);  // Megatron's GPT layer: 17 kernels forward
  EXPECT_NEAR(c.backward_input_s, 20 * 10e-6, 1e-9);
  EXPECT_NEAR(c.backward_weight_s, 10 * 10e-6, 1e-9);
}

TEST(TransformerCosts, StageBytesParametersAndTransfer) {
  const TransformerSetup s = setup_with(flat_profile(1, 1, 0, 2, 5));  // link 2 GB/s, 5 us
  const std::vector<StageCosts> stages = transformer_stage_costs(s, 2, 2);
  EXPECT_DOUBLE_EQ(stages[0].parameters, 2 * 49'152 + 100 * 64);
  EXPECT_DOUBLE_EQ(stages[1].parameters, 2 * 49'152 + 100 * 64);
  EXPECT_DOUBLE_EQ(stages[0].parameter_bytes, 2 * stages[0].parameters);
  EXPECT_DOUBLE_EQ(stages[0].gradient_bytes, 2 * stages[0].parameters);
  EXPECT_DOUBLE_EQ(stages[0].optimizer_bytes, 12 * stages[0].parameters);  // AdamW: 2 + 2 + 12 = 16 per param
  EXPECT_DOUBLE_EQ(stages[0].activation_bytes, 2 * 180'224);
  EXPECT_DOUBLE_EQ(stages[0].weight_grad_activation_bytes, 2 * 131'072);
  // The last stage also keeps the output layer's input and the fp32 softmax of the logits.
  EXPECT_DOUBLE_EQ(stages[1].activation_bytes, 2 * 180'224 + 64 * 64 * 2 + 4 * 64 * 100);
  EXPECT_DOUBLE_EQ(stages[1].transfer_bytes, 32 * 2 * 64 * 2);
  EXPECT_NEAR(stages[0].transfer_s, 8192 / 2e9 + 5e-6, 1e-15);
}

// A profile's measured element-wise and optimizer bandwidths replace its copy bandwidth for those terms.
TEST(TransformerCosts, MeasuredElementwiseAndOptimizerBandwidthsAreUsed) {
  HardwareProfile p = flat_profile(1e9, 1, 0, 1, 0);  // GEMMs free, 1 GB/s copies
  p.elementwise_gb_per_s = 4;
  p.optimizer_gb_per_s = 7;
  TransformerSetup s = setup_with(p, 3, 2);
  const StageCosts middle = transformer_stage_costs(s, 2, 4)[1];
  EXPECT_NEAR(middle.forward_s, 3 * 180'224 / 4e9, 1e-12);
  EXPECT_NEAR(middle.backward_input_s, 2 * 180'224 / 4e9, 1e-12);
  s.optimizer.type = OptimizerKind::kAdamW;
  EXPECT_NEAR(transformer_stage_costs(s, 2, 2)[0].optimizer_s, (2 * 49'152 + 100 * 64) * 28 / 7e9, 1e-12);
}

// A profile with transposed grids charges the forward at nt's rate and the weight gradient at tn's.
TEST(TransformerCosts, EachPhaseUsesItsGemmLayout) {
  HardwareProfile p = flat_profile(1, 1e9, 0, 1, 0);  // nn at 1 TFLOP/s, memory practically free
  const TransformerSetup plain = setup_with(p);
  const std::vector<double> sizes = {1, 1 << 20};
  p.gemm_nt.emplace_back("bf16", sizes, sizes, sizes, std::vector<double>(8, 0.5));   // half the rate
  p.gemm_tn.emplace_back("bf16", sizes, sizes, sizes, std::vector<double>(8, 0.25));  // a quarter
  const TransformerSetup transposed = setup_with(p);
  const StageCosts a = transformer_stage_costs(plain, 2, 4)[1],
                   b = transformer_stage_costs(transposed, 2, 4)[1];
  EXPECT_NEAR(b.forward_s, 2 * a.forward_s, 1e-12);
  EXPECT_NEAR(b.backward_input_s, a.backward_input_s, 1e-12);
  EXPECT_NEAR(b.backward_weight_s, 4 * a.backward_weight_s, 1e-12);
}

// The host's per-op overhead (issuing the op and waiting for it) is charged once per op, B included.
TEST(TransformerCosts, HostOverheadOncePerOp) {
  HardwareProfile p = flat_profile(1, 1, 0, 1, 0);
  const TransformerSetup plain = setup_with(p);
  p.host_overhead_us = 9;
  const TransformerSetup with_host = setup_with(p);
  const PipelineLayout layout = PipelineLayout::linear(2);
  const TransformerCostModel a(plain, 2, layout), b(with_host, 2, layout);
  for (const OpKind kind : {OpKind::F, OpKind::B, OpKind::I, OpKind::W, OpKind::U})
    EXPECT_EQ(b.duration({kind, false, 1, 0}) - a.duration({kind, false, 1, 0}), 9'000) << op_letter(kind);
}

// Without a peer link, a transfer goes through host memory: down, then up.
TEST(TransformerCosts, TransfersWithoutAPeerLinkAreStagedThroughTheHost) {
  HardwareProfile p = flat_profile(1, 1, 0, 1, 0);
  p.link.reset();
  EXPECT_FALSE(p.stage_link().has_value());
  EXPECT_DOUBLE_EQ(transfer_seconds(p, 1e6), 0);
  p.device_to_host = LinkSpec{40, 6, "d2h", nullptr};
  p.host_to_device = LinkSpec{60, 4, "h2d", nullptr};
  const std::optional<LinkSpec> staged = p.stage_link();
  ASSERT_TRUE(staged.has_value());
  EXPECT_DOUBLE_EQ(staged->bandwidth_gb_per_s, 24);  // 1 / (1/40 + 1/60)
  EXPECT_DOUBLE_EQ(staged->latency_us, 10);
  EXPECT_NEAR(transfer_seconds(p, 1e6), 1e6 / 40e9 + 1e6 / 60e9 + 10e-6, 1e-15);
  p.link = LinkSpec{100, 1, "peer", nullptr};  // a peer link wins
  EXPECT_NEAR(transfer_seconds(p, 1e6), 1e6 / 100e9 + 1e-6, 1e-15);
}

TEST(OptimizerKind, OneNameTableForEveryOptimizer) {
  for (const auto& [name, kind] : optimizer_names()) EXPECT_EQ(optimizer_name(kind), name);
  EXPECT_EQ(names_of(optimizer_names()),
            (std::vector<std::string>{"sgd", "adamw", "nadam", "muon", "lion", "adan", "soap"}));
}

TEST(TransformerCosts, OptimizerStateAndStepTime) {
  TransformerSetup s = setup_with(flat_profile(1, 1, 0, 1, 0));  // 1 GB/s memory
  const double params = 2 * 49'152 + 100 * 64;
  s.optimizer.type = OptimizerKind::kAdamW;
  // Reads grad (2) + state (12), writes state (12) + weights (2): 28 bytes per parameter.
  EXPECT_NEAR(transformer_stage_costs(s, 2, 2)[0].optimizer_s, params * 28 / 1e9, 1e-12);
  // NAdam keeps AdamW's two moments and master weights: the same state and traffic.
  s.optimizer.type = OptimizerKind::kNAdam;
  EXPECT_DOUBLE_EQ(transformer_stage_costs(s, 2, 2)[0].optimizer_bytes, 12 * params);
  EXPECT_NEAR(transformer_stage_costs(s, 2, 2)[0].optimizer_s, params * 28 / 1e9, 1e-12);
  s.optimizer.type = OptimizerKind::kSgd;
  EXPECT_DOUBLE_EQ(transformer_stage_costs(s, 2, 2)[0].optimizer_bytes, 4 * params);
  s.optimizer.type = OptimizerKind::kMuon;  // momentum + master on the layers, AdamW on the embedding
  const StageCosts muon = transformer_stage_costs(s, 2, 2)[0];
  EXPECT_DOUBLE_EQ(muon.optimizer_bytes, 8 * 2 * 49'152 + 12 * 100 * 64);
  // 5 Newton-Schulz iterations per matrix r x c (r = h): 4r²c + 2r³ FLOPs each; c = 3h, h, 4h, 4h.
  const double h = 64, ns_flops = 5 * ((4 * h * h * 3 * h + 2 * h * h * h) + (4 * h * h * h + 2 * h * h * h) +
                                       2 * (4 * h * h * 4 * h + 2 * h * h * h));
  EXPECT_NEAR(muon.optimizer_s, (2 * 49'152 * 20 + 100 * 64 * 28) / 1e9 + 2 * ns_flops / 1e12, 1e-12);
  // SOAP per matrix r x c: AdamW's per-parameter state and traffic; fp32 L, R, Q_L, Q_R (8 (r² + c²)
  // bytes); per step three rotations (2rc·c + 2rc·r each), L and R (2r²c + 2c²r), and every 5th step two
  // eigendecompositions of 9n³.
  s.optimizer.type = OptimizerKind::kSoap;
  s.optimizer.precondition_frequency = 5;
  double soap_bytes = 0, soap_flops = 0;
  for (const double c : {3 * h, h, 4 * h, 4 * h}) {
    soap_bytes += 8 * (h * h + c * c);
    soap_flops +=
        3 * (2 * h * c * c + 2 * h * c * h) + 2 * h * h * c + 2 * c * c * h + 9 * (h * h * h + c * c * c) / 5;
  }
  const StageCosts soap = transformer_stage_costs(s, 2, 2)[0];
  EXPECT_DOUBLE_EQ(soap.optimizer_bytes, 12 * params + 2 * soap_bytes);
  EXPECT_NEAR(soap.optimizer_s, params * 28 / 1e9 + 2 * soap_flops / 1e12, 1e-12);
  s.optimizer.type = OptimizerKind::kMuon;
  s.optimizer.state_bytes_per_param = 6;
  EXPECT_DOUBLE_EQ(transformer_stage_costs(s, 2, 2)[0].optimizer_bytes, 6 * params);
}

TEST(TransformerCosts, SmallMicrobatchesAreSlowerPerSampleOnARealProfile) {
  // A GEMM grid where small m runs at a quarter of the rate of large m.
  HardwareProfile p = flat_profile(1, 1e9, 0, 1, 0);
  const std::vector<double> sizes = {64, 4096};
  p.gemm.clear();
  p.gemm.emplace_back("bf16", sizes, sizes, sizes, std::vector<double>{25, 25, 25, 25, 100, 100, 100, 100});
  const TransformerSetup s = setup_with(p);
  const double per_sample_b1 = transformer_stage_costs(s, 1, 4)[1].forward_s;
  const double per_sample_b8 = transformer_stage_costs(s, 8, 4)[1].forward_s / 8;
  EXPECT_GT(per_sample_b1, 1.5 * per_sample_b8);
}

TEST(TransformerCosts, CostModelRoundsSecondsToNanoseconds) {
  const TransformerSetup s = setup_with(flat_profile(1, 1e9, 0, 1, 0));
  const PipelineLayout layout = PipelineLayout::linear(2);
  const TransformerCostModel model(s, 2, layout);
  const StageCosts& c = model.stages()[0];
  EXPECT_EQ(model.duration(forward(0, 7)), std::llround(c.forward_s * 1e9));
  EXPECT_EQ(model.duration(backward(0, 7)), std::llround((c.backward_input_s + c.backward_weight_s) * 1e9));
  EXPECT_EQ(model.activation_bytes(0), 2 * 180'224);
  EXPECT_EQ(model.weight_grad_activation_bytes(0), 2 * 131'072);
}

TEST(TransformerCosts, UnknownDtypeIsAnError) {
  TransformerSetup s = setup_with(flat_profile(1, 1, 0, 1, 0));
  s.model.dtype = "fp8";
  EXPECT_THROW(transformer_stage_costs(s, 1, 2), InputError);
  s.model.dtype = "fp16";  // a valid dtype the profile lacks
  try {
    transformer_stage_costs(s, 1, 2);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("has no GEMM measurements for dtype 'fp16' (it has: bf16)"),
              std::string::npos)
        << e.what();
  }
}

// Today's transformer: h = 64, a = 4 query heads, k = 2 key/value heads (d = 16), SwiGLU of width f = 160,
// s = 32, no dropout; b = 2 (64 tokens). Hand counts:
//   params: attention 2h² + 2h·k·d = 8192 + 4096 = 12,288; MLP 3hf = 30,720; P = 43,008
//   F = 2·64·P + 4s²bh = 5,505,024 + 524,288 = 6,029,312         W = 2·64·P = 5,505,024
//   I (flash) = 2·64·P + 8s²bh + 2s²bh (the scores recomputed) = 5,505,024 + 1,310,720 = 6,815,744
//   M_B (flash): attention 64·(8h + 4kd) = 64·640 = 40,960 + softmax statistics 4·64·a = 1,024;
//                MLP 64·(4h + 6f) = 64·1,216 = 77,824; total 119,808
//   M_W = 2·64·((h + h+2kd) + 2h + (h+2f) + (f+h)) = 128·928 = 118,784
TransformerModel modern_model() {
  TransformerModel t;
  t.layers = 4;
  t.hidden = 64;
  t.heads = 4;
  t.kv_heads = 2;
  t.mlp = MlpKind::kSwiglu;
  t.ffn_hidden = 160;
  t.seq_len = 32;
  t.vocab = 100;
  return t;  // flash attention, no dropout, no recomputation: the defaults
}

TEST(TransformerCosts, GqaSwigluFlashCountsMatchHandCounts) {
  const TransformerModel t = modern_model();
  EXPECT_DOUBLE_EQ(attention_parameters(t), 12'288);
  EXPECT_DOUBLE_EQ(mlp_parameters(t), 30'720);
  EXPECT_DOUBLE_EQ(layer_parameters(t), 43'008);
  EXPECT_DOUBLE_EQ(layer_forward_flops(t, 2), 6'029'312);
  EXPECT_DOUBLE_EQ(layer_backward_input_flops(t, 2), 6'815'744);
  EXPECT_DOUBLE_EQ(layer_backward_weight_flops(t, 2), 5'505'024);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(t, 2), 119'808);
  EXPECT_DOUBLE_EQ(layer_weight_grad_activation_bytes(t, 2), 118'784);
  // Untied: both ends hold vocab·h; tied: once. Plus the final norm's 2h.
  EXPECT_DOUBLE_EQ(model_parameters(t), 4 * 43'008 + 2 * 6'400 + 128);
  TransformerModel tied = t;
  tied.tied_embeddings = true;
  EXPECT_DOUBLE_EQ(model_parameters(tied), 4 * 43'008 + 6'400 + 128);
}

TEST(TransformerCosts, EagerAttentionStoresTheScoresAndFlashDoesNot) {
  TransformerModel eager = modern_model();
  eager.attention = AttentionKind::kEager;
  // The softmax, 2·a·s bytes per token: 64·4·32·2 = 16,384 more than the flash count less its statistics.
  EXPECT_DOUBLE_EQ(layer_activation_bytes(eager, 2), 119'808 - 1'024 + 16'384);
  // With dropout: the mask and output of the probabilities (3·a·s more per token) and the two outputs' masks.
  eager.dropout = true;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(eager, 2), 119'808 - 1'024 + 5 * 8'192 + 2 * 64 * 64);
  // The eager backward does not recompute the scores: 8s²bh.
  EXPECT_DOUBLE_EQ(layer_backward_input_flops(eager, 2), 5'505'024 + 1'048'576);
}

TEST(TransformerCosts, RecomputationTradesActivationsForBackwardWork) {
  // Selective on eager attention: the scores are not stored, and I reruns QKᵀ and PV (4s²bh).
  TransformerModel selective = modern_model();
  selective.attention = AttentionKind::kEager;
  selective.recompute = Recompute::kSelective;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(selective, 2), 40'960 + 77'824);
  EXPECT_DOUBLE_EQ(layer_backward_input_flops(selective, 2), 5'505'024 + 1'048'576 + 524'288);
  // Selective on flash attention changes nothing: flash already recomputes the scores.
  TransformerModel flash_selective = modern_model();
  flash_selective.recompute = Recompute::kSelective;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(flash_selective, 2), 119'808);
  EXPECT_DOUBLE_EQ(layer_backward_input_flops(flash_selective, 2), 6'815'744);
  // Full: the layer keeps its input (2·s·b·h bytes) and I reruns the whole forward.
  TransformerModel full = modern_model();
  full.recompute = Recompute::kFull;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(full, 2), 2 * 64 * 64);
  EXPECT_DOUBLE_EQ(layer_full_activation_bytes(full, 2), 119'808);
  EXPECT_DOUBLE_EQ(layer_backward_input_flops(full, 2), 6'815'744 + 6'029'312);
  // MFU counts the model's FLOPs once whatever is recomputed: 3 x 2·P per token + 12s²h per sample (the
  // scores once forward, twice backward), plus the output layer's 3 x 2·h·vocab per token.
  const double per_sample = 4 * (3 * 2.0 * 32 * 43'008 + 12.0 * 32 * 32 * 64) + 3 * 2.0 * 32 * 64 * 100;
  EXPECT_DOUBLE_EQ(model_flops_per_sample(full), per_sample);
  EXPECT_DOUBLE_EQ(model_flops_per_sample(modern_model()), per_sample);
}

// torchtitan's op-level policy on the modern model (h 64, q 64 and k/v 32 wide, SwiGLU f 160, 64 tokens): the
// backward reruns wk, wo and w3, 2 x 64 x (32·64 + 64·64 + 160·64) = 2,097,152 FLOPs, and every memory-bound
// op; each layer keeps its input, q, v, the attention output and statistics (64 x (2·64 + 2·(2·64 + 32)) +
// 1,024 bytes) and w1's and w2's outputs (64 x (2·160 + 2·64)).
TEST(TransformerCosts, OpLevelRecomputationRerunsEveryOtherMatmulAndTheMemoryBoundOps) {
  TransformerModel op = modern_model();
  op.recompute = Recompute::kOp;
  EXPECT_DOUBLE_EQ(layer_backward_input_flops(op, 2), 6'815'744 + 2'097'152);
  EXPECT_DOUBLE_EQ(layer_forward_flops(op, 2), 6'029'312);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(op, 2), 29'696 + 28'672);
  EXPECT_DOUBLE_EQ(layer_full_activation_bytes(op, 2), 119'808);
  EXPECT_DOUBLE_EQ(model_flops_per_sample(op), model_flops_per_sample(modern_model()));
  // A GeLU MLP's 6th matmul is its down projection.
  TransformerModel gelu = op;
  gelu.mlp = MlpKind::kGelu;
  TransformerModel gelu_none = gelu;
  gelu_none.recompute = Recompute::kNone;
  EXPECT_DOUBLE_EQ(layer_backward_input_flops(gelu, 2) - layer_backward_input_flops(gelu_none, 2),
                   2.0 * 64 * (32 * 64 + 64 * 64 + 64 * 160));
  // On 1 TFLOP/s with 1 GB/s memory: I gains the GEMMs' 2.1 us and the forward's element-wise passes; the
  // layer holds what it dropped while its backward runs.
  TransformerSetup s = setup_with(flat_profile(1, 1, 0, 1, 0));
  s.model = modern_model();
  const StageCosts none = transformer_stage_costs(s, 2, 4)[1];
  s.model.recompute = Recompute::kOp;
  const StageCosts rerun = transformer_stage_costs(s, 2, 4)[1];
  const double elementwise_forward = s.model.forward_elementwise_passes * 119'808 / 1e9;
  EXPECT_NEAR(rerun.backward_input_s - none.backward_input_s, 2'097'152 / 1e12 + elementwise_forward, 1e-12);
  EXPECT_DOUBLE_EQ(rerun.recompute_working_bytes, 119'808 - 58'368);
  EXPECT_EQ(recompute_name(Recompute::kOp), "op");
}

TEST(TransformerCosts, FullRecomputationChargesTheForwardInsideTheBackwardAndHoldsOneLayer) {
  // 1 TFLOP/s everywhere, no element-wise time, no launches.
  TransformerSetup s = setup_with(flat_profile(1, 1e9, 0, 1, 0));
  s.model = modern_model();
  s.model.forward_elementwise_passes = s.model.backward_elementwise_passes = 0;
  const StageCosts none = transformer_stage_costs(s, 2, 4)[1];
  s.model.recompute = Recompute::kFull;
  const StageCosts full = transformer_stage_costs(s, 2, 4)[1];
  EXPECT_NEAR(full.backward_input_s - none.backward_input_s, none.forward_s, 1e-15);
  EXPECT_NEAR(full.forward_s, none.forward_s, 1e-18);
  EXPECT_DOUBLE_EQ(full.recompute_working_bytes, 119'808);
  EXPECT_DOUBLE_EQ(none.recompute_working_bytes, 0);
  EXPECT_DOUBLE_EQ(full.model_flops, none.model_flops);
}

TEST(TransformerCosts, SwigluWidthDefaultsToLlamasRule) {
  TransformerModel t;
  t.hidden = 4096;
  t.mlp = MlpKind::kSwiglu;
  EXPECT_EQ(t.ffn(), 11008);  // Llama-2-7B
  t.mlp = MlpKind::kGelu;
  EXPECT_EQ(t.ffn(), 16384);
  t.ffn_hidden = 1000;
  EXPECT_EQ(t.ffn(), 1000);
}

// Flash attention's products run inside one fused kernel at the attention efficiency times the grid's best
// rate, over the causal share of the score tiles: s = 256 is n = 2 blocks of 128, so 3 of 4 tiles. With a
// flat 1 TFLOP/s grid, no element-wise time and no launches, a middle stage's one layer takes (b = 2, h =
// 64):
//   F = 2·512·P / 1e12 + 4s²bh · share / (efficiency · 1e12)
//   I = 2·512·P / 1e12 + (8 + 2)s²bh · share / (efficiency · 1e12)   (flash recomputes the scores)
TEST(TransformerCosts, FlashAttentionRunsTheCausalShareAtItsOwnRate) {
  TransformerSetup s = setup_with(flat_profile(1, 1e9, 0, 1, 0));
  s.model = modern_model();
  s.model.seq_len = 256;
  s.model.forward_elementwise_passes = s.model.backward_elementwise_passes = 0;
  const double tokens = 512, P = 43'008, s2bh = 256.0 * 256 * 2 * 64;
  auto middle = [&](const TransformerSetup& setup) { return transformer_stage_costs(setup, 2, 4)[1]; };
  const double rate = kDefaultFlashAttentionEfficiency * 1e12;
  const StageCosts causal = middle(s);
  EXPECT_NEAR(causal.forward_s, 2 * tokens * P / 1e12 + 4 * s2bh * 0.75 / rate, 1e-15);
  EXPECT_NEAR(causal.backward_input_s, 2 * tokens * P / 1e12 + 10 * s2bh * 0.75 / rate, 1e-15);
  EXPECT_NEAR(causal.backward_weight_s, 2 * tokens * P / 1e12, 1e-15);
  // Without the mask every tile is computed.
  TransformerSetup full = s;
  full.model.causal = false;
  EXPECT_NEAR(middle(full).forward_s, 2 * tokens * P / 1e12 + 4 * s2bh / rate, 1e-15);
  // One block (s <= 128): the diagonal tile is the whole product.
  TransformerSetup short_seq = s;
  short_seq.model.seq_len = 128;
  const double short_s2bh = 128.0 * 128 * 2 * 64;
  EXPECT_NEAR(middle(short_seq).forward_s, 2 * 256 * P / 1e12 + 4 * short_s2bh / rate, 1e-15);
  // A fitted efficiency replaces the default; eager attention runs its products on the grid, all of them.
  ProfileFit fit;
  fit.attention_efficiency = 0.25;
  fit.source = "test";
  TransformerSetup fitted = s;
  fitted.profile = with_fit(s.profile, fit);
  EXPECT_NEAR(middle(fitted).forward_s, 2 * tokens * P / 1e12 + 4 * s2bh * 0.75 / 0.25e12, 1e-15);
  TransformerSetup eager = s;
  eager.model.attention = AttentionKind::kEager;
  EXPECT_NEAR(middle(eager).forward_s, 2 * tokens * P / 1e12 + 4 * s2bh / 1e12, 1e-15);
  // MFU counts the full products whatever the mask (Megatron's convention).
  EXPECT_DOUBLE_EQ(causal.model_flops, middle(full).model_flops);
}

TEST(TransformerCosts, AFitScalesGemmsElementwiseAndHostOverhead) {
  HardwareProfile raw = flat_profile(2, 10, 0, 1, 0);
  raw.host_overhead_us = 7;
  ProfileFit fit;
  fit.gemm_efficiency = 0.5;
  fit.elementwise_efficiency = 4;
  fit.host_overhead_us = 3;
  fit.source = "test";
  const HardwareProfile p = with_fit(raw, fit);
  EXPECT_DOUBLE_EQ(p.gemm_table("bf16").tflops_at(100, 100, 100), 1);
  EXPECT_DOUBLE_EQ(p.gemm_table("bf16").best_tflops(), 1);
  // Bandwidths stay as measured (a fitted one could exceed the memory's); the layers' element-wise passes
  // take 1/4 of their time instead: 3 forward passes over 180,224 bytes at 10 GB/s, GEMMs free.
  EXPECT_DOUBLE_EQ(p.elementwise_bandwidth_gb_per_s(), 10);
  TransformerSetup s = setup_with(flat_profile(1e9, 10, 0, 1, 0), 3, 2);
  s.profile = with_fit(s.profile, fit);
  EXPECT_NEAR(transformer_stage_costs(s, 2, 4)[1].forward_s, 3 * 180'224 / 10e9 / 4, 1e-12);
  EXPECT_DOUBLE_EQ(p.host_overhead_us, 3);
  EXPECT_TRUE(p.fit.fitted());
  ProfileFit keep_overhead = fit;
  keep_overhead.host_overhead_us = -1;
  EXPECT_DOUBLE_EQ(with_fit(raw, keep_overhead).host_overhead_us, 7);
  for (double bad : {0.0, -1.0, 11.0, std::nan("")}) {
    ProfileFit wrong = fit;
    wrong.gemm_efficiency = bad;
    EXPECT_THROW(with_fit(raw, wrong), InputError) << bad;
  }
}

}  // namespace
}  // namespace pipesim

namespace pipesim {
namespace {

// The job around the pipeline: 1 TFLOP/s flat GEMMs, free element-wise work and launches, a 100 GB/s, 10 us
// link; a middle stage of 4 holds one layer (b = 2: 64 tokens, activations 64 x 64 x 2 = 8,192 bytes).
TransformerSetup job_setup() {
  return setup_with(flat_profile(1, 1e12, 0, 100, 10));
}
constexpr double kLayerActivationBytes = 32 * 2 * 64 * 2;
const LinkSpec kJobLink{100, 10, "test", nullptr};

TEST(JobModel, TensorParallelismHalvesEachGemmAndAddsTheStatedAllReduces) {
  TransformerSetup s = job_setup();
  const StageCosts one = transformer_stage_costs(s, 2, 4)[1];
  EXPECT_NEAR(one.forward_s, 6'815'744 / 1e12, 1e-15);
  s.parallel.tensor = 2;
  const StageCosts two = transformer_stage_costs(s, 2, 4)[1];
  // Two all-reduces of the layer's activations over 2 ranks in F and in I: 2 (p - 1) (α + n / (p β)) each.
  const double all_reduce = 2 * 1 * (10e-6 + kLayerActivationBytes / 2 / 100e9);
  EXPECT_NEAR(all_reduce_seconds(kLayerActivationBytes, 2, kJobLink), all_reduce, 1e-18);
  EXPECT_NEAR(two.forward_s, 6'815'744 / 2 / 1e12 + 2 * all_reduce, 1e-15);
  EXPECT_NEAR(two.backward_input_s, 7'340'032 / 2 / 1e12 + 2 * all_reduce, 1e-15);
  EXPECT_NEAR(two.backward_weight_s, 6'291'456 / 2 / 1e12, 1e-15);  // W issues no collective
  EXPECT_DOUBLE_EQ(two.model_flops, one.model_flops / 2);           // per GPU
  EXPECT_DOUBLE_EQ(two.parameters, 49'152 / 2);
  // Activations per Korthikanti et al.: s b h (10 + 24 / t + 5 a s / (h t)) = 4096 x 27 bytes.
  EXPECT_DOUBLE_EQ(two.activation_bytes, 4096 * 27);
  s.parallel.sequence_parallel = true;  // s b h (34 / t + 5 a s / (h t)) = 4096 x 22
  const StageCosts sequence = transformer_stage_costs(s, 2, 4)[1];
  EXPECT_DOUBLE_EQ(sequence.activation_bytes, 4096 * 22);
  EXPECT_NEAR(sequence.forward_s, two.forward_s, 1e-15);  // reduce-scatter + all-gather = all-reduce (ring)
  EXPECT_DOUBLE_EQ(sequence.transfer_bytes, kLayerActivationBytes / 2);
  // Full recomputation reruns the forward's two all-reduces inside I.
  s.model.recompute = Recompute::kFull;
  s.parallel.sequence_parallel = false;
  const StageCosts full = transformer_stage_costs(s, 2, 4)[1];
  EXPECT_NEAR(full.backward_input_s - (6'815'744 + 7'340'032) / 2 / 1e12, 4 * all_reduce, 1e-15);
  // The balanced split's units add up to the same layer.
  s.model.recompute = Recompute::kNone;
  const std::vector<UnitCosts> units = transformer_units(s, 2);
  EXPECT_NEAR(units[1].forward_s + units[2].forward_s, two.forward_s, 1e-15);
  EXPECT_DOUBLE_EQ(units[1].matrix_params + units[2].matrix_params, 49'152 / 2);
}

TEST(JobModel, OverlappedTensorCollectivesShowOnlyWhatTheWeightGemmsCannotCover) {
  ParallelConfig p;
  p.tensor = 2;
  EXPECT_EQ(transformer::exposed_tensor_comm_seconds(p, 10, 3), 10);  // off by default
  p.overlap_tensor_comm = true;
  EXPECT_EQ(transformer::exposed_tensor_comm_seconds(p, 10, 3), 7);  // C - G
  EXPECT_EQ(transformer::exposed_tensor_comm_seconds(p, 10, 8), 5);  // never under one chunk: C / t
  p.tensor = 1;
  EXPECT_EQ(transformer::exposed_tensor_comm_seconds(p, 10, 3), 10);
  // A layer at t = 2 on the 1 TFLOP/s profile: the forward's weight GEMMs per rank (QKV 64 x 96 x 64, the
  // projection 64 x 64 x 32, up 64 x 128 x 64, down 64 x 64 x 128) take 3,145,728 FLOPs = 3.15 us, under the
  // forward's two all-reduces (40 us): those microseconds are hidden, the attention core's are not.
  TransformerSetup s = job_setup();
  s.parallel.tensor = 2;
  const StageCosts blocking = transformer_stage_costs(s, 2, 4)[1];
  s.parallel.overlap_tensor_comm = true;
  const StageCosts overlapped = transformer_stage_costs(s, 2, 4)[1];
  EXPECT_NEAR(blocking.forward_s - overlapped.forward_s, 3'145'728 / 1e12, 1e-15);
  EXPECT_LT(overlapped.backward_input_s, blocking.backward_input_s);
  EXPECT_EQ(overlapped.backward_weight_s, blocking.backward_weight_s);  // W issues no collective
  EXPECT_EQ(overlapped.model_flops, blocking.model_flops);
}

TEST(JobModel, CollectivesInsideANodeRunAtTheProfilesMeasuredCurveAndAcrossNodesOnTheNetwork) {
  TransformerSetup s = job_setup();
  s.parallel.tensor = 2;
  const StageCosts alpha_beta = transformer_stage_costs(s, 2, 4)[1];
  auto curve = std::make_shared<CollectiveCurve>();
  curve->ranks = 2;
  curve->bytes = {1, 1e12};
  curve->bus_gb_per_s = {1, 1};  // 1 GB/s at every size above a byte
  s.profile.intra_node_collectives = curve;
  const StageCosts measured = transformer_stage_costs(s, 2, 4)[1];
  // Two all-reduces in F, each 2 (p - 1) / p · n / 1 GB/s, in place of the α-β model's.
  const double was = all_reduce_seconds(kLayerActivationBytes, 2, kJobLink);
  const double now = kLayerActivationBytes / 1e9;
  EXPECT_NEAR(measured.forward_s - alpha_beta.forward_s, 2 * (now - was), 1e-15);
  // Groups across nodes keep the network's α-β link: the curve describes a node's fabric.
  HardwareProfile profile;
  profile.link = LinkSpec{370, 15, "node", nullptr};
  profile.inter_node_link = LinkSpec{46, 25, "NIC", nullptr};
  profile.intra_node_collectives = curve;
  EXPECT_EQ(transformer::spanning_link(profile, 8).collectives, nullptr);
}

TEST(JobModel, ARingAcrossNodesSplitsItsStepsOverTheNicsOfTheRanksANodeHolds) {
  HardwareProfile profile;
  profile.link = LinkSpec{370, 15, "node", nullptr};
  profile.inter_node_link = LinkSpec{46, 25, "NIC", nullptr};
  EXPECT_DOUBLE_EQ(transformer::spanning_link(profile, 1).bandwidth_gb_per_s, 46);
  EXPECT_DOUBLE_EQ(transformer::spanning_link(profile, 4).bandwidth_gb_per_s, 184);
  EXPECT_DOUBLE_EQ(transformer::spanning_link(profile, 8).bandwidth_gb_per_s, 368);
  EXPECT_DOUBLE_EQ(transformer::spanning_link(profile, 16).bandwidth_gb_per_s, 370);  // the node's link
  EXPECT_DOUBLE_EQ(transformer::spanning_link(profile, 8).latency_us, 25);            // the network's
  // Without a link inside nodes nothing bounds the rings: each rank's own NIC.
  profile.link.reset();
  EXPECT_DOUBLE_EQ(transformer::spanning_link(profile, 8).bandwidth_gb_per_s, 46);
}

TEST(JobModel, DataParallelGradientsReduceAtEachStepOnTheLinkTheyCross) {
  TransformerSetup s = job_setup();
  s.profile.memory_bandwidth_gb_per_s = 1;  // the optimizer step: 28 bytes per parameter at 1 GB/s
  const double params = 2 * 49'152 + 100 * 64;
  const double step = params * 28 / 1e9;
  EXPECT_NEAR(transformer_stage_costs(s, 2, 2)[0].optimizer_s, step, 1e-12);
  s.parallel.data = 4;  // 4 replicas x 2 stages = 8 GPUs: one node
  EXPECT_NEAR(transformer_stage_costs(s, 2, 2)[0].optimizer_s,
              step + 2 * 3 * (10e-6 + 2 * params / 4 / 100e9), 1e-12);
  // Nodes of 4 GPUs: a data-parallel group (ranks 0, 1, 2, 3 apart by 1... with tensor 2: 0, 2, 4, 6) spans
  // two nodes and needs the inter-node link.
  s.parallel.tensor = 2;
  s.parallel.gpus_per_node = 4;
  try {
    transformer_stage_costs(s, 2, 2);
    ADD_FAILURE() << "no error without an inter-node link";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no inter_node_link"), std::string::npos) << e.what();
  }
  s.profile.inter_node_link = LinkSpec{25, 20, "test", nullptr};
  // A node holds 2 ranks of each data-parallel group: as NCCL runs it, one ring per NIC, each crossing the
  // network once per node, so a ring step moves at 2 x 25 GB/s (below the node's 100), at the network's
  // latency.
  const LinkSpec across{50, 20, "test", nullptr};
  const double tp_params = params / 2;
  EXPECT_NEAR(transformer_stage_costs(s, 2, 2)[0].optimizer_s,
              tp_params * 28 / 1e9 + all_reduce_seconds(2 * tp_params, 4, across), 1e-12);
  EXPECT_NEAR(data_parallel_reduce_seconds(s, 1e6, 2), 2 * 3 * (20e-6 + 1e6 / 4 / 50e9), 1e-15);
  {
    // Gradients reduced in fp32 move twice the bf16 bytes; ZeRO's all-gather of the weights does not.
    TransformerSetup fp32 = s;
    fp32.parallel.gradient_reduce_dtype = "fp32";
    EXPECT_NEAR(data_parallel_reduce_seconds(fp32, 1e6, 2), 2 * 3 * (20e-6 + 2e6 / 4 / 50e9), 1e-15);
    fp32.parallel.zero = 1;
    EXPECT_NEAR(data_parallel_reduce_seconds(fp32, 1e6, 2),
                3 * (20e-6 + 2e6 / 4 / 50e9) + 3 * (20e-6 + 1e6 / 4 / 50e9), 1e-15);
  }
  // Overlapped with the last gradient op (its 3 units: the embedding and 2 layers, each reducing as W makes
  // its gradients), only max(R / 3, R - 2 W / 3) outlasts it; that runs before the step's barrier, and the
  // step behind the barrier is the update alone. Without overlap, or without a barrier, the whole reduction
  // is the step's.
  const StageCosts first = transformer_stage_costs(s, 2, 2)[0];
  const double reduce = all_reduce_seconds(2 * tp_params, 4, across);
  EXPECT_NEAR(first.gradient_reduce_s, reduce, 1e-15);
  const double exposed = std::max(reduce / 3, reduce - first.backward_weight_s * 2 / 3);
  EXPECT_NEAR(first.gradient_reduce_exposed_s, exposed, 1e-15);
  const TransformerCostModel model(s, 2, PipelineLayout::linear(2));
  const Action u = optimizer_step(0, 0, true);
  EXPECT_EQ(model.before_barrier_ns(u), std::llround(exposed * 1e9));
  EXPECT_EQ(model.duration(u) - model.before_barrier_ns(u),
            std::llround((first.optimizer_s - reduce + exposed) * 1e9) - std::llround(exposed * 1e9));
  EXPECT_EQ(model.duration(optimizer_step(0, 0, false)), std::llround(first.optimizer_s * 1e9));
  EXPECT_EQ(model.before_barrier_ns(optimizer_step(0, 0, false)), 0);
  EXPECT_EQ(model.before_barrier_ns(forward(0, 0)), 0);
  s.parallel.overlap_grad_reduce = false;
  const TransformerCostModel blocking(s, 2, PipelineLayout::linear(2));
  EXPECT_EQ(blocking.before_barrier_ns(u), 0);
  EXPECT_EQ(blocking.duration(u), std::llround(first.optimizer_s * 1e9));
}

TEST(JobModel, ZeroShardsStateThenGradientsThenWeightsByHandCount) {
  TransformerSetup s = job_setup();
  const double params = 2 * 49'152 + 100 * 64;
  s.parallel.data = 4;
  const StageCosts plain = transformer_stage_costs(s, 2, 2)[0];
  EXPECT_DOUBLE_EQ(plain.parameter_bytes + plain.gradient_bytes + plain.optimizer_bytes, 16 * params);
  s.parallel.zero = 1;  // 2 + 2 + 12 / 4 bytes per parameter
  const StageCosts zero1 = transformer_stage_costs(s, 2, 2)[0];
  EXPECT_DOUBLE_EQ(zero1.parameter_bytes + zero1.gradient_bytes + zero1.optimizer_bytes, 7 * params);
  s.parallel.zero = 2;  // 2 + 2 / 4 + 3
  const StageCosts zero2 = transformer_stage_costs(s, 2, 2)[0];
  EXPECT_DOUBLE_EQ(zero2.parameter_bytes + zero2.gradient_bytes + zero2.optimizer_bytes, 5.5 * params);
  s.parallel.zero = 3;                       // 16 / 4, and the weights gathered before every F and I
  s.parallel.overlap_weight_gather = false;  // blocking: compute + gathers
  const StageCosts zero3 = transformer_stage_costs(s, 2, 2)[0];
  EXPECT_DOUBLE_EQ(zero3.parameter_bytes + zero3.gradient_bytes + zero3.optimizer_bytes, 4 * params);
  const double gather = 3 * (10e-6 + 2 * params / 4 / 100e9);
  EXPECT_NEAR(zero3.forward_s - plain.forward_s, gather, 1e-15);
  EXPECT_NEAR(zero3.backward_input_s - plain.backward_input_s, gather, 1e-15);
  // Each rank steps a quarter of the state; ZeRO's reduce-scatter plus all-gather costs the ring all-reduce's
  // time.
  const double all_reduce = all_reduce_seconds(2 * params, 4, kJobLink);
  EXPECT_NEAR(zero1.optimizer_s, (plain.optimizer_s - all_reduce) / 4 + all_reduce, 1e-15);
  // ZeRO-3 keeps its shard of the updated weights (the next F gathers them): the reduce-scatter alone.
  EXPECT_NEAR(zero3.gradient_reduce_s, reduce_scatter_seconds(2 * params, 4, kJobLink), 1e-15);
  EXPECT_NEAR(zero3.gradient_reduce_s, all_reduce / 2, 1e-15);
  // Prefetched (FSDP's default): each unit's gather under the unit before it, so the op takes the longer of
  // its compute and its gathers, plus the first unit's gather.
  s.parallel.overlap_weight_gather = true;
  const StageCosts prefetched = transformer_stage_costs(s, 2, 2)[0];
  const int units = plain.layers + 1;  // the first stage: its layers and the embedding
  EXPECT_NEAR(prefetched.forward_s, std::max(plain.forward_s, gather) + gather / units, 1e-15);
  EXPECT_NEAR(prefetched.backward_input_s, std::max(plain.backward_input_s, gather) + gather / units, 1e-15);
  EXPECT_LT(prefetched.forward_s, zero3.forward_s);
}

// Context parallelism (ring attention): a rank's share of b sequences costs what a microbatch of b/c does,
// plus the ring's exposed transfers; its weights are whole and their gradients reduce over d x c ranks.
TEST(JobModel, ContextParallelRanksCostAMicrobatchOfBOverCPlusTheRing) {
  TransformerSetup s = job_setup();
  s.model.attention = AttentionKind::kFlash;  // ring attention needs it
  const StageCosts alone = transformer_stage_costs(s, 1, 4)[1];
  s.parallel.context = 2;
  const StageCosts shared = transformer_stage_costs(s, 2, 4)[1];
  const TensorParallelSeconds ring = context_parallel_layer_seconds(s, 2, 4);
  // One layer on the middle stage: the ring once per layer.
  EXPECT_NEAR(shared.forward_s, alone.forward_s + ring.forward, 1e-15);
  EXPECT_NEAR(shared.backward_input_s, alone.backward_input_s + ring.backward_input, 1e-15);
  EXPECT_DOUBLE_EQ(shared.backward_weight_s, alone.backward_weight_s);
  EXPECT_DOUBLE_EQ(shared.activation_bytes, alone.activation_bytes);
  EXPECT_DOUBLE_EQ(shared.transfer_bytes, alone.transfer_bytes);
  EXPECT_DOUBLE_EQ(shared.model_flops, alone.model_flops);
  EXPECT_DOUBLE_EQ(shared.parameters, 49'152);  // every rank holds the whole layer
  // The ring by hand: a rank's keys and values are 2 x 32 tokens x 64 x 2 bytes = 8,192 bytes; one step
  // 10 us + 8,192 / 100 GB/s; the causal core attention (one 128-row tile: all of it) 4 s² h (b/c) FLOPs at
  // half the 1 TFLOP/s grid in the forward, 2.5 times that in the input gradient (five products).
  const double step = 10e-6 + 8192 / 100e9, core_forward = 4.0 * 32 * 32 * 64 * 1 / 0.5e12;
  EXPECT_NEAR(ring.forward, 1 * (step - core_forward / 2), 1e-15);
  EXPECT_NEAR(ring.backward_input, 1 * (10e-6 + 2 * 8192 / 100e9 - 2.5 * core_forward / 2), 1e-15);
  // A fast link hides each step under its block of attention: nothing exposed.
  s.profile.link = LinkSpec{1e6, 0, "fast", nullptr};
  EXPECT_EQ(context_parallel_layer_seconds(s, 2, 4).forward, 0);
  // Four ranks sharing 2 sequences: three steps, each a quarter of the keys and values and of the attention.
  s.profile.link = kJobLink;
  s.parallel.context = 4;
  const double quarter = 10e-6 + 8192 / 2 / 100e9;
  EXPECT_NEAR(context_parallel_layer_seconds(s, 2, 4).forward, 3 * (quarter - core_forward / 2 / 4), 1e-15);
  s.model.attention = AttentionKind::kEager;
  EXPECT_THROW(transformer_stage_costs(s, 4, 4), InputError);
}

TEST(JobModel, ContextRanksReduceAndShardWithTheDataReplicas) {
  TransformerSetup s = job_setup();
  s.model.attention = AttentionKind::kFlash;
  s.profile.memory_bandwidth_gb_per_s = 1;
  const double params = 2 * 49'152 + 100 * 64;
  s.parallel.data = 2;
  s.parallel.context = 2;  // 2 x 2 x 2 stages = 8 GPUs: one node
  const double step = params * 28 / 1e9;
  const StageCosts plain = transformer_stage_costs(s, 2, 2)[0];
  EXPECT_NEAR(plain.optimizer_s, step + all_reduce_seconds(2 * params, 4, kJobLink), 1e-12);
  s.parallel.zero = 1;  // the optimizer state over the 4 ranks that hold these weights
  const StageCosts zero1 = transformer_stage_costs(s, 2, 2)[0];
  EXPECT_DOUBLE_EQ(zero1.optimizer_bytes, plain.optimizer_bytes / 4);
  // Nodes of 2 GPUs with tensor 2: every context group (ranks 0 and 2) spans two nodes.
  s.parallel.zero = 0;
  s.parallel.data = 1;
  s.parallel.tensor = 2;
  s.parallel.gpus_per_node = 2;
  s.profile.inter_node_link = LinkSpec{25, 20, "slow", nullptr};
  const double half_kv = 2 * 32 * 1 * 32 * 2;  // b/c = 1 sequence, 2 of 4 key/value heads per tensor rank
  EXPECT_NEAR(context_parallel_layer_seconds(s, 2, 2).forward,
              std::max(0.0, 20e-6 + half_kv / 25e9 - 4.0 * 32 * 32 * 64 / 2 / 0.5e12 / 2), 1e-15);
}

}  // namespace
}  // namespace pipesim
