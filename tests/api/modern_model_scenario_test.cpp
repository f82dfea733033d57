// A Llama-2-7B-like model on H100s, read from the quickstart scenario: the new model keys, the hardware
// overrides and a peak memory checked against a hand count.
#include <gtest/gtest.h>

#include "api/simulation.h"
#include "base/errors.h"
#include "pipesim_source_dir.h"
#include "report/report.h"
#include "report/result_figures.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string quickstart() {
  return std::string(PIPESIM_SOURCE_DIR) + "/share/scenarios/quickstart/llama2-7b-h100.yaml";
}

// Llama-2-7B (32 layers, h 4096, 32 heads, SwiGLU f 11008, vocab 32000, s 4096) at PP = 8, b = 1, 1F1B on the
// H100 profile. Hand count for stage 1, the peak (4 layers and the embedding; it holds N = 8 microbatches):
//   parameters: 4 x (4h² + 3hf) + 32000·h = 4 x 202,375,168 + 131,072,000 = 940,572,672
//   weights 2 + gradients 2 + AdamW's fp32 master and moments 12 = 16 bytes each: 15,049,162,752 B
//   activations per layer and microbatch, flash attention, no dropout, in bytes per token:
//     attention 8h + 4h (Q, K, V; k = a) = 49,152, and 4 bytes x 32 heads of softmax statistics;
//     MLP 4h + 6f = 82,432   -> 4096 x (49,152 + 128 + 82,432) = 539,492,352 B
//   8 microbatches x 4 layers x 539,492,352 = 17,263,755,264 B
//   total 32,312,918,016 B = 30.09 GiB
TEST(ModernModel, Llama2SevenBOnH100FitsAtTheHandCountedPeak) {
  const Scenario s = load_scenario(quickstart(), {"pipeline.microbatches=16", "pipeline.global_batch=16"});
  const SimulationResult r = simulate_schedule(s, {"1f1b-flush", ScheduleParams("test")});
  const double hand = 15'049'162'752.0 + 8 * 4 * 539'492'352.0;
  EXPECT_NEAR(static_cast<double>(r.memory.peak_bytes()) / hand, 1.0, 0.10);
  EXPECT_NEAR(static_cast<double>(r.memory.devices[0].peak_bytes) / hand, 1.0, 1e-6);  // exact on stage 1
  ASSERT_GT(r.memory_capacity_bytes, 0);
  EXPECT_DOUBLE_EQ(r.memory_capacity_bytes, (79.65 - 4) * kGiB);  // the profile's 79.65 GiB less the reserve
  EXPECT_LE(r.memory.peak_bytes(), r.memory_capacity_bytes);      // fits

  // Eager attention with dropout (the formula pipesim used before flash was modelled: s·b(34h + 5as)) stores
  // 5·a·s bytes more per token and layer, 2.5 GiB a layer here: 119 GB on stage 1, which does not fit.
  const Scenario eager = load_scenario(quickstart(), {"pipeline.microbatches=16", "pipeline.global_batch=16",
                                                      "model.attention=eager", "model.dropout=true"});
  const SimulationResult e = simulate_schedule(eager, {"1f1b-flush", ScheduleParams("test")});
  EXPECT_GT(static_cast<double>(e.memory.peak_bytes()), r.memory_capacity_bytes);
  // Full recomputation: each layer keeps its input (2·s·h bytes) and one layer's activations are rebuilt.
  const Scenario full = load_scenario(
      quickstart(), {"pipeline.microbatches=16", "pipeline.global_batch=16", "model.recompute=full"});
  const SimulationResult f = simulate_schedule(full, {"1f1b-flush", ScheduleParams("test")});
  EXPECT_DOUBLE_EQ(static_cast<double>(f.memory.devices[0].peak_bytes),
                   15'049'162'752.0 + 8 * 4 * (2.0 * 4096 * 4096) + 539'492'352.0);
  EXPECT_GT(f.metrics.period_ns, r.metrics.period_ns);  // the backward reruns the forward
}

// model: {causal: false} (an encoder, or a prefix-LM's bidirectional part): flash attention computes every
// score tile, so F takes longer by half the attention products; the step's FLOPs for MFU do not change.
TEST(ModernModel, CausalMaskHalvesFlashAttentionsWorkOnly) {
  const std::vector<std::string> small = {"pipeline.microbatches=8", "pipeline.global_batch=8"};
  std::vector<std::string> bidirectional = small;
  bidirectional.push_back("model.causal=false");
  const Scenario causal = load_scenario(quickstart(), small);
  const Scenario full = load_scenario(quickstart(), bidirectional);
  ASSERT_TRUE(causal.transformer && full.transformer);
  EXPECT_TRUE(causal.transformer->model.causal);
  EXPECT_FALSE(full.transformer->model.causal);
  const SimulationResult c = simulate_schedule(causal, {"1f1b-flush", ScheduleParams("test")});
  const SimulationResult f = simulate_schedule(full, {"1f1b-flush", ScheduleParams("test")});
  EXPECT_GT(f.metrics.period_ns, c.metrics.period_ns);
  EXPECT_THROW(load_scenario(quickstart(), {"model.causal=maybe"}), InputError);
}

// Per-GPU figures as Megatron's and torchtitan's logs show them, and the peak's parts.
TEST(ModernModel, PerGpuFiguresAndTheMemoryBreakdownAddUp) {
  const Scenario s = load_scenario(quickstart());
  const SimulationResult r = simulate_schedule(s, {"1f1b-flush", ScheduleParams("test")});
  // Model FLOPs per sample: 32 layers x (6·P·s + 12·s²·h) + 6·s·h·vocab, P = 4h² + 3hf.
  const double s_len = 4096, h = 4096, p = 4 * h * h + 3 * h * 11008;
  const double per_sample = 32 * (6 * p * s_len + 12 * s_len * s_len * h) + 6 * s_len * h * 32000;
  EXPECT_NEAR(r.model_flops_per_sample / per_sample, 1, 1e-12);
  const double tflops = *model_tflops_per_device(r);
  EXPECT_NEAR(tflops, r.metrics.throughput_samples_per_s * per_sample / 8 / 1e12, 1e-9);
  EXPECT_NEAR(*model_flops_utilization(r), tflops / 989.4, 1e-12);  // the H100 profile's dense bf16 peak
  EXPECT_LT(*model_flops_utilization(r), 1);
  EXPECT_NEAR(*tokens_per_device_s(r), r.metrics.throughput_samples_per_s * 4096 / 8, 1e-6);
  const MemoryBreakdown b = peak_memory_breakdown(r);
  EXPECT_EQ(b.weight_bytes + b.gradient_bytes + b.optimizer_bytes + b.activation_bytes + b.buffer_bytes,
            r.memory.peak_bytes());
  EXPECT_EQ(peak_memory_device(r), 0u);
  EXPECT_NE(r.model_choices.find("flash attention"), std::string::npos) << r.model_choices;
  // Explicit costs know no model: no MFU.
  const SimulationResult plain = test::run_schedule(test::uniform_scenario(2, 4, 1, 2), "1f1b-flush");
  EXPECT_FALSE(model_flops_utilization(plain));
}

TEST(ModernModel, ModelAndHardwareKeysAreCheckedWithTheirLocation) {
  const auto error = [&](const std::string& model,
                         const std::string& hardware = "hardware: {profile: h100-sxm5-80gb}\n") {
    return test::input_error_of(
        [&] { test::scenario_from_yaml("pipeline: {stages: 2, microbatches: 4}\n" + model + hardware); });
  };
  const std::string llama = "model: {layers: 4, hidden: 64, heads: 8, seq_len: 32, vocab: 100";
  EXPECT_NE(
      error(llama + ", kv_heads: 3}\n").find("key 'model.kv_heads': expected a divisor of model.heads (8)"),
      std::string::npos);
  EXPECT_NE(error(llama + ", mlp: relu}\n").find("gelu (two matrices, GPT) or swiglu"), std::string::npos);
  EXPECT_NE(error(llama + ", attention: sdpa}\n").find("flash"), std::string::npos);
  EXPECT_NE(error(llama + ", recompute: some}\n").find("selective"), std::string::npos);
  EXPECT_NE(error(llama + ", dropout: 0.1}\n").find("true or false"), std::string::npos);
  EXPECT_NE(error(llama + ", recomptue: full}\n").find("did you mean 'recompute'"), std::string::npos);
  EXPECT_NE(error(llama + "}\n", "hardware: {profile: h100-sxm5-80gb, reserve_gb: 90}\n").find("reserve_gb"),
            std::string::npos);
  // Overrides of the profile's capacity (GiB) and a reserve.
  const Scenario s = test::scenario_from_yaml(
      "pipeline: {stages: 2, microbatches: 4}\n" + llama +
      "}\nhardware: {profile: h100-sxm5-80gb, memory_capacity_gb: 64, reserve_gb: 2.5}\n");
  EXPECT_DOUBLE_EQ(s.transformer->profile.usable_memory_bytes(), 61.5 * kGiB);
  // Explicit costs may state a capacity too, so `fits` works there.
  const Scenario explicit_costs = test::scenario_from_yaml(
      "pipeline: {stages: 2, microbatches: 4}\n"
      "costs: {forward_ms: 1, backward_ms: 2, activation_bytes: 1073741824, memory_capacity_gb: 2.5}\n");
  const SimulationResult r = test::run_schedule(explicit_costs, "1f1b-flush");
  EXPECT_DOUBLE_EQ(r.memory_capacity_bytes, 2.5 * kGiB);
  EXPECT_EQ(fits_memory(r), std::optional<bool>(true));  // 2 microbatches of 1 GiB
  const SimulationResult g = test::run_schedule(explicit_costs, "gpipe");
  EXPECT_EQ(fits_memory(g), std::optional<bool>(false));  // 4 of them
}

}  // namespace
}  // namespace pipesim
