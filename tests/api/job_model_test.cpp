// A scenario's parallel: section end to end: read with its checks, and the per-GPU figures of a run whose
// pipeline devices are tensor-parallel groups.
#include <gtest/gtest.h>

#include <cmath>

#include "api/resolve.h"
#include "api/simulation.h"
#include "cost_models/transformer/shapes_flops.h"
#include "cost_models/transformer/stage_costs.h"
#include "pipesim_source_dir.h"
#include "report/result_figures.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

std::string job_yaml(const std::string& parallel) {
  return "model: {layers: 8, hidden: 1024, heads: 16, seq_len: 1024, vocab: 32000}\n"
         "hardware: {profile: h100-sxm5-80gb}\n"
         "pipeline: {stages: 4, microbatches: 8}\n" +
         parallel + "schedules: [1f1b-flush]\n";
}

TEST(JobModel, PerGpuFiguresDivideByEveryGpuOfTheReplica) {
  const Scenario s = test::scenario_from_yaml(job_yaml("parallel: {tensor: 2, data: 4, zero: 1}\n"));
  const SimulationResult r = simulate_schedule(s, s.schedules.at(0), {});
  EXPECT_EQ(r.gpus_per_device, 2);
  // 4 pipeline ranks of 2 GPUs: 8 GPUs per replica.
  EXPECT_DOUBLE_EQ(r.metrics.throughput_samples_per_gpu_s, r.metrics.throughput_samples_per_s / 8);
  EXPECT_DOUBLE_EQ(*model_tflops_per_device(r),
                   r.metrics.throughput_samples_per_s * r.model_flops_per_sample / 8 / 1e12);
  EXPECT_DOUBLE_EQ(*model_flops_utilization(r), *model_tflops_per_device(r) * 1e12 / r.peak_flops_per_device);
  EXPECT_NE(r.model_choices.find("job: tensor parallel 2, data parallel 4 with ZeRO-1 over 4 ranks, 32 GPUs"),
            std::string::npos)
      << r.model_choices;
  // Tensor parallelism 2 is faster per replica than 1 and slower than twice as fast (its all-reduces).
  const Scenario one = test::scenario_from_yaml(job_yaml(""));
  const SimulationResult single = simulate_schedule(one, one.schedules.at(0), {});
  EXPECT_GT(r.metrics.throughput_samples_per_s, single.metrics.throughput_samples_per_s);
  EXPECT_LT(r.metrics.throughput_samples_per_s, 2 * single.metrics.throughput_samples_per_s);
}

// The gradient reduction before the step's barrier (Megatron's --overlap-grad-reduce): each stage's starts
// as its own backwards end, so the step is shorter than with every reduction after the barrier, by at most
// the longest reduction; and a context-parallel job's per-GPU figures divide by t x c.
TEST(JobModel, OverlappedGradientReductionsShortenTheStep) {
  const auto run = [](const std::string& parallel) {
    const Scenario s = test::scenario_from_yaml(job_yaml(parallel));
    return simulate_schedule(s, s.schedules.at(0), {});
  };
  const SimulationResult on = run("parallel: {data: 8}\n");
  const SimulationResult off = run("parallel: {data: 8, overlap_grad_reduce: false}\n");
  const Scenario s = test::scenario_from_yaml(job_yaml("parallel: {data: 8}\n"));
  double longest_reduce_s = 0;
  for (const StageCosts& c : transformer_stage_costs(*s.transformer, 1, 4)) {
    longest_reduce_s = std::max(longest_reduce_s, c.gradient_reduce_s);
  }
  ASSERT_GT(longest_reduce_s, 0);
  const double step_on = 1 / on.metrics.throughput_samples_per_s * 8;
  const double step_off = 1 / off.metrics.throughput_samples_per_s * 8;
  EXPECT_LT(step_on, step_off);
  EXPECT_LE(step_off - step_on, longest_reduce_s * (1 + 1e-9));
  const SimulationResult context = run("parallel: {tensor: 2, context: 2, data: 2}\n");
  EXPECT_EQ(context.gpus_per_device, 4);
  EXPECT_DOUBLE_EQ(context.metrics.throughput_samples_per_gpu_s,
                   context.metrics.throughput_samples_per_s / 16);
  EXPECT_NE(context.model_choices.find("context parallel 2 (ring attention)"), std::string::npos)
      << context.model_choices;
}

