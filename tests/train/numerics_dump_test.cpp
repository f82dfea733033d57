// The numerics dumps: the .npy format byte by byte, and a run's dumped weights after its K-th step equal
// plain sequential training's for K steps (the same numbers an independent implementation must reproduce),
// with the manifest naming every tensor and the refusals of a dump that cannot be made.
#include "train/numerics_dump.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/errors.h"
#include "executor/datasets.h"
#include "executor/sequential_training.h"
#include "tests/test_util.h"
#include "train/execute.h"

namespace pipesim {
namespace {

std::string read_binary(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The values of a float32 .npy file written by write_npy (header checked by the format test).
std::vector<float> read_npy_floats(const std::string& path) {
  const std::string bytes = read_binary(path);
  const std::size_t header =
      10 + static_cast<unsigned char>(bytes[8]) + 256 * static_cast<unsigned char>(bytes[9]);
  std::vector<float> values((bytes.size() - header) / 4);
  std::memcpy(values.data(), bytes.data() + header, values.size() * 4);
  return values;
}

TEST(NumericsDump, NpyFilesHaveNumpysVersionOneHeaderAndLittleEndianValues) {
  const std::string dir = testing::TempDir() + "/npy";
  const std::vector<float> values{1.0F, -2.5F, 3.0F, 0.0F, 5.0F, 6.0F};
  write_npy(dir + "/a.npy", values, {2, 3});
  const std::string bytes = read_binary(dir + "/a.npy");
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const std::size_t header_length =
      static_cast<unsigned char>(bytes[8]) + 256 * static_cast<unsigned char>(bytes[9]);
  EXPECT_EQ((10 + header_length) % 64, 0U);  // the data starts aligned
  const std::string header = bytes.substr(10, header_length);
  EXPECT_EQ(header.substr(0, header.find('}') + 1),
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ(bytes.size(), 10 + header_length + 6 * 4);
  EXPECT_EQ(read_npy_floats(dir + "/a.npy"), values);
  const std::vector<int> labels{3, 1};
  write_npy(dir + "/b.npy", labels, {2});
  const std::string b = read_binary(dir + "/b.npy");
  EXPECT_NE(b.find("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }"), std::string::npos);
  EXPECT_EQ(b.substr(b.size() - 8), std::string("\x03\x00\x00\x00\x01\x00\x00\x00", 8));
  EXPECT_FALSE(std::filesystem::exists(dir + "/a.npy.tmp"));
}

ExecuteOptions dump_options(const std::string& dir) {
  ExecuteOptions options;
  options.setup.shape = {.input_width = 8, .width = 8, .blocks = 2, .classes = 3};
  options.setup.samples_per_microbatch = 4;
  options.setup.optimizer.kind = executor::OptimizerKind::kAdamW;
  options.setup.learning_rate = 0.01F;
  options.dump.init_dir = dir + "/init";
  options.dump.batches_dir = dir + "/batches";
  options.dump.weights_at_steps = {1, 3};
  return options;
}

TEST(NumericsDump, AFlushsWeightsAfterItsKthStepAreSequentialTrainingsAfterK) {
  const std::string dir = testing::TempDir() + "/dump";
  std::filesystem::remove_all(dir);
  // N = 2, m = 2, 3 batches.
  const Scenario scenario = test::uniform_scenario(2, 2, 1.0, 2.0, 0, 3);
  const ExecuteOptions options = dump_options(dir);
  const ExecutedSchedule run =
      execute_schedule(scenario, {"1f1b-flush", ScheduleParams(test::kTestSource)}, options);
  const nlohmann::json manifest = nlohmann::json::parse(read_binary(dir + "/init/manifest.json"));
  EXPECT_EQ(manifest["format"], "pipesim-numerics");
  EXPECT_EQ(manifest["training"]["learning_rate_by_step"].size(), 3U);
  EXPECT_EQ(manifest["training"]["optimizer"]["kind"], "adamw");
  // Input projection, 2 residual blocks, head: 4 units over 2 stages, each tensor a file.
  ASSERT_EQ(manifest["units"].size(), 4U);
  EXPECT_EQ(manifest["units"][1]["kind"], "residual_mlp");
  EXPECT_EQ(manifest["units"][1]["tensors"][2]["name"], "w_in");
  EXPECT_EQ(manifest["units"][1]["tensors"][2]["shape"], nlohmann::json::array({8, 32}));
  EXPECT_EQ(manifest["units"][3]["stage"], 2);
  const executor::TrainingSetup& setup = run.setup;
  for (int steps : {1, 3}) {
    const std::vector<std::vector<float>> reference = executor::train_sequentially(setup, 2, steps);
    for (int stage = 0; stage < 2; ++stage) {
      // The stage's tensors in unit and block order make up its flat parameters.
      std::vector<float> dumped;
      for (const nlohmann::json& unit : manifest["units"]) {
        if (unit["stage"] != stage + 1) continue;
        for (const nlohmann::json& t : unit["tensors"]) {
          const std::vector<float> values = read_npy_floats(
              fmt::format("{}/init/weights-step-{}/{}", dir, steps, t["file"].get<std::string>()));
          dumped.insert(dumped.end(), values.begin(), values.end());
        }
      }
      EXPECT_EQ(dumped, reference[stage]) << steps << " steps, stage " << stage + 1;
    }
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/init/weights-step-2"));
  // Every microbatch of the 3 batches: inputs [4, 8], labels [4], as training_microbatch draws them.
  const nlohmann::json batches = nlohmann::json::parse(read_binary(dir + "/batches/batches.json"));
  ASSERT_EQ(batches["microbatches"].size(), 6U);
  const executor::Microbatch<float> mb = executor::training_microbatch(setup, 2, 1);
  EXPECT_EQ(read_npy_floats(dir + "/batches/step0002-mb01-inputs.npy"), mb.inputs.values);
}

// The pipelined time on measured costs is the same plan at each op's own CPU time, transfers free: between
// the busiest device's work and all the work one op after another, and each op as long as it measured.
TEST(MeasuredPipeline, TimesThePlanAtEachOpsMeasuredCpuTime) {
  ExecuteOptions options;
  options.measured_pipeline = true;
  const Scenario scenario = test::uniform_scenario(2, 4, 1.0, 2.0, 0, 3);
  const ExecutedSchedule run =
      execute_schedule(scenario, {"1f1b-flush", ScheduleParams(test::kTestSource)}, options);
  const RunTrace& pipeline = run.measured_pipeline;
  ASSERT_EQ(pipeline.ops.size(), run.result.ops.size());
  TimeNs total = 0;
  std::vector<TimeNs> busy(2, 0);
  for (const executor::ExecutedOp& op : run.result.ops) {
    total += op.thread_cpu_ns;
    busy.at(op.device) += op.thread_cpu_ns;
  }
  EXPECT_LE(pipeline.makespan_ns, total);
  EXPECT_GE(pipeline.makespan_ns, std::max(busy[0], busy[1]));
  // Each op lasts what it measured (ops may run in another order, so matched by action).
  for (const executor::ExecutedOp& op : run.result.ops) {
    const auto same = std::find_if(pipeline.ops.begin(), pipeline.ops.end(),
                                   [&](const OpRecord& r) { return r.action == op.action; });
    ASSERT_NE(same, pipeline.ops.end()) << describe(op.action);
    EXPECT_EQ(same->duration_ns(), op.thread_cpu_ns) << describe(op.action);
  }
  // Not asked: not timed.
  const ExecutedSchedule plain =
      execute_schedule(scenario, {"1f1b-flush", ScheduleParams(test::kTestSource)}, ExecuteOptions{});
  EXPECT_TRUE(plain.measured_pipeline.ops.empty());
}

TEST(NumericsDump, ADumpThatCannotBeMadeIsRefused) {
  const std::string dir = testing::TempDir() + "/dump_refused";
  const Scenario scenario = test::uniform_scenario(2, 2, 1.0, 2.0, 0, 3);
  ExecuteOptions options = dump_options(dir);
  options.dump.weights_at_steps = {4};  // 3 batches: 3 steps
  try {
    execute_schedule(scenario, {"1f1b-flush", ScheduleParams(test::kTestSource)}, options);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--dump-weights-at 4: stage 1 took 3 optimizer steps"),
              std::string::npos)
        << e.what();
  }
  options = dump_options(dir);
  options.dump.init_dir.clear();
  EXPECT_THROW(execute_schedule(scenario, {"1f1b-flush", ScheduleParams(test::kTestSource)}, options),
               InputError);
  options = dump_options(dir);
  options.mode = ExecuteMode::kReal;
  EXPECT_THROW(execute_schedule(scenario, {"1f1b-flush", ScheduleParams(test::kTestSource)}, options),
               InputError);
}

}  // namespace
}  // namespace pipesim
