// pipesim extrapolate: the rows, the published figures beside them, the PACI paper's method, the CSV columns
// of the extrapolation, and the predicted/measured ratios in the Markdown.
#include "sweeps/extrapolate.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "api/zb_model_scenario.h"
#include "base/errors.h"
#include "spec/hardware_profile.h"
#include "sweeps/extrapolate_report.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

const Extrapolation& small_extrapolation() {  // the 1.5B model only: fast
  static const Extrapolation e = [] {
    ExtrapolateOptions options;
    options.data_dir = default_reference_data_dir();
    options.models = {"1.5B"};
    return run_extrapolation(options, [](const std::string&) {});
  }();
  return e;
}

TEST(Extrapolate, CsvHasExactlyTheIssueColumns) {
  const std::string csv = extrapolation_csv(small_extrapolation());
  std::stringstream lines(csv);
  std::string header;
  std::getline(lines, header);
  EXPECT_EQ(header,
            "model,stages,microbatch_size,microbatches,schedule,throughput_samples_per_gpu_s,peak_memory_gib,"
            "bubble_fraction,drift_max,measured_throughput_samples_per_gpu_s,measured_memory_gib");
  int rows = 0;
  for (std::string line; std::getline(lines, line);) {
    ++rows;
    EXPECT_EQ(std::count(line.begin(), line.end(), ','), 10) << line;
  }
  EXPECT_EQ(rows, 3 * 9);  // m = 24, 32, 64; eight schedules and the PACI paper's method
}

// One byte unit, GiB, as every pipesim table: the summary, the Markdown and the capacity mark (which said GB,
// 1e9 bytes, beside profiles in GiB).
TEST(Extrapolate, MemoryIsInGiBEverywhere) {
  const Extrapolation& e = small_extrapolation();
  for (const std::string& text : {extrapolation_summary(e), extrapolation_markdown(e)}) {
    EXPECT_NE(text.find("peak GiB"), std::string::npos) << text;
    EXPECT_NE(text.find("measured GiB"), std::string::npos) << text;
    EXPECT_NE(text.find("80 GiB"), std::string::npos) << text;
    for (const char* old : {"peak GB", "measured GB", "86 GB"})
      EXPECT_EQ(text.find(old), std::string::npos) << old;
  }
}

TEST(Extrapolate, PublishedFiguresSitBesideTheirSchedules) {
  const std::vector<ZbMeasured> measured = load_zb_measured(default_reference_data_dir());
  const std::vector<std::string> order = {"1f1b-flush",    "interleaved-1f1b", "zb-1p", "zb-2p",
                                          "pipedream",     "pipedream-2bw",    "paci",  "gpipe",
                                          kPaciPaperMethod};
  const auto& rows = small_extrapolation().rows;
  for (size_t i = 0; i < rows.size(); ++i) {
    const ExtrapolationRow& r = rows[i];
    EXPECT_EQ(r.schedule, order[i % order.size()]);
    EXPECT_EQ(r.model, "1.5B");
    EXPECT_EQ(r.stages, 8);
    EXPECT_EQ(r.microbatch_size, 6);
    EXPECT_TRUE(r.error.empty()) << r.schedule << ": " << r.error;
    const ZbMeasured* published = nullptr;
    for (const ZbMeasured& m : measured) {
      if (m.model == r.model && m.microbatches == r.microbatches) published = &m;
    }
    ASSERT_NE(published, nullptr);
    if (r.schedule == "1f1b-flush") {
      EXPECT_EQ(r.measured_throughput_samples_per_gpu_s, published->throughput_1f1b);
      EXPECT_DOUBLE_EQ(*r.measured_memory_gib, published->memory_gb_1f1b * 1e9 / kBytesPerGiB);
    } else if (r.schedule == "zb-2p") {
      EXPECT_EQ(r.measured_throughput_samples_per_gpu_s, published->throughput_zb2p);
      EXPECT_DOUBLE_EQ(*r.measured_memory_gib, published->memory_gb_zb2p * 1e9 / kBytesPerGiB);
    } else if (r.schedule == kPaciPaperMethod) {
      // The PACI paper's method: measured 1F1B throughput x (m+N-1)/m, at 1F1B's memory.
      EXPECT_DOUBLE_EQ(*r.throughput_samples_per_gpu_s,
                       published->throughput_1f1b * (r.microbatches + 7) / r.microbatches);
      EXPECT_DOUBLE_EQ(*r.peak_memory_gib, published->memory_gb_1f1b * 1e9 / kBytesPerGiB);
      EXPECT_FALSE(r.measured_throughput_samples_per_gpu_s.has_value());
    } else {
      EXPECT_FALSE(r.measured_throughput_samples_per_gpu_s.has_value()) << r.schedule;
      EXPECT_FALSE(r.measured_memory_gib.has_value()) << r.schedule;
    }
  }
}

TEST(Extrapolate, RowsAreTheRunsOfTheSameScenario) {
  const std::vector<ZbModel> models = load_zb_models(default_reference_data_dir());
  const ZbModel& model = find_zb_model(models, "1.5B");
  const Scenario s = zb_model_scenario(model, 32, "a100-sxm4-80gb", 4);
  const SimulationResult flush =
      simulate_schedule(s, {"1f1b-flush", ScheduleParams("t")}, SimulationOptions{});
  ScheduleRequest paci{"paci", ScheduleParams("t")};
  paci.params.set("accumulation", "32");  // a = m
  const SimulationResult async = simulate_schedule(s, paci, SimulationOptions{});
  for (const ExtrapolationRow& r : small_extrapolation().rows) {
    if (r.microbatches != 32) continue;
    if (r.schedule == "1f1b-flush") {
      EXPECT_DOUBLE_EQ(*r.throughput_samples_per_gpu_s, flush.metrics.throughput_samples_per_gpu_s);
      EXPECT_DOUBLE_EQ(*r.peak_memory_gib, flush.memory.peak_bytes() / kBytesPerGiB);
      EXPECT_DOUBLE_EQ(*r.bubble_fraction, flush.metrics.bubble_fraction);
    }
    if (r.schedule == "paci") {
      EXPECT_DOUBLE_EQ(*r.throughput_samples_per_gpu_s, async.metrics.throughput_samples_per_gpu_s);
      EXPECT_EQ(*r.drift_max, 1);  // ⌈(N-i)/a⌉ with a = m >= N
      EXPECT_EQ(*r.drift_bound, 1);
    }
  }
}

