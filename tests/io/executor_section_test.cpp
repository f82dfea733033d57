// The scenario's `executor:` section: every key read, command-line flags over it, and bad values reported
// with the file, line and key and what is allowed.
#include <gtest/gtest.h>

#include "base/errors.h"
#include "tests/error_text.h"
#include "tests/scenario_text.h"
#include "tests/temp_dir.h"

namespace pipesim {
namespace {

const std::string kPipeline =
    "pipeline: {stages: 2, microbatches: 2}\n"
    "costs: {forward_ms: 1, backward_ms: 2}\n";

std::string section_error_of(const std::string& executor_yaml) {
  try {
    test::scenario_from_yaml(kPipeline + executor_yaml);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ExecutorSection, ReadsEveryKeyAndFlagsOverlayIt) {
  const Scenario s = test::scenario_from_yaml(kPipeline +
                                              "executor: {model: gpt, data: austen, width: 48, blocks: 3, "
                                              "heads: 4, context: 24, embedding_width: 6,\n"
                                              "           samples: 5, learning_rate: 0.25, seed: 9}\n");
  EXPECT_EQ(s.executor.model, "gpt");
  EXPECT_EQ(s.executor.data, "austen");
  EXPECT_EQ(s.executor.width, 48);
  EXPECT_EQ(s.executor.blocks, 3);
  EXPECT_EQ(s.executor.heads, 4);
  EXPECT_EQ(s.executor.context, 24);
  EXPECT_EQ(s.executor.embedding_width, 6);
  EXPECT_EQ(s.executor.samples, 5);
  EXPECT_EQ(s.executor.learning_rate, 0.25);
  EXPECT_EQ(s.executor.seed, 9);
  ExecutorSection merged = s.executor;
  ExecutorSection flags;
  flags.width = 64;
  merged.overlay(flags);
  EXPECT_EQ(merged.width, 64);
  EXPECT_EQ(merged.heads, 4);
  EXPECT_FALSE(test::scenario_from_yaml(kPipeline).executor.model.has_value());
  EXPECT_EQ(test::scenario_from_yaml(kPipeline, {"executor.samples=7"}).executor.samples, 7);
}

TEST(ExecutorSection, BadValuesNameTheFileLineAndKey) {
  EXPECT_NE(section_error_of("executor: {model: lstm}\n").find("test.yaml:3: key 'executor.model'"),
            std::string::npos);
  EXPECT_NE(section_error_of("executor: {model: lstm}\n").find("'residual_mlp', 'gpt'"), std::string::npos);
  EXPECT_NE(section_error_of("executor:\n  data: imagenet\n").find("test.yaml:4: key 'executor.data'"),
            std::string::npos);
  EXPECT_NE(section_error_of("executor: {model: gpt, data: fashion_mnist}\n").find("a text corpus"),
            std::string::npos);
  EXPECT_NE(
      section_error_of("executor: {model: gpt, data: snippet, width: 10, heads: 4}\n").find("executor.heads"),
      std::string::npos);
  EXPECT_NE(section_error_of("executor: {width: 0}\n").find("executor.width"), std::string::npos);
  EXPECT_NE(section_error_of("executor: {colour: red}\n").find("unknown key"), std::string::npos);
}

}  // namespace
}  // namespace pipesim
