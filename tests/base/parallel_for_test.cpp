// parallel_for (base/task_pool.h): every job runs once, failures come back, and work inside a parallel
// worker (a sweep's thread or parallel_for's own) runs serially on that thread.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "base/task_pool.h"

namespace pipesim {
namespace {

TEST(ParallelFor, RunsEveryJobOnce) {
  for (size_t count : {0, 1, 2, 7, 100}) {
    std::vector<std::atomic<int>> runs(count);
    parallel_for(count, [&](size_t i) { ++runs[i]; });
    for (size_t i = 0; i < count; ++i) EXPECT_EQ(runs[i], 1) << "job " << i << " of " << count;
  }
}

TEST(ParallelFor, RethrowsAJobsFailureAfterAllThreadsStopped) {
  std::atomic<int> finished{0};
  EXPECT_THROW(parallel_for(16,
                            [&](size_t i) {
                              if (i == 3) throw std::runtime_error("job 3 failed");
                              ++finished;
                            }),
               std::runtime_error);
  EXPECT_LE(finished.load(), 15);
  EXPECT_FALSE(is_parallel_worker());  // the calling thread is itself again
}

TEST(ParallelFor, NestedWorkRunsOnTheWorkersOwnThread) {
  std::atomic<bool> nested_elsewhere{false};
  parallel_for(4, [&](size_t) {
    EXPECT_TRUE(is_parallel_worker());
    const auto outer = std::this_thread::get_id();
    parallel_for(8,
                 [&](size_t) { nested_elsewhere = nested_elsewhere || std::this_thread::get_id() != outer; });
  });
  EXPECT_FALSE(nested_elsewhere);
  {
    const ParallelWorkerScope scope;  // as a sweep's worker thread
    const auto self = std::this_thread::get_id();
    parallel_for(8, [&](size_t) { EXPECT_EQ(std::this_thread::get_id(), self); });
  }
  EXPECT_FALSE(is_parallel_worker());
}

}  // namespace
}  // namespace pipesim