TEST(Extrapolate, MarkdownPrintsEveryPredictedOverMeasuredRatio) {
  const Extrapolation& e = small_extrapolation();
  const std::string markdown = extrapolation_markdown(e);
  for (const ExtrapolationRow& r : e.rows) {
    if (!r.measured_throughput_samples_per_gpu_s) continue;
    const std::string throughput =
        fmt::format("{:.3f}", *r.throughput_samples_per_gpu_s / *r.measured_throughput_samples_per_gpu_s);
    const std::string memory = fmt::format("{:.3f}", *r.peak_memory_gib / *r.measured_memory_gib);
    EXPECT_NE(
        markdown.find("| " + r.schedule + " | " + fmt::format("{:.3f}", *r.throughput_samples_per_gpu_s) +
                      " | " + fmt::format("{:.2f}", *r.measured_throughput_samples_per_gpu_s) + " | " +
                      throughput + " | "),
        std::string::npos)
        << r.schedule << " m=" << r.microbatches;
    EXPECT_NE(markdown.find(" | " + memory + " | "), std::string::npos)
        << r.schedule << " m=" << r.microbatches;
  }
  EXPECT_NE(markdown.find("## Predicted / measured"), std::string::npos);
}

// The Zero Bubble paper ran 1F1B-I with one transformer layer per chunk: (22 + 2) / 8 = 3 chunks for 1.5B.
TEST(Extrapolate, InterleavedRunsWithOneLayerPerChunk) {
  const Extrapolation& e = small_extrapolation();
  int interleaved_rows = 0;
  for (const ExtrapolationRow& r : e.rows) {
    EXPECT_EQ(r.interleaved_chunks, 3) << r.schedule;
    if (r.schedule != "interleaved-1f1b") continue;
    ++interleaved_rows;
    EXPECT_TRUE(r.error.empty()) << r.error;
  }
  EXPECT_EQ(interleaved_rows, 3);
  EXPECT_NE(extrapolation_markdown(e).find("interleaved-1f1b with 3 chunks"), std::string::npos);
}

// Blocking transfers only ever delay a static list (every message starts no earlier than it would overlapped,
// and a held stream computes nothing), so 1F1B and 1F1B-I get no faster; both are reported as such.
TEST(Extrapolate, BlockingCommIsNoFasterForStaticLists) {
  ExtrapolateOptions options;
  options.data_dir = default_reference_data_dir();
  options.models = {"1.5B"};
  options.blocking_comm = true;
  const Extrapolation blocking = run_extrapolation(options, [](const std::string&) {});
  const Extrapolation& overlapped = small_extrapolation();
  ASSERT_EQ(blocking.rows.size(), overlapped.rows.size());
  for (size_t i = 0; i < blocking.rows.size(); ++i) {
    const ExtrapolationRow& b = blocking.rows[i];
    if (b.schedule != "1f1b-flush" && b.schedule != "interleaved-1f1b") continue;
    SCOPED_TRACE(fmt::format("{} m={}", b.schedule, b.microbatches));
    EXPECT_LT(*b.throughput_samples_per_gpu_s, *overlapped.rows[i].throughput_samples_per_gpu_s);
  }
  EXPECT_NE(extrapolation_summary(blocking).find("blocking"), std::string::npos);
  EXPECT_NE(extrapolation_summary(overlapped).find("overlapped with compute"), std::string::npos);
}

// Interleaved 1F1B needs m to be a multiple of N: a model listed at another m gets that row's error, and
// every other schedule still runs.
TEST(Extrapolate, InterleavedAtUnequalRoundsIsARowError) {
  const test::TempDir dir;
  dir.write("zb_models.csv",
            "model,layers,heads,hidden,seq_len,vocab,stages,microbatch_size,microbatches\n"
            "tiny,6,4,256,128,1000,4,1,9\n");
  dir.write("zb_measured.csv", test::read_file(default_reference_data_dir() + "/zb_measured.csv"));
  ExtrapolateOptions options;
  options.data_dir = dir.file("");
  const Extrapolation e = run_extrapolation(options, [](const std::string&) {});
  ASSERT_FALSE(e.rows.empty());
  for (const ExtrapolationRow& r : e.rows) {
    EXPECT_EQ(r.interleaved_chunks, 2);  // (6 + 2) / 4
    if (r.schedule == "interleaved-1f1b") {
      EXPECT_NE(r.error.find("microbatches (9) must be divisible by m div N = 2"), std::string::npos)
          << r.error;
    } else {
      EXPECT_TRUE(r.error.empty()) << r.schedule << ": " << r.error;
    }
  }
}

TEST(Extrapolate, UnknownModelIsAnError) {
  ExtrapolateOptions options;
  options.data_dir = default_reference_data_dir();
  options.models = {"175B"};
  EXPECT_THROW(run_extrapolation(options, [](const std::string&) {}), InputError);
}

}  // namespace
}  // namespace pipesim
