#pragma once
// The engine's pending events in its deterministic order: by time, then by the order they were scheduled.
// Time never runs backwards (every event is at or after the last time taken), so a radix heap keyed by time
// replaces a comparison heap: an event moves down at most 64 buckets over its life, with no comparisons
// between events except among the few that share an instant, which are sorted by scheduling order.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <vector>

#include "base/errors.h"
#include "base/units.h"

namespace pipesim {

// 16 bytes: the time and a key packing the sequence number (high bits, unique) over the device and kind.
class Event {
 public:
  Event(TimeNs time_ns, std::uint64_t seq, std::int32_t device, bool op_end)
      : time_ns_(time_ns),
        key_(seq << kSeqShift | static_cast<std::uint64_t>(device) << 1 | (op_end ? 1 : 0)) {}
  TimeNs time_ns() const { return time_ns_; }
  std::int32_t device() const { return static_cast<std::int32_t>((key_ & kDeviceMask) >> 1); }
  bool op_end() const { return key_ & 1; }    // otherwise a wake-up: an input arrived for this device
  std::uint64_t key() const { return key_; }  // orders events of one instant by scheduling
  static constexpr int kSeqShift = 24;        // devices below 2^23, sequence numbers below 2^40
  static constexpr std::uint64_t kMaxSeq = (std::uint64_t{1} << (64 - kSeqShift)) - 1;
  static constexpr int kMaxDevices = 1 << (kSeqShift - 1);

 private:
  static constexpr std::uint64_t kDeviceMask = (std::uint64_t{1} << kSeqShift) - 1;
  TimeNs time_ns_;
  std::uint64_t key_;
};

class EventQueue {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  void push(const Event& event) {
    if (event.time_ns() < last_ns_) {
      throw ScheduleError("engine: an event was scheduled before the present (time ran backwards)");
    }
    buckets_[bucket_of(event.time_ns())].push_back(event);
    ++size_;
  }

  // Moves every event of the earliest instant into `out` (replacing its contents), in scheduling order, and
  // returns that instant. Precondition: not empty.
  TimeNs pop_earliest(std::vector<Event>& out) {
    if (buckets_[0].empty()) {
      int i = 1;
      while (buckets_[i].empty()) ++i;
      std::vector<Event>& bucket = buckets_[i];
      TimeNs earliest = bucket.front().time_ns();
      for (const Event& e : bucket) earliest = std::min(earliest, e.time_ns());
      last_ns_ = earliest;
      // Every event of bucket i differs from the new instant in lower bits only: each lands lower.
      for (const Event& e : bucket) buckets_[bucket_of(e.time_ns())].push_back(e);
      bucket.clear();
    }
    out.clear();
    out.swap(buckets_[0]);
    size_ -= out.size();
    if (out.size() > 1 && !std::is_sorted(out.begin(), out.end(), by_key)) {
      std::sort(out.begin(), out.end(), by_key);
    }
    return last_ns_;
  }

 private:
  static bool by_key(const Event& a, const Event& b) { return a.key() < b.key(); }
  int bucket_of(TimeNs time_ns) const {
    const auto diff = static_cast<std::uint64_t>(time_ns) ^ static_cast<std::uint64_t>(last_ns_);
    return diff == 0 ? 0 : 64 - std::countl_zero(diff);
  }

  std::array<std::vector<Event>, 65>
      buckets_;  // bucket b: times whose highest bit differing from last_ns_ is b-1
  TimeNs last_ns_ = 0;
  std::size_t size_ = 0;
};

}  // namespace pipesim
