#include "api/worker_pool.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <system_error>
#include <thread>
#include <vector>

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
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(worker);
    } catch (const std::system_error&) {
      std::cerr << fmt::format("pipesim: note: the system refused thread {} of {}; running on {}\n", t + 1,
                               threads, t);
      break;
    }
  }
  worker();
  for (std::thread& thread : pool) thread.join();
}

}  // namespace pipesim
