// The work farm alone (one process): every job runs once, in the order rank 0 gives, and each result reaches
// the lead with its index. Several ranks are tested through the commands under mpiexec (tests/cli).
#include "distributed/work_farm.h"

#include <gtest/gtest.h>

#include "base/errors.h"
#include "distributed/mpi_session.h"

namespace pipesim {
namespace {

TEST(WorkFarm, AloneItRunsEveryJobInTheOrderGiven) {
  std::vector<size_t> ran;
  std::vector<std::pair<size_t, std::string>> results;
  const bool leader = lead_or_serve(
      false,
      [&](size_t i) {
        ran.push_back(i);
        return "job " + std::to_string(i);
      },
      [&](const FarmRun& farm) {
        farm({3, 0, 2}, [&](size_t i, std::string text) { results.emplace_back(i, std::move(text)); });
        farm({1}, [&](size_t i, std::string text) { results.emplace_back(i, std::move(text)); });
      });
  EXPECT_TRUE(leader);
  EXPECT_EQ(ran, (std::vector<size_t>{3, 0, 2, 1}));
  EXPECT_EQ(results, (std::vector<std::pair<size_t, std::string>>{
                         {3, "job 3"}, {0, "job 0"}, {2, "job 2"}, {1, "job 1"}}));
}

TEST(WorkFarm, ABuildWithoutMpiSaysSoWhenAskedForIt) {
  if (mpi_built()) GTEST_SKIP() << "this build has MPI";
  try {
    lead_or_serve(
        true, [](size_t) { return std::string(); }, [](const FarmRun&) {});
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("built without MPI"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pipesim
