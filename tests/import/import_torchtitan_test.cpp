// `pipesim import torchtitan` (import/torchtitan_config.h): torchtitan's Llama 3 8B job file as its
// repository ships it, then with pipeline parallelism, read into the model and pipeline it describes.
#include <gtest/gtest.h>

#include <algorithm>

#include "cost_models/transformer/shapes_flops.h"
#include "import/hf_config.h"
#include "import/import_scenario.h"
#include "import/torchtitan_config.h"
#include "io/scenario.h"
#include "tests/error_text.h"

namespace pipesim {
namespace {

// torchtitan's train_configs/llama3_8b.toml (abridged to the sections that carry figures and a few that do
// not), with pipeline parallelism on 4 ranks, Interleaved1F1B and tensor parallelism 2.
const char* const kLlama3_8BJob = R"([job]
dump_folder = "./outputs"
description = "Llama 3 8B training"

[metrics]
log_freq = 10
enable_tensorboard = true

[model]
name = "llama3"
flavor = "8B"
hf_assets_path = "./assets/hf/Llama-3.1-8B"

[optimizer]
name = "AdamW"
lr = 3e-4

[training]
local_batch_size = 8
seq_len = 8192
max_norm = 1.0
steps = 1000
dataset = "c4"

[parallelism]
data_parallel_replicate_degree = 1
data_parallel_shard_degree = -1
tensor_parallel_degree = 2
pipeline_parallel_degree = 4
pipeline_parallel_schedule = "Interleaved1F1B"
pipeline_parallel_microbatch_size = 1
context_parallel_degree = 1

[activation_checkpoint]
mode = "selective"
selective_ac_option = "op"

[compile]
enable = false
)";

// FSDP2's mixed-precision policy in torchtitan reduces gradients in fp32 unless mixed_precision_reduce says
// bfloat16; without data-parallel ranks there is nothing to reduce.
TEST(ImportTorchtitan, GradientsReduceInTheMixedPrecisionPolicysDtype) {
  std::string job = kLlama3_8BJob;
  job.replace(job.find("data_parallel_shard_degree = -1"), 31, "data_parallel_shard_degree = 8");
  const TorchtitanImport fp32 = read_torchtitan_config(job, "j.toml");
  EXPECT_EQ(fp32.imported.parallel.gradient_reduce_dtype, "fp32");
  EXPECT_TRUE(test::any_line_contains(
      fp32.imported.read, "training.mixed_precision_reduce float32 -> parallel.gradient_reduce_dtype"));
  job.replace(job.find("dataset = \"c4\""), 14, "dataset = \"c4\"\nmixed_precision_reduce = \"bfloat16\"");
  EXPECT_EQ(read_torchtitan_config(job, "j.toml").imported.parallel.gradient_reduce_dtype, "bf16");
  EXPECT_EQ(read_torchtitan_config(kLlama3_8BJob, "j.toml").imported.parallel.gradient_reduce_dtype, "");
}

TEST(ImportTorchtitan, Llama3_8BFlavorOnFourRanksInterleaved) {
  const TorchtitanImport t = read_torchtitan_config(kLlama3_8BJob, "llama3_8b.toml");
  const TransformerModel& m = t.imported.model;
  EXPECT_EQ(m.layers, 32);
  EXPECT_EQ(m.hidden, 4096);
  EXPECT_EQ(m.heads, 32);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.ffn_hidden, 14336);  // torchtitan's rule: 4h x 2/3 x 1.3 rounded up to 1024
  EXPECT_EQ(m.vocab, 128256);
  EXPECT_EQ(m.norm, NormKind::kRmsNorm);  // torchtitan's Llama: RMSNorm
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_EQ(m.seq_len, 8192);
  EXPECT_EQ(m.recompute, Recompute::kOp);  // selective_ac_option "op": the op-level policy
  EXPECT_EQ(m.dtype, "bf16");
  EXPECT_EQ(t.pipeline_stages, 4);
  EXPECT_EQ(t.schedule, "interleaved-1f1b");
  EXPECT_EQ(t.chunks, 2);  // torchtitan's two stages per rank for a looped schedule
  EXPECT_EQ(t.microbatches, 8);
  EXPECT_EQ(t.local_batch, 8);
  // torchtitan's split of 32 layers + embedding and output (weights 1 and 1) over 8 virtual stages: 34 / 8 =
  // 4, the 2 left over to the first two stages, the embedding's and the output's weight taken back.
  EXPECT_EQ(t.stage_layers, (std::vector<int>{4, 5, 4, 4, 4, 4, 4, 3}));
  EXPECT_TRUE(
      test::any_line_contains(t.imported.read, "parallelism.tensor_parallel_degree = 2 -> parallel.tensor"));
  EXPECT_EQ(t.imported.parallel.tensor, 2);
  // data_parallel_shard_degree = -1: the rest of the launch, which the file does not give.
  EXPECT_TRUE(test::any_line_contains(t.imported.assumed, "parallelism.data_parallel_shard_degree = -1"));
  EXPECT_EQ(t.imported.parallel.data, 1);
  EXPECT_TRUE(test::any_line_contains(t.imported.read,
                                      "parallelism.context_parallel_degree = 1 -> parallel.context"));
  EXPECT_EQ(t.imported.parallel.context, 1);
  EXPECT_TRUE(test::any_line_contains(t.imported.ignored, "optimizer.lr"));
  EXPECT_TRUE(
      test::any_line_contains(t.imported.ignored, "model.hf_assets_path"));  // listed, not consumed silently
  EXPECT_TRUE(test::any_line_contains(t.imported.ignored, "training.dataset"));
  EXPECT_TRUE(t.imported.unknown.empty()) << t.imported.unknown.front();
}

