#include "report/progress_bar.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace pipesim {

std::string format_duration(double seconds) {
  if (seconds < 60) return fmt::format("{:.1f}s", seconds);
  const long whole = std::lround(seconds);
  return fmt::format("{}:{:02}", whole / 60, whole % 60);
}

bool ProgressBar::stderr_is_terminal() {
  return isatty(STDERR_FILENO) != 0;
}

ProgressBar::ProgressBar(size_t total, std::string unit, bool enabled, double total_work)
    : total_(total),
      total_work_(total_work),
      unit_(std::move(unit)),
      enabled_(enabled),
      start_(Clock::now()) {}

ProgressBar::~ProgressBar() {
  if (visible_) {
    std::fputs("\r\033[K", stderr);  // erase the bar: what follows starts on a clean line
    std::fflush(stderr);
  }
}

void ProgressBar::update(size_t done, double work_done) {
  if (!enabled_) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto now = Clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  // Never draw an older count, nor more than 10 times a second, nor before the first second.
  if (done <= drawn_ || elapsed < 1.0 || now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  drawn_ = done;
  constexpr size_t kBar = 30;
  const size_t filled = total_ ? std::min(done, total_) * kBar / total_ : kBar;
  // The rate so far, in work when the items differ in size: a sweep's large runs come last.
  const bool weighted = total_work_ > 0 && work_done > 0;
  const double remaining = weighted ? elapsed / work_done * std::max(0.0, total_work_ - work_done)
                                    : elapsed / static_cast<double>(std::max<size_t>(done, 1)) *
                                          static_cast<double>(total_ - std::min(done, total_));
  const std::string eta = done ? format_duration(remaining) : "?";
  std::fprintf(stderr, "\r[%s%s] %zu/%zu %s (%zu%%), %s elapsed, ETA %s   ", std::string(filled, '#').c_str(),
               std::string(kBar - filled, '-').c_str(), done, total_, unit_.c_str(),
               total_ ? std::min(done, total_) * 100 / total_ : 100, format_duration(elapsed).c_str(),
               eta.c_str());
  std::fflush(stderr);
  visible_ = true;
}

}  // namespace pipesim
