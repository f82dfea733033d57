// pipesim show: the terminal timeline of tiny runs, compared with hand-drawn expected text.
#include <gtest/gtest.h>

#include "api/quick_scenario.h"
#include "report/timeline_text.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

std::string show(const std::string& schedule, int stages, int microbatches, const std::string& costs,
                 int width, bool color = false, double comm_ms = 0) {
  QuickScenarioArgs args;
  args.schedule = schedule;
  args.stages = stages;
  args.microbatches = microbatches;
  args.costs = costs;
  args.comm_ms = fmt::format("{}", comm_ms);
  return render_timeline(simulate_schedule(quick_scenario(args), quick_request(args), test::fixed_batches()),
                         {width, color});
}

constexpr const char* kLegend =
    "F3 = forward of microbatch 3; B backward, I backward for inputs, W backward for weights, U optimizer "
    "step; "
    ". idle\n";

TEST(ShowTimeline, OneFOneBTwoDevices) {
  // F = 1 ms, B = 2 ms, 2 columns per ms. Device 0: F0 [0,1] F1 [1,2], waits for B0's gradient until 4,
  // B0 [4,6], B1 [7,9]. Device 1: F0 [1,2] B0 [2,4] F1 [4,5] B1 [5,7].
  EXPECT_EQ(show("1f1b-flush", 2, 2, "1,2", 18),
            std::string("1f1b-flush: N=2, m=2, 1 batch(es), makespan 9 ms, 1 column = 0.5 ms\n"
                        "dev 1 |F0F1....B0  ..B1  | busy 67%\n"
                        "dev 2 |..F0B0  F1B1  ....| busy 67%\n"
                        "       |         |\n"
                        "       0         5 ms\n") +
                kLegend);
}

TEST(ShowTimeline, SplitBackwardAndCommLatency) {
  // ZB-H1 with F = I = W = 1 ms and 0.5 ms comm, 1 column per 0.5 ms. Device 1: F0 [1.5,2.5] I0 [2.5,3.5]
  // F1 [3.5,4.5] I1 [4.5,5.5] W0 W1 until 7.5. Device 0: F0 F1 until 2, I0 [4,5] W0 [5,6] I1 [6,7] W1 [7,8].
  EXPECT_EQ(show("zb-h1", 2, 2, "1,1,1", 30, false, 0.5),
            std::string("zb-h1: N=2, m=2, 1 batch(es), makespan 8 ms, 1 column = 0.5 ms\n"
                        "dev 1 |F0F1....I0W0I1W1| busy 75%\n"
                        "dev 2 |...F0I0F1I1W0W1.| busy 75%\n"
                        "       |         |\n"
                        "       0         5 ms\n") +
                kLegend);
}

TEST(ShowTimeline, LaterChunksInLowercaseAndColours) {
  const std::string text = show("interleaved-1f1b:chunks=2", 2, 2, "2,4", 40);
  EXPECT_NE(text.find("dev 1 |F0F1f0f1....b0  ..b1  B0  B1  | busy 80%\n"), std::string::npos) << text;
  EXPECT_NE(text.find("dev 2 |..F0F1f0b0  f1b1  B0  B1  ....| busy 80%\n"), std::string::npos) << text;
  EXPECT_NE(text.find("lowercase (f3, b3): the device's later chunks\n"), std::string::npos);
  const std::string colored = show("1f1b-flush", 2, 2, "1,2", 18, true);
  EXPECT_NE(colored.find("dev 1 |\x1b[30;46mF0F1\x1b[0m....\x1b[30;42mB0  \x1b[0m..\x1b[30;42mB1  \x1b[0m|"),
            std::string::npos)
      << colored;
}

TEST(ShowTimeline, CommandLine) {
  test::TempDir dir;
  const test::CommandResult r = test::run_pipesim(
      "show 1f1b-flush --stages 2 --microbatches 2 --costs 1,2 --width 18 --color never", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, show("1f1b-flush", 2, 2, "1,2", 18));
  const test::CommandResult bad = test::run_pipesim("show gpipe --costs 1,x", dir);
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("--costs '1,x': 'x' is not a time in ms from 0 to 100000"), std::string::npos)
      << bad.err;
}

}  // namespace
}  // namespace pipesim