// The 70B and 405B flavors' MLP widths are torchtitan's (and Llama 3's) 28672 and 53248; one stage per rank
// with torchtitan's default first/last-stage-less-layers: 82 / 8 = 10, 2 left over to the first stages.
TEST(ImportTorchtitan, FlavorsAndTheZeroBubbleSplit) {
  const std::string job =
      "[model]\nname = \"llama3\"\nflavor = \"{}\"\n[parallelism]\npipeline_parallel_degree = 8\n"
      "pipeline_parallel_schedule = \"1F1B\"\n[training]\nlocal_batch_size = 16\n"
      "[activation_checkpoint]\nmode = \"full\"\n";
  const TorchtitanImport t70 = read_torchtitan_config(fmt::format(fmt::runtime(job), "70B"), "70b.toml");
  EXPECT_EQ(t70.imported.model.ffn_hidden, 28672);
  EXPECT_EQ(t70.imported.model.layers, 80);
  EXPECT_EQ(t70.imported.model.recompute, Recompute::kFull);
  EXPECT_EQ(t70.schedule, "1f1b-flush");
  EXPECT_EQ(t70.stage_layers, (std::vector<int>{10, 11, 10, 10, 10, 10, 10, 9}));
  EXPECT_EQ(t70.microbatches, 16);
  const TorchtitanImport t405 = read_torchtitan_config(fmt::format(fmt::runtime(job), "405B"), "405b.toml");
  EXPECT_EQ(t405.imported.model.ffn_hidden, 53248);
  EXPECT_EQ(t405.imported.model.layers, 126);
}

