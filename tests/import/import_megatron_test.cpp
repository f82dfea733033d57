// `pipesim import megatron` (import/megatron_args.h): GPT-3 175B's published Megatron-LM setting as an
// argument list, read into the model and pipeline it describes, every argument accounted for.
#include <gtest/gtest.h>

#include <algorithm>

#include "import/import_scenario.h"
#include "import/megatron_args.h"
#include "io/scenario.h"
#include "tests/error_text.h"

namespace pipesim {
namespace {

// GPT-3 175B as Megatron-LM's examples train it: TP 8, PP 16, interleaved, sequence parallel, the distributed
// optimizer, plus training and data arguments.
const std::vector<std::string> kGpt3_175B = {"--num-layers",
                                             "96",
                                             "--hidden-size",
                                             "12288",
                                             "--num-attention-heads",
                                             "96",
                                             "--seq-length",
                                             "2048",
                                             "--max-position-embeddings",
                                             "2048",
                                             "--micro-batch-size",
                                             "1",
                                             "--global-batch-size",
                                             "1536",
                                             "--tensor-model-parallel-size",
                                             "8",
                                             "--pipeline-model-parallel-size",
                                             "16",
                                             "--num-layers-per-virtual-pipeline-stage",
                                             "2",
                                             "--sequence-parallel",
                                             "--use-distributed-optimizer",
                                             "--bf16",
                                             "--vocab-size",
                                             "50257",
                                             "--lr",
                                             "6.0e-5",
                                             "--data-path",
                                             "/data/gpt3_text_document",
                                             "--attention-dropout=0.0",
                                             "--hidden-dropout",
                                             "0.0",
                                             "--our-own-flag"};

TEST(ImportMegatron, Gpt3Is96LayersOn16StagesOfThreeChunks) {
  const MegatronImport m = read_megatron_args(kGpt3_175B);
  const TransformerModel& t = m.imported.model;
  EXPECT_EQ(t.layers, 96);
  EXPECT_EQ(t.hidden, 12288);
  EXPECT_EQ(t.heads, 96);
  EXPECT_EQ(t.kv_heads, 0);
  EXPECT_EQ(t.seq_len, 2048);
  EXPECT_EQ(t.vocab, 51200);  // 50257 padded to a multiple of 128 x 8
  EXPECT_EQ(t.ffn_hidden, 4 * 12288);
  EXPECT_EQ(t.mlp, MlpKind::kGelu);
  EXPECT_EQ(t.norm, NormKind::kLayerNorm);  // no --normalization: Megatron's default
  EXPECT_TRUE(test::any_line_contains(m.imported.assumed, "no --normalization: LayerNorm"));
  EXPECT_TRUE(t.tied_embeddings);
  EXPECT_FALSE(t.dropout);
  EXPECT_EQ(t.dtype, "bf16");
  EXPECT_EQ(m.pipeline_stages, 16);
  EXPECT_EQ(m.chunks, 3);  // 96 / (16 x 2)
  EXPECT_EQ(m.micro_batch, 1);
  EXPECT_EQ(m.global_batch, 1536);
  EXPECT_EQ(m.tensor_parallel, 8);
  const ModelImport& i = m.imported;
  // The job: tensor parallelism 8 with sequence parallelism, the distributed optimizer as ZeRO-1.
  EXPECT_TRUE(test::any_line_contains(i.read, "--tensor-model-parallel-size 8 -> parallel.tensor"));
  EXPECT_TRUE(test::any_line_contains(i.read, "--sequence-parallel -> parallel.sequence_parallel"));
  EXPECT_TRUE(test::any_line_contains(i.read, "--use-distributed-optimizer -> parallel.zero: 1"));
  EXPECT_EQ(i.parallel.tensor, 8);
  EXPECT_TRUE(i.parallel.sequence_parallel);
  EXPECT_EQ(i.parallel.zero, 1);
  EXPECT_TRUE(test::any_line_contains(i.ignored, "--lr 6.0e-5"));
  EXPECT_TRUE(
      test::any_line_contains(i.ignored, "--max-position-embeddings 2048"));  // listed, not consumed silently
  EXPECT_TRUE(test::any_line_contains(i.ignored, "--data-path /data/gpt3_text_document"));
  EXPECT_EQ(i.unknown, std::vector<std::string>{"--our-own-flag"});
}

// Llama-style arguments: SwiGLU with Megatron's default width, grouped queries, untied, defaults stated.
TEST(ImportMegatron, SwigluDefaultsAndGroupedQueries) {
  const MegatronImport m = read_megatron_args({"--num-layers",
                                               "32",
                                               "--hidden-size",
                                               "4096",
                                               "--num-attention-heads",
                                               "32",
                                               "--group-query-attention",
                                               "--num-query-groups",
                                               "8",
                                               "--swiglu",
                                               "--normalization",
                                               "RMSNorm",
                                               "--seq-length",
                                               "4096",
                                               "--untie-embeddings-and-output-weights",
                                               "--pipeline-model-parallel-size",
                                               "4",
                                               "--virtual-pipeline-model-parallel-size",
                                               "2",
                                               "--recompute-granularity",
                                               "selective",
                                               "--context-parallel-size",
                                               "1",
                                               "--fp16"},
                                              128256);
  const TransformerModel& t = m.imported.model;
  EXPECT_EQ(t.mlp, MlpKind::kSwiglu);
  EXPECT_EQ(t.norm, NormKind::kRmsNorm);
  EXPECT_EQ(t.ffn_hidden, 10880);  // int(4 x 4096 x 2/3 / 64) x 64
  EXPECT_EQ(t.kv_heads, 8);
  EXPECT_FALSE(t.tied_embeddings);
  EXPECT_TRUE(t.dropout);  // Megatron's default 0.1
  EXPECT_EQ(t.recompute, Recompute::kSelective);
  EXPECT_EQ(t.dtype, "fp16");
  EXPECT_EQ(t.vocab, 128256);  // already a multiple of 128
  EXPECT_EQ(m.chunks, 2);
  EXPECT_TRUE(test::any_line_contains(
      m.imported.read, "--context-parallel-size 1 -> parallel.context"));  // a size of 1 is no feature
  EXPECT_TRUE(m.imported.unsupported.empty()) << m.imported.unsupported.front();
}

TEST(ImportMegatron, BadArgumentsSayWhatWasExpected) {
  EXPECT_NE(test::input_error_of([] {
              read_megatron_args({"--hidden-size", "8"});
            }).find("no --num-layers"),
            std::string::npos);
  EXPECT_NE(test::input_error_of([] {
              read_megatron_args({"--num-layers", "x2", "--hidden-size", "8", "--num-attention-heads", "2"});
            }).find("--num-layers 'x2': expected a positive integer"),
            std::string::npos);
  EXPECT_NE(test::input_error_of([] {
              read_megatron_args({"--num-layers", "2", "--hidden-size", "8", "--num-attention-heads", "2",
                                  "--seq-length", "16"});
            }).find("no --vocab-size"),
            std::string::npos);
  EXPECT_NE(test::input_error_of([] {
              read_megatron_args({"num-layers", "2"});
            }).find("expected --name"),
            std::string::npos);
  EXPECT_NE(
      test::input_error_of([] {
        read_megatron_args({"--num-layers", "2", "--hidden-size", "8", "--num-attention-heads", "2",
                            "--seq-length", "16", "--vocab-size", "128", "--normalization", "BatchNorm"});
      }).find("--normalization BatchNorm: expected LayerNorm or RMSNorm"),
      std::string::npos);
}

// Megatron's uneven stages: the first and last ranks' layers given, the rest equally over the middle ranks,
// each rank's layers equally over its chunks; or the embedding and loss counted as layers.
TEST(ImportMegatron, ContextParallelSizeIsRead) {
  std::vector<std::string> args = kGpt3_175B;
  args.insert(args.end(), {"--context-parallel-size", "2"});
  const MegatronImport m = read_megatron_args(args);
  EXPECT_EQ(m.imported.parallel.context, 2);
  EXPECT_TRUE(test::any_line_contains(m.imported.read, "--context-parallel-size 2 -> parallel.context"));
  EXPECT_FALSE(test::any_line_contains(m.imported.unsupported, "context-parallel-size"));
}

// Megatron's --tp-comm-overlap: the tensor-parallel collectives overlap the weight GEMMs, said and written.
TEST(ImportMegatron, TpCommOverlapIsRead) {
  std::vector<std::string> args = kGpt3_175B;
  args.push_back("--tp-comm-overlap");
  const MegatronImport m = read_megatron_args(args);
  EXPECT_TRUE(m.imported.parallel.overlap_tensor_comm);
  EXPECT_TRUE(test::any_line_contains(m.imported.read, "--tp-comm-overlap -> parallel.overlap_tensor_comm"));
  EXPECT_FALSE(test::any_line_contains(m.imported.unsupported, "tp-comm-overlap"));
  EXPECT_FALSE(read_megatron_args(kGpt3_175B).imported.parallel.overlap_tensor_comm);
}

// A 30-layer model on 4 pipeline ranks, with `extra` arguments.
MegatronImport thirty_layers_on_four_ranks(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {
      "--num-layers", "30",   "--hidden-size", "1024",  "--num-attention-heads",          "16",
      "--seq-length", "1024", "--vocab-size",  "32000", "--pipeline-model-parallel-size", "4"};
  args.insert(args.end(), extra.begin(), extra.end());
  return read_megatron_args(args);
}

TEST(ImportMegatron, UnevenStagesBecomeTheEntrysLayerSplit) {
  const auto with = thirty_layers_on_four_ranks;
  const MegatronImport plain =
      with({"--decoder-first-pipeline-num-layers", "6", "--decoder-last-pipeline-num-layers", "6"});
  EXPECT_EQ(plain.stage_layers, (std::vector<int>{6, 9, 9, 6}));
  EXPECT_TRUE(test::any_line_contains(plain.imported.read, "layer_split [6, 9, 9, 6]"));
  const MegatronImport chunked =
      with({"--decoder-first-pipeline-num-layers", "6", "--decoder-last-pipeline-num-layers", "6",
            "--virtual-pipeline-model-parallel-size", "3"});
  // Chunk c of rank r is virtual stage 4c + r: each chunk holds a third of its rank's layers.
  EXPECT_EQ(chunked.stage_layers, (std::vector<int>{2, 3, 3, 2, 2, 3, 3, 2, 2, 3, 3, 2}));
  const MegatronImport first_only = with({"--decoder-first-pipeline-num-layers", "3"});
  EXPECT_EQ(first_only.stage_layers, (std::vector<int>{3, 9, 9, 9}));
  const MegatronImport counted =
      with({"--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split"});
  EXPECT_EQ(counted.stage_layers, (std::vector<int>{7, 8, 8, 7}));  // 32 slots / 4
  EXPECT_TRUE(with({}).stage_layers.empty());
  EXPECT_NE(test::input_error_of([&] {
              with({"--decoder-first-pipeline-num-layers", "5"});
            }).find("25 layers do not split equally into 3 chunk(s)"),
            std::string::npos);
}

bool layout_error_says(const std::function<void()>& action, const std::string& text) {
  const std::string message = test::input_error_of(action);
  EXPECT_NE(message.find(text), std::string::npos) << message;
  return message.find(text) != std::string::npos;
}

// Megatron's --pipeline-model-parallel-layout (import/megatron_layout.h): its stages' layers, its chunks.
TEST(ImportMegatron, ALayoutStringBecomesTheEntrysLayerSplit) {
  const auto with = thirty_layers_on_four_ranks;
  const MegatronImport m = with({"--pipeline-model-parallel-layout", "Et*3|(tttt|)*6,t*3L"});
  EXPECT_EQ(m.chunks, 2);
  EXPECT_EQ(m.stage_layers, (std::vector<int>{3, 4, 4, 4, 4, 4, 4, 3}));
  EXPECT_TRUE(m.imported.unsupported.empty());
  layout_error_says(
      [&] {
        with({"--pipeline-model-parallel-layout", "Et*3|(tttt|)*6,t*3L",
              "--virtual-pipeline-model-parallel-size", "4"});
      },
      "has 2 chunk(s) per rank, but the virtual pipeline arguments say 4");
  layout_error_says(
      [&] {
        with({"--pipeline-model-parallel-layout", "Et*3|(tttt|)*6,t*3L",
              "--decoder-first-pipeline-num-layers", "3"});
      },
      "give one or the other");
}

// The scenario the GPT-3 arguments make reads back with Megatron's interleaved schedule first.
TEST(ImportMegatron, TheScenarioReadsBackWithTheInterleavedScheduleFirst) {
  const MegatronImport m = read_megatron_args(kGpt3_175B);
  ImportSettings settings;
  settings.name = "gpt3-175b";
  settings.stages = m.pipeline_stages;
  settings.microbatches = 1536 / 8;
  settings.global_batch = 1536 / 8;
  settings.schedules = "[{name: interleaved-1f1b, chunks: 3}, 1f1b-flush]";
  settings.pipeline_from_options = false;
  settings.origin = "pipesim import megatron --data-parallel 8 -- ...";
  const Scenario s = parse_scenario(scenario_from_import(m.imported, settings), "gpt3.yaml");
  EXPECT_EQ(s.stages, 16);
  EXPECT_EQ(s.microbatches, 192);
  ASSERT_EQ(s.schedules.size(), 2u);
  EXPECT_EQ(s.schedules[0].name, "interleaved-1f1b");
  ASSERT_TRUE(s.transformer.has_value());
  EXPECT_EQ(s.transformer->model.vocab, 51200);
}

// Read as Megatron's argparse reads them: nargs arguments take every value up to the next --name; an
// unknown argument a typo away from a known one is refused with a did-you-mean (exit 2) unless --lenient;
// a tokenizer of fixed size gives the vocabulary.
TEST(ImportMegatron, ArgumentsAreReadAsArgparseReadsThem) {
  const std::vector<std::string> base = {"--num-layers",          "4", "--hidden-size", "512",
                                         "--num-attention-heads", "8", "--seq-length",  "1024"};
  std::vector<std::string> args = base;
  for (const char* a :
       {"--data-path", "0.5", "a", "0.5", "b", "--recompute-modules", "mlp", "moe", "--vocab-size", "32000"})
    args.push_back(a);
  const MegatronImport read = read_megatron_args(args);
  EXPECT_TRUE(test::any_line_contains(read.imported.ignored, "--data-path 0.5 a 0.5 b"))
      << read.imported.ignored.front();
  std::vector<std::string> typo = base;
  for (const char* a : {"--vocab-size", "32000", "--tensor-model-paralel-size", "2"}) typo.push_back(a);
  try {
    read_megatron_args(typo);
    ADD_FAILURE() << "a typo was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean '--tensor-model-parallel-size'?"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(test::any_line_contains(read_megatron_args(typo, std::nullopt, true).imported.unknown,
                                      "--tensor-model-paralel-size 2"));
  std::vector<std::string> gpt2 = base;
  for (const char* a : {"--tokenizer-type", "GPT2BPETokenizer"}) gpt2.push_back(a);
  EXPECT_EQ(read_megatron_args(gpt2).imported.model.vocab, 50304);  // 50257 padded to a multiple of 128
  std::vector<std::string> sentencepiece = base;
  for (const char* a : {"--tokenizer-type", "SentencePieceTokenizer"}) sentencepiece.push_back(a);
  EXPECT_NE(test::input_error_of([&] {
              read_megatron_args(sentencepiece);
            }).find("--tokenizer-type SentencePieceTokenizer has no fixed size"),
            std::string::npos);
}

// --moe-layer-freq as Megatron evaluates it: leading dense layers then MoE layers (DeepSeek-V3's
// "[0]*3+[1]*58"), an explicit list, an integer period; another pattern is listed as not supported.
TEST(ImportMegatron, MoeLayerFreqGivesTheDenseFirstLayers) {
  const auto with = [](const std::string& freq) {
    return read_megatron_args({"--num-layers", "6", "--hidden-size", "1024", "--num-attention-heads", "8",
                               "--seq-length", "2048", "--vocab-size", "32000", "--swiglu", "--num-experts",
                               "8", "--moe-router-topk", "2", "--moe-layer-freq", freq})
        .imported;
  };
  EXPECT_EQ(with("[0]*2+[1]*4").model.moe.dense_layers, 2);
  EXPECT_EQ(with("[0, 1, 1, 1, 1, 1]").model.moe.dense_layers, 1);
  EXPECT_EQ(with("1").model.moe.dense_layers, 0);
  EXPECT_EQ(with("2").model.moe.layer_step, 2);
  EXPECT_TRUE(test::any_line_contains(with("2").assumed, "--moe-layer-freq 2"));
  for (const char* bad : {"[1,0]*3", "[0]*2+[1]*3", "[0]*x", "two"}) {
    const ModelImport m = with(bad);
    EXPECT_EQ(m.model.moe.dense_layers, 0) << bad;
    EXPECT_TRUE(test::any_line_contains(m.unsupported, "--moe-layer-freq")) << bad;
  }
}

}  // namespace
}  // namespace pipesim
