// The structured result record (report/result_record.h): typed parameters, the pipeline's shape, the sync
// token, null for what a run cannot know, and the document's header; of results filled below the api
// (tests/report/report_runs.h).
#include "report/result_record.h"

#include <gtest/gtest.h>

#include "pipesim_version.h"
#include "tests/report/report_runs.h"
#include "tests/scenario_text.h"

namespace pipesim {
namespace {

using ResultRecordJson = nlohmann::ordered_json;

TEST(ResultRecord, ParametersAreTypedAsTheScheduleRanThem) {
  const Scenario scenario = test::scenario_from_yaml(
      "pipeline: {stages: 4, microbatches: 8, batches: 2}\n"
      "costs: {forward_ms: 1, backward_input_ms: 1, backward_weight_ms: 1, weight_grad_activation_bytes: 0}\n"
      "schedules:\n"
      "  - {name: paci, accumulation: 2, max_in_flight: [4, 3, 2, 1]}\n"
      "  - {name: zb-1p, memory_limit: 1.5}\n"
      "  - interleaved-1f1b\n");
  const ResultRecordJson paci = result_record(test::explicit_costs_result(scenario, scenario.schedules[0]));
  EXPECT_EQ(paci["schedule"]["name"], "paci");
  EXPECT_EQ(paci["schedule"]["parameters"].dump(), R"({"accumulation":2,"max_in_flight":[4,3,2,1]})");
  EXPECT_EQ(paci["sync"], "none");
  EXPECT_TRUE(paci["metrics"]["bubble_rate_zb"].is_null());  // asynchronous: batches overlap
  const ResultRecordJson zb = result_record(test::explicit_costs_result(scenario, scenario.schedules[1]));
  EXPECT_EQ(zb["schedule"]["parameters"].dump(), R"({"memory_limit":1.5})");
  EXPECT_EQ(zb["sync"], "post-validation");  // zb-1p's default
  // A default is reported too: interleaved-1f1b runs v = 2 chunks when none is given.
  const ResultRecordJson interleaved =
      result_record(test::explicit_costs_result(scenario, scenario.schedules[2]));
  EXPECT_EQ(interleaved["schedule"]["parameters"].dump(), R"({"chunks":2})");
  EXPECT_EQ(interleaved["sync"], "barrier");
  EXPECT_EQ(interleaved["pipeline"]["devices"], 4);
  EXPECT_EQ(interleaved["pipeline"]["virtual_stages"], 8);
  EXPECT_EQ(interleaved["pipeline"]["chunks"], 2);
}

TEST(ResultRecord, UnknownFiguresAreNullNotZero) {
  // Explicit costs: no sequence length, no parameter bytes, no memory capacity.
  const SimulationResult run =
      test::explicit_costs_result(test::uniform_explicit_scenario(2, 4, 1, 2), "1f1b-flush");
  const ResultRecordJson r = result_record(run);
  EXPECT_TRUE(r["fits"].is_null());
  EXPECT_TRUE(r["pipeline"]["seq_len"].is_null());
  for (const char* key : {"throughput_tokens_per_s", "peak_weight_bytes", "memory_capacity_bytes"}) {
    EXPECT_TRUE(r["metrics"][key].is_null()) << key;
  }
  EXPECT_TRUE(r["devices"][0]["peak_weight_bytes"].is_null());
  // With parameter bytes the weights are known: one copy of 1 GB on each device (1F1B holds one version).
  Scenario weighted = test::uniform_explicit_scenario(2, 4, 1, 2);
  weighted.costs.parameter_bytes = {1'000'000'000, 1'000'000'000};
  const ResultRecordJson w = result_record(test::explicit_costs_result(weighted, "1f1b-flush"));
  EXPECT_EQ(w["metrics"]["peak_weight_bytes"], 1'000'000'000);
  EXPECT_EQ(w["devices"][1]["peak_weight_bytes"], 1'000'000'000);
}

TEST(ResultRecord, PipelineShapeWithAGlobalBatch) {
  // B = 128 over m = 24: b = 128/24 (a mean), and B = m x b again.
  const Scenario scenario = test::scenario_from_yaml(
      "pipeline: {stages: 4, microbatches: 24, global_batch: 128, batches: 2}\n"
      "costs: {forward_ms: 1, backward_ms: 2}\n");
  const ResultRecordJson p = result_record(test::explicit_costs_result(scenario, "1f1b-flush"))["pipeline"];
  EXPECT_EQ(p["microbatches"], 24);
  EXPECT_DOUBLE_EQ(p["microbatch_size"].get<double>(), 128.0 / 24);
  EXPECT_DOUBLE_EQ(p["global_batch"].get<double>(), 128.0);
  EXPECT_EQ(p["batches_requested"], 2);
}

TEST(ResultRecord, DocumentHeaderNamesFormatVersionAndScenario) {
  const SimulationResult run =
      test::explicit_costs_result(test::uniform_explicit_scenario(2, 2, 1, 2), "gpipe");
  const ResultRecordJson doc = results_document({"my-scenario", "dir/my.yaml"}, {run});
  EXPECT_EQ(doc["format"], "pipesim-result");
  EXPECT_EQ(doc["format_version"], 1);
  EXPECT_EQ(doc["pipesim_version"], PIPESIM_VERSION);
  EXPECT_EQ(doc["scenario"].dump(), R"({"name":"my-scenario","path":"dir/my.yaml"})");
  ASSERT_EQ(doc["results"].size(), 1u);
  EXPECT_EQ(doc["results"][0]["label"], "gpipe");
}

}  // namespace
}  // namespace pipesim
