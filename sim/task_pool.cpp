#include "sim/task_pool.h"

#include <algorithm>
#include <system_error>
#include <thread>
#include <vector>

#include "sim/parallel_for.h"

namespace pipesim {

void TaskPool::add(Task task) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(task));
    ++unfinished_;
  }
  changed_.notify_one();
}

void TaskPool::work() {
  const ParallelWorkerScope scope;  // work a task starts itself runs on its thread
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    // Idle until there is a task or none can come: every task that could add one has finished.
    changed_.wait(lock, [&] { return !queue_.empty() || unfinished_ == 0; });
    if (queue_.empty()) return;
    Task task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    try {
      task();
    } catch (...) {
      lock.lock();
      if (!first_error_) first_error_ = std::current_exception();
      lock.unlock();
    }
    lock.lock();
    if (--unfinished_ == 0) changed_.notify_all();
  }
}

void TaskPool::run() {
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t threads = is_parallel_worker() ? 1 : cores;
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back([this] { work(); });
    } catch (const std::system_error&) {
      break;  // the threads that exist do the work
    }
  }
  work();
  for (std::thread& thread : pool) thread.join();
  std::exception_ptr error;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    std::swap(error, first_error_);
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace pipesim
