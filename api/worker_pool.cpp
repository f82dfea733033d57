#include "api/worker_pool.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <system_error>
#include <thread>
#include <vector>

#include "sim/parallel_for.h"

namespace pipesim {

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
  // Several workers: a job's own parallel work (sim/parallel_for.h) then runs on the job's thread alone.
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
