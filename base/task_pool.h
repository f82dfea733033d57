#pragma once
// The one worker pool: every thread pipesim starts comes from here, under one policy.
// - parallel_for: independent jobs inside one simulation request (the Zero Bubble search's candidates).
// - TaskPool: tasks where the work is not known up front, since a task may add more (the Zero Bubble search
//   scores each greedy plan as soon as a greedy run makes it, while other runs go on).
// - worker_count and run_workers: the threads of a command's runs (sweep, check, a study's training runs),
//   clamped to what the machine can hold; a thread the system refuses leaves the work to those that exist.
// Nested parallelism runs serially: a thread that is already one of several workers runs its jobs itself,
// so a parallel sweep never asks for more threads than it was given.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>

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

// At most this many workers per hardware thread: more only adds stacks and contention.
inline constexpr unsigned kMaxThreadsPerCore = 4;

// The number of workers for `jobs` jobs when `requested` were asked for (0: one per core): at most
// kMaxThreadsPerCore per core and at most one per job; prints a note on stderr naming `option` when it cuts
// a request down.
size_t worker_count(int requested, size_t jobs, const char* option);

// Runs `worker` on `threads` threads (the calling one included) and waits for all. When the system refuses
// a thread (std::system_error: a memory or process limit), the ones already running do the work.
void run_workers(size_t threads, const std::function<void()>& worker);

}  // namespace pipesim
