// The radix event queue against a comparison heap on random monotone event streams: the same events come
// out in the same order (time, then scheduling), instant by instant.
#include "sim/engine/event_queue.h"

#include <gtest/gtest.h>

#include <queue>
#include <random>
#include <tuple>

namespace pipesim {
namespace {

struct ByTimeThenKey {
  bool operator()(const Event& a, const Event& b) const {
    return std::tuple(a.time_ns(), a.key()) > std::tuple(b.time_ns(), b.key());
  }
};

TEST(EventQueue, PopsWhatAHeapPopsInTheSameOrder) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 50; ++trial) {
    EventQueue queue;
    std::priority_queue<Event, std::vector<Event>, ByTimeThenKey> heap;
    std::uint64_t seq = 0;
    TimeNs now = 0;
    std::vector<Event> instant;
    // Spans from ties (0) to far-apart times (up to 2^50 ns ahead), so every bucket is used.
    const int max_shift = static_cast<int>(rng() % 50);
    for (int step = 0; step < 2000; ++step) {
      const int pushes = static_cast<int>(rng() % 4);
      for (int i = 0; i < pushes; ++i) {
        const TimeNs ahead = rng() % 3 == 0 ? 0 : static_cast<TimeNs>(rng() % (TimeNs{1} << max_shift));
        const Event e(now + ahead, seq++, static_cast<std::int32_t>(rng() % 1000), rng() % 2 == 0);
        queue.push(e);
        heap.push(e);
      }
      ASSERT_EQ(queue.size(), heap.size());
      if (queue.empty() || rng() % 3 == 0) continue;
      now = queue.pop_earliest(instant);
      ASSERT_FALSE(instant.empty());
      for (const Event& e : instant) {
        ASSERT_EQ(heap.top().time_ns(), now);
        ASSERT_EQ(heap.top().key(), e.key());
        ASSERT_EQ(e.time_ns(), now);
        heap.pop();
      }
      ASSERT_TRUE(heap.empty() || heap.top().time_ns() > now);
    }
  }
}

TEST(EventQueue, RefusesAnEventBeforeThePresent) {
  EventQueue queue;
  std::vector<Event> instant;
  queue.push(Event(100, 0, 0, true));
  EXPECT_EQ(queue.pop_earliest(instant), 100);
  EXPECT_THROW(queue.push(Event(99, 1, 0, true)), ScheduleError);
}

TEST(EventQueue, EventPacksDeviceAndKind) {
  const Event e(5, 123456, Event::kMaxDevices - 1, true);
  EXPECT_EQ(e.device(), Event::kMaxDevices - 1);
  EXPECT_TRUE(e.op_end());
  EXPECT_FALSE(Event(5, Event::kMaxSeq, 7, false).op_end());
  EXPECT_EQ(Event(5, Event::kMaxSeq, 7, false).device(), 7);
}

}  // namespace
}  // namespace pipesim
