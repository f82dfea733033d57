#include "base/task_pool.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <iostream>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace pipesim {

namespace {

thread_local bool parallel_worker = false;

}  // namespace

ParallelWorkerScope::ParallelWorkerScope() : was_worker_(parallel_worker) {
  parallel_worker = true;
}
ParallelWorkerScope::~ParallelWorkerScope() {
  parallel_worker = was_worker_;
}

bool is_parallel_worker() {
  return parallel_worker;
}

void parallel_for(std::size_t count, const std::function<void(std::size_t)>& job) {
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t threads = parallel_worker ? 1 : std::min(cores, count);
  if (threads <= 1) {
    for (std::size_t i = 0; i < count; ++i) job(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first_error;
  std::mutex error_mutex;
  const auto worker = [&] {
    const ParallelWorkerScope scope;
    for (std::size_t i = next++; i < count && !failed; i = next++) {
      try {
        job(i);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(error_mutex);
        if (!first_error) first_error = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(worker);
    } catch (const std::system_error&) {
      break;  // the threads that exist do the work
    }
  }
  worker();
  for (std::thread& thread : pool) thread.join();
  if (first_error) std::rethrow_exception(first_error);
}

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

size_t worker_count(int requested, size_t jobs, const char* option) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  size_t threads = requested > 0 ? static_cast<size_t>(requested) : cores;
  const size_t limit = static_cast<size_t>(kMaxThreadsPerCore) * cores;
  if (threads > limit) {
    std::cerr << fmt::format("pipesim: note: {} {} cut to {} ({} per hardware thread)\n", option, threads,
                             limit, kMaxThreadsPerCore);
    threads = limit;
  }
  return std::max<size_t>(1, std::min(threads, jobs));
}

void run_workers(size_t threads, const std::function<void()>& worker) {
  // Several workers: a job's own parallel work (base/task_pool.h) then runs on the job's thread alone.
  const auto marked_worker = [&] {
    const ParallelWorkerScope scope;
    worker();
  };
  if (threads <= 1) {
    worker();
    return;
  }
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(marked_worker);
    } catch (const std::system_error&) {
      std::cerr << fmt::format("pipesim: note: the system refused thread {} of {}; running on {}\n", t + 1,
                               threads, t);
      break;
    }
  }
  marked_worker();
  for (std::thread& thread : pool) thread.join();
}

}  // namespace pipesim