// torchtitan's deepseek_v3 flavors (MLA, experts, dense first layers) and its expert parallelism: the 16B is
// DeepSeek-V2-Lite's shape (15.7 B parameters); with data_parallel_shard_degree = -1 the importer takes the
// fewest ranks the experts' groups need, FSDP over them, and says so.
TEST(ImportTorchtitan, DeepSeekV3FlavorsAndExpertParallelism) {
  const TorchtitanImport t16 = read_torchtitan_config(
      "[model]\nname = \"deepseek_v3\"\nflavor = \"16B\"\n[training]\nlocal_batch_size = 4\nseq_len = 4096\n"
      "[parallelism]\ndata_parallel_shard_degree = -1\nexpert_parallel_degree = 8\n"
      "expert_tensor_parallel_degree = 1\n",
      "16b.toml");
  const TransformerModel& m = t16.imported.model;
  EXPECT_EQ(m.layers, 27);
  EXPECT_EQ(m.mla.kv_lora_rank, 512);
  EXPECT_EQ(m.mla.q_lora_rank, 0);
  EXPECT_EQ(m.moe.experts, 64);
  EXPECT_EQ(m.moe.experts_per_token, 6);
  EXPECT_EQ(m.moe.shared_experts, 2);
  EXPECT_EQ(m.moe.dense_layers, 1);
  EXPECT_NEAR(model_parameters(m) / 1e9, 15.7, 0.05);
  const ParallelConfig& p = t16.imported.parallel;
  EXPECT_EQ(p.expert, 8);
  EXPECT_EQ(p.expert_tensor, 1);
  EXPECT_EQ(p.data, 8);
  EXPECT_EQ(p.zero, 3);
  EXPECT_TRUE(test::any_line_contains(t16.imported.assumed, "the fewest ranks expert_parallel_degree needs"));
  EXPECT_TRUE(t16.imported.unknown.empty()) << t16.imported.unknown.front();
  const TorchtitanImport t671 =
      read_torchtitan_config("[model]\nname = \"deepseek_v3\"\nflavor = \"671B\"\n", "671b.toml");
  EXPECT_NEAR(model_parameters(t671.imported.model) / 1e9, 671, 0.5);
  const std::string bad = test::input_error_of(
      [] { read_torchtitan_config("[model]\nname = \"deepseek_v3\"\nflavor = \"7B\"\n", "7b.toml"); });
  EXPECT_NE(bad.find("expected 16B, 236B or 671B"), std::string::npos) << bad;
}

// torchtitan's split against its own refusals: weights larger than a stage's share, more stages than layers.
TEST(ImportTorchtitan, TheSplitFollowsTorchtitansRules) {
  EXPECT_EQ(torchtitan_stage_layers(8, 1, 1, 1), (std::vector<int>{8}));
  EXPECT_EQ(torchtitan_stage_layers(6, 4, 1, 1), (std::vector<int>{1, 2, 2, 1}));  // 8 / 4 = 2 each
  EXPECT_EQ(torchtitan_stage_layers(6, 4, 0, 0), (std::vector<int>{2, 2, 1, 1}));  // the remainder first
  EXPECT_EQ(torchtitan_stage_layers(8, 4, 2, 2), (std::vector<int>{1, 3, 3, 1}));
  EXPECT_THROW(torchtitan_stage_layers(4, 4, 2, 0), InputError);  // 6 / 4 = 1 < the weight 2
  EXPECT_THROW(torchtitan_stage_layers(2, 8, 1, 1), InputError);  // 8 stages, 4 effective layers
}

TEST(ImportTorchtitan, BadFilesNameTheLineAndTheKey) {
  EXPECT_NE(
      test::input_error_of([] { read_torchtitan_config("[model]\nname = \n", "j.toml"); }).find("j.toml:2:"),
      std::string::npos);
  EXPECT_NE(test::input_error_of([] {
              read_torchtitan_config("[model]\nname = \"llama3\"\nflavor = \"9B\"\n", "j.toml");
            }).find("flavor '9B': expected 8B, 70B or 405B"),
            std::string::npos);
  EXPECT_NE(test::input_error_of([] {
              read_torchtitan_config(
                  "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\nseq_len = \"long\"\n", "j.toml");
            }).find("j.toml:5:11: key 'training.seq_len': expected an integer"),
            std::string::npos);
  EXPECT_NE(test::input_error_of([] {
              read_torchtitan_config(
                  "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\n"
                  "pipeline_parallel_schedule = \"Interleaved1F1X\"\n",
                  "j.toml");
            }).find("pipeline_parallel_schedule 'Interleaved1F1X'"),
            std::string::npos);
}

