// TaskPool (base/task_pool.h): every task runs once, including tasks added by running tasks; a failure comes
// back after every task ran; inside a parallel worker every task runs on that worker's thread.
#include "base/task_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

namespace pipesim {
namespace {

TEST(TaskPool, RunsEveryTaskOnceIncludingTheOnesTasksAdd) {
  TaskPool pool;
  std::vector<std::atomic<int>> runs(64);
  // A tree: task k adds tasks 2k + 1 and 2k + 2, so most tasks exist only once others have run.
  std::function<void(int)> task = [&](int k) {
    ++runs[k];
    for (int child : {2 * k + 1, 2 * k + 2}) {
      if (child < 64) pool.add([&task, child] { task(child); });
    }
  };
  pool.add([&] { task(0); });
  pool.run();
  for (int k = 0; k < 64; ++k) EXPECT_EQ(runs[k], 1) << "task " << k;
}

TEST(TaskPool, AnEmptyPoolReturnsAtOnce) {
  TaskPool pool;
  pool.run();
}

TEST(TaskPool, RethrowsAFailureAfterEveryTaskRan) {
  TaskPool pool;
  std::atomic<int> finished{0};
  for (int k = 0; k < 16; ++k) {
    pool.add([&, k] {
      if (k == 3) throw std::runtime_error("task 3 failed");
      ++finished;
    });
  }
  EXPECT_THROW(pool.run(), std::runtime_error);
  EXPECT_EQ(finished.load(), 15);
  EXPECT_FALSE(is_parallel_worker());  // the calling thread is itself again
}

TEST(TaskPool, InsideAParallelWorkerRunsOnThatThread) {
  const ParallelWorkerScope scope;  // as a sweep's worker thread
  const auto self = std::this_thread::get_id();
  TaskPool pool;
  std::atomic<int> elsewhere{0};
  for (int k = 0; k < 8; ++k) {
    pool.add([&] {
      if (std::this_thread::get_id() != self) ++elsewhere;
      EXPECT_TRUE(is_parallel_worker());
    });
  }
  pool.run();
  EXPECT_EQ(elsewhere.load(), 0);
}

}  // namespace
}  // namespace pipesim
