// Megatron-LM's --pipeline-model-parallel-layout string (import/megatron_layout.h): expansion as Megatron
// expands it, layers per virtual stage, and an error naming the stage for every layout pipesim cannot run.
#include "import/megatron_layout.h"

#include <gtest/gtest.h>

#include "tests/error_text.h"

namespace pipesim {
namespace {

bool error_says(const std::function<void()>& action, const std::string& text) {
  const std::string message = test::input_error_of(action);
  EXPECT_NE(message.find(text), std::string::npos) << message;
  return message.find(text) != std::string::npos;
}

TEST(MegatronLayout, GroupsExpandBeforeCharacters) {
  EXPECT_EQ(expand_megatron_layout("xy(ab|cd|ef)*2,pq"), "xyab|cd|efab|cd|efpq");
  EXPECT_EQ(expand_megatron_layout("(ab)*3"), "ababab");
  EXPECT_EQ(expand_megatron_layout("ab,(cd|)*2"), "abcd|cd|");
  EXPECT_EQ(expand_megatron_layout("(|ab)*2,cd"), "|ab|abcd");
  EXPECT_EQ(expand_megatron_layout("(t*2|)*3"), "tt|tt|tt|");
  EXPECT_EQ(expand_megatron_layout("Et*3|t*0|L"), "Ettt||L");
  EXPECT_EQ(expand_megatron_layout("E t*12 L"), "EttttttttttttL");
}

TEST(MegatronLayout, StagesInModelOrderAndChunksPerRank) {
  // 30 layers on 4 ranks, 2 chunks: 8 virtual stages; the loss alone on the last.
  const MegatronLayout a = read_megatron_layout("Et*3|(tttt|)*6,L", 4, 27);
  EXPECT_EQ(a.chunks, 2);
  EXPECT_EQ(a.stage_layers, (std::vector<int>{3, 4, 4, 4, 4, 4, 4, 0}));
  const MegatronLayout b = read_megatron_layout("Ettt|tttt|tttt|tttL", 4, 14);
  EXPECT_EQ(b.chunks, 1);
  EXPECT_EQ(b.stage_layers, (std::vector<int>{3, 4, 4, 3}));
  const MegatronLayout one = read_megatron_layout("Et*5L", 1, 5);
  EXPECT_EQ(one.stage_layers, (std::vector<int>{5}));
}

TEST(MegatronLayout, ErrorsNameTheStageAndWhatWasExpected) {
  error_says([] { read_megatron_layout("Et*3|(tt|)*29,m|L", 16, 61); }, "multi-token prediction");
  error_says([] { read_megatron_layout("Ettx|ttL", 2, 4); }, "virtual stage 0 ('Ettx'): unknown layer 'x'");
  error_says([] { read_megatron_layout("tEt|ttL", 2, 4); }, "must open the first stage");
  error_says([] { read_megatron_layout("Ett|tLt", 2, 4); }, "must close the last stage");
  error_says([] { read_megatron_layout("Ett|tt", 2, 4); }, "no loss L");
  error_says([] { read_megatron_layout("Ett|ttL", 2, 5); }, "4 transformer layers t, but --num-layers 5");
  error_says([] { read_megatron_layout("Et|t|tL", 2, 3); }, "3 virtual stages do not divide");
  error_says([] { read_megatron_layout("E(tt|*2L", 1, 2); }, "'(' without a group");
  error_says([] { read_megatron_layout("Ett)|L", 1, 2); }, "')' without its '('");
  error_says([] { read_megatron_layout("Et*|L", 1, 1); }, "must be followed by a count");
  error_says([] { read_megatron_layout("E(t)*99999999L", 1, 1); }, "more than 1000000 characters");
}

}  // namespace
}  // namespace pipesim