// Context parallelism: ring attention over c ranks, FSDP over the data shards and the context ranks together.
TEST(ImportTorchtitan, ContextParallelRanksShardWithFsdp) {
  const TorchtitanImport t = read_torchtitan_config(
      "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\ncontext_parallel_degree = 4\n"
      "data_parallel_shard_degree = 2\n[training]\nseq_len = 8192\nlocal_batch_size = 1\n",
      "cp.toml");
  EXPECT_EQ(t.imported.parallel.context, 4);
  EXPECT_EQ(t.imported.parallel.data, 2);
  EXPECT_EQ(t.imported.parallel.zero, 3);
  EXPECT_FALSE(test::any_line_contains(t.imported.unsupported, "context"));
  const TorchtitanImport alone = read_torchtitan_config(
      "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\ncontext_parallel_degree = 2\n", "cp.toml");
  EXPECT_EQ(alone.imported.parallel.zero, 3);  // FSDP over the two context ranks
  EXPECT_TRUE(test::any_line_contains(alone.imported.read, "FSDP over the 2 context ranks"));
}

// The job's scenario reads back with its schedule first and torchtitan's batch.
TEST(ImportTorchtitan, TheScenarioReadsBack) {
  const TorchtitanImport t = read_torchtitan_config(kLlama3_8BJob, "llama3_8b.toml");
  ImportSettings settings;
  settings.name = "llama3_8b";
  settings.stages = t.pipeline_stages;
  settings.microbatches = t.microbatches;
  settings.global_batch = t.local_batch;
  settings.schedules = "[{name: interleaved-1f1b, chunks: 2}, 1f1b-flush]";
  settings.pipeline_from_options = false;
  settings.origin = "pipesim import torchtitan llama3_8b.toml";
  const Scenario s = parse_scenario(scenario_from_import(t.imported, settings), "llama3_8b.yaml");
  EXPECT_EQ(s.stages, 4);
  EXPECT_EQ(s.microbatches, 8);
  ASSERT_TRUE(s.transformer.has_value());
  EXPECT_EQ(s.transformer->model.recompute, Recompute::kOp);
}

// A section or key a typo away from a known one is refused with a did-you-mean and its line; torchtitan's
// Python config registry is recognised, not reported as bad TOML.
TEST(ImportTorchtitan, TyposAndPythonConfigsAreNamed) {
  const std::string model = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n";
  const std::string section = test::input_error_of(
      [&] { read_torchtitan_config(model + "[paralelism]\ntensor_parallel_degree = 2\n", "j.toml"); });
  EXPECT_NE(section.find("j.toml:4:"), std::string::npos) << section;
  EXPECT_NE(section.find("did you mean [parallelism]?"), std::string::npos) << section;
  const std::string key = test::input_error_of(
      [&] { read_torchtitan_config(model + "[parallelism]\ntensor_paralel_degree = 2\n", "j.toml"); });
  EXPECT_NE(key.find("j.toml:5:"), std::string::npos) << key;
  EXPECT_NE(key.find("did you mean 'tensor_parallel_degree'?"), std::string::npos) << key;
  const std::string python = test::input_error_of([] {
    read_torchtitan_config(
        "from torchtitan.config import JobConfig\n\ndef llama3_8b():\n    return JobConfig()\n",
        "llama3_8b.py");
  });
  EXPECT_NE(python.find("a Python file (torchtitan's config registry"), std::string::npos) << python;
  EXPECT_EQ(python.find("not TOML:"), std::string::npos) << python;
}

}  // namespace
}  // namespace pipesim
