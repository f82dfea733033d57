#include "sim/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <exception>
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

}  // namespace pipesim
