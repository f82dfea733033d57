#pragma once
// The calling thread's CPU time: what an op cost its worker, whatever else shares the core.
#include <time.h>

#include "base/units.h"

namespace pipesim::executor {

inline TimeNs thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<TimeNs>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace pipesim::executor
