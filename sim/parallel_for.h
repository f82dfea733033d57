#pragma once
// Independent jobs spread over the machine's cores, for work inside one simulation request (the Zero Bubble
// search's candidates). Nested parallelism runs serially: a thread that is already one of several workers
// (a sweep's, a check's, or this function's own) runs its jobs itself, so a parallel sweep never asks for
// more threads than it was given.
#include <cstddef>
#include <functional>

namespace pipesim {

// Calls job(i) for every i in [0, count), on up to one thread per hardware thread (the calling one
// included) unless the calling thread is already a parallel worker. Waits for all; the first exception a
// job throws is rethrown after every thread has stopped (the rest of the jobs may not have run).
void parallel_for(std::size_t count, const std::function<void(std::size_t)>& job);

// Marks the current thread as one of several parallel workers while it lives.
class ParallelWorkerScope {
 public:
  ParallelWorkerScope();
  ~ParallelWorkerScope();
  ParallelWorkerScope(const ParallelWorkerScope&) = delete;
  ParallelWorkerScope& operator=(const ParallelWorkerScope&) = delete;

 private:
  bool was_worker_;
};

// Whether the current thread is such a worker.
bool is_parallel_worker();

}  // namespace pipesim
