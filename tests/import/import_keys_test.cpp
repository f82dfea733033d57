// The importers' key tables against their readers: every key a reader looks up is in its table (the reader
// throws std::logic_error otherwise, so every test that runs a reader checks it), every key the table says
// is read is looked up by some branch of the reader (configs below that take each branch), and the help text
// generated from a table says what the reader does.
#include "import/import_keys.h"

#include <gtest/gtest.h>

#include <set>

#include "import/hf_config.h"
#include "import/megatron_args.h"
#include "import/torchtitan_config.h"
#include "tests/error_text.h"

namespace pipesim {
namespace {

bool read_key(const ImportKey& key) {
  return key.use != KeyUse::kIgnored && key.use != KeyUse::kUnsupported &&
         key.name.find('*') == std::string::npos;
}

// The table's read keys that none of the imports looked up.
std::vector<std::string> never_consulted(const ImportKeyTable& table,
                                         const std::vector<ModelImport>& imports) {
  std::set<std::string> consulted;
  for (const ModelImport& i : imports) consulted.insert(i.consulted.begin(), i.consulted.end());
  std::vector<std::string> missing;
  for (const ImportKey& key : table.keys()) {
    if (read_key(key) && !consulted.count(key.name)) missing.push_back(key.name);
  }
  return missing;
}

std::string collapsed(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') c = ' ';
    if (c == ' ' && !out.empty() && out.back() == ' ') continue;
    out += c;
  }
  return out;
}

TEST(ImportKeys, EveryHfKeyTheTableReadsIsLookedUp) {
  const std::vector<ModelImport> imports{
      // Llama's names, experts in Mixtral's, a window in force, DeepSeek's latent attention and MTP.
      read_hf_config(R"({"model_type": "mixtral", "architectures": ["MixtralForCausalLM"],
          "num_hidden_layers": 4, "hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2,
          "head_dim": 64, "vocab_size": 1000, "hidden_act": "silu", "intermediate_size": 512,
          "max_position_embeddings": 4096, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
          "num_local_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 128,
          "n_shared_experts": 1, "first_k_dense_replace": 1, "kv_lora_rank": 64, "q_lora_rank": 32,
          "use_sliding_window": true, "sliding_window": 1024, "attention_chunk_size": 512,
          "num_nextn_predict_layers": 1, "attention_dropout": 0.0, "quantization_config": {},
          "moe_layer_freq": 1, "mlp_only_layers": [], "decoder_sparse_step": 1})",
                     "a.json"),
      // GPT-2's names and a Qwen-MoE shared expert.
      read_hf_config(R"({"n_layer": 2, "n_embd": 64, "n_head": 4, "vocab_size": 100, "n_inner": 256,
          "activation_function": "gelu_new", "n_positions": 1024, "num_experts": 4,
          "num_selected_experts": 1, "shared_expert_intermediate_size": 256, "resid_pdrop": 0.1})",
                     "b.json", 512),
      // Other families' names, through a multimodal config's text_config.
      read_hf_config(R"({"text_config": {"num_layers": 2, "d_model": 64, "num_attention_heads": 4,
          "num_kv_heads": 4, "vocab_size": 100, "ffn_dim": 128, "hidden_activation": "gelu",
          "seq_length": 256, "dtype": "float32", "n_routed_experts": 2, "sliding_window_size": 64}})",
                     "c.json")};
  EXPECT_EQ(never_consulted(hf_config_keys(), imports), std::vector<std::string>{});
}

TEST(ImportKeys, EveryMegatronArgumentTheTableReadsIsLookedUp) {
  const std::vector<std::string> common{"--num-layers",          "8",   "--hidden-size", "256",
                                        "--num-attention-heads", "4",   "--seq-length",  "1024",
                                        "--vocab-size",          "1000"};
  const auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), common.begin(), common.end());
    return read_megatron_args(more).imported;
  };
  const std::vector<ModelImport> imports{
      with({"--kv-channels",
            "32",
            "--make-vocab-size-divisible-by",
            "64",
            "--group-query-attention",
            "--num-query-groups",
            "2",
            "--swiglu",
            "--ffn-hidden-size",
            "512",
            "--untie-embeddings-and-output-weights",
            "--bf16",
            "--attention-dropout",
            "0",
            "--hidden-dropout",
            "0",
            "--use-flash-attn",
            "--recompute-granularity",
            "full",
            "--pipeline-model-parallel-size",
            "2",
            "--micro-batch-size",
            "1",
            "--global-batch-size",
            "8",
            "--virtual-pipeline-model-parallel-size",
            "2",
            "--decoder-first-pipeline-num-layers",
            "4",
            "--decoder-last-pipeline-num-layers",
            "4",
            "--tensor-model-parallel-size",
            "2",
            "--context-parallel-size",
            "2",
            "--sequence-parallel",
            "--use-distributed-optimizer",
            "--overlap-grad-reduce",
            "--num-experts",
            "4",
            "--moe-router-topk",
            "2",
            "--moe-ffn-hidden-size",
            "128",
            "--moe-shared-expert-intermediate-size",
            "128",
            "--multi-latent-attention",
            "--kv-lora-rank",
            "64",
            "--q-lora-rank",
            "32",
            "--mtp-num-layers",
            "1",
            "--fp8-format",
            "hybrid",
            "--fp8-recipe",
            "delayed"}),
      with({"--pipeline-model-parallel-size", "2", "--num-layers-per-virtual-pipeline-stage", "2",
            "--pipeline-model-parallel-layout", "Ett|tt|tt|ttL", "--fp16"}),
      with({"--pipeline-model-parallel-size", "2", "--account-for-embedding-in-pipeline-split",
            "--account-for-loss-in-pipeline-split", "--recompute-activations"}),
      read_megatron_args({"--num-layers", "8", "--hidden-size", "256", "--num-attention-heads", "4",
                          "--max-position-embeddings", "1024", "--tokenizer-type", "GPT2BPETokenizer"})
          .imported};
  EXPECT_EQ(never_consulted(megatron_argument_keys(), imports), std::vector<std::string>{});
}

