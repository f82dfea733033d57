#pragma once
// A progress bar on stderr for work that can take over a second (sweep, check, run, extrapolate):
// "[#####-----] 12/48 runs (25%), 3.2s elapsed, ETA 9.6s", redrawn at most 10 times a second, drawn only when
// stderr is a terminal and only once the work has run for a second (quick commands stay silent), erased
// when done. Thread-safe: workers report their counts in any order.
#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>

namespace pipesim {

// "3.2s", "1:05".
std::string format_duration(double seconds);

class ProgressBar {
 public:
  // `unit`: what is counted ("runs", "schedules"). `enabled` false: never draws. `total_work` > 0: the ETA
  // comes from work (e.g. expected ops) instead of counts, for items of unequal size.
  ProgressBar(size_t total, std::string unit, bool enabled, double total_work = 0);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  void update(size_t done, double work_done = 0);

  // Whether stderr is a terminal.
  static bool stderr_is_terminal();

 private:
  using Clock = std::chrono::steady_clock;
  std::mutex mutex_;
  size_t total_;
  double total_work_;
  std::string unit_;
  bool enabled_;
  Clock::time_point start_;
  Clock::time_point last_draw_{};
  size_t drawn_ = 0;
  bool visible_ = false;  // a line is on screen, to be erased
};

}  // namespace pipesim