TEST(JobModel, TheParallelSectionIsChecked) {
  const auto error = [](const std::string& parallel) {
    return test::input_error_of([&] { test::scenario_from_yaml(job_yaml(parallel)); });
  };
  EXPECT_NE(
      error("parallel: {tensor: 3}\n").find("key 'parallel.tensor': expected a divisor of model.heads (16)"),
      std::string::npos);
  EXPECT_NE(error("parallel: {data: 2, zero: 3, overlap_weight_gather: maybe}\n")
                .find("parallel.overlap_weight_gather"),
            std::string::npos);
  EXPECT_FALSE(
      test::scenario_from_yaml(job_yaml("parallel: {data: 2, zero: 3, overlap_weight_gather: false}\n"))
          .transformer->parallel.overlap_weight_gather);
  EXPECT_NE(error("parallel: {zero: 1}\n").find("parallel.data or parallel.context > 1"), std::string::npos);
  EXPECT_NE(error("parallel: {context: 3}\n").find("2c dividing model.seq_len (1024"), std::string::npos);
  EXPECT_NE(error("parallel: {data: 2, overlap_grad_reduce: 2}\n").find("parallel.overlap_grad_reduce"),
            std::string::npos);
  EXPECT_NE(error("parallel: {sequence_parallel: true}\n").find("tensor parallelism"), std::string::npos);
  EXPECT_NE(error("parallel: {data: 2, zero: 4}\n").find("0, 1, 2 or 3"), std::string::npos);
  EXPECT_NE(error("parallel: {tensr: 2}\n").find("tensr"), std::string::npos);
  // Megatron's distributed optimizer is ZeRO-1.
  const Scenario s = test::scenario_from_yaml(job_yaml("parallel: {data: 2, distributed_optimizer: true}\n"));
  EXPECT_EQ(s.transformer->parallel.zero, 1);
  // Explicit costs have no job to split.
  EXPECT_NE(test::input_error_of([] {
              test::scenario_from_yaml(
                  "pipeline: {stages: 2, microbatches: 2}\ncosts: {forward_ms: 1, backward_ms: 2}\n"
                  "parallel: {tensor: 2}\n");
            }).find("parallel"),
            std::string::npos);
}

// Pipeline transfers take the link they cross: ranks numbered tensor innermost, then data, then pipeline, on
// nodes of 8 GPUs. 16 stages alone: only the hop from device 7 to 8 leaves a node; with tensor parallelism 8
// every hop does.
TEST(JobModel, PipelineTransfersBetweenNodesTakeTheInterNodeLink) {
  const auto arrival_ns = [](const std::string& parallel, int from, int to) {
    const Scenario s = test::scenario_from_yaml(
        "model: {layers: 16, hidden: 1024, heads: 16, seq_len: 1024, vocab: 32000}\n"
        "hardware: {profile: h100-sxm5-80gb}\n"
        "pipeline: {stages: 16, microbatches: 16}\n" +
        parallel + "schedules: [1f1b-flush]\n");
    const std::unique_ptr<CommModel> comm = make_comm_model(s, PipelineLayout::linear(16));
    return comm->send(from, to, 46'000'000, 0).arrival_ns;  // 46 MB: 1 ms at 46 GB/s
  };
  // NVLink (375 GB/s, 15 us) inside a node, InfiniBand (46 GB/s, 25 us) across: the profile's links.
  EXPECT_EQ(arrival_ns("", 0, 1), static_cast<TimeNs>(std::ceil(46e6 / 375.0)) + 15'000);
  EXPECT_EQ(arrival_ns("", 7, 8), 1'000'000 + 25'000);
  EXPECT_EQ(arrival_ns("parallel: {tensor: 8}\n", 0, 1), 1'000'000 + 25'000);
  const Scenario one_node = test::scenario_from_yaml(
      "model: {layers: 16, hidden: 1024, heads: 16, seq_len: 1024, vocab: 32000}\n"
      "hardware: {profile: h100-sxm5-80gb}\npipeline: {stages: 8, microbatches: 8}\nschedules: "
      "[1f1b-flush]\n");
  EXPECT_TRUE(pipeline_device_nodes(one_node, 8).empty());
  const SimulationResult r = simulate_schedule(one_node, one_node.schedules.at(0), {});
  EXPECT_EQ(r.model_choices.find("inter-node link"), std::string::npos);
}

// A scenario may give the machine's links in place of its profile's, each with where its figures come from:
// the published runs' clusters (share/scenarios/published/) do.
TEST(JobModel, AScenarioMayGiveTheMachinesLinksWithTheirSource) {
  const auto scenario = [](const std::string& link) {
    return test::scenario_from_yaml(
        "model: {layers: 8, hidden: 1024, heads: 16, seq_len: 1024, vocab: 32000}\n"
        "hardware: {profile: a100-sxm4-80gb, inter_node_link: " +
        link +
        "}\n"
        "parallel: {tensor: 8, data: 2}\npipeline: {stages: 2, microbatches: 4}\nschedules: [1f1b-flush]\n");
  };
  const Scenario s =
      scenario("{bandwidth_gb_per_s: 6.25, latency_us: 30, source: four 100 Gb/s links per node}");
  ASSERT_TRUE(s.transformer->profile.inter_node_link.has_value());
  EXPECT_DOUBLE_EQ(s.transformer->profile.inter_node_link->bandwidth_gb_per_s, 6.25);
  EXPECT_EQ(s.transformer->profile.inter_node_link->source, "four 100 Gb/s links per node");
  EXPECT_NE(test::input_error_of([&] {
              scenario("{bandwidth_gb_per_s: 6.25, latency_us: 30}");
            }).find("hardware.inter_node_link"),
            std::string::npos);
  // The shipped BLOOM scenario runs on it: its pipeline's 12 ranks on 12 nodes.
  const Scenario bloom =
      load_scenario(std::string(PIPESIM_SOURCE_DIR) + "/share/scenarios/published/bloom-176b.yaml");
  EXPECT_EQ(pipeline_device_nodes(bloom, 12).back(), 11 * 4);  // pipeline stride t x d = 32 GPUs = 4 nodes
}

}  // namespace
}  // namespace pipesim
