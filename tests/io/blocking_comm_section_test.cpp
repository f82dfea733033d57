// The scenario's comm.blocking (io/scenario.h): true or false, an error naming the line and the key
// otherwise. What blocking comm does is tests/schedules/blocking_comm_test.cpp.
#include <gtest/gtest.h>

#include <string>

#include "tests/error_text.h"
#include "tests/scenario_text.h"

namespace pipesim {
namespace {

using test::scenario_from_yaml;

TEST(BlockingComm, BlockingMustBeTrueOrFalse) {
  const std::string error = test::input_error_of([] {
    scenario_from_yaml(
        "pipeline: {stages: 2, microbatches: 2}\n"
        "costs: {forward_ms: 1, backward_ms: 1}\n"
        "comm: {model: latency, blocking: sometimes}\n");
  });
  EXPECT_NE(error.find("test.yaml:3"), std::string::npos) << error;
  EXPECT_NE(error.find("comm.blocking"), std::string::npos) << error;
  EXPECT_NE(error.find("true"), std::string::npos) << error;
}

}  // namespace
}  // namespace pipesim
