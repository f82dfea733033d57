#pragma once
// The worker threads of sweep and check: a requested count is clamped to something the machine can hold,
// and a thread the system refuses to create leaves the work to the threads that exist.
#include <cstddef>
#include <functional>

namespace pipesim {

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
