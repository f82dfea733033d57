// `pipesim import hf`: a config.json written here becomes a scenario file that `pipesim run` runs.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace pipesim {
namespace {

// A small Mixtral-like model, so the run is quick: its experts are modelled, its sliding window (in force
// for sequences above 512 tokens) is not.
const char* const kConfig = R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"],
  "num_hidden_layers": 8, "hidden_size": 1024, "num_attention_heads": 16, "num_key_value_heads": 4,
  "intermediate_size": 2816, "vocab_size": 32000, "max_position_embeddings": 2048, "hidden_act": "silu",
  "tie_word_embeddings": false, "torch_dtype": "bfloat16", "num_local_experts": 4, "sliding_window": 512})";

TEST(ImportCommand, WritesAScenarioThatRuns) {
  const test::TempDir dir;
  std::filesystem::create_directories(dir.file("tiny-llama"));
  const std::string config = dir.write("tiny-llama/config.json", kConfig);
  const test::CommandResult imported = test::run_pipesim(
      fmt::format("import hf '{}' -o '{}' --stages 4 -m 8 --seq-len 1024", config, dir.file("tiny.yaml")),
      dir);
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_NE(imported.err.find("wrote"), std::string::npos) << imported.err;
  EXPECT_NE(imported.err.find("not modelled yet (run refuses it without --allow-unmodelled): "
                              "model.sliding_window"),
            std::string::npos)
      << imported.err;
  const std::string text = test::read_file(dir.file("tiny.yaml"));
  EXPECT_NE(text.find("name: tiny-llama\n"), std::string::npos) << text;
  EXPECT_NE(text.find("moe: {experts: 4, experts_per_token: 2}"), std::string::npos) << text;
  // The reserve the quickstart uses: no plan fills the device to its last byte.
  EXPECT_NE(text.find("hardware: {profile: h100-sxm5-80gb, reserve_gb: 4}"), std::string::npos) << text;
  // The window is not modelled: refused, naming the key, unless the stand-in is asked for.
  const test::CommandResult refused =
      test::run_pipesim(fmt::format("run '{}' --schedules 1f1b-flush", dir.file("tiny.yaml")), dir);
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_NE(refused.err.find("key 'model.sliding_window': sliding-window attention (512 of the 1024 tokens) "
                             "is not modelled yet"),
            std::string::npos)
      << refused.err;
  for (const char* command : {"plan '{}' --gpus 8 --top 1", "costs '{}'"}) {
    const test::CommandResult other =
        test::run_pipesim(fmt::format(fmt::runtime(command), dir.file("tiny.yaml")), dir);
    EXPECT_EQ(other.exit_code, 1) << command << other.err;
    EXPECT_NE(other.err.find("model.sliding_window"), std::string::npos) << command << other.err;
  }
  const test::CommandResult run = test::run_pipesim(
      fmt::format("run '{}' --schedules 1f1b-flush --allow-unmodelled", dir.file("tiny.yaml")), dir);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("1f1b-flush"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("UNMODELLED (--allow-unmodelled)"), std::string::npos) << run.out;
  const test::CommandResult plan = test::run_pipesim(
      fmt::format("plan '{}' --gpus 8 --top 1 --allow-unmodelled", dir.file("tiny.yaml")), dir);
  EXPECT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_NE(plan.out.find("UNMODELLED (--allow-unmodelled)"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("(published: fitted to public measurements)"), std::string::npos) << plan.out;
}

// A config in the Hugging Face cache is named after its model, not the snapshot's hash; a file not called
// config.json after its stem; without --seq-len the sequence is a stated 4,096 tokens, not the 131,072-token
// longest context (which fits nothing).
TEST(ImportCommand, CacheLayoutNamesAndAStatedSequenceDefault) {
  const test::TempDir dir;
  const std::string snapshot =
      "hub/models--meta-llama--Llama-3.1-8B/snapshots/0e9e39f249a16976918f6564b8830bc8";
  std::filesystem::create_directories(dir.file(snapshot));
  std::string config = kConfig;
  config.replace(config.find("2048"), 4, "131072");
  const std::string path = dir.write(snapshot + "/config.json", config);
  const test::CommandResult r = test::run_pipesim(fmt::format("import hf '{}' --stages 4", path), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("name: Llama-3.1-8B\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("seq_len: 4096\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no --seq-len: seq_len 4096"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("longest context is 131072"), std::string::npos) << r.out;
  const std::string stem = dir.write("qwen3-32b.config.json", kConfig);
  const test::CommandResult named = test::run_pipesim(fmt::format("import hf '{}' --stages 4", stem), dir);
  ASSERT_EQ(named.exit_code, 0) << named.err;
  EXPECT_NE(named.out.find("name: qwen3-32b\n"), std::string::npos) << named.out;
}

// A --name YAML would misread is written quoted and reads back as given; a --profile that does not exist is
// an error naming the option, never a read-back error about NAME.yaml, a file that does not exist.
TEST(ImportCommand, TheNameReadsBackAsGivenAndABadProfileNamesItsOption) {
  const test::TempDir dir;
  const std::string config = dir.write("config.json", kConfig);
  for (const std::string& name :
       std::vector<std::string>{"a: b #c", "#1", "null", "[x", "say \"hi\" \\ there"}) {
    const test::CommandResult r = test::run_pipesim(
        fmt::format("import hf '{}' -o '{}' --seq-len 1024 --name '{}'", config, dir.file("n.yaml"), name),
        dir);
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
    const test::CommandResult run = test::run_pipesim(
        fmt::format("run '{}' --schedules 1f1b-flush --allow-unmodelled", dir.file("n.yaml")), dir);
    ASSERT_EQ(run.exit_code, 0) << name << ": " << run.err;
    EXPECT_EQ(run.out.rfind("scenario " + name + ": ", 0), 0U) << name << ": " << run.out;
  }
  const test::CommandResult r = test::run_pipesim(
      fmt::format("import hf '{}' --seq-len 1024 --name job --profile h100-sxm5-80gbx", config), dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("pipesim: error: --profile h100-sxm5-80gbx: ", 0), 0U) << r.err;
  EXPECT_EQ(r.err.find("job.yaml"), std::string::npos) << r.err;
}

TEST(ImportCommand, ABadConfigIsAnInputErrorNamingTheFile) {
  const test::TempDir dir;
  const std::string config = dir.write("config.json", "{\"num_hidden_layers\": 2,}");
  const test::CommandResult r = test::run_pipesim(fmt::format("import hf '{}'", config), dir);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("config.json:1:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not JSON"), std::string::npos) << r.err;
}

// GPT-3 175B's Megatron arguments on 8 data-parallel replicas: a scenario of 16 stages, 3 chunks and 192
// microbatches that runs, with the job's tensor parallelism 8 (sequence parallel) and 8 replicas.
TEST(ImportCommand, MegatronArgumentsBecomeAScenarioThatRuns) {
  const test::TempDir dir;
  const test::CommandResult imported = test::run_pipesim(
      fmt::format("import megatron --data-parallel 8 -o '{}' -- --num-layers 96 --hidden-size 12288 "
                  "--num-attention-heads 96 --seq-length 2048 --micro-batch-size 1 --global-batch-size 1536 "
                  "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 16 "
                  "--num-layers-per-virtual-pipeline-stage 2 --sequence-parallel --bf16 --vocab-size 50257",
                  dir.file("gpt3.yaml")),
      dir);
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_EQ(imported.err.find("--tensor-model-parallel-size"), std::string::npos) << imported.err;
  const std::string text = test::read_file(dir.file("gpt3.yaml"));
  EXPECT_NE(text.find("parallel: {tensor: 8, data: 8, sequence_parallel: true, overlap_grad_reduce: false}"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("pipeline: {stages: 16, microbatches: 192, global_batch: 192}"), std::string::npos)
      << text;
  EXPECT_NE(text.find("schedules: [{name: interleaved-1f1b, chunks: 3}, 1f1b-flush"), std::string::npos)
      << text;
  const test::CommandResult run = test::run_pipesim(
      fmt::format("run '{}' --schedules interleaved-1f1b:chunks=3,1f1b-flush", dir.file("gpt3.yaml")), dir);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("interleaved-1f1b(chunks=3)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("job: tensor parallel 8 with sequence parallelism, data parallel 8, 1024 GPUs"),
            std::string::npos)
      << run.out;
}

// `pipesim import trace`: one merged trace of 1F1B on two ranks, m = 2; the scenario runs and the simulated
// run's trace is written beside it.
TEST(ImportCommand, ATraceBecomesAScenarioAndASimulatedTraceBesideIt) {
  const test::TempDir dir;
  std::string events;
  double ts = 0;
  for (const char* name : {"PP:0F0", "PP:0F1", "PP:1F0", "PP:1B0", "PP:1F1", "PP:1B1", "PP:0B0", "PP:0B1"}) {
    const double dur = name[4] == 'F' ? 1000 : 2000;
    events += fmt::format(R"({}{{"ph": "X", "name": "{}", "pid": 0, "tid": 0, "ts": {}, "dur": {}}})",
                          events.empty() ? "" : ", ", name, ts, dur);
    ts += dur;
  }
  const std::string trace = dir.write("run.json", fmt::format(R"({{"traceEvents": [{}]}})", events));
  const test::CommandResult imported = test::run_pipesim(
      fmt::format("import trace '{}' --schedule 1F1B -o '{}'", trace, dir.file("traced.yaml")), dir);
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_NE(imported.err.find("traced-simulated.json"), std::string::npos) << imported.err;
  const std::string text = test::read_file(dir.file("traced.yaml"));
  EXPECT_NE(text.find("forward_ms: [1, 1]"), std::string::npos) << text;
  EXPECT_NE(text.find("backward_ms: [2, 2]"), std::string::npos) << text;
  EXPECT_NE(test::read_file(dir.file("traced-simulated.json")).find("\"traceEvents\""), std::string::npos);
  const test::CommandResult run = test::run_pipesim(fmt::format("run '{}'", dir.file("traced.yaml")), dir);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const test::CommandResult wrong = test::run_pipesim(
      fmt::format("import trace '{}' --schedule zb-v -o '{}'", trace, dir.file("bad.yaml")), dir);
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_NE(wrong.err.find("zb-v splits the backward, but stage 0 has no traced I and W"), std::string::npos)
      << wrong.err;
}

}  // namespace
}  // namespace pipesim
