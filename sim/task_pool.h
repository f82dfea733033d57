#pragma once
// Tasks spread over the machine's cores where the work is not known up front: a task may add more (the
// Zero Bubble search scores each greedy plan as soon as a greedy run makes it, while other runs go on).
// The same thread policy as parallel_for (sim/parallel_for.h): one thread per hardware thread, the calling
// one included, and every task on the calling thread when that thread is already a parallel worker.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>

namespace pipesim {

class TaskPool {
 public:
  using Task = std::function<void()>;

  // Queues a task (first in, first out); from any thread, before run() or from a running task.
  void add(Task task);

  // Runs every queued task and every task they add, then returns. When tasks failed, every task still
  // runs and the first failure (in time) is rethrown: callers that need a failure independent of how the
  // tasks were spread catch inside their tasks.
  void run();

 private:
  void work();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Task> queue_;
  std::size_t unfinished_ = 0;  // queued or running
  std::exception_ptr first_error_;
};

}  // namespace pipesim
