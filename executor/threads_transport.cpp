#include <chrono>

#include "executor/transport.h"

namespace pipesim::executor {

std::vector<int> Transport::devices_here(int devices) const {
  std::vector<int> all(devices);
  for (int d = 0; d < devices; ++d) all[d] = d;
  return all;
}

ThreadsTransport::ThreadsTransport(int devices) : devices_(devices), mailboxes_(devices), news_(devices, 0) {}

void ThreadsTransport::send(int dst_device, const TensorTag& tag, Matrix<float> tensor) {
  {
    const std::lock_guard lock(mutex_);
    mailboxes_[dst_device].emplace_back(tag, std::move(tensor));
    ++news_[dst_device];
  }
  changed_.notify_all();
}

std::vector<std::pair<TensorTag, Matrix<float>>> ThreadsTransport::receive_all(int device) {
  const std::lock_guard lock(mutex_);
  return std::exchange(mailboxes_[device], {});
}

void ThreadsTransport::arrive_at_barrier(int /*device*/, int step) {
  {
    const std::lock_guard lock(mutex_);
    if (static_cast<int>(barrier_arrivals_.size()) <= step) barrier_arrivals_.resize(step + 1, 0);
    if (++barrier_arrivals_[step] < devices_) return;
    for (std::uint64_t& n : news_) ++n;
  }
  changed_.notify_all();
}

bool ThreadsTransport::barrier_complete(int step) const {
  const std::lock_guard lock(mutex_);
  return step < static_cast<int>(barrier_arrivals_.size()) && barrier_arrivals_[step] == devices_;
}

std::uint64_t ThreadsTransport::news_count(int device) const {
  const std::lock_guard lock(mutex_);
  return news_[device];
}

bool ThreadsTransport::wait_for_news(int device, std::uint64_t seen, int timeout_ms) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                    [&] { return aborted_ || news_[device] != seen; });
  return !aborted_ && news_[device] != seen;
}

void ThreadsTransport::abort() {
  {
    const std::lock_guard lock(mutex_);
    aborted_ = true;
  }
  changed_.notify_all();
}

}  // namespace pipesim::executor