TEST(ImportKeys, EveryTorchtitanKeyTheTableReadsIsLookedUp) {
  const std::vector<ModelImport> imports{read_torchtitan_config(R"([model]
name = "llama3"
flavor = "8B"
converters = ["float8"]
[training]
local_batch_size = 8
seq_len = 4096
mixed_precision_param = "bfloat16"
[parallelism]
pipeline_parallel_degree = 2
pipeline_parallel_schedule = "Interleaved1F1B"
pipeline_parallel_layers_per_stage = 9
pipeline_parallel_first_stage_less_layers = 1
pipeline_parallel_last_stage_less_layers = 1
pipeline_parallel_microbatch_size = 1
tensor_parallel_degree = 2
data_parallel_shard_degree = 2
data_parallel_replicate_degree = 1
context_parallel_degree = 1
[activation_checkpoint]
mode = "selective"
selective_ac_option = "op"
)",
                                                                "a.toml")
                                             .imported,
                                         read_torchtitan_config(R"([model]
name = "llama3"
flavor = "8B"
[training]
batch_size = 4
[parallelism]
pipeline_parallel_microbatches = 4
)",
                                                                "b.toml")
                                             .imported};
  EXPECT_EQ(never_consulted(torchtitan_keys(), imports), std::vector<std::string>{});
}

// The help says what the readers do: Megatron's and torchtitan's tensor, sequence and data parallelism are
// read into the job, not "cannot be modelled" (the hand-written help once said so).
TEST(ImportKeys, TheHelpTextSaysWhatTheReaderReads) {
  const std::string megatron = collapsed(import_support_summary(megatron_argument_keys()));
  EXPECT_NE(megatron.find("--tensor-model-parallel-size -> parallel.tensor"), std::string::npos) << megatron;
  EXPECT_NE(megatron.find("--sequence-parallel -> parallel.sequence_parallel"), std::string::npos);
  EXPECT_NE(megatron.find("--use-distributed-optimizer -> parallel.zero: 1"), std::string::npos);
  EXPECT_NE(megatron.find("--num-experts -> model.moe.experts"), std::string::npos);
  const std::string unsupported = megatron.substr(megatron.find("not supported"));
  EXPECT_EQ(unsupported.find("tensor-model-parallel-size"), std::string::npos) << unsupported;
  EXPECT_EQ(unsupported.find("--expert-model-parallel-size"), std::string::npos) << unsupported;
  EXPECT_NE(megatron.find("--expert-model-parallel-size -> parallel.expert"), std::string::npos) << megatron;
  const std::string titan = collapsed(import_support_summary(torchtitan_keys()));
  EXPECT_NE(
      titan.find("parallelism.data_parallel_shard_degree -> parallel.data with parallel.zero: 3 (FSDP)"),
      std::string::npos)
      << titan;
  EXPECT_NE(titan.find("model.converters -> model.fp8 (float8, mx)"), std::string::npos);
  const std::string hf = collapsed(import_support_summary(hf_config_keys()));
  EXPECT_NE(hf.find("num_hidden_layers, n_layer, num_layers -> layers"), std::string::npos) << hf;
  EXPECT_NE(hf.find("vision_config"), std::string::npos);
}

TEST(ImportKeys, TheListingHasARowPerKey) {
  for (const ImportKeyTable* table : {&hf_config_keys(), &megatron_argument_keys(), &torchtitan_keys()}) {
    const std::string listing = import_key_listing(*table);
    EXPECT_EQ(static_cast<size_t>(std::count(listing.begin(), listing.end(), '\n')),
              table->keys().size() + 2);
    std::set<std::string> names;
    for (const ImportKey& key : table->keys())
      EXPECT_TRUE(names.insert(key.name).second) << key.name;  // no twice
  }
}

TEST(ImportKeys, ALookupTheTableLacksIsABug) {
  EXPECT_THROW(hf_config_keys().consulted("not_a_key"), std::logic_error);
  EXPECT_EQ(hf_config_keys().consulted("attn_pdrop").what, "dropout (any above 0)");  // a pattern
  EXPECT_EQ(torchtitan_keys().find("job.dump_folder")->use, KeyUse::kIgnored);        // a section
  EXPECT_EQ(torchtitan_keys().find("jobs.dump_folder"), nullptr);
}

}  // namespace
}  // namespace pipesim
