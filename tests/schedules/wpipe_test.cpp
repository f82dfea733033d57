// WPipe's op order worked by hand from the authors' code (schedules/wpipe.cpp): the order of N = 2 over
// exactly 3 batches, and a step every N microbatches whatever the batch m. The makespan, versions, drift and
// peaks of a scenario's steady run are the api's: tests/api/wpipe_test.cpp.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/errors.h"
#include "tests/schedules/schedule_runs.h"

namespace pipesim {
namespace {

// N devices, 2N uniform pieces (F = 0.5 ms, B = 1 ms each: a device's 1 + 2 ms over its two), no comm,
// exactly `batches` batches of m.
RunTrace wpipe_run(int devices, int microbatches, int batches) {
  const test::ScheduleRunSpec run("wpipe", devices, microbatches, batches);
  return test::run_schedule_plan(run, test::UniformStageCosts::ms(1, 2).bytes(1'000'000, 0).over_chunks(2));
}

// Device d's ops in the order it ran them: "F0.3" (group 0's forward of microbatch 3), "B1.2", "S1" (a step
// of group 1).
std::vector<std::string> wpipe_order_on(const RunTrace& trace, int device) {
  const int n = trace.layout.devices;
  std::vector<OpRecord> ops;
  for (const OpRecord& op : trace.ops)
    if (op.device == device) ops.push_back(op);
  std::stable_sort(ops.begin(), ops.end(),
                   [](const OpRecord& a, const OpRecord& b) { return a.start_ns < b.start_ns; });
  std::vector<std::string> out;
  for (const OpRecord& op : ops) {
    const int group = op.action.stage / n;
    out.push_back(op.action.kind == OpKind::U
                      ? fmt::format("S{}", group)
                      : fmt::format("{}{}.{}", op_letter(op.action.kind), group, op.action.microbatch));
  }
  return out;
}

std::vector<std::string> wpipe_words(const std::string& text) {
  std::vector<std::string> out;
  std::string word;
  for (const char c : text + " ") {
    if (c != ' ') {
      word += c;
    } else if (!word.empty()) {
      out.push_back(word);
      word.clear();
    }
  }
  return out;
}

TEST(WPipe, OrderOfTwoDevicesIsTheAuthorsBlocksOfNWithGroupOneBackwardFirst) {
  const RunTrace trace = wpipe_run(2, 2, 3);
  // Device 0: 2N - 1 = 3 forwards, then one forward and one backward at a time; forwards in blocks of N
  // alternating G0, G1; backwards G1 first; a group steps after its block's last backward.
  EXPECT_EQ(wpipe_order_on(trace, 0),
            wpipe_words("F0.0 F0.1 F1.0 "
                        "F1.1 B1.0 F0.2 B1.1 S1 F0.3 B0.0 F1.2 B0.1 S0 F1.3 B1.2 F0.4 "
                        "B1.3 S1 F0.5 B0.2 F1.4 B0.3 S0 F1.5 B1.4 "
                        "B1.5 S1 B0.4 B0.5 S0"));
  // Device 1: 2N - 2 = 2 forwards.
  EXPECT_EQ(wpipe_order_on(trace, 1),
            wpipe_words("F0.0 F0.1 "
                        "F1.0 B1.0 F1.1 B1.1 S1 F0.2 B0.0 F0.3 B0.1 S0 F1.2 B1.2 F1.3 "
                        "B1.3 S1 F0.4 B0.2 F0.5 B0.3 S0 F1.4 B1.4 F1.5 B1.5 S1 "
                        "B0.4 B0.5 S0"));
}

// The step batch is N microbatches whatever m: m = 2N runs the same stream, cut into batches of 2N.
TEST(WPipe, StepsEveryNMicrobatchesWhateverTheReportingBatch) {
  const RunTrace by_n = wpipe_run(2, 2, 6);
  const RunTrace by_2n = wpipe_run(2, 4, 3);
  for (int d = 0; d < 2; ++d) EXPECT_EQ(wpipe_order_on(by_n, d), wpipe_order_on(by_2n, d)) << "device " << d;
  EXPECT_THROW(wpipe_run(4, 6, 4), InputError);
  EXPECT_THROW(wpipe_run(4, 3, 4), InputError);
}

}  // namespace
}  // namespace pipesim
